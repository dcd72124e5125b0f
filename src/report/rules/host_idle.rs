//! The GPU idle while the host does other work: loading data, between steps, dispatching kernels
//! (launch or host overhead), and warm-up or one-off start-up work inside the window.

use super::{
    idle_headline, ops_words, top_evidence, Draft, IDLE_CAUSE_PCT, MIN_KERNELS_FOR_LAUNCH,
    SMALL_KERNEL_NS, SMALL_KERNEL_SHARE_PCT,
};
use crate::report::attribution::IdleCause;
use crate::report::findings::{Finding, FindingId};
use crate::report::inputs::{pct, DiagnosisInputs};
use crate::report::rich_text::{code, RichText};
use crate::report::wording::{dur, us};
use crate::rich;

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
            )
            .into(),
            measured: format!(
                "{} of GPU idle inside DataLoader ops ({p:.1}% of the window)",
                dur(ns)
            )
            .into(),
            value: p,
            time_ns: ns,
            explanation: rich!(
                format!(
                    "The GPU sits idle for {} while the host fetches the next batch",
                    dur(ns)
                ),
                (!inside.is_empty()).then(|| rich!("; the host is busy in ", &inside)),
                "."
            ),
            actions: data_loader_actions(i),
            evidence: i.data_loader_ops.iter().take(5).cloned().collect(),
        }
        .finish(i),
    )
}

/// What to change about the DataLoader, from how it runs: in the main process or with workers.
fn data_loader_actions(i: &DiagnosisInputs) -> Vec<RichText> {
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
        out.push("The DataLoader runs in the training process (its single-process iterator, `num_workers=0`): set `DataLoader(num_workers=N)` with N up to the CPU cores per GPU, and `persistent_workers=True`.".into());
    } else if multi {
        out.push("The DataLoader already uses worker processes and they cannot keep up: raise `num_workers` and `prefetch_factor` (2-4), and profile the dataset's `__getitem__`/collate: decoding and augmentation are the usual cost.".into());
    } else {
        out.push("Load batches in parallel: `DataLoader(num_workers=N)` with N up to the CPU cores per GPU, `persistent_workers=True`, `prefetch_factor=2-4`.".into());
    }
    out.push(pinned_copy_action(i));
    out.push("Move decoding and augmentation off the critical path (GPU transforms, NVIDIA DALI) or precompute them.".into());
    out
}

/// The host-to-device copy advice, from the copies measured: already pinned, only `non_blocking`.
fn pinned_copy_action(i: &DiagnosisInputs) -> RichText {
    use crate::analysis::names::{copy_kind, CopyDirection, HostMemory};
    let h2d: Vec<_> = i
        .copies
        .iter()
        .filter_map(|c| copy_kind(&c.name).map(|k| (k, c.count)))
        .filter(|(k, _)| k.0 == CopyDirection::HostToDevice)
        .collect();
    let pinned: u64 = h2d
        .iter()
        .filter(|(k, _)| k.1 == Some(HostMemory::Pinned))
        .map(|(_, n)| n)
        .sum();
    if pinned > 0 && h2d.iter().all(|(k, _)| k.1 == Some(HostMemory::Pinned)) {
        rich!(format!("The {pinned} host-to-device copies already come from pinned memory: copy them with "), code(".to(device, non_blocking=True)"), " (or prefetch the next batch on a side stream) so they overlap compute.")
    } else {
        "Use `pin_memory=True` and `.to(device, non_blocking=True)` so the host-to-device copy overlaps compute.".into()
    }
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
        threshold: format!("GPU idle outside every ProfilerStep ≥ {IDLE_CAUSE_PCT:.0}% of the window").into(),
        measured: format!("{} of GPU idle between steps ({p:.1}%)", dur(ns)).into(),
        value: p,
        time_ns: ns,
        explanation: rich!(
            "Between the end of one step and the start of the next the host does other work",
            (!ops.is_empty()).then(|| rich!(" (", &ops, ")")),
            " while the GPU has nothing queued."
        ),
        actions: vec![
            if ops.is_empty() {
                "Find what runs between steps (logging, metrics, checkpointing, evaluation) and run it every N steps or in a background thread.".into()
            } else {
                rich!("Move ", &ops, " out of the step loop, run it every N steps, or overlap it with the next step's GPU work.")
            },
        ],
        evidence: Vec::new(),
    }
    .finish(i))
}

