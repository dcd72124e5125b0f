//! The tools' arguments, with the JSON schemas (and descriptions) agents read in `tools/list`. Choices
//! of a core enum are listed from that enum (`ALL`, `as_str`), so a name is written once.

use rmcp::schemars::{self, json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};

use crate::analysis::registry::AnalysisId;
use crate::commands::{OutputFormat, ProfileView};
use crate::export::ExportFormat;
use crate::table::query::{GroupBy, SortBy};
use crate::table::EventKind;

/// A string schema whose value is one of `names`.
fn one_of(names: Vec<&'static str>) -> Schema {
    json_schema!({ "type": "string", "enum": names })
}

fn event_kinds(_: &mut SchemaGenerator) -> Schema {
    let names: Vec<&str> = EventKind::ALL.iter().map(|k| k.as_str()).collect();
    json_schema!({ "type": "array", "items": { "type": "string", "enum": names } })
}

fn group_by(_: &mut SchemaGenerator) -> Schema {
    one_of(GroupBy::ALL.iter().map(|g| g.as_str()).collect())
}

fn sort_by(_: &mut SchemaGenerator) -> Schema {
    one_of(SortBy::ALL.iter().map(|s| s.as_str()).collect())
}

fn analysis_keys(_: &mut SchemaGenerator) -> Schema {
    one_of(AnalysisId::ALL.iter().map(|a| a.key()).collect())
}

fn views(_: &mut SchemaGenerator) -> Schema {
    one_of(ProfileView::ALL.iter().map(|v| v.as_str()).collect())
}

fn export_formats(_: &mut SchemaGenerator) -> Schema {
    one_of(ExportFormat::ALL.iter().map(|f| f.as_str()).collect())
}

crate::stable_enum! {
    /// The form of a document answer (report, analysis, events, diff): Markdown or the CLI's text
    /// (`text` is read as the same), or JSON.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum AnswerFormat {
        #[default]
        #[serde(alias = "text")]
        Markdown,
        Json,
    }
}

impl AnswerFormat {
    /// Whether the answer is JSON.
    pub fn is_json(format: Option<AnswerFormat>) -> bool {
        format == Some(AnswerFormat::Json)
    }
}

fn answer_formats(_: &mut SchemaGenerator) -> Schema {
    one_of(AnswerFormat::ALL.iter().map(|f| f.as_str()).collect())
}

