//! The diagnosis rules: each a pure function of the context and [`DiagnosisInputs`] giving at most one
//! [`Finding`] with its recoverable time. Idle-based rules read the exclusive idle attribution, so two
//! findings never claim the same idle time; kernel-side rules read kernel names and times.

use super::attribution::{IdleCause, IdleShare};
use super::context::{withheld_findings, TraceContext, TraceHolds, TraceOrigin};
use super::findings::{
    rank_label, EvidenceFilter, EvidenceKind, EvidenceRef, Finding, FindingId, Impact, Severity,
};
use super::inputs::{pct, DiagnosisInputs};
use super::patterns::{
    generation_without_tf32, is_convolution_kernel, is_fp32_simt_gemm, is_fusable_memory_bound,
    is_fused_attention_kernel, is_softmax_kernel,
};
use super::wording::{blocking_words, dur, us};
pub use super::wording::{short_name, short_names};

pub(crate) mod collectives;
mod host_only;

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
    let rules: [fn(&DiagnosisInputs) -> Option<Finding>; 14] = [
        data_loading,
        synchronization,
        wait_outside_trace,
        between_steps,
        dispatch,
        residual_warmup,
        communication,
        straggler,
        unfused_attention,
        fusion_candidates,
        fp32_matmul,
        memory_traffic,
        dominant_kernel,
        super::roofline_rules::far_under_roof,
    ];
    let mut out: Vec<Finding> = rules.iter().filter_map(|r| r(inputs)).collect();
    if ctx.holds(TraceHolds::ColdStart) {
        // A cold pass's idle is start-up, not a steady state's dispatch: no CUDA graphs for it.
        out.retain(|f| !matches!(f.id, FindingId::LaunchOverhead | FindingId::HostOverhead));
    }
    let withheld = withheld_findings(ctx);
    out.retain(|f| !withheld.contains(&f.id));
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
    out
}

/// Notes on the trace that are not recommendations (one rank only, a warm-up left out, a cut file).
pub fn notes(inputs: &DiagnosisInputs, ctx: &TraceContext) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(w) = &ctx.warmup {
        if ctx.holds(TraceHolds::Warmup) {
            out.push(format!(
                "A warm-up was left out of the analysis{}: {}.",
                if w.steps.is_empty() {
                    String::new()
                } else {
                    let word = if w.steps.len() == 1 { "step" } else { "steps" };
                    format!(" ({word} {})", join_steps(&w.steps))
                },
                warmup_words(ctx)
            ));
        }
    }
    if let Some(c) = &ctx.cut_refused {
        out.push(super::gate::note(c));
    }
    if ctx.holds(TraceHolds::ColdStart) {
        out.push(format!(
            "This trace is one cold pass (one-off start-up costs dominate its window): its launch, dispatch and idle figures describe start-up, not a steady state. {}",
            super::cold::RECORD_AFTER_WARMUP
        ));
    }
    if ctx.holds(TraceHolds::Truncated) {
        out.push("The file was cut off mid-write (see trace health): the figures cover the events read before the cut.".into());
    }
    if ctx.holds(TraceHolds::GraphReplay) {
        out.push(format!(
            "{} CUDA/HIP graph launches: the kernels they run are attributed to them; gaps inside a replay count as GPU-side gaps, not host wait.",
            ctx.graph_launches
        ));
    }
    if let Some(why) = &ctx.separate_runs {
        out.push(format!(
            "These {} files look like separate runs, not ranks of one job ({why}): compare them with \
             `profile-model diff BASELINE CANDIDATE` (or the page's Compare), rather than as ranks.",
            inputs.ranks.len()
        ));
    }
    if inputs.ranks.len() == 1 && inputs.time.comm_ns > 0 {
        out.push("The job communicates but only one rank's trace was given: load every rank's file together to compare ranks.".into());
    }
    out
}

fn join_steps(steps: &[i64]) -> String {
    match (steps.first(), steps.last()) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a}-{b}"),
        _ => String::new(),
    }
}

