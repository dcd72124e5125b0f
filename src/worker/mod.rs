//! The Web Worker (wasm32 only): loads files in slices and runs analyses off the main thread.
//!
//! The whole tables stay here in a [`TraceSet`]; the page only gets summaries, diagnostics, the
//! analyses' JSON and the report's Markdown (see [`protocol`]).

pub mod protocol;

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, File, FileReaderSync, MessageEvent};

use crate::analysis::all::{analyze_timed, AllAnalyses, AnalysisOptions, AnalysisTiming};
use crate::analysis::summary::summarize;
use crate::report::diagnosis::diagnose_with;
use crate::table::query::{export_csv, query_events};
use crate::table::{TraceLoader, TraceSet, TraceTable};
use protocol::{FindingLink, FromWorker, LoadedSet, Phase, Progress, RankSummary, ToWorker};

/// Bytes read from a `File` at a time.
const SLICE_BYTES: u64 = 16 << 20;
/// Time between two progress messages, ms (about 6 a second, so the bar moves at least 4 times a
/// second even when a message is late).
const PROGRESS_EVERY_MS: f64 = 150.0;
/// Bytes fed to the parser at a time (between two clock checks).
const FEED_BYTES: usize = 256 << 10;

thread_local! {
    static LOADED: RefCell<Option<TraceSet>> = const { RefCell::new(None) };
    /// The analyses of the kept set, run once (the report and the deeper views share them).
    static ANALYSES: RefCell<Option<(AllAnalyses, Vec<AnalysisTiming>)>> = const { RefCell::new(None) };
}

/// Milliseconds from the worker's high-resolution clock.
fn now_ms() -> f64 {
    scope()
        .performance()
        .map_or_else(js_sys::Date::now, |p| p.now())
}

/// Calls `f` with the analyses of `set` and the time each took in this worker (run on first use, then kept).
fn with_analyses<R>(set: &TraceSet, f: impl FnOnce(&AllAnalyses, &[AnalysisTiming]) -> R) -> R {
    ANALYSES.with(|a| {
        let mut kept = a.borrow_mut();
        let (all, timings) =
            kept.get_or_insert_with(|| analyze_timed(set, &AnalysisOptions::default(), &now_ms));
        f(all, timings)
    })
}

