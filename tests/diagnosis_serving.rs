//! What a run is and what it measured, scenario traces built in code: a forward-only (inference or
//! serving) run's collectives get inference advice, never DDP buckets or `no_sync`; cuDNN's
//! `convertTensor` kernels are layout conversions; one timed copy is a copy benchmark whose rate is
//! the report's main sentence; a straggler claims only the wait it causes; counts agree with their
//! nouns; ms/step on several ranks says "per rank".

use crate::common::TraceBuilder;
use profile_model::analysis::names::RunKind;
use profile_model::report::context::TraceHolds;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::{Finding, FindingId, Impact};
use profile_model::report::wording::{count, THIS};
use profile_model::table::TraceSet;

const GEMM: &str = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_kernel";
const ALL_REDUCE: &str =
    "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
const CONV: &str =
    "sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_kernel";
const CONVERT: &str = "void cudnn::engines_precompiled::convertTensor_kernel<float, __half, float, (cudnnKernelDataType_t)2>(float, float const*, float, __half*, cudnn::engines_precompiled::ConvertTensorParams)";
const FILL: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";

fn one(b: &TraceBuilder) -> DiagnosisReport {
    diagnose(&TraceSet::single(b.table("trace.json")))
}

fn find(r: &DiagnosisReport, id: FindingId) -> &Finding {
    r.findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no `{id}` finding in\n{}", r.to_markdown()))
}

/// Ten forward passes: each a 400 µs GEMM under `op`, then a 100 µs all-reduce with nothing else
/// running (20% of the window exposed), with `extra` host operators in each pass.
fn forward_passes(op: &str, extra: &[&str]) -> TraceBuilder {
    let mut b = TraceBuilder::new();
    for k in 0..10 {
        let t = 600.0 * k as f64;
        b.cpu_op(op, t, 10.0);
        b.kernel(GEMM, 7, t + 1.0, 3.0, t + 20.0, 400.0);
        b.kernel(ALL_REDUCE, 20, t + 5.0, 3.0, t + 430.0, 100.0);
        for (j, name) in extra.iter().enumerate() {
            b.cpu_op(name, t + 12.0 + j as f64, 0.5);
        }
    }
    b
}

#[test]
fn a_forward_only_run_gets_inference_advice_for_its_collectives() {
    for (op, extra) in [
        ("aten::mm", vec![]),
        ("vllm::unified_attention_with_output", vec![]),
    ] {
        let r = one(&forward_passes(op, &extra));
        assert_eq!(r.context.run, RunKind::Inference, "{op}");
        let f = find(&r, FindingId::Communication);
        let actions = f
            .actions
            .iter()
            .map(|a| a.to_markdown())
            .collect::<Vec<_>>()
            .join("\n");
        assert!(actions.contains("Inference (forward only"), "{actions}");
        for training in ["bucket_cap_mb", "no_sync", "forward_prefetch"] {
            assert!(!actions.contains(training), "{op}: {actions}");
        }
    }
    // The same passes with a backward operator are training: the DDP/FSDP advice holds.
    let r = one(&forward_passes(
        "aten::mm",
        &["autograd::engine::evaluate_function: MmBackward0"],
    ));
    assert_eq!(r.context.run, RunKind::Training);
    let actions = find(&r, FindingId::Communication)
        .actions
        .iter()
        .map(|a| a.to_markdown())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(actions.contains("bucket_cap_mb"), "{actions}");
    assert!(!actions.contains("Inference (forward only"), "{actions}");
    // Optimizer steps alone also say training.
    let r = one(&forward_passes("Optimizer.step#AdamW.step", &[]));
    assert_eq!(r.context.run, RunKind::Training);
}

#[test]
fn a_gpu_only_extract_without_a_training_kernel_is_of_unknown_kind() {
    let mut b = TraceBuilder::new();
    for k in 0..10 {
        let t = 600.0 * k as f64;
        b.kernel(GEMM, 7, t + 1.0, 3.0, t + 20.0, 400.0);
    }
    // The builder writes a launch call per kernel; no host operator says what the run does.
    let r = one(&b);
    assert_eq!(r.context.run, RunKind::Unknown);
}

#[test]
fn cudnn_convert_tensor_kernels_are_layout_conversions() {
    let mut b = TraceBuilder::new();
    for s in 0..20 {
        let t = 1_000.0 * s as f64;
        b.step(s, t, 1_000.0);
        b.cpu_op("aten::cudnn_convolution", t + 1.0, 5.0);
        b.kernel(CONVERT, 7, t + 2.0, 1.0, t + 10.0, 100.0);
        b.kernel(CONV, 7, t + 3.0, 1.0, t + 110.0, 600.0);
        b.kernel(CONVERT, 7, t + 4.0, 1.0, t + 710.0, 100.0);
    }
    let r = one(&b);
    let f = find(&r, FindingId::AvoidableKernels);
    let share = 100.0 * 200.0 / 800.0;
    assert!((f.value - share).abs() < 1e-6, "{} vs {share}", f.value);
    assert!(
        f.measured.contains("memory-layout conversions"),
        "{}",
        f.measured
    );
    assert!(f.measured.contains("40 calls"), "{}", f.measured);
    assert!(
        f.actions
            .iter()
            .map(|a| a.to_markdown())
            .collect::<Vec<_>>()
            .join(" ")
            .contains("channels_last"),
        "{:?}",
        f.actions
    );
}

