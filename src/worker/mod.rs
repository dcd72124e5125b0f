//! The Web Worker (wasm32 only, apart from its [`protocol`]): loads files in slices and runs analyses off the main thread.
//!
//! The whole tables stay here in a [`TraceSet`]; the page only gets summaries, diagnostics, the
//! typed analyses and the typed report (see [`protocol`]). The same program also runs as the
//! worker's own reader worker ([`reader`]), which reads and inflates the files while this one parses.

#[cfg(target_arch = "wasm32")]
mod export_file;
#[cfg(target_arch = "wasm32")]
pub mod exporter;
#[cfg(target_arch = "wasm32")]
mod load;

#[cfg(target_arch = "wasm32")]
mod reader;
#[cfg(target_arch = "wasm32")]
mod saved;
#[cfg(target_arch = "wasm32")]
mod shard_answers;
pub mod shard_plan;
#[cfg(target_arch = "wasm32")]
mod shards;
#[cfg(target_arch = "wasm32")]
mod sql;

#[cfg(target_arch = "wasm32")]
use std::cell::RefCell;

#[cfg(target_arch = "wasm32")]
use wasm_bindgen::prelude::*;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen::JsCast;
#[cfg(target_arch = "wasm32")]
use web_sys::{DedicatedWorkerGlobalScope, File, MessageEvent};

#[cfg(target_arch = "wasm32")]
use crate::analysis::all::{analyze_timed, AllAnalyses, AnalysisOptions, AnalysisTiming, Mode};
#[cfg(target_arch = "wasm32")]
use crate::analysis::timeline::{event_details, TimelineIndex, TimelineRequest};
#[cfg(target_arch = "wasm32")]
use crate::protocol::{self, shard::ShardOnly, FromWorker, ToWorker};
#[cfg(target_arch = "wasm32")]
use crate::report::attribution::IdleCause;
#[cfg(target_arch = "wasm32")]
use crate::report::diagnosis::diagnose_steps;
#[cfg(target_arch = "wasm32")]
use crate::report::timeline_view::{visible_idle, TimelineAnswer};
#[cfg(target_arch = "wasm32")]
use crate::table::query::{export_csv, query_events};
#[cfg(target_arch = "wasm32")]
use crate::table::TraceSet;

