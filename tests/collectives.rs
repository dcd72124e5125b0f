//! Collectives across ranks, waiting versus moving: scenario traces built in code (a late rank by a
//! known delay, a bandwidth-limited all-reduce, matching by `Seq` and by order, the parallelism
//! kinds, split versus merged), plus the real two-rank set of `../shared/traces`.

use crate::common;

use crate::common::TraceBuilder;
use profile_model::analysis::all::{analyze, AnalysisOptions};
use profile_model::analysis::collectives::{
    collectives_prepared, BandwidthBasis, CollectiveKind, Collectives, LateCause, Parallelism,
};
use profile_model::analysis::gpu::RankPrep;
use profile_model::analysis::merge::{merge, merge_analyses, MergePart};
use profile_model::report::diagnosis::diagnose;
use profile_model::report::findings::FindingId;
use profile_model::report::gather::gather_with;
use profile_model::report::gather_parts::{
    context_of, context_parts, gathered_of, rank_gather_part, window_options,
};
use profile_model::report::host::HostTimeline;
use profile_model::table::{TraceSet, TraceTable};
use serde_json::{json, Value};

const ALL_REDUCE: &str = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
const GEMM: &str = "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32";
const LOADER: &str = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__";

/// A data-parallel job: each step a GEMM then an all-reduce. A rank's GEMM runs `delay` µs longer,
/// or its step starts with `loader` µs in the DataLoader (its GPU idle); every rank's all-reduce
/// ends `transfer` µs after the last rank's arrives.
#[derive(Clone)]
pub(crate) struct Job {
    ranks: usize,
    steps: usize,
    step_us: f64,
    compute_us: f64,
    transfer_us: f64,
    pub(crate) delay: Vec<f64>,
    pub(crate) loader: Vec<f64>,
    /// Extra args of every all-reduce kernel; `Seq` is added when `seq`.
    args: Value,
    seq: bool,
}

impl Job {
    pub(crate) fn new(ranks: usize) -> Job {
        Job {
            ranks,
            steps: 4,
            step_us: 10_000.0,
            compute_us: 4_000.0,
            transfer_us: 2_000.0,
            delay: vec![0.0; ranks],
            loader: vec![0.0; ranks],
            args: json!({}),
            seq: false,
        }
    }

    fn arrival(&self, rank: usize, step: usize) -> f64 {
        self.step_start(step)
            + self.loader[rank]
            + 100.0
            + self.compute_us
            + self.delay[rank]
            + 10.0
    }

    fn step_start(&self, step: usize) -> f64 {
        1_000.0 + step as f64 * self.step_us
    }

    fn rank(&self, r: usize) -> TraceTable {
        self.builder(r).table(&format!("rank{r}.json"))
    }

    /// Rank `r`'s trace, to be loaded or written as JSON.
    pub(crate) fn builder(&self, r: usize) -> TraceBuilder {
        let mut b = TraceBuilder::new().rank(r as i64, self.ranks as i64);
        for k in 0..self.steps {
            let s = self.step_start(k);
            let lo = self.loader[r];
            b.step(k as i64, s, self.step_us);
            if lo > 0.0 {
                b.cpu_op(LOADER, s, lo);
            }
            b.kernel(
                GEMM,
                7,
                s + lo + 50.0,
                5.0,
                s + lo + 100.0,
                self.compute_us + self.delay[r],
            );
            let last = (0..self.ranks)
                .map(|q| self.arrival(q, k))
                .fold(f64::MIN, f64::max);
            let a = self.arrival(r, k);
            let mut args = self.args.clone();
            if self.seq {
                args["Seq"] = json!(k);
                args["Process Group Name"] = json!("0");
            }
            b.kernel_args(
                ALL_REDUCE,
                20,
                s + lo + 60.0,
                5.0,
                a,
                last + self.transfer_us - a,
                args,
            );
        }
        b
    }

    pub(crate) fn set(&self) -> TraceSet {
        TraceSet::from_tables((0..self.ranks).map(|r| self.rank(r)).collect())
    }
}

fn collectives_of(set: &TraceSet) -> Collectives {
    let opts = AnalysisOptions::default();
    let preps: Vec<(i64, RankPrep)> = set
        .ranks
        .iter()
        .map(|r| (r.rank, RankPrep::new(&r.table, &opts)))
        .collect();
    collectives_prepared(&preps).1
}

