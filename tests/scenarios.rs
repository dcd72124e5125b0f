//! Scenario tests: small synthetic Kineto traces built in code, each showing one problem, checked for the
//! main finding, the bottleneck and figures computed here from the timestamps the test wrote.

use crate::common;

use crate::common::TraceBuilder;
use profile_model::report::bottleneck::BottleneckKind;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::{EvidenceFilter, EvidenceKind, Finding};
use profile_model::report::redact::redacted_name;
use profile_model::table::TraceSet;

const GEMM: &str = "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel";
const FILL: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";
const ALL_REDUCE: &str =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
const DATA_LOADER: &str = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";
const PAGEABLE: &str = "Memcpy HtoD (Pageable -> Device)";

fn one(b: &TraceBuilder) -> DiagnosisReport {
    diagnose(&TraceSet::single(b.table("trace.json")))
}

fn finding<'a>(r: &'a DiagnosisReport, id: &str) -> &'a Finding {
    r.findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no `{id}` finding in\n{}", r.to_markdown()))
}

fn main_finding<'a>(r: &'a DiagnosisReport) -> &'a Finding {
    let id = r.main_finding_id.expect("a main finding");
    finding(r, id.as_str())
}

fn bottleneck(r: &DiagnosisReport) -> BottleneckKind {
    r.bottleneck.as_ref().expect("bottleneck").kind
}

fn actions(f: &Finding) -> String {
    f.actions_markdown("\n")
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 0.05, "{what}: {a} vs expected {b}");
}

/// Every finding carries the parts the page shows, and the Markdown keeps its fixed order.
fn well_formed(r: &DiagnosisReport) {
    for f in &r.findings {
        assert!(!f.threshold.is_empty() && !f.measured.is_empty(), "{f:?}");
        assert!(!f.actions.is_empty(), "{} has no action", f.id);
        assert!(f.value.is_finite(), "{}", f.id);
    }
    let md = r.to_markdown();
    common::assert_report_sections(&md, "scenario");
    common::assert_report_invariants(r, "scenario");
}

/// Data-loader-starved: each 10 ms step spends 8 ms in the DataLoader while the GPU idles, then 1.5 ms of
/// kernels.
fn data_loader_trace() -> TraceBuilder {
    let mut b = TraceBuilder::new();
    for s in 0..4 {
        let t = s as f64 * 10_000.0;
        b.step(s, t, 10_000.0);
        b.cpu_op(DATA_LOADER, t + 100.0, 8_000.0);
        for (k, name) in ["conv_fwd_kernel", "bn_fwd_kernel", "relu_kernel"]
            .iter()
            .enumerate()
        {
            let k = k as f64;
            b.cpu_op("aten::conv2d", t + 8_200.0 + 10.0 * k, 8.0);
            b.kernel(
                name,
                7,
                t + 8_200.0 + 10.0 * k,
                5.0,
                t + 8_300.0 + 500.0 * k,
                500.0,
            );
        }
    }
    b
}

#[test]
fn data_loader_starved_step_is_cpu_bound() {
    let r = one(&data_loader_trace());
    well_formed(&r);
    // GPU window: first kernel (8.3 ms) to the last kernel's end (step 3 at 30 ms + 9.8 ms).
    let window = 30_000.0 + 9_800.0 - 8_300.0;
    let busy = 4.0 * 1_500.0;
    // Each gap between steps (9.8 ms → 18.3 ms) overlaps the next DataLoader op (10.1 ms → 18.1 ms).
    let idle_in_loader = 3.0 * 8_000.0;
    let f = main_finding(&r);
    assert_eq!(f.id, "data_loading", "{}", r.to_markdown());
    close(
        f.value,
        100.0 * idle_in_loader / window,
        "GPU idle in DataLoader %",
    );
    close(
        f.impact.ms_per_step.unwrap(),
        idle_in_loader / 1000.0 / 4.0,
        "ms per step",
    );
    assert!(f
        .evidence
        .iter()
        .any(|e| e.kind == EvidenceKind::Op && e.name == DATA_LOADER));
    let filter = f.filter.as_ref().expect("filter");
    assert_eq!(filter, &EvidenceFilter::Ops(vec![DATA_LOADER.to_string()]));
    let a = actions(f);
    assert!(
        a.contains("num_workers") && a.contains("pin_memory=True"),
        "{a}"
    );
    assert_eq!(bottleneck(&r), BottleneckKind::Cpu);
    close(
        r.bottleneck.as_ref().unwrap().idle_pct,
        100.0 * (window - busy) / window,
        "idle %",
    );
    assert!(r.bottleneck.as_ref().unwrap().reason.contains("DataLoader"));
}

