//! What the context stage reads of one rank's table beyond its host timeline, in one pass: the
//! device, the dialect (a legacy `torch.autograd.profiler` export, Kineto's own marks), launches
//! whose device operation is absent by correlation, ranks fused into one file, the data lost while
//! loading, and what device work repeats (for micro-benchmarks).

use crate::report::rich_text::{code, name, NameKind, RichText};
use crate::rich;
use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::super::host::HostTimeline;
use crate::analysis::intervals::covered;
use crate::analysis::names::{
    is_copy_or_fill_call, is_training_kernel, run_signal, NameClass, NameClasses, RunKind,
    RunSignal,
};
use crate::table::{EventKind, TraceTable};
use crate::trace::dialect::{
    device_kind_of_device_name, device_kind_of_runtime, process_role, DeviceKind, ProcessRole,
};
use crate::trace::{DiagnosticKind, Severity};

/// The device of one rank, as its trace says.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankDevice {
    pub kind: DeviceKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Devices the device operations ran on (distinct `args.device`, at least one when there are
    /// any), else the entries of `deviceProperties`.
    pub count: u64,
}

/// One kind of data lost while loading, counted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LossItem {
    pub count: u64,
    /// What the loader says of it, in plain words.
    pub what: String,
}

/// Device work by name over the whole trace: what a micro-benchmark repeats.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Repeats {
    pub kernels: u64,
    pub copies: u64,
    pub kernel_ns: i64,
    pub distinct_kernels: u64,
    /// The kernel with the most time, its calls and time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_kernel: Option<(String, u64, i64)>,
    /// Distinct names of the CPU operators that launch the repeated work (the top kernel, or the
    /// copies when there is no kernel), joined by `External id`, capped at a few.
    pub launching_ops: Vec<String>,
    /// The repeated device operations joined to a CPU operator that way.
    pub linked: u64,
    /// Σ duration of the copies, and of every device operation, ns: a copy benchmark's copies
    /// are most of its device time.
    #[serde(default)]
    pub copy_ns: i64,
    #[serde(default)]
    pub device_ns: i64,
    /// The trace's span (first to last timed event), ns: what a copy benchmark's copies fill.
    #[serde(default)]
    pub span_ns: i64,
}

/// A CPU operator's calls and total time, for a trace the report can only summarise.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpTotal {
    pub name: String,
    pub calls: u64,
    pub total_ns: i64,
    /// Time in the operator itself, not in the operators it calls (exclusive time), ns.
    #[serde(default)]
    pub self_ns: i64,
    /// The outermost `aten::` operator around most of that self time (`aten::dropout` for
    /// `aten::bernoulli_`), when it is another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub called_in: Option<String>,
    /// The union of its self time over the threads that run it, ns: what its share of the window
    /// is of (never more than the window, however many threads run it at once).
    #[serde(default)]
    pub wall_ns: i64,
    /// Threads it runs on.
    #[serde(default)]
    pub threads: u64,
}

