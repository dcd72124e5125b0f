//! Communication not hidden behind compute and the straggler rank, for ranks whose collectives were not
//! split into wait and transfer (those are in `collectives`).

use super::{short_names, top_evidence, Draft, EXPOSED_COMM_PCT, STRAGGLER_PCT};
use crate::report::attribution::IdleCause;
use crate::report::findings::{
    rank_label, EvidenceFilter, EvidenceKind, EvidenceRef, Finding, FindingId,
};
use crate::report::inputs::{pct, DiagnosisInputs};
use crate::report::rich_text::{code, kernel, kernel_as, RichText};
use crate::report::wording::dur;
use crate::rich;

/// One collective call this share (%) of a rank's communication time or more is named on its own.
pub const ONE_COLLECTIVE_PCT: f64 = 50.0;

/// The one collective call that is most of the communication, in words: "one `ncclAllGather…` call
/// lasts 1.20 s, 90.0% of a rank's communication time (mean over 2 ranks)", when there is one.
pub(super) fn one_collective_words(i: &DiagnosisInputs) -> Option<RichText> {
    let comms: Vec<_> = i.kernels.iter().filter(|k| k.communication).collect();
    let total: i64 = comms.iter().map(|k| k.total_ns).sum();
    let ranks = i.ranks.len().max(1) as i64;
    let per_rank = total / ranks;
    let top = comms
        .iter()
        .max_by_key(|k| (k.max_ns, std::cmp::Reverse(&k.name)))?;
    let share = pct(top.max_ns, per_rank);
    if per_rank <= 0 || share < ONE_COLLECTIVE_PCT {
        return None;
    }
    Some(rich!(
        "one ",
        kernel(&top.name),
        format!(
            " call lasts {}, {share:.1}% of a rank's communication time{}",
            dur(top.max_ns),
            if ranks > 1 {
                format!(" (mean over {ranks} ranks)")
            } else {
                String::new()
            }
        )
    ))
}

/// Communication that is not hidden behind compute, and host waits in communication calls.
pub fn communication(i: &DiagnosisInputs) -> Option<Finding> {
    if i.collectives.split {
        // Wait and transfer are split across ranks: the finding counts the transfer only.
        return super::collectives::communication(i);
    }
    let t = &i.time;
    let wait = t.idle(IdleCause::CommunicationWait);
    // Waiting for a straggler is the straggler's cost, not the collectives'.
    let for_straggler = slowest_rank(i).map_or(0, |s| s.3);
    let cold = super::collectives::cold_collectives(i);
    let before_cold = (t.comm_exposed_ns + wait - for_straggler).max(0);
    let cold_ns = cold.as_ref().map_or(0, |c| c.0).min(before_cold);
    let ns = before_cold - cold_ns;
    let p = t.pct(ns);
    if p < EXPOSED_COMM_PCT {
        return None;
    }
    let overlap_pct = pct(t.comm_ns - t.comm_exposed_ns, t.comm_ns);
    let waiting = super::collectives::waiting_in_collectives(i)
        .filter(|(w, _)| pct(*w, ns) >= super::collectives::WAITING_PCT);
    let comm: Vec<_> = i
        .kernels
        .iter()
        .filter(|k| k.communication)
        .take(2)
        .collect();
    let top: Vec<RichText> = comm
        .iter()
        .zip(short_names(
            &comm.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(),
        ))
        .map(|(k, shown)| rich!(kernel_as(&k.name, shown), format!(" ({})", dur(k.total_ns))))
        .collect();
    Some(Draft {
        id: FindingId::Communication,
        headline: rich!(
            format!(
                "Communication not overlapped with compute takes {p:.1}% of the GPU window ({} of {}{}){}",
                dur(ns),
                dur(t.window_ns),
                super::summed_over_ranks(i),
                if waiting.is_some() { ", mostly waiting inside the collectives, not moving data" } else { "" },
            ),
            one_collective_words(i).map(|w| rich!(": ", w)),
            "."
        ),
        title: "Communication not overlapped with compute".into(),
        threshold: format!("communication with no compute running ≥ {EXPOSED_COMM_PCT:.0}% of the window").into(),
        measured: rich!(
            format!(
                "collectives {} ({overlap_pct:.1}% overlapped), exposed {}; host waits in communication calls {}",
                dur(t.comm_ns),
                dur(t.comm_exposed_ns),
                dur(wait),
            ),
            cold.map(|(_, w)| rich!("; ", w, format!(" ({} left out)", dur(cold_ns)))),
            waiting.as_ref().map(|(_, w)| rich!("; ", w.clone()))
        ),
        value: p,
        time_ns: ns,
        explanation: rich!(
            "Collectives",
            (!top.is_empty()).then(|| rich!(" (", RichText::join(top, ", "), ")")),
            format!(
                " run {} and only {overlap_pct:.1}% of it overlaps computation.",
                dur(t.comm_ns)
            )
        ),
        actions: if waiting.is_some() {
            super::collectives::waiting_actions(i)
        } else {
            super::collectives::fallback_actions(i)
        },
        evidence: top_evidence(i.kernels.iter().filter(|k| k.communication).flat_map(|k| k.evidence.iter().cloned()), 5),
    }
    .finish(i))
}

