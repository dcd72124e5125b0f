//! The "Explore events" view: filter, group, sort and page the loaded events (queried in the worker), export
//! the matched rows as CSV, or download the whole event table (Parquet, Arrow IPC or CSV, built in the worker).

use leptos::prelude::*;

use super::AppState;
use crate::export::ExportFormat;
use crate::page::page_state::{needs_file_text, Events, PageState};
use crate::table::query::{EventGroup, EventPage, EventQuery, EventRow, GroupBy, SortBy};
use crate::table::EventKind;

/// The format picker's words for a format.
fn format_label(f: ExportFormat) -> &'static str {
    match f {
        ExportFormat::Parquet => "Parquet",
        ExportFormat::Arrow => "Arrow IPC",
        ExportFormat::Csv => "CSV",
    }
}

/// The form's controls, as signals (what the user typed or picked, before Apply).
#[derive(Clone, Copy)]
struct Form {
    kind: RwSignal<String>,
    name: RwSignal<String>,
    min_dur: RwSignal<String>,
    group: RwSignal<String>,
    sort: RwSignal<String>,
    descending: RwSignal<bool>,
}

impl Form {
    /// The controls showing this query.
    fn new(q: &EventQuery) -> Self {
        Form {
            kind: RwSignal::new(
                q.kinds
                    .first()
                    .map(|k| k.as_str().to_string())
                    .unwrap_or_default(),
            ),
            name: RwSignal::new(q.name_contains.clone()),
            min_dur: RwSignal::new(q.min_dur_us.map(|m| m.to_string()).unwrap_or_default()),
            group: RwSignal::new(
                q.group_by
                    .map(|g| g.as_str().to_string())
                    .unwrap_or_default(),
            ),
            sort: RwSignal::new(q.sort.as_str().to_string()),
            descending: RwSignal::new(q.descending),
        }
    }

    /// The query the controls describe (names and ranks of a finding's query are kept).
    fn query(self, previous: &EventQuery) -> EventQuery {
        let kind = self.kind.get_untracked();
        EventQuery {
            kinds: EventKind::parse(&kind).into_iter().collect(),
            name_contains: self.name.get_untracked().trim().to_string(),
            min_dur_us: self.min_dur.get_untracked().trim().parse().ok(),
            group_by: GroupBy::parse(&self.group.get_untracked()),
            sort: SortBy::parse(&self.sort.get_untracked()).unwrap_or_default(),
            descending: self.descending.get_untracked(),
            names: previous.names.clone(),
            ranks: previous.ranks.clone(),
            stream: previous.stream,
            limit: previous.limit,
            offset: 0,
            category: previous.category.clone(),
            uncapped: false,
        }
    }
}

fn apply(state: AppState, form: Form) {
    let q = form.query(&state.page.with_untracked(|p| p.query.clone()));
    super::run_query(state, q);
}

fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_string(), |x| crate::report::format::decimal(x, 3))
}

/// "Show on timeline" for a row with a time: the timeline goes to that event.
fn show_button(state: AppState, r: &EventRow) -> Option<impl IntoView> {
    let (rank, row, ts_us) = (r.rank, r.row, r.ts_us?);
    let dur_us = r.dur_us.unwrap_or(0.0);
    Some(view! {
        <button type="button" class="link locate" title="Show on timeline" aria-label="Show on timeline"
            on:click=move |_| super::apply(state, |p| p.show_event(rank, row, ts_us, dur_us))><super::analyses::LocateIcon/></button>
    })
}

fn row_view(state: AppState, r: EventRow) -> impl IntoView {
    let args = r.args_text();
    let show = show_button(state, &r);
    view! {
        <tr data-row=r.row data-rank=r.rank data-dur-us=r.dur_us.map(|d| d.to_string()).unwrap_or_default()>
            <td class="locate-cell">{show}</td>
            <td class="num">{r.rank}</td>
            <td class="num">{num(r.start_ms)}</td>
            <td class="num">{num(r.dur_us)}</td>
            <td>{r.kind.as_str()}</td>
            <td class="num">{r.stream.map(|s| s.to_string()).unwrap_or_default()}</td>
            <td class="name" title=r.name.clone()>{r.name.clone()}</td>
            <td class="args" title=args.clone()>{args.clone()}</td>
        </tr>
    }
}

/// The order the table shows: a row order asked of groups is by total, a group order asked of rows
/// by duration.
fn sorted_by(query: &EventQuery) -> SortBy {
    if query.group_by.is_some() {
        query.sort.of_groups()
    } else {
        query.sort.of_rows()
    }
}

