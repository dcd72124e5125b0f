//! The diagnosis rules: each a pure function of the context and [`DiagnosisInputs`] giving at most one
//! [`Finding`] with its recoverable time. Idle-based rules read the exclusive idle attribution, so two
//! findings never claim the same idle time; kernel-side rules read kernel names and times.

use super::attribution::IdleShare;
use super::context::{withheld_findings, TraceContext, TraceHolds};
use super::findings::{EvidenceFilter, EvidenceRef, Finding, FindingId, Impact, Severity};
use super::inputs::DiagnosisInputs;
use super::rich_text::{op_as, Piece, RichText};
use crate::rich;

use super::wording::dur;
pub use super::wording::{short_name, short_names};

pub(crate) mod collectives;
pub(crate) mod copy_speed;
pub(crate) mod cpu_run;
mod host_idle;
mod host_only;
mod kernels;
mod limits;
mod memory;
mod notes;
mod ranks;
mod sync;
mod variants;
mod workload;

pub use host_idle::{
    between_steps, data_loading, dispatch, host_compute, host_stalls, residual_warmup,
};
pub use kernels::{
    dominant_kernel, fp32_matmul, fusion_candidates, partial_kernel_mix, unfused_attention,
};
use limits::trace_limit;
pub use memory::memory_traffic;
pub use notes::notes;
pub use ranks::{communication, straggler};
pub use sync::{
    harness_note, harness_syncs, is_harness_sync, per_element_reads, synchronization,
    wait_outside_trace,
};
pub use workload::avoidable_kernels;

/// A kernel shorter than this (ns) is "small": launch costs ~5-10 µs of CPU time each.
pub const SMALL_KERNEL_NS: i64 = 10_000;
/// A copy moving fewer bytes than this is "small".
pub const SMALL_COPY_BYTES: i64 = 64 * 1024;
/// Fewest kernels for the launch-overhead rule.
pub const MIN_KERNELS_FOR_LAUNCH: u64 = 20;
/// An idle cause becomes a finding from this share (%) of the GPU window.
pub const IDLE_CAUSE_PCT: f64 = 5.0;
/// Synchronisations become a finding from this share (%): each one is cheap to remove.
pub const SYNC_PCT: f64 = 2.0;
/// Kernel launch overhead: at least this share (%) of kernels under 10 µs...
pub const SMALL_KERNEL_SHARE_PCT: f64 = 50.0;
/// One kernel dominates above this share (%) of kernel time.
pub const DOMINANT_KERNEL_PCT: f64 = 50.0;
/// Softmax kernels above this share (%) of kernel time, without fused attention, are unfused attention.
pub const SOFTMAX_PCT: f64 = 5.0;
/// Fusable memory-bound kernels above this share (%) of kernel time are worth fusing.
pub const FUSABLE_PCT: f64 = 20.0;
/// The share of their time fusion (or TF32/bf16) is expected to save.
pub const RECOVERABLE_SHARE: f64 = 0.5;
/// fp32 SIMT GEMMs above this share (%) of kernel time.
pub const FP32_GEMM_PCT: f64 = 10.0;
/// Exposed copies/sets above this share (%) of the GPU window, or pageable copies above 1%.
pub const MEMORY_EXPOSED_PCT: f64 = 5.0;
pub const PAGEABLE_PCT: f64 = 1.0;
/// At least this many copies, most of them small, is "many small copies".
pub const MANY_SMALL_COPIES: u64 = 100;
/// Communication not hidden behind compute above this share (%) of the GPU window.
pub const EXPOSED_COMM_PCT: f64 = 5.0;
/// A rank whose GPU busy time exceeds the median rank's by this share (%) is a straggler.
pub const STRAGGLER_PCT: f64 = 10.0;

