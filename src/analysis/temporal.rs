//! Temporal breakdown per rank: of the GPU's busy window, how much is idle, computing, or doing
//! something else (communication, copies).

use serde::{Deserialize, Serialize};

use super::gpu::{hta_merge, round_to, us, KernelType, RankPrep};
use super::intervals::{length, union};
use super::options::{AnalysisOptions, Mode};
use crate::table::TraceSet;

/// Temporal breakdown of one rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TemporalBreakdown {
    pub rank: i64,
    /// First device start to last device end, µs.
    pub window_us: f64,
    pub idle_us: f64,
    pub compute_us: f64,
    pub non_compute_us: f64,
    pub idle_pct: f64,
    pub compute_pct: f64,
    pub non_compute_pct: f64,
}

/// Temporal breakdown of one prepared rank (`None` without device events).
pub fn temporal_prepared(rank: i64, prep: &RankPrep) -> Option<TemporalBreakdown> {
    if prep.dev.is_empty() {
        return None;
    }
    let compat = prep.mode == Mode::HtaCompat;
    let merge = |iv: Vec<(i64, i64)>| if compat { hta_merge(iv) } else { union(iv) };
    let all = merge(prep.dev.iter().map(|d| (d.ts, d.end)).collect());
    let comp = merge(
        prep.dev
            .iter()
            .filter(|d| d.ktype == KernelType::Computation)
            .map(|d| (d.ts, d.end))
            .collect(),
    );
    let (start, end) = match (all.first(), all.last()) {
        (Some(f), Some(l)) => (f.0, l.1),
        _ => return None,
    };
    let window = end - start;
    let busy = length(&all);
    let compute = length(&comp);
    let idle = window - busy;
    let non_compute = busy - compute;
    let pct = |x: i64| {
        let p = if window > 0 {
            100.0 * x as f64 / window as f64
        } else {
            0.0
        };
        if prep.mode == Mode::HtaCompat {
            round_to(p, 2)
        } else {
            p
        }
    };
    Some(TemporalBreakdown {
        rank,
        window_us: us(window),
        idle_us: us(idle),
        compute_us: us(compute),
        non_compute_us: us(non_compute),
        idle_pct: pct(idle),
        compute_pct: pct(compute),
        non_compute_pct: pct(non_compute),
    })
}

/// Temporal breakdown of every rank with device events.
pub fn temporal_breakdown(set: &TraceSet, opts: &AnalysisOptions) -> Vec<TemporalBreakdown> {
    set.ranks
        .iter()
        .filter_map(|r| temporal_prepared(r.rank, &RankPrep::new(&r.table, opts)))
        .collect()
}
