//! The messages between the page and the worker, as serde enums sent in the binary wire format of
//! [`codec`] (native: both the page's layer and the worker import it, neither the other).
//!
//! Page → worker: a JS array `[bytes(ToWorker), File, File, ...]` (the `File` objects follow the
//! command for [`ToWorker::Load`]). Worker → page: one `Uint8Array` of [`FromWorker`] per message
//! (or `[bytes, ArrayBuffer, ...]` when buffers follow). The types stay serde types: the JSON the
//! CLI, exports and the Markdown write is unchanged. What a shard worker tells its coordinator is
//! in [`shard`].

use serde::{Deserialize, Serialize};

use crate::analysis::all::{AllAnalyses, AnalysisTiming, Mode};
use crate::analysis::step_filter::StepRange;
use crate::analysis::summary::Summary;
use crate::analysis::timeline::{EventDetails, TimelineRequest};
use crate::export::ExportFormat;
use crate::report::context::TraceContext;
use crate::report::diagnosis::DiagnosisReport;
use crate::report::timeline_view::TimelineAnswer;
use crate::table::query::{EventPage, EventQuery};
use crate::trace::Diagnostic;

pub mod codec;
pub mod exporter;
pub mod shard;

/// What the page asks of a load's split, and what a shard worker is told of its place.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadPlan {
    /// At most this many ranks per worker, whatever the sizes (the page's `?ranks-per-worker=N`).
    #[serde(default)]
    pub ranks_per_worker: Option<usize>,
    /// This worker is a shard of a split load: where its files are in the whole load.
    #[serde(default)]
    pub shard_of: Option<ShardOf>,
}

/// A shard's files in the whole load.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShardOf {
    /// Each file's index among all the files of the load (a rank with no number takes it).
    pub load_indexes: Vec<usize>,
    /// Files in the whole load.
    pub file_count: usize,
}

