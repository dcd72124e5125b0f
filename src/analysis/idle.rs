//! Idle-time breakdown per rank and stream: gaps between device operations split into host wait
//! (the launch came late), kernel wait (a short gap between queued work) and other.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::bounded;
use super::gpu::{describe, round_to, us, Describe, RankPrep};
use super::options::{AnalysisOptions, Mode};
use crate::table::TraceSet;

crate::stable_enum! {
    /// What kind of gap an idle interval of a stream is; `ALL` is the output order.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum IdleCategory {
        /// The work that ends the gap was launched after the gap began: the host came late.
        HostWait,
        /// A gap shorter than the threshold between work already queued.
        KernelWait,
        /// Any other gap.
        Other,
    }
}

impl IdleCategory {
    /// Its slot in per-category arrays (the position in [`IdleCategory::ALL`]).
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Gaps of one stream, one list per [`IdleCategory`] (indexed by [`IdleCategory::index`]).
type GapsByCategory = [Vec<f64>; 3];

/// The idle time of one category of one stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CategoryIdle {
    pub category: IdleCategory,
    pub idle_us: f64,
    /// Share of the stream's idle time (0-1; 2 decimals in HTA-compat mode); `None` when the stream
    /// has no idle time.
    pub ratio: Option<f64>,
    /// Statistics of the gaps, µs.
    pub gaps_us: Describe,
}

/// Idle time of one stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamIdle {
    pub rank: i64,
    pub stream: i64,
    pub idle_us: f64,
    pub categories: Vec<CategoryIdle>,
}

/// Idle-time breakdown of one rank's streams, sorted by stream.
pub fn idle_prepared(rank: i64, prep: &RankPrep, opts: &AnalysisOptions) -> Vec<StreamIdle> {
    let compat = prep.mode == Mode::HtaCompat;
    let threshold = opts.kernel_wait_threshold_ns();
    let mut by_stream: BTreeMap<i64, Vec<(i64, i64, Option<i64>)>> = BTreeMap::new();
    for d in prep.dev.iter().filter(|d| d.kind.is_gpu_activity()) {
        let launch_ts = prep.launch_ts_for_idle(d);
        by_stream
            .entry(d.stream)
            .or_default()
            .push((d.ts, d.end, launch_ts));
    }
    let gaps: Vec<(i64, GapsByCategory)> = by_stream
        .into_iter()
        .map(|(stream, rows)| (stream, stream_gaps(rows, compat, threshold)))
        .collect();
    let total = |g: &GapsByCategory| g.iter().flatten().sum::<f64>();
    bounded::keep_largest(gaps, MAX_STREAMS, |(_, g)| total(g), merge_streams)
        .into_iter()
        .map(|(stream, gaps)| stream_row(rank, stream, gaps, compat))
        .collect()
}

/// Streams listed per rank; the others are summed in one row ([`bounded::OTHER_STREAMS`]).
pub const MAX_STREAMS: usize = 128;

/// The gaps of several streams as one row.
fn merge_streams(rows: Vec<(i64, GapsByCategory)>) -> (i64, GapsByCategory) {
    let mut all: GapsByCategory = Default::default();
    for (_, g) in rows {
        for (a, b) in all.iter_mut().zip(g) {
            a.extend(b);
        }
    }
    (bounded::OTHER_STREAMS, all)
}

/// The gaps of one stream's rows (sorted by start), by category.
fn stream_gaps(rows: Vec<(i64, i64, Option<i64>)>, compat: bool, threshold: i64) -> GapsByCategory {
    let mut gaps: GapsByCategory = Default::default();
    let mut prev_end: Option<i64> = None;
    for (ts, end, launch) in rows {
        if let Some(pe) = prev_end {
            let gap = ts - pe;
            if compat || gap > 0 {
                let cat = if launch.is_some_and(|l| l > pe) {
                    IdleCategory::HostWait
                } else if gap < threshold {
                    IdleCategory::KernelWait
                } else {
                    IdleCategory::Other
                };
                gaps[cat.index()].push(us(gap));
            }
        }
        prev_end = Some(if compat {
            end
        } else {
            prev_end.map_or(end, |p| p.max(end))
        });
    }
    gaps
}

fn stream_row(rank: i64, stream: i64, mut gaps: GapsByCategory, compat: bool) -> StreamIdle {
    let sums: Vec<f64> = gaps.iter().map(|g| g.iter().sum()).collect();
    let total: f64 = sums.iter().sum();
    let present: Vec<bool> = gaps.iter().map(|g| !g.is_empty()).collect();
    let categories = IdleCategory::ALL
        .into_iter()
        // HTA lists a category only when it has gaps, but always lists `other`.
        .filter(|&c| !compat || c == IdleCategory::Other || present[c.index()])
        .map(|category| {
            let i = category.index();
            let r = (total != 0.0).then(|| sums[i] / total);
            CategoryIdle {
                category,
                idle_us: sums[i],
                ratio: if compat { r.map(|r| round_to(r, 2)) } else { r },
                gaps_us: describe(std::mem::take(&mut gaps[i])),
            }
        })
        .collect();
    StreamIdle {
        rank,
        stream,
        idle_us: total,
        categories,
    }
}

/// Idle-time breakdown of every rank and stream.
pub fn idle_time_breakdown(set: &TraceSet, opts: &AnalysisOptions) -> Vec<StreamIdle> {
    set.ranks
        .iter()
        .flat_map(|r| idle_prepared(r.rank, &RankPrep::new(&r.table, opts), opts))
        .collect()
}
