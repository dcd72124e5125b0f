//! The timeline's canvas drawing: lanes and their events, the axis, the search's hits, the GPU-idle
//! row, the critical path, the steps and the analysed window (colours from `page::palette`).

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::CanvasRenderingContext2d;

use super::timeline_ranks::draw_selection;
use crate::analysis::critical_path::BoundBy;
use crate::analysis::timeline::{EventClass, SearchHit};
use crate::page::palette::Hue;
use crate::page::timeline_select::Selection;
use crate::report::timeline_view::{
    layout, ticks, LaneRow, TimelineAnswer, Viewport, AXIS_PX, GUTTER_PX, IDLE_ROW, LANE_PX,
    PATH_ROW,
};

/// Fill colour of an event class.
pub(super) fn colour(class: EventClass) -> &'static str {
    Hue::of_event(class).hex()
}

pub(super) fn context(canvas: &web_sys::HtmlCanvasElement) -> Option<CanvasRenderingContext2d> {
    canvas.get_context("2d").ok()??.dyn_into().ok()
}

/// Draws the answer at the current range (an answer for another range is stretched until the
/// worker's next one comes, so zoom and pan never wait).
pub(super) fn draw(
    canvas: &web_sys::HtmlCanvasElement,
    a: &TimelineAnswer,
    vp: &Viewport,
    collapsed: &[u32],
    extra: &Overlays,
) {
    let rows = layout(a, collapsed, extra.path.is_some());
    let ratio = window().device_pixel_ratio();
    let (css_w, css_h) = (
        canvas.client_width() as f64,
        AXIS_PX + rows.len().max(1) as f64 * LANE_PX,
    );
    canvas.set_width((css_w * ratio) as u32);
    canvas.set_height((css_h * ratio) as u32);
    let Some(cx) = context(canvas) else { return };
    let _ = cx.scale(ratio, ratio);
    cx.clear_rect(0.0, 0.0, css_w, css_h);
    let w = (css_w - GUTTER_PX).max(50.0);
    draw_axis(&cx, vp, w, css_h, a.span_ns.0 as f64);
    draw_steps(&cx, vp, &a.steps, w, css_h);
    for row in &rows {
        draw_label(&cx, row, w);
        match (row.track, &extra.path) {
            (PATH_ROW, Some(path)) => draw_path(&cx, vp, path, AXIS_PX + row.y, w),
            _ => draw_row(&cx, a, vp, row, w, extra.selected),
        }
    }
    if let Some(window) = extra.analysed {
        draw_window(&cx, vp, window, w, css_h);
    }
    draw_selection(&cx, extra.selection, vp, w, css_h);
    draw_hits(&cx, &extra.hits, vp, w, css_h);
}

/// The search's hits: a band over the lanes and a mark on the axis each, the current one stronger
/// and drawn last (hits that share its pixels never cover it).
pub(super) fn draw_hits(
    cx: &CanvasRenderingContext2d,
    hits: &[(SearchHit, bool)],
    vp: &Viewport,
    w: f64,
    h: f64,
) {
    let others = hits.iter().filter(|(_, current)| !current);
    let current = hits.iter().filter(|(_, current)| *current);
    for (hit, current) in others.chain(current) {
        let x0 = GUTTER_PX + vp.x_of(hit.start_ns as f64, w).max(0.0);
        let x1 = (GUTTER_PX + vp.x_of(hit.end_ns as f64, w).min(w)).max(x0 + 2.0);
        let (band, mark) = if *current {
            ("rgba(255,140,0,0.35)", "#ff8c00")
        } else {
            ("rgba(255,210,0,0.18)", "#e6b800")
        };
        cx.set_fill_style_str(band);
        cx.fill_rect(x0, AXIS_PX, x1 - x0, h - AXIS_PX);
        cx.set_fill_style_str(mark);
        cx.fill_rect(x0, AXIS_PX - 6.0, x1 - x0, 6.0);
    }
}

