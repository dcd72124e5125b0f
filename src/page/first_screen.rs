//! What the first screen after a load says: the compact header (trace, device, ranks, span, and a
//! details line of bookkeeping) and the verdict card (main finding, bottleneck, the top findings with
//! their impact). Plain view models; `ui::shell` draws them.

use crate::protocol::LoadedSet;
use crate::report::diagnosis::DiagnosisReport;
use crate::report::findings::Finding;
use crate::report::format;
use crate::report::rich_text::RichText;

/// Findings the verdict card lists (the report has them all).
pub const VERDICT_FINDINGS: usize = 3;

/// The compact header of the loaded set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceHeader {
    /// The file, or "N files" (with the first and last name).
    pub trace: String,
    /// The first device named, if any.
    pub device: Option<String>,
    pub ranks: usize,
    /// The longest span of a rank, µs.
    pub span_us: f64,
    /// "3 files · 12.3 MB of JSON read in 1.20 s · worker memory 40 MB".
    pub details: String,
}

impl TraceHeader {
    pub fn of(set: &LoadedSet) -> TraceHeader {
        let trace = match set.ranks.as_slice() {
            [] => String::new(),
            [one] => one.file.clone(),
            [first, .., last] => {
                format!("{} files ({} … {})", set.ranks.len(), first.file, last.file)
            }
        };
        let device = set
            .ranks
            .iter()
            .find_map(|r| r.device.clone().or_else(|| r.summary.device.clone()));
        let span_us = set
            .ranks
            .iter()
            .map(|r| r.summary.span_us)
            .fold(0.0, f64::max);
        let file_bytes: u64 = set.ranks.iter().map(|r| r.file_bytes).sum();
        let text_bytes: u64 = set.ranks.iter().map(|r| r.text_bytes).sum();
        let mut details = format!(
            "{} read ({} of JSON) in {}",
            format::bytes(file_bytes),
            format::bytes(text_bytes),
            format::millis(set.load_ms)
        );
        if set.worker_memory_bytes > 0 {
            details.push_str(&format!(
                " · worker memory {}",
                format::bytes(set.worker_memory_bytes)
            ));
        }
        TraceHeader {
            trace,
            device,
            ranks: set.ranks.len(),
            span_us,
            details,
        }
    }
}

/// One finding of the verdict card.
#[derive(Clone, Debug, PartialEq)]
pub struct VerdictFinding {
    /// The finding's id (`data-finding`), which its evidence links share.
    pub id: String,
    pub title: String,
    /// "≈12.3% of the GPU window · 4.10 ms/step", or empty when the finding has no measured impact.
    pub impact: String,
    /// Share of the GPU time it could recover, percent (the bar's width), 0 without one.
    pub impact_pct: f64,
}

/// The verdict card: the answer, before any detail.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// What the load lost and what the figures still mean: the card's first line when the load lost
    /// data (the report's `context.data_loss`).
    pub data_loss: Option<String>,
    /// The main finding as plain text (code spans shown without their backticks).
    pub main_finding: String,
    /// The main finding's id, `none` without one.
    pub main_finding_id: String,
    /// The bottleneck's label (`Compute-bound`, ...) and why, `Undetermined` without one.
    pub bottleneck: String,
    pub bottleneck_reason: String,
    /// The first [`VERDICT_FINDINGS`] findings, largest recoverable time first (the report's order).
    pub findings: Vec<VerdictFinding>,
    /// Findings the card leaves to the report.
    pub more: usize,
}

fn impact(f: &Finding, ranks: usize) -> (String, f64) {
    let pct = f
        .impact
        .pct_of_gpu_time
        .filter(|p| p.is_finite() && *p > 0.0);
    (
        f.impact.parts(ranks).join(" · "),
        pct.unwrap_or(0.0).clamp(0.0, 100.0),
    )
}

