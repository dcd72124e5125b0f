//! The FLOP/byte model: what one operator call computes and moves, from its `record_shapes` args.
//! GEMMs count 2·M·N·K per product; convolutions 2·N·(output positions)·(weight elements) per pass;
//! attention 2·B·Hq·(Sq·Sk kept pairs)·(D + Dv), backward 2.5× that; element-wise one FLOP per output
//! element, reductions one per input element, copies none. Bytes are each tensor read once plus each
//! output written once (a lower bound: caches and re-reads are not modelled). Reductions count the
//! bytes they read. Nothing is guessed: a missing shape or flag is a [`MissingReason`].

use super::args::{Input, OpArgs};
use super::kinds::{Dtype, MissingReason, OpFamily};

/// What one operator call computes and moves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Work {
    pub family: OpFamily,
    pub flops: f64,
    pub bytes: f64,
    /// The element type the arithmetic runs in (the first tensor's).
    pub dtype: Option<Dtype>,
}

/// The operator's name without its namespace (`aten::addmm` → `addmm`).
fn short(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

/// Which family an operator name belongs to, when the model knows it.
pub fn family_of(name: &str) -> Option<OpFamily> {
    let n = short(name);
    let base = n.trim_end_matches('_');
    Some(match n {
        "mm" | "addmm" | "_addmm_activation" | "_scaled_mm" | "linear" => OpFamily::Gemm,
        "bmm" | "baddbmm" | "matmul" => OpFamily::BatchedGemm,
        "convolution"
        | "_convolution"
        | "conv1d"
        | "conv2d"
        | "conv3d"
        | "cudnn_convolution"
        | "miopen_convolution"
        | "cudnn_convolution_transpose"
        | "miopen_convolution_transpose"
        | "conv_transpose1d"
        | "conv_transpose2d"
        | "conv_transpose3d" => OpFamily::Convolution,
        "convolution_backward" => OpFamily::ConvolutionBackward,
        "scaled_dot_product_attention"
        | "_scaled_dot_product_flash_attention"
        | "_scaled_dot_product_efficient_attention"
        | "_scaled_dot_product_cudnn_attention" => OpFamily::Attention,
        "_scaled_dot_product_flash_attention_backward"
        | "_scaled_dot_product_efficient_attention_backward"
        | "_scaled_dot_product_cudnn_attention_backward" => OpFamily::AttentionBackward,
        "copy_" | "_to_copy" | "clone" | "contiguous" | "fill_" | "zero_" => OpFamily::Copy,
        _ if ELEMENTWISE.contains(&base) => OpFamily::Elementwise,
        _ if REDUCTIONS.contains(&base) || NORMS.contains(&base) => OpFamily::Reduction,
        _ => return None,
    })
}

/// Element-wise operators (in-place `_` forms included by stripping the suffix).
const ELEMENTWISE: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "rsub",
    "neg",
    "abs",
    "exp",
    "exp2",
    "log",
    "log2",
    "log1p",
    "sqrt",
    "rsqrt",
    "pow",
    "relu",
    "gelu",
    "silu",
    "sigmoid",
    "tanh",
    "threshold",
    "threshold_backward",
    "gelu_backward",
    "silu_backward",
    "sigmoid_backward",
    "tanh_backward",
    "where",
    "clamp",
    "clamp_min",
    "clamp_max",
    "maximum",
    "minimum",
    "addcmul",
    "addcdiv",
    "lerp",
    "masked_fill",
    "sin",
    "cos",
    "reciprocal",
    "sign",
    "eq",
    "ne",
    "lt",
    "gt",
    "le",
    "ge",
    "logical_not",
    "hardtanh",
    "leaky_relu",
    "elu",
    "softplus",
    "mish",
    "hardswish",
    "hardsigmoid",
    "erf",
    "native_dropout",
    "native_dropout_backward",
    "square",
    "floor",
    "ceil",
    "round",
];

