//! The timeline's view logic, plain and tested natively: the visible range and how wheel, drag and
//! W/A/S/D change it, the lanes' layout, the time axis, what is under the pointer, and the view in
//! the URL hash. The page's `ui::timeline` draws with it.

use serde::{Deserialize, Serialize};

use crate::analysis::timeline::{TimelineRequest, TimelineView, TrackInfo};
use crate::report::attribution::IdleCause;
use crate::report::format;

/// The worker's answer to a timeline request: the rank's tracks and what is visible.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelineAnswer {
    /// Index into the loaded set's ranks.
    pub rank_index: usize,
    pub rank: i64,
    pub tracks: Vec<TrackInfo>,
    /// First start and last end of the rank's drawable events, ns.
    pub span_ns: (i64, i64),
    pub view: TimelineView,
    /// Where the GPU (all streams) is idle in the range, and why (the diagnosis's idle attribution).
    #[serde(default)]
    pub idle: Vec<IdleSpan>,
    /// The rank's `ProfilerStep#N` spans (host side): (N, start, end) ns.
    #[serde(default)]
    pub steps: Vec<(i64, i64, i64)>,
}

/// A rank's `ProfilerStep#N` spans on the host, by start: (N, start, end) ns (the analyses' own
/// step rule, [`crate::analysis::gpu::step_spans`]).
pub fn step_spans(t: &crate::table::TraceTable) -> Vec<(i64, i64, i64)> {
    crate::analysis::gpu::step_spans(t, crate::analysis::options::Mode::Exact)
        .into_iter()
        .map(|s| (s.step, s.ts, s.end))
        .collect()
}

/// A stretch of GPU idle time and its cause.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct IdleSpan {
    pub start_ns: i64,
    pub end_ns: i64,
    pub cause: IdleCause,
}

/// The idle pieces (sorted by start, not overlapping) visible in a request's range: pieces at
/// least a pixel wide as they are, narrower ones merged per pixel under the cause with the most
/// time there. At most about two spans per pixel.
pub fn visible_idle(pieces: &[(i64, i64, IdleCause)], req: &TimelineRequest) -> Vec<IdleSpan> {
    let (start, end) = (req.start_ns, req.end_ns.max(req.start_ns + 1));
    let px_ns = (end - start) as f64 / req.width_px.max(1) as f64;
    let first = pieces.partition_point(|p| p.1 <= start);
    let mut out: Vec<IdleSpan> = Vec::new();
    let mut pixel: Option<(i64, [i64; IdleCause::ALL.len()])> = None;
    let flush = |pixel: &mut Option<(i64, [i64; IdleCause::ALL.len()])>,
                 out: &mut Vec<IdleSpan>| {
        if let Some((px, by)) = pixel.take() {
            let best = (0..IdleCause::ALL.len())
                .max_by_key(|&i| by[i])
                .unwrap_or(0);
            let s = start + (px as f64 * px_ns) as i64;
            out.push(IdleSpan {
                start_ns: s,
                end_ns: start + ((px + 1) as f64 * px_ns) as i64,
                cause: IdleCause::ALL[best],
            });
        }
    };
    for &(s, e, cause) in pieces[first..].iter().take_while(|p| p.0 < end) {
        let (cs, ce) = (s.max(start), e.min(end));
        if (ce - cs) as f64 >= px_ns {
            flush(&mut pixel, &mut out);
            out.push(IdleSpan {
                start_ns: cs,
                end_ns: ce,
                cause,
            });
            continue;
        }
        let px = ((cs - start) as f64 / px_ns) as i64;
        if pixel.is_some_and(|(p, _)| p != px) {
            flush(&mut pixel, &mut out);
        }
        let (_, by) = pixel.get_or_insert((px, [0; IdleCause::ALL.len()]));
        by[cause.index()] += ce - cs;
    }
    flush(&mut pixel, &mut out);
    out
}

/// Height of one lane, CSS pixels.
pub const LANE_PX: f64 = 16.0;
/// Height of the time axis above the lanes.
pub const AXIS_PX: f64 = 22.0;
/// Width of the track names on the left.
pub const GUTTER_PX: f64 = 170.0;
/// The narrowest range a user can zoom to, ns.
const MIN_RANGE_NS: f64 = 100.0;

/// The visible time range, ns (fractional while zooming, so that zoom in and out return exactly).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    pub start_ns: f64,
    pub end_ns: f64,
}

impl Viewport {
    pub fn new(start_ns: i64, end_ns: i64) -> Viewport {
        Viewport {
            start_ns: start_ns as f64,
            end_ns: (end_ns as f64).max(start_ns as f64 + 1.0),
        }
    }

    pub fn len(&self) -> f64 {
        self.end_ns - self.start_ns
    }

