//! Issue 30's host-side phenomena, one small trace built in code each: a GPU run whose host computes
//! on CPU tensors (operators that launched nothing) is diagnosed whatever its kernel count, and that
//! time is host compute, never dispatch; a run dominated by host compute is no copy benchmark; a
//! benchmark harness's syncs are the measurement's; a tiny sync never heads a report; a CPU run
//! recorded on a Mac is advised for a Mac (no CUDA), float64 operators are said; and timestamps in
//! two time bases are separated, the cluster with the device work analysed.

use crate::common::{self, all_words, TraceBuilder, HOST_PID, HOST_TID};
use crate::common::{has_finding as has, idle_us};
use profile_model::report::attribution::IdleCause;
use profile_model::report::context::TraceHolds;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::FindingId;
use profile_model::table::{load_bytes, TraceSet};
use profile_model::trace::diagnostics::DiagnosticKind;
use serde_json::{json, Value};

const GEMM: &str = "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel";
const ADD: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)";
const H2D: &str = "Memcpy HtoD (Pageable -> Device)";

fn report(b: &TraceBuilder) -> DiagnosisReport {
    let r = diagnose(&TraceSet::single(b.table("trace.json")));
    common::assert_report_invariants(&r, "host work");
    r
}

// 1. A small trace with a clear host story -----------------------------------------------------------

/// `torch.randn` without `device=` fills 80 ms on the CPU, then one host-to-device copy and one
/// GEMM: two device operations, which alone are "too little to diagnose". The host's 80 ms of a
/// 83.7 ms window are the finding: host compute on CPU tensors, named, with the device advice
/// (create on the device), never CUDA graphs or `torch.compile`.
#[test]
fn a_small_gpu_run_dominated_by_cpu_randn_is_host_compute_not_too_little() {
    let mut b = TraceBuilder::new();
    b.cpu_op("aten::randn", 0.0, 80_000.0);
    b.cpu_op("aten::normal_", 1_000.0, 78_000.0);
    b.cpu_op("aten::to", 80_000.0, 3_000.0);
    b.memcpy(H2D, 64 << 20, 7, 80_010.0, 2_900.0, 80_100.0, 2_500.0);
    b.cpu_op("aten::mm", 83_100.0, 20.0);
    b.kernel(GEMM, 7, 83_105.0, 8.0, 83_200.0, 500.0);
    let r = report(&b);
    assert!(
        !r.context.holds(TraceHolds::Insufficient),
        "{:?}\n{}",
        r.context.holds,
        r.to_markdown()
    );
    assert!(!r.context.holds(TraceHolds::Microbenchmark));
    assert_eq!(
        r.main_finding_id,
        Some(FindingId::HostCompute),
        "{}",
        r.to_markdown()
    );
    let f = r
        .findings
        .iter()
        .find(|f| f.id == FindingId::HostCompute)
        .expect("host compute");
    // Independently: randn 0-80 ms with the device idle, over the span 0-83.7 ms.
    assert_eq!(f.impact.time_ns, 80_000_000);
    let share = 100.0 * 80_000.0 / 83_700.0;
    assert!(
        (f.impact.pct_of_gpu_time.unwrap() - share).abs() < 0.01,
        "{:?} vs {share}",
        f.impact
    );
    assert!(r.main_finding.contains("aten::randn"), "{}", r.main_finding);
    let words = f.actions_markdown("\n");
    assert!(words.contains("device=\"cuda\""), "{words}");
    for advice in ["reduce-overhead", "CUDA graph", "torch.compile"] {
        assert!(!words.contains(advice), "{advice} in {words}");
    }
    let b_kind = r.bottleneck.as_ref().expect("bottleneck").kind;
    assert_eq!(
        b_kind,
        profile_model::report::bottleneck::BottleneckKind::Cpu
    );
}

// 2. Host time is not dispatch when the op launched nothing -----------------------------------------

/// What a step's long (2 ms) CPU op is.
#[derive(Clone, Copy)]
enum LongOp {
    /// An ordinary op that launches a kernel at its end: its host time is dispatch.
    Launches,
    /// `randn` on the CPU: compute on CPU tensors.
    CpuRandn,
    /// A split into many views (`split_with_sizes` > `narrow` > `slice` > `as_strided`): no compute.
    Views,
}

