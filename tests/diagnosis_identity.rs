//! Diagnosis scenarios for what a trace is (issue 30), built in code: a small trace whose GPU waits
//! on a named cause is diagnosed, not dismissed; a job deployed on the CPU is described as such and
//! given CPU advice; rank files in `rank_N/` folders are ranks of one job, two files of one rank are
//! said; another profiler's JSON is named; DeepEP / NVSHMEM / all-to-all kernels are communication.

use crate::common;

use crate::common::{all_words, TraceBuilder};
use profile_model::analysis::gpu::{exact_kernel_type, KernelType};
use profile_model::report::context::TraceHolds;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::FindingId;
use profile_model::table::{load_bytes, EventKind, TraceSet};
use profile_model::trace::dialect::DeviceKind;
use serde_json::Value;

fn report_of(text: &str) -> DiagnosisReport {
    let t = load_bytes("identity.json", text.as_bytes()).expect("loads");
    diagnose(&TraceSet::single(t))
}

// A. One gate ------------------------------------------------------------------------------------

/// 12 short kernels in 4 ms, each read back by `.item()` (a `cudaStreamSynchronize`) and followed by
/// 300 µs of host work: the GPU idles 90% of the window after the syncs. Few kernels, little busy
/// time, but a clear finding: it is diagnosed as synchronisation, not "too little to diagnose".
#[test]
fn a_small_trace_whose_gpu_waits_on_syncs_is_diagnosed() {
    let mut b = TraceBuilder::new();
    let n = 12;
    b.step(1, 0.0, 330.0 * n as f64 + 10.0);
    for k in 0..n {
        let t = 5.0 + 330.0 * k as f64;
        b.cpu_op("aten::mul", t, 8.0);
        b.kernel("elementwise_kernel", 7, t + 1.0, 5.0, t + 8.0, 15.0);
        b.cpu_op("aten::item", t + 9.0, 20.0);
        b.cpu_op("aten::_local_scalar_dense", t + 10.0, 18.0);
        b.runtime("cudaStreamSynchronize", t + 11.0, 14.0);
        b.cpu_op("aten::add", t + 30.0, 290.0);
    }
    let r = report_of(&b.json());
    common::assert_report_invariants(&r, "small sync trace");
    assert!(
        !r.context.holds(TraceHolds::Insufficient),
        "{:?}\n{}",
        r.context.holds,
        r.to_markdown()
    );
    assert_eq!(
        r.main_finding_id,
        Some(FindingId::Synchronization),
        "{}",
        r.to_markdown()
    );
    // The same kernels without the syncs (the GPU idle for no named cause) stay too little.
    let mut quiet = TraceBuilder::new();
    for k in 0..n {
        let t = 5.0 + 330.0 * k as f64;
        quiet.cpu_op("aten::mul", t, 8.0);
        quiet.kernel("elementwise_kernel", 7, t + 1.0, 5.0, t + 8.0, 15.0);
    }
    let r = report_of(&quiet.json());
    assert!(
        r.context.holds(TraceHolds::Insufficient),
        "{:?}",
        r.context.holds
    );
}

// B. What the trace is -----------------------------------------------------------------------------

/// `b`'s trace without `deviceProperties`: nothing names a device.
fn without_device(b: &TraceBuilder) -> String {
    let mut v: Value = serde_json::from_str(&b.json()).expect("builder JSON");
    v.as_object_mut()
        .expect("object")
        .remove("deviceProperties");
    v.to_string()
}

/// An inference server deployed on the CPU: no device in `deviceProperties`, no runtime call. It is
/// a CPU deployment, never told to move to CUDA; the advice is the CPU's (threads, bf16).
#[test]
fn a_cpu_deployment_gets_cpu_advice_not_move_to_cuda() {
    let mut b = TraceBuilder::new();
    for k in 0..20 {
        let t = 2_000.0 * k as f64;
        b.cpu_op("aten::linear", t, 1_500.0);
        b.cpu_op("aten::addmm", t + 10.0, 1_200.0);
        b.cpu_op("aten::dropout", t + 1_550.0, 300.0);
        b.cpu_op("aten::bernoulli_", t + 1_560.0, 250.0);
    }
    let r = report_of(&without_device(&b));
    common::assert_report_invariants(&r, "cpu deployment");
    assert!(
        r.context.holds(TraceHolds::CpuOnly),
        "{:?}",
        r.context.holds
    );
    assert_eq!(r.context.device.kind, DeviceKind::Cpu);
    assert!(
        r.main_finding.contains("a CPU deployment"),
        "{}",
        r.main_finding
    );
    let words = all_words(&r);
    assert!(!words.contains("model.to(\"cuda\")"), "{words}");
    assert!(words.contains("set_num_threads"), "{words}");
    assert!(words.contains("bfloat16"), "{words}");
}

