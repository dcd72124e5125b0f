//! The page's state as a plain state machine (native, tested without a browser).
//!
//! Invariant: **what is on screen is what the worker can answer about.** A load runs in a fresh
//! worker while the current one keeps the trace shown; only a successful load replaces it
//! ([`Effect::PromoteLoadWorker`]). A failed or cancelled load drops the new worker and shows again
//! what was shown before, which the kept worker still answers about. Results restored from this
//! browser, or kept after the worker died, are [`Page::Restored`]: every request that needs the
//! trace is refused in plain words instead of waiting for an answer that never comes.

use serde::{Deserialize, Serialize};

use crate::analysis::all::{AllAnalyses, AnalysisTiming, Mode};
use crate::analysis::timeline::{EventDetails, TimelineRequest};
use crate::analysis::views::RankViews;
use crate::page::saved::{CacheProblem, SavedEntry, SavedList};
use crate::page::tabs::Tab;
use crate::protocol::{FindingLink, LoadedSet, Located, Progress, RunShown, ToWorker};
use crate::report::compare::Comparison;
use crate::report::diagnosis::DiagnosisReport;
use crate::report::timeline_view::TimelineAnswer;
use crate::table::query::{EventPage, EventQuery, SortBy};
pub use messages::WorkerRole;

/// What the page shows about one loaded set of files.
#[derive(Clone, Debug, Default)]
pub struct Shown {
    pub loaded: LoadedSet,
    /// Cache key of the files (name, size, date), when known.
    pub cache_key: Option<String>,
    /// The diagnosis, as it is and with names hashed.
    pub report: Option<Reports>,
    /// `[exact, HTA 0.5.0-compatible]`.
    pub analyses: [Option<Analyses>; 2],
    /// Two runs of the loaded files compared, once asked for.
    pub comparison: Option<Comparison>,
    /// The TensorBoard-style views of every rank, once asked for.
    pub views: Option<Vec<RankViews>>,
    /// The SQL tab (its engine started when the tab first opens).
    pub sql: crate::page::sql::SqlState,
    /// The step picker: which steps the report and the views are over.
    pub steps: crate::page::step_pick::StepPick,
}

/// The diagnosis as it is, and with kernel and op names replaced by hashes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Reports {
    pub plain: DiagnosisReport,
    pub redacted: DiagnosisReport,
}

/// Every analysis of one mode, with the time each took in the worker (empty when restored).
#[derive(Clone, Debug, Default)]
pub struct Analyses {
    pub all: AllAnalyses,
    pub timings: Vec<AnalysisTiming>,
}

/// Why the worker cannot answer about restored results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detached {
    /// Saved in this browser: the trace was not read again.
    Saved,
    /// The worker holding the trace stopped (its tables are gone).
    WorkerDied,
}

/// Where the page is in its life.
#[derive(Clone, Debug, Default)]
pub enum Page {
    /// Nothing loaded yet.
    #[default]
    Empty,
    /// A load runs in a new worker; `previous` (with what could answer about it) comes back if
    /// the load fails or is cancelled.
    Loading {
        previous: Option<Box<(Shown, Option<Detached>)>>,
        cache_key: Option<String>,
    },
    /// The current worker holds this trace.
    Loaded(Box<Shown>),
    /// Shown without a trace in any worker.
    Restored { shown: Box<Shown>, why: Detached },
    /// The last load gave nothing and nothing was shown before it.
    Failed,
    /// The last load was cancelled and nothing was shown before it.
    Cancelled,
}

/// The "keep in this browser" offer after a load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeepOffer {
    Hidden,
    Asking,
    Kept,
    Declined,
}

/// The exploration view's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Events {
    None,
    Waiting,
    Page(EventPage),
}

