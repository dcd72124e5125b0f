//! The diagnosis panel: the report (drawn by `report_view`), its Markdown (copy, download), and links
//! to the events behind each finding. The redact switch is the page's (in its header).

use leptos::prelude::*;

use super::report_view::ReportView;
use super::AppState;
use crate::page::page_state::PageState;
use crate::page::report_view::ReportModel;
use crate::protocol::FindingLink;

fn download_markdown(text: &str) {
    super::view::download(text, "text/markdown", "profile-model-diagnosis.md");
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

/// The diagnosis panel of the results shown.
#[component]
pub fn ReportPanel(state: AppState) -> impl IntoView {
    let markdown = report_markdown(state);
    let model = Memo::new(move |_| {
        markdown.track();
        state
            .page
            .with_untracked(|p| p.report_shown().map(|r| ReportModel::new(&r)))
    });
    let redact = state.select(|p| p.redact);
    let request_error = state.select(|p| p.request_error.clone());
    let links_redact = state.select(|p| p.redact);
    let links = Memo::new(move |_| {
        state.revision.track();
        links_redact.track();
        state.page.with_untracked(PageState::finding_links)
    });
    let on_open = Callback::new(move |link: FindingLink| super::open_finding(state, &link));
    let on_locate =
        Callback::new(move |link: FindingLink| super::apply(state, |p| p.locate(&link)));
    view! {
        <section class="panel" id="report-panel">
            <div class="panel-head">
                <h2>"Diagnosis: the full report"</h2>
                <ReportActions markdown/>
            </div>
            <super::step_picker::StepPicker state place="report"/>
            <ReportBody markdown model redact request_error/>
            {move || {
                let links = links.get();
                (!links.is_empty()).then(|| view! { <Evidence links on_open on_locate/> })
            }}
        </section>
    }
}

/// Copy as Markdown, download the Markdown.
#[component]
fn ReportActions(#[prop(into)] markdown: Signal<Option<String>>) -> impl IntoView {
    let copied = RwSignal::new(false);
    view! {
        <div class="actions">
            <button id="copy-md" class="secondary" on:click=move |_| {
                let text = markdown.get_untracked().unwrap_or_default();
                if let Some(w) = web_sys::window() {
                    let _ = w.navigator().clipboard().write_text(&text);
                    copied.set(true);
                }
            }>{move || if copied.get() { "Copied" } else { "Copy as Markdown" }}</button>
            <button id="download-md" class="secondary" on:click=move |_| {
                download_markdown(&markdown.get_untracked().unwrap_or_default());
            }>"Download .md"</button>
        </div>
    }
}

/// The report, or why it is not there yet.
#[component]
fn ReportBody(
    #[prop(into)] markdown: Signal<Option<String>>,
    #[prop(into)] model: Signal<Option<ReportModel>>,
    #[prop(into)] redact: Signal<bool>,
    #[prop(into)] request_error: Signal<Option<String>>,
) -> impl IntoView {
    move || {
        match markdown.get() {
        None => view! {
            <div id="report" class="markdown" data-state="loading">
                <p class="muted">{move || request_error.get().unwrap_or_else(|| "Writing the diagnosis…".into())}</p>
            </div>
        }
        .into_any(),
        Some(md) if md.trim().is_empty() => view! {
            <div id="report" class="markdown" data-state="ready">
                <p class="muted">"No diagnosis is available for this trace yet."</p>
            </div>
        }
        .into_any(),
        Some(_) => view! {
            <div id="report" class="markdown" data-state="ready" data-redacted=move || redact.get().to_string()>
                {move || model.get().map(|m| view! { <ReportView model=m/> })}
            </div>
        }
        .into_any(),
    }
    }
}

/// A button per finding that has events to show: it opens them in the exploration view.
#[component]
fn Evidence(
    links: Vec<FindingLink>,
    on_open: Callback<FindingLink>,
    on_locate: Callback<FindingLink>,
) -> impl IntoView {
    view! {
        <div class="evidence">
            <h3>"Evidence"</h3>
            <ul id="finding-links">
                <For
                    each=move || links.clone()
                    key=|l| l.id.clone()
                    children=move |l| {
                        let text = format!("Show the events behind: {}", l.title);
                        let id = l.id.clone();
                        let here = l.clone();
                        view! {
                            <li><button class="link" data-finding=id.clone() on:click=move |_| on_open.run(l.clone())>
                                {text}
                            </button>" · "
                            <button class="link show-on-timeline" data-finding-timeline=id on:click=move |_| on_locate.run(here.clone())>
                                "Show on timeline"
                            </button></li>
                        }
                    }
                />
            </ul>
        </div>
    }
}
