//! The TensorBoard-style views (overview, operators, kernels, memory, modules): a tab per view over
//! the worker's [`RankViews`], drawn from the typed model of `report::profile_views`.

use leptos::prelude::*;

use super::analyses::{context_attributes, PartView};
use super::AppState;
use crate::analysis::views::RankViews;
use crate::report::format;
use crate::report::page_state::{needs_file_text, PageState};
use crate::report::profile_views::{
    category_class, filtered_view, LineChart, StepBars, View, ViewId, ViewPart,
};

/// The panel: the view tabs, the operators' grouping, a name filter, then the view of the rank
/// picked.
#[component]
pub fn ViewsPanel(state: AppState) -> impl IntoView {
    let current = RwSignal::new(ViewId::Overview);
    let by_shape = RwSignal::new(false);
    let filter = RwSignal::new(String::new());
    let rank_index = state.select(|p| p.rank_index);
    let detached = state.select(PageState::detached);
    let request_error = state.select(|p| p.request_error.clone());
    Effect::new(move |_| {
        state.revision.track();
        super::apply(state, PageState::ask_views);
    });
    let rank_views = move || -> Option<RankViews> {
        state.revision.track();
        let index = rank_index.get();
        state.page.with_untracked(|p| {
            let views = p.shown()?.views.as_ref()?;
            views.get(index).or_else(|| views.first()).cloned()
        })
    };
    let body = move || match rank_views() {
        None => {
            let why = match (request_error.get(), detached.get()) {
                (Some(e), _) => e,
                (None, Some(d)) => needs_file_text(d).to_string(),
                (None, None) => "Computing the views in the worker…".to_string(),
            };
            view! { <p class="muted">{why}</p> }.into_any()
        }
        Some(v) => {
            let model = filtered_view(current.get(), &v, by_shape.get(), &filter.get());
            view! { <ViewBody model/> }.into_any()
        }
    };
    let tabs = ViewId::ALL
        .iter()
        .map(|&id| {
            let selected = move || current.get() == id;
            view! {
                <button role="tab" id=format!("view-{id}") class="tab" aria-selected=move || selected().to_string()
                    on:click=move |_| current.set(id)>{id.title()}</button>
            }
        })
        .collect_view();
    view! {
        <section id="views" class="panel" data-view=move || current.get().as_str()
            data-state=move || if rank_views().is_some() { "ready" } else { "loading" }>
            <div class="panel-head">
                <h2>"Operators, kernels, memory"</h2>
                <div role="tablist" class="tabs" aria-label="Views">{tabs}</div>
            </div>
            <div class="view-controls">
                <label>"Filter by name "
                    <input id="view-filter" type="search" prop:value=move || filter.get()
                        on:input=move |ev| filter.set(event_target_value(&ev))/>
                </label>
                <label class="check" hidden=move || current.get() != ViewId::Operators>
                    <input id="ops-by-shape" type="checkbox" prop:checked=move || by_shape.get()
                        on:change=move |ev| by_shape.set(event_target_checked(&ev))/>
                    " Group by input shapes"
                </label>
            </div>
            {body}
        </section>
    }
}

#[component]
fn ViewBody(model: View) -> impl IntoView {
    model
        .parts
        .into_iter()
        .map(|part| match part {
            ViewPart::Part(p) => view! { <PartView part=p/> }.into_any(),
            ViewPart::Steps(b) => view! { <StepBarsChart bars=b/> }.into_any(),
            ViewPart::Line(c) => view! { <MemoryChart chart=c/> }.into_any(),
        })
        .collect_view()
}

/// Horizontal stacked bars on one scale; each segment shows its exact value on hover.
#[component]
fn StepBarsChart(bars: StepBars) -> impl IntoView {
    let mut legend: Vec<_> = bars
        .bars
        .iter()
        .flat_map(|b| b.segments.iter().map(|s| s.category))
        .collect();
    legend.sort();
    legend.dedup();
    let rows = bars
        .bars
        .into_iter()
        .map(|bar| {
            let total_attrs = context_attributes(&bar.total);
            let segments = bar
                .segments
                .into_iter()
                .map(|s| {
                    let attrs = context_attributes(&s.figure);
                    let style = format!("left: {:.3}%; width: {:.3}%", s.start_pct, s.width_pct);
                    let title = format!("{}: {}", s.category, s.figure.shown());
                    view! {
                        <span class=format!("seg {}", category_class(s.category)) style=style title=title
                            data-metric=s.figure.metric data-value=s.figure.data_value() {..attrs}></span>
                    }
                })
                .collect_view();
            view! {
                <div class="bar-row">
                    <span class="bar-label">{bar.label}</span>
                    <span class="bar-track">{segments}</span>
                    <span class="num" data-metric=bar.total.metric data-value=bar.total.data_value() {..total_attrs}>
                        {bar.total.shown()}
                    </span>
                </div>
            }
        })
        .collect_view();
    let legend = legend
        .into_iter()
        .map(|c| view! { <span><i class=category_class(c)></i>{c.as_str().replace('_', " ")}</span> })
        .collect_view();
    view! {
        <div class="step-bars">{rows}</div>
        <div class="legend">{legend}</div>
    }
}

const CHART_W: f64 = 1000.0;
const CHART_H: f64 = 240.0;

/// Memory over time as lines in an SVG that scales with the panel, with the peak marked.
#[component]
fn MemoryChart(chart: LineChart) -> impl IntoView {
    let lines = chart
        .series
        .iter()
        .map(|s| {
            let points = s
                .points
                .iter()
                .map(|&p| {
                    let (x, y) = chart.place(p, CHART_W, CHART_H);
                    format!("{x:.1},{y:.1}")
                })
                .collect::<Vec<_>>()
                .join(" ");
            view! { <polyline class=format!("line {}", s.class) points=points><title>{s.label}</title></polyline> }
        })
        .collect_view();
    let peak = chart.peak.clone().map(|(p, f)| {
        let (x, y) = chart.place(p, CHART_W, CHART_H);
        let attrs = context_attributes(&f);
        let title = format!("peak {}", f.shown());
        view! {
            <circle class="peak" cx=format!("{x:.1}") cy=format!("{y:.1}") r="6"
                data-metric=f.metric data-value=f.data_value() {..attrs}><title>{title}</title></circle>
        }
    });
    let legend = chart
        .series
        .iter()
        .map(|s| view! { <span><i class=s.class></i>{s.label}</span> })
        .collect_view();
    let span_ms = (chart.x_range.1 - chart.x_range.0) / 1000.0;
    view! {
        <figure class="chart">
            <svg viewBox=format!("0 0 {CHART_W} {CHART_H}") preserveAspectRatio="none" role="img"
                aria-label=format!("{}: memory over time", chart.title)>
                {lines}{peak}
            </svg>
            <figcaption class="muted">
                {format!("0 to {} allocated; {} of trace time", format::bytes(chart.y_max as u64), format::millis(span_ms))}
            </figcaption>
            <div class="legend">{legend}</div>
        </figure>
    }
}
