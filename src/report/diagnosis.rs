//! The diagnosis report in the fixed form: main finding, top kernels, bottleneck, recommendations.

use serde::{Deserialize, Serialize};
use std::fmt::Write;

use super::bottleneck::{classify, Bottleneck, BottleneckKind};
use super::findings::{EvidenceKind, EvidenceRef, Finding, FindingKind, Severity};
use super::gather::{gather, gather_with};
use super::inputs::{pct, DiagnosisInputs};
use super::markdown::code_cell;
use super::redact::{redacted_name, replace_all};
use super::rules::{evaluate, short_name, short_names};
use crate::analysis::all::{AllAnalyses, AnalysisOptions};
use crate::table::TraceSet;

/// How many kernels the report's table lists.
pub const REPORT_TOP_KERNELS: usize = 5;

/// The deeper views the page and CLI offer after the report.
pub const DEEPER_ANALYSES: [&str; 9] = [
    "kernel breakdown by type and rank",
    "temporal breakdown (compute / non-compute / idle)",
    "idle time per stream (host wait, kernel wait)",
    "communication/compute overlap",
    "straggler ranks",
    "kernel launch statistics and queue length",
    "memory-copy bandwidth",
    "frequent kernel sequences",
    "critical path of a step",
];

/// One row of the report's top-kernels table (all ranks together).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopKernel {
    pub name: String,
    pub calls: u64,
    pub total_us: f64,
    pub avg_us: f64,
    /// Share of the total kernel time, percent.
    pub pct_of_kernel_time: f64,
    pub evidence: Vec<EvidenceRef>,
}

/// The report as plain data (rendered to Markdown by [`DiagnosisReport::to_markdown`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DiagnosisReport {
    /// One sentence.
    pub main_finding: String,
    /// Id of the finding the main sentence states (`None` when nothing was found).
    pub main_finding_id: Option<String>,
    pub top_kernels: Vec<TopKernel>,
    pub bottleneck: Option<Bottleneck>,
    /// Every finding, most important first; the recommendations are their actions.
    pub findings: Vec<Finding>,
    pub deeper_analyses: Vec<String>,
    pub ranks: Vec<i64>,
    /// Names were replaced by hashes.
    pub redacted: bool,
    /// Kernel and op names the report mentions (for redaction); not exported.
    #[serde(skip)]
    pub names: Vec<(EvidenceKind, String)>,
}

/// Diagnoses a set of ranks (runs the analyses in exact mode).
pub fn diagnose(set: &TraceSet) -> DiagnosisReport {
    diagnose_inputs(&gather(set))
}

/// Diagnoses a set of ranks from analyses already run on it (`analyze(set, opts)`, exact mode).
pub fn diagnose_with(set: &TraceSet, all: &AllAnalyses, opts: &AnalysisOptions) -> DiagnosisReport {
    diagnose_inputs(&gather_with(set, all, opts))
}

/// Whether a finding of this kind explains a bottleneck of that type (CPU: data loading, host wait,
/// launch overhead, syncs; communication; memory traffic; compute: a dominant kernel).
pub fn explains_bottleneck(bottleneck: BottleneckKind, finding: FindingKind) -> bool {
    match bottleneck {
        BottleneckKind::Cpu => matches!(
            finding,
            FindingKind::DataLoading
                | FindingKind::HostBound
                | FindingKind::LaunchOverhead
                | FindingKind::Synchronization
        ),
        BottleneckKind::Communication => finding == FindingKind::Communication,
        BottleneckKind::Memory => finding == FindingKind::MemoryTraffic,
        BottleneckKind::Compute => finding == FindingKind::DominantKernel,
        BottleneckKind::Undetermined => false,
    }
}

