//! Stragglers across ranks: the ranks that reach the most variable collective last, step after step.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::all::{AnalysisOptions, Mode};
use super::gpu::{mean_std, KernelType, RankPrep};
use crate::table::TraceSet;

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
    // Pick the collective with the largest mean (over steps) of the spread across ranks.
    let mut best: Option<(f64, (i64, String))> = None;
    for (key, steps) in &obs {
        let spreads: Vec<f64> = steps
            .values()
            .filter_map(|r| mean_std(&r.values().map(|v| v.1).collect::<Vec<_>>()).1)
            .collect();
        if spreads.is_empty() {
            continue;
        }
        let m = spreads.iter().sum::<f64>() / spreads.len() as f64;
        if best.as_ref().is_none_or(|b| m > b.0) {
            best = Some((m, key.clone()));
        }
    }
    let Some((_, key)) = best else {
        res.notes.push(
            "no communication kernel seen on two or more ranks in the same step: no stragglers to find"
                .into(),
        );
        return res;
    };
    let mut flags: BTreeMap<i64, u64> = preps.iter().map(|(r, _)| (*r, 0)).collect();
    for (step, ranks) in &obs[&key] {
        let mut starts: Vec<f64> = ranks.values().map(|v| v.0).collect();
        starts.sort_by(|a, b| b.total_cmp(a));
        let k = NUM_CANDIDATES.min(starts.len());
        if k == 0 {
            continue;
        }
        let kth = starts[k - 1];
        for (r, v) in ranks {
            if v.0 >= kth {
                *flags.entry(*r).or_default() += 1;
            }
        }
        res.steps_used.push(*step);
    }
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
    res.ranks = fl
        .iter()
        .filter(|f| f.flagged_steps > 0)
        .take(NUM_CANDIDATES)
        .map(|f| f.rank)
        .collect();
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
