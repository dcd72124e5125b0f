//! Two runs compared: what changed in step time, and why (by idle cause, kernel type, kernel, op, rank,
//! step and finding), each figure normalised per step (or per ms of GPU window) so runs of different
//! lengths compare.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::attribution::IdleCause;
use super::diagnosis::{diagnose, DiagnosisReport};
use super::findings::FindingId;
use super::gather::{gather, Gathered};
use super::wording::short_name;
use crate::analysis::all::AnalysisOptions;
use crate::analysis::names::is_triton_kernel;
use crate::analysis::steps::profiler_steps;
use crate::table::{EventKind, TraceSet};

crate::stable_enum! {
    /// What every figure of a comparison is divided by.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Basis {
        /// Per profiler step of one rank (both runs have steps): figures in ms per step.
        PerStep,
        /// Per ms of GPU window of one rank (a run without steps): figures in µs per ms.
        PerMsOfWindow,
    }
}

impl Basis {
    /// The unit of the figures, in words.
    pub fn unit(self) -> &'static str {
        match self {
            Basis::PerStep => "ms per step",
            Basis::PerMsOfWindow => "µs per ms of GPU window",
        }
    }
}

/// One run as the comparison sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSide {
    /// The file names (one per rank).
    pub files: Vec<String>,
    pub ranks: usize,
    /// Profiler steps analysed (largest on one rank); 0 without steps.
    pub steps: u64,
    pub device: Option<String>,
    /// Mean step time over ranks, ms (None without steps).
    pub step_ms: Option<f64>,
    /// GPU window summed over ranks, ms.
    pub window_ms: f64,
    /// GPU busy share of the window, percent.
    pub busy_pct: f64,
    /// The units the figures are divided by (steps × ranks, or ms of window).
    pub units: f64,
}

/// One figure in both runs (in the basis's unit) and its change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    pub key: String,
    pub baseline: f64,
    pub candidate: f64,
    /// `candidate - baseline`.
    pub change: f64,
    /// Relative change, percent (None when the baseline is 0).
    pub change_pct: Option<f64>,
}

impl Delta {
    pub fn new(key: &str, baseline: f64, candidate: f64) -> Self {
        Delta {
            key: key.to_string(),
            baseline,
            candidate,
            change: candidate - baseline,
            change_pct: (baseline.abs() > 0.0).then(|| 100.0 * (candidate - baseline) / baseline),
        }
    }
}

crate::stable_enum! {
    /// Whether a named thing is in both runs or only one.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Presence {
        Both,
        Added,
        Removed,
    }
}

/// A kernel or op of one name in both runs: time and calls per unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NamedDelta {
    pub presence: Presence,
    pub time: Delta,
    pub calls: Delta,
}

crate::stable_enum! {
    /// How a finding changed between the runs.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum FindingChangeKind {
        Appeared,
        Disappeared,
        /// Its recoverable time changed by more than a tenth.
        Changed,
        Unchanged,
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FindingChange {
    pub id: FindingId,
    /// The finding's title in words (from the run that has it; the candidate's first).
    #[serde(default)]
    pub title: crate::report::rich_text::RichText,
    pub change: FindingChangeKind,
    /// Recoverable time in the basis's unit (0 when absent).
    pub impact: Delta,
    pub baseline_headline: Option<crate::report::rich_text::RichText>,
    pub candidate_headline: Option<crate::report::rich_text::RichText>,
}

/// Step durations of one run's analysed steps, ms.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepSpread {
    pub count: usize,
    pub mean_ms: f64,
    pub std_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

/// Kernels of compiled code (Triton) that only one run has.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CompiledKernels {
    pub added: usize,
    pub added_time: f64,
    pub removed: usize,
    pub removed_time: f64,
}

