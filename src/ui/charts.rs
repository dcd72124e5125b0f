//! The deeper analyses' two charts, drawn from their native geometry: the roofline
//! (`page::roofline_chart`, SVG on log-log axes, a picked point's events one click away) and the
//! collectives' per-rank wait and transfer bars (`page::collectives_chart`, the page's palette).

use leptos::prelude::*;

use super::AppState;
use crate::page::collectives_chart::RankBars;
use crate::page::palette::Hue;
use crate::page::roofline_chart::{
    ChartPoint, RooflineChart, BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH,
};
use crate::protocol::FindingLink;
use crate::report::format;

fn px(v: f64) -> String {
    format!("{v:.1}")
}

/// The kernels under the roof. A click on a point shows its figures with links to its events and
/// to the timeline (when the page holds the trace).
#[component]
pub fn RooflineView(chart: Box<RooflineChart>, state: Option<AppState>) -> impl IntoView {
    let (x0, x1, y0, y1) = (LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM);
    let x_ticks = chart
        .x_ticks
        .iter()
        .map(|t| {
            view! {
                <line class="grid" x1=px(t.at) x2=px(t.at) y1=px(y0) y2=px(y1)></line>
                <text x=px(t.at) y=px(y1 + 14.0) text-anchor="middle">{t.label.clone()}</text>
            }
        })
        .collect_view();
    let y_ticks = chart
        .y_ticks
        .iter()
        .map(|t| {
            view! {
                <line class="grid" x1=px(x0) x2=px(x1) y1=px(t.at) y2=px(t.at)></line>
                <text x=px(x0 - 4.0) y=px(t.at + 4.0) text-anchor="end">{t.label.clone()}</text>
            }
        })
        .collect_view();
    let roofs = chart
        .roofs
        .iter()
        .map(|r| {
            let points = r
                .points
                .iter()
                .map(|(x, y)| format!("{x:.1},{y:.1}"))
                .collect::<Vec<_>>()
                .join(" ");
            let label = format!("{} {} TFLOP/s", r.dtype.as_str(), format::number(r.peak_tflops));
            let (lx, ly) = r.label_at;
            view! {
                <polyline class="roof" points=points data-metric="roofline-roof-peak-tflops"
                    data-value=r.peak_tflops.to_string() data-dtype=r.dtype.as_str()
                    data-ridge=r.ridge.to_string()><title>{label.clone()}</title></polyline>
                <text class="roof-label" x=px(lx - 2.0) y=px(ly - 4.0) text-anchor="end">{label}</text>
            }
        })
        .collect_view();
    let picked = RwSignal::new(None::<usize>);
    let points = StoredValue::new(chart.points.clone());
    let dots = chart
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            view! {
                <circle class="point" cx=px(p.x) cy=px(p.y) r=px(p.r)
                    data-metric="roofline-point-tflops" data-value=p.tflops.to_string()
                    data-intensity=p.intensity.to_string() data-time-us=p.time_us.to_string()
                    data-rank=p.rank.to_string() data-kernel=p.kernel.clone()
                    on:click=move |_| picked.set(Some(i))>
                    <title>{p.title()}</title>
                </circle>
            }
        })
        .collect_view();
    let left_out = (chart.left_out > 0).then(|| {
        format!(
            " {} kernels with figures not drawn (zero FLOPs or bytes, or past the {} longest).",
            format::int(chart.left_out as u64),
            crate::page::roofline_chart::MAX_POINTS
        )
    });
    let readout = move || {
        let p = points.with_value(|ps| picked.get().and_then(|i| ps.get(i).cloned()))?;
        Some(view! { <PointReadout point=p state/> })
    };
    let label = format!("Roofline of rank {}", chart.rank);
    view! {
        <figure class="chart roofline" data-rank=chart.rank.to_string()>
            <svg viewBox=format!("0 0 {WIDTH} {HEIGHT}") role="img" aria-label=label>
                {x_ticks}{y_ticks}
                <rect class="frame" x=px(x0) y=px(y0) width=px(x1 - x0) height=px(y1 - y0)></rect>
                {roofs}{dots}
                <text x=px((x0 + x1) / 2.0) y=px(HEIGHT - 6.0) text-anchor="middle">"Arithmetic intensity (FLOP/byte)"</text>
                <text transform=format!("translate(12 {}) rotate(-90)", px((y0 + y1) / 2.0)) text-anchor="middle">"Achieved TFLOP/s"</text>
            </svg>
            <figcaption class="muted">
                "Each kernel at its arithmetic intensity and achieved TFLOP/s, its area by time; the roof of each type the kernels use. Click a point for its events."
                {left_out}
            </figcaption>
            {readout}
        </figure>
    }
}

