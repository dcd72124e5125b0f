//! The Leptos web app (wasm32 only): renders reports and talks to the worker; no analysis here.
//!
//! The page keeps only what the worker sends back (summaries, diagnostics, the report's Markdown and
//! the analyses' JSON); the trace tables stay in the worker. Element ids and `data-*` attributes
//! follow the page contract (`notes/page-contract.md`).

mod cache;
mod explore;
mod markdown;
mod view;

use std::cell::RefCell;

use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{File, MessageEvent, Worker};

use crate::analysis::all::AnalysisTiming;
use crate::table::query::{EventPage, EventQuery, SortBy};
use crate::worker::protocol::{FindingLink, FromWorker, LoadedSet, Phase, Progress, ToWorker};

/// Where the page is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Idle,
    Loading,
    Loaded,
    Cancelled,
    Failed,
}

/// The "keep in this browser" offer after a load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepOffer {
    Hidden,
    Asking,
    Kept,
    Declined,
}

/// What the cache holds for one set of files (results only, never the raw trace).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SavedResults {
    pub loaded: LoadedSet,
    pub report: Option<String>,
    /// The saved report has names replaced by hashes.
    #[serde(default)]
    pub report_redacted: bool,
    pub analysis: Option<Value>,
}

/// All the page's state, as copyable signal handles.
#[derive(Clone, Copy)]
pub struct AppState {
    pub status: RwSignal<Status>,
    pub progress: RwSignal<Option<Progress>>,
    pub errors: RwSignal<Vec<String>>,
    pub loaded: RwSignal<Option<LoadedSet>>,
    /// Index into `loaded.ranks` of the rank shown.
    pub rank_index: RwSignal<usize>,
    pub report: RwSignal<Option<String>>,
    pub analysis: RwSignal<Option<Value>>,
    pub request_error: RwSignal<Option<String>>,
    /// Cache key of the files being shown.
    pub cache_key: RwSignal<Option<String>>,
    pub keep_offer: RwSignal<KeepOffer>,
    /// Saved results exist for the files being loaded.
    pub saved_available: RwSignal<bool>,
    pub from_cache: RwSignal<bool>,
    pub dragging: RwSignal<bool>,
    pub notice: RwSignal<Option<String>>,
    /// What was shown before the load in progress (restored if that load fails or is cancelled,
    /// so a bad file never loses what the user already had), with its cache key.
    pub previous: RwSignal<Option<(SavedResults, Option<String>)>>,
    /// The report's findings that point at events (opened in the exploration view).
    pub report_links: RwSignal<Vec<FindingLink>>,
    /// The user asked for the report with names replaced by hashes (the switch).
    pub redact: RwSignal<bool>,
    /// The deeper analyses are asked for in HTA 0.5.0-compatible mode (else exact).
    pub hta_compat: RwSignal<bool>,
    /// The report shown now has names replaced by hashes. It follows `redact` once the worker's
    /// answer arrives, so `#report[data-redacted]` never claims a redaction that is not on screen.
    pub report_redacted: RwSignal<bool>,
    /// The exploration view's query, and the page of events the worker answered.
    pub query: RwSignal<EventQuery>,
    pub events: RwSignal<Option<EventPage>>,
    /// Time of each analysis in the worker (empty for results from the cache).
    pub analysis_timings: RwSignal<Vec<AnalysisTiming>>,
}

/// The exploration view's first query: every event, longest first.
fn first_query() -> EventQuery {
    EventQuery {
        sort: SortBy::Duration,
        descending: true,
        limit: 50,
        ..Default::default()
    }
}

impl AppState {
    fn new() -> Self {
        AppState {
            status: RwSignal::new(Status::Idle),
            progress: RwSignal::new(None),
            errors: RwSignal::new(Vec::new()),
            loaded: RwSignal::new(None),
            rank_index: RwSignal::new(0),
            report: RwSignal::new(None),
            analysis: RwSignal::new(None),
            request_error: RwSignal::new(None),
            cache_key: RwSignal::new(None),
            keep_offer: RwSignal::new(KeepOffer::Hidden),
            saved_available: RwSignal::new(false),
            from_cache: RwSignal::new(false),
            dragging: RwSignal::new(false),
            notice: RwSignal::new(None),
            previous: RwSignal::new(None),
            report_links: RwSignal::new(Vec::new()),
            redact: RwSignal::new(false),
            report_redacted: RwSignal::new(false),
            hta_compat: RwSignal::new(false),
            query: RwSignal::new(first_query()),
            events: RwSignal::new(None),
            analysis_timings: RwSignal::new(Vec::new()),
        }
    }
}

