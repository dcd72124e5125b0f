//! Loading in the worker (wasm32 only): files → tables, with progress, while a reader worker reads
//! and inflates ahead (see [`super::reader`]); a plain in-worker read when no reader can start.
//!
//! The load is driven by the reader's messages: each text slice is parsed as it arrives, then one
//! more slice is asked for, so reading, inflating and parsing overlap and at most
//! [`SLICES_IN_FLIGHT`](super::reader::SLICES_IN_FLIGHT) slices wait in memory.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{File, FileReaderSync, MessageEvent, Worker, WorkerOptions};

use super::{post, ANALYSES, BASELINE, BUSY, LOADED, TIMELINES};
use crate::analysis::summary::summarize;
use crate::protocol::{
    FromReader, FromWorker, LoadedSet, Phase, Progress, RankSummary, RunShown, ShardOf, ToWorker,
};
use crate::table::{SkippedFile, TraceLoader, TraceSet, TraceTable};
use crate::trace::{LoadError, LoadErrorKind};

/// Bytes read from a `File` at a time (in-worker read).
const SLICE_BYTES: u64 = 16 << 20;
/// Time between two progress messages, ms (about 6 a second, so the bar moves at least 4 times a
/// second even when a message is late).
const PROGRESS_EVERY_MS: f64 = 150.0;
/// Bytes fed to the parser at a time (between two clock checks).
const FEED_BYTES: usize = 256 << 10;

/// Tracks bytes and time of a load and posts progress.
struct Meter {
    started_ms: f64,
    last_post_ms: f64,
    bytes_total: u64,
    bytes_before_file: u64,
    file_count: usize,
    /// Each file's name and bytes (for the progress per file).
    sizes: Vec<(String, u64)>,
}

impl Meter {
    fn new(files: &[File]) -> Self {
        Meter {
            started_ms: js_sys::Date::now(),
            last_post_ms: 0.0,
            bytes_total: files.iter().map(|f| f.size() as u64).sum(),
            bytes_before_file: 0,
            file_count: files.len(),
            sizes: files.iter().map(|f| (f.name(), f.size() as u64)).collect(),
        }
    }

    fn post(&mut self, phase: Phase, file_index: usize, file: &str, file_done: u64) {
        let now = js_sys::Date::now();
        self.last_post_ms = now;
        let bytes_done = self.bytes_before_file + file_done;
        let secs = ((now - self.started_ms) / 1000.0).max(1e-3);
        let mut progress = Progress {
            phase,
            bytes_done,
            bytes_total: self.bytes_total,
            file_index,
            file_count: self.file_count,
            file: file.to_string(),
            mb_per_s: bytes_done as f64 / 1e6 / secs,
            files: Vec::new(),
        };
        if self.sizes.len() > 1 {
            progress.files = super::shard_plan::files_progress(&self.sizes, &progress, 0);
        }
        post(&FromWorker::Progress(progress));
    }

    fn due(&self) -> bool {
        js_sys::Date::now() - self.last_post_ms >= PROGRESS_EVERY_MS
    }
}

/// The tables loaded so far and how long each took.
#[derive(Default)]
struct Loaded {
    /// Each table with its file's index in the load.
    tables: Vec<(usize, TraceTable)>,
    times: Vec<(String, f64)>,
    /// Files that could not be loaded (the others are kept).
    skipped: Vec<LoadError>,
}

impl Loaded {
    fn add(&mut self, index: usize, started_ms: f64, result: Result<TraceTable, LoadError>) {
        match result {
            Ok(table) => {
                self.times
                    .push((table.file.clone(), js_sys::Date::now() - started_ms));
                self.tables.push((index, table));
            }
            Err(e) => self.skip(e),
        }
    }

    /// Tells the page at once that a file failed, and keeps the failure for the loaded set.
    fn skip(&mut self, e: LoadError) {
        post(&FromWorker::Failed {
            file: e.file.clone(),
            message: e.message.clone(),
        });
        self.skipped.push(e);
    }
}