const US: i64 = 1_000;

#[test]
fn a_late_rank_gives_its_delay_as_wait_on_every_other_rank_and_no_transfer_change() {
    let on_time = Job::new(4);
    let mut late = on_time.clone();
    late.delay[2] = 3_000.0;
    let c0 = collectives_of(&on_time.set());
    let c = collectives_of(&late.set());
    assert!(c.split && c0.split);
    let steps = late.steps as i64;
    for (r, (row, row0)) in c.per_rank.iter().zip(&c0.per_rank).enumerate() {
        let expected_wait = if r == 2 { 0 } else { steps * 3_000 * US };
        assert_eq!(row.wait_ns, expected_wait, "rank {r}");
        assert_eq!(row0.wait_ns, 0, "rank {r} on time");
        assert_eq!(row.transfer_ns, steps * 2_000 * US, "rank {r}");
        assert_eq!(
            row.transfer_ns, row0.transfer_ns,
            "rank {r}: the delay moves no transfer"
        );
        assert_eq!(row.arrived_last, if r == 2 { steps as u64 } else { 0 });
        // Nothing else runs while the all-reduce waits or moves.
        assert_eq!(row.exposed_wait_ns, row.wait_ns);
        assert_eq!(row.exposed_transfer_ns, row.transfer_ns);
    }
    assert_eq!(c.matched.by_order, steps as u64);
    assert_eq!(c.late_ranks.len(), 1);
    let l = &c.late_ranks[0];
    assert_eq!((l.rank, l.times_last), (2, steps as u64));
    assert_eq!(l.caused_wait_ns, 3 * steps * 3_000 * US);
    assert_eq!(l.causes[0].cause, LateCause::Compute);
    assert!(c0.late_ranks.is_empty());
}

#[test]
fn a_rank_late_from_its_data_loader_is_named_with_that_cause() {
    let mut job = Job::new(3);
    job.loader[1] = 2_500.0;
    let c = collectives_of(&job.set());
    assert_eq!(c.per_rank[0].wait_ns, job.steps as i64 * 2_500 * US);
    assert_eq!(c.late_ranks[0].rank, 1);
    assert_eq!(c.late_ranks[0].causes[0].cause, LateCause::DataLoader);
}

#[test]
fn a_bandwidth_limited_all_reduce_gives_its_bus_bandwidth() {
    let mut job = Job::new(4);
    let nelems: u64 = 1 << 26;
    job.args = json!({"Collective name": "allreduce", "In msg nelems": nelems, "Out msg nelems": nelems,
        "dtype": "Float", "Group size": 4});
    let c = collectives_of(&job.set());
    let row = c
        .bandwidth
        .iter()
        .find(|b| b.kind == CollectiveKind::AllReduce)
        .expect("all-reduce row");
    let bytes = nelems * 4;
    assert_eq!(row.bytes, Some(bytes));
    assert_eq!(row.basis, BandwidthBasis::Transfer);
    assert_eq!(row.count, job.steps as u64);
    // nccl-tests: algbw = bytes / seconds; busbw = algbw * 2 (n - 1) / n.
    let algbw = bytes as f64 / (job.transfer_us * 1e-6) / 1e9;
    let busbw = algbw * 2.0 * 3.0 / 4.0;
    assert!((row.algbw_gbps.unwrap() - algbw).abs() < 1e-9, "{row:?}");
    assert!((row.busbw_gbps.unwrap() - busbw).abs() < 1e-9, "{row:?}");
    assert!((busbw - 201.326592).abs() < 1e-6);
}

#[test]
fn instances_match_by_seq_when_the_args_have_it_and_by_order_otherwise() {
    let mut job = Job::new(2);
    job.delay[1] = 700.0;
    let by_order = collectives_of(&job.set());
    assert_eq!(
        (by_order.matched.by_order, by_order.matched.by_seq),
        (job.steps as u64, 0)
    );
    job.seq = true;
    let by_seq = collectives_of(&job.set());
    assert_eq!(
        (by_seq.matched.by_order, by_seq.matched.by_seq),
        (0, job.steps as u64)
    );
    assert_eq!(by_seq.per_rank[0].wait_ns, job.steps as i64 * 700 * US);
    assert_eq!(by_order.per_rank, by_seq.per_rank);
}

