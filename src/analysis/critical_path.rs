//! Critical path of one rank (or one annotation instance): what bounds it, as shares of the path.

use serde::{Deserialize, Serialize};

use crate::table::TraceTable;

/// Options of [`critical_path`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CriticalPathOptions {
    /// Substring of the annotation that delimits the window ("" = the whole trace).
    pub annotation: String,
    /// Which instance of the annotation (0-based).
    pub instance: usize,
}

/// The critical path's breakdown.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CriticalPathResult {
    pub rows: Vec<serde_json::Value>,
}

pub fn critical_path(_table: &TraceTable, _opts: &CriticalPathOptions) -> CriticalPathResult {
    CriticalPathResult::default()
}