struct WorkerHandle {
    /// Tells this worker's messages from those of a worker started before or after it.
    id: u32,
    worker: Worker,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::ErrorEvent)>,
    /// The worker said `Ready` (its wasm is running and listens); before that, messages wait in
    /// `pending`, since a message that arrives before the worker's handler is installed is lost.
    ready: bool,
    pending: Vec<js_sys::Array>,
    /// Something was posted to it: it may hold a load's tables, so the next load takes a fresh one.
    used: bool,
}

thread_local! {
    /// The worker in use.
    static WORKER: RefCell<Option<WorkerHandle>> = const { RefCell::new(None) };
    /// A worker started ahead (after a load), so that the next load does not wait for a worker and
    /// its reader worker to compile and start: the next restart takes it.
    static SPARE: RefCell<Option<WorkerHandle>> = const { RefCell::new(None) };
    static NEXT_WORKER_ID: std::cell::Cell<u32> = const { std::cell::Cell::new(1) };
}

fn start_worker(state: AppState) -> Result<WorkerHandle, String> {
    let id = NEXT_WORKER_ID.with(|n| {
        let id = n.get();
        n.set(id + 1);
        id
    });
    let worker = Worker::new("./worker_loader.js").map_err(|e| format!("{e:?}"))?;
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        let Some(text) = event.data().as_string() else {
            return;
        };
        let msg = match serde_json::from_str::<FromWorker>(&text) {
            Ok(msg) => msg,
            Err(e) => {
                state
                    .errors
                    .update(|v| v.push(format!("Unexpected message from the worker: {e}")));
                return;
            }
        };
        let in_use = WORKER.with(|w| w.borrow().as_ref().map(|h| h.id)) == Some(id);
        if in_use {
            on_worker_message(state, msg);
        } else if matches!(msg, FromWorker::Ready) {
            SPARE.with(|s| {
                if let Some(h) = s.borrow_mut().as_mut().filter(|h| h.id == id) {
                    h.ready = true;
                }
            });
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    let on_error =
        Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(move |event: web_sys::ErrorEvent| {
            let in_use = WORKER.with(|w| w.borrow().as_ref().map(|h| h.id)) == Some(id);
            if in_use {
                on_worker_crash(state, &event.message());
            } else {
                SPARE.with(|s| {
                    if s.borrow().as_ref().is_some_and(|h| h.id == id) {
                        *s.borrow_mut() = None;
                    }
                });
            }
        });
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    Ok(WorkerHandle {
        id,
        worker,
        _on_message: on_message,
        _on_error: on_error,
        ready: false,
        pending: Vec::new(),
        used: false,
    })
}

/// Stops the current worker (if any) and puts a fresh one in its place (the spare, when there is
/// one). A worker that was never given anything is fresh already and stays: the page starts one at
/// start-up, and the first load should not wait for another to compile and start.
fn restart_worker(state: AppState) {
    if WORKER.with(|w| w.borrow().as_ref().is_some_and(|h| !h.used)) {
        return;
    }
    WORKER.with(|w| {
        if let Some(old) = w.borrow_mut().take() {
            old.worker.terminate();
        }
    });
    let next = match SPARE.with(|s| s.borrow_mut().take()) {
        Some(spare) => Ok(spare),
        None => start_worker(state),
    };
    match next {
        Ok(h) => WORKER.with(|w| *w.borrow_mut() = Some(h)),
        Err(e) => {
            state
                .errors
                .update(|v| v.push(format!("The page could not start its worker: {e}")));
            return;
        }
    }
}

/// The worker in use stopped with an uncaught error (a trap: most often WebAssembly's 4 GiB memory
/// is full). Its tables are gone: say so in plain words, start a fresh worker, and show again what
/// was loaded before when the crash came during a load.
fn on_worker_crash(state: AppState, detail: &str) {
    WORKER.with(|w| {
        if let Some(old) = w.borrow_mut().take() {
            old.worker.terminate();
        }
    });
    restart_worker(state);
    let detail = if detail.is_empty() {
        "no detail"
    } else {
        detail
    };
    let memory_hint = "The usual cause is memory: one browser tab holds the tables of about 8 GB of trace JSON \
                       at most (WebAssembly's 4 GiB). Load fewer ranks at a time, or use the command line \
                       (`profile-model analyze FOLDER`), which has no such limit.";
    if state.status.get_untracked() == Status::Loading {
        let (done, total) = state
            .progress
            .get_untracked()
            .map_or((0, 0), |p| (p.bytes_done, p.bytes_total));
        state.errors.update(|v| {
            v.push(format!(
                "Reading the trace stopped: the page's worker failed ({detail}) after {} of {}. {memory_hint}",
                crate::report::format::bytes(done),
                crate::report::format::bytes(total)
            ))
        });
        state.keep_offer.set(KeepOffer::Hidden);
        end_failed_load(state);
    } else {
        state.request_error.set(Some(format!(
            "The page's worker failed ({detail}); the figures shown stay, but to explore the events or \
             run the analyses again, load the files again. {memory_hint}"
        )));
    }
}

/// A load gave nothing: show again what was loaded before, or else end the load as failed.
fn end_failed_load(state: AppState) {
    if restore_previous(state) {
        return;
    }
    state.status.set(Status::Failed);
    state.progress.update(|p| {
        if let Some(p) = p {
            p.phase = Phase::Done;
        }
    });
}

/// Starts the spare worker if there is none. Called once a load is done, not at start-up, so that
/// it never competes with a load for the CPU.
fn ensure_spare(state: AppState) {
    if SPARE.with(|s| s.borrow().is_none()) {
        if let Ok(spare) = start_worker(state) {
            SPARE.with(|s| *s.borrow_mut() = Some(spare));
        }
    }
}

fn post_to_worker(state: AppState, request: &ToWorker, files: &[File]) {
    let message = js_sys::Array::new();
    message.push(&JsValue::from_str(
        &serde_json::to_string(request).unwrap_or_default(),
    ));
    for f in files {
        message.push(f);
    }
    let sent = WORKER.with(|w| match w.borrow_mut().as_mut() {
        Some(h) => {
            h.used = true;
            if h.ready {
                h.worker.post_message(&message).is_ok()
            } else {
                h.pending.push(message);
                true
            }
        }
        None => false,
    });
    if !sent {
        state
            .errors
            .update(|v| v.push("The page's worker is not running; reload the page.".into()));
    }
}

fn on_worker_message(state: AppState, msg: FromWorker) {
    match msg {
        FromWorker::Ready => {
            let failed = WORKER.with(|w| match w.borrow_mut().as_mut() {
                Some(h) => {
                    h.ready = true;
                    let pending = std::mem::take(&mut h.pending);
                    pending.iter().any(|m| h.worker.post_message(m).is_err())
                }
                None => false,
            });
            if failed {
                state.errors.update(|v| {
                    v.push("The page could not talk to its worker; reload the page.".into())
                });
            }
        }
        FromWorker::Progress(p) => {
            if state.status.get_untracked() == Status::Loading {
                state.progress.set(Some(p));
            }
        }
        FromWorker::Failed { file, message } => {
            let text = if message.contains(&file) {
                message
            } else {
                format!("{file}: {message}")
            };
            state.errors.update(|v| v.push(text));
        }
        FromWorker::NothingLoaded => {
            ensure_spare(state);
            end_failed_load(state);
        }
        FromWorker::Loaded(set) => {
            ensure_spare(state);
            state.previous.set(None);
            state.rank_index.set(0);
            state.loaded.set(Some(set));
            state.status.set(Status::Loaded);
            state.progress.update(|p| {
                if let Some(p) = p {
                    p.phase = Phase::Done;
                    p.bytes_done = p.bytes_total;
                }
            });
            if !state.saved_available.get_untracked() {
                state.keep_offer.set(KeepOffer::Asking);
            }
            let redact = state.redact.get_untracked();
            post_to_worker(state, &ToWorker::Report { redact }, &[]);
            let hta_compat = state.hta_compat.get_untracked();
            post_to_worker(state, &ToWorker::Analyze { hta_compat }, &[]);
            run_query(state, first_query());
        }
        FromWorker::Report {
            markdown,
            redacted,
            links,
        } => {
            // An answer to an older redact choice is dropped (the newer one is on its way).
            if redacted == state.redact.get_untracked() {
                state.report.set(Some(markdown));
                state.report_redacted.set(redacted);
                state.report_links.set(links);
                save_if_kept(state);
            }
        }
        FromWorker::Events(page) => state.events.set(Some(page)),
        FromWorker::Exported { csv } => {
            view::download(&csv, "text/csv", "profile-model-events.csv")
        }
        FromWorker::Analysis { analysis, timings } => {
            // An answer for the other mode (the switch moved since it was asked for) is dropped.
            let compat = analysis.get("mode").and_then(Value::as_str) == Some("hta-compat");
            if compat != state.hta_compat.get_untracked() {
                return;
            }
            state.analysis_timings.set(timings);
            state.analysis.set(Some(analysis));
            save_if_kept(state);
        }
        FromWorker::Error { message } => state.request_error.set(Some(message)),
    }
}

/// Asks the worker for a page of events.
pub fn run_query(state: AppState, query: EventQuery) {
    state.query.set(query.clone());
    post_to_worker(state, &ToWorker::Query { query }, &[]);
}

/// Asks the worker for the current query's CSV (downloaded when it comes).
pub fn export_query(state: AppState) {
    let query = state.query.get_untracked();
    post_to_worker(state, &ToWorker::Export { query }, &[]);
}

/// Shows the report with names hashed (or not), asking the worker for it again.
pub fn set_redact(state: AppState, on: bool) {
    state.redact.set(on);
    post_to_worker(state, &ToWorker::Report { redact: on }, &[]);
}

/// Shows the deeper analyses in HTA 0.5.0-compatible mode (or exact), asking the worker for them.
pub fn set_hta_compat(state: AppState, on: bool) {
    state.hta_compat.set(on);
    state.analysis.set(None);
    post_to_worker(state, &ToWorker::Analyze { hta_compat: on }, &[]);
}

/// Opens a finding's events in the exploration view.
pub fn open_finding(state: AppState, link: &FindingLink) {
    run_query(state, link.query.clone());
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("explore"))
    {
        el.scroll_into_view();
    }
}

