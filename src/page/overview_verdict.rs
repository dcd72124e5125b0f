//! The overview's line from the diagnosis: its main finding, the bottleneck, and where the GPU's
//! analysed window went as one bar (busy, then each idle cause of the idle attribution).
//!
//! Figures: `overview-idle-pct` / `overview-idle-us` per cause (`data-cause`, the cause's stable
//! text), `overview-busy-pct` for the rest of the window.

use super::analyses_view::{Figure, Unit};
use crate::report::attribution::IdleCause;
use crate::report::diagnosis::DiagnosisReport;

/// One piece of the window bar.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowSegment {
    /// `None`: the GPU was busy.
    pub cause: Option<IdleCause>,
    pub label: String,
    /// Share of the analysed window, percent (the segment's width).
    pub pct: Figure,
    /// Its time, µs (`None` for the busy part, which the report gives as a share only).
    pub time: Option<Figure>,
    /// Where it starts, percent of the bar.
    pub start_pct: f64,
}

/// The main finding, the bottleneck and the window bar.
#[derive(Clone, Debug, PartialEq)]
pub struct OverviewVerdict {
    pub main_finding: String,
    pub bottleneck: String,
    pub segments: Vec<WindowSegment>,
}

fn pct_figure(metric: &'static str, value: f64, cause: Option<IdleCause>) -> Figure {
    Figure {
        metric,
        value,
        unit: Unit::Pct,
        context: cause
            .map(|c| vec![("cause", c.as_str().to_string())])
            .unwrap_or_default(),
    }
}

impl OverviewVerdict {
    /// The overview's verdict line from a report (as shown: redacted or not).
    pub fn of(report: &DiagnosisReport) -> OverviewVerdict {
        let idle_pct: f64 = report
            .idle_attribution
            .iter()
            .map(|s| s.pct_of_window)
            .sum();
        let mut segments = Vec::new();
        let mut at = 0.0;
        if !report.idle_attribution.is_empty() {
            let busy = (100.0 - idle_pct).max(0.0);
            segments.push(WindowSegment {
                cause: None,
                label: "GPU busy".into(),
                pct: pct_figure("overview-busy-pct", busy, None),
                time: None,
                start_pct: 0.0,
            });
            at = busy;
        }
        for s in &report.idle_attribution {
            segments.push(WindowSegment {
                cause: Some(s.cause),
                label: format!("idle: {}", s.cause.label()),
                pct: pct_figure("overview-idle-pct", s.pct_of_window, Some(s.cause)),
                time: Some(Figure {
                    metric: "overview-idle-us",
                    value: s.time_us,
                    unit: Unit::Micros,
                    context: vec![("cause", s.cause.as_str().to_string())],
                }),
                start_pct: at,
            });
            at += s.pct_of_window;
        }
        OverviewVerdict {
            main_finding: report.main_finding.to_markdown(),
            bottleneck: report
                .bottleneck
                .as_ref()
                .map_or("Undetermined".into(), |b| b.kind.label().to_string()),
            segments,
        }
    }

    /// What a hover on a segment says: its label and exact figures.
    pub fn hover_text(segment: &WindowSegment) -> String {
        match &segment.time {
            Some(t) => format!(
                "{}: {} ({} of the window)",
                segment.label,
                t.shown(),
                segment.pct.shown()
            ),
            None => format!("{}: {} of the window", segment.label, segment.pct.shown()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::attribution::IdleShare;

    fn share(cause: IdleCause, time_us: f64, pct: f64) -> IdleShare {
        IdleShare {
            cause,
            time_us,
            pct_of_window: pct,
            top_ops: Vec::new(),
        }
    }

    #[test]
    fn the_bar_is_busy_then_each_idle_cause_and_spans_the_window() {
        let report = DiagnosisReport {
            main_finding: "The GPU waits for the DataLoader".into(),
            idle_attribution: vec![
                share(IdleCause::DataLoading, 300.0, 30.0),
                share(IdleCause::Synchronization, 100.0, 10.0),
            ],
            ..Default::default()
        };
        let v = OverviewVerdict::of(&report);
        assert_eq!(v.main_finding, "The GPU waits for the DataLoader");
        assert_eq!(v.bottleneck, "Undetermined");
        let widths: Vec<f64> = v.segments.iter().map(|s| s.pct.value).collect();
        assert_eq!(widths, [60.0, 30.0, 10.0]);
        let starts: Vec<f64> = v.segments.iter().map(|s| s.start_pct).collect();
        assert_eq!(starts, [0.0, 60.0, 90.0]);
        assert_eq!(
            v.segments[1].pct.context,
            [("cause", "data_loading".into())]
        );
        assert_eq!(v.segments[1].time.as_ref().unwrap().value, 300.0);
        assert!(OverviewVerdict::hover_text(&v.segments[1]).contains("30.0"));
    }

    #[test]
    fn without_an_idle_attribution_there_is_no_bar() {
        let v = OverviewVerdict::of(&DiagnosisReport::default());
        assert!(v.segments.is_empty());
    }
}
