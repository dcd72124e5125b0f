//! Issue 30's diagnosis phenomena, one small trace built in code each: a cold pass against a steady
//! state (one-off costs are `startup`, never dispatch; launch figures by median), the right thread
//! (a frame that only waits is never named), copies by direction and memory kind, one gate and one
//! cut, and reconciled figures (compile time by union, denominators named, unique short names).

use crate::common;
use crate::common::idle_us;

use crate::common::{TraceBuilder, HOST_PID};
use profile_model::analysis::all::AnalysisOptions;
use profile_model::analysis::launch::kernel_launch_stats;
use profile_model::report::attribution::IdleCause;
use profile_model::report::context::TraceHolds;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::FindingId;
use profile_model::table::{load_bytes, TraceSet};
use serde_json::{json, Value};

const CONV: &str =
    "void cask__5x_cudnn::computeOffsetsKernel<false, false>(cask__5x_cudnn::ComputeOffsetsParams)";
const ADD: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)";
const GEMM: &str = "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel";

fn report(b: &TraceBuilder) -> DiagnosisReport {
    let r = diagnose(&TraceSet::single(b.table("trace.json")));
    common::assert_report_invariants(&r, "scenario");
    r
}

/// A forward of `n` small kernels, each launched 8 µs after the previous one ends, from `t0` (µs);
/// returns the end.
fn forward(b: &mut TraceBuilder, t0: f64, n: usize, kernel: &str) -> f64 {
    let mut t = t0;
    for _ in 0..n {
        b.cpu_op("aten::add", t, 12.0);
        b.kernel(kernel, 7, t + 2.0, 8.0, t + 11.0, 20.0);
        t += 32.0;
    }
    t
}

// 1. Cold against steady ------------------------------------------------------------------------------

/// One cold forward: 60 small kernels, then the first launch of a convolution kernel takes 600 ms
/// (its module loaded on first use) inside the first `aten::cudnn_convolution`, then 60 more. The
/// trace is one cold pass: the 600 ms are `startup`, the report says to record after warm-up, and it
/// recommends neither CUDA graphs nor torch.compile.
#[test]
fn a_cold_first_launch_is_startup_and_the_trace_one_cold_pass() {
    let mut b = TraceBuilder::new();
    let t = forward(&mut b, 0.0, 60, ADD);
    b.cpu_op("aten::cudnn_convolution", t, 600_030.0);
    b.kernel(CONV, 7, t + 10.0, 600_000.0, t + 600_015.0, 30.0);
    let t = forward(&mut b, t + 600_050.0, 60, ADD);
    // Later convolutions: launched in 8 µs.
    for k in 0..5 {
        let s = t + 100.0 * k as f64;
        b.cpu_op("aten::cudnn_convolution", s, 40.0);
        b.kernel(CONV, 7, s + 5.0, 8.0, s + 14.0, 30.0);
    }
    let r = report(&b);
    assert!(
        r.context.holds(TraceHolds::ColdStart),
        "{:?}",
        r.context.holds
    );
    assert_eq!(
        r.main_finding_id,
        Some(FindingId::Warmup),
        "{}",
        r.to_markdown()
    );
    for id in [FindingId::LaunchOverhead, FindingId::HostOverhead] {
        assert!(
            !r.findings.iter().any(|f| f.id == id),
            "{}",
            r.to_markdown()
        );
    }
    // The GPU is idle from the end of the kernel before the launch to the convolution's start.
    let before = 32.0 * 59.0 + 11.0 + 20.0;
    let gap = (t - 100.0 * 0.0 - 60.0 * 32.0 - 600_050.0 + 600_015.0) - before;
    let startup = idle_us(&r, IdleCause::Startup);
    assert!(
        startup >= 599_000.0 && startup <= gap + 1.0,
        "startup {startup} vs gap {gap}"
    );
    assert_eq!(idle_us(&r, IdleCause::DispatchOverhead) < 10_000.0, true);
    let md = r.to_markdown();
    assert!(
        md.contains("torch.profiler.schedule(wait=1, warmup="),
        "{md}"
    );
    assert!(md.contains("cudaLaunchKernel"), "{md}");
    assert!(
        !md.contains("reduce-overhead") && !md.contains("make_graphed_callables"),
        "{md}"
    );
}