/// Starts loading `files` (replacing any load in progress or loaded set).
pub fn load(files: Vec<File>, shard_of: Option<ShardOf>) {
    forget_set();
    SHARD_OF.with(|s| *s.borrow_mut() = shard_of);
    if files.is_empty() {
        post(&FromWorker::NothingLoaded);
        return;
    }
    if reader_worker_running() {
        start_split(files);
    } else {
        load_in_worker(files);
    }
}

/// Drops the loaded set, what was computed from it and any load in progress.
pub(super) fn forget_set() {
    LOADED.with(|l| *l.borrow_mut() = None);
    BASELINE.with(|b| *b.borrow_mut() = None);
    ANALYSES.with(|a| *a.borrow_mut() = [None, None]);
    TIMELINES.with(|t| t.borrow_mut().clear());
    BUSY.with(|b| b.borrow_mut().clear());
    JOB.with(|j| *j.borrow_mut() = None);
}

// ---- the split load: a reader worker reads and inflates, this worker parses ----

/// The reader worker, started with this worker and kept.
struct ReaderHandle {
    worker: Worker,
    ready: bool,
    /// A `Read` waiting for the reader to say it is ready.
    pending: Option<js_sys::Array>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(JsValue)>,
}

/// The file being parsed in a split load.
struct FileInProgress {
    index: usize,
    loader: TraceLoader,
    started_ms: f64,
    /// The file failed; its remaining messages are ignored.
    failed: bool,
    /// Raw bytes behind the text parsed so far.
    raw_done: u64,
}

struct SplitJob {
    job: u32,
    files: Vec<File>,
    meter: Meter,
    loaded: Loaded,
    current: Option<FileInProgress>,
    /// Reused space the text slices are copied into.
    buffer: Vec<u8>,
}

thread_local! {
    static READER: RefCell<Option<ReaderHandle>> = const { RefCell::new(None) };
    static JOB: RefCell<Option<SplitJob>> = const { RefCell::new(None) };
    static NEXT_JOB: std::cell::Cell<u32> = const { std::cell::Cell::new(1) };
    /// This worker loads a shard of a split set: its files' places in the whole load.
    static SHARD_OF: RefCell<Option<ShardOf>> = const { RefCell::new(None) };
}

/// Starts the reader worker (if it is not running yet).
pub fn start_reader_worker() {
    reader_worker_running();
}

/// Makes sure the reader worker exists; false when it cannot be started (then this worker reads).
fn reader_worker_running() -> bool {
    READER.with(|r| {
        if r.borrow().is_some() {
            return true;
        }
        let options = WorkerOptions::new();
        options.set_name(super::reader::WORKER_NAME);
        let Ok(worker) = Worker::new_with_options("./worker_loader.js", &options) else {
            return false;
        };
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(on_reader_message);
        let on_error = Closure::<dyn FnMut(JsValue)>::new(|_| reader_failed());
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        *r.borrow_mut() = Some(ReaderHandle {
            worker,
            ready: false,
            pending: None,
            _on_message: on_message,
            _on_error: on_error,
        });
        true
    })
}

fn to_reader(request: &ToWorker, files: &[File]) {
    let message = js_sys::Array::of1(&super::js_bytes(
        &crate::protocol::codec::encode(request).unwrap_or_default(),
    ));
    for f in files {
        message.push(f);
    }
    READER.with(|r| {
        if let Some(h) = r.borrow_mut().as_mut() {
            if h.ready {
                let _ = h.worker.post_message(&message);
            } else if matches!(request, ToWorker::Read { .. }) {
                h.pending = Some(message);
            }
        }
    });
}

/// The reader worker could not start or broke: it is dropped, and the load in progress (if any)
/// starts again, read in this worker.
fn reader_failed() {
    READER.with(|r| {
        if let Some(h) = r.borrow_mut().take() {
            h.worker.terminate();
        }
    });
    if let Some(job) = JOB.with(|j| j.borrow_mut().take()) {
        load_in_worker(job.files);
    }
}

