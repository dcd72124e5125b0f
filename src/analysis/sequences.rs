//! Frequent GPU kernel sequences launched under one CPU operator: candidates for fusion.

use serde::{Deserialize, Serialize};

use crate::table::TraceTable;

/// Options of [`frequent_kernel_sequences`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SequenceOptions {
    /// Substring an operator's name must contain ("" = every top-level operator).
    pub operator_name: String,
    pub min_pattern_len: usize,
    pub top_k: usize,
}

impl Default for SequenceOptions {
    fn default() -> Self {
        SequenceOptions {
            operator_name: String::new(),
            min_pattern_len: 3,
            top_k: 10,
        }
    }
}

/// Frequent kernel sequences of one rank.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SequencesResult {
    pub rows: Vec<serde_json::Value>,
}

pub fn frequent_kernel_sequences(_table: &TraceTable, _opts: &SequenceOptions) -> SequencesResult {
    SequencesResult::default()
}
