//! Work the model need not run, visible in kernel names: layout conversions around convolutions,
//! convolutions on PyTorch's slow fallback, dropout in a forward-only (inference) run.

use super::{short_names, top_evidence, Draft, RECOVERABLE_SHARE};
use crate::analysis::names::{
    is_dropout_kernel, is_layout_conversion_kernel, is_slow_conv_kernel, is_training_kernel,
};
use crate::report::findings::{Finding, FindingId};
use crate::report::inputs::{pct, DiagnosisInputs, KernelFigure};
use crate::report::rich_text::{code, kernel_as, RichText};
use crate::report::wording::{count, dur};
use crate::rich;

/// Avoidable kernels become a finding from this share (%) of kernel time...
pub const AVOIDABLE_PCT: f64 = 5.0;
/// ... each kind counted from this share (%).
pub const AVOIDABLE_KIND_PCT: f64 = 1.0;

/// One kind of avoidable work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Avoidable {
    LayoutConversion,
    SlowConvolution,
    InferenceDropout,
}

impl Avoidable {
    fn test(self) -> fn(&str) -> bool {
        match self {
            Avoidable::LayoutConversion => is_layout_conversion_kernel,
            Avoidable::SlowConvolution => is_slow_conv_kernel,
            Avoidable::InferenceDropout => is_dropout_kernel,
        }
    }

    /// The share of its time removing the cause gives back.
    fn recoverable(self) -> f64 {
        match self {
            Avoidable::SlowConvolution => RECOVERABLE_SHARE,
            _ => 1.0,
        }
    }

    fn words(self) -> &'static str {
        match self {
            Avoidable::LayoutConversion => "memory-layout conversions (NCHW ↔ NHWC)",
            Avoidable::SlowConvolution => "convolutions on PyTorch's slow fallback (im2col)",
            Avoidable::InferenceDropout => "dropout in a forward-only run",
        }
    }

    fn action(self, library: &str) -> RichText {
        match self {
            Avoidable::LayoutConversion => rich!("Keep one memory layout end to end: convert the model and its inputs to channels-last once (", code("model.to(memory_format=torch.channels_last)"), ", ", code("x.to(memory_format=torch.channels_last)"), format!("), so {library} stops converting tensors around every convolution; avoid "), code(".contiguous()"), " calls that turn them back.").into(),
            Avoidable::SlowConvolution => rich!(format!("These convolutions do not run in {library}: PyTorch falls back to im2col + GEMM when the library is disabled ("), code("torch.backends.cudnn.enabled"), "), the dtype has no library kernel (fp64), or the input is not on the device; check those, and make the inputs contiguous.").into(),
            Avoidable::InferenceDropout => "The trace runs forward only (no backward or optimizer kernel), yet dropout draws random masks: call `model.eval()` before inference (and run it under `torch.inference_mode()`), which also makes the outputs deterministic.".into(),
        }
    }
}

/// Kernels of one kind, their time and figures.
fn of_kind(i: &DiagnosisInputs, kind: Avoidable) -> (i64, Vec<&KernelFigure>) {
    let test = kind.test();
    let ks: Vec<&KernelFigure> = i
        .kernels
        .iter()
        .filter(|k| !k.communication && test(&k.name))
        .collect();
    (ks.iter().map(|k| k.total_ns).sum(), ks)
}

/// Kernels the workload need not run, above [`AVOIDABLE_PCT`] of kernel time together.
pub fn avoidable_kernels(i: &DiagnosisInputs) -> Option<Finding> {
    let training = i.kernels.iter().any(|k| is_training_kernel(&k.name));
    let kinds = [
        Avoidable::LayoutConversion,
        Avoidable::SlowConvolution,
        Avoidable::InferenceDropout,
    ];
    let found: Vec<(Avoidable, i64, Vec<&KernelFigure>)> = kinds
        .into_iter()
        .filter(|k| *k != Avoidable::InferenceDropout || !training)
        .map(|k| {
            let (ns, ks) = of_kind(i, k);
            (k, ns, ks)
        })
        .filter(|(_, ns, _)| pct(*ns, i.kernel_time_ns) >= AVOIDABLE_KIND_PCT)
        .collect();
    let ns: i64 = found.iter().map(|f| f.1).sum();
    let share = pct(ns, i.kernel_time_ns);
    if share < AVOIDABLE_PCT {
        return None;
    }
    let recoverable: i64 = found
        .iter()
        .map(|(k, ns, _)| (*ns as f64 * k.recoverable()) as i64)
        .sum();
    let parts: Vec<RichText> = found
        .iter()
        .map(|(k, ns, ks)| {
            let first = &ks[..ks.len().min(2)];
            let names = first
                .iter()
                .zip(short_names(
                    &first.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(),
                ))
                .map(|(k, shown)| rich!(kernel_as(&k.name, shown)));
            rich!(
                format!(
                    "{} {} in {} (",
                    k.words(),
                    dur(*ns),
                    count(ks.iter().map(|k| k.calls).sum::<u64>(), "call"),
                ),
                RichText::join(names, ", "),
                ")"
            )
        })
        .collect();
    let library = match i.device_kind {
        crate::trace::dialect::DeviceKind::Rocm => "MIOpen",
        crate::trace::dialect::DeviceKind::Cuda | crate::trace::dialect::DeviceKind::Unknown => {
            "cuDNN"
        }
        _ => "the vendor library",
    };
    Some(
        Draft {
            id: FindingId::AvoidableKernels,
            headline: format!(
                "Kernels the model need not run take {share:.1}% of kernel time ({}): {}.",
                dur(ns),
                found.iter().map(|f| f.0.words()).collect::<Vec<_>>().join(", ")
            ).into(),
            title: "Avoidable kernels: layout conversions, slow convolutions, dropout at inference"
                .into(),
            threshold: format!(
                "layout-conversion, fallback-convolution or (forward-only) dropout kernels ≥ {AVOIDABLE_PCT:.0}% of kernel time"
            ).into(),
            measured: RichText::join(parts, "; "),
            value: share,
            time_ns: recoverable,
            explanation: "These kernels come from how the model is set up, not from the work it must do: a layout mismatch makes the library convert tensors around every convolution, a convolution off the library runs as im2col + GEMM, and dropout outside training only adds noise.".into(),
            actions: found.iter().map(|f| f.0.action(library)).collect(),
            evidence: top_evidence(
                found
                    .iter()
                    .flat_map(|f| f.2.iter().flat_map(|k| k.evidence.iter().cloned())),
                5,
            ),
        }
        .finish(i),
    )
}
