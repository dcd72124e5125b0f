//! Stragglers across ranks: the ranks that reach the most variable collective last, step after step.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::gpu::{mean_std, KernelType, RankPrep, StepSpan};
use super::names::is_nccl_kernel_name;
use super::options::{AnalysisOptions, Mode};
use crate::table::{EventKind, TraceSet};

/// How many ranks to flag per step (HTA's `num_candidates`).
pub const NUM_CANDIDATES: usize = 2;

/// Straggler analysis result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stragglers {
    /// Ranks that arrived last most often, most flags first (empty when not computable).
    pub ranks: Vec<i64>,
    /// Per rank: in how many steps it was among the last to start the collective.
    pub flags: Vec<RankFlags>,
    /// The collective used (largest spread of normalised duration across ranks).
    pub kernel: Option<String>,
    pub stream: Option<i64>,
    pub steps_used: Vec<i64>,
    /// Why there is no result (e.g. "needs two or more ranks"), or a difference from HTA.
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankFlags {
    pub rank: i64,
    pub flagged_steps: u64,
}

/// What one rank contributes to the straggler analysis: enough to work it out across ranks without
/// the traces. `analyze` computes it per rank and reduces the ranks with [`stragglers_from_inputs`];
/// `profile-model merge` runs the same reduce over per-rank `analyze --json` outputs, which carry it
/// (`straggler_inputs`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StragglerInputs {
    pub rank: i64,
    /// Exact mode: the summed length (ns) and the number of the rank's analysed steps.
    pub step_ns: i64,
    pub steps: u64,
    /// HTA-compat: first start and last end (ns) of the rank's rows in analysed steps, and those steps.
    pub t_min: Option<i64>,
    pub t_max: Option<i64>,
    pub iters: Vec<i64>,
    /// The collectives of the rank, per stream, name and step.
    pub collectives: Vec<CollectiveKernels>,
}

/// The kernels of one collective (stream, name) in one step of one rank that can be "the last one"
/// once the length threshold (1% of the mean step, known only across ranks) is set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CollectiveKernels {
    pub stream: i64,
    pub name: String,
    pub step: i64,
    /// Exact mode: the step's length (ns) on this rank; 0 in HTA-compat mode.
    pub step_ns: i64,
    /// `(start, dur)` in ns (exact: start from the step's start; HTA-compat: absolute), the one that
    /// counts first (latest), each longer than every one before it: the kernel that counts is the
    /// first at least as long as the threshold.
    pub kernels: Vec<(i64, i64)>,
}

/// Candidates `(priority, start, dur)` → the list [`CollectiveKernels::kernels`] keeps: by priority,
/// highest first, only those longer than every higher-priority one.
fn frontier(mut c: Vec<((i64, usize), i64, i64)>) -> Vec<(i64, i64)> {
    crate::sort::sort_by(&mut c, |a, b| b.0.cmp(&a.0));
    let mut out: Vec<(i64, i64)> = Vec::new();
    for (_, start, dur) in c {
        if out.last().is_none_or(|l| dur > l.1) {
            out.push((start, dur));
        }
    }
    out
}

/// The kernel that counts: the first of the list at least `min_dur` long.
fn counted(k: &CollectiveKernels, min_dur: f64) -> Option<(i64, i64)> {
    k.kernels
        .iter()
        .copied()
        .find(|&(_, d)| (d as f64) >= min_dur)
}

/// Straggler analysis over prepared ranks: each rank's [`StragglerInputs`], reduced.
pub fn stragglers_prepared(preps: &[(i64, RankPrep)], opts: &AnalysisOptions) -> Stragglers {
    let inputs: Vec<StragglerInputs> = preps.iter().map(|(r, p)| straggler_inputs(*r, p)).collect();
    stragglers_from_inputs(&inputs, opts.mode)
}

