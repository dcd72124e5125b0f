//! The rules that read the collectives split across ranks (waiting versus moving): the straggler
//! finding names the ranks the others wait for, with the wait each causes and why it was late; the
//! communication finding counts the transfer only; the advice follows the kind of parallelism.

use super::{Draft, EXPOSED_COMM_PCT};
use crate::analysis::collectives::bandwidth::BandwidthBasis;
use crate::analysis::collectives::{Collectives, LateCause, LateRank, Parallelism};
use crate::analysis::names::RunKind;
use crate::analysis::roofline::{PeerLink, PeerLinkKind};
use crate::report::findings::{
    rank_label, EvidenceFilter, EvidenceKind, EvidenceRef, Finding, FindingId,
};
use crate::report::inputs::{pct, DiagnosisInputs};
use crate::report::rich_text::{code, kernel, RichText};
use crate::report::wording::{count, dur, noun_for};
use crate::rich;

/// Waiting for late ranks, with no compute running, above this share (%) of the GPU window.
pub const WAIT_PCT: f64 = 5.0;
/// A late rank is named when it causes at least this share (%) of all the wait.
pub const NAMED_LATE_PCT: f64 = 10.0;
/// A collective's bus bandwidth under this share (%) of its NVLink / Infinity Fabric link is advice.
pub const LOW_LINK_PCT: f64 = 25.0;
/// At most this many late ranks are named.
pub const MAX_NAMED_LATE: usize = 4;

/// A late rank is a straggler only when it causes at least this many times the wait the median
/// rank causes (a rank never last causes none): a straggler is one rank or a minority the others
/// wait for. Ranks that are last in turn (two ranks each last at about half the collectives) are
/// balanced, and none is named.
pub const STRAGGLER_OVER_MEDIAN: f64 = 2.0;

/// The late ranks worth naming: most wait caused first (the page marks these too). None when the
/// ranks are balanced ([`balanced`]).
pub fn named_late(c: &Collectives) -> Vec<&LateRank> {
    let total: i64 = c.late_ranks.iter().map(|l| l.caused_wait_ns).sum();
    let median = median_caused_wait(c);
    c.late_ranks
        .iter()
        .filter(|l| l.caused_wait_ns > 0 && pct(l.caused_wait_ns, total) >= NAMED_LATE_PCT)
        .filter(|l| l.caused_wait_ns as f64 >= STRAGGLER_OVER_MEDIAN * median as f64)
        .take(MAX_NAMED_LATE)
        .collect()
}

/// The wait the median rank causes (the lower middle; ranks never last cause none), ns.
fn median_caused_wait(c: &Collectives) -> i64 {
    let mut ranks: Vec<i64> = c
        .ranks
        .iter()
        .copied()
        .chain(c.per_rank.iter().map(|r| r.rank))
        .chain(c.late_ranks.iter().map(|l| l.rank))
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    let mut caused: Vec<i64> = ranks
        .iter()
        .map(|r| {
            c.late_ranks
                .iter()
                .find(|l| l.rank == *r)
                .map_or(0, |l| l.caused_wait_ns)
        })
        .collect();
    caused.sort_unstable();
    caused
        .get(caused.len().saturating_sub(1) / 2)
        .copied()
        .unwrap_or(0)
}

/// The ranks wait for each other in collectives, but no rank (or minority) is the one they wait
/// for: each is last in turn, within noise of the others.
pub fn balanced(c: &Collectives) -> bool {
    c.late_ranks.iter().any(|l| l.caused_wait_ns > 0) && named_late(c).is_empty()
}

/// "rank 0 last at 6, rank 1 at 6 of 12 collectives".
fn last_in_turn_words(c: &Collectives) -> String {
    let matched = c.matched.by_seq + c.matched.by_order;
    let mut late: Vec<&LateRank> = c.late_ranks.iter().filter(|l| l.times_last > 0).collect();
    late.sort_by_key(|l| l.rank);
    let parts: Vec<String> = late
        .iter()
        .take(MAX_NAMED_LATE)
        .enumerate()
        .map(|(n, l)| {
            if n == 0 {
                format!("rank {} last at {}", l.rank, l.times_last)
            } else {
                format!("rank {} at {}", l.rank, l.times_last)
            }
        })
        .collect();
    let more = if late.len() > MAX_NAMED_LATE {
        ", ..."
    } else {
        ""
    };
    format!(
        "{}{more} of {}",
        parts.join(", "),
        count(matched, "collective")
    )
}

