//! Draws the collectives' last arrivals on the rank lanes (`page::arrival_marks`): a thin tick on
//! each rank of an instance, a triangle on the rank that arrived last.

use web_sys::CanvasRenderingContext2d;

use crate::page::arrival_marks::ArrivalMark;
use crate::page::timeline_select::RANK_ROW_PX;
use crate::report::timeline_view::{Viewport, AXIS_PX, GUTTER_PX};

pub fn draw_arrivals(cx: &CanvasRenderingContext2d, marks: &[ArrivalMark], vp: &Viewport, w: f64) {
    for m in marks {
        let x = vp.x_of(m.at_ns as f64, w);
        if !(0.0..=w).contains(&x) {
            continue;
        }
        let (x, y) = (GUTTER_PX + x, AXIS_PX + m.row as f64 * RANK_ROW_PX);
        if m.last {
            cx.set_fill_style_str("#b42318");
            cx.begin_path();
            cx.move_to(x - 5.0, y + 1.0);
            cx.line_to(x + 5.0, y + 1.0);
            cx.line_to(x, y + 9.0);
            cx.close_path();
            cx.fill();
        } else {
            cx.set_fill_style_str("rgba(232,135,30,0.9)");
            cx.fill_rect(x - 0.5, y + 2.0, 1.0, RANK_ROW_PX - 4.0);
        }
    }
}
