//! Diagnosis scenarios for runs on the CPU and the host side (issue 30), built in code: a device is
//! read from device evidence only, never from a Python frame's name (`is_cuda`, wandb); shares of
//! the window never pass 100% when threads run at once (an operator's time is the union over its
//! threads) and frames that only wait are never ranked; a CPU run gets a bottleneck class (compute,
//! memory, per-operator overhead, data loading), its cold first pass, its toy size, the im2col
//! convolution fallback and advice tied to what was measured; TF32 is advised only where the
//! device table says it runs well above fp32.

use crate::common::{self, all_words, TraceBuilder, HOST_PID};
use profile_model::analysis::roofline::{device_roof, DeviceProps, Fp32Lever};
use profile_model::report::bottleneck::BottleneckKind;
use profile_model::report::context::TraceHolds;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::FindingId;
use profile_model::table::{load_bytes, TraceSet};
use profile_model::trace::dialect::DeviceKind;
use serde_json::{json, Value};

fn report_of(text: &str) -> DiagnosisReport {
    let t = load_bytes("cpu_runs.json", text.as_bytes()).expect("loads");
    diagnose(&TraceSet::single(t))
}

/// `b`'s trace without `deviceProperties`, with `extra` events added (other threads).
fn cpu_trace(b: &TraceBuilder, extra: Vec<Value>) -> String {
    let mut v: Value = serde_json::from_str(&b.json()).expect("builder JSON");
    v.as_object_mut()
        .expect("object")
        .remove("deviceProperties");
    v["traceEvents"]
        .as_array_mut()
        .expect("events")
        .extend(extra);
    v.to_string()
}

/// A complete event of category `cat` on thread `tid` of the host process (times in µs).
fn on_thread(cat: &str, name: &str, tid: i64, ts: f64, dur: f64) -> Value {
    json!({"ph": "X", "cat": cat, "name": name, "pid": HOST_PID, "tid": tid,
        "ts": ts, "dur": dur, "args": {}})
}

/// Every "NN.N%" in `text`, as numbers.
fn percentages(text: &str) -> Vec<f64> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for (i, c) in b.iter().enumerate() {
        if *c != b'%' {
            continue;
        }
        let mut j = i;
        while j > 0 && (b[j - 1].is_ascii_digit() || b[j - 1] == b'.') {
            j -= 1;
        }
        if let Ok(v) = text[j..i].parse::<f64>() {
            out.push(v);
        }
    }
    out
}

// 1. Device evidence only ---------------------------------------------------------------------------

/// A CPU-only VAE script: its Python frames call `is_cuda`, the optimizer's
/// `_cuda_graph_capture_health_check` and wandb's `json_dumps_safer_history` (which holds `mps_`),
/// but no device ran. It is a CPU run; a CPU operator that only runs on a GPU
/// (`aten::cudnn_convolution`) still says CUDA.
#[test]
fn python_frame_names_never_make_a_device() {
    let frames = [
        "torch/storage.py(472): is_cuda",
        "torch/optim/optimizer.py(444): _cuda_graph_capture_health_check",
        "wandb/util.py(869): json_dumps_safer_history",
        "torch/cuda/__init__.py(118): is_available",
    ];
    let build = |gpu_op: bool| {
        let mut b = TraceBuilder::new();
        for k in 0..20 {
            let t = 1_000.0 * k as f64;
            b.event("python_function", frames[k % frames.len()], t, 50.0);
            b.cpu_op("aten::addmm", t + 100.0, 600.0);
            b.cpu_op("aten::relu", t + 720.0, 100.0);
            if gpu_op {
                b.cpu_op("aten::cudnn_convolution", t + 850.0, 100.0);
            }
        }
        report_of(&cpu_trace(&b, Vec::new()))
    };
    let r = build(false);
    common::assert_report_invariants(&r, "python frames");
    assert_eq!(
        r.context.device.kind,
        DeviceKind::Cpu,
        "{}",
        r.to_markdown()
    );
    assert!(
        r.context.holds(TraceHolds::CpuOnly),
        "{:?}",
        r.context.holds
    );
    assert!(
        r.main_finding.contains("A CPU-only run"),
        "{}",
        r.main_finding
    );
    let words = all_words(&r);
    for f in frames {
        assert!(!words.contains(f), "{f} named as evidence: {words}");
    }
    assert!(
        !words.contains("recorded without its device activity"),
        "{words}"
    );
    // The counter-case: an operator only a GPU runs is device evidence.
    let r = build(true);
    assert_eq!(
        r.context.device.kind,
        DeviceKind::Cuda,
        "{}",
        r.to_markdown()
    );
}

