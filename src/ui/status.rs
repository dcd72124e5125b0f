//! What the page says about a load: its progress (with Cancel), the errors, and the notices and
//! offers (saved results, a file needed again, keep in this browser).

use leptos::prelude::*;

use super::AppState;
use crate::page::page_state::{needs_file_text, Detached, KeepOffer, Page, PageState};
use crate::protocol::{FileProgress, Phase, Progress};
use crate::report::format;

/// The progress of the load, shown from when a load starts.
#[component]
pub fn LoadProgress(state: AppState) -> impl IntoView {
    // The block is built once per load (when progress appears); only its text, bar and attributes
    // follow the messages, so the Cancel button stays the same element and can be clicked.
    // A finished load's bar goes once its results are on screen.
    let has_results = state.select(|p| p.shown().is_some());
    let shown = Memo::new(move |_| {
        state.progress.with(|p| {
            p.as_ref()
                .is_some_and(|p| p.phase != Phase::Done || !has_results.get())
        })
    });
    let loading = state.select(PageState::can_cancel);
    let cancelled = state.select(|p| matches!(p.page, Page::Cancelled));
    let on_cancel = Callback::new(move |()| super::cancel(state));
    move || {
        shown.get().then(|| {
            view! {
                <ProgressBlock progress=state.progress loading=loading cancelled=cancelled on_cancel/>
            }
        })
    }
}

/// "reading — 1.2 MB of 3.4 MB — 56.7 MB/s", or "Cancelled".
fn progress_text(p: &Progress, cancelled: bool) -> String {
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
}

/// "file 2 of 8: rank1.json" while several files load, else nothing.
fn file_text(p: &Progress, loading: bool) -> String {
    if p.file_count > 1 && loading {
        format!("file {} of {}: {}", p.file_index + 1, p.file_count, p.file)
    } else {
        String::new()
    }
}

/// The bar's width: the share of the bytes read, percent.
fn bar_style(p: Option<&Progress>) -> String {
    let pct = match p {
        Some(p) if p.bytes_total > 0 => {
            (p.bytes_done as f64 / p.bytes_total as f64 * 100.0).min(100.0)
        }
        Some(p) if p.phase == Phase::Done => 100.0,
        _ => 0.0,
    };
    format!("width: {pct:.1}%")
}

/// The progress text, the file being read, Cancel (while it can be), and the bar.
#[component]
fn ProgressBlock(
    #[prop(into)] progress: Signal<Option<Progress>>,
    #[prop(into)] loading: Signal<bool>,
    #[prop(into)] cancelled: Signal<bool>,
    on_cancel: Callback<()>,
) -> impl IntoView {
    let field = move |f: fn(&Progress) -> String| {
        move || progress.with(|p| p.as_ref().map(f).unwrap_or_default())
    };
    let text = move || {
        let cancelled = cancelled.get();
        progress.with(|p| {
            p.as_ref()
                .map(|p| progress_text(p, cancelled))
                .unwrap_or_default()
        })
    };
    let file = move || {
        let loading = loading.get();
        progress.with(|p| {
            p.as_ref()
                .map(|p| file_text(p, loading))
                .unwrap_or_default()
        })
    };
    let width = move || progress.with(|p| bar_style(p.as_ref()));
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
                    on:click=move |_| on_cancel.run(())>
                    "Cancel"
                </button>
            </div>
            <div class="bar"><div class="fill" style=width></div></div>
            <FilesProgress progress=progress/>
        </div>
    }
}

/// "8 ranks over 4 workers", when a split load reads its files in several workers.
fn workers_text(files: &[FileProgress]) -> String {
    let workers = files.iter().map(|f| f.worker).max().map_or(1, |w| w + 1);
    if workers > 1 {
        format!("{} files over {workers} workers", files.len())
    } else {
        String::new()
    }
}

/// One small bar per file (per rank) while several load.
#[component]
fn FilesProgress(#[prop(into)] progress: Signal<Option<Progress>>) -> impl IntoView {
    let files = move || progress.with(|p| p.as_ref().map(|p| p.files.clone()).unwrap_or_default());
    move || {
        let files = files();
        (files.len() > 1).then(|| {
            let workers = workers_text(&files);
            let bars = files
                .into_iter()
                .map(|f| {
                    let pct = if f.bytes_total > 0 {
                        (f.bytes_done as f64 / f.bytes_total as f64 * 100.0).min(100.0)
                    } else {
                        100.0
                    };
                    let title = format!(
                        "{}: {} of {} (worker {})",
                        f.file,
                        format::bytes(f.bytes_done),
                        format::bytes(f.bytes_total),
                        f.worker + 1
                    );
                    view! {
                        <div class="file-bar" title=title data-file=f.file.clone()
                            data-bytes-done=f.bytes_done.to_string()
                            data-bytes-total=f.bytes_total.to_string()
                            data-worker=f.worker.to_string()>
                            <div class="fill" style=format!("width: {pct:.1}%")></div>
                        </div>
                    }
                })
                .collect_view();
            view! {
                <div class="files-progress" data-metric="files-progress">
                    <span class="muted workers">{workers}</span>
                    <div class="file-bars">{bars}</div>
                </div>
            }
        })
    }
}

