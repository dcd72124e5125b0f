//! The diagnosis report in the fixed form: main finding, top kernels, bottleneck, recommendations.

use crate::report::rich_text::{kernel, RichText};
use crate::rich;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

use super::attribution::IdleCause;
use super::attribution::IdleShare;
use super::bottleneck::{classify, Bottleneck, BottleneckKind};
use super::context::microbench::measured_sentence;
use super::context::{device_line, idle_withheld, trace_lines, TraceContext};
use super::findings::{EvidenceFilter, EvidenceKind, EvidenceRef, Finding, FindingId};
use super::gather::{gather_with, Gathered};
use super::inputs::{pct, DiagnosisInputs};
use super::markdown::code_cell;
use super::redact::redacted_name;

use super::rules::{evaluate, notes, short_name, short_names};
use super::wording::{count, dur};
use crate::analysis::all::{AllAnalyses, AnalysisOptions};
use crate::table::{SkippedFile, TraceSet};

/// How many kernels the report's table lists.
pub const REPORT_TOP_KERNELS: usize = 5;

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
    pub main_finding: RichText,
    /// Id of the finding the main sentence states (`None` when nothing was found).
    pub main_finding_id: Option<FindingId>,
    /// What the trace holds and the window analysed.
    #[serde(default)]
    pub context: TraceContext,
    pub top_kernels: Vec<TopKernel>,
    pub bottleneck: Option<Bottleneck>,
    /// Where the GPU idle time of the analysed window goes: one cause per idle interval, so the
    /// rows sum to the idle total.
    #[serde(default)]
    pub idle_attribution: Vec<IdleShare>,
    /// Every finding, largest recoverable time first; the recommendations are their actions.
    pub findings: Vec<Finding>,
    /// Facts about the trace that are not recommendations.
    #[serde(default)]
    pub notes: Vec<RichText>,
    pub deeper_analyses: Vec<String>,
    pub ranks: Vec<i64>,
    /// Files given with the ranks that could not be loaded: the figures leave their ranks out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_files: Vec<SkippedFile>,
    /// Names were replaced by hashes.
    pub redacted: bool,
}

/// Diagnoses a set of ranks.
pub fn diagnose(set: &TraceSet) -> DiagnosisReport {
    diagnose_with_options(set, &AnalysisOptions::default())
}

/// Diagnoses a set over the ProfilerSteps of `steps` (`None`: the automatic window, as
/// [`diagnose`]), or says what is wrong with the range (a rank without a step in it).
pub fn diagnose_steps(
    set: &TraceSet,
    steps: Option<crate::analysis::step_filter::StepRange>,
) -> Result<DiagnosisReport, String> {
    let opts = AnalysisOptions {
        steps,
        ..AnalysisOptions::default()
    };
    let g = super::gather::gather_steps(set, &opts)?;
    Ok(diagnose_reduced(&g, &set.skipped))
}

/// Diagnoses a set with `opts`; files of the set that could not be loaded are named.
fn diagnose_with_options(set: &TraceSet, opts: &AnalysisOptions) -> DiagnosisReport {
    diagnose_reduced(&gather_with(set, opts), &set.skipped)
}

/// The report of a set's figures (from [`gather_with`], or reduced from its ranks' parts by
/// [`super::gather_parts::gathered_of`]), naming the files of the set that could not be loaded.
pub fn diagnose_reduced(g: &Gathered, skipped: &[SkippedFile]) -> DiagnosisReport {
    let mut report = diagnose_gathered(g);
    report.note_skipped_files(skipped);
    report
}

/// Diagnoses a set of ranks whose analyses were run with `opts` (the report computes its own figures
/// over the analysed window; `opts.steps` fixes that window when set).
pub fn diagnose_with(
    set: &TraceSet,
    _all: &AllAnalyses,
    opts: &AnalysisOptions,
) -> DiagnosisReport {
    diagnose_with_options(set, opts)
}

