//! The roofline chart's geometry, plain Rust tested natively: log-log axes (arithmetic intensity in
//! FLOP/byte, achieved TFLOP/s) with decade ticks, the roof of each element type the kernels use
//! (memory slope, then the compute ceiling from the ridge point on), and each kernel as a point sized
//! by its time. `ui::charts` only draws it. Coordinates are in a `WIDTH` × `HEIGHT` view box whose plot
//! area leaves margins for the tick labels.

use crate::analysis::roofline::{Dtype, RankRoofline};
use crate::report::format;
use crate::table::query::{EventQuery, SortBy};
use crate::trace::dialect::EventKind;

pub const WIDTH: f64 = 640.0;
pub const HEIGHT: f64 = 360.0;
/// Plot area: left margin for the y labels, bottom for the x labels.
pub const LEFT: f64 = 56.0;
pub const RIGHT: f64 = 12.0;
pub const TOP: f64 = 10.0;
pub const BOTTOM: f64 = 40.0;
/// The most points drawn (the longest kernels).
pub const MAX_POINTS: usize = 300;
/// Point radius: the smallest, and the largest (the longest kernel).
const R_MIN: f64 = 3.0;
const R_MAX: f64 = 12.0;

/// A log10 axis over whole decades.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogAxis {
    /// log10 of the axis's low and high ends.
    pub lo: i32,
    pub hi: i32,
}

impl LogAxis {
    /// The decades around the positive finite values (at least one decade); `None` when there is none.
    pub fn fit(values: impl IntoIterator<Item = f64>) -> Option<LogAxis> {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in values.into_iter().filter(|v| v.is_finite() && *v > 0.0) {
            lo = lo.min(v.log10());
            hi = hi.max(v.log10());
        }
        if !lo.is_finite() {
            return None;
        }
        let lo = lo.floor() as i32;
        let hi = (hi.ceil() as i32).max(lo + 1);
        Some(LogAxis { lo, hi })
    }

    /// Where `v` falls, 0 at the low end and 1 at the high end (outside for values outside).
    pub fn frac(&self, v: f64) -> f64 {
        (v.log10() - f64::from(self.lo)) / f64::from(self.hi - self.lo)
    }

    pub fn min(&self) -> f64 {
        10f64.powi(self.lo)
    }

    pub fn max(&self) -> f64 {
        10f64.powi(self.hi)
    }

    /// One tick per decade (every second or third when there are many), with its label.
    pub fn ticks(&self) -> Vec<(f64, String)> {
        let step = ((self.hi - self.lo) as usize).div_ceil(8).max(1);
        (self.lo..=self.hi)
            .step_by(step)
            .map(|e| (10f64.powi(e), decade_label(e)))
            .collect()
    }
}

/// `0.01`, `1`, `1000`, `1e6`: short labels of powers of ten.
pub fn decade_label(e: i32) -> String {
    if (-3..=4).contains(&e) {
        format!("{}", 10f64.powi(e))
    } else {
        format!("1e{e}")
    }
}

/// A tick of an axis: its position along the axis (view-box units) and its label.
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    pub at: f64,
    pub label: String,
}

/// The roof of one element type: the memory slope up to the ridge point, then the compute ceiling.
#[derive(Clone, Debug, PartialEq)]
pub struct RoofLine {
    pub dtype: Dtype,
    /// Peak TFLOP/s.
    pub peak_tflops: f64,
    /// Ridge point, FLOP/byte.
    pub ridge: f64,
    /// The polyline's `points` (view-box units).
    pub points: Vec<(f64, f64)>,
    /// Where its label goes (the ceiling's right end).
    pub label_at: (f64, f64),
}

/// A kernel as a point.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartPoint {
    pub rank: i64,
    pub kernel: String,
    pub intensity: f64,
    pub tflops: f64,
    pub time_us: f64,
    pub pct_of_roof: Option<f64>,
    pub dtype: Option<Dtype>,
    pub calls: u64,
    pub x: f64,
    pub y: f64,
    pub r: f64,
    /// Its kernel's events (never redacted: the query needs the real name).
    pub query: EventQuery,
}

impl ChartPoint {
    /// The hover title: the kernel's name and its figures.
    pub fn title(&self) -> String {
        let roof = self
            .pct_of_roof
            .map(|p| format!(", {} of roof", format::pct(p)))
            .unwrap_or_default();
        let dtype = self
            .dtype
            .map(|d| format!(" ({})", d.as_str()))
            .unwrap_or_default();
        format!(
            "{}\n{} TFLOP/s at {} FLOP/byte{roof}{dtype}\n{} over {} calls",
            self.kernel,
            format::number(self.tflops),
            format::number(self.intensity),
            format::micros(self.time_us),
            format::int(self.calls)
        )
    }
}

