//! The deeper analyses as Leptos components over the typed view model
//! ([`AnalysesModel`], built natively in `page::analyses_view`): one `<details>` per analysis,
//! every figure with `data-metric`, `data-value` and its context attributes.

use leptos::prelude::*;
use leptos::tachys::html::attribute::any_attribute::{AnyAttribute, IntoAnyAttribute};
use leptos::tachys::html::attribute::custom::custom_attribute;
use wasm_bindgen::JsCast;

use super::charts::{RankBarsView, RooflineView};
use super::{AppState, LocateEvents};
use crate::page::analyses_view::sort::SortBy;
use crate::page::analyses_view::{
    AnalysesModel, AnalysisId, BarPart, Block, Cell, Fact, Figure, Inline, Part, Table,
};
use crate::report::format;
use crate::table::query::EventQuery;

/// Every block, then the mode line. `open` holds the blocks the user opened: they stay open
/// when the blocks are built again (another rank picked, the other mode shown).
#[component]
pub fn AnalysesPanel(
    model: AnalysesModel,
    open: RwSignal<Vec<AnalysisId>>,
    state: AppState,
) -> impl IntoView {
    let mode_text = model.mode_text();
    let mode = model.mode.as_str();
    let notes: String = model.notes.iter().map(|n| format!(" {n}")).collect();
    let blocks = model
        .blocks
        .into_iter()
        .map(|block| view! { <AnalysisBlock block open state/> })
        .collect_view();
    view! {
        <div class="analyses">
            {blocks}
            <p class="muted analysis-mode" data-mode=mode>{format!("Mode: {mode_text}.{notes}")}</p>
        </div>
    }
}

/// One analysis: its title and gist, its parts when opened.
#[component]
fn AnalysisBlock(block: Block, open: RwSignal<Vec<AnalysisId>>, state: AppState) -> impl IntoView {
    let id = block.id;
    let is_open = open.with_untracked(|o| o.contains(&id));
    let on_toggle = move |ev: web_sys::Event| {
        let now_open = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|d| d.has_attribute("open"));
        open.update(|o| {
            o.retain(|k| *k != id);
            if now_open {
                o.push(id);
            }
        });
    };
    let gist =
        (!block.gist.is_empty()).then(|| view! { " " <span class="gist">{block.gist}</span> });
    let parts = block
        .parts
        .into_iter()
        .map(|part| view! { <PartView part state/> })
        .collect_view();
    view! {
        <details class="analysis" id=format!("analysis-{}", id.key()) data-analysis=id.key()
            open=is_open on:toggle=on_toggle>
            <summary>{id.title()}{gist}</summary>
            {parts}
        </details>
    }
}

#[component]
pub(crate) fn PartView(
    part: Part,
    /// For the links of a chart's points (none: no links).
    #[prop(optional)]
    state: Option<AppState>,
) -> impl IntoView {
    match part {
        Part::Roofline(chart) => view! { <RooflineView chart state/> }.into_any(),
        Part::RankBars(bars) => view! { <RankBarsView bars/> }.into_any(),
        Part::Intro(text) => view! { <p class="muted"><Inlines text/></p> }.into_any(),
        Part::RankLabel(rank) => view! {
            <p class="muted">{format!("Rank {rank} (pick another rank in the summary).")}</p>
        }
        .into_any(),
        Part::Heading(text) => view! { <h3>{text}</h3> }.into_any(),
        Part::Muted(text) => view! { <p class="muted">{text}</p> }.into_any(),
        Part::Note(text) => view! { <p class="muted note">{text}</p> }.into_any(),
        Part::Bar(parts) => view! { <StackedBar parts/> }.into_any(),
        Part::Facts(facts) => view! { <Facts facts/> }.into_any(),
        Part::Table(table) => view! { <FigureTable table/> }.into_any(),
        Part::Folded { summary, table } => view! {
            <details class="inner"><summary>{summary}</summary><FigureTable table/></details>
        }
        .into_any(),
        Part::Collective {
            kernel,
            stream,
            steps,
        } => {
            let on_stream = stream
                .map(|s| format!(" on stream {s}"))
                .unwrap_or_default();
            let steps: Vec<String> = steps.iter().map(i64::to_string).collect();
            view! {
                <p>"Collective: "<code>{kernel}</code>{on_stream}{format!("; steps {}.", steps.join(", "))}</p>
            }
            .into_any()
        }
    }
}

#[component]
fn Inlines(text: Vec<Inline>) -> impl IntoView {
    text.into_iter()
        .map(|piece| match piece {
            Inline::Text(t) => t.into_any(),
            Inline::Bold(t) => view! { <b>{t}</b> }.into_any(),
            Inline::Code(t) => view! { <code>{t}</code> }.into_any(),
        })
        .collect_view()
}

/// A bar split into shares of a whole, with its legend.
#[component]
fn StackedBar(parts: Vec<BarPart>) -> impl IntoView {
    let segments = parts
        .iter()
        .filter(|p| p.pct > 0.0)
        .map(|p| {
            let style = format!("width: {:.2}%", p.pct.clamp(0.0, 100.0));
            let title = format!("{}: {}", p.label, format::pct(p.pct));
            view! { <span class=p.class style=style title=title></span> }
        })
        .collect_view();
    let legend = parts
        .iter()
        .map(|p| {
            let text = format!("{} {}", p.label, format::pct(p.pct));
            view! { <span><i class=p.class></i>{text}</span> }
        })
        .collect_view();
    view! {
        <div class="stack">{segments}</div>
        <div class="legend">{legend}</div>
    }
}