fn start_split(files: Vec<File>) {
    let job = NEXT_JOB.with(|n| {
        let id = n.get();
        n.set(id.wrapping_add(1));
        id
    });
    let mut meter = Meter::new(&files);
    meter.post(Phase::Reading, 0, &files[0].name(), 0);
    to_reader(&ToWorker::Read { job }, &files);
    JOB.with(|j| {
        *j.borrow_mut() = Some(SplitJob {
            job,
            files,
            meter,
            loaded: Loaded::default(),
            current: None,
            buffer: Vec::new(),
        })
    });
}

fn on_reader_message(event: MessageEvent) {
    let data = event.data();
    if data.is_instance_of::<js_sys::Uint8Array>() {
        // `Ready` (the reader's only message without a buffer array).
        READER.with(|r| {
            if let Some(h) = r.borrow_mut().as_mut() {
                h.ready = true;
                if let Some(m) = h.pending.take() {
                    let _ = h.worker.post_message(&m);
                }
            }
        });
        return;
    }
    let Ok(array) = data.dyn_into::<js_sys::Array>() else {
        return;
    };
    let msg: FromReader = match array
        .get(0)
        .dyn_into::<js_sys::Uint8Array>()
        .ok()
        .and_then(|b| crate::protocol::codec::decode(&b.to_vec()).ok())
    {
        Some(m) => m,
        None => return,
    };
    let text = array.get(1).dyn_into::<js_sys::ArrayBuffer>().ok();
    let done = JOB.with(|j| {
        let mut slot = j.borrow_mut();
        match slot.as_mut() {
            Some(job) if job.job == msg.job() => job.take(msg, text),
            _ => false,
        }
    });
    if done {
        if let Some(job) = JOB.with(|j| j.borrow_mut().take()) {
            finish_load(job.meter, job.loaded, job.files.len(), "reader-worker");
        }
    }
}

impl SplitJob {
    /// The file `index`, started if this is its first message.
    fn file(&mut self, index: usize) -> &mut FileInProgress {
        if self.current.as_ref().map(|c| c.index) != Some(index) {
            let file = &self.files[index];
            let name = file.name();
            self.meter.post(Phase::Reading, index, &name, 0);
            self.current = Some(FileInProgress {
                index,
                loader: TraceLoader::new(&name, Some(file.size() as u64)),
                started_ms: js_sys::Date::now(),
                failed: false,
                raw_done: 0,
            });
        }
        self.current.as_mut().expect("a file in progress")
    }

    fn fail(&mut self, index: usize, error: LoadError) {
        let f = self.file(index);
        if f.failed {
            return;
        }
        f.failed = true;
        self.loaded.skip(error);
        to_reader(
            &ToWorker::Skip {
                job: self.job,
                file_index: index,
            },
            &[],
        );
    }

    /// Takes one message of the reader; returns true when the last file has ended.
    fn take(&mut self, msg: FromReader, text: Option<js_sys::ArrayBuffer>) -> bool {
        match msg {
            FromReader::Text {
                file_index,
                gzip,
                raw_bytes,
                ..
            } => {
                if let Some(buffer) = text {
                    self.parse(file_index, gzip, raw_bytes, &buffer);
                }
                to_reader(
                    &ToWorker::Credit {
                        job: self.job,
                        slices: 1,
                    },
                    &[],
                );
                false
            }
            FromReader::Corrupt {
                file_index,
                offset,
                detail,
                ..
            } => {
                let f = self.file(file_index);
                if !f.failed {
                    if let Err(e) = f.loader.text_source_corrupt(offset, &detail) {
                        self.fail(file_index, e);
                    }
                }
                false
            }
            FromReader::Failed {
                file_index,
                message,
                ..
            } => {
                let name = self.files[file_index].name();
                self.fail(
                    file_index,
                    LoadError::new(LoadErrorKind::Io, &name, None, message),
                );
                false
            }
            FromReader::End {
                file_index,
                gzip,
                raw_bytes,
                gzip_end,
                ..
            } => {
                self.file(file_index);
                let f = self.current.take().expect("the file just started");
                if !f.failed {
                    let r = f.loader.finish_text(gzip, raw_bytes, gzip_end);
                    self.loaded.add(file_index, f.started_ms, r);
                }
                self.meter.bytes_before_file += self.files[file_index].size() as u64;
                file_index + 1 >= self.files.len()
            }
        }
    }

