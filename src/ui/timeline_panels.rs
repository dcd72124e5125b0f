//! The timeline's panels beside the canvas: the idle causes' legend, the selected event's details
//! and the search box.

use leptos::prelude::*;

use super::AppState;
use crate::analysis::timeline::{EventDetails, Relation};
use crate::page::palette::Hue;
use crate::report::timeline_view::{duration_label, idle_causes, TimelineAnswer, Viewport};

/// The idle causes drawn in the "GPU idle" row, with their colours.
#[component]
pub(super) fn IdleLegend(answer: Memo<Option<TimelineAnswer>>) -> impl IntoView {
    move || {
        let causes = answer.with(|a| a.as_ref().map(idle_causes).unwrap_or_default());
        (!causes.is_empty()).then(|| {
            let items = causes
                .into_iter()
                .map(|c| {
                    let style = format!("background: {}", Hue::of_idle(c).hex());
                    let name = c.as_str();
                    view! { <span data-idle-cause=name><i style=style></i>{c.label()}</span> }
                })
                .collect_view();
            view! { <div class="legend timeline-legend">"GPU idle: "{items}</div> }
        })
    }
}

/// The details panel of the selected event, with its launch or its kernels.
#[component]
pub(super) fn Details(
    details: EventDetails,
    /// The trace's first timestamp: starts are shown from it.
    origin_ns: i64,
    state: AppState,
    viewport: RwSignal<Option<Viewport>>,
) -> impl IntoView {
    let partners = details
        .partners
        .iter()
        .map(|p| {
            let (row, start, dur) = (p.row, p.start_ns, p.dur_ns);
            let label = match p.relation {
                Relation::LaunchedBy => "Launched by",
                Relation::Launched => "Launched",
            };
            let jump = move |_| {
                if let Some(vp) = viewport.get_untracked() {
                    let len = vp.len().max(dur as f64 * 4.0);
                    let mid = start as f64 + dur as f64 / 2.0;
                    viewport.set(Some(Viewport {
                        start_ns: mid - len / 2.0,
                        end_ns: mid + len / 2.0,
                    }));
                }
                super::apply(state, |p| p.ask_event_details(row));
            };
            view! {
                <li data-partner-row=row.to_string()>
                    {format!("{label}: ")}<code>{p.name.clone()}</code>
                    {format!(" ({})", duration_label(dur as f64))}" "
                    <button class="link partner-jump" on:click=jump>"Go to it"</button>
                </li>
            }
        })
        .collect_view();
    let args = details
        .args
        .iter()
        .map(|(k, v)| view! { <tr><td>{k.clone()}</td><td><code>{v.clone()}</code></td></tr> })
        .collect_view();
    let start_us = details.start_ns as f64 / 1000.0;
    let dur_us = details.dur_ns as f64 / 1000.0;
    view! {
        <aside id="event-details" class="event-details" data-row=details.row.to_string()>
            <h3 data-metric="event-name" data-value=details.name.clone()>{details.name.clone()}</h3>
            <dl class="facts">
                <div><dt>"Track"</dt><dd>{details.track.clone()}</dd></div>
                <div><dt>"Category"</dt><dd>{details.category.clone()}</dd></div>
                <div><dt>"Start"</dt><dd data-metric="event-start-us" data-value=start_us.to_string()>{format!("{} from the trace start", duration_label((details.start_ns - origin_ns) as f64))}</dd></div>
                <div><dt>"Duration"</dt><dd data-metric="event-dur-us" data-value=dur_us.to_string()>{duration_label(details.dur_ns as f64)}</dd></div>
            </dl>
            <ul class="partners">{partners}</ul>
            <div class="table-wrap"><table><tbody>{args}</tbody></table></div>
            <p class="muted">"Escape closes this panel."</p>
        </aside>
    }
}

/// The search box: Enter (or Next) searches the picked rank's events by name, then steps through
/// them; Previous steps back; the count says where ("3 of 17").
#[component]
pub(super) fn SearchBox(
    state: AppState,
    search: Memo<crate::page::timeline_search::TimelineSearch>,
) -> impl IntoView {
    let text = RwSignal::new(String::new());
    let go = move |forward: bool| {
        let t = text.get_untracked();
        let same = search.with_untracked(|s| s.text == t.trim() && !s.waiting);
        if same && forward {
            super::apply(state, |p| p.search_step(true));
        } else if same {
            super::apply(state, |p| p.search_step(false));
        } else {
            super::apply(state, |p| p.search_timeline(&t));
        }
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        if ev.key() == "Enter" {
            ev.prevent_default();
            go(!ev.shift_key());
        }
    };
    let count = move || search.with(|s| s.counter());
    view! {
        <div class="timeline-search" role="search">
            <input id="timeline-search" type="search" placeholder="Search events by name"
                aria-label="Search the timeline's events by name"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
                on:keydown=on_key/>
            <button id="timeline-search-prev" class="secondary" title="Previous match (Shift+Enter)"
                on:click=move |_| go(false)>"Previous"</button>
            <button id="timeline-search-next" class="secondary" title="Next match (Enter)"
                on:click=move |_| go(true)>"Next"</button>
            <span id="timeline-search-count" class="muted" data-metric="timeline-search-matches"
                data-value=move || search.with(|s| s.total.to_string())
                data-current=move || search.with(|s| s.current.map(|i| (i + 1).to_string()).unwrap_or_default())
                aria-live="polite">{count}</span>
        </div>
    }
}