/// Reductions: their output is small, so their bytes are the bytes they read.
const REDUCTIONS: &[&str] = &[
    "sum",
    "mean",
    "amax",
    "amin",
    "max",
    "min",
    "prod",
    "norm",
    "linalg_vector_norm",
    "var",
    "std",
    "var_mean",
    "std_mean",
    "argmax",
    "argmin",
    "logsumexp",
    "nll_loss_forward",
    "mse_loss",
];

/// Normalisations and softmax: their output is the size of their first input.
const NORMS: &[&str] = &[
    "softmax",
    "_softmax",
    "log_softmax",
    "_log_softmax",
    "_softmax_backward_data",
    "_log_softmax_backward_data",
    "native_layer_norm",
    "native_layer_norm_backward",
    "native_group_norm",
    "native_group_norm_backward",
    "native_batch_norm",
    "native_batch_norm_backward",
    "cudnn_batch_norm",
    "cudnn_batch_norm_backward",
    "miopen_batch_norm",
    "_fused_rms_norm",
    "rms_norm",
    "cumsum",
];

/// Whether the model may look past an operator to the one above it: PyTorch's internal ops
/// (`aten::_flash_attention_forward` under `aten::_scaled_dot_product_flash_attention`).
pub fn is_internal(name: &str) -> bool {
    short(name).starts_with('_') && family_of(name).is_none()
}

/// The work of one call of operator `name` with args `a`.
pub fn work_of(name: &str, a: &OpArgs) -> Result<Work, MissingReason> {
    let family = family_of(name).ok_or(MissingReason::UnmodelledOp)?;
    let n = short(name);
    match family {
        OpFamily::Gemm | OpFamily::BatchedGemm => gemm(n, a),
        OpFamily::Convolution => conv(n, a),
        OpFamily::ConvolutionBackward => conv_backward(a),
        OpFamily::Attention | OpFamily::AttentionBackward => attention(n, family, a),
        OpFamily::Elementwise => Ok(elementwise(n, a)),
        OpFamily::Reduction => Ok(reduction(n, a)),
        OpFamily::Copy => copy(n, a),
        OpFamily::Inductor => Err(MissingReason::UnmodelledOp),
    }
}

fn tensor(a: &OpArgs, i: usize) -> Result<&Input, MissingReason> {
    a.get(i)
        .filter(|t| t.is_tensor())
        .ok_or(MissingReason::ShapeMismatch)
}

fn bytes_of(ts: &[&Input]) -> f64 {
    ts.iter().map(|t| t.bytes(0) as f64).sum()
}

/// A PyTorch `ScalarType` code (`Concrete Inputs` of a dtype argument) as an element size.
fn scalar_type_bytes(code: i64) -> Option<u64> {
    Some(match code {
        0 | 1 | 11 | 12 | 13 => 1,
        2 | 5 | 15 => 2,
        3 | 6 => 4,
        4 | 7 | 9 => 8,
        23..=26 => 1,
        _ => return None,
    })
}