/// The facts of one rank (serde: they travel with its context part).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankFacts {
    pub device: RankDevice,
    /// A legacy `torch.autograd.profiler` export (`CPU functions` process, no Kineto marks).
    pub legacy: bool,
    /// Something only the PyTorch profiler writes: `schemaVersion`, `deviceProperties`,
    /// `distributedInfo`, `traceName`, `baseTimeNanoseconds`, a profiler span or a ProfilerStep.
    pub kineto_marks: bool,
    /// CPU operators, runtime and driver calls, Python functions: the host's operations.
    pub ops: u64,
    /// CPU operators (profiler steps apart) and Python functions: the model's host work.
    pub cpu_ops: u64,
    /// CPU operators alone (profiler steps apart): without one, Python frames around the
    /// profiler's start and stop ran no PyTorch work.
    #[serde(default)]
    pub operators: u64,
    /// Timed events of no kind this tool knows (another tool's categories).
    pub foreign_events: u64,
    /// Kernel launch calls with a correlation id, outside stream captures.
    pub correlated_launches: u64,
    /// Of those, the ones whose device operation is absent.
    pub orphan_launches: u64,
    /// Whether every orphan launch came after the last launch whose device operation was recorded,
    /// and the recorded device work still had at least [`QUEUED_AT_STOP_NS`] to run when the first
    /// of them was launched: the trace ends with work queued behind a busy device (the profiler
    /// stopped while the device was behind), not records lost to a full buffer.
    #[serde(default)]
    pub orphans_trail: bool,
    /// Graph launches (replays) with a correlation id, outside stream captures, and those that no
    /// device operation carries (their replayed kernels were not recorded).
    pub graph_correlated: u64,
    pub graph_orphans: u64,
    /// Kernels a graph launch replayed (sharing its correlation): run from a captured graph, not
    /// launched one by one.
    pub replayed_kernels: u64,
    /// Host waits for the device ([`NameClass::WAITS_FOR_DEVICE`], after the first recorded device
    /// operation) that outlast every device operation recorded before they return: how many, and
    /// the time past that last operation, ns ([`unrecorded_tails`]).
    pub unrecorded: UnrecordedWaits,
    /// First start to last end of the recorded device operations, ns.
    pub device_window_ns: i64,
    /// Ranks named inside the one file (`args.rank`, `rank N` in process names or pids), when
    /// more than one.
    pub fused_ranks: Vec<i64>,
    /// The file's ranks when this rank was split from one fused file
    /// ([`crate::table::split::split_fused`]): the set is then analysed as the rank set it is.
    pub fused_split: Vec<i64>,
    pub data_loss: Vec<LossItem>,
    pub events_read: u64,
    pub text_bytes: u64,
    pub repeats: Repeats,
    /// The CPU operators with most time (traces without device work only).
    pub top_ops: Vec<OpTotal>,
    /// What the file holds when it is not a PyTorch trace: its main categories and processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub found: Option<RichText>,
    /// Traces without device work: the host's span, ns, and what it does (see
    /// [`super::host_only::HostOnly`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_only: Option<super::host_only::HostOnly>,
    /// The named phases of a script without steps ([`super::phases`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<super::phases::Phase>,
    /// What the host's operators and the kernels say of the run: training or inference.
    #[serde(default)]
    pub run: RunSignals,
}

/// Host operators, Python frames and kernels by what they say of the run ([`run_signal`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSignals {
    /// Backward or optimizer operators, and backward or optimizer kernels.
    pub training: u64,
    /// A serving engine's frames or operators.
    pub serving: u64,
    /// `no_grad` / `inference_mode`.
    pub no_grad: u64,
    /// `aten::` operators read: operator recording was on, so backward would show.
    pub host_ops: u64,
}

impl RunSignals {
    /// Adds one name seen `n` times.
    fn add(&mut self, name: &str, n: u64) {
        match run_signal(name) {
            Some(RunSignal::Training) => self.training += n,
            Some(RunSignal::Serving) => self.serving += n,
            Some(RunSignal::NoGrad) => self.no_grad += n,
            None => {}
        }
    }

    /// The sum of two ranks' signals.
    pub fn merged(&self, o: &RunSignals) -> RunSignals {
        RunSignals {
            training: self.training + o.training,
            serving: self.serving + o.serving,
            no_grad: self.no_grad + o.no_grad,
            host_ops: self.host_ops + o.host_ops,
        }
    }

    /// Training when anything trains; inference when a serving engine or `no_grad` shows, or
    /// when `aten::` operators were recorded and none is backward or an optimizer's (forward
    /// only); unknown without them (a GPU-only extract, a trace of annotations and launches).
    pub fn kind(&self) -> RunKind {
        if self.training > 0 {
            RunKind::Training
        } else if self.serving > 0 || self.no_grad > 0 || self.host_ops > 0 {
            RunKind::Inference
        } else {
            RunKind::Unknown
        }
    }
}

/// Host waits for the device that return long after the last device operation recorded before
/// them: the device worked on operations the profiler did not record ([`unrecorded_tails`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct UnrecordedWaits {
    /// Waits whose tail is at least [`UNRECORDED_MIN_TAIL_NS`].
    pub waits: u64,
    /// Their tails past the last recorded device operation, summed, ns.
    pub tail_ns: i64,
    /// Of that, the tails of waits that return after every recorded device operation, ns.
    pub end_tail_ns: i64,
    /// The wait with the longest tail: its call and tail, ns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest: Option<(String, i64)>,
}

/// A wait's tail counts from this long (1 ms): shorter ones are the host's own latency.
pub const UNRECORDED_MIN_TAIL_NS: i64 = 1_000_000;