impl DiagnosisReport {
    /// Records the files that could not be loaded, and says so first among the notes.
    fn note_skipped_files(&mut self, skipped: &[SkippedFile]) {
        let said = skipped.iter().map(|f| {
            RichText::from(format!(
                "{} could not be loaded, so this report leaves its rank out: {}",
                f.file, f.reason
            ))
        });
        self.notes.splice(0..0, said);
        self.skipped_files = skipped.to_vec();
    }
}

/// What the report says when no rule fires.
pub const NOTHING_FOUND: &str =
    "Nothing crosses a rule's threshold: the GPU is kept busy. Speed up the top kernels \
     (bf16/TF32 tensor cores, `torch.compile`) or give each step more work (a larger batch).";

/// What the report says when no rule fires, in the words of the device: CUDA's toolbox (TF32, tensor
/// cores) only where it applies.
pub fn nothing_found(
    kind: crate::trace::dialect::DeviceKind,
    b: Option<&Bottleneck>,
    in_use: &super::inputs::InUse,
) -> String {
    if b.is_some_and(|b| b.kind != BottleneckKind::Compute) {
        // Not kept busy: the bottleneck line says what the device does instead.
        return "No rule's threshold is crossed, and the trace does not show the device computing most of the time: see the bottleneck line and where the idle time goes.".into();
    }
    if kind.has_cuda_toolbox() && (in_use.precision() || in_use.compiled.is_some()) {
        // Precision and compilation already in use: only what is not.
        let mut tools = Vec::new();
        if !in_use.precision() {
            tools.push("bf16/TF32 tensor cores");
        }
        if in_use.compiled.is_none() {
            tools.push("`torch.compile`");
        }
        let how = if tools.is_empty() {
            "shapes the tuned kernels favour, fewer launches".to_string()
        } else {
            tools.join(", ")
        };
        format!("Nothing crosses a rule's threshold: the GPU is kept busy. Speed up the top kernels ({how}) or give each step more work (a larger batch).")
    } else if kind.has_cuda_toolbox() {
        NOTHING_FOUND.to_string()
    } else {
        format!(
            "Nothing crosses a rule's threshold: the {} is kept busy. Speed up the top operations (lower precision where the {} supports it, `torch.compile`) or give each step more work (a larger batch).",
            kind.device_word(),
            kind.device_word()
        )
    }
}

/// A finding below this share (%) of the window never states the main finding.
pub const MAIN_FINDING_MIN_PCT: f64 = 2.0;
/// A finding whose time is under this (ns) states the main finding only when no larger finding
/// can: a sync that blocks a few hundred µs is not what a run is about, whatever its share of a
/// short window.
pub const MAIN_FINDING_MIN_NS: i64 = 1_000_000;

/// When the GPU is busy at least [`super::bottleneck::COMPUTE_BOUND_BUSY_PCT`] of the window, an
/// idle cause under this share (%) of it is a note, not what limits the run: the job is GPU-bound.
pub const MINOR_IDLE_PCT: f64 = 15.0;

/// Whether `f` is an idle cause too small to be the main finding of a run the GPU keeps busy.
pub fn minor_idle(f: &Finding, i: &DiagnosisInputs) -> bool {
    i.time.pct(i.time.busy_ns) >= super::bottleneck::COMPUTE_BOUND_BUSY_PCT
        && BottleneckKind::of_finding(f.id) == Some(BottleneckKind::Cpu)
        && f.impact.pct_of_gpu_time.unwrap_or(0.0) < MINOR_IDLE_PCT
}

/// The size rule for the main finding, in one place: at least [`MAIN_FINDING_MIN_PCT`] of the
/// window, and (`absolute`) at least [`MAIN_FINDING_MIN_NS`].
pub fn big_enough_to_lead(f: &Finding, absolute: bool) -> bool {
    f.impact.pct_of_gpu_time.unwrap_or(0.0) >= MAIN_FINDING_MIN_PCT
        && (!absolute || f.impact.time_ns >= MAIN_FINDING_MIN_NS)
}