/// The same one-off in a long steady trace: it is `startup` (not dispatch), but the trace is no cold
/// pass, and the steady idle between kernels is still dispatch.
#[test]
fn a_one_off_in_a_steady_trace_is_startup_not_dispatch() {
    let mut b = TraceBuilder::new();
    let mut t = forward(&mut b, 0.0, 20, ADD);
    b.cpu_op("aten::cudnn_convolution", t, 30_030.0);
    b.kernel(CONV, 7, t + 10.0, 30_000.0, t + 30_015.0, 30.0);
    t += 30_100.0;
    // 4000 kernels of 20 µs, each launched after a 60 µs host op: the GPU waits 40 µs each.
    for _ in 0..4000 {
        b.cpu_op("aten::add", t, 60.0);
        b.kernel(ADD, 7, t + 50.0, 8.0, t + 59.0, 20.0);
        t += 80.0;
    }
    for k in 0..5 {
        let s = t + 100.0 * k as f64;
        b.cpu_op("aten::cudnn_convolution", s, 40.0);
        b.kernel(CONV, 7, s + 5.0, 8.0, s + 14.0, 30.0);
    }
    let r = report(&b);
    assert!(
        !r.context.holds(TraceHolds::ColdStart),
        "{:?}",
        r.context.holds
    );
    let startup = idle_us(&r, IdleCause::Startup);
    assert!(
        (29_900.0..=30_020.0).contains(&startup),
        "startup {startup}"
    );
    assert!(idle_us(&r, IdleCause::DispatchOverhead) > 100_000.0);
}

/// Launch statistics: the median and 90th percentile stay at the typical launch while the mean is
/// pulled up by the one cold launch, which is named.
#[test]
fn launch_statistics_use_medians_and_name_their_outliers() {
    let mut b = TraceBuilder::new();
    let t = forward(&mut b, 0.0, 99, ADD);
    b.kernel(CONV, 7, t, 500_000.0, t + 500_010.0, 30.0);
    let set = TraceSet::single(b.table("launch.json"));
    let stats = &kernel_launch_stats(&set, &AnalysisOptions::default())[0];
    assert_eq!(stats.launches, 100);
    assert!(
        (stats.cpu_us.p50 - 8.0).abs() < 1e-6,
        "{}",
        stats.cpu_us.p50
    );
    assert!(
        (stats.cpu_p90_us - 8.0).abs() < 1e-6,
        "{}",
        stats.cpu_p90_us
    );
    let mean = (99.0 * 8.0 + 500_000.0) / 100.0;
    assert!((stats.cpu_us.mean - mean).abs() < 1e-6);
    assert_eq!(stats.outliers.len(), 1);
    assert_eq!(stats.outliers[0].kernel, CONV);
    assert!(stats.outliers[0].first_of_kernel);
}

// 2. The right thread ---------------------------------------------------------------------------------

