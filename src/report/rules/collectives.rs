//! The rules that read the collectives split across ranks (waiting versus moving): the straggler
//! finding names the ranks the others wait for, with the wait each causes and why it was late; the
//! communication finding counts the transfer only; the advice follows the kind of parallelism.

use super::{Draft, EXPOSED_COMM_PCT};
use crate::analysis::collectives::bandwidth::BandwidthBasis;
use crate::analysis::collectives::{Collectives, LateCause, LateRank, Parallelism};
use crate::analysis::roofline::{PeerLink, PeerLinkKind};
use crate::report::findings::{
    rank_label, EvidenceFilter, EvidenceKind, EvidenceRef, Finding, FindingId,
};
use crate::report::inputs::{pct, DiagnosisInputs};
use crate::report::wording::dur;

/// Waiting for late ranks, with no compute running, above this share (%) of the GPU window.
pub const WAIT_PCT: f64 = 5.0;
/// A late rank is named when it causes at least this share (%) of all the wait.
pub const NAMED_LATE_PCT: f64 = 10.0;
/// A collective's bus bandwidth under this share (%) of its NVLink / Infinity Fabric link is advice.
pub const LOW_LINK_PCT: f64 = 25.0;
/// At most this many late ranks are named.
pub const MAX_NAMED_LATE: usize = 4;

/// The late ranks worth naming: most wait caused first (the page marks these too).
pub fn named_late(c: &Collectives) -> Vec<&LateRank> {
    let total: i64 = c.late_ranks.iter().map(|l| l.caused_wait_ns).sum();
    c.late_ranks
        .iter()
        .filter(|l| l.caused_wait_ns > 0 && pct(l.caused_wait_ns, total) >= NAMED_LATE_PCT)
        .take(MAX_NAMED_LATE)
        .collect()
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
        "rank {}: last at {} of {} collectives, the others wait {} for it{cause}",
        l.rank,
        l.times_last,
        matched,
        dur(l.caused_wait_ns)
    )
}

