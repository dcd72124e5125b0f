//! Cold against steady: the one-off costs of the analysed window ([`crate::analysis::one_off`]) as
//! figures and words, and the `cold_start` hold when they dominate it: the trace is one cold pass,
//! to be recorded again after warm-up, not a steady state to tune (no CUDA graphs or torch.compile
//! for a launch that loaded a module once).

use super::attribution::IdleCause;
use super::context::{TraceContext, TraceHolds};
use super::findings::{EvidenceKind, EvidenceRef, Finding, FindingId, Impact, Severity};
use super::gather_parts::RankSums;
use super::host::HostTimeline;
use super::inputs::{pct, DiagnosisInputs, OneOffFigure, MAX_ONE_OFFS};
use super::wording::{dur, us};
use crate::analysis::one_off::OneOffKind;
use crate::report::rich_text::{kernel, name_as, op_short, NameKind, RichText};
use crate::rich;

/// One-off costs above this share (%) of the GPU window make the trace one cold pass.
pub const COLD_START_PCT: f64 = 50.0;

/// What to record instead of a cold pass.
pub const RECORD_AFTER_WARMUP: &str = "Record the steady state instead: `torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=torch.profiler.schedule(wait=1, warmup=2, active=3), on_trace_ready=torch.profiler.tensorboard_trace_handler(\"./log\"))` around the loop, calling `prof.step()` each iteration, so module loading, cuDNN/cuBLAS set-up, allocator growth and JIT compilation (TorchScript, torch.compile) happen in the warm-up iterations, before recording; for a single forward, run it once or twice untimed before `profile()`.";

/// One rank's one-off costs that overlap its analysed host window, into its sums.
pub(super) fn one_off_figures(
    host: &HostTimeline,
    rank: i64,
    (lo, hi): (i64, i64),
    sums: &mut RankSums,
) {
    let overlaps = |ts: i64, end: i64| ts < hi && end.max(ts + 1) > lo;
    sums.one_offs.extend(
        host.one_offs
            .innermost()
            .into_iter()
            .filter(|o| overlaps(o.ts, o.end))
            .take(MAX_ONE_OFFS)
            .map(|o| OneOffFigure {
                rank,
                kind: Some(o.kind),
                name: o.name.clone(),
                launched: o.launched.clone(),
                dur_ns: o.dur_ns(),
                later_median_ns: o.later_median_ns,
                row: o.row,
            }),
    );
    sums.one_off_kernel_ns += host
        .one_offs
        .items
        .iter()
        .filter(|o| o.kind == OneOffKind::FirstKernel && overlaps(o.ts, o.end))
        .map(|o| (o.dur_ns() - o.later_median_ns).max(0))
        .sum::<i64>();
}

/// The time one-off costs take in the analysed window: the GPU idle while the host runs one-off
/// work, and the GPU time first runs of kernels take beyond their later median, ns.
pub fn one_off_ns(i: &DiagnosisInputs) -> i64 {
    i.time.idle(IdleCause::Startup) + i.one_off_kernel_ns
}

/// Whether one-off costs dominate the analysed window.
pub fn is_cold_pass(i: &DiagnosisInputs) -> bool {
    i.time.window_ns > 0 && pct(one_off_ns(i), i.time.window_ns) >= COLD_START_PCT
}

/// Adds the `cold_start` hold when one-off costs dominate a window there is something to diagnose in.
pub fn check_cold_start(ctx: &mut TraceContext, i: &DiagnosisInputs) {
    if ctx.blocking().is_none() && is_cold_pass(i) && !ctx.holds(TraceHolds::ColdStart) {
        ctx.holds.push(TraceHolds::ColdStart);
    }
}

/// One one-off cost in words: "the first `cudaLaunchKernel` of `conv1d_kernel` (630 ms; its median
/// 9.0 µs)".
pub fn one_off_words(o: &OneOffFigure) -> RichText {
    let short_name = super::rules::short_name;
    match o.kind {
        Some(OneOffKind::FirstLaunch) => rich!(
            "the first ",
            name_as(NameKind::Runtime, &o.name, short_name(&o.name)),
            " of ",
            kernel(o.launched.as_deref().unwrap_or("?")),
            format!(
                " ({}; the call's median {}: the kernel's module loaded on first use)",
                dur(o.dur_ns),
                us(o.later_median_ns as f64)
            )
        ),
        Some(OneOffKind::CodeLoad) => rich!(
            op_short(&o.name),
            format!(" ({}: code loading or library set-up)", dur(o.dur_ns))
        ),
        Some(OneOffKind::ColdGap) => compile_gap_words(o),
        _ => rich!(
            "the first ",
            op_short(&o.name),
            format!(
                " ({}; later calls' median {})",
                dur(o.dur_ns),
                dur(o.later_median_ns)
            )
        ),
    }
}

