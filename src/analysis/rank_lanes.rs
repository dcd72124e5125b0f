//! The timeline's rank lanes: for every rank, how busy its GPU is in each pixel of a range (all
//! ranks on one time axis, each on its own clock as its trace gives it).
//!
//! A rank's GPU work (kernels, copies, sets on any stream) is merged into one lane of disjoint busy
//! intervals, indexed by the timeline's own [`Lane`] (its summaries and per-pixel buckets), so a
//! query costs O(width) per rank whatever the trace size and its busy time stays exact.

use serde::{Deserialize, Serialize};

use super::intervals::union;
use super::timeline::{Classes, Lane, LaneView, TimelineRequest};
use crate::table::{TraceSet, TraceTable};

/// GPU busy time within one pixel of the range.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BusyPixel {
    pub px: u32,
    pub busy_ns: i64,
}

/// One rank's row: its GPU busy time per pixel (pixels without work left out).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankLane {
    /// Index into the loaded set's ranks.
    pub rank_index: usize,
    pub rank: i64,
    /// First start and last end of the rank's GPU work, ns (`(0, 0)` without any).
    pub span_ns: (i64, i64),
    /// GPU busy time inside the range (the sum of the pixels).
    pub busy_ns: i64,
    pub pixels: Vec<BusyPixel>,
}

/// The answer to a rank-lanes request: one row per rank over one range.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankLanesView {
    pub start_ns: i64,
    pub end_ns: i64,
    pub width_px: u32,
    /// First start and last end over every rank's GPU work, ns.
    pub span_ns: (i64, i64),
    pub lanes: Vec<RankLane>,
}

impl RankLanesView {
    /// Width of one pixel of the answer, ns.
    pub fn px_ns(&self) -> f64 {
        (self.end_ns - self.start_ns).max(1) as f64 / self.width_px.max(1) as f64
    }
}

/// A rank's GPU busy intervals, ready to answer per-pixel queries.
pub struct BusyIndex {
    lane: Lane,
    pub span_ns: (i64, i64),
}

impl BusyIndex {
    /// The union of the rank's GPU work (every stream, touching intervals merged).
    pub fn new(t: &TraceTable) -> BusyIndex {
        let rows: Vec<usize> = (0..t.len())
            .filter(|&r| t.kind_at(r).is_gpu_activity())
            .collect();
        let busy = union(
            rows.iter()
                .filter_map(|&r| Some((t.ts_at(r)?, t.ts_at(r)? + t.dur_at(r)?)))
                .collect(),
        );
        let span_ns = match (busy.first(), busy.last()) {
            (Some(a), Some(b)) => (a.0, b.1),
            _ => (0, 0),
        };
        // The merged intervals are never drawn one by one, so they all name the first GPU row
        // (the lane reads a row only for its colour and its details).
        let row = rows.first().copied().unwrap_or(0) as u32;
        let events = busy.into_iter().map(|(s, e)| (s, e, row)).collect();
        let lane = Lane::new(&mut Classes::new(t), 0, 0, events);
        BusyIndex { lane, span_ns }
    }

    /// GPU busy time per pixel of `[start, end)` at `width` pixels.
    pub fn pixels(&self, t: &TraceTable, start: i64, end: i64, width: u32) -> Vec<BusyPixel> {
        let px_ns = (end - start) as f64 / width as f64;
        let view = self.lane.view(t, start, end, width, px_ns);
        per_pixel(&view, start, end, width)
    }
}

/// A lane's answer as busy time per pixel: merged buckets where they are, drawn events spread over
/// the pixels they cover. Pixels without work are left out.
fn per_pixel(view: &LaneView, start: i64, end: i64, width: u32) -> Vec<BusyPixel> {
    let px_ns = (end - start) as f64 / width as f64;
    let mut dense = vec![0i64; width as usize];
    for b in &view.buckets {
        dense[b.px as usize] += b.busy_ns;
    }
    for e in &view.events {
        spread(
            &mut dense,
            start,
            px_ns,
            e.start_ns.max(start),
            e.end_ns.min(end),
        );
    }
    dense
        .into_iter()
        .enumerate()
        .filter(|(_, busy)| *busy > 0)
        .map(|(px, busy_ns)| BusyPixel {
            px: px as u32,
            busy_ns,
        })
        .collect()
}

