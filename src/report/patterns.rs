//! Kernel-side patterns by name: softmax and fused-attention kernels, memory-bound element-wise / copy /
//! reduction kernels, fp32 GEMMs without tensor cores; and the CPU-side attention ops with their shapes.

use std::collections::BTreeMap;

use super::inputs::AttentionFigures;
use crate::table::{EventKind, TraceTable};

fn lower(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// A softmax kernel (eager `softmax_warp_forward`, `cunn_SoftMaxForward`, a Triton `..._softmax_...`).
pub fn is_softmax_kernel(name: &str) -> bool {
    let l = lower(name);
    l.contains("softmax")
        && !is_fused_attention_kernel(name)
        && !l.contains("backward")
        && !l.contains("_bwd")
}

/// A fused attention kernel: FlashAttention, memory-efficient attention, cuDNN/CK/aiter fused MHA,
/// paged attention, FlashInfer.
pub fn is_fused_attention_kernel(name: &str) -> bool {
    let l = lower(name);
    [
        "flash",
        "fmha",
        "mem_efficient",
        "efficient_attention",
        "attention_kernel",
        "attn_fwd",
        "attn_bwd",
        "paged_attention",
        "flashinfer",
        "cudnn_attn",
        "sdpa",
        "xformers",
        "mha_fwd",
        "mha_bwd",
        "unified_attention",
    ]
    .iter()
    .any(|m| l.contains(m))
}

/// A memory-bound kernel that fusion removes or merges: element-wise, copies, fills, concatenation,
/// index/gather/scatter and simple reductions of eager PyTorch. Triton kernels are already fused.
pub fn is_fusable_memory_bound(name: &str) -> bool {
    if name.starts_with("triton") {
        return false;
    }
    let l = lower(name);
    [
        "elementwise_kernel",
        "vectorized_elementwise",
        "unrolled_elementwise",
        "reduce_kernel",
        "catarraybatchedcopy",
        "copy_kernel",
        "direct_copy",
        "fill_kernel",
        "fillfunctor",
        "index_elementwise",
        "indexing_backward",
        "scatter_gather",
        "layer_norm_kernel",
        "vectorized_layer_norm",
        "batch_norm_collect",
        "batch_norm_transform",
        "dropout",
    ]
    .iter()
    .any(|m| l.contains(m))
}

/// Names of fp32 SIMT GEMM/convolution kernels (no tensor cores): cuBLAS `sgemm`/`gemv`, and cuDNN
/// convolutions in single precision (`volta_scudnn_*`, `implicit_convolve_sgemm`,
/// `dgrad_engine<float, …>`, `wgrad_alg0_engine<float, …>`, Winograd `<float, float>`).
pub fn is_fp32_simt_gemm(name: &str) -> bool {
    let l = lower(name);
    let tensor = [
        "tensorop", "s1688", "s16816", "h884", "h1688", "h16816", "hmma", "xmma", "wgmma", "bf16",
        "f16", "tf32", "i8816", "imma", "s884",
    ];
    let gemm = l.contains("sgemm")
        || l.contains("gemm_fp32")
        || l.contains("gemmsn")
        || l.contains("gemv2t")
        || l.contains("gemvx");
    let on_tensor_cores = crate::analysis::names::kernel_precision(name)
        .is_some_and(|p| p != crate::analysis::names::KernelPrecision::Fp32);
    (gemm || is_fp32_convolution(&l)) && !tensor.iter().any(|t| l.contains(t)) && !on_tensor_cores
}

/// A cuDNN convolution kernel in single precision (`l` lower case).
fn is_fp32_convolution(l: &str) -> bool {
    let conv = ["dgrad", "wgrad", "convolve", "winograd", "fprop", "scudnn"]
        .iter()
        .any(|c| l.contains(c));
    conv && (l.contains("scudnn") || l.contains("<float"))
}

/// Whether a kernel is a convolution (for the wording of the fp32 finding).
pub fn is_convolution_kernel(name: &str) -> bool {
    let l = lower(name);
    [
        "dgrad", "wgrad", "convolve", "winograd", "fprop", "scudnn", "conv",
    ]
    .iter()
    .any(|c| l.contains(c))
}

/// The GPU generation the kernel names say, when it has no TF32 (Volta, Turing or older): cuBLAS and
/// cuDNN name their kernels after it (`volta_sgemm_…`, `turing_scudnn_…`).
pub fn generation_without_tf32<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> Option<&'static str> {
    for n in names {
        let l = lower(n);
        for (prefix, gpu) in [
            ("volta_", "This Volta GPU (V100)"),
            ("turing_", "This Turing GPU (T4, RTX 20)"),
            ("maxwell_", "This Maxwell GPU"),
            ("pascal_", "This Pascal GPU (P100, P40)"),
            ("kepler_", "This Kepler GPU"),
        ] {
            if l.starts_with(prefix) || l.contains(&format!(" {prefix}")) {
                return Some(gpu);
            }
        }
    }
    None
}