/// The host computes on CPU tensors while the device runs nothing: operators that launched no
/// device work and ran long ([`crate::report::host::host_compute_ops`]), measured on the host over
/// the analysed window (a CPU op before the first kernel counts). CPU compute, not dispatch: the
/// answer is to create or move the work to the device, never CUDA graphs.
pub fn host_compute(i: &DiagnosisInputs) -> Option<Finding> {
    use crate::report::findings::Impact;
    use crate::report::rich_text::op;
    let h = &i.host_compute;
    let p = h.pct();
    if p < IDLE_CAUSE_PCT || h.ns <= 0 {
        return None;
    }
    let device = i.device_word();
    let ops = RichText::join(
        h.ops
            .iter()
            .take(3)
            .map(|(name, ns)| rich!(op(name), format!(" ({})", dur(*ns)))),
        ", ",
    );
    let names: Vec<&str> = h.ops.iter().map(|o| o.0.as_str()).collect();
    let creates = names.iter().any(|n| {
        [
            "randn",
            "rand",
            "normal_",
            "uniform_",
            "zeros",
            "ones",
            "arange",
            "full",
            "empty",
            "randint",
            "randperm",
            "linspace",
            "eye",
            "tensor",
            "from_numpy",
        ]
        .iter()
        .any(|m| n.trim_start_matches("aten::").starts_with(m))
    });
    let device_arg = if i.device_kind.has_cuda_toolbox() {
        "device=\"cuda\""
    } else {
        "device=..."
    };
    let mut actions = Vec::new();
    let create = rich!(
        "Create the tensors on the device: ",
        code(&format!("torch.randn(..., {device_arg})")),
        " (and ",
        code("torch.zeros"),
        ", ",
        code("torch.arange"),
        ", ",
        code("torch.empty"),
        format!(" with {device_arg}) instead of creating them on the CPU and moving them with "),
        code(".to(device)"),
        "."
    );
    if creates {
        actions.push(create.clone());
    }
    actions.push(rich!(
        "Move ",
        &ops,
        format!(" to the {device}: an operator runs where its inputs are, so one CPU tensor among them keeps it on the CPU; replace numpy or Python work in the loop by torch operations on device tensors.")
    ));
    if !creates {
        actions.push(create);
    }
    actions.push(rich!(
        "Where the data must come from the host, prepare it once outside the loop, or pin it (",
        code("tensor.pin_memory()"),
        ") and copy it with ",
        code(".to(device, non_blocking=True)"),
        format!(" so the copy overlaps the {device}'s work.")
    ));
    Some(Finding {
        id: FindingId::HostCompute,
        headline: rich!(
            format!(
                "The host computes on CPU tensors {p:.1}% of the analysed window ({} of {}{}) while the {device} runs nothing: ",
                dur(h.ns),
                dur(h.window_ns),
                super::summed_over_ranks(i)
            ),
            &ops,
            "."
        ),
        title: "Host compute on CPU tensors, not dispatch".into(),
        threshold: format!(
            "host time in operators that launched no device work (each ≥ {}), with the {device} idle, ≥ {IDLE_CAUSE_PCT:.0}% of the analysed window on the host",
            dur(crate::report::host::HOST_COMPUTE_MIN_NS)
        )
        .into(),
        measured: rich!(
            format!("{} of {} ({p:.1}%) in ", dur(h.ns), dur(h.window_ns)),
            &ops
        ),
        value: p,
        impact: Impact {
            pct_of_gpu_time: Some(p),
            ms_per_step: i.ms_per_step(h.ns),
            time_ns: h.ns,
        },
        severity: super::severity_of(p),
        explanation: format!(
            "These operators made no kernel launch, copy or synchronising call, by themselves or through their children: they computed on CPU tensors, on the thread that feeds the {device}. That is CPU computation, not dispatch or launch overhead, so CUDA graphs or compiling the model do not remove it; running the work on the {device} does."
        )
        .into(),
        actions,
        evidence: Vec::new(),
        filter: None,
    })
}

/// Share (%) of kernels under 10 µs.
fn small_share(i: &DiagnosisInputs) -> f64 {
    pct(i.small_kernel_count as i64, i.kernel_count as i64)
}

