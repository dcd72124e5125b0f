//! The finding of a trace without device work, in words: what the trace is (a CPU-only run, a GPU
//! run recorded without its device activity, an Apple MPS run the profiler cannot see into, a legacy
//! export), whether it is one cold pass, and where the host's time goes by self time.

use crate::report::cold::RECORD_AFTER_WARMUP;
use crate::report::context::host_only::HostOnly;
use crate::report::context::{TraceContext, TraceHolds, TraceOrigin, RECORD_KINETO};
use crate::report::inputs::pct;
use crate::report::wording::{dur, short_name};
use crate::trace::dialect::DeviceKind;

/// The recording that shows a GPU's work.
const RECORD_DEVICE: &str = "`activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]`";

/// The headline and the action of a trace without device work (`CpuOnly`, or a legacy export).
pub fn headline_and_action(ctx: &TraceContext) -> (String, String) {
    let h = ctx.host_only.clone().unwrap_or_default();
    let cold = cold_words(ctx, &h);
    let ops = ops_words(ctx, &h);
    let evidence = h
        .evidence
        .iter()
        .map(|n| format!("`{}`", short_name(n)))
        .collect::<Vec<_>>()
        .join(", ");
    let legacy = ctx.origin == Some(TraceOrigin::PytorchLegacy);
    let (what, action) = match (legacy, h.evidence_kind) {
        (true, _) => (
            format!(
                "This is a legacy `torch.autograd.profiler` export with CPU operators only and no device timeline{}, so GPU time cannot be measured",
                if evidence.is_empty() {
                    String::new()
                } else {
                    format!(" (the operators {evidence} ran on a GPU)")
                }
            ),
            format!("Record a Kineto trace with torch.profiler: {RECORD_KINETO}."),
        ),
        (false, Some(DeviceKind::Mps)) => (
            format!(
                "An Apple GPU (MPS) run: {evidence} ran on the GPU through Metal, and the PyTorch profiler records no MPS device activity, so the trace holds only the host's side and GPU time cannot be measured"
            ),
            "For the GPU's side record with `torch.mps.profiler.profile(mode=\"interval\")` and open it in Instruments (Metal System Trace); torch.profiler shows the host's operators only.".to_string(),
        ),
        (false, Some(k)) => (
            format!(
                "A {} run recorded without its device activity: the host ran {evidence}, which only run on the device, but the trace holds no kernel or copy, so the device's work and GPU time are not in it",
                kind_word(k)
            ),
            format!("Re-record with {RECORD_DEVICE} so the kernels and copies are in the trace (and check the log for CUPTI errors)."),
        ),
        (false, None) if !gpu_visible(ctx) => (
            "A CPU-only run: no device was visible to the profiler (no `deviceProperties`), no kernel launch and no operator that runs on a GPU: a CPU deployment, or a rank or host without a GPU".to_string(),
            CPU_ACTION.to_string(),
        ),
        (false, None) => (
            "A CPU-only run: no kernel launch, no kernel and no operator that runs on a GPU, so the model ran on the CPU (or the trace was captured without ProfilerActivity.CUDA)".to_string(),
            format!("If the job is meant to use a GPU, move the model and its inputs to it (`model.to(\"cuda\")`, `x.to(\"cuda\")`) and record with {RECORD_DEVICE}; on the CPU, cut the operators with most self time below."),
        ),
    };
    let action = if ctx.holds(TraceHolds::ColdStart) {
        format!("{action} {RECORD_AFTER_WARMUP}")
    } else {
        action
    };
    (format!("{what}{cold}{ops}."), action)
}

/// What speeds a model up on the CPU, for a CPU deployment.
const CPU_ACTION: &str = "Cut the operators with most self time below: set the intra-op threads to the physical cores (`torch.set_num_threads`, `OMP_NUM_THREADS`) and pin them to one socket, run in bf16 where the CPU has AMX/AVX-512 BF16 (`torch.autocast(\"cpu\", dtype=torch.bfloat16)`), and compile with `torch.compile` (Inductor's C++ backend fuses element-wise work).";

/// Whether the profiler saw a device on the host (`deviceProperties`): only then can a CPU-only
/// run be told to move to it.
fn gpu_visible(ctx: &TraceContext) -> bool {
    ctx.device.count > 0 || ctx.device.name.is_some()
}

fn kind_word(k: DeviceKind) -> &'static str {
    match k {
        DeviceKind::Rocm => "AMD GPU (ROCm)",
        DeviceKind::Npu => "Ascend NPU",
        DeviceKind::Xpu => "Intel GPU (XPU)",
        DeviceKind::Mtia => "MTIA",
        _ => "CUDA GPU",
    }
}

/// "; it is one cold pass: one-off first calls take 88% of the 3.26 s profiled (the first
/// `aten::cudnn_convolution` 2.34 s, later calls' median 1.6 ms)".
fn cold_words(ctx: &TraceContext, h: &HostOnly) -> String {
    if !ctx.holds(TraceHolds::ColdStart) {
        return String::new();
    }
    let firsts: Vec<String> = h
        .one_offs
        .iter()
        .map(|o| {
            format!(
                "the first `{}` {}, later calls' median {}",
                short_name(&o.name),
                dur(o.dur_ns),
                dur(o.later_median_ns)
            )
        })
        .collect();
    format!(
        "; it is one cold pass: one-off first calls take {:.0}% of the {} profiled ({}), start-up (CUDA/cuDNN context, allocator, module loading) that a steady state never pays",
        pct(h.one_off_ns, h.span_ns),
        dur(h.span_ns),
        firsts.join("; ")
    )
}

/// "; the host's time by operator (self time: nested operators are not counted twice; % of the
/// 4.85 s profiled): `aten::mkldnn_convolution` 1.07 s (22.0%, in `aten::conv1d`), ...".
fn ops_words(ctx: &TraceContext, h: &HostOnly) -> String {
    if ctx.top_ops.is_empty() {
        return String::new();
    }
    let list: Vec<String> = ctx
        .top_ops
        .iter()
        .map(|o| {
            let caller = o
                .called_in
                .as_ref()
                .map_or(String::new(), |c| format!(", in `{}`", short_name(c)));
            format!(
                "`{}` {} ({:.1}%, {} call{}{caller})",
                short_name(&o.name),
                dur(o.self_ns),
                pct(o.self_ns, h.span_ns),
                o.calls,
                if o.calls == 1 { "" } else { "s" }
            )
        })
        .collect();
    format!(
        "; the host's time by operator (self time, nested operators not counted twice; % of the {} profiled): {}",
        dur(h.span_ns),
        list.join(", ")
    )
}

/// What the host of a trace without device events did: its one-off first calls when it is one
/// cold pass, and its operators by self time ("; the host's time by operator ..."); empty when the
/// trace has no host operators. For a GPU trace whose device activity was not recorded, the host's
/// side is still whole.
pub fn host_words(ctx: &TraceContext) -> String {
    let Some(h) = ctx.host_only.as_ref() else {
        return String::new();
    };
    format!("{}{}", cold_words(ctx, h), ops_words(ctx, h))
}
