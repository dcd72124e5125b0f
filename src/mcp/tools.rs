//! The MCP tools: each reads its arguments (`params`), finds the open trace (`session`), runs the
//! CLI's own output function (`crate::commands`) off the protocol's thread, and bounds the answer
//! (`bound`). A tool's failure is an error result in words (what was expected, what to call next).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ServerHandler};

use super::bound::bound_text;
use super::params::*;
use super::session::{OpenTrace, Sessions};
use crate::analysis::all::Mode;
use crate::commands;
use crate::export::ExportFormat;
use crate::table::query::{EventPage, EventQuery};

/// Rows (or groups) an events page holds unless the call asks otherwise.
const DEFAULT_EVENT_ROWS: usize = 50;
/// Most rows (or groups) one events page may hold.
const MAX_EVENT_ROWS: usize = 1000;

const INSTRUCTIONS: &str = "Profile Model answers 'why is my PyTorch job slow?' from torch.profiler (Kineto) traces. \
Call open_trace with a trace file or a rank folder first: it returns a trace_id and the summary. Then: report \
(the diagnosis: main finding, bottleneck, recoverable time, actions), analysis (one deeper analysis by name), \
view (ops, kernels, memory, modules, steps), events (filter, group and sort every event, paged), diff (two open \
traces), export (the event table to Parquet/Arrow/CSV). The trace stays loaded: follow-up calls are fast. \
Long answers are cut with a note saying how to ask for the rest.";

/// The server: the open traces and the tools over them.
#[derive(Clone)]
pub struct ProfileServer {
    sessions: Arc<Sessions>,
    cache: Option<PathBuf>,
    tool_router: ToolRouter<Self>,
}

type ToolResult = Result<CallToolResult, String>;

/// Runs `work` on the blocking pool (loading and analyses take seconds); a panic in it is an error
/// result, not the end of the server.
async fn off_thread<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        format!("the analyzer failed on this input ({e}); other traces and tools still work, please report it")
    })
}

/// The answer's text (bounded), and the note on what was cut as a second block.
fn answer(text: &str, page: &Page, tool: &str) -> CallToolResult {
    let b = bound_text(text, page.line_offset, page.max_bytes, tool);
    let mut blocks = vec![ContentBlock::text(b.text)];
    blocks.extend(b.note.map(ContentBlock::text));
    CallToolResult::success(blocks)
}

/// The explorer's query of the events tool's arguments (rows bounded to [`MAX_EVENT_ROWS`]).
fn event_query(p: &EventsParams) -> EventQuery {
    EventQuery {
        ranks: p.ranks.clone(),
        kinds: p.kinds.clone(),
        name_contains: p.name_contains.clone(),
        names: p.names.clone(),
        category: p.category.clone(),
        stream: p.stream,
        min_dur_us: p.min_dur_us,
        group_by: p.group_by,
        sort: p.sort.unwrap_or_default(),
        descending: p.descending,
        offset: p.offset,
        limit: p
            .limit
            .unwrap_or(DEFAULT_EVENT_ROWS)
            .clamp(1, MAX_EVENT_ROWS),
        ..EventQuery::default()
    }
}

/// What an events page left out, and how to ask for the next page.
fn events_note(page: &EventPage) -> Option<String> {
    let (shown, of) = (commands::page_len(page), commands::page_of(page));
    let (offset, end) = (page.query.offset, page.query.offset + shown);
    (u64::try_from(end).unwrap_or(u64::MAX) < of).then(|| {
        format!(
            "[{shown} of {of} {} shown ({offset}..{end}). Call events again with offset={end} for the next page (limit at most {MAX_EVENT_ROWS}).]",
            if page.query.group_by.is_some() { "groups" } else { "rows" },
        )
    })
}

/// The summary open_trace answers with: the id, what was loaded, the summary, what to call next.
fn opened_text(trace: &OpenTrace, again: bool, json: bool) -> String {
    let ranks: Vec<i64> = trace.set.ranks.iter().map(|r| r.rank).collect();
    let head = format!(
        "trace_id: {}{}\npath: {}\nranks: {ranks:?}\nevents: {}\n",
        trace.id,
        if again {
            " (already open; reload=true loads it again)"
        } else {
            ""
        },
        trace.path.display(),
        trace.event_count()
    );
    let summary = commands::summary_text(&trace.set, json, trace.path.is_dir());
    format!(
        "{head}\n{summary}\nNext: report(trace_id={id}) for the diagnosis; view, events or analysis for details.\n",
        id = trace.id
    )
}