// 2. Shares of the window ---------------------------------------------------------------------------

/// 100 ms window: the main thread runs ten 5 ms `aten::addmm`; four feeder threads each run
/// `aten::copy_` over the same 20-80 ms and wait in `threading.py: wait` for the whole window.
/// Summed over threads copy_ is 240 ms, 240% of the window; measured by its union it is 60 ms, 60%.
/// The waits are never ranked as the host's work, and no share passes 100%.
#[test]
fn shares_of_parallel_threads_never_pass_the_window() {
    let mut b = TraceBuilder::new();
    for k in 0..10 {
        b.cpu_op("aten::addmm", 10_000.0 * k as f64, 5_000.0);
    }
    let mut extra = Vec::new();
    for tid in 1..=4 {
        extra.push(on_thread(
            "python_function",
            "threading.py(359): wait",
            tid,
            0.0,
            100_000.0,
        ));
        extra.push(on_thread("cpu_op", "aten::copy_", tid, 20_000.0, 60_000.0));
    }
    let r = report_of(&cpu_trace(&b, extra));
    common::assert_report_invariants(&r, "threads");
    let copy = r
        .context
        .top_ops
        .iter()
        .find(|o| o.name == "aten::copy_")
        .expect("copy_ ranked");
    assert_eq!(copy.self_ns, 240_000_000, "summed thread time");
    assert_eq!(copy.wall_ns, 60_000_000, "union over threads");
    assert_eq!(copy.threads, 4);
    assert!(
        r.main_finding.contains("over 4 threads, busy 60.0%"),
        "{}",
        r.main_finding
    );
    assert!(
        !r.main_finding.contains("threading.py"),
        "{}",
        r.main_finding
    );
    let words = all_words(&r);
    let over: Vec<f64> = percentages(&words)
        .into_iter()
        .filter(|p| *p > 100.0)
        .collect();
    assert!(over.is_empty(), "shares above 100%: {over:?}\n{words}");
}

/// A logger's event loop on its own thread (Python frames only): its first `_run_once` takes 60 ms
/// of the 100 ms window against 0.5 ms later. It is not the run's cold start and is never named; the
/// operators' thread holds no one-off cost.
#[test]
fn a_background_threads_first_call_is_not_the_runs_cold_start() {
    let mut b = TraceBuilder::new();
    for k in 0..20 {
        b.cpu_op("aten::addmm", 5_000.0 * k as f64, 4_000.0);
    }
    let frame = "asyncio/base_events.py(1970): _run_once";
    let mut extra = vec![on_thread("python_function", frame, 7, 0.0, 60_000.0)];
    for k in 0..19 {
        extra.push(on_thread(
            "python_function",
            frame,
            7,
            61_000.0 + 2_000.0 * k as f64,
            500.0,
        ));
    }
    let r = report_of(&cpu_trace(&b, extra));
    common::assert_report_invariants(&r, "background thread");
    assert!(
        !r.context.holds(TraceHolds::ColdStart),
        "{:?}",
        r.context.holds
    );
    assert!(!all_words(&r).contains("_run_once"), "{}", r.to_markdown());
}

// 3. What bounds a CPU run --------------------------------------------------------------------------

