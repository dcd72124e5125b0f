//! Exclusive idle attribution: every idle interval of a rank's GPU window gets exactly one cause, so the
//! causes sum to the idle total and no two findings claim the same time.
//!
//! A gap of the merged device timeline (every stream) is cut into pieces; each piece goes to the first
//! cause, in this order of precedence, whose host intervals cover it:
//! 1. `graph_capture`: a stream capture is open (its launches are recorded, not run);
//! 2. `warmup`: set-up calls, cuDNN/MIOpen algorithm search or torch.compile compilation run;
//! 3. `startup`: one-off work runs on the host ([`crate::analysis::one_off`]): a first call many
//!    times slower than its later ones, the first launch of a kernel function that loads its module,
//!    code loading and library handle creation; paid once, never dispatch or launch overhead;
//! 3. `data_loading`: a DataLoader op runs on the host;
//! 4. `synchronization`: a synchronising call blocks the host, and after it until the GPU has work
//!    again (the queue it drained is refilled only then); a sync while the GPU stays busy costs nothing;
//! 5. `blocked_wait`: a call that waits for the device (synchronize, blocking copy) blocks the host
//!    while the GPU runs nothing for at least half of it: nothing was queued to drain, so the host
//!    waits for work this trace does not hold (launched before the profiler started, another
//!    process or device);
//! 5. `communication_wait`: a CPU-side communication call (c10d, barrier, gloo) runs;
//! 6. `host_compute`: the launching thread is inside an operator that launched nothing and runs
//!    long ([`super::host::host_compute_ops`]): CPU compute on CPU tensors, not dispatch;
//! 6. `between_steps`: the host is outside every `ProfilerStep` (only when the trace has steps);
//! 7. `dispatch_overhead`: the work that ends the gap was launched after the gap began: the host was
//!    still dispatching (Python, ATen, launch calls) while the GPU had nothing queued;
//!    a gap whose dispatch part is long ([`STALL_MIN_NS`]) and far above the rank's median
//!    dispatch gap ([`STALL_FACTOR`]) is a `host_stall` instead: the host did something else for a
//!    while (scheduling, preparing inputs, Python work between forwards), not launch overhead;
//! 8. `device_side`: the work that ends the gap was already queued: a gap on the GPU side (stream
//!    dependencies, launch latency, gaps inside a graph replay), not host wait;
//! 9. `other`: the launch of the work that ends the gap is not in the trace.
//!
//! Each cause also names the CPU ops that occupied the host during its pieces: for every thread that
//! issues or feeds the device's work (it makes runtime calls or runs DataLoader ops), the innermost op
//! (or Python function, runtime call) at each instant, summed by name. A frame that only waits
//! (`select`, a pipe's `recv`, a lock's `acquire`, a condition's `wait`, `sleep`, a queue's `get`:
//! [`crate::analysis::names::is_waiting_frame`]) is never named: that thread did no work then.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analysis::gpu::RankPrep;
use crate::analysis::intervals::{covered, intersect, length, subtract, union, Intervals};
use crate::analysis::names::{is_data_loader_op, NameClass, NameClasses};
use crate::table::{EventKind, TraceTable};

crate::stable_enum! {
    /// Why the GPU was idle; the order is the precedence (see the module doc).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum IdleCause {
        GraphCapture,
        Warmup,
        Startup,
        DataLoading,
        Synchronization,
        BlockedWait,
        CommunicationWait,
        HostCompute,
        BetweenSteps,
        DispatchOverhead,
        HostStall,
        DeviceSide,
        Other,
    }
}

impl IdleCause {
    /// Whether the trace names what the GPU waited for: a synchronisation, the DataLoader, a
    /// communication call. Enough of it makes a small trace diagnosable ([`super::gate`]).
    pub fn is_clear(self) -> bool {
        matches!(
            self,
            IdleCause::Synchronization | IdleCause::DataLoading | IdleCause::CommunicationWait
        )
    }

