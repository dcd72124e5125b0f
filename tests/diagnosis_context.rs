//! The context stage on traces built in code: what the trace is before any rule (device, origin,
//! empty, GPU-only, dropped events, fused ranks, micro-benchmarks, cut files, legacy exports, Ascend
//! NPU runs), each with the report's invariants.

use crate::common;

use crate::common::TraceBuilder;
use profile_model::report::context::TraceHolds;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::FindingId;
use profile_model::table::{load_bytes, TraceSet};
use profile_model::trace::dialect::DeviceKind;
use serde_json::{json, Value};

fn report_of(text: &str) -> DiagnosisReport {
    let t = load_bytes("ctx.json", text.as_bytes()).expect("loads");
    diagnose(&TraceSet::single(t))
}

/// The invariants every report keeps, plus those of the holds: a hold that withholds idle causes
/// leaves no idle attribution and no idle-based finding.
fn invariants(r: &DiagnosisReport, what: &str) {
    common::assert_report_invariants(r, what);
    let withholding = [
        TraceHolds::GpuOnly,
        TraceHolds::EventsDropped,
        TraceHolds::FusedRanks,
        TraceHolds::Microbenchmark,
    ];
    // A fused file split into its ranks is analysed as a rank set: nothing is withheld for it.
    let withheld = |h: &TraceHolds| {
        r.context.holds(*h) && (*h != TraceHolds::FusedRanks || !r.context.fused_split)
    };
    if withholding.iter().any(withheld) {
        assert!(r.idle_attribution.is_empty(), "{what}: idle attributed");
        let idle_based = [
            FindingId::DataLoading,
            FindingId::Synchronization,
            FindingId::HostBound,
            FindingId::HostOverhead,
            FindingId::LaunchOverhead,
            FindingId::WaitOutsideTrace,
        ];
        for f in &r.findings {
            assert!(!idle_based.contains(&f.id), "{what}: {} claimed", f.id);
        }
    }
    let md = r.to_markdown();
    common::assert_report_sections(&md, what);
    if r.context.holds(TraceHolds::Truncated) || r.context.holds(TraceHolds::DeviceEventsCut) {
        assert!(
            !md.contains("CPU-only run") && !md.contains("ran on the CPU"),
            "{what}: a cut file called CPU-only:\n{md}"
        );
        assert_ne!(r.context.device.kind, DeviceKind::Cpu, "{what}");
    }
}

/// A steady training loop: `steps` steps of `kernels` launches each, kernels 40 µs after a 10 µs
/// launch, a 30 µs op around each launch.
fn model(steps: usize, kernels: usize) -> TraceBuilder {
    let mut b = TraceBuilder::new();
    let names = ["gemm_a", "relu_b", "softmax_c", "add_d", "norm_e"];
    let mut t = 0.0;
    for s in 0..steps {
        let start = t;
        for k in 0..kernels {
            b.cpu_op("aten::op", t, 30.0);
            b.kernel(names[k % names.len()], 7, t + 5.0, 10.0, t + 20.0, 40.0);
            t += 50.0;
        }
        b.step(s as i64 + 1, start, t - start);
    }
    b
}

#[test]
fn the_device_is_read_from_device_properties_and_runtime_names() {
    let r = report_of(&model(4, 10).json());
    assert_eq!(r.context.device.kind, DeviceKind::Cuda);
    assert_eq!(
        r.context.device.name.as_deref(),
        Some("NVIDIA A100-SXM4-80GB")
    );
    assert_eq!(r.context.device.count, 1);
    let json: Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(json["context"]["device"]["kind"], "cuda");
    assert!(r
        .to_markdown()
        .contains("Device: NVIDIA A100-SXM4-80GB (cuda)"));
    // Without deviceProperties, HIP runtime names say ROCm.
    let text = json!({"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 50},
        {"ph": "X", "cat": "cuda_runtime", "name": "hipLaunchKernel", "pid": 1, "tid": 1, "ts": 5, "dur": 5, "args": {"correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": "Cijk_gemm", "pid": 0, "tid": 0, "ts": 20, "dur": 30, "args": {"correlation": 1, "stream": 0, "device": 0}}
    ]});
    let r = report_of(&text.to_string());
    assert_eq!(r.context.device.kind, DeviceKind::Rocm);
    invariants(&r, "hip");
    // Host events only: the CPU.
    let mut b = TraceBuilder::new();
    b.cpu_op("aten::mm", 0.0, 100.0);
    let r = report_of(&b.json().replace(
        r#""deviceProperties":[{"id":0,"name":"NVIDIA A100-SXM4-80GB"}],"#,
        "",
    ));
    assert_eq!(r.context.device.kind, DeviceKind::Cpu);
    assert!(r.context.holds(TraceHolds::CpuOnly));
}