/// Adds `[from, to)` to the pixels it covers (each gets its part; the sum is `to - from`).
fn spread(dense: &mut [i64], start: i64, px_ns: f64, from: i64, to: i64) {
    let last = dense.len() - 1;
    let mut at = from;
    while at < to {
        let px = (((at - start) as f64 / px_ns) as usize).min(last);
        let edge = if px == last {
            to
        } else {
            (start as f64 + (px + 1) as f64 * px_ns).ceil() as i64
        };
        let next = edge.clamp(at + 1, to);
        dense[px] += next - at;
        at = next;
    }
}

/// Every rank's row over the request's range (an empty range: all ranks' GPU work). `indexes`:
/// one [`BusyIndex`] per rank of `set`, in its order.
pub fn rank_lanes(set: &TraceSet, indexes: &[BusyIndex], req: &TimelineRequest) -> RankLanesView {
    let span_ns = whole_span(indexes);
    let (start, end) = if req.end_ns > req.start_ns {
        (req.start_ns, req.end_ns)
    } else {
        (span_ns.0, span_ns.1.max(span_ns.0 + 1))
    };
    let width = req.width_px.clamp(1, 16384);
    let lanes = set
        .ranks
        .iter()
        .zip(indexes)
        .enumerate()
        .map(|(rank_index, (rank, index))| {
            let pixels = index.pixels(&rank.table, start, end, width);
            RankLane {
                rank_index,
                rank: rank.rank,
                span_ns: index.span_ns,
                busy_ns: pixels.iter().map(|p| p.busy_ns).sum(),
                pixels,
            }
        })
        .collect();
    RankLanesView {
        start_ns: start,
        end_ns: end,
        width_px: width,
        span_ns,
        lanes,
    }
}

/// The whole set's [`rank_lanes`] from the answers of shards of it (disjoint ranks, any order), each
/// asked the same explicit range (`end_ns > start_ns`) and width: an empty range is each shard's own
/// span, so its answers do not fit together. Lanes are sorted by rank (stable); their `rank_index`
/// is left as each shard wrote it (an index into that shard's ranks: the caller maps it).
pub fn merge_rank_lanes(parts: Vec<RankLanesView>) -> RankLanesView {
    let span_ns = parts
        .iter()
        .map(|p| p.span_ns)
        .filter(|s| s.1 > s.0)
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
        .unwrap_or((0, 0));
    let (start_ns, end_ns, width_px) = parts
        .first()
        .map_or((0, 0, 0), |p| (p.start_ns, p.end_ns, p.width_px));
    let mut lanes: Vec<RankLane> = parts.into_iter().flat_map(|p| p.lanes).collect();
    crate::sort::sort_by_key(&mut lanes, |l| l.rank);
    RankLanesView {
        start_ns,
        end_ns,
        width_px,
        span_ns,
        lanes,
    }
}

/// First start and last end over the ranks with GPU work; `(0, 0)` when none has any.
fn whole_span(indexes: &[BusyIndex]) -> (i64, i64) {
    indexes
        .iter()
        .map(|i| i.span_ns)
        .filter(|s| s.1 > s.0)
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
        .unwrap_or((0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wide_event_is_spread_over_its_pixels_and_keeps_its_length() {
        let mut dense = vec![0i64; 10];
        spread(&mut dense, 0, 100.0, 150, 420);
        assert_eq!(dense[..5], [0, 50, 100, 100, 20]);
        assert_eq!(dense.iter().sum::<i64>(), 270);
        let mut dense = vec![0i64; 3];
        spread(&mut dense, 0, 33.3, 0, 100);
        assert_eq!(dense.iter().sum::<i64>(), 100);
    }
}