/// The finding the main sentence states: a limit of the trace itself, else the largest recoverable
/// time (findings come sorted so) that is big enough ([`big_enough_to_lead`]) and not a minor idle
/// cause of a busy GPU; else one dominant kernel of a busy GPU; else a finding under
/// [`MAIN_FINDING_MIN_NS`], the largest, when nothing larger can lead.
fn pick_main<'a>(findings: &'a [Finding], i: &DiagnosisInputs) -> Option<&'a Finding> {
    let busy = i.time.pct(i.time.busy_ns) >= super::bottleneck::COMPUTE_BOUND_BUSY_PCT;
    let leads = |absolute: bool| {
        findings.iter().find(move |f| {
            f.id.is_about_the_trace()
                || f.id == FindingId::Warmup && f.impact.time_ns == 0
                || big_enough_to_lead(f, absolute) && !minor_idle(f, i)
        })
    };
    leads(true)
        .or_else(|| {
            findings
                .iter()
                .find(|f| busy && f.id == FindingId::DominantKernel)
        })
        .or_else(|| leads(false))
}

/// The report of gathered figures (pure; used by the scenario tests).
pub fn diagnose_gathered(g: &Gathered) -> DiagnosisReport {
    let inputs = &g.inputs;
    let findings = evaluate(inputs, &g.context);
    let main = pick_main(&findings, inputs);
    let bottleneck = classify(inputs, &g.context, main);
    let main_finding = match (measured_sentence(&g.context, inputs), main) {
        (Some(measured), _) => measured,
        (None, Some(f)) => f.headline.clone(),
        (None, None) if super::rules::partial_kernel_mix(inputs, &g.context).is_some() => {
            super::rules::partial_kernel_mix(inputs, &g.context).unwrap_or_default()
        }
        (None, None) if super::bottleneck::partial_record(&g.context) => format!(
            "No finding can be made on the recorded work alone: the {} record is incomplete (see above), so how busy the {} was is unknown.",
            inputs.device_word(),
            inputs.device_word()
        ).into(),
        (None, None) => no_major_inefficiency(inputs, &bottleneck),
    };
    DiagnosisReport {
        main_finding,
        main_finding_id: main.map(|f| f.id),
        context: g.context.clone(),
        top_kernels: top_kernels(inputs),
        bottleneck: Some(bottleneck),
        idle_attribution: if g.context.blocking().is_some() || idle_withheld(&g.context) {
            Vec::new()
        } else {
            inputs.idle.clone()
        },
        notes: notes(inputs, &g.context),
        findings,
        deeper_analyses: crate::analysis::registry::offered()
            .into_iter()
            .map(String::from)
            .collect(),
        ranks: inputs.ranks.iter().map(|r| r.rank).collect(),
        skipped_files: Vec::new(),
        redacted: false,
    }
}

/// "No major inefficiency: GPU busy 96.1% of the window, ...; `gemm` takes 62.0% of kernel time.", or,
/// when the GPU is mostly idle for causes the trace cannot show, that.
fn no_major_inefficiency(i: &DiagnosisInputs, b: &Bottleneck) -> RichText {
    if super::bottleneck::waits_most(i) {
        return rich!(
            "No rule fires, but the device is not computing most of the time: ",
            &b.reason,
            "."
        );
    }
    if b.kind == BottleneckKind::Undetermined && b.idle_pct > 0.0 {
        let why = match i.idle.iter().max_by_key(|s| (s.time_us * 1000.0) as i64).map(|s| s.cause) {
            Some(IdleCause::Other) => format!("the launches of the device work are not linked to it in the trace (no {} correlated with the device operations), so the waits cannot be attributed", i.device_kind.runtime_words()),
            Some(IdleCause::DeviceSide) => format!("the work was already queued, so the {} waited on stream or event dependencies, not on the host", i.device_word()),
            _ => "no single cause explains it".to_string(),
        };
        return format!(
            "The {} is idle {:.1}% of the {} window, and the trace cannot say why: {why}.",
            i.device_word(),
            b.idle_pct,
            if i.device_word() == "GPU" {
                "GPU"
            } else {
                "device"
            },
        )
        .into();
    }
    let top = i.kernels.first().map(|k| {
        rich!(
            "; the top kernel ",
            kernel(&k.name),
            format!(
                " takes {:.1}% of kernel time",
                pct(k.total_ns, i.kernel_time_ns)
            )
        )
    });
    rich!(
        format!(
            "No major inefficiency found: {} (",
            b.kind.label().to_lowercase()
        ),
        &b.reason,
        ")",
        top,
        "."
    )
}

