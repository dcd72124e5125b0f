//! The Leptos web app (wasm32 only): renders reports and talks to the worker; no analysis here.
//!
//! The page keeps only what the worker sends back (summaries, diagnostics, the typed report and
//! analyses); the trace tables stay in the worker. What is shown, and which worker can answer about
//! it, is the native state machine [`PageState`]; this module carries out its [`Effect`]s. Element
//! ids and `data-*` attributes follow the page contract (`notes/page-contract.md`).

mod analyses;
mod cache;
mod charts;
mod compare;
mod explore;
mod health;
mod loader;
mod report_panel;
mod report_view;
mod sample;
mod saved;
mod shell;
mod sql;
mod status;
mod step_picker;
mod summary;
mod timeline;
mod timeline_arrivals;
mod timeline_draw;
mod timeline_panels;
mod timeline_ranks;
mod view;
mod views;

use std::cell::RefCell;

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{File, MessageEvent, Worker};

use crate::page::page_state::{decode_saved, encode_saved, Effect, PageState, WorkerRole};
use crate::page::saved::{CacheProblem, SavedEntry, SavedFile};
use crate::protocol::{FindingLink, FromWorker, LoadedSet, Phase, Progress, ToWorker};
use crate::table::query::EventQuery;

/// The page's state: the state machine, plus the load's progress and the drop zone's highlight
/// (both change often and concern nothing else).
#[derive(Clone, Copy)]
pub struct AppState {
    pub page: RwSignal<PageState>,
    pub progress: RwSignal<Option<Progress>>,
    pub dragging: RwSignal<bool>,
    /// The loaded set on screen (changes only when another one is shown).
    pub loaded: Memo<Option<LoadedSet>>,
    /// [`PageState::revision`]: the results shown changed.
    pub revision: Memo<u64>,
    /// The explorer's panel, scrolled to when a finding's events open.
    pub explore_panel: NodeRef<leptos::html::Section>,
    /// The timeline's panel, scrolled to when a finding's evidence is located.
    pub timeline_panel: NodeRef<leptos::html::Section>,
}

impl AppState {
    fn new() -> Self {
        let page = RwSignal::new(PageState::default());
        AppState {
            page,
            progress: RwSignal::new(None),
            dragging: RwSignal::new(false),
            loaded: Memo::new(move |_| page.with(|p| p.loaded_shown())),
            revision: Memo::new(move |_| page.with(|p| p.revision)),
            explore_panel: NodeRef::new(),
            timeline_panel: NodeRef::new(),
        }
    }

    /// A part of the page state that notifies only when it changes.
    pub fn select<T: PartialEq + Send + Sync + 'static>(self, f: fn(&PageState) -> T) -> Memo<T> {
        let page = self.page;
        Memo::new(move |_| page.with(f))
    }
}

/// "Show on timeline" for the rows of any table that names events (given to the tables as a
/// context, so that the generic table component needs no page state).
#[derive(Clone, Copy)]
pub struct LocateEvents(pub Callback<EventQuery>);

/// Runs a transition of the state machine, then carries out what it asks for.
fn apply(state: AppState, f: impl FnOnce(&mut PageState) -> Vec<Effect>) {
    let effects = state.page.try_update(f).unwrap_or_default();
    for effect in effects {
        run_effect(state, effect);
    }
}

