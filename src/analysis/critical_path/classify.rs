//! The classify phase: what bounds each path edge, the shares per bound, and the segments, longest
//! segments and events the result cites.

use super::graph::{Graph, NONE, ROOT};
use super::result::{BoundBy, BoundShare, EdgeType, PathEvent, PathSegment, BOUND_BY};
use super::rows::{Rows, F_COMM, F_DATA_LOADING};
use super::solve::Solution;
use crate::table::intern::FxHashMap;

/// One classified path edge (no text yet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seg {
    pub t: EdgeType,
    /// The row the edge is attributed to.
    pub attr_row: Option<u32>,
    pub bound: BoundBy,
    /// Weight, ns (HTA-compat: negative weights as reported).
    pub w: i64,
    /// Time of the edge's source node, ns.
    pub start: i64,
}

/// What bounds an edge of type `t` attributed to `attr_row`.
pub fn bound_of(r: &Rows, t: EdgeType, attr_row: Option<u32>) -> BoundBy {
    match t {
        EdgeType::KernelKernelDelay => BoundBy::GpuKernelKernelOverhead,
        EdgeType::KernelLaunchDelay => BoundBy::GpuKernelLaunchOverhead,
        EdgeType::Dependency | EdgeType::SyncDependency => BoundBy::Nothing,
        EdgeType::Operator => {
            let Some(a) = attr_row.map(|a| a as usize) else {
                return BoundBy::Cpu;
            };
            let on_cpu = if r.compat {
                r.stream[a] < 0
            } else {
                !r.t.kind_at(a).is_gpu_activity()
            };
            if on_cpu {
                if !r.compat && r.has(a, F_DATA_LOADING) {
                    BoundBy::DataLoading
                } else {
                    BoundBy::Cpu
                }
            } else if r.has(a, F_COMM) {
                BoundBy::GpuCommunication
            } else {
                BoundBy::GpuCompute
            }
        }
    }
}

/// The path's edges, classified, in path order.
pub fn classify_path(r: &Rows, g: &Graph, s: &Solution) -> Vec<Seg> {
    s.path
        .iter()
        .map(|&k| {
            let ue = s.edges[k as usize];
            let e = &g.edges[ue.last as usize];
            let attr = if ue.attr_from != NONE {
                g.edges[ue.attr_from as usize].attr
            } else {
                NONE
            };
            let attr_row = (attr != NONE && attr != ROOT).then_some(attr);
            Seg {
                t: e.t,
                attr_row,
                bound: bound_of(r, e.t, attr_row),
                w: if r.compat { e.w } else { e.w.max(0) },
                start: g.node_ts[e.u as usize],
            }
        })
        .collect()
}

/// Share of the path per bound, all of [`BOUND_BY`] in that order; and the path length, ns.
pub fn shares(segs: &[Seg]) -> (Vec<BoundShare>, i64) {
    let mut sums = [0i64; BOUND_BY.len()];
    let mut total = 0i64;
    for s in segs {
        if let Some(b) = s.bound.share_index() {
            sums[b] += s.w;
        }
        total += s.w;
    }
    let summary = BOUND_BY
        .iter()
        .zip(sums)
        .map(|(&bound_by, sum)| BoundShare {
            bound_by,
            duration_us: sum as f64 / 1000.0,
            pct: if total != 0 {
                sum as f64 / total as f64 * 100.0
            } else {
                0.0
            },
        })
        .collect();
    (summary, total)
}

/// A segment as the result shows it.
pub fn segment(r: &Rows, s: &Seg) -> PathSegment {
    PathSegment {
        edge_type: s.t,
        row: s.attr_row,
        name: s.attr_row.map(|a| r.t.name_at(a as usize).to_string()),
        stream: s.attr_row.map(|a| r.stream[a as usize]),
        start_us: s.start as f64 / 1000.0,
        duration_us: s.w as f64 / 1000.0,
        bound_by: s.bound,
    }
}