/// What the page asks the worker to do.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ToWorker {
    /// Load the `File`s that follow in the message (one per rank) and keep the set; a big set is
    /// split over shard workers ([`crate::worker::shard_plan::plan`]).
    Load {
        #[serde(default)]
        plan: LoadPlan,
    },
    /// Run every analysis of the kept set (`analyze_all`), in HTA 0.5.0-compatible mode when asked.
    Analyze {
        #[serde(default)]
        mode: Mode,
    },
    /// Build the diagnosis report of the kept set (names hashed when `redact`), over the
    /// ProfilerSteps of `steps` (the page's step picker; `None`: the automatic window). A range the
    /// set lacks is answered by [`FromWorker::StepsRefused`].
    Report {
        #[serde(default)]
        redact: bool,
        #[serde(default)]
        steps: Option<StepRange>,
    },
    /// One page of the kept set's events (the exploration view).
    Query { query: EventQuery },
    /// Every event (or group) of a query as CSV.
    Export {
        query: EventQuery,
        /// Names hashed as the page shows them (the redact switch).
        #[serde(default)]
        redact: bool,
    },
    /// The whole event table as a file in the seed's DataFrame schema ([`crate::export`]); `columns`
    /// empty: every column. Answered by [`FromWorker::DownloadBytes`].
    ExportTable {
        format: ExportFormat,
        #[serde(default)]
        columns: Vec<String>,
        /// Names hashed and args left out, as the page shows them (the redact switch).
        #[serde(default)]
        redact: bool,
    },
    /// Compare the kept set's files named in `baseline_files` (one run) with its other files.
    Compare { baseline_files: Vec<String> },
    /// What the timeline shows of rank `rank_index` in a range at a width (an empty range: the
    /// whole trace).
    Timeline {
        rank_index: usize,
        request: TimelineRequest,
    },
    /// Every rank's GPU busy per pixel of a range at a width (the timeline's rank lanes; an empty
    /// range: all ranks' GPU work).
    RankLanes { request: TimelineRequest },
    /// Where a finding's evidence, or a view's row, is: the longest event its query matches inside
    /// the analysed windows (the report's, one per rank), else over the whole trace (the timeline
    /// zooms there; [`crate::analysis::timeline::locate`]).
    Locate {
        query: EventQuery,
        within: Vec<crate::analysis::timeline::AnalysedWindow>,
    },
    /// Rank `rank_index`'s trace as Chrome-trace JSON for Perfetto, with the GPU's idle causes and
    /// the critical path added as tracks.
    /// With `redact`, names are hashed as the page shows them, args left out, the file name hidden.
    Perfetto {
        rank_index: usize,
        #[serde(default)]
        redact: bool,
    },
    /// The timeline's search: the events of rank `rank_index` whose name contains `text` (any
    /// case), answered by [`FromWorker::SearchHits`].
    Search { rank_index: usize, text: String },
    /// The details of one event of rank `rank_index` (the timeline's details panel).
    EventDetails { rank_index: usize, row: u32 },
    /// The arrow keys' walk: the event after (`forward`) or before row `row` on its lane of rank
    /// `rank_index`'s timeline, wherever it is; answered by [`FromWorker::Walked`].
    Walk {
        rank_index: usize,
        row: u32,
        forward: bool,
    },
    /// The TensorBoard-style views (operators, kernels, step time, memory, modules) of every rank,
    /// over the ProfilerSteps of `steps` (`None`: the whole trace).
    Views {
        #[serde(default)]
        steps: Option<StepRange>,
    },
    /// Each rank's table as bytes for this browser's cache (the user said Keep): answered by
    /// [`FromWorker::Tables`], one `ArrayBuffer` per rank transferred.
    StoreTables,
    /// Rebuild the set from saved tables: the message is `[json, ArrayBuffer, ...]`, one buffer per
    /// rank (transferred). Answered as a load is ([`FromWorker::Loaded`]), or by
    /// [`FromWorker::RestoreFailed`].
    Restore { ranks: usize },
    /// The SQL tab's tables as Arrow IPC streams (`events` in the export's schema with `rank`, and
    /// `idle`): answered by [`FromWorker::SqlTables`], one `ArrayBuffer` per part transferred (a
    /// set split over shard workers: each shard's parts, appended by the page into one table).
    SqlTables,
    /// (Coordinator → shard.) Run `request` and answer with [`shard::part_bytes`] tagged `id`.
    Part { id: u64, request: Box<ToWorker> },
    /// (Coordinator → shard.) What each rank adds to the report's context, its window the steps
    /// of `steps` when chosen: [`shard::ShardOnly::ContextParts`].
    ContextParts {
        #[serde(default)]
        steps: Option<StepRange>,
    },
    /// (Coordinator → shard.) Each rank's report figures over the window `context` chose:
    /// [`shard::ShardOnly::GatherParts`].
    GatherParts { context: Box<TraceContext> },
    /// (Worker → its reader worker.) Read the `File`s that follow, one after the other, and send
    /// their JSON text as [`FromReader`] messages tagged `job`. Replaces any read in progress.
    Read { job: u32 },
    /// (Worker → reader.) `slices` more text slices of `job` may be sent: the reader keeps only a
    /// few in flight, so memory stays bounded however fast it reads.
    Credit { job: u32, slices: u32 },
    /// (Worker → reader.) File `file_index` of `job` failed: stop reading it and go on with the next.
    Skip { job: u32, file_index: usize },
}

/// What the reader worker tells the worker: a JS array `[json(FromReader)]`, or
/// `[json(FromReader::Text), ArrayBuffer]` (the buffer is transferred, not copied). Per file: any
/// number of `Text`, then perhaps `Corrupt` or `Failed`, then always one `End`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum FromReader {
    /// The next piece of file `file_index`'s JSON text (inflated if the file is gzip) follows.
    /// `raw_bytes`: the file bytes behind all the text sent so far.
    Text {
        job: u32,
        file_index: usize,
        gzip: bool,
        raw_bytes: u64,
    },
    /// The gzip data is corrupt after the text already sent; the rest of the file is not read.
    Corrupt {
        job: u32,
        file_index: usize,
        offset: u64,
        detail: String,
    },
    /// The browser could not read the file.
    Failed {
        job: u32,
        file_index: usize,
        message: String,
    },
    /// No more text of file `file_index`. `gzip_end`: how its gzip stream ended (cut off, checksums).
    End {
        job: u32,
        file_index: usize,
        gzip: bool,
        raw_bytes: u64,
        gzip_end: crate::trace::source::GzipEnd,
    },
}