#[cfg(target_arch = "wasm32")]
thread_local! {
    static LOADED: RefCell<Option<TraceSet>> = const { RefCell::new(None) };
    /// After a comparison: the baseline run, held apart from the loaded (candidate) run.
    static BASELINE: RefCell<Option<TraceSet>> = const { RefCell::new(None) };
    /// The analyses of the kept set, run once per mode: `[exact, HTA-compatible]` (the report and
    /// the deeper views share the exact ones; the HTA-compatible ones run only when asked for).
    static ANALYSES: RefCell<[Option<(AllAnalyses, Vec<AnalysisTiming>)>; 2]> = const { RefCell::new([None, None]) };
    /// The timeline index of each rank, built when the timeline first asks for it.
    static TIMELINES: RefCell<Vec<Option<RankTimeline>>> = const { RefCell::new(Vec::new()) };
    /// Every rank's GPU busy index (the timeline's rank lanes), built when first asked for.
    static BUSY: RefCell<Vec<crate::analysis::rank_lanes::BusyIndex>> = const { RefCell::new(Vec::new()) };
    /// While a shard answers its coordinator's [`ToWorker::Part`]: its id (what is posted is wrapped).
    static ANSWERING_PART: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// Milliseconds from the worker's high-resolution clock.
#[cfg(target_arch = "wasm32")]
fn now_ms() -> f64 {
    scope()
        .performance()
        .map_or_else(js_sys::Date::now, |p| p.now())
}

/// Calls `f` with the analyses of `set` (HTA 0.5.0-compatible ones when `hta_compat`) and the
/// time each took in this worker (run on first use, then kept).
#[cfg(target_arch = "wasm32")]
fn with_analyses<R>(
    set: &TraceSet,
    mode: Mode,
    f: impl FnOnce(&AllAnalyses, &[AnalysisTiming]) -> R,
) -> R {
    ANALYSES.with(|a| {
        let mut kept = a.borrow_mut();
        let opts = AnalysisOptions::of_mode(mode);
        let (all, timings) =
            kept[mode.index()].get_or_insert_with(|| analyze_timed(set, &opts, &now_ms));
        f(all, timings)
    })
}

#[cfg(target_arch = "wasm32")]
fn report_of(set: &TraceSet, steps: Option<crate::analysis::step_filter::StepRange>) -> FromWorker {
    // The report computes its own figures over the window it picks: no analysis run needed.
    match diagnose_steps(set, steps) {
        Ok(report) => FromWorker::Report {
            redacted: report.redacted(),
            report,
        },
        Err(message) => FromWorker::StepsRefused {
            steps: steps.unwrap_or_default(),
            message,
        },
    }
}

#[cfg(target_arch = "wasm32")]
fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

#[cfg(target_arch = "wasm32")]
fn post(msg: &FromWorker) {
    post_raw(&bytes_of(msg));
}

/// Posts a message already encoded (wrapped while a shard answers its coordinator).
#[cfg(target_arch = "wasm32")]
fn post_raw(bytes: &[u8]) {
    let _ = scope().post_message(&js_bytes(&wrapped(bytes)));
}

/// A message in the wire format ([`protocol::codec`]), never wrapped (an error message when it
/// cannot be written).
#[cfg(target_arch = "wasm32")]
fn bytes_of(msg: &FromWorker) -> Vec<u8> {
    protocol::codec::encode(msg).unwrap_or_else(|e| {
        protocol::codec::encode(&FromWorker::Error {
            message: format!("cannot encode a message: {e}"),
        })
        .unwrap_or_default()
    })
}

#[cfg(target_arch = "wasm32")]
fn wrapped(bytes: &[u8]) -> Vec<u8> {
    match ANSWERING_PART.with(|a| a.get()) {
        Some(id) => protocol::shard::part_bytes(id, bytes),
        None => bytes.to_vec(),
    }
}

/// Bytes as a JS `Uint8Array` (a copy), as messages carry them.
#[cfg(target_arch = "wasm32")]
pub fn js_bytes(bytes: &[u8]) -> JsValue {
    js_sys::Uint8Array::from(bytes).into()
}

/// A message between the page and a worker as it arrives: its bytes (a `Uint8Array`), or
/// `[bytes, File or ArrayBuffer, ...]` (the files of a load, a binary file, the tables); `None`
/// for anything else.
#[cfg(target_arch = "wasm32")]
pub fn message_parts(data: JsValue) -> Option<(Vec<u8>, Vec<JsValue>)> {
    if let Some(bytes) = data.dyn_ref::<js_sys::Uint8Array>() {
        return Some((bytes.to_vec(), Vec::new()));
    }
    let a = data.dyn_into::<js_sys::Array>().ok()?;
    let head = a.get(0).dyn_into::<js_sys::Uint8Array>().ok()?;
    Some((head.to_vec(), a.iter().skip(1).collect()))
}

/// Posts `[bytes(msg), buffers...]`, the buffers transferred, not copied; false when it failed.
#[cfg(target_arch = "wasm32")]
fn post_with_buffers(msg: &FromWorker, buffers: &[js_sys::ArrayBuffer]) -> bool {
    // Wrapped once, by `post_raw_with_buffers` (a shard's answer wrapped twice reached its
    // coordinator as a part inside a part, and was never combined).
    post_raw_with_buffers(&bytes_of(msg), buffers)
}

/// Posts `[bytes, buffers...]` (`bytes` already encoded, wrapped while a shard answers its
/// coordinator), the buffers transferred; false when it failed.
#[cfg(target_arch = "wasm32")]
fn post_raw_with_buffers(bytes: &[u8], buffers: &[js_sys::ArrayBuffer]) -> bool {
    let message = js_sys::Array::of1(&js_bytes(&wrapped(bytes)));
    let transfer = js_sys::Array::new();
    for b in buffers {
        message.push(b);
        transfer.push(b);
    }
    scope()
        .post_message_with_transfer(&message, &transfer)
        .is_ok()
}

/// Starts the worker: installs the message handler and says it is ready.
#[cfg(target_arch = "wasm32")]
pub fn start() {
    console_error_panic_hook::set_once();
    let handler = Closure::<dyn FnMut(MessageEvent)>::new(on_message);
    scope().set_onmessage(Some(handler.as_ref().unchecked_ref()));
    handler.forget();
    post(&FromWorker::Ready);
    if scope().name() != reader::WORKER_NAME {
        // Started now, so that it is running by the time a file is dropped.
        load::start_reader_worker();
    }
}

#[cfg(target_arch = "wasm32")]
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
    let command = array
        .get(0)
        .dyn_into::<js_sys::Uint8Array>()
        .map(|b| b.to_vec())
        .unwrap_or_default();
    let request: ToWorker = match protocol::codec::decode(&command) {
        Ok(r) => r,
        Err(e) => {
            post(&FromWorker::Error {
                message: format!("the worker got a request it does not understand: {e}"),
            });
            return;
        }
    };
    handle(request, &array);
}

