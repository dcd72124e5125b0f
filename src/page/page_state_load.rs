//! The page state's loads: a load in a fresh worker, its end (the set shown, or what was shown
//! before back), a comparison's two runs, the workers that die, and the first answers (report,
//! analyses) of the worker that holds the trace.

use super::*;

impl PageState {
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
    pub(super) fn first_requests(&self) -> Vec<Effect> {
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
    pub(super) fn end_load(&mut self, nothing_before: Page) -> bool {
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
    pub(super) fn after_end(&self) -> Vec<Effect> {
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

    pub(super) fn save_if_kept(&self) -> Vec<Effect> {
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
}
