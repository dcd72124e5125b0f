//! The open traces of one MCP session: id → the loaded [`TraceSet`] and what was computed from it
//! (the diagnosis, the analyses per options), kept so that follow-up questions do not load or compute
//! again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::analysis::all::{analyze_timed, AnalysisOptions, Mode};
use crate::analysis::registry::AllAnalyses;
use crate::report::diagnosis::{diagnose, DiagnosisReport};
use crate::table::TraceSet;

/// The options an analysis run depends on (its cache key).
pub type AnalysisKey = (Mode, Option<(i64, i64)>);

/// One open trace (a file or a rank folder) and its lazily computed results.
pub struct OpenTrace {
    pub id: u32,
    pub path: PathBuf,
    pub set: TraceSet,
    report: OnceLock<DiagnosisReport>,
    analyses: Mutex<Vec<(AnalysisKey, Arc<AllAnalyses>)>>,
}

impl OpenTrace {
    /// The diagnosis, computed on the first call.
    pub fn report(&self) -> &DiagnosisReport {
        self.report.get_or_init(|| diagnose(&self.set))
    }

    /// Every analysis with these options, computed on the first call for them.
    pub fn analyses(&self, key: AnalysisKey) -> Arc<AllAnalyses> {
        if let Some(found) = self.cached_analyses(key) {
            return found;
        }
        let opts = AnalysisOptions {
            mode: key.0,
            steps: key.1,
            ..Default::default()
        };
        let (all, _) = analyze_timed(&self.set, &opts, &|| 0.0);
        let all = Arc::new(all);
        if let Ok(mut cached) = self.analyses.lock() {
            cached.push((key, all.clone()));
        }
        all
    }

    fn cached_analyses(&self, key: AnalysisKey) -> Option<Arc<AllAnalyses>> {
        let cached = self.analyses.lock().ok()?;
        cached
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, a)| a.clone())
    }

    /// Events in all ranks.
    pub fn event_count(&self) -> usize {
        self.set.ranks.iter().map(|r| r.table.len()).sum()
    }
}

/// The open traces, by id (ids are never reused within a session).
#[derive(Default)]
pub struct Sessions {
    traces: Mutex<BTreeMap<u32, Arc<OpenTrace>>>,
    next_id: Mutex<u32>,
}

impl Sessions {
    /// Keeps a loaded set open under a new id.
    pub fn insert(&self, path: &Path, set: TraceSet) -> Arc<OpenTrace> {
        let id = self.take_id();
        let trace = Arc::new(OpenTrace {
            id,
            path: path.to_path_buf(),
            set,
            report: OnceLock::new(),
            analyses: Mutex::new(Vec::new()),
        });
        if let Ok(mut traces) = self.traces.lock() {
            traces.insert(id, trace.clone());
        }
        trace
    }

    fn take_id(&self) -> u32 {
        let mut next = self.next_id.lock().unwrap_or_else(|p| p.into_inner());
        *next += 1;
        *next
    }

    /// The open trace `id`, or what to do instead.
    pub fn get(&self, id: u32) -> Result<Arc<OpenTrace>, String> {
        let traces = self
            .traces
            .lock()
            .map_err(|_| "the session's state is unusable".to_string())?;
        traces
            .get(&id)
            .cloned()
            .ok_or_else(|| not_open(id, &traces))
    }

    /// The open trace already loaded from `path`, if any.
    pub fn find_path(&self, path: &Path) -> Option<Arc<OpenTrace>> {
        let traces = self.traces.lock().ok()?;
        traces.values().find(|t| t.path == path).cloned()
    }

    /// Forgets trace `id` (its tables are freed once no call uses them).
    pub fn close(&self, id: u32) -> Result<Arc<OpenTrace>, String> {
        let mut traces = self
            .traces
            .lock()
            .map_err(|_| "the session's state is unusable".to_string())?;
        match traces.remove(&id) {
            Some(t) => Ok(t),
            None => Err(not_open(id, &traces)),
        }
    }

    /// Every open trace, by id.
    pub fn list(&self) -> Vec<Arc<OpenTrace>> {
        self.traces
            .lock()
            .map(|t| t.values().cloned().collect())
            .unwrap_or_default()
    }
}

/// "No trace with id N is open", with the open ids and what to call.
fn not_open(id: u32, traces: &BTreeMap<u32, Arc<OpenTrace>>) -> String {
    if traces.is_empty() {
        return format!("no trace with id {id} is open (none is); call open_trace with a trace file or a rank folder first");
    }
    let open: Vec<String> = traces
        .values()
        .map(|t| format!("{} ({})", t.id, t.path.display()))
        .collect();
    format!(
        "no trace with id {id} is open; open ones: {}. Call open_trace to open another, list_traces to see them",
        open.join(", ")
    )
}