/// What the warm-up consisted of, in words.
fn warmup_words(ctx: &TraceContext) -> String {
    let Some(w) = &ctx.warmup else {
        return "slow first steps".into();
    };
    let mut parts = Vec::new();
    if w.compile_events > 0 {
        parts.push(format!(
            "torch.compile compilation ({:.0} ms)",
            w.compile_ms
        ));
    }
    if w.search_calls > 0 {
        parts.push(format!(
            "{} cuDNN/MIOpen algorithm-search calls",
            w.search_calls
        ));
    }
    if w.setup_calls > 0 {
        parts.push(format!(
            "{} device set-up and allocation calls (cudaMalloc/cudaFree, ...)",
            w.setup_calls
        ));
    }
    if ctx.capture_calls > 0 {
        parts.push(format!("{} graph captures", ctx.capture_calls));
    }
    if parts.is_empty() {
        "first steps much slower than the rest".into()
    } else {
        parts.join(", ")
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
    headline: String,
    title: String,
    threshold: String,
    measured: String,
    value: f64,
    time_ns: i64,
    explanation: String,
    actions: Vec<String>,
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
fn idle_headline(i: &DiagnosisInputs, cause_ns: i64, what: &str) -> String {
    let t = &i.time;
    let idle_pct = t.pct(t.idle_ns);
    let mostly = if 2 * cause_ns >= t.idle_ns {
        "mostly"
    } else {
        "partly"
    };
    format!(
        "GPU is idle {idle_pct:.1}% of the GPU window, {mostly} {what} ({} of {}).",
        dur(cause_ns),
        dur(t.window_ns)
    )
}

/// The host ops of a cause as "`a` (12 ms), `b` (3 ms)".
fn ops_words(share: Option<&IdleShare>, n: usize) -> String {
    share
        .map(|s| {
            s.top_ops
                .iter()
                .take(n)
                .map(|o| {
                    format!(
                        "`{}` ({})",
                        short_name(&o.name),
                        dur((o.time_us * 1000.0) as i64)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// A trace that leaves nothing to diagnose gets one finding saying so, and nothing else.
fn trace_limit(i: &DiagnosisInputs, ctx: &TraceContext) -> Option<Finding> {
    let b = ctx.blocking()?;
    let (id, headline, action) = match b {
        TraceHolds::NotPytorch => (
            FindingId::NotPytorchTrace,
            format!(
                "This is not a PyTorch profiler trace: {}, with none of the events torch.profiler writes (cpu_op, kernel, cuda_runtime){}.",
                match ctx.origin {
                    Some(TraceOrigin::ChromeBrowser) => "it looks like a Chrome/Perfetto browser trace",
                    Some(TraceOrigin::TensorflowOrJax) => "it looks like a TensorFlow or JAX (XLA) profiler trace",
                    Some(TraceOrigin::Rocprof) => "it looks like a rocprof (ROCm profiler) trace of HIP/HSA API calls",
                    _ => "it is a Chrome-trace JSON",
                },
                ctx.found.as_ref().map_or(String::new(), |f| format!("; it holds {f}"))
            ),
            "Record the PyTorch job with `torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=torch.profiler.schedule(wait=1, warmup=1, active=3), on_trace_ready=torch.profiler.tensorboard_trace_handler(\"./log\"))` and load the JSON it writes.".to_string(),
        ),
        TraceHolds::GraphCapture => (
            FindingId::GraphCapture,
            format!(
                "This trace is a CUDA/HIP graph capture ({} capture{}, no replay): the launches were recorded into a graph, not run, so it cannot show where a step spends its time.",
                ctx.capture_calls,
                if ctx.capture_calls == 1 { "" } else { "s" }
            ),
            "Profile the replay instead: start the profiler after the capture (e.g. `schedule(wait=…, warmup=…, active=…)` past the capture steps) so the trace holds `cudaGraphLaunch` calls and the kernels they run.".to_string(),
        ),
        TraceHolds::NoKernelEvents => (
            FindingId::NoKernelEvents,
            format!(
                "The trace has {} kernel launch calls but no kernel events: the GPU activities were not recorded, so GPU time cannot be measured.",
                ctx.launch_calls + ctx.graph_launches
            ),
            "Re-capture with `activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]` and check the log for CUPTI errors (CUPTI must be loadable and not in use by another profiler such as Nsight).".to_string(),
        ),
        TraceHolds::CpuOnly => {
            let (headline, action) = host_only::headline_and_action(ctx);
            (FindingId::NoGpuKernels, headline, action)
        }
        TraceHolds::Empty => (
            FindingId::InsufficientTrace,
            "The capture is empty: a PyTorch profiler file with no operation in it (no CPU operator, runtime call or device operation), so there is nothing to diagnose. The profiler was most likely stopped before the code ran, or its schedule never reached an active step.".to_string(),
            "Wrap the iterations you want in the profiler and call `prof.step()` once per iteration, with enough of them to reach the active steps: `schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)` needs at least 5 iterations.".to_string(),
        ),
        TraceHolds::DeviceEventsCut => (
            FindingId::TruncatedTrace,
            "The file is cut off before any device event was read: the profiler writes the device events after the host's, so nothing says whether the GPU worked, and the trace cannot be diagnosed.".to_string(),
            "Load the whole file (re-copy or re-download it: it ends mid-write), or re-record and let the profiler finish writing (leave the `with torch.profiler.profile(...)` block, or call `prof.stop()`, before the process exits).".to_string(),
        ),
        TraceHolds::Insufficient if ctx.origin == Some(TraceOrigin::PytorchLegacy) => {
            let (headline, action) = host_only::headline_and_action(ctx);
            (FindingId::InsufficientTrace, headline, action)
        }
        TraceHolds::WarmupOnly => (
            FindingId::Warmup,
            format!(
                "The trace holds only warm-up ({}), no steady-state step to diagnose.",
                warmup_words(ctx)
            ),
            "Profile steady-state steps: `torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=2, active=3), ...)` and call `prof.step()` each iteration, so compilation, autotuning and allocator growth are over before recording.".to_string(),
        ),
        _ => (
            FindingId::InsufficientTrace,
            if ctx.holds(TraceHolds::Warmup) {
                format!(
                    "Too little to diagnose after the warm-up: {} device operations in the steady-state window ({} GPU window), of {} in the whole trace.",
                    ctx.device_ops_in_window,
                    dur(i.time.window_ns),
                    ctx.device_ops
                )
            } else {
                format!(
                    "Too little to diagnose: {} device operations over a GPU window of {}.",
                    ctx.device_ops_in_window,
                    dur(i.time.window_ns)
                )
            },
            "Profile several full steps: `schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)` around the training/inference loop, calling `prof.step()` each iteration.".to_string(),
        ),
    };
    Some(Finding {
        id,
        headline: headline.clone(),
        title: blocking_words(b).to_string(),
        severity: Severity::Warning,
        threshold: "a PyTorch profiler trace with steady-state device work".into(),
        measured: measured_of(ctx, i),
        value: 0.0,
        impact: Impact::default(),
        explanation: headline,
        actions: vec![action],
        evidence: Vec::new(),
        filter: None,
    })
}

/// What the trace holds, in figures, for a trace that leaves nothing to diagnose.
fn measured_of(ctx: &TraceContext, i: &DiagnosisInputs) -> String {
    format!(
        "{} device operations ({} kernels), {} launch calls, {} graph launches, {} captures; GPU window {}",
        ctx.device_ops,
        ctx.kernels,
        ctx.launch_calls,
        ctx.graph_launches,
        ctx.capture_calls,
        dur(i.time.window_ns)
    )
}

/// The GPU waits while the CPU loads data.
pub fn data_loading(i: &DiagnosisInputs) -> Option<Finding> {
    let ns = i.time.idle(IdleCause::DataLoading);
    let p = i.time.pct(ns);
    if p < IDLE_CAUSE_PCT {
        return None;
    }
    let inside = ops_words(i.idle_share(IdleCause::DataLoading), 3);
    Some(
        Draft {
            id: FindingId::DataLoading,
            headline: idle_headline(i, ns, "waiting for the DataLoader"),
            title: "GPU starved by the DataLoader".into(),
            threshold: format!(
                "GPU idle while a DataLoader op runs ≥ {IDLE_CAUSE_PCT:.0}% of the window"
            ),
            measured: format!(
                "{} of GPU idle inside DataLoader ops ({p:.1}% of the window)",
                dur(ns)
            ),
            value: p,
            time_ns: ns,
            explanation: format!(
                "The GPU sits idle for {} while the host fetches the next batch{}.",
                dur(ns),
                if inside.is_empty() {
                    String::new()
                } else {
                    format!("; the host is busy in {inside}")
                }
            ),
            actions: data_loader_actions(i),
            evidence: i.data_loader_ops.iter().take(5).cloned().collect(),
        }
        .finish(i),
    )
}

/// What to change about the DataLoader, from how it runs: in the main process or with workers.
fn data_loader_actions(i: &DiagnosisInputs) -> Vec<String> {
    let single = i
        .data_loader_ops
        .iter()
        .any(|o| o.name.contains("SingleProcess"));
    let multi = i
        .data_loader_ops
        .iter()
        .any(|o| o.name.contains("MultiProcessing"));
    let mut out = Vec::new();
    if single {
        out.push("The DataLoader runs in the training process (its single-process iterator, `num_workers=0`): set `DataLoader(num_workers=N)` with N up to the CPU cores per GPU, and `persistent_workers=True`.".to_string());
    } else if multi {
        out.push("The DataLoader already uses worker processes and they cannot keep up: raise `num_workers` and `prefetch_factor` (2-4), and profile the dataset's `__getitem__`/collate: decoding and augmentation are the usual cost.".to_string());
    } else {
        out.push("Load batches in parallel: `DataLoader(num_workers=N)` with N up to the CPU cores per GPU, `persistent_workers=True`, `prefetch_factor=2-4`.".to_string());
    }
    out.push("Use `pin_memory=True` and `.to(device, non_blocking=True)` so the host-to-device copy overlaps compute.".into());
    out.push("Move decoding and augmentation off the critical path (GPU transforms, NVIDIA DALI) or precompute them.".into());
    out
}

/// What a synchronising call's calling op means, in the user's code; `copy` is the device copy a
/// copy call made (its direction and host memory).
fn sync_cause_words(call: &str, caller: &str, copy: Option<&str>) -> String {
    use crate::analysis::names::{copy_kind, copy_words, CopyDirection};
    let has = |m: &str| caller.contains(m);
    let direction = copy_kind(copy.unwrap_or(call)).map(|k| k.0);
    match (direction, copy.and_then(copy_words)) {
        (Some(CopyDirection::HostToDevice), Some(words)) => {
            return format!("a blocking {words}: the host waits until it is done (`.to(device)`/`.cuda()` of a CPU tensor that is not pinned): pin the source (`tensor.pin_memory()`, `DataLoader(pin_memory=True)`) and copy with `.to(device, non_blocking=True)`, or create the tensor on the device");
        }
        (Some(CopyDirection::DeviceToDevice | CopyDirection::PeerToPeer), Some(words)) => {
            return format!("a blocking {words}: copy on a stream with `non_blocking=True` (`copy_`), or avoid the copy (views, in-place ops)");
        }
        _ => {}
    }
    let d2h = direction == Some(CopyDirection::DeviceToHost);
    sync_cause_words_of_caller(call, caller, d2h, has).to_string()
}

/// The words for a synchronising call from the op it is called in; `d2h` when it is known to be a
/// device-to-host copy.
fn sync_cause_words_of_caller(
    call: &str,
    caller: &str,
    d2h: bool,
    has: impl Fn(&str) -> bool,
) -> &'static str {
    let _ = caller;
    if crate::analysis::names::is_device_free_call(call) {
        "the caching allocator returns memory to the device every step, and each free synchronises the device: find what empties the cache (`torch.cuda.empty_cache()` in the loop, memory pressure near the limit, `PYTORCH_NO_CUDA_MEMORY_CACHING`), keep shapes static, and check `torch.cuda.memory_stats()` (`num_alloc_retries`) — a smaller batch or `expandable_segments:True` in `PYTORCH_CUDA_ALLOC_CONF` stops the churn"
    } else if has("_local_scalar_dense") || has("aten::item") {
        "`.item()` (or `float(tensor)`, `if tensor:`) reads a GPU value on the host: keep it on the GPU, or read it every N steps"
    } else if has("nonzero")
        || has("masked_select")
        || has("aten::unique")
        || has("index_put") && has("bool")
    {
        "an op whose output size depends on the data (`nonzero`, boolean-mask indexing, `unique`) must wait for the GPU: use fixed-size forms (`torch.where(mask, x, 0)`) or move it out of the step"
    } else if d2h || has("cpu") || has("numpy") || has("tolist") {
        "a device-to-host copy (`.cpu()`, `.numpy()`, `.tolist()`, `.to(\"cpu\")`) waits for the GPU: keep the tensor on the GPU, or copy with `non_blocking=True` into pinned memory and read it later"
    } else if has("aten::to") || has("aten::copy_") || has("aten::_to_copy") {
        "a copy between host and device (`.to()`, `copy_`) that blocks the host: for a host-to-device copy pin the source and use `non_blocking=True`; for a device-to-host read keep the value on the GPU or read it later"
    } else if has("synchronize") {
        "an explicit `torch.cuda.synchronize()`: remove it from the step (time with CUDA events instead)"
    } else {
        "it waits for the GPU: move it out of the step or do it every N steps"
    }
}

/// Synchronising calls drain the GPU's queue; it waits until the host refills it.
pub fn synchronization(i: &DiagnosisInputs) -> Option<Finding> {
    let ns = i.time.idle(IdleCause::Synchronization);
    let p = i.time.pct(ns);
    if p < SYNC_PCT || i.syncs.is_empty() {
        return None;
    }
    let n: u64 = i.syncs.iter().map(|s| s.count).sum();
    let top = &i.syncs[0];
    let from = top
        .callers
        .first()
        .map(|(c, _)| format!(" from `{c}`"))
        .unwrap_or_default();
    let mut actions: Vec<String> = i
        .syncs
        .iter()
        .take(3)
        .map(|s| {
            let from = s
                .callers
                .iter()
                .take(2)
                .map(|(c, n)| format!("`{c}` ({n}×)"))
                .collect::<Vec<_>>()
                .join(", ");
            let first = s.callers.first().map_or("", |(c, _)| c.as_str());
            let what = s
                .copy
                .as_deref()
                .and_then(crate::analysis::names::copy_words)
                .map(|w| format!(" ({w})"))
                .unwrap_or_default();
            format!(
                "{} × `{}`{what} ({} blocked), from {from}: {}.",
                s.count,
                s.name,
                dur(s.total_ns),
                sync_cause_words(&s.name, first, s.copy.as_deref())
            )
        })
        .collect();
    actions.push("Keep values on the GPU (accumulate losses/metrics as tensors, read them once per logging interval) so the host stays ahead of the GPU.".into());
    Some(Draft {
        id: FindingId::Synchronization,
        headline: idle_headline(
            i,
            ns,
            &format!("after synchronising calls (`{}`{from}) drain its queue", top.name),
        ),
        title: "Synchronisations drain the GPU queue".into(),
        threshold: format!("GPU idle caused by synchronising calls ≥ {SYNC_PCT:.0}% of the window"),
        measured: format!("{n} synchronising calls; GPU idle {} because of them ({p:.1}%)", dur(ns)),
        value: p,
        time_ns: ns,
        explanation: format!(
            "Each synchronising call makes the host wait until the GPU finishes, so the GPU then idles until the host has launched new work: {} in total.",
            dur(ns)
        ),
        actions,
        evidence: top_evidence(i.syncs.iter().flat_map(|s| s.evidence.iter().cloned()), 5),
    }
    .finish(i))
}

/// Calls that wait for the device block the host while the traced GPU runs nothing: removing them
/// would not give the time back, since the host waits for work this trace does not hold.
pub fn wait_outside_trace(i: &DiagnosisInputs) -> Option<Finding> {
    let ns = i.time.idle(IdleCause::BlockedWait);
    let p = i.time.pct(ns);
    if p < SYNC_PCT {
        return None;
    }
    let blocked_idle: i64 = i.syncs.iter().map(|s| s.gpu_idle_ns).sum();
    let mut syncs: Vec<_> = i.syncs.iter().filter(|s| s.gpu_idle_ns > 0).collect();
    crate::sort::sort_by(&mut syncs, |a, b| {
        b.gpu_idle_ns.cmp(&a.gpu_idle_ns).then(a.name.cmp(&b.name))
    });
    let top = syncs.first()?;
    let from = top
        .callers
        .first()
        .map(|(c, _)| format!(" from `{c}`"))
        .unwrap_or_default();
    let calls = syncs
        .iter()
        .take(3)
        .map(|s| {
            format!(
                "{} × `{}` blocked {}, {} of it with the GPU running nothing",
                s.count,
                s.name,
                dur(s.total_ns),
                dur(s.gpu_idle_ns)
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let copy = crate::analysis::names::is_blocking_copy_call(&top.name);
    let to_device = top
        .copy
        .as_deref()
        .and_then(crate::analysis::names::copy_kind)
        .map(|k| k.0)
        == Some(crate::analysis::names::CopyDirection::HostToDevice);
    Some(Draft {
        id: FindingId::WaitOutsideTrace,
        headline: idle_headline(
            i,
            ns,
            &format!(
                "while the host blocks in `{}`{from} with nothing queued on the GPU: it waits for work this trace does not show",
                top.name
            ),
        ),
        title: "The host waits for work outside the trace".into(),
        threshold: format!("GPU idle while the host blocks in a wait with nothing queued ≥ {SYNC_PCT:.0}% of the window"),
        measured: format!("{calls}; GPU idle {} because of them ({p:.1}%)", dur(ns)),
        value: p,
        time_ns: ns,
        explanation: format!(
            "A synchronising call normally waits for the GPU to finish what was queued. Here the GPU of this trace ran nothing for {} of the {} the calls blocked, so the host was waiting for something the profiler did not record: work launched before it started, another process or device (a tensor-parallel peer, a separate scheduler), or device activity it did not trace. Removing the call would not give this time back; the trace cannot say what the job waits for.",
            dur(blocked_idle),
            dur(syncs.iter().map(|s| s.total_ns).sum()),
        ),
        actions: vec![
            format!(
                "Find what `{}`{from} waits for: profile every process and device of the job at once (all ranks, and the scheduler or server process), with `ProfilerActivity.CUDA` on.",
                top.name
            ),
            "Profile several iterations after a warm-up with `torch.profiler.schedule(wait=1, warmup=1, active=3)`, so the trace holds whole iterations and the work the host waits for, not one call in the middle of a wait.".into(),
            if copy && to_device {
                format!("`{}` is a blocking {}: the host cannot queue more work until it is done; pin the source and copy with `non_blocking=True` so it overlaps.", top.name, top.copy.as_deref().and_then(crate::analysis::names::copy_words).unwrap_or_else(|| "host-to-device copy".into()))
            } else if copy {
                format!("If `{}` reads a result back (`.tolist()`, `.item()`, `.cpu()`), check which stream and which launch produce it: on a server, overlap the next batch's scheduling with this read (an overlap scheduler, `non_blocking=True` into pinned memory).", top.name)
            } else {
                "Check for waits on events recorded by other streams or processes (`stream.wait_event`, inter-process events, NCCL barriers).".into()
            },
        ],
        evidence: top_evidence(i.syncs.iter().flat_map(|s| s.evidence.iter().cloned()), 5),
    }
    .finish(i))
}

/// The GPU waits for host work between steps (logging, checkpointing, evaluation, optimizer on CPU).
pub fn between_steps(i: &DiagnosisInputs) -> Option<Finding> {
    let ns = i.time.idle(IdleCause::BetweenSteps);
    let p = i.time.pct(ns);
    if p < IDLE_CAUSE_PCT {
        return None;
    }
    let ops = ops_words(i.idle_share(IdleCause::BetweenSteps), 3);
    Some(Draft {
        id: FindingId::HostBound,
        headline: idle_headline(i, ns, "waiting for host work between steps"),
        title: "GPU waiting for host work between steps".into(),
        threshold: format!("GPU idle outside every ProfilerStep ≥ {IDLE_CAUSE_PCT:.0}% of the window"),
        measured: format!("{} of GPU idle between steps ({p:.1}%)", dur(ns)),
        value: p,
        time_ns: ns,
        explanation: format!(
            "Between the end of one step and the start of the next the host does other work{} while the GPU has nothing queued.",
            if ops.is_empty() { String::new() } else { format!(" ({ops})") }
        ),
        actions: vec![
            if ops.is_empty() {
                "Find what runs between steps (logging, metrics, checkpointing, evaluation) and run it every N steps or in a background thread.".into()
            } else {
                format!("Move {ops} out of the step loop, run it every N steps, or overlap it with the next step's GPU work.")
            },
        ],
        evidence: Vec::new(),
    }
    .finish(i))
}

/// Share (%) of kernels under 10 µs.
fn small_share(i: &DiagnosisInputs) -> f64 {
    pct(i.small_kernel_count as i64, i.kernel_count as i64)
}

/// Launch-bound: most kernels are tiny, so the launch cost sets the pace.
fn launch_bound(i: &DiagnosisInputs) -> bool {
    i.kernel_count >= MIN_KERNELS_FOR_LAUNCH
        && (small_share(i) >= SMALL_KERNEL_SHARE_PCT || i.median_kernel_ns < SMALL_KERNEL_NS)
}

/// The GPU waits inside steps for the host to dispatch work: launch overhead (tiny kernels) or host
/// overhead (Python/ATen dispatch slower than the kernels).
pub fn dispatch(i: &DiagnosisInputs) -> Option<Finding> {
    let launch = launch_bound(i);
    let late = i.time.idle(IdleCause::DispatchOverhead);
    // With tiny kernels the GPU-side gaps between queued kernels are launch latency too.
    let ns = late
        + if launch {
            i.time.idle(IdleCause::DeviceSide)
        } else {
            0
        };
    let p = i.time.pct(ns);
    if p < IDLE_CAUSE_PCT {
        return None;
    }
    let ops = ops_words(i.idle_share(IdleCause::DispatchOverhead), 3);
    let gaps = if i.dispatch_gaps > 0 {
        format!(
            " in {} gaps (mean {})",
            i.dispatch_gaps,
            us(late as f64 / i.dispatch_gaps as f64)
        )
    } else {
        String::new()
    };
    let distribution = format!(
        "{} kernels, {:.0}% under 10 µs, median {}",
        i.kernel_count,
        small_share(i),
        us(i.median_kernel_ns as f64)
    );
    if launch {
        return Some(Draft {
            id: FindingId::LaunchOverhead,
            headline: idle_headline(i, ns, &format!("between tiny kernels ({distribution}): launch overhead sets the pace")),
            title: "Many tiny kernels: kernel launch overhead".into(),
            threshold: format!("≥ {SMALL_KERNEL_SHARE_PCT:.0}% of kernels under 10 µs (or median under 10 µs) and the GPU idle ≥ {IDLE_CAUSE_PCT:.0}% waiting for launches"),
            measured: format!("{distribution}; GPU idle {} waiting for launches{gaps}", dur(ns)),
            value: small_share(i),
            time_ns: ns,
            explanation: format!(
                "The kernels finish faster than the host can launch the next one ({} launch calls, median {} and 90th percentile {} on the CPU), so the GPU waits {p:.1}% of the GPU window.",
                i.launch_calls,
                us(i.launch_call_median_ns as f64),
                us(i.launch_call_p90_ns as f64)
            ),
            actions: vec![
                "Capture the steady-state step in a CUDA graph: `torch.compile(model, mode=\"reduce-overhead\")`, or `torch.cuda.graphs.make_graphed_callables`, so one launch replays every kernel.".into(),
                "Fuse the small kernels with `torch.compile(model)`; use fused optimizers (`foreach=True`/`fused=True`) and fused layers.".into(),
                "Give each kernel more work: a larger batch, or fewer, larger tensors (e.g. `torch._foreach_*` instead of per-parameter loops).".into(),
            ],
            evidence: top_evidence(i.kernels.iter().filter(|k| k.small_calls > 0).flat_map(|k| k.evidence.iter().cloned()), 5),
        }
        .finish(i));
    }
    Some(Draft {
        id: FindingId::HostOverhead,
        headline: idle_headline(i, ns, "waiting for the CPU to dispatch work inside steps"),
        title: "GPU waiting for CPU dispatch inside steps".into(),
        threshold: format!("GPU idle with nothing queued inside steps ≥ {IDLE_CAUSE_PCT:.0}% of the window"),
        measured: format!("GPU idle {} with nothing queued{gaps}; {distribution}", dur(ns)),
        value: p,
        time_ns: ns,
        explanation: format!(
            "Inside the steps the host is slower than the GPU: the next kernel is launched only after the GPU ran dry{}.",
            if ops.is_empty() { String::new() } else { format!("; meanwhile the host is in {ops}") }
        ),
        actions: vec![
            if ops.is_empty() {
                "Cut the host work between kernels: Python loops over tensors, per-sample ops, `.item()`/`.tolist()`.".into()
            } else {
                format!("Cut the host time of {ops}: batch the work into fewer, larger ops, and avoid Python loops over tensors.")
            },
            "Compile the model with `torch.compile(model)` to remove Python and dispatcher overhead; with a steady shape, `mode=\"reduce-overhead\"` also replays the step as a CUDA graph.".into(),
        ],
        evidence: Vec::new(),
    }
    .finish(i))
}

/// Warm-up work (set-up calls, algorithm search, compilation) still inside the analysed window.
pub fn residual_warmup(i: &DiagnosisInputs) -> Option<Finding> {
    if let Some(cold) = super::cold::cold_pass(i) {
        return Some(cold);
    }
    let ns = i.time.idle(IdleCause::Warmup)
        + i.time.idle(IdleCause::GraphCapture)
        + i.time.idle(IdleCause::Startup);
    let p = i.time.pct(ns);
    if p < IDLE_CAUSE_PCT {
        return None;
    }
    let ops = [
        ops_words(i.idle_share(IdleCause::Warmup), 3),
        super::cold::startup_words(i).unwrap_or_default(),
    ]
    .into_iter()
    .filter(|s| !s.is_empty())
    .collect::<Vec<_>>()
    .join("; ");
    Some(Draft {
        id: FindingId::Warmup,
        headline: idle_headline(i, ns, "during warm-up and one-off start-up work (allocation, algorithm search, compilation, graph capture, first calls)"),
        title: "Warm-up inside the analysed window".into(),
        threshold: format!("GPU idle during warm-up calls and one-off start-up work ≥ {IDLE_CAUSE_PCT:.0}% of the GPU window"),
        measured: format!("{} of GPU idle during warm-up calls and one-off start-up work ({p:.1}% of the GPU window)", dur(ns)),
        value: p,
        time_ns: ns,
        explanation: format!(
            "Set-up work is still running in the analysed window{}. It is paid once, so longer runs amortise it.",
            if ops.is_empty() { String::new() } else { format!(": {ops}") }
        ),
        actions: vec![
            "Profile later steps (`schedule(wait=…, warmup=…, active=…)` with a larger warmup) to see the steady state.".into(),
            "If allocation repeats every step (cudaMalloc/cudaFree), keep shapes static or set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`; if recompilation repeats, check `torch._dynamo` recompiles (`TORCH_LOGS=recompiles`).".into(),
        ],
        evidence: Vec::new(),
    }
    .finish(i))
}

/// Communication that is not hidden behind compute, and host waits in communication calls.
pub fn communication(i: &DiagnosisInputs) -> Option<Finding> {
    if i.collectives.split {
        // Wait and transfer are split across ranks: the finding counts the transfer only.
        return collectives::communication(i);
    }
    let t = &i.time;
    let wait = t.idle(IdleCause::CommunicationWait);
    // Waiting for a straggler is the straggler's cost, not the collectives'.
    let for_straggler = slowest_rank(i).map_or(0, |s| s.3);
    let ns = (t.comm_exposed_ns + wait - for_straggler).max(0);
    let p = t.pct(ns);
    if p < EXPOSED_COMM_PCT {
        return None;
    }
    let overlap_pct = pct(t.comm_ns - t.comm_exposed_ns, t.comm_ns);
    let top: Vec<String> = i
        .kernels
        .iter()
        .filter(|k| k.communication)
        .take(2)
        .map(|k| format!("`{}` ({})", short_name(&k.name), dur(k.total_ns)))
        .collect();
    Some(Draft {
        id: FindingId::Communication,
        headline: format!(
            "Communication not overlapped with compute takes {p:.1}% of the GPU window ({} of {}).",
            dur(ns),
            dur(t.window_ns)
        ),
        title: "Communication not overlapped with compute".into(),
        threshold: format!("communication with no compute running ≥ {EXPOSED_COMM_PCT:.0}% of the window"),
        measured: format!(
            "collectives {} ({overlap_pct:.1}% overlapped), exposed {}; host waits in communication calls {}",
            dur(t.comm_ns),
            dur(t.comm_exposed_ns),
            dur(wait)
        ),
        value: p,
        time_ns: ns,
        explanation: format!(
            "Collectives{} run {} and only {overlap_pct:.1}% of it overlaps computation.",
            if top.is_empty() { String::new() } else { format!(" ({})", top.join(", ")) },
            dur(t.comm_ns)
        ),
        actions: collectives::parallelism_actions(&i.collectives, i.roofline.peer_link.as_ref()).unwrap_or_else(|| vec![
            "Overlap communication with compute: with DDP tune `bucket_cap_mb` and keep `gradient_as_bucket_view=True`; with FSDP enable `forward_prefetch`/`backward_prefetch=BACKWARD_PRE`.".into(),
            "Avoid synchronising around collectives (`async_op=True`, wait late) and check that no rank is late (a straggler makes every other rank's collective wait).".into(),
            "Reduce the volume: gradient accumulation with `no_sync()`, bf16 gradients or a compression comm hook.".into(),
        ]),
        evidence: top_evidence(i.kernels.iter().filter(|k| k.communication).flat_map(|k| k.evidence.iter().cloned()), 5),
    }
    .finish(i))
}

/// A rank's GPU work: its GPU compute time, the union of its computation kernels (the temporal
/// breakdown's `compute`); communication is left out, as it includes waiting for the other ranks.
fn rank_work(r: &super::inputs::RankFigure) -> i64 {
    r.time.compute_ns
}

/// The slowest rank when it works at least [`STRAGGLER_PCT`] more than the median rank: (its figure,
/// its excess over the median, the median, the time the other ranks wait for it in all).
fn slowest_rank(i: &DiagnosisInputs) -> Option<(&super::inputs::RankFigure, i64, i64, i64)> {
    if i.ranks.len() < 2 || i.collectives.split {
        return None;
    }
    let mut sorted: Vec<i64> = i.ranks.iter().map(rank_work).collect();
    sorted.sort_unstable();
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
        return collectives::straggler(i);
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
        ),
        title: format!("Straggler: rank {}", slow.rank),
        threshold: format!("a rank's GPU compute time ≥ {STRAGGLER_PCT:.0}% above the median rank's"),
        measured: format!("rank {}: {} of GPU compute time vs median {} (+{excess_pct:.1}%)", slow.rank, dur(work(slow)), dur(median)),
        value: excess_pct,
        time_ns: waited,
        explanation: format!(
            "In synchronous training every other rank waits {} for rank {} in the next collective.",
            dur(excess),
            slow.rank
        ),
        actions: vec![
            format!("Check rank {}'s input: uneven sequence lengths or samples per rank (bucket by length, pad to equal shapes, a `DistributedSampler`).", slow.rank),
            format!("Check rank {}'s hardware: GPU clocks and thermals (`nvidia-smi -q -d CLOCK,PERFORMANCE`), interconnect topology (`nvidia-smi topo -m`), noisy neighbours.", slow.rank),
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

/// Kernel time of the kernels whose name passes `test`, and their figures.
fn kernels_where(
    i: &DiagnosisInputs,
    test: fn(&str) -> bool,
) -> (i64, Vec<&super::inputs::KernelFigure>) {
    let ks: Vec<&super::inputs::KernelFigure> =
        i.kernels.iter().filter(|k| test(&k.name)).collect();
    (ks.iter().map(|k| k.total_ns).sum(), ks)
}

/// Attention as softmax + batched matmuls, without a fused attention kernel.
pub fn unfused_attention(i: &DiagnosisInputs) -> Option<Finding> {
    let (softmax_ns, softmax) = kernels_where(i, is_softmax_kernel);
    let (fused_ns, _) = kernels_where(i, is_fused_attention_kernel);
    let share = pct(softmax_ns, i.kernel_time_ns);
    if share < SOFTMAX_PCT || fused_ns >= softmax_ns {
        return None;
    }
    let shape = i
        .attention
        .softmax_shape
        .as_ref()
        .map(|(s, n)| format!(" on inputs {s} ({n} calls)"))
        .unwrap_or_default();
    let bmm = if i.attention.bmm_ops > 0 {
        format!(" and {} `aten::bmm`/`baddbmm` calls", i.attention.bmm_ops)
    } else {
        String::new()
    };
    let gpu_pct = i.time.pct(softmax_ns);
    Some(Draft {
        id: FindingId::UnfusedAttention,
        headline: format!(
            "Attention runs unfused: softmax kernels take {share:.1}% of kernel time ({}) with no fused attention kernel.",
            dur(softmax_ns)
        ),
        title: "Attention computed unfused (softmax + batched matmul)".into(),
        threshold: format!("softmax kernels ≥ {SOFTMAX_PCT:.0}% of kernel time and less time in fused attention kernels"),
        measured: format!(
            "softmax {} ({share:.1}% of kernel time, {gpu_pct:.1}% of the window){shape}{bmm}; fused attention {}",
            dur(softmax_ns),
            dur(fused_ns)
        ),
        value: share,
        time_ns: softmax_ns,
        explanation: format!(
            "The attention scores are materialised as [.., L, L] matrices and normalised by `{}`{shape}; a fused kernel (FlashAttention / memory-efficient attention) never writes them to memory.",
            short_name(&softmax[0].name)
        ),
        actions: vec![
            "Compute attention with `torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=..., is_causal=...)` (PyTorch ≥ 2.0 picks FlashAttention or memory-efficient kernels), or `nn.MultiheadAttention` / Hugging Face `attn_implementation=\"sdpa\"` or `\"flash_attention_2\"`.".into(),
            "Run attention in fp16/bf16 (`torch.autocast`): the flash kernels need half precision.".into(),
        ],
        evidence: top_evidence(softmax.iter().flat_map(|k| k.evidence.iter().cloned()), 5),
    }
    .finish(i))
}

/// Memory-bound element-wise / copy / reduction kernels with a large share: fusion.
pub fn fusion_candidates(i: &DiagnosisInputs) -> Option<Finding> {
    let (ns, ks) = kernels_where(i, is_fusable_memory_bound);
    let share = pct(ns, i.kernel_time_ns);
    // One kind of kernel alone (a micro-benchmark of one op) has nothing to fuse with.
    if share < FUSABLE_PCT || ks.is_empty() || i.kernels.len() < 2 {
        return None;
    }
    let calls: u64 = ks.iter().map(|k| k.calls).sum();
    let names: Vec<String> = ks
        .iter()
        .take(3)
        .map(|k| {
            format!(
                "`{}` ({}, {} calls)",
                short_name(&k.name),
                dur(k.total_ns),
                k.calls
            )
        })
        .collect();
    let recoverable = (ns as f64 * RECOVERABLE_SHARE) as i64;
    Some(Draft {
        id: FindingId::FusionCandidates,
        headline: format!(
            "Memory-bound element-wise, copy and reduction kernels take {share:.1}% of kernel time ({}, {calls} calls): fusing them would save about half.",
            dur(ns)
        ),
        title: "Memory-bound kernels worth fusing".into(),
        threshold: format!("unfused element-wise/copy/reduction kernels ≥ {FUSABLE_PCT:.0}% of kernel time"),
        measured: format!("{} in {calls} calls ({share:.1}% of kernel time); largest: {}", dur(ns), names.join(", ")),
        value: share,
        time_ns: recoverable,
        explanation: "Each of these kernels reads and writes whole tensors to do little arithmetic, so memory bandwidth sets their time; fused into one kernel the intermediate tensors never leave the registers.".into(),
        actions: vec![
            "Compile the model or the hot function with `torch.compile` (Inductor fuses element-wise chains, reductions and copies into Triton kernels).".into(),
            "Use fused implementations where they exist: fused optimizers (`fused=True`), fused LayerNorm/RMSNorm, fused bias+activation, and avoid `.contiguous()`/`torch.cat` copies inside the step.".into(),
        ],
        evidence: top_evidence(ks.iter().flat_map(|k| k.evidence.iter().cloned()), 5),
    }
    .finish(i))
}

/// fp32 GEMMs without tensor cores.
pub fn fp32_matmul(i: &DiagnosisInputs) -> Option<Finding> {
    let (ns, ks) = kernels_where(i, is_fp32_simt_gemm);
    let share = pct(ns, i.kernel_time_ns);
    if share < FP32_GEMM_PCT || ks.is_empty() {
        return None;
    }
    let conv_ns: i64 = ks
        .iter()
        .filter(|k| is_convolution_kernel(&k.name))
        .map(|k| k.total_ns)
        .sum();
    let what = if conv_ns * 2 >= ns {
        "fp32 convolutions and matrix multiplies"
    } else if conv_ns > 0 {
        "fp32 matrix multiplies and convolutions"
    } else {
        "fp32 matrix multiplies"
    };
    Some(Draft {
        id: FindingId::Fp32Matmul,
        headline: format!(
            "{what} without tensor cores take {share:.1}% of kernel time ({}).",
            dur(ns)
        ),
        title: "fp32 GEMMs and convolutions without tensor cores".into(),
        threshold: format!(
            "fp32 SIMT GEMM and convolution kernels (`sgemm`, `scudnn`, `<float>` cuDNN engines) ≥ {FP32_GEMM_PCT:.0}% of kernel time"
        ),
        measured: format!(
            "{} in {} calls of {}",
            dur(ns),
            ks.iter().map(|k| k.calls).sum::<u64>(),
            ks.iter().take(2).map(|k| format!("`{}`", short_name(&k.name))).collect::<Vec<_>>().join(", ")
        ),
        value: share,
        time_ns: (ns as f64 * RECOVERABLE_SHARE) as i64,
        explanation: "These kernels run on the CUDA cores in full fp32; tensor cores run the same products several times faster in TF32, fp16 or bf16.".into(),
        actions: vec![fp32_action(i)],
        evidence: top_evidence(ks.iter().flat_map(|k| k.evidence.iter().cloned()), 5),
    }
    .finish(i))
}

/// What to do about fp32 GEMMs: TF32 or bf16 where the GPU has them, fp16 autocast where it has not
/// (the device name, or else the GPU generation the kernel names say).
fn fp32_action(i: &DiagnosisInputs) -> String {
    let device = i.device_name.clone().unwrap_or_default();
    let named_without_tf32 = [
        "V100",
        "T4",
        "P100",
        "P40",
        "K80",
        "TITAN V",
        "Quadro RTX",
        "RTX 20",
    ]
    .iter()
    .any(|d| device.contains(d));
    let gpu = if named_without_tf32 {
        Some(device.clone())
    } else if device.is_empty() {
        generation_without_tf32(i.kernels.iter().map(|k| k.name.as_str())).map(str::to_string)
    } else {
        None
    };
    match gpu {
        Some(gpu) => format!("{gpu} has no TF32: use mixed precision (`torch.autocast(\"cuda\", dtype=torch.float16)` with `torch.cuda.amp.GradScaler`) so GEMMs and convolutions run on tensor cores; for convolutions also use channels-last (`model.to(memory_format=torch.channels_last)`)."),
        None => "Enable TF32 (`torch.backends.cuda.matmul.allow_tf32 = True`, `torch.backends.cudnn.allow_tf32 = True`, or `torch.set_float32_matmul_precision(\"high\")`) or bf16 mixed precision (`torch.autocast(\"cuda\", dtype=torch.bfloat16)`).".into(),
    }
}

/// Copies and sets with no kernel running, pageable host copies, or many small copies.
pub fn memory_traffic(i: &DiagnosisInputs) -> Option<Finding> {
    let t = &i.time;
    if t.window_ns <= 0 || i.copies.is_empty() {
        return None;
    }
    let pageable: Vec<&super::inputs::CopyFigure> =
        i.copies.iter().filter(|c| c.pageable).collect();
    let pageable_ns: i64 = pageable.iter().map(|c| c.total_ns).sum();
    let pageable_n: u64 = pageable.iter().map(|c| c.count).sum();
    let copies_n: u64 = i
        .copies
        .iter()
        .filter(|c| c.name.starts_with("Memcpy"))
        .map(|c| c.count)
        .sum();
    let small_n: u64 = i.copies.iter().map(|c| c.small_count).sum();
    let exposed_pct = t.pct(t.memory_exposed_ns);
    let pageable_pct = t.pct(pageable_ns);
    let many_small = copies_n >= MANY_SMALL_COPIES && 2 * small_n >= copies_n;
    if exposed_pct < MEMORY_EXPOSED_PCT && pageable_pct < PAGEABLE_PCT && !many_small {
        return None;
    }
    let mut actions = Vec::new();
    if pageable_n > 0 && pageable_pct >= PAGEABLE_PCT {
        actions.push(format!("{pageable_n} copies use pageable host memory ({}: {}): use pinned memory (`DataLoader(pin_memory=True)`, `tensor.pin_memory()`) and `.to(device, non_blocking=True)`; a pageable copy is staged through a driver buffer and blocks the host.", dur(pageable_ns), pageable_kinds(&pageable)));
    }
    if many_small {
        actions.push(format!("{small_n} of {copies_n} copies move < 64 KiB: batch them into one tensor, create tensors on the device (`torch.zeros(..., device=\"cuda\")`), avoid per-element `.item()`/`.cpu()`."));
    }
    let top = &i.copies[0];
    actions.push(format!(
        "The largest is `{}` ({} calls, {}): check which op issues it (Explore events) and whether the data can stay on the device.",
        top.name, top.count, dur(top.total_ns)
    ));
    let ns = t.memory_exposed_ns.max(pageable_ns.min(t.memory_ns));
    Some(Draft {
        id: FindingId::MemoryTraffic,
        headline: format!(
            "Memory copies and sets with no kernel running take {exposed_pct:.1}% of the GPU window ({} of {}).",
            dur(t.memory_exposed_ns),
            dur(t.window_ns)
        ),
        title: "Memory copies on the critical path".into(),
        threshold: format!("copies/sets with no kernel running ≥ {MEMORY_EXPOSED_PCT:.0}% of the window, or pageable copies ≥ {PAGEABLE_PCT:.0}%, or ≥ {MANY_SMALL_COPIES} copies mostly < 64 KiB"),
        measured: format!(
            "copies/sets {} ({} with no kernel running); {pageable_n} pageable copies; {small_n} of {copies_n} copies < 64 KiB",
            dur(t.memory_ns),
            dur(t.memory_exposed_ns)
        ),
        value: exposed_pct,
        time_ns: ns,
        explanation: format!(
            "Copies and sets keep the GPU busy {} and {} of it runs with no kernel alongside.",
            dur(t.memory_ns),
            dur(t.memory_exposed_ns)
        ),
        actions,
        evidence: top_evidence(i.copies.iter().flat_map(|c| c.evidence.iter().cloned()), 5),
    }
    .finish(i))
}

/// The pageable copies by direction: "12 host-to-device, 3 device-to-host".
fn pageable_kinds(pageable: &[&super::inputs::CopyFigure]) -> String {
    use crate::analysis::names::{copy_kind, CopyDirection};
    let count = |d: CopyDirection| -> u64 {
        pageable
            .iter()
            .filter(|c| copy_kind(&c.name).map(|k| k.0) == Some(d))
            .map(|c| c.count)
            .sum()
    };
    let parts: Vec<String> = [
        (CopyDirection::HostToDevice, "host-to-device"),
        (CopyDirection::DeviceToHost, "device-to-host"),
    ]
    .iter()
    .filter(|(d, _)| count(*d) > 0)
    .map(|(d, w)| format!("{} {w}", count(*d)))
    .collect();
    if parts.is_empty() {
        "direction not named".into()
    } else {
        parts.join(", ")
    }
}

/// One kernel takes most of the kernel time: normal for compute-bound work; a pointer, not a cost.
pub fn dominant_kernel(i: &DiagnosisInputs) -> Option<Finding> {
    let top = i.kernels.first()?;
    let share = pct(top.total_ns, i.kernel_time_ns);
    if share <= DOMINANT_KERNEL_PCT || top.communication {
        return None;
    }
    let short = short_name(&top.name);
    Some(Finding {
        severity: Severity::Info,
        ..Draft {
            id: FindingId::DominantKernel,
            headline: format!(
                "No major inefficiency found: the GPU is busy {:.1}% of the window and `{short}` takes {share:.1}% of kernel time ({} in {} calls).",
                i.time.pct(i.time.busy_ns),
                dur(top.total_ns),
                top.calls
            ),
            title: format!("One kernel dominates: `{short}`"),
            threshold: format!("one kernel > {DOMINANT_KERNEL_PCT:.0}% of kernel time"),
            measured: format!("{share:.1}% of kernel time, mean {}", us(top.total_ns as f64 / top.calls.max(1) as f64)),
            value: share,
            time_ns: 0,
            explanation: format!("Speeding up `{short}` bounds the whole gain; it is {share:.1}% of kernel time."),
            actions: vec![if is_fusable_memory_bound(&top.name) {
                format!(
                    "`{short}` is memory-bound (element-wise/copy/reduction): compare its achieved bandwidth (bytes read + written / {} per call) with the GPU's peak; contiguous, aligned inputs let it vectorise, bf16/fp16 halves the bytes, and in a real model fusing it with its neighbours (`torch.compile`) saves the round trips to memory.",
                    us(top.total_ns as f64 / top.calls.max(1) as f64)
                )
            } else {
                format!(
                    "Check that `{short}` is the fast variant for its shapes (tensor cores under bf16/fp16 or TF32, `torch.backends.cudnn.benchmark = True` for convolutions, dimensions that are multiples of 8)."
                )
            }],
            evidence: top.evidence.clone(),
        }
        .finish(i)
        .with_action(super::roofline_rules::roof_words(i, &top.name))
    })
}