/// The whole chart.
#[derive(Clone, Debug, PartialEq)]
pub struct RooflineChart {
    pub rank: i64,
    pub x_axis: LogAxis,
    pub y_axis: LogAxis,
    pub x_ticks: Vec<Tick>,
    pub y_ticks: Vec<Tick>,
    pub roofs: Vec<RoofLine>,
    /// Longest first (drawn first, so the short ones stay on top).
    pub points: Vec<ChartPoint>,
    /// Kernels with figures not drawn: zero FLOPs or bytes (off log axes), or beyond [`MAX_POINTS`].
    pub left_out: usize,
}

fn plot_x(axis: &LogAxis, v: f64) -> f64 {
    LEFT + axis.frac(v) * (WIDTH - LEFT - RIGHT)
}

fn plot_y(axis: &LogAxis, v: f64) -> f64 {
    HEIGHT - BOTTOM - axis.frac(v) * (HEIGHT - TOP - BOTTOM)
}

/// The element types whose roof is drawn: those of the kernels drawn, else the highest peak there is.
fn roof_dtypes(r: &RankRoofline, points: &[ChartPoint]) -> Vec<Dtype> {
    let mut used: Vec<Dtype> = points
        .iter()
        .filter_map(|p| p.dtype)
        .filter(|d| r.roof.ridge(*d).is_some_and(|x| x > 0.0))
        .collect();
    used.sort();
    used.dedup();
    if used.is_empty() {
        let best = [Dtype::Bf16, Dtype::Fp16, Dtype::Tf32, Dtype::Fp32]
            .into_iter()
            .find(|d| r.roof.ridge(*d).is_some_and(|x| x > 0.0));
        used.extend(best);
    }
    used
}

/// The kernels' events: that name on that rank, longest first.
pub fn kernel_query(rank: i64, kernel: &str) -> EventQuery {
    EventQuery {
        ranks: vec![rank],
        kinds: vec![EventKind::Kernel],
        names: vec![kernel.to_string()],
        sort: SortBy::Duration,
        descending: true,
        ..EventQuery::default()
    }
}

/// A roof's polyline: from the left edge along the memory slope (from where it enters the plot) to
/// the ridge point, then flat to the right edge; clipped to the plot.
fn roof_line(d: Dtype, peak: f64, gbps: f64, x: &LogAxis, y: &LogAxis) -> RoofLine {
    let ridge = peak * 1e3 / gbps;
    // Memory roof: TFLOP/s = intensity × GB/s / 1000; it enters the plot at the bottom edge or the left.
    let start = x.min().max(y.min() * 1e3 / gbps);
    let mut points = Vec::new();
    if start < ridge.min(x.max()) {
        points.push((start, start * gbps / 1e3));
    }
    if ridge <= x.max() {
        points.push((ridge.max(x.min()), peak));
        points.push((x.max(), peak));
    } else {
        points.push((x.max(), x.max() * gbps / 1e3));
    }
    let at = |(i, t): (f64, f64)| (plot_x(x, i), plot_y(y, t));
    let placed: Vec<(f64, f64)> = points.into_iter().map(at).collect();
    let label_at = placed.last().copied().unwrap_or((0.0, 0.0));
    RoofLine {
        dtype: d,
        peak_tflops: peak,
        ridge,
        points: placed,
        label_at,
    }
}

