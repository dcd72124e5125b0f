//! One-off costs, per event: what a cold pass pays once and a steady state never does. A host call,
//! op or Python function whose first occurrence takes many times the median of its later ones (on a
//! thread that runs operators or runtime calls: a logger's or feeder's Python-only thread is not the
//! run's start-up); the
//! first launch of a kernel function when it takes many times the launch call's median (lazy module
//! loading); a kernel whose first run takes many times its later median (library autotuning, a cold
//! cache); and calls that load device code or create a library handle (`cuModuleLoadData`,
//! `cudaGetFuncBySymbol`, `cublasCreate`), whatever they take.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::intervals::union;
use super::names::{NameClass, NameClasses};
use crate::table::{EventKind, TraceTable};

/// A first occurrence is a one-off when it takes at least this many times its later median...
pub const ONE_OFF_FACTOR: f64 = 10.0;
/// ...and at least this much (ns) more than it.
pub const ONE_OFF_MIN_EXCESS_NS: i64 = 1_000_000;
/// A GPU gap before the first run of a kernel compiled at run time (launched by the driver API) is
/// a one-off from this length (ns), when the kernel runs once or the gap is far above the gaps
/// before its later runs.
pub const COLD_GAP_MIN_NS: i64 = 10_000_000;

crate::stable_enum! {
    /// What kind of one-off cost an event is.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum OneOffKind {
        /// A call that loads device code or creates a library handle.
        CodeLoad,
        /// The first call of a host op, runtime call or Python function, many times its later median.
        FirstCall,
        /// The first launch of a kernel function, many times the launch call's median.
        FirstLaunch,
        /// The first run of a kernel, many times its later median (GPU time, not idle).
        FirstKernel,
        /// A long GPU gap before the first run of a kernel compiled at run time (a JIT fusion
        /// launched by the driver API): the host compiled it once.
        ColdGap,
    }
}

/// One event that is a one-off cost.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OneOff {
    pub kind: OneOffKind,
    /// The call, op, Python function or kernel.
    pub name: String,
    /// For a first launch or a cold gap: the kernel it launched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launched: Option<String>,
    pub row: u32,
    pub ts: i64,
    pub end: i64,
    /// Median duration of the later occurrences (of the launch call, for a first launch), ns; 0 for
    /// code loading.
    pub later_median_ns: i64,
    /// (pid, tid) dictionary ids of the thread (host events).
    #[serde(skip)]
    pub thread: (u32, u32),
}

impl OneOff {
    pub fn dur_ns(&self) -> i64 {
        self.end - self.ts
    }

    /// Whether it runs on the host (not a kernel).
    pub fn on_host(&self) -> bool {
        self.kind != OneOffKind::FirstKernel
    }
}

/// The one-off costs of one rank's trace, by start.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OneOffs {
    pub items: Vec<OneOff>,
}

impl OneOffs {
    /// Where the host runs one-off work: the union of the host items (sorted, merged).
    pub fn host_intervals(&self) -> Vec<(i64, i64)> {
        union(
            self.items
                .iter()
                .filter(|o| o.on_host())
                .map(|o| (o.ts, o.end))
                .collect(),
        )
    }

    /// GPU time first runs of kernels take beyond their later median, ns.
    pub fn kernel_excess_ns(&self) -> i64 {
        self.items
            .iter()
            .filter(|o| o.kind == OneOffKind::FirstKernel)
            .map(|o| (o.dur_ns() - o.later_median_ns).max(0))
            .sum()
    }

    /// The innermost host items (no other host item of their thread inside them), longest first:
    /// the calls that say what the cost is (the launch, not the convolution op around it).
    pub fn innermost(&self) -> Vec<&OneOff> {
        let host: Vec<&OneOff> = self.items.iter().filter(|o| o.on_host()).collect();
        let mut out: Vec<&OneOff> = host
            .iter()
            .filter(|a| {
                !host.iter().any(|b| {
                    !std::ptr::eq(**a, *b)
                        && b.thread == a.thread
                        && a.ts <= b.ts
                        && b.end <= a.end
                        && (b.ts, b.end) != (a.ts, a.end)
                })
            })
            .copied()
            .collect();
        crate::sort::sort_by(&mut out, |a, b| {
            b.dur_ns().cmp(&a.dur_ns()).then(a.ts.cmp(&b.ts))
        });
        out
    }
}

/// One timed occurrence: (start, duration, row).
type Occurrence = (i64, i64, u32);

