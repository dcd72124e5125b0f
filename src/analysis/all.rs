//! Runs every analysis over a set of ranks and gathers the results, typed ([`AllAnalyses`]) or as
//! one JSON document ([`analyze_all`]); `report::text` renders them for the command line.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::collectives::{collective_inputs, collectives_from_inputs, CollectiveInputs};
use super::critical_path::{critical_path_prepared, CriticalPathResult};
use super::gpu::RankPrep;
use super::idle::{idle_prepared, StreamIdle};
use super::kernels::kernel_breakdown_prepared;
use super::launch::launch_prepared;
use super::memcpy::memory_prepared;
use super::overlap::overlap_prepared;
use super::queue::{queue_prepared, StreamQueue};
use super::sequences::{frequent_kernel_sequences_in, SequenceOptions, SequencesResult};
use super::steps::steps_prepared;
use super::stragglers::{straggler_inputs, stragglers_from_inputs, StragglerInputs};
use super::temporal::temporal_prepared;
use crate::table::TraceSet;

pub use super::options::{AnalysisOptions, Mode};
pub use super::registry::{AllAnalyses, AnalysisId};

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
    /// Runs `f` and records its time under `name` (`prepare` or an [`AnalysisId::key`]).
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
        mode: opts.mode,
        ..SequenceOptions::default()
    };
    let kernel_breakdown = laps.time(AnalysisId::KernelBreakdown.key(), || {
        kernel_breakdown_prepared(&preps, opts)
    });
    let temporal_breakdown = laps.time(AnalysisId::TemporalBreakdown.key(), || {
        preps
            .iter()
            .filter_map(|(r, p)| temporal_prepared(*r, p))
            .collect()
    });
    let idle_time_breakdown: Vec<StreamIdle> =
        laps.time(AnalysisId::IdleTimeBreakdown.key(), || {
            preps
                .iter()
                .flat_map(|(r, p)| idle_prepared(*r, p, opts))
                .collect()
        });
    let comm_comp_overlap = laps.time(AnalysisId::CommCompOverlap.key(), || {
        preps.iter().map(|(r, p)| overlap_prepared(*r, p)).collect()
    });
    let (straggler_inputs, stragglers) = laps.time(AnalysisId::Stragglers.key(), || {
        let inputs: Vec<StragglerInputs> =
            preps.iter().map(|(r, p)| straggler_inputs(*r, p)).collect();
        let s = stragglers_from_inputs(&inputs, opts.mode);
        (inputs, s)
    });
    let kernel_launch_stats = laps.time(AnalysisId::KernelLaunchStats.key(), || {
        preps.iter().map(|(r, p)| launch_prepared(*r, p)).collect()
    });
    let queue_length: Vec<StreamQueue> = laps.time(AnalysisId::QueueLength.key(), || {
        preps
            .iter()
            .flat_map(|(r, p)| queue_prepared(*r, p))
            .collect()
    });
    let memory_bandwidth = laps.time(AnalysisId::MemoryBandwidth.key(), || {
        preps
            .iter()
            .flat_map(|(r, p)| memory_prepared(*r, p))
            .collect()
    });
    let profiler_steps = laps.time(AnalysisId::ProfilerSteps.key(), || {
        preps.iter().map(|(r, p)| steps_prepared(*r, p)).collect()
    });
    let frequent_kernel_sequences = laps.time(AnalysisId::FrequentKernelSequences.key(), || {
        preps
            .iter()
            .map(|(rank, p)| RankSequences {
                rank: *rank,
                result: frequent_kernel_sequences_in(&p.frame(), p.table, &seq_opts),
            })
            .collect()
    });
    let critical_path = laps.time(AnalysisId::CriticalPath.key(), || {
        preps
            .iter()
            .map(|(rank, p)| RankCriticalPath {
                rank: *rank,
                result: critical_path_prepared(p, &opts.critical_path),
            })
            .collect()
    });
    let (collective_inputs, collectives) = laps.time(AnalysisId::Collectives.key(), || {
        let inputs: Vec<CollectiveInputs> = preps
            .iter()
            .map(|(r, p)| collective_inputs(*r, p))
            .collect();
        let c = collectives_from_inputs(&inputs);
        (inputs, c)
    });
    let roofline = laps.time(AnalysisId::Roofline.key(), || {
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
        collectives,
        collective_inputs,
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