/// Launch-bound: 2000 kernels of 4 µs, each launched before the previous one ends, 6 µs apart on the GPU.
fn launch_bound_trace() -> TraceBuilder {
    let mut b = TraceBuilder::new();
    let names = ["add_kernel", "mul_kernel", "sigmoid_kernel", "copy_kernel"];
    b.step(0, 900.0, 21_000.0);
    for i in 0..2000 {
        let t = 1_000.0 + 10.0 * i as f64;
        b.cpu_op("aten::add", t - 8.0, 7.0);
        b.kernel(names[i % 4], 7, t - 7.0, 5.0, t, 4.0);
    }
    b
}

#[test]
fn launch_bound_loop_is_launch_overhead() {
    let r = one(&launch_bound_trace());
    well_formed(&r);
    let n = 2000.0;
    let window = 10.0 * (n - 1.0) + 4.0;
    let idle = 6.0 * (n - 1.0);
    let f = main_finding(&r);
    assert_eq!(f.id, "launch_overhead", "{}", r.to_markdown());
    close(f.value, 100.0, "% of kernels under 10 µs");
    close(
        f.impact.pct_of_gpu_time.unwrap(),
        100.0 * idle / window,
        "idle %",
    );
    let a = actions(f);
    assert!(
        a.contains("torch.compile") && a.contains("CUDA graph"),
        "{a}"
    );
    assert_eq!(bottleneck(&r), BottleneckKind::Cpu);
    let b = r.bottleneck.as_ref().unwrap();
    assert!(b.reason.contains("launch"), "{}", b.reason);
    close(b.idle_pct, 100.0 * idle / window, "idle %");
    // The kernel-wait gaps are the launch overhead: not stated a second time as synchronisation.
    assert!(
        r.findings.iter().all(|f| f.id != "synchronization"),
        "{}",
        r.to_markdown()
    );
}

/// An all-reduce on its own stream after each 2 ms of compute, with nothing to overlap it.
fn all_reduce_trace() -> TraceBuilder {
    let mut b = TraceBuilder::new().rank(0, 1);
    for s in 0..3 {
        let t = 1_000.0 + 8_000.0 * s as f64;
        b.step(s, t - 200.0, 8_000.0);
        b.kernel(GEMM, 7, t - 100.0, 5.0, t, 2_000.0);
        b.kernel(ALL_REDUCE, 20, t - 90.0, 5.0, t + 2_000.0, 6_000.0);
    }
    b
}

#[test]
fn unoverlapped_all_reduce_is_communication_bound() {
    let r = one(&all_reduce_trace());
    well_formed(&r);
    let window = 3.0 * 8_000.0;
    let exposed = 3.0 * 6_000.0;
    let f = main_finding(&r);
    assert_eq!(f.id, "communication", "{}", r.to_markdown());
    close(f.value, 100.0 * exposed / window, "exposed communication %");
    assert!(f.evidence.iter().any(|e| e.name == ALL_REDUCE));
    assert_eq!(
        f.filter.as_ref().unwrap(),
        &EvidenceFilter::Kernels(vec![ALL_REDUCE.to_string()])
    );
    let a = actions(f);
    assert!(a.contains("async_op=True") && a.contains("Overlap"), "{a}");
    assert_eq!(bottleneck(&r), BottleneckKind::Communication);
    close(
        r.bottleneck.as_ref().unwrap().comm_exposed_pct,
        100.0 * exposed / window,
        "exposed %",
    );
    // One rank only: a note, not a recommendation.
    assert!(r.findings.iter().all(|f| f.id != "straggler"));
    assert!(
        r.notes.iter().any(|n| n.contains("only one rank")),
        "{:?}",
        r.notes
    );
    assert!(r.to_markdown().contains("### Notes"));
}

/// Each 4 ms step copies 64 MB from pageable memory (3 ms) and then computes 1 ms.
fn pageable_trace() -> TraceBuilder {
    let mut b = TraceBuilder::new();
    for s in 0..3 {
        let t = 1_000.0 + 4_000.0 * s as f64;
        b.step(s, t - 100.0, 4_000.0);
        b.cpu_op("aten::to", t - 60.0, 3_020.0);
        b.memcpy(PAGEABLE, 64 << 20, 7, t - 50.0, 3_000.0, t, 3_000.0);
        b.kernel(GEMM, 7, t + 2_960.0, 5.0, t + 3_000.0, 1_000.0);
    }
    b
}