/// "rank waits 9.84 ms" for one waiting rank, "3 ranks wait 150.8 ms in all" for more: the wait is
/// a sum over the waiting ranks, and said so.
fn waiters_words(n: usize) -> (String, &'static str) {
    match n {
        0 | 1 => ("rank waits".into(), ""),
        n => (format!("{n} ranks wait"), " in all"),
    }
}

fn ranks_words(ranks: &[i64]) -> String {
    let list: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
    match list.len() {
        1 => format!("Rank {}", list[0]),
        _ => format!("Ranks {}", list.join(", ")),
    }
}

/// One late rank in words: how often last, the wait it causes, its main cause.
fn late_words(l: &LateRank, matched: u64) -> String {
    let cause = l
        .causes
        .first()
        .map_or(String::new(), |c| format!("; mostly {}", c.cause.label()));
    format!(
        "rank {}: last at {} of {}, the others wait {} for it{cause}",
        l.rank,
        l.times_last,
        count(matched, "collective"),
        dur(l.caused_wait_ns)
    )
}

/// What to do about a rank late for one cause.
fn late_action(cause: LateCause, rank: i64) -> RichText {
    match cause {
        LateCause::Compute => rich!(format!("Rank {rank} computes longer before the collectives: even out the work per rank (sequence lengths or samples per rank: bucket by length, pad to equal shapes, a "), code("DistributedSampler"), "), and check its GPU (clocks and thermals with ", code("nvidia-smi -q -d CLOCK,PERFORMANCE"), ", its interconnect topology with ", code("nvidia-smi topo -m"), ")."),
        LateCause::DataLoader => rich!(format!("Rank {rank}'s GPU waits for its DataLoader before the collectives: give it more workers ("), code("num_workers"), ", ", code("persistent_workers=True"), ", ", code("prefetch_factor"), "), ", code("pin_memory=True"), ", and check that its data (storage, decoding) is not slower than the other ranks'."),
        LateCause::Host => format!("Rank {rank}'s host is late to launch the collective's work: look for work only that rank does (logging, metrics, checkpointing on rank 0), Python garbage collection, CPU contention or a wrong CPU affinity on its host.").into(),
        LateCause::StartedLate => rich!(format!("Rank {rank} starts its step later than the others: look before the step (the previous step's tail, work between steps such as logging, evaluation or checkpointing only on that rank, data loading outside "), code("ProfilerStep"), "), and at the hosts' clock skew when the ranks are on different hosts."),
        LateCause::Unknown => format!("Rank {rank} arrives last without the trace showing why before the collective: check the hosts' clock skew (ranks on different hosts) and work outside the profiled window.").into(),
    }
}

/// What a host-late rank's cause becomes in a trace without host events: its GPU sat idle before
/// the collective, and the trace cannot say why.
pub const IDLE_HOST_UNSEEN: &str =
    "its GPU sat idle before the collective (the trace has no host events to say why)";

/// The straggler finding reworded for a trace without host events ([`crate::report::context::TraceHolds::GpuOnly`]): an
/// idle GPU before the collective is not blamed on a host nobody recorded, and the action asks
/// for that host's events instead.
pub fn straggler_without_host(f: &mut Finding) {
    if f.id != FindingId::Straggler {
        return;
    }
    let host = LateCause::Host.label();
    f.measured = f.measured.replace_text(host, IDLE_HOST_UNSEEN);
    for a in &mut f.actions {
        if a.contains("host is late to launch") {
            let plain = a.plain();
            let rank = plain
                .split('\'')
                .next()
                .unwrap_or("The late rank")
                .to_string();
            *a = rich!(format!("{rank}'s GPU is idle before the collectives and the trace holds no host events: record that rank with its CPU activity ("), code("ProfilerActivity.CPU"), ") to see whether its host (launches, Python, data loading, logging) or work outside the trace holds it back.").into();
        }
    }
}