/// torch.compile without its frames recorded: 30 eager kernels and an fp32 GEMM of 200 µs, then
/// 2 s with the GPU idle and nothing on the host, then `cuLaunchKernel` (the driver API) of an
/// Inductor Triton kernel that runs once, then 30 more. The 2 s are compilation: the report names
/// it so, never "the first `cuLaunchKernel`" (that call takes 20 µs). The GEMM's bf16 advice would
/// give back 100 µs of a 2 s window: negligible, so it is not listed.
#[test]
fn a_gap_before_a_compiled_kernel_is_named_compilation_and_padding_is_dropped() {
    let mut b = TraceBuilder::new();
    let t = forward(&mut b, 0.0, 30, ADD);
    b.kernel(
        "ampere_sgemm_32x32_sliced1x4_tn",
        7,
        t,
        8.0,
        t + 10.0,
        200.0,
    );
    let gap_end = t + 2_000_000.0;
    forward(&mut b, gap_end + 100.0, 30, ADD);
    let launch = json!({"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": HOST_PID,
        "tid": common::HOST_TID, "ts": gap_end - 20.0, "dur": 20.0, "args": {"correlation": 90001}});
    let kernel = json!({"ph": "X", "cat": "kernel", "name": "triton_poi_fused_copy_0", "pid": 0,
        "tid": 7, "ts": gap_end, "dur": 5.0,
        "args": {"device": 0, "stream": 7, "correlation": 90001}});
    let r = diagnose(&with_events(&b, vec![launch, kernel]));
    common::assert_report_invariants(&r, "compile gap");
    let words = common::all_words(&r);
    assert!(
        words.contains("torch.compile (Inductor/Triton) compiling `triton_poi_fused_copy_0` before its first run (2.00 s"),
        "{words}"
    );
    assert!(!words.contains("the first `cuLaunchKernel`"), "{words}");
    let ids: Vec<FindingId> = r.findings.iter().map(|f| f.id).collect();
    assert!(!ids.contains(&FindingId::Fp32Matmul), "{ids:?}");
    for f in &r.findings {
        if !f.id.is_about_the_trace()
            && f.id != FindingId::DominantKernel
            && f.id != FindingId::Warmup
        {
            assert!(
                f.impact.pct_of_gpu_time.unwrap_or(0.0) >= 0.5,
                "{:?} {:?}",
                f.id,
                f.impact
            );
        }
    }
}

/// A serving loop: 10 forwards of 100 small kernels launched back to back (12 µs gaps), and
/// before each forward the host prepares the next batch for 25 ms with nothing launched. The
/// 9 stalls inside the GPU window (225 ms of ≈ 254 ms) are host stalls, named with what the host
/// was doing (`_prepare_inputs`), not "launch overhead of many tiny kernels": the short gaps
/// (99 × 9 + 99 of 12 µs, ≈ 12 ms) stay under the launch-overhead threshold.
#[test]
fn a_few_long_host_gaps_are_host_stalls_not_launch_overhead() {
    let mut b = TraceBuilder::new();
    let mut t = 0.0;
    for _ in 0..10 {
        b.event(
            "python_function",
            "vllm/v1/worker/gpu_model_runner.py(486): _prepare_inputs",
            t,
            25_000.0,
        );
        t = forward(&mut b, t + 25_000.0, 100, ADD);
    }
    let r = report(&b);
    let ids: Vec<FindingId> = r.findings.iter().map(|f| f.id).collect();
    assert!(ids.contains(&FindingId::HostStall), "{ids:?}");
    assert!(!ids.contains(&FindingId::LaunchOverhead), "{ids:?}");
    assert_eq!(r.main_finding_id, Some(FindingId::HostStall));
    let stall_ms = idle_us(&r, IdleCause::HostStall) / 1000.0;
    // Each stall: from the last kernel's end (t + 31) to the next forward's first kernel (25 ms
    // later + 11 µs): 25.0 ms − 31 µs + 32 µs + 11 µs... measured independently as 9 × 25.012 ms.
    assert!((stall_ms - 9.0 * 25.012).abs() < 0.05, "{stall_ms}");
    let stall = r
        .findings
        .iter()
        .find(|f| f.id == FindingId::HostStall)
        .unwrap();
    assert!(
        stall.explanation.contains("_prepare_inputs"),
        "{}",
        stall.explanation
    );
    assert!(
        stall.headline.contains("9 host stalls"),
        "{}",
        stall.headline
    );
    assert!(idle_us(&r, IdleCause::DispatchOverhead) < 0.06 * 254_000.0);
}