/// The tails of the host waits `waits` (start, end, name) past the last device operation
/// (`device`: merged, sorted) that ends before the wait returns. A wait that starts before any
/// recorded device operation is left out: it may wait for work launched before the trace began.
pub fn unrecorded_tails(device: &[(i64, i64)], waits: &[(i64, i64, String)]) -> UnrecordedWaits {
    let mut out = UnrecordedWaits::default();
    let (Some(first), Some(last)) = (device.first(), device.last()) else {
        return out;
    };
    for (s, e, name) in waits {
        if *s < first.0 {
            continue;
        }
        let before = device.partition_point(|iv| iv.0 <= *e);
        let Some(iv) = before.checked_sub(1).map(|i| device[i]) else {
            continue;
        };
        let tail = e - iv.1.max(*s);
        if tail < UNRECORDED_MIN_TAIL_NS {
            continue;
        }
        out.waits += 1;
        out.tail_ns += tail;
        if iv == *last {
            out.end_tail_ns += tail;
        }
        if out.longest.as_ref().is_none_or(|l| tail > l.1) {
            out.longest = Some((name.clone(), tail));
        }
    }
    out
}

/// How many launching operator names a micro-benchmark check keeps.
const LAUNCHING_NAMES: usize = 4;

impl RankFacts {
    /// Reads the facts of `t` (`h` its host timeline).
    pub fn of(t: &TraceTable, h: &HostTimeline) -> RankFacts {
        let classes = NameClasses::of(t);
        let mut f = RankFacts {
            events_read: t.len() as u64,
            text_bytes: t.metadata.text_bytes,
            ..Default::default()
        };
        let mut device_correlations: BTreeSet<i64> = BTreeSet::new();
        let mut launches: Vec<(i64, i64)> = Vec::new();
        let mut graph_launches: Vec<(i64, i64)> = Vec::new();
        let mut device_spans: Vec<(i64, i64)> = Vec::new();
        let mut waits: Vec<(i64, i64, String)> = Vec::new();
        let mut devices: BTreeSet<i64> = BTreeSet::new();
        let mut runtime_names: BTreeSet<u32> = BTreeSet::new();
        let mut kernel_names: BTreeMap<u32, (u64, i64)> = BTreeMap::new();
        let mut host_names: BTreeMap<u32, u64> = BTreeMap::new();
        let mut trace_span = false;
        let mut kernel_correlations: Vec<i64> = Vec::new();
        for row in 0..t.len() {
            let kind = t.kind_at(row);
            if kind.is_gpu_activity() {
                if let Some(c) = t.correlation_at(row) {
                    device_correlations.insert(c);
                }
                if let Some(d) = t.device_at(row) {
                    devices.insert(d);
                }
                if let Some(ts) = t.ts_at(row) {
                    device_spans.push((ts, ts + t.dur_at(row).unwrap_or(0).max(0)));
                }
                let d = t.dur_at(row).unwrap_or(0).max(0);
                f.repeats.device_ns += d;
                if kind == EventKind::Memcpy {
                    f.repeats.copy_ns += d;
                }
                if kind == EventKind::Kernel {
                    f.repeats.kernels += 1;
                    kernel_correlations.extend(t.correlation_at(row));
                    let e = kernel_names.entry(t.name_id(row)).or_default();
                    e.0 += 1;
                    e.1 += t.dur_at(row).unwrap_or(0);
                } else if kind == EventKind::Memcpy {
                    f.repeats.copies += 1;
                }
                continue;
            }
            match kind {
                EventKind::Trace => trace_span = true,
                EventKind::Runtime | EventKind::Driver => {
                    f.ops += 1;
                    runtime_names.insert(t.name_id(row));
                    let class = classes.of_row(t, row);
                    // Kernel launches only: a zero-byte copy or fill has no device event to lose.
                    if class.has(NameClass::LAUNCH) && !is_copy_or_fill_call(t.name_at(row)) {
                        if let (Some(c), Some(ts)) = (t.correlation_at(row), t.ts_at(row)) {
                            launches.push((c, ts));
                        }
                    }
                    if class.has(NameClass::GRAPH_LAUNCH) {
                        if let (Some(c), Some(ts)) = (t.correlation_at(row), t.ts_at(row)) {
                            graph_launches.push((c, ts));
                        }
                    }
                    if class.has(NameClass::WAITS_FOR_DEVICE) {
                        if let Some(ts) = t.ts_at(row) {
                            let end = ts + t.dur_at(row).unwrap_or(0).max(0);
                            waits.push((ts, end, t.name_at(row).to_string()));
                        }
                    }
                }
                EventKind::CpuOp => {
                    f.ops += 1;
                    let class = classes.of_row(t, row);
                    if class.has(NameClass::PROFILER_STEP) {
                        continue;
                    }
                    f.cpu_ops += 1;
                    f.operators += 1;
                    *host_names.entry(t.name_id(row)).or_default() += 1;
                }
                EventKind::PythonFunction => {
                    f.ops += 1;
                    f.cpu_ops += 1;
                    *host_names.entry(t.name_id(row)).or_default() += 1;
                }
                EventKind::Other => f.foreign_events += u64::from(t.ts_at(row).is_some()),
                _ => {}
            }
        }
        f.device = rank_device(t, &runtime_names, &devices, h.device_ops);
        f.kineto_marks = kineto_marks(t) || trace_span || !h.steps.is_empty();
        f.legacy = is_legacy(t) && !f.kineto_marks;
        (f.correlated_launches, f.orphan_launches) =
            launched_and_orphaned(&launches, &h.captures, &device_correlations);
        let first_trailing_orphan = trailing_orphans(&launches, &h.captures, &device_correlations);
        (f.graph_correlated, f.graph_orphans) =
            launched_and_orphaned(&graph_launches, &h.captures, &device_correlations);
        let graph_ids: BTreeSet<i64> = graph_launches.iter().map(|g| g.0).collect();
        f.replayed_kernels = kernel_correlations
            .iter()
            .filter(|c| graph_ids.contains(c))
            .count() as u64;
        let device = crate::analysis::intervals::union(device_spans);
        f.orphans_trail = match (first_trailing_orphan, device.last()) {
            (Some(first), Some(&(_, end))) => end - first >= QUEUED_AT_STOP_NS,
            _ => false,
        };
        f.device_window_ns = match (device.first(), device.last()) {
            (Some(a), Some(b)) => b.1 - a.0,
            _ => 0,
        };
        f.unrecorded = unrecorded_tails(&device, &waits);
        f.fused_ranks = fused_ranks(t);
        f.fused_split = t.metadata.fused_ranks.clone();
        f.data_loss = t
            .diagnostics
            .list()
            .into_iter()
            // Two files claiming one rank is the set's matter, not an event lost from this file.
            .filter(|d| d.severity != Severity::Info && d.kind != DiagnosticKind::DuplicateRank)
            .map(|d| LossItem {
                count: d.count,
                what: d.description,
            })
            .collect();
        f.run = run_signals(t, &host_names, &kernel_names);
        f.repeats.kernel_ns = kernel_names.values().map(|v| v.1).sum();
        f.repeats.distinct_kernels = kernel_names.len() as u64;
        f.repeats.top_kernel = kernel_names
            .iter()
            .max_by_key(|(_, v)| (v.1, v.0))
            .map(|(id, v)| (t.name_of_id(*id).to_string(), v.0, v.1));
        let top_id = kernel_names
            .iter()
            .max_by_key(|(_, v)| (v.1, v.0))
            .map(|(id, _)| *id);
        f.repeats.span_ns = h.span.map_or(0, |(a, b)| b - a);
        let (linked, ops) = launching_ops(t, top_id);
        f.repeats.linked = linked;
        f.repeats.launching_ops = ops;
        if f.legacy || h.device_ops == 0 {
            let host_only = super::host_only::HostOnly::of(t, h, &classes, &runtime_names);
            f.top_ops = host_only.top_ops.clone();
            if f.device.kind == DeviceKind::Cpu {
                // No runtime call or device name: the operators' own names may still say a device.
                if let Some(k) = host_only.evidence_kind {
                    f.device.kind = k;
                }
            }
            f.host_only = Some(host_only);
        }
        if h.host_events == 0 && h.device_ops == 0 {
            f.found = Some(found(t));
        }
        if h.steps.is_empty() {
            f.phases = super::phases::phases_of(t, &classes);
        }
        f
    }
}