/// The report of already gathered figures (pure; used by the tests of the rules).
pub fn diagnose_inputs(inputs: &DiagnosisInputs) -> DiagnosisReport {
    let findings = evaluate(inputs);
    let bottleneck = classify(inputs);
    let top_kernels: Vec<TopKernel> = inputs
        .kernels
        .iter()
        .take(REPORT_TOP_KERNELS)
        .map(|k| TopKernel {
            name: k.name.clone(),
            calls: k.calls,
            total_us: k.total_ns as f64 / 1000.0,
            avg_us: k.total_ns as f64 / 1000.0 / k.calls.max(1) as f64,
            pct_of_kernel_time: pct(k.total_ns, inputs.kernel_time_ns),
            evidence: k.evidence.clone(),
        })
        .collect();
    // A straggler explains the other ranks' communication waits: it is stated first when present.
    // Otherwise the main finding is the most important one that explains the bottleneck type, so the
    // sentence and the "Bottleneck" section agree; then the most important finding of any kind.
    let explains = |k: FindingKind| explains_bottleneck(bottleneck.kind, k);
    let main = findings
        .iter()
        .find(|f| f.kind == FindingKind::Straggler)
        .or_else(|| {
            findings
                .iter()
                .find(|f| f.severity >= Severity::Warning && explains(f.kind))
        })
        .or_else(|| {
            findings
                .iter()
                .find(|f| f.kind != FindingKind::TraceLimitation)
        })
        .or_else(|| findings.first());
    let main_finding = match main {
        Some(f) => {
            let mut s = format!("{}: {}", f.title, f.measured);
            let mut imp = Vec::new();
            if let Some(p) = f.impact.pct_of_gpu_time.filter(|p| *p > 0.0) {
                imp.push(format!("≈{p:.1}% of GPU time"));
            }
            if let Some(m) = f.impact.ms_per_step.filter(|m| *m > 0.0) {
                imp.push(format!("{m:.2} ms per step"));
            }
            if !imp.is_empty() {
                let _ = write!(s, " ({})", imp.join(", "));
            }
            s.push('.');
            s
        }
        None => format!(
            "No major inefficiency found; {} ({}).",
            bottleneck.kind.label(),
            bottleneck.reason
        ),
    };
    let mut names: Vec<(EvidenceKind, String)> = Vec::new();
    for k in &inputs.kernels {
        names.push((EvidenceKind::Kernel, k.name.clone()));
    }
    for o in &inputs.data_loader_ops {
        names.push((EvidenceKind::Op, o.name.clone()));
    }
    for s in &inputs.syncs {
        for (c, _) in &s.callers {
            for part in c.split(" > ") {
                names.push((EvidenceKind::Op, part.to_string()));
            }
        }
    }
    names.sort();
    names.dedup();
    DiagnosisReport {
        main_finding,
        main_finding_id: main.map(|f| f.id.clone()),
        top_kernels,
        bottleneck: Some(bottleneck),
        findings,
        deeper_analyses: DEEPER_ANALYSES.iter().map(|s| s.to_string()).collect(),
        ranks: inputs.ranks.iter().map(|r| r.rank).collect(),
        redacted: false,
        names,
    }
}

/// The redacted form of an evidence name: kernels, copies, ops and runtime calls are hashed; ranks and
/// streams (`rank 3`, `stream 7`) are kept.
fn redact_evidence(kind: EvidenceKind, name: &str) -> String {
    match kind {
        EvidenceKind::Kernel => redacted_name("kernel", name),
        EvidenceKind::Op => redacted_name("op", name),
        EvidenceKind::Memory
        | EvidenceKind::Runtime
        | EvidenceKind::Stream
        | EvidenceKind::Rank => name.to_string(),
    }
}