/// Ten steps, each a 2 ms CPU op then 30 small kernels.
fn steps_with_long_op(long: LongOp) -> DiagnosisReport {
    let mut b = TraceBuilder::new();
    for k in 0..10 {
        let t0 = 3_200.0 * k as f64;
        b.step(k + 1, t0, 3_100.0);
        match long {
            LongOp::Launches => {
                b.cpu_op("aten::index", t0 + 10.0, 2_000.0);
                b.kernel(ADD, 7, t0 + 2_000.0, 8.0, t0 + 2_011.0, 20.0);
            }
            LongOp::CpuRandn => {
                b.cpu_op("aten::randn", t0 + 10.0, 2_000.0);
                b.cpu_op("aten::normal_", t0 + 20.0, 1_980.0);
            }
            LongOp::Views => {
                b.cpu_op("aten::split_with_sizes", t0 + 10.0, 2_000.0);
                for v in 0..10 {
                    let tv = t0 + 20.0 + 198.0 * v as f64;
                    b.cpu_op("aten::narrow", tv, 190.0);
                    b.cpu_op("aten::slice", tv + 5.0, 180.0);
                    b.cpu_op("aten::as_strided", tv + 10.0, 170.0);
                }
            }
        }
        let mut t = t0 + 2_100.0;
        for _ in 0..30 {
            b.cpu_op("aten::add", t, 12.0);
            b.kernel(ADD, 7, t + 2.0, 8.0, t + 11.0, 20.0);
            t += 32.0;
        }
    }
    report(&b)
}

/// The 2 ms in an op that launched nothing are host compute (idle cause and finding, the main
/// one), not dispatch, a host stall or launch overhead; the same 2 ms in an op that launches a kernel at its
/// end stay the host's dispatch story, and no host compute is claimed.
#[test]
fn host_time_in_an_op_that_launched_nothing_is_host_compute_not_dispatch() {
    let r = steps_with_long_op(LongOp::CpuRandn);
    // Independently: steps 2-10 each hold 2 ms of randn inside the GPU window.
    let inside = idle_us(&r, IdleCause::HostCompute);
    assert!(
        (inside - 9.0 * 2_000.0).abs() < 1.0,
        "host compute idle {inside} µs\n{}",
        r.to_markdown()
    );
    // The launches between the small kernels are still dispatch; the 2 ms are not in it.
    let dispatch = idle_us(&r, IdleCause::DispatchOverhead) + idle_us(&r, IdleCause::HostStall);
    assert!(dispatch < 9.0 * 1_000.0, "dispatch {dispatch} µs");
    for id in [FindingId::HostStall, FindingId::LaunchOverhead] {
        assert!(!has(&r, id), "{id}\n{}", r.to_markdown());
    }
    assert_eq!(
        r.main_finding_id,
        Some(FindingId::HostCompute),
        "{}",
        r.to_markdown()
    );
    let f = r
        .findings
        .iter()
        .find(|f| f.id == FindingId::HostCompute)
        .unwrap();
    // On the host: ten randn of 2 ms each in the steps' window (step 1 before the first kernel too).
    assert_eq!(f.impact.time_ns, 10 * 2_000_000);
    assert!(!f.actions_markdown("\n").contains("torch.compile"));

    let launching = steps_with_long_op(LongOp::Launches);
    assert_eq!(idle_us(&launching, IdleCause::HostCompute), 0.0);
    assert!(!has(&launching, FindingId::HostCompute));
    assert!(
        has(&launching, FindingId::HostStall) || has(&launching, FindingId::HostOverhead),
        "{}",
        launching.to_markdown()
    );
}

/// Host time in view operators (a split into many pieces) is not compute on CPU tensors: views
/// compute nothing on any device, so no host compute and no "create on the device" advice.
#[test]
fn host_time_in_view_ops_is_not_host_compute() {
    let r = steps_with_long_op(LongOp::Views);
    assert_eq!(
        idle_us(&r, IdleCause::HostCompute),
        0.0,
        "{}",
        r.to_markdown()
    );
    assert!(!has(&r, FindingId::HostCompute), "{}", r.to_markdown());
}

// 3. Host compute then copies is not a copy benchmark -----------------------------------------------

/// Three timed host-to-device copies after `hot_us` of CPU compute.
fn copies_after(hot_us: f64) -> DiagnosisReport {
    let mut b = TraceBuilder::new();
    if hot_us > 0.0 {
        b.cpu_op("aten::randn", 0.0, hot_us);
    }
    let mut t = hot_us + 10.0;
    for _ in 0..3 {
        b.cpu_op("aten::to", t, 2_100.0);
        b.memcpy(H2D, 256 << 20, 7, t + 5.0, 2_050.0, t + 20.0, 2_000.0);
        t += 2_200.0;
    }
    report(&b)
}

