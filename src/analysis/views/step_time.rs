//! Step time (TensorBoard's overview): each ProfilerStep's time split into what the GPU and the
//! host were doing, one category per instant by priority: kernel > memcpy > memset >
//! communication > runtime > DataLoader > CPU exec > other.
//!
//! A step's window runs from its host annotation's start (or the previous window's end, when the
//! GPU was still busy with the previous step) to the later of the annotation's end and the end of
//! the last device operation launched from inside it. Kernels count as communication when their
//! name is a collective's ([`NameClass::COLLECTIVE`]). Without steps, one window covers the trace.

use serde::{Deserialize, Serialize};

use super::{us, HostOps};
use crate::analysis::callstack::NONE;
use crate::analysis::gpu::step_spans;
use crate::analysis::names::{is_data_loader_op, NameClass, NameClasses};
use crate::analysis::options::Mode;
use crate::table::{EventKind, TraceTable};

crate::stable_enum! {
    /// What an instant of a step was spent on, in priority order.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum StepCategory {
        Kernel,
        Memcpy,
        Memset,
        Communication,
        Runtime,
        DataLoader,
        CpuExec,
        Other,
    }
}

/// One step (or the whole trace) split by category.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepTime {
    /// The ProfilerStep number; `None` for the whole trace or the average.
    pub step: Option<i64>,
    pub start_us: f64,
    pub end_us: f64,
    pub total_us: f64,
    /// µs per category, in [`StepCategory::ALL`] order; they sum to `total_us`.
    pub parts: Vec<(StepCategory, f64)>,
}

/// The steps of one rank and their average.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepTimeResult {
    pub steps: Vec<StepTime>,
    /// The mean of the steps (absent with fewer than two).
    pub average: Option<StepTime>,
    /// Whether the trace had ProfilerStep annotations (otherwise one window covers the trace).
    pub has_steps: bool,
}

/// The category of a row, if it has one.
fn category_of(t: &TraceTable, classes: &NameClasses, r: usize) -> Option<StepCategory> {
    let class = classes.of_row(t, r);
    Some(match t.kind_at(r) {
        EventKind::Kernel | EventKind::AcceleratorOp if class.has(NameClass::COLLECTIVE) => {
            StepCategory::Communication
        }
        EventKind::Kernel | EventKind::AcceleratorOp => StepCategory::Kernel,
        EventKind::Memcpy => StepCategory::Memcpy,
        EventKind::Memset => StepCategory::Memset,
        EventKind::Runtime | EventKind::Driver => StepCategory::Runtime,
        k if is_data_loader_op(k, class) => StepCategory::DataLoader,
        EventKind::CpuOp => StepCategory::CpuExec,
        _ => return None,
    })
}

/// The timeline cut into pieces, each with the category of highest priority active in it.
fn segments(t: &TraceTable, h: &HostOps) -> Vec<(i64, i64, StepCategory)> {
    let classes = &h.names;
    let mut edges: Vec<(i64, i32, usize)> = Vec::new();
    for r in (0..t.len()).filter(|&r| h.frame.member[r]) {
        let (s, e) = (h.frame.ts[r], h.frame.end[r]);
        if e <= s {
            continue;
        }
        if let Some(c) = category_of(t, classes, r) {
            edges.push((s, 1, c as usize));
            edges.push((e, -1, c as usize));
        }
    }
    crate::sort::sort(&mut edges);
    let mut active = [0i32; 8];
    let mut out: Vec<(i64, i64, StepCategory)> = Vec::new();
    let mut last: Option<i64> = None;
    for (x, delta, c) in edges {
        if let Some(l) = last.filter(|&l| x > l) {
            let cat = (0..7)
                .find(|&i| active[i] > 0)
                .map_or(StepCategory::Other, |i| StepCategory::ALL[i]);
            match out.last_mut() {
                Some(p) if p.1 == l && p.2 == cat => p.1 = x,
                _ => out.push((l, x, cat)),
            }
        }
        active[c] += delta;
        last = Some(x);
    }
    out
}