/// What the host operators (`host`: name id → count) and kernels (`kernels`: name id → count,
/// time) say of the run: each distinct name read once.
fn run_signals(
    t: &TraceTable,
    host: &BTreeMap<u32, u64>,
    kernels: &BTreeMap<u32, (u64, i64)>,
) -> RunSignals {
    let mut r = RunSignals::default();
    for (id, n) in host {
        let name = t.name_of_id(*id);
        if name.starts_with("aten::") {
            r.host_ops += n;
        }
        r.add(name, *n);
    }
    for (id, (n, _)) in kernels {
        if is_training_kernel(t.name_of_id(*id)) {
            r.training += n;
        }
    }
    r
}

/// The device from `deviceProperties`, process names, runtime call names and categories, in that
/// order; the host alone when the trace has host events and no device operation.
fn rank_device(
    t: &TraceTable,
    runtime_names: &BTreeSet<u32>,
    devices: &BTreeSet<i64>,
    device_ops: u64,
) -> RankDevice {
    let name = t.metadata.device_name.clone().filter(|n| !n.is_empty());
    let from_processes = || {
        t.metadata
            .process_names
            .iter()
            .flat_map(|(pid, n)| [pid.as_str(), n.as_str()])
            .find_map(|n| match process_role(n) {
                Some(ProcessRole::DeviceOps(k)) => Some(k),
                _ => None,
            })
    };
    let from_runtime = || {
        runtime_names
            .iter()
            .find_map(|id| device_kind_of_runtime(t.name_of_id(*id)))
    };
    let from_categories = || {
        let cats = t.category_dictionary();
        (0..cats.len()).find_map(|i| device_kind_of_runtime(cats.value(i)))
    };
    let kind = name
        .as_deref()
        .and_then(device_kind_of_device_name)
        .or_else(from_processes)
        .or_else(from_runtime)
        .or_else(from_categories)
        .unwrap_or(if device_ops == 0 && t.metadata.device_count == 0 {
            DeviceKind::Cpu
        } else {
            DeviceKind::Unknown
        });
    let count = if device_ops > 0 {
        devices.len().max(1) as u64
    } else {
        t.metadata.device_count as u64
    };
    RankDevice { kind, name, count }
}