    /// Zoom by `factor` (< 1 zooms in) keeping the time at `at` (0-1 across the width) in place.
    pub fn zoom_at(self, at: f64, factor: f64) -> Viewport {
        let at = at.clamp(0.0, 1.0);
        let pivot = self.start_ns + at * self.len();
        let len = (self.len() * factor).max(MIN_RANGE_NS);
        Viewport {
            start_ns: pivot - at * len,
            end_ns: pivot + (1.0 - at) * len,
        }
    }

    /// Move by `fraction` of the width (positive: later).
    pub fn pan(self, fraction: f64) -> Viewport {
        let d = fraction * self.len();
        Viewport {
            start_ns: self.start_ns + d,
            end_ns: self.end_ns + d,
        }
    }

    /// Kept within the trace's span (the range never leaves it entirely, nor grows past it).
    pub fn within(self, span: (i64, i64)) -> Viewport {
        let (lo, hi) = (span.0 as f64, (span.1 as f64).max(span.0 as f64 + 1.0));
        let len = self.len().min(hi - lo).max(MIN_RANGE_NS.min(hi - lo));
        let start = self.start_ns.clamp(lo, hi - len);
        Viewport {
            start_ns: start,
            end_ns: start + len,
        }
    }

    /// The range that shows the event `start..end`: this one when the event is in it, else this
    /// width centred on the event (panned, not zoomed), or a range a quarter wider than the event
    /// when the event is wider than this.
    pub fn reveal(self, start_ns: i64, end_ns: i64) -> Viewport {
        let (s, e) = (start_ns as f64, (end_ns as f64).max(start_ns as f64));
        if s >= self.start_ns && e <= self.end_ns {
            return self;
        }
        let mid = (s + e) / 2.0;
        let len = if e - s <= self.len() * 0.9 {
            self.len()
        } else {
            ((e - s) * 1.25).max(MIN_RANGE_NS)
        };
        Viewport {
            start_ns: mid - len / 2.0,
            end_ns: mid + len / 2.0,
        }
    }

    /// A key's change: W/S zoom in/out at the middle, A/D pan a fifth of the width.
    pub fn key(self, key: &str) -> Option<Viewport> {
        match key {
            "w" | "W" => Some(self.zoom_at(0.5, 0.7)),
            "s" | "S" => Some(self.zoom_at(0.5, 1.0 / 0.7)),
            "a" | "A" => Some(self.pan(-0.2)),
            "d" | "D" => Some(self.pan(0.2)),
            _ => None,
        }
    }

    /// The time at `x` pixels of `width`.
    pub fn time_at(&self, x: f64, width: f64) -> f64 {
        self.start_ns + x / width.max(1.0) * self.len()
    }

    /// The x of time `t` at `width`.
    pub fn x_of(&self, t: f64, width: f64) -> f64 {
        (t - self.start_ns) / self.len() * width
    }
}

/// Wheel zoom factor for a wheel delta (pixels): a notch of 100 zooms by about 1.25.
pub fn wheel_factor(delta_y: f64) -> f64 {
    (delta_y.clamp(-500.0, 500.0) * 0.00223).exp()
}

/// One drawn row: a lane of a track, at `y` (CSS px from the top of the lanes).
#[derive(Clone, Debug, PartialEq)]
pub struct LaneRow {
    pub track: u32,
    pub depth: u16,
    pub y: f64,
    /// The track's first row carries its name.
    pub label: Option<String>,
}

/// The `track` of the row that shows why the GPU is idle (above the tracks).
pub const IDLE_ROW: u32 = u32::MAX;

/// The `track` of the row that draws the critical path (under the GPU-idle row, when shown).
pub const PATH_ROW: u32 = u32::MAX - 1;

/// Rows of the lanes to draw: the GPU-idle row when the rank has device work, the critical path
/// when asked for, then every depth of an open track, the first of a collapsed one.
pub fn layout(answer: &TimelineAnswer, collapsed: &[u32], path: bool) -> Vec<LaneRow> {
    let mut rows = Vec::new();
    let has_gpu = answer
        .tracks
        .iter()
        .any(|t| matches!(t.key, crate::analysis::timeline::TrackKey::Stream { .. }));
    if has_gpu {
        rows.push(LaneRow {
            track: IDLE_ROW,
            depth: 0,
            y: 0.0,
            label: Some("GPU idle, and why".into()),
        });
    }
    if path {
        rows.push(LaneRow {
            track: PATH_ROW,
            depth: 0,
            y: rows.len() as f64 * LANE_PX,
            label: Some("Critical path".into()),
        });
    }
    for (i, track) in answer.tracks.iter().enumerate() {
        let i = i as u32;
        let depths = if collapsed.contains(&i) {
            1
        } else {
            track.depth.max(1)
        };
        for depth in 0..depths {
            rows.push(LaneRow {
                track: i,
                depth,
                y: rows.len() as f64 * LANE_PX,
                label: (depth == 0).then(|| {
                    let sign = if collapsed.contains(&i) { "▸" } else { "▾" };
                    format!("{sign} {}", track.name)
                }),
            });
        }
    }
    rows
}