const CONV_A: &str = "[[5, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], []]";
const CONV_B: &str = "[[5, 64, 56, 56], [64, 64, 3, 3], [], [], [], [], []]";

/// Ten forward passes of a small conv net on the CPU (shapes recorded): per pass `aten::conv2d` on
/// shape A (around `aten::mkldnn_convolution`) 1 ms, `aten::conv2d` on shape B 2 ms, `aten::relu_`
/// 0.2 ms; the first pass's conv A takes `first_us`.
fn conv_passes(first_us: f64, inner: &str) -> DiagnosisReport {
    let mut b = TraceBuilder::new();
    for p in 0..10 {
        let t = 10_000.0 * p as f64;
        let a = if p == 0 { first_us } else { 1_000.0 };
        let dims = |d: &str| json!({"Input Dims": serde_json::from_str::<Value>(d).unwrap()});
        b.cpu_op_args("aten::conv2d", t, a, dims(CONV_A));
        b.cpu_op(inner, t + 10.0, a - 20.0);
        b.cpu_op_args("aten::conv2d", t + a + 100.0, 2_000.0, dims(CONV_B));
        b.cpu_op("aten::relu_", t + a + 2_200.0, 200.0);
    }
    report_of(&cpu_trace(&b, Vec::new()))
}

/// The conv net's operators are 94% convolution: compute-bound on the CPU (a class, not
/// "Undetermined"), with channels-last and bf16 advice. A first pass whose conv A takes 5 ms against
/// 1 ms later is cold: 4 ms beyond the later median; the same run without it is not called cold.
#[test]
fn a_cpu_conv_run_is_compute_bound_and_its_cold_first_pass_is_named() {
    let r = conv_passes(5_000.0, "aten::mkldnn_convolution");
    common::assert_report_invariants(&r, "conv passes");
    let b = r.bottleneck.as_ref().expect("bottleneck");
    assert_eq!(b.kind, BottleneckKind::Cpu, "{}", r.to_markdown());
    assert!(
        b.reason.contains("compute-bound on the CPU"),
        "{}",
        b.reason
    );
    // Independently: self time 10 × 3.2 ms + 4 ms = 36 ms; convolutions all of it but relu_.
    let conv_share = 100.0 * (36_000.0 - 2_000.0) / 36_000.0;
    assert!(
        b.reason.contains(&format!("{conv_share:.0}%")),
        "{conv_share:.0}% in {}",
        b.reason
    );
    assert!(
        r.main_finding.contains("the first pass is cold")
            && r.main_finding
                .contains("4.00 ms beyond their later medians"),
        "{}",
        r.main_finding
    );
    let words = all_words(&r);
    assert!(words.contains("channels_last"), "{words}");
    assert!(words.contains("bfloat16"), "{words}");
    assert!(words.contains("Leave the first pass out"), "{words}");
    assert!(!words.contains("_slow_conv2d_forward"), "{words}");
    let md = r.to_markdown();
    assert!(!md.contains("Bottleneck: Undetermined"), "{md}");
    assert!(!md.contains("Nothing analysed"), "{md}");

    let warm = conv_passes(1_000.0, "aten::mkldnn_convolution");
    assert!(!warm.main_finding.contains("cold"), "{}", warm.main_finding);
}

/// The same passes through `aten::_slow_conv2d_forward` (the im2col fallback): named, with the
/// oneDNN check instead of channels-last.
#[test]
fn the_im2col_convolution_fallback_is_named() {
    let r = conv_passes(1_000.0, "aten::_slow_conv2d_forward");
    let words = all_words(&r);
    assert!(
        r.main_finding
            .contains("`aten::_slow_conv2d_forward`, the im2col fallback"),
        "{}",
        r.main_finding
    );
    assert!(
        words.contains("torch.backends.mkldnn.is_available()"),
        "{words}"
    );
}