/// 20 CUDA-graph replays of 100 kernels of 4 µs (2 µs apart inside a replay), one replay every
/// 700 µs. The replayed kernels have no launch of their own: no "launch overhead of tiny kernels",
/// and the gaps inside the replays (99 × 2 µs each) are not claimed as launch latency; only the
/// 102 µs between replays, with nothing queued, is the host's.
#[test]
fn graph_replayed_kernels_are_not_launch_overhead() {
    let mut b = TraceBuilder::new();
    for s in 0..20 {
        let t = s as f64 * 700.0;
        let kernels: Vec<(&str, f64, f64)> = (0..100)
            .map(|k| (ADD, t + 20.0 + k as f64 * 6.0, 4.0))
            .collect();
        b.graph_launch(7, t, 10.0, &kernels);
    }
    let r = report(&b);
    let ids: Vec<FindingId> = r.findings.iter().map(|f| f.id).collect();
    assert!(!ids.contains(&FindingId::LaunchOverhead), "{ids:?}");
    let dispatch_us = idle_us(&r, IdleCause::DispatchOverhead);
    assert!((dispatch_us - 19.0 * 102.0).abs() < 1.0, "{dispatch_us}");
    for f in r
        .findings
        .iter()
        .filter(|f| f.id == FindingId::HostOverhead)
    {
        assert!(
            f.impact.time_ns as f64 <= dispatch_us * 1000.0 + 1.0,
            "{f:?}"
        );
    }
}

/// Adds `events` (host events on other threads) to a builder's trace and loads it.
fn with_events(b: &TraceBuilder, events: Vec<Value>) -> TraceSet {
    let mut v: Value = serde_json::from_str(&b.json()).unwrap();
    v["traceEvents"].as_array_mut().unwrap().extend(events);
    TraceSet::single(load_bytes("threads.json", v.to_string().as_bytes()).unwrap())
}

fn py(name: &str, tid: i64, ts: f64, dur: f64) -> Value {
    json!({"ph": "X", "cat": "python_function", "name": name, "pid": HOST_PID, "tid": tid,
           "ts": ts, "dur": dur, "args": {}})
}

/// The main thread dispatches slowly (Python between kernels); a background thread sits in
/// `selectors.select` and a pipe `_recv` the whole time, and a logging thread formats strings
/// without touching the device. Only the main thread's work is named; no waiting frame anywhere.
#[test]
fn frames_that_only_wait_are_never_named() {
    let mut b = TraceBuilder::new();
    let mut t = 0.0;
    for _ in 0..200 {
        b.event("python_function", "model.py(20): slow_python_loop", t, 90.0);
        b.cpu_op("aten::add", t + 90.0, 8.0);
        b.kernel(ADD, 7, t + 92.0, 5.0, t + 98.0, 20.0);
        t += 100.0;
    }
    let extra = vec![
        py("selectors.py(415): select", 200, 0.0, t),
        py("multiprocessing/connection.py(379): _recv", 201, 0.0, t),
        py("threading.py(320): wait", 202, 0.0, t),
        py("logging/__init__.py(900): format", 203, 0.0, t),
    ];
    let r = diagnose(&with_events(&b, extra));
    common::assert_report_invariants(&r, "threads");
    let named: Vec<&str> = r
        .idle_attribution
        .iter()
        .flat_map(|s| s.top_ops.iter().map(|o| o.name.as_str()))
        .collect();
    assert!(
        named.contains(&"model.py(20): slow_python_loop"),
        "{named:?}"
    );
    for bad in ["select", "_recv", "wait", "format"] {
        assert!(
            !named.iter().any(|n| n.ends_with(bad)),
            "{bad} in {named:?}"
        );
    }
    let md = r.to_markdown();
    assert!(
        !md.contains("selectors.py") && !md.contains("_recv"),
        "{md}"
    );
}

// 3. Copies by direction ------------------------------------------------------------------------------

