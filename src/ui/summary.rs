//! The summary of the rank picked (figure cards, top kernels, events by category, the load's
//! bookkeeping folded into a details line), the rank picker (drawn in the page's header), and the
//! table of all ranks.

use leptos::prelude::*;

use super::AppState;
use crate::analysis::summary::{CategoryCount, KernelRow};
use crate::page::page_state::{Page, PageState};
use crate::protocol::{LoadedSet, RankSummary};
use crate::report::format;

/// One entry of the rank picker.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct RankChoice {
    rank: i64,
    file: String,
}

/// What the summary shows about the loaded set as a whole (beside the rank picked).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct SetFacts {
    /// Every rank, in the order of the set (the picker's entries).
    pub(super) choices: Vec<RankChoice>,
    read_mode: String,
    worker_memory_bytes: u64,
}

impl SetFacts {
    pub(super) fn of(set: &LoadedSet) -> Self {
        SetFacts {
            choices: set
                .ranks
                .iter()
                .map(|r| RankChoice {
                    rank: r.rank,
                    file: r.file.clone(),
                })
                .collect(),
            read_mode: set.read_mode.clone(),
            worker_memory_bytes: set.worker_memory_bytes,
        }
    }
}

/// What the summary says while no rank is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Waiting {
    Reading,
    Cancelled,
    NothingLoaded,
}

impl Waiting {
    fn of(p: &PageState) -> Self {
        if p.is_loading() {
            Waiting::Reading
        } else if matches!(p.page, Page::Cancelled) {
            Waiting::Cancelled
        } else {
            Waiting::NothingLoaded
        }
    }

    fn text(self) -> &'static str {
        match self {
            Waiting::Reading => "Reading the trace…",
            Waiting::Cancelled => "Cancelled.",
            Waiting::NothingLoaded => "No trace loaded.",
        }
    }
}

/// The summary panel: the rank picked, or what the page is doing while there is none.
#[component]
pub fn SummaryPanel(state: AppState) -> impl IntoView {
    let waiting = state.select(Waiting::of);
    let rank_index = state.select(|p| p.rank_index);
    let rank = Memo::new(move |_| {
        rank_index.track();
        super::view::selected(state)
    });
    let facts = Memo::new(move |_| {
        state
            .loaded
            .with(|l| l.as_ref().map(SetFacts::of).unwrap_or_default())
    });
    move || match rank.get() {
        None => view! { <SummaryWaiting waiting/> }.into_any(),
        Some(rank) => view! {
            <RankSummaryView rank facts=facts.get()/>
        }
        .into_any(),
    }
}

#[component]
fn SummaryWaiting(#[prop(into)] waiting: Signal<Waiting>) -> impl IntoView {
    view! {
        <section id="summary" class="panel" data-state="loading">
            <h2>"Summary"</h2>
            <p class="muted">{move || waiting.get().text()}</p>
        </section>
    }
}

