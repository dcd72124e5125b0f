//! What the commands write (text, Markdown, JSON, CSV) from loaded tables: one function per output,
//! shared by the CLI (`cli.rs`) and the MCP server (`mcp/`), so both give the same figures and text.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::analysis::registry::{AllAnalyses, AnalysisId};
use crate::analysis::summary::summarize;
use crate::export::{export_schema, export_to, ExportError, ExportFormat, ExportReport};
use crate::report::compare::Comparison;
use crate::report::compare_text::CompareTable;
use crate::report::diagnosis::DiagnosisReport;
use crate::report::markdown::summary_markdown;
use crate::table::query::{export_csv, query_events, EventPage, EventQuery};
use crate::table::{TraceSet, TraceTable};

crate::stable_enum! {
    /// How a command writes its result.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum OutputFormat {
        /// Plain text or Markdown (the CLI's default).
        #[default]
        Text,
        Json,
        Csv,
    }
}

crate::stable_enum! {
    /// TensorBoard's views, one table per rank (`profile-model ops|kernels|memory|modules|steps`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum ProfileView {
        /// CPU operators: calls, host and device self/total time.
        Ops,
        /// GPU kernels: calls, time, launching op, launch configuration, tensor cores.
        Kernels,
        /// Memory over time per device, its peak and the blocks alive at the peak.
        Memory,
        /// The nn.Module tree with host and device time per module.
        Modules,
        /// Step time split into kernel, memcpy, memset, communication, runtime, DataLoader, CPU, other.
        Steps,
    }
}

/// Pretty JSON with a closing newline (what every `--json` writes).
pub fn pretty_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}")) + "\n"
}

/// `summary`: one rank's summary, or every rank's (`folder`), as Markdown or JSON.
pub fn summary_text(set: &TraceSet, json: bool, folder: bool) -> String {
    if json {
        return pretty_json(&summary_doc(set, folder));
    }
    summary_markdown_of(set)
}

fn summary_doc(set: &TraceSet, folder: bool) -> serde_json::Value {
    if !folder {
        return set
            .ranks
            .first()
            .map_or(serde_json::Value::Null, |r| summary_json(&r.table));
    }
    let ranks: Vec<serde_json::Value> = set
        .ranks
        .iter()
        .map(|r| {
            let mut v = summary_json(&r.table);
            v["rank"] = serde_json::Value::from(r.rank);
            v["rank_source"] = serde_json::Value::from(r.rank_source);
            v
        })
        .collect();
    serde_json::json!({ "ranks": ranks, "notes": set.notes, "skipped_files": set.skipped })
}

fn summary_json(t: &TraceTable) -> serde_json::Value {
    let mut v = serde_json::to_value(summarize(t)).unwrap_or_default();
    v["file"] = serde_json::Value::from(t.file.clone());
    v["diagnostics"] = serde_json::to_value(t.diagnostics.list()).unwrap_or_default();
    v
}

fn summary_markdown_of(set: &TraceSet) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for r in &set.ranks {
        if set.len() > 1 {
            let _ = writeln!(
                s,
                "# Rank {} ({}, rank from {})\n",
                r.rank, r.table.file, r.rank_source
            );
        }
        s += &summary_markdown(&summarize(&r.table));
        for d in r.table.diagnostics.list() {
            let _ = writeln!(
                s,
                "- note ({:?}, {}×): {} — e.g. {}",
                d.severity, d.count, d.description, d.example
            );
        }
        s.push('\n');
    }
    for f in &set.skipped {
        let _ = writeln!(s, "- not loaded: {}", f.reason);
    }
    s
}

/// `report`: the diagnosis as Markdown or JSON (`redact`: kernel/op/module names as stable hashes).
pub fn report_text(report: &DiagnosisReport, json: bool, redact: bool) -> String {
    let redacted;
    let r = if redact {
        redacted = report.redacted();
        &redacted
    } else {
        report
    };
    if json {
        r.to_json() + "\n"
    } else {
        r.to_markdown()
    }
}

/// `events`: a page of the explorer's query as text or JSON, or every matched row (or group) as CSV.
pub fn events_text(set: &TraceSet, query: &EventQuery, format: OutputFormat) -> String {
    match format {
        OutputFormat::Csv => export_csv(set, query),
        _ => page_text(&query_events(set, query), format == OutputFormat::Json),
    }
}