fn run_effect(state: AppState, effect: Effect) {
    match effect {
        Effect::StartLoadWorker => {
            let next = match SPARE.with(|s| s.borrow_mut().take()) {
                Some(spare) => Ok(spare),
                None => start_worker(state),
            };
            match next {
                Ok(h) => LOADER.with(|w| *w.borrow_mut() = Some(h)),
                Err(e) => state.page.update(|p| {
                    p.errors
                        .push(format!("The page could not start its worker: {e}"))
                }),
            }
        }
        Effect::PromoteLoadWorker => {
            let loader = LOADER.with(|w| w.borrow_mut().take());
            stop(WORKER.with(|w| std::mem::replace(&mut *w.borrow_mut(), loader)));
            ensure_spare(state);
        }
        Effect::DropLoadWorker => {
            stop(LOADER.with(|w| w.borrow_mut().take()));
            ensure_spare(state);
        }
        Effect::ReplaceCurrentWorker => {
            stop(WORKER.with(|w| w.borrow_mut().take()));
            ensure_spare(state);
        }
        Effect::Post(request) => post_to(&WORKER, state, &request, &[]),
        Effect::Save => save_results(state),
        Effect::ForgetEntry(key) => leptos::task::spawn_local(async move {
            let _ = cache::forget(&key).await;
        }),
        Effect::WorkerReady(role) => {
            if let Some(slot) = slot_of(role) {
                if !on_ready(slot) {
                    state.page.update(|p| {
                        p.errors
                            .push("The page could not talk to its worker; reload the page.".into())
                    });
                }
            }
        }
        Effect::ShowProgress(p) => state.progress.set(Some(p)),
        Effect::EndProgress { complete } => state.progress.update(|p| {
            if let Some(p) = p {
                p.phase = Phase::Done;
                if complete {
                    p.bytes_done = p.bytes_total;
                }
            }
        }),
        Effect::HideProgress => state.progress.set(None),
        Effect::Warn(text) => web_sys::console::warn_1(&text.into()),
        Effect::Download {
            text,
            mime,
            file_name,
        } => view::download(&text, &mime, &file_name),
        // Only a worker's message brings buffers ([`run_message_effect`]).
        Effect::DownloadBuffer { .. } | Effect::StoreTables { .. } | Effect::SqlLoad { .. } => {}
        Effect::SqlStart => sql::start(state),
        Effect::SqlRun(query) => sql::run(state, query),
        Effect::ScrollToTimeline => scroll_to(state.timeline_panel),
    }
}

fn stop(handle: Option<WorkerHandle>) {
    if let Some(h) = handle {
        h.worker.terminate();
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
    /// Messages waiting for `Ready`, with what they transfer.
    pending: Vec<(js_sys::Array, Option<js_sys::Array>)>,
}

type Slot = std::thread::LocalKey<RefCell<Option<WorkerHandle>>>;

thread_local! {
    /// The worker holding the trace on screen (none when nothing shown has a worker).
    static WORKER: RefCell<Option<WorkerHandle>> = const { RefCell::new(None) };
    /// The worker of the load in progress: it replaces `WORKER` only once the load succeeds.
    static LOADER: RefCell<Option<WorkerHandle>> = const { RefCell::new(None) };
    /// A worker started ahead, so that the next load does not wait for a worker and its reader
    /// worker to compile and start.
    static SPARE: RefCell<Option<WorkerHandle>> = const { RefCell::new(None) };
    static NEXT_WORKER_ID: std::cell::Cell<u32> = const { std::cell::Cell::new(1) };
    /// The files of the last load started (a later comparison reads them again as its baseline).
    static LAST_FILES: RefCell<Vec<File>> = const { RefCell::new(Vec::new()) };
    /// The files behind each cache key met in this page (the index entry names them).
    static KEYED_FILES: RefCell<Vec<(String, Vec<SavedFile>)>> = const { RefCell::new(Vec::new()) };
}

/// Which of the page's workers has this id.
fn role_of(id: u32) -> WorkerRole {
    let is = |slot: &'static Slot| slot.with(|w| w.borrow().as_ref().map(|h| h.id)) == Some(id);
    if is(&WORKER) {
        WorkerRole::Current
    } else if is(&LOADER) {
        WorkerRole::Loader
    } else if is(&SPARE) {
        WorkerRole::Spare
    } else {
        WorkerRole::Gone
    }
}

fn slot_of(role: WorkerRole) -> Option<&'static Slot> {
    match role {
        WorkerRole::Current => Some(&WORKER),
        WorkerRole::Loader => Some(&LOADER),
        WorkerRole::Spare => Some(&SPARE),
        WorkerRole::Gone => None,
    }
}

fn start_worker(state: AppState) -> Result<WorkerHandle, String> {
    let id = NEXT_WORKER_ID.with(|n| {
        let id = n.get();
        n.set(id + 1);
        id
    });
    let worker = Worker::new("./worker_loader.js").map_err(|e| format!("{e:?}"))?;
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        // Bytes, or `[bytes, ArrayBuffer, ...]` for a binary download or the tables.
        let Some((bytes, buffers)) = crate::worker::message_parts(event.data()) else {
            return;
        };
        match crate::protocol::codec::decode::<FromWorker>(&bytes) {
            Ok(msg) => {
                let role = role_of(id);
                let effects = state
                    .page
                    .try_update(|p| p.on_message(role, msg))
                    .unwrap_or_default();
                for effect in effects {
                    run_message_effect(state, effect, &buffers);
                }
            }
            Err(e) => state.page.update(|p| {
                p.request_error = Some(format!("Unexpected message from the worker: {e}"))
            }),
        }
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    let on_error =
        Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(move |event: web_sys::ErrorEvent| {
            on_worker_crash(state, role_of(id), &event.message());
        });
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    Ok(WorkerHandle {
        id,
        worker,
        _on_message: on_message,
        _on_error: on_error,
        ready: false,
        pending: Vec::new(),
    })
}

