//! The page's components: loader, progress, summary, ranks, trace health, diagnosis and deeper analysis.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{DragEvent, File, FileSystemDirectoryEntry, FileSystemEntry, FileSystemFileEntry};

use super::analyses::AnalysesPanel;
use super::AppState;
use crate::report::analyses_view::{analyses_model, AnalysisId};
use crate::report::format;
use crate::report::page_state::{needs_file_text, KeepOffer, Page, PageState};
use crate::worker::protocol::{Phase, Progress, RankSummary};

const TAGLINE: &str =
    "Drop a PyTorch profiler trace to see why your job is slow — it never leaves your machine";

/// The whole page.
pub fn app(state: AppState) -> impl IntoView {
    let started = state.select(|p| !matches!(p.page, Page::Empty));
    let has_results = state.select(|p| p.shown().is_some());
    view! {
        <header class="top">
            <div class="wrap">
                <h1>"Profile Model"</h1>
                <p class="tagline">{TAGLINE}</p>
            </div>
        </header>
        <main class="wrap">
            {loader(state)}
            <super::compare::ComparePicker state=state/>
            {progress(state)}
            {errors(state)}
            {offers(state)}
            <super::compare::RunsOffer state=state/>
            <super::compare::CompareWith state=state/>
            <super::compare::CompareView state=state/>
            {move || started.get().then(|| summary(state))}
            {move || has_results.get().then(|| ranks(state))}
            {move || has_results.get().then(|| diagnostics(state))}
            {move || has_results.get().then(|| report(state))}
            {move || has_results.get().then(|| view! { <super::timeline::TimelinePanel state/> })}
            {move || has_results.get().then(|| deeper(state))}
            {move || has_results.get().then(|| super::explore::explore(state))}
        </main>
        <footer class="wrap">
            <p class="muted">
                "Everything runs in this browser tab (Rust compiled to WebAssembly); the trace is never uploaded. "
                <button id="forget-saved" class="link" on:click=move |_| super::forget_saved(state)>
                    "Forget saved traces"
                </button>
            </p>
        </footer>
    }
}

fn is_trace_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    !lower.starts_with('.') && (lower.ends_with(".json") || lower.ends_with(".gz"))
}

/// Every file picked in a file input.
pub(super) fn trace_files_of(list: Option<web_sys::FileList>) -> Vec<File> {
    files_of(list, false)
}

fn files_of(list: Option<web_sys::FileList>, only_traces: bool) -> Vec<File> {
    let Some(list) = list else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.get(i))
        .filter(|f| !only_traces || is_trace_name(&f.name()))
        .collect()
}