/// Serves one request (`array`: the message, with its files or buffers after the request). A set
/// split over shard workers is served by them ([`shards`]).
#[cfg(target_arch = "wasm32")]
fn handle(request: ToWorker, array: &js_sys::Array) {
    let request = match shards::serve(request) {
        Some(r) => r,
        None => return,
    };
    match request {
        ToWorker::Load { plan } => {
            let files: Vec<File> = array
                .iter()
                .skip(1)
                .filter_map(|v| v.dyn_into::<File>().ok())
                .collect();
            if !shards::start(&files, &plan) {
                load::load(files, plan.shard_of);
            }
        }
        ToWorker::Part { id, request } => {
            ANSWERING_PART.with(|a| a.set(Some(id)));
            handle(*request, array);
            ANSWERING_PART.with(|a| a.set(None));
        }
        ToWorker::ContextParts { steps } => shard_only(|set| ShardOnly::ContextParts {
            parts: crate::report::gather_parts::context_parts_in(set, steps),
        }),
        ToWorker::GatherParts { context } => shard_only(|set| ShardOnly::GatherParts {
            parts: crate::report::gather_parts::gather_parts(
                set,
                &context,
                &AnalysisOptions::default(),
            ),
        }),
        ToWorker::Read { job } => {
            let files: Vec<File> = array
                .iter()
                .skip(1)
                .filter_map(|v| v.dyn_into::<File>().ok())
                .collect();
            reader::read(job, files);
        }
        ToWorker::Credit { job, slices } => reader::credit(job, slices),
        ToWorker::Skip { job, file_index } => reader::skip(job, file_index),
        ToWorker::Analyze { mode } => with_set(|set| {
            with_analyses(set, mode, |all, timings| FromWorker::Analysis {
                analysis: all.clone(),
                timings: timings.to_vec(),
            })
        }),
        // Both forms come back: the page switches between them without asking again.
        ToWorker::Report { steps, .. } => with_set(|set| report_of(set, steps)),
        ToWorker::Query { query } => with_set(|set| FromWorker::Events(query_events(set, &query))),
        ToWorker::Export { query, redact } => with_set(|set| FromWorker::Exported {
            csv: if redact {
                use crate::report::redact::{redact_event_row, redact_group_key};
                let key = |k: &str| redact_group_key(query.group_by, &query.kinds, k);
                crate::table::query::export_csv_mapped(set, &query, &redact_event_row, &key)
            } else {
                export_csv(set, &query)
            },
        }),
        ToWorker::ExportTable {
            format,
            columns,
            redact,
        } => export_file::export_table(format, &columns, redact),
        ToWorker::Compare { baseline_files } => compare_runs(&baseline_files),
        ToWorker::Timeline {
            rank_index,
            request,
        } => with_set(|set| timeline(set, rank_index, &request)),
        ToWorker::RankLanes { request } => with_set(|set| rank_lanes(set, &request)),
        ToWorker::Locate { query, within } => with_set(
            |set| match crate::analysis::timeline::locate(set, &query, &within) {
                Some(f) => FromWorker::Located(protocol::Located {
                    rank_index: f.rank_index,
                    row: f.row,
                    start_ns: f.start_ns,
                    dur_ns: f.dur_ns,
                    outside: f.outside,
                }),
                None => FromWorker::Error {
                    message: "no event with a time matches this finding's evidence".into(),
                },
            },
        ),
        ToWorker::Perfetto { rank_index, redact } => {
            with_set(|set| perfetto(set, rank_index, redact))
        }
        ToWorker::Views { steps } => with_set(|set| FromWorker::Views {
            views: crate::analysis::views::all_views_in(set, steps),
            steps,
        }),
        ToWorker::StoreTables => saved::store_tables(),
        ToWorker::SqlTables => sql::sql_tables(),
        ToWorker::Restore { .. } => saved::restore(array.iter().skip(1).collect()),
        ToWorker::Search { rank_index, text } => with_set(|set| match set.ranks.get(rank_index) {
            Some(r) => {
                let (hits, total) = crate::analysis::timeline::search(&r.table, &text);
                FromWorker::SearchHits {
                    rank_index,
                    text,
                    hits,
                    total,
                }
            }
            None => FromWorker::Error {
                message: format!("no rank {rank_index} in the loaded set"),
            },
        }),
        ToWorker::Walk {
            rank_index,
            row,
            forward,
        } => with_set(|set| walk(set, rank_index, row, forward)),
        ToWorker::EventDetails { rank_index, row } => with_set(|set| {
            set.ranks
                .get(rank_index)
                .and_then(|r| event_details(&r.table, rank_index, row))
                .map_or_else(
                    || FromWorker::Error {
                        message: format!("no event {row} in rank {rank_index}"),
                    },
                    |d| FromWorker::EventDetails(Box::new(d)),
                )
        }),
    }
}

