//! Critical path of one rank (or one annotation instance): what bounds it, as shares of the path.
//!
//! The trace becomes a DAG with a start and an end node per CPU operator / runtime call and per GPU
//! operation. Edges: the span of each operation (weight = duration), CPU nesting and sequencing on
//! each thread (weight = the time between the two points), a zero-weight dependency between
//! consecutive top-level operations of a thread, the launch delay (runtime call start → kernel start)
//! when the kernel did not wait behind other work, the kernel-kernel delay on a stream, and zero-weight
//! synchronisation edges (`cudaStreamWaitEvent`, Event / Stream / Context Sync: GPU → CPU or GPU →
//! GPU). The longest path is found in one pass over a topological order (flat `Vec` adjacency, no
//! recursion), and each path edge is classified by what bounds it.
//!
//! Two modes (see [`Mode`]):
//! * HTA-compat follows HolisticTraceAnalysis 0.5.0 (`critical_path_analysis`): whole-µs rounding,
//!   its last-ProfilerStep filter, rows chosen by `args.stream`, the launch-delay test on its queue
//!   length, blocking calls (`cudaDeviceSynchronize`, `cudaMemcpy`, ...) counted as zero even when no
//!   sync event says what they waited for (so a trace without `cuda_sync` events loses every wait and
//!   comes out "cpu_bound", quirk 10), negative edges zeroed for the path but summed in the shares,
//!   and networkx's `dag_longest_path` tie-breaking (topological generations, first maximum).
//! * Exact uses integer ns and the events' kinds; a blocking call without a sync event gets a
//!   sync edge from the last GPU operation that finished while it waited (so the wait is attributed to
//!   the GPU work it waited for), and is counted as CPU time only when nothing on the GPU finished in
//!   it; kernel-kernel delays need a gap below 1.5 ms (HTA 0.6); CPU operators named like data loaders
//!   are `data_loading`.
//!
//! Tie-breaking (both modes): nodes are numbered by (time, start before end, row); predecessors are
//! scanned in edge-insertion order and the first maximum wins; the path ends at the first node (in
//! topological order) with the largest distance.

use serde::{Deserialize, Serialize};

use super::gpu::RankPrep;
use super::options::{AnalysisOptions, Mode};
use crate::table::TraceTable;

mod classify;
mod cpu_graph;
mod gpu_graph;
mod graph;
mod result;
mod rows;
mod solve;
mod window;

pub use result::{
    BoundBy, BoundShare, CriticalPathResult, CriticalPathStatus, EdgeType, PathEvent, PathSegment,
    BOUND_BY, DEFAULT_PATH_ROWS,
};

/// Options of [`critical_path`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CriticalPathOptions {
    /// Substring of the annotation that delimits the window ("" = the whole trace).
    pub annotation: String,
    /// Which instance of the annotation (0-based).
    pub instance: usize,
    /// Last instance of a range (inclusive), when set.
    #[serde(default)]
    pub instance_end: Option<usize>,
    /// How many path segments `rows` keeps, in path order (`None`: [`DEFAULT_PATH_ROWS`], 0: all).
    /// The shares, the longest segments and the top events always cover the whole path.
    #[serde(default)]
    pub max_rows: Option<usize>,
}

/// Critical path of one rank, HTA-compat or exact, over the whole trace (HTA-compat: after its
/// last-ProfilerStep filter).
pub fn critical_path_mode(
    table: &TraceTable,
    opts: &CriticalPathOptions,
    mode: Mode,
) -> CriticalPathResult {
    let analysis = AnalysisOptions {
        mode,
        ..AnalysisOptions::default()
    };
    critical_path_prepared(&RankPrep::new(table, &analysis), opts)
}

/// Critical path of one prepared rank, over its frame ([`RankPrep::frame`]).
pub fn critical_path_prepared(prep: &RankPrep, opts: &CriticalPathOptions) -> CriticalPathResult {
    let compat = prep.mode == Mode::HtaCompat;
    let rows = rows::build_rows(prep.table, prep.frame(), &prep.names);
    let mut res = CriticalPathResult {
        annotation: opts.annotation.clone(),
        instance: opts.instance,
        ..Default::default()
    };
    res.status = match solve_path(&rows, opts, &mut res) {
        Ok(()) => CriticalPathStatus::Ok,
        Err(e) => e,
    };
    if compat {
        res.notes.push("HTA-compat: blocking calls (cudaDeviceSynchronize, cudaMemcpy, ...) count zero on the path even without a sync event saying what they waited for; a trace without cuda_sync events then reports (almost) everything as cpu_bound".into());
    }
    res
}

/// Critical path in exact mode (see [`critical_path_mode`]).
pub fn critical_path(table: &TraceTable, opts: &CriticalPathOptions) -> CriticalPathResult {
    critical_path_mode(table, opts, Mode::Exact)
}

/// The phases in order: window, nodes, CPU edges, GPU edges, solve, classify.
fn solve_path(
    r: &rows::Rows,
    opts: &CriticalPathOptions,
    res: &mut CriticalPathResult,
) -> Result<(), CriticalPathStatus> {
    let w = window::find_window(r, opts)?;
    res.window_us = (w.start as f64 / 1000.0, w.end as f64 / 1000.0);
    let clip = window::clip_rows(r, w);
    let mut g = graph::build_nodes(r, &clip)?;
    let blocking_exits = cpu_graph::add_cpu_edges(r, &clip, &mut g);
    let mut links = gpu_graph::SyncLinks::new(r);
    gpu_graph::add_gpu_edges(r, &clip, &mut links, &mut g);
    if !r.compat {
        let inferred = gpu_graph::link_blocking_calls(r, &clip, &blocking_exits, &mut g);
        if inferred > 0 {
            res.notes.push(format!(
                "{inferred} blocking calls without a sync event were linked to the last GPU operation that finished during them"
            ));
        }
    }
    let uniq = solve::unique_edges(&g);
    res.nodes = g.node_count();
    res.edges = uniq.len();
    if r.compat {
        solve::check_same_stream_sync(&g, &r.stream, &uniq)?;
    }
    let solution = solve::longest_path(&g, uniq)?;
    let segs = classify::classify_path(r, &g, &solution);
    fill_breakdown(r, &segs, opts, res);
    Ok(())
}