/// Everything the page's comparison view and `profile-model diff` show.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub basis: Basis,
    pub baseline: RunSide,
    pub candidate: RunSide,
    /// One sentence: the change in step time (or busy share) and its largest causes.
    pub headline: String,
    /// Step time (per-step basis) or GPU busy time per ms of window.
    pub total: Delta,
    /// The parts of the GPU window (device work by type, idle by cause), which sum to it.
    pub waterfall: Vec<Delta>,
    /// Kernel time by type (computation, communication, memory): sums, not unions.
    pub categories: Vec<Delta>,
    /// Every kernel name, largest absolute change first.
    pub kernels: Vec<(String, NamedDelta)>,
    /// Every CPU op, by name and input shapes where recorded (inclusive time inside the analysed
    /// window), largest absolute change first.
    pub ops: Vec<(String, NamedDelta)>,
    pub compiled_kernels: CompiledKernels,
    /// Per rank (by position): mean step time, or busy time per unit.
    pub ranks: Vec<Delta>,
    pub steps: Option<(StepSpread, StepSpread)>,
    pub findings: Vec<FindingChange>,
    /// Why the figures may not be comparable.
    pub warnings: Vec<String>,
}

/// One run's figures, gathered once.
struct Run<'a> {
    set: &'a TraceSet,
    gathered: Gathered,
    report: DiagnosisReport,
}

impl<'a> Run<'a> {
    fn of(set: &'a TraceSet) -> Self {
        Run {
            set,
            gathered: gather(set),
            report: diagnose(set),
        }
    }

    fn ranks(&self) -> usize {
        self.gathered.inputs.ranks.len().max(1)
    }

    fn steps(&self) -> u64 {
        self.gathered.inputs.steps
    }

    /// Units for `basis`: rank-steps, or ms of window summed over ranks.
    fn units(&self, basis: Basis) -> f64 {
        let u = match basis {
            Basis::PerStep => (self.ranks() as u64 * self.steps()) as f64,
            Basis::PerMsOfWindow => self.gathered.inputs.time.window_ns as f64 / 1e6,
        };
        u.max(f64::MIN_POSITIVE)
    }

    /// `ns` (summed over ranks) in the basis's unit: ms per step, or µs per ms of window.
    fn per_unit(&self, ns: i64, basis: Basis) -> f64 {
        let scale = match basis {
            Basis::PerStep => 1e6,
            Basis::PerMsOfWindow => 1e3,
        };
        ns as f64 / scale / self.units(basis)
    }

    fn step_ms(&self) -> Option<f64> {
        let with: Vec<f64> = self
            .gathered
            .inputs
            .ranks
            .iter()
            .filter(|r| r.steps > 0)
            .map(|r| r.mean_step_ns as f64 / 1e6)
            .collect();
        (!with.is_empty()).then(|| with.iter().sum::<f64>() / with.len() as f64)
    }

    fn side(&self, basis: Basis) -> RunSide {
        let t = &self.gathered.inputs.time;
        RunSide {
            files: self
                .set
                .ranks
                .iter()
                .map(|r| r.table.file.clone())
                .collect(),
            ranks: self.gathered.inputs.ranks.len(),
            steps: self.steps(),
            device: self.gathered.inputs.device_name.clone(),
            step_ms: self.step_ms(),
            window_ms: t.window_ns as f64 / 1e6,
            busy_pct: t.pct(t.busy_ns),
            units: self.units(basis),
        }
    }
}

/// Compares a baseline run with a candidate run.
pub fn compare(baseline: &TraceSet, candidate: &TraceSet) -> Comparison {
    let (b, c) = (Run::of(baseline), Run::of(candidate));
    let basis = if b.steps() > 0 && c.steps() > 0 {
        Basis::PerStep
    } else {
        Basis::PerMsOfWindow
    };
    let kernels = kernel_deltas(&b, &c, basis);
    let compiled_kernels = compiled_kernels(&kernels);
    let waterfall = waterfall(&b, &c, basis);
    let total = total(&b, &c, basis);
    let mut out = Comparison {
        basis,
        baseline: b.side(basis),
        candidate: c.side(basis),
        headline: String::new(),
        total,
        waterfall,
        categories: categories(&b, &c, basis),
        ops: op_deltas(&b, &c, basis),
        compiled_kernels,
        ranks: rank_deltas(&b, &c, basis),
        steps: step_spreads(&b, &c),
        findings: finding_changes(&b, &c, basis),
        warnings: warnings(&b, &c, &kernels),
        kernels,
    };
    out.headline = headline(&out);
    out
}