impl FromReader {
    pub fn job(&self) -> u32 {
        match self {
            FromReader::Text { job, .. }
            | FromReader::Corrupt { job, .. }
            | FromReader::Failed { job, .. }
            | FromReader::End { job, .. } => *job,
        }
    }
}

crate::stable_enum! {
    /// A table of the SQL tab that the worker hands over (the views are made over them by the page).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum SqlTable {
        Events,
        Idle,
    }
}

/// One Arrow IPC stream of a SQL table (a table may come in several parts: one per shard worker).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SqlPart {
    pub table: SqlTable,
    pub rows: u64,
    pub bytes: u64,
}

/// An event found for a finding's evidence: where the timeline zooms.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Located {
    pub rank_index: usize,
    pub row: u32,
    pub start_ns: i64,
    pub dur_ns: i64,
    /// Found outside the analysed window (none of the events asked for was inside it).
    #[serde(default)]
    pub outside: bool,
}

impl Located {
    /// `row` of a place that is no row of the table (a SQL answer's span).
    pub const NO_ROW: u32 = u32::MAX;
}

/// A finding of the report and the events behind it, for the page to open in the exploration view
/// or on the timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FindingLink {
    pub id: String,
    pub title: String,
    pub query: EventQuery,
}

crate::stable_enum! {
    /// The phase of a load, as the page's `data-phase` attribute spells it.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum Phase {
        Reading,
        Parsing,
        Analysing,
        Done,
    }
}

/// How far a load has come (all files together).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub phase: Phase,
    /// Raw file bytes read so far, over all files.
    pub bytes_done: u64,
    /// Raw file bytes of all files.
    pub bytes_total: u64,
    /// Index of the file being read (in the order posted).
    pub file_index: usize,
    pub file_count: usize,
    pub file: String,
    /// Raw MB (10^6 bytes) per second since the load started.
    pub mb_per_s: f64,
    /// Each file's progress, in load order (when there are several).
    #[serde(default)]
    pub files: Vec<FileProgress>,
}

/// How far one file (one rank) of a load has come.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileProgress {
    pub file: String,
    /// Raw file bytes read so far.
    pub bytes_done: u64,
    pub bytes_total: u64,
    /// The worker that reads it (0 unless the set is split over several).
    pub worker: usize,
}

/// One loaded rank: its quick summary, trace health and where it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankSummary {
    pub rank: i64,
    /// `distributedInfo`, `file name` or `load order`.
    pub rank_source: String,
    pub file: String,
    pub device: Option<String>,
    pub file_bytes: u64,
    pub text_bytes: u64,
    /// Wall time of this file's load in the worker, ms.
    pub load_ms: f64,
    pub summary: Summary,
    pub diagnostics: Vec<Diagnostic>,
}

/// Everything the page shows after a load (the tables themselves stay in the worker).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadedSet {
    /// Sorted by rank.
    pub ranks: Vec<RankSummary>,
    /// Problems across files, in plain words.
    pub notes: Vec<String>,
    /// Wall time of the whole load, ms.
    pub load_ms: f64,
    /// How the files were read: `reader-worker` (a second worker read and inflated them while the
    /// worker parsed) or `in-worker` (the worker did both, when no second worker could start).
    #[serde(default)]
    pub read_mode: String,
    /// Size of the parsing worker's WebAssembly memory once the tables are made, bytes. That memory
    /// never shrinks, so this is its peak during the load (the tables, and what the parse used).
    #[serde(default)]
    pub worker_memory_bytes: u64,
    /// The files look like two separate runs, not ranks of one job: how to compare them.
    #[serde(default)]
    pub runs: Option<crate::table::RunsSplit>,
    /// When the set is split over shard workers: each one's memory, bytes (their sum is
    /// `worker_memory_bytes`).
    #[serde(default)]
    pub worker_memory: Vec<u64>,
    /// Files given that could not be loaded (each also has a note).
    #[serde(default)]
    pub skipped: Vec<crate::table::SkippedFile>,
}

