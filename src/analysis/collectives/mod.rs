//! Collectives across ranks, waiting versus moving: each collective instance matched across the
//! ranks of a set (by process group and `Seq` when the args have them, else by order of the same
//! operation per group and step), split per rank into wait (its arrival to the last arrival) and
//! transfer (the last arrival to its end); per rank the totals and how often it came last; the
//! late ranks with the wait they cause and why they were late; bandwidth per operation and message
//! size (nccl-tests' algorithm and bus bandwidth); the kinds of parallelism the collectives show.
//!
//! Map-reduce: [`collective_inputs`] per prepared rank, [`collectives_from_inputs`] across ranks.

pub mod bandwidth;
pub mod host_comms;
pub mod inputs;
pub mod kind;
pub mod late;
pub mod matching;
pub mod parallelism;

use serde::{Deserialize, Serialize};

pub use bandwidth::{BandwidthBasis, KindBandwidth};
pub use inputs::{collective_inputs, CollectiveInputs, CollectiveOp, StepPhase};
pub use kind::{CollectiveKind, CollectiveLibrary};
pub use late::{LateCause, LateRank};
pub use parallelism::{Parallelism, ParallelismUse};

use crate::analysis::gpu::RankPrep;

/// How many instances the result lists (those with the most wait).
pub const MAX_INSTANCES: usize = 200;

/// How instances were matched across ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchCounts {
    /// Instances matched by process group and `Seq`.
    pub by_seq: u64,
    /// Instances matched by order of the same operation in a group (and step).
    pub by_order: u64,
    /// Collectives seen on one rank only (no peer in the set to compare with).
    pub unmatched: u64,
}

/// One rank's collectives in all.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankCollectives {
    pub rank: i64,
    pub ops: u64,
    /// Σ kernel time of its collectives, ns.
    pub kernel_ns: i64,
    /// Σ over matched instances of its wait for the last rank, ns.
    pub wait_ns: i64,
    /// Σ over matched instances of its transfer (last arrival to its end), ns.
    pub transfer_ns: i64,
    /// The parts of `wait_ns` / `transfer_ns` during which it runs no compute kernel, ns.
    pub exposed_wait_ns: i64,
    pub exposed_transfer_ns: i64,
    /// Matched instances it took part in, and those it arrived last at (when some rank waited).
    pub matched: u64,
    pub arrived_last: u64,
    /// Its device window, ns.
    pub window_ns: i64,
}

/// One collective instance across the ranks that hold it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Instance {
    pub kind: CollectiveKind,
    pub group: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<i64>,
    pub ordinal: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// The rank that arrived last.
    pub last_rank: i64,
    /// Last arrival minus first arrival, ns.
    pub spread_ns: i64,
    /// Σ over ranks of their wait, ns.
    pub wait_ns: i64,
    /// Transfer time (the median rank's last arrival to end), ns.
    pub transfer_ns: i64,
    /// Per rank: (rank, arrival, end) in ns.
    pub arrivals: Vec<(i64, i64, i64)>,
}

/// The collectives analysis of a set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Collectives {
    pub ranks: Vec<i64>,
    /// Whether wait and transfer could be split (two or more ranks with matched instances).
    pub split: bool,
    pub matched: MatchCounts,
    pub per_rank: Vec<RankCollectives>,
    /// Ranks the others wait for, most wait caused first.
    pub late_ranks: Vec<LateRank>,
    pub bandwidth: Vec<KindBandwidth>,
    pub parallelism: Vec<ParallelismUse>,
    /// The instances with the most wait (at most [`MAX_INSTANCES`]), most wait first.
    pub instances: Vec<Instance>,
    pub notes: Vec<String>,
}

impl Collectives {
    /// Σ over ranks of the wait, ns.
    pub fn total_wait_ns(&self) -> i64 {
        self.per_rank.iter().map(|r| r.wait_ns).sum()
    }

    /// Σ over ranks of the transfer, ns.
    pub fn total_transfer_ns(&self) -> i64 {
        self.per_rank.iter().map(|r| r.transfer_ns).sum()
    }

    /// Whether the set has any collective.
    pub fn is_empty(&self) -> bool {
        self.per_rank.iter().all(|r| r.ops == 0)
    }
}

/// The collectives of prepared ranks (the map and the reduce in one process).
pub fn collectives_prepared(preps: &[(i64, RankPrep)]) -> (Vec<CollectiveInputs>, Collectives) {
    let inputs: Vec<CollectiveInputs> = preps
        .iter()
        .map(|(r, p)| collective_inputs(*r, p))
        .collect();
    let c = collectives_from_inputs(&inputs);
    (inputs, c)
}

/// The reduce: the collectives of a set from each rank's inputs (any order).
pub fn collectives_from_inputs(inputs: &[CollectiveInputs]) -> Collectives {
    matching::reduce(inputs)
}
