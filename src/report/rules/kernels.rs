//! Kernel-side findings from kernel names and times: unfused attention, fusable memory-bound kernels,
//! fp32 GEMMs without tensor cores, one dominant kernel.

use super::{
    short_names, top_evidence, Draft, DOMINANT_KERNEL_PCT, FP32_GEMM_PCT, FUSABLE_PCT,
    RECOVERABLE_SHARE, SOFTMAX_PCT,
};
use crate::analysis::names::is_device_wait_op;
use crate::report::findings::{Finding, FindingId, Severity};
use crate::report::inputs::{pct, DiagnosisInputs};
use crate::report::patterns::{
    generation_without_tf32, is_convolution_kernel, is_fp32_simt_gemm, is_fusable_memory_bound,
    is_fused_attention_kernel, is_softmax_kernel,
};
use crate::report::rich_text::{code, kernel, kernel_as, RichText};
use crate::report::wording::{count, dur, us};
use crate::rich;

/// A partly recorded trace gets its kernel mix from this many recorded kernels...
pub const MIX_MIN_KERNELS: u64 = 100;

/// The kernel mix of a partly recorded trace ([`crate::report::bottleneck::partial_record`]) when
/// enough is recorded (at least [`MIX_MIN_KERNELS`] kernels, and the recorded device window at
/// least the unrecorded time): GEMM, attention and compiled-fusion shares of the recorded kernel
/// time, and what was not recorded. `None` otherwise.
pub fn partial_kernel_mix(
    i: &DiagnosisInputs,
    ctx: &crate::report::context::TraceContext,
) -> Option<RichText> {
    use crate::analysis::names::{is_compiled_kernel, is_gemm_kernel};
    use crate::report::patterns::is_fused_attention_kernel;
    let unrecorded = ctx.unrecorded.tail_ns;
    if !crate::report::bottleneck::partial_record(ctx)
        || i.kernel_count < MIX_MIN_KERNELS
        || i.time.window_ns < unrecorded
    {
        return None;
    }
    let share = |f: fn(&str) -> bool| {
        pct(
            i.kernels
                .iter()
                .filter(|k| !k.communication && f(&k.name))
                .map(|k| k.total_ns)
                .sum(),
            i.kernel_time_ns,
        )
    };
    let gemm = share(is_gemm_kernel);
    let attention = share(is_fused_attention_kernel);
    let fused = share(is_compiled_kernel);
    let rest = (100.0 - gemm - attention - fused).max(0.0);
    Some(RichText::from(format!(
        "Of the work recorded ({} of kernel time in {} over a {} {} window; about {} more was not recorded), GEMMs take {gemm:.0}%, fused attention {attention:.0}%, compiled (Triton) fusions {fused:.0}% and the rest {rest:.0}% of the kernel time: {}. The unrecorded part (the host still waits for the {} after the last recorded kernel) cannot be judged; record the whole replay to see it.",
        dur(i.kernel_time_ns),
        count(i.kernel_count, "kernel"),
        dur(i.time.window_ns),
        i.device_word(),
        dur(unrecorded),
        if gemm >= 50.0 {
            "the matrix multiplies set the pace, so their shapes and precision are the lever"
        } else if rest >= 40.0 {
            "element-wise and other small kernels are a large part, so fusing them (torch.compile) is the lever"
        } else {
            "no one class dominates"
        },
        i.device_word()
    )))
}