    /// What the GPU was waiting for, in a few words.
    pub fn label(self) -> &'static str {
        match self {
            IdleCause::GraphCapture => "graph capture (launches recorded, not run)",
            IdleCause::Warmup => "warm-up (set-up, algorithm search, compilation)",
            IdleCause::Startup => "one-off start-up (first calls, module loading, library set-up)",
            IdleCause::DataLoading => "waiting for the DataLoader",
            IdleCause::Synchronization => {
                "synchronisation (host waits for the GPU, then refills it)"
            }
            IdleCause::BlockedWait => {
                "host blocked in a wait with nothing queued (work outside the trace)"
            }
            IdleCause::CommunicationWait => "waiting in CPU-side communication calls",
            IdleCause::HostCompute => {
                "host computing on CPU tensors (operators that launched nothing)"
            }
            IdleCause::BetweenSteps => "host work between steps",
            IdleCause::DispatchOverhead => "CPU dispatch and kernel launch inside steps",
            IdleCause::HostStall => "host stalls (few long gaps with nothing launched)",
            IdleCause::DeviceSide => "GPU-side gaps with work already queued",
            IdleCause::Other => "unexplained (launch not in the trace)",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// One CPU op and the time it occupied the host during a cause's idle pieces.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OpTime {
    pub name: String,
    pub time_us: f64,
}

/// One cause's share of the idle time (all ranks of the analysed windows together).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IdleShare {
    pub cause: IdleCause,
    pub time_us: f64,
    /// Share of the analysed GPU window (summed over ranks), percent.
    pub pct_of_window: f64,
    /// The ops that occupied the host meanwhile, most time first (at most [`TOP_OPS`]).
    pub top_ops: Vec<OpTime>,
}

/// Ops listed per cause.
pub const TOP_OPS: usize = 5;

/// The host intervals the causes are read from (sorted, merged), for one rank.
#[derive(Clone, Debug, Default)]
pub struct CauseIntervals {
    pub captures: Intervals,
    pub warmup: Intervals,
    /// Where the host runs one-off work ([`super::host::HostTimeline::startup`]).
    pub startup: Intervals,
    pub data_loader: Intervals,
    /// Where synchronising calls block the host.
    pub syncs: Intervals,
    /// Where calls that wait for the device (the syncs but device frees) block the host.
    pub waits: Intervals,
    pub comm_ops: Intervals,
    /// Where a launching thread computes on the CPU ([`super::host::HostTimeline::host_compute`]).
    pub host_compute: Intervals,
    /// Host `ProfilerStep` spans; empty when the trace has none.
    pub steps: Intervals,
}

/// Host time per (cause, op name), ns.
pub type OpTimes = BTreeMap<(IdleCause, String), i64>;

/// One rank's attribution, ns, before it is merged with the other ranks'. As data (a rank's part of
/// the report handed between workers) it leaves out the pieces, which [`merge`] does not read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankAttribution {
    /// GPU window: first start to last end of the selected device rows.
    pub window_ns: i64,
    pub idle_ns: i64,
    pub by_cause_ns: [i64; IdleCause::ALL.len()],
    /// Gaps ended by work launched after the gap began (the host was late), host stalls left out.
    pub dispatch_gaps: u64,
    /// The dispatch idle of every gap ended by work launched late (host stalls included), ns.
    pub dispatch_gap_ns: Vec<i64>,
    /// How many of those gaps are host stalls.
    pub stall_gaps: u64,
    /// (cause, op name) → host time during that cause's pieces.
    #[serde(with = "op_times_as_list")]
    pub op_ns: OpTimes,
    /// The attributed pieces, by start: (start, end, cause).
    #[serde(skip)]
    pub pieces: Vec<(i64, i64, IdleCause)>,
}

