//! The page state's requests for what the worker draws from the loaded trace (the timeline, an
//! event's details, the Perfetto file, the TensorBoard-style views) and its answers: asked only
//! of a worker that holds the trace, kept only when about the rank picked now.

use super::{Effect, PageState};
use crate::analysis::rank_lanes::RankLanesView;
use crate::analysis::step_filter::StepRange;
use crate::analysis::timeline::{AnalysedWindow, EventDetails, SearchHit, TimelineRequest};
use crate::analysis::views::RankViews;
use crate::page::step_pick::parse_inputs;
use crate::protocol::{FindingLink, Located, ToWorker};
use crate::report::timeline_view::TimelineAnswer;
use crate::table::query::EventQuery;

impl PageState {
    /// The timeline asks what is visible of the picked rank. Refused (nothing posted) when no
    /// worker holds the trace.
    pub fn ask_timeline(&mut self, request: TimelineRequest) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        vec![Effect::Post(ToWorker::Timeline {
            rank_index: self.rank_index,
            request,
        })]
    }

    /// The worker's timeline answer, kept when it is about the rank picked now.
    pub fn timeline_answer(&mut self, answer: TimelineAnswer) {
        if self.worker_answers() && answer.rank_index == self.rank_index {
            self.timeline = Some(answer);
        }
    }

    /// The timeline's rank lanes ask for every rank's GPU busy in a range. Refused (nothing posted)
    /// when no worker holds the trace.
    pub fn ask_rank_lanes(&mut self, request: TimelineRequest) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        vec![Effect::Post(ToWorker::RankLanes { request })]
    }

    /// The worker's rank lanes, kept when a worker holds the trace.
    pub fn rank_lanes_answer(&mut self, view: RankLanesView) {
        if self.worker_answers() {
            self.rank_lanes = Some(view);
        }
    }

    /// A rank's row of the rank lanes was clicked: that rank is picked.
    pub fn pick_rank_lane(&mut self, rank_index: usize) {
        let known = self
            .rank_lanes
            .as_ref()
            .is_some_and(|v| v.lanes.iter().any(|l| l.rank_index == rank_index));
        if known {
            self.pick_rank(rank_index);
        }
    }

    /// "Show on timeline": ask where a finding's evidence is.
    pub fn locate(&mut self, link: &FindingLink) -> Vec<Effect> {
        self.locate_events(link.query.clone())
    }

    /// "Show on timeline" on a row naming events: ask where the longest of them is, inside the
    /// window the report shown analysed (the automatic one, or the steps picked) when one is.
    pub fn locate_events(&mut self, query: EventQuery) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        vec![Effect::Post(ToWorker::Locate {
            query,
            within: self.analysed_windows(),
        })]
    }

    /// The window the report shown analysed on each rank (none before a report): the steps the
    /// report and the views are over, as the report's context defines them.
    pub fn analysed_windows(&self) -> Vec<AnalysedWindow> {
        let Some(report) = self.shown().and_then(|s| s.report.as_ref()) else {
            return Vec::new();
        };
        report
            .plain
            .context
            .windows
            .iter()
            .map(|w| AnalysedWindow {
                rank: w.rank,
                start_ns: w.start_ns,
                end_ns: w.end_ns,
            })
            .collect()
    }

    /// "Show on timeline" on one event of the explorer (its rank, row, `ts` and `dur` in µs): the
    /// timeline goes straight to it, nothing to ask.
    pub fn show_event(&mut self, rank: i64, row: u32, ts_us: f64, dur_us: f64) -> Vec<Effect> {
        let Some(rank_index) = self
            .shown()
            .and_then(|s| s.loaded.ranks.iter().position(|r| r.rank == rank))
        else {
            return Vec::new();
        };
        let mut effects = self.located(Located {
            rank_index,
            row,
            start_ns: (ts_us * 1e3).round() as i64,
            dur_ns: (dur_us * 1e3).round() as i64,
            outside: false,
        });
        effects.push(Effect::ScrollToTimeline);
        effects
    }

    /// The evidence was found: its rank is picked, the timeline zooms to it and shows its details.
    pub fn located(&mut self, at: Located) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        self.pick_rank(at.rank_index);
        self.timeline_focus = Some(at);
        self.tab = crate::page::tabs::Tab::Timeline;
        if at.row == Located::NO_ROW {
            return Vec::new();
        }
        self.ask_event_details(at.row)
    }

    /// "Download for Perfetto": the picked rank's trace with what was found added.
    pub fn ask_perfetto(&self) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        vec![Effect::Post(ToWorker::Perfetto {
            rank_index: self.rank_index,
            redact: self.redact,
        })]
    }

    /// The loaded set as the page shows it: file and kernel names hashed when "Redact names" is on.
    pub fn loaded_shown(&self) -> Option<crate::protocol::LoadedSet> {
        let loaded = self.shown()?.loaded.clone();
        Some(if self.redact {
            crate::page::redacted_load::redact_loaded(loaded)
        } else {
            loaded
        })
    }

    /// The details panel asks about one event of the picked rank.
    pub fn ask_event_details(&mut self, row: u32) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        vec![Effect::Post(ToWorker::EventDetails {
            rank_index: self.rank_index,
            row,
        })]
    }

    /// The worker's details of an event, kept when about the rank picked now.
    pub fn event_details(&mut self, details: EventDetails) {
        if self.worker_answers() && details.rank_index == self.rank_index {
            self.event_details = Some(details);
        }
    }

    /// The arrow keys' left/right from the selected event (row `from`): the next or previous event
    /// on its lane, asked of the worker, which finds it wherever it is (not only in the range drawn).
    pub fn walk_timeline(&mut self, from: u32, forward: bool) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        vec![Effect::Post(ToWorker::Walk {
            rank_index: self.rank_index,
            row: from,
            forward,
        })]
    }

    /// Where the walk went: that event is selected (its details asked) and kept in
    /// [`PageState::timeline_walked`], so the timeline brings it into view. Nothing at a lane's end
    /// or for another rank than the one picked now.
    pub fn walked(&mut self, rank_index: usize, to: Option<SearchHit>) -> Vec<Effect> {
        let Some(hit) = to.filter(|_| self.worker_answers() && rank_index == self.rank_index)
        else {
            return Vec::new();
        };
        self.timeline_walked = Some(Located {
            rank_index,
            row: hit.row,
            start_ns: hit.start_ns,
            dur_ns: hit.end_ns - hit.start_ns,
            outside: false,
        });
        self.revision += 1;
        self.ask_event_details(hit.row)
    }

    /// Escape: no event selected.
    pub fn clear_event_details(&mut self) {
        self.event_details = None;
    }

    /// The views (operators, kernels, step time, memory, modules) are wanted: asked of the worker
    /// once per loaded set. Nothing is posted when they are here, asked already, or no worker holds
    /// the trace (restored results: the views need the file again).
    pub fn ask_views(&mut self) -> Vec<Effect> {
        if !self.worker_answers() || self.views_asked {
            return Vec::new();
        }
        if self.shown().is_some_and(|s| s.views.is_some()) {
            return Vec::new();
        }
        self.views_asked = true;
        let steps = self.shown().and_then(|s| s.steps.wanted());
        vec![Effect::Post(ToWorker::Views { steps })]
    }

    /// The current worker's views (over `steps`), kept when over the steps asked last.
    pub fn views(&mut self, views: Vec<RankViews>, steps: Option<StepRange>) {
        if !self.worker_answers() {
            return;
        }
        let Some(s) = self.shown_mut() else {
            return;
        };
        if !s.steps.on_views(steps) {
            return;
        }
        s.views = Some(views);
        self.views_asked = false;
        self.revision += 1;
    }

    /// The step picker applies `first..=last` (`None`: back to the automatic window): the report,
    /// and the views when they were asked, are asked again over those steps. A range the trace
    /// lacks is refused in words, nothing asked; so is everything when no worker holds the trace.
    pub fn pick_steps(&mut self, range: Option<StepRange>) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        let views_wanted = self.views_asked || self.shown().is_some_and(|s| s.views.is_some());
        let Some(s) = self.shown_mut() else {
            return Vec::new();
        };
        if let Some((first, last)) = range {
            if let Err(e) = s.steps.check(first, last) {
                s.steps.error = Some(e);
                self.revision += 1;
                return Vec::new();
            }
        }
        s.steps.ask(range);
        let mut effects = vec![Effect::Post(ToWorker::Report {
            redact: false,
            steps: range,
        })];
        if views_wanted {
            self.views_asked = true;
            effects.push(Effect::Post(ToWorker::Views { steps: range }));
        }
        self.revision += 1;
        effects
    }

    /// The timeline's search box asks for `text` on the picked rank (an empty text clears the
    /// search). Refused (nothing posted) when no worker holds the trace.
    pub fn search_timeline(&mut self, text: &str) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        self.revision += 1;
        if !self.search.ask(self.rank_index, text) {
            return Vec::new();
        }
        vec![Effect::Post(ToWorker::Search {
            rank_index: self.rank_index,
            text: self.search.text.clone(),
        })]
    }

    /// The worker's hits, kept when they answer the search asked last; the first is shown.
    pub fn search_hits(
        &mut self,
        rank_index: usize,
        text: &str,
        hits: Vec<crate::analysis::timeline::SearchHit>,
        total: u64,
    ) -> Vec<Effect> {
        if !self.worker_answers() || !self.search.on_hits(rank_index, text, hits, total) {
            return Vec::new();
        }
        self.revision += 1;
        self.search_step(true)
    }

    /// Next (`forward`) or previous hit: the timeline goes there and shows its details.
    pub fn search_step(&mut self, forward: bool) -> Vec<Effect> {
        match self.search.step(forward) {
            Some(at) => self.located(at),
            None => Vec::new(),
        }
    }

    /// The picker's inputs applied: read as a range ([`parse_inputs`]), else why not, beside it.
    pub fn pick_steps_text(&mut self, first: &str, last: &str) -> Vec<Effect> {
        match parse_inputs(first, last) {
            Ok(range) => self.pick_steps(Some(range)),
            Err(e) => {
                if let Some(s) = self.shown_mut() {
                    s.steps.error = Some(e);
                }
                self.revision += 1;
                Vec::new()
            }
        }
    }

    /// The worker could not make the report over the steps asked: why, beside the picker.
    pub fn steps_refused(&mut self, steps: StepRange, message: String) {
        if let Some(s) = self.shown_mut() {
            s.steps.refused(steps, message);
        }
        self.revision += 1;
    }

    /// The views of the rank at `index` (the first when out of range) as shown: names hashed when
    /// the redact switch is on.
    pub fn views_shown(&self, index: usize) -> Option<RankViews> {
        let views = self.shown()?.views.as_ref()?;
        let v = views.get(index).or_else(|| views.first())?.clone();
        Some(if self.redact {
            crate::report::redact::redact_views(v)
        } else {
            v
        })
    }
}