/// The summary of one rank.
#[component]
fn RankSummaryView(rank: RankSummary, facts: SetFacts) -> impl IntoView {
    let RankSummary {
        rank,
        rank_source,
        file,
        device,
        file_bytes,
        text_bytes,
        load_ms,
        summary: s,
        diagnostics: _,
    } = rank;
    let SetFacts {
        choices,
        read_mode,
        worker_memory_bytes: worker_memory,
    } = facts;
    let several = choices.len() > 1;
    let rank_known = several || rank_source != "load order";
    let device = device.or(s.device);
    view! {
        <section id="summary" class="panel" data-state="ready" data-rank=rank.to_string() data-read-mode=read_mode>
            <div class="panel-head">
                <h2>"Summary"</h2>
                <span class="muted">{format!("{} · {}", file, format::bytes(file_bytes))}</span>
            </div>
            <div class="cards">
                {rank_known.then(|| view! { <RankCard rank source=rank_source/> })}
                {device.map(|d| view! { <MetricCard metric="device" value=d.clone() label="Device" shown=d/> })}
                <MetricCard metric="events" value=s.events.to_string() label="Events" shown=format::int(s.events)/>
                <MetricCard metric="kernels" value=s.kernels.to_string() label="GPU kernels" shown=format::int(s.kernels)/>
                <MetricCard metric="kernel-time-us" value=s.kernel_time_us.to_string() label="GPU kernel time" shown=format::micros(s.kernel_time_us)/>
                <MetricCard metric="distinct-kernels" value=s.distinct_kernels.to_string() label="Distinct kernels" shown=format::int(s.distinct_kernels)/>
                <MetricCard metric="span-us" value=s.span_us.to_string() label="Trace span" shown=format::micros(s.span_us)/>
            </div>
            <details class="bookkeeping" id="bookkeeping">
                <summary>"Load details"</summary>
                <div class="cards">
                    <MetricCard metric="text-bytes" value=text_bytes.to_string() label="JSON text" shown=format::bytes(text_bytes)/>
                    <MetricCard metric="load-ms" value=load_ms.to_string() label="Load time" shown=format::millis(load_ms)/>
                    {(worker_memory > 0).then(|| view! {
                        <MetricCard metric="worker-memory-bytes" value=worker_memory.to_string() label="Worker memory" shown=format::bytes(worker_memory)/>
                    })}
                </div>
            </details>
            <div class="columns">
                <div class="col-wide">
                    <h3>"Top kernels by GPU time"</h3>
                    <TopKernels kernels=s.top_kernels/>
                </div>
                <div class="col-narrow">
                    <h3>"Events by category"</h3>
                    <Categories categories=s.categories/>
                </div>
            </div>
        </section>
    }
}

/// One figure: `data-metric` names it, `data-value` holds it unformatted, `shown` is what is read.
#[component]
fn MetricCard(
    metric: &'static str,
    value: String,
    label: &'static str,
    shown: String,
) -> impl IntoView {
    view! {
        <div class="card" data-metric=metric data-value=value>
            <div class="card-label">{label}</div>
            <div class="card-figure">{shown}</div>
        </div>
    }
}

/// The rank, and where it was found (`distributedInfo`, the file name or the load order).
#[component]
fn RankCard(rank: i64, source: String) -> impl IntoView {
    view! {
        <div class="card" data-metric="rank" data-value=rank.to_string() data-rank-source=source.clone()>
            <div class="card-label">"Rank"</div>
            <div class="card-figure">{rank.to_string()}</div>
            <div class="card-note">{format!("from {source}")}</div>
        </div>
    }
}

#[component]
fn TopKernels(kernels: Vec<KernelRow>) -> impl IntoView {
    if kernels.is_empty() {
        return view! { <p class="muted">"This trace has no GPU kernels."</p> }.into_any();
    }
    view! {
        <div class="table-wrap">
            <table class="kernels">
                <thead><tr>
                    <th>"Kernel"</th><th class="num">"Calls"</th><th class="num">"Total"</th>
                    <th class="num">"Average"</th><th class="num">"% of kernel time"</th>
                </tr></thead>
                <tbody>
                    <For each=move || kernels.clone() key=|k| k.name.clone() children=|k| view! { <KernelRowView kernel=k/> }/>
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

#[component]
fn KernelRowView(kernel: KernelRow) -> impl IntoView {
    let k = kernel;
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
}

#[component]
fn Categories(categories: Vec<CategoryCount>) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table class="categories">
                <thead><tr><th>"Category"</th><th class="num">"Events"</th></tr></thead>
                <tbody>
                    <For each=move || categories.clone() key=|c| c.category.clone() children=|c| view! {
                        <tr data-category=c.category.clone() data-metric="category-events" data-value=c.events.to_string()>
                            <td class="name">{c.category.clone()}</td>
                            <td class="num">{format::int(c.events)}</td>
                        </tr>
                    }/>
                </tbody>
            </table>
        </div>
    }
}

