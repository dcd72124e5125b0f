//! The diagnosis report as a typed view model, one part per section of the page's `ReportView`.
//!
//! It holds what [`DiagnosisReport::to_markdown`] writes, section by section, so that the page draws
//! the same report as components (no HTML strings) and a new section is one more field here and one
//! more component in `ui::report_view`. Prose is [`RichText`]: the components draw its parts (text,
//! code, names) as the rules typed them.

use crate::report::diagnosis::DiagnosisReport;
use crate::report::findings::EvidenceKind;
use crate::report::findings::Finding;
use crate::report::rich_text::{name_as, NameKind, RichText};
use crate::report::rules::{short_name, short_names};
use crate::rich;

/// One row of the top-kernels table.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelLine {
    /// The full name (the row's `data-kernel`).
    pub name: String,
    /// The display name (template arguments dropped, unless two names would collide).
    pub shown: String,
    pub pct: f64,
    pub calls: u64,
    pub avg_us: f64,
}

/// One numbered recommendation.
#[derive(Clone, Debug, PartialEq)]
pub struct FindingLine {
    pub id: String,
    pub title: RichText,
    /// `measured; threshold: …; impact …` (the parenthesis after the title).
    pub detail: RichText,
    pub explanation: RichText,
    pub actions: Vec<RichText>,
    /// `Evidence: …` (up to three), when the finding has any.
    pub evidence: Option<RichText>,
}

/// One row of the idle attribution.
#[derive(Clone, Debug, PartialEq)]
pub struct IdleLine {
    /// Stable text of the cause (`data_loading`, ...).
    pub cause: String,
    pub label: String,
    pub time_us: f64,
    pub pct_of_window: f64,
    /// "`aten::mm` (3.1 ms), ..."
    pub ops: RichText,
}

/// The report, section by section.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportModel {
    pub main_finding: RichText,
    /// The main finding's id (`data-finding`), `none` without one.
    pub main_finding_id: String,
    /// "Analysed: steps 3-7 ..." (the context stage's line).
    pub analysed: String,
    /// What the trace holds, as `report --json` names it.
    pub holds: Vec<String>,
    /// Where the GPU idle time goes, one row per cause.
    pub idle: Vec<IdleLine>,
    /// Notes that are not recommendations.
    pub notes: Vec<RichText>,
    pub kernels: Vec<KernelLine>,
    /// Heading word(s) and reason of the bottleneck (`Undetermined`, `No figures` without one).
    pub bottleneck: (String, RichText),
    pub findings: Vec<FindingLine>,
    pub deeper_analyses: String,
    pub redacted: bool,
}

/// What the report says when no rule fires (one text for the page and the Markdown).
pub use crate::report::diagnosis::NOTHING_FOUND;

impl ReportModel {
    pub fn new(r: &DiagnosisReport) -> Self {
        let names: Vec<&str> = r.top_kernels.iter().map(|k| k.name.as_str()).collect();
        let kernels = r
            .top_kernels
            .iter()
            .zip(short_names(&names))
            .map(|(k, shown)| KernelLine {
                name: k.name.clone(),
                shown,
                pct: k.pct_of_kernel_time,
                calls: k.calls,
                avg_us: k.avg_us,
            })
            .collect();
        let bottleneck = match &r.bottleneck {
            Some(b) => (b.kind.label().to_string(), rich!(&b.reason, ".")),
            None => ("Undetermined".to_string(), rich!("No figures.")),
        };
        ReportModel {
            main_finding: r.main_finding.clone(),
            main_finding_id: r
                .main_finding_id
                .map_or("none".into(), |i| i.as_str().to_string()),
            analysed: r.context.analysed.clone(),
            holds: r
                .context
                .holds
                .iter()
                .map(|h| crate::stable_name::serde_name(h).to_string())
                .collect(),
            idle: r
                .idle_attribution
                .iter()
                .map(|s| IdleLine {
                    cause: s.cause.as_str().to_string(),
                    label: s.cause.label().to_string(),
                    time_us: s.time_us,
                    pct_of_window: s.pct_of_window,
                    ops: RichText::join(
                        s.top_ops.iter().take(3).map(|o| {
                            rich!(
                                name_as(NameKind::Op, &o.name, short_name(&o.name)),
                                format!(
                                    " ({})",
                                    crate::report::wording::dur((o.time_us * 1000.0) as i64)
                                )
                            )
                        }),
                        ", ",
                    ),
                })
                .collect(),
            notes: r.notes.clone(),
            kernels,
            bottleneck,
            findings: r
                .findings
                .iter()
                .map(|f| finding_line(f, r.context.windows.len()))
                .collect(),
            deeper_analyses: r.deeper_analyses.join(", "),
            redacted: r.redacted,
        }
    }
}

