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
                        .map_or_else(String::new, |t| t.title.clone()),
                    query: filter.to_query(),
                })
            })
            .collect()
    }

    /// A load of files with this cache key starts in a new worker.
    pub fn start_load(&mut self, cache_key: Option<String>) -> Vec<Effect> {
        let mut effects = Vec::new();
        let previous = match std::mem::take(&mut self.page) {
            Page::Loaded(s) => Some(Box::new((*s, None))),
            Page::Restored { shown, why } => Some(Box::new((*shown, Some(why)))),
            Page::Loading { previous, .. } => {
                effects.push(Effect::DropLoadWorker);
                previous
            }
            Page::Empty | Page::Failed | Page::Cancelled => None,
        };
        self.page = Page::Loading {
            previous,
            cache_key,
        };
        self.errors.clear();
        self.notice = None;
        self.request_error = None;
        self.keep_offer = KeepOffer::Hidden;
        self.saved_available = false;
        self.clear_views();
        self.query = first_query();
        self.pending_compare = None;
        self.comparing = false;
        self.opening_saved = None;
        effects.push(Effect::StartLoadWorker);
        effects
    }

    /// A load of two runs (the `baseline` files and the others) starts; they are compared once loaded.
    pub fn start_compare_load(
        &mut self,
        cache_key: Option<String>,
        baseline: Vec<String>,
    ) -> Vec<Effect> {
        let effects = self.start_load(cache_key);
        self.pending_compare = Some(baseline);
        self.tab = Tab::Compare;
        effects
    }

    /// Compares the two runs the loaded files hold (the split the worker proposed).
    pub fn compare_runs(&mut self) -> Vec<Effect> {
        let Some(runs) = self.shown().and_then(|s| s.loaded.runs.clone()) else {
            return Vec::new();
        };
        if !self.worker_answers() {
            self.request_error = Some(
                "The trace is no longer held in this tab: load the files again to compare them."
                    .into(),
            );
            return Vec::new();
        }
        self.comparing = true;
        self.tab = Tab::Compare;
        vec![Effect::Post(ToWorker::Compare {
            baseline_files: runs.baseline,
        })]
    }

    /// The current worker's comparison of two runs. When the worker now holds the candidate run
    /// alone (`shown`), the page shows that run: its ranks replace the set's, and what was shown of
    /// both runs mixed (report, analyses, views, timeline, events) is asked again for it.
    pub fn compared(&mut self, comparison: Comparison, shown: Option<RunShown>) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        self.comparing = false;
        self.revision += 1;
        let Some(s) = self.shown_mut() else {
            return Vec::new();
        };
        s.comparison = Some(comparison);
        let Some(run) = shown else {
            return Vec::new();
        };
        s.show_one_run(run);
        self.clear_views();
        self.rank_index = 0;
        self.query = first_query();
        self.events = Events::Waiting;
        self.first_requests()
    }

    /// One file of the load could not be read (the others go on).
    pub fn file_failed(&mut self, text: String) {
        self.errors.push(text);
    }

    /// The load's worker holds the new set: it becomes the current worker.
    pub fn loaded(&mut self, loaded: LoadedSet) -> Vec<Effect> {
        if !self.is_loading() {
            return Vec::new();
        }
        let Page::Loading { cache_key, .. } = std::mem::take(&mut self.page) else {
            return Vec::new();
        };
        self.page = Page::Loaded(Box::new(Shown {
            loaded,
            cache_key,
            ..Default::default()
        }));
        self.rank_index = 0;
        self.revision += 1;
        if self.opening_saved.take().is_some() {
            // Opened from this browser's cache: kept already (the results are saved again as
            // they come, the tables are not).
            self.keep_offer = KeepOffer::Kept;
            self.saved_available = false;
        } else if !self.saved_available {
            self.keep_offer = KeepOffer::Asking;
        }
        self.query = first_query();
        self.events = Events::Waiting;
        let mut effects = vec![Effect::PromoteLoadWorker];
        if let Some(baseline_files) = self.pending_compare.take() {
            // Two runs: compared first; the worker then holds the candidate alone and the page
            // asks for its report and views (never both runs mixed as ranks of one job).
            self.comparing = true;
            effects.push(Effect::Post(ToWorker::Compare { baseline_files }));
            return effects;
        }
        effects.extend(self.first_requests());
        effects
    }

    /// What the page asks of a set it now shows: the timeline's first frame first (its index only,
    /// a fraction of the report's time), then the report, the analyses and the first events.
    fn first_requests(&self) -> Vec<Effect> {
        vec![
            Effect::Post(ToWorker::Timeline {
                rank_index: self.rank_index,
                request: TimelineRequest {
                    start_ns: 0,
                    end_ns: 0,
                    width_px: 1200,
                },
            }),
            Effect::Post(ToWorker::Report {
                redact: false,
                steps: None,
            }),
            Effect::Post(ToWorker::Analyze {
                mode: Mode::of_switch(self.hta_compat),
            }),
            Effect::Post(ToWorker::Query {
                query: self.query.clone(),
            }),
        ]
    }

    /// Ends a load without a result: what was shown before comes back, with its worker.
    fn end_load(&mut self, nothing_before: Page) -> bool {
        if !self.is_loading() {
            return false;
        }
        let Page::Loading { previous, .. } = std::mem::take(&mut self.page) else {
            return false;
        };
        self.keep_offer = KeepOffer::Hidden;
        self.rank_index = 0;
        self.revision += 1;
        self.pending_compare = None;
        self.opening_saved = None;
        match previous.map(|b| *b) {
            Some((shown, None)) => {
                self.page = Page::Loaded(Box::new(shown));
                self.events = Events::Waiting;
            }
            Some((shown, Some(why))) => {
                self.page = Page::Restored {
                    shown: Box::new(shown),
                    why,
                };
            }
            None => self.page = nothing_before,
        }
        true
    }

    /// Effects of a load that ended without a result: the old worker stays; its events come again.
    fn after_end(&self) -> Vec<Effect> {
        let mut effects = vec![Effect::DropLoadWorker];
        if self.worker_answers() {
            effects.push(Effect::Post(ToWorker::Query {
                query: self.query.clone(),
            }));
        }
        effects
    }

    /// No file of the load could be read.
    pub fn nothing_loaded(&mut self) -> Vec<Effect> {
        if !self.end_load(Page::Failed) {
            return Vec::new();
        }
        self.after_end()
    }

    /// The user stopped the load.
    pub fn cancel(&mut self) -> Vec<Effect> {
        if !self.end_load(Page::Cancelled) {
            return Vec::new();
        }
        if self.shown().is_some() {
            self.notice = Some(
                "Cancelled: the new load was stopped; the trace loaded before is shown.".into(),
            );
        }
        self.after_end()
    }

    /// The load's worker stopped with an error (`text` says so in plain words).
    pub fn load_worker_died(&mut self, text: String) -> Vec<Effect> {
        if !self.is_loading() {
            return Vec::new();
        }
        self.errors.push(text);
        self.end_load(Page::Failed);
        self.after_end()
    }

    /// The current worker stopped: the results stay on screen, marked as needing the file again.
    pub fn current_worker_died(&mut self, text: String) -> Vec<Effect> {
        if let Page::Loaded(shown) = &mut self.page {
            let shown = std::mem::take(shown);
            self.page = Page::Restored {
                shown,
                why: Detached::WorkerDied,
            };
            self.clear_views();
            if let Some(sql) = self.sql_mut() {
                sql.worker_stopped();
            }
            self.request_error = Some(text);
            self.revision += 1;
        } else if let Page::Loading {
            previous: Some(prev),
            ..
        } = &mut self.page
        {
            if prev.1.is_none() {
                prev.1 = Some(Detached::WorkerDied);
            }
        }
        vec![Effect::ReplaceCurrentWorker]
    }

    fn save_if_kept(&self) -> Vec<Effect> {
        if self.keep_offer == KeepOffer::Kept && self.worker_answers() {
            vec![Effect::Save]
        } else {
            Vec::new()
        }
    }

    /// The current worker's diagnosis.
    pub fn report(&mut self, report: Reports) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        if let Some(s) = self.shown_mut() {
            if !s.steps.on_report(&report.plain.context) {
                return Vec::new();
            }
            s.report = Some(report);
        }
        self.revision += 1;
        self.save_if_kept()
    }

    /// The current worker's analyses (of the mode they say).
    pub fn analysis(&mut self, all: AllAnalyses, timings: Vec<AnalysisTiming>) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        let slot = (all.mode == Mode::HtaCompat) as usize;
        if let Some(s) = self.shown_mut() {
            s.analyses[slot] = Some(Analyses { all, timings });
        }
        self.revision += 1;
        self.save_if_kept()
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

    /// Saved results exist for the files of the load (or set) with this key.
    pub fn saved_found(&mut self, key: &str) {
        let current = match &self.page {
            Page::Loading { cache_key, .. } => cache_key.as_deref(),
            Page::Loaded(s) => s.cache_key.as_deref(),
            _ => None,
        };
        if current == Some(key) {
            self.saved_available = true;
            if self.keep_offer == KeepOffer::Asking {
                self.keep_offer = KeepOffer::Kept;
            }
        }
    }

    /// "Show the saved results": they replace the load or the results shown. No worker holds them.
    pub fn restore_saved(&mut self, saved: SavedResults, key: String) -> Vec<Effect> {
        let effects = if self.is_loading() {
            vec![Effect::DropLoadWorker]
        } else {
            Vec::new()
        };
        let mut analyses: [Option<Analyses>; 2] = [None, None];
        for all in saved.analyses {
            let slot = (all.mode == Mode::HtaCompat) as usize;
            analyses[slot] = Some(Analyses {
                all,
                timings: Vec::new(),
            });
        }
        let mut steps = crate::page::step_pick::StepPick::default();
        if let Some(r) = &saved.report {
            steps.on_report(&r.plain.context);
        }
        self.page = Page::Restored {
            shown: Box::new(Shown {
                loaded: saved.loaded,
                cache_key: Some(key),
                report: saved.report,
                analyses,
                comparison: None,
                views: None,
                sql: Default::default(),
                steps,
            }),
            why: Detached::Saved,
        };
        self.redact = saved.redact;
        self.rank_index = 0;
        self.revision += 1;
        self.keep_offer = KeepOffer::Hidden;
        self.clear_views();
        self.request_error = None;
        effects
    }

    /// The user said Keep (or No).
    pub fn set_keep(&mut self, offer: KeepOffer) {
        self.keep_offer = offer;
    }

    /// The key of the files being loaded or shown.
    pub fn current_key(&self) -> Option<&str> {
        match &self.page {
            Page::Loading { cache_key, .. } => cache_key.as_deref(),
            _ => self.shown().and_then(|s| s.cache_key.as_deref()),
        }
    }

    /// The user said Keep: the results are stored, and (when a worker holds the trace) its tables
    /// are asked for, to be stored too. Nothing is stored before this.
    pub fn keep(&mut self) -> Vec<Effect> {
        if self.shown().and_then(|s| s.cache_key.as_ref()).is_none() {
            return Vec::new();
        }
        self.keep_offer = KeepOffer::Kept;
        let mut effects = vec![Effect::Save];
        if self.worker_answers() {
            effects.push(Effect::Post(ToWorker::StoreTables));
        }
        effects
    }

    /// The worker's tables arrived: whether to store them under this key (only while the trace
    /// shown is the one kept).
    pub fn tables_wanted(&self) -> Option<String> {
        if self.keep_offer != KeepOffer::Kept || !self.worker_answers() {
            return None;
        }
        self.shown()?.cache_key.clone()
    }

    /// The traces saved in this browser, as the index lists them.
    pub fn saved_listed(&mut self, entries: Vec<SavedEntry>) {
        self.saved = SavedList::of(entries);
    }

    /// A trace was stored (its tables, results and index entry).
    pub fn stored(&mut self, entry: SavedEntry) {
        self.saved.upsert(entry);
    }

    /// Storing the trace of `key` failed: the user is told, what was stored of it goes, and what is
    /// on screen stays.
    pub fn store_failed(&mut self, key: &str, problem: CacheProblem) -> Vec<Effect> {
        self.notice = Some(problem.message().into());
        if self.keep_offer == KeepOffer::Kept {
            self.keep_offer = KeepOffer::Hidden;
        }
        self.saved_available = false;
        self.saved.remove(key);
        vec![Effect::ForgetEntry(key.to_string())]
    }

    /// The saved trace of this key, when its tables are stored (it can be opened without the file).
    pub fn saved_tables(&self, key: &str) -> Option<&SavedEntry> {
        self.saved
            .get(key)
            .filter(|e| e.rank_count() > 0 && e.format == crate::table::store::STORE_FORMAT)
    }

    /// "Open" (or "Show the saved results" for dropped files of this key): the saved tables were
    /// read; a fresh worker rebuilds the set from them, and then the page goes on as after a load.
    /// What was shown stays until it succeeds. The page posts the tables to the load's worker.
    pub fn open_saved(&mut self, key: &str) -> Vec<Effect> {
        if self.saved_tables(key).is_none() {
            // Saved in another storage format, or without its tables.
            return self.saved_broken(key, CacheProblem::Corrupt);
        }
        let effects = self.start_load(Some(key.to_string()));
        self.opening_saved = Some(key.to_string());
        effects
    }

    /// The saved trace of `key` could not be opened (a table missing, or unreadable): the user is
    /// told, the entry goes, and what was shown before stays.
    pub fn saved_broken(&mut self, key: &str, problem: CacheProblem) -> Vec<Effect> {
        let mut effects = Vec::new();
        if self.opening_saved.as_deref() == Some(key) && self.end_load(Page::Empty) {
            effects = self.after_end();
        }
        self.notice = Some(problem.message().into());
        self.saved.remove(key);
        if self.current_key() == Some(key) {
            self.saved_available = false;
        }
        effects.push(Effect::ForgetEntry(key.to_string()));
        effects
    }

    /// "Forget" on one saved trace: its entry goes from the list and the store; what is on screen
    /// stays (its results can be kept again).
    pub fn forget_entry(&mut self, key: &str) -> Vec<Effect> {
        let Some(entry) = self.saved.get(key) else {
            return Vec::new();
        };
        self.notice = Some(format!(
            "Forgot {} ({} freed).",
            entry.names(),
            crate::report::format::bytes(entry.bytes())
        ));
        self.saved.remove(key);
        if self.current_key() == Some(key) {
            self.saved_available = false;
            if self.keep_offer == KeepOffer::Kept {
                self.keep_offer = KeepOffer::Hidden;
            }
        }
        vec![Effect::ForgetEntry(key.to_string())]
    }

    /// "Forget saved traces" cleared the cache.
    pub fn forgotten(&mut self, ok: bool) {
        if !ok {
            self.notice = Some("This browser did not let the page clear its saved traces.".into());
            return;
        }
        let freed = self.saved.total_bytes();
        self.saved = SavedList::default();
        self.saved_available = false;
        if self.keep_offer == KeepOffer::Kept {
            self.keep_offer = KeepOffer::Hidden;
        }
        self.notice = Some(format!(
            "Saved traces forgotten ({} freed): nothing is kept in this browser.",
            crate::report::format::bytes(freed)
        ));
    }

    /// What to store when the user keeps the results shown.
    pub fn to_saved(&self) -> Option<(String, SavedResults)> {
        let s = self.shown()?;
        Some((
            s.cache_key.clone()?,
            SavedResults {
                format: SAVED_FORMAT,
                loaded: s.loaded.clone(),
                report: s.report.clone(),
                redact: self.redact,
                analyses: s.analyses.iter().flatten().map(|a| a.all.clone()).collect(),
            },
        ))
    }
}

