//! The context stage, before any rule: what the trace holds (graph capture, replay, warm-up, steady
//! state, too little, not a PyTorch trace, launches without kernels, a cut file) and the window the
//! diagnosis analyses (the steady-state steps after a warm-up, or the time after it). `facts` reads
//! what the host timeline does not (device, dialect, dropped events, fused ranks, data loss),
//! `completeness` turns them into holds and the report's first lines.

pub mod completeness;
pub mod cpu_run;
mod facts;
pub mod host_only;
pub mod microbench;
pub mod phases;

pub use completeness::{
    data_loss_sentence, device_line, idle_withheld, record_kineto, trace_lines, withheld_findings,
    DeviceContext, RECORD_KINETO,
};
pub use facts::{LossItem, OpTotal, RankDevice, RankFacts, Repeats, UnrecordedWaits};

use serde::{Deserialize, Serialize};

use super::host::HostTimeline;
use crate::analysis::intervals::{intersect, length};
use crate::analysis::step_filter::{check_step_range, in_step_range, step_range_window, StepRange};
use crate::table::{separate_runs_of, RankIdentity, RankTrace, TraceSet, TraceTable};
use crate::trace::diagnostics::DiagnosticKind;

/// One thing the trace holds; several can hold at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceHolds {
    /// Steps (or time) of ordinary work after any warm-up: what the rules diagnose.
    SteadyState,
    /// A warm-up was found and left out of the analysed window.
    Warmup,
    /// Nothing but warm-up.
    WarmupOnly,
    /// Stream captures into CUDA/HIP graphs and no replay: the kernels did not run.
    GraphCapture,
    /// CUDA/HIP graph launches (replays).
    GraphReplay,
    /// torch.compile regions or compilation.
    Compiled,
    /// Too little device work to diagnose.
    Insufficient,
    /// No PyTorch profiler events at all.
    NotPytorch,
    /// Launch calls but no kernel events (the device activities were not recorded).
    NoKernelEvents,
    /// Host events only, no launches: a CPU-only run.
    CpuOnly,
    /// The file was cut off mid-write; what was read is diagnosed.
    Truncated,
    /// The files look like separate runs, not ranks of one job ([`TraceSet::separate_runs`]): they
    /// are diagnosed together, but not compared as ranks (no straggler).
    SeparateRuns,
    /// The analysed window is one cold pass: one-off costs (first calls, module loading, library
    /// set-up) dominate it ([`super::cold`]); the report says to record after warm-up.
    ColdStart,
    /// One file holds several ranks written into it by a merge tool (`args.rank`, `rank N` in
    /// process names): diagnosed as one timeline, said first, idle causes withheld.
    FusedRanks,
    /// Device events without host events (an extract of GPU tracks): no idle cause or overlap is
    /// claimed.
    GpuOnly,
    /// Launch calls whose device operation is absent (by correlation) beyond a small tolerance:
    /// the device timeline has holes, so idle-based findings are withheld.
    EventsDropped,
    /// A PyTorch profiler file with no operation at all (an empty capture).
    Empty,
    /// One operator repeated, or copies only: the report describes the measured figure.
    Microbenchmark,
    /// The file is cut and no device event was read before the cut: nothing says whether the
    /// device worked, so it is never called a CPU-only run.
    DeviceEventsCut,
}

impl TraceHolds {
    /// Whether it leaves nothing for the rules to diagnose.
    pub fn is_blocking(self) -> bool {
        matches!(
            self,
            TraceHolds::WarmupOnly
                | TraceHolds::GraphCapture
                | TraceHolds::Insufficient
                | TraceHolds::NotPytorch
                | TraceHolds::NoKernelEvents
                | TraceHolds::CpuOnly
                | TraceHolds::Empty
                | TraceHolds::DeviceEventsCut
        )
    }
}