#[test]
fn an_empty_capture_is_empty_not_a_foreign_trace() {
    let text = json!({
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": "NVIDIA GeForce RTX 3090"}],
        "traceEvents": [
            {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 0, "dur": 1000}
        ]
    });
    let r = report_of(&text.to_string());
    assert!(r.context.holds(TraceHolds::Empty), "{:?}", r.context.holds);
    assert!(!r.context.holds(TraceHolds::NotPytorch));
    assert_eq!(r.main_finding_id, Some(FindingId::InsufficientTrace));
    assert!(r.main_finding.contains("empty"), "{}", r.main_finding);
    invariants(&r, "empty");
}

#[test]
fn device_events_without_host_events_claim_no_idle_cause() {
    let mut events = Vec::new();
    // Collective kernels with gaps between them, no host.
    for i in 0..40 {
        let ts = i as f64 * 100.0;
        events.push(json!({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 7,
            "ts": ts, "dur": 60, "args": {"stream": 7, "device": 0}}));
    }
    let text = json!({"schemaVersion": 1, "traceEvents": events});
    let r = report_of(&text.to_string());
    assert!(
        r.context.holds(TraceHolds::GpuOnly),
        "{:?}",
        r.context.holds
    );
    assert!(!r.findings.iter().any(|f| f.id == FindingId::Communication));
    let md = r.to_markdown();
    assert!(md.contains("no host events"), "{md}");
    invariants(&r, "gpu only");
}

#[test]
fn launches_whose_kernels_are_missing_withhold_idle_findings() {
    // 40 launches, only the first 10 with their kernel: 30 kernel events dropped.
    let mut b = model(4, 10);
    let full: Value = serde_json::from_str(&b.json()).unwrap();
    let mut kept = 0;
    let events: Vec<Value> = full["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            if e["cat"] == "kernel" {
                kept += 1;
                kept <= 10
            } else {
                true
            }
        })
        .cloned()
        .collect();
    let mut top = full.clone();
    top["traceEvents"] = Value::Array(events);
    let r = report_of(&top.to_string());
    assert!(
        r.context.holds(TraceHolds::EventsDropped),
        "{:?}",
        r.context.holds
    );
    assert_eq!(
        (r.context.orphan_launches, r.context.correlated_launches),
        (30, 40)
    );
    assert!(r.to_markdown().contains("30 of 40 kernel launches"));
    // The device idle when the recorded launches end: a full buffer, not queued work.
    assert!(!r.context.orphans_trail);
    assert!(r.to_markdown().contains("overflow"));
    invariants(&r, "dropped");
    // The whole trace drops nothing.
    b.cpu_op("aten::tail", 100_000.0, 5.0);
    let r = report_of(&b.json());
    assert!(!r.context.holds(TraceHolds::EventsDropped));
    assert_eq!(r.context.orphan_launches, 0);
    invariants(&r, "whole");
}

