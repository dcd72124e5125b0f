//! The diagnosis as a map-reduce over ranks: a set split into sub-sets (as Web Workers would hold
//! them), each giving per-rank parts that go through JSON, reduces to the very report of the whole set
//! (plain and redacted), for every contiguous split in two and one rank per part in shuffled order.

use crate::common;

use crate::common::TraceBuilder;
use profile_model::analysis::all::AnalysisOptions;
use profile_model::report::context::TraceHolds;
use profile_model::report::diagnosis::{diagnose, diagnose_reduced};
use profile_model::report::gather::gather;
use profile_model::report::gather_parts::{
    context_of, context_parts, gather_parts, gathered_of, RankContextPart, RankGatherPart,
};
use profile_model::table::{load_path, runs_split_of, TraceSet};
use serde::{de::DeserializeOwned, Serialize};

const GEMM: &str = "ampere_sgemm_128x64_nn";
const ALL_REDUCE: &str =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";

/// `v` through JSON, checking that serialize → deserialize → serialize gives the same text.
fn round_trip<T: Serialize + DeserializeOwned>(v: &T, what: &str) -> T {
    let text = serde_json::to_string(v).expect("serialises");
    let back: T = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: {e}\n{text}"));
    assert_eq!(serde_json::to_string(&back).unwrap(), text, "{what}");
    back
}

/// The sub-set of `whole` made of its ranks at `idx` (set positions), loaded as the loader would
/// load only those files (each keeping its position among all the files given).
fn sub_set(whole: &TraceSet, idx: &[usize]) -> TraceSet {
    let tables = idx
        .iter()
        .map(|&i| (whole.ranks[i].load_order, whole.ranks[i].table.clone()))
        .collect();
    TraceSet::from_tables_at(tables, whole.len())
}

/// Every contiguous split in two, and one rank per part in a shuffled order.
fn splits(n: usize) -> Vec<Vec<Vec<usize>>> {
    let mut out: Vec<Vec<Vec<usize>>> = (1..n)
        .map(|k| vec![(0..k).collect(), (k..n).collect()])
        .collect();
    // A fixed shuffle: odd positions backwards, then even ones.
    let mut order: Vec<usize> = (0..n).filter(|i| i % 2 == 1).rev().collect();
    order.extend((0..n).filter(|i| i % 2 == 0));
    out.push(order.into_iter().map(|i| vec![i]).collect());
    out
}

/// Reduces the parts of the sub-sets at `split` and checks the report against the whole set's.
fn check_split(whole: &TraceSet, split: &[Vec<usize>], what: &str) {
    let what = format!("{what}, split {split:?}");
    let subs: Vec<TraceSet> = split.iter().map(|idx| sub_set(whole, idx)).collect();
    // Round 1: each sub-set's context parts, through JSON, gathered last sub-set first.
    let mut cparts: Vec<RankContextPart> = Vec::new();
    for s in subs.iter().rev() {
        for p in context_parts(s) {
            let back = round_trip(&p, &what);
            assert_eq!(back, p, "{what}: context part");
            cparts.push(back);
        }
    }
    let context = round_trip(&context_of(&cparts), &what);
    // Round 2: each sub-set's figures over that context's window, through JSON.
    let opts = AnalysisOptions::default();
    let mut gparts: Vec<RankGatherPart> = Vec::new();
    for s in subs.iter().rev() {
        for p in gather_parts(s, &context, &opts) {
            let back = round_trip(&p, &what);
            assert_eq!(back, p, "{what}: gather part");
            gparts.push(back);
        }
    }
    let g = gathered_of(context, gparts);
    assert!(g == gather(whole), "{what}: gathered figures differ");
    let reduced = diagnose_reduced(&g, &whole.skipped);
    let full = diagnose(whole);
    assert_eq!(reduced.to_json(), full.to_json(), "{what}");
    assert_eq!(
        reduced.redacted().to_json(),
        full.redacted().to_json(),
        "{what}: redacted"
    );
    // Telling separate runs apart reads the same identities.
    let mut ids: Vec<_> = cparts.iter().map(|p| p.identity.clone()).collect();
    ids.sort_by_key(|i| (i.rank, i.load_order));
    assert_eq!(
        runs_split_of(&ids),
        whole.runs_split(),
        "{what}: runs split"
    );
}

fn check_set(whole: &TraceSet, what: &str) {
    assert!(whole.len() >= 2, "{what}");
    for split in splits(whole.len()) {
        check_split(whole, &split, what);
    }
}

fn real_set(names: &[&str]) -> TraceSet {
    TraceSet::from_tables(
        names
            .iter()
            .map(|n| load_path(&common::trace(n)).expect("loads"))
            .collect(),
    )
}

#[test]
fn two_sampled_ranks_reduce_to_the_whole_report() {
    let set = real_set(&["hta__sampled_rank-0.json.gz", "hta__sampled_rank-1.json.gz"]);
    check_set(&set, "sampled ranks 0+1");
}

