//! The coordinator of a set split over shard workers (wasm32 only): the worker the page talks to
//! starts one worker per group of ranks ([`super::shard_plan::plan`]), sends each its files, and
//! then serves every request of the page from their answers.
//!
//! A shard is this same program, told its files' places in the whole load ([`ShardOf`]). The
//! coordinator holds no table: it asks the shards with [`ToWorker::Part`] (each answer comes back
//! as [`FromWorker::Part`] with the same id) and combines their typed answers with the same
//! reduce functions the CLI's `merge` uses: the analyses ([`merge_analyses`]), the report (each
//! rank's context, then each rank's figures over the window the whole set chose), the explorer's
//! pages, the rank lanes, the views and the tables for the cache. A request about one rank goes to
//! its shard, and the rank's index is mapped both ways ([`RankMap`]).

use std::cell::RefCell;
use std::collections::BTreeMap;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{File, MessageEvent, Worker, WorkerOptions};

use super::shard_plan::{
    combine_progress, estimated_text_bytes, merge_loaded, plan, LoadPlan, RankMap,
};
use super::{load, post, post_raw, scope};
use crate::analysis::all::{AllAnalyses, AnalysisTiming, Mode};
use crate::analysis::timeline::TimelineRequest;
use crate::protocol::shard::FromShard;
use crate::protocol::{FromWorker, LoadedSet, Phase, Progress, ShardOf, ToWorker};
use crate::report::context::TraceContext;
use crate::table::query::{shard_query, EventQuery};

/// Time between two progress messages to the page, ms.
const PROGRESS_EVERY_MS: f64 = 150.0;

/// One shard worker.
struct Shard {
    worker: Worker,
    ready: bool,
    /// Messages waiting for the shard to say it is ready.
    pending: Vec<js_sys::Array>,
    /// Its files' names and bytes, in the order it reads them.
    files: Vec<(String, u64)>,
    progress: Option<Progress>,
    /// `Some` once its load has ended (`Some(None)`: nothing of it loaded).
    loaded: Option<Option<LoadedSet>>,
    /// It stopped (a trap, most often its memory).
    dead: bool,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::ErrorEvent)>,
}

/// What the coordinator waits for from the shards, and what it does with their answers.
pub(super) enum Ask {
    Analyze {
        mode: Mode,
    },
    ReportContext {
        steps: Option<crate::analysis::step_filter::StepRange>,
    },
    ReportGather {
        context: Box<TraceContext>,
    },
    Query(EventQuery),
    ExportCsv(EventQuery),
    Views {
        steps: Option<crate::analysis::step_filter::StepRange>,
    },
    /// Round one of rank lanes asked for the whole trace: each shard's span.
    LanesSpan {
        width_px: u32,
    },
    Lanes,
    Locate,
    StoreTables,
    SqlTables,
    /// One shard's answer, its rank index mapped to the whole set's, goes to the page.
    Forward,
    /// One shard's part of the table export: named as a part.
    ExportPart {
        part: usize,
        parts: usize,
    },
}

/// A request sent to some shards, and their answers so far.
struct Waiting {
    ask: Ask,
    asked: Vec<usize>,
    answers: Vec<Option<(FromShard, Vec<JsValue>)>>,
}

/// The split set.
pub(super) struct ShardSet {
    shards: Vec<Shard>,
    started_ms: f64,
    last_progress_ms: f64,
    pub(super) map: RankMap,
    /// The whole set's notes, and each shard's own (left out of the merged analyses' notes).
    pub(super) set_notes: Vec<String>,
    pub(super) shard_notes: Vec<String>,
    pub(super) skipped: Vec<crate::table::SkippedFile>,
    next_id: u64,
    waiting: BTreeMap<u64, Waiting>,
    pub(super) analyses: [Option<(AllAnalyses, Vec<AnalysisTiming>)>; 2],
    pub(super) report: Option<FromWorker>,
    /// Every rank's GPU span, once rank lanes were asked for the whole trace.
    pub(super) lanes_span: Option<(i64, i64)>,
}