/// `mm`, `addmm`, `bmm`, `baddbmm`, `matmul`, `linear`, `_scaled_mm`.
fn gemm(n: &str, a: &OpArgs) -> Result<Work, MissingReason> {
    let (ai, bi) = match n {
        "addmm" | "_addmm_activation" | "baddbmm" => (1, 2),
        _ => (0, 1),
    };
    let x = tensor(a, ai)?;
    let w = tensor(a, bi)?;
    let (batch, m, k, nn) = match n {
        "linear" => {
            // x[..., K] · W[N, K]ᵀ
            let (&k, lead) = x.dims.split_last().ok_or(MissingReason::ShapeMismatch)?;
            let [nw, kw] = w.dims[..] else {
                return Err(MissingReason::ShapeMismatch);
            };
            if kw != k {
                return Err(MissingReason::ShapeMismatch);
            }
            (1, lead.iter().product::<i64>(), k, nw)
        }
        _ => matmul_dims(&x.dims, &w.dims).ok_or(MissingReason::ShapeMismatch)?,
    };
    let flops = 2.0 * batch as f64 * m as f64 * n_f(k) * n_f(nn);
    let elem = x.dtype.map_or(0, Dtype::bytes);
    let out_elem = if n == "_scaled_mm" {
        a.get(6)
            .and_then(Input::ints)
            .and_then(|v| v.first().copied())
            .and_then(scalar_type_bytes)
            .unwrap_or(2)
    } else {
        elem
    };
    let mut ins = vec![x, w];
    if let Ok(c) = tensor(a, if ai == 1 { 0 } else { 2 }) {
        ins.push(c); // bias (addmm's self, linear's bias)
    }
    let out = batch as f64 * m as f64 * n_f(nn) * out_elem as f64;
    Ok(Work {
        family: if batch > 1 {
            OpFamily::BatchedGemm
        } else {
            OpFamily::Gemm
        },
        flops,
        bytes: bytes_of(&ins) + out,
        dtype: x.dtype,
    })
}

fn n_f(v: i64) -> f64 {
    v as f64
}

/// (batch, M, K, N) of a matrix product with `torch.matmul`'s rules (1-D operands, broadcast batch).
pub fn matmul_dims(a: &[i64], b: &[i64]) -> Option<(i64, i64, i64, i64)> {
    let (m, k, a_batch) = match a.len() {
        0 => return None,
        1 => (1, a[0], &[][..]),
        l => (a[l - 2], a[l - 1], &a[..l - 2]),
    };
    let (kb, n, b_batch) = match b.len() {
        0 => return None,
        1 => (b[0], 1, &[][..]),
        l => (b[l - 2], b[l - 1], &b[..l - 2]),
    };
    if k != kb {
        return None;
    }
    let batch = broadcast(a_batch, b_batch)?.iter().product::<i64>();
    Some((batch, m, k, n))
}