/// The two runs of one loaded set: the files named in `baseline`, then the others. The ranks are
/// moved, not copied; each side's notes see only its own ranks. When a side would be empty the set
/// comes back whole, with why.
pub fn split_runs(
    mut set: TraceSet,
    baseline: &[String],
) -> Result<(TraceSet, TraceSet), (TraceSet, String)> {
    let in_baseline = |r: &crate::table::RankTrace| baseline.contains(&r.table.file);
    let baseline_count = set.ranks.iter().filter(|r| in_baseline(r)).count();
    let candidate_count = set.ranks.len() - baseline_count;
    if baseline_count == 0 || candidate_count == 0 {
        let why = format!(
            "a comparison needs files on both sides: {baseline_count} baseline and {candidate_count} candidate file(s) are loaded"
        );
        return Err((set, why));
    }
    let (b, c): (Vec<_>, Vec<_>) = std::mem::take(&mut set.ranks)
        .into_iter()
        .partition(in_baseline);
    Ok((run_of(b), run_of(c)))
}

/// One run's ranks as a set of their own, with the notes about its ranks alone.
fn run_of(ranks: Vec<crate::table::RankTrace>) -> TraceSet {
    let ids: Vec<(i64, String)> = ranks
        .iter()
        .map(|r| (r.rank, r.table.file.clone()))
        .collect();
    TraceSet {
        ranks,
        notes: crate::table::set::rank_notes(&ids),
        ..Default::default()
    }
}

fn total(b: &Run, c: &Run, basis: Basis) -> Delta {
    match basis {
        Basis::PerStep => Delta::new(
            "step time",
            b.step_ms().unwrap_or(0.0),
            c.step_ms().unwrap_or(0.0),
        ),
        Basis::PerMsOfWindow => Delta::new(
            "GPU busy",
            b.per_unit(b.gathered.inputs.time.busy_ns, basis),
            c.per_unit(c.gathered.inputs.time.busy_ns, basis),
        ),
    }
}

/// The parts of a run's GPU window: device work by type, then idle time by cause.
fn window_parts(run: &Run) -> Vec<(String, i64)> {
    let t = &run.gathered.inputs.time;
    let other_busy = t.busy_ns - t.compute_ns - t.comm_exposed_ns - t.memory_exposed_ns;
    let mut parts = vec![
        ("computation kernels".to_string(), t.compute_ns),
        (EXPOSED_COMMUNICATION.to_string(), t.comm_exposed_ns),
        ("exposed copies and sets".to_string(), t.memory_exposed_ns),
        ("other device work".to_string(), other_busy.max(0)),
    ];
    parts.extend(
        IdleCause::ALL
            .iter()
            .map(|&cause| (idle_part_name(cause).to_string(), t.idle(cause))),
    );
    parts
}

/// The window's parts in the basis's unit. Per step, each part is its share of the GPU window times
/// the step time, so the parts sum to the step time (the window can be a little shorter or longer
/// than the steps).
fn part_values(run: &Run, basis: Basis) -> Vec<(String, f64)> {
    let window = run.gathered.inputs.time.window_ns.max(1) as f64;
    window_parts(run)
        .into_iter()
        .map(|(key, ns)| {
            let v = match (basis, run.step_ms()) {
                (Basis::PerStep, Some(step)) => step * ns as f64 / window,
                _ => run.per_unit(ns, basis),
            };
            (key, v)
        })
        .collect()
}

/// The waterfall's key of exposed communication (the regression gate watches it).
pub(crate) const EXPOSED_COMMUNICATION: &str = "exposed communication";

/// The keys of [`Comparison::categories`]: computation, communication, memory.
pub(crate) const CATEGORY_KEYS: [&str; 3] = ["computation", "communication", "memory"];