/// Launch-bound: most kernels are tiny, so the launch cost sets the pace.
fn launch_bound(i: &DiagnosisInputs) -> bool {
    i.kernel_count >= MIN_KERNELS_FOR_LAUNCH
        && i.small_kernel_count > 0
        && (small_share(i) >= SMALL_KERNEL_SHARE_PCT || i.median_kernel_ns < SMALL_KERNEL_NS)
}

/// The GPU waits inside steps for the host to dispatch work: launch overhead (tiny kernels) or host
/// overhead (Python/ATen dispatch slower than the kernels).
pub fn dispatch(i: &DiagnosisInputs) -> Option<Finding> {
    let launch = launch_bound(i);
    let late = i.time.idle(IdleCause::DispatchOverhead);
    // With tiny kernels the GPU-side gaps between queued kernels are launch latency too, but not
    // inside graph replays (their kernels have no launch of their own).
    let ns = late
        + if launch && !i.in_use.graphs() {
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
            " in {} gaps (median {})",
            i.dispatch_gaps,
            us(i.dispatch_gap_median_ns as f64)
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
            headline: idle_headline(i, ns, format!("between tiny kernels ({distribution}): launch overhead sets the pace")),
            title: "Many tiny kernels: kernel launch overhead".into(),
            threshold: format!("≥ {SMALL_KERNEL_SHARE_PCT:.0}% of kernels under 10 µs (or median under 10 µs) and the GPU idle ≥ {IDLE_CAUSE_PCT:.0}% waiting for launches").into(),
            measured: format!("{distribution}; GPU idle {} waiting for launches{gaps}", dur(ns)).into(),
            value: small_share(i),
            time_ns: ns,
            explanation: format!(
                "The kernels finish faster than the host can launch the next one ({} launch calls, median {} and 90th percentile {} on the CPU), so the GPU waits {p:.1}% of the GPU window.",
                i.launch_calls,
                us(i.launch_call_median_ns as f64),
                us(i.launch_call_p90_ns as f64)
            ).into(),
            actions: vec![
                graph_action(i),
                if i.in_use.compiled.is_some() {
                    crate::report::wording::compile_advice(i, "")
                } else {
                    rich!("Fuse the small kernels with ", code("torch.compile(model)"), " and fused layers", crate::report::wording::fused_optimizer_words(i), ".")
                },
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
        threshold: format!("GPU idle with nothing queued inside steps ≥ {IDLE_CAUSE_PCT:.0}% of the window").into(),
        measured: format!("GPU idle {} with nothing queued{gaps}; {distribution}", dur(ns)).into(),
        value: p,
        time_ns: ns,
        explanation: rich!(
            "Inside the steps the host is slower than the GPU: the next kernel is launched only after the GPU ran dry",
            (!ops.is_empty()).then(|| rich!("; meanwhile the host is in ", &ops)),
            "."
        ),
        actions: vec![
            if ops.is_empty() {
                "Cut the host work between kernels: Python loops over tensors, per-sample ops, `.item()`/`.tolist()`.".into()
            } else {
                rich!("Cut the host time of ", &ops, ": batch the work into fewer, larger ops, and avoid Python loops over tensors.")
            },
            if i.in_use.compiled.is_some() {
                crate::report::wording::compile_advice(i, "")
            } else if i.device_kind.has_cuda_toolbox() && !i.in_use.graphs() {
                "Compile the model with `torch.compile(model)` to remove Python and dispatcher overhead; with a steady shape, `mode=\"reduce-overhead\"` also replays the step as a CUDA graph.".into()
            } else {
                rich!("Compile the model with ", code("torch.compile(model)"), format!(" (with the {}'s backend) to remove Python and dispatcher overhead.", i.device_word()))
            },
        ],
        evidence: Vec::new(),
    }
    .finish(i))
}

