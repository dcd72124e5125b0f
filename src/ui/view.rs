//! The page: the skip link, the loader, then (once results are shown) the header, the verdict and
//! one tab per view (`ui::shell`), and the deeper analyses; the other panels have their own files.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::analyses::AnalysesPanel;
use super::health::TraceHealthPanel;
use super::loader::Loader;
use super::report_panel::ReportPanel;
use super::shell::{TabBar, TabPanel, TraceHeaderBar, VerdictCard};
use super::status::{Errors, LoadProgress, Offers};
use super::summary::{RanksPanel, SummaryPanel};
use super::AppState;
use crate::page::analyses_view::{analyses_model, AnalysisId};
use crate::page::page_state::{needs_file_text, Page, PageState};
use crate::page::tabs::Tab;
use crate::protocol::RankSummary;

const TAGLINE: &str =
    "Drop a PyTorch profiler trace to see why your job is slow — it never leaves your machine";

/// The whole page.
pub fn app(state: AppState) -> impl IntoView {
    let started = state.select(|p| !matches!(p.page, Page::Empty));
    let has_results = state.select(|p| p.shown().is_some());
    super::shell::sync_tab_with_hash(state);
    let skip = move |ev: leptos::ev::MouseEvent| {
        ev.prevent_default();
        if let Some(main) = document()
            .get_element_by_id("main")
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = main.focus();
        }
    };
    view! {
        <a class="skip-link" href="#main" on:click=skip>"Skip to the results"</a>
        <header class="top" class:compact=move || has_results.get()>
            <div class="wrap">
                <h1>"Profile Model"</h1>
                <p class="tagline">{TAGLINE}</p>
            </div>
        </header>
        <main class="wrap" id="main" tabindex="-1">
            <Loader state/>
            <super::loader::FirstStepsWhileEmpty state/>
            {move || (!has_results.get()).then(|| view! { <super::compare::ComparePicker state=state/> })}
            <LoadProgress state/>
            <Errors state/>
            <Offers state/>
            <super::saved::SavedTraces state/>
            <super::compare::RunsOffer state=state/>
            {move || (started.get() && !has_results.get()).then(|| view! { <SummaryPanel state/> })}
            {move || has_results.get().then(|| results(state))}
        </main>
        <footer class="wrap">
            <p class="muted">
                "Everything runs in this browser tab (Rust compiled to WebAssembly); the trace is never uploaded. "
                <button id="forget-saved" class="link" on:click=move |_| super::forget_saved(state)>
                    "Forget saved traces"
                </button>
                <super::saved::SavedBytes state/>
            </p>
        </footer>
    }
}

/// The results: the header and the verdict first, then one tab per view. Every panel stays in the
/// page (its state kept); only the picked tab's is shown.
fn results(state: AppState) -> impl IntoView {
    view! {
        <TraceHeaderBar state/>
        <VerdictCard state/>
        <TabBar state/>
        <TabPanel state tab=Tab::Report>
            <ReportPanel state/>
            <SummaryPanel state/>
            <RanksPanel state/>
            <TraceHealthPanel state/>
        </TabPanel>
        <TabPanel state tab=Tab::Overview><super::views::ViewsPanel state/></TabPanel>
        <TabPanel state tab=Tab::Timeline><super::timeline::TimelinePanel state/></TabPanel>
        <TabPanel state tab=Tab::Analyses>{deeper(state)}</TabPanel>
        <TabPanel state tab=Tab::Explore>{super::explore::explore(state)}</TabPanel>
        <TabPanel state tab=Tab::Sql>{super::sql::sql_panel(state)}</TabPanel>
        <TabPanel state tab=Tab::Compare>
            <super::compare::CompareWith state=state/>
            <super::compare::CompareView state=state/>
            <super::compare::ComparePicker state=state/>
        </TabPanel>
    }
}

/// The rank picked (not tracked: callers track [`PageState::rank_index`] through a memo).
fn rank_index(state: AppState) -> usize {
    state.page.with_untracked(|p| p.rank_index)
}

/// The summary of the rank picked (the first when the pick is out of range).
pub(super) fn selected(state: AppState) -> Option<RankSummary> {
    let index = rank_index(state);
    state.loaded.with(|l| {
        let l = l.as_ref()?;
        l.ranks.get(index).or_else(|| l.ranks.first()).cloned()
    })
}

/// Saves `text` as a file (through a Blob URL).
pub fn download(text: &str, mime: &str, file_name: &str) {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type(mime);
    if let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &bag) {
        save_blob(&blob, file_name);
    }
}

/// Saves the bytes of an `ArrayBuffer` (a worker's [`FromWorker::DownloadBytes`]) as a file.
///
/// [`FromWorker::DownloadBytes`]: crate::protocol::FromWorker::DownloadBytes
pub fn download_buffer(buffer: &JsValue, mime: &str, file_name: &str) {
    let parts = js_sys::Array::of1(buffer);
    let bag = web_sys::BlobPropertyBag::new();
    bag.set_type(mime);
    if let Ok(blob) = web_sys::Blob::new_with_buffer_source_sequence_and_options(&parts, &bag) {
        save_blob(&blob, file_name);
    }
}

/// Clicks a link to a Blob URL of `blob` that downloads it as `file_name`.
fn save_blob(blob: &web_sys::Blob, file_name: &str) {
    let Ok(url) = web_sys::Url::create_object_url_with_blob(blob) else {
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
    let redact = state.select(|p| p.redact);
    move || {
        state.revision.track();
        rank_index.track();
        hta_compat.track();
        let redact = redact.get();
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
                let model = if redact { model.redacted() } else { model };
                view! { <AnalysesPanel model open state/> }.into_any()
            }
        };
        view! {
            <section id="deeper" class="panel" data-state=if ready { "ready" } else { "loading" } data-mode=mode>
                <div class="panel-head">
                    <h2>"Deeper analyses"</h2>
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