/// What to do about a rank late for one cause.
fn late_action(cause: LateCause, rank: i64) -> String {
    match cause {
        LateCause::Compute => format!("Rank {rank} computes longer before the collectives: even out the work per rank (sequence lengths or samples per rank: bucket by length, pad to equal shapes, a `DistributedSampler`), and check its GPU (clocks and thermals with `nvidia-smi -q -d CLOCK,PERFORMANCE`, its interconnect topology with `nvidia-smi topo -m`)."),
        LateCause::DataLoader => format!("Rank {rank}'s GPU waits for its DataLoader before the collectives: give it more workers (`num_workers`, `persistent_workers=True`, `prefetch_factor`), `pin_memory=True`, and check that its data (storage, decoding) is not slower than the other ranks'."),
        LateCause::Host => format!("Rank {rank}'s host is late to launch the collective's work: look for work only that rank does (logging, metrics, checkpointing on rank 0), Python garbage collection, CPU contention or a wrong CPU affinity on its host."),
        LateCause::StartedLate => format!("Rank {rank} starts its step later than the others: look before the step (the previous step's tail, work between steps such as logging, evaluation or checkpointing only on that rank, data loading outside `ProfilerStep`), and at the hosts' clock skew when the ranks are on different hosts."),
        LateCause::Unknown => format!("Rank {rank} arrives last without the trace showing why before the collective: check the hosts' clock skew (ranks on different hosts) and work outside the profiled window."),
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
    f.measured = f.measured.replace(host, IDLE_HOST_UNSEEN);
    for a in &mut f.actions {
        if a.contains("host is late to launch") {
            let rank = a.split('\'').next().unwrap_or("The late rank").to_string();
            *a = format!("{rank}'s GPU is idle before the collectives and the trace holds no host events: record that rank with its CPU activity (`ProfilerActivity.CPU`) to see whether its host (launches, Python, data loading, logging) or work outside the trace holds it back.");
        }
    }
}

/// The straggler finding from the collectives split: the ranks the others wait for.
pub fn straggler(i: &DiagnosisInputs) -> Option<Finding> {
    let c = &i.collectives;
    let late = named_late(c);
    let exposed_wait: i64 = c.per_rank.iter().map(|r| r.exposed_wait_ns).sum();
    let p = i.time.pct(exposed_wait);
    if late.is_empty() || p < WAIT_PCT {
        return None;
    }
    let ranks: Vec<i64> = late.iter().map(|l| l.rank).collect();
    let caused: i64 = late.iter().map(|l| l.caused_wait_ns).sum();
    let matched = c.matched.by_seq + c.matched.by_order;
    let mut actions: Vec<String> = Vec::new();
    for l in &late {
        if let Some(first) = l.causes.first() {
            let a = late_action(first.cause, l.rank);
            if !actions.contains(&a) {
                actions.push(a);
            }
        }
    }
    actions.push("Until the late rank is fixed, the other ranks' waiting is not a communication problem: faster links or larger buckets do not recover it.".into());
    Some(
        Draft {
            id: FindingId::Straggler,
            headline: format!(
                "{} {} late to the collectives: the other ranks wait {} for {} ({p:.1}% of GPU time with nothing else running).",
                ranks_words(&ranks),
                if ranks.len() == 1 { "arrives" } else { "arrive" },
                dur(caused),
                if ranks.len() == 1 { "it" } else { "them" },
            ),
            title: format!(
                "Straggler: {}",
                ranks.iter().map(|r| rank_label(*r)).collect::<Vec<_>>().join(", ")
            ),
            threshold: format!("waiting for the last rank, with no compute running, ≥ {WAIT_PCT:.0}% of the window"),
            measured: late
                .iter()
                .map(|l| late_words(l, matched))
                .collect::<Vec<_>>()
                .join("; "),
            value: p,
            time_ns: exposed_wait,
            explanation: format!(
                "Every rank's collective starts moving data only when the last rank arrives; the wait ({} in all, {} of it with no compute running) is the late ranks' cost, not the network's.",
                dur(c.total_wait_ns()),
                dur(exposed_wait)
            ),
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

/// The communication finding from the collectives split: transfer with no compute running only.
pub fn communication(i: &DiagnosisInputs) -> Option<Finding> {
    let c = &i.collectives;
    let exposed: i64 = c.per_rank.iter().map(|r| r.exposed_transfer_ns).sum();
    let exposed_wait: i64 = c.per_rank.iter().map(|r| r.exposed_wait_ns).sum();
    let p = i.time.pct(exposed);
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
    Some(
        Draft {
            id: FindingId::Communication,
            headline: format!(
                "Moving data in collectives with no compute running takes {p:.1}% of GPU time ({} of {}){}.",
                dur(exposed),
                dur(i.time.window_ns),
                super::ranks::one_collective_words(i).map_or(String::new(), |w| format!(": {w}"))
            ),
            title: "Communication not overlapped with compute".into(),
            threshold: format!("collective transfer (after the last rank arrives) with no compute running ≥ {EXPOSED_COMM_PCT:.0}% of the window"),
            measured: format!(
                "transfer {} ({} exposed); waiting for the last rank {} ({} exposed, counted under the straggler finding){}",
                dur(transfer),
                dur(exposed),
                dur(c.total_wait_ns()),
                dur(exposed_wait),
                if bw.is_empty() { String::new() } else { format!("; {}", bw.join(", ")) }
            ),
            value: p,
            time_ns: exposed,
            explanation: format!(
                "Once every rank has arrived, the collectives move data for {} and only {:.1}% of it overlaps computation{}.",
                dur(transfer),
                pct(transfer - exposed, transfer),
                parallelism_words(c)
            ),
            actions: communication_actions(c, link),
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
pub fn parallelism_actions(c: &Collectives, link: Option<&PeerLink>) -> Option<Vec<String>> {
    let mut uses: Vec<_> = c.parallelism.iter().collect();
    crate::sort::sort_by(&mut uses, |a, b| {
        b.kernel_ns.cmp(&a.kernel_ns).then(a.kind.cmp(&b.kind))
    });
    let out: Vec<String> = uses
        .iter()
        .map(|u| parallelism_action(u.kind, link))
        .collect();
    (!out.is_empty()).then_some(out)
}

/// Tensor parallel's advice by the link its collectives cross on every layer.
fn tensor_parallel_action(link: Option<&PeerLink>) -> String {
    let keep = match link.map(|l| l.kind) {
        Some(PeerLinkKind::Pcie) => {
            return format!("Tensor parallel (collectives inside forward on every layer) over PCIe: these GPUs have no NVLink ({}), so every layer's collective crosses PCIe — use a smaller TP degree or none (data parallel / FSDP across these GPUs, which moves data once per step), sequence parallelism (reduce-scatter + all-gather in place of all-reduce), and overlap the TP collectives with the GEMMs.", link.map(PeerLink::label).unwrap_or_default());
        }
        Some(PeerLinkKind::Nvlink) => {
            "keep the TP group inside one node (on its NVLink)".to_string()
        }
        Some(PeerLinkKind::InfinityFabric) => {
            "keep the TP group inside one node (on its Infinity Fabric links)".to_string()
        }
        None => "keep the TP group inside one node (on its fastest GPU-to-GPU links)".to_string(),
    };
    format!("Tensor parallel (collectives inside forward on every layer): {keep}, use sequence parallelism (reduce-scatter + all-gather in place of all-reduce), and overlap the TP collectives with the GEMMs (async TP, Transformer Engine's comm-GEMM overlap); a smaller TP degree when the GEMMs are small.")
}

fn parallelism_action(kind: Parallelism, link: Option<&PeerLink>) -> String {
    let text = match kind {
        Parallelism::DataParallel => "Data parallel (gradient all-reduce in backward): overlap it with backward — tune DDP's `bucket_cap_mb` (fewer, larger all-reduces when they are many and small), keep `gradient_as_bucket_view=True` and `static_graph=True`; accumulate gradients with `no_sync()`; bf16 gradients or a compression comm hook to move less.",
        Parallelism::ShardedDataParallel => "Sharded data parallel (all-gather in forward, reduce-scatter in backward): prefetch the next all-gather (FSDP `forward_prefetch=True`, `backward_prefetch=BACKWARD_PRE`), wrap larger units (fewer, larger collectives), and shard inside a node with HYBRID_SHARD when the links between nodes are slow.",
        Parallelism::TensorParallel => return tensor_parallel_action(link),
        Parallelism::ExpertParallel => "All-to-all (MoE experts or sharded embeddings): balance the load per rank (an auxiliary load-balancing loss, a capacity factor that caps tokens per expert; for embeddings, a balanced sharding plan), overlap dispatch/combine with expert compute, and keep the expert group inside a node.",
        Parallelism::PipelineParallel => "Pipeline parallel (send/recv between stages): more micro-batches per step shrink the bubble (≈ (stages − 1) / micro-batches), an interleaved 1F1B schedule, and stages with balanced layers.",
    };
    text.into()
}

/// The communication finding's actions: by parallelism, else the general ones.
fn communication_actions(c: &Collectives, link: Option<&PeerLink>) -> Vec<String> {
    let mut actions = parallelism_actions(c, link).unwrap_or_else(|| {
        vec![
            "Overlap communication with compute: with DDP tune `bucket_cap_mb` and keep `gradient_as_bucket_view=True`; with FSDP enable `forward_prefetch`/`backward_prefetch=BACKWARD_PRE`.".into(),
            "Reduce the volume: gradient accumulation with `no_sync()`, bf16 gradients or a compression comm hook.".into(),
        ]
    });
    actions.extend(link.and_then(|l| link_action(c, l)));
    actions
}

/// The busiest collective's bus bandwidth (over its transfer) judged against the link: PCIe
/// without NVLink, or a link far from used.
fn link_action(c: &Collectives, link: &PeerLink) -> Option<String> {
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
    if link.kind == PeerLinkKind::Pcie {
        Some(format!("{measured}: these GPUs have no NVLink, so move less per step (bf16 gradients, a compression comm hook, gradient accumulation with `no_sync()`) and check with `nvidia-smi topo -m` that peers share a PCIe switch (not a trip through the CPU)."))
    } else if pct < LOW_LINK_PCT {
        Some(format!("{measured}: the link is far from used — small messages are latency-bound (fewer, larger collectives: larger DDP buckets or FSDP units), or the traffic leaves the node (check `NCCL_DEBUG=INFO` for the transport used)."))
    } else {
        None
    }
}
