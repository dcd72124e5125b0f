//! The device side of the diagnosis, scenario traces built in code: who waits for whom with two
//! ranks (the late one named, never both; balanced ranks name nobody), the first cold collective
//! (communicator set-up, left out of the steady state), small collectives said as count × latency,
//! and one pageable copy that fills the window (the finding, not "too little to diagnose").

use crate::common::TraceBuilder;
use profile_model::analysis::all::AnalysisOptions;
use profile_model::report::context::TraceHolds;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::{Finding, FindingId};
use profile_model::report::gather::gather_with;
use profile_model::table::TraceSet;
use serde_json::{json, Value};

const ALL_REDUCE: &str = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
const SEND_RECV: &str = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)";
const GEMM: &str = "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32";
const US: i64 = 1_000;

/// Ranks that each iteration compute `compute + delay[k][r]` µs, then run one collective that ends
/// `transfer[k]` µs after the last rank arrives. No `ProfilerStep`: the whole trace is analysed.
struct Iterations {
    ranks: usize,
    compute: f64,
    delay: Vec<Vec<f64>>,
    transfer: Vec<f64>,
    collective: &'static str,
    args: Value,
}

impl Iterations {
    fn new(ranks: usize, n: usize) -> Iterations {
        Iterations {
            ranks,
            compute: 4_000.0,
            delay: vec![vec![0.0; ranks]; n],
            transfer: vec![2_000.0; n],
            collective: ALL_REDUCE,
            args: json!({}),
        }
    }

    fn arrival(&self, start: f64, k: usize, r: usize) -> f64 {
        start + 100.0 + self.compute + self.delay[k][r] + 10.0
    }

    fn set(&self) -> TraceSet {
        let mut builders: Vec<TraceBuilder> = (0..self.ranks)
            .map(|r| TraceBuilder::new().rank(r as i64, self.ranks as i64))
            .collect();
        let mut start = 1_000.0;
        for k in 0..self.transfer.len() {
            let last = (0..self.ranks)
                .map(|r| self.arrival(start, k, r))
                .fold(f64::MIN, f64::max);
            for (r, b) in builders.iter_mut().enumerate() {
                b.kernel(
                    GEMM,
                    7,
                    start + 50.0,
                    5.0,
                    start + 100.0,
                    self.compute + self.delay[k][r],
                );
                let a = self.arrival(start, k, r);
                b.kernel_args(
                    self.collective,
                    20,
                    start + 60.0,
                    5.0,
                    a,
                    last + self.transfer[k] - a,
                    self.args.clone(),
                );
            }
            start = last + self.transfer[k] + 200.0;
        }
        TraceSet::from_tables(
            builders
                .iter()
                .enumerate()
                .map(|(r, b)| b.table(&format!("rank{r}.json")))
                .collect(),
        )
    }
}

fn find(r: &DiagnosisReport, id: FindingId) -> Option<&Finding> {
    r.findings.iter().find(|f| f.id == id)
}

fn words(f: &Finding) -> String {
    format!(
        "{} {} {} {}",
        f.headline,
        f.measured,
        f.explanation,
        f.actions_markdown(" ")
    )
}

#[test]
fn two_ranks_late_in_turn_are_balanced_and_nobody_is_a_straggler() {
    // Six iterations: rank 0 is late by 3 ms at even ones, rank 1 at odd ones.
    let mut it = Iterations::new(2, 6);
    for (k, d) in it.delay.iter_mut().enumerate() {
        d[k % 2] = 3_000.0;
    }
    let report = diagnose(&it.set());
    assert!(
        find(&report, FindingId::Straggler).is_none(),
        "{:#?}",
        report.findings
    );
    let comm = find(&report, FindingId::Communication).expect("communication finding");
    // The early rank waits 3 ms per iteration, the transfer is 2 ms on both ranks: with nobody to
    // blame, the wait is the collectives' cost and counted here.
    assert_eq!(comm.impact.time_ns, (6 * 3_000 + 2 * 6 * 2_000) * US);
    assert!(comm.measured.contains("balanced"), "{}", comm.measured);
    assert!(
        comm.measured
            .contains("rank 0 last at 3, rank 1 at 3 of 6 collectives"),
        "{}",
        comm.measured
    );
    assert!(!words(comm).contains("straggler finding"));
}

#[test]
fn of_two_ranks_only_the_one_that_arrives_late_is_named() {
    // Rank 1 is late by 3 ms at four iterations, rank 0 by 1 ms at two: rank 0 is last sometimes
    // (14% of the wait), but it is rank 1 the other waits for.
    let mut it = Iterations::new(2, 6);
    for (k, d) in it.delay.iter_mut().enumerate() {
        if k < 2 {
            d[0] = 1_000.0;
        } else {
            d[1] = 3_000.0;
        }
    }
    let report = diagnose(&it.set());
    let s = find(&report, FindingId::Straggler).expect("straggler finding");
    assert_eq!(s.title, "Straggler: rank 1");
    assert!(
        s.headline.starts_with("Rank 1 arrives late"),
        "{}",
        s.headline
    );
    assert!(!s.measured.contains("rank 0:"), "{}", s.measured);
    // The wait with no compute running is rank 0's 3 ms at four iterations and rank 1's 1 ms at
    // two; rank 1 causes only the first: the straggler claims min(caused, exposed) = 12 ms.
    assert_eq!(s.impact.time_ns, 4 * 3_000 * US);
    assert!(
        s.headline.contains("the other rank waits 12.0 ms for it"),
        "{}",
        s.headline
    );
    // The communication finding counts the transfer only (2 ranks × 6 × 2 ms) and rank 0's 1 ms
    // waits are nobody's straggling.
    let comm = find(&report, FindingId::Communication).expect("communication finding");
    assert_eq!(comm.impact.time_ns, 2 * 6 * 2_000 * US);
}

