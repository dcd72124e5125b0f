//! The one finding of a trace that leaves nothing to diagnose (not PyTorch, a graph capture, no kernel
//! events, no device work, empty, cut before the device events, warm-up only, too little).

use super::notes::warmup_words;
use crate::report::context::{TraceContext, TraceHolds, TraceOrigin};
use crate::report::findings::{Finding, FindingId, Impact, Severity};
use crate::report::inputs::DiagnosisInputs;
use crate::report::rich_text::RichText;
use crate::report::wording::{blocking_words, count, dur};
use crate::rich;

/// A trace that leaves nothing to diagnose gets one finding saying so, and nothing else.
pub(super) fn trace_limit(i: &DiagnosisInputs, ctx: &TraceContext) -> Option<Finding> {
    let b = ctx.blocking()?;
    // Actions after the first (a CPU run's specific advice).
    let mut more: Vec<RichText> = Vec::new();
    let mut split = |actions: Vec<RichText>| -> RichText {
        let mut it = actions.into_iter();
        let first = it.next().unwrap_or_default();
        more.extend(it);
        first
    };
    let (id, headline, action): (FindingId, RichText, RichText) = match b {
        TraceHolds::NotPytorch => (
            FindingId::NotPytorchTrace,
            rich!(
                format!(
                    "This is not a PyTorch profiler trace: {}, with none of the events torch.profiler writes (cpu_op, kernel, cuda_runtime)",
                    match ctx.origin {
                        Some(TraceOrigin::ChromeBrowser) => "it looks like a Chrome/Perfetto browser trace",
                        Some(TraceOrigin::TensorflowOrJax) => "it looks like a TensorFlow or JAX (XLA) profiler trace",
                        Some(TraceOrigin::Rocprof) => "it looks like a rocprof (ROCm profiler) trace of HIP/HSA API calls",
                        _ => "it is a Chrome-trace JSON",
                    },
                ),
                ctx.found.as_ref().map(|f| rich!("; it holds ", f)),
                "."
            ),
            "Record the PyTorch job with `torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=torch.profiler.schedule(wait=1, warmup=1, active=3), on_trace_ready=torch.profiler.tensorboard_trace_handler(\"./log\"))` and load the JSON it writes.".into(),
        ),
        TraceHolds::GraphCapture => (
            FindingId::GraphCapture,
            format!(
                "This trace is a CUDA/HIP graph capture ({} capture{}, no replay): the launches were recorded into a graph, not run, so it cannot show where a step spends its time.",
                ctx.capture_calls,
                if ctx.capture_calls == 1 { "" } else { "s" }
            ).into(),
            "Profile the replay instead: start the profiler after the capture (e.g. `schedule(wait=…, warmup=…, active=…)` past the capture steps) so the trace holds `cudaGraphLaunch` calls and the kernels they run.".into(),
        ),
        TraceHolds::NoKernelEvents if ctx.launch_calls + ctx.graph_launches == 0 => {
            // No launch call: the device shows in its allocations (or operators) alone.
            let (headline, actions) = super::host_only::headline_and_action(ctx);
            (FindingId::NoKernelEvents, headline, split(actions))
        }
        TraceHolds::NoKernelEvents => (
            FindingId::NoKernelEvents,
            rich!(
                format!(
                    "The trace has {} kernel launch calls but no kernel events: the GPU activities were not recorded, so GPU time cannot be measured",
                    ctx.launch_calls + ctx.graph_launches,
                ),
                super::host_only::host_words(ctx),
                "."
            ),
            "Re-capture with `activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]` and check the log for CUPTI errors (CUPTI must be loadable and not in use by another profiler such as Nsight).".into(),
        ),
        TraceHolds::CpuOnly => {
            let (headline, actions) = super::host_only::headline_and_action(ctx);
            (FindingId::NoGpuKernels, headline.into(), split(actions))
        }
        TraceHolds::Empty => (
            FindingId::InsufficientTrace,
            "The capture is empty: a PyTorch profiler file with no PyTorch operator and no device operation in it (at most Python frames and runtime calls around the profiler's own start and stop), so there is nothing to diagnose. The profiler was most likely stopped before the code ran, or its schedule never reached an active step.".into(),
            "Wrap the iterations you want in the profiler and call `prof.step()` once per iteration, with enough of them to reach the active steps: `schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)` needs at least 5 iterations.".into(),
        ),
        TraceHolds::DeviceEventsCut => (
            FindingId::TruncatedTrace,
            "The file is cut off before any device event was read: the profiler writes the device events after the host's, so nothing says whether the GPU worked, and the trace cannot be diagnosed.".into(),
            "Load the whole file (re-copy or re-download it: it ends mid-write), or re-record and let the profiler finish writing (leave the `with torch.profiler.profile(...)` block, or call `prof.stop()`, before the process exits).".into(),
        ),
        TraceHolds::Insufficient if ctx.origin == Some(TraceOrigin::PytorchLegacy) => {
            let (headline, actions) = super::host_only::headline_and_action(ctx);
            (FindingId::InsufficientTrace, headline.into(), split(actions))
        }
        TraceHolds::WarmupOnly => (
            FindingId::Warmup,
            format!(
                "The trace holds only warm-up ({}), no steady-state step to diagnose.",
                warmup_words(ctx)
            ).into(),
            "Profile steady-state steps: `torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=2, active=3), ...)` and call `prof.step()` each iteration, so compilation, autotuning and allocator growth are over before recording.".into(),
        ),
        _ => (
            FindingId::InsufficientTrace,
            if ctx.holds(TraceHolds::Warmup) {
                format!(
                    "Too little to diagnose after the warm-up: {} device operations in the steady-state window ({} GPU window), of {} in the whole trace.",
                    ctx.device_ops_in_window,
                    dur(i.time.window_ns),
                    ctx.device_ops
                ).into()
            } else {
                format!(
                    "Too little to diagnose: {} device operations over a GPU window of {}.",
                    ctx.device_ops_in_window,
                    dur(i.time.window_ns)
                ).into()
            },
            "Profile several full steps: `schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)` around the training/inference loop, calling `prof.step()` each iteration.".into(),
        ),
    };
    Some(Finding {
        id,
        headline: headline.clone().into(),
        title: blocking_words(ctx, b).to_string().into(),
        severity: Severity::Warning,
        threshold: "a PyTorch profiler trace with steady-state device work".into(),
        measured: measured_of(ctx, i).into(),
        value: 0.0,
        impact: Impact::default(),
        explanation: headline.into(),
        actions: std::iter::once(action).chain(more).collect(),
        evidence: Vec::new(),
        filter: None,
    })
}

/// What the trace holds, in figures, for a trace that leaves nothing to diagnose.
fn measured_of(ctx: &TraceContext, i: &DiagnosisInputs) -> String {
    format!(
        "{} ({}), {}, {}, {}; GPU window {}",
        count(ctx.device_ops, "device operation"),
        count(ctx.kernels, "kernel"),
        count(ctx.launch_calls, "launch call"),
        count(ctx.graph_launches, "graph launch"),
        count(ctx.capture_calls, "capture"),
        dur(i.time.window_ns)
    )
}