/// The 10 longest segments, longest first, ties in path order (indices into `segs`).
pub fn longest_segments(segs: &[Seg]) -> Vec<usize> {
    let longest_first = |&x: &usize, &y: &usize| segs[y].w.cmp(&segs[x].w).then(x.cmp(&y));
    let mut top: Vec<usize> = (0..segs.len()).collect();
    if top.len() > 10 {
        top.select_nth_unstable_by(9, longest_first);
        top.truncate(10);
    }
    crate::sort::sort_by(&mut top, longest_first);
    top
}

/// The 10 events with the most path time (per event name and bound, summed in path order).
pub fn top_events(r: &Rows, segs: &[Seg]) -> Vec<PathEvent> {
    let t = r.t;
    let mut agg: FxHashMap<(u32, BoundBy), (usize, f64)> = FxHashMap::default();
    for s in segs {
        if let Some(a) = s.attr_row {
            let e = agg
                .entry((t.name_id(a as usize), s.bound))
                .or_insert((0, 0.0));
            e.0 += 1;
            e.1 += s.w as f64 / 1000.0;
        }
    }
    let mut ev: Vec<PathEvent> = agg
        .into_iter()
        .map(|((id, b), (c, d))| PathEvent {
            name: t.name_of_id(id).to_string(),
            bound_by: b,
            segments: c,
            duration_us: d,
        })
        .collect();
    crate::sort::sort_by(&mut ev, |x, y| {
        y.duration_us
            .total_cmp(&x.duration_us)
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.bound_by.as_str().cmp(y.bound_by.as_str()))
    });
    ev.truncate(10);
    ev
}

#[cfg(test)]
mod tests {
    use super::super::rows::exact_rows;
    use super::super::tests::table;
    use super::*;

    #[test]
    fn bounds_and_shares() {
        let t = table(serde_json::json!([
            {"ph": "X", "cat": "cpu_op", "name": "enumerate(DataLoader)#next", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
            {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce", "pid": 0, "tid": 7, "ts": 5, "dur": 20,
             "args": {"stream": 7, "correlation": 1}},
            {"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, "tid": 7, "ts": 30, "dur": 20,
             "args": {"stream": 7, "correlation": 2}},
        ]));
        let r = exact_rows(&t);
        use EdgeType::*;
        let seg = |t, attr_row: Option<u32>, w| Seg {
            t,
            attr_row,
            bound: bound_of(&r, t, attr_row),
            w,
            start: 0,
        };
        let segs = [
            seg(Operator, Some(0), 10),
            seg(KernelLaunchDelay, None, 5),
            seg(Operator, Some(1), 20),
            seg(KernelKernelDelay, Some(1), 5),
            seg(Operator, Some(2), 20),
            seg(SyncDependency, None, 0),
            seg(Operator, None, 40),
        ];
        let bounds: Vec<BoundBy> = segs.iter().map(|s| s.bound).collect();
        use BoundBy::*;
        assert_eq!(
            bounds,
            [
                DataLoading,
                GpuKernelLaunchOverhead,
                GpuCommunication,
                GpuKernelKernelOverhead,
                GpuCompute,
                Nothing,
                Cpu
            ]
        );
        let (summary, total) = shares(&segs);
        assert_eq!(total, 100);
        let pct: Vec<(BoundBy, f64)> = summary.iter().map(|s| (s.bound_by, s.pct)).collect();
        assert_eq!(
            pct,
            [
                (Cpu, 40.0),
                (DataLoading, 10.0),
                (GpuCompute, 20.0),
                (GpuCommunication, 20.0),
                (GpuKernelKernelOverhead, 5.0),
                (GpuKernelLaunchOverhead, 5.0)
            ]
        );
        assert_eq!(longest_segments(&segs)[..3], [6, 2, 4]);
        let events = top_events(&r, &segs);
        let ev: Vec<(&str, BoundBy, usize)> = events
            .iter()
            .map(|e| (e.name.as_str(), e.bound_by, e.segments))
            .collect();
        assert_eq!(
            ev,
            [
                ("ncclDevKernel_AllReduce", GpuCommunication, 1),
                ("sgemm", GpuCompute, 1),
                ("enumerate(DataLoader)#next", DataLoading, 1),
                ("ncclDevKernel_AllReduce", GpuKernelKernelOverhead, 1),
            ]
        );
    }
}