/// A track's name in the gutter, and a line above its first row.
pub(super) fn draw_label(cx: &CanvasRenderingContext2d, row: &LaneRow, w: f64) {
    let Some(label) = &row.label else { return };
    let y = AXIS_PX + row.y;
    cx.set_fill_style_str("#888");
    let _ = cx.fill_text_with_max_width(label, 4.0, y + 12.0, GUTTER_PX - 8.0);
    cx.set_fill_style_str("rgba(128,128,128,0.15)");
    cx.fill_rect(GUTTER_PX, y, w, 0.5);
}

/// What is drawn over the worker's answer, from the page's own results.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Overlays {
    /// The window the report analysed on this rank, when not the whole trace.
    pub(super) analysed: Option<(i64, i64)>,
    /// The critical path's segments (start, end, bound), when the switch is on.
    pub(super) path: Option<Vec<(i64, i64, BoundBy)>>,
    /// The row of the event in the details panel.
    pub(super) selected: Option<u32>,
    /// The selected time range.
    pub(super) selection: Option<Selection>,
    /// The search's hits in the range, the current one marked.
    pub(super) hits: Vec<(SearchHit, bool)>,
}

/// Colour of what bounds a critical-path segment.
pub(super) fn bound_colour(b: BoundBy) -> &'static str {
    Hue::of_bound(b).hex()
}

pub(super) fn draw_path(
    cx: &CanvasRenderingContext2d,
    vp: &Viewport,
    path: &[(i64, i64, BoundBy)],
    y: f64,
    w: f64,
) {
    for &(s, e, b) in path {
        let x0 = vp.x_of(s as f64, w).max(0.0);
        let x1 = vp.x_of(e as f64, w).min(w);
        if x1 < 0.0 || x0 > w {
            continue;
        }
        cx.set_fill_style_str(bound_colour(b));
        cx.fill_rect(GUTTER_PX + x0, y + 2.0, (x1 - x0).max(1.0), LANE_PX - 4.0);
    }
}

/// A dashed line at each step's start, labelled `#N` when there is room.
pub(super) fn draw_steps(
    cx: &CanvasRenderingContext2d,
    vp: &Viewport,
    steps: &[(i64, i64, i64)],
    w: f64,
    h: f64,
) {
    let visible: Vec<&(i64, i64, i64)> = steps
        .iter()
        .filter(|s| (0.0..=w).contains(&vp.x_of(s.1 as f64, w)))
        .collect();
    if visible.len() > 200 {
        return;
    }
    cx.set_stroke_style_str("rgba(90,90,200,0.6)");
    cx.set_fill_style_str("rgba(90,90,200,0.9)");
    let _ = cx.set_line_dash(&js_sys::Array::of2(&4.0.into(), &3.0.into()));
    let mut last_label = f64::NEG_INFINITY;
    for &&(n, start, _) in &visible {
        let x = GUTTER_PX + vp.x_of(start as f64, w);
        cx.begin_path();
        cx.move_to(x, AXIS_PX - 6.0);
        cx.line_to(x, h);
        cx.stroke();
        if x - last_label > 40.0 {
            let _ = cx.fill_text(&format!("#{n}"), x + 2.0, AXIS_PX - 8.0);
            last_label = x;
        }
    }
    let _ = cx.set_line_dash(&js_sys::Array::new());
}

/// The GPU's idle stretches, coloured by cause.
pub(super) fn draw_idle(
    cx: &CanvasRenderingContext2d,
    a: &TimelineAnswer,
    vp: &Viewport,
    y: f64,
    w: f64,
) {
    for s in &a.idle {
        let x0 = vp.x_of(s.start_ns as f64, w).max(0.0);
        let x1 = vp.x_of(s.end_ns as f64, w).min(w);
        if x1 < 0.0 || x0 > w {
            continue;
        }
        cx.set_fill_style_str(Hue::of_idle(s.cause).hex());
        cx.fill_rect(GUTTER_PX + x0, y + 2.0, (x1 - x0).max(1.0), LANE_PX - 4.0);
    }
}