/// The files that could not be loaded.
#[component]
pub fn Errors(state: AppState) -> impl IntoView {
    let errors = state.select(|p| p.errors.clone());
    let failed = state.select(|p| matches!(p.page, Page::Failed));
    view! { <ErrorList errors failed/> }
}

/// The errors (the block is hidden while there is none), and a hint when nothing loaded.
#[component]
fn ErrorList(
    #[prop(into)] errors: Signal<Vec<String>>,
    #[prop(into)] failed: Signal<bool>,
) -> impl IntoView {
    view! {
        <div id="error" class="error" role="alert" hidden=move || errors.with(|e| e.is_empty())>
            <strong>"Could not load:"</strong>
            <ul>
                <For
                    each=move || errors.get().into_iter().enumerate()
                    key=|(i, e)| (*i, e.clone())
                    children=|(_, e)| view! { <li>{e}</li> }
                />
            </ul>
            {move || failed.get().then(|| view! {
                <p class="muted">"Nothing could be loaded. Check that the file is a torch.profiler trace (.json or .json.gz)."</p>
            })}
        </div>
    }
}

/// Notices and offers: a notice, the saved results of these files, and why the worker cannot answer.
#[component]
pub fn Offers(state: AppState) -> impl IntoView {
    let notice = state.select(|p| p.notice.clone());
    let detached = state.select(PageState::detached);
    let from_cache = Memo::new(move |_| detached.get() == Some(Detached::Saved));
    let saved_available = state.select(|p| p.saved_available);
    let on_show_saved = Callback::new(move |()| super::show_saved(state));
    view! {
        {move || notice.get().map(|text| view! { <Notice text/> })}
        {move || (saved_available.get() && !from_cache.get()).then(|| view! { <SavedOffer on_show=on_show_saved/> })}
        {move || from_cache.get().then(|| view! {
            <p class="notice">"Showing results saved in this browser (the trace itself was not read again)."</p>
        })}
        {move || detached.get().map(|why| view! { <NeedsFile why/> })}
    }
}

/// The offer to keep the results in this browser (in the header's details line).
#[component]
pub fn KeepChoice(state: AppState) -> impl IntoView {
    let keep_offer = state.select(|p| p.keep_offer);
    let on_keep = Callback::new(move |()| super::keep(state));
    let on_decline =
        Callback::new(move |()| state.page.update(|p| p.set_keep(KeepOffer::Declined)));
    move || view! { <KeepOfferView offer=keep_offer.get() on_keep on_decline/> }
}

#[component]
fn Notice(text: String) -> impl IntoView {
    view! { <p class="notice">{text}</p> }
}

/// Results for the files being loaded were saved earlier: show them instead.
#[component]
fn SavedOffer(on_show: Callback<()>) -> impl IntoView {
    view! {
        <div class="offer" id="saved-offer">
            <span>"Results for these files were saved in this browser earlier."</span>
            <button id="show-saved" on:click=move |_| on_show.run(())>"Show the saved results"</button>
        </div>
    }
}

/// Why the worker cannot answer about the results shown.
#[component]
fn NeedsFile(why: Detached) -> impl IntoView {
    view! { <p class="notice" id="needs-file" data-why=format!("{why:?}")>{needs_file_text(why)}</p> }
}

/// The offer to keep the results in this browser, or that they were kept.
#[component]
fn KeepOfferView(
    offer: KeepOffer,
    on_keep: Callback<()>,
    on_decline: Callback<()>,
) -> impl IntoView {
    match offer {
        KeepOffer::Asking => Some(view! {
            <span class="keep-offer" id="keep-offer">
                <span>"Keep this summary in this browser?"</span>
                <button id="keep" class="small" on:click=move |_| on_keep.run(())>"Keep"</button>
                <button id="no-keep" class="secondary small" on:click=move |_| on_decline.run(())>"No"</button>
            </span>
        }
        .into_any()),
        KeepOffer::Kept => Some(view! {
            <span class="kept" id="kept">"Kept in this browser: the results and the tables, to open again without the file."</span>
        }
        .into_any()),
        KeepOffer::Hidden | KeepOffer::Declined => None,
    }
}