/// Posts `[json(msg), ArrayBuffer]`, the buffer transferred to the page.
#[cfg(target_arch = "wasm32")]
fn post_bytes(msg: &FromWorker, bytes: &[u8]) {
    let buffer = js_sys::Uint8Array::from(bytes).buffer();
    if !post_with_buffers(msg, &[buffer]) {
        post(&FromWorker::Error {
            message: "the worker could not send the file to the page".into(),
        });
    }
}

/// A rank's trace for Perfetto, with the idle causes and the whole critical path added.
#[cfg(target_arch = "wasm32")]
fn perfetto(set: &TraceSet, rank_index: usize, redact: bool) -> FromWorker {
    use crate::analysis::critical_path::{critical_path_mode, CriticalPathOptions};
    let Some(rank) = set.ranks.get(rank_index) else {
        return FromWorker::Error {
            message: format!("no rank {rank_index} in the loaded set"),
        };
    };
    let idle = crate::report::gather::idle_pieces(&rank.table);
    let all_rows = CriticalPathOptions {
        max_rows: Some(0),
        ..Default::default()
    };
    let path = critical_path_mode(&rank.table, &all_rows, crate::analysis::all::Mode::Exact).rows;
    let file = if redact {
        crate::report::redact::redact_file_name(&rank.table.file)
    } else {
        rank.table.file.clone()
    };
    let stem = file.trim_end_matches(".gz").trim_end_matches(".json");
    FromWorker::Download {
        file_name: format!("{stem}.perfetto.json"),
        mime: "application/json".into(),
        text: crate::report::perfetto::perfetto_json(&rank.table, &idle, &path, redact),
    }
}

