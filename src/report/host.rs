//! One pass over a rank's table for what the host was doing: graph captures, warm-up calls, DataLoader,
//! synchronising and communication calls, profiler steps, and the counts the context stage reads.
//! Names are classed once per interned name ([`crate::analysis::names`]), never per row.

use std::collections::BTreeSet;

use crate::analysis::intervals::{union, Intervals};
use crate::analysis::names::{is_data_loader_op, profiler_step_number, NameClass, NameClasses};
use crate::analysis::one_off::{one_offs, OneOffs};
use crate::table::{EventKind, TraceTable};

/// Allocation calls recur (allocator churn, not warm-up) when they fill at least this share of the
/// pieces of the trace...
const RECURRING_ALLOC_PIECES: f64 = 0.6;
/// Pieces of a trace without steps.
const RECURRING_ALLOC_SLICES: i64 = 10;
/// ...a piece being filled when allocation calls take at least this share of it.
const RECURRING_ALLOC_SHARE: f64 = 0.05;

/// What warm-up work was seen, by kind: calls and host time, ns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WarmupWork {
    /// Device set-up and memory management calls (`cudaMalloc`, `cudaFree`, module loading, ...).
    pub setup_calls: u64,
    pub setup_ns: i64,
    /// cuDNN/MIOpen algorithm search calls.
    pub search_calls: u64,
    pub search_ns: i64,
    /// torch.compile compilation events.
    pub compile_events: u64,
    /// Host time inside compilation events: their union, as they nest.
    pub compile_ns: i64,
}

/// What the host of one rank did, as interval lists (ns, sorted, merged) and counts.
#[derive(Clone, Debug, Default)]
pub struct HostTimeline {
    /// Stream captures into graphs (begin call start → end call end).
    pub captures: Intervals,
    pub capture_calls: u64,
    /// Warm-up calls (set-up, algorithm search, compilation), merged; allocation calls only when
    /// they do not recur (see [`HostTimeline::alloc_recurs`]).
    pub warmup_marks: Intervals,
    /// Allocation calls recur through the trace (the caching allocator frees and re-allocates every
    /// step): they are not warm-up, and their device frees synchronise like any sync call.
    pub alloc_recurs: bool,
    pub warmup: WarmupWork,
    pub data_loader: Intervals,
    /// Where synchronising calls block the host (device-to-host copies included).
    pub syncs: Intervals,
    /// Where calls that wait for the device block the host: the syncs but device frees.
    pub waits: Intervals,
    /// The synchronising rows and their call names (`Memcpy DtoH` for asynchronous D2H copies).
    pub sync_rows: Vec<(usize, String)>,
    /// CPU-side communication calls.
    pub comm_ops: Intervals,
    /// One-off costs of the trace ([`crate::analysis::one_off`]), by start.
    pub one_offs: OneOffs,
    /// Where the host runs one-off work and does not wait for the device: the union of the host
    /// one-offs minus the waits.
    pub startup: Intervals,
    /// Synchronising copy calls (`cudaMemcpy`) and the device copy each made
    /// (`Memcpy HtoD (Pageable -> Device)`), by the call's row.
    pub sync_copies: Vec<(usize, String)>,
    /// Host `ProfilerStep#N` spans: (step, start, end), by start.
    pub steps: Vec<(i64, i64, i64)>,
    pub kernels: u64,
    /// (start, end) of every kernel and accelerator op, in table order.
    pub kernel_spans: Vec<(i64, i64)>,
    /// Device operations of any kind (kernels, copies, sets, accelerator ops).
    pub device_ops: u64,
    pub launch_calls: u64,
    pub graph_launches: u64,
    pub compiled_regions: u64,
    /// CPU ops, Python functions, runtime calls and annotations: the PyTorch profiler's host events.
    pub host_events: u64,
    /// First and last timestamp of any timed event.
    pub span: Option<(i64, i64)>,
    /// Where a launching thread computes on the CPU ([`host_compute_ops`]): the operators'
    /// spans, merged, minus DataLoader, warm-up and one-off work (their own causes), and only
    /// inside the steps when the trace has steps (between them is its own cause).
    pub host_compute: Intervals,
    /// Those operators: (start, end, name), by start.
    pub host_compute_ops: Vec<(i64, i64, String)>,
}

