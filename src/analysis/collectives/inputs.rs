//! One rank's collectives, from its prepared rank ([`RankPrep`]): each communication kernel (or, on a
//! rank without any, each Gloo host op) with what it is, how to match it across ranks, when it ran,
//! the parts of it no compute hides and what the rank did just before it. Plain serde data: the
//! cross-rank reduce ([`super::matching`]) reads only these, so ranks split across workers or
//! analysed one by one (`merge`) give the same result as one process.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::host_comms::{covered, uncovered, CommArgColumns, CommArgs, HostComms, HostMarks};
use super::kind::{CollectiveKind, CollectiveLibrary};
use crate::analysis::gpu::{KernelType, RankPrep};
use crate::analysis::intervals::union;
use crate::analysis::names::{collective_kind_of, collective_library_of, NameClass};

crate::stable_enum! {
    /// Where in the training step a collective was issued.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default)]
    #[serde(rename_all = "snake_case")]
    pub enum StepPhase {
        /// Before the step's backward pass (or in a step without one: inference).
        #[default]
        Forward,
        /// Inside the backward pass (autograd's engine).
        Backward,
        /// After the backward pass (optimizer, a gradient all-reduce issued at the end).
        AfterBackward,
    }
}

/// What the rank did between the end of its previous collective (or the start of its step) and
/// this collective's arrival: the late-rank causes compare these across ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Lead {
    /// Start of the stretch (ns).
    pub since: i64,
    /// Device time of compute kernels, copies and sets in the stretch, ns.
    pub busy_ns: i64,
    /// Host DataLoader time in the stretch while the device was idle, ns.
    pub loader_ns: i64,
}

/// One collective on one rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CollectiveOp {
    pub kind: CollectiveKind,
    pub library: CollectiveLibrary,
    /// Index into [`CollectiveInputs::names`] of the kernel's (or host op's) name.
    pub name: u32,
    /// The process group (`Process Group Name`), or `stream N` when the args do not say.
    pub group: String,
    /// `Seq` of the process group, when the args have it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<i64>,
    /// The `ProfilerStep#N` it was issued in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<i64>,
    /// Position among the rank's collectives of the same group, kind and step (start order).
    pub ordinal: u32,
    pub stream: i64,
    /// Arrival: the kernel's start, ns.
    pub start: i64,
    pub end: i64,
    /// Message size (nccl-tests' "size": the larger of input and output), bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_size: Option<u32>,
    pub phase: StepPhase,
    /// Pieces of `[start, end)` during which the rank runs no compute kernel.
    pub exposed: Vec<(i64, i64)>,
    pub lead: Lead,
    /// The device's own wait tasks inside it (Ascend HCCL's `Notify_Wait`: the collective waiting
    /// for a peer's signal, [`NameClass::DEVICE_WAIT`]), their union, ns: its waiting part as the
    /// device recorded it, on one rank too.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub device_wait_ns: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// What one rank contributes to the collectives analysis.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CollectiveInputs {
    pub rank: i64,
    /// Kernel and host-op names the ops refer to.
    pub names: Vec<String>,
    /// Sorted by start.
    pub ops: Vec<CollectiveOp>,
    /// Analysed steps of the rank.
    pub steps: u64,
    /// The rank's device window (first start to last end of its device rows), ns.
    pub window_ns: i64,
    /// `distributedInfo.world_size`, when the trace has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world_size: Option<u32>,
}

