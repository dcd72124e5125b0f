//! The TensorBoard-style views (overview, operators, kernels, memory, modules): one panel that shows
//! the view whose tab is picked (`page::tabs`), over the worker's [`RankViews`], drawn from the
//! typed model of `page::profile_views`.

use leptos::prelude::*;

use super::analyses::{context_attributes, PartView};
use super::AppState;
use crate::analysis::views::RankViews;
use crate::page::overview_verdict::{OverviewVerdict, WindowSegment};
use crate::page::page_state::{needs_file_text, PageState};
use crate::page::profile_views::{
    category_class, filtered_view, LineChart, OpDetail, StepBars, View, ViewId, ViewPart,
};
use crate::report::format;
use crate::report::timeline_view::idle_colour;

/// The panel: the operators' grouping, a name filter, then the view (of the picked tab) of the
/// rank picked.
#[component]
pub fn ViewsPanel(state: AppState) -> impl IntoView {
    let tab = state.select(|p| p.tab);
    let last = RwSignal::new(ViewId::Overview);
    Effect::new(move |_| {
        if let Some(v) = tab.get().view() {
            last.set(v);
        }
    });
    let current = Signal::derive(move || tab.get().view().unwrap_or_else(|| last.get()));
    let redact = state.select(|p| p.redact);
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
        redact.track();
        let index = rank_index.get();
        state.page.with_untracked(|p| p.views_shown(index))
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
            let id = current.get();
            let model = filtered_view(id, &v, by_shape.get(), &filter.get());
            let verdict = (id == ViewId::Overview)
                .then(|| state.page.with_untracked(|p| p.report_shown()))
                .flatten()
                .map(|r| OverviewVerdict::of(&r));
            view! {
                {verdict.map(|verdict| view! { <VerdictLine verdict/> })}
                <ViewBody model/>
            }
            .into_any()
        }
    };
    view! {
        <section id="views" class="panel" data-view=move || current.get().as_str()
            data-state=move || if rank_views().is_some() { "ready" } else { "loading" }>
            <div class="panel-head">
                <h2>{move || current.get().title()}</h2>
            </div>
            <super::step_picker::StepPicker state place="views"/>
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

/// The diagnosis in the overview: its main finding, the bottleneck, and the analysed window as one
/// bar (GPU busy, then each idle cause), exact values on hover.
#[component]
fn VerdictLine(verdict: OverviewVerdict) -> impl IntoView {
    let legend = verdict
        .segments
        .iter()
        .map(|s| view! { <span><i style=segment_colour(s)></i>{s.label.clone()}</span> })
        .collect_view();
    let segments = verdict
        .segments
        .iter()
        .map(|s| {
            let style = format!(
                "left: {:.3}%; width: {:.3}%; {}",
                s.start_pct,
                s.pct.value.max(0.0),
                segment_colour(s)
            );
            let attrs = context_attributes(&s.pct);
            let time = s.time.clone().map(|t| {
                let attrs = context_attributes(&t);
                view! { <span hidden data-metric=t.metric data-value=t.data_value() {..attrs}></span> }
            });
            view! {
                <span class="seg" style=style title=OverviewVerdict::hover_text(s)
                    data-metric=s.pct.metric data-value=s.pct.data_value() {..attrs}>{time}</span>
            }
        })
        .collect_view();
    let has_bar = !verdict.segments.is_empty();
    view! {
        <div class="overview-verdict" data-section="overview-verdict">
            <p><strong>{verdict.main_finding}</strong>" "
                <span class="badge" data-metric="overview-bottleneck" data-value=verdict.bottleneck.clone()>{verdict.bottleneck.clone()}</span>
            </p>
            {has_bar.then(|| view! {
                <div class="bar-row window-bar">
                    <span class="bar-label">"GPU window"</span>
                    <span class="bar-track">{segments}</span>
                    <span></span>
                </div>
                <div class="legend">{legend}</div>
            })}
        </div>
    }
}

/// The colour of a window segment: busy, or its idle cause (the timeline's hues).
fn segment_colour(s: &WindowSegment) -> String {
    let colour = s.cause.map_or("#4e79a7", idle_colour);
    format!("background: {colour}")
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
            ViewPart::Ops(ops) => view! { <OperatorDetails ops/> }.into_any(),
        })
        .collect_view()
}