/// One rank's [`StragglerInputs`], in its prep's mode.
pub fn straggler_inputs(rank: i64, prep: &RankPrep) -> StragglerInputs {
    if prep.mode == Mode::HtaCompat {
        hta_inputs(rank, prep)
    } else {
        exact_inputs(rank, prep)
    }
}

/// The reduce: stragglers across ranks from each rank's inputs (one entry per rank, in rank order).
pub fn stragglers_from_inputs(inputs: &[StragglerInputs], mode: Mode) -> Stragglers {
    let mut res = Stragglers::default();
    if inputs.len() < 2 {
        res.notes
            .push("needs two or more ranks: load one trace file per rank".into());
        return res;
    }
    if mode == Mode::HtaCompat {
        return hta_stragglers(inputs);
    }
    res.notes.push("every communication kernel counts (ncclKernel_*, ncclDevKernel_*, RCCL, HCCL) and steps from the first; HTA 0.5.0 only counts ncclKernel* and skips iteration 0".into());
    let iter_total: i64 = inputs.iter().map(|i| i.step_ns).sum();
    let iter_n: u64 = inputs.iter().map(|i| i.steps).sum();
    if iter_n == 0 {
        res.notes
            .push("no ProfilerStep annotations: steps are needed to compare ranks".into());
        return res;
    }
    let min_dur = 0.01 * (iter_total as f64 / iter_n as f64);
    // (stream, name) -> step -> rank -> (start_norm, dur_norm)
    type Obs = BTreeMap<(i64, String), BTreeMap<i64, BTreeMap<i64, (f64, f64)>>>;
    let mut obs: Obs = BTreeMap::new();
    for input in inputs {
        for k in &input.collectives {
            let Some((start, dur)) = counted(k, min_dur) else {
                continue;
            };
            let len = k.step_ns.max(1) as f64;
            obs.entry((k.stream, k.name.clone()))
                .or_default()
                .entry(k.step)
                .or_default()
                .insert(input.rank, (start as f64 / len, dur as f64 / len));
        }
    }
    let Some(key) = most_variable(&obs) else {
        res.notes.push(
            "no communication kernel seen on two or more ranks in the same step: no stragglers to find"
                .into(),
        );
        return res;
    };
    let flags: BTreeMap<i64, u64> = crate::sort::map_of(inputs.iter().map(|i| (i.rank, 0)));
    flag_late_ranks(&mut res, flags, &obs[&key]);
    res.stream = Some(key.0);
    res.kernel = Some(key.1);
    res
}

/// Exact mode's flags: per step, the ranks among the last [`NUM_CANDIDATES`] to start the
/// collective and later than the median rank.
fn flag_late_ranks(
    res: &mut Stragglers,
    mut flags: BTreeMap<i64, u64>,
    steps: &BTreeMap<i64, BTreeMap<i64, (f64, f64)>>,
) {
    let mut tied_steps = 0;
    for (step, ranks) in steps {
        let mut starts: Vec<f64> = ranks.values().map(|v| v.0).collect();
        crate::sort::sort_by(&mut starts, |a, b| b.total_cmp(a));
        let k = NUM_CANDIDATES.min(starts.len());
        if k == 0 {
            continue;
        }
        res.steps_used.push(*step);
        // Every rank starts the collective at the same point of its step: nobody arrives last.
        if starts[0] - starts[starts.len() - 1] <= 1e-9 {
            tied_steps += 1;
            continue;
        }
        let kth = starts[k - 1];
        // Last among the first k, and later than the median rank: ranks tied with the median (all
        // but one fast rank, say) are not late.
        let median = starts[starts.len() / 2];
        for (r, v) in ranks {
            if v.0 >= kth && v.0 > median + 1e-9 {
                *flags.entry(*r).or_default() += 1;
            }
        }
    }
    let fl = most_flagged_first(flags);
    res.ranks = fl
        .iter()
        .filter(|f| f.flagged_steps > 0)
        .take(NUM_CANDIDATES)
        .map(|f| f.rank)
        .collect();
    if tied_steps > 0 {
        res.notes.push(format!(
            "in {tied_steps} step(s) every rank starts the collective at the same point of its step: no rank \
             arrives last there"
        ));
    }
    res.flags = fl;
}