/// [`OpTimes`] as a list of `[cause, name, ns]` (JSON map keys are strings only).
mod op_times_as_list {
    use super::{IdleCause, OpTimes};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(m: &OpTimes, s: S) -> Result<S::Ok, S::Error> {
        let list: Vec<(IdleCause, &str, i64)> =
            m.iter().map(|((c, n), t)| (*c, n.as_str(), *t)).collect();
        list.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<OpTimes, D::Error> {
        let list: Vec<(IdleCause, String, i64)> = Vec::deserialize(d)?;
        Ok(crate::sort::map_of(
            list.into_iter().map(|(c, n, t)| ((c, n), t)),
        ))
    }
}

/// How the work that ends a gap was launched.
#[derive(Clone, Copy, PartialEq, Eq)]
enum GapEnd {
    LaunchedLate,
    Queued,
    Unknown,
}

/// Attributes the idle time of one rank's selected device rows (`prep.dev`).
pub fn attribute_rank(prep: &RankPrep, causes: &CauseIntervals) -> RankAttribution {
    let mut out = RankAttribution::default();
    let (Some(lo), Some(hi)) = (
        prep.dev.iter().map(|d| d.ts).min(),
        prep.dev.iter().map(|d| d.end).max(),
    ) else {
        return out;
    };
    let busy = union(prep.dev.iter().map(|d| (d.ts, d.end.max(d.ts))).collect());
    let gaps = subtract(&[(lo, hi)], &busy);
    out.window_ns = hi - lo;
    out.idle_ns = length(&gaps);
    let blocked = blocked_waits(&busy, &causes.waits);
    let sync_idle = sync_caused(&busy, &subtract(&causes.syncs, &blocked));
    let outside_steps = if causes.steps.is_empty() {
        Vec::new()
    } else {
        subtract(&[(lo, hi)], &causes.steps)
    };
    let ordered: [(IdleCause, &Intervals); 9] = [
        (IdleCause::GraphCapture, &causes.captures),
        (IdleCause::Warmup, &causes.warmup),
        (IdleCause::Startup, &causes.startup),
        (IdleCause::DataLoading, &causes.data_loader),
        (IdleCause::Synchronization, &sync_idle),
        (IdleCause::BlockedWait, &blocked),
        (IdleCause::CommunicationWait, &causes.comm_ops),
        (IdleCause::HostCompute, &causes.host_compute),
        (IdleCause::BetweenSteps, &outside_steps),
    ];
    let mut rest = gaps.clone();
    for (cause, cover) in ordered {
        let taken = intersect(&rest, cover);
        rest = subtract(&rest, cover);
        out.pieces.extend(taken.iter().map(|&(s, e)| (s, e, cause)));
    }
    let ends = gap_ends(prep, &gaps);
    let of_gap = |s: i64| gaps.partition_point(|g| g.1 <= s).min(gaps.len() - 1);
    let mut late_ns = vec![0i64; gaps.len()];
    for &(s, e) in &rest {
        if ends[of_gap(s)] == GapEnd::LaunchedLate {
            late_ns[of_gap(s)] += e - s;
        }
    }
    let late: Vec<i64> = late_ns.iter().copied().filter(|&n| n > 0).collect();
    let median = median_ns(&late);
    out.stall_gaps = late.iter().filter(|&&n| is_stall(n, median)).count() as u64;
    out.dispatch_gaps = late.len() as u64 - out.stall_gaps;
    out.dispatch_gap_ns = late;
    for (s, e) in rest {
        let g = of_gap(s);
        let cause = match ends[g] {
            GapEnd::LaunchedLate if is_stall(late_ns[g], median) => IdleCause::HostStall,
            GapEnd::LaunchedLate => IdleCause::DispatchOverhead,
            GapEnd::Queued => IdleCause::DeviceSide,
            GapEnd::Unknown => IdleCause::Other,
        };
        out.pieces.push((s, e, cause));
    }
    crate::sort::sort(&mut out.pieces);
    for &(s, e, c) in &out.pieces {
        out.by_cause_ns[c.index()] += e - s;
    }
    out.op_ns = host_ops_during(prep.table, &prep.names, &out.pieces);
    out
}

/// A dispatch gap this long (ns) is not one launch's latency: a kernel launch costs 5-10 µs and an
/// eager op's dispatch tens of µs...
pub const STALL_MIN_NS: i64 = 1_000_000;
/// ...and when it is also this many times the rank's median dispatch gap, the host did something
/// else for a while: a host stall, not launch overhead.
pub const STALL_FACTOR: i64 = 10;

/// Whether a gap's dispatch idle (ns) is a host stall against the median dispatch gap.
pub fn is_stall(ns: i64, median_ns: i64) -> bool {
    ns >= STALL_MIN_NS && ns >= STALL_FACTOR * median_ns
}

/// The lower middle of some durations (0 when none).
pub fn median_ns(v: &[i64]) -> i64 {
    let mut v = v.to_vec();
    crate::sort::sort(&mut v);
    v.get(v.len().saturating_sub(1) / 2).copied().unwrap_or(0)
}

/// The waits during which the GPU ran nothing for at least half of the time: nothing queued was
/// drained, the host waited for work outside the trace.
fn blocked_waits(busy: &[(i64, i64)], waits: &[(i64, i64)]) -> Intervals {
    waits
        .iter()
        .filter(|&&(s, e)| e > s && 2 * covered(busy, s, e) <= e - s)
        .copied()
        .collect()
}

/// The GPU idle a sync can cause: while it blocks, and after it until the next device work starts
/// when the GPU had drained by its end. A sync that finds the GPU idle drains nothing: it causes none.
fn sync_caused(busy: &[(i64, i64)], syncs: &[(i64, i64)]) -> Intervals {
    union(
        syncs
            .iter()
            .filter(|&&(s, e)| {
                let k = busy.partition_point(|b| b.1 <= s);
                k < busy.len() && busy[k].0 < e.max(s + 1)
            })
            .map(|&(s, e)| {
                let k = busy.partition_point(|b| b.0 <= e);
                let still_busy = k > 0 && busy[k - 1].1 > e;
                let refilled = if still_busy {
                    e
                } else {
                    busy.get(k).map_or(e, |b| b.0)
                };
                (s, refilled)
            })
            .collect(),
    )
}

/// For each gap: whether the device work starting at its end was launched after the gap began.
fn gap_ends(prep: &RankPrep, gaps: &[(i64, i64)]) -> Vec<GapEnd> {
    gaps.iter()
        .map(|&(g0, g1)| {
            let first = prep.dev.partition_point(|d| d.ts < g1);
            let mut end = GapEnd::Unknown;
            for d in prep.dev[first..].iter().take_while(|d| d.ts == g1) {
                match d.launch.and_then(|r| prep.span(r as usize)) {
                    Some((launched, _)) if launched > g0 => return GapEnd::LaunchedLate,
                    Some(_) => end = GapEnd::Queued,
                    None => {}
                }
            }
            end
        })
        .collect()
}

/// Host events that can be "the op the host was in": work, not labels (user annotations such as
/// `## backward ##` or `ProfilerStep#3` wrap work and are left out).
fn is_host_op(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::CpuOp | EventKind::PythonFunction | EventKind::Runtime | EventKind::Driver
    )
}

