//! The roofline: scenario traces built in code whose FLOPs, bytes and rates are worked out here by
//! hand (GEMM, convolution forward and backward, causal GQA attention, element-wise bytes, host
//! copies, Inductor's args, MFU per step), missing shapes reported as such, the device table and its
//! fallback; then real traces.

use crate::common;

use crate::common::TraceBuilder;
use profile_model::analysis::all::AnalysisOptions;
use profile_model::analysis::roofline::device::{device_roof, DeviceProps};
use profile_model::analysis::roofline::{
    roofline, Bound, Dtype, LinkKind, MissingReason, OpFamily, RankRoofline, RoofSource,
};
use profile_model::table::{load_bytes, TraceSet};
use serde_json::{json, Value};

fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 1e-9 * b.abs().max(1e-12),
        "{what}: got {a}, expected {b}"
    );
}

fn set_of(b: &TraceBuilder) -> TraceSet {
    TraceSet::from_tables(vec![b.table("t.json")])
}

fn rank_of(b: &TraceBuilder) -> RankRoofline {
    roofline(&set_of(b), &AnalysisOptions::default())
        .ranks
        .remove(0)
}

/// An operator at `ts` (10 µs long) launching one kernel of `dur` µs at `ts + 100`.
fn op_with_kernel(b: &mut TraceBuilder, op: &str, args: Value, kernel: &str, ts: f64, dur: f64) {
    b.cpu_op_args(op, ts, 10.0, args);
    b.kernel(kernel, 7, ts + 1.0, 5.0, ts + 100.0, dur);
}

fn kernel<'a>(
    r: &'a RankRoofline,
    name: &str,
) -> &'a profile_model::analysis::roofline::KernelRoofline {
    r.kernels
        .iter()
        .find(|k| k.name == name)
        .unwrap_or_else(|| {
            panic!(
                "kernel {name} not in {:?}",
                r.kernels.iter().map(|k| &k.name).collect::<Vec<_>>()
            )
        })
}

