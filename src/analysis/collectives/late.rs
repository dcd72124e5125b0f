//! The ranks others wait for: per late rank the wait it causes (Σ over the instances it arrived last
//! at of every rank's wait) and why it was late, from what it did before the collective compared
//! with the first rank to arrive.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::inputs::CollectiveOp;

crate::stable_enum! {
    /// Why a rank arrived last at a collective.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum LateCause {
        /// Its GPU computed longer before the collective.
        Compute,
        /// Its GPU sat idle while its host was in the DataLoader.
        DataLoader,
        /// Its GPU sat idle waiting for its host (launches, Python, synchronisation).
        Host,
        /// It started the stretch before the collective later (its step, or its previous
        /// collective, began later): the lateness comes from before it.
        StartedLate,
        /// What it did before does not explain the lateness (clock skew, or work outside the trace).
        Unknown,
    }
}

impl LateCause {
    /// The cause in words, for reports.
    pub fn label(self) -> &'static str {
        match self {
            LateCause::Compute => "its GPU computed longer before the collective",
            LateCause::DataLoader => "its GPU waited for the DataLoader",
            LateCause::Host => "its GPU waited for its host (launches, Python, synchronisation)",
            LateCause::StartedLate => {
                "its step (or its previous collective) began later: the delay comes from before it"
            }
            LateCause::Unknown => "not explained by what the trace shows before the collective",
        }
    }
}

/// The wait one cause accounts for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CauseShare {
    pub cause: LateCause,
    /// Wait of the other ranks at the instances where this was the cause, ns.
    pub wait_ns: i64,
    pub instances: u64,
}

/// A rank the others wait for.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LateRank {
    pub rank: i64,
    /// Instances it arrived last at (with some rank waiting).
    pub times_last: u64,
    /// Σ of the other ranks' wait at those instances, ns.
    pub caused_wait_ns: i64,
    /// By cause, most wait first.
    pub causes: Vec<CauseShare>,
}

/// The cause of `late` arriving after `early` (two ops of one instance): the part of its lead
/// (the stretch since its previous collective or step start: device compute, DataLoader, other
/// idle, or a later start of the stretch) that exceeds the early rank's and explains at least half
/// the lateness.
pub fn late_cause(late: &CollectiveOp, early: &CollectiveOp) -> LateCause {
    let delta = late.start - early.start;
    if delta <= 0 {
        return LateCause::Unknown;
    }
    let idle = |o: &CollectiveOp| (o.start - o.lead.since) - o.lead.busy_ns - o.lead.loader_ns;
    let extra = [
        (LateCause::Compute, late.lead.busy_ns - early.lead.busy_ns),
        (
            LateCause::DataLoader,
            late.lead.loader_ns - early.lead.loader_ns,
        ),
        (LateCause::Host, idle(late) - idle(early)),
        (LateCause::StartedLate, late.lead.since - early.lead.since),
    ];
    extra
        .iter()
        .filter(|(_, x)| 2 * x >= delta)
        .max_by_key(|(_, x)| *x)
        .map_or(LateCause::Unknown, |(c, _)| *c)
}

/// The late ranks, as instances are added.
#[derive(Default)]
pub struct LateTally(BTreeMap<i64, (u64, i64, BTreeMap<LateCause, (i64, u64)>)>);

impl LateTally {
    pub fn add(&mut self, rank: i64, wait_ns: i64, cause: LateCause) {
        let e = self.0.entry(rank).or_default();
        e.0 += 1;
        e.1 += wait_ns;
        let c = e.2.entry(cause).or_default();
        c.0 += wait_ns;
        c.1 += 1;
    }

    /// Most wait caused first (ties: lower rank).
    pub fn finish(self) -> Vec<LateRank> {
        let mut out: Vec<LateRank> = self
            .0
            .into_iter()
            .map(|(rank, (n, w, causes))| {
                let mut causes: Vec<CauseShare> = causes
                    .into_iter()
                    .map(|(cause, (wait_ns, instances))| CauseShare {
                        cause,
                        wait_ns,
                        instances,
                    })
                    .collect();
                crate::sort::sort_by(&mut causes, |a, b| {
                    b.wait_ns.cmp(&a.wait_ns).then(a.cause.cmp(&b.cause))
                });
                LateRank {
                    rank,
                    times_last: n,
                    caused_wait_ns: w,
                    causes,
                }
            })
            .collect();
        crate::sort::sort_by(&mut out, |a, b| {
            b.caused_wait_ns
                .cmp(&a.caused_wait_ns)
                .then(a.rank.cmp(&b.rank))
        });
        out
    }
}