/// Picks the rank the summary (and the per-rank analyses) show.
#[component]
pub(super) fn RankPicker(
    choices: Vec<RankChoice>,
    #[prop(into)] picked: Signal<usize>,
    on_pick: Callback<usize>,
) -> impl IntoView {
    view! {
        <label class="rank-picker">
            "Rank "
            <select
                id="rank-picker"
                on:change=move |ev| {
                    if let Ok(i) = event_target_value(&ev).parse::<usize>() {
                        on_pick.run(i);
                    }
                }
            >
                <For
                    each=move || choices.clone().into_iter().enumerate()
                    key=|(i, c)| (*i, c.rank)
                    children=move |(i, c)| view! {
                        <option value=i.to_string() data-rank=c.rank.to_string() selected=move || picked.get() == i>
                            {format!("{} — {}", c.rank, c.file)}
                        </option>
                    }
                />
            </select>
        </label>
    }
}

/// The table of ranks (when several are loaded); a click on a row picks its rank.
#[component]
pub fn RanksPanel(state: AppState) -> impl IntoView {
    let picked = state.select(|p| p.rank_index);
    let on_pick = Callback::new(move |i: usize| state.page.update(|p| p.pick_rank(i)));
    move || {
        let loaded = state.loaded.get()?;
        (loaded.ranks.len() >= 2).then(|| {
            view! { <RanksTable ranks=loaded.ranks notes=loaded.notes picked on_pick/> }
        })
    }
}

#[component]
fn RanksTable(
    ranks: Vec<RankSummary>,
    notes: Vec<String>,
    #[prop(into)] picked: Signal<usize>,
    on_pick: Callback<usize>,
) -> impl IntoView {
    view! {
        <section class="panel">
            <h2>"Ranks"</h2>
            <div class="table-wrap">
                <table id="ranks">
                    <thead><tr>
                        <th class="num">"Rank"</th><th>"File"</th><th class="num">"Events"</th>
                        <th class="num">"GPU kernels"</th><th class="num">"Kernel time"</th><th class="num">"Span"</th>
                    </tr></thead>
                    <tbody>
                        <For
                            each=move || ranks.clone().into_iter().enumerate()
                            key=|(i, r)| (*i, r.rank)
                            children=move |(i, r)| view! {
                                <RankRow rank=r selected=Signal::derive(move || picked.get() == i) on_click=Callback::new(move |()| on_pick.run(i))/>
                            }
                        />
                    </tbody>
                </table>
            </div>
            <Notes notes/>
        </section>
    }
}

#[component]
fn RankRow(rank: RankSummary, selected: Signal<bool>, on_click: Callback<()>) -> impl IntoView {
    let s = &rank.summary;
    view! {
        <tr data-rank=rank.rank.to_string() class:selected=move || selected.get()
            on:click=move |_| on_click.run(())>
            <td class="num">{rank.rank}</td>
            <td class="name">{rank.file.clone()}</td>
            <td class="num" data-metric="rank-events" data-value=s.events.to_string()>{format::int(s.events)}</td>
            <td class="num" data-metric="rank-kernels" data-value=s.kernels.to_string()>{format::int(s.kernels)}</td>
            <td class="num" data-metric="rank-kernel-time-us" data-value=s.kernel_time_us.to_string()>{format::micros(s.kernel_time_us)}</td>
            <td class="num">{format::micros(s.span_us)}</td>
        </tr>
    }
}

/// Problems across the loaded files, in plain words.
#[component]
pub(super) fn Notes(notes: Vec<String>) -> impl IntoView {
    view! {
        <ul class="notes">
            <For
                each=move || notes.clone().into_iter().enumerate()
                key=|(i, n)| (*i, n.clone())
                children=|(_, n)| view! { <li>{n}</li> }
            />
        </ul>
    }
}
