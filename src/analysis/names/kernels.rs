//! Kernel name classes: the precision a kernel computes in, and what kind of kernel its name says it is
//! (GEMM, compiled, layout conversion, slow convolution, dropout, training, library).

use super::*;

/// The precision a kernel computes in, as its name says: the one definition every rule reads
/// ([`kernel_precision`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KernelPrecision {
    /// 8-bit floats (`e4m3`, `e5m2`, `fp8`).
    Fp8,
    /// 8-bit integers (`int8`, `imma`, `i8816`).
    Int8,
    Bf16,
    /// fp16 (`fp16`, `f16f16`, `h884`/`h1688`/`h16816`, `hmma`, `half`).
    Fp16,
    /// fp32 data multiplied on tensor cores (cuBLAS/CUTLASS/cuDNN `tf32`, ROCm `xf32`).
    Tf32,
    /// Plain fp32 on the CUDA cores (`sgemm`, `scudnn`, `gemm_fp32`, `f32f32_f32f32`, `<float`).
    Fp32,
}

impl KernelPrecision {
    /// bf16, fp16, fp8 or int8: mixed or reduced precision.
    pub fn is_low(self) -> bool {
        matches!(
            self,
            KernelPrecision::Fp8
                | KernelPrecision::Int8
                | KernelPrecision::Bf16
                | KernelPrecision::Fp16
        )
    }
}

/// The precision a kernel's name says it computes in (`ampere_bf16_s16816gemm…` bf16,
/// `sm90_xmma_gemm_f16f16…` fp16, `sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32…` TF32,
/// `ampere_tf32_s1688gemm_tf32…` TF32, `volta_sgemm_128x64_nn` fp32, `…_e4m3…` fp8), the lowest
/// first; `None` when the name does not say (an element-wise kernel, `ampere_s16816gemm` alone).
pub fn kernel_precision(name: &str) -> Option<KernelPrecision> {
    let l = name.to_ascii_lowercase();
    let any = |marks: &[&str]| marks.iter().any(|m| l.contains(m));
    if any(&["fp8", "e4m3", "e5m2"]) {
        Some(KernelPrecision::Fp8)
    } else if any(&["int8", "imma", "i8816"]) {
        Some(KernelPrecision::Int8)
    } else if any(&["bf16"]) {
        Some(KernelPrecision::Bf16)
    } else if any(&[
        "fp16", "f16f16", "_f16", "half", "hmma", "h884", "h1688", "h16816",
    ]) {
        Some(KernelPrecision::Fp16)
    } else if any(&["tf32", "xf32"]) {
        Some(KernelPrecision::Tf32)
    } else if any(&[
        "sgemm",
        "scudnn",
        "gemm_fp32",
        "f32f32_f32f32",
        "<float",
        "gemmsn",
        "gemv2t",
        "gemvx",
    ]) {
        Some(KernelPrecision::Fp32)
    } else {
        None
    }
}

/// A kernel whose name says it multiplies fp32 on tensor cores (cuBLAS/CUTLASS `tf32`, ROCm `xf32`).
pub fn is_tf32_kernel(name: &str) -> bool {
    kernel_precision(name) == Some(KernelPrecision::Tf32)
}

/// A kernel whose name says it computes in a reduced precision (bf16, fp16, fp8, int8): mixed
/// precision is in use (`ampere_bf16_s16816gemm…`, `sm90_xmma_gemm_f16f16…`, `…_e4m3…`,
/// `volta_h884gemm…`, `…hmma…`).
pub fn is_low_precision_kernel(name: &str) -> bool {
    kernel_precision(name).is_some_and(KernelPrecision::is_low)
}

/// A kernel torch.compile generated: Inductor's Triton kernels (`triton_poi_…`, `triton_red_…`,
/// `triton_per_…`, `triton_tem_…`) or its C++ ones (`cpp_fused_…`).
pub fn is_compiled_kernel(name: &str) -> bool {
    is_triton_kernel(name) || name.starts_with("cpp_fused_")
}

/// A matrix-multiply kernel (GEMM, or a convolution run as an implicit GEMM): cuBLAS/cuBLASLt
/// (`gemm`, `xmma`), CUTLASS, Tensile/hipBLASLt (`Cijk_…`), Triton/other `matmul`s.
pub fn is_gemm_kernel(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    ["gemm", "cijk_", "cutlass", "matmul", "xmma"]
        .iter()
        .any(|m| l.contains(m))
}