/// The straggler finding from the collectives split: the ranks the others wait for.
pub fn straggler(i: &DiagnosisInputs) -> Option<Finding> {
    let c = &i.collectives;
    let late = named_late(c);
    let exposed_wait: i64 = c.per_rank.iter().map(|r| r.exposed_wait_ns).sum();
    let caused: i64 = late.iter().map(|l| l.caused_wait_ns).sum();
    // The named ranks cause `caused` of the wait; only the exposed part of it is recoverable, and
    // exposed wait others caused is not theirs.
    let claimed = caused.min(exposed_wait);
    let p = i.time.pct(claimed);
    if late.is_empty() || p < WAIT_PCT {
        return None;
    }
    let ranks: Vec<i64> = late.iter().map(|l| l.rank).collect();
    let matched = c.matched.by_seq + c.matched.by_order;
    let waiters = waiters_words(c.ranks.len().max(i.ranks.len()) - ranks.len());
    let mut actions: Vec<RichText> = Vec::new();
    for l in &late {
        if let Some(first) = l.causes.first() {
            let a = late_action(first.cause, l.rank);
            if !actions.contains(&a) {
                actions.push(a.into());
            }
        }
    }
    actions.push("Until the late rank is fixed, the other ranks' waiting is not a communication problem: faster links or larger buckets do not recover it.".into());
    Some(
        Draft {
            id: FindingId::Straggler,
            headline: format!(
                "{} {} late to the collectives: the other {} {} for {}{} ({p:.1}% of GPU time with nothing else running).",
                ranks_words(&ranks),
                if ranks.len() == 1 { "arrives" } else { "arrive" },
                waiters.0,
                dur(caused),
                if ranks.len() == 1 { "it" } else { "them" },
                waiters.1,
            ).into(),
            title: format!(
                "Straggler: {}",
                ranks.iter().map(|r| rank_label(*r)).collect::<Vec<_>>().join(", ")
            ).into(),
            threshold: format!("waiting for the last rank, with no compute running, ≥ {WAIT_PCT:.0}% of the window").into(),
            measured: (late
                .iter()
                .map(|l| late_words(l, matched))
                .collect::<Vec<_>>()
                .join("; ")).into(),
            value: p,
            time_ns: claimed,
            explanation: format!(
                "Every rank's collective starts moving data only when the last rank arrives; the wait ({} in all, {} of it with no compute running) is the late ranks' cost, not the network's.",
                dur(c.total_wait_ns()),
                dur(exposed_wait)
            ).into(),
            actions,
            evidence: late
                .iter()
                .map(|l| EvidenceRef {
                    kind: EvidenceKind::Rank,
                    rank: Some(l.rank),
                    name: rank_label(l.rank),
                    stream: None,
                    count: l.times_last,
                    time_ns: l.caused_wait_ns,
                    rows: Vec::new(),
                })
                .collect(),
        }
        .finish(i),
    )
    .map(|mut f| {
        f.filter = Some(EvidenceFilter::Ranks(ranks));
        f
    })
}

/// A collective moving fewer bytes than this is small: its time is its latency, not bandwidth.
pub const SMALL_MESSAGE_BYTES: u64 = 1 << 20;
/// What a small collective costs when nothing else holds it: its latency, ns (NCCL's
/// small-message all-reduce / all-to-all inside a node: ~10-20 µs).
pub const SMALL_MESSAGE_LATENCY_NS: i64 = 20_000;
/// Small collectives whose count × latency is under this share (%) of the window are not a cost
/// worth batching: "fewer, larger collectives" is no advice for them.
pub const SMALL_COUNT_PCT: f64 = 5.0;

/// Small collectives: (count per rank, the largest size, count × latency per rank), when every
/// collective with a known size is small.
fn small_collectives(c: &Collectives) -> Option<(u64, u64, i64)> {
    let sized: Vec<_> = c.bandwidth.iter().filter(|b| b.bytes.is_some()).collect();
    if sized.is_empty() || sized.iter().any(|b| b.bytes >= Some(SMALL_MESSAGE_BYTES)) {
        return None;
    }
    let count: u64 = sized.iter().map(|b| b.count).sum();
    let largest = sized.iter().filter_map(|b| b.bytes).max().unwrap_or(0);
    Some((count, largest, count as i64 * SMALL_MESSAGE_LATENCY_NS))
}