/// Rank 0's capture starts one collective earlier than rank 1's: `Seq` pairs them right, order
/// would not.
#[test]
fn seq_pairs_ranks_whose_captures_start_at_different_collectives() {
    let rank = |r: i64, seqs: &[(i64, f64)], seq: bool| {
        let mut b = TraceBuilder::new().rank(r, 2);
        for &(s, arrival) in seqs {
            let end = 1_000.0 + s as f64 * 5_000.0 + 600.0 + 1_000.0;
            let mut args = json!({"Process Group Name": "0", "Collective name": "allreduce"});
            if seq {
                args["Seq"] = json!(s);
            }
            b.kernel_args(
                ALL_REDUCE,
                20,
                arrival - 50.0,
                5.0,
                arrival,
                end - arrival,
                args,
            );
        }
        b.table(&format!("r{r}.json"))
    };
    // Instance s: rank 0 arrives at base, rank 1 at base + 600 (last); both end 1000 µs later.
    let base = |s: i64| 1_000.0 + s as f64 * 5_000.0;
    let r0 = [(0, base(0)), (1, base(1)), (2, base(2))];
    let r1 = [(1, base(1) + 600.0), (2, base(2) + 600.0)];
    let c = collectives_of(&TraceSet::from_tables(vec![
        rank(0, &r0, true),
        rank(1, &r1, true),
    ]));
    assert_eq!((c.matched.by_seq, c.matched.unmatched), (2, 1));
    assert_eq!(c.per_rank[0].wait_ns, 2 * 600 * US);
    assert_eq!(c.per_rank[1].wait_ns, 0);
    assert_eq!(c.per_rank[1].transfer_ns, 2 * 1_000 * US);
    // Without Seq the first collectives pair up wrongly: the waits differ.
    let wrong = collectives_of(&TraceSet::from_tables(vec![
        rank(0, &r0, false),
        rank(1, &r1, false),
    ]));
    assert_eq!(wrong.matched.by_order, 2);
    assert_ne!(wrong.per_rank[0].wait_ns, 2 * 600 * US);
}

#[test]
fn split_across_workers_and_merged_outputs_give_the_whole_sets_result() {
    let mut job = Job::new(4);
    job.delay[3] = 1_500.0;
    job.delay[1] = 400.0;
    let set = job.set();
    let opts = AnalysisOptions::default();
    let whole = analyze(&set, &opts);
    assert!(whole.collectives.split);
    assert_eq!(whole.collective_inputs.len(), 4);
    // One shard per rank, merged as the page's workers do.
    let shards: Vec<_> = (0..4)
        .map(|r| analyze(&TraceSet::from_tables(vec![job.rank(r)]), &opts))
        .collect();
    for s in &shards {
        assert!(!s.collectives.split, "one rank alone has no split");
    }
    let merged = merge_analyses(shards.clone());
    assert_eq!(merged.collectives, whole.collectives);
    // Per-rank `analyze --json` outputs through `merge`.
    let parts: Vec<MergePart> = shards
        .iter()
        .enumerate()
        .map(|(r, s)| {
            let text = serde_json::to_string(s).unwrap();
            profile_model::analysis::merge::parse_part(&format!("r{r}.json"), &text).unwrap()
        })
        .collect();
    assert_eq!(merge(parts).unwrap().collectives, whole.collectives);
    let _ = MergePart::of("x", whole.clone());
    // The diagnosis' figures, each rank gathered on its own.
    let g = gather_with(&set, &opts);
    let ctx = context_of(&context_parts(&set));
    let wopts = window_options(&ctx, &opts);
    let parts: Vec<_> = set
        .ranks
        .iter()
        .map(|r| rank_gather_part(r, &HostTimeline::of(&r.table), &wopts))
        .collect();
    let parts: Vec<_> = parts
        .into_iter()
        .map(|p| serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap())
        .collect();
    assert_eq!(
        gathered_of(ctx, parts).inputs.collectives,
        g.inputs.collectives
    );
    assert!(g.inputs.collectives.split);
}