/// Top-level keys only the PyTorch profiler (Kineto) writes.
fn kineto_marks(t: &TraceTable) -> bool {
    const KEYS: [&str; 6] = [
        "schemaVersion",
        "deviceProperties",
        "distributedInfo",
        "traceName",
        "baseTimeNanoseconds",
        "record_shapes",
    ];
    KEYS.iter().any(|k| t.metadata.top_level.contains_key(*k))
}

/// The legacy `torch.autograd.profiler` export: its `CPU functions` process (named by the pid
/// itself), or a bare event array of CPU operators with no runtime calls.
fn is_legacy(t: &TraceTable) -> bool {
    let named = t
        .metadata
        .process_names
        .iter()
        .any(|(pid, n)| pid == "CPU functions" || n == "CPU functions")
        || t.rows_of_kind(EventKind::CpuOp)
            .take(64)
            .any(|row| t.pid_at(row) == "CPU functions");
    if named {
        return true;
    }
    let bare = !t.metadata.object_form;
    let only_ops = t.rows_of_kind(EventKind::Runtime).next().is_none()
        && t.rows_of_kind(EventKind::Driver).next().is_none()
        && t.rows_of_kind(EventKind::CpuOp).next().is_some();
    bare && only_ops
}

/// Distinct ranks a merge tool wrote into one file: `args.rank` values, or `rank N` in process
/// names and pids; empty unless there are at least two.
fn fused_ranks(t: &TraceTable) -> Vec<i64> {
    let mut ranks: BTreeSet<i64> = BTreeSet::new();
    if let Some(c) = t.arg("rank") {
        for i in 0..c.rows.len() {
            if let Some(r) = c.i64_at(i) {
                ranks.insert(r);
            }
        }
    }
    if ranks.len() < 2 {
        ranks.clear();
        for (pid, n) in &t.metadata.process_names {
            if let Some(r) = rank_in_text(n).or_else(|| rank_in_text(pid)) {
                ranks.insert(r);
            }
        }
    }
    if ranks.len() < 2 {
        return Vec::new();
    }
    ranks.into_iter().collect()
}

pub use crate::table::split::rank_in_text;