impl HostTimeline {
    /// Scans the table once.
    pub fn of(t: &TraceTable) -> HostTimeline {
        let classes = NameClasses::of(t);
        let mut h = HostTimeline::default();
        let mut raw = RawIntervals::default();
        let mut dtoh_correlations = BTreeSet::new();
        let mut copy_of_correlation = std::collections::BTreeMap::new();
        let mut memcpy_calls: Vec<usize> = Vec::new();
        let mut memcpy_syncs: Vec<usize> = Vec::new();
        let mut open_captures: Vec<((&str, &str), i64)> = Vec::new();
        for row in 0..t.len() {
            let kind = t.kind_at(row);
            let class = classes.of_row(t, row);
            let Some(ts) = t.ts_at(row) else {
                continue;
            };
            let end = ts + t.dur_at(row).unwrap_or(0).max(0);
            h.span = Some(h.span.map_or((ts, end), |(a, b)| (a.min(ts), b.max(end))));
            if kind.is_gpu_activity() {
                h.device_ops += 1;
                h.kernels += u64::from(kind == EventKind::Kernel);
                if matches!(kind, EventKind::Kernel | EventKind::AcceleratorOp) {
                    h.kernel_spans.push((ts, end));
                }
                if kind == EventKind::Memcpy {
                    if let Some(c) = t.correlation_at(row) {
                        if class.has(NameClass::DTOH) {
                            dtoh_correlations.insert(c);
                        }
                        copy_of_correlation.entry(c).or_insert(row);
                    }
                }
                continue;
            }
            let host = matches!(
                kind,
                EventKind::CpuOp
                    | EventKind::Runtime
                    | EventKind::Driver
                    | EventKind::UserAnnotation
                    | EventKind::PythonFunction
            );
            if !host {
                continue;
            }
            h.host_events += 1;
            if class.has(NameClass::PROFILER_STEP)
                && matches!(kind, EventKind::UserAnnotation | EventKind::CpuOp)
            {
                if let Some(step) = profiler_step_number(t.name_at(row)) {
                    h.steps.push((step, ts, end));
                }
                continue;
            }
            let runtime = matches!(kind, EventKind::Runtime | EventKind::Driver);
            if runtime {
                h.launch_calls += u64::from(class.has(NameClass::LAUNCH));
                h.graph_launches += u64::from(class.has(NameClass::GRAPH_LAUNCH));
                if class.has(NameClass::SYNC) {
                    h.sync_rows.push((row, t.name_at(row).to_string()));
                    raw.syncs.push((ts, end));
                    if class.has(NameClass::MEMCPY_CALL) {
                        memcpy_syncs.push(row);
                    }
                } else if class.has(NameClass::MEMCPY_CALL) {
                    memcpy_calls.push(row);
                }
                if class.has(NameClass::SETUP) {
                    h.warmup.setup_calls += 1;
                    h.warmup.setup_ns += end - ts;
                    raw.alloc.push((ts, end));
                    if class.has(NameClass::DEVICE_FREE) {
                        raw.frees.push((row, ts, end));
                    }
                }
                let thread = (t.pid_at(row), t.tid_at(row));
                if class.has(NameClass::CAPTURE_BEGIN) {
                    h.capture_calls += 1;
                    open_captures.push((thread, ts));
                } else if class.has(NameClass::CAPTURE_END) {
                    if let Some(i) = open_captures.iter().rposition(|(th, _)| *th == thread) {
                        let (_, start) = open_captures.remove(i);
                        raw.captures.push((start, end));
                    }
                }
            }
            if class.has(NameClass::GRAPH_INSTANTIATE) {
                // Graph set-up, like the capture before it: the replays after it are the work.
                raw.warmup.push((ts, end));
            }
            if class.has(NameClass::ALGORITHM_SEARCH) {
                h.warmup.search_calls += 1;
                h.warmup.search_ns += end - ts;
                raw.warmup.push((ts, end));
            }
            if class.has(NameClass::COMPILE) && !runtime {
                h.warmup.compile_events += 1;
                raw.compile.push((ts, end));
                raw.warmup.push((ts, end));
            }
            if class.has(NameClass::WARMUP_LABEL) && kind == EventKind::UserAnnotation {
                raw.warmup.push((ts, end));
            }
            h.compiled_regions += u64::from(class.has(NameClass::COMPILED_REGION));
            if is_data_loader_op(kind, class) {
                raw.data_loader.push((ts, end));
            }
            if class.has(NameClass::COMM_OP) && !runtime {
                raw.comm.push((ts, end));
            }
        }
        // A capture never ended runs to the end of the trace.
        let last = h.span.map_or(0, |s| s.1);
        raw.captures
            .extend(open_captures.iter().map(|&(_, start)| (start, last)));
        // Asynchronous copy calls whose copy is device-to-host also make the host wait (`.item()`, `.cpu()`).
        for row in memcpy_calls {
            if t.correlation_at(row)
                .is_some_and(|c| dtoh_correlations.contains(&c))
            {
                if let (Some(ts), Some(end)) = (t.ts_at(row), t.end_at(row)) {
                    h.sync_rows.push((row, "Memcpy DtoH".to_string()));
                    raw.syncs.push((ts, end));
                }
            }
        }
        h.sync_copies = memcpy_syncs
            .into_iter()
            .filter_map(|row| {
                let copy = copy_of_correlation.get(&t.correlation_at(row)?)?;
                Some((row, t.name_at(*copy).to_string()))
            })
            .collect();
        h.warmup.compile_ns = crate::analysis::intervals::length(&union(raw.compile.clone()));
        let span = h.span.unwrap_or((0, 0));
        crate::sort::sort_by_key(&mut h.steps, |s| (s.1, s.0));
        h.alloc_recurs = allocation_recurs(&raw.alloc, span, &h.steps);
        h.waits = union(raw.syncs.clone());
        if h.alloc_recurs {
            for &(row, ts, end) in &raw.frees {
                h.sync_rows.push((row, t.name_at(row).to_string()));
                raw.syncs.push((ts, end));
            }
        } else {
            raw.warmup.extend(raw.alloc.iter().copied());
        }
        crate::sort::sort(&mut h.sync_rows);
        crate::sort::sort_by_key(&mut h.steps, |s| (s.1, s.0));
        h.steps.dedup();
        h.captures = union(raw.captures);
        h.warmup_marks = union(raw.warmup);
        h.data_loader = union(raw.data_loader);
        h.syncs = union(raw.syncs);
        h.comm_ops = union(raw.comm);
        h.one_offs = one_offs(t, &classes);
        h.startup = crate::analysis::intervals::subtract(&h.one_offs.host_intervals(), &h.waits);
        h.host_compute_ops = host_compute_ops(t, &classes);
        let others = union(
            h.data_loader
                .iter()
                .chain(&h.warmup_marks)
                .chain(&h.startup)
                .copied()
                .collect(),
        );
        let mut compute = crate::analysis::intervals::subtract(
            &union(h.host_compute_ops.iter().map(|o| (o.0, o.1)).collect()),
            &others,
        );
        if !h.steps.is_empty() {
            // Host work between steps is its own cause (logging, checkpointing): only the steps'.
            compute = crate::analysis::intervals::intersect(&compute, &h.step_intervals());
        }
        h.host_compute = compute;
        h
    }