/// A long gap before the first run of a kernel compiled at run time: its compilation, named by the
/// compiler its name says (Inductor's Triton or C++ kernels), not the launch call that ends it.
fn compile_gap_words(o: &OneOffFigure) -> RichText {
    let kernel_name = o.launched.as_deref().unwrap_or("?");
    let by = if crate::analysis::names::is_compiled_kernel(kernel_name) {
        "torch.compile (Inductor/Triton) compiling "
    } else {
        "the run-time compilation of "
    };
    rich!(
        by.to_string(),
        kernel(kernel_name),
        format!(
            " before its first run ({}: the host compiled it while the GPU waited; the ",
            dur(o.dur_ns)
        ),
        name_as(
            NameKind::Runtime,
            &o.name,
            super::rules::short_name(&o.name)
        ),
        " that ends the gap takes µs)"
    )
}

/// The largest one-off costs in words, at most `n`.
fn list_words(i: &DiagnosisInputs, n: usize) -> RichText {
    if i.one_offs.is_empty() {
        return "first calls much slower than their later ones".into();
    }
    RichText::join(i.one_offs.iter().take(n).map(one_off_words), ", ")
}

/// The finding of a cold pass: one-off costs take most of the window, so it says what was paid once
/// and what to record instead; `None` when the window is not dominated by them.
pub fn cold_pass(i: &DiagnosisInputs) -> Option<Finding> {
    if !is_cold_pass(i) {
        return None;
    }
    let ns = one_off_ns(i).min(i.time.window_ns);
    let idle = i.time.idle(IdleCause::Startup);
    let share = pct(ns, i.time.window_ns);
    let headline = rich!(
        format!(
            "This trace is one cold pass: one-off start-up costs take {share:.0}% of the GPU window ({} of {}), led by ",
            dur(ns),
            dur(i.time.window_ns),
        ),
        list_words(i, 2),
        "."
    );
    let evidence = i
        .one_offs
        .iter()
        .take(5)
        .map(|o| EvidenceRef {
            kind: if o.kind == Some(OneOffKind::FirstCall) {
                EvidenceKind::Op
            } else {
                EvidenceKind::Runtime
            },
            rank: Some(o.rank),
            name: o.name.clone(),
            stream: None,
            count: 1,
            time_ns: o.dur_ns,
            rows: vec![o.row],
        })
        .collect();
    Some(Finding {
        id: FindingId::Warmup,
        headline: headline.clone(),
        title: "One cold pass: start-up costs dominate".into(),
        severity: Severity::Warning,
        threshold: format!(
            "one-off costs (first calls ≥ 10× their later median, first launches that load a module, code loading) ≥ {COLD_START_PCT:.0}% of the GPU window"
        ).into(),
        measured: rich!(format!(
            "{} of {} ({share:.1}% of the GPU window) in one-off costs: GPU idle {} during one-off host work, first kernel runs {} beyond their later median; ",
            dur(ns),
            dur(i.time.window_ns),
            dur(idle),
            dur(i.one_off_kernel_ns),
        ), list_words(i, 4)),
        value: share,
        // What a steady state would not pay in idle time; the kernels' extra time is in `measured`.
        impact: Impact {
            pct_of_gpu_time: Some(pct(idle, i.time.window_ns)),
            ms_per_step: i.ms_per_step(idle),
            time_ns: idle,
        },
        explanation: rich!(
            &headline,
            " A steady-state iteration pays none of this, so launch, dispatch and idle figures of this trace describe start-up, not the model: launch overhead or CUDA graphs/torch.compile are not the answer here."
        ),
        actions: vec![RECORD_AFTER_WARMUP.into()],
        evidence,
        filter: None,
    })
}

/// Words for one-off costs inside a window that is not a cold pass (for the warm-up finding).
pub fn startup_words(i: &DiagnosisInputs) -> Option<RichText> {
    (i.time.idle(IdleCause::Startup) > 0 && !i.one_offs.is_empty()).then(|| {
        rich!(
            format!(
                "one-off start-up work keeps the GPU idle {} (",
                dur(i.time.idle(IdleCause::Startup)),
            ),
            list_words(i, 3),
            ")"
        )
    })
}