#[test]
fn gemm_of_known_shape_at_known_time_gives_its_exact_tflops() {
    let mut b = TraceBuilder::new();
    op_with_kernel(
        &mut b,
        "aten::mm",
        json!({"Input Dims": [[4096, 8192], [8192, 2048]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}),
        "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32",
        0.0,
        1000.0,
    );
    let r = rank_of(&b);
    let k = kernel(
        &r,
        "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32",
    );
    let flops = 2.0 * 4096.0 * 8192.0 * 2048.0;
    let bytes = 2.0 * (4096.0 * 8192.0 + 8192.0 * 2048.0 + 4096.0 * 2048.0);
    close(k.judged.flops, flops, "flops");
    close(k.judged.bytes, bytes, "bytes");
    // 1000 µs.
    close(k.judged.tflops, flops / 1e-3 / 1e12, "tflops");
    close(k.judged.intensity.unwrap(), flops / bytes, "intensity");
    // A100 80GB: 312 TFLOP/s bf16, 2039 GB/s; intensity 1170 > ridge 153: compute-bound at 312.
    assert_eq!(k.judged.bound, Some(Bound::Compute));
    close(k.judged.roof_tflops.unwrap(), 312.0, "roof");
    close(
        k.judged.pct_of_roof.unwrap(),
        100.0 * flops / 1e-3 / 1e12 / 312.0,
        "pct",
    );
    assert_eq!(k.family, Some(OpFamily::Gemm));
    assert_eq!(k.judged.dtype, Some(Dtype::Bf16));
    assert_eq!(r.roof.source, RoofSource::Datasheet);
    assert_eq!(r.operators[0].name, "aten::mm");
    close(
        r.operators[0].judged.tflops,
        flops / 1e-3 / 1e12,
        "operator tflops",
    );
}

#[test]
fn linear_bmm_and_matmul_shapes() {
    let mut b = TraceBuilder::new();
    // addmm under linear: the innermost operator (addmm) launched it.
    b.cpu_op_args(
        "aten::linear",
        0.0,
        50.0,
        json!({"Input Dims": [[8, 512, 1024], [4096, 1024], [4096]], "Input type": ["float", "float", "float"]}),
    );
    op_with_kernel(
        &mut b,
        "aten::addmm",
        json!({"Input Dims": [[4096], [4096, 1024], [1024, 4096], [], []], "Input type": ["float", "float", "float", "Scalar", "Scalar"]}),
        "ampere_sgemm_128x64_tn",
        1.0,
        2000.0,
    );
    op_with_kernel(
        &mut b,
        "aten::bmm",
        json!({"Input Dims": [[16, 128, 64], [16, 64, 256]], "Input type": ["c10::Half", "c10::Half"]}),
        "bmm_kernel",
        5000.0,
        10.0,
    );
    op_with_kernel(
        &mut b,
        "aten::matmul",
        json!({"Input Dims": [[4, 1, 32, 64], [3, 64, 16]], "Input type": ["c10::Half", "c10::Half"]}),
        "matmul_kernel",
        9000.0,
        10.0,
    );
    let r = rank_of(&b);
    let k = kernel(&r, "ampere_sgemm_128x64_tn");
    close(
        k.judged.flops,
        2.0 * 4096.0 * 1024.0 * 4096.0,
        "addmm flops",
    );
    // fp32 on the CUDA cores: judged against fp32's 19.5 TFLOP/s.
    assert_eq!(k.judged.dtype, Some(Dtype::Fp32));
    close(k.judged.roof_tflops.unwrap(), 19.5, "fp32 roof");
    let k = kernel(&r, "bmm_kernel");
    assert_eq!(k.family, Some(OpFamily::BatchedGemm));
    close(
        k.judged.flops,
        2.0 * 16.0 * 128.0 * 64.0 * 256.0,
        "bmm flops",
    );
    // Batch dims [4, 1] and [3] broadcast to [4, 3].
    let k = kernel(&r, "matmul_kernel");
    close(
        k.judged.flops,
        2.0 * 12.0 * 32.0 * 64.0 * 16.0,
        "matmul flops",
    );
}

#[test]
fn tf32_from_the_kernel_name() {
    let mut b = TraceBuilder::new();
    op_with_kernel(
        &mut b,
        "aten::mm",
        json!({"Input Dims": [[1024, 1024], [1024, 1024]], "Input type": ["float", "float"]}),
        "sm80_xmma_gemm_tf32f32_tf32f32_f32_nn_n",
        0.0,
        100.0,
    );
    let r = rank_of(&b);
    let k = kernel(&r, "sm80_xmma_gemm_tf32f32_tf32f32_f32_nn_n");
    assert_eq!(k.judged.dtype, Some(Dtype::Tf32));
    close(k.judged.roof_tflops.unwrap(), 156.0, "tf32 roof");
}

fn conv_args() -> Value {
    json!({
        "Input Dims": [[32, 64, 56, 56], [128, 64, 3, 3], [], [], [], [], [], [], []],
        "Input type": ["c10::Half", "c10::Half", "ScalarList", "ScalarList", "ScalarList", "Scalar", "Scalar", "Scalar", "Scalar"],
        "Concrete Inputs": ["", "", "[1, 1]", "[2, 2]", "[1, 1]", "1", "False", "False", "True"]
    })
}

#[test]
fn convolution_forward_and_backward() {
    let mut b = TraceBuilder::new();
    op_with_kernel(
        &mut b,
        "aten::cudnn_convolution",
        conv_args(),
        "implicit_gemm_fwd",
        0.0,
        500.0,
    );
    op_with_kernel(
        &mut b,
        "aten::convolution_backward",
        json!({
            "Input Dims": [[32, 128, 28, 28], [32, 64, 56, 56], [128, 64, 3, 3], [], [], [], [], [], [], [], []],
            "Input type": ["c10::Half", "c10::Half", "c10::Half", "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar", "ScalarList"],
            "Concrete Inputs": ["", "", "", "[128]", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "[True, True, False]"]
        }),
        "dgrad_wgrad_kernel",
        1000.0,
        900.0,
    );
    let r = rank_of(&b);
    // Output 28×28 ((56 + 2 - 2 - 1) / 2 + 1).
    let pass = 2.0 * 32.0 * 28.0 * 28.0 * (128.0 * 64.0 * 9.0);
    let k = kernel(&r, "implicit_gemm_fwd");
    assert_eq!(k.family, Some(OpFamily::Convolution));
    close(k.judged.flops, pass, "conv fwd flops");
    let bytes = 2.0 * (32.0 * 64.0 * 56.0 * 56.0 + 128.0 * 64.0 * 9.0 + 32.0 * 128.0 * 28.0 * 28.0);
    close(k.judged.bytes, bytes, "conv fwd bytes");
    let k = kernel(&r, "dgrad_wgrad_kernel");
    assert_eq!(k.family, Some(OpFamily::ConvolutionBackward));
    close(k.judged.flops, 2.0 * pass, "dgrad + wgrad flops");
}

#[test]
fn causal_gqa_attention_through_the_internal_op() {
    let mut b = TraceBuilder::new();
    let (bs, hq, hkv, s, d) = (2.0, 32.0, 8.0, 1024.0, 128.0);
    b.cpu_op_args(
        "aten::_scaled_dot_product_flash_attention",
        0.0,
        50.0,
        json!({
            "Input Dims": [[2, 32, 1024, 128], [2, 8, 1024, 128], [2, 8, 1024, 128], [], [], [], []],
            "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar", "Scalar", ""],
            "Concrete Inputs": ["", "", "", "0.", "True", "False", ""]
        }),
    );
    // The kernel's launching op is the internal one (no model): its parent gives the figures.
    op_with_kernel(
        &mut b,
        "aten::_flash_attention_forward",
        json!({"Input Dims": [[2, 1024, 32, 128]], "Input type": ["c10::BFloat16"]}),
        "flash_fwd_kernel",
        1.0,
        400.0,
    );
    let r = rank_of(&b);
    let k = kernel(&r, "flash_fwd_kernel");
    assert_eq!(k.family, Some(OpFamily::Attention));
    assert_eq!(
        k.operator.as_deref(),
        Some("aten::_scaled_dot_product_flash_attention")
    );
    let pairs = s * (s + 1.0) / 2.0;
    close(
        k.judged.flops,
        2.0 * bs * hq * pairs * (d + d),
        "attention flops",
    );
    let q = bs * hq * s * d;
    let kv = bs * hkv * s * d;
    close(k.judged.bytes, 2.0 * (q + 2.0 * kv + q), "attention bytes");
}

#[test]
fn elementwise_bytes_split_by_duration() {
    let mut b = TraceBuilder::new();
    b.cpu_op_args(
        "aten::add",
        0.0,
        20.0,
        json!({"Input Dims": [[1024, 1024], [1024], []], "Input type": ["float", "float", "Scalar"]}),
    );
    b.kernel(
        "vectorized_elementwise_kernel<add>",
        7,
        1.0,
        2.0,
        100.0,
        30.0,
    );
    b.kernel(
        "vectorized_elementwise_kernel<add_tail>",
        7,
        5.0,
        2.0,
        200.0,
        70.0,
    );
    let r = rank_of(&b);
    // Reads 4 MiB + 4 KiB, writes the broadcast 4 MiB output.
    let bytes = 4.0 * (1024.0 * 1024.0 + 1024.0 + 1024.0 * 1024.0);
    let a = kernel(&r, "vectorized_elementwise_kernel<add>");
    close(a.judged.bytes, bytes * 0.3, "first kernel's share");
    let c = kernel(&r, "vectorized_elementwise_kernel<add_tail>");
    close(c.judged.bytes, bytes * 0.7, "second kernel's share");
    close(a.judged.gbps, bytes / 100e-6 / 1e9, "same rate as the op");
    assert_eq!(a.judged.bound, Some(Bound::Memory));
    close(
        a.judged.pct_of_roof.unwrap(),
        100.0 * (bytes / 100e-6 / 1e9) / 2039.0,
        "pct of memory roof",
    );
    assert_eq!(r.operators[0].judged.bound, Some(Bound::Memory));
}