#[test]
fn the_first_cold_collective_is_set_up_not_steady_state_communication() {
    // Ten all-reduces of 2 ms after the compute; the first takes 25 ms on both ranks.
    let mut it = Iterations::new(2, 10);
    it.transfer[0] = 25_000.0;
    let set = it.set();
    let g = gather_with(&set, &AnalysisOptions::default());
    for r in &g.inputs.ranks {
        assert_eq!(r.cold_comm.len(), 1, "rank {}: {:?}", r.rank, r.cold_comm);
        // 25 ms against a later median of 2 ms: 23 ms beyond it.
        assert_eq!(r.cold_comm_excess_ns(), 23_000 * US);
    }
    let report = diagnose(&set);
    let comm = find(&report, FindingId::Communication).expect("communication finding");
    // Steady state: 2 ranks × 10 × 2 ms; the first's 23 ms beyond that on each rank left out.
    assert_eq!(comm.impact.time_ns, 2 * 10 * 2_000 * US);
    assert!(
        comm.measured
            .contains("communicator and connection set-up, a one-off"),
        "{}",
        comm.measured
    );
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("set-up") && n.contains("46.0 ms")),
        "{:#?}",
        report.notes
    );
}

#[test]
fn small_collectives_are_a_count_times_latency_not_a_volume_to_batch() {
    // Twelve 8 KB all-to-alls (2048 floats) on two ranks, late in turn by 2 ms: far above the
    // ≈20 µs each needs.
    let mut it = Iterations::new(2, 12);
    it.collective = SEND_RECV;
    it.args = json!({"Collective name": "all_to_all", "In msg nelems": 2048, "Out msg nelems": 2048, "dtype": "Float", "Group size": 2});
    it.transfer = vec![15.0; 12];
    for (k, d) in it.delay.iter_mut().enumerate() {
        d[k % 2] = 2_000.0;
    }
    let report = diagnose(&it.set());
    assert!(find(&report, FindingId::Straggler).is_none());
    let comm = find(&report, FindingId::Communication).expect("communication finding");
    // 12 × 20 µs = 240 µs per rank.
    assert!(
        comm.measured
            .contains("12 collectives of at most 8.2 KB per rank: at ≈20 µs of latency each they need ≈240 µs"),
        "{}",
        comm.measured
    );
    let actions = comm.actions_markdown(" ");
    assert!(!actions.contains("bucket"), "{actions}");
    assert!(!actions.contains("load-balancing"), "{actions}");
    assert!(actions.contains("warm-up collective"), "{actions}");
}

#[test]
fn one_pageable_copy_that_fills_the_window_is_the_finding() {
    // A 20 MB pageable host-to-device copy of 4.3 ms beside two 10 µs kernels.
    let mut b = TraceBuilder::new();
    b.cpu_op("aten::to", 100.0, 4_500.0);
    b.memcpy(
        "Memcpy HtoD (Pageable -> Device)",
        20_000_000,
        7,
        110.0,
        4_400.0,
        150.0,
        4_300.0,
    );
    b.kernel("elementwise_kernel", 7, 4_520.0, 5.0, 4_530.0, 10.0);
    b.kernel("elementwise_kernel", 7, 4_560.0, 5.0, 4_570.0, 10.0);
    let report = diagnose(&TraceSet::single(b.table("copy.json")));
    assert!(
        !report.context.holds.contains(&TraceHolds::Insufficient),
        "{:?}",
        report.context.holds
    );
    let f = &report.findings[0];
    assert_eq!(f.id, FindingId::MemoryTraffic, "{:#?}", report.findings);
    let w = words(f);
    // 20e6 B / 4.3 ms = 4.65 GB/s.
    assert!(w.contains("4.7 GB/s") || w.contains("4.65 GB/s"), "{w}");
    assert!(w.contains("host-to-device"), "{w}");
    assert!(w.contains("pageable"), "{w}");
    assert!(
        w.contains("pin_memory") && w.contains("non_blocking"),
        "{w}"
    );
}

#[test]
fn expert_parallel_kernels_are_communication_except_in_hta_mode() {
    use profile_model::analysis::gpu::{exact_kernel_type, hta_kernel_type, KernelType};
    use profile_model::table::EventKind;
    let names = [
        "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*)",
        "dpsk::ep::internode::combine",
        "void pplx::a2a_dispatch_kernel<unsigned int>(...)",
        "void mori::moe::EpDispatchIntraNodeKernel<__hip_bfloat16>(...)",
        "nvshmemi_transfer_rma_kernel",
    ];
    for n in names {
        assert_eq!(
            exact_kernel_type(EventKind::Kernel, n),
            KernelType::Communication,
            "{n}"
        );
        // HTA 0.5.0 knows only `^nccl.*Kernel`: its figures count these as computation.
        assert_eq!(hta_kernel_type(n), KernelType::Computation, "{n}");
    }
    // A 1 ms GEMM on stream 7 and a 600 µs DeepEP dispatch on stream 8, overlapping by 400 µs.
    let mut b = TraceBuilder::new();
    for k in 0..4 {
        let s = 1_000.0 + k as f64 * 2_000.0;
        b.kernel(GEMM, 7, s - 50.0, 5.0, s, 1_000.0);
        b.kernel(names[0], 8, s - 40.0, 5.0, s + 600.0, 600.0);
    }
    let g = gather_with(
        &TraceSet::single(b.table("ep.json")),
        &AnalysisOptions::default(),
    );
    assert_eq!(g.inputs.time.comm_ns, 4 * 600 * US);
    assert_eq!(g.inputs.time.compute_ns, 4 * 1_000 * US);
    assert_eq!(g.inputs.time.comm_exposed_ns, 4 * 200 * US);
}