/// Ten passes whose max pooling takes 6 ms a call against 1-2 ms for a convolution call: pooling
/// this slow is remarked on (a slow path or a huge activation), with its share computed here.
#[test]
fn pooling_slower_than_the_convolutions_is_remarked_on() {
    let mut b = TraceBuilder::new();
    for p in 0..10 {
        let t = 20_000.0 * p as f64;
        b.cpu_op("aten::conv2d", t, 1_000.0);
        b.cpu_op("aten::conv2d", t + 1_100.0, 2_000.0);
        b.cpu_op("aten::max_pool2d", t + 3_200.0, 6_000.0);
        b.cpu_op("aten::max_pool2d_with_indices", t + 3_210.0, 5_980.0);
    }
    let r = report_of(&cpu_trace(&b, Vec::new()));
    // Self time 10 × 9 ms; pooling 6 ms of each pass (wrapper and inner): 66.7%, 6 ms a call of
    // the inner operator (the one with most self time); the convolutions 30 ms in 20 calls.
    let share = 100.0 * 6_000.0 / 9_000.0;
    assert!(
        r.main_finding.contains(&format!(
            "pooling takes {share:.0}% of the operators' self time, 6.00 ms a call against 1.50 ms"
        )),
        "{}",
        r.main_finding
    );
}

/// 40 element-wise operators of 10 µs in one 0.5 ms pass: a toy size bound by per-operator
/// overhead; the figures are said not to carry over, the advice is a larger batch and compilation.
#[test]
fn a_toy_cpu_run_is_overhead_bound_and_said_to_be_a_toy() {
    let mut b = TraceBuilder::new();
    for k in 0..40 {
        let name = if k % 2 == 0 { "aten::add" } else { "aten::mul" };
        b.cpu_op(name, 12.0 * k as f64, 10.0);
    }
    let r = report_of(&cpu_trace(&b, Vec::new()));
    common::assert_report_invariants(&r, "toy");
    let b = r.bottleneck.as_ref().expect("bottleneck");
    assert_eq!(b.kind, BottleneckKind::Cpu);
    assert!(
        b.reason
            .contains("framework-overhead-bound: 40 operator calls"),
        "{}",
        b.reason
    );
    assert!(
        r.main_finding.contains("a toy or tutorial size")
            && r.main_finding.contains("would not carry over"),
        "{}",
        r.main_finding
    );
    let words = all_words(&r);
    assert!(words.contains("larger batch"), "{words}");
    assert!(words.contains("torch.compile"), "{words}");
}

/// 1 s window: the main thread is inside the DataLoader's `__next__` for 800 ms, waiting in
/// `WaitForMultipleObjects` (a multiprocessing worker start-up on Windows), then runs 200 ms of
/// operators. The run is bound by data loading (80% of the window); the wait is not ranked as work.
#[test]
fn a_cpu_run_waiting_on_the_dataloader_says_so() {
    let mut b = TraceBuilder::new();
    b.event(
        "python_function",
        "torch/utils/data/dataloader.py(727): __next__",
        0.0,
        800_000.0,
    );
    b.event(
        "python_function",
        "<built-in function WaitForMultipleObjects>",
        10_000.0,
        780_000.0,
    );
    for k in 0..20 {
        b.cpu_op("aten::addmm", 800_000.0 + 10_000.0 * k as f64, 9_000.0);
    }
    let r = report_of(&cpu_trace(&b, Vec::new()));
    common::assert_report_invariants(&r, "dataloader");
    let b = r.bottleneck.as_ref().expect("bottleneck");
    assert!(
        b.reason.contains("bound by data loading")
            && b.reason.contains("800.0 ms (80% of the 999.0 ms profiled)"),
        "{}",
        b.reason
    );
    assert!(
        !r.main_finding.contains("WaitForMultipleObjects"),
        "{}",
        r.main_finding
    );
    assert!(all_words(&r).contains("persistent_workers=True"));
}

// 4. TF32 where the device has it -----------------------------------------------------------------