/// The idle causes in the answer, in precedence order (the legend).
pub fn idle_causes(answer: &TimelineAnswer) -> Vec<IdleCause> {
    IdleCause::ALL
        .into_iter()
        .filter(|c| answer.idle.iter().any(|s| s.cause == *c))
        .collect()
}

/// The row under `y` (CSS px from the top of the lanes).
pub fn row_at(rows: &[LaneRow], y: f64) -> Option<&LaneRow> {
    if y < 0.0 {
        return None;
    }
    rows.get((y / LANE_PX) as usize)
}

/// The event drawn under `x` (px from the lanes' left edge, of `width`) in a row: its table row.
pub fn event_at(
    view: &TimelineView,
    viewport: &Viewport,
    row: &LaneRow,
    x: f64,
    width: f64,
) -> Option<u32> {
    let lane = view
        .lanes
        .iter()
        .find(|l| l.track == row.track && l.depth == row.depth)?;
    let t = viewport.time_at(x, width);
    let slack = 2.0 * viewport.len() / width.max(1.0);
    lane.events
        .iter()
        .filter(|e| (e.start_ns as f64) - slack <= t && t <= (e.end_ns as f64) + slack)
        .min_by_key(|e| e.end_ns - e.start_ns)
        .map(|e| e.row)
}

/// A tick of the time axis: its x and its label (relative to the trace's start).
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    pub x: f64,
    pub label: String,
}

/// Ticks at a round step (1, 2 or 5 × 10^k ns) about every 100 px, labelled from `origin_ns`.
pub fn ticks(viewport: &Viewport, width: f64, origin_ns: f64) -> Vec<Tick> {
    let target = viewport.len() * 100.0 / width.max(1.0);
    let magnitude = 10f64.powf(target.max(1.0).log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= target)
        .unwrap_or(10.0 * magnitude);
    let first = ((viewport.start_ns - origin_ns) / step).ceil() * step + origin_ns;
    let mut out = Vec::new();
    let mut t = first;
    while t <= viewport.end_ns && out.len() < 200 {
        out.push(Tick {
            x: viewport.x_of(t, width),
            label: tick_label(t - origin_ns, step, (viewport.end_ns - origin_ns).abs()),
        });
        t += step;
    }
    out
}

/// A tick's time in the unit of the largest time shown (`scale_ns`), with the decimals the step
/// between ticks needs (`41.3675 s` for ticks 0.5 ms apart, 41 s into the trace).
pub fn tick_label(ns: f64, step_ns: f64, scale_ns: f64) -> String {
    let scale = scale_ns.max(step_ns);
    let (unit, name) = if scale < 1e3 {
        (1.0, "ns")
    } else if scale < 1e6 {
        (1e3, "µs")
    } else if scale < 1e9 {
        (1e6, "ms")
    } else {
        (1e9, "s")
    };
    let decimals = (-(step_ns / unit).log10()).ceil().clamp(0.0, 6.0) as usize;
    format!("{} {name}", format::decimal(ns / unit, decimals))
}

/// A duration in readable units (ns, µs, ms, s).
pub fn duration_label(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        format!("{} µs", trim(ns / 1e3))
    } else if a < 1e9 {
        format!("{} ms", trim(ns / 1e6))
    } else {
        format!("{} s", trim(ns / 1e9))
    }
}

