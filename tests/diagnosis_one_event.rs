//! Diagnosis scenarios where one event instance is most of an aggregate (issue 30): a single final
//! all-gather that is most of the communication time is named in the main finding with its duration;
//! ten equal collectives are not. And advice that contradicts the copies measured: no `pin_memory`
//! for copies already pinned.

use crate::common::TraceBuilder;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::FindingId;
use profile_model::table::TraceSet;

const GEMM: &str = "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel";
const ALL_REDUCE: &str =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
const ALL_GATHER: &str = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

/// Ten steps of a 100 µs GEMM then a `small_us` all-reduce (not overlapped), then one all-gather of
/// `gather_us`.
fn trace(small_us: f64, gather_us: f64) -> DiagnosisReport {
    let mut b = TraceBuilder::new();
    let mut t = 1_000.0;
    b.step(0, 0.0, 20_000.0);
    for _ in 0..10 {
        b.kernel(GEMM, 7, t - 10.0, 5.0, t, 100.0);
        b.kernel(ALL_REDUCE, 20, t - 5.0, 5.0, t + 100.0, small_us);
        t += 100.0 + small_us;
    }
    b.kernel(ALL_GATHER, 20, t - 5.0, 5.0, t, gather_us);
    diagnose(&TraceSet::single(b.table("trace.json")))
}

#[test]
fn one_final_all_gather_is_named_with_its_duration() {
    let r = trace(20.0, 5_000.0);
    assert_eq!(
        r.main_finding_id,
        Some(FindingId::Communication),
        "{}",
        r.to_markdown()
    );
    let share = 100.0 * 5_000.0 / (10.0 * 20.0 + 5_000.0);
    let m = &r.main_finding;
    assert!(m.contains("one `"), "{m}");
    assert!(m.contains("AllGather"), "{m}");
    assert!(m.contains("5.00 ms"), "{m}");
    assert!(m.contains(&format!("{share:.1}%")), "{m}");
}

#[test]
fn equal_collectives_are_not_one_event() {
    let r = trace(200.0, 200.0);
    assert_eq!(
        r.main_finding_id,
        Some(FindingId::Communication),
        "{}",
        r.to_markdown()
    );
    assert!(!r.main_finding.contains("one `"), "{}", r.main_finding);
}

/// Four steps: 2 ms of GEMM, then 5.4 ms in the DataLoader with the GPU idle, then a pinned (or
/// pageable) host-to-device copy of the batch.
fn loader(copy: &str) -> DiagnosisReport {
    let mut b = TraceBuilder::new();
    for s in 0..4 {
        let t = 10_000.0 * s as f64;
        b.step(s, t, 10_000.0);
        b.kernel(GEMM, 7, t + 50.0, 5.0, t + 100.0, 2_000.0);
        b.cpu_op(
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            t + 2_200.0,
            5_400.0,
        );
        b.memcpy(copy, 1 << 24, 7, t + 7_650.0, 10.0, t + 7_700.0, 600.0);
    }
    diagnose(&TraceSet::single(b.table("trace.json")))
}

#[test]
fn pinned_copies_get_no_pin_memory_advice() {
    let pinned = loader("Memcpy HtoD (Pinned -> Device)");
    let f = pinned
        .findings
        .iter()
        .find(|f| f.id == FindingId::DataLoading)
        .unwrap_or_else(|| panic!("{}", pinned.to_markdown()));
    let actions = f.actions_markdown("\n");
    assert!(!actions.contains("pin_memory=True"), "{actions}");
    assert!(
        actions.contains("4 host-to-device copies already come from pinned memory"),
        "{actions}"
    );
    let pageable = loader("Memcpy HtoD (Pageable -> Device)");
    let f = pageable
        .findings
        .iter()
        .find(|f| f.id == FindingId::DataLoading)
        .expect("data loading");
    assert!(f.actions_markdown("\n").contains("pin_memory=True"));
}