#[tool_router(router = tool_router)]
impl ProfileServer {
    pub fn new(cache: Option<PathBuf>) -> Self {
        Self {
            sessions: Arc::new(Sessions::default()),
            cache,
            tool_router: Self::tool_router(),
        }
    }

    fn trace(&self, id: u32) -> Result<Arc<OpenTrace>, String> {
        self.sessions.get(id)
    }

    #[tool(
        description = "Open a PyTorch profiler trace (.json or .json.gz) or a folder with one trace file per rank. Returns its trace_id (for every other tool) and its summary. The tables stay loaded until close_trace, so follow-up calls are fast."
    )]
    async fn open_trace(&self, Parameters(p): Parameters<OpenTraceParams>) -> ToolResult {
        let path = PathBuf::from(p.path.trim());
        if !path.exists() {
            return Err(format!("{} does not exist: give a trace file (.json, .json.gz) or a folder of rank files, ideally as an absolute path", path.display()));
        }
        if let Some(open) = self.sessions.find_path(&path).filter(|_| !p.reload) {
            return Ok(answer(
                &opened_text(&open, true, false),
                &Page::default(),
                "open_trace",
            ));
        }
        let cache = self.cache.clone();
        let loading = path.clone();
        let set = off_thread(move || crate::load::load_set(&loading, cache.as_deref()))
            .await?
            .map_err(|e| format!("could not open {}: {e}", path.display()))?;
        let trace = self.sessions.insert(&path, set);
        Ok(answer(
            &opened_text(&trace, false, false),
            &Page::default(),
            "open_trace",
        ))
    }

    #[tool(description = "The open traces: id, path, ranks and events of each.")]
    async fn list_traces(&self) -> String {
        let open = self.sessions.list();
        if open.is_empty() {
            return "no trace is open; call open_trace with a trace file or a rank folder".into();
        }
        open.iter()
            .map(|t| {
                format!(
                    "{}: {} ({} ranks, {} events)\n",
                    t.id,
                    t.path.display(),
                    t.set.len(),
                    t.event_count()
                )
            })
            .collect()
    }

    #[tool(description = "Close an open trace and free its tables.")]
    async fn close_trace(
        &self,
        Parameters(p): Parameters<TraceIdParams>,
    ) -> Result<String, String> {
        let closed = self.sessions.close(p.trace_id)?;
        Ok(format!(
            "closed trace {} ({})",
            closed.id,
            closed.path.display()
        ))
    }

    #[tool(
        description = "The diagnosis of an open trace, as profile-model report writes it: the main finding, the bottleneck, findings ranked by recoverable time, idle time by cause, and the actions to take. Markdown (default) or JSON. first_step/last_step diagnose those profiler steps instead of the automatic window."
    )]
    async fn report(&self, Parameters(p): Parameters<ReportParams>) -> ToolResult {
        let trace = self.trace(p.trace_id)?;
        let json = AnswerFormat::is_json(p.format);
        let redact = p.redact;
        let steps = super::params::step_range(p.first_step, p.last_step)?;
        let text = off_thread(move || match steps {
            None => Ok(commands::report_text(trace.report(), json, redact)),
            Some(_) => crate::report::diagnosis::diagnose_steps(&trace.set, steps)
                .map(|r| commands::report_text(&r, json, redact))
                .map_err(|e| {
                    format!(
                        "{e}; call report without first_step/last_step for the automatic window"
                    )
                }),
        })
        .await??;
        Ok(answer(&text, &p.page, "report"))
    }

    #[tool(
        description = "One deeper analysis of an open trace by name (HTA's analyses and more: kernel breakdown, temporal and idle breakdowns, overlap, stragglers, launch statistics, queue length, memory bandwidth, profiler steps, frequent kernel sequences, critical path, roofline, collectives), as the CLI's text or as JSON. All analyses are computed on the first call, then kept."
    )]
    async fn analysis(&self, Parameters(p): Parameters<AnalysisParams>) -> ToolResult {
        let trace = self.trace(p.trace_id)?;
        let id = p.name;
        let json = AnswerFormat::is_json(p.format);
        let steps = super::params::step_range(p.first_step, p.last_step)?;
        let mode = if p.hta_compat {
            Mode::HtaCompat
        } else {
            Mode::Exact
        };
        let text =
            off_thread(move || commands::analysis_text(&trace.analyses((mode, steps)), id, json))
                .await?;
        Ok(answer(&text, &p.page, "analysis"))
    }

    #[tool(
        description = "A TensorBoard-style view of an open trace, one table per rank: ops (CPU operators), kernels (GPU kernels), memory (over time, peak), modules (nn.Module tree), steps (step time split by kind). Text (default), JSON or CSV."
    )]
    async fn view(&self, Parameters(p): Parameters<ViewParams>) -> ToolResult {
        let trace = self.trace(p.trace_id)?;
        let format = p.format.unwrap_or_default();
        let (view, by_shape) = (p.view, p.by_shape);
        let text =
            off_thread(move || commands::view_text(view, &trace.set, by_shape, format, None))
                .await?;
        Ok(answer(&text, &p.page, "view"))
    }

    #[tool(
        description = "Query every event of an open trace, as the page's explorer and `profile-model events` do: filter by kind, name, category, stream, duration and rank; group by name, kind, category, stream, thread or rank; sort; page with offset and limit. Text (default) or JSON; for every matched row as a file, use export."
    )]
    async fn events(&self, Parameters(p): Parameters<EventsParams>) -> ToolResult {
        let trace = self.trace(p.trace_id)?;
        let json = AnswerFormat::is_json(p.format);
        let query = event_query(&p);
        let (text, note) = off_thread(move || {
            let page = crate::table::query::query_events(&trace.set, &query);
            (commands::page_text(&page, json), events_note(&page))
        })
        .await?;
        let mut result = answer(&text, &p.page, "events");
        result.content.extend(note.map(ContentBlock::text));
        Ok(result)
    }

    #[tool(
        description = "Compare two open traces (baseline and candidate) as profile-model diff does: step time and why it changed, by category, kernel, operator, rank and finding. Markdown (default) or JSON."
    )]
    async fn diff(&self, Parameters(p): Parameters<DiffParams>) -> ToolResult {
        let baseline = self.trace(p.baseline_id)?;
        let candidate = self.trace(p.candidate_id)?;
        let json = AnswerFormat::is_json(p.format);
        let text = off_thread(move || {
            let comparison = crate::report::compare::compare(&baseline.set, &candidate.set);
            commands::diff_text(&comparison, json, None)
        })
        .await?;
        Ok(answer(&text, &p.page, "diff"))
    }

    #[tool(
        description = "Write the event table of an open trace to a file in the seed's DataFrame schema (name, cat, ph, ts, dur, pid, tid, id, [rank,] args_<key>...): Parquet, Arrow IPC or CSV, as profile-model export does. For pandas, polars or DuckDB."
    )]
    async fn export(&self, Parameters(p): Parameters<ExportParams>) -> Result<String, String> {
        let trace = self.trace(p.trace_id)?;
        let output = PathBuf::from(p.path.trim());
        let format = export_format(p.format, &output)?;
        let columns = p.columns;
        let written = output.clone();
        let report = off_thread(move || {
            commands::export_file(&trace.set, columns.as_deref(), format, &written)
        })
        .await?
        .map_err(|e| format!("export to {} failed: {}", output.display(), e.message))?;
        let mut text = commands::export_line(&report, format, &output.display().to_string());
        for note in commands::export_notes(&report) {
            text += &note;
            text.push('\n');
        }
        Ok(text)
    }
}

/// The export's format: the one asked for, else the output's ending.
fn export_format(asked: Option<ExportFormat>, output: &Path) -> Result<ExportFormat, String> {
    if output.as_os_str().is_empty() || output == Path::new("-") {
        return Err("export needs a file path to write (stdout carries the MCP protocol)".into());
    }
    asked
        .or_else(|| ExportFormat::of_file_name(&output.to_string_lossy()))
        .ok_or_else(|| {
            format!(
                "export needs format (parquet, arrow or csv): the ending of {} does not say",
                output.display()
            )
        })
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for ProfileServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "profile-model",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }
}
