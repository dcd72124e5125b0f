//! What a trace without device work shows of its host: the operators by self (exclusive) time with
//! their share of the profiled wall time (nested operators are not counted twice, and an operator
//! on several threads at once is measured by the union of its time, so no share passes 100%; frames
//! that only wait are not ranked), whether the operators or runtime calls say a device ran
//! unrecorded (cuDNN, `cudaDeviceSynchronize`, MPS: CPU operators and runtime calls only, never a
//! Python frame's name), whether one-off first calls fill it (a cold pass: the first cuDNN call,
//! allocator start-up), and what its CPU operators spend the time on ([`super::cpu_run`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::OpTotal;
use crate::analysis::intervals::{intersect, length, union};
use crate::analysis::names::{NameClass, NameClasses};
use crate::report::host::HostTimeline;
use crate::table::{EventKind, TraceTable};
use crate::trace::dialect::{
    device_kind_of_device_type, device_kind_of_op_name, device_kind_of_runtime, DeviceKind,
};

/// How many operators the summary lists.
pub const TOP_OPS: usize = 5;
/// How many names show the unrecorded device, and how many one-off calls are named.
const EVIDENCE_NAMES: usize = 3;
const ONE_OFF_NAMES: usize = 2;

/// One first call many times its later median (a one-off cost of a cold pass).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostOneOff {
    pub name: String,
    pub dur_ns: i64,
    pub later_median_ns: i64,
}

/// The host of a trace without device work, summarised.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostOnly {
    /// First to last timed event, ns: the profiled wall time.
    pub span_ns: i64,
    /// Operators (and Python functions) with most self time.
    pub top_ops: Vec<OpTotal>,
    /// The device the operators or runtime calls say ran, with no device event recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_kind: Option<DeviceKind>,
    /// The names that say so (`aten::cudnn_convolution`, `cudaDeviceSynchronize`).
    pub evidence: Vec<String>,
    /// `[memory]` events on a device (`Device Type` an accelerator's): allocations and frees on
    /// it, which only a run on that device makes ([`DeviceAllocations`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_memory: Option<DeviceAllocations>,
    /// Host time in one-off first calls (their union), ns.
    pub one_off_ns: i64,
    /// The largest of them, innermost.
    pub one_offs: Vec<HostOneOff>,
    /// What the CPU operators spend the time on; `None` without CPU operators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<super::cpu_run::CpuRun>,
}

impl HostOnly {
    /// Reads the host of `t` (`h` its host timeline; `runtime_names` the runtime calls' name ids).
    pub fn of(
        t: &TraceTable,
        h: &HostTimeline,
        classes: &NameClasses,
        runtime_names: &BTreeSet<u32>,
    ) -> HostOnly {
        let span = h.span.unwrap_or((0, 0));
        let (top_ops, device_names) = op_times(t, classes);
        // Runtime copies moved the model's data to a device; the profiler's own start-up calls
        // (`cudaGetDeviceProperties`, one `cudaDeviceSynchronize`) say nothing of where it ran.
        let copies = runtime_names
            .iter()
            .filter(|id| classes.of_name(**id).has(NameClass::MEMCPY_CALL))
            .map(|id| t.name_of_id(*id))
            .filter_map(|n| device_kind_of_runtime(n).map(|k| (k, n.to_string())));
        let ops = device_names.iter().filter_map(|id| {
            let n = t.name_of_id(*id);
            device_kind_of_op_name(n).map(|k| (k, n.to_string()))
        });
        let mut evidence: Vec<(DeviceKind, String)> = copies.chain(ops).collect();
        evidence.dedup();
        let device_memory = device_allocations(t);
        HostOnly {
            span_ns: span.1 - span.0,
            top_ops,
            evidence_kind: evidence
                .first()
                .map(|e| e.0)
                .or(device_memory.as_ref().map(|m| m.kind)),
            device_memory,
            evidence: evidence
                .into_iter()
                .take(EVIDENCE_NAMES)
                .map(|e| e.1)
                .collect(),
            one_off_ns: length(&intersect(&h.one_offs.host_intervals(), &[span])),
            one_offs: h
                .one_offs
                .innermost()
                .into_iter()
                .take(ONE_OFF_NAMES)
                .map(|o| HostOneOff {
                    name: o.name.clone(),
                    dur_ns: o.dur_ns(),
                    later_median_ns: o.later_median_ns,
                })
                .collect(),
            cpu: super::cpu_run::CpuRun::of(t, classes, span),
        }
    }
}