/// A rank's GPU work: its GPU compute time, the union of its computation kernels (the temporal
/// breakdown's `compute`); communication is left out, as it includes waiting for the other ranks.
fn rank_work(r: &crate::report::inputs::RankFigure) -> i64 {
    r.time.compute_ns
}

/// The slowest rank when it works at least [`STRAGGLER_PCT`] more than the median rank: (its figure,
/// its excess over the median, the median, the time the other ranks wait for it in all).
fn slowest_rank(
    i: &DiagnosisInputs,
) -> Option<(&crate::report::inputs::RankFigure, i64, i64, i64)> {
    if i.ranks.len() < 2 || i.collectives.split {
        return None;
    }
    let mut sorted: Vec<i64> = i.ranks.iter().map(rank_work).collect();
    crate::sort::sort(&mut sorted);
    let median = sorted[(sorted.len() - 1) / 2];
    let slow = i
        .ranks
        .iter()
        .max_by(|a, b| rank_work(a).cmp(&rank_work(b)).then(b.rank.cmp(&a.rank)))?;
    let excess = rank_work(slow) - median;
    if median <= 0 || pct(excess, median) < STRAGGLER_PCT {
        return None;
    }
    // Every other rank waits up to `excess` for it, in its exposed communication.
    let waited: i64 = i
        .ranks
        .iter()
        .filter(|r| r.rank != slow.rank)
        .map(|r| {
            let cap = if i.time.comm_ns > 0 {
                r.time.comm_exposed_ns
            } else {
                excess
            };
            (rank_work(slow) - rank_work(r)).clamp(0, cap)
        })
        .sum();
    Some((slow, excess, median, waited))
}

/// One rank's GPU is busier than the median rank's: the others wait for it in collectives.
pub fn straggler(i: &DiagnosisInputs) -> Option<Finding> {
    if i.collectives.split {
        // The collectives show who the others wait for, and how long.
        return super::collectives::straggler(i);
    }
    let (slow, excess, median, waited) = slowest_rank(i)?;
    let work = rank_work;
    let excess_pct = pct(excess, median);
    Some(Draft {
        id: FindingId::Straggler,
        headline: format!(
            "Rank {} is a straggler: its GPU computes {} longer than the median rank (+{excess_pct:.1}%), and the other ranks wait for it in collectives.",
            slow.rank,
            dur(excess)
        ).into(),
        title: format!("Straggler: rank {}", slow.rank).into(),
        threshold: format!("a rank's GPU compute time ≥ {STRAGGLER_PCT:.0}% above the median rank's").into(),
        measured: format!("rank {}: {} of GPU compute time vs median {} (+{excess_pct:.1}%)", slow.rank, dur(work(slow)), dur(median)).into(),
        value: excess_pct,
        time_ns: waited,
        explanation: format!(
            "In synchronous training every other rank waits {} for rank {} in the next collective.",
            dur(excess),
            slow.rank
        ).into(),
        actions: vec![
            rich!(format!("Check rank {}'s input: uneven sequence lengths or samples per rank (bucket by length, pad to equal shapes, a ", slow.rank), code("DistributedSampler"), ").").into(),
            rich!(format!("Check rank {}'s hardware: GPU clocks and thermals (", slow.rank), code("nvidia-smi -q -d CLOCK,PERFORMANCE"), "), interconnect topology (", code("nvidia-smi topo -m"), "), noisy neighbours.").into(),
        ],
        evidence: i
            .ranks
            .iter()
            .map(|r| EvidenceRef {
                kind: EvidenceKind::Rank,
                rank: Some(r.rank),
                name: rank_label(r.rank),
                stream: None,
                count: r.steps,
                time_ns: work(r),
                rows: Vec::new(),
            })
            .collect(),
    }
    .finish(i))
    .map(|mut f| {
        f.filter = Some(EvidenceFilter::Ranks(vec![slow.rank]));
        f
    })
}