    /// Parses one slice of text, posting progress on the way.
    fn parse(&mut self, index: usize, gzip: bool, raw_bytes: u64, text: &js_sys::ArrayBuffer) {
        self.file(index);
        let mut f = self.current.take().expect("the file just started");
        if !f.failed {
            let view = js_sys::Uint8Array::new(text);
            self.buffer.resize(view.length() as usize, 0);
            view.copy_to(&mut self.buffer);
            let name = self.files[index].name();
            let before = f.raw_done;
            let total = self.buffer.len().max(1) as u64;
            let mut fed = 0u64;
            let mut result = Ok(());
            for piece in self.buffer.chunks(FEED_BYTES) {
                fed += piece.len() as u64;
                // Raw bytes behind the text fed so far, for progress (text and raw grow together).
                let raw_now = before + raw_bytes.saturating_sub(before) * fed / total;
                if let Err(e) = f.loader.feed_text(piece, gzip, raw_now) {
                    result = Err(e);
                    break;
                }
                if self.meter.due() {
                    self.meter.post(Phase::Parsing, index, &name, raw_now);
                }
            }
            f.raw_done = raw_bytes;
            self.current = Some(f);
            if let Err(e) = result {
                self.fail(index, e);
            }
        } else {
            self.current = Some(f);
        }
    }
}

// ---- the in-worker load (no reader worker) ----

fn load_in_worker(files: Vec<File>) {
    let mut meter = Meter::new(&files);
    let mut loaded = Loaded::default();
    for (index, file) in files.iter().enumerate() {
        let name = file.name();
        meter.post(Phase::Reading, index, &name, 0);
        let started = js_sys::Date::now();
        let r = load_file(file, index, &mut meter);
        loaded.add(index, started, r);
        meter.bytes_before_file += file.size() as u64;
    }
    finish_load(meter, loaded, files.len(), "in-worker");
}

/// Reads one `File` in slices into a table; the error is in plain words.
fn load_file(file: &File, index: usize, meter: &mut Meter) -> Result<TraceTable, LoadError> {
    let name = file.name();
    let size = file.size() as u64;
    let io = |message: String| LoadError::new(LoadErrorKind::Io, &name, None, message);
    let reader = FileReaderSync::new().map_err(|_| {
        io("this browser cannot read files in a worker (FileReaderSync)".to_string())
    })?;
    let mut loader = TraceLoader::new(&name, Some(size));
    let mut offset = 0u64;
    while offset < size {
        let end = (offset + SLICE_BYTES).min(size);
        let blob = file
            .slice_with_f64_and_f64(offset as f64, end as f64)
            .map_err(|_| io(format!("{name}: could not cut the file at byte {offset}")))?;
        let buffer = reader.read_as_array_buffer(&blob).map_err(|e| {
            io(format!(
                "{name}: the browser could not read the file ({e:?})"
            ))
        })?;
        let bytes = js_sys::Uint8Array::new(&buffer).to_vec();
        // Feed in pieces so a slow slice (gzip inflates ~15x) still reports every 150 ms
        // (256 KiB of gzip is ~4 MB of JSON, ~15 ms of parsing).
        let mut fed = 0usize;
        for piece in bytes.chunks(FEED_BYTES) {
            loader.feed(piece)?;
            fed += piece.len();
            if meter.due() {
                meter.post(Phase::Parsing, index, &name, offset + fed as u64);
            }
        }
        offset = end;
        meter.post(Phase::Parsing, index, &name, offset);
    }
    loader.finish()
}