/// The run the worker holds after a comparison: its ranks and the notes about them alone.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunShown {
    pub ranks: Vec<RankSummary>,
    pub notes: Vec<String>,
}

/// What the worker tells the page.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum FromWorker {
    /// The worker is running and waits for requests.
    Ready,
    Progress(Progress),
    /// One file could not be loaded; the others go on.
    Failed {
        file: String,
        message: String,
    },
    Loaded(LoadedSet),
    /// No file could be loaded.
    NothingLoaded,
    /// Every analysis, typed (its `mode` says which definitions).
    Analysis {
        analysis: AllAnalyses,
        /// Time of each analysis in the worker, ms (the first call runs them; later calls reuse them).
        #[serde(default)]
        timings: Vec<AnalysisTiming>,
    },
    /// The diagnosis report, typed, as it is and with names hashed (redaction needs the names
    /// the report keeps out of its JSON, so the worker does it); the page shows one of them.
    Report {
        report: DiagnosisReport,
        redacted: DiagnosisReport,
    },
    /// A page of events.
    Events(EventPage),
    /// A query's CSV.
    Exported {
        csv: String,
    },
    /// Two runs compared. The worker then holds the candidate run alone (`shown`), so every other
    /// answer is about that one run.
    Compared {
        comparison: Box<crate::report::compare::Comparison>,
        #[serde(default)]
        shown: Option<RunShown>,
    },
    /// What the timeline shows.
    Timeline(Box<TimelineAnswer>),
    /// Every rank's GPU busy per pixel (the timeline's rank lanes).
    RankLanes(Box<crate::analysis::rank_lanes::RankLanesView>),
    /// One event's details.
    EventDetails(Box<EventDetails>),
    /// What a [`ToWorker::Search`] found: at most [`crate::analysis::timeline::MAX_SEARCH_HITS`]
    /// events by start, and how many match.
    SearchHits {
        rank_index: usize,
        text: String,
        hits: Vec<crate::analysis::timeline::SearchHit>,
        total: u64,
    },
    /// The event a [`ToWorker::Locate`] found.
    Located(Located),
    /// Where a [`ToWorker::Walk`] from row `from` of rank `rank_index` goes (`None`: the lane
    /// ends there).
    Walked {
        rank_index: usize,
        from: u32,
        #[serde(default)]
        to: Option<crate::analysis::timeline::SearchHit>,
    },
    /// The TensorBoard-style views of every rank (over the steps `steps`, when chosen).
    Views {
        views: Vec<crate::analysis::views::RankViews>,
        #[serde(default)]
        steps: Option<StepRange>,
    },
    /// The report over the chosen steps could not be made: why, in words ([`ToWorker::Report`]).
    StepsRefused {
        steps: StepRange,
        message: String,
    },
    /// A file for the user to save.
    Download {
        file_name: String,
        mime: String,
        text: String,
    },
    /// A binary file for the user to save: the message is `[json, ArrayBuffer]`, the buffer (of
    /// `bytes` bytes) transferred, not copied.
    DownloadBytes {
        file_name: String,
        mime: String,
        bytes: u64,
    },
    /// Each rank's table for the cache: the message is `[json, ArrayBuffer, ...]`, one buffer (of
    /// `bytes[i]` bytes) per rank, transferred; `format` is the tables' storage format.
    Tables {
        format: u32,
        bytes: Vec<u64>,
    },
    /// The SQL tab's tables: the message is `[json, ArrayBuffer, ...]`, one Arrow IPC stream per
    /// part, in the order of `parts`, transferred.
    SqlTables {
        parts: Vec<SqlPart>,
    },
    /// The SQL tab's tables could not be made.
    SqlTablesFailed {
        message: String,
    },
    /// The tables could not be prepared for the cache.
    TablesFailed {
        message: String,
    },
    /// Saved tables could not be read back ([`ToWorker::Restore`]).
    RestoreFailed {
        message: String,
    },
    /// A request that could not be served (e.g. nothing loaded yet).
    Error {
        message: String,
    },
}