/// A header that sorts the query by `by` on a click (again: the other way); it shows the order.
fn sort_header(state: AppState, query: &EventQuery, label: &str, by: SortBy) -> impl IntoView {
    let active = sorted_by(query) == by;
    let aria = match (active, query.descending) {
        (false, _) => "none",
        (true, true) => "descending",
        (true, false) => "ascending",
    };
    let mark = match aria {
        "descending" => " ▼",
        "ascending" => " ▲",
        _ => "",
    };
    let on_click = move |_| {
        let mut q = state.page.with_untracked(|p| p.query.clone());
        q.descending = if sorted_by(&q) == by {
            !q.descending
        } else {
            by.descending_first()
        };
        q.sort = by;
        q.offset = 0;
        super::run_query(state, q);
    };
    view! {
        <th aria-sort=aria data-sort=by.as_str()>
            <button type="button" class="sort" on:click=on_click>{label.to_string()}{mark}</button>
        </th>
    }
}

fn group_view(g: EventGroup) -> impl IntoView {
    view! {
        <tr data-key=g.key.clone() data-count=g.count data-total-us=g.total_us.to_string()>
            <td class="name" title=g.key.clone()>{g.key.clone()}</td>
            <td class="num">{crate::report::format::int(g.count)}</td>
            <td class="num">{crate::report::format::decimal(g.total_us, 3)}</td>
            <td class="num">{num(g.mean_us)}</td>
            <td class="num">{num(g.min_us)}</td>
            <td class="num">{num(g.max_us)}</td>
            <td class="num">{format!("{:.2}", g.pct_of_matched)}</td>
        </tr>
    }
}

fn results(state: AppState, page: EventPage) -> impl IntoView {
    use crate::report::format::{decimal, int};
    let grouped = page.query.group_by.is_some();
    let of = if grouped {
        page.group_count
    } else {
        page.matched
    };
    let shown = page.rows.len().max(page.groups.len());
    let from = page.query.offset;
    let limit = page.query.limit;
    let has_prev = from > 0;
    let has_next = (from + shown) < of as usize;
    let go = move |offset: usize| {
        let mut q = state.page.with_untracked(|p| p.query.clone());
        q.offset = offset;
        super::run_query(state, q);
    };
    let body = if grouped {
        view! {
            <table class="events" id="explore-table" data-grouped="true">
                <thead><tr>
                    {sort_header(state, &page.query, page.query.group_by.map(|g| g.as_str()).unwrap_or(""), SortBy::Name)}
                    {sort_header(state, &page.query, "Count", SortBy::Count)}
                    {sort_header(state, &page.query, "Total (µs)", SortBy::Total)}
                    {sort_header(state, &page.query, "Mean (µs)", SortBy::Mean)}
                    {sort_header(state, &page.query, "Min (µs)", SortBy::Min)}
                    {sort_header(state, &page.query, "Max (µs)", SortBy::Max)}
                    {sort_header(state, &page.query, "%", SortBy::Share)}
                </tr></thead>
                <tbody>{page.groups.into_iter().map(group_view).collect_view()}</tbody>
            </table>
        }
        .into_any()
    } else {
        view! {
            <table class="events" id="explore-table" data-grouped="false">
                <thead><tr>
                    <th><span class="visually-hidden">"Show on timeline"</span></th>
                    {sort_header(state, &page.query, "Rank", SortBy::Rank)}
                    {sort_header(state, &page.query, "Start (ms)", SortBy::Start)}
                    {sort_header(state, &page.query, "Dur (µs)", SortBy::Duration)}
                    {sort_header(state, &page.query, "Kind", SortBy::Kind)}
                    {sort_header(state, &page.query, "Stream", SortBy::Stream)}
                    {sort_header(state, &page.query, "Name", SortBy::Name)}
                    {sort_header(state, &page.query, "Args", SortBy::Args)}
                </tr></thead>
                <tbody>{page.rows.into_iter().map(|r| row_view(state, r)).collect_view()}</tbody>
            </table>
        }
        .into_any()
    };
    view! {
        <p id="explore-status" data-metric="explore-matched" data-value=page.matched
            data-groups=page.group_count data-matched-dur-us=page.matched_dur_us.to_string()>
            {format!("{} events match ({} ms in total)", int(page.matched), decimal(page.matched_dur_us / 1000.0, 3))}
            {grouped.then(|| format!(", in {} groups", int(page.group_count)))}
            {format!("; showing {}–{} of {}.", int(if shown == 0 { 0 } else { from as u64 + 1 }), int((from + shown) as u64), int(of))}
        </p>
        <div class="table-scroll">{body}</div>
        <div class="pager">
            <button id="explore-prev" class="secondary" disabled=!has_prev on:click=move |_| go(from.saturating_sub(limit))>"← Previous"</button>
            <button id="explore-next" class="secondary" disabled=!has_next on:click=move |_| go(from + limit)>"Next →"</button>
        </div>
    }
}