/// Exact mode's inputs of one rank: its analysed steps, and per (stream, name, step) its
/// communication kernels by start (ties: the later row), launched in that step.
fn exact_inputs(rank: i64, prep: &RankPrep) -> StragglerInputs {
    let mut out = StragglerInputs {
        rank,
        ..Default::default()
    };
    for s in &prep.steps {
        if prep.kept_steps.binary_search(&s.step).is_ok() && s.end > s.ts {
            out.step_ns += s.end - s.ts;
            out.steps += 1;
        }
    }
    type Cands = BTreeMap<(i64, i64, u32), Vec<((i64, usize), i64, i64)>>;
    let mut cands: Cands = BTreeMap::new();
    for (i, d) in prep.dev.iter().enumerate() {
        if d.ktype != KernelType::Communication {
            continue;
        }
        let Some(launch_ts) = d.launch.and_then(|r| prep.span(r as usize)).map(|s| s.0) else {
            continue;
        };
        let Some(step) = prep
            .steps
            .iter()
            .find(|s| launch_ts >= s.ts && launch_ts < s.end)
        else {
            continue;
        };
        if prep.kept_steps.binary_search(&step.step).is_err() {
            continue;
        }
        cands
            .entry((d.stream, step.step, d.name))
            .or_default()
            .push(((d.ts, i), d.ts, d.end - d.ts));
    }
    for ((stream, step, name), list) in cands {
        let Some(s) = prep.steps.iter().find(|s| s.step == step) else {
            continue;
        };
        let kernels = frontier(list)
            .into_iter()
            .map(|(ts, dur)| (ts - s.ts, dur))
            .collect();
        out.collectives.push(CollectiveKernels {
            stream,
            name: prep.table.name_of_id(name).to_string(),
            step,
            step_ns: s.end - s.ts,
            kernels,
        });
    }
    out
}

/// The step a start time falls in as HTA's `add_iteration` finds it: among the `ProfilerStep#N`
/// spans with `ts <= t < end`, the last one in file order.
struct StepFinder<'s> {
    /// Sorted by start.
    steps: &'s [StepSpan],
    /// Largest end of `steps[..=i]`.
    max_end: Vec<i64>,
}

impl<'s> StepFinder<'s> {
    fn new(steps: &'s [StepSpan]) -> Self {
        let mut m = i64::MIN;
        let max_end = steps
            .iter()
            .map(|s| {
                m = m.max(s.end);
                m
            })
            .collect();
        StepFinder { steps, max_end }
    }

    fn at(&self, t: i64) -> Option<i64> {
        let mut i = self.steps.partition_point(|s| s.ts <= t);
        let mut best: Option<&StepSpan> = None;
        while i > 0 && self.max_end[i - 1] > t {
            i -= 1;
            let s = &self.steps[i];
            if s.end > t && best.is_none_or(|b| s.row > b.row) {
                best = Some(s);
            }
        }
        best.map(|s| s.step)
    }
}