fn trim(x: f64) -> String {
    let s = format::decimal(x, 3);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The view in the URL hash: `timeline=RANK_INDEX:START_NS-END_NS`.
pub fn hash_of(rank_index: usize, viewport: &Viewport) -> String {
    format!(
        "timeline={rank_index}:{}-{}",
        viewport.start_ns.round() as i64,
        viewport.end_ns.round() as i64
    )
}

/// The view a URL hash names, if it names one.
pub fn parse_hash(hash: &str) -> Option<(usize, Viewport)> {
    let rest = hash
        .trim_start_matches('#')
        .split('&')
        .find_map(|p| p.strip_prefix("timeline="))?;
    let (rank, range) = rest.split_once(':')?;
    let (start, end) = range.rsplit_once('-')?;
    let (start, end): (i64, i64) = (start.parse().ok()?, end.parse().ok()?);
    let rank: usize = rank.parse().ok()?;
    (end > start).then(|| (rank, Viewport::new(start, end)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_walked_event_out_of_view_is_brought_in_by_a_pan() {
        let vp = Viewport::new(1000, 2000);
        assert_eq!(vp.reveal(1200, 1300), vp, "in view: the range stays");
        let panned = vp.reveal(5000, 5100);
        assert_eq!(
            (panned.start_ns, panned.end_ns),
            (4550.0, 5550.0),
            "same width, centred"
        );
        let wide = vp.reveal(10_000, 12_000);
        assert_eq!(
            (wide.start_ns, wide.end_ns),
            (9750.0, 12_250.0),
            "a quarter wider than the event"
        );
    }

    #[test]
    fn every_idle_cause_can_win_a_pixel() {
        // Per cause: a 10 ns piece of it (wins) beside a 2 ns piece of another, in one 100 ns pixel.
        for (i, &cause) in IdleCause::ALL.iter().enumerate() {
            let other = IdleCause::ALL[(i + 1) % IdleCause::ALL.len()];
            let pieces = [(1000, 1002, other), (1010, 1020, cause)];
            let req = TimelineRequest {
                start_ns: 1000,
                end_ns: 2000,
                width_px: 10,
            };
            let spans = visible_idle(&pieces, &req);
            assert_eq!(spans.len(), 1, "{cause}: {spans:?}");
            assert_eq!(spans[0].cause, cause);
        }
    }

    #[test]
    fn idle_pieces_are_clipped_and_narrow_ones_merged_per_pixel() {
        let pieces = [
            (0, 5000, IdleCause::DataLoading),
            (6000, 6010, IdleCause::Synchronization),
            (6020, 6030, IdleCause::DispatchOverhead),
            (6040, 6100, IdleCause::DispatchOverhead),
            (9000, 20_000, IdleCause::Other),
        ];
        let req = TimelineRequest {
            start_ns: 1000,
            end_ns: 11_000,
            width_px: 100,
        };
        let spans = visible_idle(&pieces, &req);
        assert_eq!(spans.len(), 3, "{spans:?}");
        assert_eq!((spans[0].start_ns, spans[0].end_ns), (1000, 5000));
        // Three pieces inside one 100 ns pixel: the cause with the most time there.
        assert_eq!(spans[1].cause, IdleCause::DispatchOverhead);
        assert_eq!((spans[1].start_ns, spans[1].end_ns), (6000, 6100));
        assert_eq!((spans[2].start_ns, spans[2].end_ns), (9000, 11_000));
    }

    #[test]
    fn zoom_keeps_the_time_under_the_pointer_and_returns_exactly() {
        let v = Viewport::new(1000, 11_000);
        let z = v.zoom_at(0.25, 0.5);
        assert_eq!(z.len(), 5000.0);
        assert_eq!(v.time_at(250.0, 1000.0), z.time_at(250.0, 1000.0));
        let back = z.zoom_at(0.25, 2.0);
        assert!((back.start_ns - 1000.0).abs() < 1e-6 && (back.end_ns - 11_000.0).abs() < 1e-6);
    }

    #[test]
    fn keys_zoom_and_pan_and_other_keys_do_nothing() {
        let v = Viewport::new(0, 10_000);
        assert!(v.key("w").unwrap().len() < v.len());
        assert!(v.key("S").unwrap().len() > v.len());
        assert_eq!(v.key("d").unwrap().start_ns, 2000.0);
        assert_eq!(v.key("a").unwrap().start_ns, -2000.0);
        assert_eq!(v.key("x"), None);
    }

    #[test]
    fn the_range_stays_within_the_trace() {
        let v = Viewport::new(-5000, 5000).within((0, 8000));
        assert_eq!((v.start_ns, v.end_ns), (0.0, 8000.0));
        let v = Viewport::new(7000, 9000).within((0, 8000));
        assert_eq!((v.start_ns, v.end_ns), (6000.0, 8000.0));
    }

    #[test]
    fn ticks_are_round_and_readable() {
        let v = Viewport::new(1_000_000, 2_000_000);
        let t = ticks(&v, 1000.0, 1_000_000.0);
        assert_eq!(t[0].label, "0.0 ms");
        assert_eq!(t[1].label, "0.1 ms");
        assert_eq!(tick_label(41_367_500_000.0, 500_000.0, 41.4e9), "41.3675 s");
        assert_eq!(t.len(), 11);
        assert_eq!(duration_label(1.5e9), "1.5 s");
        assert_eq!(duration_label(2.25e6), "2.25 ms");
    }

    #[test]
    fn the_hash_round_trips_and_bad_ones_are_ignored() {
        let v = Viewport::new(123, 456_789);
        assert_eq!(parse_hash(&format!("#{}", hash_of(2, &v))), Some((2, v)));
        assert_eq!(parse_hash("#timeline=1:500-400"), None);
        assert_eq!(parse_hash("#other"), None);
        assert_eq!(parse_hash("#timeline=x:1-2"), None);
    }
}
