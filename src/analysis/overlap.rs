//! Communication/computation overlap per rank: the share of communication time hidden under compute.

use serde::{Deserialize, Serialize};

use super::gpu::{round_to, sweep_masks, us, KernelType, RankPrep};
use super::options::{AnalysisOptions, Mode};
use crate::table::TraceSet;

/// Overlap of one rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CommCompOverlap {
    pub rank: i64,
    /// Union of communication kernels, µs.
    pub comm_us: f64,
    /// Time with communication and computation both running, µs.
    pub overlap_us: f64,
    /// `overlap_us / comm_us` × 100; `None` without communication kernels.
    pub overlap_pct: Option<f64>,
}

pub fn overlap_prepared(rank: i64, prep: &RankPrep) -> CommCompOverlap {
    let iv: Vec<(i64, i64, u8)> = prep
        .dev
        .iter()
        .filter(|d| matches!(d.ktype, KernelType::Computation | KernelType::Communication))
        .map(|d| (d.ts, d.end, d.ktype.bit()))
        .collect();
    let m = sweep_masks(&iv);
    let comm = m[2] + m[3];
    let both = m[3];
    let pct = (comm > 0).then(|| {
        let p = 100.0 * both as f64 / comm as f64;
        if prep.mode == Mode::HtaCompat {
            round_to(p, 2)
        } else {
            p
        }
    });
    CommCompOverlap {
        rank,
        comm_us: us(comm),
        overlap_us: us(both),
        overlap_pct: pct,
    }
}

pub fn comm_comp_overlap(set: &TraceSet, opts: &AnalysisOptions) -> Vec<CommCompOverlap> {
    set.ranks
        .iter()
        .map(|r| overlap_prepared(r.rank, &RankPrep::new(&r.table, opts)))
        .collect()
}
