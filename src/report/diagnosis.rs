//! The diagnosis report in the fixed form: main finding, top kernels, bottleneck, recommendations.

use serde::{Deserialize, Serialize};

use crate::table::TraceSet;

/// The report as plain data (rendered to Markdown by [`DiagnosisReport::to_markdown`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DiagnosisReport {
    pub main_finding: String,
    pub markdown: String,
}

impl DiagnosisReport {
    pub fn to_markdown(&self) -> String {
        self.markdown.clone()
    }
}

/// Diagnoses a set of ranks.
pub fn diagnose(set: &TraceSet) -> DiagnosisReport {
    let _ = set;
    DiagnosisReport::default()
}
