//! Queue length per stream (work launched but not yet started) and time the CPU was blocked on a
//! full queue (1024 outstanding operations).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::gpu::{describe, us, Describe, RankPrep};
use super::options::AnalysisOptions;
use super::options::Mode;
use crate::table::TraceSet;

/// CUDA's launch queue depth: at this length the launching thread blocks.
pub const FULL_QUEUE: i64 = 1024;

/// Queue length of one stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StreamQueue {
    pub rank: i64,
    pub stream: i64,
    /// Statistics of the queue length at every change (unweighted, as HTA).
    pub queue_length: Describe,
    /// Time with the queue at or above [`FULL_QUEUE`], µs.
    pub blocked_us: f64,
    /// `blocked_us` over the rank's trace span.
    pub blocked_ratio: f64,
}

pub fn queue_prepared(rank: i64, prep: &RankPrep) -> Vec<StreamQueue> {
    let compat = prep.mode == Mode::HtaCompat;
    let mut ev: BTreeMap<i64, Vec<(i64, u32, i32)>> = BTreeMap::new();
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for d in &prep.dev {
        lo = lo.min(d.ts);
        hi = hi.max(d.end);
        let Some(l) = d.launch else { continue };
        // HTA keeps launches whose partner index is > 0: work that is the file's first entry
        // (index 0) reads as "no partner".
        let counted =
            prep.names.of_row(prep.table, l as usize).launches(compat) && (!compat || d.row > 0);
        if !counted {
            continue;
        }
        let Some((lts, lend)) = prep.span(l as usize) else {
            continue;
        };
        lo = lo.min(lts);
        hi = hi.max(lend);
        let e = ev.entry(d.stream).or_default();
        e.push((lts, l, 1));
        e.push((d.ts, d.row, -1));
    }
    let span = if hi > lo { hi - lo } else { 0 };
    let per_stream: Vec<(i64, Vec<f64>, i64)> = ev
        .into_iter()
        .map(|(stream, e)| {
            let (vals, blocked) = queue_samples(e);
            (stream, vals, blocked)
        })
        .collect();
    // Streams with the most launches are listed; the others are summed in one row.
    super::bounded::keep_largest(
        per_stream,
        super::idle::MAX_STREAMS,
        |r| r.1.len() as f64,
        |rest| {
            let mut vals = Vec::new();
            let mut blocked = 0;
            for (_, v, b) in rest {
                vals.extend(v);
                blocked += b;
            }
            (super::bounded::OTHER_STREAMS, vals, blocked)
        },
    )
    .into_iter()
    .map(|(stream, vals, blocked)| StreamQueue {
        rank,
        stream,
        queue_length: describe(vals),
        blocked_us: us(blocked),
        blocked_ratio: if span > 0 {
            blocked as f64 / span as f64
        } else {
            0.0
        },
    })
    .collect()
}

/// One stream's queue length at every change, and the time (ns) it stayed full, from its launches
/// (+1) and starts (-1).
fn queue_samples(mut e: Vec<(i64, u32, i32)>) -> (Vec<f64>, i64) {
    // Same instant: launches first (HTA's concatenation order; its sort is not stable, so ties
    // can still differ).
    crate::sort::sort_by_key(&mut e, |x| (x.0, -x.2, x.1));
    let mut q = 0i64;
    let mut vals = Vec::with_capacity(e.len());
    let mut blocked = 0i64;
    let mut prev: Option<(i64, i64)> = None;
    for (ts, _, d) in e {
        if let Some((pts, pq)) = prev {
            if pq >= FULL_QUEUE {
                blocked += ts - pts;
            }
        }
        q += d as i64;
        vals.push(q as f64);
        prev = Some((ts, q));
    }
    (vals, blocked)
}

pub fn queue_length(set: &TraceSet, opts: &AnalysisOptions) -> Vec<StreamQueue> {
    set.ranks
        .iter()
        .flat_map(|r| queue_prepared(r.rank, &RankPrep::new(&r.table, opts)))
        .collect()
}