/// The mean over ranks of their collectives' kernel time, ns.
fn kernel_per_rank(c: &Collectives) -> i64 {
    let n = c.per_rank.len().max(1) as i64;
    c.per_rank.iter().map(|r| r.kernel_ns).sum::<i64>() / n
}

/// Small collectives as a count × latency against what they cost: `None` unless every collective
/// is small.
fn small_words(i: &DiagnosisInputs) -> Option<String> {
    let c = &i.collectives;
    let (n, largest, need) = small_collectives(c)?;
    let window = i.time.window_ns / i.ranks.len().max(1) as i64;
    let held = kernel_per_rank(c);
    Some(format!(
        "{} of at most {} per rank: at ≈{} of latency each they need ≈{} ({:.1}% of a rank's window), yet they hold each rank's GPU {} ({:.0}× that)",
        count(n, "collective"),
        crate::report::format::bytes(largest),
        dur(SMALL_MESSAGE_LATENCY_NS),
        dur(need),
        pct(need, window),
        dur(held),
        held as f64 / need.max(1) as f64
    ))
}

/// The device's wait tasks (`Notify Wait`, `EVENT_WAIT`) at least this share (%) of the
/// collectives' time: the collectives wait, they do not move data.
pub const DEVICE_WAIT_IN_COMM_PCT: f64 = 50.0;
/// A collective call at least this many times longer than one of its kind moving as many bytes or
/// more is waiting: its bytes need no more time than the bigger call's.
pub const WAIT_OVER_BIGGER: f64 = 10.0;
/// Waiting at least this share (%) of the communication finding's time makes it a wait.
pub const WAITING_PCT: f64 = 50.0;

/// Time inside the collectives that is waiting (for a peer, or for the host that feeds it), not
/// moving data, with what shows it: the device's wait tasks, or calls far slower than bigger calls
/// of their kind (the excess over the bigger call's time). `None` when neither shows.
pub(super) fn waiting_in_collectives(i: &DiagnosisInputs) -> Option<(i64, RichText)> {
    // The collectives' own time: their wait tasks are inside it (their waiting part).
    let comm: i64 = i
        .kernels
        .iter()
        .filter(|k| k.communication && !crate::analysis::names::is_device_wait_op(&k.name))
        .map(|k| k.total_ns)
        .sum();
    let device_wait = i.device_wait_ns();
    if comm > 0 && pct(device_wait, comm) >= DEVICE_WAIT_IN_COMM_PCT {
        return Some((
            device_wait.min(comm),
            rich!(
                format!("the {}'s wait tasks (", i.device_word()),
                code("Notify Wait"),
                ", ",
                code("EVENT_WAIT"),
                format!(
                    ") last {} against {} of collectives: the collectives wait for a peer rank (or the host that feeds it) to signal, they do not move data",
                    dur(device_wait),
                    dur(comm)
                )
            ),
        ));
    }
    slower_than_bigger(&i.collectives).map(|(ns, w)| (ns, w.into()))
}

/// Calls slower than bigger calls of their kind by [`WAIT_OVER_BIGGER`] or more: their excess over
/// the bigger call's time per call, and the worst in words.
fn slower_than_bigger(c: &Collectives) -> Option<(i64, String)> {
    let per = |b: &crate::analysis::collectives::KindBandwidth| b.time_ns / b.count.max(1) as i64;
    let rows: Vec<_> = c
        .bandwidth
        .iter()
        .filter(|b| b.bytes.is_some() && b.count > 0 && b.time_ns > 0)
        .collect();
    let mut excess = 0;
    let mut worst: Option<(f64, String)> = None;
    for r in &rows {
        let faster = rows
            .iter()
            .filter(|b| b.kind == r.kind && b.bytes >= r.bytes && !std::ptr::eq(**b, *r))
            .filter(|b| per(b) as f64 * WAIT_OVER_BIGGER <= per(r) as f64)
            .min_by_key(|b| per(b));
        let Some(b) = faster else { continue };
        // The table is per instance; every rank of it sits in the call (the findings sum ranks).
        excess += (r.time_ns - r.count as i64 * per(b)) * c.per_rank.len().max(1) as i64;
        let ratio = per(r) as f64 / per(b).max(1) as f64;
        if worst.as_ref().is_none_or(|w| ratio > w.0) {
            worst = Some((
                ratio,
                format!(
                    "a {} {} takes {} per call, {ratio:.0}× a {} one ({}): its time is waiting (for a peer rank or the host), not moving data",
                    crate::report::format::bytes(r.bytes.unwrap_or(0)),
                    r.kind.label(),
                    dur(per(r)),
                    crate::report::format::bytes(b.bytes.unwrap_or(0)),
                    dur(per(b))
                ),
            ));
        }
    }
    worst.map(|(_, w)| (excess, w))
}

