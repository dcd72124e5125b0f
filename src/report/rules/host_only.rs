//! The finding of a trace without device work, in words: what the trace is (a CPU-only run, a GPU
//! run recorded without its device activity, an Apple MPS run the profiler cannot see into, a legacy
//! export), whether it is one cold pass, where the host's time goes by self time, and, for a run on
//! the CPU, what bounds it and what to do about it ([`super::cpu_run`]).

use crate::report::cold::RECORD_AFTER_WARMUP;
use crate::report::context::host_only::HostOnly;
use crate::report::context::{TraceContext, TraceHolds, TraceOrigin};
use crate::report::inputs::pct;
use crate::report::rich_text::{code, op_as, op_short, RichText};
use crate::report::wording::{dur, short_names};
use crate::rich;
use crate::trace::dialect::DeviceKind;

/// The recording that shows a GPU's work.
const RECORD_DEVICE: &str = "`activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]`";

/// The headline and the actions of a trace without device work (`CpuOnly`, or a legacy export).
pub fn headline_and_action(ctx: &TraceContext) -> (RichText, Vec<RichText>) {
    let h = ctx.host_only.clone().unwrap_or_default();
    let cold = cold_words(ctx, &h);
    let ops = ops_words(ctx, &h);
    // The CPU operators' story, for a run whose operators ran on the CPU.
    let cpu = h
        .cpu
        .as_ref()
        .filter(|_| !matches!(h.evidence_kind, Some(k) if k != DeviceKind::Cpu));
    let run = cpu.map_or(RichText::default(), super::cpu_run::run_words);
    let cpu_actions = || cpu.map_or(vec![CPU_ACTION.into()], super::cpu_run::actions);
    let evidence = RichText::join(
        h.evidence
            .iter()
            .zip(short_names(
                &h.evidence.iter().map(String::as_str).collect::<Vec<_>>(),
            ))
            .map(|(full, shown)| rich!(op_as(full, shown))),
        ", ",
    );
    let legacy = ctx.origin == Some(TraceOrigin::PytorchLegacy);
    let (what, action): (RichText, RichText) = match (legacy, h.evidence_kind) {
        (true, _) => (
            rich!(
                "This is a legacy `torch.autograd.profiler` export with CPU operators only and no device timeline",
                (!evidence.is_empty()).then(|| rich!(" (the operators ", &evidence, " ran on a GPU)")),
                ", so GPU time cannot be measured"
            ),
            rich!(
                "Record a Kineto trace with torch.profiler: ",
                crate::report::context::record_kineto(
                    !evidence.is_empty() || gpu_visible(ctx),
                    ctx.apple()
                ),
                "."
            ),
        ),
        (false, Some(DeviceKind::Mps)) => (
            rich!(
                "An Apple GPU (MPS) run: ",
                &evidence,
                " ran on the GPU through Metal, and the PyTorch profiler records no MPS device activity, so the trace holds only the host's side and GPU time cannot be measured"
            ),
            "For the GPU's side record with `torch.mps.profiler.profile(mode=\"interval\")` and open it in Instruments (Metal System Trace); torch.profiler shows the host's operators only.".into(),
        ),
        (false, Some(k)) => (
            rich!(
                format!("A {} run recorded without its device activity: ", kind_word(k)),
                device_evidence_words(&evidence, h.device_memory.as_ref()),
                ", but the trace holds no kernel or copy (the profiler's activities did not include the device's), so the device's work and its time are not in it"
            ),
            rich!(
                "Re-record with ",
                RECORD_DEVICE,
                " so the kernels and copies are in the trace (and check the log for CUPTI errors)."
            ),
        ),
        (false, None) if !gpu_visible(ctx) => (
            "A CPU-only run: no device was visible to the profiler (no `deviceProperties`), no kernel launch and no operator that runs on a GPU: a CPU deployment, or a rank or host without a GPU".into(),
            RichText::default(),
        ),
        (false, None) => (
            "A CPU-only run: no kernel launch, no kernel and no operator that runs on a GPU, so the model ran on the CPU (or the trace was captured without ProfilerActivity.CUDA)".into(),
            rich!(
                "If the job is meant to use a GPU, move the model and its inputs to it (`model.to(\"cuda\")`, `x.to(\"cuda\")`) and record with ",
                RECORD_DEVICE,
                "; on the CPU, cut the operators with most self time below."
            ),
        ),
    };
    let on_cpu = !legacy && h.evidence_kind.is_none();
    let mut actions: Vec<RichText> = Vec::new();
    if !action.is_empty() {
        actions.push(action);
    }
    // A legacy export's host times say nothing of where its operators ran: no CPU story for it.
    if on_cpu {
        actions.extend(cpu_actions());
    }
    if ctx.holds(TraceHolds::ColdStart) {
        if on_cpu {
            // One cold pass: recording after warm-up is the first thing to do, said once.
            actions.retain(|a| !a.starts_with(super::cpu_run::LEAVE_FIRST_PASS));
            actions.insert(0, RECORD_AFTER_WARMUP.into());
        } else if let Some(first) = actions.first_mut() {
            first.push(" ").push(RECORD_AFTER_WARMUP);
        }
    }
    let run = if on_cpu { run } else { RichText::default() };
    (rich!(what, cold, ops, run, "."), actions)
}