/// Launches whose kernels are missing only at the end, queued behind a device still busy with the
/// recorded ones (each kernel 400 µs, launched every 50 µs): the profiler stopped while the device was
/// behind. Said as such, with a sync before the profiler stops; missing kernels spread over the trace
/// (the test above: the device idle when recording stops) stay a full buffer.
#[test]
fn missing_kernels_queued_at_the_end_are_said_to_be_unfinished_work() {
    let mut b = TraceBuilder::new();
    let mut device_free = 0.0_f64;
    for k in 0..40 {
        let t = 50.0 * k as f64;
        b.cpu_op("aten::mm", t, 30.0);
        let start = device_free.max(t + 20.0);
        let name = if k < 10 { "gemm_a" } else { "gemm_b" };
        b.kernel(name, 7, t + 5.0, 10.0, start, 400.0);
        device_free = start + 400.0;
    }
    let full: Value = serde_json::from_str(&b.json()).unwrap();
    let events: Vec<Value> = full["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| !(e["cat"] == "kernel" && e["name"] == "gemm_b"))
        .cloned()
        .collect();
    let mut top = full.clone();
    top["traceEvents"] = Value::Array(events);
    let r = report_of(&top.to_string());
    assert!(
        r.context.holds(TraceHolds::EventsDropped),
        "{:?}",
        r.context.holds
    );
    // Independently: the 10th kernel ends at 10 × 400 + 20 = 4,020 µs, the 11th launch is at 505 µs.
    assert!(r.context.orphans_trail);
    let md = r.to_markdown();
    assert!(md.contains("The last 30 of 40 kernel launches"), "{md}");
    assert!(md.contains("torch.cuda.synchronize()"), "{md}");
    assert!(!md.contains("overflow"), "{md}");
    invariants(&r, "queued at the end");
}

#[test]
fn ranks_fused_into_one_file_are_said() {
    let mut b = model(4, 10);
    b.cpu_op("aten::x", 0.0, 1.0);
    let mut top: Value = serde_json::from_str(&b.json()).unwrap();
    let events = top["traceEvents"].as_array_mut().unwrap();
    events.push(
        json!({"ph": "M", "name": "process_name", "pid": 100, "args": {"name": "[rank0] python"}}),
    );
    events.push(
        json!({"ph": "M", "name": "process_name", "pid": 200, "args": {"name": "[rank1] python"}}),
    );
    events.push(json!({"ph": "X", "cat": "cpu_op", "name": "aten::y", "pid": 200, "tid": 1, "ts": 10, "dur": 5}));
    let r = report_of(&top.to_string());
    assert!(
        r.context.holds(TraceHolds::FusedRanks),
        "{:?}",
        r.context.holds
    );
    assert_eq!(r.context.fused_ranks, vec![0, 1]);
    assert!(r.to_markdown().contains("holds 2 ranks"));
    invariants(&r, "fused");
}

/// `n` calls of `op`, each launching one device operation (`cat`, `name`, `dur_us`, `bytes`)
/// joined to it by `External id`, as Kineto writes them, one every ms.
fn benchmark(n: usize, op: &str, cat: &str, name: &str, dur_us: f64, bytes: i64) -> String {
    let mut e = Vec::new();
    for i in 0..n {
        let t = i as f64 * 1000.0;
        let ext = i as i64 + 1;
        e.push(json!({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": t, "dur": 30, "args": {"External id": ext}}));
        e.push(json!({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t + 5.0, "dur": 10,
            "args": {"External id": ext, "correlation": ext}}));
        e.push(json!({"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 7, "ts": t + 20.0, "dur": dur_us,
            "args": {"External id": ext, "correlation": ext, "stream": 7, "device": 0, "bytes": bytes}}));
    }
    json!({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB"}], "traceEvents": e}).to_string()
}

#[test]
fn one_kernel_repeated_is_a_microbenchmark_described_by_its_figure() {
    let r = report_of(&benchmark(
        50,
        "aten::mm",
        "kernel",
        "ampere_s16816gemm_bf16_128x256",
        900.0,
        0,
    ));
    assert!(
        r.context.holds(TraceHolds::Microbenchmark),
        "{:?}",
        r.context.holds
    );
    assert!(
        r.main_finding.contains("micro-benchmark"),
        "{}",
        r.main_finding
    );
    assert!(r.main_finding.contains("50 times"), "{}", r.main_finding);
    assert!(r.main_finding.contains("900 µs each"), "{}", r.main_finding);
    assert!(
        !r.main_finding.contains("ecoverable:"),
        "{}",
        r.main_finding
    );
    invariants(&r, "micro");
    // A model's varied kernels are not, nor one kernel the trace does not tie to its operator.
    let r = report_of(&model(4, 10).json());
    assert!(!r.context.holds(TraceHolds::Microbenchmark));
    let mut b = TraceBuilder::new();
    for i in 0..50 {
        let t = i as f64 * 1000.0;
        b.cpu_op("aten::mm", t, 30.0);
        b.kernel("gemm", 7, t + 5.0, 10.0, t + 20.0, 900.0);
    }
    assert!(!report_of(&b.json())
        .context
        .holds(TraceHolds::Microbenchmark));
}

#[test]
fn copies_only_is_a_copy_benchmark() {
    let text = benchmark(
        20,
        "aten::copy_",
        "gpu_memcpy",
        "Memcpy HtoD (Pinned -> Device)",
        500.0,
        10_000_000,
    );
    let r = report_of(&text);
    assert!(
        r.context.holds(TraceHolds::Microbenchmark),
        "{:?}",
        r.context.holds
    );
    // 10 MB in 500 µs: 20 GB/s.
    assert!(r.main_finding.contains("20.0 GB/s"), "{}", r.main_finding);
    invariants(&r, "copies");
}

/// A trace whose device events come after its host events, as Kineto writes them.
fn host_then_device() -> String {
    let mut host = Vec::new();
    let mut device = Vec::new();
    for i in 0..30 {
        let t = i as f64 * 100.0;
        host.push(json!({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": t, "dur": 30}));
        host.push(json!({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t + 5.0, "dur": 10, "args": {"correlation": i}}));
        device.push(json!({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": t + 20.0, "dur": 60, "args": {"correlation": i, "stream": 7, "device": 0}}));
    }
    host.extend(device);
    json!({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}], "traceEvents": host}).to_string()
}

#[test]
fn a_file_cut_before_its_device_events_is_never_cpu_only() {
    let text = host_then_device();
    let cut = &text[..text.find(r#""cat":"kernel""#).unwrap() - 30];
    let r = report_of(cut);
    assert!(
        r.context.holds(TraceHolds::DeviceEventsCut),
        "{:?}",
        r.context.holds
    );
    assert!(!r.context.holds(TraceHolds::CpuOnly) && !r.context.holds(TraceHolds::NoKernelEvents));
    assert_eq!(r.main_finding_id, Some(FindingId::TruncatedTrace));
    let md = r.to_markdown();
    let loss = md.find("**Data loss").expect("data loss said");
    assert!(loss < md.find("**Main Finding").unwrap(), "{md}");
    assert!(md.contains("cut off mid-write"), "{md}");
    invariants(&r, "cut before device");
}

#[test]
fn a_file_cut_after_some_device_events_says_so_first() {
    let text = host_then_device();
    let cut = &text[..text.len() - 200];
    let r = report_of(cut);
    assert!(r.context.holds(TraceHolds::Truncated));
    let loss = r
        .context
        .data_loss
        .as_ref()
        .expect("data loss")
        .to_markdown();
    assert!(loss.contains("events were read"), "{loss}");
    let md = r.to_markdown();
    assert!(md.find("**Data loss").unwrap() < md.find("**Main Finding").unwrap());
    invariants(&r, "cut after device");
}

#[test]
fn a_legacy_autograd_export_is_pytorch_and_says_how_to_record_kineto() {
    let text = json!([
        {"name": "aten::conv2d", "ph": "X", "ts": 0.0, "dur": 500.0, "tid": 0, "pid": "CPU functions", "args": {}},
        {"name": "aten::relu", "ph": "X", "ts": 600.0, "dur": 50.0, "tid": 0, "pid": "CPU functions", "args": {}},
        {"name": "aten::conv2d", "ph": "X", "ts": 700.0, "dur": 450.0, "tid": 0, "pid": "CPU functions", "args": {}}
    ]);
    let r = report_of(&text.to_string());
    assert_eq!(
        serde_json::to_value(r.context.origin).unwrap(),
        json!("pytorch_legacy")
    );
    assert!(!r.context.holds(TraceHolds::NotPytorch) && !r.context.holds(TraceHolds::CpuOnly));
    assert!(
        r.main_finding.contains("aten::conv2d` 950 µs"),
        "{}",
        r.main_finding
    );
    assert!(r
        .to_markdown()
        .contains("torch.profiler.profile(activities="));
    invariants(&r, "legacy");
}

/// A legacy export with CPU operators only and nothing that says a GPU was used (no device
/// event, no CUDA call, no device seen, no GPU operator) is told how to record a Kineto trace of
/// the CPU, never to re-record "with CUDA"; one whose operators ran on a GPU is.
#[test]
fn a_legacy_cpu_export_without_gpu_evidence_is_not_told_to_record_cuda() {
    let cpu = report_of(&host_ops(
        &[("aten::conv2d", 0.0, 500.0), ("aten::relu", 600.0, 50.0)],
        false,
    ));
    let md = cpu.to_markdown();
    assert!(
        !md.contains("ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]"),
        "{md}"
    );
    assert!(
        md.contains("activities=[torch.profiler.ProfilerActivity.CPU]"),
        "{md}"
    );
    invariants(&cpu, "legacy cpu");
    let gpu = report_of(&host_ops(
        &[
            ("aten::cudnn_convolution", 0.0, 500.0),
            ("aten::relu", 600.0, 50.0),
        ],
        false,
    ));
    let md = gpu.to_markdown();
    assert!(
        md.contains("ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]"),
        "{md}"
    );
    invariants(&gpu, "legacy gpu");
}

/// A capture of ~1 ms around the profiler's own start and stop: Python frames and one
/// `cudaDeviceSynchronize`, no PyTorch operator and no device work, on a GPU host. It is empty,
/// never "a CPU-only run" with CPU tuning advice.
#[test]
fn python_frames_and_a_sync_alone_are_an_empty_capture() {
    let mut b = TraceBuilder::new();
    b.event("python_function", "train.py(80): <module>", 0.0, 1_000.0);
    b.event(
        "python_function",
        "torch/profiler/profiler.py(110): start_trace",
        10.0,
        20.0,
    );
    b.event(
        "python_function",
        "<built-in function _cuda_getDevice>",
        40.0,
        690.0,
    );
    b.runtime("cudaDeviceSynchronize", 800.0, 17.0);
    b.event(
        "python_function",
        "<built-in function _cuda_synchronize>",
        795.0,
        25.0,
    );
    let r = report_of(&b.json());
    assert!(r.context.holds(TraceHolds::Empty), "{:?}", r.context.holds);
    assert!(!r.context.holds(TraceHolds::CpuOnly));
    assert_eq!(r.main_finding_id, Some(FindingId::InsufficientTrace));
    let md = r.to_markdown();
    for wrong in ["CPU-only", "bf16", "set_num_threads", "model.to("] {
        assert!(!md.contains(wrong), "{wrong} in {md}");
    }
    invariants(&r, "python frames only");
}

#[test]
fn a_rocprof_trace_is_named_as_such() {
    let text = json!({"traceEvents": [
        {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "HIP"}},
        {"ph": "X", "name": "hipLaunchKernel", "pid": 2, "tid": 3, "ts": 0, "dur": 5}
    ]});
    let r = report_of(&text.to_string());
    assert!(r.context.holds(TraceHolds::NotPytorch));
    assert!(r.main_finding.contains("rocprof"), "{}", r.main_finding);
    assert!(r.main_finding.contains("`HIP`"), "{}", r.main_finding);
    invariants(&r, "rocprof");
}

/// A torch_npu `trace_view.json`: a bare array, string timestamps, CPU ops in `Python`, the
/// runtime in `CANN`, device tasks in `Ascend Hardware` (no category), collectives in `HCCL`.
pub fn ascend_trace() -> String {
    let mut e = vec![
        json!({"ph": "M", "name": "process_name", "pid": 10, "tid": 0, "args": {"name": "Python"}}),
        json!({"ph": "M", "name": "process_name", "pid": 20, "tid": 0, "args": {"name": "CANN"}}),
        json!({"ph": "M", "name": "process_name", "pid": 30, "tid": 0, "args": {"name": "Ascend Hardware"}}),
        json!({"ph": "M", "name": "thread_name", "pid": 30, "tid": 2, "args": {"name": "Stream 2"}}),
        json!({"ph": "M", "name": "process_name", "pid": 40, "tid": 0, "args": {"name": "HCCL"}}),
        json!({"ph": "M", "name": "thread_name", "pid": 40, "tid": 5, "args": {"name": "Group 1 Communication"}}),
        json!({"ph": "M", "name": "thread_name", "pid": 40, "tid": 6, "args": {"name": "Plane 0"}}),
    ];
    let base = 1_700_000_000_000_000.0_f64;
    for i in 0..20 {
        let t = base + i as f64 * 100.0;
        e.push(json!({"ph": "X", "cat": "cpu_op", "name": "aten::matmul", "pid": 10, "tid": 1, "ts": format!("{:.3}", t), "dur": 20.0}));
        e.push(json!({"ph": "X", "name": "AscendCL@aclnnMatmul", "pid": 20, "tid": 1, "ts": format!("{:.3}", t + 2.0), "dur": 10.0}));
        e.push(json!({"ph": "X", "name": "aclnnMatmul_MatMulV2_MatMulV2", "pid": 30, "tid": 2, "ts": format!("{:.3}", t + 30.0), "dur": 50.0, "args": {"Task Type": "AI_CORE"}}));
    }
    e.push(json!({"ph": "X", "name": "hcom_allReduce__123_0_1", "pid": 40, "tid": 5, "ts": format!("{:.3}", base + 2000.0), "dur": 300.0}));
    e.push(json!({"ph": "X", "name": "Memcpy", "pid": 40, "tid": 6, "ts": format!("{:.3}", base + 2010.0), "dur": 100.0}));
    serde_json::to_string(&e).unwrap()
}

#[test]
fn an_ascend_npu_run_is_an_npu_run() {
    let r = report_of(&ascend_trace());
    assert_eq!(r.context.device.kind, DeviceKind::Npu);
    assert!(!r.context.holds(TraceHolds::CpuOnly) && !r.context.holds(TraceHolds::NotPytorch));
    // 20 AI-core tasks and one collective; the Plane task repeats the collective and is left out.
    assert_eq!(r.context.kernels, 21, "{:?}", r.context);
    let top = &r.top_kernels[0];
    assert_eq!(
        (top.name.as_str(), top.calls),
        ("aclnnMatmul_MatMulV2_MatMulV2", 20)
    );
    // 20 × 50 µs of compute, 300 µs of HCCL.
    assert!((top.total_us - 1000.0).abs() < 1e-6, "{}", top.total_us);
    assert!(r.to_markdown().contains("Ascend NPU") || r.to_markdown().contains("(npu)"));
    invariants(&r, "ascend");
}

/// Host operators of one thread from (name, start, duration) in µs, as a legacy export or a
/// Kineto trace without device activity writes them.
fn host_ops(ops: &[(&str, f64, f64)], kineto: bool) -> String {
    let events: Vec<Value> = ops
        .iter()
        .map(|(name, ts, dur)| {
            if kineto {
                json!({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": {}})
            } else {
                json!({"ph": "X", "name": name, "pid": "CPU functions", "tid": 0, "ts": ts, "dur": dur, "args": {}})
            }
        })
        .collect();
    if kineto {
        json!({"schemaVersion": 1, "traceEvents": events}).to_string()
    } else {
        Value::Array(events).to_string()
    }
}

#[test]
fn a_cpu_only_run_names_operators_by_self_time_and_share_of_wall_time() {
    // linear (0-1000) around addmm (100-900); dropout (1000-1600) around bernoulli_ (1050-1560).
    let text = host_ops(
        &[
            ("aten::linear", 0.0, 1000.0),
            ("aten::addmm", 100.0, 800.0),
            ("aten::dropout", 1000.0, 600.0),
            ("aten::bernoulli_", 1050.0, 510.0),
        ],
        true,
    );
    let r = report_of(&text);
    assert!(
        r.context.holds(TraceHolds::CpuOnly),
        "{:?}",
        r.context.holds
    );
    assert_eq!(r.context.device.kind, DeviceKind::Cpu);
    let m = &r.main_finding;
    assert!(m.starts_with("A CPU-only run"), "{m}");
    // Self time: addmm 800 of the 1600 µs profiled (50.0%), inside linear; linear's own 200 µs.
    assert!(
        m.contains("`aten::addmm` 800 µs (50.0%, 1 call, in `aten::linear`)"),
        "{m}"
    );
    assert!(
        m.contains("`aten::bernoulli_` 510 µs (31.9%, 1 call, in `aten::dropout`)"),
        "{m}"
    );
    assert!(m.contains("`aten::linear` 200 µs (12.5%"), "{m}");
    let own: i64 = r.context.top_ops.iter().map(|o| o.self_ns).sum();
    assert!(
        own <= 1_600_000,
        "self times count nested operators once: {own} ns"
    );
    invariants(&r, "cpu only");
}

#[test]
fn profiler_start_up_calls_do_not_make_a_cpu_run_a_gpu_run() {
    // The profiler's own CUDA start-up calls on a GPU host; the model's convolution is mkldnn.
    let mut b = TraceBuilder::new();
    b.runtime("cudaGetDeviceProperties", 0.0, 50.0);
    b.runtime("cudaDeviceSynchronize", 60.0, 5.0);
    b.cpu_op("aten::conv1d", 100.0, 500.0);
    b.cpu_op("aten::mkldnn_convolution", 110.0, 480.0);
    let r = report_of(&b.json());
    assert!(
        r.context.holds(TraceHolds::CpuOnly),
        "{:?}",
        r.context.holds
    );
    assert!(
        r.main_finding.starts_with("A CPU-only run"),
        "{}",
        r.main_finding
    );
    assert!(r.to_markdown().contains("model.to(\"cuda\")"));
    invariants(&r, "cpu on a gpu host");
}

#[test]
fn a_gpu_run_recorded_without_device_activity_says_how_to_record_it() {
    // cuDNN operators ran on a GPU, but no kernel, copy or launch was recorded.
    let mut ops = vec![
        ("aten::conv2d", 0.0, 1000.0),
        ("aten::cudnn_convolution", 10.0, 980.0),
    ];
    for i in 1..6 {
        ops.push(("aten::relu", 1000.0 + 100.0 * i as f64, 50.0));
    }
    let r = report_of(&host_ops(&ops, true));
    assert!(
        r.context.holds(TraceHolds::CpuOnly),
        "{:?}",
        r.context.holds
    );
    assert_eq!(r.context.device.kind, DeviceKind::Cuda);
    let m = &r.main_finding;
    assert!(m.contains("recorded without its device activity"), "{m}");
    assert!(m.contains("`aten::cudnn_convolution`"), "{m}");
    assert!(!m.contains("CPU-only"), "{m}");
    assert!(r
        .to_markdown()
        .contains("activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"));
    invariants(&r, "device not recorded");
}

#[test]
fn an_apple_mps_run_is_not_called_cpu_only() {
    let r = report_of(&host_ops(
        &[
            ("aten::conv2d", 0.0, 300.0),
            ("aten::_mps_convolution", 10.0, 280.0),
        ],
        true,
    ));
    assert_eq!(r.context.device.kind, DeviceKind::Mps);
    let m = &r.main_finding;
    assert!(m.starts_with("An Apple GPU (MPS) run"), "{m}");
    assert!(r.to_markdown().contains("torch.mps.profiler"));
    invariants(&r, "mps");
}

#[test]
fn a_host_only_cold_pass_is_cold_start() {
    // A legacy export of a first forward: the first cuDNN call takes 50 ms, later ones 1 ms.
    let mut ops = vec![("aten::cudnn_convolution", 0.0, 50_000.0)];
    for i in 0..5 {
        ops.push((
            "aten::cudnn_convolution",
            50_100.0 + 2000.0 * i as f64,
            1000.0,
        ));
    }
    let r = report_of(&host_ops(&ops, false));
    assert!(
        r.context.holds(TraceHolds::ColdStart),
        "{:?}",
        r.context.holds
    );
    assert!(r.context.holds(TraceHolds::Insufficient));
    let m = &r.main_finding;
    // One-off: 50 ms of the 59.1 ms profiled (85%).
    assert!(
        m.contains("one cold pass: one-off first calls take 85% of the 59.1 ms"),
        "{m}"
    );
    assert!(m.contains("later calls' median 1.00 ms"), "{m}");
    assert!(r.to_markdown().contains("warmup=2"));
    // Without the slow first call it is no cold pass.
    let r = report_of(&host_ops(&ops[1..], false));
    assert!(
        !r.context.holds(TraceHolds::ColdStart),
        "{:?}",
        r.context.holds
    );
    invariants(&r, "host cold");
}

#[test]
fn zero_byte_fills_without_device_events_are_not_dropped_events() {
    // cuBLAS workspace memsets that run nothing on the device, beside kernels that all ran.
    let mut b = model(4, 10);
    for i in 0..20 {
        b.runtime("cudaMemsetAsync", 3.0 + 100.0 * i as f64, 0.3);
    }
    let r = report_of(&b.json());
    assert!(
        !r.context.holds(TraceHolds::EventsDropped),
        "{:?}",
        r.context.holds
    );
    // Kernel launches whose kernels are missing still are.
    let mut b = model(4, 10);
    for i in 0..20 {
        b.runtime("cudaLaunchKernel", 3.0 + 100.0 * i as f64, 3.0);
    }
    let r = report_of(&b.json());
    assert!(
        r.context.holds(TraceHolds::EventsDropped),
        "{:?}",
        r.context.holds
    );
    invariants(&r, "dropped");
}

/// The steady loop of [`model`] (4 steps of 10 kernels, 2 ms of device work ending at 1,980 µs),
/// then a host wait starting at `sync_ts` for `sync_us`.
fn model_then_wait(call: &str, sync_ts: f64, sync_us: f64) -> DiagnosisReport {
    let mut b = model(4, 10);
    b.runtime(call, sync_ts, sync_us);
    report_of(&b.json())
}

#[test]
fn a_wait_that_outlasts_the_last_recorded_kernel_says_the_record_is_incomplete() {
    // The last kernel ends at 39 × 50 + 20 + 40 = 2,010 µs; the sync returns 50 ms later.
    let last_kernel_end = 39.0 * 50.0 + 20.0 + 40.0;
    let r = model_then_wait("cudaDeviceSynchronize", 1_990.0, 52_000.0);
    assert!(
        r.context.holds(TraceHolds::EventsDropped),
        "{:?}",
        r.context.holds
    );
    let tail_ns = ((1_990.0 + 52_000.0 - last_kernel_end) * 1000.0) as i64;
    assert_eq!(r.context.unrecorded.waits, 1);
    assert_eq!(r.context.unrecorded.tail_ns, tail_ns);
    let md = r.to_markdown();
    assert!(md.contains("The device record is incomplete"), "{md}");
    assert!(md.contains("`cudaDeviceSynchronize`"), "{md}");
    // Only the kernels' finding (the softmax-named kernel) stands; the bottleneck says the record
    // is incomplete instead of how busy the GPU was, and the kernel launches dropped nothing.
    let b = r.bottleneck.as_ref().unwrap();
    assert!(b.reason.contains("incomplete"), "{md}");
    assert!(
        !md.contains("kernel launches have no device operation"),
        "{md}"
    );
    assert!(
        !r.main_finding.contains("busy") || r.main_finding.contains("unknown"),
        "{}",
        r.main_finding
    );
    invariants(&r, "sync past the last kernel");
    // A wait that ends with the last kernel (0.5 ms late at most) is whole.
    let r = model_then_wait("cudaDeviceSynchronize", 1_990.0, 520.0);
    assert!(
        !r.context.holds(TraceHolds::EventsDropped),
        "{:?}",
        r.context.holds
    );
    // A wait that begins before any recorded device work may wait for work launched before the
    // trace began: not counted.
    let mut b = model(4, 10);
    b.runtime("cudaStreamSynchronize", -60_000.0, 59_990.0);
    let r = report_of(&b.json());
    assert!(
        !r.context.holds(TraceHolds::EventsDropped),
        "{:?}",
        r.context.holds
    );
    // A short tail beside a long recorded window is not "by far": 8 steps end at 3,990 + 20 µs,
    // and a 1.12 ms tail is under half the 3.99 ms recorded.
    let mut b = model(8, 10);
    b.runtime("cudaStreamSynchronize", 3_990.0, 1_120.0);
    let r = report_of(&b.json());
    assert!(
        !r.context.holds(TraceHolds::EventsDropped),
        "{:?}",
        r.context.holds
    );
}

#[test]
fn graph_replays_whose_kernels_are_missing_make_the_record_incomplete() {
    // 12 replays, each followed by a 3 ms stream sync; only the first two replays' kernels
    // (12 of 200 µs each) recorded.
    let mut b = TraceBuilder::new();
    let mut t = 0.0;
    for s in 0..12 {
        b.step(s + 1, t, 4_000.0);
        let kernels: Vec<(&str, f64, f64)> = if s < 2 {
            (0..12)
                .map(|k| {
                    (
                        ["gemm_a", "relu_b"][k % 2],
                        t + 20.0 + 200.0 * k as f64,
                        200.0,
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
        b.graph_launch(7, t + 5.0, 10.0, &kernels);
        b.runtime("cudaStreamSynchronize", t + 20.0, 3_000.0);
        t += 4_000.0;
    }
    let r = report_of(&b.json());
    assert!(
        r.context.holds(TraceHolds::EventsDropped),
        "{:?}",
        r.context.holds
    );
    assert_eq!(
        (r.context.graph_orphans, r.context.graph_correlated),
        (10, 12)
    );
    let md = r.to_markdown();
    assert!(md.contains("10 of 12 graph launches"), "{md}");
    assert!(!md.contains("Too little"), "{md}");
    assert!(!md.contains("GPU busy 100"), "{md}");
    // The ten later syncs return 3 ms after the last recorded kernel (step 2's, at 6,420 µs).
    assert_eq!(r.context.unrecorded.waits, 10);
    assert_eq!(r.context.unrecorded.tail_ns, 10 * 3_000_000);
    invariants(&r, "graph replays under-recorded");
    // Every replay recorded whole: nothing dropped.
    let mut b = TraceBuilder::new();
    let mut t = 0.0;
    for s in 0..12 {
        b.step(s + 1, t, 4_000.0);
        b.graph_launch(
            7,
            t + 5.0,
            10.0,
            &[
                ("gemm_a", t + 20.0, 2_000.0),
                ("relu_b", t + 2_030.0, 900.0),
            ],
        );
        b.runtime("cudaStreamSynchronize", t + 20.0, 2_950.0);
        t += 4_000.0;
    }
    let r = report_of(&b.json());
    assert!(
        !r.context.holds(TraceHolds::EventsDropped),
        "{:?}",
        r.context.holds
    );
    assert_eq!(r.context.graph_orphans, 0);
}

#[test]
fn a_cpu_deployment_with_no_device_visible_is_not_told_to_move_to_cuda() {
    // No `deviceProperties`, no runtime call: the profiler saw no device.
    let text = host_ops(
        &[("aten::linear", 0.0, 1000.0), ("aten::addmm", 100.0, 800.0)],
        true,
    );
    let r = report_of(&text);
    assert!(
        r.context.holds(TraceHolds::CpuOnly),
        "{:?}",
        r.context.holds
    );
    let md = r.to_markdown();
    assert!(!md.contains("model.to(\"cuda\")"), "{md}");
    assert!(
        r.main_finding.contains("CPU deployment"),
        "{}",
        r.main_finding
    );
    assert!(md.contains("torch.set_num_threads"), "{md}");
    invariants(&r, "cpu deployment");
}