/// Per (cause, name): how long the innermost host op of each thread overlapped the cause's pieces.
fn host_ops_during(
    t: &TraceTable,
    classes: &NameClasses,
    pieces: &[(i64, i64, IdleCause)],
) -> OpTimes {
    let mut by_id: BTreeMap<(IdleCause, u32), i64> = BTreeMap::new();
    if pieces.is_empty() {
        return BTreeMap::new();
    }
    let workers = working_threads(t, classes);
    let (lo, hi) = (pieces[0].0, pieces.iter().map(|p| p.1).max().unwrap_or(0));
    let mut threads: BTreeMap<(u32, u32), Vec<(i64, i64, u32)>> = BTreeMap::new();
    for row in 0..t.len() {
        if !is_host_op(t.kind_at(row)) {
            continue;
        }
        let (Some(ts), Some(d)) = (t.ts_at(row), t.dur_at(row)) else {
            continue;
        };
        let end = ts + d.max(0);
        // Only ops that overlap an idle piece can be innermost during one (their ancestors overlap it
        // too, and a dropped op only hides its parent outside the pieces).
        let k = pieces.partition_point(|p| p.1 <= ts);
        if end <= lo || ts >= hi || k >= pieces.len() || pieces[k].0 >= end.max(ts + 1) {
            continue;
        }
        let thread = (t.pid.keys().value(row), t.tid.keys().value(row));
        if workers.as_ref().is_some_and(|w| !w.contains(&thread)) {
            continue;
        }
        threads
            .entry(thread)
            .or_default()
            .push((ts, end, t.name_id(row)));
    }
    for ops in threads.values_mut() {
        ops.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        for_each_innermost(ops, |s, e, name| {
            if classes.of_name(name).has(NameClass::WAITING) {
                return;
            }
            let first = pieces.partition_point(|p| p.1 <= s);
            for p in pieces[first..].iter().take_while(|p| p.0 < e) {
                let overlap = e.min(p.1) - s.max(p.0);
                if overlap > 0 {
                    *by_id.entry((p.2, name)).or_insert(0) += overlap;
                }
            }
        });
    }
    by_id
        .into_iter()
        .fold(BTreeMap::new(), |mut acc, ((cause, id), ns)| {
            *acc.entry((cause, t.name_of_id(id).to_string()))
                .or_insert(0) += ns;
            acc
        })
}

