//! The options every analysis takes: which definitions to follow ([`Mode`]) and the window.

use serde::{Deserialize, Serialize};

use super::critical_path::CriticalPathOptions;

crate::stable_enum! {
    /// Which definitions to follow.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Mode {
        /// Integer-ns timestamps, every event of the window, GPU events recognised by what they are.
        #[default]
        Exact,
        /// HTA 0.5.0's definitions (whole-µs rounding, last-ProfilerStep filter, its name patterns).
        HtaCompat,
    }
}

/// Options shared by all analyses.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AnalysisOptions {
    pub mode: Mode,
    /// Restrict to these ProfilerStep numbers (inclusive range), when set.
    pub steps: Option<(i64, i64)>,
    /// Restrict to host rows starting in `[start, end)` ns (and the device work they launched), when
    /// set and `steps` is not; the diagnosis uses it to leave a warm-up out of traces without steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_ns: Option<(i64, i64)>,
    /// Idle gaps shorter than this (between queued work) are "kernel wait"; µs, default 30.
    #[serde(default)]
    pub kernel_wait_threshold_us: Option<f64>,
    /// Window of the critical path (annotation substring and instance; default the whole trace).
    #[serde(default)]
    pub critical_path: CriticalPathOptions,
}

impl Mode {
    /// The mode an "HTA-compatible" switch selects.
    pub fn of_switch(hta_compat: bool) -> Mode {
        if hta_compat {
            Mode::HtaCompat
        } else {
            Mode::Exact
        }
    }

    /// The mode's slot in a pair kept per mode (`[exact, hta-compat]`).
    pub fn index(self) -> usize {
        self as usize
    }
}

impl AnalysisOptions {
    pub fn hta_compat() -> Self {
        Self::of_mode(Mode::HtaCompat)
    }

    /// The default options in `mode`.
    pub fn of_mode(mode: Mode) -> Self {
        AnalysisOptions {
            mode,
            ..Default::default()
        }
    }

    /// The kernel-wait threshold, ns.
    pub fn kernel_wait_threshold_ns(&self) -> i64 {
        (self.kernel_wait_threshold_us.unwrap_or(30.0) * 1000.0).round() as i64
    }
}