#[test]
fn pageable_copies_are_memory_bound() {
    let r = one(&pageable_trace());
    well_formed(&r);
    let window = 3.0 * 4_000.0;
    let copies = 3.0 * 3_000.0;
    let f = main_finding(&r);
    assert_eq!(f.id, "memory_traffic", "{}", r.to_markdown());
    // Copies are 3 of every 4 ms the GPU is busy.
    close(f.value, 100.0 * copies / window, "copies % of busy time");
    assert!(f
        .evidence
        .iter()
        .any(|e| e.name == PAGEABLE && e.count == 3));
    let a = actions(f);
    assert!(a.contains("pinned") && a.contains("pin_memory=True"), "{a}");
    assert_eq!(bottleneck(&r), BottleneckKind::Memory);
    close(
        r.bottleneck.as_ref().unwrap().memory_exposed_pct,
        100.0 * copies / window,
        "exposed memory %",
    );
}

/// Two ranks: rank 0 computes 8 ms per step, rank 1 only 4 ms and then waits in the all-reduce.
fn straggler_rank(rank: i64, compute: f64) -> TraceBuilder {
    let mut b = TraceBuilder::new().rank(rank, 2);
    for s in 0..3 {
        let t = 1_000.0 + 10_000.0 * s as f64;
        b.step(s, t - 200.0, 10_000.0);
        b.kernel(GEMM, 7, t - 100.0, 5.0, t, compute);
        b.kernel(
            ALL_REDUCE,
            20,
            t - 90.0,
            5.0,
            t + compute,
            9_000.0 - compute,
        );
    }
    b
}

#[test]
fn two_rank_straggler_is_found() {
    let set = TraceSet::from_tables(vec![
        straggler_rank(1, 4_000.0).table("rank1.json"),
        straggler_rank(0, 8_000.0).table("rank0.json"),
    ]);
    let r = diagnose(&set);
    well_formed(&r);
    assert_eq!(r.ranks, vec![0, 1]);
    // Work = GPU time outside communication: 3 × 8 ms on rank 0, 3 × 4 ms on rank 1.
    let (slow, median) = (3.0 * 8_000.0, 3.0 * 4_000.0);
    let f = main_finding(&r);
    assert_eq!(f.id, "straggler", "{}", r.to_markdown());
    assert!(f.title.contains("rank 0"), "{}", f.title);
    // Rank 1 waits the excess in its all-reduce (to rank 0's arrival): its share of the two
    // ranks' GPU windows (each 2 steps of 10 ms and a last 9 ms).
    close(
        f.value,
        100.0 * (slow - median) / (2.0 * 29_000.0),
        "wait %",
    );
    // Rank 1 waits the excess in its all-reduce: summed over the 2 ranks, per step.
    close(
        f.impact.ms_per_step.unwrap(),
        (slow - median) / 1000.0 / 2.0 / 3.0,
        "ms per step",
    );
    let ranks: Vec<i64> = f
        .evidence
        .iter()
        .filter(|e| e.kind == EvidenceKind::Rank)
        .filter_map(|e| e.rank)
        .collect();
    // The evidence is the rank the other waits for.
    assert_eq!(ranks, vec![0]);
    let filter = f.filter.as_ref().expect("filter");
    assert_eq!(filter, &EvidenceFilter::Ranks(vec![0]));
    let json = serde_json::to_value(filter).unwrap();
    assert_eq!(
        json,
        serde_json::json!({"kind": "rank", "names": ["rank 0"]})
    );
    // The fast rank waits in the collective: the job as a whole is communication-bound.
    assert_eq!(bottleneck(&r), BottleneckKind::Communication);
    assert!(r.notes.iter().all(|n| !n.contains("only one rank")));
}

/// One tensor-core GEMM of 9 ms per step, a 0.5 ms fill, 0.5 ms gap.
fn compute_trace() -> TraceBuilder {
    let mut b = TraceBuilder::new();
    for s in 0..3 {
        let t = 1_000.0 + 10_000.0 * s as f64;
        b.step(s, t - 200.0, 10_000.0);
        b.cpu_op("aten::mm", t - 110.0, 20.0);
        b.kernel(GEMM, 7, t - 100.0, 5.0, t, 9_000.0);
        b.kernel(FILL, 7, t - 90.0, 5.0, t + 9_000.0, 500.0);
    }
    b
}

