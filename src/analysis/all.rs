//! Runs every analysis over a set of ranks and gathers the results, typed ([`AllAnalyses`]) or as
//! one JSON document ([`analyze_all`]); `report::text` renders them for the command line.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::critical_path::{critical_path_prepared, CriticalPathResult};
use super::gpu::RankPrep;
use super::idle::{idle_prepared, StreamIdle};
use super::kernels::{kernel_breakdown_prepared, KernelBreakdown};
use super::launch::{launch_prepared, LaunchStats};
use super::memcpy::{memory_prepared, MemoryOps};
use super::overlap::{overlap_prepared, CommCompOverlap};
use super::queue::{queue_prepared, StreamQueue};
use super::sequences::{frequent_kernel_sequences_in, SequenceOptions, SequencesResult};
use super::steps::{steps_prepared, RankSteps};
use super::stragglers::{straggler_inputs, stragglers_from_inputs, StragglerInputs, Stragglers};
use super::temporal::{temporal_prepared, TemporalBreakdown};
use crate::table::TraceSet;

pub use super::options::{AnalysisOptions, Mode};

/// Frequent kernel sequences of one rank.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RankSequences {
    pub rank: i64,
    pub result: SequencesResult,
}

/// Critical path of one rank.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RankCriticalPath {
    pub rank: i64,
    pub result: CriticalPathResult,
}

/// Every analysis, typed. Field names are stable (the JSON of [`analyze_all`] uses them as keys).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AllAnalyses {
    pub mode: Mode,
    /// Ranks analysed, ascending.
    pub ranks: Vec<i64>,
    /// Time by kernel type and per-kernel statistics, per rank and summed over ranks.
    pub kernel_breakdown: KernelBreakdown,
    /// Idle / compute / non-compute per rank (ranks without device events are absent).
    pub temporal_breakdown: Vec<TemporalBreakdown>,
    /// Idle time per rank and stream: host wait / kernel wait / other.
    pub idle_time_breakdown: Vec<StreamIdle>,
    /// Share of communication hidden under computation, per rank.
    pub comm_comp_overlap: Vec<CommCompOverlap>,
    /// Stragglers across ranks (with a note when there is one rank only).
    pub stragglers: Stragglers,
    /// What each rank contributes to `stragglers` (the input of the reduce `profile-model merge` runs
    /// over per-rank outputs; see `analysis::merge`).
    #[serde(default)]
    pub straggler_inputs: Vec<StragglerInputs>,
    /// Launch call time, kernel time, launch delay per rank.
    pub kernel_launch_stats: Vec<LaunchStats>,
    /// Queue length per rank and stream, with time blocked on a full queue.
    pub queue_length: Vec<StreamQueue>,
    /// Memory copies and sets per rank and kind.
    pub memory_bandwidth: Vec<MemoryOps>,
    /// `ProfilerStep#N` times per rank.
    pub profiler_steps: Vec<RankSteps>,
    pub frequent_kernel_sequences: Vec<RankSequences>,
    pub critical_path: Vec<RankCriticalPath>,
    /// Kernels and operators against the device's roof, per rank (exact mode).
    #[serde(default)]
    pub roofline: Vec<super::roofline::RankRoofline>,
    /// Notes on how the results were computed (differences from HTA, filters applied).
    pub notes: Vec<String>,
}

/// Wall time of one analysis (over all ranks), for benchmarks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalysisTiming {
    /// `prepare` (the shared per-rank preparation) or an [`AllAnalyses`] field name.
    pub name: String,
    pub ms: f64,
}

/// Laps of a caller-supplied clock.
struct Laps<'c> {
    now_ms: &'c dyn Fn() -> f64,
    last: f64,
    out: Vec<AnalysisTiming>,
}

impl Laps<'_> {
    /// Runs `f` and records its time under `name`.
    fn time<T>(&mut self, name: &str, f: impl FnOnce() -> T) -> T {
        let v = f();
        let now = (self.now_ms)();
        self.out.push(AnalysisTiming {
            name: name.to_string(),
            ms: now - self.last,
        });
        self.last = now;
        v
    }
}

/// The note of an analysis in exact mode (after the rank notes, before the bounded-output notes).
pub const EXACT_MODE_NOTE: &str = "exact mode: integer-ns timestamps, every event of the window, device events recognised by their kind; HTA 0.5.0 rounds float timestamps to whole µs, drops the last ProfilerStep and selects rows by `stream`";

/// Every analysis over a set of ranks.
pub fn analyze(set: &TraceSet, opts: &AnalysisOptions) -> AllAnalyses {
    analyze_timed(set, opts, &|| 0.0).0
}

