//! Profiler steps (`ProfilerStep#N`): per-step time, and which steps the analyses cover.

use serde::{Deserialize, Serialize};

use super::gpu::{us, RankPrep};
use super::options::AnalysisOptions;
use crate::table::TraceSet;

/// One step of one rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepTime {
    pub step: i64,
    /// Start relative to the rank's first step, µs.
    pub start_us: f64,
    pub duration_us: f64,
    /// The analyses cover this step (HTA-compat drops the last one; `opts.steps` selects).
    pub analysed: bool,
}

/// Steps of one rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankSteps {
    pub rank: i64,
    pub steps: Vec<StepTime>,
    /// Step numbers the analyses cover, ascending.
    pub analysed_steps: Vec<i64>,
    pub mean_step_us: Option<f64>,
}

pub fn steps_prepared(rank: i64, prep: &RankPrep) -> RankSteps {
    let first = prep.steps.first().map_or(0, |s| s.ts);
    let steps: Vec<StepTime> = prep
        .steps
        .iter()
        .map(|s| StepTime {
            step: s.step,
            start_us: us(s.ts - first),
            duration_us: us(s.end - s.ts),
            analysed: prep.kept_steps.binary_search(&s.step).is_ok(),
        })
        .collect();
    let mean = (!steps.is_empty())
        .then(|| steps.iter().map(|s| s.duration_us).sum::<f64>() / steps.len() as f64);
    RankSteps {
        rank,
        steps,
        analysed_steps: prep.kept_steps.clone(),
        mean_step_us: mean,
    }
}

pub fn profiler_steps(set: &TraceSet, opts: &AnalysisOptions) -> Vec<RankSteps> {
    set.ranks
        .iter()
        .map(|r| steps_prepared(r.rank, &RankPrep::new(&r.table, opts)))
        .collect()
}