/// A synchronous `cudaMemcpy` (runtime call) and the device copy it made, sharing a correlation.
fn blocking_copy(
    copy: &str,
    corr: i64,
    ts: f64,
    call_dur: f64,
    copy_ts: f64,
    copy_dur: f64,
) -> Vec<Value> {
    vec![
        json!({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpy", "pid": HOST_PID, "tid": common::HOST_TID,
               "ts": ts, "dur": call_dur, "args": {"correlation": corr}}),
        json!({"ph": "X", "cat": "gpu_memcpy", "name": copy, "pid": 0, "tid": 7,
               "ts": copy_ts, "dur": copy_dur, "args": {"device": 0, "stream": 7, "correlation": corr, "bytes": 4_000_000}}),
    ]
}

/// Every step a blocking pageable host-to-device `.to()` (a synchronous `cudaMemcpy` inside
/// `aten::to`) holds the host while the GPU has drained: the report calls it a host-to-device copy
/// from pageable memory, never a device-to-host read.
#[test]
fn a_blocking_pageable_host_to_device_copy_is_named_so() {
    let mut b = TraceBuilder::new();
    let mut extra = Vec::new();
    let mut t = 0.0;
    for k in 0..20 {
        b.cpu_op("aten::to", t, 800.0);
        extra.extend(blocking_copy(
            "Memcpy HtoD (Pageable -> Device)",
            100_000 + k,
            t + 10.0,
            780.0,
            t + 500.0,
            280.0,
        ));
        for j in 0..10 {
            let s = t + 800.0 + 30.0 * j as f64;
            b.cpu_op("aten::mm", s, 25.0);
            b.kernel(GEMM, 7, s + 2.0, 5.0, s + 8.0, 200.0);
        }
        t += 3000.0;
    }
    let r = diagnose(&with_events(&b, extra));
    common::assert_report_invariants(&r, "h2d");
    let md = r.to_markdown();
    assert!(
        md.contains("host-to-device copy from pageable host memory"),
        "{md}"
    );
    assert!(!md.contains("device-to-host"), "{md}");
}

// 4. One gate, one cut --------------------------------------------------------------------------------

/// "Too little to diagnose" is one rule over operations, window and busy time: a handful of
/// microsecond kernels is too little however they are counted (7, 9 or 15 of them), 25 are enough,
/// and 9 kernels that keep the GPU busy for milliseconds are enough too.
#[test]
fn too_little_is_one_rule_over_operations_window_and_busy_time() {
    let trace = |n: usize, kernel_us: f64| {
        let mut b = TraceBuilder::new();
        for k in 0..n {
            let t = 300.0 * k as f64;
            b.cpu_op("aten::mm", t, 20.0);
            b.kernel(GEMM, 7, t + 2.0, 5.0, t + 10.0, kernel_us);
        }
        report(&b)
    };
    for n in [7, 9, 15] {
        let r = trace(n, 50.0);
        assert_eq!(r.main_finding_id, Some(FindingId::InsufficientTrace), "{n}");
        assert_eq!(r.findings.len(), 1, "{n}: {}", r.to_markdown());
        assert!(r.context.holds(TraceHolds::Insufficient));
    }
    for (n, kernel_us) in [(25, 50.0), (9, 250.0)] {
        let r = trace(n, kernel_us);
        assert!(
            !r.context.holds(TraceHolds::Insufficient),
            "{n} × {kernel_us} µs: {:?}",
            r.context.holds
        );
    }
}

