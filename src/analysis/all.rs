//! Runs every analysis over a set of ranks and gathers the results, typed ([`AllAnalyses`]) or as
//! one JSON document ([`analyze_all`]), plus plain-text tables for the command line.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write;

use super::critical_path::{critical_path_mode, CriticalPathOptions, CriticalPathResult};
use super::gpu::RankPrep;
use super::idle::{idle_prepared, StreamIdle};
use super::kernels::{kernel_breakdown_prepared, KernelBreakdown};
use super::launch::{launch_prepared, LaunchStats};
use super::memcpy::{memory_prepared, MemoryOps};
use super::overlap::{overlap_prepared, CommCompOverlap};
use super::queue::{queue_prepared, StreamQueue};
use super::sequences::{frequent_kernel_sequences, SequenceOptions, SequencesResult};
use super::steps::{steps_prepared, RankSteps};
use super::stragglers::{stragglers_prepared, Stragglers};
use super::temporal::{temporal_prepared, TemporalBreakdown};
use crate::table::TraceSet;

/// Which definitions to follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Integer-ns timestamps, every event of the window, GPU events recognised by what they are.
    #[default]
    Exact,
    /// HTA 0.5.0's definitions (whole-µs rounding, last-ProfilerStep filter, its name patterns).
    HtaCompat,
}

/// Options shared by all analyses.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AnalysisOptions {
    pub mode: Mode,
    /// Restrict to these ProfilerStep numbers (inclusive range), when set.
    pub steps: Option<(i64, i64)>,
    /// Restrict to host rows starting in `[start, end)` ns (and the device work they launched), when
    /// set and `steps` is not; the diagnosis uses it to leave a warm-up out of traces without steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ns: Option<(i64, i64)>,
    /// Idle gaps shorter than this (between queued work) are "kernel wait"; µs, default 30.
    #[serde(default)]
    pub kernel_wait_threshold_us: Option<f64>,
    /// Window of the critical path (annotation substring and instance; default the whole trace).
    #[serde(default)]
    pub critical_path: CriticalPathOptions,
}

impl AnalysisOptions {
    pub fn hta_compat() -> Self {
        AnalysisOptions {
            mode: Mode::HtaCompat,
            ..Default::default()
        }
    }