const MEMORY_HINT: &str =
    "The usual cause is memory: one worker holds the tables of about 8 GB of trace JSON at \
     most (WebAssembly's 4 GiB); a rank set over 1.5 GB of JSON is split over several workers, \
     but one rank must fit one worker, and the tab needs the machine's memory for all of them. \
     Load fewer ranks at a time, or use the command line (`profile-model analyze FOLDER`), which \
     has no such limit.";

/// A worker stopped with an uncaught error (a trap: most often WebAssembly's 4 GiB memory is
/// full). Its tables are gone: say so in plain words.
fn on_worker_crash(state: AppState, role: WorkerRole, detail: &str) {
    let detail = if detail.is_empty() {
        "no detail"
    } else {
        detail
    };
    match role {
        WorkerRole::Loader => {
            let (done, total) = state
                .progress
                .get_untracked()
                .map_or((0, 0), |p| (p.bytes_done, p.bytes_total));
            let text = format!(
                "Reading the trace stopped: the page's worker failed ({detail}) after {} of {}. {MEMORY_HINT}",
                crate::report::format::bytes(done),
                crate::report::format::bytes(total)
            );
            end_progress(state);
            apply(state, |p| p.load_worker_died(text));
            hide_progress_if_shown(state);
        }
        WorkerRole::Current => {
            let text = format!(
                "The page's worker failed ({detail}); the figures shown stay, but to explore the events or \
                 run the analyses again, load the files again. {MEMORY_HINT}"
            );
            apply(state, |p| p.current_worker_died(text));
        }
        WorkerRole::Spare => stop(SPARE.with(|s| s.borrow_mut().take())),
        WorkerRole::Gone => {}
    }
}

/// A load ended and the results before it are back: its progress bar goes.
fn hide_progress_if_shown(state: AppState) {
    if state.page.with_untracked(|p| p.shown().is_some()) {
        state.progress.set(None);
    }
}

/// The progress bar of a load that ended stops moving.
fn end_progress(state: AppState) {
    state.progress.update(|p| {
        if let Some(p) = p {
            p.phase = Phase::Done;
        }
    });
}

/// Starts the spare worker if there is none. Called once a load is done, not while one runs, so
/// that it never competes with a load for the CPU.
fn ensure_spare(state: AppState) {
    if SPARE.with(|s| s.borrow().is_none()) {
        if let Ok(spare) = start_worker(state) {
            SPARE.with(|s| *s.borrow_mut() = Some(spare));
        }
    }
}

fn post_to(slot: &'static Slot, state: AppState, request: &ToWorker, files: &[File]) {
    let parts: Vec<JsValue> = files.iter().map(JsValue::from).collect();
    post_parts(slot, state, request, &parts, false);
}

/// Posts `[json(request), parts...]`; `transfer`: the parts (`ArrayBuffer`s) are moved, not copied.
fn post_parts(
    slot: &'static Slot,
    state: AppState,
    request: &ToWorker,
    parts: &[JsValue],
    transfer: bool,
) {
    let message = js_sys::Array::new();
    message.push(&crate::worker::js_bytes(
        &crate::protocol::codec::encode(request).unwrap_or_default(),
    ));
    for p in parts {
        message.push(p);
    }
    let moved = transfer.then(|| parts.iter().collect::<js_sys::Array>());
    let sent = slot.with(|w| match w.borrow_mut().as_mut() {
        Some(h) if h.ready => send(&h.worker, &message, moved.as_ref()),
        Some(h) => {
            h.pending.push((message, moved));
            true
        }
        None => false,
    });
    if !sent {
        state.page.update(|p| {
            p.request_error = Some("The page's worker is not running; load the files again.".into())
        });
    }
}

fn send(worker: &Worker, message: &js_sys::Array, transfer: Option<&js_sys::Array>) -> bool {
    match transfer {
        Some(t) => worker.post_message_with_transfer(message, t).is_ok(),
        None => worker.post_message(message).is_ok(),
    }
}