/// Every rank's GPU busy per pixel of a range (the indexes are built on first use, then kept).
#[cfg(target_arch = "wasm32")]
fn rank_lanes(set: &TraceSet, request: &TimelineRequest) -> FromWorker {
    use crate::analysis::rank_lanes::BusyIndex;
    BUSY.with(|b| {
        let mut kept = b.borrow_mut();
        if kept.len() != set.ranks.len() {
            *kept = set.ranks.iter().map(|r| BusyIndex::new(&r.table)).collect();
        }
        let view = crate::analysis::rank_lanes::rank_lanes(set, &kept, request);
        FromWorker::RankLanes(Box::new(view))
    })
}

/// A rank's timeline index and its GPU idle pieces with their causes.
#[cfg(target_arch = "wasm32")]
pub(crate) struct RankTimeline {
    index: TimelineIndex,
    /// Worked out once the worker has answered what was asked with the first frame (the report,
    /// the analyses), then sent with the last range asked for.
    idle: Option<Vec<(i64, i64, IdleCause)>>,
    steps: Vec<(i64, i64, i64)>,
    /// The last range asked for (answered again when the idle causes are ready).
    last_request: Option<TimelineRequest>,
    /// The idle causes are due after the requests queued now.
    idle_due: bool,
}

/// Builds and keeps a rank's timeline index unless it is kept already.
#[cfg(target_arch = "wasm32")]
pub(crate) fn keep_timeline(set: &TraceSet, rank_index: usize) {
    let Some(rank) = set.ranks.get(rank_index) else {
        return;
    };
    TIMELINES.with(|t| {
        let mut kept = t.borrow_mut();
        if kept.len() < set.ranks.len() {
            kept.resize_with(set.ranks.len(), || None);
        }
        if kept[rank_index].is_none() {
            kept[rank_index] = Some(RankTimeline {
                index: TimelineIndex::new(&rank.table),
                idle: None,
                steps: crate::report::timeline_view::step_spans(&rank.table),
                last_request: None,
                idle_due: false,
            });
        }
    });
}

/// The arrow keys' walk on a rank's timeline index (built on first use, then kept).
#[cfg(target_arch = "wasm32")]
fn walk(set: &TraceSet, rank_index: usize, row: u32, forward: bool) -> FromWorker {
    let Some(rank) = set.ranks.get(rank_index) else {
        return FromWorker::Error {
            message: format!("no rank {rank_index} in the loaded set"),
        };
    };
    keep_timeline(set, rank_index);
    let to = TIMELINES.with(|t| {
        let kept = t.borrow();
        let index = &kept.get(rank_index)?.as_ref()?.index;
        index.neighbour(&rank.table, row, forward)
    });
    FromWorker::Walked {
        rank_index,
        from: row,
        to,
    }
}

/// Runs `f` once the messages already queued are handled (a zero-delay timer).
#[cfg(target_arch = "wasm32")]
fn after_queued(f: impl FnOnce() + 'static) {
    let task = Closure::once_into_js(f);
    let _ = scope().set_timeout_with_callback(task.unchecked_ref());
}

/// Works out a rank's idle causes and answers its last range again, now shaded.
#[cfg(target_arch = "wasm32")]
fn timeline_idle(set: &TraceSet, rank_index: usize) -> Option<FromWorker> {
    let rank = set.ranks.get(rank_index)?;
    let request = TIMELINES.with(|t| {
        let mut kept = t.borrow_mut();
        let kept = kept.get_mut(rank_index)?.as_mut()?;
        if kept.idle.is_none() {
            kept.idle = Some(crate::report::gather::idle_pieces(&rank.table));
        }
        kept.last_request
    })?;
    Some(timeline(set, rank_index, &request))
}