/// The `[memory]` events a trace records on a device (`profile_memory=True`): proof that the run
/// used it, whatever else was recorded.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceAllocations {
    pub kind: DeviceKind,
    /// Memory events (allocations and frees) on the device.
    pub events: u64,
    /// The device ids they name, sorted.
    pub devices: Vec<i64>,
    /// The most memory allocated on one device at once (`Total Allocated`), bytes.
    pub peak_bytes: i64,
}

/// The `[memory]` events of `t` on an accelerator (`Device Type` ≥ 1 that is a device:
/// [`device_kind_of_device_type`]); `None` when there are none.
pub fn device_allocations(t: &TraceTable) -> Option<DeviceAllocations> {
    let int = |key: &str, row: usize| t.arg(key).and_then(|c| c.i64_at(c.find(row)?));
    let mut out: Option<DeviceAllocations> = None;
    for row in 0..t.len() {
        if t.kind_at(row) == EventKind::Metadata || t.name_at(row) != "[memory]" {
            continue;
        }
        let Some(kind) = int("Device Type", row).and_then(device_kind_of_device_type) else {
            continue;
        };
        let a = out.get_or_insert_with(|| DeviceAllocations {
            kind,
            ..Default::default()
        });
        a.events += 1;
        let id = int("Device Id", row).unwrap_or(0).max(0);
        if let Err(i) = a.devices.binary_search(&id) {
            a.devices.insert(i, id);
        }
        a.peak_bytes = a.peak_bytes.max(int("Total Allocated", row).unwrap_or(0));
    }
    out
}

/// One timed operator or Python function of a thread: (start, end, name id).
type Span = (i64, i64, u32);

/// Operators by self time (largest first, at most [`TOP_OPS`]): CPU operators when the trace has
/// any, else Python functions, never a frame that only waits; and the name ids of every CPU
/// operator (for the device they name: a Python frame's name says nothing of the device).
fn op_times(t: &TraceTable, classes: &NameClasses) -> (Vec<OpTotal>, BTreeSet<u32>) {
    let mut threads: BTreeMap<(u32, u32), Vec<Span>> = BTreeMap::new();
    let mut names = BTreeSet::new();
    for row in 0..t.len() {
        let kind = t.kind_at(row);
        if !matches!(kind, EventKind::CpuOp | EventKind::PythonFunction) {
            continue;
        }
        if classes.of_row(t, row).has(NameClass::PROFILER_STEP) {
            continue;
        }
        if kind == EventKind::CpuOp {
            names.insert(t.name_id(row));
        }
        if let (Some(ts), Some(dur)) = (t.ts_at(row), t.dur_at(row)) {
            threads
                .entry((t.pid_id(row), t.tid_id(row)))
                .or_default()
                .push((ts, ts + dur.max(0), t.name_id(row)));
        }
    }
    let mut totals: BTreeMap<u32, OpSums> = BTreeMap::new();
    let mut on_threads: BTreeMap<u32, u64> = BTreeMap::new();
    let is_caller = |id: u32| t.name_of_id(id).starts_with("aten::");
    for spans in threads.values_mut() {
        self_times(spans, &is_caller, &mut totals);
        let here: BTreeSet<u32> = crate::sort::set_of(spans.iter().map(|s| s.2));
        for id in here {
            *on_threads.entry(id).or_default() += 1;
        }
    }
    let left_out = |id: &u32| {
        (!names.is_empty() && !names.contains(id)) || classes.of_name(*id).has(NameClass::WAITING)
    };
    let mut v: Vec<OpTotal> = totals
        .iter()
        .filter(|(id, _)| !left_out(id))
        .map(|(id, o)| OpTotal {
            name: t.name_of_id(*id).to_string(),
            calls: o.calls,
            total_ns: o.total_ns,
            self_ns: o.self_ns,
            called_in: o
                .self_by_caller
                .iter()
                .max_by_key(|(c, ns)| (**ns, std::cmp::Reverse(**c)))
                .map(|(c, _)| t.name_of_id(*c).to_string()),
            wall_ns: length(&union(o.spans.clone())),
            threads: on_threads.get(id).copied().unwrap_or(1),
        })
        .collect();
    crate::sort::sort_by(&mut v, |a, b| {
        b.self_ns.cmp(&a.self_ns).then(a.name.cmp(&b.name))
    });
    v.truncate(TOP_OPS);
    (v, names)
}