/// What to do when the collectives' time is waiting: find what makes a rank late (its host's
/// dispatch, operators compiled online on an NPU), not larger buckets or faster links.
pub(super) fn waiting_actions(i: &DiagnosisInputs) -> Vec<RichText> {
    let npu = i.device_kind == crate::trace::dialect::DeviceKind::Npu;
    let mut out = vec![format!(
        "The collectives' time is waiting for a rank that is late to them, not data moving: larger buckets, compression or faster links do not recover it. Find what holds that rank back before the collective: its host dispatching the work before it (Python, launches, synchronisations), data loading, or uneven work per rank; {}",
        if i.ranks.len() > 1 {
            "compare the ranks' host timelines just before the longest collective."
        } else {
            "load every rank's trace together to see which one arrives last and why."
        }
    )
    .into()];
    if npu {
        out.push("On Ascend, operators compiled online (`AscendCL@aclopCompileAndExecute` on the host) stall the rank that compiles them: turn online compilation off (`torch_npu.npu.set_compile_mode(jit_compile=False)`, with `torch.npu.config.allow_internal_format = False`) and keep shapes static so each operator compiles once, before the profiled steps.".into());
    }
    out
}

/// The cold first collectives of every rank: (their time beyond their later median summed over
/// ranks, the longest one in words), when there are any.
pub(super) fn cold_collectives(i: &DiagnosisInputs) -> Option<(i64, RichText)> {
    let excess: i64 = i.ranks.iter().map(|r| r.cold_comm_excess_ns()).sum();
    let top = i
        .ranks
        .iter()
        .flat_map(|r| r.cold_comm.iter())
        .max_by_key(|o| (o.dur_ns - o.later_median_ns, std::cmp::Reverse(o.rank)))?;
    (excess > 0).then(|| {
        (
            excess,
            rich!("the first ", kernel(&top.name), format!(" (rank {}) takes {}, {:.0}× its later median {}: communicator and connection set-up, a one-off, not steady-state communication", top.rank, dur(top.dur_ns), top.dur_ns as f64 / top.later_median_ns.max(1) as f64, dur(top.later_median_ns))),
        )
    })
}