#[test]
fn missing_shapes_are_reported_never_guessed() {
    let mut b = TraceBuilder::new();
    // No Input Dims (record_shapes off).
    b.cpu_op("aten::mm", 0.0, 10.0);
    b.kernel("gemm_no_shapes", 7, 1.0, 2.0, 100.0, 10.0);
    // A convolution without Concrete Inputs: its stride is unknown.
    op_with_kernel(
        &mut b,
        "aten::cudnn_convolution",
        json!({"Input Dims": [[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], []], "Input type": ["float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar"]}),
        "conv_no_stride",
        500.0,
        10.0,
    );
    op_with_kernel(
        &mut b,
        "mylib::custom",
        json!({"Input Dims": [[4]], "Input type": ["float"]}),
        "custom_kernel",
        1000.0,
        10.0,
    );
    // Mismatched inner dimensions.
    op_with_kernel(
        &mut b,
        "aten::mm",
        json!({"Input Dims": [[4, 5], [6, 7]], "Input type": ["float", "float"]}),
        "gemm_bad",
        1500.0,
        10.0,
    );
    // A kernel no operator launched.
    b.kernel("orphan_kernel", 7, 3000.0, 2.0, 3100.0, 10.0);
    let r = rank_of(&b);
    let reason = |n: &str| kernel(&r, n).missing;
    assert_eq!(reason("gemm_no_shapes"), Some(MissingReason::NoShapes));
    assert_eq!(
        reason("conv_no_stride"),
        Some(MissingReason::NoConcreteInputs)
    );
    assert_eq!(reason("custom_kernel"), Some(MissingReason::UnmodelledOp));
    assert_eq!(reason("gemm_bad"), Some(MissingReason::ShapeMismatch));
    assert_eq!(reason("orphan_kernel"), Some(MissingReason::NoOperator));
    for n in [
        "gemm_no_shapes",
        "conv_no_stride",
        "custom_kernel",
        "gemm_bad",
        "orphan_kernel",
    ] {
        let k = kernel(&r, n);
        assert_eq!(k.calls_with_figures, 0, "{n}");
        assert_eq!(k.judged.flops, 0.0, "{n}");
        assert_eq!(k.judged.pct_of_roof, None, "{n}");
    }
    assert_eq!(r.flops, 0.0);
    assert_eq!(r.time_with_figures_us, 0.0);
    assert_eq!(r.missing.iter().map(|m| m.kernels).sum::<u64>(), 5);
}

#[test]
fn host_copy_against_the_link_and_device_copy_against_memory() {
    let mut b = TraceBuilder::new();
    let mib64 = 64 * 1024 * 1024;
    b.memcpy(
        "Memcpy HtoD (Pageable -> Device)",
        mib64,
        7,
        0.0,
        5.0,
        10.0,
        10_000.0,
    );
    b.memcpy(
        "Memcpy DtoD (Device -> Device)",
        mib64,
        7,
        20_000.0,
        5.0,
        20_010.0,
        100.0,
    );
    let r = rank_of(&b);
    let h = kernel(&r, "Memcpy HtoD (Pageable -> Device)");
    assert_eq!(h.judged.bound, Some(Bound::HostLink));
    let link = 16.0 * 128.0 / 130.0 * 16.0 / 8.0; // PCIe 4.0 x16
    close(h.judged.roof_gbps.unwrap(), link, "link");
    close(
        h.judged.pct_of_roof.unwrap(),
        100.0 * (mib64 as f64 / 1e-2 / 1e9) / link,
        "link share",
    );
    let d = kernel(&r, "Memcpy DtoD (Device -> Device)");
    // Read and written.
    close(d.judged.bytes, 2.0 * mib64 as f64, "dtod bytes");
    assert_eq!(d.judged.bound, Some(Bound::Memory));
}