/// What produced a file that has no PyTorch profiler events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TraceOrigin {
    PytorchProfiler,
    /// The legacy `torch.autograd.profiler` export (`CPU functions` / `CUDA functions`).
    PytorchLegacy,
    /// A rocprof (ROCm profiler) trace: `HIP` / `HSA` API tracks, no PyTorch operators.
    Rocprof,
    /// A Chrome/Perfetto browser trace (`devtools.timeline`, `blink`, `v8` categories).
    ChromeBrowser,
    /// A TensorFlow or JAX (XLA) profiler trace (`/device:GPU:0`, `/host:CPU` processes).
    TensorflowOrJax,
    /// Some other Chrome-trace JSON.
    OtherChromeTrace,
}

/// The window analysed on one rank, ns on its own clock.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankWindow {
    pub rank: i64,
    pub trace_start_ns: i64,
    pub trace_end_ns: i64,
    pub start_ns: i64,
    pub end_ns: i64,
    /// The warm-up left out (start, end), if any.
    pub warmup_ns: Option<(i64, i64)>,
}

/// What the warm-up consisted of (all ranks), for the report's words.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WarmupSummary {
    pub setup_calls: u64,
    pub search_calls: u64,
    pub compile_events: u64,
    pub compile_ms: f64,
    /// Leading steps left out as warm-up.
    pub steps: Vec<i64>,
}

/// The context stage's result: shown in the report and in `report --json` as `context`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceContext {
    pub holds: Vec<TraceHolds>,
    pub origin: Option<TraceOrigin>,
    /// One line: "Analysed: steps 3-7, 412 ms; warm-up (steps 1-2, 0-4.5 s) left out".
    pub analysed: String,
    /// The analysed ProfilerStep range, when the window is made of steps.
    pub steps: Option<(i64, i64)>,
    /// The steps were chosen (`--steps`, the page's step picker), not the automatic window.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub steps_chosen: bool,
    /// The ProfilerStep numbers every rank has: what a step range can be chosen from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_numbers: Vec<i64>,
    pub windows: Vec<RankWindow>,
    pub warmup: Option<WarmupSummary>,
    pub device_ops: u64,
    pub kernels: u64,
    pub launch_calls: u64,
    pub graph_launches: u64,
    pub capture_calls: u64,
    /// Device operations inside the analysed window (all ranks).
    pub device_ops_in_window: u64,
    /// A warm-up cut not made because it would remove most of the kernel time (the first rank's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_refused: Option<super::gate::CutRefused>,
    /// Why the files look like separate runs ([`TraceHolds::SeparateRuns`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub separate_runs: Option<String>,
    /// The device the trace was recorded on.
    #[serde(default)]
    pub device: DeviceContext,
    /// What was lost while loading, what was read and what the figures still mean: the report's
    /// first line and the page's, when the load lost data ([`data_loss_sentence`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_loss: Option<crate::report::rich_text::RichText>,
    /// Ranks fused into one file ([`TraceHolds::FusedRanks`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fused_ranks: Vec<i64>,
    /// The fused file was split into its ranks ([`crate::table::split::split_fused`]) and is
    /// analysed as a rank set: nothing is withheld for the fusion.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fused_split: bool,
    /// Kernel launch calls with a correlation id (outside captures), and those whose device
    /// operation is absent.
    #[serde(default)]
    pub correlated_launches: u64,
    #[serde(default)]
    pub orphan_launches: u64,
    /// Whether, on every rank with orphan launches, they are the tail of its launches: the trace
    /// ended while the device still had them queued (see `RankFacts::orphans_trail`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub orphans_trail: bool,
    /// Graph launches (replays) with a correlation id, and those no device operation carries.
    #[serde(default)]
    pub graph_correlated: u64,
    #[serde(default)]
    pub graph_orphans: u64,
    /// Of `kernels`, those replayed by graph launches (not launched one by one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replayed_kernels: u64,
    /// What the trace shows already in use (graph replays, compiled code, reduced precision): the
    /// advice no rule repeats ([`super::inputs::InUse`]).
    #[serde(default, skip_serializing_if = "super::inputs::InUse::is_empty")]
    pub in_use: super::inputs::InUse,
    /// Host waits that outlast the device operations recorded before them (all ranks).
    #[serde(default)]
    pub unrecorded: UnrecordedWaits,
    /// What the device work repeats, for a micro-benchmark ([`TraceHolds::Microbenchmark`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
    /// The CPU operators with most time, for a legacy export the report can only summarise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top_ops: Vec<OpTotal>,
    /// What a file that is not a PyTorch trace holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<crate::report::rich_text::RichText>,
    /// A trace without device work: its host, summarised (the rank with the longest span).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_only: Option<host_only::HostOnly>,
    /// The named phases of a script compared one after another ([`phases`]), for a
    /// micro-benchmark of variants ([`TraceHolds::Microbenchmark`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<phases::Phase>,
    /// Training or inference, from the host's operators and the kernels of every rank
    /// ([`facts::RunSignals::kind`]): the advice that fits the run (no DDP buckets for serving).
    #[serde(default)]
    pub run: crate::analysis::names::RunKind,
}

