//! Stragglers across ranks: the ranks that reach the most variable collective last, step after step.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::gpu::{mean_std, KernelType, RankPrep, StepSpan};
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

pub fn stragglers_prepared(preps: &[(i64, RankPrep)], opts: &AnalysisOptions) -> Stragglers {
    let compat = opts.mode == Mode::HtaCompat;
    let mut res = Stragglers::default();
    if preps.len() < 2 {
        res.notes
            .push("needs two or more ranks: load one trace file per rank".into());
        return res;
    }
    if compat {
        return hta_stragglers(preps);
    }
    if !compat {
        res.notes.push("every communication kernel counts (ncclKernel_*, ncclDevKernel_*, RCCL, HCCL) and steps from the first; HTA 0.5.0 only counts ncclKernel* and skips iteration 0".into());
    }
    // Per rank: steps (number -> (start, end)), comm kernel occurrences.
    // key (stream, name) -> step -> rank -> (start_norm, dur_norm)
    type Obs = BTreeMap<(i64, String), BTreeMap<i64, BTreeMap<i64, (f64, f64)>>>;
    let mut obs: Obs = BTreeMap::new();
    let mut iter_total = 0f64;
    let mut iter_n = 0usize;
    for (_, prep) in preps {
        for s in &prep.steps {
            if prep.kept_steps.binary_search(&s.step).is_ok() && s.end > s.ts {
                iter_total += (s.end - s.ts) as f64;
                iter_n += 1;
            }
        }
    }
    if iter_n == 0 {
        res.notes
            .push("no ProfilerStep annotations: steps are needed to compare ranks".into());
        return res;
    }
    let mean_iter = iter_total / iter_n as f64;
    for (rank, prep) in preps {
        let t = prep.table;
        let mut last: BTreeMap<(i64, i64, u32), (i64, i64)> = BTreeMap::new();
        for d in &prep.dev {
            let name = t.name_of_id(d.name);
            let is_comm = if compat {
                name.starts_with("ncclKernel") && d.stream > 0
            } else {
                d.ktype == KernelType::Communication
            };
            if !is_comm || ((d.end - d.ts) as f64) < 0.01 * mean_iter {
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
            if prep.kept_steps.binary_search(&step.step).is_err() || (compat && step.step <= 0) {
                continue;
            }
            let e = last
                .entry((d.stream, step.step, d.name))
                .or_insert((d.ts, d.end));
            if d.ts >= e.0 {
                *e = (d.ts, d.end);
            }
        }
        for ((stream, step, name), (ts, end)) in last {
            let Some(s) = prep.steps.iter().find(|s| s.step == step) else {
                continue;
            };
            let len = (s.end - s.ts).max(1) as f64;
            obs.entry((stream, t.name_of_id(name).to_string()))
                .or_default()
                .entry(step)
                .or_default()
                .insert(*rank, ((ts - s.ts) as f64 / len, (end - ts) as f64 / len));
        }
    }
    let Some(key) = most_variable(&obs) else {
        res.notes.push(
            "no communication kernel seen on two or more ranks in the same step: no stragglers to find"
                .into(),
        );
        return res;
    };
    let mut flags: BTreeMap<i64, u64> = preps.iter().map(|(r, _)| (*r, 0)).collect();
    let mut tied_steps = 0;
    for (step, ranks) in &obs[&key] {
        let mut starts: Vec<f64> = ranks.values().map(|v| v.0).collect();
        starts.sort_by(|a, b| b.total_cmp(a));
        let k = NUM_CANDIDATES.min(starts.len());
        if k == 0 {
            continue;
        }
        // Every rank starts the collective at the same point of its step: nobody arrives last.
        if starts[0] - starts[starts.len() - 1] <= 1e-9 {
            tied_steps += 1;
            res.steps_used.push(*step);
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
        res.steps_used.push(*step);
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
    res.stream = Some(key.0);
    res.kernel = Some(key.1);
    res
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
fn hta_stragglers(preps: &[(i64, RankPrep)]) -> Stragglers {
    let mut res = Stragglers::default();
    let (mut t_min, mut t_max) = (i64::MAX, i64::MIN);
    let mut iters: BTreeMap<i64, ()> = BTreeMap::new();
    // ncclKernel* rows of steps > 0: (rank, stream, step, name, row, ts, dur).
    type Cand = (i64, i64, i64, String, u32, i64, i64);
    let mut cands: Vec<Cand> = Vec::new();
    for (rank, prep) in preps {
        let t = prep.table;
        let finder = StepFinder::new(&prep.steps);
        let kept = |it: i64| prep.kept_steps.binary_search(&it).is_ok();
        // CPU-side rows (no stream, or a negative one) by their start.
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
            if let Some(it) = finder.at(ts).filter(|&it| kept(it)) {
                t_min = t_min.min(ts);
                t_max = t_max.max(end);
                iters.insert(it, ());
            }
        }
        // Device rows on streams > 0 by the start of their launch.
        for d in prep.dev.iter().filter(|d| d.stream > 0) {
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
            iters.insert(it, ());
            if it > 0 && t.name_of_id(d.name).starts_with("ncclKernel") {
                let name = t.name_of_id(d.name).to_string();
                cands.push((*rank, d.stream, it, name, d.row, d.ts, d.end - d.ts));
            }
        }
    }
    if iters.is_empty() || t_max <= t_min {
        res.notes
            .push("HTA-compat: no ProfilerStep with events to compare ranks".into());
        return res;
    }
    let mean_iter = (t_max - t_min) as f64 / iters.len() as f64;
    let min_dur = 0.01 * mean_iter;
    // The last long enough kernel (file order) per rank, stream, step and name.
    type Key = (i64, i64, i64, String);
    let mut last: BTreeMap<Key, (u32, i64, i64)> = BTreeMap::new();
    for (rank, stream, it, name, row, ts, dur) in cands {
        if (dur as f64) < min_dur {
            continue;
        }
        let e = last
            .entry((rank, stream, it, name))
            .or_insert((row, ts, dur));
        if row >= e.0 {
            *e = (row, ts, dur);
        }
    }
    // (stream, name) -> step -> rank -> (start - t_min, normalised duration)
    type ByStep = BTreeMap<i64, BTreeMap<i64, (i64, f64)>>;
    let mut obs: BTreeMap<(i64, String), ByStep> = BTreeMap::new();
    for ((rank, stream, it, name), (_, ts, dur)) in last {
        obs.entry((stream, name))
            .or_default()
            .entry(it)
            .or_default()
            .insert(rank, (ts - t_min, dur as f64 / mean_iter));
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
    fl.sort_by(|a, b| {
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