/// A page of `events` as JSON or as a plain-text table.
pub fn page_text(page: &EventPage, json: bool) -> String {
    if json {
        pretty_json(page)
    } else {
        render_page(page)
    }
}

/// `analyze --json`: the analyses through `Value` (whose map sorts the keys: the documented, stable
/// key order), with the set's skipped files.
pub fn analyses_json(set: &TraceSet, all: &AllAnalyses) -> serde_json::Value {
    let mut doc = serde_json::to_value(all).unwrap_or(serde_json::Value::Null);
    if !set.skipped.is_empty() {
        doc["skipped_files"] = serde_json::to_value(&set.skipped).unwrap_or_default();
    }
    doc
}

/// One analysis (its registry key) as text, or as the JSON `analyze --json` writes under that key.
pub fn analysis_text(all: &AllAnalyses, id: AnalysisId, json: bool) -> String {
    if !json {
        return crate::report::text::render_analysis(all, id);
    }
    let doc = serde_json::to_value(all).unwrap_or(serde_json::Value::Null);
    pretty_json(&doc.get(id.key()).cloned().unwrap_or_default())
}

/// `ops`, `kernels`, `memory`, `modules`, `steps`: one view per rank, as text, CSV or JSON, over
/// the ProfilerSteps of `steps` (`None`: the whole trace; [`HostOps::within`]).
pub fn view_text(
    view: ProfileView,
    set: &TraceSet,
    by_shape: bool,
    format: OutputFormat,
    steps: Option<crate::analysis::step_filter::StepRange>,
) -> String {
    use crate::analysis::views::{
        kernel_table, memory, modules, operators, per_rank, step_time, HostOps,
    };
    use crate::report::views_text as vt;
    let ops = |t: &crate::table::TraceTable| HostOps::within(t, steps);
    let grid_out = |g: vt::Grid| {
        if format == OutputFormat::Csv {
            g.to_csv()
        } else {
            g.to_text(90)
        }
    };
    let json = format == OutputFormat::Json;
    match view {
        ProfileView::Ops => {
            let r = per_rank(set, |t| operators::operators_in(t, &ops(t), by_shape));
            if json {
                pretty_json(&r)
            } else {
                grid_out(vt::operators_grid(&r))
            }
        }
        ProfileView::Kernels => {
            let r = per_rank(set, |t| kernel_table::kernels_in(t, &ops(t)));
            if json {
                pretty_json(&r)
            } else {
                grid_out(vt::kernels_grid(&r))
            }
        }
        ProfileView::Modules => {
            let r = per_rank(set, |t| modules::modules_in(t, &ops(t)));
            if json {
                pretty_json(&r)
            } else {
                grid_out(vt::modules_grid(&r))
            }
        }
        ProfileView::Memory => {
            let r = per_rank(set, |t| memory::memory_in(t, Some(&ops(t))));
            match format {
                OutputFormat::Json => pretty_json(&r),
                OutputFormat::Csv => vt::memory_curve_grid(&r).to_csv(),
                OutputFormat::Text => vt::memory_text(&r),
            }
        }
        ProfileView::Steps => {
            let r = per_rank(set, |t| step_time::step_time_in(t, &ops(t)));
            if json {
                pretty_json(&r)
            } else {
                grid_out(vt::steps_grid(&r))
            }
        }
    }
}

/// `diff`: the comparison of two runs as Markdown, JSON or one table as CSV.
pub fn diff_text(comparison: &Comparison, json: bool, csv: Option<CompareTable>) -> String {
    if let Some(table) = csv {
        crate::report::compare_text::to_csv(comparison, table)
    } else if json {
        pretty_json(comparison)
    } else {
        crate::report::compare_text::to_markdown(comparison)
    }
}

/// Why an export failed, and the CLI's exit code for it (2: bad columns, 3: could not write, 1: could
/// not encode).
#[derive(Debug)]
pub struct ExportFailure {
    pub message: String,
    pub exit_code: i32,
}