impl TraceContext {
    pub fn holds(&self, h: TraceHolds) -> bool {
        self.holds.contains(&h)
    }

    /// The run was recorded on a Mac ([`cpu_run::apple_hints`]): advice without CUDA.
    pub fn apple(&self) -> bool {
        self.host_only
            .as_ref()
            .and_then(|h| h.cpu.as_ref())
            .is_some_and(|c| c.apple)
    }

    /// The first thing held that leaves nothing to diagnose.
    pub fn blocking(&self) -> Option<TraceHolds> {
        self.holds.iter().copied().find(|h| h.is_blocking())
    }

    /// The analysed time window to give the analyses when it is not the whole trace and not steps.
    pub fn time_window(&self) -> Option<(i64, i64)> {
        if self.steps.is_some() {
            return None;
        }
        let cut: Vec<&RankWindow> = self
            .windows
            .iter()
            .filter(|w| w.warmup_ns.is_some())
            .collect();
        (!cut.is_empty()).then(|| {
            (
                cut.iter().map(|w| w.start_ns).min().unwrap_or(i64::MIN),
                i64::MAX,
            )
        })
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A leading step is warm-up when warm-up calls take this share of it...
const WARMUP_STEP_MARK_SHARE: f64 = 0.25;
/// ... or it lasts this many times the median of the steps after it.
const WARMUP_STEP_SLOWER: f64 = 2.5;
/// Without steps, a prefix of the trace is warm-up when warm-up calls fill this share of it...
const WARMUP_PREFIX_DENSITY: f64 = 0.3;
/// ... and it is at least this share of the trace.
const WARMUP_PREFIX_MIN_SHARE: f64 = 0.1;
pub use super::gate::{MIN_DEVICE_OPS, MIN_WINDOW_NS};

/// How one rank's window was chosen.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankChoice {
    /// First steady step and the last step, when the rank has steps.
    pub steps: Option<(i64, i64)>,
    pub warmup_steps: Vec<i64>,
    pub window: (i64, i64),
    pub warmup: Option<(i64, i64)>,
    pub warmup_only: bool,
    /// A warm-up cut not made because it would remove most of the kernel time ([`super::gate`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_refused: Option<super::gate::CutRefused>,
}

/// The warm-up calls of one rank the report counts (set-up calls only when allocations do not recur).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WarmupCalls {
    pub setup_calls: u64,
    pub search_calls: u64,
    pub compile_events: u64,
    pub compile_ns: i64,
}

/// Everything the context stage reads of one rank ([`context_of`] reduces them): its host
/// timeline's counts, flags and window choice, and its identity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankContextPart {
    pub identity: RankIdentity,
    pub device_ops: u64,
    pub kernels: u64,
    pub launch_calls: u64,
    pub graph_launches: u64,
    pub capture_calls: u64,
    pub host_events: u64,
    /// torch.compile regions or compilation events.
    pub compiled: bool,
    /// The file was cut off mid-write.
    pub cut: bool,
    /// What produced the file, when it holds no PyTorch profiler event (else `None`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<TraceOrigin>,
    pub choice: RankChoice,
    /// First and last timestamp of any timed event.
    pub span: Option<(i64, i64)>,
    pub warmup: WarmupCalls,
    /// What the host timeline does not say ([`RankFacts`]).
    pub facts: RankFacts,
    /// The rank's ProfilerStep numbers, sorted, each once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub step_numbers: Vec<i64>,
    /// The window is the steps the user chose ([`rank_context_part_in`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub chosen: bool,
}