/// The first operators, each opening to the call stack of its longest call and its kernels.
#[component]
fn OperatorDetails(ops: Vec<OpDetail>) -> impl IntoView {
    let items = ops
        .into_iter()
        .map(|op| {
            let title = match &op.shapes {
                Some(s) if !s.is_empty() => format!("{} {s}", op.name),
                _ => op.name.clone(),
            };
            let stack = if op.call_stack.is_empty() {
                view! { <p class="muted">"Called at the top of its thread (no frame above it)."</p> }.into_any()
            } else {
                let frames = op
                    .call_stack
                    .iter()
                    .map(|f| view! { <li><code>{f.clone()}</code></li> })
                    .collect_view();
                view! { <ol class="call-stack">{frames}<li><strong><code>{op.name.clone()}</code></strong></li></ol> }.into_any()
            };
            let kernels = if op.kernels.is_empty() {
                view! { <p class="muted">"It launched no kernel, copy or set itself."</p> }.into_any()
            } else {
                let rows = op
                    .kernels
                    .into_iter()
                    .map(|(name, f)| {
                        let attrs = context_attributes(&f);
                        view! {
                            <tr><td class="name" title=name.clone()>{name.clone()}</td>
                                <td class="num" data-metric=f.metric data-value=f.data_value() {..attrs}>{f.shown()}</td></tr>
                        }
                    })
                    .collect_view();
                view! { <table><thead><tr><th>"Launched"</th><th class="num">"Time"</th></tr></thead><tbody>{rows}</tbody></table> }.into_any()
            };
            view! {
                <details class="op-detail" data-name=op.name.clone()>
                    <summary><code>{title}</code>" · device "{format::micros(op.device_total_us)}</summary>
                    <div class="op-detail-body">
                        <div><h4>"Call stack (its longest call)"</h4>{stack}</div>
                        <div><h4>"Kernels it launched"</h4>{kernels}</div>
                    </div>
                </details>
            }
        })
        .collect_view();
    view! {
        <div class="op-details" data-section="op-details">
            <h3>"Open an operator"</h3>
            {items}
        </div>
    }
}

/// Horizontal stacked bars on one scale; each segment shows its exact value on hover.
#[component]
fn StepBarsChart(bars: StepBars) -> impl IntoView {
    let mut legend: Vec<_> = bars
        .bars
        .iter()
        .flat_map(|b| b.segments.iter().map(|s| s.category))
        .collect();
    crate::sort::sort(&mut legend);
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

/// Memory over time as lines in an SVG that scales with the panel, with the peak marked; the
/// pointer reads the values under it (a rule and a line of text below the chart).
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
    let caption = format!(
        "0 to {} allocated; {} of trace time",
        format::bytes(chart.y_max as u64),
        format::millis(span_ms)
    );
    let label = format!("{}: memory over time", chart.title);
    let viewbox = format!("0 0 {CHART_W} {CHART_H}");
    let hover = RwSignal::new(None::<f64>);
    let on_move = move |ev: leptos::ev::MouseEvent| {
        use wasm_bindgen::JsCast;
        let width = ev
            .current_target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .map_or(0, |e| e.client_width());
        if width > 0 {
            hover.set(Some(ev.offset_x() as f64 / width as f64));
        }
    };
    let chart = StoredValue::new(chart);
    let rule = move || {
        hover.get().map(|f| {
            let x = format!("{:.1}", f.clamp(0.0, 1.0) * CHART_W);
            view! { <line class="rule" x1=x.clone() x2=x y1="0" y2=CHART_H.to_string()></line> }
        })
    };
    let readout = move || {
        let (x_us, values) = chart.with_value(|c| c.readout_at(hover.get()?))?;
        let x0 = chart.with_value(|c| c.x_range.0);
        let text = values
            .iter()
            .map(|(label, y)| format!("{label} {}", format::bytes(*y as u64)))
            .collect::<Vec<_>>()
            .join(", ");
        let allocated = values.first().map_or(0.0, |v| v.1);
        Some(view! {
            <p class="chart-readout" data-metric="memory-hover-bytes" data-value=allocated.to_string()
                data-ts-us=x_us.to_string()>
                {format!("At {}: {text}", format::millis((x_us - x0) / 1000.0))}
            </p>
        })
    };
    view! {
        <figure class="chart">
            <svg viewBox=viewbox preserveAspectRatio="none" role="img" aria-label=label
                on:mousemove=on_move on:mouseleave=move |_| hover.set(None)>
                {lines}{peak}{rule}
            </svg>
            <figcaption class="muted">{caption}</figcaption>
            {readout}
            <div class="legend">{legend}</div>
        </figure>
    }
}