/// The communication finding from the collectives split: transfer with no compute running (and
/// the wait too when the ranks are balanced: no straggler is its cause), less the cold first
/// collectives' set-up.
pub fn communication(i: &DiagnosisInputs) -> Option<Finding> {
    let c = &i.collectives;
    let exposed: i64 = c.per_rank.iter().map(|r| r.exposed_transfer_ns).sum();
    let exposed_wait: i64 = c.per_rank.iter().map(|r| r.exposed_wait_ns).sum();
    let balanced = balanced(c);
    let counted_wait = if balanced { exposed_wait } else { 0 };
    let cold = cold_collectives(i);
    let cold_ns = cold
        .as_ref()
        .map_or(0, |(ns, _)| *ns)
        .min(exposed + counted_wait);
    let counted = exposed + counted_wait - cold_ns;
    let p = i.time.pct(counted);
    if p < EXPOSED_COMM_PCT {
        return None;
    }
    let transfer = c.total_transfer_ns();
    let link = i.roofline.peer_link.as_ref();
    let bw = c
        .bandwidth
        .iter()
        .filter(|b| b.busbw_gbps.is_some())
        .take(2)
        .map(|b| {
            let busbw = b.busbw_gbps.unwrap_or(0.0);
            let judged = link
                .map(|l| format!(" ({:.0}% of {})", l.pct_of(busbw), l.label()))
                .unwrap_or_default();
            format!(
                "{} of {} at {busbw:.1} GB/s bus bandwidth{judged}",
                b.kind.label(),
                b.bytes.map_or("?".into(), crate::report::format::bytes),
            )
        })
        .collect::<Vec<_>>();
    let small = small_words(i);
    let wait_words = if balanced {
        format!(
            "waiting for the last rank {} ({} exposed, counted here: the ranks are balanced, {}, so no rank is a straggler)",
            dur(c.total_wait_ns()),
            dur(exposed_wait),
            last_in_turn_words(c)
        )
    } else {
        format!(
            "waiting for the last rank {} ({} exposed, counted under the straggler finding)",
            dur(c.total_wait_ns()),
            dur(exposed_wait)
        )
    };
    let waiting = waiting_in_collectives(i).filter(|(w, _)| pct(*w, counted) >= WAITING_PCT);
    let headline_what = if waiting.is_some() {
        "Collectives with no compute running (mostly waiting inside them for a peer or the host, not moving data) take"
    } else if balanced {
        "Collectives (moving data, and waiting while the ranks arrive in turn) with no compute running take"
    } else {
        "Moving data in collectives with no compute running takes"
    };
    let mut measured = rich!(format!(
        "transfer {} ({} exposed); {wait_words}{}",
        dur(transfer),
        dur(exposed),
        if bw.is_empty() {
            String::new()
        } else {
            format!("; {}", bw.join(", "))
        }
    ));
    if let Some(w) = &small {
        measured.push(format!("; {w}"));
    }
    if let Some((_, w)) = &cold {
        measured
            .push("; ")
            .push(w)
            .push(format!(" ({} left out)", dur(cold_ns)));
    }
    if let Some((_, w)) = &waiting {
        measured.push("; ").push(w.clone());
    }
    Some(
        Draft {
            id: FindingId::Communication,
            headline: rich!(
                format!(
                    "{headline_what} {p:.1}% of GPU time ({} of {}{})",
                    dur(counted),
                    dur(i.time.window_ns),
                    super::summed_over_ranks(i),
                ),
                super::ranks::one_collective_words(i).map(|w| rich!(": ", w)),
                "."
            ),
            title: "Communication not overlapped with compute".into(),
            threshold: format!("collective transfer (after the last rank arrives) with no compute running ≥ {EXPOSED_COMM_PCT:.0}% of the window").into(),
            measured,
            value: p,
            time_ns: counted,
            explanation: format!(
                "Once every rank has arrived, the collectives move data for {} and only {:.1}% of it overlaps computation{}.",
                dur(transfer),
                pct(transfer - exposed, transfer),
                parallelism_words(c)
            ).into(),
            actions: if waiting.is_some() {
                waiting_actions(i)
            } else {
                communication_actions(i, link)
            },
            evidence: Vec::new(),
        }
        .finish(i),
    )
}

/// ` (the collectives show tensor parallel, ...)`, or nothing.
fn parallelism_words(c: &Collectives) -> String {
    if c.parallelism.is_empty() {
        return String::new();
    }
    let kinds: Vec<&str> = c.parallelism.iter().map(|p| p.kind.label()).collect();
    format!("; the collectives show {}", kinds.join(", "))
}

/// Advice by the kinds of parallelism the collectives show (most kernel time first); `None` when
/// they show none.
/// `link`: the GPUs' peer link when the device is known (NVLink is named only when they have it).
pub fn parallelism_actions(c: &Collectives, link: Option<&PeerLink>) -> Option<Vec<RichText>> {
    let mut uses: Vec<_> = c.parallelism.iter().collect();
    crate::sort::sort_by(&mut uses, |a, b| {
        b.kernel_ns.cmp(&a.kernel_ns).then(a.kind.cmp(&b.kind))
    });
    let out: Vec<RichText> = uses
        .iter()
        .map(|u| parallelism_action(u.kind, link))
        .collect();
    (!out.is_empty()).then_some(out)
}