/// The copies are what a 6.6 ms window is made of: a copy benchmark. After 80 ms of CPU compute
/// the same copies are 7% of the window: the run is the host's, not a copy benchmark.
#[test]
fn copies_after_long_host_compute_are_not_a_copy_benchmark() {
    let bench = copies_after(0.0);
    assert!(
        bench.context.holds(TraceHolds::Microbenchmark),
        "{:?}",
        bench.context.holds
    );
    let hot = copies_after(80_000.0);
    assert!(
        !hot.context.holds(TraceHolds::Microbenchmark),
        "{:?}\n{}",
        hot.context.holds,
        hot.to_markdown()
    );
    assert!(
        !hot.main_finding.contains("copy benchmark"),
        "{}",
        hot.main_finding
    );
    assert_eq!(
        hot.main_finding_id,
        Some(FindingId::HostCompute),
        "{}",
        hot.to_markdown()
    );
}

// 4. A benchmark harness's syncs are the measurement's ----------------------------------------------

/// Ten timed iterations of three ops (a GEMM, an add, a relu: three kernels of equal time, so no
/// single operator repeated), each followed by `torch.cuda.synchronize()` (a `cudaDeviceSynchronize`
/// called by no operator) and 300 µs of the script's timing before the next. `steps` wraps each
/// iteration in a ProfilerStep: a model run.
fn timed_iterations(steps: bool) -> DiagnosisReport {
    let mut b = TraceBuilder::new();
    let mut t = 0.0;
    for k in 0..10 {
        let t0 = t;
        for (i, (op, kernel)) in [
            ("aten::mm", GEMM),
            ("aten::add", ADD),
            ("aten::relu", "relu_kernel"),
        ]
        .iter()
        .enumerate()
        {
            let s = t0 + 20.0 * i as f64;
            b.cpu_op(op, s, 15.0);
            b.kernel(kernel, 7, s + 2.0, 8.0, t0 + 30.0 + 200.0 * i as f64, 200.0);
        }
        b.runtime("cudaDeviceSynchronize", t0 + 70.0, 570.0);
        if steps {
            b.step(k + 1, t0, 940.0);
        }
        t = t0 + 950.0;
    }
    report(&b)
}

/// Without steps the syncs are the timing loop's: no sync finding advises removing them, a note
/// says they are the measurement's. The same syncs in ProfilerSteps are a model run's: advised.
#[test]
fn a_timing_loops_syncs_are_the_measurements_not_advised_away() {
    let r = timed_iterations(false);
    assert!(
        !has(&r, FindingId::Synchronization) && !has(&r, FindingId::WaitOutsideTrace),
        "{}",
        r.to_markdown()
    );
    let words = all_words(&r);
    assert!(words.contains("benchmark harness"), "{words}");
    assert!(!words.contains("remove it from the step"), "{words}");

    let model = timed_iterations(true);
    assert!(
        has(&model, FindingId::Synchronization),
        "{}",
        model.to_markdown()
    );
    assert!(!all_words(&model).contains("benchmark harness"));
}

// 5. Tiny syncs never head a report -----------------------------------------------------------------

/// Twenty GEMMs launched from three different ops, with one `.item()` sync in the middle whose
/// refill leaves the GPU idle `gap_us`; times scaled by `scale`.
fn one_sync(scale: f64) -> DiagnosisReport {
    let mut b = TraceBuilder::new();
    let ops = ["aten::mm", "aten::addmm", "aten::matmul"];
    let k = 126.0 * scale;
    for i in 0..10 {
        let s = i as f64 * k;
        b.cpu_op(ops[i % 3], s * 0.5, 5.0);
        b.kernel(GEMM, 7, s * 0.5 + 1.0, 3.0, s, k);
    }
    let end = 10.0 * k;
    b.cpu_op("aten::item", end - 260.0 * scale, 260.0 * scale + 1.0);
    b.cpu_op(
        "aten::_local_scalar_dense",
        end - 259.0 * scale,
        259.0 * scale,
    );
    b.runtime("cudaStreamSynchronize", end - 258.0 * scale, 258.0 * scale);
    let restart = end + 480.0 * scale;
    for i in 0..10 {
        let s = restart + i as f64 * k;
        let host = end + 10.0 + i as f64 * 3.0;
        b.cpu_op(ops[i % 3], host, 2.0);
        b.kernel(GEMM, 7, host + 0.5, 1.0, s, k);
    }
    report(&b)
}