/// Starts loading these files (one per rank) in a fresh worker.
pub fn start_load(state: AppState, files: Vec<File>) {
    if files.is_empty() {
        state.errors.set(vec![
            "No trace files were found: pick .json or .json.gz files written by torch.profiler."
                .into(),
        ]);
        return;
    }
    restart_worker(state);
    if state.status.get_untracked() == Status::Loaded {
        if let Some(loaded) = state.loaded.get_untracked() {
            state.previous.set(Some((
                SavedResults {
                    loaded,
                    report: state.report.get_untracked(),
                    report_redacted: state.report_redacted.get_untracked(),
                    analysis: state.analysis.get_untracked(),
                },
                state.cache_key.get_untracked(),
            )));
        }
    }
    let total: u64 = files.iter().map(|f| f.size() as u64).sum();
    state.errors.set(Vec::new());
    state.loaded.set(None);
    state.report.set(None);
    state.analysis.set(None);
    state.report_links.set(Vec::new());
    state.analysis_timings.set(Vec::new());
    state.events.set(None);
    state.query.set(first_query());
    state.request_error.set(None);
    state.from_cache.set(false);
    state.keep_offer.set(KeepOffer::Hidden);
    state.saved_available.set(false);
    state.notice.set(None);
    state.progress.set(Some(Progress {
        phase: Phase::Reading,
        bytes_done: 0,
        bytes_total: total,
        file_index: 0,
        file_count: files.len(),
        file: files[0].name(),
        mb_per_s: 0.0,
    }));
    state.status.set(Status::Loading);
    let key = cache::key_of(&files);
    state.cache_key.set(Some(key.clone()));
    leptos::task::spawn_local(async move {
        if let Ok(Some(_)) = cache::get(&key).await {
            if state.cache_key.get_untracked().as_deref() == Some(key.as_str()) {
                state.saved_available.set(true);
                if state.keep_offer.get_untracked() == KeepOffer::Asking {
                    state.keep_offer.set(KeepOffer::Kept);
                }
            }
        }
    });
    post_to_worker(state, &ToWorker::Load, &files);
}

