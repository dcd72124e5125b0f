//! The timeline's selected range and its rank lanes, plain and tested natively: a shift-drag (or a
//! drag on the time axis) selects `[start, end)`, kept in the URL hash as its own `sel=START-END`
//! part (ns); the rank lanes' rows (one per rank), what is under the pointer and how busy a pixel
//! looks.

use crate::analysis::rank_lanes::{RankLane, RankLanesView};
use crate::page::tabs;
use crate::report::timeline_view::Viewport;

/// A selected time range, ns (`start < end`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    pub start_ns: i64,
    pub end_ns: i64,
}

impl Selection {
    /// The range between two times in either order; `None` when empty.
    pub fn between(a: i64, b: i64) -> Option<Selection> {
        let (start_ns, end_ns) = (a.min(b), a.max(b));
        (end_ns > start_ns).then_some(Selection { start_ns, end_ns })
    }

    /// The range dragged from `x0` to `x1` (px from the lanes' left edge, of `width`).
    pub fn dragged(vp: &Viewport, x0: f64, x1: f64, width: f64) -> Option<Selection> {
        let t = |x: f64| vp.time_at(x.clamp(0.0, width), width).round() as i64;
        Selection::between(t(x0), t(x1))
    }

    pub fn dur_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }

    /// The duration in µs (the page's `data-value`).
    pub fn dur_us(&self) -> f64 {
        self.dur_ns() as f64 / 1000.0
    }

    /// Its part of the URL hash: `sel=START_NS-END_NS`.
    pub fn part(&self) -> String {
        format!("sel={}-{}", self.start_ns, self.end_ns)
    }

    /// The selection a URL hash names, if it names a valid one.
    pub fn from_hash(hash: &str) -> Option<Selection> {
        let (start, end) = tabs::part(hash, "sel")?.rsplit_once('-')?;
        Selection::between(start.parse().ok()?, end.parse().ok()?)
            .filter(|s| s.start_ns.to_string() == start)
    }

    /// `hash` with this selection in its `sel=` part, or without one for `None`.
    pub fn in_hash(selection: Option<Selection>, hash: &str) -> String {
        match selection {
            Some(s) => tabs::with_part(hash, &s.part()),
            None => tabs::without_part(hash, "sel"),
        }
    }

    /// Where it is drawn at `width`: `(x0, x1)` clipped to the lanes; `None` when out of view.
    pub fn shade(&self, vp: &Viewport, width: f64) -> Option<(f64, f64)> {
        let x0 = vp.x_of(self.start_ns as f64, width).max(0.0);
        let x1 = vp.x_of(self.end_ns as f64, width).min(width);
        (x1 >= 0.0 && x0 <= width && x1 >= x0).then_some((x0, x1))
    }
}

/// Height of one rank's row in the rank lanes, CSS px.
pub const RANK_ROW_PX: f64 = 24.0;

/// The rank index of the row under `y` (CSS px from the top of the lanes).
pub fn rank_row_at(view: &RankLanesView, y: f64) -> Option<usize> {
    if y < 0.0 {
        return None;
    }
    view.lanes
        .get((y / RANK_ROW_PX) as usize)
        .map(|l| l.rank_index)
}

/// How strongly a pixel is drawn: its busy share, at least a faint trace for any work at all.
pub fn busy_alpha(busy_ns: i64, px_ns: f64) -> f64 {
    if busy_ns <= 0 {
        return 0.0;
    }
    (busy_ns as f64 / px_ns.max(1.0)).clamp(0.08, 1.0)
}

/// A rank's GPU busy share of the answer's range, percent.
pub fn busy_pct(lane: &RankLane, view: &RankLanesView) -> f64 {
    let len = (view.end_ns - view.start_ns).max(1) as f64;
    (lane.busy_ns as f64 / len * 100.0).clamp(0.0, 100.0)
}

/// A rank's row label: `rank N` and its busy share.
pub fn rank_label(lane: &RankLane, view: &RankLanesView) -> String {
    format!("rank {} · {:.0}% busy", lane.rank, busy_pct(lane, view))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_round_trips_through_the_hash_beside_the_other_parts() {
        let s = Selection::between(900, -50).unwrap();
        assert_eq!((s.start_ns, s.end_ns, s.dur_us()), (-50, 900, 0.95));
        let h = Selection::in_hash(Some(s), "#tab=timeline&timeline=0:1-2");
        assert_eq!(h, "#tab=timeline&timeline=0:1-2&sel=-50-900");
        assert_eq!(Selection::from_hash(&h), Some(s));
        let cleared = Selection::in_hash(None, &h);
        assert_eq!(cleared, "#tab=timeline&timeline=0:1-2");
        assert_eq!(Selection::from_hash(&cleared), None);
        assert_eq!(Selection::from_hash("#sel=5-5"), None);
        assert_eq!(Selection::from_hash("#sel=9-3"), None);
        assert_eq!(Selection::from_hash("#sel=x-3"), None);
        assert_eq!(Selection::between(3, 3), None);
    }

    #[test]
    fn a_drag_selects_the_times_under_the_pointer_and_is_shaded_where_visible() {
        let vp = Viewport::new(1000, 2000);
        let s = Selection::dragged(&vp, 600.0, 200.0, 1000.0).unwrap();
        assert_eq!((s.start_ns, s.end_ns), (1200, 1600));
        // Dragged past the edge: clipped to the visible range.
        let s = Selection::dragged(&vp, 900.0, 5000.0, 1000.0).unwrap();
        assert_eq!((s.start_ns, s.end_ns), (1900, 2000));
        assert_eq!(Selection::dragged(&vp, 10.0, 10.2, 1000.0), None);
        let s = Selection::between(500, 1500).unwrap();
        assert_eq!(s.shade(&vp, 1000.0), Some((0.0, 500.0)));
        assert_eq!(Selection::between(0, 900).unwrap().shade(&vp, 1000.0), None);
    }

    #[test]
    fn rank_rows_are_hit_by_y_and_drawn_by_busy_share() {
        let lane = |rank_index, busy_ns| RankLane {
            rank_index,
            rank: 10 + rank_index as i64,
            busy_ns,
            ..Default::default()
        };
        let view = RankLanesView {
            start_ns: 0,
            end_ns: 1000,
            width_px: 10,
            span_ns: (0, 1000),
            lanes: vec![lane(0, 250), lane(1, 1000)],
        };
        assert_eq!(rank_row_at(&view, 3.0), Some(0));
        assert_eq!(rank_row_at(&view, RANK_ROW_PX + 1.0), Some(1));
        assert_eq!(rank_row_at(&view, 3.0 * RANK_ROW_PX), None);
        assert_eq!(rank_row_at(&view, -1.0), None);
        assert_eq!(busy_pct(&view.lanes[0], &view), 25.0);
        assert_eq!(rank_label(&view.lanes[1], &view), "rank 11 · 100% busy");
        assert_eq!(busy_alpha(0, 100.0), 0.0);
        assert_eq!(busy_alpha(50, 100.0), 0.5);
        assert_eq!(busy_alpha(1, 100.0), 0.08);
        assert_eq!(busy_alpha(150, 100.0), 1.0);
    }
}
