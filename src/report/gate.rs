//! One gate, one cut. The gate: "too little to diagnose" is one rule over the analysed window's
//! device operations, GPU window, GPU busy time and how much of its idle time has a clear cause
//! ([`too_little`]), and nothing else decides it: a small trace (a few milliseconds, a dozen
//! kernels) whose GPU waits on something the trace names is diagnosed, not dismissed.
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

/// A few short kernels are still diagnosable when idle time with a clear cause fills at least this
/// share of the GPU window: the finding is the wait, not the kernels.
pub const MIN_CLEAR_IDLE_SHARE: f64 = 0.5;

/// What the gate reads of the analysed window (all ranks together).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WindowWork {
    pub device_ops: u64,
    /// The GPU window (the longest rank's), ns.
    pub window_ns: i64,
    pub busy_ns: i64,
    /// GPU idle time whose cause the trace names (a synchronisation, the DataLoader, a
    /// communication call: [`crate::report::attribution::IdleCause::is_clear`]), ns, and the
    /// windows it is a share of (all ranks), ns.
    pub clear_idle_ns: i64,
    pub windows_ns: i64,
    /// Copies and sets (their union, all ranks), ns: a copy that fills the window is a clear single
    /// cause however few device operations there are.
    pub copy_ns: i64,
    /// Host compute with the device idle ([`crate::report::inputs::HostCompute`]) and the
    /// analysed window on the host it is measured over (all ranks), ns.
    pub host_compute_ns: i64,
    pub host_window_ns: i64,
}

/// Whether the analysed window holds too little to diagnose: fewer than [`MIN_DEVICE_OPS`] device
/// operations, a GPU window under [`MIN_WINDOW_NS`], or fewer than [`MANY_DEVICE_OPS`] operations
/// keeping the GPU busy under [`MIN_BUSY_NS`] while no clear cause holds the GPU idle for
/// [`MIN_CLEAR_IDLE_SHARE`] of the window. Copies that fill [`MIN_CLEAR_IDLE_SHARE`] of the window
/// are always diagnosed, however short it is: the copy is the finding (a timed transfer is
/// measured in hundreds of µs). So is a run whose host computes on CPU tensors (operators that
/// launched nothing) for [`MIN_CLEAR_IDLE_SHARE`] of the analysed window on the host and at least
/// [`MIN_BUSY_NS`], however few device operations it has: the host's work is the finding.
pub fn too_little(w: WindowWork) -> bool {
    let share =
        |ns: i64| w.windows_ns > 0 && ns as f64 >= MIN_CLEAR_IDLE_SHARE * w.windows_ns as f64;
    let clear_idle = share(w.clear_idle_ns);
    let copy_fills = w.device_ops > 0 && share(w.copy_ns);
    let host_fills = w.device_ops > 0
        && w.host_compute_ns >= MIN_BUSY_NS
        && w.host_compute_ns as f64 >= MIN_CLEAR_IDLE_SHARE * w.host_window_ns as f64;
    !copy_fills
        && !host_fills
        && (w.window_ns < MIN_WINDOW_NS
            || w.device_ops < MIN_DEVICE_OPS
            || w.device_ops < MANY_DEVICE_OPS && w.busy_ns < MIN_BUSY_NS && !clear_idle)
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
    fn a_few_kernels_with_a_clear_wait_are_enough() {
        let w = WindowWork {
            device_ops: 12,
            window_ns: 4_000_000,
            busy_ns: 200_000,
            clear_idle_ns: 3_000_000,
            windows_ns: 4_000_000,
            copy_ns: 0,
            host_compute_ns: 0,
            host_window_ns: 4_000_000,
        };
        assert!(!too_little(w));
        assert!(too_little(WindowWork {
            clear_idle_ns: 1_000_000,
            ..w
        }));
        assert!(too_little(WindowWork { device_ops: 4, ..w }));
        assert!(too_little(WindowWork {
            window_ns: 900_000,
            ..w
        }));
        // One copy filling the window is the finding, with only three device operations.
        let copy = WindowWork {
            device_ops: 3,
            busy_ns: 4_400_000,
            clear_idle_ns: 0,
            copy_ns: 4_300_000,
            ..w
        };
        assert!(!too_little(copy));
        assert!(too_little(WindowWork {
            copy_ns: 1_900_000,
            ..copy
        }));
        // A timed copy of 833 µs in a 898 µs window: short, but the copy is the measurement.
        let short = WindowWork {
            window_ns: 898_000,
            windows_ns: 898_000,
            busy_ns: 866_000,
            copy_ns: 833_000,
            ..copy
        };
        assert!(!too_little(short));
        assert!(too_little(WindowWork {
            copy_ns: 400_000,
            ..short
        }));
        // Two kernels after 80 ms of host compute in a 100 ms window: the host is the finding.
        let host = WindowWork {
            device_ops: 2,
            window_ns: 300_000,
            windows_ns: 300_000,
            busy_ns: 100_000,
            copy_ns: 0,
            host_compute_ns: 80_000_000,
            host_window_ns: 100_000_000,
            ..w
        };
        assert!(!too_little(host));
        assert!(too_little(WindowWork {
            host_compute_ns: 40_000_000,
            ..host
        }));
        assert!(too_little(WindowWork {
            device_ops: 0,
            ..host
        }));
    }

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