/// An idle cause as a part of the window, in a few words.
pub(crate) fn idle_part_name(cause: IdleCause) -> &'static str {
    match cause {
        IdleCause::GraphCapture => "idle in graph capture",
        IdleCause::Warmup => "idle in warm-up",
        IdleCause::Startup => "idle in one-off start-up",
        IdleCause::DataLoading => "DataLoader wait",
        IdleCause::Synchronization => "synchronisation",
        IdleCause::BlockedWait => "blocked wait (work outside the trace)",
        IdleCause::CommunicationWait => "CPU-side communication wait",
        IdleCause::BetweenSteps => "host work between steps",
        IdleCause::HostCompute => "host compute on CPU tensors",
        IdleCause::DispatchOverhead => "CPU dispatch and launch",
        IdleCause::HostStall => "host stalls",
        IdleCause::DeviceSide => "GPU-side gaps",
        IdleCause::Other => "unexplained idle",
    }
}

fn waterfall(b: &Run, c: &Run, basis: Basis) -> Vec<Delta> {
    part_values(b, basis)
        .iter()
        .zip(part_values(c, basis))
        .map(|((key, x), (_, y))| Delta::new(key, *x, y))
        .filter(|d| d.baseline != 0.0 || d.candidate != 0.0)
        .collect()
}

fn categories(b: &Run, c: &Run, basis: Basis) -> Vec<Delta> {
    let sums = |run: &Run| {
        let i = &run.gathered.inputs;
        let comm = i.communication_kernel_ns();
        let copies: i64 = i.copies.iter().map(|k| k.total_ns).sum();
        [
            (CATEGORY_KEYS[0], i.kernel_time_ns - comm),
            (CATEGORY_KEYS[1], comm),
            (CATEGORY_KEYS[2], copies),
        ]
    };
    sums(b)
        .iter()
        .zip(sums(c))
        .map(|((key, x), (_, y))| Delta::new(key, b.per_unit(*x, basis), c.per_unit(y, basis)))
        .collect()
}

/// Name → (Σ dur ns, calls) of one run, merged with the other into deltas, largest change first.
fn named_deltas(
    b: &Run,
    bm: BTreeMap<String, (i64, u64)>,
    c: &Run,
    cm: BTreeMap<String, (i64, u64)>,
    basis: Basis,
) -> Vec<(String, NamedDelta)> {
    let names = crate::sort::set_of(bm.keys().chain(cm.keys()));
    let calls_per_unit = |run: &Run, n: u64| n as f64 / run.units(basis);
    let mut out: Vec<(String, NamedDelta)> = names
        .into_iter()
        .map(|name| {
            let (x, y) = (bm.get(name), cm.get(name));
            let presence = match (x, y) {
                (Some(_), Some(_)) => Presence::Both,
                (None, _) => Presence::Added,
                (_, None) => Presence::Removed,
            };
            let (xt, xc) = x.copied().unwrap_or((0, 0));
            let (yt, yc) = y.copied().unwrap_or((0, 0));
            let d = NamedDelta {
                presence,
                time: Delta::new(name, b.per_unit(xt, basis), c.per_unit(yt, basis)),
                calls: Delta::new(name, calls_per_unit(b, xc), calls_per_unit(c, yc)),
            };
            (name.clone(), d)
        })
        .collect();
    crate::sort::sort_by(&mut out, |a, b| {
        b.1.time
            .change
            .abs()
            .total_cmp(&a.1.time.change.abs())
            .then_with(|| a.0.cmp(&b.0))
    });
    if out.len() > MAX_NAMED_ROWS {
        let rest = out.split_off(MAX_NAMED_ROWS);
        out.push(merged_names(rest));
    }
    out
}

/// Names listed per table (largest changes); the others are summed in one row (bounded output).
pub const MAX_NAMED_ROWS: usize = 1000;