/// Stops the load at once: the worker is terminated and a new one started.
pub fn cancel(state: AppState) {
    restart_worker(state);
    state.keep_offer.set(KeepOffer::Hidden);
    state.status.set(Status::Cancelled);
    if restore_previous(state) {
        state.notice.set(Some(
            "Cancelled: the new load was stopped; the trace loaded before is shown.".into(),
        ));
    }
}

/// Shows again what was loaded before the load that just failed or was cancelled. The worker was
/// restarted, so only the results the page already had come back. Returns whether there was any.
fn restore_previous(state: AppState) -> bool {
    let Some((saved, key)) = state.previous.get_untracked() else {
        return false;
    };
    state.previous.set(None);
    state.rank_index.set(0);
    state.loaded.set(Some(saved.loaded));
    state.report.set(saved.report);
    state.report_redacted.set(saved.report_redacted);
    state.redact.set(saved.report_redacted);
    state.analysis.set(saved.analysis);
    state.cache_key.set(key);
    state.progress.set(None);
    state.status.set(Status::Loaded);
    true
}

fn saved_now(state: AppState) -> Option<String> {
    let loaded = state.loaded.get_untracked()?;
    serde_json::to_string(&SavedResults {
        loaded,
        report: state.report.get_untracked(),
        report_redacted: state.report_redacted.get_untracked(),
        analysis: state.analysis.get_untracked(),
    })
    .ok()
}