/// What the context stage reads of one rank, from its host timeline.
pub fn rank_context_part(rank: &RankTrace, h: &HostTimeline) -> RankContextPart {
    rank_context_part_in(rank, h, None)
}

/// [`rank_context_part`] with the steps chosen (`steps`), not the automatic window: the window is
/// exactly the rank's steps in that range ([`chosen_steps`]).
pub fn rank_context_part_in(
    rank: &RankTrace,
    h: &HostTimeline,
    steps: Option<StepRange>,
) -> RankContextPart {
    let empty = h.host_events == 0 && h.device_ops == 0;
    let choice = match steps {
        Some(range) => chosen_steps(h, range),
        None => super::gate::guard(choose_window(h), h),
    };
    let mut step_numbers: Vec<i64> = h.steps.iter().map(|s| s.0).collect();
    crate::sort::sort(&mut step_numbers);
    step_numbers.dedup();
    RankContextPart {
        identity: rank.identity(),
        device_ops: h.device_ops,
        kernels: h.kernels,
        launch_calls: h.launch_calls,
        graph_launches: h.graph_launches,
        capture_calls: h.capture_calls,
        host_events: h.host_events,
        compiled: h.compiled_regions > 0 || h.warmup.compile_events > 0,
        cut: is_cut(&rank.table),
        origin: empty.then(|| origin(&rank.table)),
        choice,
        span: h.span,
        warmup: WarmupCalls {
            setup_calls: if h.alloc_recurs {
                0
            } else {
                h.warmup.setup_calls
            },
            search_calls: h.warmup.search_calls,
            compile_events: h.warmup.compile_events,
            compile_ns: h.warmup.compile_ns,
        },
        facts: RankFacts::of(&rank.table, h),
        step_numbers,
        chosen: steps.is_some(),
    }
}

/// Whether every rank of `parts` has a step in `range` ([`check_step_range`]), before a report is
/// made over it.
pub fn check_chosen_steps(parts: &[RankContextPart], range: StepRange) -> Result<(), String> {
    let ranks: Vec<(i64, Vec<i64>)> = parts
        .iter()
        .map(|p| (p.identity.rank, p.step_numbers.clone()))
        .collect();
    check_step_range(range, &ranks)
}

/// The context of a set of ranks, from each rank's host timeline (`hosts` in set order).
pub fn detect(set: &TraceSet, hosts: &[HostTimeline]) -> TraceContext {
    let parts: Vec<RankContextPart> = set
        .ranks
        .iter()
        .zip(hosts)
        .map(|(r, h)| rank_context_part(r, h))
        .collect();
    context_of(&parts)
}