/// Several names' deltas as one row, "(N other names)".
fn merged_names(rest: Vec<(String, NamedDelta)>) -> (String, NamedDelta) {
    let key = format!("({} other names)", rest.len());
    let sum = |f: fn(&NamedDelta) -> (f64, f64)| {
        rest.iter()
            .map(|(_, d)| f(d))
            .fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
    };
    let (tb, tc) = sum(|d| (d.time.baseline, d.time.candidate));
    let (cb, cc) = sum(|d| (d.calls.baseline, d.calls.candidate));
    let d = NamedDelta {
        presence: Presence::Both,
        time: Delta::new(&key, tb, tc),
        calls: Delta::new(&key, cb, cc),
    };
    (key, d)
}

fn kernel_map(run: &Run) -> BTreeMap<String, (i64, u64)> {
    crate::sort::map_of(
        run.gathered
            .inputs
            .kernels
            .iter()
            .map(|k| (k.name.clone(), (k.total_ns, k.calls))),
    )
}

fn kernel_deltas(b: &Run, c: &Run, basis: Basis) -> Vec<(String, NamedDelta)> {
    named_deltas(b, kernel_map(b), c, kernel_map(c), basis)
}

/// CPU ops by name and, where the trace records them, input shapes (`aten::mm [[64, 128], [128, 256]]`):
/// inclusive time of the ops that start inside the rank's analysed window.
fn op_map(run: &Run) -> BTreeMap<String, (i64, u64)> {
    let mut out: BTreeMap<String, (i64, u64)> = BTreeMap::new();
    for r in &run.set.ranks {
        let window = run
            .gathered
            .context
            .windows
            .iter()
            .find(|w| w.rank == r.rank)
            .map(|w| (w.start_ns, w.end_ns));
        let t = &r.table;
        let dims = t.arg("Input Dims");
        for row in 0..t.len() {
            if t.kind_at(row) != EventKind::CpuOp {
                continue;
            }
            let (Some(ts), Some(dur)) = (t.ts_at(row), t.dur_at(row)) else {
                continue;
            };
            if window.is_some_and(|(s, e)| ts < s || ts >= e) {
                continue;
            }
            let shape = dims
                .and_then(|d| d.find(row).and_then(|i| d.text_at(i)))
                .filter(|s| !s.is_empty() && *s != "[]");
            let key = match shape {
                Some(s) => format!("{} {s}", t.name_at(row)),
                None => t.name_at(row).to_string(),
            };
            let e = out.entry(key).or_default();
            e.0 += dur;
            e.1 += 1;
        }
    }
    out
}

fn op_deltas(b: &Run, c: &Run, basis: Basis) -> Vec<(String, NamedDelta)> {
    named_deltas(b, op_map(b), c, op_map(c), basis)
}

fn compiled_kernels(kernels: &[(String, NamedDelta)]) -> CompiledKernels {
    let mut out = CompiledKernels::default();
    for (name, d) in kernels.iter().filter(|(n, _)| is_triton_kernel(n)) {
        match d.presence {
            Presence::Added => {
                out.added += 1;
                out.added_time += d.time.candidate;
            }
            Presence::Removed => {
                out.removed += 1;
                out.removed_time += d.time.baseline;
            }
            Presence::Both => {}
        }
        let _ = name;
    }
    out
}

fn rank_deltas(b: &Run, c: &Run, basis: Basis) -> Vec<Delta> {
    let value = |run: &Run, i: usize| -> f64 {
        let Some(r) = run.gathered.inputs.ranks.get(i) else {
            return 0.0;
        };
        match basis {
            Basis::PerStep => r.mean_step_ns as f64 / 1e6,
            Basis::PerMsOfWindow => 1e3 * r.time.busy_ns as f64 / (r.time.window_ns.max(1) as f64),
        }
    };
    let n = b
        .gathered
        .inputs
        .ranks
        .len()
        .max(c.gathered.inputs.ranks.len());
    (0..n)
        .map(|i| {
            let label = |run: &Run| run.gathered.inputs.ranks.get(i).map(|r| r.rank.to_string());
            let key = match (label(b), label(c)) {
                (Some(x), Some(y)) if x == y => format!("rank {x}"),
                (x, y) => format!(
                    "rank {} / {}",
                    x.unwrap_or_else(|| "-".into()),
                    y.unwrap_or_else(|| "-".into())
                ),
            };
            Delta::new(&key, value(b, i), value(c, i))
        })
        .collect()
}