async fn callback_promise(
    start: impl FnOnce(&js_sys::Function, &js_sys::Function) -> Result<(), JsValue>,
) -> Result<JsValue, JsValue> {
    let mut start = Some(start);
    let mut failed = None;
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
        if let Some(start) = start.take() {
            if let Err(e) = start(&resolve, &reject) {
                failed = Some(e);
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    JsFuture::from(promise).await
}

/// Every trace file under the dropped entries (folders are walked).
async fn files_of_entries(mut stack: Vec<FileSystemEntry>) -> Vec<File> {
    let mut files = Vec::new();
    while let Some(entry) = stack.pop() {
        if entry.is_file() {
            if !is_trace_name(&entry.name()) {
                continue;
            }
            let file_entry: FileSystemFileEntry = entry.unchecked_into();
            let got = callback_promise(|ok, err| {
                file_entry.file_with_callback_and_callback(ok, err);
                Ok(())
            })
            .await;
            if let Ok(f) = got {
                files.push(f.unchecked_into::<File>());
            }
        } else if entry.is_directory() {
            let dir: FileSystemDirectoryEntry = entry.unchecked_into();
            let reader = dir.create_reader();
            loop {
                let batch = callback_promise(|ok, err| {
                    reader.read_entries_with_callback_and_callback(ok, err)
                })
                .await;
                let Ok(batch) = batch else { break };
                let batch: js_sys::Array = batch.unchecked_into();
                if batch.length() == 0 {
                    break;
                }
                stack.extend(batch.iter().map(|e| e.unchecked_into::<FileSystemEntry>()));
            }
        }
    }
    files.sort_by_key(|f| f.name());
    files
}

fn on_drop(state: AppState, ev: DragEvent) {
    ev.prevent_default();
    state.dragging.set(false);
    let Some(transfer) = ev.data_transfer() else {
        return;
    };
    // Entries must be taken while the event is live; folders are then walked asynchronously.
    let items = transfer.items();
    let mut entries = Vec::new();
    let mut has_folder = false;
    for i in 0..items.length() {
        if let Some(item) = items.get(i) {
            if let Ok(Some(entry)) = item.webkit_get_as_entry() {
                has_folder |= entry.is_directory();
                entries.push(entry);
            }
        }
    }
    if has_folder {
        leptos::task::spawn_local(async move {
            let files = files_of_entries(entries).await;
            super::start_load(state, files);
        });
    } else {
        super::start_load(state, files_of(transfer.files(), false));
    }
}

fn loader(state: AppState) -> impl IntoView {
    view! {
        <section class="loader">
            <div
                id="drop-zone"
                class="drop-zone"
                class:dragging=move || state.dragging.get()
                on:dragover=move |ev: DragEvent| {
                    ev.prevent_default();
                    state.dragging.set(true);
                }
                on:dragleave=move |_| state.dragging.set(false)
                on:drop=move |ev: DragEvent| on_drop(state, ev)
            >
                <p class="drop-title">"Drop trace files or a folder here"</p>
                <p class="muted">
                    "A .json or .json.gz written by torch.profiler; several files = one per rank of the same job."
                </p>
                <div class="pickers">
                    <label class="button">
                        "Choose files"
                        <input
                            type="file"
                            id="file-input"
                            class="visually-hidden"
                            multiple=true
                            accept=".json,.gz,application/json,application/gzip"
                            on:change=move |ev| {
                                let input: web_sys::HtmlInputElement = event_target(&ev);
                                let files = files_of(input.files(), false);
                                input.set_value("");
                                super::start_load(state, files);
                            }
                        />
                    </label>
                    <label class="button secondary">
                        "Choose a folder"
                        <input
                            type="file"
                            id="dir-input"
                            class="visually-hidden"
                            prop:webkitdirectory=true
                            on:change=move |ev| {
                                let input: web_sys::HtmlInputElement = event_target(&ev);
                                let files = files_of(input.files(), true);
                                input.set_value("");
                                super::start_load(state, files);
                            }
                        />
                    </label>
                </div>
            </div>
        </section>
    }
}

fn progress(state: AppState) -> impl IntoView {
    // The block is built once per load (when progress appears); only its text, bar and attributes
    // follow the messages, so the Cancel button stays the same element and can be clicked.
    let shown = Memo::new(move |_| state.progress.with(|p| p.is_some()));
    let loading = state.select(PageState::can_cancel);
    let cancelled = state.select(|p| matches!(p.page, Page::Cancelled));
    move || {
        shown.get().then(|| {
            let field = move |f: fn(&Progress) -> String| {
                move || {
                    state
                        .progress
                        .with(|p| p.as_ref().map(f).unwrap_or_default())
                }
            };
            let text = move || {
                let cancelled = cancelled.get();
                state.progress.with(|p| {
                    let Some(p) = p else { return String::new() };
                    if cancelled {
                        "Cancelled".to_string()
                    } else {
                        format!(
                            "{} — {} of {} — {} MB/s",
                            p.phase.as_str(),
                            format::bytes(p.bytes_done),
                            format::bytes(p.bytes_total),
                            format::decimal(p.mb_per_s, 1)
                        )
                    }
                })
            };
            let file = move || {
                let loading = loading.get();
                state.progress.with(|p| match p {
                    Some(p) if p.file_count > 1 && loading => {
                        format!("file {} of {}: {}", p.file_index + 1, p.file_count, p.file)
                    }
                    _ => String::new(),
                })
            };
            let width = move || {
                state.progress.with(|p| {
                    let pct = match p {
                        Some(p) if p.bytes_total > 0 => {
                            (p.bytes_done as f64 / p.bytes_total as f64 * 100.0).min(100.0)
                        }
                        Some(p) if p.phase == Phase::Done => 100.0,
                        _ => 0.0,
                    };
                    format!("width: {pct:.1}%")
                })
            };
            view! {
                <div
                    id="progress"
                    class="progress"
                    class:cancelled=move || cancelled.get()
                    data-phase=field(|p| p.phase.as_str().to_string())
                    data-bytes-done=field(|p| p.bytes_done.to_string())
                    data-bytes-total=field(|p| p.bytes_total.to_string())
                    role="status"
                >
                    <div class="progress-row">
                        <span class="progress-text">{text}</span>
                        <span class="muted progress-file">{file}</span>
                        <button id="cancel" class="secondary" hidden=move || !loading.get() disabled=move || !loading.get()
                            on:click=move |_| super::cancel(state)>
                            "Cancel"
                        </button>
                    </div>
                    <div class="bar"><div class="fill" style=width></div></div>
                </div>
            }
        })
    }
}

fn errors(state: AppState) -> impl IntoView {
    let errors = state.select(|p| p.errors.clone());
    let failed = state.select(|p| matches!(p.page, Page::Failed));
    view! {
        <div id="error" class="error" role="alert" hidden=move || errors.with(|e| e.is_empty())>
            <strong>"Could not load:"</strong>
            <ul>
                {move || errors.get().into_iter().map(|e| view! { <li>{e}</li> }).collect_view()}
            </ul>
            {move || failed.get().then(|| view! {
                <p class="muted">"Nothing could be loaded. Check that the file is a torch.profiler trace (.json or .json.gz)."</p>
            })}
        </div>
    }
}

fn offers(state: AppState) -> impl IntoView {
    let notice = state.select(|p| p.notice.clone());
    let detached = state.select(PageState::detached);
    let from_cache = move || detached.get() == Some(crate::report::page_state::Detached::Saved);
    let saved_available = state.select(|p| p.saved_available);
    let keep_offer = state.select(|p| p.keep_offer);
    view! {
        {move || notice.get().map(|n| view! { <p class="notice">{n}</p> })}
        {move || (saved_available.get() && !from_cache()).then(|| view! {
            <div class="offer" id="saved-offer">
                <span>"Results for these files were saved in this browser earlier."</span>
                <button id="show-saved" on:click=move |_| super::show_saved(state)>"Show the saved results"</button>
            </div>
        })}
        {move || from_cache().then(|| view! {
            <p class="notice">"Showing results saved in this browser (the trace itself was not read again)."</p>
        })}
        {move || detached.get().map(|why| view! {
            <p class="notice" id="needs-file" data-why=format!("{why:?}")>{needs_file_text(why)}</p>
        })}
        {move || match keep_offer.get() {
            KeepOffer::Asking => Some(view! {
                <div class="offer" id="keep-offer">
                    <span>"Keep this trace's summary in this browser for next time?"</span>
                    <button id="keep" on:click=move |_| super::keep(state)>"Keep"</button>
                    <button id="no-keep" class="secondary" on:click=move |_| state.page.update(|p| p.set_keep(KeepOffer::Declined))>"No"</button>
                </div>
            }.into_any()),
            KeepOffer::Kept => Some(view! {
                <p class="notice" id="kept">"Kept: this summary is saved in this browser (results only, not the trace)."</p>
            }.into_any()),
            _ => None,
        }}
    }
}

fn metric_card(
    metric: &'static str,
    raw: String,
    label: &'static str,
    shown: String,
) -> impl IntoView {
    view! {
        <div class="card" data-metric=metric data-value=raw>
            <div class="card-label">{label}</div>
            <div class="card-figure">{shown}</div>
        </div>
    }
}

/// The rank picked (not tracked: callers track [`PageState::rank_index`] through a memo).
fn rank_index(state: AppState) -> usize {
    state.page.with_untracked(|p| p.rank_index)
}

fn selected(state: AppState) -> Option<RankSummary> {
    let index = rank_index(state);
    state.loaded.with(|l| {
        let l = l.as_ref()?;
        l.ranks.get(index).or_else(|| l.ranks.first()).cloned()
    })
}

fn summary(state: AppState) -> impl IntoView {
    let loading = state.select(PageState::is_loading);
    let cancelled = state.select(|p| matches!(p.page, Page::Cancelled));
    let rank_index = state.select(|p| p.rank_index);
    move || {
        rank_index.track();
        let Some(r) = selected(state) else {
            return view! {
                <section id="summary" class="panel" data-state="loading">
                    <h2>"Summary"</h2>
                    <p class="muted">{move || if loading.get() {
                        "Reading the trace…"
                    } else if cancelled.get() {
                        "Cancelled."
                    } else {
                        "No trace loaded."
                    }}</p>
                </section>
            }
            .into_any();
        };
        let s = r.summary.clone();
        let several = state
            .loaded
            .with(|l| l.as_ref().map_or(0, |l| l.ranks.len()))
            > 1;
        let rank_known = several || r.rank_source != "load order";
        let device = r.device.clone().or(s.device.clone());
        let read_mode = state
            .loaded
            .with(|l| l.as_ref().map(|l| l.read_mode.clone()).unwrap_or_default());
        let worker_memory = state
            .loaded
            .with(|l| l.as_ref().map_or(0, |l| l.worker_memory_bytes));
        let kernel_rows = s
            .top_kernels
            .iter()
            .map(|k| {
                view! {
                    <tr data-kernel=k.name.clone()>
                        <td class="name" title=k.name.clone()>{k.name.clone()}</td>
                        <td class="num" data-metric="kernel-calls" data-value=k.calls.to_string()>{format::int(k.calls)}</td>
                        <td class="num" data-metric="kernel-total-us" data-value=k.total_us.to_string()>{format::micros(k.total_us)}</td>
                        <td class="num" data-metric="kernel-avg-us" data-value=k.avg_us.to_string()>{format::micros(k.avg_us)}</td>
                        <td class="num" data-metric="kernel-pct" data-value=k.pct_of_kernel_time.to_string()>
                            <span class="pct-bar" style=format!("width: {:.1}%", k.pct_of_kernel_time.clamp(0.0, 100.0))></span>
                            {format::pct(k.pct_of_kernel_time)}
                        </td>
                    </tr>
                }
            })
            .collect_view();
        let category_rows = s
            .categories
            .iter()
            .map(|c| {
                view! {
                    <tr data-category=c.category.clone() data-metric="category-events" data-value=c.events.to_string()>
                        <td class="name">{c.category.clone()}</td>
                        <td class="num">{format::int(c.events)}</td>
                    </tr>
                }
            })
            .collect_view();
        let has_kernels = !s.top_kernels.is_empty();
        view! {
            <section id="summary" class="panel" data-state="ready" data-rank=r.rank.to_string() data-read-mode=read_mode>
                <div class="panel-head">
                    <h2>"Summary"</h2>
                    <span class="muted">{format!("{} · {}", r.file, format::bytes(r.file_bytes))}</span>
                    {several.then(|| rank_picker(state))}
                </div>
                <div class="cards">
                    {rank_known.then(|| view! {
                        <div class="card" data-metric="rank" data-value=r.rank.to_string() data-rank-source=r.rank_source.clone()>
                            <div class="card-label">"Rank"</div>
                            <div class="card-figure">{r.rank.to_string()}</div>
                            <div class="card-note">{format!("from {}", r.rank_source)}</div>
                        </div>
                    })}
                    {device.map(|d| metric_card("device", d.clone(), "Device", d))}
                    {metric_card("events", s.events.to_string(), "Events", format::int(s.events))}
                    {metric_card("kernels", s.kernels.to_string(), "GPU kernels", format::int(s.kernels))}
                    {metric_card("kernel-time-us", s.kernel_time_us.to_string(), "GPU kernel time", format::micros(s.kernel_time_us))}
                    {metric_card("distinct-kernels", s.distinct_kernels.to_string(), "Distinct kernels", format::int(s.distinct_kernels))}
                    {metric_card("span-us", s.span_us.to_string(), "Trace span", format::micros(s.span_us))}
                    {metric_card("text-bytes", r.text_bytes.to_string(), "JSON text", format::bytes(r.text_bytes))}
                    {metric_card("load-ms", r.load_ms.to_string(), "Load time", format::millis(r.load_ms))}
                    {(worker_memory > 0).then(|| metric_card("worker-memory-bytes", worker_memory.to_string(), "Worker memory", format::bytes(worker_memory)))}
                </div>
                <div class="columns">
                    <div class="col-wide">
                        <h3>"Top kernels by GPU time"</h3>
                        {if has_kernels {
                            view! {
                                <div class="table-wrap">
                                    <table class="kernels">
                                        <thead><tr>
                                            <th>"Kernel"</th><th class="num">"Calls"</th><th class="num">"Total"</th>
                                            <th class="num">"Average"</th><th class="num">"% of kernel time"</th>
                                        </tr></thead>
                                        <tbody>{kernel_rows}</tbody>
                                    </table>
                                </div>
                            }.into_any()
                        } else {
                            view! { <p class="muted">"This trace has no GPU kernels."</p> }.into_any()
                        }}
                    </div>
                    <div class="col-narrow">
                        <h3>"Events by category"</h3>
                        <div class="table-wrap">
                            <table class="categories">
                                <thead><tr><th>"Category"</th><th class="num">"Events"</th></tr></thead>
                                <tbody>{category_rows}</tbody>
                            </table>
                        </div>
                    </div>
                </div>
            </section>
        }
        .into_any()
    }
}

fn rank_picker(state: AppState) -> impl IntoView {
    let options = state.loaded.with(|l| {
        l.as_ref()
            .map(|l| {
                l.ranks
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (i, r.rank, r.file.clone()))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    });
    view! {
        <label class="rank-picker">
            "Rank "
            <select
                id="rank-picker"
                on:change=move |ev| {
                    if let Ok(i) = event_target_value(&ev).parse::<usize>() {
                        state.page.update(|p| p.pick_rank(i));
                    }
                }
            >
                {options
                    .into_iter()
                    .map(|(i, rank, file)| {
                        view! {
                            <option value=i.to_string() data-rank=rank.to_string() selected=move || state.page.with(|p| p.rank_index) == i>
                                {format!("{rank} — {file}")}
                            </option>
                        }
                    })
                    .collect_view()}
            </select>
        </label>
    }
}

fn ranks(state: AppState) -> impl IntoView {
    move || {
        let loaded = state.loaded.get()?;
        if loaded.ranks.len() < 2 {
            return None;
        }
        let rows = loaded
            .ranks
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let s = &r.summary;
                view! {
                    <tr data-rank=r.rank.to_string() class:selected=move || state.page.with(|p| p.rank_index) == i
                        on:click=move |_| state.page.update(|p| p.pick_rank(i))>
                        <td class="num">{r.rank}</td>
                        <td class="name">{r.file.clone()}</td>
                        <td class="num" data-metric="rank-events" data-value=s.events.to_string()>{format::int(s.events)}</td>
                        <td class="num" data-metric="rank-kernels" data-value=s.kernels.to_string()>{format::int(s.kernels)}</td>
                        <td class="num" data-metric="rank-kernel-time-us" data-value=s.kernel_time_us.to_string()>{format::micros(s.kernel_time_us)}</td>
                        <td class="num">{format::micros(s.span_us)}</td>
                    </tr>
                }
            })
            .collect_view();
        let notes = loaded
            .notes
            .iter()
            .map(|n| view! { <li>{n.clone()}</li> })
            .collect_view();
        Some(view! {
            <section class="panel">
                <h2>"Ranks"</h2>
                <div class="table-wrap">
                    <table id="ranks">
                        <thead><tr>
                            <th class="num">"Rank"</th><th>"File"</th><th class="num">"Events"</th>
                            <th class="num">"GPU kernels"</th><th class="num">"Kernel time"</th><th class="num">"Span"</th>
                        </tr></thead>
                        <tbody>{rows}</tbody>
                    </table>
                </div>
                <ul class="notes">{notes}</ul>
            </section>
        })
    }
}

fn diagnostics(state: AppState) -> impl IntoView {
    move || {
        let loaded = state.loaded.get()?;
        // Files with nothing to say share one line, so that 64 clean ranks do not take a page.
        let clean: Vec<String> = loaded
            .ranks
            .iter()
            .filter(|r| r.diagnostics.is_empty())
            .map(|r| format!("{} (rank {})", r.file, r.rank))
            .collect();
        let clean_line = match clean.len() {
            0 => None,
            n if n == loaded.ranks.len() && n > 1 => {
                Some(format!("No oddities found in any of the {n} files."))
            }
            _ => Some(format!("No oddities found in {}.", clean.join(", "))),
        };
        let files = loaded
            .ranks
            .iter()
            .filter(|r| !r.diagnostics.is_empty())
            .map(|r| {
                let items = r
                    .diagnostics
                    .iter()
                    .map(|d| {
                        let kind = serde_json::to_value(d.kind)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default();
                        let severity = serde_json::to_value(d.severity)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default();
                        let kind_attr = kind.clone();
                        let severity_attr = severity.clone();
                        view! {
                            <li class="diagnostic" data-kind=kind_attr data-severity=severity_attr data-count=d.count.to_string()>
                                <span class=format!("badge {severity}")>{severity.replace('-', " ")}</span>
                                <span class="diag-kind">{kind}</span>
                                <span class="diag-count">{format!("× {}", format::int(d.count))}</span>
                                <span class="diag-text">{d.description.clone()}</span>
                                {(!d.example.is_empty()).then(|| view! {
                                    <span class="muted diag-example">"e.g. "<code>{d.example.clone()}</code></span>
                                })}
                            </li>
                        }
                    })
                    .collect_view();
                view! {
                    <div class="health-file" data-file=r.file.clone()>
                        <h3>{format!("{} (rank {})", r.file, r.rank)}</h3>
                        <ul class="diagnostics">{items}</ul>
                    </div>
                }
            })
            .collect_view();
        let notes = loaded
            .notes
            .iter()
            .map(|n| view! { <li>{n.clone()}</li> })
            .collect_view();
        Some(view! {
            <section id="diagnostics" class="panel">
                <h2>"Trace health"</h2>
                <ul class="notes">{notes}</ul>
                {files}
                {clean_line.map(|text| view! { <p class="ok" id="health-clean">{text}</p> })}
            </section>
        })
    }
}

fn download_markdown(text: &str) {
    download(text, "text/markdown", "profile-model-diagnosis.md");
}

/// Saves `text` as a file (through a Blob URL).
pub fn download(text: &str, mime: &str, file_name: &str) {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
        return;
    };
    let document = web_sys::window().and_then(|w| w.document());
    if let Some(a) = document
        .and_then(|d| d.create_element("a").ok())
        .and_then(|e| e.dyn_into::<web_sys::HtmlAnchorElement>().ok())
    {
        a.set_href(&url);
        a.set_download(file_name);
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// The report as shown, in Markdown (redacted when the switch says so).
fn report_markdown(state: AppState) -> Memo<Option<String>> {
    let redact = state.select(|p| p.redact);
    Memo::new(move |_| {
        state.revision.track();
        redact.track();
        state
            .page
            .with_untracked(|p| p.report_shown().map(|r| r.to_markdown()))
    })
}

fn report(state: AppState) -> impl IntoView {
    let copied = RwSignal::new(false);
    let markdown_text = report_markdown(state);
    let model = Memo::new(move |_| {
        markdown_text.track();
        state.page.with_untracked(|p| {
            p.report_shown()
                .map(|r| crate::report::report_view::ReportModel::new(&r))
        })
    });
    let redact = state.select(|p| p.redact);
    let request_error = state.select(|p| p.request_error.clone());
    let links = Memo::new(move |_| {
        state.revision.track();
        state.page.with_untracked(PageState::finding_links)
    });
    view! {
        <section class="panel" id="report-panel">
            <div class="panel-head">
                <h2>"Diagnosis"</h2>
                <div class="actions">
                    <button id="copy-md" class="secondary" on:click=move |_| {
                        let text = markdown_text.get_untracked().unwrap_or_default();
                        if let Some(w) = web_sys::window() {
                            let _ = w.navigator().clipboard().write_text(&text);
                            copied.set(true);
                        }
                    }>{move || if copied.get() { "Copied" } else { "Copy as Markdown" }}</button>
                    <button id="download-md" class="secondary" on:click=move |_| {
                        download_markdown(&markdown_text.get_untracked().unwrap_or_default());
                    }>"Download .md"</button>
                    <label class="check" title="Replace kernel, op and module names with stable short hashes, so the report can be shared">
                        <input id="redact-names" type="checkbox" prop:checked=move || redact.get()
                            on:change=move |ev| super::set_redact(state, event_target_checked(&ev))/>
                        " Redact names"
                    </label>
                </div>
            </div>
            {move || match markdown_text.get() {
                None => view! {
                    <div id="report" class="markdown" data-state="loading">
                        <p class="muted">{move || request_error.get().unwrap_or_else(|| "Writing the diagnosis…".into())}</p>
                    </div>
                }.into_any(),
                Some(md) if md.trim().is_empty() => view! {
                    <div id="report" class="markdown" data-state="ready">
                        <p class="muted">"No diagnosis is available for this trace yet."</p>
                    </div>
                }.into_any(),
                Some(_) => view! {
                    <div id="report" class="markdown" data-state="ready" data-redacted=move || redact.get().to_string()>
                        {move || model.get().map(|m| view! { <super::report_view::ReportView model=m/> })}
                    </div>
                }.into_any(),
            }}
            {move || {
                let links = links.get();
                (!links.is_empty()).then(|| view! {
                    <div class="evidence">
                        <h3>"Evidence"</h3>
                        <ul id="finding-links">
                            {links.into_iter().map(|l| {
                                let id = l.id.clone();
                                let title = l.title.clone();
                                view! {
                                    <li><button class="link" data-finding=id on:click=move |_| super::open_finding(state, &l)>
                                        {format!("Show the events behind: {title}")}
                                    </button></li>
                                }
                            }).collect_view()}
                        </ul>
                    </div>
                })
            }}
        </section>
    }
}

/// How long the analyses took in the worker (`data-metric="analysis-ms"`: all together).
fn timings(t: &[crate::analysis::all::AnalysisTiming]) -> impl IntoView {
    (!t.is_empty()).then(|| {
        let total: f64 = t.iter().map(|x| x.ms).sum();
        let parts = t
            .iter()
            .filter(|x| x.ms >= 0.5)
            .map(|x| format!("{} {:.0} ms", x.name, x.ms))
            .collect::<Vec<_>>()
            .join(", ");
        let each = t
            .iter()
            .map(|x| view! { <span hidden data-metric="analysis-time-ms" data-analysis=x.name.clone() data-value=x.ms.to_string()></span> })
            .collect_view();
        view! {
            <p class="muted" id="analysis-timings">
                "All analyses ran in "
                <span data-metric="analysis-ms" data-value=total.to_string()>{format!("{total:.0} ms")}</span>
                " in this tab"
                {(!parts.is_empty()).then(|| format!(" ({parts})"))}
                "."
                {each}
            </p>
        }
    })
}

fn deeper(state: AppState) -> impl IntoView {
    let open = RwSignal::new(Vec::<AnalysisId>::new());
    let rank_index = state.select(|p| p.rank_index);
    let hta_compat = state.select(|p| p.hta_compat);
    let request_error = state.select(|p| p.request_error.clone());
    let detached = state.select(PageState::detached);
    move || {
        state.revision.track();
        rank_index.track();
        hta_compat.track();
        let (all, took) = state.page.with_untracked(|p| {
            p.analyses().map_or((None, Vec::new()), |a| {
                (Some(a.all.clone()), a.timings.clone())
            })
        });
        let ready = all.is_some();
        let mode = all.as_ref().map_or("", |a| a.mode.as_str());
        let waiting = move || match (request_error.get(), detached.get()) {
            (Some(e), _) => e,
            (None, Some(why)) => needs_file_text(why).to_string(),
            (None, None) => "Computing the analyses in the worker…".to_string(),
        };
        let body = match all {
            None => view! {
                <p class="muted">{waiting}</p>
            }
            .into_any(),
            Some(all) => {
                // One closed <details> per analysis, each with its gist beside the title: each opens on
                // demand, so the page stays short. Per-rank detail follows the rank picked in the summary.
                let model = analyses_model(&all, selected(state).map(|r| r.rank));
                view! { <AnalysesPanel model open/> }.into_any()
            }
        };
        view! {
            <section id="deeper" class="panel" data-state=if ready { "ready" } else { "loading" } data-mode=mode>
                <div class="panel-head">
                    <h2>"Deeper analysis"</h2>
                    <label class="check" title="HolisticTraceAnalysis 0.5.0's definitions: timestamps rounded to whole µs, the last ProfilerStep left out, its kernel-name patterns. Exact mode keeps ns and every event.">
                        <input id="hta-compat" type="checkbox" prop:checked=move || hta_compat.get()
                            on:change=move |ev| super::set_hta_compat(state, event_target_checked(&ev))/>
                        " HTA 0.5.0-compatible figures"
                    </label>
                </div>
                {timings(&took)}
                {body}
            </section>
        }
    }
}