/// Every rule's finding, most important first (the trace's own limits, then by recoverable time).
pub fn evaluate(inputs: &DiagnosisInputs, ctx: &TraceContext) -> Vec<Finding> {
    if let Some(f) = trace_limit(inputs, ctx) {
        return vec![f];
    }
    let rules: [fn(&DiagnosisInputs) -> Option<Finding>; 18] = [
        per_element_reads,
        data_loading,
        synchronization,
        wait_outside_trace,
        between_steps,
        host_compute,
        dispatch,
        host_stalls,
        residual_warmup,
        communication,
        straggler,
        unfused_attention,
        fusion_candidates,
        fp32_matmul,
        memory_traffic,
        dominant_kernel,
        avoidable_kernels,
        super::roofline_rules::far_under_roof,
    ];
    let mut out: Vec<Finding> = rules.iter().filter_map(|r| r(inputs)).collect();
    out.retain(|f| !is_negligible(f));
    if ctx.holds(TraceHolds::ColdStart) {
        // A cold pass's idle is start-up, not a steady state's dispatch: no CUDA graphs for it.
        out.retain(|f| {
            !matches!(
                f.id,
                FindingId::LaunchOverhead | FindingId::HostOverhead | FindingId::HostStall
            )
        });
    }
    if ctx.phases.len() >= 2 {
        // Phases compared one after another: the comparison is the finding; a production step's
        // template (CUDA graphs, compile the model, one kernel dominates) does not fit a demo.
        out.retain(|f| {
            !matches!(
                f.id,
                FindingId::LaunchOverhead | FindingId::HostOverhead | FindingId::DominantKernel
            )
        });
    }
    if !sync::harness_syncs(inputs, ctx.holds(TraceHolds::Microbenchmark)).is_empty() {
        // A benchmark's own syncs are its measurement: never advised away (a note says so).
        out.retain(|f| {
            !matches!(
                f.id,
                FindingId::Synchronization | FindingId::WaitOutsideTrace
            )
        });
    }
    drop_dominant_restatement(inputs, &mut out);
    let withheld = withheld_findings(ctx);
    out.retain(|f| !withheld.contains(&f.id));
    if ctx.holds(TraceHolds::GpuOnly) {
        out.iter_mut().for_each(collectives::straggler_without_host);
    }
    if ctx.holds(TraceHolds::SeparateRuns) {
        // Separate runs are not ranks of one job: one being slower is not a straggler.
        out.retain(|f| f.id != FindingId::Straggler);
    }
    for f in &mut out {
        if f.filter.is_none() {
            f.filter = EvidenceFilter::of(&f.evidence);
        }
    }
    crate::sort::sort_by_key(&mut out, |f| f.rank_key());
    // A benchmark of variants: its comparison is what the trace measures, said first.
    if let Some(f) = variants::variant_comparison(inputs, ctx) {
        out.insert(0, f);
    }
    out
}

/// A kernel-side finding recovering less than this share (%) of the window is not listed: a copy's
/// bandwidth or bf16 for a GEMM of a few µs in a window of seconds is padding, not advice.
pub const NEGLIGIBLE_PCT: f64 = 0.5;

/// Whether a finding that speeds up kernels or copies would give back a negligible share of the
/// window (the idle-based ones have their own thresholds; "one kernel dominates" claims no time).
fn is_negligible(f: &Finding) -> bool {
    matches!(
        f.id,
        FindingId::FarUnderRoof
            | FindingId::Fp32Matmul
            | FindingId::MemoryTraffic
            | FindingId::FusionCandidates
            | FindingId::UnfusedAttention
            | FindingId::AvoidableKernels
    ) && f.impact.pct_of_gpu_time.is_some_and(|p| p < NEGLIGIBLE_PCT)
}

/// "One kernel dominates" says "no major inefficiency" and restates the top-kernel table: kept when
/// the GPU is busy (then it is what bounds the run), dropped when the GPU is mostly idle and another
/// finding recovers a measured share of the window (it would contradict that finding).
fn drop_dominant_restatement(i: &DiagnosisInputs, out: &mut Vec<Finding>) {
    let busy = i.time.pct(i.time.busy_ns) >= super::bottleneck::COMPUTE_BOUND_BUSY_PCT;
    let other = out.iter().any(|f| {
        f.id != FindingId::DominantKernel && super::diagnosis::big_enough_to_lead(f, true)
    });
    if !busy && other {
        out.retain(|f| f.id != FindingId::DominantKernel);
    }
}

