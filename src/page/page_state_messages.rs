//! The page state receives each worker message: which transition it makes, and what the browser
//! side must do about it ([`Effect`]s), by the role of the worker that sent it.

use super::{Effect, PageState, Reports};
use crate::page::saved::CacheProblem;
use crate::protocol::FromWorker;

/// Which of the page's workers a message comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkerRole {
    /// The worker holding the trace on screen.
    Current,
    /// The worker of the load in progress.
    Loader,
    /// The worker started ahead for the next load.
    Spare,
    /// A worker the page no longer uses.
    Gone,
}

impl PageState {
    /// A message of the worker in role `from`: the transition it makes, and the effects.
    pub fn on_message(&mut self, from: WorkerRole, msg: FromWorker) -> Vec<Effect> {
        match (from, msg) {
            (_, FromWorker::Ready) => vec![Effect::WorkerReady(from)],
            (
                _,
                FromWorker::DownloadBytes {
                    file_name, mime, ..
                },
            ) => vec![Effect::DownloadBuffer { file_name, mime }],
            (WorkerRole::Loader, msg) => self.on_loader_message(msg),
            (WorkerRole::Current, msg) => self.on_current_message(msg),
            (WorkerRole::Spare | WorkerRole::Gone, _) => Vec::new(),
        }
    }

    /// Messages of the load's worker.
    fn on_loader_message(&mut self, msg: FromWorker) -> Vec<Effect> {
        match msg {
            FromWorker::Progress(p) => vec![Effect::ShowProgress(p)],
            FromWorker::Failed { file, message } => {
                self.file_failed(if message.contains(&file) {
                    message
                } else {
                    format!("{file}: {message}")
                });
                Vec::new()
            }
            FromWorker::NothingLoaded => {
                let mut effects = vec![Effect::EndProgress { complete: false }];
                effects.extend(self.nothing_loaded());
                effects.extend(self.hide_progress_if_shown());
                effects
            }
            FromWorker::RestoreFailed { message } => {
                let mut effects = vec![
                    Effect::Warn(format!("saved trace unreadable: {message}")),
                    Effect::HideProgress,
                ];
                if let Some(key) = self.opening_saved.clone() {
                    effects.extend(self.saved_broken(&key, CacheProblem::Corrupt));
                }
                effects
            }
            FromWorker::Loaded(set) => {
                let mut effects = vec![Effect::EndProgress { complete: true }];
                effects.extend(self.loaded(set));
                effects
            }
            _ => Vec::new(),
        }
    }

    /// Answers of the worker holding the trace on screen.
    fn on_current_message(&mut self, msg: FromWorker) -> Vec<Effect> {
        match msg {
            FromWorker::Report { report, redacted } => self.report(Reports {
                plain: report,
                redacted,
            }),
            FromWorker::Analysis { analysis, timings } => self.analysis(analysis, timings),
            FromWorker::Events(page) => {
                self.events(page);
                Vec::new()
            }
            FromWorker::Exported { csv } => vec![Effect::Download {
                text: csv,
                mime: "text/csv".into(),
                file_name: "profile-model-events.csv".into(),
            }],
            FromWorker::Error { message } => {
                self.request_failed(message);
                Vec::new()
            }
            FromWorker::Tables { format, bytes } => vec![Effect::StoreTables { format, bytes }],
            FromWorker::SqlTables { parts } => self.sql_tables(parts),
            FromWorker::SqlTablesFailed { message } => {
                self.sql_failed(message);
                Vec::new()
            }
            FromWorker::TablesFailed { message } => {
                let mut effects = vec![Effect::Warn(format!("tables not stored: {message}"))];
                if let Some(key) = self.tables_wanted() {
                    effects.extend(self.store_failed(&key, CacheProblem::NotPrepared));
                }
                effects
            }
            FromWorker::Compared { comparison, shown } => self.compared(*comparison, shown),
            FromWorker::Timeline(answer) => {
                self.timeline_answer(*answer);
                Vec::new()
            }
            FromWorker::RankLanes(view) => {
                self.rank_lanes_answer(*view);
                Vec::new()
            }
            FromWorker::EventDetails(details) => {
                self.event_details(*details);
                Vec::new()
            }
            FromWorker::Views { views, steps } => {
                self.views(views, steps);
                Vec::new()
            }
            FromWorker::SearchHits {
                rank_index,
                text,
                hits,
                total,
            } => self.search_hits(rank_index, &text, hits, total),
            FromWorker::StepsRefused { steps, message } => {
                self.steps_refused(steps, message);
                Vec::new()
            }
            FromWorker::Located(at) => {
                let mut effects = self.located(at);
                effects.push(Effect::ScrollToTimeline);
                effects
            }
            FromWorker::Download {
                file_name,
                mime,
                text,
            } => vec![Effect::Download {
                text,
                mime,
                file_name,
            }],
            _ => Vec::new(),
        }
    }

    /// A load ended and the results before it are back: its progress bar goes.
    fn hide_progress_if_shown(&self) -> Option<Effect> {
        self.shown().map(|_| Effect::HideProgress)
    }
}

#[cfg(test)]
#[path = "page_state_messages_tests.rs"]
mod tests;