/// Counts the CPU-side attention ops inside the window and the most frequent softmax input shape.
pub fn attention_ops(t: &TraceTable, inside: &dyn Fn(usize) -> bool, out: &mut AttentionFigures) {
    let dict = t.name_dictionary();
    // 1 = softmax, 2 = batched matmul.
    let class: Vec<u8> = (0..dict.len())
        .map(|i| match dict.value(i) {
            "aten::softmax" | "aten::_softmax" => 1,
            "aten::bmm" | "aten::baddbmm" => 2,
            _ => 0,
        })
        .collect();
    if !class.iter().any(|c| *c != 0) {
        return;
    }
    let dims = t.arg("Input Dims");
    let mut shapes: BTreeMap<String, u64> = BTreeMap::new();
    for row in 0..t.len() {
        let c = class[t.name_id(row) as usize];
        if c == 0 || t.kind_at(row) != EventKind::CpuOp || !inside(row) {
            continue;
        }
        if c == 2 {
            out.bmm_ops += 1;
            continue;
        }
        out.softmax_ops += 1;
        if let Some(p) = dims.and_then(|d| d.find(row)) {
            let text = dims.map(|d| d.json_at(p).to_string()).unwrap_or_default();
            *shapes.entry(text).or_insert(0) += 1;
        }
    }
    if let Some((shape, n)) = shapes
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
    {
        let total = out.softmax_shape.as_ref().map_or(0, |s| s.1);
        if n > total {
            out.softmax_shape = Some((shape, n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_softmax_kernel("void (anonymous namespace)::softmax_warp_forward<float, float, float, 9, false, false>(float*, const float*, int, int, int, const bool*, int, bool)"));
        assert!(!is_softmax_kernel(
            "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128>>"
        ));
        assert!(is_fused_attention_kernel(
            "fmha_cutlassF_f16_aligned_64x64_rf_sm80"
        ));
        assert!(is_fusable_memory_bound(
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>"
        ));
        assert!(!is_fusable_memory_bound("triton_poi_fused_add_mul_0"));
        assert!(is_fp32_simt_gemm("volta_sgemm_128x64_nn"));
        assert!(is_fp32_simt_gemm("volta_scudnn_128x64_relu_interior_nn_v1"));
        assert!(is_fp32_simt_gemm(
            "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int)"
        ));
        assert!(!is_fp32_simt_gemm(
            "volta_h884cudnn_256x128_ldg8_dgrad_exp_small_nhwc_tn_v1"
        ));
        assert!(!is_fp32_simt_gemm(
            "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float)"
        ));
        assert_eq!(
            generation_without_tf32(["gemm", "volta_sgemm_128x64_nn"]),
            Some("This Volta GPU (V100)")
        );
        assert_eq!(generation_without_tf32(["ampere_sgemm_128x64_nn"]), None);
        assert!(!is_fp32_simt_gemm("ampere_s16816gemm_bf16_128x128_ldg8"));
    }
}