#[test]
fn one_big_gemm_is_compute_bound() {
    let r = one(&compute_trace());
    well_formed(&r);
    let window = 2.0 * 10_000.0 + 9_500.0;
    let busy = 3.0 * 9_500.0;
    assert!(100.0 * busy / window > 90.0);
    let f = main_finding(&r);
    assert_eq!(f.id, "dominant_kernel", "{}", r.to_markdown());
    close(
        f.value,
        100.0 * 9_000.0 / 9_500.0,
        "GEMM share of kernel time",
    );
    assert!(f
        .evidence
        .iter()
        .any(|e| e.kind == EvidenceKind::Kernel && e.name == GEMM));
    let filter = f.filter.as_ref().expect("filter");
    assert_eq!(filter, &EvidenceFilter::Kernels(vec![GEMM.to_string()]));
    assert_eq!(bottleneck(&r), BottleneckKind::Compute);
    let b = r.bottleneck.as_ref().unwrap();
    close(b.idle_pct, 100.0 * (window - busy) / window, "idle %");
    // The table: GEMM first with 3 calls of 9 ms.
    let top = &r.top_kernels[0];
    assert_eq!((top.name.as_str(), top.calls), (GEMM, 3));
    close(top.avg_us, 9_000.0, "avg µs");
    close(top.pct_of_kernel_time, 100.0 * 9_000.0 / 9_500.0, "% time");
    let md = r.to_markdown();
    assert!(md.contains("| % Time | Calls | Avg (μs) | Kernel |"));
    assert!(
        md.contains("| 94.7 | 3 | 9000.00 | `sm80_xmma_gemm"),
        "{md}"
    );
}

#[test]
fn no_gpu_kernels_says_how_to_capture() {
    let mut b = TraceBuilder::new();
    for s in 0..2 {
        let t = 10_000.0 * s as f64;
        b.step(s, t, 9_000.0);
        b.cpu_op("aten::mm", t + 10.0, 8_000.0);
    }
    let r = one(&b);
    well_formed(&r);
    let f = main_finding(&r);
    assert_eq!(f.id, "no_gpu_kernels");
    assert!(f.explanation.contains("ProfilerActivity.CUDA"));
    assert!(actions(f).contains("ProfilerActivity.CUDA"));
    // The operators ran on the CPU: the run is bound there (compute: `aten::mm` is all of it), a
    // class, not "Undetermined" (issue 30).
    assert_eq!(bottleneck(&r), BottleneckKind::Cpu);
    assert!(r.top_kernels.is_empty());
    assert!(r.findings.iter().all(|f| f.id != "straggler"));
    assert!(r.to_markdown().contains("No GPU kernels in this trace."));
}

/// `.item()` copies to the host and `torch.nonzero` synchronises the stream in every step.
#[test]
fn synchronising_calls_are_counted_with_their_op() {
    let mut b = TraceBuilder::new();
    for s in 0..3 {
        let t = 1_000.0 + 10_000.0 * s as f64;
        b.step(s, t - 100.0, 10_000.0);
        b.kernel(GEMM, 7, t - 20.0, 5.0, t, 4_000.0);
        b.cpu_op("aten::item", t - 10.0, 4_110.0);
        b.cpu_op("aten::_local_scalar_dense", t - 5.0, 4_095.0);
        b.memcpy(
            "Memcpy DtoH (Device -> Pinned)",
            4,
            7,
            t,
            4_080.0,
            t + 4_000.0,
            10.0,
        );
        b.cpu_op("aten::nonzero", t + 4_200.0, 1_800.0);
        b.kernel("nonzero_kernel", 7, t + 4_250.0, 5.0, t + 4_300.0, 1_600.0);
        b.runtime("cudaStreamSynchronize", t + 4_300.0, 1_600.0);
        b.runtime("cudaDeviceSynchronize", t + 6_100.0, 10.0);
    }
    let r = one(&b);
    well_formed(&r);
    let f = finding(&r, "synchronization");
    assert!(
        f.measured.contains("9 synchronising calls"),
        "{}",
        f.measured
    );
    let a = actions(f);
    assert!(
        a.contains("3 × `cudaStreamSynchronize`") && a.contains("aten::nonzero"),
        "{a}"
    );
    assert!(
        a.contains("3 × `Memcpy DtoH`") && a.contains("aten::_local_scalar_dense"),
        "{a}"
    );
    assert!(a.contains("3 × `cudaDeviceSynchronize`"), "{a}");
    let filter = f.filter.as_ref().expect("filter");
    let EvidenceFilter::Runtime(names) = filter else {
        panic!("a runtime filter, found {filter:?}");
    };
    assert!(
        names.contains(&"cudaStreamSynchronize".to_string()),
        "{filter:?}"
    );
}