/// A legacy `torch.autograd.profiler` export (bare array, pid `CPU functions`) of a GPU job is a
/// PyTorch trace, never called a CPU-only run.
#[test]
fn a_legacy_export_of_a_gpu_job_is_never_called_cpu_only() {
    let ev = |name: &str, ts: f64, dur: f64| {
        serde_json::json!({"name": name, "ph": "X", "ts": ts, "dur": dur, "tid": 0,
            "pid": "CPU functions", "args": {}})
    };
    let events: Vec<Value> = (0..30)
        .flat_map(|k| {
            let t = 1_000.0 * k as f64;
            [
                ev("aten::conv2d", t, 600.0),
                ev("aten::cudnn_convolution", t + 10.0, 550.0),
                ev("aten::relu", t + 700.0, 100.0),
            ]
        })
        .collect();
    let r = report_of(&Value::Array(events).to_string());
    assert!(
        !r.context.holds(TraceHolds::CpuOnly),
        "{:?}",
        r.context.holds
    );
    assert!(!r.main_finding.contains("CPU-only"), "{}", r.main_finding);
    assert!(
        all_words(&r).contains("torch.profiler"),
        "{}",
        r.to_markdown()
    );
}

fn write(dir: &std::path::Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

fn small_rank_trace() -> String {
    let mut b = TraceBuilder::new();
    for k in 0..30 {
        let t = 100.0 * k as f64;
        b.cpu_op("aten::mm", t, 20.0);
        b.kernel("sm80_xmma_gemm", 7, t + 2.0, 5.0, t + 10.0, 80.0);
    }
    b.json()
}

/// One job's ranks written as `rank_N/trace.json` (the same file name in each folder, no
/// `distributedInfo`) are ranks 0 and 1 of one job, not "separate runs"; two files that both say
/// rank 1 are said to be separate runs, and which.
#[test]
fn rank_folders_are_one_job_and_a_repeated_rank_is_said() {
    let root = std::env::temp_dir().join(format!("pm-identity-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let job = root.join("job");
    write(&job, "rank_0/trace.json", &small_rank_trace());
    write(&job, "rank_1/trace.json", &small_rank_trace());
    let set = profile_model::load::load_set(&job, None).expect("loads");
    let ranks: Vec<i64> = set.ranks.iter().map(|r| r.rank).collect();
    assert_eq!(ranks, vec![0, 1]);
    assert_eq!(set.separate_runs(), None);
    let r = diagnose(&set);
    assert!(
        !r.context.holds(TraceHolds::SeparateRuns),
        "{:?}",
        r.context.holds
    );

    let dup = root.join("dup");
    write(&dup, "a_rank_1.json", &small_rank_trace());
    write(&dup, "b_rank_1.json", &small_rank_trace());
    let set = profile_model::load::load_set(&dup, None).expect("loads");
    let why = set.separate_runs().expect("a repeated rank is said");
    assert!(why.contains("both say they are rank 1"), "{why}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A rocprofiler-sdk JSON result is refused by name, with how to record a PyTorch trace.
#[test]
fn another_profilers_json_is_named_with_how_to_record_pytorch() {
    let text = r#"{"rocprofiler-sdk-tool": [{"metadata": {"pid": 1}}]}"#;
    let e = load_bytes("908_results.json", text.as_bytes())
        .expect_err("not a trace")
        .to_string();
    assert!(e.contains("rocprofiler-sdk"), "{e}");
    assert!(e.contains("torch.profiler"), "{e}");
}

/// Expert-parallel dispatch/combine kernels (DeepEP, NVSHMEM) and all-to-all kernels move tokens
/// between ranks: communication, never compute.
#[test]
fn deepep_nvshmem_and_all_to_all_kernels_are_communication() {
    for name in [
        "void deep_ep::internode::dispatch<8, 768, 4096>(int4*, float*, int*)",
        "void deep_ep::intranode::combine<__nv_bfloat16, 8, 768>(...)",
        "void deep_ep::internode_ll::dispatch<false, 3, 7168>(...)",
        "nvshmemi_transfer_rma_nbi_kernel",
        "void pplx::dispatchKernel<__nv_bfloat16>(...)",
        "void mori::moe::EpDispatchIntraNodeKernel<__hip_bfloat16>(mori::moe::EpDispatchCombineArgs)",
        "void mori::moe::EpCombineIntraNodeKernel<__hip_bfloat16>(mori::moe::EpDispatchCombineArgs)",
        "void fused_all_to_all_kernel<float>(...)",
        "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)",
    ] {
        assert_eq!(
            exact_kernel_type(EventKind::Kernel, name),
            KernelType::Communication,
            "{name}"
        );
    }
    assert_eq!(
        exact_kernel_type(EventKind::Kernel, "sm90_xmma_gemm_bf16bf16_bf16f32"),
        KernelType::Computation
    );
}