#[test]
fn the_diagnosis_names_the_late_rank_and_counts_transfer_only_as_communication() {
    let mut job = Job::new(4);
    job.delay[2] = 3_000.0;
    let set = job.set();
    let report = diagnose(&set);
    let all = &report.findings;
    let straggler = all
        .iter()
        .find(|f| f.id == FindingId::Straggler)
        .unwrap_or_else(|| panic!("no straggler finding: {all:#?}"));
    assert_eq!(straggler.title, "Straggler: rank 2");
    assert!(
        straggler.measured.contains("rank 2: last at"),
        "{}",
        straggler.measured
    );
    assert!(
        straggler.measured.contains("computed longer"),
        "{}",
        straggler.measured
    );
    assert_eq!(straggler.evidence[0].rank, Some(2));
    let g = gather_with(&set, &AnalysisOptions::default());
    let steps = g.inputs.collectives.per_rank[0].matched as i64;
    assert!(steps >= 2);
    // Waiting: 3 on-time ranks × 3000 µs per analysed step; all with no compute running.
    assert_eq!(straggler.impact.time_ns, 3 * steps * 3_000 * US);
    let comm = all
        .iter()
        .find(|f| f.id == FindingId::Communication)
        .expect("communication finding");
    // Moving: 4 ranks × 2000 µs per step; the wait is not in it.
    assert_eq!(comm.impact.time_ns, 4 * steps * 2_000 * US);
    assert!(
        comm.actions[0].starts_with("Data parallel")
            || comm.actions.iter().any(|a| a.contains("bucket_cap_mb"))
    );
}

/// One rank's trace: the given collectives `(kernel, host annotation around the launch, ts)` in
/// each of two steps, 300 µs each.
fn parallel_rank(ops: &[(&str, Option<&str>, f64)]) -> TraceTable {
    let mut b = TraceBuilder::new();
    for k in 0..2 {
        let s = 1_000.0 + k as f64 * 20_000.0;
        b.step(k, s, 20_000.0);
        for &(kernel, around, ts) in ops {
            // A layer's compute before each collective.
            b.kernel(GEMM, 7, s + ts - 450.0, 5.0, s + ts - 400.0, 300.0);
            if let Some(a) = around {
                b.annotation(a, s + ts - 60.0, 50.0);
            }
            b.kernel(kernel, 20, s + ts - 50.0, 5.0, s + ts, 300.0);
        }
    }
    b.table("p.json")
}

fn parallelism_of(t: TraceTable) -> Vec<Parallelism> {
    collectives_of(&TraceSet::from_tables(vec![t]))
        .parallelism
        .iter()
        .map(|p| p.kind)
        .collect()
}

#[test]
fn the_kind_of_parallelism_follows_the_operation_and_the_phase() {
    let bwd = Some("autograd::engine::evaluate_function: AddmmBackward0");
    assert_eq!(
        parallelism_of(parallel_rank(&[
            (ALL_REDUCE, bwd, 5_000.0),
            (ALL_REDUCE, bwd, 6_000.0)
        ])),
        [Parallelism::DataParallel]
    );
    let tp: Vec<(&str, Option<&str>, f64)> = (0..4)
        .map(|i| (ALL_REDUCE, None, 1_000.0 + 1_000.0 * i as f64))
        .collect();
    assert_eq!(
        parallelism_of(parallel_rank(&tp)),
        [Parallelism::TensorParallel]
    );
    let send_recv = "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)";
    assert_eq!(
        parallelism_of(parallel_rank(&[(
            send_recv,
            Some("nccl:all_to_all"),
            2_000.0
        )])),
        [Parallelism::ExpertParallel]
    );
    assert_eq!(
        parallelism_of(parallel_rank(&[(send_recv, None, 2_000.0)])),
        [Parallelism::PipelineParallel]
    );
    let fsdp = [
        ("ncclDevKernel_AllGather_RING_LL", None, 1_000.0),
        ("ncclDevKernel_ReduceScatter_Sum_f32_RING_LL", bwd, 9_000.0),
    ];
    assert_eq!(
        parallelism_of(parallel_rank(&fsdp)),
        [Parallelism::ShardedDataParallel]
    );
}

#[test]
fn one_rank_gives_totals_and_bandwidth_over_kernel_time_without_a_split() {
    let mut job = Job::new(1);
    job.args = json!({"Collective name": "allreduce", "In msg nelems": 1000, "Out msg nelems": 1000, "dtype": "BFloat16", "Group size": 8});
    let c = collectives_of(&job.set());
    assert!(!c.split);
    assert_eq!(c.per_rank[0].wait_ns, 0);
    assert_eq!(c.per_rank[0].kernel_ns, job.steps as i64 * 2_000 * US);
    assert!(c.notes[0].starts_with("one rank"), "{:?}", c.notes);
    let row = &c.bandwidth[0];
    assert_eq!(row.basis, BandwidthBasis::KernelDuration);
    assert_eq!((row.bytes, row.ranks), (Some(2000), Some(8)));
}