/// [`analyze`], with the time each analysis took: `prepare` (the shared per-rank preparation), then
/// one entry per [`AllAnalyses`] field, in field order. `now_ms` is a clock in milliseconds (the
/// caller's: `Instant` natively, `performance.now()` in the browser).
pub fn analyze_timed(
    set: &TraceSet,
    opts: &AnalysisOptions,
    now_ms: &dyn Fn() -> f64,
) -> (AllAnalyses, Vec<AnalysisTiming>) {
    let mut laps = Laps {
        now_ms,
        last: now_ms(),
        out: Vec::new(),
    };
    let preps: Vec<(i64, RankPrep)> = laps.time("prepare", || {
        set.ranks
            .iter()
            .map(|r| (r.rank, RankPrep::new(&r.table, opts)))
            .collect()
    });
    let mut notes: Vec<String> = set.notes.clone();
    for (rank, p) in &preps {
        for n in &p.notes {
            notes.push(format!("rank {rank}: {n}"));
        }
    }
    if opts.mode == Mode::Exact {
        notes.push(EXACT_MODE_NOTE.into());
    }
    // The sequences follow the mode like every other analysis.
    let seq_opts = SequenceOptions {
        hta_compat: opts.mode == Mode::HtaCompat,
        ..SequenceOptions::default()
    };
    let kernel_breakdown = laps.time("kernel_breakdown", || {
        kernel_breakdown_prepared(&preps, opts)
    });
    let temporal_breakdown = laps.time("temporal_breakdown", || {
        preps
            .iter()
            .filter_map(|(r, p)| temporal_prepared(*r, p))
            .collect()
    });
    let idle_time_breakdown: Vec<StreamIdle> = laps.time("idle_time_breakdown", || {
        preps
            .iter()
            .flat_map(|(r, p)| idle_prepared(*r, p, opts))
            .collect()
    });
    let comm_comp_overlap = laps.time("comm_comp_overlap", || {
        preps.iter().map(|(r, p)| overlap_prepared(*r, p)).collect()
    });
    let (straggler_inputs, stragglers) = laps.time("stragglers", || {
        let inputs: Vec<StragglerInputs> =
            preps.iter().map(|(r, p)| straggler_inputs(*r, p)).collect();
        let s = stragglers_from_inputs(&inputs, opts.mode);
        (inputs, s)
    });
    let kernel_launch_stats = laps.time("kernel_launch_stats", || {
        preps.iter().map(|(r, p)| launch_prepared(*r, p)).collect()
    });
    let queue_length: Vec<StreamQueue> = laps.time("queue_length", || {
        preps
            .iter()
            .flat_map(|(r, p)| queue_prepared(*r, p))
            .collect()
    });
    let memory_bandwidth = laps.time("memory_bandwidth", || {
        preps
            .iter()
            .flat_map(|(r, p)| memory_prepared(*r, p))
            .collect()
    });
    let profiler_steps = laps.time("profiler_steps", || {
        preps.iter().map(|(r, p)| steps_prepared(*r, p)).collect()
    });
    let frequent_kernel_sequences = laps.time("frequent_kernel_sequences", || {
        preps
            .iter()
            .map(|(rank, p)| RankSequences {
                rank: *rank,
                result: frequent_kernel_sequences_in(&p.frame(), p.table, &seq_opts),
            })
            .collect()
    });
    let critical_path = laps.time("critical_path", || {
        preps
            .iter()
            .map(|(rank, p)| RankCriticalPath {
                rank: *rank,
                result: critical_path_prepared(p, &opts.critical_path),
            })
            .collect()
    });
    let roofline = laps.time("roofline", || {
        preps
            .iter()
            .map(|(rank, p)| {
                if p.mode == Mode::Exact {
                    super::roofline::roofline_prepared(*rank, p)
                } else {
                    let exact = AnalysisOptions {
                        mode: Mode::Exact,
                        ..opts.clone()
                    };
                    super::roofline::roofline_prepared(*rank, &RankPrep::new(p.table, &exact))
                }
            })
            .collect()
    });
    notes.extend(super::bounded::notes(
        &idle_time_breakdown,
        &queue_length,
        &kernel_breakdown,
    ));
    let all = AllAnalyses {
        mode: opts.mode,
        ranks: set.ranks.iter().map(|r| r.rank).collect(),
        kernel_breakdown,
        temporal_breakdown,
        idle_time_breakdown,
        comm_comp_overlap,
        stragglers,
        straggler_inputs,
        kernel_launch_stats,
        queue_length,
        memory_bandwidth,
        profiler_steps,
        frequent_kernel_sequences,
        critical_path,
        roofline,
        notes,
    };
    (all, laps.out)
}

/// Every analysis, keyed by name (`kernel_breakdown`, `temporal_breakdown`, ...): [`AllAnalyses`] as JSON.
pub fn analyze_all(set: &TraceSet, opts: &AnalysisOptions) -> Value {
    serde_json::to_value(analyze(set, opts)).unwrap_or(Value::Null)
}