thread_local! {
    static SHARDS: RefCell<Option<ShardSet>> = const { RefCell::new(None) };
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// The machine's logical processors, as the browser says (2 when it does not).
fn cores() -> usize {
    js_sys::Reflect::get(&scope(), &JsValue::from_str("navigator"))
        .and_then(|n| js_sys::Reflect::get(&n, &JsValue::from_str("hardwareConcurrency")))
        .ok()
        .and_then(|v| v.as_f64())
        .map_or(2, |n| n.max(1.0) as usize)
}

/// Stops the shard workers, if any.
pub fn stop() {
    if let Some(set) = SHARDS.with(|s| s.borrow_mut().take()) {
        for shard in set.shards {
            shard.worker.terminate();
        }
    }
}

/// Starts a split load of `files` when the plan splits it; false: this worker loads them itself.
pub fn start(files: &[File], load_plan: &LoadPlan) -> bool {
    stop();
    if load_plan.shard_of.is_some() {
        return false;
    }
    let sizes: Vec<(String, u64)> = files.iter().map(|f| (f.name(), f.size() as u64)).collect();
    let text: Vec<u64> = files
        .iter()
        .map(|f| estimated_text_bytes(&f.name(), f.size() as u64, gzip_isize(f)))
        .collect();
    let Some(groups) = plan(&text, load_plan.ranks_per_worker, cores()) else {
        return false;
    };
    load::forget_set();
    let mut shards = Vec::with_capacity(groups.len());
    for (index, group) in groups.iter().enumerate() {
        let Some(shard) = start_shard(index, group.iter().map(|&i| sizes[i].clone()).collect())
        else {
            // No worker could start: this worker loads everything itself.
            shards.into_iter().for_each(|s: Shard| s.worker.terminate());
            return false;
        };
        shards.push(shard);
    }
    for (index, group) in groups.iter().enumerate() {
        let request = ToWorker::Load {
            plan: LoadPlan {
                ranks_per_worker: None,
                shard_of: Some(ShardOf {
                    load_indexes: group.clone(),
                    file_count: files.len(),
                }),
            },
        };
        let message = request_message(&request);
        for &i in group {
            message.push(&files[i]);
        }
        send(&mut shards[index], message);
    }
    let started_ms = now_ms();
    SHARDS.with(|s| {
        *s.borrow_mut() = Some(ShardSet {
            shards,
            started_ms,
            last_progress_ms: 0.0,
            map: RankMap::default(),
            set_notes: Vec::new(),
            shard_notes: Vec::new(),
            skipped: Vec::new(),
            next_id: 1,
            waiting: BTreeMap::new(),
            analyses: [None, None],
            report: None,
            lanes_span: None,
        })
    });
    post_progress(true);
    true
}

/// The last 4 bytes of a `.gz` file: its text's size modulo 4 GiB (gzip's ISIZE), when readable.
fn gzip_isize(file: &File) -> Option<u32> {
    if !file.name().ends_with(".gz") || file.size() < 18.0 {
        return None;
    }
    let tail = file.slice_with_f64(file.size() - 4.0).ok()?;
    let buffer = web_sys::FileReaderSync::new()
        .ok()?
        .read_as_array_buffer(&tail)
        .ok()?;
    let bytes = js_sys::Uint8Array::new(&buffer).to_vec();
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

fn start_shard(index: usize, files: Vec<(String, u64)>) -> Option<Shard> {
    let options = WorkerOptions::new();
    options.set_name(&format!("shard-{index}"));
    let worker = Worker::new_with_options("./worker_loader.js", &options).ok()?;
    let on_message =
        Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| on_shard_message(index, e));
    let on_error = Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(move |e: web_sys::ErrorEvent| {
        on_shard_crash(index, &e.message())
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    Some(Shard {
        worker,
        ready: false,
        pending: Vec::new(),
        files,
        progress: None,
        loaded: None,
        dead: false,
        _on_message: on_message,
        _on_error: on_error,
    })
}

fn request_message(request: &ToWorker) -> js_sys::Array {
    js_sys::Array::of1(&super::js_bytes(
        &crate::protocol::codec::encode(request).unwrap_or_default(),
    ))
}

fn send(shard: &mut Shard, message: js_sys::Array) {
    if shard.ready {
        let _ = shard.worker.post_message(&message);
    } else {
        shard.pending.push(message);
    }
}

/// Serves `request` from the shards when the set is split; gives it back when this worker serves it.
pub fn serve(request: ToWorker) -> Option<ToWorker> {
    let split = SHARDS.with(|s| s.borrow().is_some());
    if !split {
        return Some(request);
    }
    match request {
        ToWorker::Load { .. } | ToWorker::Restore { .. } => {
            stop();
            Some(request)
        }
        ToWorker::Read { .. }
        | ToWorker::Credit { .. }
        | ToWorker::Skip { .. }
        | ToWorker::Part { .. }
        | ToWorker::ContextParts { .. }
        | ToWorker::GatherParts { .. } => Some(request),
        other => {
            dispatch(other);
            None
        }
    }
}

/// Asks `shards` (all when `None`) for `request`, waiting for their answers as `ask`.
pub(super) fn ask(set: &mut ShardSet, shards: Option<Vec<usize>>, request: ToWorker, ask: Ask) {
    let id = set.next_id;
    set.next_id += 1;
    let asked: Vec<usize> = shards
        .unwrap_or_else(|| (0..set.shards.len()).collect())
        .into_iter()
        .filter(|&s| {
            !set.shards[s].dead && set.shards[s].loaded.as_ref().is_some_and(Option::is_some)
        })
        .collect();
    if asked.is_empty() {
        post(&FromWorker::Error {
            message: "no worker holds these ranks any more; load the files again".into(),
        });
        return;
    }
    let part = ToWorker::Part {
        id,
        request: Box::new(request),
    };
    for &s in &asked {
        send(&mut set.shards[s], request_message(&part));
    }
    set.waiting.insert(
        id,
        Waiting {
            ask,
            answers: asked.iter().map(|_| None).collect(),
            asked,
        },
    );
}

pub(super) fn with_shards<R>(f: impl FnOnce(&mut ShardSet) -> R) -> Option<R> {
    SHARDS.with(|s| s.borrow_mut().as_mut().map(f))
}

/// A request of the page, served by the shards.
fn dispatch(request: ToWorker) {
    with_shards(|set| {
        match request {
        ToWorker::Analyze { mode } => match &set.analyses[mode.index()] {
            Some((analysis, timings)) => post(&FromWorker::Analysis {
                analysis: analysis.clone(),
                timings: timings.clone(),
            }),
            None => ask(set, None, ToWorker::Analyze { mode }, Ask::Analyze { mode }),
        },
        // The automatic window's report is kept; chosen steps are asked each time.
        ToWorker::Report { steps: None, .. } if set.report.is_some() => {
            if let Some(report) = &set.report {
                post(report)
            }
        }
        ToWorker::Report { steps, .. } => ask(
            set,
            None,
            ToWorker::ContextParts { steps },
            Ask::ReportContext { steps },
        ),
        ToWorker::Query { query } => {
            let each = shard_query(&query);
            ask(set, None, ToWorker::Query { query: each }, Ask::Query(query))
        }
        ToWorker::Export { query, redact } => ask(
            set,
            None,
            ToWorker::Export {
                query: query.clone(),
                redact,
            },
            Ask::ExportCsv(query),
        ),
        ToWorker::ExportTable {
            format,
            columns,
            redact,
        } => {
            let parts = set.shards.len();
            for part in 0..parts {
                let request = ToWorker::ExportTable {
                    format,
                    columns: columns.clone(),
                    redact,
                };
                ask(set, Some(vec![part]), request, Ask::ExportPart { part, parts });
            }
        }
        ToWorker::Compare { .. } => post(&FromWorker::Error {
            message: "these files were split over several workers (they are too large for one), so \
                      the two runs cannot be compared in this tab: load each run's ranks on their own, \
                      or use `profile-model diff`"
                .into(),
        }),
        ToWorker::Timeline {
            rank_index,
            request,
        } => route(set, rank_index, |local| ToWorker::Timeline {
            rank_index: local,
            request,
        }),
        ToWorker::Search { rank_index, text } => {
            route(set, rank_index, |local| ToWorker::Search {
                rank_index: local,
                text,
            })
        }
        ToWorker::Walk {
            rank_index,
            row,
            forward,
        } => route(set, rank_index, |local| ToWorker::Walk {
            rank_index: local,
            row,
            forward,
        }),
        ToWorker::EventDetails { rank_index, row } => {
            route(set, rank_index, |local| ToWorker::EventDetails {
                rank_index: local,
                row,
            })
        }
        ToWorker::Perfetto { rank_index, redact } => {
            route(set, rank_index, |local| ToWorker::Perfetto {
                rank_index: local,
                redact,
            })
        }
        ToWorker::RankLanes { request } => rank_lanes(set, request),
        ToWorker::Locate { query, within } => {
            ask(set, None, ToWorker::Locate { query, within }, Ask::Locate)
        }
        ToWorker::Views { steps } => ask(set, None, ToWorker::Views { steps }, Ask::Views { steps }),
        ToWorker::StoreTables => ask(set, None, ToWorker::StoreTables, Ask::StoreTables),
        ToWorker::SqlTables => ask(set, None, ToWorker::SqlTables, Ask::SqlTables),
        _ => post(&FromWorker::Error {
            message: "the worker got a request a split set cannot serve".into(),
        }),
    }
    });
}

/// Sends a request about one rank to its shard, with the rank's index there.
fn route(set: &mut ShardSet, rank_index: usize, request: impl FnOnce(usize) -> ToWorker) {
    match set.map.local(rank_index) {
        Some((shard, local)) => ask(set, Some(vec![shard]), request(local), Ask::Forward),
        None => post(&FromWorker::Error {
            message: format!("no rank {rank_index} in the loaded set"),
        }),
    }
}

/// Rank lanes over an explicit range go to every shard; over the whole trace, every shard's span
/// is found first (then kept).
fn rank_lanes(set: &mut ShardSet, request: TimelineRequest) {
    let request = if request.end_ns > request.start_ns {
        request
    } else if let Some((start_ns, end_ns)) = set.lanes_span {
        TimelineRequest {
            start_ns,
            end_ns: end_ns.max(start_ns + 1),
            width_px: request.width_px,
        }
    } else {
        let width_px = request.width_px;
        return ask(
            set,
            None,
            ToWorker::RankLanes { request },
            Ask::LanesSpan { width_px },
        );
    };
    ask(set, None, ToWorker::RankLanes { request }, Ask::Lanes);
}

fn on_shard_message(shard: usize, event: MessageEvent) {
    let Some((bytes, buffers)) = super::message_parts(event.data()) else {
        return;
    };
    let msg = match FromShard::read(&bytes) {
        Ok(m) => m,
        Err(e) => {
            return post(&FromWorker::Error {
                message: format!("the answer of worker {} could not be read: {e}", shard + 1),
            })
        }
    };
    match msg {
        FromShard::Ready => {
            with_shards(|set| {
                let s = &mut set.shards[shard];
                s.ready = true;
                for m in std::mem::take(&mut s.pending) {
                    let _ = s.worker.post_message(&m);
                }
            });
        }
        FromShard::Progress(p) => {
            let last = p.phase == Phase::Done;
            with_shards(|set| set.shards[shard].progress = Some(p));
            post_progress(last);
        }
        FromShard::Loaded(loaded) => shard_loaded(shard, loaded),
        FromShard::Part { id, answer } => answered(shard, id, *answer, buffers),
        other => {
            // Said by a shard of its own accord (a file that failed, the timeline shaded later).
            if let Some(bytes) = with_shards(|set| to_page(&set.map, shard, other)).flatten() {
                post_raw(&bytes);
            }
        }
    }
}

/// The page's message for a shard's, its rank indexes mapped to the whole set's.
pub(super) fn to_page(map: &RankMap, shard: usize, msg: FromShard) -> Option<Vec<u8>> {
    msg.into_page_bytes(|local| map.global(shard, local).unwrap_or(local))
}

fn post_progress(force: bool) {
    let progress = with_shards(|set| {
        let now = now_ms();
        if !force && now - set.last_progress_ms < PROGRESS_EVERY_MS {
            return None;
        }
        set.last_progress_ms = now;
        let each: Vec<(Option<&Progress>, &[(String, u64)])> = set
            .shards
            .iter()
            .map(|s| (s.progress.as_ref(), s.files.as_slice()))
            .collect();
        Some(combine_progress(&each, set.started_ms, now))
    })
    .flatten();
    if let Some(p) = progress {
        post(&FromWorker::Progress(p));
    }
}

fn shard_loaded(shard: usize, loaded: Option<LoadedSet>) {
    let done = with_shards(|set| {
        set.shards[shard].loaded = Some(loaded);
        set.shards.iter().all(|s| s.loaded.is_some())
    });
    if done == Some(true) {
        finish_load();
    }
}

/// Every shard's load has ended: the whole set goes to the page.
fn finish_load() {
    let merged = with_shards(|set| {
        let each: Vec<Option<LoadedSet>> = set
            .shards
            .iter()
            .map(|s| s.loaded.clone().flatten())
            .collect();
        let (loaded, map) = merge_loaded(&each, now_ms() - set.started_ms);
        set.map = map;
        set.set_notes = loaded.notes.clone();
        set.shard_notes = each
            .iter()
            .flatten()
            .flat_map(|s| s.notes.clone())
            .collect();
        set.skipped = loaded.skipped.clone();
        loaded
    });
    let Some(loaded) = merged else { return };
    post_progress(true);
    if loaded.ranks.is_empty() {
        stop();
        post(&FromWorker::NothingLoaded);
    } else {
        post(&FromWorker::Loaded(loaded));
    }
}

/// A shard stopped. During the load its files are lost (the others go on); after, what it held.
fn on_shard_crash(shard: usize, detail: &str) {
    let loading = with_shards(|set| {
        let s = &mut set.shards[shard];
        s.dead = true;
        s.loaded.is_none()
    });
    let files: Vec<String> = with_shards(|set| {
        set.shards[shard]
            .files
            .iter()
            .map(|f| f.0.clone())
            .collect()
    })
    .unwrap_or_default();
    let why = format!(
        "the worker reading it (one of several, as the files are large) failed ({detail}); \
         the usual cause is memory: load fewer ranks at a time, or use the command line"
    );
    if loading == Some(true) {
        for file in &files {
            post(&FromWorker::Failed {
                file: file.clone(),
                message: why.clone(),
            });
        }
        shard_loaded(shard, None);
        return;
    }
    // Requests waiting for it get an error now.
    let stuck: Vec<u64> = with_shards(|set| {
        set.waiting
            .iter()
            .filter(|(_, w)| w.asked.contains(&shard))
            .map(|(id, _)| *id)
            .collect()
    })
    .unwrap_or_default();
    with_shards(|set| stuck.iter().for_each(|id| drop(set.waiting.remove(id))));
    post(&FromWorker::Error {
        message: format!(
            "the ranks {} are gone: {why}; load the files again to see them",
            files.join(", ")
        ),
    });
}

/// A shard answered request `id`; when every shard asked has, the answers are combined.
fn answered(shard: usize, id: u64, message: FromShard, buffers: Vec<JsValue>) {
    let complete = with_shards(|set| {
        let w = set.waiting.get_mut(&id)?;
        let at = w.asked.iter().position(|&s| s == shard)?;
        w.answers[at] = Some((message, buffers));
        if w.answers.iter().all(Option::is_some) {
            set.waiting.remove(&id)
        } else {
            None
        }
    })
    .flatten();
    if let Some(w) = complete {
        let answers: Vec<(usize, FromShard, Vec<JsValue>)> = w
            .asked
            .iter()
            .zip(w.answers)
            .filter_map(|(&s, a)| a.map(|(m, b)| (s, m, b)))
            .collect();
        super::shard_answers::combine(w.ask, answers);
    }
}