/// HTA 0.5.0's straggler metric (`find_stragglers_with_late_start_comm_kernels`). Rows belong to the
/// step their start falls in (device rows: the step of their launch, on streams > 0 only). Over the
/// analysed steps of every rank, `t_min` is the first start and the mean iteration time is
/// (last end − `t_min`) / steps. `ncclKernel*` kernels of steps > 0 lasting at least 1% of it count,
/// the last one (in file order) per rank, stream, step and name. The (stream, name) whose duration
/// varies most across ranks (mean over steps of the sample std) is the metric kernel; per step the
/// ranks starting it at or after the k-th latest start are flagged, and the k ranks flagged most
/// often (ties: lower rank first) are the stragglers. Start times are compared across ranks as they
/// are, so a rank whose clock runs ahead looks late.
fn hta_stragglers(inputs: &[StragglerInputs]) -> Stragglers {
    let mut res = Stragglers::default();
    let t_min = inputs.iter().filter_map(|i| i.t_min).min();
    let t_max = inputs.iter().filter_map(|i| i.t_max).max();
    let iters: std::collections::BTreeSet<i64> =
        crate::sort::set_of(inputs.iter().flat_map(|i| i.iters.iter().copied()));
    let (Some(t_min), Some(t_max)) = (t_min, t_max) else {
        res.notes
            .push("HTA-compat: no ProfilerStep with events to compare ranks".into());
        return res;
    };
    if iters.is_empty() || t_max <= t_min {
        res.notes
            .push("HTA-compat: no ProfilerStep with events to compare ranks".into());
        return res;
    }
    let mean_iter = (t_max - t_min) as f64 / iters.len() as f64;
    let min_dur = 0.01 * mean_iter;
    // (stream, name) -> step -> rank -> (start - t_min, normalised duration)
    type ByStep = BTreeMap<i64, BTreeMap<i64, (i64, f64)>>;
    let mut obs: BTreeMap<(i64, String), ByStep> = BTreeMap::new();
    for input in inputs {
        for k in &input.collectives {
            let Some((ts, dur)) = counted(k, min_dur) else {
                continue;
            };
            obs.entry((k.stream, k.name.clone()))
                .or_default()
                .entry(k.step)
                .or_default()
                .insert(input.rank, (ts - t_min, dur as f64 / mean_iter));
        }
    }
    let Some(key) = most_variable(&obs) else {
        res.notes.push(
            "HTA-compat: no ncclKernel* kernel of a step after the first seen on two or more ranks (HTA fails here)"
                .into(),
        );
        return res;
    };
    let mut flags: BTreeMap<i64, u64> = BTreeMap::new();
    for (step, ranks) in &obs[&key] {
        let mut starts: Vec<i64> = ranks.values().map(|v| v.0).collect();
        starts.sort_unstable_by(|a, b| b.cmp(a));
        let kth = starts[NUM_CANDIDATES.min(starts.len()) - 1];
        for (r, v) in ranks {
            *flags.entry(*r).or_default() += u64::from(v.0 >= kth);
        }
        res.steps_used.push(*step);
    }
    let fl = most_flagged_first(flags);
    // HTA returns the top k of the ranks that have the kernel, flagged or not.
    res.ranks = fl.iter().take(NUM_CANDIDATES).map(|f| f.rank).collect();
    res.flags = fl;
    res.stream = Some(key.0);
    res.kernel = Some(key.1);
    res
}

/// HTA-compat: the first start, the last end and the analysed steps of a rank's CPU-side rows (no
/// stream, or a negative one), each in the step its start falls in.
fn hta_cpu_span(
    prep: &RankPrep,
    finder: &StepFinder,
) -> (i64, i64, std::collections::BTreeSet<i64>) {
    let t = prep.table;
    let (mut t_min, mut t_max) = (i64::MAX, i64::MIN);
    let mut iters: std::collections::BTreeSet<i64> = Default::default();
    for row in 0..t.len() {
        if t.args_stream_at(row).is_some_and(|s| s >= 0)
            || t.dur_at(row).is_none()
            || t.category_id_at(row).is_none()
            || t.kind_at(row) == EventKind::Trace
        {
            continue;
        }
        let Some((ts, end)) = prep.span(row) else {
            continue;
        };
        if ts < prep.window.0 || ts >= prep.window.1 {
            continue;
        }
        let kept = |it: i64| prep.kept_steps.binary_search(&it).is_ok();
        if let Some(it) = finder.at(ts).filter(|&it| kept(it)) {
            t_min = t_min.min(ts);
            t_max = t_max.max(end);
            iters.insert(it);
        }
    }
    (t_min, t_max, iters)
}