    /// The kernel-wait threshold, ns.
    pub fn kernel_wait_threshold_ns(&self) -> i64 {
        (self.kernel_wait_threshold_us.unwrap_or(30.0) * 1000.0).round() as i64
    }
}

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
        notes.push("exact mode: integer-ns timestamps, every event of the window, device events recognised by their kind; HTA 0.5.0 rounds float timestamps to whole µs, drops the last ProfilerStep and selects rows by `stream`".into());
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
    let stragglers = laps.time("stragglers", || stragglers_prepared(&preps, opts));
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
        set.ranks
            .iter()
            .map(|r| RankSequences {
                rank: r.rank,
                result: frequent_kernel_sequences(&r.table, &seq_opts),
            })
            .collect()
    });
    let critical_path = laps.time("critical_path", || {
        set.ranks
            .iter()
            .map(|r| RankCriticalPath {
                rank: r.rank,
                result: critical_path_mode(&r.table, &opts.critical_path, opts.mode),
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
        kernel_launch_stats,
        queue_length,
        memory_bandwidth,
        profiler_steps,
        frequent_kernel_sequences,
        critical_path,
        notes,
    };
    (all, laps.out)
}

/// The timing table of [`analyze_timed`]: one line per analysis and the total, ms.
pub fn render_timings(timings: &[AnalysisTiming]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{:<28} {:>10}", "analysis", "ms");
    for t in timings {
        let _ = writeln!(s, "{:<28} {:>10.1}", t.name, t.ms);
    }
    let total: f64 = timings.iter().map(|t| t.ms).sum();
    let _ = writeln!(s, "{:<28} {:>10.1}", "total", total);
    s
}

/// Every analysis, keyed by name (`kernel_breakdown`, `temporal_breakdown`, ...): [`AllAnalyses`] as JSON.
pub fn analyze_all(set: &TraceSet, opts: &AnalysisOptions) -> Value {
    serde_json::to_value(analyze(set, opts)).unwrap_or(Value::Null)
}

fn f(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "-".into()
    }
}

/// Plain-text tables of [`analyze_all`]'s result, for the command line.
pub fn render_text(all: &Value) -> String {
    let Ok(a) = serde_json::from_value::<AllAnalyses>(all.clone()) else {
        return serde_json::to_string_pretty(all).unwrap_or_default();
    };
    render_analyses(&a)
}

/// Plain-text tables of typed results.
pub fn render_analyses(a: &AllAnalyses) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Analyses ({:?} mode), ranks {:?}", a.mode, a.ranks);
    let _ = writeln!(s, "\nGPU time by kernel type (all ranks)");
    let _ = writeln!(s, "  {:<58} {:>14} {:>7}", "type", "time (us)", "%");
    for t in &a.kernel_breakdown.by_type_all_ranks {
        let _ = writeln!(
            s,
            "  {:<58} {:>14} {:>7.1}",
            t.kernel_type,
            f(t.time_us),
            t.pct
        );
    }
    for r in &a.kernel_breakdown.ranks {
        let _ = writeln!(s, "\nTop kernels, rank {}", r.rank);
        let _ = writeln!(
            s,
            "  {:<14} {:>7} {:>12} {:>10} {:>10} {:>6}  name",
            "type", "count", "sum (us)", "mean (us)", "max (us)", "%type"
        );
        for k in &r.top {
            let mut name = k.name.clone();
            if name.len() > 70 {
                let mut cut = 67;
                while !name.is_char_boundary(cut) {
                    cut -= 1;
                }
                name.truncate(cut);
                name.push_str("...");
            }
            let _ = writeln!(
                s,
                "  {:<14} {:>7} {:>12} {:>10} {:>10} {:>6.1}  {}",
                k.kernel_type.as_str(),
                k.count,
                f(k.sum_us),
                f(k.mean_us),
                f(k.max_us),
                k.pct_of_type,
                name
            );
        }
    }
    let _ = writeln!(s, "\nTemporal breakdown");
    let _ = writeln!(
        s,
        "  {:>5} {:>14} {:>8} {:>8} {:>12}",
        "rank", "window (us)", "idle %", "comp %", "non-comp %"
    );
    for t in &a.temporal_breakdown {
        let _ = writeln!(
            s,
            "  {:>5} {:>14} {:>8.2} {:>8.2} {:>12.2}",
            t.rank,
            f(t.window_us),
            t.idle_pct,
            t.compute_pct,
            t.non_compute_pct
        );
    }
    let _ = writeln!(s, "\nIdle time by stream");
    let _ = writeln!(
        s,
        "  {:>5} {:>7} {:>14} {:>14} {:>14} {:>14}",
        "rank", "stream", "idle (us)", "host wait", "kernel wait", "other"
    );
    for i in &a.idle_time_breakdown {
        let c = |k: usize| {
            i.categories
                .iter()
                .find(|c| c.category == super::idle::IDLE_CATEGORIES[k])
                .map_or(0.0, |c| c.idle_us)
        };
        let _ = writeln!(
            s,
            "  {:>5} {:>7} {:>14} {:>14} {:>14} {:>14}",
            i.rank,
            i.stream,
            f(i.idle_us),
            f(c(0)),
            f(c(1)),
            f(c(2))
        );
    }
    let _ = writeln!(s, "\nCommunication/computation overlap");
    for o in &a.comm_comp_overlap {
        let _ = writeln!(
            s,
            "  rank {:>4}: comm {} us, overlapped {} us ({})",
            o.rank,
            f(o.comm_us),
            f(o.overlap_us),
            o.overlap_pct
                .map_or("no communication".into(), |p| format!("{p:.2}%"))
        );
    }
    let _ = writeln!(s, "\nKernel launches");
    for l in &a.kernel_launch_stats {
        let _ = writeln!(
            s,
            "  rank {:>4}: {} launches, cpu mean {} us, gpu mean {} us, delay mean {} us; short kernels {}, runtime outliers {}, delay outliers {}",
            l.rank,
            l.launches,
            f(l.cpu_us.mean),
            f(l.gpu_us.mean),
            f(l.delay_us.mean),
            l.short_kernels,
            l.runtime_outliers,
            l.delay_outliers
        );
    }
    let _ = writeln!(s, "\nQueue length");
    for q in &a.queue_length {
        let _ = writeln!(
            s,
            "  rank {:>4} stream {:>4}: mean {:.1}, max {}, blocked {} us",
            q.rank,
            q.stream,
            q.queue_length.mean,
            q.queue_length.max,
            f(q.blocked_us)
        );
    }
    let _ = writeln!(s, "\nMemory copies and sets");
    for m in &a.memory_bandwidth {
        let _ = writeln!(
            s,
            "  rank {:>4} {:<40} {:>6} ops {:>14} bytes {:>12} us {:>10.3} GB/s",
            m.rank,
            m.name,
            m.count,
            m.bytes,
            f(m.time_us),
            m.bandwidth_gbps
        );
    }
    let _ = writeln!(s, "\nProfiler steps");
    for r in &a.profiler_steps {
        let list: Vec<String> = r
            .steps
            .iter()
            .map(|st| format!("#{} {} us", st.step, f(st.duration_us)))
            .collect();
        let _ = writeln!(s, "  rank {:>4}: {}", r.rank, list.join(", "));
    }
    let _ = writeln!(s, "\nCritical path");
    for c in &a.critical_path {
        let p = &c.result;
        if !p.ok {
            let _ = writeln!(
                s,
                "  rank {:>4}: none ({})",
                c.rank,
                p.error.as_deref().unwrap_or("?")
            );
            continue;
        }
        let shares: Vec<String> = p
            .summary
            .iter()
            .filter(|b| b.pct.abs() >= 0.05)
            .map(|b| format!("{} {:.1}%", b.bound_by, b.pct))
            .collect();
        let _ = writeln!(
            s,
            "  rank {:>4}: {} us over {} segments: {}",
            c.rank,
            f(p.total_us),
            p.segments,
            shares.join(", ")
        );
        for seg in p.top_segments.iter().take(5) {
            let _ = writeln!(
                s,
                "    {:>12} us  {:<26} {}",
                f(seg.duration_us),
                seg.bound_by,
                seg.name.as_deref().unwrap_or(&seg.edge_type)
            );
        }
    }
    let _ = writeln!(s, "\nStragglers");
    if a.stragglers.ranks.is_empty() {
        let _ = writeln!(s, "  none found");
    } else {
        let _ = writeln!(
            s,
            "  ranks {:?} (collective {} on stream {})",
            a.stragglers.ranks,
            a.stragglers.kernel.as_deref().unwrap_or("?"),
            a.stragglers.stream.unwrap_or(-1)
        );
    }
    for n in &a.stragglers.notes {
        let _ = writeln!(s, "  note: {n}");
    }
    if !a.notes.is_empty() {
        let _ = writeln!(s, "\nNotes");
        for n in &a.notes {
            let _ = writeln!(s, "  - {n}");
        }
    }
    s
}