// ---- both ----

/// Keeps the loaded tables as the set and tells the page.
fn finish_load(mut meter: Meter, loaded: Loaded, file_count: usize, read_mode: &str) {
    let last = file_count.saturating_sub(1);
    if loaded.tables.is_empty() {
        meter.post(Phase::Done, last, "", 0);
        post(&FromWorker::NothingLoaded);
        return;
    }
    meter.bytes_before_file = meter.bytes_total;
    meter.post(Phase::Analysing, last, "", 0);
    let Loaded {
        tables,
        times,
        skipped,
    } = loaded;
    let skipped = skipped.iter().map(SkippedFile::of).collect();
    let set = match SHARD_OF.with(|s| s.borrow().clone()) {
        Some(shard) => {
            let at = |i: usize| shard.load_indexes.get(i).copied().unwrap_or(i);
            let tables = tables.into_iter().map(|(i, t)| (at(i), t)).collect();
            TraceSet::from_loads_at(tables, skipped, shard.file_count)
        }
        // One file, nothing skipped: its ranks when a merge tool fused several into it.
        None if tables.len() == 1 && skipped.is_empty() => TraceSet::single(
            tables
                .into_iter()
                .map(|(_, t)| t)
                .next()
                .expect("one table"),
        ),
        None => {
            let given = tables.len();
            // Load order among the files that loaded, as `TraceSet::from_loads` numbers them.
            let tables = tables.into_iter().map(|(_, t)| t).enumerate().collect();
            TraceSet::from_loads_at(tables, skipped, given)
        }
    };
    let loaded = keep_set(set, &times, meter.started_ms, read_mode);
    meter.post(Phase::Done, last, "", 0);
    post(&FromWorker::Loaded(loaded));
}

/// Keeps `set` as the loaded set; returns its summaries for the page (`times`: each file's load
/// time, ms).
pub(super) fn keep_set(
    set: TraceSet,
    times: &[(String, f64)],
    started_ms: f64,
    read_mode: &str,
) -> LoadedSet {
    let ranks = rank_summaries(&set, times);
    // The first rank's timeline index is the load's last step, so that the timeline draws as soon
    // as the summary shows.
    super::keep_timeline(&set, 0);
    let loaded = LoadedSet {
        ranks,
        notes: set.notes.clone(),
        load_ms: js_sys::Date::now() - started_ms,
        read_mode: read_mode.to_string(),
        worker_memory_bytes: wasm_memory_bytes(),
        runs: set.runs_split(),
        worker_memory: Vec::new(),
        skipped: set.skipped.clone(),
    };
    LOADED.with(|l| *l.borrow_mut() = Some(set));
    loaded
}

/// Each rank's summary for the page (`times`: each file's load time, ms).
fn rank_summaries(set: &TraceSet, times: &[(String, f64)]) -> Vec<RankSummary> {
    set.ranks
        .iter()
        .map(|r| {
            let load_ms = times
                .iter()
                .find(|(f, _)| *f == r.table.file)
                .map_or(0.0, |t| t.1);
            rank_summary(r.rank, r.rank_source, &r.table, load_ms)
        })
        .collect()
}

/// What the page shows of one run of a compared set: its ranks and the notes about them alone.
pub(super) fn run_summaries(run: &TraceSet) -> RunShown {
    RunShown {
        ranks: rank_summaries(run, &[]),
        notes: run.notes.clone(),
    }
}

/// Size of this worker's WebAssembly memory, bytes.
fn wasm_memory_bytes() -> u64 {
    wasm_bindgen::memory()
        .dyn_into::<js_sys::WebAssembly::Memory>()
        .ok()
        .and_then(|m| m.buffer().dyn_into::<js_sys::ArrayBuffer>().ok())
        .map_or(0, |b| b.byte_length() as u64)
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