fn report_of(set: &TraceSet, redact: bool) -> FromWorker {
    let report = with_analyses(set, |all, _| {
        diagnose_with(set, all, &AnalysisOptions::default())
    });
    let links = report
        .findings
        .iter()
        .filter_map(|f| {
            f.filter.as_ref().map(|filter| FindingLink {
                id: f.id.clone(),
                title: f.title.clone(),
                query: filter.to_query(),
            })
        })
        .collect();
    let shown = if redact { report.redacted() } else { report };
    FromWorker::Report {
        markdown: shown.to_markdown(),
        redacted: redact,
        links,
    }
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post(msg: &FromWorker) {
    let text = serde_json::to_string(msg).unwrap_or_else(|e| {
        format!("{{\"type\":\"Error\",\"message\":\"cannot encode a message: {e}\"}}")
    });
    let _ = scope().post_message(&JsValue::from_str(&text));
}

/// Starts the worker: installs the message handler and says it is ready.
pub fn start() {
    console_error_panic_hook::set_once();
    let handler = Closure::<dyn FnMut(MessageEvent)>::new(on_message);
    scope().set_onmessage(Some(handler.as_ref().unchecked_ref()));
    handler.forget();
    post(&FromWorker::Ready);
}

fn on_message(event: MessageEvent) {
    let data = event.data();
    let array: js_sys::Array = match data.dyn_into() {
        Ok(a) => a,
        Err(_) => {
            post(&FromWorker::Error {
                message: "the worker got a message it does not understand".into(),
            });
            return;
        }
    };
    let command = array.get(0).as_string().unwrap_or_default();
    let request: ToWorker = match serde_json::from_str(&command) {
        Ok(r) => r,
        Err(e) => {
            post(&FromWorker::Error {
                message: format!("the worker got a request it does not understand: {e}"),
            });
            return;
        }
    };
    match request {
        ToWorker::Load => {
            let files: Vec<File> = array
                .iter()
                .skip(1)
                .filter_map(|v| v.dyn_into::<File>().ok())
                .collect();
            load(files);
        }
        ToWorker::Analyze => with_set(|set| {
            with_analyses(set, |all, timings| FromWorker::Analysis {
                analysis: serde_json::to_value(all).unwrap_or_default(),
                timings: timings.to_vec(),
            })
        }),
        ToWorker::Report { redact } => with_set(|set| report_of(set, redact)),
        ToWorker::Query { query } => with_set(|set| FromWorker::Events(query_events(set, &query))),
        ToWorker::Export { query } => with_set(|set| FromWorker::Exported {
            csv: export_csv(set, &query),
        }),
    }
}

fn with_set(f: impl FnOnce(&TraceSet) -> FromWorker) {
    let msg = LOADED.with(|l| match l.borrow().as_ref() {
        Some(set) => f(set),
        None => FromWorker::Error {
            message: "no trace is loaded in the worker; load the files again".into(),
        },
    });
    post(&msg);
}

/// Tracks bytes and time of a load and posts progress.
struct Meter {
    started_ms: f64,
    last_post_ms: f64,
    bytes_total: u64,
    bytes_before_file: u64,
    file_count: usize,
}

impl Meter {
    fn post(&mut self, phase: Phase, file_index: usize, file: &str, file_done: u64) {
        let now = js_sys::Date::now();
        self.last_post_ms = now;
        let bytes_done = self.bytes_before_file + file_done;
        let secs = ((now - self.started_ms) / 1000.0).max(1e-3);
        post(&FromWorker::Progress(Progress {
            phase,
            bytes_done,
            bytes_total: self.bytes_total,
            file_index,
            file_count: self.file_count,
            file: file.to_string(),
            mb_per_s: bytes_done as f64 / 1e6 / secs,
        }));
    }
}

fn load(files: Vec<File>) {
    LOADED.with(|l| *l.borrow_mut() = None);
    ANALYSES.with(|a| *a.borrow_mut() = None);
    let mut meter = Meter {
        started_ms: js_sys::Date::now(),
        last_post_ms: 0.0,
        bytes_total: files.iter().map(|f| f.size() as u64).sum(),
        bytes_before_file: 0,
        file_count: files.len(),
    };
    let mut tables = Vec::new();
    let mut times = Vec::new();
    for (index, file) in files.iter().enumerate() {
        let name = file.name();
        meter.post(Phase::Reading, index, &name, 0);
        let started = js_sys::Date::now();
        match load_file(file, index, &mut meter) {
            Ok(table) => {
                times.push((table.file.clone(), js_sys::Date::now() - started));
                tables.push(table);
            }
            Err(message) => post(&FromWorker::Failed {
                file: name.clone(),
                message,
            }),
        }
        meter.bytes_before_file += file.size() as u64;
    }
    let last = files.len().saturating_sub(1);
    if tables.is_empty() {
        meter.post(Phase::Done, last, "", 0);
        post(&FromWorker::NothingLoaded);
        return;
    }
    meter.bytes_before_file = meter.bytes_total;
    meter.post(Phase::Analysing, last, "", 0);
    let set = TraceSet::from_tables(tables);
    let ranks = set
        .ranks
        .iter()
        .map(|r| {
            let load_ms = times
                .iter()
                .find(|(f, _)| *f == r.table.file)
                .map_or(0.0, |t| t.1);
            rank_summary(r.rank, r.rank_source, &r.table, load_ms)
        })
        .collect();
    let loaded = LoadedSet {
        ranks,
        notes: set.notes.clone(),
        load_ms: js_sys::Date::now() - meter.started_ms,
    };
    LOADED.with(|l| *l.borrow_mut() = Some(set));
    meter.post(Phase::Done, last, "", 0);
    post(&FromWorker::Loaded(loaded));
}

fn rank_summary(rank: i64, source: &str, table: &TraceTable, load_ms: f64) -> RankSummary {
    RankSummary {
        rank,
        rank_source: source.to_string(),
        file: table.file.clone(),
        device: table.metadata.device_name.clone(),
        file_bytes: table.metadata.file_bytes,
        text_bytes: table.metadata.text_bytes,
        load_ms,
        summary: summarize(table),
        diagnostics: table.diagnostics.list(),
    }
}

/// Reads one `File` in slices into a table; the error is in plain words.
fn load_file(file: &File, index: usize, meter: &mut Meter) -> Result<TraceTable, String> {
    let name = file.name();
    let size = file.size() as u64;
    let reader = FileReaderSync::new()
        .map_err(|_| "this browser cannot read files in a worker (FileReaderSync)".to_string())?;
    let mut loader = TraceLoader::new(&name, Some(size));
    let mut offset = 0u64;
    while offset < size {
        let end = (offset + SLICE_BYTES).min(size);
        let blob = file
            .slice_with_f64_and_f64(offset as f64, end as f64)
            .map_err(|_| format!("{name}: could not cut the file at byte {offset}"))?;
        let buffer = reader
            .read_as_array_buffer(&blob)
            .map_err(|e| format!("{name}: the browser could not read the file ({e:?})"))?;
        let bytes = js_sys::Uint8Array::new(&buffer).to_vec();
        // Feed in pieces so a slow slice (gzip inflates ~15x) still reports every 150 ms
        // (256 KiB of gzip is ~4 MB of JSON, ~15 ms of parsing).
        let mut fed = 0usize;
        for piece in bytes.chunks(FEED_BYTES) {
            loader.feed(piece).map_err(|e| e.message)?;
            fed += piece.len();
            if js_sys::Date::now() - meter.last_post_ms >= PROGRESS_EVERY_MS {
                meter.post(Phase::Parsing, index, &name, offset + fed as u64);
            }
        }
        offset = end;
        meter.post(Phase::Parsing, index, &name, offset);
    }
    loader.finish().map_err(|e| e.message)
}