/// Two fill kernels, then one host-to-device copy of `bytes` lasting `us` (the run of a copy
/// benchmark: pageable or pinned).
fn timed_copy(name: &str, bytes: i64, us: f64) -> TraceBuilder {
    let mut b = TraceBuilder::new();
    b.cpu_op("aten::fill_", 0.0, 10.0);
    b.kernel(FILL, 7, 1.0, 3.0, 10.0, 16.0);
    b.cpu_op("aten::fill_", 30.0, 10.0);
    b.kernel(FILL, 7, 31.0, 3.0, 40.0, 16.0);
    b.cpu_op("aten::copy_", 60.0, us + 40.0);
    b.memcpy(name, bytes, 7, 61.0, us + 30.0, 70.0, us);
    b
}

#[test]
fn one_timed_copy_is_a_copy_benchmark_and_its_rate_is_the_measurement() {
    let bytes: i64 = 16 << 20;
    let us = 833.0;
    let r = one(&timed_copy("Memcpy HtoD (Pageable -> Device)", bytes, us));
    assert!(
        r.context.holds(TraceHolds::Microbenchmark),
        "{:?}",
        r.context.holds
    );
    assert!(
        !r.context.holds(TraceHolds::Insufficient),
        "{}",
        r.to_markdown()
    );
    let m = &r.main_finding;
    assert!(m.starts_with("A copy benchmark"), "{m}");
    let rate = bytes as f64 / (us * 1e3);
    assert!(m.contains(&format!("{rate:.1} GB/s")), "{m}");
    assert!(m.contains("1 copy moved"), "{m}");
    assert!(m.contains("pageable"), "{m}");
    assert!(m.contains("blocks the host"), "{m}");
    let copy_share = 100.0 * us / (us + 32.0);
    assert!(
        m.contains(&format!("{copy_share:.0}% of the GPU busy time")),
        "{m}"
    );
    // Its pinned pair: faster, and the host is free.
    let r = one(&timed_copy("Memcpy HtoD (Pinned -> Device)", bytes, 366.0));
    assert!(
        r.main_finding.contains("asynchronous"),
        "{}",
        r.main_finding
    );
    // A model's step where the copy is a small part is no copy benchmark.
    let mut b = timed_copy("Memcpy HtoD (Pageable -> Device)", bytes, 100.0);
    for k in 0..30 {
        let t = 300.0 + 500.0 * k as f64;
        b.cpu_op("aten::mm", t, 10.0);
        b.kernel(GEMM, 7, t + 1.0, 3.0, t + 20.0, 400.0);
    }
    let r = one(&b);
    assert!(
        !r.main_finding.starts_with("A copy benchmark"),
        "{}",
        r.main_finding
    );
}

#[test]
fn counts_agree_with_their_nouns() {
    assert_eq!(count(1u64, "copy"), "1 copy");
    assert_eq!(count(3u64, "copy"), "3 copies");
    assert_eq!(count(2u64, "launch"), "2 launches");
    assert_eq!(count(0u64, "call"), "0 calls");
    assert_eq!(count(1u64, "graph launch"), "1 graph launch");
    assert_eq!(count(5u64, "day"), "5 days");
    // A word whose plural is not regular is a typed `Noun`, both forms written out.
    assert_eq!(THIS.of(1), "This");
    assert_eq!(THIS.of(2), "These");
}

#[test]
fn ms_per_step_on_several_ranks_says_per_rank() {
    let imp = Impact {
        pct_of_gpu_time: Some(40.0),
        ms_per_step: Some(2.5),
        time_ns: 1,
    };
    assert_eq!(
        imp.parts(1),
        vec![
            "≈40.0% of the GPU window".to_string(),
            "2.50 ms/step".into()
        ]
    );
    assert_eq!(imp.parts(4)[1], "2.50 ms/step per rank");
}