#[test]
fn separate_runs_reduce_to_the_whole_report() {
    let set = real_set(&[
        "hta__nccl_data.json.gz",
        "hta__negative_queue_length__rank0.json.gz",
        "hta__critical_path_alexnet.json.gz",
    ]);
    assert!(
        set.separate_runs().is_some(),
        "the three files look like separate runs"
    );
    check_set(&set, "nccl_data + negative_queue_length + alexnet");
}

/// Rank `rank` of `world` (no `distributedInfo` when `None`): `warm` slow leading steps full of cudaMalloc/cudaFree, then `steps` steps of a GEMM,
/// an all-reduce, a host-to-device copy and a synchronisation inside an op; ranks differ in length.
fn rank_trace(rank: Option<(i64, i64)>, warm: i64, steps: i64) -> TraceBuilder {
    let mut b = TraceBuilder::new();
    if let Some((r, w)) = rank {
        b = b.rank(r, w);
    }
    let rank = rank.map_or(7, |r| r.0);
    let mut t = 100.0 * rank as f64;
    for s in 0..warm {
        b.step(s, t, 20_000.0);
        for i in 0..50 {
            let c = t + 300.0 * i as f64;
            b.runtime(if i % 2 == 0 { "cudaMalloc" } else { "cudaFree" }, c, 200.0);
        }
        b.kernel(GEMM, 7, t + 400.0, 5.0, t + 450.0, 500.0);
        t += 20_000.0;
    }
    for s in warm..warm + steps {
        b.step(s, t, 3_000.0);
        b.cpu_op("aten::copy_", t + 10.0, 40.0);
        b.memcpy(
            "Memcpy HtoD (Pageable -> Device)",
            4096 * (rank + 1),
            7,
            t + 20.0,
            10.0,
            t + 50.0,
            40.0 + rank as f64,
        );
        b.kernel(
            GEMM,
            7,
            t + 100.0,
            5.0,
            t + 120.0,
            1_000.0 + 100.0 * rank as f64,
        );
        b.kernel(ALL_REDUCE, 20, t + 110.0, 5.0, t + 1_300.0, 800.0);
        b.kernel(
            "tiny_kernel",
            7,
            t + 130.0,
            5.0,
            t + 2_200.0,
            3.0 + s as f64,
        );
        b.cpu_op("aten::item", t + 2_100.0, 500.0);
        b.runtime("cudaStreamSynchronize", t + 2_110.0, 480.0);
        t += 3_000.0;
    }
    b
}

#[test]
fn built_ranks_with_warmup_and_different_step_counts_reduce_to_the_whole_report() {
    let tables = vec![
        rank_trace(Some((2, 4)), 1, 4).table("rank2.json"),
        rank_trace(Some((0, 4)), 2, 5).table("rank0.json"),
        rank_trace(Some((3, 4)), 0, 4).table("rank3.json"),
        rank_trace(Some((1, 4)), 1, 6).table("rank1.json"),
    ];
    let set = TraceSet::from_tables(tables);
    assert!(set.separate_runs().is_none());
    let r = diagnose(&set);
    assert!(r.context.warmup.is_some(), "{:?}", r.context);
    assert!(r.context.holds(TraceHolds::SteadyState), "{:?}", r.context);
    assert_eq!(r.context.steps, Some((2, 3)));
    assert!(!r.top_kernels.is_empty());
    check_set(&set, "four built ranks");
}

#[test]
fn two_files_of_one_rank_reduce_to_the_whole_report() {
    // Rank 1 twice (separate runs), and a file without a rank (numbered by load order).
    let tables = vec![
        rank_trace(Some((1, 2)), 1, 30).table("a.json"),
        rank_trace(Some((0, 2)), 0, 30).table("b.json"),
        rank_trace(Some((1, 2)), 0, 25).table("c.json"),
        rank_trace(None, 1, 30).table("plain.json"),
    ];
    let set = TraceSet::from_tables(tables);
    assert_eq!(
        set.separate_runs().as_deref(),
        Some("a.json and c.json both say they are rank 1")
    );
    assert_eq!(set.ranks[3].rank_source, "load order");
    // Steps 1-24 on every file: the two files of rank 1 share one evidence row (24 + 24 calls, the
    // first 20 rows), as one scan over both would give.
    let g = gather(&set);
    assert_eq!(g.context.steps, Some((1, 24)));
    let sync = &g.inputs.syncs[0];
    let rank1: Vec<_> = sync.evidence.iter().filter(|e| e.rank == Some(1)).collect();
    assert_eq!(rank1.len(), 1, "{sync:?}");
    assert_eq!(rank1[0].count, 48);
    assert_eq!(rank1[0].rows.len(), 20);
    check_set(&set, "rank 1 twice");
}