/// The two sampled ranks of HTA's test data (128-rank job): the kinds come from the host
/// annotations around the `SendRecv` kernels; the figures are those of the independent script
/// `tests/python/collectives_check.py` over the raw JSON.
#[test]
fn real_two_rank_set_matches_the_independent_script() {
    let files = ["hta__sampled_rank-0.json.gz", "hta__sampled_rank-1.json.gz"];
    let tables: Vec<TraceTable> = files
        .iter()
        .map(|f| profile_model::table::load_path(&common::trace(f)).expect("sampled rank loads"))
        .collect();
    let c = collectives_of(&TraceSet::from_tables(tables));
    assert!(c.split);
    assert_eq!(c.matched.by_order, 10);
    let kinds: std::collections::BTreeSet<CollectiveKind> =
        c.instances.iter().map(|i| i.kind).collect();
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        [
            CollectiveKind::AllReduce,
            CollectiveKind::AllGather,
            CollectiveKind::AllToAll
        ]
    );
    for r in &c.per_rank {
        assert!(r.wait_ns + r.transfer_ns <= r.kernel_ns, "{r:?}");
    }
    let figures: Vec<(i64, i64, i64, u64)> = c
        .per_rank
        .iter()
        .map(|r| (r.rank, r.wait_ns / US, r.transfer_ns / US, r.arrived_last))
        .collect();
    assert_eq!(figures, EXPECTED_SAMPLED);
}

/// (rank, wait µs, transfer µs, arrived last) from `tests/python/collectives_check.py`.
const EXPECTED_SAMPLED: [(i64, i64, i64, u64); 2] =
    [(0, 189_234, 206_965, 2), (1, 44_254, 334_799, 8)];

/// The public 8-rank DLRM set (facebookresearch/param), when `PROFILE_MODEL_PUBLIC_TRACES` points
/// at the dev corpus: per rank wait and transfer equal those of `tests/python/collectives_check.py`.
#[test]
fn public_dlrm_eight_ranks_match_the_independent_script() {
    let Some(dir) = std::env::var_os("PROFILE_MODEL_PUBLIC_TRACES") else {
        eprintln!("PROFILE_MODEL_PUBLIC_TRACES not set: the public DLRM set is not checked");
        return;
    };
    let dir = std::path::Path::new(&dir).join("facebookresearch__param__dlrm_8ranks");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let tables: Vec<TraceTable> = files
        .iter()
        .map(|f| profile_model::table::load_path(f).expect("loads"))
        .collect();
    let c = collectives_of(&TraceSet::from_tables(tables));
    let figures: Vec<(i64, i64, i64, u64)> = c
        .per_rank
        .iter()
        .map(|r| (r.rank, r.wait_ns / US, r.transfer_ns / US, r.arrived_last))
        .collect();
    assert_eq!(figures, EXPECTED_DLRM);
    assert_eq!(c.late_ranks[0].rank, 7);
    // Rank 7's step starts 7.5 ms after rank 1's: the first all-to-all's lateness is from before it.
    assert_eq!(c.late_ranks[0].causes[0].cause, LateCause::StartedLate);
}

/// (rank, wait µs, transfer µs, arrived last) from `tests/python/collectives_check.py`.
const EXPECTED_DLRM: [(i64, i64, i64, u64); 8] = [
    (0, 5_580, 218, 0),
    (1, 11_125, 211, 0),
    (2, 3_280, 212, 0),
    (3, 9_571, 203, 0),
    (4, 6_370, 217, 1),
    (5, 6_041, 210, 2),
    (6, 3_342, 216, 0),
    (7, 1_534, 212, 5),
];

