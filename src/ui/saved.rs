//! The traces saved in this browser (listed on the empty page, each with "Open"), and the bytes
//! they take (beside "Forget saved traces").
//!
//! Figures: `saved-count` (entries), `saved-bytes` (bytes all entries take), per entry
//! `saved-entry-bytes`, `saved-file-bytes` and `saved-ranks`.

use leptos::prelude::*;

use super::AppState;
use crate::report::format;
use crate::report::page_state::Page;
use crate::report::saved::{SavedEntry, SavedList};

/// The list, while nothing is loaded or shown.
#[component]
pub fn SavedTraces(state: AppState) -> impl IntoView {
    let list = state.select(|p| p.saved.clone());
    let idle = state.select(|p| matches!(p.page, Page::Empty | Page::Failed | Page::Cancelled));
    let on_open = Callback::new(move |key: String| super::open_saved(state, key));
    move || {
        (idle.get() && !list.with(SavedList::is_empty))
            .then(|| view! { <SavedListView list=list.get() on_open/> })
    }
}

#[component]
fn SavedListView(list: SavedList, on_open: Callback<String>) -> impl IntoView {
    let count = list.len();
    let total = list.total_bytes();
    view! {
        <section id="saved-traces" class="panel">
            <h2>"Saved in this browser"</h2>
            <p class="muted">
                <span data-metric="saved-count" data-value=count.to_string()>{count}</span>
                {if count == 1 { " trace, " } else { " traces, " }}
                <span>{format::bytes(total)}</span>
                " stored. Open one to explore it without its file."
            </p>
            <table class="saved-list">
                <thead>
                    <tr>
                        <th scope="col">"Files"</th>
                        <th scope="col">"Size"</th>
                        <th scope="col">"Saved"</th>
                        <th scope="col">"Stored"</th>
                        <th scope="col">"Ranks"</th>
                        <th scope="col"></th>
                    </tr>
                </thead>
                <tbody>
                    {list.entries.into_iter().map(|e| view! { <SavedRow entry=e on_open/> }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}

#[component]
fn SavedRow(entry: SavedEntry, on_open: Callback<String>) -> impl IntoView {
    let key = entry.key.clone();
    let label = format!("Open {}", entry.names());
    view! {
        <tr class="saved-entry" data-key=entry.key.clone()>
            <td>{entry.names()}</td>
            <td data-metric="saved-file-bytes" data-value=entry.file_bytes().to_string()>{format::bytes(entry.file_bytes())}</td>
            <td>{entry.saved_text()}</td>
            <td data-metric="saved-entry-bytes" data-value=entry.bytes().to_string()>{format::bytes(entry.bytes())}</td>
            <td data-metric="saved-ranks" data-value=entry.rank_count().to_string()>{entry.rank_count()}</td>
            <td>
                <button class="open-saved small" aria-label=label on:click=move |_| on_open.run(key.clone())>"Open"</button>
            </td>
        </tr>
    }
}

/// The bytes every saved trace takes, beside "Forget saved traces".
#[component]
pub fn SavedBytes(state: AppState) -> impl IntoView {
    let bytes = state.select(|p| p.saved.total_bytes());
    view! {
        <span class="muted" data-metric="saved-bytes" data-value=move || bytes.get().to_string()>
            {move || format!(" ({} stored)", format::bytes(bytes.get()))}
        </span>
    }
}