/// The picked point: its figures, its events and where it is on the timeline.
#[component]
fn PointReadout(point: ChartPoint, state: Option<AppState>) -> impl IntoView {
    let link = FindingLink {
        id: "roofline".into(),
        title: point.kernel.clone(),
        query: point.query.clone(),
    };
    let links = state.map(|state| {
        let here = link.clone();
        view! {
            " "
            <button type="button" class="link" data-roofline-events="" on:click=move |_| super::open_finding(state, &link)>"Events"</button>
            " · "
            <button type="button" class="link" data-roofline-timeline=""
                on:click=move |_| super::apply(state, |p| p.locate(&here))>"On the timeline"</button>
        }
    });
    view! {
        <p class="chart-readout" data-kernel=point.kernel.clone()>
            <code>{point.kernel.clone()}</code>": "
            <span data-metric="roofline-picked-tflops" data-value=point.tflops.to_string()>
                {format!("{} TFLOP/s", format::number(point.tflops))}
            </span>
            {format!(" at {} FLOP/byte", format::number(point.intensity))}
            {point.pct_of_roof.map(|p| format!(", {} of roof", format::pct(p)))}
            {links}
        </p>
    }
}

/// Each rank's wait and transfer on one scale, the ranks the others wait for marked.
#[component]
pub fn RankBarsView(bars: RankBars) -> impl IntoView {
    let rows = bars
        .bars
        .into_iter()
        .map(|b| {
            let rank = b.rank.to_string();
            let (rank_wait, rank_transfer) = (rank.clone(), rank.clone());
            let label = if b.late {
                format!("rank {} ◀ late", b.rank)
            } else {
                format!("rank {}", b.rank)
            };
            let title = format!(
                "rank {}: wait {}, transfer {}, last at {} instances",
                b.rank,
                format::micros(b.wait_us),
                format::micros(b.transfer_us),
                format::int(b.times_last)
            );
            view! {
                <div class="bar-row" class:late=b.late data-rank=rank data-late=b.late.to_string() title=title>
                    <span class="bar-label">{label}</span>
                    <span class="bar-track">
                        <span class=format!("seg {}", Hue::CommunicationWait.class()) style=format!("left:0;width:{:.2}%", b.wait_pct)></span>
                        <span class=format!("seg {}", Hue::Communication.class()) style=format!("left:{:.2}%;width:{:.2}%", b.wait_pct, b.transfer_pct)></span>
                    </span>
                    <span class="num">
                        <span data-metric="collective-bar-wait-us" data-value=b.wait_us.to_string() data-rank=rank_wait>{format::micros(b.wait_us)}</span>
                        " / "
                        <span data-metric="collective-bar-transfer-us" data-value=b.transfer_us.to_string() data-rank=rank_transfer>{format::micros(b.transfer_us)}</span>
                    </span>
                </div>
            }
        })
        .collect_view();
    view! {
        <div class="step-bars rank-bars">{rows}</div>
        <div class="legend">
            <span><i class=Hue::CommunicationWait.class()></i>"wait (for the last rank)"</span>
            <span><i class=Hue::Communication.class()></i>"transfer"</span>
            <span>"◀ late: the others wait for it"</span>
        </div>
    }
}