/// The worker in `slot` listens: send what waited for it.
fn on_ready(slot: &'static Slot) -> bool {
    slot.with(|w| match w.borrow_mut().as_mut() {
        Some(h) => {
            h.ready = true;
            let pending = std::mem::take(&mut h.pending);
            pending
                .iter()
                .all(|(m, moved)| send(&h.worker, m, moved.as_ref()))
        }
        None => true,
    })
}

/// An effect of a worker's message: those about the buffers that came with it here, the others
/// as any transition's.
fn run_message_effect(state: AppState, effect: Effect, buffers: &[JsValue]) {
    match effect {
        Effect::DownloadBuffer { file_name, mime } => {
            if let Some(buffer) = buffers.first() {
                view::download_buffer(buffer, &mime, &file_name);
            }
        }
        Effect::StoreTables { format, bytes } => {
            store_tables(state, format, bytes, buffers.to_vec())
        }
        Effect::SqlLoad { parts } => sql::tables_came(state, parts, buffers),
        other => run_effect(state, other),
    }
}

/// The same file under another name (no copy: the new `File` refers to the same data).
fn renamed(file: &File, name: &str) -> Option<File> {
    File::new_with_blob_sequence(&js_sys::Array::of1(file), name).ok()
}

/// Loads a baseline run and a candidate run (each one file or one per rank) in a new worker and
/// compares them. Their files are named `baseline: …` and `candidate: …`, so that files of the same
/// name in both runs stay apart.
pub fn start_compare(state: AppState, baseline: Vec<File>, candidate: Vec<File>) {
    let side = |files: &[File], label: &str| -> Vec<File> {
        files
            .iter()
            .filter_map(|f| {
                renamed(
                    f,
                    &crate::page::compared_runs::file_of_run(label, &f.name()),
                )
            })
            .collect()
    };
    let [b_run, c_run] = crate::page::compared_runs::RUNS;
    let (b, c) = (side(&baseline, b_run), side(&candidate, c_run));
    if b.len() != baseline.len() || c.len() != candidate.len() || b.is_empty() || c.is_empty() {
        state.page.update(|p| {
            p.errors =
                vec!["The page could not prepare the two runs' files: pick them again.".into()]
        });
        return;
    }
    let names: Vec<String> = b.iter().map(File::name).collect();
    let files: Vec<File> = b.into_iter().chain(c).collect();
    let key = remember_files(&files);
    show_load_progress(state, &files);
    apply(state, |p| p.start_compare_load(Some(key), names));
    post_to(&LOADER, state, &load_request(), &files);
}

/// Compares the trace loaded last (the baseline, read again) with `candidate`.
pub fn compare_with_loaded(state: AppState, candidate: Vec<File>) {
    let baseline = LAST_FILES.with(|l| l.borrow().clone());
    if baseline.is_empty() {
        state.page.update(|p| {
            p.errors = vec!["Load a trace first, then pick the run to compare it with.".into()]
        });
        return;
    }
    start_compare(state, baseline, candidate);
}

/// Compares the two runs the loaded files hold.
pub fn compare_runs(state: AppState) {
    apply(state, PageState::compare_runs);
}

/// The progress bar of a load of `files` starts.
fn show_load_progress(state: AppState, files: &[File]) {
    let total: u64 = files.iter().map(|f| f.size() as u64).sum();
    state.progress.set(Some(Progress {
        phase: Phase::Reading,
        bytes_done: 0,
        bytes_total: total,
        file_index: 0,
        file_count: files.len(),
        file: files[0].name(),
        mb_per_s: 0.0,
        files: Vec::new(),
    }));
}

/// Asks the worker for a page of events.
pub fn run_query(state: AppState, query: EventQuery) {
    apply(state, |p| p.run_query(query));
}

/// Asks the worker for the current query's CSV (downloaded when it comes).
pub fn export_query(state: AppState) {
    let effects = state.page.with_untracked(PageState::export);
    effects.into_iter().for_each(|e| run_effect(state, e));
}

/// Asks the worker for the whole event table as a file (downloaded when it comes).
pub fn export_table(state: AppState, format: crate::export::ExportFormat) {
    let effects = state.page.with_untracked(|p| p.export_table(format));
    effects.into_iter().for_each(|e| run_effect(state, e));
}

/// Shows the report with names hashed (or not).
pub fn set_redact(state: AppState, on: bool) {
    state.page.update(|p| p.set_redact(on));
}