fn spread(run: &Run) -> Option<StepSpread> {
    let steps = profiler_steps(run.set, &AnalysisOptions::default());
    let analysed = run.gathered.context.steps;
    let ms: Vec<f64> = steps
        .iter()
        .flat_map(|r| r.steps.iter())
        .filter(|s| analysed.is_none_or(|(lo, hi)| s.step >= lo && s.step <= hi))
        .map(|s| s.duration_us / 1e3)
        .collect();
    if ms.is_empty() {
        return None;
    }
    let n = ms.len() as f64;
    let mean = ms.iter().sum::<f64>() / n;
    let var = ms.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    Some(StepSpread {
        count: ms.len(),
        mean_ms: mean,
        std_ms: var.sqrt(),
        min_ms: ms.iter().copied().fold(f64::INFINITY, f64::min),
        max_ms: ms.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

fn step_spreads(b: &Run, c: &Run) -> Option<(StepSpread, StepSpread)> {
    Some((spread(b)?, spread(c)?))
}

fn finding_changes(b: &Run, c: &Run, basis: Basis) -> Vec<FindingChange> {
    let mut ids: Vec<FindingId> = b
        .report
        .findings
        .iter()
        .chain(&c.report.findings)
        .map(|f| f.id)
        .collect();
    crate::sort::sort(&mut ids);
    ids.dedup();
    let mut out: Vec<FindingChange> = ids
        .into_iter()
        .map(|id| {
            let fb = b.report.findings.iter().find(|f| f.id == id);
            let fc = c.report.findings.iter().find(|f| f.id == id);
            let impact = Delta::new(
                id.as_str(),
                fb.map_or(0.0, |f| b.per_unit(f.impact.time_ns, basis)),
                fc.map_or(0.0, |f| c.per_unit(f.impact.time_ns, basis)),
            );
            let change = match (fb, fc) {
                (None, _) => FindingChangeKind::Appeared,
                (_, None) => FindingChangeKind::Disappeared,
                _ if impact.change.abs()
                    > 0.1 * impact.baseline.abs().max(impact.candidate.abs()) =>
                {
                    FindingChangeKind::Changed
                }
                _ => FindingChangeKind::Unchanged,
            };
            FindingChange {
                id,
                title: fc.or(fb).map(|f| f.title.clone()).unwrap_or_default(),
                change,
                impact,
                baseline_headline: fb.map(|f| f.headline.clone()),
                candidate_headline: fc.map(|f| f.headline.clone()),
            }
        })
        .collect();
    crate::sort::sort_by(&mut out, |x, y| {
        y.impact.change.abs().total_cmp(&x.impact.change.abs())
    });
    out
}

/// Share of the kernel time (both runs) spent in kernel names the two runs have in common.
fn shared_kernel_share(kernels: &[(String, NamedDelta)]) -> f64 {
    let all: f64 = kernels
        .iter()
        .map(|(_, d)| d.time.baseline + d.time.candidate)
        .sum();
    let shared: f64 = kernels
        .iter()
        .filter(|(_, d)| d.presence == Presence::Both)
        .map(|(_, d)| d.time.baseline + d.time.candidate)
        .sum();
    if all > 0.0 {
        shared / all
    } else {
        1.0
    }
}

fn warnings(b: &Run, c: &Run, kernels: &[(String, NamedDelta)]) -> Vec<String> {
    let mut out = Vec::new();
    let (db, dc) = (
        &b.gathered.inputs.device_name,
        &c.gathered.inputs.device_name,
    );
    if let (Some(x), Some(y)) = (db, dc) {
        if x != y {
            out.push(format!("The runs used different devices ({x} vs {y}): kernel times are not comparable one to one."));
        }
    }
    let (rb, rc) = (b.gathered.inputs.ranks.len(), c.gathered.inputs.ranks.len());
    if rb != rc {
        out.push(format!(
            "The runs have different numbers of ranks ({rb} vs {rc}): per-rank figures are compared by position."
        ));
    }
    if (b.steps() > 0) != (c.steps() > 0) {
        out.push("Only one run has profiler steps: both are compared per ms of GPU window.".into());
    }
    let shared = shared_kernel_share(kernels);
    let compiled_swap = kernels
        .iter()
        .any(|(n, d)| is_triton_kernel(n) && d.presence != Presence::Both);
    if shared < 0.3 && !compiled_swap {
        out.push(format!(
            "Only {:.0}% of the kernel time is in kernels both runs have: are these the same model and workload?",
            100.0 * shared
        ));
    }
    for (label, run) in [("baseline", b), ("candidate", c)] {
        if let Some(h) = run.gathered.context.blocking() {
            out.push(format!(
                "The {label} trace holds nothing to compare ({}): {}",
                crate::stable_name::serde_name(&h),
                run.report.main_finding.to_markdown()
            ));
        }
    }
    out
}

/// A change in the basis's unit, with its sign: "−130 ms", "+4.0 ms", "+12 µs/ms".
fn signed(x: f64, basis: Basis) -> String {
    let sign = if x < 0.0 { "−" } else { "+" };
    match basis {
        Basis::PerStep => format!("{sign}{}", ms(x.abs())),
        Basis::PerMsOfWindow => format!("{sign}{:.0} µs/ms", x.abs()),
    }
}

/// Milliseconds with a sensible precision.
fn ms(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0} ms")
    } else if x >= 10.0 {
        format!("{x:.1} ms")
    } else {
        format!("{x:.2} ms")
    }
}

fn headline(c: &Comparison) -> String {
    let t = &c.total;
    let pct = t
        .change_pct
        .map(|p| format!(" ({}{:.0}%)", if p < 0.0 { "−" } else { "+" }, p.abs()))
        .unwrap_or_default();
    let lead = match c.basis {
        Basis::PerStep => format!("Step time {} → {}{pct}", ms(t.baseline), ms(t.candidate)),
        Basis::PerMsOfWindow => format!(
            "GPU busy {:.1}% → {:.1}% of the GPU window",
            c.baseline.busy_pct, c.candidate.busy_pct
        ),
    };
    let mut causes: Vec<String> = largest(&c.waterfall, 2)
        .into_iter()
        .filter(|d| d.change.abs() >= 0.01 * c.total.baseline.abs().max(c.total.candidate.abs()))
        .map(|d| format!("{} {}", d.key, signed(d.change, c.basis)))
        .collect();
    // A kernel is named when its change is at least 1% of the total.
    let notable = 0.01 * c.total.baseline.abs().max(c.total.candidate.abs());
    if let Some((name, d)) = c.kernels.iter().find(|(n, d)| {
        d.presence == Presence::Both && !is_triton_kernel(n) && d.time.change.abs() >= notable
    }) {
        causes.push(format!(
            "`{}` {}",
            short_name(name),
            signed(d.time.change, c.basis)
        ));
    }
    let k = &c.compiled_kernels;
    if k.added > 0 {
        causes.push(format!(
            "new: {} Triton kernels ({})",
            k.added,
            signed(k.added_time, c.basis)
        ));
    }
    if causes.is_empty() {
        format!("{lead}.")
    } else {
        format!("{lead}: {}.", causes.join(", "))
    }
}

/// The `n` deltas with the largest absolute change (non-zero), largest first.
fn largest(deltas: &[Delta], n: usize) -> Vec<&Delta> {
    let mut v: Vec<&Delta> = deltas.iter().filter(|d| d.change.abs() > 1e-9).collect();
    crate::sort::sort_by(&mut v, |a, b| b.change.abs().total_cmp(&a.change.abs()));
    v.truncate(n);
    v
}