fn impact_text(f: &Finding, ranks: usize) -> String {
    let imp = f.impact.parts(ranks);
    if imp.is_empty() {
        String::new()
    } else {
        format!("; impact {}", imp.join(", "))
    }
}

/// An evidence reference's name as the report shows it: a rank as text, else the short name of
/// its kind (kernels, copies, ops, runtime calls).
pub fn evidence_name(kind: EvidenceKind, name: &str) -> RichText {
    let shown = short_name(name).replace('`', "'");
    match kind {
        EvidenceKind::Rank => rich!(name.to_string()),
        EvidenceKind::Kernel => rich!(name_as(NameKind::Kernel, name, shown)),
        EvidenceKind::Op => rich!(name_as(NameKind::Op, name, shown)),
        EvidenceKind::Memory => rich!(name_as(NameKind::Copy, name, shown)),
        EvidenceKind::Runtime | EvidenceKind::Stream => {
            rich!(name_as(NameKind::Runtime, name, shown))
        }
    }
}

fn evidence_text(f: &Finding) -> Option<RichText> {
    if f.evidence.is_empty() {
        return None;
    }
    let parts = f.evidence.iter().take(3).map(|e| {
        let name = evidence_name(e.kind, &e.name);
        match e.rank {
            Some(r) if e.kind != EvidenceKind::Rank => {
                rich!(name, format!(" on rank {r} ({} events)", e.count))
            }
            _ => name,
        }
    });
    Some(rich!("Evidence: ", RichText::join(parts, "; ")))
}

fn finding_line(f: &Finding, ranks: usize) -> FindingLine {
    FindingLine {
        id: f.id.as_str().to_string(),
        title: f.title.clone(),
        detail: rich!(
            &f.measured,
            "; threshold: ",
            &f.threshold,
            impact_text(f, ranks)
        ),
        explanation: f.explanation.clone(),
        actions: f.actions.clone(),
        evidence: evidence_text(f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::diagnosis::TopKernel;
    use crate::report::rich_text::kernel;

    #[test]
    fn every_section_holds_what_the_markdown_says() {
        let report = DiagnosisReport {
            main_finding: "GPU idle 40%".into(),
            top_kernels: vec![TopKernel {
                name: "void gemm<float>(int)".into(),
                calls: 3,
                total_us: 30.0,
                avg_us: 10.0,
                pct_of_kernel_time: 75.0,
                evidence: Vec::new(),
            }],
            deeper_analyses: vec!["a".into(), "b".into()],
            ..Default::default()
        };
        let m = ReportModel::new(&report);
        let md = report.to_markdown();
        assert_eq!(m.main_finding, "GPU idle 40%");
        assert_eq!(m.kernels[0].shown, kernel(&m.kernels[0].name).shown());
        assert_eq!(m.kernels[0].shown, "gemm");
        assert_eq!(m.kernels[0].name, "void gemm<float>(int)");
        assert!(md.contains("| 75.0 | 3 | 10.00 | `gemm` |"));
        assert_eq!(m.bottleneck.0, "Undetermined");
        assert_eq!(m.bottleneck.1, "No figures.");
        assert!(md.contains("### Bottleneck: Undetermined\n\nNo figures."));
        assert_eq!(m.deeper_analyses, "a, b");
        assert!(md.contains("I can also show: a, b."));
        assert!(m.findings.is_empty());
        assert!(md.contains(NOTHING_FOUND));
    }
}