/// Two ranks, each iteration a 4 ms GEMM then one all-reduce both ranks start together: nine of
/// 160 MB in 2.5 ms, and one of 16 MB in 80 ms (a small all-reduce 32× slower than the big ones:
/// both ranks sit in it, waiting).
fn slow_small_all_reduce() -> TraceSet {
    let big = serde_json::json!({"Collective name": "allreduce", "In msg nelems": 40_000_000, "Out msg nelems": 40_000_000, "dtype": "Float", "Group size": 2});
    let small = serde_json::json!({"Collective name": "allreduce", "In msg nelems": 4_000_000, "Out msg nelems": 4_000_000, "dtype": "Float", "Group size": 2});
    let mut builders: Vec<TraceBuilder> = (0..2).map(|r| TraceBuilder::new().rank(r, 2)).collect();
    for b in builders.iter_mut() {
        let mut t = 1_000.0;
        for k in 0..10 {
            let (args, us) = if k == 5 {
                (small.clone(), 80_000.0)
            } else {
                (big.clone(), 2_500.0)
            };
            b.cpu_op("autograd::engine::evaluate_function: MmBackward0", t, 20.0);
            b.kernel(GEMM, 7, t + 30.0, 5.0, t + 100.0, 4_000.0);
            b.kernel_args(ALL_REDUCE, 20, t + 40.0, 5.0, t + 4_110.0, us, args);
            t += 4_110.0 + us + 200.0;
        }
    }
    TraceSet::from_tables(
        builders
            .iter()
            .enumerate()
            .map(|(r, b)| b.table(&format!("rank{r}.json")))
            .collect(),
    )
}

#[test]
fn a_small_collective_far_slower_than_bigger_ones_is_waiting_not_transfer() {
    let r = diagnose(&slow_small_all_reduce());
    let f = find(&r, FindingId::Communication);
    assert!(f.headline.contains("mostly waiting"), "{}", f.headline);
    assert!(f.measured.contains("32×"), "{}", f.measured);
    assert!(f.measured.contains("its time is waiting"), "{}", f.measured);
    let actions = f
        .actions
        .iter()
        .map(|a| a.to_markdown())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(!actions.contains("bucket_cap_mb"), "{actions}");
    assert!(actions.contains("late"), "{actions}");
    // All ten at the big calls' rate: moving data, and the training advice stands.
    let mut b = TraceBuilder::new();
    let big = serde_json::json!({"Collective name": "allreduce", "In msg nelems": 40_000_000, "Out msg nelems": 40_000_000, "dtype": "Float", "Group size": 1});
    let mut t = 1_000.0;
    for _ in 0..10 {
        b.cpu_op("autograd::engine::evaluate_function: MmBackward0", t, 20.0);
        b.kernel(GEMM, 7, t + 30.0, 5.0, t + 100.0, 4_000.0);
        b.kernel_args(
            ALL_REDUCE,
            20,
            t + 40.0,
            5.0,
            t + 4_110.0,
            2_500.0,
            big.clone(),
        );
        t += 4_110.0 + 2_500.0 + 200.0;
    }
    let r = one(&b);
    let f = find(&r, FindingId::Communication);
    assert!(!f.headline.contains("mostly waiting"), "{}", f.headline);
}

/// 40 passes of a GEMM (90 µs), a fused attention (60 µs) and a Triton fusion (50 µs) recorded
/// over 9.2 ms (no kernel over half the kernel time: no rule's threshold is crossed), then a synchronisation that returns `tail_us` after the last recorded kernel: the
/// device kept working on what the profiler did not record.
fn partly_recorded(tail_us: f64) -> TraceBuilder {
    let mut b = TraceBuilder::new();
    let mut at = 100.0;
    for k in 0..40 {
        let t = 10.0 * k as f64;
        for (j, (name, us)) in [
            (GEMM, 90.0),
            ("attn_fwd", 60.0),
            ("triton_poi_fused_add_mul_0", 50.0),
        ]
        .iter()
        .enumerate()
        {
            b.kernel(name, 7, t + j as f64 * 3.0, 2.0, at, *us);
            at += us + 10.0;
        }
    }
    b.cpu_op("aten::mm", 0.0, 5.0);
    b.runtime("cudaStreamSynchronize", 500.0, at - 500.0 + tail_us);
    b
}

#[test]
fn a_partly_recorded_run_gets_its_kernel_mix_when_enough_is_recorded() {
    let r = one(&partly_recorded(6_000.0));
    assert!(
        r.context.holds(TraceHolds::EventsDropped),
        "{:?}",
        r.context.holds
    );
    let m = &r.main_finding;
    assert!(m.starts_with("Of the work recorded"), "{m}");
    // 90 / 200 of the kernel time in GEMMs, 60 / 200 attention, 50 / 200 Triton.
    assert!(m.contains("GEMMs take 45%"), "{m}");
    assert!(m.contains("fused attention 30%"), "{m}");
    assert!(m.contains("fusions 25%"), "{m}");
    assert!(m.contains("120 kernels"), "{m}");
    // Most of the work unrecorded: no mix is claimed.
    let r = one(&partly_recorded(40_000.0));
    assert!(r.context.holds(TraceHolds::EventsDropped));
    assert!(
        !r.main_finding.starts_with("Of the work recorded"),
        "{}",
        r.main_finding
    );
}