/// The view's bars: wait and transfer on one scale (the longest rank's total fills the track), the
/// late rank marked; none marked when every rank is on time.
#[test]
fn rank_bars_put_wait_and_transfer_on_one_scale_and_mark_the_late_rank() {
    use profile_model::page::collectives_chart::rank_bars;
    let mut job = Job::new(4);
    job.delay[2] = 3_000.0;
    let bars = rank_bars(&collectives_of(&job.set())).expect("split");
    assert_eq!(bars.late_ranks, vec![2]);
    let steps = job.steps as f64;
    for b in &bars.bars {
        let (wait, transfer) = if b.rank == 2 {
            (0.0, steps * 2_000.0)
        } else {
            (steps * 3_000.0, steps * 2_000.0)
        };
        assert_eq!(
            (b.wait_us, b.transfer_us),
            (wait, transfer),
            "rank {}",
            b.rank
        );
        // The longest total: 4 × (3,000 + 2,000) µs.
        let full = steps * 5_000.0;
        assert!((b.wait_pct - 100.0 * wait / full).abs() < 1e-9);
        assert!((b.transfer_pct - 100.0 * transfer / full).abs() < 1e-9);
        assert_eq!(b.late, b.rank == 2);
    }
    let on_time = rank_bars(&collectives_of(&Job::new(4).set())).expect("split");
    assert!(on_time.bars.iter().all(|b| !b.late && b.wait_us == 0.0));
    let one = rank_bars(&collectives_of(&Job::new(1).set()));
    assert!(one.is_none(), "one rank: no split, no bars");
}

/// Four ranks of tensor parallel: each step four layers, a GEMM then a bf16 all-reduce of 2^20
/// elements moving for 300 µs on every rank at once (no wait), on the device `device`.
fn tensor_parallel_set(device: &str) -> TraceSet {
    let tables = (0..4)
        .map(|r| {
            let mut b = TraceBuilder::new().rank(r, 4);
            for k in 0..2 {
                let s = 1_000.0 + k as f64 * 4_500.0;
                b.step(k, s, 4_500.0);
                for i in 0..4 {
                    let ts = s + 600.0 + 1_000.0 * i as f64;
                    b.kernel(GEMM, 7, ts - 450.0, 5.0, ts - 400.0, 300.0);
                    b.kernel_args(
                        ALL_REDUCE,
                        20,
                        ts - 50.0,
                        5.0,
                        ts,
                        300.0,
                        json!({
                        "Collective name": "allreduce", "In msg nelems": 1 << 20,
                        "Out msg nelems": 1 << 20, "dtype": "BFloat16", "Group size": 4}),
                    );
                }
            }
            let text = b.json().replace("NVIDIA A100-SXM4-80GB", device);
            profile_model::table::load_bytes("r.json", text.as_bytes()).expect("loads")
        })
        .collect();
    TraceSet::from_tables(tables)
}

/// nccl-tests' bus bandwidth of that all-reduce: 2 MiB over 300 µs × 2 (n − 1) / n, GB/s.
fn tensor_parallel_busbw() -> f64 {
    (1u64 << 21) as f64 / 300e-6 / 1e9 * 2.0 * 3.0 / 4.0
}

/// Every place the report writes NVLink, except "no NVLink".
fn nvlink_claims(report: &profile_model::report::diagnosis::DiagnosisReport) -> Vec<String> {
    report
        .findings
        .iter()
        .flat_map(|f| {
            [
                f.headline.clone(),
                f.measured.clone(),
                f.explanation.clone(),
            ]
            .into_iter()
            .chain(f.actions.iter().cloned())
        })
        .map(|t| t.to_markdown())
        .filter(|t| t.replace("no NVLink", "").contains("NVLink"))
        .collect()
}