pub(super) fn impact(i: &DiagnosisInputs, time_ns: i64) -> Impact {
    Impact {
        pct_of_gpu_time: (i.time.window_ns > 0).then(|| i.time.pct(time_ns)),
        ms_per_step: i.ms_per_step(time_ns),
        time_ns,
    }
}

/// Severity from the recoverable share of the window: ≥ 20% critical, ≥ 5% warning, else info.
pub(super) fn severity_of(pct_of_window: f64) -> Severity {
    if pct_of_window >= 20.0 {
        Severity::Critical
    } else if pct_of_window >= 5.0 {
        Severity::Warning
    } else {
        Severity::Info
    }
}

/// A finding with the fields every rule fills the same way.
struct Draft {
    id: FindingId,
    headline: RichText,
    title: RichText,
    threshold: RichText,
    measured: RichText,
    value: f64,
    time_ns: i64,
    explanation: RichText,
    actions: Vec<RichText>,
    evidence: Vec<EvidenceRef>,
}

impl Draft {
    fn finish(self, i: &DiagnosisInputs) -> Finding {
        let imp = impact(i, self.time_ns);
        Finding {
            id: self.id,
            headline: self.headline,
            title: self.title,
            severity: severity_of(imp.pct_of_gpu_time.unwrap_or(0.0)),
            threshold: self.threshold,
            measured: self.measured,
            value: self.value,
            impact: imp,
            explanation: self.explanation,
            actions: self.actions,
            evidence: self.evidence,
            filter: None,
        }
    }
}

fn top_evidence(refs: impl Iterator<Item = EvidenceRef>, n: usize) -> Vec<EvidenceRef> {
    let mut v: Vec<EvidenceRef> = refs.collect();
    crate::sort::sort_by(&mut v, |a, b| {
        b.time_ns.cmp(&a.time_ns).then(a.name.cmp(&b.name))
    });
    v.truncate(n);
    v
}

/// "GPU is idle 50.0% of the GPU window, mostly waiting for the DataLoader (313 ms of 1.29 s)."
fn idle_headline(i: &DiagnosisInputs, cause_ns: i64, what: impl Piece) -> RichText {
    let t = &i.time;
    let idle_pct = t.pct(t.idle_ns);
    let mostly = if 2 * cause_ns >= t.idle_ns {
        "mostly"
    } else {
        "partly"
    };
    let device = i.device_word();
    rich!(
        format!(
            "{} is idle {idle_pct:.1}% of the {} window, {mostly} ",
            capitalised(device),
            if device == "GPU" { "GPU" } else { "device" },
        ),
        what,
        format!(
            " ({} of {}{}).",
            dur(cause_ns),
            dur(t.window_ns),
            summed_over_ranks(i)
        )
    )
}

/// `, summed over 4 ranks` after a figure summed over the ranks' windows, or nothing for one rank:
/// a figure is said per rank or as a sum over ranks, never left to be read as one rank's.
pub(super) fn summed_over_ranks(i: &DiagnosisInputs) -> String {
    match i.ranks.len() {
        0 | 1 => String::new(),
        n => format!(", summed over {n} ranks"),
    }
}

/// "GPU", "NPU", "MTIA accelerator" at the start of a sentence.
pub(super) fn capitalised(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// The host ops of a cause as "`a` (12 ms), `b` (3 ms)".
fn ops_words(share: Option<&IdleShare>, n: usize) -> RichText {
    share
        .map(|s| {
            let ops = &s.top_ops[..s.top_ops.len().min(n)];
            let words = ops
                .iter()
                .zip(short_names(
                    &ops.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(),
                ))
                .map(|(o, shown)| {
                    rich!(
                        op_as(&o.name, shown),
                        format!(" ({})", dur((o.time_us * 1000.0) as i64))
                    )
                });
            RichText::join(words, ", ")
        })
        .unwrap_or_default()
}