/// The context of a set of ranks from their parts, in any order (they are put in set order: by
/// rank, then load order).
pub fn context_of(parts: &[RankContextPart]) -> TraceContext {
    let mut parts: Vec<&RankContextPart> = parts.iter().collect();
    crate::sort::sort_by_key(&mut parts, |p| (p.identity.rank, p.identity.load_order));
    let mut c = TraceContext::default();
    for h in &parts {
        c.device_ops += h.device_ops;
        c.kernels += h.kernels;
        c.launch_calls += h.launch_calls;
        c.graph_launches += h.graph_launches;
        c.capture_calls += h.capture_calls;
    }
    let host_events: u64 = parts.iter().map(|h| h.host_events).sum();
    let mut holds = Vec::new();
    completeness::before_replay(&parts, &mut c, &mut holds, host_events);
    if c.graph_launches > 0 {
        holds.push(TraceHolds::GraphReplay);
    }
    if parts.iter().any(|h| h.compiled) {
        holds.push(TraceHolds::Compiled);
    }
    if parts.iter().any(|p| p.cut) {
        holds.push(TraceHolds::Truncated);
    }
    completeness::after_replay(&parts, &mut c, &mut holds);
    let identities: Vec<RankIdentity> = parts.iter().map(|p| p.identity.clone()).collect();
    if let Some(why) = separate_runs_of(&identities) {
        holds.push(TraceHolds::SeparateRuns);
        c.separate_runs = Some(why);
    }
    let choices: Vec<RankChoice> = parts.iter().map(|p| p.choice.clone()).collect();
    c.steps = common_steps(&choices);
    c.steps_chosen = parts.iter().any(|p| p.chosen);
    c.step_numbers = steps_of_every_rank(&parts);
    let mut warm = WarmupSummary::default();
    for (ch, h) in choices.iter().zip(&parts) {
        let (lo, hi) = h.span.unwrap_or((0, 0));
        c.windows.push(RankWindow {
            rank: h.identity.rank,
            trace_start_ns: lo,
            trace_end_ns: hi,
            start_ns: ch.window.0,
            end_ns: ch.window.1,
            warmup_ns: ch.warmup,
        });
        if c.cut_refused.is_none() {
            c.cut_refused = ch.cut_refused.clone();
        }
        if ch.warmup.is_some() || ch.warmup_only {
            warm.setup_calls += h.warmup.setup_calls;
            warm.search_calls += h.warmup.search_calls;
            warm.compile_events += h.warmup.compile_events;
            warm.compile_ms += h.warmup.compile_ns as f64 / 1e6;
        }
        for s in &ch.warmup_steps {
            if !warm.steps.contains(s) {
                warm.steps.push(*s);
            }
        }
    }
    crate::sort::sort(&mut warm.steps);
    let device_blocked = holds.iter().any(|h| h.is_blocking());
    if !device_blocked && !choices.is_empty() && choices.iter().all(|ch| ch.warmup_only) {
        holds.push(TraceHolds::WarmupOnly);
    } else if choices.iter().any(|ch| ch.warmup.is_some()) {
        holds.push(TraceHolds::Warmup);
    }
    if holds.contains(&TraceHolds::Warmup) || holds.contains(&TraceHolds::WarmupOnly) {
        c.warmup = Some(warm);
    }
    c.holds = holds;
    c.run = parts
        .iter()
        .fold(facts::RunSignals::default(), |a, p| a.merged(&p.facts.run))
        .kind();
    c
}

/// After the analysed window is known: too little device work in it ([`super::gate::too_little`])
/// makes the trace insufficient.
pub fn check_sufficient(c: &mut TraceContext, w: super::gate::WindowWork) {
    c.device_ops_in_window = w.device_ops;
    if c.blocking().is_some() {
        return;
    }
    if super::gate::too_little(w) {
        c.holds.push(TraceHolds::Insufficient);
    } else {
        c.holds.insert(0, TraceHolds::SteadyState);
    }
}

/// The file was cut off mid-write.
fn is_cut(t: &TraceTable) -> bool {
    t.diagnostics.count(DiagnosticKind::TruncatedTail) > 0
        || t.diagnostics.count(DiagnosticKind::MissingClosingBrackets) > 0
}

/// What a file without PyTorch profiler events looks like, from its categories and process names.
fn origin(t: &TraceTable) -> TraceOrigin {
    let cats = t.category_dictionary();
    let browser = (0..cats.len()).any(|i| {
        let c = cats.value(i);
        [
            "devtools",
            "blink",
            "v8",
            "toplevel",
            "disabled-by-default",
            "benchmark",
            "renderer",
        ]
        .iter()
        .any(|m| c.contains(m))
    });
    if browser {
        return TraceOrigin::ChromeBrowser;
    }
    let rocprof = t.metadata.process_names.values().any(|n| {
        let n = n.trim();
        n.starts_with("HIP") || n.starts_with("HSA") || n.contains("rocprof") || n.contains("roctx")
    }) || (0..cats.len()).any(|i| {
        let c = cats.value(i).to_ascii_lowercase();
        c.contains("hip_api") || c.contains("hsa_api") || c.contains("kernel_dispatch")
    });
    if rocprof {
        return TraceOrigin::Rocprof;
    }
    let xla = t.metadata.process_names.values().any(|n| {
        n.contains("/device:") || n.contains("/host:") || n.contains("TPU") || n.contains("XLA")
    });
    if xla {
        TraceOrigin::TensorflowOrJax
    } else {
        TraceOrigin::OtherChromeTrace
    }
}