/// Per name id: calls, total time, self time, and self time by the outermost `aten::` operator
/// around it (the operator the model called: `aten::dropout` around `aten::bernoulli_`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpSums {
    pub calls: u64,
    pub total_ns: i64,
    pub self_ns: i64,
    pub self_by_caller: BTreeMap<u32, i64>,
    /// The intervals of its self time (their union is its wall time).
    pub spans: Vec<(i64, i64)>,
}

/// Adds one thread's spans to `totals`: a span's self time is its duration less the time its
/// direct children cover; `is_caller` says which names count as the model's operators.
pub fn self_times(
    spans: &mut [Span],
    is_caller: &dyn Fn(u32) -> bool,
    totals: &mut BTreeMap<u32, OpSums>,
) {
    crate::sort::sort_by_key(spans, |s| (s.0, std::cmp::Reverse(s.1)));
    // Open spans: (end, name id, self time so far, outermost caller around it, where its own time
    // resumed after its last child).
    type Open = (i64, u32, i64, Option<u32>, i64);
    let mut stack: Vec<Open> = Vec::new();
    let close = |e: Open, totals: &mut BTreeMap<u32, OpSums>| {
        let sums = totals.entry(e.1).or_default();
        sums.self_ns += e.2.max(0);
        if e.0 > e.4 {
            sums.spans.push((e.4, e.0));
        }
        if let Some(c) = e.3 {
            *sums.self_by_caller.entry(c).or_default() += e.2.max(0);
        }
    };
    for &(ts, end, name) in spans.iter() {
        while stack.last().is_some_and(|top| top.0 <= ts) {
            let e = stack.pop().expect("non-empty");
            close(e, totals);
        }
        let end = stack.last().map_or(end, |p| end.min(p.0));
        let caller = stack
            .last()
            .and_then(|p| p.3.or_else(|| is_caller(p.1).then_some(p.1)));
        if let Some(parent) = stack.last_mut() {
            parent.2 -= end - ts;
            if ts > parent.4 {
                totals
                    .entry(parent.1)
                    .or_default()
                    .spans
                    .push((parent.4, ts));
            }
            parent.4 = parent.4.max(end);
        }
        let e = totals.entry(name).or_default();
        e.calls += 1;
        e.total_ns += end - ts;
        stack.push((end, name, end - ts, caller, ts));
    }
    while let Some(e) = stack.pop() {
        close(e, totals);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_operators_count_their_own_time_once() {
        // conv (0-100) calls cudnn (10-90), which calls empty (20-30); relu (100-120) after.
        let mut spans = vec![(0, 100, 1), (10, 90, 2), (20, 30, 3), (100, 120, 4)];
        let mut totals = BTreeMap::new();
        // Name 1 is the model's operator (`aten::conv2d`), the others are not.
        self_times(&mut spans, &|id| id == 1, &mut totals);
        let figures = |id: u32| {
            let o = &totals[&id];
            (o.calls, o.total_ns, o.self_ns)
        };
        assert_eq!(figures(1), (1, 100, 20));
        assert_eq!(figures(2), (1, 80, 70));
        assert_eq!(figures(3), (1, 10, 10));
        assert_eq!(figures(4), (1, 20, 20));
        let own: i64 = totals.values().map(|v| v.self_ns).sum();
        assert_eq!(own, 120, "self times add up to the busy time");
        // Self intervals: conv 0-10 and 90-100, cudnn 10-20 and 30-90.
        let wall = |id: u32| length(&union(totals[&id].spans.clone()));
        assert_eq!((wall(1), wall(2), wall(3), wall(4)), (20, 70, 10, 20));
        // The empty inside cudnn inside conv is charged to conv, the outermost operator.
        assert_eq!(totals[&3].self_by_caller.get(&1), Some(&10));
        assert!(totals[&1].self_by_caller.is_empty());
    }
}