/// The `data-*` attributes of a figure's context.
pub(crate) fn context_attributes(figure: &Figure) -> Vec<AnyAttribute> {
    figure
        .context
        .iter()
        .map(|(k, v)| custom_attribute(format!("data-{k}"), v.clone()).into_any_attr())
        .collect()
}

#[component]
fn Facts(facts: Vec<Fact>) -> impl IntoView {
    let items = facts
        .into_iter()
        .map(|f| {
            let attrs = context_attributes(&f.figure);
            view! {
                <div>
                    <dt>{f.label}</dt>
                    <dd data-metric=f.figure.metric data-value=f.figure.data_value() {..attrs}>{f.figure.shown()}</dd>
                </div>
            }
        })
        .collect_view();
    view! { <dl class="facts">{items}</dl> }
}

/// A table of text and figure columns, with "N of M rows shown" when it was cut. A click on a
/// header sorts by that column (again: the other way); the order is `analyses_view::sort`'s.
#[component]
fn FigureTable(table: Table) -> impl IntoView {
    let cut = table.cut_note();
    let sort = RwSignal::new(None::<SortBy>);
    let head = table
        .headers()
        .into_iter()
        .enumerate()
        .map(|(i, h)| {
            let numeric = table.is_numeric_column(i);
            let aria = move || SortBy::aria_of(sort.get(), i);
            let on_click = move |_| sort.update(|s| *s = Some(SortBy::after_click(*s, i, numeric)));
            view! {
                <th class:num=numeric aria-sort=aria data-col=i.to_string()>
                    <button type="button" class="sort" on:click=on_click>
                        {h}<span class="sort-mark" aria-hidden="true">{move || match aria() {
                            "ascending" => "▲",
                            "descending" => "▼",
                            _ => "",
                        }}</span>
                    </button>
                </th>
            }
        })
        .collect_view();
    let locate = table
        .locate
        .zip(use_context::<LocateEvents>())
        .map(|(by, LocateEvents(on_locate))| (by, on_locate));
    let rows = move || {
        table
            .sorted_rows(sort.get())
            .into_iter()
            .map(|row| {
                let cells = row
                    .into_iter()
                    .enumerate()
                    .map(|(i, cell)| match (locate, &cell) {
                        (Some((by, on_locate)), Cell::Name(_, name))
                            if by.column == i && !name.is_empty() =>
                        {
                            let query = by.query(name);
                            view! { <LocatedName name=name.clone() query on_locate/> }.into_any()
                        }
                        _ => view! { <CellView cell/> }.into_any(),
                    })
                    .collect_view();
                view! { <tr>{cells}</tr> }
            })
            .collect_view()
    };
    view! {
        <div class="table-wrap"><table class="figures sortable"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>
        {cut.map(|text| view! { <p class="muted">{text}</p> })}
    }
}

/// A name cell whose events can be shown: the name (full on hover) and a "Show on timeline" button
/// that opens the longest of them.
#[component]
fn LocatedName(name: String, query: EventQuery, on_locate: Callback<EventQuery>) -> impl IntoView {
    let title = name.clone();
    view! {
        <td class="name located" title=title>
            <button type="button" class="link locate" title="Show on timeline (the longest of these events)"
                aria-label="Show on timeline" data-locate=name.clone()
                on:click=move |_| on_locate.run(query.clone())><LocateIcon/></button>
            <span class="name-text">{name}</span>
        </td>
    }
}

/// The "Show on timeline" mark: a crosshair drawn in SVG (no font needs to hold a glyph for it).
#[component]
pub(crate) fn LocateIcon() -> impl IntoView {
    view! {
        <svg class="locate-icon" viewBox="0 0 16 16" width="14" height="14" aria-hidden="true">
            <circle cx="8" cy="8" r="5" fill="none" stroke="currentColor" stroke-width="1.6"></circle>
            <path d="M8 0v5M8 11v5M0 8h5M11 8h5" stroke="currentColor" stroke-width="1.6"></path>
        </svg>
    }
}

#[component]
fn CellView(cell: Cell) -> impl IntoView {
    match cell {
        Cell::Text(t) => view! { <td>{t}</td> }.into_any(),
        Cell::Name(_, name) => {
            let shown = if name.is_empty() {
                "(unnamed)".to_string()
            } else {
                name
            };
            let title = shown.clone();
            view! { <td class="name" title=title><span class="name-text">{shown}</span></td> }.into_any()
        }
        Cell::Number(t) => view! { <td class="num">{t}</td> }.into_any(),
        Cell::Figure(f) => {
            let attrs = context_attributes(&f);
            view! {
                <td class="num" data-metric=f.metric data-value=f.data_value() {..attrs}>{f.shown()}</td>
            }
            .into_any()
        }
        Cell::Missing => view! {
            <td class="num muted unknown" title="The trace does not record this value">"unknown"</td>
        }
        .into_any(),
        Cell::Blank => view! { <td></td> }.into_any(),
        Cell::Steps { shown, more } => {
            let items = shown
                .into_iter()
                .map(|s| {
                    let title = s.clone();
                    view! { <li title=title>{s}</li> }
                })
                .collect_view();
            let more = (more > 0)
                .then(|| view! { <li class="more">{format!("… {more} more kernels")}</li> });
            view! { <td class="pattern"><ol>{items}{more}</ol></td> }.into_any()
        }
    }
}