/// `export`: the event table written to `out` (columns in `columns`' order when given).
pub fn export_set(
    set: &TraceSet,
    columns: Option<&[String]>,
    format: ExportFormat,
    out: &mut dyn std::io::Write,
) -> Result<ExportReport, ExportFailure> {
    let schema = export_schema(set, columns).map_err(|e| ExportFailure {
        message: e.to_string(),
        exit_code: 2,
    })?;
    export_to(set, &schema, format, out).map_err(|e| ExportFailure {
        exit_code: match e {
            ExportError::Io(_) => 3,
            _ => 1,
        },
        message: e.to_string(),
    })
}

/// `export` to a file: created first, removed again when the export fails.
pub fn export_file(
    set: &TraceSet,
    columns: Option<&[String]>,
    format: ExportFormat,
    output: &Path,
) -> Result<ExportReport, ExportFailure> {
    let file = std::fs::File::create(output).map_err(|e| ExportFailure {
        message: format!("could not write {}: {e}", output.display()),
        exit_code: 3,
    })?;
    let written = export_set(set, columns, format, &mut std::io::BufWriter::new(file));
    if written.is_err() {
        let _ = std::fs::remove_file(output);
    }
    written
}

/// The export's notes (mixed-type args written as strings; every args column as strings), one a line.
pub fn export_notes(report: &ExportReport) -> Vec<String> {
    let mut notes = Vec::new();
    if !report.mixed_to_text.is_empty() {
        notes.push(format!(
            "note: mixed-type args written as strings: {}",
            report.mixed_to_text.join(", ")
        ));
    }
    if let Some(why) = &report.first_failure {
        notes.push(format!("note: written with every args_* column as strings, as encoding them typed failed: {why}"));
    }
    notes
}

/// The export's closing line: rows, columns, format and where.
pub fn export_line(report: &ExportReport, format: ExportFormat, output: &str) -> String {
    format!(
        "wrote {} rows, {} columns ({}) to {output}\n",
        report.rows,
        report.columns.len(),
        format
    )
}

fn cell_f(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.3}"))
}

/// A page of `events` as a plain-text table.
pub fn render_page(p: &EventPage) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} events matched, {:.3} us in total",
        p.matched, p.matched_dur_us
    );
    let _ = writeln!(
        s,
        "showing {}..{} of {}",
        p.query.offset,
        p.query.offset + page_len(p),
        page_of(p)
    );
    if let Some(by) = p.query.group_by {
        render_groups(&mut s, p, by.as_str());
    } else {
        render_rows(&mut s, p);
    }
    s
}

/// Rows (or groups) on this page.
pub fn page_len(p: &EventPage) -> usize {
    p.rows.len().max(p.groups.len())
}

/// Rows (or groups) the query matched in all.
pub fn page_of(p: &EventPage) -> u64 {
    if p.query.group_by.is_some() {
        p.group_count
    } else {
        p.matched
    }
}

fn render_groups(s: &mut String, p: &EventPage, by: &str) {
    use std::fmt::Write;
    let _ = writeln!(
        s,
        "{:>9} {:>14} {:>12} {:>12} {:>12} {:>7}  {}",
        "count", "total_us", "mean_us", "min_us", "max_us", "%", by
    );
    for g in &p.groups {
        let _ = writeln!(
            s,
            "{:>9} {:>14.3} {:>12} {:>12} {:>12} {:>7.2}  {}",
            g.count,
            g.total_us,
            cell_f(g.mean_us),
            cell_f(g.min_us),
            cell_f(g.max_us),
            g.pct_of_matched,
            g.key
        );
    }
}

fn render_rows(s: &mut String, p: &EventPage) {
    use std::fmt::Write;
    let _ = writeln!(
        s,
        "{:>5} {:>9} {:>12} {:>12} {:<16} {:>7}  {}",
        "rank", "row", "start_ms", "dur_us", "kind", "stream", "name"
    );
    for r in &p.rows {
        let _ = writeln!(
            s,
            "{:>5} {:>9} {:>12} {:>12} {:<16} {:>7}  {}",
            r.rank,
            r.row,
            cell_f(r.start_ms),
            cell_f(r.dur_us),
            r.kind.as_str(),
            r.stream.map_or_else(|| "-".to_string(), |x| x.to_string()),
            r.name
        );
    }
}