/// The broadcast of two shapes (aligned right), `None` when they do not broadcast.
fn broadcast(a: &[i64], b: &[i64]) -> Option<Vec<i64>> {
    let n = a.len().max(b.len());
    let at = |s: &[i64], i: usize| {
        let off = n - s.len();
        if i < off {
            1
        } else {
            s[i - off]
        }
    };
    (0..n)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y => Some(x),
            (1, y) => Some(y),
            (x, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// Positions of (stride, padding, dilation, transposed) in a convolution op's arguments.
fn conv_params(n: &str) -> (usize, usize, usize, Option<usize>) {
    match n {
        "convolution" | "_convolution" => (3, 4, 5, Some(6)),
        "conv1d" | "conv2d" | "conv3d" => (3, 4, 5, None),
        "cudnn_convolution" => (3, 2, 4, None),
        "miopen_convolution" => (4, 3, 5, None),
        // Transposed forms: their FLOPs need no stride.
        _ => (usize::MAX, usize::MAX, usize::MAX, None),
    }
}

/// A per-dimension parameter broadcast to `n` spatial dimensions.
fn per_dim(v: Vec<i64>, n: usize) -> Option<Vec<i64>> {
    match v.len() {
        1 => Some(vec![v[0]; n]),
        l if l == n => Some(v),
        _ => None,
    }
}

/// Convolution forward: 2·N·(output positions)·(weight elements); transposed: input positions.
fn conv(n: &str, a: &OpArgs) -> Result<Work, MissingReason> {
    let x = tensor(a, 0)?;
    let w = tensor(a, 1)?;
    if x.dims.len() < 3 || w.dims.len() != x.dims.len() {
        return Err(MissingReason::ShapeMismatch);
    }
    let spatial = x.dims.len() - 2;
    let (si, pi, di, ti) = conv_params(n);
    let transposed = n.contains("transpose")
        || match ti {
            Some(i) => a
                .get(i)
                .and_then(Input::flag)
                .ok_or(MissingReason::NoConcreteInputs)?,
            None => false,
        };
    let batch = x.dims[0] as f64;
    let wnumel = w.numel() as f64;
    let (positions, out_channels) = if transposed {
        // Weight [Cin, Cout/g, k...]: every input position meets every weight element once.
        let pos: f64 = x.dims[2..].iter().map(|&d| d as f64).product();
        // Output size needs stride etc.; count the output as the input's positions × Cout/g·g ≈ not
        // known without groups, so the output bytes are left out (a lower bound).
        (pos, None)
    } else {
        let out = conv_out(a, &x.dims[2..], &w.dims[2..], (si, pi, di), spatial)?;
        (
            out.iter().map(|&d| d as f64).product(),
            Some(w.dims[0] as f64),
        )
    };
    let flops = 2.0 * batch * positions * wnumel;
    let elem = x.dtype.map_or(0, Dtype::bytes) as f64;
    let mut ins = vec![x, w];
    if let Ok(b) = tensor(a, 2) {
        ins.push(b);
    }
    let out = out_channels.map_or(0.0, |c| batch * c * positions * elem);
    Ok(Work {
        family: OpFamily::Convolution,
        flops,
        bytes: bytes_of(&ins) + out,
        dtype: x.dtype,
    })
}

/// Output spatial sizes of a convolution from stride, padding and dilation (`Concrete Inputs`).
fn conv_out(
    a: &OpArgs,
    input: &[i64],
    kernel: &[i64],
    (si, pi, di): (usize, usize, usize),
    spatial: usize,
) -> Result<Vec<i64>, MissingReason> {
    if !a.has_concrete {
        return Err(MissingReason::NoConcreteInputs);
    }
    let ints = |i: usize| {
        a.get(i)
            .and_then(Input::ints)
            .and_then(|v| per_dim(v, spatial))
            .ok_or(MissingReason::NoConcreteInputs)
    };
    let stride = ints(si)?;
    let dilation = ints(di)?;
    let pad_text = a
        .get(pi)
        .map(|p| p.concrete.trim().trim_matches('\'').to_string());
    let out = match pad_text.as_deref() {
        Some("same") => input.to_vec(),
        Some("valid") => (0..spatial)
            .map(|i| (input[i] - dilation[i] * (kernel[i] - 1) - 1) / stride[i] + 1)
            .collect(),
        _ => {
            let pad = ints(pi)?;
            (0..spatial)
                .map(|i| {
                    (input[i] + 2 * pad[i] - dilation[i] * (kernel[i] - 1) - 1)
                        .div_euclid(stride[i].max(1))
                        + 1
                })
                .collect()
        }
    };
    if out.iter().any(|&d| d <= 0) {
        return Err(MissingReason::ShapeMismatch);
    }
    Ok(out)
}

/// `convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation,
/// transposed, output_padding, groups, output_mask)`: each of the input gradient (dgrad) and the
/// weight gradient (wgrad) it computes costs what the forward did.
fn conv_backward(a: &OpArgs) -> Result<Work, MissingReason> {
    let go = tensor(a, 0)?;
    let x = tensor(a, 1)?;
    let w = tensor(a, 2)?;
    if go.dims.len() < 3 || x.dims.len() != go.dims.len() || w.dims.len() != go.dims.len() {
        return Err(MissingReason::ShapeMismatch);
    }
    let transposed = a
        .get(7)
        .and_then(Input::flag)
        .ok_or(MissingReason::NoConcreteInputs)?;
    let mask = a
        .get(10)
        .and_then(Input::flags)
        .filter(|m| m.len() == 3)
        .ok_or(MissingReason::NoConcreteInputs)?;
    let small = if transposed { x } else { go };
    let positions: f64 = small.dims[2..].iter().map(|&d| d as f64).product();
    let pass = 2.0 * go.dims[0] as f64 * positions * w.numel() as f64;
    let passes = f64::from(u8::from(mask[0]) + u8::from(mask[1]));
    let written = if mask[0] { x.bytes(0) as f64 } else { 0.0 }
        + if mask[1] { w.bytes(0) as f64 } else { 0.0 };
    Ok(Work {
        family: OpFamily::ConvolutionBackward,
        flops: pass * passes,
        bytes: bytes_of(&[go, x, w]) + written,
        dtype: x.dtype,
    })
}

/// Positions of (query, is_causal) in the attention ops' arguments.
fn attention_params(n: &str) -> (usize, usize) {
    match n {
        "scaled_dot_product_attention" => (0, 5),
        "_scaled_dot_product_flash_attention" => (0, 4),
        "_scaled_dot_product_efficient_attention" | "_scaled_dot_product_cudnn_attention" => (0, 6),
        "_scaled_dot_product_flash_attention_backward"
        | "_scaled_dot_product_efficient_attention_backward" => (1, 11),
        _ => (1, 14), // _scaled_dot_product_cudnn_attention_backward
    }
}

/// Query/key pairs a causal mask keeps (top-left aligned, as `is_causal` in SDPA): row i keeps
/// min(i + 1, Sk) keys.
pub fn causal_pairs(sq: i64, sk: i64) -> f64 {
    let (sq, sk) = (sq as f64, sk as f64);
    if sq <= sk {
        sq * (sq + 1.0) / 2.0
    } else {
        sk * (sk + 1.0) / 2.0 + (sq - sk) * sk
    }
}

/// Fused attention over q[B, Hq, Sq, D], k[B, Hkv, Sk, D], v[B, Hkv, Sk, Dv] (GQA: Hkv < Hq).
fn attention(n: &str, family: OpFamily, a: &OpArgs) -> Result<Work, MissingReason> {
    let (qi, ci) = attention_params(n);
    let q = tensor(a, qi)?;
    let k = tensor(a, qi + 1)?;
    let v = tensor(a, qi + 2)?;
    let (&[b, hq, sq, d], &[bk, hk, sk, dk], &[_, hv, skv, dv]) =
        (&q.dims[..], &k.dims[..], &v.dims[..])
    else {
        return Err(MissingReason::ShapeMismatch);
    };
    if b != bk || d != dk || sk != skv || hk != hv || hk == 0 || hq % hk != 0 {
        return Err(MissingReason::ShapeMismatch);
    }
    let causal = a
        .get(ci)
        .and_then(Input::flag)
        .ok_or(MissingReason::NoConcreteInputs)?;
    let pairs = if causal {
        causal_pairs(sq, sk)
    } else {
        sq as f64 * sk as f64
    };
    let forward = 2.0 * b as f64 * hq as f64 * pairs * (d + dv) as f64;
    let out = b as f64 * hq as f64 * sq as f64 * dv as f64 * q.dtype.map_or(0, Dtype::bytes) as f64;
    let qkv = bytes_of(&[q, k, v]);
    let (flops, bytes) = if family == OpFamily::AttentionBackward {
        // Recompute QKᵀ, then dV, dP, dQ, dK: five products where the forward has two. Reads q, k,
        // v, out and its gradient; writes dq, dk, dv.
        (2.5 * forward, 2.0 * qkv + 2.0 * out)
    } else {
        (forward, qkv + out)
    };
    Ok(Work {
        family,
        flops,
        bytes,
        dtype: q.dtype,
    })
}

/// How many arguments an element-wise operator's schema has before its `out=` tensors (which
/// `record_shapes` lists as inputs): a tensor at or past this position is written, not read.
fn schema_args(base: &str) -> usize {
    match base {
        "addcmul" | "addcdiv" => 4,
        "add"
        | "sub"
        | "rsub"
        | "where"
        | "lerp"
        | "masked_fill"
        | "clamp"
        | "threshold_backward"
        | "gelu_backward"
        | "native_dropout_backward" => 3,
        "mul" | "div" | "maximum" | "minimum" | "pow" | "eq" | "ne" | "lt" | "gt" | "le" | "ge"
        | "clamp_min" | "clamp_max" | "silu_backward" | "sigmoid_backward" | "tanh_backward" => 2,
        _ => 1,
    }
}

/// Element-wise: reads its tensor arguments, writes the broadcast output (its `out=` tensors when
/// given; its first argument when in place); one FLOP per output element.
fn elementwise(n: &str, a: &OpArgs) -> Work {
    let base = n.trim_end_matches('_');
    let in_place = n.ends_with('_') && !n.starts_with('_');
    let args = schema_args(base);
    let is_tensor = |(_, t): &(usize, &Input)| t.is_tensor();
    let reads: Vec<&Input> = a
        .inputs
        .iter()
        .enumerate()
        .filter(is_tensor)
        .filter(|(i, _)| *i < args)
        .map(|(_, t)| t)
        .collect();
    let outs: Vec<&Input> = a
        .inputs
        .iter()
        .enumerate()
        .filter(is_tensor)
        .filter(|(i, _)| *i >= args)
        .map(|(_, t)| t)
        .collect();
    let shape = reads
        .iter()
        .try_fold(Vec::new(), |s, t| broadcast(&s, &t.dims))
        .unwrap_or_else(|| reads.first().map(|t| t.dims.clone()).unwrap_or_default());
    let numel: f64 = if reads.is_empty() {
        0.0
    } else {
        shape.iter().map(|&d| d.max(0) as f64).product()
    };
    let comparison = matches!(base, "eq" | "ne" | "lt" | "gt" | "le" | "ge");
    let elem = if comparison {
        1
    } else {
        a.first_dtype().map_or(0, Dtype::bytes)
    } as f64;
    let written = if !outs.is_empty() {
        bytes_of(&outs)
    } else if in_place {
        reads.first().map_or(0.0, |t| t.bytes(0) as f64)
    } else {
        numel * elem
    };
    Work {
        family: OpFamily::Elementwise,
        flops: numel,
        bytes: bytes_of(&reads) + written,
        dtype: a.first_dtype(),
    }
}

/// Reductions read their inputs (one FLOP per element of the first); normalisations also write an
/// output the size of their first input.
fn reduction(n: &str, a: &OpArgs) -> Work {
    let tensors: Vec<&Input> = a.inputs.iter().filter(|t| t.is_tensor()).collect();
    let first = tensors.first().map_or(0.0, |t| t.numel() as f64);
    let written = if NORMS.contains(&n) {
        tensors.first().map_or(0.0, |t| t.bytes(0) as f64)
    } else {
        0.0
    };
    Work {
        family: OpFamily::Reduction,
        flops: first,
        bytes: bytes_of(&tensors) + written,
        dtype: a.first_dtype(),
    }
}

/// Copies and fills: `copy_(dst, src)` reads src and writes dst; `_to_copy`/`clone`/`contiguous`
/// read and write their input (in the target type when `_to_copy`'s dtype is given); fills write.
fn copy(n: &str, a: &OpArgs) -> Result<Work, MissingReason> {
    let x = tensor(a, 0)?;
    let bytes = match n {
        "copy_" => x.bytes(0) as f64 + tensor(a, 1)?.bytes(0) as f64,
        "fill_" | "zero_" => x.bytes(0) as f64,
        "_to_copy" => {
            let out_elem = a
                .get(1)
                .and_then(Input::ints)
                .and_then(|v| v.first().copied())
                .and_then(scalar_type_bytes)
                .unwrap_or(x.dtype.map_or(0, Dtype::bytes));
            x.bytes(0) as f64 + (x.numel() * out_elem) as f64
        }
        _ => 2.0 * x.bytes(0) as f64,
    };
    Ok(Work {
        family: OpFamily::Copy,
        flops: 0.0,
        bytes,
        dtype: x.dtype,
    })
}
