//! One gate, one cut. The gate: "too little to diagnose" is one rule over the analysed window's
//! device operations, GPU window and GPU busy time ([`too_little`]), and nothing else decides it.
//! The cut: the warm-up cut never removes most of the kernel time. When the leading steps (or the
//! prefix) the context stage would leave out as warm-up hold most of the trace's kernel time, they
//! are the work, not a warm-up: the whole trace is analysed and the report says why.

use serde::{Deserialize, Serialize};

use super::context::RankChoice;
use super::host::HostTimeline;

/// Fewer device operations than this is too little, whatever else holds.
pub const MIN_DEVICE_OPS: u64 = 5;
/// A GPU window shorter than this (ns) is too little.
pub const MIN_WINDOW_NS: i64 = 1_000_000;
/// Below this many device operations, the GPU must be busy at least [`MIN_BUSY_NS`]: a handful of
/// kernels that run for microseconds measure the harness, not a workload.
pub const MANY_DEVICE_OPS: u64 = 20;
pub const MIN_BUSY_NS: i64 = 1_000_000;

/// Whether the analysed window holds too little to diagnose: fewer than [`MIN_DEVICE_OPS`] device
/// operations, a GPU window under [`MIN_WINDOW_NS`], or fewer than [`MANY_DEVICE_OPS`] operations
/// keeping the GPU busy under [`MIN_BUSY_NS`] (all ranks together).
pub fn too_little(device_ops: u64, window_ns: i64, busy_ns: i64) -> bool {
    device_ops < MIN_DEVICE_OPS
        || window_ns < MIN_WINDOW_NS
        || device_ops < MANY_DEVICE_OPS && busy_ns < MIN_BUSY_NS
}

/// A warm-up cut may remove at most this share of the kernel time.
pub const MAX_CUT_KERNEL_SHARE: f64 = 0.5;

/// A cut that was not made: the share (%) of the kernel time it would have removed, and the steps
/// it would have left out.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CutRefused {
    pub kernel_pct: f64,
    pub steps: Vec<i64>,
}

/// The rank's window choice, or the whole trace when its warm-up cut would remove most of the kernel
/// time.
pub fn guard(choice: RankChoice, h: &HostTimeline) -> RankChoice {
    if choice.warmup.is_none() || choice.warmup_only {
        return choice;
    }
    let total: i64 = h.kernel_spans.iter().map(|&(s, e)| e - s).sum();
    let start = choice.window.0;
    let cut: i64 = h
        .kernel_spans
        .iter()
        .filter(|&&(s, _)| s < start)
        .map(|&(s, e)| e - s)
        .sum();
    if total <= 0 || (cut as f64) <= MAX_CUT_KERNEL_SHARE * total as f64 {
        return choice;
    }
    let (lo, hi) = h.span.unwrap_or(choice.window);
    let steps = match (
        h.steps.iter().map(|s| s.0).min(),
        h.steps.iter().map(|s| s.0).max(),
    ) {
        (Some(a), Some(b)) if choice.steps.is_some() => Some((a, b)),
        _ => None,
    };
    RankChoice {
        steps,
        warmup_steps: Vec::new(),
        window: (lo, hi),
        warmup: None,
        warmup_only: false,
        cut_refused: Some(CutRefused {
            kernel_pct: 100.0 * cut as f64 / total as f64,
            steps: choice.warmup_steps,
        }),
    }
}

/// The report's note for a refused cut.
pub fn note(c: &CutRefused) -> String {
    let what = match (c.steps.first(), c.steps.last()) {
        (Some(a), Some(b)) if a == b => format!("step {a}"),
        (Some(a), Some(b)) => format!("steps {a}-{b}"),
        _ => "the start of the trace".to_string(),
    };
    format!(
        "The whole trace is analysed: {what} looked like warm-up, but leaving {} out would remove {:.0}% of the kernel time, so {} the work itself, not a warm-up.",
        if c.steps.len() > 1 { "them" } else { "it" },
        c.kernel_pct,
        if c.steps.len() > 1 { "they are" } else { "it is" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_that_removes_most_kernel_time_is_not_made() {
        let h = HostTimeline {
            steps: vec![(1, 0, 500), (2, 500, 600), (3, 600, 700)],
            kernel_spans: vec![(10, 400), (510, 520), (610, 620)],
            span: Some((0, 700)),
            ..Default::default()
        };
        let cut = RankChoice {
            steps: Some((2, 3)),
            warmup_steps: vec![1],
            window: (500, 700),
            warmup: Some((0, 500)),
            ..Default::default()
        };
        let g = guard(cut.clone(), &h);
        assert_eq!(g.window, (0, 700));
        assert_eq!(g.steps, Some((1, 3)));
        assert!(g.warmup.is_none());
        let r = g.cut_refused.expect("refused");
        assert!((r.kernel_pct - 100.0 * 390.0 / 410.0).abs() < 1e-9);
        // Most kernel time after the cut: the cut stands.
        let h2 = HostTimeline {
            kernel_spans: vec![(10, 20), (510, 700)],
            ..h
        };
        assert_eq!(guard(cut.clone(), &h2), cut);
    }
}