#[test]
fn redaction_hashes_names_stably() {
    let compute = one(&compute_trace()).redacted();
    let comm = one(&all_reduce_trace()).redacted();
    let h = redacted_name("kernel", GEMM);
    for r in [&compute, &comm] {
        let md = r.to_markdown();
        let json = r.to_json();
        assert!(md.contains(&h) && json.contains(&h), "{md}");
        for name in [
            "sm80_xmma_gemm",
            "vectorized_elementwise_kernel",
            "ncclDevKernel",
            "FillFunctor",
        ] {
            assert!(!md.contains(name), "{name} in\n{md}");
            assert!(!json.contains(name), "{name} in\n{json}");
        }
    }
    let dominant = compute
        .findings
        .iter()
        .find(|f| f.id == "dominant_kernel")
        .unwrap();
    assert_eq!(
        dominant.filter.as_ref().unwrap(),
        &EvidenceFilter::Kernels(vec![h.clone()])
    );
    // Same name → same hash, in both reports.
    assert_eq!(compute.top_kernels[0].name, h);
    assert!(comm.top_kernels.iter().any(|k| k.name == h));
    let dl = one(&data_loader_trace()).redacted();
    let md = dl.to_markdown();
    assert!(
        !md.contains("DataLoaderIter") && !dl.to_json().contains("DataLoaderIter"),
        "{md}"
    );
    assert!(
        md.contains(&redacted_name("op", DATA_LOADER))
            || dl.to_json().contains(&redacted_name("op", DATA_LOADER))
    );
}

/// Two 2 µs kernels and a sync: too little to diagnose, and the report says so instead of
/// "compute-bound" or a share over 100%.
#[test]
fn a_tiny_trace_is_too_little_to_diagnose() {
    let mut b = TraceBuilder::new();
    b.kernel(GEMM, 7, 990.0, 5.0, 1_000.0, 2.0);
    b.kernel(GEMM, 7, 996.0, 5.0, 1_010.0, 2.0);
    b.runtime("cudaDeviceSynchronize", 1_004.0, 36.0);
    let r = one(&b);
    well_formed(&r);
    assert_eq!(
        r.main_finding_id.map(|i| i.as_str()),
        Some("insufficient_trace"),
        "{}",
        r.to_markdown()
    );
    assert_eq!(r.findings.len(), 1);
    assert_eq!(bottleneck(&r), BottleneckKind::Undetermined);
    assert!(
        r.main_finding.contains("2 device operations"),
        "{}",
        r.main_finding
    );
}

/// A sync costs the GPU idle it causes: waiting on a GPU that stays busy costs nothing; a sync after
/// which the host works 2 ms before launching again leaves the GPU idle those 2 ms.
#[test]
fn a_synchronisation_costs_the_gpu_idle_it_causes() {
    let trace = |host_work_after_sync: f64| {
        let mut b = TraceBuilder::new();
        let mut t = 0.0;
        for s in 0..6 {
            b.step(s, t, 10_000.0 + host_work_after_sync);
            b.kernel(GEMM, 7, t, 5.0, t + 10.0, 9_980.0);
            b.runtime("cudaDeviceSynchronize", t + 20.0, 9_975.0);
            t += 10_000.0 + host_work_after_sync;
        }
        one(&b)
    };
    let busy = trace(0.0);
    well_formed(&busy);
    assert!(
        busy.findings.iter().all(|f| f.id != "synchronization"),
        "{}",
        busy.to_markdown()
    );
    let starved = trace(2_000.0);
    let f = finding(&starved, "synchronization");
    // Per step the GPU idles from its kernel's end inside the sync (t + 9990) to the next kernel
    // (t + 12010), 2020 µs; the window ends with the last kernel: 5 gaps in all.
    assert_eq!(f.impact.time_ns, 5 * 2_020_000, "{}", f.measured);
}