fn top_kernels(inputs: &DiagnosisInputs) -> Vec<TopKernel> {
    inputs
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
        .collect()
}

/// One numbered recommendation: title, what was measured, impact, why, actions, evidence.
fn finding_markdown(out: &mut String, n: usize, f: &Finding, ranks: usize) {
    let imp = f.impact.parts(ranks);
    let imp = if imp.is_empty() {
        String::new()
    } else {
        format!(" {}: {}.", f.id.impact_word(), imp.join(", "))
    };
    if f.id.is_about_the_trace() || f.impact.time_ns == 0 && f.id == FindingId::Warmup {
        let _ = writeln!(
            out,
            "{n}. **{}** ({}).",
            f.explanation.to_markdown(),
            f.measured.to_markdown()
        );
    } else {
        let _ = writeln!(
            out,
            "{n}. **{}**: {}.{imp} {}",
            f.title.to_markdown(),
            f.measured.to_markdown(),
            f.explanation.to_markdown()
        );
    }
    for a in &f.actions {
        let _ = writeln!(out, "   - {}", a.to_markdown());
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
                        format!("{name} on rank {r} ({})", count(e.count, "event"))
                    }
                    _ => name,
                }
            })
            .collect();
        let _ = writeln!(out, "   - Evidence: {}", ev.join("; "));
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
        if let Some(loss) = &self.context.data_loss {
            let _ = writeln!(out, "**{}**\n", loss.to_markdown());
        }
        let _ = writeln!(
            out,
            "**Main Finding**: {}\n",
            self.main_finding.to_markdown()
        );
        let _ = writeln!(out, "*{}.*\n", device_line(&self.context));
        if !self.context.analysed.is_empty() {
            let _ = writeln!(out, "*{}.*\n", self.context.analysed);
        }
        for line in trace_lines(&self.context) {
            let _ = writeln!(out, "> {}\n", line.to_markdown());
        }
        self.top_kernels_markdown(&mut out);
        match &self.bottleneck {
            Some(b) => {
                let _ = writeln!(
                    out,
                    "### Bottleneck: {}\n\n{}.\n",
                    b.kind.label(),
                    b.reason.to_markdown()
                );
            }
            None => {
                let _ = writeln!(out, "### Bottleneck: Undetermined\n\nNo figures.\n");
            }
        }
        self.idle_markdown(&mut out);
        let _ = writeln!(out, "### Recommendations\n");
        if self.findings.is_empty() {
            let _ = writeln!(
                out,
                "1. {}\n",
                nothing_found(
                    self.context.device.kind,
                    self.bottleneck.as_ref(),
                    &self.context.in_use,
                )
            );
        }
        for (n, f) in self.findings.iter().enumerate() {
            finding_markdown(&mut out, n + 1, f, self.context.windows.len());
        }
        if !self.notes.is_empty() {
            let _ = writeln!(out, "\n### Notes\n");
            for note in &self.notes {
                let _ = writeln!(out, "- {}", note.to_markdown());
            }
        }
        let _ = writeln!(
            out,
            "\n**Want deeper analysis?** I can also show: {}.",
            self.deeper_analyses.join(", ")
        );
        out
    }

    fn top_kernels_markdown(&self, out: &mut String) {
        let _ = writeln!(out, "### Top GPU Kernels (by time)\n");
        if self.top_kernels.is_empty() {
            let _ = writeln!(out, "No GPU kernels in this trace.\n");
            return;
        }
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

    fn idle_markdown(&self, out: &mut String) {
        if self.idle_attribution.is_empty() {
            return;
        }
        let _ = writeln!(out, "### Where the GPU idle time goes\n");
        let _ = writeln!(
            out,
            "| Cause | Time | % of window | Host busy in |\n|---|---:|---:|---|"
        );
        for s in &self.idle_attribution {
            let shown = &s.top_ops[..s.top_ops.len().min(3)];
            let ops: Vec<String> = shown
                .iter()
                .zip(short_names(
                    &shown.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(),
                ))
                .map(|(o, name)| {
                    format!(
                        "{} ({})",
                        code_cell(&name),
                        dur((o.time_us * 1000.0) as i64)
                    )
                })
                .collect();
            let _ = writeln!(
                out,
                "| {} | {} | {:.1} | {} |",
                s.cause.label(),
                dur((s.time_us * 1000.0) as i64),
                s.pct_of_window,
                ops.join(", ")
            );
        }
        out.push('\n');
    }

    /// Every text of the report that is prose ([`RichText`]): the main finding, the notes, the
    /// bottleneck's reason, the data loss, each finding's words.
    pub fn texts(&self) -> Vec<&RichText> {
        let mut out = vec![&self.main_finding];
        out.extend(&self.notes);
        out.extend(self.bottleneck.as_ref().map(|b| &b.reason));
        out.extend(&self.context.data_loss);
        out.extend(&self.context.found);
        for f in &self.findings {
            out.extend([
                &f.headline,
                &f.title,
                &f.threshold,
                &f.measured,
                &f.explanation,
            ]);
            out.extend(&f.actions);
        }
        out
    }

    /// The report as JSON (same content as the Markdown).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".into())
    }

    /// The report with kernel, op, module and file names replaced by stable short hashes
    /// (`kernel_3fa2c1`, `op_9b01de`): each name part of its text hashed by its kind.
    pub fn redacted(&self) -> DiagnosisReport {
        let mut out = self.clone();
        out.main_finding = out.main_finding.redacted();
        let skipped = out.skipped_files.len().min(out.notes.len());
        for n in &mut out.notes[skipped..] {
            *n = n.redacted();
        }
        for s in &mut out.idle_attribution {
            for o in &mut s.top_ops {
                o.name = redacted_name("op", &o.name);
            }
        }
        let in_use = &mut out.context.in_use;
        for n in [&mut in_use.low_precision, &mut in_use.tf32]
            .into_iter()
            .flatten()
        {
            *n = redacted_name("kernel", n);
        }
        if let Some(k) = out
            .context
            .repeats
            .as_mut()
            .and_then(|r| r.top_kernel.as_mut())
        {
            k.0 = redacted_name("kernel", &k.0);
        }
        for k in &mut out.top_kernels {
            k.name = redacted_name("kernel", &k.name);
            for e in &mut k.evidence {
                e.name = k.name.clone();
            }
        }
        for f in &mut out.findings {
            for t in [
                &mut f.title,
                &mut f.headline,
                &mut f.measured,
                &mut f.explanation,
            ]
            .into_iter()
            .chain(f.actions.iter_mut())
            {
                *t = t.redacted();
            }
            for e in &mut f.evidence {
                e.name = redact_evidence(e.kind, &e.name);
            }
            if let Some((kind, names)) = f.filter.as_mut().and_then(EvidenceFilter::named_mut) {
                for n in names {
                    *n = redact_evidence(kind, n);
                }
            }
        }
        // The skipped files' notes, said again of the files with their names hashed (a load
        // error's message names its file: the one text redaction rewrites, `redact_file_names_in`).
        let files: Vec<String> = out.skipped_files.iter().map(|f| f.file.clone()).collect();
        for f in &mut out.skipped_files {
            f.reason = super::redact::redact_file_names_in(&f.reason, &files);
            f.file = super::redact::redact_file_name(&f.file);
        }
        let hidden = std::mem::take(&mut out.skipped_files);
        out.notes.drain(..skipped);
        out.note_skipped_files(&hidden);
        out.redacted = true;
        out
    }
}