/// The communication advice before the link's: an inference run's (no backward to overlap with,
/// no gradients to bucket), else by the parallelism the collectives show, else the general one.
pub(super) fn fallback_actions(i: &DiagnosisInputs) -> Vec<RichText> {
    let link = i.roofline.peer_link.as_ref();
    if i.run == RunKind::Inference {
        // No gradients to bucket or shard: data-parallel readings of the collectives are the
        // forward's all-reduces; tensor, pipeline and expert parallel advice stands.
        let mut out: Vec<RichText> = Vec::new();
        let mut uses: Vec<_> = i.collectives.parallelism.iter().collect();
        crate::sort::sort_by(&mut uses, |a, b| {
            b.kernel_ns.cmp(&a.kernel_ns).then(a.kind.cmp(&b.kind))
        });
        for u in uses {
            let a = match u.kind {
                Parallelism::DataParallel | Parallelism::ShardedDataParallel => {
                    inference_action(link)
                }
                kind => parallelism_action(kind, link),
            };
            if !out.contains(&a) {
                out.push(a);
            }
        }
        if out.is_empty() {
            out.push(inference_action(link));
        }
        return out;
    }
    parallelism_actions(&i.collectives, link).unwrap_or_else(|| {
        vec![
            "Overlap communication with compute: with DDP tune `bucket_cap_mb` and keep `gradient_as_bucket_view=True`; with FSDP enable `forward_prefetch`/`backward_prefetch=BACKWARD_PRE`.".into(),
            "Avoid synchronising around collectives (`async_op=True`, wait late) and check that no rank is late (a straggler makes every other rank's collective wait).".into(),
            "Reduce the volume: gradient accumulation with `no_sync()`, bf16 gradients or a compression comm hook.".into(),
        ]
    })
}

/// Inference's collectives (tensor parallel's all-reduce inside every forward, no backward to hide
/// them behind, no gradients): fewer and fused, a faster small-message all-reduce, overlap with
/// the GEMMs, a smaller TP degree.
fn inference_action(link: Option<&PeerLink>) -> RichText {
    let over = link.map_or(String::new(), |l| format!(" over {}", l.label()));
    format!("Inference (forward only: no backward to overlap with, no gradient buckets): the collectives are tensor parallel's all-reduces inside every forward{over}. Make them fewer and cheaper: fuse the all-reduce with the residual add and RMSNorm that follow it (vLLM's / TensorRT-LLM's all-reduce fusion), use the one-shot/two-shot custom all-reduce for small messages inside a node (vLLM's custom all-reduce, not NCCL's ring), overlap the all-reduce with the next GEMM (async TP, sequence parallelism), batch more tokens per forward, and use a smaller TP degree (or replicas) when the GEMMs are small.").into()
}

/// Tensor parallel's advice by the link its collectives cross on every layer.
fn tensor_parallel_action(link: Option<&PeerLink>) -> RichText {
    let keep = match link.map(|l| l.kind) {
        Some(PeerLinkKind::Pcie) => {
            return format!("Tensor parallel (collectives inside forward on every layer) over PCIe: these GPUs have no NVLink ({}), so every layer's collective crosses PCIe — use a smaller TP degree or none (data parallel / FSDP across these GPUs, which moves data once per step), sequence parallelism (reduce-scatter + all-gather in place of all-reduce), and overlap the TP collectives with the GEMMs.", link.map(PeerLink::label).unwrap_or_default()).into();
        }
        Some(PeerLinkKind::Nvlink) => {
            "keep the TP group inside one node (on its NVLink)".to_string()
        }
        Some(PeerLinkKind::InfinityFabric) => {
            "keep the TP group inside one node (on its Infinity Fabric links)".to_string()
        }
        None => "keep the TP group inside one node (on its fastest GPU-to-GPU links)".to_string(),
    };
    format!("Tensor parallel (collectives inside forward on every layer): {keep}, use sequence parallelism (reduce-scatter + all-gather in place of all-reduce), and overlap the TP collectives with the GEMMs (async TP, Transformer Engine's comm-GEMM overlap); a smaller TP degree when the GEMMs are small.").into()
}

