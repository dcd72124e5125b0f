//! Kernel launch statistics: CPU time of each launch call, GPU time of the work, launch delay;
//! short kernels, runtime and delay outliers. Means are HTA's; a few one-off launches (a module
//! loaded on first use) pull them far above the typical launch, so the medians and 90th percentiles
//! come beside them and the slowest launches are named.

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
    /// 90th percentiles of the CPU time, GPU time and delay, µs.
    #[serde(default)]
    pub cpu_p90_us: f64,
    #[serde(default)]
    pub gpu_p90_us: f64,
    #[serde(default)]
    pub delay_p90_us: f64,
    /// The slowest launch calls over `runtime_cutoff_us`, slowest first (at most [`NAMED_OUTLIERS`]),
    /// with the kernel each launched.
    #[serde(default)]
    pub outliers: Vec<LaunchOutlier>,
    /// Every launch, by correlation (not serialised: can be large).
    #[serde(skip)]
    pub rows: Vec<Launch>,
}

/// One slow launch call, named.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LaunchOutlier {
    pub correlation: i64,
    /// The launch call (`cudaLaunchKernel`, ...).
    pub call: String,
    /// The kernel (or copy) it launched.
    pub kernel: String,
    pub cpu_us: f64,
    /// Whether it is the first launch of its kernel ([`super::one_off`]: a one-off, not overhead).
    pub first_of_kernel: bool,
}

/// Slow launches named per rank.
pub const NAMED_OUTLIERS: usize = 5;

pub const RUNTIME_CUTOFF_US: f64 = 50.0;
pub const LAUNCH_DELAY_CUTOFF_US: f64 = 100.0;

pub fn launch_prepared(rank: i64, prep: &RankPrep) -> LaunchStats {
    let t = prep.table;
    let mut rows = Vec::new();
    let mut named: Vec<(LaunchOutlier, i64)> = Vec::new();
    let mut seen_kernels = std::collections::BTreeSet::new();
    let mut devs: Vec<&super::gpu::DevRow> = prep.dev.iter().collect();
    crate::sort::sort_by_key(&mut devs, |d| (d.ts, d.row));
    for d in devs {
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
        let first_of_kernel = seen_kernels.insert(d.name);
        if us(cend - cts) > RUNTIME_CUTOFF_US {
            named.push((
                LaunchOutlier {
                    correlation: t.correlation_at(l).unwrap_or(-1),
                    call: t.name_at(l).to_string(),
                    kernel: t.name_of_id(d.name).to_string(),
                    cpu_us: us(cend - cts),
                    first_of_kernel,
                },
                cend - cts,
            ));
        }
        rows.push(Launch {
            correlation: t.correlation_at(l).unwrap_or(-1),
            stream: d.stream,
            cpu_us: us(cend - cts),
            gpu_us: us(d.end - d.ts),
            delay_us: us((d.ts - cend).max(0)),
        });
    }
    crate::sort::sort_by_key(&mut rows, |r| (r.correlation, r.stream));
    crate::sort::sort_by(&mut named, |a, b| {
        b.1.cmp(&a.1).then(a.0.correlation.cmp(&b.0.correlation))
    });
    let col = |f: fn(&Launch) -> f64| rows.iter().map(f).collect::<Vec<f64>>();
    let p90 = |f: fn(&Launch) -> f64| {
        let mut v = col(f);
        v.sort_unstable_by(|a, b| a.total_cmp(b));
        if v.is_empty() {
            0.0
        } else {
            super::gpu::percentile_sorted(&v, 0.9)
        }
    };
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
        cpu_p90_us: p90(|r| r.cpu_us),
        gpu_p90_us: p90(|r| r.gpu_us),
        delay_p90_us: p90(|r| r.delay_us),
        outliers: named
            .into_iter()
            .take(NAMED_OUTLIERS)
            .map(|(o, _)| o)
            .collect(),
        rows,
    }
}

pub fn kernel_launch_stats(set: &TraceSet, opts: &AnalysisOptions) -> Vec<LaunchStats> {
    set.ranks
        .iter()
        .map(|r| launch_prepared(r.rank, &RankPrep::new(&r.table, opts)))
        .collect()
}