#[test]
fn inductor_args_and_mfu_per_step() {
    let mut b = TraceBuilder::new();
    b.step(1, 0.0, 10_000.0);
    op_with_kernel(
        &mut b,
        "triton_poi_fused_add_0",
        json!({"kernel_flop": 1_000_000_000i64, "kernel_num_gb": 0.5}),
        "triton_poi_fused_add_0",
        10.0,
        1000.0,
    );
    op_with_kernel(
        &mut b,
        "aten::mm",
        json!({"Input Dims": [[4096, 4096], [4096, 4096]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}),
        "gemm",
        100.0,
        1000.0,
    );
    let r = rank_of(&b);
    let k = kernel(&r, "triton_poi_fused_add_0");
    assert_eq!(k.family, Some(OpFamily::Inductor));
    close(k.judged.flops, 1e9, "kernel_flop");
    close(k.judged.bytes, 0.5e9, "kernel_num_gb");
    assert_eq!(r.steps.len(), 1);
    let s = &r.steps[0];
    let flops = 1e9 + 2.0 * 4096f64.powi(3);
    close(s.flops, flops, "step flops");
    assert_eq!(s.dtype, Some(Dtype::Bf16));
    close(
        s.mfu_pct.unwrap(),
        100.0 * flops / 10e-3 / 1e12 / 312.0,
        "mfu",
    );
}

fn props(name: &str, arch: Option<(u64, u64)>, sms: Option<u64>, warp: u64) -> DeviceProps {
    let mut d = json!({"id": 0, "name": name, "warpSize": warp});
    if let Some((a, b)) = arch {
        d["computeMajor"] = json!(a);
        d["computeMinor"] = json!(b);
    }
    if let Some(n) = sms {
        d["numSms"] = json!(n);
    }
    let top = json!({"deviceProperties": [d]});
    DeviceProps::of(top.as_object().unwrap())
}

#[test]
fn device_table_by_name() {
    let named = |n: &str| device_roof(&props(n, None, None, 32));
    let cases: [(&str, &str, f64, f64); 16] = [
        ("Tesla V100-SXM2-16GB", "V100 SXM2", 125.0, 900.0),
        ("Tesla T4", "T4", 65.0, 320.0),
        ("NVIDIA A10", "A10", 125.0, 600.0),
        ("NVIDIA A10G", "A10G", 70.0, 600.0),
        ("NVIDIA L4", "L4", 121.0, 300.0),
        ("NVIDIA L40S", "L40S", 362.05, 864.0),
        ("NVIDIA A100-SXM4-40GB", "A100 SXM4 40GB", 312.0, 1555.0),
        ("NVIDIA A100 80GB PCIe", "A100 PCIe 80GB", 312.0, 1935.0),
        ("NVIDIA H100 80GB HBM3", "H100 SXM", 989.5, 3350.0),
        ("NVIDIA H100 PCIe", "H100 PCIe", 756.0, 2000.0),
        ("NVIDIA H200", "H200", 989.5, 4800.0),
        ("NVIDIA GH200 480GB", "GH200", 990.0, 4000.0),
        ("NVIDIA B200", "B200", 2250.0, 8000.0),
        ("NVIDIA GeForce RTX 4090", "RTX 4090", 165.2, 1008.0),
        ("AMD Instinct MI300X", "MI300X", 1307.4, 5300.0),
        ("AMD Instinct MI325X", "MI325X", 1307.4, 6000.0),
    ];
    for (name, device, fp16, mem) in cases {
        let r = named(name);
        assert_eq!(r.device.as_deref(), Some(device), "{name}");
        assert_eq!(r.source, RoofSource::Datasheet, "{name}");
        close(r.peaks.fp16, fp16, name);
        close(r.memory_gbps, mem, name);
    }
    assert_eq!(
        named("NVIDIA GH200 480GB").host_link.unwrap().kind,
        LinkKind::NvlinkC2c
    );
    assert_eq!(
        named("NVIDIA H100 80GB HBM3").host_link.unwrap().generation,
        5
    );
    // No bf16 before Ampere, no fp8 before Ada/Hopper.
    assert_eq!(named("Tesla T4").peaks.bf16, None);
    assert_eq!(named("NVIDIA A100-SXM4-80GB").peaks.fp8, None);
    assert_eq!(named("NVIDIA H100 80GB HBM3").peaks.fp8, Some(1979.0));
}

#[test]
fn unknown_device_falls_back_to_an_estimate_by_sm_count() {
    // An Ampere (8.0) part with half an A100's SMs: half its peaks, said to be an estimate.
    let r = device_roof(&props("NVIDIA A100X-custom", Some((8, 0)), Some(54), 32));
    assert_eq!(r.source, RoofSource::SmCountEstimate);
    close(r.peaks.bf16.unwrap(), 156.0, "scaled bf16");
    assert!(r.note.contains("estimate"), "{}", r.note);
    // ROCm's generic name for an MI200 die (gfx90a, 104 CUs).
    let r = device_roof(&props("AMD Radeon Graphics", Some((9, 0)), Some(104), 64));
    assert_eq!(r.source, RoofSource::SmCountEstimate);
    close(r.peaks.fp16, 181.0, "MI200 die fp16");
    // Nothing known: no roof, figures still given.
    let r = device_roof(&props("Mystery Accelerator", None, None, 32));
    assert_eq!(r.source, RoofSource::Unknown);
    assert_eq!(r.peaks.of(Dtype::Bf16), None);

    // Through a whole trace: the rank's roof is the estimate and the GEMM is judged against it.
    let mut b = TraceBuilder::new();
    op_with_kernel(
        &mut b,
        "aten::mm",
        json!({"Input Dims": [[1024, 1024], [1024, 1024]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}),
        "gemm",
        0.0,
        100.0,
    );
    let mut top: Value = serde_json::from_str(&b.json()).unwrap();
    top["deviceProperties"] = json!([{"id": 0, "name": "NVIDIA A100X-custom", "computeMajor": 8, "computeMinor": 0, "numSms": 54}]);
    let t = load_bytes("t.json", top.to_string().as_bytes()).unwrap();
    let r = roofline(&TraceSet::from_tables(vec![t]), &AnalysisOptions::default())
        .ranks
        .remove(0);
    assert_eq!(r.roof.source, RoofSource::SmCountEstimate);
    close(
        kernel(&r, "gemm").judged.roof_tflops.unwrap(),
        156.0,
        "estimated roof",
    );
    assert!(r.notes.iter().any(|n| n.contains("estimate")));
}

#[test]
fn real_traces_with_record_shapes() {
    let path = common::trace("hta__negative_queue_length__rank0.json.gz");
    if !path.exists() {
        eprintln!("skipped: {} is absent", path.display());
        return;
    }
    let set = TraceSet::single(profile_model::table::load_path(&path).expect("loads"));
    let r = roofline(&set, &AnalysisOptions::default()).ranks.remove(0);
    assert_eq!(r.roof.device.as_deref(), Some("A100 SXM4 80GB"));
    assert!(r.has_shapes);
    assert!(r.time_with_figures_us > 0.0 && r.time_with_figures_us <= r.device_time_us);
    // Element-wise and reduction kernels are memory-bound at the intensity of their operators.
    for k in r
        .kernels
        .iter()
        .filter(|k| k.calls_with_figures > 0 && k.judged.flops > 0.0)
    {
        if matches!(k.family, Some(OpFamily::Elementwise | OpFamily::Reduction)) {
            assert_eq!(k.judged.bound, Some(Bound::Memory), "{}", k.name);
        }
        let p = k.judged.pct_of_roof.unwrap_or(0.0);
        assert!(p.is_finite() && p >= 0.0, "{}: {p}", k.name);
    }
    let path = common::trace("hta__amd_mi250_minitoy_train.json.gz");
    let set = TraceSet::single(profile_model::table::load_path(&path).expect("loads"));
    let r = roofline(&set, &AnalysisOptions::default()).ranks.remove(0);
    assert_eq!(r.roof.source, RoofSource::SmCountEstimate);
    let gemms: Vec<_> = r
        .kernels
        .iter()
        .filter(|k| k.name.starts_with("Cijk_"))
        .collect();
    assert_eq!(gemms.len(), 2);
    for g in gemms {
        assert_eq!(g.family, Some(OpFamily::Gemm), "{}", g.name);
        assert!(g.judged.flops > 0.0);
    }
}

#[test]
fn every_real_trace_gives_a_roofline_without_failing() {
    for f in common::kineto_trace_files() {
        let Ok(set) = profile_model::table::load_path(&f).map(TraceSet::single) else {
            continue;
        };
        let res = roofline(&set, &AnalysisOptions::default());
        for r in &res.ranks {
            assert!(
                r.time_with_figures_us <= r.device_time_us + 1e-6,
                "{}",
                f.display()
            );
            let missing: f64 = r.missing.iter().map(|m| m.time_us).sum();
            assert!(
                (missing + r.time_with_figures_us - r.device_time_us).abs()
                    < 1e-3 * r.device_time_us.max(1.0),
                "{}: time with and without figures adds up",
                f.display()
            );
            serde_json::to_string(r).expect("serialises");
        }
    }
}

// The diagnosis ------------------------------------------------------------------------------------

use profile_model::report::bottleneck::BottleneckKind;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::{Finding, FindingId};

fn roof_finding(r: &DiagnosisReport) -> &Finding {
    r.findings
        .iter()
        .find(|f| f.id == FindingId::FarUnderRoof)
        .unwrap_or_else(|| panic!("no far_under_roof finding in\n{}", r.to_markdown()))
}

/// `n` steps of one op launching one kernel of `dur` µs, back to back (the GPU always busy).
fn steps_of(op: &str, args: Value, kernel: &str, dur: f64, n: usize) -> TraceBuilder {
    let mut b = TraceBuilder::new();
    b.step(0, 0.0, (n as f64 + 1.0) * dur + 100.0);
    for i in 0..n {
        let h = 10.0 + 5.0 * i as f64;
        b.cpu_op_args(op, h, 4.0, args.clone());
        b.kernel(kernel, 7, h + 1.0, 2.0, 50.0 + dur * i as f64, dur);
    }
    // A second kernel: one kernel alone is a micro-benchmark, which the dominant-kernel note covers.
    b.kernel("small_helper_kernel", 8, 1.0, 2.0, 20.0, 5.0);
    b
}

#[test]
fn a_naive_gemm_far_under_the_roof_is_named_with_its_efficiency_and_the_library_call() {
    // 2·1024³ FLOPs in 2 ms each: 1.07 TFLOP/s against the A100's 312 TFLOP/s bf16.
    let b = steps_of(
        "aten::mm",
        json!({"Input Dims": [[1024, 1024], [1024, 1024]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}),
        "my_naive_matmul_kernel",
        2000.0,
        10,
    );
    let r = diagnose(&set_of(&b));
    let f = roof_finding(&r);
    let tflops = 2.0 * 1024f64.powi(3) / 2e-3 / 1e12;
    let pct = 100.0 * tflops / 312.0;
    assert!(
        f.headline.contains(&format!("{tflops:.2} TFLOP/s"))
            && f.headline.contains("A100 SXM4 80GB's 312 TFLOP/s bf16"),
        "{}",
        f.headline
    );
    close(f.value, pct, "% of roof");
    assert!(
        f.actions_markdown("\n").contains("library"),
        "{:?}",
        f.actions
    );
    // At 50% of the roof it would take pct/50 of its time: the rest is recoverable.
    let time = 10.0 * 2000e3;
    let expected = (time * (1.0 - pct / 50.0)) as i64;
    assert!(
        (f.impact.time_ns - expected).abs() <= 10,
        "{} vs {expected}",
        f.impact.time_ns
    );
    assert_eq!(r.bottleneck.as_ref().unwrap().kind, BottleneckKind::Compute);
}

#[test]
fn fp32_gemm_on_tensor_core_hardware_gets_tf32_or_bf16_advice() {
    // A CUTLASS fp32 SIMT kernel the name rules do not call SIMT: only its figures show the waste.
    let b = steps_of(
        "aten::mm",
        json!({"Input Dims": [[4096, 4096], [4096, 4096]], "Input type": ["float", "float"]}),
        "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::gemm::threadblock::MmaPipelined<float, Simt>>>",
        100_000.0,
        5,
    );
    let r = diagnose(&set_of(&b));
    let f = roof_finding(&r);
    let advice = f.actions_markdown("\n");
    assert!(
        advice.contains("allow_tf32") && advice.contains("bfloat16"),
        "{advice}"
    );
    // 2·4096³ / 100 ms = 1.37 TFLOP/s: nothing shows TF32 (no tf32/xmma/tensorop in the name), so
    // it is judged against fp32's 19.5 TFLOP/s (7.0%), and TF32's 156 TFLOP/s is the way up.
    close(
        f.value,
        100.0 * (2.0 * 4096f64.powi(3) / 100e-3 / 1e12) / 19.5,
        "% of the fp32 roof",
    );
    assert!(
        f.headline.contains("in fp32")
            && f.headline.contains("19.5 TFLOP/s fp32 roof")
            && f.headline
                .contains("TF32 tensor cores, when enabled, reach 156 TFLOP/s"),
        "{}",
        f.headline
    );
    // The same work at 30 ms is 23.5% of the fp32 roof: not far under it (TF32 is not assumed).
    let b = steps_of(
        "aten::mm",
        json!({"Input Dims": [[4096, 4096], [4096, 4096]], "Input type": ["float", "float"]}),
        "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::gemm::threadblock::MmaPipelined<float, Simt>>>",
        30_000.0,
        5,
    );
    let r = diagnose(&set_of(&b));
    assert!(
        r.findings.iter().all(|f| f.id != FindingId::FarUnderRoof),
        "{}",
        r.to_markdown()
    );
}

#[test]
fn memory_bound_by_intensity_not_by_name() {
    // A kernel with a GEMM-like name doing element-wise work at 5% of the memory bandwidth: the
    // bottleneck follows from its intensity.
    let b = steps_of(
        "aten::add",
        json!({"Input Dims": [[1024, 1024], [1024, 1024], []], "Input type": ["float", "float", "Scalar"]}),
        "gemm_like_named_kernel",
        120.0,
        40,
    );
    let r = diagnose(&set_of(&b));
    let f = roof_finding(&r);
    assert!(f.explanation.contains("memory-bound"), "{}", f.explanation);
    assert_eq!(r.bottleneck.as_ref().unwrap().kind, BottleneckKind::Memory);
}

#[test]
fn a_well_used_kernel_is_not_a_finding() {
    // 2·4096³ bf16 FLOPs in 0.6 ms: 229 TFLOP/s, 73% of the roof.
    let b = steps_of(
        "aten::mm",
        json!({"Input Dims": [[4096, 4096], [4096, 4096]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}),
        "sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n",
        600.0,
        20,
    );
    let r = diagnose(&set_of(&b));
    assert!(
        !r.findings.iter().any(|f| f.id == FindingId::FarUnderRoof),
        "{}",
        r.to_markdown()
    );
}

#[test]
fn a_slow_host_copy_is_judged_against_the_link() {
    let mut b = TraceBuilder::new();
    b.step(0, 0.0, 100_000.0);
    // 4 pinned copies of 16 MiB at 2 GB/s each (a PCIe 4.0 x16 link gives 31.5), with kernels
    // running beside them so the copies are not "exposed".
    for i in 0..4 {
        let t = 100.0 + 20_000.0 * i as f64;
        b.memcpy(
            "Memcpy HtoD (Pinned -> Device)",
            16 << 20,
            8,
            t - 50.0,
            5.0,
            t,
            16.0 * 1.048576 * 1e6 / 2e3,
        );
        b.cpu_op_args(
            "aten::mm",
            t - 40.0,
            4.0,
            json!({"Input Dims": [[4096, 4096], [4096, 4096]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}),
        );
        // 14 GEMMs of 600 µs (229 TFLOP/s, well used) cover the 8.4 ms copy.
        for g in 0..14 {
            b.kernel(
                "sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n",
                7,
                t - 39.0 + g as f64 * 0.1,
                0.05,
                t + 600.0 * g as f64,
                600.0,
            );
        }
    }
    b.kernel("small_helper_kernel", 9, 1.0, 2.0, 20.0, 5.0);
    let r = diagnose(&set_of(&b));
    let f = roof_finding(&r);
    assert!(
        f.headline.contains("host copy") && f.headline.contains("host link"),
        "{}",
        f.headline
    );
    close(
        f.value,
        100.0 * 2.0 / (16.0 * 128.0 / 130.0 * 16.0 / 8.0),
        "% of the link",
    );
    assert!(
        f.actions_markdown("\n").contains("Overlap"),
        "{:?}",
        f.actions
    );
}

#[test]
fn one_kernel_alone_gets_its_efficiency_in_the_dominant_kernel_note() {
    let mut b = TraceBuilder::new();
    b.step(0, 0.0, 25_000.0);
    for i in 0..10 {
        let h = 10.0 + 5.0 * i as f64;
        b.cpu_op_args(
            "aten::mm",
            h,
            4.0,
            json!({"Input Dims": [[1024, 1024], [1024, 1024]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}),
        );
        b.kernel(
            "my_naive_matmul_kernel",
            7,
            h + 1.0,
            2.0,
            100.0 + 2000.0 * i as f64,
            2000.0,
        );
    }
    let r = diagnose(&set_of(&b));
    assert!(
        !r.findings.iter().any(|f| f.id == FindingId::FarUnderRoof),
        "{}",
        r.to_markdown()
    );
    let d = r
        .findings
        .iter()
        .find(|f| f.id == FindingId::DominantKernel)
        .expect("dominant kernel");
    let tflops = 2.0 * 1024f64.powi(3) / 2e-3 / 1e12;
    assert!(
        d.actions
            .iter()
            .any(|a| a.contains(&format!("{tflops:.2} TFLOP/s")) && a.contains("312 TFLOP/s bf16")),
        "{:?}",
        d.actions
    );
}

#[test]
fn the_page_block_shows_each_kernel_as_a_point() {
    use profile_model::analysis::all::analyze;
    use profile_model::page::analyses_view::analyses_model;
    let mut b = TraceBuilder::new();
    op_with_kernel(
        &mut b,
        "aten::mm",
        json!({"Input Dims": [[2048, 2048], [2048, 2048]], "Input type": ["c10::Half", "c10::Half"]}),
        "gemm_fp16",
        0.0,
        250.0,
    );
    let all = analyze(&set_of(&b), &AnalysisOptions::default());
    let model = analyses_model(&all, None);
    let figs = model.figures();
    let of = |metric: &str| {
        figs.iter()
            .find(|f| {
                f.metric == metric
                    && f.context
                        .iter()
                        .any(|(k, v)| *k == "kernel" && v == "gemm_fp16")
            })
            .unwrap_or_else(|| panic!("no {metric}"))
            .value
    };
    let flops = 2.0 * 2048f64.powi(3);
    let bytes = 3.0 * 2048.0 * 2048.0 * 2.0;
    close(
        of("roofline-tflops"),
        flops / 250e-6 / 1e12,
        "point: achieved",
    );
    close(of("roofline-intensity"), flops / bytes, "point: intensity");
    let peak = figs
        .iter()
        .find(|f| {
            f.metric == "roofline-peak-tflops"
                && f.context.iter().any(|(k, v)| *k == "dtype" && v == "fp16")
        })
        .expect("the roof's fp16 peak");
    close(peak.value, 312.0, "roof");
}

/// The chart of a GEMM and an element-wise add: each point at its kernel's figures on log axes, area
/// by time, under the roof of its type (memory slope then ceiling, bending at peak / bandwidth).
#[test]
fn roofline_chart_places_each_kernel_under_the_roof_of_its_type() {
    use profile_model::page::roofline_chart::{
        roofline_chart, BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH,
    };
    const GEMM: &str = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32";
    let mut b = TraceBuilder::new();
    op_with_kernel(
        &mut b,
        "aten::mm",
        json!({"Input Dims": [[4096, 8192], [8192, 2048]], "Input type": ["c10::BFloat16", "c10::BFloat16"]}),
        GEMM,
        0.0,
        1000.0,
    );
    op_with_kernel(
        &mut b,
        "aten::add",
        json!({"Input Dims": [[1024, 1024], [1024, 1024]], "Input type": ["float", "float"]}),
        "vectorized_elementwise_kernel<add>",
        5000.0,
        40.0,
    );
    let r = rank_of(&b);
    let chart = roofline_chart(&r).expect("two kernels with figures");
    assert_eq!(chart.points.len(), 2);
    assert_eq!(chart.left_out, 0);
    // Longest first, the largest circle.
    let (g, a) = (&chart.points[0], &chart.points[1]);
    assert_eq!(g.kernel, GEMM);
    let flops = 2.0 * 4096.0 * 8192.0 * 2048.0;
    let bytes = 2.0 * (4096.0 * 8192.0 + 8192.0 * 2048.0 + 4096.0 * 2048.0);
    close(g.tflops, flops / 1e-3 / 1e12, "GEMM TFLOP/s");
    close(g.intensity, flops / bytes, "GEMM intensity");
    assert_eq!(g.r, 12.0, "the longest kernel has the largest radius");
    close(a.r, 3.0 + 9.0 * (40.0f64 / 1000.0).sqrt(), "area by time");
    // Log placement: a decade is the same width wherever it is.
    let (x, y) = (chart.x_axis, chart.y_axis);
    let decade_w = (WIDTH - LEFT - RIGHT) / f64::from(x.hi - x.lo);
    let decade_h = (HEIGHT - TOP - BOTTOM) / f64::from(y.hi - y.lo);
    close(
        g.x - a.x,
        decade_w * (g.intensity / a.intensity).log10(),
        "x by log10 intensity",
    );
    close(
        a.y - g.y,
        decade_h * (g.tflops / a.tflops).log10(),
        "y by log10 TFLOP/s",
    );
    for p in &chart.points {
        assert!(p.x >= LEFT && p.x <= WIDTH - RIGHT && p.y >= TOP && p.y <= HEIGHT - BOTTOM);
        assert_eq!(
            p.query.names,
            vec![p.kernel.clone()],
            "linked to its events"
        );
        assert!(p.title().contains(&p.kernel));
    }
    // A100 80GB (the builder's device): bf16 312 and fp32 19.5 TFLOP/s over 2039 GB/s.
    let mut dtypes: Vec<Dtype> = chart.roofs.iter().map(|r| r.dtype).collect();
    dtypes.sort();
    assert_eq!(
        dtypes,
        vec![Dtype::Fp32, Dtype::Bf16],
        "the types the kernels use"
    );
    for roof in &chart.roofs {
        let peak = if roof.dtype == Dtype::Bf16 {
            312.0
        } else {
            19.5
        };
        close(roof.peak_tflops, peak, "peak");
        close(roof.ridge, peak * 1e3 / 2039.0, "ridge");
        // Ceiling flat to the right edge; the bend one decade-fraction left of it at the ridge.
        let n = roof.points.len();
        assert_eq!(roof.points[n - 1].1, roof.points[n - 2].1);
        close(roof.points[n - 1].0, WIDTH - RIGHT, "to the right edge");
        close(
            roof.points[n - 1].0 - roof.points[n - 2].0,
            decade_w * (x.max() / roof.ridge).log10(),
            "bend at the ridge",
        );
        // The memory slope: one decade right, one decade up.
        let (p0, p1) = (roof.points[0], roof.points[1]);
        close(
            (p0.1 - p1.1) / decade_h,
            (p1.0 - p0.0) / decade_w,
            "slope 1 on log-log",
        );
    }
    // Every kernel under the roof of its type.
    for p in &chart.points {
        let roof = chart
            .roofs
            .iter()
            .find(|r| Some(r.dtype) == p.dtype)
            .unwrap();
        let at = p.intensity.min(roof.ridge) * 2039.0 / 1e3;
        assert!(p.tflops <= at * (1.0 + 1e-9), "{} over its roof", p.kernel);
    }
}

/// The peer link collectives cross: NVLink on SXM / HGX parts (per direction: half the datasheet's
/// both-ways figure), Infinity Fabric on MI300X, PCIe on parts without (RTX 4090, L40S, an A100
/// PCIe whose bridge is optional), none for a device not in the table.
#[test]
fn peer_link_by_device() {
    use profile_model::analysis::roofline::PeerLinkKind;
    let named = |n: &str| device_roof(&props(n, None, None, 32)).peer_link;
    let cases: [(&str, PeerLinkKind, f64); 7] = [
        ("Tesla V100-SXM2-16GB", PeerLinkKind::Nvlink, 150.0),
        ("NVIDIA A100-SXM4-80GB", PeerLinkKind::Nvlink, 300.0),
        ("NVIDIA H100 80GB HBM3", PeerLinkKind::Nvlink, 450.0),
        ("NVIDIA B200", PeerLinkKind::Nvlink, 900.0),
        ("AMD Instinct MI300X", PeerLinkKind::InfinityFabric, 448.0),
        // PCIe 4.0 x16 per direction.
        ("NVIDIA GeForce RTX 4090", PeerLinkKind::Pcie, 31.5),
        ("NVIDIA L40S", PeerLinkKind::Pcie, 31.5),
    ];
    for (name, kind, gbps) in cases {
        let l = named(name).unwrap_or_else(|| panic!("{name}: no peer link"));
        assert_eq!(l.kind, kind, "{name}");
        assert!((l.gbps - gbps).abs() < 0.01, "{name}: {}", l.gbps);
    }
    assert_eq!(
        named("NVIDIA A100 80GB PCIe").map(|l| l.kind),
        Some(PeerLinkKind::Pcie)
    );
    assert!(!named("NVIDIA GeForce RTX 4090")
        .unwrap()
        .label()
        .replace("no NVLink", "")
        .contains("NVLink"));
    // Estimated from SM count: the links are not known.
    assert_eq!(
        device_roof(&props("NVIDIA Future GPU", Some((8, 0)), Some(100), 32)).peer_link,
        None
    );
}

/// A device is matched by its whole model name: a laptop part, a Ti, an NVL or SXM form factor, a
/// memory size are other devices than the row of the same number. The RTX 30/40 laptop parts have
/// their own rows (per-SM rates × SMs × NVIDIA's highest boost clock); a device not in the table is
/// estimated from its SM count and says so, with no memory bandwidth borrowed from another device.
#[test]
fn devices_are_matched_by_their_whole_name() {
    let named = |n: &str| device_roof(&props(n, None, None, 32));
    // 58 SMs × 2,280 MHz × 512 fp16 FLOP per clock per SM; 192-bit GDDR6 at 18 Gbps.
    let r = named("NVIDIA GeForce RTX 4080 Laptop GPU");
    assert_eq!(r.device.as_deref(), Some("RTX 4080 Laptop"));
    assert_eq!(r.source, RoofSource::Datasheet);
    assert!((r.peaks.fp16 - 58.0 * 2280.0 * 512.0 / 1e6).abs() < 0.01);
    assert!((r.peaks.fp32 - 58.0 * 2280.0 * 256.0 / 1e6).abs() < 0.01);
    close(r.memory_gbps, 432.0, "4080 laptop memory");
    assert_eq!(
        named("NVIDIA GeForce RTX 3060 Laptop GPU")
            .device
            .as_deref(),
        Some("RTX 3060 Laptop")
    );
    assert_eq!(
        named("NVIDIA GeForce RTX 3080 Ti Laptop GPU")
            .device
            .as_deref(),
        Some("RTX 3080 Ti Laptop")
    );
    assert_eq!(
        named("NVIDIA GeForce RTX 4090 Laptop GPU")
            .device
            .as_deref(),
        Some("RTX 4090 Laptop")
    );
    assert_eq!(
        named("NVIDIA GeForce RTX 4070 Max-Q").device.as_deref(),
        Some("RTX 4070 Laptop")
    );
    // Variants that are not the row of their number: no datasheet, and no name alone to estimate.
    for n in [
        "NVIDIA GeForce RTX 3090 Ti",
        "NVIDIA GeForce RTX 4090 D",
        "NVIDIA H200 NVL",
        "NVIDIA GeForce RTX 2080",
    ] {
        let r = named(n);
        assert_eq!(r.source, RoofSource::Unknown, "{n}: {:?}", r.device);
    }
    // The rows of one model told apart by form factor and memory size still match.
    assert_eq!(
        named("NVIDIA A100-PCIE-40GB").device.as_deref(),
        Some("A100 PCIe 40GB")
    );
    assert_eq!(
        named("NVIDIA A100-SXM4-80GB").device.as_deref(),
        Some("A100 SXM4 80GB")
    );
    assert_eq!(
        named("Tesla V100-PCIE-32GB").device.as_deref(),
        Some("V100 PCIe")
    );
    // A desktop RTX 4080 is not in the table: estimated from its 76 SMs with the Ada per-SM rates
    // (fp16 512 FLOP per clock per SM at the RTX 4090's 2,520 MHz), memory bandwidth unknown.
    let r = device_roof(&props(
        "NVIDIA GeForce RTX 4080",
        Some((8, 9)),
        Some(76),
        32,
    ));
    assert_eq!(r.source, RoofSource::SmCountEstimate);
    assert!(
        (r.peaks.fp16 - 76.0 * 2520.0 * 512.0 / 1e6).abs() < 0.1,
        "{}",
        r.peaks.fp16
    );
    assert_eq!(r.memory_gbps, 0.0);
    assert_eq!(r.ridge(Dtype::Fp16), None);
    assert!(r.host_link.is_none());
    assert!(r.note.contains("estimated"), "{}", r.note);
    assert!(r.note.contains("memory bandwidth unknown"), "{}", r.note);
}