/// The chart of one rank's roofline; `None` when no kernel has both intensity and TFLOP/s above zero.
pub fn roofline_chart(r: &RankRoofline) -> Option<RooflineChart> {
    let mut drawn: Vec<_> = r
        .kernels
        .iter()
        .filter(|k| k.calls_with_figures > 0)
        .filter_map(|k| {
            let i = k.judged.intensity?;
            (i > 0.0 && i.is_finite() && k.judged.tflops > 0.0 && k.judged.tflops.is_finite())
                .then_some((k, i))
        })
        .collect();
    let with_figures = r
        .kernels
        .iter()
        .filter(|k| k.calls_with_figures > 0)
        .count();
    drawn.sort_by(|a, b| {
        b.0.time_with_figures_us
            .total_cmp(&a.0.time_with_figures_us)
    });
    drawn.truncate(MAX_POINTS);
    let left_out = with_figures - drawn.len();
    if drawn.is_empty() {
        return None;
    }
    let mut points: Vec<ChartPoint> = drawn
        .iter()
        .map(|(k, i)| ChartPoint {
            rank: r.rank,
            kernel: k.name.clone(),
            intensity: *i,
            tflops: k.judged.tflops,
            time_us: k.time_with_figures_us,
            pct_of_roof: k.judged.pct_of_roof,
            dtype: k.judged.dtype,
            calls: k.calls_with_figures,
            x: 0.0,
            y: 0.0,
            r: 0.0,
            query: kernel_query(r.rank, &k.name),
        })
        .collect();
    let dtypes = roof_dtypes(r, &points);
    let peaks: Vec<(Dtype, f64)> = dtypes
        .iter()
        .filter_map(|d| Some((*d, r.roof.peaks.of(*d)?)))
        .collect();
    let x_axis = LogAxis::fit(
        points
            .iter()
            .map(|p| p.intensity)
            .chain(dtypes.iter().filter_map(|d| r.roof.ridge(*d))),
    )?;
    let y_axis = LogAxis::fit(
        points
            .iter()
            .map(|p| p.tflops)
            .chain(peaks.iter().map(|p| p.1)),
    )?;
    let longest = points.iter().map(|p| p.time_us).fold(0.0, f64::max);
    for p in &mut points {
        p.x = plot_x(&x_axis, p.intensity);
        p.y = plot_y(&y_axis, p.tflops);
        let share = if longest > 0.0 {
            p.time_us / longest
        } else {
            0.0
        };
        // Area by time.
        p.r = R_MIN + (R_MAX - R_MIN) * share.max(0.0).sqrt();
    }
    let roofs = peaks
        .iter()
        .map(|(d, peak)| roof_line(*d, *peak, r.roof.memory_gbps, &x_axis, &y_axis))
        .collect();
    let ticks = |axis: &LogAxis, place: fn(&LogAxis, f64) -> f64| {
        axis.ticks()
            .into_iter()
            .map(|(v, label)| Tick {
                at: place(axis, v),
                label,
            })
            .collect()
    };
    Some(RooflineChart {
        rank: r.rank,
        x_ticks: ticks(&x_axis, plot_x),
        y_ticks: ticks(&y_axis, plot_y),
        x_axis,
        y_axis,
        roofs,
        points,
        left_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_spans_whole_decades_and_places_values_on_a_log_scale() {
        let a = LogAxis::fit([0.5, 3.0, 250.0, 0.0, f64::NAN]).unwrap();
        assert_eq!(
            (a.lo, a.hi),
            (-1, 3),
            "0.5 → 10^-1, 250 → 10^3; zero and NaN ignored"
        );
        assert!((a.frac(0.1) - 0.0).abs() < 1e-12);
        assert!((a.frac(1000.0) - 1.0).abs() < 1e-12);
        assert!(
            (a.frac(10.0) - 0.5).abs() < 1e-12,
            "10 is half-way from 0.1 to 1000"
        );
        let labels: Vec<String> = a.ticks().into_iter().map(|t| t.1).collect();
        assert_eq!(labels, ["0.1", "1", "10", "100", "1000"]);
        assert_eq!(LogAxis::fit([5.0]).map(|a| (a.lo, a.hi)), Some((0, 1)));
        assert_eq!(LogAxis::fit([0.0, -1.0]), None);
        let wide = LogAxis { lo: -6, hi: 12 };
        assert!(wide.ticks().len() <= 10, "many decades: every few");
        assert_eq!(decade_label(6), "1e6");
        assert_eq!(decade_label(-2), "0.01");
    }

    #[test]
    fn roof_bends_at_the_ridge_point_and_follows_the_memory_slope_before_it() {
        // 100 TFLOP/s over 1000 GB/s: ridge at 100 FLOP/byte.
        let x = LogAxis { lo: -1, hi: 4 };
        let y = LogAxis { lo: -2, hi: 3 };
        let roof = roof_line(Dtype::Bf16, 100.0, 1000.0, &x, &y);
        assert_eq!(roof.ridge, 100.0);
        assert_eq!(roof.points.len(), 3);
        // The bend is at (100 FLOP/byte, 100 TFLOP/s).
        let (bx, by) = roof.points[1];
        assert!((bx - plot_x(&x, 100.0)).abs() < 1e-9);
        assert!((by - plot_y(&y, 100.0)).abs() < 1e-9);
        // The slope starts at the left edge: 0.1 FLOP/byte × 1000 GB/s = 0.1 TFLOP/s.
        assert!((roof.points[0].0 - LEFT).abs() < 1e-9);
        assert!((roof.points[0].1 - plot_y(&y, 0.1)).abs() < 1e-9);
        // Flat to the right edge.
        assert!((roof.points[2].0 - (WIDTH - RIGHT)).abs() < 1e-9);
        assert_eq!(roof.points[2].1, by);
        // A memory slope below the plot's floor enters at the bottom edge.
        let y = LogAxis { lo: 0, hi: 3 };
        let roof = roof_line(Dtype::Bf16, 100.0, 1000.0, &x, &y);
        assert!((roof.points[0].1 - (HEIGHT - BOTTOM)).abs() < 1e-9);
        assert!(
            (roof.points[0].0 - plot_x(&x, 1.0)).abs() < 1e-9,
            "1 TFLOP/s at 1 FLOP/byte"
        );
    }
}