/// The step numbers every rank has.
fn steps_of_every_rank(parts: &[&RankContextPart]) -> Vec<i64> {
    let Some((first, rest)) = parts.split_first() else {
        return Vec::new();
    };
    let mut steps = first.step_numbers.clone();
    for p in rest {
        steps.retain(|s| p.step_numbers.binary_search(s).is_ok());
    }
    steps
}

/// One rank's window when the steps were chosen: exactly its steps in `range`, nothing left out as
/// warm-up and no cut refused (the user asked for these steps). A rank without a step in it keeps
/// its whole span ([`check_chosen_steps`] says so before a report is made).
fn chosen_steps(h: &HostTimeline, range: StepRange) -> RankChoice {
    let whole = h.span.unwrap_or((0, 0));
    let inside: Vec<i64> = h
        .steps
        .iter()
        .map(|s| s.0)
        .filter(|&s| in_step_range(s, range))
        .collect();
    match step_range_window(h.steps.iter().copied(), range) {
        Some(window) => RankChoice {
            steps: Some((
                inside.iter().copied().min().unwrap_or(range.0),
                inside.iter().copied().max().unwrap_or(range.1),
            )),
            window,
            ..Default::default()
        },
        None => RankChoice {
            window: whole,
            ..Default::default()
        },
    }
}

/// The steps every rank analyses: the latest first steady step, the earliest last step.
fn common_steps(choices: &[RankChoice]) -> Option<(i64, i64)> {
    let steps: Vec<(i64, i64)> = choices.iter().filter_map(|c| c.steps).collect();
    if steps.is_empty() || steps.len() != choices.len() {
        return None;
    }
    let first = steps.iter().map(|s| s.0).max()?;
    let last = steps.iter().map(|s| s.1).min()?;
    (first <= last).then_some((first, last))
}

/// One rank's analysed window: its steps after leading warm-up steps, or the time after a warm-up
/// prefix when it has no steps.
fn choose_window(h: &HostTimeline) -> RankChoice {
    let (lo, hi) = h.span.unwrap_or((0, 0));
    let mut marks = h.warmup_marks.clone();
    if h.graph_launches > 0 {
        // Captures before replays are set-up work.
        marks = crate::analysis::intervals::union(
            marks
                .into_iter()
                .chain(h.captures.iter().copied())
                .collect(),
        );
    }
    if h.steps.is_empty() {
        return replays_after_capture(h, prefix_window(&marks, lo, hi));
    }
    let durations: Vec<i64> = h.steps.iter().map(|&(_, s, e)| e - s).collect();
    let is_warm = |i: usize| {
        let (_, s, e) = h.steps[i];
        let marked = length(&intersect(&marks, &[(s, e)])) as f64;
        if marked >= WARMUP_STEP_MARK_SHARE * (e - s) as f64 {
            return true;
        }
        let mut later: Vec<i64> = durations[i + 1..].to_vec();
        if later.is_empty() {
            return false;
        }
        crate::sort::sort(&mut later);
        let median = later[later.len() / 2];
        median > 0 && (e - s) as f64 >= WARMUP_STEP_SLOWER * median as f64
    };
    let n = h.steps.len();
    let warm = (0..n).take_while(|&i| is_warm(i)).count();
    let last_step = h.steps.iter().map(|s| s.0).max().unwrap_or(0);
    if warm == n {
        return RankChoice {
            steps: None,
            warmup_steps: h.steps.iter().map(|s| s.0).collect(),
            window: (lo, hi),
            warmup: Some((lo, hi)),
            warmup_only: true,
            cut_refused: None,
        };
    }
    let first = &h.steps[warm];
    let end = h.steps.iter().map(|s| s.2).max().unwrap_or(hi);
    let warmup = (warm > 0).then_some((lo, first.1));
    RankChoice {
        steps: Some((first.0, last_step)),
        warmup_steps: h.steps[..warm].iter().map(|s| s.0).collect(),
        window: (first.1, end),
        warmup,
        warmup_only: false,
        cut_refused: None,
    }
}

/// Fewest kernels after the last graph capture for its replays to be a steady state.
pub const MIN_REPLAY_KERNELS: usize = 5;