/// What the page must do after a transition (the machine itself touches no browser API).
#[derive(Clone, Debug)]
pub enum Effect {
    /// Start a fresh worker for the load and post it the files; the current worker stays.
    StartLoadWorker,
    /// The load succeeded: the load's worker becomes the current one; stop the old one.
    PromoteLoadWorker,
    /// The load ended without a result: stop the load's worker; the current one stays.
    DropLoadWorker,
    /// The current worker died: put a fresh (empty) one in its place.
    ReplaceCurrentWorker,
    /// Send this request to the current worker.
    Post(ToWorker),
    /// Store the results shown now in this browser (the user said Keep).
    Save,
    /// Remove everything saved under this key (results, tables, index entry).
    ForgetEntry(String),
    /// The worker in this role listens: send it what waited for it.
    WorkerReady(WorkerRole),
    /// The load's progress bar shows this.
    ShowProgress(Progress),
    /// The progress bar of a load that ended stops moving (`complete`: every byte was read).
    EndProgress { complete: bool },
    /// The progress bar goes.
    HideProgress,
    /// A note for the browser's console.
    Warn(String),
    /// Offer this text to the user as a file.
    Download {
        text: String,
        mime: String,
        file_name: String,
    },
    /// Offer the binary file that came with the message (its buffer) to the user.
    DownloadBuffer { file_name: String, mime: String },
    /// Store the tables that came with the message (one buffer per rank) with the kept results.
    StoreTables { format: u32, bytes: Vec<u64> },
    /// Bring the timeline into view.
    ScrollToTimeline,
    /// Fetch and start the SQL engine (once per page).
    SqlStart,
    /// Make the SQL tables from the buffers that came with the message (one per part).
    SqlLoad {
        parts: Vec<crate::protocol::SqlPart>,
    },
    /// Run this query in the SQL engine.
    SqlRun(String),
}

/// The exploration view's first query: every event, longest first.
pub fn first_query() -> EventQuery {
    EventQuery {
        sort: SortBy::Duration,
        descending: true,
        limit: 50,
        ..Default::default()
    }
}

/// The whole page state.
#[derive(Clone, Debug)]
pub struct PageState {
    pub page: Page,
    /// Load errors, in plain words.
    pub errors: Vec<String>,
    pub notice: Option<String>,
    /// A request the worker could not serve.
    pub request_error: Option<String>,
    /// The report is shown with names replaced by hashes.
    pub redact: bool,
    /// The deeper analyses are shown in HTA 0.5.0-compatible mode.
    pub hta_compat: bool,
    /// Index into the shown ranks of the rank picked.
    pub rank_index: usize,
    pub keep_offer: KeepOffer,
    /// Saved results exist for the files being loaded or shown.
    pub saved_available: bool,
    pub query: EventQuery,
    pub events: Events,
    /// Grows whenever the results shown change (the page redraws the heavy views on it).
    pub revision: u64,
    /// The load running compares two runs: the files of the baseline, compared once loaded.
    pub pending_compare: Option<Vec<String>>,
    /// The views were asked of the worker and have not come yet.
    pub views_asked: bool,
    /// A comparison was asked of the worker and has not come yet.
    pub comparing: bool,
    /// The timeline's last answer (about the picked rank, from the worker holding the trace).
    pub timeline: Option<TimelineAnswer>,
    /// The timeline's last rank-lanes answer (every rank's GPU busy per pixel).
    pub rank_lanes: Option<crate::analysis::rank_lanes::RankLanesView>,
    /// The event shown in the timeline's details panel.
    pub event_details: Option<EventDetails>,
    /// Where the timeline was last asked to zoom to (a finding's evidence).
    pub timeline_focus: Option<Located>,
    /// Where the arrow keys walked last (the timeline pans to it when it is out of view).
    pub timeline_walked: Option<Located>,
    /// The view shown (its tab), kept in the URL hash by the page.
    pub tab: Tab,
    /// The traces saved in this browser (their index entries), listed on the empty page.
    pub saved: SavedList,
    /// The load running rebuilds the saved trace of this key (no file is read).
    pub opening_saved: Option<String>,
    /// The timeline's search (its hits on the picked rank).
    pub search: crate::page::timeline_search::TimelineSearch,
}