/// Step 1 is slow and full of allocation calls (warm-up by the usual test), but it runs most of the
/// kernel time: the cut is not made, the whole trace is analysed and a note says why.
#[test]
fn the_warmup_cut_never_removes_most_of_the_kernel_time_silently() {
    let mut b = TraceBuilder::new();
    b.step(1, 0.0, 50_000.0);
    b.runtime("cudaMalloc", 10.0, 20_000.0);
    for k in 0..20 {
        let t = 20_100.0 + 1_400.0 * k as f64;
        b.cpu_op("aten::mm", t, 20.0);
        b.kernel(GEMM, 7, t + 2.0, 5.0, t + 10.0, 1_300.0);
    }
    for s in 0..3 {
        let t0 = 50_000.0 + 2_000.0 * s as f64;
        b.step(2 + s, t0, 2_000.0);
        for k in 0..4 {
            let t = t0 + 400.0 * k as f64;
            b.cpu_op("aten::add", t, 20.0);
            b.kernel(ADD, 7, t + 2.0, 5.0, t + 10.0, 30.0);
        }
    }
    let r = report(&b);
    assert!(
        !r.context.holds(TraceHolds::Warmup),
        "{:?}",
        r.context.holds
    );
    assert_eq!(r.context.steps, Some((1, 4)));
    let note = r
        .notes
        .iter()
        .find(|n| n.contains("whole trace is analysed"));
    assert!(note.is_some(), "{:?}", r.notes);
    assert!(note.unwrap().contains("step 1"), "{:?}", r.notes);
}

// 5. Reconciled figures -------------------------------------------------------------------------------

/// Compilation spans nest (Dynamo inside compile_inner inside an outer annotation): their time is the
/// union, never more than the trace.
#[test]
fn nested_compile_spans_are_measured_by_their_union() {
    let mut b = TraceBuilder::new();
    b.annotation("_compile.compile_inner (dynamo_timed)", 0.0, 80_000.0);
    b.annotation("compile_fx.<locals>.fw_compiler_base", 1_000.0, 70_000.0);
    b.annotation("inductor_compile", 2_000.0, 60_000.0);
    b.annotation("async_compile.wait", 3_000.0, 50_000.0);
    for k in 0..40 {
        let t = 80_100.0 + 300.0 * k as f64;
        b.cpu_op("aten::mm", t, 20.0);
        b.kernel(GEMM, 7, t + 2.0, 5.0, t + 10.0, 250.0);
    }
    let r = report(&b);
    let w = r.context.warmup.as_ref().expect("a warm-up");
    assert!((w.compile_ms - 80.0).abs() < 1e-6, "{}", w.compile_ms);
}

/// Every percentage of a finding names its denominator: the window, or the kernel time.
#[test]
fn percentages_name_their_denominator() {
    let mut b = TraceBuilder::new();
    let mut t = 0.0;
    for _ in 0..200 {
        b.cpu_op("aten::add", t, 90.0);
        b.kernel(ADD, 7, t + 80.0, 5.0, t + 86.0, 4.0);
        t += 100.0;
    }
    let r = report(&b);
    let md = r.to_markdown();
    assert!(!md.contains("of GPU time"), "{md}");
    assert!(!md.contains("% of the time"), "{md}");
    assert!(md.contains("% of the GPU window"), "{md}");
}

/// Kernels of unnamed namespaces and of one template get short names that are unique and meaningful.
#[test]
fn shortened_kernel_names_are_unique_and_meaningful() {
    let names = [
        "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, float const*)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
        "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>, at::detail::Array<char*, 3> >(int, at::native::MulFunctor<float>, at::detail::Array<char*, 3>)",
        "void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, 4>(int)",
    ];
    let mut b = TraceBuilder::new();
    for (i, n) in names.iter().enumerate() {
        for k in 0..5 {
            let t = 1000.0 * (5 * i + k) as f64;
            b.kernel(n, 7, t, 5.0, t + 10.0, 800.0 - 100.0 * i as f64);
        }
    }
    let md = report(&b).to_markdown();
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| `") || l.starts_with("| ") && l.contains("at::native"))
        .collect();
    assert!(rows.len() >= 4, "{md}");
    for r in &rows {
        assert!(
            !r.contains("::::") && !r.contains(":: ") && !r.contains(" #2"),
            "{r}"
        );
    }
    let firsts: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|r| r.split('|').nth(1).unwrap_or(""))
        .collect();
    assert_eq!(firsts.len(), rows.len(), "{rows:?}");
}