/// One rank's collectives from its prepared rows.
pub fn collective_inputs(rank: i64, prep: &RankPrep) -> CollectiveInputs {
    let t = prep.table;
    let comms = HostComms::of(prep);
    let marks = HostMarks::of(prep);
    let cols = CommArgColumns::of(t);
    let compute = union(
        prep.dev
            .iter()
            .filter(|d| d.ktype != KernelType::Communication)
            .map(|d| (d.ts, d.end))
            .collect(),
    );
    let steps: Vec<(i64, i64, i64)> = prep
        .steps
        .iter()
        .filter(|s| prep.kept_steps.binary_search(&s.step).is_ok())
        .map(|s| (s.ts, s.end, s.step))
        .collect();
    // A collective's wait tasks are its waiting part, not collectives of their own.
    let is_wait = |name: u32| prep.names.of_name(name).has(NameClass::DEVICE_WAIT);
    let waits = union(
        prep.dev
            .iter()
            .filter(|d| d.ktype == KernelType::Communication && is_wait(d.name))
            .map(|d| (d.ts, d.end))
            .collect(),
    );
    // (row, start, end, launch time, launching thread) of every collective.
    let mut rows: Vec<(u32, i64, i64, i64, Option<u32>)> = prep
        .dev
        .iter()
        .filter(|d| d.ktype == KernelType::Communication && !is_wait(d.name))
        .map(|d| {
            let launch = d
                .launch
                .and_then(|r| prep.span(r as usize).map(|s| (s.0, t.tid_id(r as usize))));
            (
                d.row,
                d.ts,
                d.end,
                launch.map_or(d.ts, |l| l.0),
                launch.map(|l| l.1),
            )
        })
        .collect();
    if rows.is_empty() {
        rows = comms
            .gloo_ops(t)
            .into_iter()
            .filter(|&(_, ts, _)| ts >= prep.window.0 && ts < prep.window.1)
            .map(|(r, ts, end)| (r, ts, end, ts, Some(t.tid_id(r as usize))))
            .collect();
    }
    let mut out = CollectiveInputs {
        rank,
        steps: steps.len() as u64,
        world_size: t.metadata.world_size.and_then(|w| u32::try_from(w).ok()),
        window_ns: match (prep.dev.first(), prep.dev.iter().map(|d| d.end).max()) {
            (Some(f), Some(e)) => e - f.ts,
            _ => 0,
        },
        ..Default::default()
    };
    let mut name_ids: BTreeMap<u32, u32> = BTreeMap::new();
    let mut prev_end: Option<i64> = None;
    for (row, start, end, launch_ts, tid) in rows {
        let r = row as usize;
        let host_rows = tid.map_or_else(Vec::new, |tid| comms.containing(tid, launch_ts));
        let args = host_rows
            .iter()
            .fold(cols.at(r), |a, &h| a.or(cols.at(h as usize)));
        let name = t.name_at(r);
        let kind = kind_of(&args, name, &host_rows, t);
        let step = steps
            .iter()
            .rev()
            .find(|s| launch_ts >= s.0 && launch_ts < s.1)
            .map(|s| (s.2, s.0));
        let since = prev_end
            .filter(|&p| p <= start)
            .into_iter()
            .chain(step.map(|s| s.1))
            .max()
            .unwrap_or(start)
            .min(start);
        let busy_ns = covered(&compute, since, start);
        let idle = uncovered(&compute, since, start);
        let loader_ns = idle
            .iter()
            .map(|&(s, e)| covered(&marks.data_loader, s, e))
            .sum();
        prev_end = Some(prev_end.map_or(end, |p| p.max(end)));
        let next = name_ids.len() as u32;
        let name_id = *name_ids.entry(t.name_id(r)).or_insert_with(|| {
            out.names.push(name.to_string());
            next
        });
        let stream = t.stream_at(r).unwrap_or(-1);
        out.ops.push(CollectiveOp {
            kind,
            library: collective_library_of(name),
            name: name_id,
            group: args
                .group
                .clone()
                .unwrap_or_else(|| match t.kind_at(r).is_gpu_activity() {
                    true => format!("stream {stream}"),
                    false => format!("thread {}", t.tid_at(r)),
                }),
            seq: args.seq,
            step: step.map(|s| s.0),
            ordinal: 0,
            stream,
            start,
            end: end.max(start),
            bytes: args.bytes,
            group_size: args.group_size,
            phase: phase_of(
                launch_ts,
                step.map(|s| (s.1, steps_end(&steps, s.0))),
                &marks.backward,
            ),
            exposed: uncovered(&compute, start, end.max(start)),
            lead: Lead {
                since,
                busy_ns,
                loader_ns,
            },
            device_wait_ns: covered(&waits, start, end.max(start)),
        });
    }
    number_ops(&mut out.ops);
    out
}

/// The end of step `n` among `(start, end, step)` spans.
fn steps_end(steps: &[(i64, i64, i64)], n: i64) -> i64 {
    steps.iter().find(|s| s.2 == n).map_or(i64::MAX, |s| s.1)
}

/// The operation: the args' `Collective name`, else the innermost host op that names one
/// (`nccl:all_to_all` around a `SendRecv` kernel is an all-to-all), else the kernel's name.
fn kind_of(
    args: &CommArgs,
    name: &str,
    host_rows: &[u32],
    t: &crate::table::TraceTable,
) -> CollectiveKind {
    args.kind
        .or_else(|| {
            host_rows
                .iter()
                .find_map(|&h| collective_kind_of(t.name_at(h as usize)))
        })
        .or_else(|| collective_kind_of(name))
        .unwrap_or(CollectiveKind::Other)
}

/// The phase of a launch at `t` in a step `[s, e)` (the whole trace without steps), given the
/// backward pass's host intervals.
fn phase_of(t: i64, step: Option<(i64, i64)>, backward: &[(i64, i64)]) -> StepPhase {
    if covered(backward, t, t + 1) > 0 {
        return StepPhase::Backward;
    }
    let (s, e) = step.unwrap_or((i64::MIN, i64::MAX));
    let before = backward.iter().any(|b| b.1 <= t && b.1 > s);
    let after = backward.iter().any(|b| b.0 > t && b.0 < e);
    if before && !after {
        StepPhase::AfterBackward
    } else {
        StepPhase::Forward
    }
}

/// Sets each op's ordinal: its position among the ops of its group, kind and step, by start.
fn number_ops(ops: &mut [CollectiveOp]) {
    crate::sort::sort_by_key(ops, |o| (o.start, o.end));
    let mut next: BTreeMap<(String, CollectiveKind, Option<i64>), u32> = BTreeMap::new();
    for o in ops.iter_mut() {
        let n = next.entry((o.group.clone(), o.kind, o.step)).or_default();
        o.ordinal = *n;
        *n += 1;
    }
}