fn parallelism_action(kind: Parallelism, link: Option<&PeerLink>) -> RichText {
    let text = match kind {
        Parallelism::DataParallel => "Data parallel (gradient all-reduce in backward): overlap it with backward — tune DDP's `bucket_cap_mb` (fewer, larger all-reduces when they are many and small), keep `gradient_as_bucket_view=True` and `static_graph=True`; accumulate gradients with `no_sync()`; bf16 gradients or a compression comm hook to move less.",
        Parallelism::ShardedDataParallel => "Sharded data parallel (all-gather in forward, reduce-scatter in backward): prefetch the next all-gather (FSDP `forward_prefetch=True`, `backward_prefetch=BACKWARD_PRE`), wrap larger units (fewer, larger collectives), and shard inside a node with HYBRID_SHARD when the links between nodes are slow.",
        Parallelism::TensorParallel => return tensor_parallel_action(link),
        Parallelism::ExpertParallel => "All-to-all (MoE experts or sharded embeddings): balance the load per rank (an auxiliary load-balancing loss, a capacity factor that caps tokens per expert; for embeddings, a balanced sharding plan), overlap dispatch/combine with expert compute, and keep the expert group inside a node.",
        Parallelism::PipelineParallel => "Pipeline parallel (send/recv between stages): more micro-batches per step shrink the bubble (≈ (stages − 1) / micro-batches), an interleaved 1F1B schedule, and stages with balanced layers.",
    };
    text.into()
}

/// The communication finding's actions: by parallelism, else the general ones; small collectives
/// far above their latency are a wait, not a volume.
fn communication_actions(i: &DiagnosisInputs, link: Option<&PeerLink>) -> Vec<RichText> {
    let c = &i.collectives;
    let window = i.time.window_ns / i.ranks.len().max(1) as i64;
    if let Some((n, _, need)) = small_collectives(c) {
        if pct(need, window) < SMALL_COUNT_PCT {
            return vec![format!("{} {} {} small: their latency (≈{} in all per rank) is not the cost, and fewer, larger collectives or faster links would not recover the rest. Their time is waiting: ranks out of step (see which rank arrives last, and the hosts' clock skew), or NCCL setting up its peer connections on first use; run one warm-up collective of each kind before profiling, and record more than one step.", noun_for(n, "This|These"), count(n, "collective"), if n == 1 { "is" } else { "are" }, dur(need)).into()];
        }
    }
    let mut actions = fallback_actions(i);
    actions.extend(link.and_then(|l| link_action(c, l, i.run)));
    actions
}

/// The busiest collective's bus bandwidth (over its transfer) judged against the link: PCIe
/// without NVLink, or a link far from used.
fn link_action(c: &Collectives, link: &PeerLink, run: RunKind) -> Option<RichText> {
    let b = c
        .bandwidth
        .iter()
        .filter(|b| b.basis == BandwidthBasis::Transfer)
        .find(|b| b.busbw_gbps.is_some())?;
    let busbw = b.busbw_gbps?;
    let pct = link.pct_of(busbw);
    let measured = format!(
        "{} at {busbw:.1} GB/s bus bandwidth is {pct:.0}% of {}",
        b.kind.label(),
        link.label()
    );
    if link.kind == PeerLinkKind::Pcie && run == RunKind::Inference {
        Some(rich!(format!("{measured}: these GPUs have no NVLink, so every forward's all-reduce crosses PCIe: a smaller TP degree (or replicas, one model per GPU) and check with "), code("nvidia-smi topo -m"), " that peers share a PCIe switch."))
    } else if link.kind == PeerLinkKind::Pcie {
        Some(rich!(format!("{measured}: these GPUs have no NVLink, so move less per step (bf16 gradients, a compression comm hook, gradient accumulation with "), code("no_sync()"), ") and check with ", code("nvidia-smi topo -m"), " that peers share a PCIe switch (not a trip through the CPU)."))
    } else if pct < LOW_LINK_PCT {
        let fewer = if run == RunKind::Inference {
            "fewer, larger collectives"
        } else {
            "fewer, larger collectives: larger DDP buckets or FSDP units"
        };
        Some(rich!(format!("{measured}: the link is far from used — small messages are latency-bound ({fewer}), or the traffic leaves the node (check "), code("NCCL_DEBUG=INFO"), " for the transport used)."))
    } else {
        None
    }
}
