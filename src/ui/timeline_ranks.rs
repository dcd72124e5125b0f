//! The timeline's rank lanes (one row per rank, its GPU busy share per pixel drawn as intensity,
//! the collectives' last arrivals marked) and the selected range (shaded, its duration shown). The logic is `page::timeline_select`.

use leptos::prelude::*;
use web_sys::CanvasRenderingContext2d;

use crate::analysis::rank_lanes::RankLanesView;
use crate::page::arrival_marks::ArrivalMark;
use crate::page::timeline_select::{busy_alpha, busy_pct, rank_label, Selection, RANK_ROW_PX};
use crate::report::timeline_view::{duration_label, Viewport, AXIS_PX, GUTTER_PX};

/// Height of the canvas showing `ranks` rank rows, CSS px.
pub fn ranks_height(ranks: usize) -> f64 {
    AXIS_PX + ranks.max(1) as f64 * RANK_ROW_PX
}

/// Draws every rank's row at the current range (an answer for another range is stretched until
/// the worker's next one comes).
pub fn draw_ranks(
    canvas: &web_sys::HtmlCanvasElement,
    v: &RankLanesView,
    vp: &Viewport,
    selection: Option<Selection>,
    arrivals: &[ArrivalMark],
) {
    let ratio = window().device_pixel_ratio();
    let (css_w, css_h) = (canvas.client_width() as f64, ranks_height(v.lanes.len()));
    canvas.set_width((css_w * ratio) as u32);
    canvas.set_height((css_h * ratio) as u32);
    let Some(cx) = super::timeline::context(canvas) else {
        return;
    };
    let _ = cx.scale(ratio, ratio);
    cx.clear_rect(0.0, 0.0, css_w, css_h);
    let w = (css_w - GUTTER_PX).max(50.0);
    super::timeline::draw_axis(&cx, vp, w, css_h, v.span_ns.0 as f64);
    for (i, lane) in v.lanes.iter().enumerate() {
        let y = AXIS_PX + i as f64 * RANK_ROW_PX;
        cx.set_fill_style_str("#888");
        let _ = cx.fill_text_with_max_width(&rank_label(lane, v), 4.0, y + 16.0, GUTTER_PX - 8.0);
        cx.set_fill_style_str("rgba(128,128,128,0.15)");
        cx.fill_rect(GUTTER_PX, y, w, 0.5);
        draw_busy(&cx, v, lane, vp, y, w);
    }
    super::timeline_arrivals::draw_arrivals(&cx, arrivals, vp, w);
    draw_selection(&cx, selection, vp, w, css_h);
}

/// One rank's busy pixels, as intensity.
fn draw_busy(
    cx: &CanvasRenderingContext2d,
    v: &RankLanesView,
    lane: &crate::analysis::rank_lanes::RankLane,
    vp: &Viewport,
    y: f64,
    w: f64,
) {
    let px_ns = v.px_ns();
    cx.set_fill_style_str(crate::page::palette::Hue::Compute.hex());
    for p in &lane.pixels {
        let t0 = v.start_ns as f64 + p.px as f64 * px_ns;
        let (x0, x1) = (vp.x_of(t0, w), vp.x_of(t0 + px_ns, w));
        if x1 < 0.0 || x0 > w {
            continue;
        }
        cx.set_global_alpha(busy_alpha(p.busy_ns, px_ns));
        let x0 = x0.max(0.0);
        cx.fill_rect(
            GUTTER_PX + x0,
            y + 3.0,
            (x1 - x0).max(1.0),
            RANK_ROW_PX - 6.0,
        );
    }
    cx.set_global_alpha(1.0);
}

/// The selected range, shaded over every row, with its edges.
pub fn draw_selection(
    cx: &CanvasRenderingContext2d,
    selection: Option<Selection>,
    vp: &Viewport,
    w: f64,
    h: f64,
) {
    let Some((x0, x1)) = selection.and_then(|s| s.shade(vp, w)) else {
        return;
    };
    cx.set_fill_style_str("rgba(255,176,0,0.22)");
    cx.fill_rect(GUTTER_PX + x0, 0.0, (x1 - x0).max(1.0), h);
    cx.set_fill_style_str("rgba(200,120,0,0.9)");
    cx.fill_rect(GUTTER_PX + x0, 0.0, 1.0, h);
    cx.fill_rect(GUTTER_PX + x1 - 1.0, 0.0, 1.0, h);
}

/// Each rank's busy share of the range, for tests and screen readers (`rank-lane-busy-pct`).
#[component]
pub fn RankMetrics(view: Memo<Option<RankLanesView>>, shown: Signal<bool>) -> impl IntoView {
    move || {
        let v = view.get().filter(|_| shown.get())?;
        let items = v
            .lanes
            .iter()
            .map(|l| {
                let pct = busy_pct(l, &v);
                view! {
                    <span data-metric="rank-lane-busy-pct" data-rank=l.rank.to_string()
                        data-rank-index=l.rank_index.to_string() data-value=format!("{pct:.3}")>
                        {format!("rank {}: {pct:.1}% busy", l.rank)}
                    </span>
                }
            })
            .collect_view();
        Some(view! { <div id="rank-lane-metrics" class="visually-hidden">{items}</div> })
    }
}

/// The selected range's duration, and how to clear it.
#[component]
pub fn SelectionReadout(selection: RwSignal<Option<Selection>>) -> impl IntoView {
    move || {
        selection.get().map(|s| {
            view! {
                <p id="timeline-selection" class="muted">
                    "Selected: "
                    <strong data-metric="selection-dur-us" data-value=s.dur_us().to_string()>
                        {duration_label(s.dur_ns() as f64)}
                    </strong>
                    " · Escape clears"
                </p>
            }
        })
    }
}