/// Shades what lies outside the window the report analysed (the warm-up left out, ...).
pub(super) fn draw_window(
    cx: &CanvasRenderingContext2d,
    vp: &Viewport,
    window: (i64, i64),
    w: f64,
    h: f64,
) {
    cx.set_fill_style_str("rgba(128,128,128,0.12)");
    let x0 = vp.x_of(window.0 as f64, w).clamp(0.0, w);
    let x1 = vp.x_of(window.1 as f64, w).clamp(0.0, w);
    if x0 > 0.0 {
        cx.fill_rect(GUTTER_PX, AXIS_PX, x0, h - AXIS_PX);
    }
    if x1 < w {
        cx.fill_rect(GUTTER_PX + x1, AXIS_PX, w - x1, h - AXIS_PX);
    }
}

pub(super) fn draw_axis(cx: &CanvasRenderingContext2d, vp: &Viewport, w: f64, h: f64, origin: f64) {
    cx.set_font("11px system-ui, sans-serif");
    cx.set_fill_style_str("#888");
    cx.set_stroke_style_str("rgba(128,128,128,0.25)");
    for t in ticks(vp, w, origin) {
        let x = GUTTER_PX + t.x;
        cx.begin_path();
        cx.move_to(x, AXIS_PX - 4.0);
        cx.line_to(x, h);
        cx.stroke();
        let _ = cx.fill_text(&t.label, x + 3.0, 13.0);
    }
}

pub(super) fn draw_row(
    cx: &CanvasRenderingContext2d,
    a: &TimelineAnswer,
    vp: &Viewport,
    row: &LaneRow,
    w: f64,
    selected: Option<u32>,
) {
    let y = AXIS_PX + row.y;
    if row.track == IDLE_ROW {
        draw_idle(cx, a, vp, y, w);
        return;
    }
    let Some(lane) = a
        .view
        .lanes
        .iter()
        .find(|l| l.track == row.track && l.depth == row.depth)
    else {
        return;
    };
    let px_ns = (a.view.end_ns - a.view.start_ns) as f64 / a.view.width_px.max(1) as f64;
    for b in &lane.buckets {
        let t0 = a.view.start_ns as f64 + b.px as f64 * px_ns;
        let x0 = vp.x_of(t0, w);
        let x1 = vp.x_of(t0 + px_ns, w);
        if x1 < 0.0 || x0 > w {
            continue;
        }
        cx.set_global_alpha((b.busy_ns as f64 / px_ns).clamp(0.3, 1.0));
        cx.set_fill_style_str(colour(b.class));
        cx.fill_rect(
            GUTTER_PX + x0.max(0.0),
            y + 1.0,
            (x1 - x0.max(0.0)).max(1.0),
            LANE_PX - 2.0,
        );
    }
    cx.set_global_alpha(1.0);
    for e in &lane.events {
        let x0 = vp.x_of(e.start_ns as f64, w).max(0.0);
        let x1 = vp.x_of(e.end_ns as f64, w).min(w);
        if x1 < 0.0 || x0 > w {
            continue;
        }
        let width = (x1 - x0).max(1.0);
        cx.set_fill_style_str(colour(e.class));
        cx.fill_rect(GUTTER_PX + x0, y + 1.0, width, LANE_PX - 2.0);
        if selected == Some(e.row) {
            cx.set_stroke_style_str("#000");
            cx.set_line_width(2.0);
            cx.stroke_rect(GUTTER_PX + x0, y + 1.0, width, LANE_PX - 2.0);
            cx.set_line_width(1.0);
        }
        if width > 40.0 {
            cx.set_fill_style_str("#fff");
            let _ =
                cx.fill_text_with_max_width(&e.name, GUTTER_PX + x0 + 3.0, y + 12.0, width - 6.0);
        }
    }
}