/// A warm-up-only verdict undone by graph replays: the kernels run after the last capture ends are
/// the replays the capture was made for, a steady state, so the window is the time after the
/// capture (the set-up and capture before it left out as warm-up).
fn replays_after_capture(h: &HostTimeline, choice: RankChoice) -> RankChoice {
    let Some(&(_, capture_end)) = h.captures.last() else {
        return choice;
    };
    let replayed = h.kernel_spans.iter().filter(|k| k.0 >= capture_end).count();
    if !choice.warmup_only || h.graph_launches == 0 || replayed < MIN_REPLAY_KERNELS {
        return choice;
    }
    let (lo, hi) = h.span.unwrap_or((0, 0));
    RankChoice {
        window: (capture_end, hi),
        warmup: Some((lo, capture_end)),
        warmup_only: false,
        ..choice
    }
}

/// Without steps: the longest prefix of the trace that warm-up calls fill densely (measured from the
/// first call, as a trace may begin with idle time) is warm-up.
fn prefix_window(marks: &[(i64, i64)], lo: i64, hi: i64) -> RankChoice {
    let whole = RankChoice {
        window: (lo, hi),
        ..Default::default()
    };
    let Some(first) = marks.first().map(|m| m.0) else {
        return whole;
    };
    let mut covered = 0;
    let mut prefix_end = None;
    for &(s, e) in marks {
        covered += e - s;
        if covered as f64 >= WARMUP_PREFIX_DENSITY * (e - first).max(1) as f64 {
            prefix_end = Some(e);
        }
    }
    let Some(end) = prefix_end else {
        return whole;
    };
    let span = (hi - lo).max(1);
    let active = (hi - first).max(1);
    if ((end - first) as f64) < WARMUP_PREFIX_MIN_SHARE * active as f64 {
        return whole;
    }
    if (end - lo) as f64 >= 0.9 * span as f64 {
        let only = length(marks) as f64 >= WARMUP_PREFIX_DENSITY * active as f64;
        return RankChoice {
            warmup_only: only,
            warmup: only.then_some((lo, hi)),
            ..whole
        };
    }
    RankChoice {
        window: (end, hi),
        warmup: Some((lo, end)),
        ..whole
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(steps: &[(i64, i64, i64)], marks: &[(i64, i64)]) -> HostTimeline {
        HostTimeline {
            steps: steps.to_vec(),
            warmup_marks: marks.to_vec(),
            span: Some((0, steps.last().map_or(1000, |s| s.2))),
            ..Default::default()
        }
    }

    #[test]
    fn slow_leading_steps_are_warmup() {
        // Step 1 takes 500, the others 100: step 1 is warm-up.
        let h = host(
            &[(1, 0, 500), (2, 500, 600), (3, 600, 700), (4, 700, 800)],
            &[],
        );
        let c = choose_window(&h);
        assert_eq!(c.steps, Some((2, 4)));
        assert_eq!(c.warmup_steps, vec![1]);
        assert_eq!(c.window, (500, 800));
    }

    #[test]
    fn a_step_full_of_warmup_calls_is_warmup_even_when_not_slow() {
        let h = host(&[(1, 0, 100), (2, 100, 200), (3, 200, 300)], &[(10, 60)]);
        assert_eq!(choose_window(&h).warmup_steps, vec![1]);
        let steady = host(&[(1, 0, 100), (2, 100, 200), (3, 200, 300)], &[(10, 15)]);
        assert!(choose_window(&steady).warmup_steps.is_empty());
    }

    #[test]
    fn all_warmup_steps_leave_nothing() {
        let h = host(&[(1, 0, 100), (2, 100, 200)], &[(0, 200)]);
        assert!(choose_window(&h).warmup_only);
    }

    #[test]
    fn a_dense_warmup_prefix_is_left_out_without_steps() {
        // Calls fill 0-400 of a 0-1000 trace; the rest is work.
        let c = prefix_window(&[(0, 150), (160, 300), (310, 400)], 0, 1000);
        assert_eq!(c.window, (400, 1000));
        assert_eq!(c.warmup, Some((0, 400)));
        // Scattered calls are not a warm-up.
        let c = prefix_window(&[(100, 110), (500, 510), (900, 910)], 0, 1000);
        assert_eq!(c.warmup, None);
    }
}