/// A sync that idles the GPU 0.48 ms of a 3 ms window (16%) is not what the run is about: the
/// dominant GEMM of a GPU busy 84% heads the report. Ten times longer (4.8 ms), it leads.
#[test]
fn a_tiny_sync_never_heads_the_report() {
    let r = one_sync(1.0);
    let sync = r
        .findings
        .iter()
        .find(|f| f.id == FindingId::Synchronization)
        .expect("the sync is still listed");
    assert!(
        sync.impact.time_ns < 1_000_000,
        "{:?}\n{}",
        sync.impact,
        r.to_markdown()
    );
    assert_ne!(
        r.main_finding_id,
        Some(FindingId::Synchronization),
        "{}",
        r.to_markdown()
    );
    let big = one_sync(10.0);
    assert_eq!(
        big.main_finding_id,
        Some(FindingId::Synchronization),
        "{}",
        big.to_markdown()
    );
}

// 6. A CPU run recorded on a Mac ---------------------------------------------------------------------

/// A CPU-only run (no `deviceProperties`) of float64 GEMMs; `mac` adds a Python frame under
/// `/Users/`, as a Mac records it.
fn cpu_run(mac: bool) -> DiagnosisReport {
    let mut b = TraceBuilder::new();
    let shapes =
        json!({"Input Dims": [[512, 512], [512, 512]], "Input type": ["double", "double"]});
    for k in 0..20 {
        let t = 10_000.0 * k as f64;
        b.cpu_op_args("aten::mm", t, 9_000.0, shapes.clone());
        b.cpu_op("aten::relu", t + 9_100.0, 500.0);
    }
    let mut v: Value = serde_json::from_str(&b.json()).unwrap();
    v.as_object_mut().unwrap().remove("deviceProperties");
    if mac {
        v["traceEvents"].as_array_mut().unwrap().push(json!({
            "ph": "X", "cat": "python_function", "name": "/Users/alice/bench/run.py(12): main",
            "pid": HOST_PID, "tid": HOST_TID, "ts": 0.0, "dur": 199_700.0, "args": {}
        }));
    }
    let t = load_bytes("cpu.json", v.to_string().as_bytes()).unwrap();
    let r = diagnose(&TraceSet::single(t));
    common::assert_report_invariants(&r, "cpu run");
    r
}

/// On a Mac: no CUDA recording or bf16/AMX advice, the Mac's threads and its GPU (MPS) instead;
/// float64 is said with float32 advised on both platforms.
#[test]
fn a_cpu_run_on_a_mac_gets_mac_advice_and_float64_is_said() {
    let mac = cpu_run(true);
    assert!(mac.context.holds(TraceHolds::CpuOnly));
    let words = all_words(&mac);
    for wrong in [
        "ProfilerActivity.CUDA",
        "AVX-512",
        "numactl",
        "model.to(\"cuda\")",
    ] {
        assert!(!words.contains(wrong), "{wrong} in {words}");
    }
    assert!(words.contains("\"mps\""), "{words}");
    assert!(words.contains("float32, not float64"), "{words}");
    assert!(words.contains("aten::mm"), "{words}");

    let linux = cpu_run(false);
    let words = all_words(&linux);
    assert!(!words.contains("\"mps\""), "{words}");
    assert!(words.contains("float32, not float64"), "{words}");
}

// 7. Timestamps in two time bases -------------------------------------------------------------------

/// A trace whose kernels and their ops are relative (0-20 ms) and a few host events carry absolute
/// epoch times (1.6e15 µs): the window is the relative cluster's, a diagnostic counts the others,
/// and the report's first lines say so.
#[test]
fn timestamps_in_two_time_bases_keep_the_cluster_with_the_device_work() {
    let mut b = TraceBuilder::new();
    let mut t = 0.0;
    for _ in 0..40 {
        b.cpu_op("aten::mm", t, 20.0);
        b.kernel(GEMM, 7, t + 2.0, 8.0, t + 15.0, 400.0);
        t += 500.0;
    }
    let epoch = 1.6e15;
    for k in 0..3 {
        b.event(
            "python_function",
            "train.py(3): <module>",
            epoch + 100.0 * k as f64,
            50.0,
        );
    }
    let table = b.table("mixed.json");
    let d = table
        .diagnostics
        .list()
        .into_iter()
        .find(|d| d.kind == DiagnosticKind::MixedTimeBases)
        .expect("counted");
    assert_eq!(d.count, 3);
    let r = diagnose(&TraceSet::single(table));
    common::assert_report_invariants(&r, "mixed time bases");
    let w = &r.context.windows[0];
    // Independently: the relative cluster spans 0 to the last kernel's end, 39 × 500 + 415 µs.
    assert_eq!(
        w.trace_end_ns - w.trace_start_ns,
        (39.0 * 500.0 + 415.0) as i64 * 1000
    );
    let first = r
        .context
        .data_loss
        .as_ref()
        .expect("said first")
        .to_markdown();
    assert!(first.contains("time base"), "{first}");
    assert!(!r.context.holds(TraceHolds::Insufficient));
}