fn output_formats(_: &mut SchemaGenerator) -> Schema {
    one_of(OutputFormat::ALL.iter().map(|f| f.as_str()).collect())
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct OpenTraceParams {
    /// A trace file (.json or .json.gz from torch.profiler) or a folder with one trace file per rank.
    /// An absolute path is safest (a relative one is read from the server's working directory).
    pub path: String,
    /// Load it again even when this path is already open (after the file changed). Default false:
    /// the open trace's id is returned at once.
    #[serde(default)]
    pub reload: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TraceIdParams {
    /// The id open_trace returned.
    pub trace_id: u32,
}

/// The part of a long answer to send: from `line_offset`, at most `max_bytes`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct Page {
    /// First line of the answer to send (0 = the start): the note of a cut answer says which to ask next.
    #[serde(default)]
    pub line_offset: usize,
    /// Most bytes to send (default 40000, at most 400000).
    #[serde(default)]
    pub max_bytes: Option<usize>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ReportParams {
    /// The id open_trace returned.
    pub trace_id: u32,
    /// `markdown` (default: the fixed-form diagnosis: main finding, bottleneck, actions) or `json`
    /// (the same figures, typed).
    #[serde(default)]
    #[schemars(schema_with = "answer_formats")]
    pub format: Option<AnswerFormat>,
    /// Replace kernel, operator and module names by stable short hashes (to share a report).
    #[serde(default)]
    pub redact: bool,
    /// Diagnose only the profiler steps from this one (alone: this step only) instead of the
    /// automatic window (which leaves warm-up steps out).
    #[serde(default)]
    pub first_step: Option<i64>,
    /// Diagnose only the profiler steps up to this one, included (alone: this step only).
    #[serde(default)]
    pub last_step: Option<i64>,
    #[serde(flatten)]
    pub page: Page,
}

/// The step range of a tool's `first_step` and `last_step` (one alone: that step only), or what is
/// wrong with it.
pub fn step_range(
    first: Option<i64>,
    last: Option<i64>,
) -> Result<Option<crate::analysis::step_filter::StepRange>, String> {
    let range = match (first, last) {
        (Some(a), Some(b)) => (a, b),
        (Some(a), None) | (None, Some(a)) => (a, a),
        (None, None) => return Ok(None),
    };
    if range.0 > range.1 {
        return Err(format!(
            "first_step ({}) comes after last_step ({}): give first_step <= last_step",
            range.0, range.1
        ));
    }
    Ok(Some(range))
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AnalysisParams {
    /// The id open_trace returned.
    pub trace_id: u32,
    /// Which analysis (the keys of `profile-model analyze --json`): kernel and time breakdowns, idle
    /// time, overlap, stragglers, launch statistics, queue length, memory bandwidth, steps, frequent
    /// kernel sequences, critical path, roofline, collectives.
    #[schemars(schema_with = "analysis_keys")]
    pub name: AnalysisId,
    /// `markdown` (default: the CLI's text tables) or `json` (every figure, typed).
    #[serde(default)]
    #[schemars(schema_with = "answer_formats")]
    pub format: Option<AnswerFormat>,
    /// Follow HTA 0.5.0's definitions (whole-µs rounding, last-ProfilerStep filter) instead of the exact ones.
    #[serde(default)]
    pub hta_compat: bool,
    /// Only the profiler steps from this one (alone: this step only).
    #[serde(default)]
    pub first_step: Option<i64>,
    /// Only the profiler steps up to this one, included (alone: this step only).
    #[serde(default)]
    pub last_step: Option<i64>,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ViewParams {
    /// The id open_trace returned.
    pub trace_id: u32,
    /// TensorBoard's views: `ops` (CPU operators: calls, host/device self and total time), `kernels`
    /// (GPU kernels: calls, time, launching op, launch configuration, tensor cores), `memory` (memory
    /// over time per device, its peak), `modules` (the nn.Module tree's time), `steps` (step time split
    /// into kernel, memcpy, communication, runtime, DataLoader, CPU and other).
    #[schemars(schema_with = "views")]
    pub view: ProfileView,
    /// `text` (default: a table per rank), `json` or `csv`.
    #[serde(default)]
    #[schemars(schema_with = "output_formats")]
    pub format: Option<OutputFormat>,
    /// `ops` only: group by name and input shapes.
    #[serde(default)]
    pub by_shape: bool,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct EventsParams {
    /// The id open_trace returned.
    pub trace_id: u32,
    /// Only these kinds of event.
    #[serde(default)]
    #[schemars(schema_with = "event_kinds")]
    pub kinds: Vec<EventKind>,
    /// The name contains this text (any case).
    #[serde(default)]
    pub name_contains: String,
    /// The name is exactly one of these.
    #[serde(default)]
    pub names: Vec<String>,
    /// The original `cat` field is exactly this.
    #[serde(default)]
    pub category: String,
    /// Only this GPU stream.
    #[serde(default)]
    pub stream: Option<i64>,
    /// Only events of at least this duration, µs.
    #[serde(default)]
    pub min_dur_us: Option<f64>,
    /// Only these ranks (a rank folder).
    #[serde(default)]
    pub ranks: Vec<i64>,
    /// Group the matched events (count, total, mean, min, max µs and % of the matched time per group).
    #[serde(default)]
    #[schemars(schema_with = "group_by")]
    pub group_by: Option<GroupBy>,
    /// Order: rows by `start` (default), `duration` or `name`; groups by `count`, `total`, `mean`,
    /// `max` or `name`.
    #[serde(default)]
    #[schemars(schema_with = "sort_by")]
    pub sort: Option<SortBy>,
    /// Largest first.
    #[serde(default)]
    pub descending: bool,
    /// First row (or group) of the page.
    #[serde(default)]
    pub offset: usize,
    /// Rows (or groups) per page (default 50, at most 1000).
    #[serde(default)]
    pub limit: Option<usize>,
    /// `text` (default: a table) or `json` (the page, typed, with `matched` and `group_count`). For
    /// every matched row as a file, use export.
    #[serde(default)]
    #[schemars(schema_with = "answer_formats")]
    pub format: Option<AnswerFormat>,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DiffParams {
    /// The baseline run: an id open_trace returned.
    pub baseline_id: u32,
    /// The candidate run: an id open_trace returned.
    pub candidate_id: u32,
    /// `markdown` (default: step time and why it changed) or `json`.
    #[serde(default)]
    #[schemars(schema_with = "answer_formats")]
    pub format: Option<AnswerFormat>,
    #[serde(flatten)]
    pub page: Page,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExportParams {
    /// The id open_trace returned.
    pub trace_id: u32,
    /// The file to write (absolute path safest). Its ending picks the format unless `format` is given.
    pub path: String,
    /// `parquet`, `arrow` (Arrow IPC file) or `csv`.
    #[serde(default)]
    #[schemars(schema_with = "export_formats")]
    pub format: Option<ExportFormat>,
    /// Only these columns, in this order (name, cat, ph, ts, dur, pid, tid, id, rank, args_<key>...).
    #[serde(default)]
    pub columns: Option<Vec<String>>,
}