/// The timeline of one rank in a range (its index is built on first use, then kept).
#[cfg(target_arch = "wasm32")]
fn timeline(set: &TraceSet, rank_index: usize, request: &TimelineRequest) -> FromWorker {
    let Some(rank) = set.ranks.get(rank_index) else {
        return FromWorker::Error {
            message: format!("no rank {rank_index} in the loaded set"),
        };
    };
    keep_timeline(set, rank_index);
    TIMELINES.with(|t| {
        let mut kept = t.borrow_mut();
        let Some(kept) = kept.get_mut(rank_index).and_then(Option::as_mut) else {
            return FromWorker::Error {
                message: format!("no timeline for rank {rank_index}"),
            };
        };
        kept.last_request = Some(*request);
        if kept.idle.is_none() && !kept.idle_due {
            // Answered after this first frame and the requests queued with it (the report).
            kept.idle_due = true;
            after_queued(move || with_set(|set| timeline_idle(set, rank_index)));
        }
        let index = &kept.index;
        // An empty range asks for the whole trace.
        let request = if request.end_ns <= request.start_ns {
            &TimelineRequest {
                start_ns: index.span_ns.0,
                end_ns: index.span_ns.1,
                width_px: request.width_px,
            }
        } else {
            request
        };
        FromWorker::Timeline(Box::new(TimelineAnswer {
            rank_index,
            rank: rank.rank,
            tracks: index.tracks.clone(),
            span_ns: index.span_ns,
            view: index.view(&rank.table, request),
            idle: kept
                .idle
                .as_deref()
                .map_or_else(Vec::new, |idle| visible_idle(idle, request)),
            steps: kept.steps.clone(),
        }))
    })
}

/// Compares two runs of the kept set, then keeps the candidate run alone as the loaded set (and
/// the baseline beside it), so every other answer is about one run, never both mixed as ranks of
/// one job. The ranks are moved, not copied.
#[cfg(target_arch = "wasm32")]
fn compare_runs(baseline_files: &[String]) {
    let Some(set) = LOADED.with(|l| l.borrow_mut().take()) else {
        post(&FromWorker::Error {
            message: "no trace is loaded in the worker; load the files again".into(),
        });
        return;
    };
    match crate::report::compare::split_runs(set, baseline_files) {
        Ok((baseline, candidate)) => {
            let comparison = crate::report::compare::compare(&baseline, &candidate);
            let shown = load::run_summaries(&candidate);
            load::forget_set();
            keep_timeline(&candidate, 0);
            LOADED.with(|l| *l.borrow_mut() = Some(candidate));
            BASELINE.with(|b| *b.borrow_mut() = Some(baseline));
            post(&FromWorker::Compared {
                comparison: Box::new(comparison),
                shown: Some(shown),
            });
        }
        Err((set, message)) => {
            LOADED.with(|l| *l.borrow_mut() = Some(set));
            post(&FromWorker::Error { message });
        }
    }
}

#[cfg(target_arch = "wasm32")]
fn with_set<M: Into<Option<FromWorker>>>(f: impl FnOnce(&TraceSet) -> M) {
    let msg = LOADED.with(|l| match l.borrow().as_ref() {
        Some(set) => f(set).into(),
        None => Some(FromWorker::Error {
            message: "no trace is loaded in the worker; load the files again".into(),
        }),
    });
    if let Some(msg) = msg {
        post(&msg);
    }
}

/// A shard's answer only its coordinator reads (the report's parts).
#[cfg(target_arch = "wasm32")]
fn shard_only(f: impl FnOnce(&TraceSet) -> ShardOnly) {
    let made = LOADED.with(|l| l.borrow().as_ref().map(f));
    match made {
        Some(msg) => match protocol::shard::shard_only_bytes(&msg) {
            Ok(bytes) => post_raw(&bytes),
            Err(message) => post(&FromWorker::Error { message }),
        },
        None => post(&FromWorker::Error {
            message: "no trace is loaded in the worker; load the files again".into(),
        }),
    }
}