/// The exploration panel.
pub fn explore(state: AppState) -> impl IntoView {
    let query = state.select(|p| p.query.clone());
    let events = state.select(PageState::events_shown);
    let detached = state.select(PageState::detached);
    let request_error = state.select(|p| p.request_error.clone());
    let form = Form::new(&state.page.with_untracked(|p| p.query.clone()));
    // A header's click sorts the query: the form shows that order too (its Apply keeps it).
    Effect::new(move |_| {
        let q = query.get();
        form.sort.set(q.sort.as_str().to_string());
        form.descending.set(q.descending);
    });
    let table_format = RwSignal::new(ExportFormat::Parquet.as_str().to_string());
    let pick = move |signal: RwSignal<String>| {
        move |ev: leptos::ev::Event| {
            signal.set(event_target_value(&ev));
            apply(state, form);
        }
    };
    view! {
        <section class="panel" id="explore" node_ref=state.explore_panel>
            <div class="panel-head">
                <h2>"Explore events"</h2>
                <div class="actions">
                    <button id="export-csv" class="secondary" on:click=move |_| super::export_query(state)>"Export CSV"</button>
                    <select id="table-format" title="Format of the whole event table" prop:value=table_format on:change=move |ev| table_format.set(event_target_value(&ev))>
                        {ExportFormat::ALL.iter().map(|f| view! { <option value=f.as_str()>{format_label(*f)}</option> }).collect_view()}
                    </select>
                    <button id="download-table" class="secondary" title="Every event, every column (name, cat, ph, ts, dur, pid, tid, id, args_…), as pandas reads a trace"
                        on:click=move |_| super::export_table(state, ExportFormat::parse(&table_format.get_untracked()).unwrap_or(ExportFormat::Parquet))>"Download table"</button>
                </div>
            </div>
            <form id="explore-form" class="explore-controls" on:submit=move |ev| { ev.prevent_default(); apply(state, form); }>
                <label>"Kind "
                    <select id="explore-kind" prop:value=form.kind on:change=pick(form.kind)>
                        <option value="">"all"</option>
                        {EventKind::ALL.iter().map(|k| view! { <option value=k.as_str()>{k.as_str()}</option> }).collect_view()}
                    </select>
                </label>
                <label>"Name contains "
                    <input id="explore-name" type="search" placeholder="e.g. gemm, nccl, aten::" prop:value=form.name on:input=move |ev| form.name.set(event_target_value(&ev))/>
                </label>
                <label>"Min duration (µs) "
                    <input id="explore-min-dur" type="number" min="0" step="any" prop:value=form.min_dur on:input=move |ev| form.min_dur.set(event_target_value(&ev))/>
                </label>
                <label>"Group by "
                    <select id="explore-group" prop:value=form.group on:change=pick(form.group)>
                        <option value="">"(no grouping)"</option>
                        {GroupBy::ALL.iter().map(|g| view! { <option value=g.as_str()>{g.as_str()}</option> }).collect_view()}
                    </select>
                </label>
                <label>"Sort by "
                    <select id="explore-sort" prop:value=form.sort on:change=pick(form.sort)>
                        {SortBy::ALL.iter().map(|s| view! { <option value=s.as_str()>{s.as_str()}</option> }).collect_view()}
                    </select>
                </label>
                <label class="check"><input id="explore-desc" type="checkbox" prop:checked=form.descending on:change=move |ev| { form.descending.set(event_target_checked(&ev)); apply(state, form); }/>" descending"</label>
                <button id="explore-apply" type="submit">"Apply"</button>
            </form>
            {move || {
                let q = query.get();
                let narrowed = !q.names.is_empty() || !q.ranks.is_empty() || q.stream.is_some();
                narrowed.then(|| {
                    let mut what = Vec::new();
                    if !q.names.is_empty() { what.push(format!("{} name(s) of a finding", q.names.len())); }
                    if !q.ranks.is_empty() { what.push(format!("ranks {:?}", q.ranks)); }
                    if let Some(s) = q.stream { what.push(format!("stream {s}")); }
                    view! {
                        <p class="notice" id="explore-narrowed">{format!("Only {}. ", what.join(", "))}
                            <button class="link" id="explore-clear" on:click=move |_| {
                                let mut q = state.page.with_untracked(|p| p.query.clone());
                                q.names.clear(); q.ranks.clear(); q.stream = None; q.offset = 0;
                                super::run_query(state, q);
                            }>"Show all"</button>
                        </p>
                    }
                })
            }}
            {move || match (events.get(), detached.get()) {
                (_, Some(why)) => view! {
                    <p class="notice" id="explore-status" data-state="unavailable">{needs_file_text(why)}</p>
                }.into_any(),
                (Events::Page(page), None) => results(state, page).into_any(),
                (Events::Waiting, None) => view! { <p class="muted" id="explore-status" data-state="loading">"Querying the events…"</p> }.into_any(),
                (Events::None, None) => view! {
                    <p class="muted" id="explore-status" data-state="error">{move || request_error.get().unwrap_or_default()}</p>
                }.into_any(),
            }}
        </section>
    }
}
