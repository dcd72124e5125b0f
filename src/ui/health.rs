//! Trace health: the oddities counted while loading, by file, and one line for the files without any.

use leptos::prelude::*;

use super::summary::Notes;
use super::AppState;
use crate::protocol::{LoadedSet, RankSummary};
use crate::report::format;
use crate::trace::diagnostics::Diagnostic;

/// The trace health panel of the loaded set.
#[component]
pub fn TraceHealthPanel(state: AppState) -> impl IntoView {
    move || {
        state
            .loaded
            .get()
            .map(|loaded| view! { <TraceHealth loaded/> })
    }
}

/// "No oddities found in …" for the files with nothing to say: they share one line, so that 64 clean
/// ranks do not take a page.
fn clean_line(ranks: &[RankSummary]) -> Option<String> {
    let clean: Vec<String> = ranks
        .iter()
        .filter(|r| r.diagnostics.is_empty())
        .map(file_title)
        .collect();
    match clean.len() {
        0 => None,
        n if n == ranks.len() && n > 1 => {
            Some(format!("No oddities found in any of the {n} files."))
        }
        _ => Some(format!("No oddities found in {}.", clean.join(", "))),
    }
}

fn file_title(r: &RankSummary) -> String {
    format!("{} (rank {})", r.file, r.rank)
}

#[component]
fn TraceHealth(loaded: LoadedSet) -> impl IntoView {
    let clean = clean_line(&loaded.ranks);
    let LoadedSet { ranks, notes, .. } = loaded;
    let odd: Vec<RankSummary> = ranks
        .into_iter()
        .filter(|r| !r.diagnostics.is_empty())
        .collect();
    view! {
        <section id="diagnostics" class="panel">
            <h2>"Trace health"</h2>
            <Notes notes/>
            <For
                each=move || odd.clone().into_iter().enumerate()
                key=|(i, r)| (*i, r.file.clone())
                children=|(_, r)| view! { <HealthFile rank=r/> }
            />
            {clean.map(|text| view! { <p class="ok" id="health-clean">{text}</p> })}
        </section>
    }
}

/// The oddities of one file.
#[component]
fn HealthFile(rank: RankSummary) -> impl IntoView {
    let title = file_title(&rank);
    let RankSummary {
        file, diagnostics, ..
    } = rank;
    view! {
        <div class="health-file" data-file=file>
            <h3>{title}</h3>
            <ul class="diagnostics">
                <For
                    each=move || diagnostics.clone()
                    key=|d| d.kind
                    children=|d| view! { <DiagnosticItem diagnostic=d/> }
                />
            </ul>
        </div>
    }
}

/// One kind of oddity: how bad, how often, what it means, one example.
#[component]
fn DiagnosticItem(diagnostic: Diagnostic) -> impl IntoView {
    let Diagnostic {
        kind,
        severity,
        count,
        example,
        description,
    } = diagnostic;
    let kind = kind.as_str();
    let severity = severity.as_str();
    let (kind_attr, severity_attr) = (kind, severity);
    view! {
        <li class="diagnostic" data-kind=kind_attr data-severity=severity_attr data-count=count.to_string()>
            <span class=format!("badge {severity}")>{severity.replace('-', " ")}</span>
            <span class="diag-kind">{kind}</span>
            <span class="diag-count">{format!("× {}", format::int(count))}</span>
            <span class="diag-text">{description}</span>
            {(!example.is_empty()).then(|| view! {
                <span class="muted diag-example">"e.g. "<code>{example}</code></span>
            })}
        </li>
    }
}
