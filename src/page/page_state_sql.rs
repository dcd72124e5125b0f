//! The page state's SQL tab transitions: the tab opened (the engine starts, the worker is asked for
//! the tables), the tables made, a query run and answered, a row shown on the timeline.

use super::{Effect, PageState};
use crate::page::sql::{RowSpan, SqlAnswer, SqlState};
use crate::page::tabs::Tab;
use crate::protocol::{Located, SqlPart, SqlTable, ToWorker};

impl PageState {
    /// The SQL tab's state of the results shown.
    pub fn sql(&self) -> Option<&SqlState> {
        self.shown().map(|s| &s.sql)
    }

    /// The SQL tab's state of the results shown, to change.
    pub fn sql_mut(&mut self) -> Option<&mut SqlState> {
        self.shown_mut().map(|s| &mut s.sql)
    }

    /// The SQL tab opened: the first time (for these results, with a worker holding the trace),
    /// the engine is fetched and the worker asked for the tables.
    pub fn open_sql(&mut self) -> Vec<Effect> {
        if !self.worker_answers() {
            return Vec::new();
        }
        let events = self.shown().map_or(0, |s| {
            s.loaded.ranks.iter().map(|r| r.summary.events).sum::<u64>()
        });
        if self.sql_mut().is_some_and(|sql| sql.open(events)) {
            vec![Effect::SqlStart, Effect::Post(ToWorker::SqlTables)]
        } else {
            Vec::new()
        }
    }

    /// The worker's tables came: the engine makes them (the buffers came with the message).
    pub fn sql_tables(&mut self, parts: Vec<SqlPart>) -> Vec<Effect> {
        let bytes = parts.iter().map(|p| p.bytes).sum();
        let events = parts
            .iter()
            .filter(|p| p.table == SqlTable::Events)
            .map(|p| p.rows)
            .sum();
        let fits = self.sql_mut().is_some_and(|sql| {
            sql.status == crate::page::sql::SqlStatus::Starting && sql.tables_fit(bytes, events)
        });
        if fits {
            vec![Effect::SqlLoad { parts }]
        } else {
            Vec::new()
        }
    }

    /// The engine made the tables (`parts` as the worker sent them), in `load_ms`.
    pub fn sql_ready(&mut self, parts: &[SqlPart], load_ms: f64) {
        let events = parts
            .iter()
            .filter(|p| p.table == SqlTable::Events)
            .map(|p| p.rows)
            .sum();
        if let Some(sql) = self.sql_mut() {
            sql.ready(events, load_ms);
        }
    }

    /// The engine or its tables could not be made.
    pub fn sql_failed(&mut self, message: String) {
        if let Some(sql) = self.sql_mut() {
            sql.failed(message);
        }
    }

    /// Run a query (one at a time, once the engine is ready).
    pub fn run_sql(&mut self, query: &str) -> Vec<Effect> {
        if self.sql_mut().is_some_and(|sql| sql.run(query)) {
            vec![Effect::SqlRun(query.to_string())]
        } else {
            Vec::new()
        }
    }

    /// The engine's answer to the query running: its rows, or DuckDB's error.
    pub fn sql_answered(&mut self, answer: Result<SqlAnswer, String>) {
        if let Some(sql) = self.sql_mut() {
            match answer {
                Ok(a) => sql.answered(a),
                Err(message) => sql.query_failed(&message),
            }
        }
    }

    /// "Show on timeline" of an answer's row: its rank picked, the timeline zoomed to its span (no
    /// event's details: a row of an answer names no row of the trace's table).
    pub fn show_sql_row(&mut self, span: RowSpan) -> Vec<Effect> {
        let Some(rank_index) = self
            .shown()
            .and_then(|s| s.loaded.ranks.iter().position(|r| r.rank == span.rank))
        else {
            return Vec::new();
        };
        self.pick_rank(rank_index);
        self.timeline_focus = Some(Located {
            rank_index,
            row: Located::NO_ROW,
            start_ns: (span.ts_us * 1000.0).round() as i64,
            dur_ns: (span.dur_us * 1000.0).round().max(0.0) as i64,
            outside: false,
        });
        self.tab = Tab::Timeline;
        vec![Effect::ScrollToTimeline]
    }
}

#[cfg(test)]
#[path = "page_state_sql_tests.rs"]
mod tests;