impl Verdict {
    pub fn new(r: &DiagnosisReport) -> Verdict {
        let (bottleneck, bottleneck_reason) = match &r.bottleneck {
            Some(b) => (b.kind.label().to_string(), b.reason.to_markdown()),
            None => ("Undetermined".to_string(), String::new()),
        };
        let findings = r
            .findings
            .iter()
            .take(VERDICT_FINDINGS)
            .map(|f| {
                let (impact, impact_pct) = impact(f, r.context.windows.len());
                VerdictFinding {
                    id: f.id.as_str().to_string(),
                    title: f.title.to_markdown(),
                    impact,
                    impact_pct,
                }
            })
            .collect();
        Verdict {
            data_loss: r.context.data_loss.as_ref().map(RichText::plain),
            main_finding: r.main_finding.plain(),
            main_finding_id: r
                .main_finding_id
                .map_or("none".into(), |i| i.as_str().to_string()),
            bottleneck,
            bottleneck_reason,
            findings,
            more: r.findings.len().saturating_sub(VERDICT_FINDINGS),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::RankSummary;
    use crate::report::findings::{FindingId, Impact};

    fn finding(id: FindingId, pct: Option<f64>, ms: Option<f64>) -> Finding {
        Finding {
            id,
            headline: String::new().into(),
            title: format!("title of {}", id.as_str()).into(),
            severity: crate::report::findings::Severity::Info,
            threshold: String::new().into(),
            measured: String::new().into(),
            value: 0.0,
            impact: Impact {
                pct_of_gpu_time: pct,
                ms_per_step: ms,
                time_ns: 0,
            },
            explanation: String::new().into(),
            actions: Vec::new(),
            evidence: Vec::new(),
            filter: None,
        }
    }

    #[test]
    fn the_verdict_lists_the_first_findings_with_their_impact() {
        let ids = FindingId::ALL;
        let report = DiagnosisReport {
            main_finding: "GPU idle 40%".into(),
            main_finding_id: Some(ids[0]),
            findings: vec![
                finding(ids[0], Some(40.0), Some(2.5)),
                finding(ids[1], None, None),
                finding(ids[2], Some(250.0), None),
                finding(ids[3], Some(1.0), None),
            ],
            ..Default::default()
        };
        let v = Verdict::new(&report);
        assert_eq!(v.main_finding, "GPU idle 40%");
        assert_eq!(v.main_finding_id, ids[0].as_str());
        assert_eq!(v.bottleneck, "Undetermined");
        assert_eq!(v.findings.len(), VERDICT_FINDINGS);
        assert_eq!(v.more, 1);
        assert_eq!(
            v.findings[0].impact,
            "≈40.0% of the GPU window · 2.50 ms/step"
        );
        assert_eq!(v.findings[0].impact_pct, 40.0);
        assert_eq!(
            (v.findings[1].impact.as_str(), v.findings[1].impact_pct),
            ("", 0.0)
        );
        assert_eq!(v.findings[2].impact_pct, 100.0, "the bar never overflows");
        assert_eq!(v.findings[1].id, ids[1].as_str());
        assert_eq!(v.data_loss, None);
        let none = Verdict::new(&DiagnosisReport::default());
        assert_eq!((none.main_finding_id.as_str(), none.more), ("none", 0));
    }

    #[test]
    fn data_loss_comes_first_and_the_headline_is_plain_text() {
        let mut report = DiagnosisReport {
            main_finding: "`Memcpy DtoH` (pageable) blocks the host 12% of the window".into(),
            ..Default::default()
        };
        report.context.data_loss = Some("The file ends mid-event after 300 KB".into());
        let v = Verdict::new(&report);
        assert_eq!(
            v.main_finding,
            "Memcpy DtoH (pageable) blocks the host 12% of the window"
        );
        assert_eq!(
            v.data_loss.as_deref(),
            Some("The file ends mid-event after 300 KB")
        );
    }

    #[test]
    fn the_header_names_the_files_and_the_longest_span() {
        let rank = |file: &str, span_us: f64| RankSummary {
            rank: 0,
            rank_source: "load order".into(),
            file: file.into(),
            device: None,
            file_bytes: 1000,
            text_bytes: 4000,
            load_ms: 5.0,
            summary: serde_json::from_value(serde_json::json!({
                "events": 1, "categories": [], "kernels": 0, "kernel_time_us": 0.0,
                "top_kernels": [], "distinct_kernels": 0, "span_us": span_us,
                "device": "A100", "rank": null, "world_size": null
            }))
            .unwrap(),
            diagnostics: Vec::new(),
        };
        let set = LoadedSet {
            ranks: vec![
                rank("a.json", 10.0),
                rank("b.json", 30.0),
                rank("c.json", 20.0),
            ],
            load_ms: 1200.0,
            worker_memory_bytes: 0,
            ..Default::default()
        };
        let h = TraceHeader::of(&set);
        assert_eq!(h.trace, "3 files (a.json … c.json)");
        assert_eq!(h.device.as_deref(), Some("A100"));
        assert_eq!((h.ranks, h.span_us), (3, 30.0));
        assert!(h.details.contains("of JSON"), "{}", h.details);
        assert!(!h.details.contains("worker memory"));
        let one = LoadedSet {
            ranks: vec![rank("only.json", 1.0)],
            worker_memory_bytes: 1 << 20,
            ..Default::default()
        };
        let h = TraceHeader::of(&one);
        assert_eq!(h.trace, "only.json");
        assert!(h.details.contains("worker memory"));
    }
}