/// Shows the deeper analyses in HTA 0.5.0-compatible mode (or exact), asking for the missing mode.
pub fn set_hta_compat(state: AppState, on: bool) {
    apply(state, |p| p.set_hta_compat(on));
}

/// Opens a finding's events in the exploration view (its tab).
pub fn open_finding(state: AppState, link: &FindingLink) {
    apply(state, |p| p.open_finding(link));
    scroll_to(state.explore_panel);
}

/// Scrolls a panel into view, when it is on the page (after the tab it is in is drawn).
fn scroll_to(panel: NodeRef<leptos::html::Section>) {
    request_animation_frame(move || {
        if let Some(el) = panel.get_untracked() {
            el.scroll_into_view();
        }
    });
}

/// Starts loading these files (one per rank) in a new worker; the current one keeps what is shown
/// until the load succeeds.
pub fn start_load(state: AppState, files: Vec<File>) {
    if files.is_empty() {
        state.page.update(|p| {
            p.errors = vec![
                "No trace files were found: pick .json or .json.gz files written by torch.profiler."
                    .into(),
            ]
        });
        return;
    }
    let key = remember_files(&files);
    show_load_progress(state, &files);
    LAST_FILES.with(|l| *l.borrow_mut() = files.clone());
    apply(state, |p| p.start_load(Some(key.clone())));
    post_to(&LOADER, state, &load_request(), &files);
    leptos::task::spawn_local(async move {
        if let Ok(Some(_)) = cache::get(&key).await {
            state.page.update(|p| p.saved_found(&key));
        }
    });
}

/// A load, split over at most `?ranks-per-worker=N` ranks per worker when the page's address
/// says so (otherwise the worker splits by size alone).
fn load_request() -> ToWorker {
    let ranks_per_worker = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .and_then(|q| {
            q.trim_start_matches('?')
                .split('&')
                .find_map(|kv| kv.strip_prefix("ranks-per-worker=")?.parse().ok())
        });
    ToWorker::Load {
        plan: crate::protocol::LoadPlan {
            ranks_per_worker,
            shard_of: None,
        },
    }
}

/// Stops the load at once: its worker is terminated; the one before stays.
pub fn cancel(state: AppState) {
    apply(state, PageState::cancel);
    hide_progress_if_shown(state);
}

/// The cache key of these files; the files are remembered under it (the index entry names them).
fn remember_files(files: &[File]) -> String {
    let described = cache::files_of(files);
    let key = crate::page::saved::key_of(&described);
    KEYED_FILES.with(|k| {
        let mut k = k.borrow_mut();
        k.retain(|(old, _)| *old != key);
        k.push((key.clone(), described));
    });
    key
}

/// The user said Keep: the results are stored, and the worker is asked for the tables.
pub fn keep(state: AppState) {
    apply(state, PageState::keep);
}

/// Tells the page that storing `key` failed (`e`: the browser's error).
fn store_failed(state: AppState, key: &str, e: &JsValue) {
    let problem = if cache::is_quota_error(e) {
        CacheProblem::Quota
    } else {
        CacheProblem::Denied
    };
    apply(state, |p| p.store_failed(key, problem));
}

/// Stores the results shown now (only after the user said Keep).
fn save_results(state: AppState) {
    let Some((key, saved)) = state.page.with_untracked(PageState::to_saved) else {
        return;
    };
    let Some(bytes) = encode_saved(&saved) else {
        return;
    };
    leptos::task::spawn_local(async move {
        if let Err(e) = cache::put(&key, &bytes).await {
            store_failed(state, &key, &e);
        }
    });
}

/// The worker's tables (one `ArrayBuffer` per rank) arrived: stored with the index entry, when
/// the trace shown is still the one kept.
fn store_tables(state: AppState, format: u32, bytes: Vec<u64>, buffers: Vec<JsValue>) {
    let Some(key) = state.page.with_untracked(PageState::tables_wanted) else {
        return;
    };
    let files = KEYED_FILES
        .with(|k| {
            k.borrow()
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, f)| f.clone())
        })
        .unwrap_or_default();
    let results_bytes = state
        .page
        .with_untracked(PageState::to_saved)
        .and_then(|(_, saved)| encode_saved(&saved))
        .map_or(0, |b| b.len() as u64);
    let entry = SavedEntry {
        key: key.clone(),
        files,
        saved_ms: js_sys::Date::now(),
        table_bytes: bytes,
        results_bytes,
        format,
    };
    leptos::task::spawn_local(async move {
        match cache::put_tables(&entry, &buffers).await {
            Ok(()) => state.page.update(|p| p.stored(entry)),
            Err(e) => store_failed(state, &key, &e),
        }
    });
}