/// The threads (pid, tid keys) that issue or feed the device's work: they make runtime or driver
/// calls, or run DataLoader ops. `None` when no thread does (a trace without runtime events): then
/// every thread counts.
fn working_threads(
    t: &TraceTable,
    classes: &NameClasses,
) -> Option<std::collections::BTreeSet<(u32, u32)>> {
    let mut out = std::collections::BTreeSet::new();
    for row in 0..t.len() {
        let kind = t.kind_at(row);
        let feeds = matches!(kind, EventKind::Runtime | EventKind::Driver)
            || is_data_loader_op(kind, classes.of_row(t, row));
        if feeds {
            out.insert((t.pid.keys().value(row), t.tid.keys().value(row)));
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Calls `f(start, end, name)` for each stretch of time where `name` is the innermost op of `ops`
/// (sorted by start, longest first at equal starts; ops nest or follow each other).
fn for_each_innermost(ops: &[(i64, i64, u32)], mut f: impl FnMut(i64, i64, u32)) {
    let mut stack: Vec<(i64, u32)> = Vec::new();
    let mut cursor = i64::MIN;
    for &(s, e, name) in ops {
        close_until(&mut stack, &mut cursor, s, &mut f);
        // An op that outlives its parent is cut at the parent's end (overlap, not nesting).
        let e = stack.last().map_or(e, |&(pe, _)| e.min(pe));
        if e > s {
            stack.push((e, name));
        }
    }
    close_until(&mut stack, &mut cursor, i64::MAX, &mut f);
}

/// Emits the innermost stretches up to time `t`: pops every op that ended by then.
fn close_until(
    stack: &mut Vec<(i64, u32)>,
    cursor: &mut i64,
    t: i64,
    f: &mut impl FnMut(i64, i64, u32),
) {
    while let Some(&(end, name)) = stack.last() {
        if end > t {
            break;
        }
        if end > *cursor {
            f(*cursor, end, name);
            *cursor = end;
        }
        stack.pop();
    }
    if let Some(&(_, name)) = stack.last() {
        if t > *cursor {
            f(*cursor, t, name);
        }
    }
    *cursor = (*cursor).max(t);
}

/// Merges ranks' attributions into the report's table, causes with no time left out.
pub fn merge(ranks: &[RankAttribution]) -> Vec<IdleShare> {
    let window: i64 = ranks.iter().map(|r| r.window_ns).sum();
    IdleCause::ALL
        .iter()
        .filter_map(|&cause| {
            let ns: i64 = ranks.iter().map(|r| r.by_cause_ns[cause.index()]).sum();
            if ns <= 0 {
                return None;
            }
            let mut ops: BTreeMap<&str, i64> = BTreeMap::new();
            for r in ranks {
                for ((c, name), t) in &r.op_ns {
                    if *c == cause {
                        *ops.entry(name.as_str()).or_insert(0) += t;
                    }
                }
            }
            let mut ops: Vec<(&str, i64)> = ops.into_iter().collect();
            crate::sort::sort_by(&mut ops, |a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            Some(IdleShare {
                cause,
                time_us: ns as f64 / 1000.0,
                pct_of_window: if window > 0 {
                    100.0 * ns as f64 / window as f64
                } else {
                    0.0
                },
                top_ops: ops
                    .into_iter()
                    .take(TOP_OPS)
                    .map(|(name, t)| OpTime {
                        name: name.to_string(),
                        time_us: t as f64 / 1000.0,
                    })
                    .collect(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn innermost_ops_tile_the_time() {
        // a: 0-100 containing b: 10-40 (containing c: 20-30) and d: 50-60; e: 120-130 alone.
        let ops = [
            (0, 100, 1),
            (10, 40, 2),
            (20, 30, 3),
            (50, 60, 4),
            (120, 130, 5),
        ];
        let mut got = Vec::new();
        for_each_innermost(&ops, |s, e, n| got.push((s, e, n)));
        assert_eq!(
            got,
            vec![
                (0, 10, 1),
                (10, 20, 2),
                (20, 30, 3),
                (30, 40, 2),
                (40, 50, 1),
                (50, 60, 4),
                (60, 100, 1),
                (120, 130, 5)
            ]
        );
    }

    #[test]
    fn a_sync_causes_the_idle_until_the_gpu_has_work_again() {
        let busy = [(0, 100), (150, 200), (300, 400)];
        assert_eq!(sync_caused(&busy, &[(40, 100)]), vec![(40, 150)]);
        // Returned while the GPU was still busy: only the blocked time, which is not idle.
        assert_eq!(sync_caused(&busy, &[(10, 60)]), vec![(10, 60)]);
        // Called while the GPU is already idle: it drained nothing.
        assert_eq!(sync_caused(&busy, &[(110, 112)]), vec![]);
    }
}