/// The device table decides: an A100's TF32 runs 8× its fp32; a GeForce RTX 3060 (not in the table,
/// estimated from the GeForce RTX 3090, not the A10 of the same architecture) runs TF32 at its fp32
/// rate and bf16 at twice it; a 2080 Ti has fp16 only.
#[test]
fn the_device_table_says_which_precision_pays() {
    let roof = |name: &str, sms: u32, arch: (u8, u8)| {
        device_roof(&DeviceProps {
            name: Some(name.into()),
            sms: Some(sms),
            arch: Some(arch),
            ..DeviceProps::default()
        })
    };
    let a100 = roof("NVIDIA A100-SXM4-80GB", 108, (8, 0));
    assert_eq!(a100.peaks.fp32_lever(), Fp32Lever::Tf32(156.0 / 19.5));
    let rtx = roof("NVIDIA GeForce RTX 3060", 28, (8, 6));
    assert_eq!(rtx.device.as_deref(), Some("RTX 3090"));
    match rtx.peaks.fp32_lever() {
        Fp32Lever::Half { gain, bf16: true } => assert!((gain - 71.0 / 35.6).abs() < 1e-9),
        other => panic!("RTX 3060: {other:?}"),
    }
    let turing = roof("NVIDIA GeForce RTX 2080 Ti", 68, (7, 5));
    assert!(matches!(
        turing.peaks.fp32_lever(),
        Fp32Lever::Half { bf16: false, .. }
    ));
}

/// fp32 SIMT GEMMs fill the kernel time on a GeForce RTX 3060: the advice is bf16 autocast, never
/// "enable TF32" (it runs at the fp32 rate there), and the recoverable time is what bf16's 2× gives
/// at most; on the A100 the same trace is told to enable TF32.
#[test]
fn tf32_is_advised_only_where_it_runs_faster_than_fp32() {
    let mut b = TraceBuilder::new();
    b.step(0, 0.0, 21_000.0);
    for i in 0..20 {
        let t = 500.0 + 1_000.0 * i as f64;
        let h = 100.0 + 20.0 * i as f64;
        b.cpu_op("aten::mm", h, 7.0);
        b.kernel("ampere_sgemm_128x64_nn", 7, h + 1.0, 5.0, t, 600.0);
        b.kernel("elementwise_kernel", 7, h + 8.0, 5.0, t + 600.0, 400.0);
    }
    let on = |name: &str, sms: u64, minor: u64| {
        let mut v: Value = serde_json::from_str(&b.json()).expect("builder JSON");
        v["deviceProperties"] = json!([{"id": 0, "name": name, "numSms": sms,
            "computeMajor": 8, "computeMinor": minor}]);
        report_of(&v.to_string())
    };
    let fp32 = |r: &DiagnosisReport| {
        r.findings
            .iter()
            .find(|f| f.id == FindingId::Fp32Matmul)
            .cloned()
            .unwrap_or_else(|| panic!("no fp32 finding\n{}", r.to_markdown()))
    };
    let r = on("NVIDIA GeForce RTX 3060", 28, 6);
    common::assert_report_invariants(&r, "rtx 3060");
    let f = fp32(&r);
    let actions = f.actions_markdown("\n");
    assert!(!actions.contains("Enable TF32"), "{actions}");
    assert!(actions.contains("bf16 autocast"), "{actions}");
    assert!(
        !f.explanation.contains("several times"),
        "{}",
        f.explanation
    );
    // At most 1 - 1/2 of the sgemm time (bf16 at 71/35.6 ≈ 2× fp32).
    let sgemm_ns = 20.0 * 600.0 * 1000.0;
    let bound = sgemm_ns * (1.0 - 35.6 / 71.0);
    assert!(
        (f.impact.time_ns as f64) <= bound + 1.0,
        "{} > {bound}",
        f.impact.time_ns
    );
    let r = on("NVIDIA A100-SXM4-80GB", 108, 0);
    assert!(fp32(&r).actions_markdown("\n").contains("Enable TF32"));
}