/// HTA-compat inputs of one rank: the span and the steps of its rows in analysed steps, and its
/// `ncclKernel*` kernels of steps > 0 per (stream, name, step), by row.
fn hta_inputs(rank: i64, prep: &RankPrep) -> StragglerInputs {
    let t = prep.table;
    let finder = StepFinder::new(&prep.steps);
    let kept = |it: i64| prep.kept_steps.binary_search(&it).is_ok();
    let (mut t_min, mut t_max, mut iters) = hta_cpu_span(prep, &finder);
    type Cands = BTreeMap<(i64, i64, u32), Vec<((i64, usize), i64, i64)>>;
    let mut cands: Cands = BTreeMap::new();
    // Device rows on streams > 0 by the start of their launch.
    for (i, d) in prep.dev.iter().enumerate().filter(|(_, d)| d.stream > 0) {
        // HTA's partner index 0 reads as "no partner".
        let Some(l) = d.launch.filter(|&l| l > 0) else {
            continue;
        };
        let Some(it) = prep
            .span(l as usize)
            .and_then(|(lts, _)| finder.at(lts))
            .filter(|&it| kept(it))
        else {
            continue;
        };
        t_min = t_min.min(d.ts);
        t_max = t_max.max(d.end);
        iters.insert(it);
        if it > 0 && is_nccl_kernel_name(t.name_of_id(d.name)) {
            let c = cands.entry((d.stream, it, d.name)).or_default();
            c.push(((i64::from(d.row), i), d.ts, d.end - d.ts));
        }
    }
    let collectives = cands
        .into_iter()
        .map(|((stream, step, name), list)| CollectiveKernels {
            stream,
            name: t.name_of_id(name).to_string(),
            step,
            step_ns: 0,
            kernels: frontier(list),
        })
        .collect();
    StragglerInputs {
        rank,
        t_min: (t_min != i64::MAX).then_some(t_min),
        t_max: (t_max != i64::MIN).then_some(t_max),
        iters: iters.into_iter().collect(),
        collectives,
        ..Default::default()
    }
}

pub fn potential_stragglers(set: &TraceSet, opts: &AnalysisOptions) -> Stragglers {
    let preps: Vec<(i64, RankPrep)> = set
        .ranks
        .iter()
        .map(|r| (r.rank, RankPrep::new(&r.table, opts)))
        .collect();
    stragglers_prepared(&preps, opts)
}

/// Flag counts per rank as rows, most flags first (ties by rank).
fn most_flagged_first(flags: BTreeMap<i64, u64>) -> Vec<RankFlags> {
    let mut fl: Vec<RankFlags> = flags
        .into_iter()
        .map(|(rank, flagged_steps)| RankFlags {
            rank,
            flagged_steps,
        })
        .collect();
    crate::sort::sort_by(&mut fl, |a, b| {
        b.flagged_steps
            .cmp(&a.flagged_steps)
            .then(a.rank.cmp(&b.rank))
    });
    fl
}
/// The collective (stream, name) whose normalised duration (`.1` of each rank's observation)
/// varies most across ranks: the largest mean, over steps, of its standard deviation. `None` when
/// no collective was seen on two or more ranks in one step.
fn most_variable<V: Copy>(
    obs: &BTreeMap<(i64, String), BTreeMap<i64, BTreeMap<i64, (V, f64)>>>,
) -> Option<(i64, String)> {
    let mut best: Option<(f64, &(i64, String))> = None;
    for (key, steps) in obs {
        let spreads: Vec<f64> = steps
            .values()
            .filter_map(|r| mean_std(&r.values().map(|v| v.1).collect::<Vec<_>>()).1)
            .collect();
        if spreads.is_empty() {
            continue;
        }
        let m = spreads.iter().sum::<f64>() / spreads.len() as f64;
        if best.is_none_or(|b| m > b.0) {
            best = Some((m, key));
        }
    }
    best.map(|(_, key)| key.clone())
}