/// A few long gaps in which the launching thread did something else: host stalls. Told apart from
/// launch overhead by the gap distribution (each ≥ 1 ms and ≥ 10× the median dispatch gap), so
/// neither CUDA graphs nor a larger batch is the answer: what the host did then is.
pub fn host_stalls(i: &DiagnosisInputs) -> Option<Finding> {
    let ns = i.time.idle(IdleCause::HostStall);
    let p = i.time.pct(ns);
    if p < IDLE_CAUSE_PCT || i.stall_gaps == 0 {
        return None;
    }
    let ops = ops_words(i.idle_share(IdleCause::HostStall), 3);
    let gaps = format!(
        "{} gaps of median {} (the median gap between launches is {})",
        i.stall_gaps,
        dur(i.stall_gap_median_ns),
        us(i.dispatch_gap_median_ns as f64)
    );
    let doing = (!ops.is_empty()).then(|| rich!("; the launching thread is in ", &ops));
    let in_ops = (!ops.is_empty()).then(|| rich!(" (", &ops, ")"));
    Some(Draft {
        id: FindingId::HostStall,
        headline: idle_headline(
            i,
            ns,
            format!(
                "in {} host stalls of median {} with nothing launched",
                i.stall_gaps,
                dur(i.stall_gap_median_ns)
            ),
        ),
        title: "Host stalls: a few long gaps with nothing launched".into(),
        threshold: format!(
            "GPU idle ≥ {IDLE_CAUSE_PCT:.0}% of the window in gaps ≥ {} and ≥ {}× the median gap between launches",
            dur(crate::report::attribution::STALL_MIN_NS),
            crate::report::attribution::STALL_FACTOR
        )
        .into(),
        measured: format!("GPU idle {} ({p:.1}% of the window) in {gaps}", dur(ns)).into(),
        value: p,
        time_ns: ns,
        explanation: rich!(
            format!(
                "The GPU runs dry in a few long gaps, not between every launch: between them the host keeps up (launch calls median {}), so this is not launch overhead and CUDA graphs or larger kernels do not remove it",
                us(i.launch_call_median_ns as f64)
            ),
            doing,
            "."
        ),
        actions: vec![rich!(
            "Find what the launching thread does in these gaps",
            in_ops,
            ": scheduling, preparing inputs, a blocking copy or `.item()`, Python work between forwards; overlap it with the GPU's work (prepare the next batch while this one runs, on another thread or asynchronously) or move it out of the loop."
        )],
        evidence: Vec::new(),
    }
    .finish(i))
}

/// Replaying the step as one graph launch: CUDA/HIP graphs where the device has them.
fn graph_action(i: &DiagnosisInputs) -> RichText {
    crate::report::wording::graph_advice(i)
}

/// Warm-up work (set-up calls, algorithm search, compilation) still inside the analysed window.
pub fn residual_warmup(i: &DiagnosisInputs) -> Option<Finding> {
    if let Some(cold) = crate::report::cold::cold_pass(i) {
        return Some(cold);
    }
    let ns = i.time.idle(IdleCause::Warmup)
        + i.time.idle(IdleCause::GraphCapture)
        + i.time.idle(IdleCause::Startup);
    let p = i.time.pct(ns);
    if p < IDLE_CAUSE_PCT {
        return None;
    }
    let ops = RichText::join(
        [
            ops_words(i.idle_share(IdleCause::Warmup), 3),
            crate::report::cold::startup_words(i).unwrap_or_default(),
        ]
        .into_iter()
        .filter(|s| !s.is_empty()),
        "; ",
    );
    Some(Draft {
        id: FindingId::Warmup,
        headline: idle_headline(i, ns, "during warm-up and one-off start-up work (allocation, algorithm search, compilation, graph capture, first calls)"),
        title: "Warm-up inside the analysed window".into(),
        threshold: format!("GPU idle during warm-up calls and one-off start-up work ≥ {IDLE_CAUSE_PCT:.0}% of the GPU window").into(),
        measured: format!("{} of GPU idle during warm-up calls and one-off start-up work ({p:.1}% of the GPU window)", dur(ns)).into(),
        value: p,
        time_ns: ns,
        explanation: rich!(
            "Set-up work is still running in the analysed window",
            (!ops.is_empty()).then(|| rich!(": ", &ops)),
            ". It is paid once, so longer runs amortise it."
        ),
        actions: vec![
            "Profile later steps (`schedule(wait=…, warmup=…, active=…)` with a larger warmup) to see the steady state.".into(),
            "If allocation repeats every step (cudaMalloc/cudaFree), keep shapes static or set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`; if recompilation repeats, check `torch._dynamo` recompiles (`TORCH_LOGS=recompiles`).".into(),
        ],
        evidence: Vec::new(),
    }
    .finish(i))
}