/// The one-off costs of a table.
pub fn one_offs(t: &TraceTable, classes: &NameClasses) -> OneOffs {
    let mut host: BTreeMap<u32, Vec<Occurrence>> = BTreeMap::new();
    let mut launches: BTreeMap<u32, Vec<Occurrence>> = BTreeMap::new();
    let mut kernels: BTreeMap<u32, Vec<Occurrence>> = BTreeMap::new();
    let mut kernel_of_corr: BTreeMap<i64, u32> = BTreeMap::new();
    let mut launch_of_corr: BTreeMap<i64, u32> = BTreeMap::new();
    let mut device: Vec<(i64, i64, u32)> = Vec::new();
    let mut items = Vec::new();
    // Threads that run operators or runtime calls: the ones doing or feeding the work. A first
    // call on a thread with only Python frames (a logger's event loop, a queue feeder) is not.
    let mut working: BTreeSet<(u32, u32)> = BTreeSet::new();
    for row in 0..t.len() {
        let (Some(ts), Some(dur)) = (t.ts_at(row), t.dur_at(row)) else {
            continue;
        };
        let dur = dur.max(0);
        let kind = t.kind_at(row);
        let class = classes.of_row(t, row);
        let occurrence = (ts, dur, row as u32);
        if matches!(
            kind,
            EventKind::CpuOp | EventKind::Runtime | EventKind::Driver
        ) {
            working.insert((t.pid_id(row), t.tid_id(row)));
        }
        if kind.is_gpu_activity() {
            device.push((ts, ts + dur, row as u32));
        } else if matches!(
            kind,
            EventKind::CpuOp | EventKind::PythonFunction | EventKind::Runtime | EventKind::Driver
        ) {
            if let Some(c) = t.correlation_at(row) {
                launch_of_corr.entry(c).or_insert(row as u32);
            }
        }
        match kind {
            EventKind::Kernel => {
                kernels.entry(t.name_id(row)).or_default().push(occurrence);
                if let Some(c) = t.correlation_at(row) {
                    kernel_of_corr.entry(c).or_insert(t.name_id(row));
                }
            }
            EventKind::Runtime | EventKind::Driver if class.has(NameClass::ONE_OFF_CALL) => {
                items.push(item(t, OneOffKind::CodeLoad, row, 0));
            }
            EventKind::Runtime | EventKind::Driver if class.has(NameClass::LAUNCH) => {
                launches.entry(t.name_id(row)).or_default().push(occurrence);
            }
            EventKind::CpuOp
            | EventKind::PythonFunction
            | EventKind::Runtime
            | EventKind::Driver
                if !waits(class) =>
            {
                host.entry(t.name_id(row)).or_default().push(occurrence);
            }
            _ => {}
        }
    }
    for list in host.values_mut() {
        if !working.is_empty() {
            list.retain(|o| {
                let row = o.2 as usize;
                working.contains(&(t.pid_id(row), t.tid_id(row)))
            });
        }
        if let Some((first, median)) = slow_first(list) {
            items.push(item(t, OneOffKind::FirstCall, first as usize, median));
        }
    }
    for list in kernels.values_mut() {
        if let Some((first, median)) = slow_first(list) {
            items.push(item(t, OneOffKind::FirstKernel, first as usize, median));
        }
    }
    for list in launches.values_mut() {
        items.extend(first_launches(t, list, &kernel_of_corr));
    }
    let cold = ColdGapInputs {
        gaps: gaps_before(&mut device),
        launch_of_corr,
    };
    for list in kernels.values() {
        items.extend(cold_gap(t, list, &cold));
    }
    crate::sort::sort_by_key(&mut items, |o| (o.ts, std::cmp::Reverse(o.end), o.row));
    OneOffs { items }
}

/// Calls whose time is a wait (synchronising calls, waiting frames, step labels): a first one that
/// is long waited for something, it did not pay a one-off cost.
fn waits(class: NameClass) -> bool {
    class.has(NameClass::SYNC)
        || class.has(NameClass::WAITS_FOR_DEVICE)
        || class.has(NameClass::WAITING)
        || class.has(NameClass::PROFILER_STEP)
        || class.has(NameClass::DATA_LOADER)
}

fn item(t: &TraceTable, kind: OneOffKind, row: usize, later_median_ns: i64) -> OneOff {
    let ts = t.ts_at(row).unwrap_or(0);
    OneOff {
        kind,
        name: t.name_at(row).to_string(),
        launched: None,
        row: row as u32,
        ts,
        end: ts + t.dur_at(row).unwrap_or(0).max(0),
        later_median_ns,
        thread: (t.pid_id(row), t.tid_id(row)),
    }
}

/// Whether `dur` is a one-off against `median`: many times it, and by a noticeable time.
pub fn is_one_off(dur: i64, median: i64) -> bool {
    dur as f64 >= ONE_OFF_FACTOR * median.max(1) as f64 && dur - median >= ONE_OFF_MIN_EXCESS_NS
}

/// The first occurrence's row and the later median, when the first is a one-off.
fn slow_first(list: &mut [Occurrence]) -> Option<(u32, i64)> {
    if list.len() < 2 {
        return None;
    }
    crate::sort::sort(list);
    // A first occurrence that holds the next one (`_call_impl` of the whole model around its
    // layers', a recursive function) is longer for holding it, not for being first.
    if list[1].0 < list[0].0 + list[0].1 {
        return None;
    }
    let median = median_of(list[1..].iter().map(|o| o.1));
    is_one_off(list[0].1, median).then_some((list[0].2, median))
}