/// Step windows: (step, start, end) ns, in time order and not overlapping.
fn windows(t: &TraceTable, h: &HostOps) -> Vec<(Option<i64>, i64, i64)> {
    let mut steps = step_spans(t, Mode::Exact);
    if h.frame.is_filtered() {
        // Over chosen steps ([`HostOps::within`]): the steps whose annotation the window keeps.
        steps.retain(|s| h.frame.keeps(s.row as usize));
    }
    if steps.is_empty() {
        let members = (0..t.len()).filter(|&r| h.frame.member[r]);
        let lo = members.clone().map(|r| h.frame.ts[r]).min();
        let hi = members.map(|r| h.frame.end[r]).max();
        return lo
            .zip(hi)
            .map(|(a, b)| vec![(None, a, b)])
            .unwrap_or_default();
    }
    // The end of the last device operation launched from inside each step's host span.
    let mut device_end = vec![i64::MIN; steps.len()];
    for d in (0..t.len()).filter(|&d| h.frame.device[d] && h.launcher[d] != NONE) {
        let launch_ts = h.frame.ts[h.launcher[d] as usize];
        let i = steps.partition_point(|s| s.ts <= launch_ts);
        if i > 0 && launch_ts < steps[i - 1].end {
            device_end[i - 1] = device_end[i - 1].max(h.frame.end[d]);
        }
    }
    let mut out: Vec<(Option<i64>, i64, i64)> = Vec::new();
    let mut prev_end = i64::MIN;
    for (s, dev_end) in steps.iter().zip(device_end) {
        let start = s.ts.max(prev_end);
        let end = s.end.max(dev_end);
        if end > start {
            out.push((Some(s.step), start, end));
            prev_end = end;
        }
    }
    out
}

/// The time of each category within `[start, end)`, from segments sorted by start.
fn split(segs: &[(i64, i64, StepCategory)], start: i64, end: i64) -> Vec<(StepCategory, f64)> {
    let mut ns = [0i64; 8];
    let first = segs.partition_point(|s| s.1 <= start);
    for s in segs[first..].iter().take_while(|s| s.0 < end) {
        let len = s.1.min(end) - s.0.max(start);
        if len > 0 {
            ns[s.2 as usize] += len;
        }
    }
    let covered: i64 = ns.iter().sum();
    ns[StepCategory::Other as usize] += (end - start) - covered;
    StepCategory::ALL
        .iter()
        .map(|&c| (c, us(ns[c as usize])))
        .collect()
}

fn average(steps: &[StepTime]) -> Option<StepTime> {
    if steps.len() < 2 {
        return None;
    }
    let k = steps.len() as f64;
    let parts = StepCategory::ALL
        .iter()
        .enumerate()
        .map(|(i, &c)| (c, steps.iter().map(|s| s.parts[i].1).sum::<f64>() / k))
        .collect();
    Some(StepTime {
        step: None,
        start_us: steps[0].start_us,
        end_us: steps[steps.len() - 1].end_us,
        total_us: steps.iter().map(|s| s.total_us).sum::<f64>() / k,
        parts,
    })
}

/// Step time of one table.
pub fn step_time(t: &TraceTable) -> StepTimeResult {
    step_time_in(t, &HostOps::new(t))
}

/// Step time of one table whose call stacks are built.
pub fn step_time_in(t: &TraceTable, h: &HostOps) -> StepTimeResult {
    let segs = segments(t, h);
    let wins = windows(t, h);
    let has_steps = wins.first().is_some_and(|w| w.0.is_some());
    let steps: Vec<StepTime> = wins
        .into_iter()
        .map(|(step, start, end)| StepTime {
            step,
            start_us: us(start),
            end_us: us(end),
            total_us: us(end - start),
            parts: split(&segs, start, end),
        })
        .collect();
    StepTimeResult {
        average: average(&steps),
        steps,
        has_steps,
    }
}