#[test]
fn bus_bandwidth_is_judged_against_the_link_and_nvlink_is_never_advised_on_a_pcie_only_gpu() {
    use profile_model::page::analyses_view::analyses_model;
    let busbw = tensor_parallel_busbw();
    // RTX 4090: no NVLink; its peers talk over PCIe 4.0 x16: 16 GT/s × 128/130 × 16 lanes / 8.
    let pcie4 = 16.0 * 128.0 / 130.0 * 16.0 / 8.0;
    let set = tensor_parallel_set("NVIDIA GeForce RTX 4090");
    let report = diagnose(&set);
    assert!(
        nvlink_claims(&report).is_empty(),
        "{:#?}",
        nvlink_claims(&report)
    );
    let comm = report
        .findings
        .iter()
        .find(|f| f.id == FindingId::Communication)
        .unwrap_or_else(|| panic!("communication finding: {:#?}", report.findings));
    let judged = format!("{:.0}% of PCIe", 100.0 * busbw / pcie4);
    assert_eq!(judged, "33% of PCIe");
    assert!(comm.measured.contains(&judged), "{}", comm.measured);
    assert!(
        comm.actions[0].starts_with("Tensor parallel") && comm.actions[0].contains("over PCIe"),
        "{:?}",
        comm.actions
    );
    assert!(comm.actions.iter().any(|a| a.contains("no NVLink")));
    // The page's figure: % of the link.
    let all = analyze(&set, &AnalysisOptions::default());
    let model = analyses_model(&all, None);
    let pct: Vec<f64> = model
        .figures()
        .iter()
        .filter(|f| f.metric == "collective-busbw-link-pct")
        .map(|f| f.value)
        .collect();
    assert_eq!(
        pct.len(),
        1,
        "{:?} {:?}",
        all.roofline
            .iter()
            .map(|r| &r.roof.peer_link)
            .collect::<Vec<_>>(),
        model
            .figures()
            .iter()
            .filter(|f| f.metric.contains("busbw"))
            .collect::<Vec<_>>()
    );
    assert!((pct[0] - 100.0 * busbw / pcie4).abs() < 1e-6, "{pct:?}");

    // A100 SXM4: NVLink 600 GB/s both ways, 300 per direction; the all-reduce uses 3.5% of it.
    let report = diagnose(&tensor_parallel_set("NVIDIA A100-SXM4-80GB"));
    let comm = report
        .findings
        .iter()
        .find(|f| f.id == FindingId::Communication)
        .expect("communication finding");
    let judged = format!(
        "{:.0}% of NVLink (300 GB/s per direction)",
        100.0 * busbw / 300.0
    );
    assert!(comm.measured.contains(&judged), "{}", comm.measured);
    assert!(
        comm.actions[0].contains("on its NVLink"),
        "{:?}",
        comm.actions
    );
    assert!(
        comm.actions.iter().any(|a| a.contains("far from used")),
        "3.5% of the link: {:?}",
        comm.actions
    );

    // A device not in the table: its links are not known, NVLink is never named.
    let report = diagnose(&tensor_parallel_set("Some Unknown Accelerator"));
    assert!(
        nvlink_claims(&report).is_empty(),
        "{:#?}",
        nvlink_claims(&report)
    );
}

/// The rank lanes mark each instance's last arrival on every rank of it, the late rank's mark set
/// apart, on the lanes' own time axis (the lanes' busy pixels and the marks from one trace).
#[test]
fn rank_lanes_mark_each_instances_last_arrival() {
    use profile_model::analysis::rank_lanes::{rank_lanes, BusyIndex};
    use profile_model::analysis::timeline::TimelineRequest;
    use profile_model::page::arrival_marks::arrival_marks;
    let mut job = Job::new(3);
    job.delay[1] = 1_500.0;
    let set = job.set();
    let c = collectives_of(&set);
    let indexes: Vec<BusyIndex> = set.ranks.iter().map(|r| BusyIndex::new(&r.table)).collect();
    let whole = rank_lanes(
        &set,
        &indexes,
        &TimelineRequest {
            start_ns: 0,
            end_ns: 100_000 * US,
            width_px: 1000,
        },
    );
    let marks = arrival_marks(&c, &whole);
    // Every step's all-reduce, once per rank.
    assert_eq!(marks.len(), job.steps * 3);
    for step in 0..job.steps {
        // The arrival of the late rank (µs in the trace = ns on the lanes' axis).
        let at = (job.arrival(1, step) * 1000.0).round() as i64;
        let here: Vec<_> = marks.iter().filter(|m| m.at_ns == at).collect();
        assert_eq!(here.len(), 3, "step {step}: {marks:?}");
        for m in here {
            let rank = whole.lanes[m.row].rank;
            assert_eq!(m.last, rank == 1, "step {step} rank {rank}");
        }
    }
    // A range holding only the first step's all-reduce.
    let first = (job.arrival(1, 0) * 1000.0) as i64;
    let narrow = rank_lanes(
        &set,
        &indexes,
        &TimelineRequest {
            start_ns: first - 10 * US,
            end_ns: first + 10 * US,
            width_px: 100,
        },
    );
    let marks = arrival_marks(&c, &narrow);
    assert_eq!(marks.len(), 3);
    assert!(marks.iter().all(|m| m.at_ns == first));
}