/// Version of [`SavedResults`]' layout. 1 (implicit) held the report as Markdown and the analyses
/// as untyped JSON; 2 holds both typed.
/// Format 3: the results in the messages' wire format ([`crate::protocol::codec`]); formats 1
/// and 2 were JSON text.
pub const SAVED_FORMAT: u32 = 3;

/// What this browser keeps for one set of files (results only, never the trace).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SavedResults {
    pub format: u32,
    pub loaded: LoadedSet,
    pub report: Option<Reports>,
    /// The report was shown with names hashed.
    #[serde(default)]
    pub redact: bool,
    /// The analyses computed, one per mode.
    #[serde(default)]
    pub analyses: Vec<AllAnalyses>,
}

/// Why saved results cannot be shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SavedError {
    /// Saved by an older version of the page (the message says what to do).
    Older,
    /// Saved by a newer version, or damaged.
    Unreadable,
}

impl SavedError {
    pub fn message(&self) -> &'static str {
        match self {
            SavedError::Older => {
                "These results were saved by an older version of this page: load the trace again."
            }
            SavedError::Unreadable => {
                "The saved results could not be read by this version of the page: load the trace again."
            }
        }
    }
}

/// Saved results as this version writes them ([`decode_saved`] reads them back).
pub fn encode_saved(saved: &SavedResults) -> Option<Vec<u8>> {
    crate::protocol::codec::encode(saved).ok()
}

/// Reads saved results (`saved`: the stored bytes, or the UTF-8 of the JSON text formats 1 and 2
/// stored), refusing what this version cannot show politely.
pub fn decode_saved(saved: &[u8]) -> Result<SavedResults, SavedError> {
    /// The first field of [`SavedResults`].
    #[derive(Deserialize)]
    struct Header {
        format: u32,
    }
    if saved.first() == Some(&b'{') {
        // JSON text: formats 1 and 2 (format 1 kept only the report's Markdown).
        return Err(SavedError::Older);
    }
    let (header, _) = crate::protocol::codec::decode_prefix::<Header>(saved)
        .map_err(|_| SavedError::Unreadable)?;
    match header.format {
        SAVED_FORMAT => crate::protocol::codec::decode(saved).map_err(|_| SavedError::Unreadable),
        f if f < SAVED_FORMAT => Err(SavedError::Older),
        _ => Err(SavedError::Unreadable),
    }
}

#[path = "page_state_views.rs"]
mod views;

#[path = "page_state_messages.rs"]
mod messages;

#[path = "page_state_sql.rs"]
mod sql;

#[cfg(test)]
#[path = "page_state_tests.rs"]
mod tests;