/// The CPU operators that launch the repeated device work (kernels named `top`, or every copy
/// when `None`), by `External id`: how many device operations are so joined, and the operators'
/// distinct names (at most [`LAUNCHING_NAMES`] + 1).
fn launching_ops(t: &TraceTable, top: Option<u32>) -> (u64, Vec<String>) {
    let repeated = |row: usize| match top {
        Some(id) => t.kind_at(row) == EventKind::Kernel && t.name_id(row) == id,
        None => t.kind_at(row) == EventKind::Memcpy,
    };
    let externals: BTreeMap<i64, u64> = (0..t.len())
        .filter(|&row| repeated(row))
        .filter_map(|row| t.external_id_at(row))
        .fold(BTreeMap::new(), |mut m, e| {
            *m.entry(e).or_default() += 1;
            m
        });
    let mut linked = 0;
    let mut names: BTreeSet<u32> = BTreeSet::new();
    for row in t.rows_of_kind(EventKind::CpuOp) {
        let Some(n) = t.external_id_at(row).and_then(|e| externals.get(&e)) else {
            continue;
        };
        linked += n;
        if names.len() <= LAUNCHING_NAMES {
            names.insert(t.name_id(row));
        }
    }
    let names = names
        .iter()
        .map(|id| t.name_of_id(*id).to_string())
        .collect();
    (linked, names)
}

/// "categories `devtools.timeline` (812), `v8` (40); processes `Browser`, `Renderer`".
fn found(t: &TraceTable) -> RichText {
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for row in 0..t.len() {
        if let Some(c) = t.category_at(row) {
            *counts.entry(c).or_default() += 1;
        }
    }
    let mut cats: Vec<(&str, u64)> = counts.into_iter().collect();
    crate::sort::sort_by(&mut cats, |a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut parts = Vec::new();
    if !cats.is_empty() {
        let list = cats
            .iter()
            .take(4)
            .map(|(c, n)| rich!(code(*c), format!(" ({n})")));
        parts.push(rich!("categories ", RichText::join(list, ", ")));
    }
    let procs: BTreeSet<&str> =
        crate::sort::set_of(t.metadata.process_names.values().map(String::as_str));
    if !procs.is_empty() {
        let list = procs
            .iter()
            .take(4)
            .map(|p| rich!(name(NameKind::Process, p)));
        parts.push(rich!("processes ", RichText::join(list, ", ")));
    }
    if parts.is_empty() {
        format!("{} events with no category or process name", t.len()).into()
    } else {
        rich!(format!("{} events: ", t.len()), RichText::join(parts, "; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_are_read_from_names() {
        assert_eq!(rank_in_text("[rank3] python"), Some(3));
        assert_eq!(rank_in_text("Rank 12 pid 4242"), Some(12));
        assert_eq!(rank_in_text("rank_0"), Some(0));
        assert_eq!(rank_in_text("python3"), None);
        assert_eq!(rank_in_text("ranking 5x"), None);
    }
}

/// Of `(correlation, ts)` launches outside graph captures: how many, and how many carry no device
/// operation (their correlation absent from `device_correlations`).
/// How much recorded device work must still be queued when the launches stop being recorded for
/// the missing ones to be work the profiler stopped before (1 ms: a device behind, not idle).
const QUEUED_AT_STOP_NS: i64 = 1_000_000;

/// The first orphan launch (outside captures, no device operation) when every orphan starts after
/// the last launch whose device operation was recorded (a tail, not gaps along the way).
fn trailing_orphans(
    launches: &[(i64, i64)],
    captures: &crate::analysis::intervals::Intervals,
    device_correlations: &BTreeSet<i64>,
) -> Option<i64> {
    let outside = || {
        launches
            .iter()
            .filter(|(_, ts)| covered(captures, *ts, *ts + 1) == 0)
    };
    let last_recorded = outside()
        .filter(|(c, _)| device_correlations.contains(c))
        .map(|(_, ts)| *ts)
        .max();
    let first_orphan = outside()
        .filter(|(c, _)| !device_correlations.contains(c))
        .map(|(_, ts)| *ts)
        .min();
    match (last_recorded, first_orphan) {
        (Some(last), Some(first)) if first > last => Some(first),
        _ => None,
    }
}

fn launched_and_orphaned(
    launches: &[(i64, i64)],
    captures: &crate::analysis::intervals::Intervals,
    device_correlations: &BTreeSet<i64>,
) -> (u64, u64) {
    let outside: Vec<&(i64, i64)> = launches
        .iter()
        .filter(|(_, ts)| covered(captures, *ts, *ts + 1) == 0)
        .collect();
    let orphans = outside
        .iter()
        .filter(|(c, _)| !device_correlations.contains(c))
        .count();
    (outside.len() as u64, orphans as u64)
}
