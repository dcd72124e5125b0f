//! Kernel launch statistics: CPU time of each launch call, GPU time of the work, launch delay;
//! short kernels, runtime and delay outliers.

use serde::{Deserialize, Serialize};

use super::gpu::{describe, us, Describe, RankPrep};
use super::names::NameClass;
use super::options::{AnalysisOptions, Mode};
use crate::table::TraceSet;

/// One launch joined to its device event.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Launch {
    pub correlation: i64,
    pub stream: i64,
    /// Duration of the launch call on the CPU, µs.
    pub cpu_us: f64,
    /// Duration of the launched work on the GPU, µs.
    pub gpu_us: f64,
    /// GPU start − CPU end, µs, clipped at 0.
    pub delay_us: f64,
}

/// Launch statistics of one rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LaunchStats {
    pub rank: i64,
    pub launches: u64,
    pub cpu_us: Describe,
    pub gpu_us: Describe,
    pub delay_us: Describe,
    pub cpu_total_us: f64,
    pub gpu_total_us: f64,
    pub delay_total_us: f64,
    /// Launches whose call takes ≤ `runtime_cutoff_us` and longer than the kernel itself.
    pub short_kernels: u64,
    /// Launch calls longer than `runtime_cutoff_us`.
    pub runtime_outliers: u64,
    /// Launches whose delay exceeds `launch_delay_cutoff_us`.
    pub delay_outliers: u64,
    pub runtime_cutoff_us: f64,
    pub launch_delay_cutoff_us: f64,
    /// Every launch, by correlation (not serialised: can be large).
    #[serde(skip)]
    pub rows: Vec<Launch>,
}

pub const RUNTIME_CUTOFF_US: f64 = 50.0;
pub const LAUNCH_DELAY_CUTOFF_US: f64 = 100.0;

pub fn launch_prepared(rank: i64, prep: &RankPrep) -> LaunchStats {
    let t = prep.table;
    let mut rows = Vec::new();
    for d in &prep.dev {
        let Some(l) = d.launch else { continue };
        let l = l as usize;
        let class = prep.names.of_row(t, l);
        let counted = class.has(if prep.mode == Mode::HtaCompat {
            NameClass::HTA_LAUNCH
        } else {
            NameClass::LAUNCH
        });
        if !counted {
            continue;
        }
        let Some((cts, cend)) = prep.span(l) else {
            continue;
        };
        rows.push(Launch {
            correlation: t.correlation_at(l).unwrap_or(-1),
            stream: d.stream,
            cpu_us: us(cend - cts),
            gpu_us: us(d.end - d.ts),
            delay_us: us((d.ts - cend).max(0)),
        });
    }
    rows.sort_by_key(|r| (r.correlation, r.stream));
    let col = |f: fn(&Launch) -> f64| rows.iter().map(f).collect::<Vec<f64>>();
    LaunchStats {
        rank,
        launches: rows.len() as u64,
        cpu_us: describe(col(|r| r.cpu_us)),
        gpu_us: describe(col(|r| r.gpu_us)),
        delay_us: describe(col(|r| r.delay_us)),
        cpu_total_us: rows.iter().map(|r| r.cpu_us).sum(),
        gpu_total_us: rows.iter().map(|r| r.gpu_us).sum(),
        delay_total_us: rows.iter().map(|r| r.delay_us).sum(),
        short_kernels: rows
            .iter()
            .filter(|r| r.cpu_us <= RUNTIME_CUTOFF_US && r.gpu_us < r.cpu_us)
            .count() as u64,
        runtime_outliers: rows.iter().filter(|r| r.cpu_us > RUNTIME_CUTOFF_US).count() as u64,
        delay_outliers: rows
            .iter()
            .filter(|r| r.delay_us > LAUNCH_DELAY_CUTOFF_US)
            .count() as u64,
        runtime_cutoff_us: RUNTIME_CUTOFF_US,
        launch_delay_cutoff_us: LAUNCH_DELAY_CUTOFF_US,
        rows,
    }
}

pub fn kernel_launch_stats(set: &TraceSet, opts: &AnalysisOptions) -> Vec<LaunchStats> {
    set.ranks
        .iter()
        .map(|r| launch_prepared(r.rank, &RankPrep::new(&r.table, opts)))
        .collect()
}