/// Kernel time of the kernels whose name passes `test`, and their figures.
fn kernels_where(
    i: &DiagnosisInputs,
    test: fn(&str) -> bool,
) -> (i64, Vec<&crate::report::inputs::KernelFigure>) {
    let ks: Vec<&crate::report::inputs::KernelFigure> =
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
        .map(|(s, n)| format!(" on inputs {s} ({})", count(*n, "call")))
        .unwrap_or_default();
    let bmm = if i.attention.bmm_ops > 0 {
        rich!(
            format!(" and {} ", i.attention.bmm_ops),
            code("aten::bmm"),
            "/",
            code("baddbmm"),
            " calls"
        )
    } else {
        RichText::default()
    };
    let gpu_pct = i.time.pct(softmax_ns);
    Some(Draft {
        id: FindingId::UnfusedAttention,
        headline: format!(
            "Attention runs unfused: softmax kernels take {share:.1}% of kernel time ({}) with no fused attention kernel.",
            dur(softmax_ns)
        ).into(),
        title: "Attention computed unfused (softmax + batched matmul)".into(),
        threshold: format!("softmax kernels ≥ {SOFTMAX_PCT:.0}% of kernel time and less time in fused attention kernels").into(),
        measured: rich!(
            format!(
                "softmax {} ({share:.1}% of kernel time, {gpu_pct:.1}% of the window){shape}",
                dur(softmax_ns),
            ),
            bmm,
            format!("; fused attention {}", dur(fused_ns))
        ),
        value: share,
        time_ns: softmax_ns,
        explanation: rich!("The attention scores are materialised as [.., L, L] matrices and normalised by ", kernel(&softmax[0].name), format!("{shape}; a fused kernel (FlashAttention / memory-efficient attention) never writes them to memory.")).into(),
        actions: vec![
            "Compute attention with `torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=..., is_causal=...)` (PyTorch ≥ 2.0 picks FlashAttention or memory-efficient kernels), or `nn.MultiheadAttention` / Hugging Face `attn_implementation=\"sdpa\"` or `\"flash_attention_2\"`.".into(),
            if i.in_use.low_precision.is_some() {
                "Keep attention's inputs in fp16/bf16 (the model already runs kernels in reduced precision): the flash kernels need half precision.".into()
            } else {
                "Run attention in fp16/bf16 (`torch.autocast`): the flash kernels need half precision.".into()
            },
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
    let largest = &ks[..ks.len().min(3)];
    let names: Vec<RichText> = largest
        .iter()
        .zip(short_names(
            &largest.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(),
        ))
        .map(|(k, shown)| {
            rich!(
                kernel_as(&k.name, shown),
                format!(" ({}, {})", dur(k.total_ns), count(k.calls, "call"))
            )
        })
        .collect();
    let recoverable = (ns as f64 * RECOVERABLE_SHARE) as i64;
    Some(Draft {
        id: FindingId::FusionCandidates,
        headline: format!(
            "Memory-bound element-wise, copy and reduction kernels take {share:.1}% of kernel time ({}, {}): fusing them would save about half.",
            dur(ns),
            count(calls, "call")
        ).into(),
        title: "Memory-bound kernels worth fusing".into(),
        threshold: format!("unfused element-wise/copy/reduction kernels ≥ {FUSABLE_PCT:.0}% of kernel time").into(),
        measured: rich!(
            format!("{} in {} ({share:.1}% of kernel time); largest: ", dur(ns), count(calls, "call")),
            RichText::join(names, ", ")
        ),
        value: share,
        time_ns: recoverable,
        explanation: "Each of these kernels reads and writes whole tensors to do little arithmetic, so memory bandwidth sets their time; fused into one kernel the intermediate tensors never leave the registers.".into(),
        actions: vec![
            crate::report::wording::compile_advice(i, "(Inductor fuses element-wise chains, reductions and copies into Triton kernels)"),
            rich!("Use fused implementations where they exist: fused LayerNorm/RMSNorm, fused bias+activation, and avoid ", code(".contiguous()"), "/", code("torch.cat"), " copies inside the step", crate::report::wording::fused_optimizer_words(i), "."),
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
        ).into(),
        title: "fp32 GEMMs and convolutions without tensor cores".into(),
        threshold: rich!("fp32 SIMT GEMM and convolution kernels (", code("sgemm"), ", ", code("scudnn"), ", ", code("<float>"), format!(" cuDNN engines) ≥ {FP32_GEMM_PCT:.0}% of kernel time")),
        measured: rich!(
            format!(
                "{} in {} of ",
                dur(ns),
                count(ks.iter().map(|k| k.calls).sum::<u64>(), "call"),
            ),
            RichText::join(
                ks.iter()
                    .take(2)
                    .zip(short_names(
                        &ks.iter().take(2).map(|k| k.name.as_str()).collect::<Vec<_>>()
                    ))
                    .map(|(k, shown)| rich!(kernel_as(&k.name, shown))),
                ", "
            )
        ),
        value: share,
        // A lower precision saves at most 1 - 1/gain of their time on this device.
        time_ns: (ns as f64
            * crate::report::wording::fp32_lever_gain(i)
                .map_or(RECOVERABLE_SHARE, |g| RECOVERABLE_SHARE.min(1.0 - 1.0 / g)))
            as i64,
        explanation: match crate::report::wording::fp32_lever_gain(i) {
            Some(g) if g > 1.0 => format!("These kernels run on the CUDA cores in full fp32; this GPU's tensor cores run the same products at up to {g:.0}× that rate in a lower precision (see the action).").into(),
            Some(_) => "These kernels run in full fp32, and this GPU has no unit faster than fp32 for them.".into(),
            None => "These kernels run on the CUDA cores in full fp32; tensor cores run the same products several times faster in TF32, fp16 or bf16.".into(),
        },
        actions: vec![fp32_action(
            i,
            &ks.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(),
        )],
        evidence: top_evidence(ks.iter().flat_map(|k| k.evidence.iter().cloned()), 5),
    }
    .finish(i))
}

/// What to do about fp32 GEMMs: TF32 or bf16 where the GPU has them, fp16 autocast where it has not
/// (the device name, or else the GPU generation the kernel names say).
fn fp32_action(i: &DiagnosisInputs, names: &[&str]) -> RichText {
    if let Some(a) =
        crate::report::wording::precision_advice(i, "these fp32 GEMMs and convolutions".into())
    {
        return a;
    }
    if let Some(a) = crate::report::wording::fp32_advice(i, names) {
        return a;
    }
    if let Some(a) =
        crate::report::wording::fp32_lever_advice(i, "these fp32 GEMMs and convolutions")
    {
        return a;
    }
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
        Some(gpu) => rich!(format!("{gpu} has no TF32: use mixed precision ("), code("torch.autocast(\"cuda\", dtype=torch.float16)"), " with ", code("torch.cuda.amp.GradScaler"), ") so GEMMs and convolutions run on tensor cores; for convolutions also use channels-last (", code("model.to(memory_format=torch.channels_last)"), ")."),
        None => "Enable TF32 (`torch.backends.cuda.matmul.allow_tf32 = True`, `torch.backends.cudnn.allow_tf32 = True`, or `torch.set_float32_matmul_precision(\"high\")`) or bf16 mixed precision (`torch.autocast(\"cuda\", dtype=torch.bfloat16)`).".into(),
    }
}

/// Compute kernels under this share (%) of the GPU window: none of them is worth naming as the one
/// that bounds the gain.
pub const KERNELS_WORTH_NAMING_PCT: f64 = 5.0;

/// One kernel takes most of the kernel time: normal for compute-bound work; a pointer, not a cost.
pub fn dominant_kernel(i: &DiagnosisInputs) -> Option<Finding> {
    let top = i.kernels.first()?;
    let share = pct(top.total_ns, i.kernel_time_ns);
    if share <= DOMINANT_KERNEL_PCT || top.communication || is_device_wait_op(&top.name) {
        return None;
    }
    // Kernels that fill a sliver of the window (beside a copy that fills it) bound no gain.
    if i.time.pct(i.time.compute_ns) < KERNELS_WORTH_NAMING_PCT {
        return None;
    }
    Some(Finding {
        severity: Severity::Info,
        ..Draft {
            id: FindingId::DominantKernel,
            headline: rich!(format!("No major inefficiency found: the GPU is busy {:.1}% of the window and ", i.time.pct(i.time.busy_ns)), kernel(&top.name), format!(" takes {share:.1}% of kernel time ({} in {}).", dur(top.total_ns), count(top.calls, "call"))).into(),
            title: rich!("One kernel dominates: ", kernel(&top.name)).into(),
            threshold: format!("one kernel > {DOMINANT_KERNEL_PCT:.0}% of kernel time").into(),
            measured: format!("{share:.1}% of kernel time, mean {}", us(top.total_ns as f64 / top.calls.max(1) as f64)).into(),
            value: share,
            time_ns: 0,
            explanation: rich!("Speeding up ", kernel(&top.name), format!(" bounds the whole gain; it is {share:.1}% of kernel time.")).into(),
            actions: vec![if !i.device_kind.has_cuda_toolbox() {
                rich!("Check that ", kernel(&top.name), format!(" is the fast variant for its shapes on the {}: compare its achieved FLOP/s or bytes/s ({} per call) with the device's peak, and try the precision and layout its vendor library is tuned for.", i.device_word(), us(top.total_ns as f64 / top.calls.max(1) as f64))).into()
            } else if is_fusable_memory_bound(&top.name) {
                rich!(
                    kernel(&top.name),
                    format!(" is memory-bound (element-wise/copy/reduction): compare its achieved bandwidth (bytes read + written / {} per call) with the GPU's peak; contiguous, aligned inputs let it vectorise", us(top.total_ns as f64 / top.calls.max(1) as f64)),
                    if i.in_use.precision() { "" } else { ", bf16/fp16 halves the bytes" },
                    if i.in_use.compiled.is_some() { "" } else { ", and in a real model fusing it with its neighbours (`torch.compile`) saves the round trips to memory" },
                    "."
                )
            } else {
                rich!("Check that ", kernel(&top.name), format!(" is the fast variant for its shapes ({}", if i.in_use.precision() { "" } else { "tensor cores under bf16/fp16 or TF32, " }), code("torch.backends.cudnn.benchmark = True"), " for convolutions, dimensions that are multiples of 8).").into()
            }],
            evidence: top.evidence.clone(),
        }
        .finish(i)
        .with_action(crate::report::roofline_rules::roof_words(i, &top.name))
    })
}