impl Default for PageState {
    fn default() -> Self {
        PageState {
            page: Page::Empty,
            errors: Vec::new(),
            notice: None,
            request_error: None,
            redact: false,
            hta_compat: false,
            rank_index: 0,
            keep_offer: KeepOffer::Hidden,
            saved_available: false,
            query: first_query(),
            events: Events::None,
            revision: 0,
            pending_compare: None,
            comparing: false,
            views_asked: false,
            timeline: None,
            rank_lanes: None,
            event_details: None,
            timeline_focus: None,
            timeline_walked: None,
            tab: Tab::Report,
            saved: SavedList::default(),
            opening_saved: None,
            search: Default::default(),
        }
    }
}

/// Says plainly what needs the trace file again.
pub fn needs_file_text(why: Detached) -> &'static str {
    match why {
        Detached::Saved => {
            "These results were saved in this browser; the trace itself was not read again. To explore \
             the events or compute the other mode of the deeper analyses, load the trace file again."
        }
        Detached::WorkerDied => {
            "The page's worker stopped, so the trace is no longer held in this tab. To explore the events \
             or compute the other mode of the deeper analyses, load the trace file again."
        }
    }
}

impl PageState {
    /// The results on screen, if any (none while a load runs).
    pub fn shown(&self) -> Option<&Shown> {
        match &self.page {
            Page::Loaded(s) | Page::Restored { shown: s, .. } => Some(s),
            _ => None,
        }
    }

    fn shown_mut(&mut self) -> Option<&mut Shown> {
        match &mut self.page {
            Page::Loaded(s) | Page::Restored { shown: s, .. } => Some(s),
            _ => None,
        }
    }

    /// The worker holds the trace on screen (requests about it will be answered).
    pub fn worker_answers(&self) -> bool {
        matches!(self.page, Page::Loaded(_))
    }

    /// Why the results shown cannot be asked about, when they cannot.
    pub fn detached(&self) -> Option<Detached> {
        match self.page {
            Page::Restored { why, .. } => Some(why),
            _ => None,
        }
    }

    pub fn is_loading(&self) -> bool {
        matches!(self.page, Page::Loading { .. })
    }

    /// The Cancel button works only while a load runs.
    pub fn can_cancel(&self) -> bool {
        self.is_loading()
    }

    /// The analyses of the mode asked for, if the page has them.
    pub fn analyses(&self) -> Option<&Analyses> {
        self.shown()?.analyses[self.hta_compat as usize].as_ref()
    }

    /// The report as shown (redacted when the switch is on).
    pub fn report_shown(&self) -> Option<DiagnosisReport> {
        let report = self.shown()?.report.as_ref()?;
        Some(if self.redact {
            report.redacted.clone()
        } else {
            report.plain.clone()
        })
    }