    /// Host step spans as intervals.
    pub fn step_intervals(&self) -> Intervals {
        union(self.steps.iter().map(|&(_, s, e)| (s, e)).collect())
    }
}

/// An operator that launched nothing computes on the CPU from this long (ns): dispatching an op
/// costs microseconds, so 100 µs without a runtime call is work on CPU tensors.
pub const HOST_COMPUTE_MIN_NS: i64 = 100_000;

/// Whether a launch call's runtime puts every device action through a call the profiler records
/// (CUDA, HIP): only there does an operator without one run on the CPU. Other accelerators' runtimes
/// (MTIA, Ascend, XPU) move data without a recorded call, so their threads are never read for host
/// compute.
fn records_every_device_call(runtime_call: &str) -> bool {
    use crate::trace::dialect::{device_kind_of_runtime, DeviceKind};
    matches!(
        device_kind_of_runtime(runtime_call),
        Some(DeviceKind::Cuda | DeviceKind::Rocm)
    )
}

/// The CPU operators that computed on the host: on a thread that launches device work (it makes
/// kernel launch or copy calls), an operator that made no runtime or driver call itself or
/// through its children (no kernel, copy, sync or allocation: nothing for the device) and lasted
/// at least [`HOST_COMPUTE_MIN_NS`]; the outermost of a nest. Its time is CPU compute on CPU
/// tensors (`torch.randn` without `device=`, a tensor made on the CPU then `.to(device)`, numpy
/// work through ATen), never dispatch or launch overhead. Profiler steps, DataLoader ops, waits,
/// communication and compilation are left out (their own causes), and so are allocations
/// ([`crate::analysis::names::is_allocation_op`]: a long `aten::empty` is a lazy initialisation), and
/// views ([`crate::analysis::names::is_view_op`]: they compute nothing). This is the one definition.
pub fn host_compute_ops(t: &TraceTable, classes: &NameClasses) -> Vec<(i64, i64, String)> {
    use std::collections::BTreeMap;
    type Thread = (u32, u32);
    let mut calls: BTreeMap<Thread, Vec<i64>> = BTreeMap::new();
    let mut launching: BTreeSet<Thread> = BTreeSet::new();
    let mut ops: BTreeMap<Thread, Vec<(i64, std::cmp::Reverse<i64>, usize)>> = BTreeMap::new();
    for row in 0..t.len() {
        let kind = t.kind_at(row);
        let Some(ts) = t.ts_at(row) else {
            continue;
        };
        let thread = (t.pid.keys().value(row), t.tid.keys().value(row));
        match kind {
            EventKind::Runtime | EventKind::Driver => {
                calls.entry(thread).or_default().push(ts);
                let c = classes.of_row(t, row);
                if (c.has(NameClass::LAUNCH) || c.has(NameClass::MEMCPY_CALL))
                    && records_every_device_call(t.name_at(row))
                {
                    launching.insert(thread);
                }
            }
            EventKind::CpuOp => {
                let end = ts + t.dur_at(row).unwrap_or(0).max(0);
                ops.entry(thread)
                    .or_default()
                    .push((ts, std::cmp::Reverse(end), row));
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (thread, mut list) in ops {
        if !launching.contains(&thread) {
            continue;
        }
        let mut runtime = calls.remove(&thread).unwrap_or_default();
        crate::sort::sort(&mut runtime);
        crate::sort::sort(&mut list);
        let mut covered_until = i64::MIN;
        for (ts, std::cmp::Reverse(end), row) in list {
            if ts < covered_until || end - ts < HOST_COMPUTE_MIN_NS {
                continue;
            }
            let c = classes.of_row(t, row);
            let other_cause = c.has(NameClass::PROFILER_STEP)
                || c.has(NameClass::WAITING)
                || c.has(NameClass::COMM_OP)
                || c.has(NameClass::COMPILE)
                || c.has(NameClass::SYNC)
                || is_data_loader_op(EventKind::CpuOp, c)
                || crate::analysis::names::is_allocation_op(t.name_at(row))
                || crate::analysis::names::is_view_op(t.name_at(row));
            let k = runtime.partition_point(|&r| r < ts);
            let launched = runtime.get(k).is_some_and(|&r| r < end);
            if other_cause || launched {
                continue;
            }
            covered_until = end;
            out.push((ts, end, t.name_at(row).to_string()));
        }
    }
    crate::sort::sort_by_key(&mut out, |o| (o.0, o.1));
    out
}

/// Allocation calls recur when most pieces of the trace (its steps after the first, or tenths of it
/// without steps) are filled by them: warm-up is what happens once, at the start.
fn allocation_recurs(
    alloc: &[(i64, i64)],
    (lo, hi): (i64, i64),
    steps: &[(i64, i64, i64)],
) -> bool {
    use crate::analysis::intervals::{intersect, length};
    let calls = union(alloc.to_vec());
    let pieces: Vec<(i64, i64)> = if steps.len() >= 2 {
        steps[1..].iter().map(|&(_, s, e)| (s, e)).collect()
    } else {
        // In i128: a span of epoch-ns timestamps times a slice index overflows i64.
        let (lo, span, n) = (
            lo as i128,
            (hi as i128 - lo as i128).max(0),
            RECURRING_ALLOC_SLICES as i128,
        );
        let at = |k: i128| (lo + span * k / n) as i64;
        (0..n).map(|k| (at(k), at(k + 1))).collect()
    };
    let filled = pieces
        .iter()
        .filter(|&&(a, b)| {
            length(&intersect(&calls, &[(a, b)])) as f64
                >= RECURRING_ALLOC_SHARE * (b - a).max(1) as f64
        })
        .count();
    !pieces.is_empty() && filled as f64 >= RECURRING_ALLOC_PIECES * pieces.len() as f64
}

#[derive(Default)]
struct RawIntervals {
    alloc: Vec<(i64, i64)>,
    frees: Vec<(usize, i64, i64)>,
    captures: Vec<(i64, i64)>,
    warmup: Vec<(i64, i64)>,
    data_loader: Vec<(i64, i64)>,
    syncs: Vec<(i64, i64)>,
    comm: Vec<(i64, i64)>,
    compile: Vec<(i64, i64)>,
}