impl DiagnosisReport {
    /// The report in the fixed Markdown form.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "## Trace Analysis Summary\n");
        let _ = writeln!(out, "**Main Finding**: {}\n", self.main_finding);
        let _ = writeln!(out, "### Top GPU Kernels (by time)\n");
        if self.top_kernels.is_empty() {
            let _ = writeln!(out, "No GPU kernels in this trace.\n");
        } else {
            let _ = writeln!(
                out,
                "| % Time | Calls | Avg (μs) | Kernel |\n|---:|---:|---:|---|"
            );
            let names: Vec<&str> = self.top_kernels.iter().map(|k| k.name.as_str()).collect();
            for (k, shown) in self.top_kernels.iter().zip(short_names(&names)) {
                let _ = writeln!(
                    out,
                    "| {:.1} | {} | {:.2} | {} |",
                    k.pct_of_kernel_time,
                    k.calls,
                    k.avg_us,
                    code_cell(&shown)
                );
            }
            out.push('\n');
        }
        match &self.bottleneck {
            Some(b) => {
                let _ = writeln!(out, "### Bottleneck: {}\n\n{}.\n", b.kind.label(), b.reason);
            }
            None => {
                let _ = writeln!(out, "### Bottleneck: Undetermined\n\nNo figures.\n");
            }
        }
        let _ = writeln!(out, "### Recommendations\n");
        if self.findings.is_empty() {
            let _ = writeln!(
                out,
                "1. Nothing crosses a rule's threshold: the GPU is busy with compute; speed up the top \
                 kernels (AMP/TF32, `torch.compile`) or increase the batch size.\n"
            );
        }
        for (n, f) in self.findings.iter().enumerate() {
            let mut imp = Vec::new();
            if let Some(p) = f.impact.pct_of_gpu_time.filter(|p| *p > 0.0) {
                imp.push(format!("≈{p:.1}% of GPU time"));
            }
            if let Some(m) = f.impact.ms_per_step.filter(|m| *m > 0.0) {
                imp.push(format!("{m:.2} ms/step"));
            }
            let imp = if imp.is_empty() {
                String::new()
            } else {
                format!("; impact {}", imp.join(", "))
            };
            let _ = writeln!(
                out,
                "{}. **{}** ({}; threshold: {}{imp}). {}",
                n + 1,
                f.title,
                f.measured,
                f.threshold,
                f.explanation
            );
            for a in &f.actions {
                let _ = writeln!(out, "   - {a}");
            }
            if !f.evidence.is_empty() {
                let ev: Vec<String> = f
                    .evidence
                    .iter()
                    .take(3)
                    .map(|e| {
                        let name = match e.kind {
                            EvidenceKind::Rank => e.name.clone(),
                            _ => code_cell(&short_name(&e.name)),
                        };
                        match e.rank {
                            Some(r) if e.kind != EvidenceKind::Rank => {
                                format!("{name} on rank {r} ({} events)", e.count)
                            }
                            _ => name,
                        }
                    })
                    .collect();
                let _ = writeln!(out, "   - Evidence: {}", ev.join("; "));
            }
        }
        let _ = writeln!(
            out,
            "\n**Want deeper analysis?** I can also show: {}.",
            self.deeper_analyses.join(", ")
        );
        out
    }

    /// The report as JSON (same content as the Markdown).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into())
    }

    /// The report with kernel and op names replaced by stable short hashes (`kernel_3fa2c1`, `op_9b01de`).
    pub fn redacted(&self) -> DiagnosisReport {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for (kind, name) in &self.names {
            let prefix = if *kind == EvidenceKind::Kernel {
                "kernel"
            } else {
                "op"
            };
            let to = redacted_name(prefix, name);
            pairs.push((name.clone(), to.clone()));
            let short = short_name(name);
            if short.len() >= 4 {
                pairs.push((short, to));
            }
        }
        pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        pairs.dedup_by(|a, b| a.0 == b.0);
        let r = |s: &str| replace_all(s, &pairs);
        let mut out = self.clone();
        out.main_finding = r(&out.main_finding);
        for k in &mut out.top_kernels {
            k.name = redacted_name("kernel", &k.name);
            for e in &mut k.evidence {
                e.name = k.name.clone();
            }
        }
        for f in &mut out.findings {
            f.title = r(&f.title);
            f.measured = r(&f.measured);
            f.explanation = r(&f.explanation);
            for a in &mut f.actions {
                *a = r(a);
            }
            for e in &mut f.evidence {
                e.name = redact_evidence(e.kind, &e.name);
            }
            if let Some(filter) = &mut f.filter {
                if let Some(kind) = filter.kind {
                    for n in &mut filter.names {
                        *n = redact_evidence(kind, n);
                    }
                }
            }
        }
        out.redacted = true;
        out.names.clear();
        out
    }
}