    /// The report's findings that point at events: the query from the plain report (it needs real
    /// names), the title as shown (hashed when "Redact names" is on).
    pub fn finding_links(&self) -> Vec<FindingLink> {
        let Some(reports) = self.shown().and_then(|s| s.report.as_ref()) else {
            return Vec::new();
        };
        let titles = if self.redact {
            &reports.redacted
        } else {
            &reports.plain
        };
        reports
            .plain
            .findings
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                f.filter.as_ref().map(|filter| FindingLink {
                    id: f.id.as_str().to_string(),
                    title: titles
                        .findings
                        .get(i)
                        .map_or_else(String::new, |t| t.title.to_markdown()),
                    query: filter.to_query(),
                })
            })
            .collect()
    }

    /// A page of events for the query asked last.
    pub fn events(&mut self, page: EventPage) {
        if self.worker_answers() {
            self.events = Events::Page(page);
        }
    }

    /// The events, timeline and details shown belonged to another trace or worker.
    fn clear_views(&mut self) {
        self.events = Events::None;
        self.timeline_focus = None;
        self.timeline_walked = None;
        self.timeline = None;
        self.rank_lanes = None;
        self.event_details = None;
        self.views_asked = false;
        self.search = Default::default();
    }

    /// A request the worker could not serve.
    pub fn request_failed(&mut self, message: String) {
        self.request_error = Some(message);
        self.comparing = false;
        if self.events == Events::Waiting {
            self.events = Events::None;
        }
    }

    /// The exploration view asks for events. Refused (nothing posted) when no worker holds the trace.
    pub fn run_query(&mut self, query: EventQuery) -> Vec<Effect> {
        self.query = query.clone();
        if !self.worker_answers() {
            return Vec::new();
        }
        self.events = Events::Waiting;
        vec![Effect::Post(ToWorker::Query { query })]
    }

    /// The current query's CSV, when a worker holds the trace.
    pub fn export(&self) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        vec![Effect::Post(ToWorker::Export {
            query: self.query.clone(),
            redact: self.redact,
        })]
    }

    /// "Download table": the whole event table as a file in `format`, when a worker holds the trace
    /// (names hashed and args left out when the redact switch is on).
    pub fn export_table(&self, format: crate::export::ExportFormat) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        vec![Effect::Post(ToWorker::ExportTable {
            format,
            columns: Vec::new(),
            redact: self.redact,
        })]
    }

    /// The HTA switch: the analyses of both modes are kept; the missing mode is asked for.
    pub fn set_hta_compat(&mut self, on: bool) -> Vec<Effect> {
        self.hta_compat = on;
        if self.worker_answers() && self.analyses().is_none() {
            return vec![Effect::Post(ToWorker::Analyze {
                mode: Mode::of_switch(on),
            })];
        }
        Vec::new()
    }

    /// The redact switch: every view hashes the names it shows (the report, the explorer and its
    /// CSV, the analyses, the timeline); the page holds both forms, so no worker is needed.
    pub fn set_redact(&mut self, on: bool) {
        self.redact = on;
    }

    /// The explorer's answer as shown (names hashed when the redact switch is on).
    pub fn events_shown(&self) -> Events {
        match &self.events {
            Events::Page(page) if self.redact => {
                Events::Page(crate::report::redact::redact_event_page(page.clone()))
            }
            other => other.clone(),
        }
    }

    /// The timeline's answer as shown (names hashed when the redact switch is on).
    pub fn timeline_shown(&self) -> Option<TimelineAnswer> {
        let a = self.timeline.clone()?;
        Some(if self.redact {
            crate::report::redact::redact_timeline(a)
        } else {
            a
        })
    }

    /// The details panel's event as shown (names hashed when the redact switch is on).
    pub fn event_details_shown(&self) -> Option<EventDetails> {
        let d = self.event_details.clone()?;
        Some(if self.redact {
            crate::report::redact::redact_event_details(d)
        } else {
            d
        })
    }

    /// The user picked a tab (or the URL hash names one).
    pub fn set_tab(&mut self, tab: Tab) {
        self.tab = tab;
    }

    /// A finding's "show the events": the explorer shows them.
    pub fn open_finding(&mut self, link: &FindingLink) -> Vec<Effect> {
        self.tab = Tab::Explore;
        self.run_query(link.query.clone())
    }

    /// The user picked a rank.
    pub fn pick_rank(&mut self, index: usize) {
        if index != self.rank_index {
            self.timeline = None;
            self.event_details = None;
        }
        self.rank_index = index;
    }
}

#[path = "page_state_load.rs"]
mod load;

#[path = "page_state_saved.rs"]
mod saved;
pub use saved::{decode_saved, encode_saved, SavedError, SavedResults, SAVED_FORMAT};

#[path = "page_state_views.rs"]
mod views;

#[path = "page_state_messages.rs"]
mod messages;

#[path = "page_state_sql.rs"]
mod sql;

#[cfg(test)]
#[path = "page_state_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "page_state_views_tests.rs"]
mod views_tests;

#[cfg(test)]
#[path = "page_state_saved_tests.rs"]
mod saved_tests;
