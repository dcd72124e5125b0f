//! Diagnosis scenarios for the device a trace was recorded on (issue 30): the same small trace built
//! in code, written as a CUDA run and as an MTIA run, must be read in its own device's words; CUDA's
//! toolbox (CUDA graphs, TF32, tensor cores, cuDNN autotuning) is never advised on an MTIA, and
//! device-side waits (`event_wait`) are never called compute.

use crate::common::{all_words, TraceBuilder};
use profile_model::report::bottleneck::BottleneckKind;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::FindingId;
use profile_model::table::{load_bytes, TraceSet};
use profile_model::trace::dialect::DeviceKind;
use serde_json::Value;

/// Words that only fit NVIDIA/AMD GPUs.
const CUDA_ONLY: [&str; 6] = [
    "CUDA graph",
    "TF32",
    "tensor core",
    "cudnn",
    "NVLink",
    "make_graphed_callables",
];

/// The trace `b` writes, as an MTIA run: its device named so, its device events `mtia_ccp_events`, its
/// launches `runFunction` calls of the `mtia_runtime`.
fn as_mtia(b: &TraceBuilder) -> DiagnosisReport {
    let mut v: Value = serde_json::from_str(&b.json()).expect("builder JSON");
    v["deviceProperties"][0]["name"] = "MTIA ARTEMIS".into();
    for e in v["traceEvents"].as_array_mut().expect("events") {
        match e["cat"].as_str() {
            Some("kernel") => e["cat"] = "mtia_ccp_events".into(),
            Some("cuda_runtime") => {
                e["cat"] = "mtia_runtime".into();
                e["name"] = "runFunction".into();
            }
            _ => {}
        }
    }
    let t = load_bytes("mtia.json", v.to_string().as_bytes()).expect("loads");
    diagnose(&TraceSet::single(t))
}

fn as_cuda(b: &TraceBuilder) -> DiagnosisReport {
    diagnose(&TraceSet::single(b.table("cuda.json")))
}

/// 2000 kernels of 3 µs, each launched 7 µs after the last one ended: launch-bound.
fn tiny_kernels() -> TraceBuilder {
    let mut b = TraceBuilder::new();
    let n = 2000;
    b.step(0, 0.0, 1_000.0 + 10.0 * n as f64);
    for i in 0..n {
        let t = 1_000.0 + 10.0 * i as f64;
        b.cpu_op("aten::add", t - 6.0, 5.5);
        b.kernel("add_kernel", 7, t - 5.0, 4.0, t, 3.0);
    }
    b
}

#[test]
fn launch_bound_mtia_is_said_in_its_words_without_cuda_advice() {
    let b = tiny_kernels();
    let cuda = as_cuda(&b);
    assert_eq!(cuda.context.device.kind, DeviceKind::Cuda);
    assert!(
        all_words(&cuda).contains("CUDA graph"),
        "the CUDA run keeps its CUDA advice:\n{}",
        cuda.to_markdown()
    );
    let mtia = as_mtia(&b);
    assert_eq!(mtia.context.device.kind, DeviceKind::Mtia);
    assert_eq!(mtia.main_finding_id, Some(FindingId::LaunchOverhead));
    assert!(
        mtia.main_finding.starts_with("MTIA accelerator is idle"),
        "{}",
        mtia.main_finding
    );
    let words = all_words(&mtia);
    for w in CUDA_ONLY {
        assert!(!words.contains(w), "`{w}` advised on an MTIA:\n{words}");
    }
}

/// A busy device whose largest operation is `event_wait` (half the device time): it waits, it does
/// not compute.
#[test]
fn device_side_waits_are_not_compute() {
    let mut b = TraceBuilder::new();
    b.step(0, 0.0, 21_000.0);
    for i in 0..20 {
        let t = 1_000.0 + 1_000.0 * i as f64;
        b.kernel("fc-dtype_Float", 7, t - 10.0, 5.0, t, 480.0);
        b.kernel("event_wait", 7, t - 5.0, 2.0, t + 480.0, 510.0);
    }
    let r = as_mtia(&b);
    let wait_pct = 100.0 * 510.0 / 990.0;
    let bottleneck = r.bottleneck.as_ref().expect("bottleneck");
    assert_ne!(
        bottleneck.kind,
        BottleneckKind::Compute,
        "{}",
        r.to_markdown()
    );
    assert!(
        bottleneck.reason.contains("event_wait")
            && bottleneck.reason.contains(&format!("{wait_pct:.1}%")),
        "{}",
        bottleneck.reason
    );
    assert!(
        !r.findings
            .iter()
            .any(|f| f.id == FindingId::DominantKernel && f.title.contains("event_wait")),
        "a wait is not a dominant kernel to speed up"
    );
    assert!(r.main_finding.contains("event_wait"), "{}", r.main_finding);
    assert!(!all_words(&r).contains("kept busy"), "{}", r.to_markdown());
}
