//! Diagnosis scenarios of the device side (issue 30), each built in code: device memory events
//! are device evidence, CUDA-graph replays are steady state (only the capture is set-up), kernel
//! counts say what was replayed, and TF32 advice reads the kernels.

use crate::common;
use crate::common::TraceBuilder;
use profile_model::report::context::TraceHolds;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::FindingId;
use profile_model::table::{load_bytes, TraceSet};
use profile_model::trace::dialect::DeviceKind;
use serde_json::{json, Value};

fn report_of(v: &Value) -> DiagnosisReport {
    let t = load_bytes("device_side.json", v.to_string().as_bytes()).expect("loads");
    let r = diagnose(&TraceSet::single(t));
    common::assert_report_invariants(&r, "device side");
    r
}

/// The builder's trace as JSON, to add events it does not write.
fn json_of(b: &TraceBuilder) -> Value {
    serde_json::from_str(&b.json()).expect("builder JSON")
}

/// A `[memory]` instant as Kineto writes it (`profile_memory=True`).
fn memory_event(ts: f64, bytes: i64, total: i64, device_type: i64, device_id: i64) -> Value {
    json!({
        "ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
        "pid": common::HOST_PID, "tid": common::HOST_TID, "ts": ts,
        "args": {"Total Reserved": 2 * total.max(1), "Total Allocated": total, "Bytes": bytes,
                 "Addr": 1000 + ts as i64, "Device Type": device_type, "Device Id": device_id}
    })
}

/// Operators on the host and allocations of `device_type`, no kernel, copy or launch: a run
/// recorded with the CPU activity only (and `profile_memory=True`).
fn ops_with_memory(device_type: i64) -> Value {
    let mut b = TraceBuilder::new();
    for i in 0..6 {
        let t = 1000.0 * i as f64;
        b.cpu_op("aten::linear", t, 800.0);
        b.cpu_op("aten::addmm", t + 100.0, 600.0);
    }
    let mut v = json_of(&b);
    // No `deviceProperties`: the allocations alone say where the tensors lived.
    v.as_object_mut()
        .expect("object")
        .remove("deviceProperties");
    let events = v["traceEvents"].as_array_mut().expect("events");
    let mut total = 0;
    for i in 0..6 {
        let t = 1000.0 * i as f64 + 150.0;
        total += 4 << 20;
        events.push(memory_event(t, 4 << 20, total, device_type, 0));
        total -= 4 << 20;
        events.push(memory_event(t + 500.0, -(4 << 20), total, device_type, 0));
    }
    v
}

#[test]
fn allocations_on_a_gpu_make_a_gpu_run_whose_kernels_were_not_recorded() {
    let r = report_of(&ops_with_memory(1));
    assert!(
        !r.context.holds(TraceHolds::CpuOnly),
        "{:?}",
        r.context.holds
    );
    assert!(r.context.holds(TraceHolds::NoKernelEvents));
    assert_eq!(r.context.device.kind, DeviceKind::Cuda);
    assert_eq!(r.main_finding_id, Some(FindingId::NoKernelEvents));
    let md = r.to_markdown();
    assert!(!md.contains("CPU-only"), "{md}");
    assert!(!md.contains("ran on the CPU"), "{md}");
    assert!(!md.contains("kernel launch calls"), "{md}");
    // 12 memory events on device 0, peak 4 MiB allocated.
    assert!(md.contains("12 memory events"), "{md}");
    assert!(md.contains("ProfilerActivity.CUDA"), "{md}");
}

#[test]
fn allocations_on_the_cpu_leave_a_cpu_only_run() {
    let r = report_of(&ops_with_memory(0));
    assert!(
        r.context.holds(TraceHolds::CpuOnly),
        "{:?}",
        r.context.holds
    );
    assert_eq!(r.context.device.kind, DeviceKind::Cpu);
}

/// A compiled model replayed as a CUDA graph: step 1 compiles (`compile_fx_inner`), captures and
/// instantiates the graph; steps 2-7 replay it, each under `compile_fx.py`'s `run` wrapper (the
/// runtime of compiled code, with a cudagraph trees frame inside). The replays are the steady
/// state: only step 1 is set-up.
fn compiled_graph_replays() -> TraceBuilder {
    let mut b = TraceBuilder::new();
    b.step(1, 0.0, 3000.0);
    b.event(
        "python_function",
        "torch/_inductor/compile_fx.py(415): compile_fx_inner",
        10.0,
        1500.0,
    );
    b.runtime("cudaStreamBeginCapture", 1600.0, 10.0);
    b.runtime("cudaLaunchKernel", 1650.0, 5.0);
    b.runtime("cudaStreamEndCapture", 1700.0, 10.0);
    b.runtime("cudaGraphInstantiateWithFlags", 1750.0, 1000.0);
    for s in 2..=7 {
        let t0 = 3000.0 + (s - 2) as f64 * 1000.0;
        b.step(s, t0, 1000.0);
        b.event(
            "python_function",
            "torch/_inductor/compile_fx.py(1104): run",
            t0 + 5.0,
            990.0,
        );
        b.event(
            "python_function",
            "torch/_inductor/cudagraph_trees.py(1942): run",
            t0 + 10.0,
            980.0,
        );
        let kernels: Vec<(&str, f64, f64)> = (0..8)
            .map(|k| {
                (
                    "triton_poi_fused_add_0",
                    t0 + 50.0 + 110.0 * k as f64,
                    100.0,
                )
            })
            .collect();
        b.graph_launch(7, t0 + 20.0, 15.0, &kernels);
    }
    b
}