/// The result's segments, shares, longest segments and top events.
fn fill_breakdown(
    r: &rows::Rows,
    segs: &[classify::Seg],
    opts: &CriticalPathOptions,
    res: &mut CriticalPathResult,
) {
    res.segments = segs.len();
    let keep = match opts.max_rows {
        None => DEFAULT_PATH_ROWS,
        Some(0) => usize::MAX,
        Some(k) => k,
    };
    res.rows = segs
        .iter()
        .take(keep)
        .map(|s| classify::segment(r, s))
        .collect();
    if segs.len() > res.rows.len() {
        res.notes.push(format!(
            "rows lists the first {} of the path's {} segments (the shares, longest segments and top events cover all of them)",
            res.rows.len(),
            segs.len()
        ));
    }
    let (summary, total) = classify::shares(segs);
    res.total_us = total as f64 / 1000.0;
    res.summary = summary;
    res.top_segments = classify::longest_segments(segs)
        .iter()
        .map(|&x| classify::segment(r, &segs[x]))
        .collect();
    res.top_events = classify::top_events(r, segs);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::load_bytes;

    pub(super) fn table(events: serde_json::Value) -> TraceTable {
        let b = serde_json::to_vec(&serde_json::json!({ "traceEvents": events })).unwrap();
        load_bytes("t.json", &b).unwrap()
    }

    #[test]
    fn nested_ops_and_ties_are_deterministic() {
        // parent [0,10) with children [1,4) and [4,9): path = the parent's timeline, 10 µs, all CPU;
        // two runs give identical rows. Thread 2's op `q` ties (10 µs) with `p`'s chain: the path
        // ends at the first node in topological order with the largest distance, `q`'s end (fewer
        // generations), as networkx would.
        let t = table(serde_json::json!([
            {"ph": "X", "cat": "cpu_op", "name": "p", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
            {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 3},
            {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 4, "dur": 5},
            {"ph": "X", "cat": "cpu_op", "name": "q", "pid": 1, "tid": 2, "ts": 0, "dur": 10},
        ]));
        for mode in [Mode::Exact, Mode::HtaCompat] {
            let r = critical_path_mode(&t, &CriticalPathOptions::default(), mode);
            assert!(r.ok());
            assert_eq!(r.total_us, 10.0);
            assert_eq!(r.pct(BoundBy::Cpu), 100.0);
            let names: Vec<_> = r.rows.iter().map(|s| s.name.clone().unwrap()).collect();
            assert_eq!(names, ["q"]);
            let again = critical_path_mode(&t, &CriticalPathOptions::default(), mode);
            assert_eq!(r.rows, again.rows);
        }
        let t = table(serde_json::json!([
            {"ph": "X", "cat": "cpu_op", "name": "p", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
            {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 3},
            {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 4, "dur": 5},
            {"ph": "X", "cat": "cpu_op", "name": "q", "pid": 1, "tid": 2, "ts": 0, "dur": 9},
        ]));
        for mode in [Mode::Exact, Mode::HtaCompat] {
            let r = critical_path_mode(&t, &CriticalPathOptions::default(), mode);
            assert_eq!(r.total_us, 10.0);
            // With `q` shorter, the path is p's timeline:
            // p start -> a start (p) -> a end (a) -> b start (p) -> b end (b) -> p end (p).
            let names: Vec<_> = r.rows.iter().map(|s| s.name.clone().unwrap()).collect();
            assert_eq!(names, ["p", "a", "p", "b", "p"]);
        }
    }

    #[test]
    fn rows_are_capped_but_the_shares_cover_the_whole_path() {
        let t = table(serde_json::json!([
            {"ph": "X", "cat": "cpu_op", "name": "p", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
            {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 3},
            {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 4, "dur": 5},
        ]));
        let keeping = |max_rows: usize| {
            let opts = CriticalPathOptions {
                max_rows: Some(max_rows),
                ..Default::default()
            };
            critical_path_mode(&t, &opts, Mode::Exact)
        };
        let (all, two) = (keeping(0), keeping(2));
        assert_eq!((all.rows.len(), all.segments), (5, 5));
        assert_eq!((two.rows.len(), two.segments), (2, 5));
        assert_eq!(two.rows[..], all.rows[..2]);
        assert_eq!(two.summary, all.summary);
        assert_eq!(two.top_segments, all.top_segments);
        assert_eq!(two.top_events, all.top_events);
        assert!(all.notes.is_empty());
        assert!(two
            .notes
            .iter()
            .any(|n| n.contains("first 2 of the path's 5")));
        // Top events: p has three segments (1 + 1 + 1 us), b 5 us, a 3 us.
        let ev: Vec<_> = all
            .top_events
            .iter()
            .map(|e| (e.name.as_str(), e.segments, e.duration_us))
            .collect();
        assert_eq!(ev, [("b", 1, 5.0), ("a", 1, 3.0), ("p", 3, 2.0)]);
    }
}