/// What speeds a model up on the CPU, for a CPU deployment.
const CPU_ACTION: &str = "Cut the operators with most self time below: set the intra-op threads to the physical cores (`torch.set_num_threads`, `OMP_NUM_THREADS`) and pin them to one socket, run in bf16 where the CPU has AMX/AVX-512 BF16 (`torch.autocast(\"cpu\", dtype=torch.bfloat16)`), and compile with `torch.compile` (Inductor's C++ backend fuses element-wise work).";

/// Whether the profiler saw a device on the host (`deviceProperties`): only then can a CPU-only
/// run be told to move to it.
fn gpu_visible(ctx: &TraceContext) -> bool {
    ctx.device.count > 0 || ctx.device.name.is_some()
}

/// What shows the device ran: "the host ran `aten::cudnn_convolution`, which only runs on the
/// device" and/or "412 memory events allocate on GPU 0 (peak 1.2 GB allocated)".
fn device_evidence_words(
    ops: &RichText,
    memory: Option<&crate::report::context::host_only::DeviceAllocations>,
) -> RichText {
    let mut parts: Vec<RichText> = Vec::new();
    if !ops.is_empty() {
        parts.push(rich!(
            "the host ran ",
            ops,
            ", which only run on the device"
        ));
    }
    if let Some(m) = memory {
        let ids = m
            .devices
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        parts.push(rich!(
            format!(
                "{} memory events allocate and free on {} {ids} (",
                m.events,
                if m.devices.len() == 1 {
                    "device"
                } else {
                    "devices"
                },
            ),
            code("[memory]"),
            format!(
                " events, peak {} allocated): the model's tensors lived on the device",
                crate::report::format::bytes(m.peak_bytes.max(0) as u64)
            )
        ));
    }
    RichText::join(parts, "; ")
}

fn kind_word(k: DeviceKind) -> &'static str {
    match k {
        DeviceKind::Unknown => "PrivateUse1 accelerator",
        DeviceKind::Rocm => "AMD GPU (ROCm)",
        DeviceKind::Npu => "Ascend NPU",
        DeviceKind::Xpu => "Intel GPU (XPU)",
        DeviceKind::Mtia => "MTIA",
        _ => "CUDA GPU",
    }
}

/// "; it is one cold pass: one-off first calls take 88% of the 3.26 s profiled (the first
/// `aten::cudnn_convolution` 2.34 s, later calls' median 1.6 ms)".
fn cold_words(ctx: &TraceContext, h: &HostOnly) -> RichText {
    if !ctx.holds(TraceHolds::ColdStart) {
        return RichText::default();
    }
    let firsts = h.one_offs.iter().map(|o| {
        rich!(
            "the first ",
            op_short(&o.name),
            format!(
                " {}, later calls' median {}",
                dur(o.dur_ns),
                dur(o.later_median_ns)
            )
        )
    });
    // The device's start-up only where a device is in evidence.
    let what = if h.evidence_kind.is_some() || gpu_visible(ctx) {
        "CUDA/cuDNN context, allocator, module loading"
    } else {
        "imports, allocator growth, lazy initialisation, oneDNN primitive creation"
    };
    rich!(
        format!(
            "; it is one cold pass: one-off first calls take {:.0}% of the {} profiled (",
            pct(h.one_off_ns, h.span_ns),
            dur(h.span_ns),
        ),
        RichText::join(firsts, "; "),
        format!("), start-up ({what}) that a steady state never pays")
    )
}

/// "; the host's time by operator (self time: nested operators are not counted twice; % of the
/// 4.85 s profiled): `aten::mkldnn_convolution` 1.07 s (22.0%, in `aten::conv1d`), ...".
fn ops_words(ctx: &TraceContext, h: &HostOnly) -> RichText {
    if ctx.top_ops.is_empty() {
        return RichText::default();
    }
    let list = ctx.top_ops.iter().map(|o| {
        let caller = o.called_in.as_ref().map(|c| rich!(", in ", op_short(c)));
        // An operator on several threads at once is measured by the union of its time.
        let threads = if o.threads > 1 {
            format!("over {} threads, busy ", o.threads)
        } else {
            String::new()
        };
        let wall = if o.wall_ns > 0 { o.wall_ns } else { o.self_ns };
        rich!(
            op_short(&o.name),
            format!(
                " {} ({threads}{:.1}%, {} call{}",
                dur(o.self_ns),
                pct(wall.min(h.span_ns), h.span_ns),
                o.calls,
                if o.calls == 1 { "" } else { "s" }
            ),
            caller,
            ")"
        )
    });
    rich!(
        format!(
            "; the host's time by operator (self time, nested operators not counted twice; % of the {} profiled, an operator on several threads measured by the union of its time): ",
            dur(h.span_ns),
        ),
        RichText::join(list, ", ")
    )
}

/// What the host of a trace without device events did: its one-off first calls when it is one
/// cold pass, and its operators by self time ("; the host's time by operator ..."); empty when the
/// trace has no host operators. For a GPU trace whose device activity was not recorded, the host's
/// side is still whole.
pub fn host_words(ctx: &TraceContext) -> RichText {
    let Some(h) = ctx.host_only.as_ref() else {
        return RichText::default();
    };
    rich!(cold_words(ctx, h), ops_words(ctx, h))
}
