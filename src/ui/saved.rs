//! The traces saved in this browser (listed on the empty page, each with "Open"), and the bytes
//! they take (beside "Forget saved traces", which asks first); each can be forgotten on its own.
//!
//! Figures: `saved-count` (entries), `saved-bytes` (bytes all entries take), per entry
//! `saved-entry-bytes`, `saved-file-bytes` and `saved-ranks`.

use leptos::prelude::*;

use super::AppState;
use crate::page::page_state::Page;
use crate::page::saved::SavedEntry;
use crate::report::format;

/// The list, while nothing is loaded or shown: one line per saved trace, with "Open".
#[component]
pub fn SavedTraces(state: AppState) -> impl IntoView {
    let list = state.select(|p| p.saved.clone());
    let idle = state.select(|p| matches!(p.page, Page::Empty | Page::Failed | Page::Cancelled));
    move || {
        let list = list.get();
        (idle.get() && !list.is_empty()).then(|| {
            let count = list.len();
            let total = format::bytes(list.total_bytes());
            let rows = list
                .entries
                .into_iter()
                .map(|e| saved_row(state, e))
                .collect_view();
            view! {
                <section id="saved-traces" class="panel">
                    <h2>"Saved in this browser"</h2>
                    <p class="muted">
                        <span data-metric="saved-count" data-value=count.to_string()>{count}</span>
                        {format!(" saved, {} stored; open one to explore it without its file.", total)}
                    </p>
                    <ul class="saved-list">{rows}</ul>
                </section>
            }
        })
    }
}

/// "names — 1.2 MB file, saved 2026-12-05 21:40 UTC, 3.4 MB stored, 2 ranks  [Open]".
fn saved_row(state: AppState, e: SavedEntry) -> impl IntoView {
    let key = e.key.clone();
    let forget = e.key.clone();
    let figure = |metric: &'static str, value: u64, text: String| {
        view! { <span data-metric=metric data-value=value.to_string()>{text}</span> }
    };
    view! {
        <li class="saved-entry" data-key=e.key.clone()>
            <strong>{e.names()}</strong>
            " — "
            {figure("saved-file-bytes", e.file_bytes(), format::bytes(e.file_bytes()))}
            {format!(" file, saved {}, ", e.saved_text())}
            {figure("saved-entry-bytes", e.bytes(), format::bytes(e.bytes()))}
            " stored, "
            {figure("saved-ranks", e.rank_count() as u64, e.rank_count().to_string())}
            " rank(s) "
            <button class="open-saved small" on:click=move |_| super::open_saved(state, key.clone())>"Open"</button>
            " "
            <button class="forget-entry small" on:click=move |_| super::apply(state, |p| p.forget_entry(&forget))>"Forget"</button>
        </li>
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