#[test]
fn graph_replays_under_compiled_wrappers_are_the_steady_state() {
    let r = report_of(&json_of(&compiled_graph_replays()));
    assert!(
        !r.context.holds(TraceHolds::WarmupOnly),
        "{:?}",
        r.context.holds
    );
    assert!(
        r.context.holds(TraceHolds::SteadyState),
        "{:?}",
        r.context.holds
    );
    assert!(r.context.holds(TraceHolds::GraphReplay));
    // Step 1 (compile, capture, instantiate) is the warm-up; the six replay steps are analysed.
    assert_eq!(r.context.steps, Some((2, 7)));
    assert_eq!(
        r.context.warmup.as_ref().map(|w| w.steps.clone()),
        Some(vec![1])
    );
}

#[test]
fn kernel_counts_say_what_was_replayed_from_graphs() {
    let mut b = compiled_graph_replays();
    // Two kernels launched one by one after the replays.
    b.kernel(
        "vectorized_elementwise_kernel",
        7,
        9000.0,
        5.0,
        9010.0,
        20.0,
    );
    b.kernel(
        "vectorized_elementwise_kernel",
        7,
        9040.0,
        5.0,
        9050.0,
        20.0,
    );
    let r = report_of(&json_of(&b));
    // 6 replays × 8 kernels, and the 2 launched kernels.
    assert_eq!(r.context.kernels, 50);
    assert_eq!(r.context.replayed_kernels, 48);
    let md = r.to_markdown();
    assert!(
        md.contains("50 kernels, 48 of them replayed from 6 CUDA graph launches"),
        "{md}"
    );
    assert!(md.contains("2 were launched one by one"), "{md}");
    let t = load_bytes("g.json", json_of(&b).to_string().as_bytes()).expect("loads");
    let s = profile_model::analysis::summary::summarize(&t);
    assert_eq!((s.kernels, s.replayed_kernels), (50, 48));
    assert!(profile_model::report::markdown::summary_markdown(&s)
        .contains("48 of them replayed from CUDA graphs"));
}

/// 20 steps on an A100 of `kernels` (name, µs) each.
fn steps_of_kernels(kernels: &[(&str, f64)]) -> DiagnosisReport {
    let mut b = TraceBuilder::new();
    let step: f64 = kernels.iter().map(|k| k.1).sum::<f64>() + 100.0;
    b.step(0, 0.0, 21.0 * step);
    for i in 0..20 {
        let mut t = 500.0 + step * i as f64;
        let h = 100.0 + 40.0 * i as f64;
        b.cpu_op("aten::conv2d", h, 30.0);
        for (j, (name, dur)) in kernels.iter().enumerate() {
            b.kernel(name, 7, h + 1.0 + 5.0 * j as f64, 4.0, t, *dur);
            t += dur;
        }
    }
    report_of(&json_of(&b))
}

const TF32_CONV: &str =
    "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16";
const FP32_CONV: &str =
    "void cudnn::cnn::implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, false, false, true>";
const FP32_GEMM: &str = "ampere_sgemm_128x64_tn";

fn fp32_actions(r: &DiagnosisReport) -> String {
    r.findings
        .iter()
        .find(|f| f.id == FindingId::Fp32Matmul)
        .unwrap_or_else(|| panic!("no fp32 finding\n{}", r.to_markdown()))
        .actions_markdown("\n")
}

#[test]
fn tf32_advice_follows_the_kernels_precision() {
    use profile_model::analysis::names::{kernel_precision, KernelPrecision};
    assert_eq!(kernel_precision(TF32_CONV), Some(KernelPrecision::Tf32));
    assert_eq!(kernel_precision(FP32_CONV), Some(KernelPrecision::Fp32));
    assert_eq!(kernel_precision(FP32_GEMM), Some(KernelPrecision::Fp32));
    assert_eq!(
        kernel_precision("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_64x3_nn"),
        Some(KernelPrecision::Bf16)
    );
    assert_eq!(kernel_precision("vectorized_elementwise_kernel"), None);

    // fp32 matmuls beside convolutions cuDNN already runs in TF32: TF32 for the matmuls (off by
    // default for them), the convolutions said to run in it already, bf16 next; never "check
    // that autocast covers them" (TF32 is not autocast).
    let r = steps_of_kernels(&[(FP32_GEMM, 600.0), (TF32_CONV, 400.0)]);
    let a = fp32_actions(&r);
    assert!(a.contains("Enable TF32 for the matrix multiplies"), "{a}");
    assert!(a.contains("set_float32_matmul_precision"), "{a}");
    assert!(a.contains("already run in TF32"), "{a}");
    assert!(a.contains("bf16 autocast"), "{a}");
    assert!(!a.contains("covers them"), "{a}");
    assert!(!a.contains("Reduced precision is already in use"), "{a}");

    // Plain fp32 convolutions alone: cuDNN allows TF32 by default, so no "enable TF32 for the
    // matrix multiplies"; bf16 autocast is the step.
    let r = steps_of_kernels(&[(FP32_CONV, 600.0), ("vectorized_elementwise_kernel", 400.0)]);
    let a = fp32_actions(&r);
    assert!(!a.contains("for the matrix multiplies"), "{a}");
    assert!(a.contains("cudnn.allow_tf32"), "{a}");
    assert!(a.contains("by default"), "{a}");
    assert!(a.contains("bf16 autocast"), "{a}");
}