/// Opens the saved trace of `key` without its file: its tables are read from this browser and a
/// fresh worker rebuilds the set from them (the page then goes on as after a load).
pub fn open_saved(state: AppState, key: String) {
    let Some(entry) = state.page.with_untracked(|p| p.saved_tables(&key).cloned()) else {
        apply(state, |p| p.open_saved(&key));
        return;
    };
    leptos::task::spawn_local(async move {
        let tables = cache::get_tables(&key, entry.rank_count()).await;
        let buffers: Option<Vec<JsValue>> = tables.ok().and_then(|t| t.into_iter().collect());
        let Some(buffers) = buffers else {
            apply(state, |p| p.saved_broken(&key, CacheProblem::Missing));
            return;
        };
        KEYED_FILES.with(|k| {
            let mut k = k.borrow_mut();
            k.retain(|(old, _)| *old != key);
            k.push((key.clone(), entry.files.clone()));
        });
        state.progress.set(Some(Progress {
            phase: Phase::Parsing,
            bytes_done: 0,
            bytes_total: entry.table_bytes.iter().sum(),
            file_index: 0,
            file_count: entry.files.len().max(1),
            file: entry.names(),
            mb_per_s: 0.0,
            files: Vec::new(),
        }));
        apply(state, |p| p.open_saved(&key));
        post_parts(
            &LOADER,
            state,
            &ToWorker::Restore {
                ranks: buffers.len(),
            },
            &buffers,
            true,
        );
    });
}

/// Shows what is saved for the files being loaded (and stops their load): their tables when they
/// were stored (the trace can then be explored), else the results.
pub fn show_saved(state: AppState) {
    let Some(key) = state
        .page
        .with_untracked(|p| p.current_key().map(String::from))
    else {
        return;
    };
    if state
        .page
        .with_untracked(|p| p.saved_tables(&key).is_some())
    {
        open_saved(state, key);
        return;
    }
    leptos::task::spawn_local(async move {
        let notice = match cache::get(&key).await {
            Ok(Some(bytes)) => match decode_saved(&bytes) {
                Ok(saved) => {
                    state.progress.set(None);
                    apply(state, |p| p.restore_saved(saved, key));
                    return;
                }
                Err(e) => e.message(),
            },
            _ => "No saved results were found for these files.",
        };
        state.page.update(|p| p.notice = Some(notice.into()));
    });
}

/// Reads the list of saved traces (the index only).
fn list_saved(state: AppState) {
    leptos::task::spawn_local(async move {
        if let Ok(entries) = cache::list().await {
            state.page.update(|p| p.saved_listed(entries));
        }
    });
}

/// Clears the cache (results, tables and index), once the user has said yes.
pub fn forget_saved(state: AppState) {
    let count = state.page.with_untracked(|p| p.saved.entries.len());
    let question =
        format!("Forget all {count} saved trace(s) in this browser? This cannot be undone.");
    let asked = web_sys::window().and_then(|w| w.confirm_with_message(&question).ok());
    if asked != Some(true) {
        return;
    }
    leptos::task::spawn_local(async move {
        let ok = cache::clear().await.is_ok();
        state.page.update(|p| p.forgotten(ok));
    });
}

/// The colours of causes as CSS rules ([`crate::page::palette::css`]: defined there once).
fn add_palette() {
    let doc = document();
    if let (Ok(style), Ok(Some(head))) = (doc.create_element("style"), doc.query_selector("head")) {
        style.set_id("palette");
        style.set_text_content(Some(&crate::page::palette::css()));
        let _ = head.append_child(&style);
    }
}

/// Mounts the app on the page's body.
pub fn mount() {
    console_error_panic_hook::set_once();
    // The loading shell of index.html (shown until the wasm runs) makes way for the app.
    if let Some(shell) = document().get_element_by_id("boot-shell") {
        shell.remove();
    }
    add_palette();
    leptos::mount::mount_to_body(|| {
        let state = AppState::new();
        provide_context(LocateEvents(Callback::new(move |query: EventQuery| {
            apply(state, |p| p.locate_events(query))
        })));
        ensure_spare(state);
        list_saved(state);
        view::app(state)
    });
}