/// The lower middle of some durations (0 when none).
fn median_of(durs: impl Iterator<Item = i64>) -> i64 {
    let mut v: Vec<i64> = durs.collect();
    if v.is_empty() {
        return 0;
    }
    crate::sort::sort(&mut v);
    v[(v.len() - 1) / 2]
}

/// The launches of one call name that launch a kernel function for the first time and take many
/// times the call's median: loading the function's module on first use.
fn first_launches(
    t: &TraceTable,
    list: &mut [Occurrence],
    kernel_of_corr: &BTreeMap<i64, u32>,
) -> Vec<OneOff> {
    crate::sort::sort(list);
    let median = median_of(list.iter().map(|o| o.1));
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for &(_, dur, row) in list.iter() {
        let Some(kernel) = t
            .correlation_at(row as usize)
            .and_then(|c| kernel_of_corr.get(&c))
        else {
            continue;
        };
        if seen.insert(*kernel) && is_one_off(dur, median) {
            let mut o = item(t, OneOffKind::FirstLaunch, row as usize, median);
            o.launched = Some(t.name_of_id(*kernel).to_string());
            out.push(o);
        }
    }
    out
}

/// What the cold-gap test reads: the GPU gap before each device row, the launch row of each
/// correlation.
struct ColdGapInputs {
    /// Device row → (gap start, gap end) of the idle gap its start ends.
    gaps: BTreeMap<u32, (i64, i64)>,
    launch_of_corr: BTreeMap<i64, u32>,
}

/// The idle gap (all streams merged) each device row ends, by row.
fn gaps_before(device: &mut [(i64, i64, u32)]) -> BTreeMap<u32, (i64, i64)> {
    crate::sort::sort(device);
    let mut out = BTreeMap::new();
    let mut busy_end: Option<i64> = None;
    for &(ts, end, row) in device.iter() {
        if let Some(b) = busy_end.filter(|b| ts > *b) {
            out.insert(row, (b, ts));
        }
        busy_end = Some(busy_end.map_or(end, |b| b.max(end)));
    }
    out
}

/// A long GPU gap before the first run of a kernel compiled at run time (occurrences `list`), when
/// it runs once or the gap is far above the gaps before its later runs.
fn cold_gap(t: &TraceTable, list: &[Occurrence], c: &ColdGapInputs) -> Option<OneOff> {
    let &(_, _, first) = list.first()?;
    let &(g0, g1) = c.gaps.get(&first)?;
    let gap = g1 - g0;
    if gap < COLD_GAP_MIN_NS {
        return None;
    }
    let launch = t
        .correlation_at(first as usize)
        .and_then(|k| c.launch_of_corr.get(&k))
        .copied();
    let later: Vec<i64> = list[1..]
        .iter()
        .map(|o| c.gaps.get(&o.2).map_or(0, |g| g.1 - g.0))
        .collect();
    // Only code compiled at run time (launched by the driver API, as TorchScript fusion groups,
    // NVRTC and Triton kernels are) is prepared by the host before its first run; a long gap before
    // an ordinary kernel is the host's business between steps, whatever it did.
    let jit = launch.is_some_and(|r| t.kind_at(r as usize) == EventKind::Driver);
    let cold = jit && (later.is_empty() || is_one_off(gap, median_of(later.into_iter())));
    cold.then(|| OneOff {
        kind: OneOffKind::ColdGap,
        name: launch.map_or("(launch not traced)".to_string(), |r| {
            t.name_at(r as usize).to_string()
        }),
        launched: Some(t.name_at(first as usize).to_string()),
        row: launch.unwrap_or(first),
        ts: g0,
        end: g1,
        later_median_ns: 0,
        thread: launch.map_or((u32::MAX, u32::MAX), |r| {
            (t.pid_id(r as usize), t.tid_id(r as usize))
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_occurrence_is_a_one_off_only_when_far_above_its_later_median() {
        assert!(is_one_off(630_000_000, 9_000));
        assert!(!is_one_off(80_000, 9_000), "9x, and under 1 ms more");
        assert!(!is_one_off(5_000_000, 1_000_000), "5x only");
        let mut l = vec![
            (0, 50_000_000, 0),
            (60_000_000, 2_000_000, 1),
            (70_000_000, 2_100_000, 2),
        ];
        assert_eq!(slow_first(&mut l), Some((0, 2_000_000)));
        let mut one = vec![(0, 50_000_000, 0)];
        assert_eq!(slow_first(&mut one), None, "nothing later to compare with");
        // The outer call of a nested frame holds the later ones: not a one-off.
        let mut nested = vec![(0, 50_000_000, 0), (10, 20_000, 1), (30_000, 20_000, 2)];
        assert_eq!(slow_first(&mut nested), None);
    }
}