/// Stores the results shown now (only after the user said Keep).
pub fn keep(state: AppState) {
    let (Some(key), Some(json)) = (state.cache_key.get_untracked(), saved_now(state)) else {
        return;
    };
    state.keep_offer.set(KeepOffer::Kept);
    leptos::task::spawn_local(async move {
        if cache::put(&key, &json).await.is_err() {
            state.notice.set(Some(
                "This browser did not let the page save the results.".into(),
            ));
            state.keep_offer.set(KeepOffer::Hidden);
        }
    });
}

fn save_if_kept(state: AppState) {
    if state.keep_offer.get_untracked() == KeepOffer::Kept && !state.from_cache.get_untracked() {
        keep(state);
    }
}

/// Shows the saved results of the files being loaded (and stops their load).
pub fn show_saved(state: AppState) {
    let Some(key) = state.cache_key.get_untracked() else {
        return;
    };
    leptos::task::spawn_local(async move {
        match cache::get(&key).await {
            Ok(Some(json)) => match serde_json::from_str::<SavedResults>(&json) {
                Ok(saved) => {
                    restart_worker(state);
                    state.rank_index.set(0);
                    state.loaded.set(Some(saved.loaded));
                    state.report.set(saved.report);
                    state.report_redacted.set(saved.report_redacted);
                    state.redact.set(saved.report_redacted);
                    state.analysis.set(saved.analysis);
                    state.from_cache.set(true);
                    state.keep_offer.set(KeepOffer::Hidden);
                    state.progress.set(None);
                    state.status.set(Status::Loaded);
                }
                Err(_) => state.notice.set(Some(
                    "The saved results are from an older version of this page; load the trace."
                        .into(),
                )),
            },
            _ => state
                .notice
                .set(Some("No saved results were found for these files.".into())),
        }
    });
}

/// Clears the cache.
pub fn forget_saved(state: AppState) {
    leptos::task::spawn_local(async move {
        let text = match cache::clear().await {
            Ok(()) => "Saved traces forgotten: nothing is kept in this browser.",
            Err(_) => "This browser did not let the page clear its saved results.",
        };
        state.saved_available.set(false);
        if state.keep_offer.get_untracked() == KeepOffer::Kept {
            state.keep_offer.set(KeepOffer::Hidden);
        }
        state.notice.set(Some(text.into()));
    });
}

/// Mounts the app on the page's body.
pub fn mount() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(|| {
        let state = AppState::new();
        restart_worker(state);
        view::app(state)
    });
}