/// A kernel that converts a tensor's memory layout (cuDNN's `nchwToNhwcKernel`,
/// `nhwcToNchwKernel`, its engines' `convertTensor_kernel`, MIOpen's `transpose_NCHW2NHWC`):
/// convolutions in one layout fed tensors in the other.
pub fn is_layout_conversion_kernel(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    [
        "nchwtonhwc",
        "nhwctonchw",
        "nchw2nhwc",
        "nhwc2nchw",
        "converttensor_kernel",
    ]
    .iter()
    .any(|m| l.contains(m))
}

/// A convolution run by PyTorch's own fallback instead of the vendor library: `slow_conv2d`,
/// `slow_conv_dilated`, `thnn_conv`, and the `im2col`/`col2im`/`vol2col` kernels it launches.
pub fn is_slow_conv_kernel(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    [
        "slow_conv",
        "thnn_conv",
        "im2col",
        "col2im",
        "vol2col",
        "col2vol",
    ]
    .iter()
    .any(|m| l.contains(m))
}

/// Dropout's kernels (`fused_dropout_kernel`, `dropout`, `bernoulli_`): random masks, which only
/// training needs.
pub fn is_dropout_kernel(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.contains("dropout") || l.contains("bernoulli")
}

/// A kernel only training runs: a backward kernel (`*_backward_*`, `bwd`, cuDNN `dgrad`/`wgrad`)
/// or an optimizer's (`multi_tensor_apply`, Adam).
pub fn is_training_kernel(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    [
        "backward",
        "_bwd",
        "bwd_",
        "dgrad",
        "wgrad",
        "grad_input",
        "grad_weight",
        "multi_tensor_apply",
        "adam",
    ]
    .iter()
    .any(|m| l.contains(m))
}

crate::stable_enum! {
    /// What a run does, as its trace says: training (backward, optimizer steps) or inference
    /// (forward only; a serving engine's frames, `no_grad` / `inference_mode`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum RunKind {
        /// Backward or optimizer work in the trace.
        Training,
        /// Forward only: no backward or optimizer work where it would show.
        Inference,
        /// Nothing in the trace says (no host operators, no training kernel).
        #[default]
        Unknown,
    }
}

/// What one host operator or Python frame says of the run ([`RunKind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunSignal {
    /// Backward (`*Backward*`, `autograd::engine`, `AccumulateGrad`) or an optimizer step
    /// (`Optimizer.step#…`, `Optimizer.zero_grad#…`, `torch/optim/`).
    Training,
    /// A serving engine's frames (vLLM, SGLang, TensorRT-LLM, TGI, LMDeploy).
    Serving,
    /// Gradients switched off: `no_grad`, `inference_mode`.
    NoGrad,
}

/// What a host operator's or Python frame's name says of the run, if anything.
pub fn run_signal(name: &str) -> Option<RunSignal> {
    let l = name.to_ascii_lowercase();
    let has = |marks: &[&str]| marks.iter().any(|m| l.contains(m));
    if has(&[
        "backward",
        "autograd::engine",
        "accumulategrad",
        "optimizer.step",
        "optimizer.zero_grad",
        "torch/optim/",
    ]) {
        Some(RunSignal::Training)
    } else if has(&[
        "vllm/",
        "vllm::",
        "sglang",
        "tensorrt_llm",
        "text_generation_server",
        "lmdeploy",
    ]) {
        Some(RunSignal::Serving)
    } else if has(&["inference_mode", "no_grad"]) {
        Some(RunSignal::NoGrad)
    } else {
        None
    }
}

/// A kernel from a vendor or tuned library (cuBLAS/cuBLASLt, CUTLASS, cuDNN, rocBLAS/Tensile,
/// hipBLASLt, MIOpen, CK, FlashAttention, Triton/Inductor): not a naive hand-written one.
pub fn is_library_kernel(name: &str) -> bool {
    const MARKS: [&str; 24] = [
        "gemm",
        "gemv",
        "cublas",
        "cutlass",
        "xmma",
        "nvjet",
        "cudnn",
        "implicit_convolve",
        "conv2d",
        "wgrad",
        "dgrad",
        "fprop",
        "cijk_",
        "rocblas",
        "hipblaslt",
        "miopen",
        "ck::",
        "flash",
        "fmha",
        "triton_",
        "ampere_",
        "volta_",
        "turing_",
        "sm90_",
    ];
    let l = name.to_ascii_lowercase();
    MARKS.iter().any(|m| l.contains(m)) || l.starts_with("sm80_") || l.starts_with("sm100_")
}
