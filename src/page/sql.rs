//! The SQL tab's state and what it shows (native): the engine's progress, the query, its answer as
//! typed columns (sorted, paged, as CSV), an error in plain words with its line and column, the
//! example queries, and which rows the timeline can show (a `rank`, `ts` and `dur`).
//!
//! The engine (DuckDB-WASM) runs in its own worker, started by `ui::sql` when the tab first opens;
//! its tables come from the trace's worker ([`crate::protocol::ToWorker::SqlTables`]).

use serde::Deserialize;

/// Rows the page reads of an answer (the count says how many more there were).
pub const MAX_ROWS: usize = 100_000;
/// Rows per page of the answer's table.
pub const PAGE_ROWS: usize = 100;
/// Events the SQL tab takes (all ranks together): DuckDB-WASM holds its own copy of the table in its
/// own 4 GiB of WebAssembly memory, beside the trace's worker. Measured (README, "SQL";
/// `scripts/bench-sql-browser.mjs`): 1,415,616, 1,742,286 and 2,177,846 events work; at 2,832,336 the
/// worker's memory filled while it wrote the tables. Set below the largest seen to work, with room for
/// traces with more `args` columns per event ([`MAX_TABLE_BYTES`] bounds those too).
pub const MAX_EVENTS: u64 = 2_000_000;
/// Arrow IPC bytes the SQL tab hands DuckDB (all parts): it copies them into its memory, then makes
/// its table from them, so twice this must fit its 4 GiB with room to query.
pub const MAX_TABLE_BYTES: u64 = 1_200_000_000;

/// What the tab says instead of starting when a trace has more events than [`MAX_EVENTS`].
pub fn too_big_text(events: u64) -> String {
    format!(
        "This trace has {events} events; the SQL tab takes up to {MAX_EVENTS} (DuckDB in the browser holds its own \
         copy of every event). Query it with DuckDB on this machine instead: `profile-model export --format parquet \
         TRACE -o events.parquet`, then `duckdb -c \"select ... from 'events.parquet'\"`."
    )
}

/// The collective example: the kernels `analysis::names` calls collective (its prefixes without regard to
/// case, its marks as written), so the query counts what the analyses count.
fn collective_example() -> String {
    use crate::analysis::names::{COLLECTIVE_MARKS, COLLECTIVE_PREFIXES};
    let prefixes = COLLECTIVE_PREFIXES
        .iter()
        .map(|p| format!("starts_with(lower(name), '{p}')"));
    let marks = COLLECTIVE_MARKS
        .iter()
        .map(|m| format!("contains(name, '{m}')"));
    let condition = prefixes.chain(marks).collect::<Vec<_>>().join("\n   OR ");
    format!(
        "-- Time in collective kernels (NCCL, RCCL, HCCL, NVSHMEM, DeepEP, custom all-reduce...) per rank\n\
         SELECT rank, count(*) AS kernels, sum(dur) AS total_us, max(dur) AS longest_us\n\
         FROM kernels\nWHERE {condition}\n\
         GROUP BY rank ORDER BY rank"
    )
}

/// One click away: what a Perfetto user asks first.
pub fn examples() -> [(&'static str, String); 6] {
    [
    (
        "Top kernels in a step",
        "-- The kernels that ran inside one ProfilerStep#N span of each rank (the first by name: change it)\n\
         WITH step AS (\n  SELECT rank, ts AS t0, ts + dur AS t1 FROM events\n  WHERE kind = 'user_annotation'\n    AND name = (SELECT min(name) FROM events WHERE name LIKE 'ProfilerStep#%')\n)\n\
         SELECT k.name, count(*) AS calls, sum(k.dur) AS total_us, max(k.dur) AS max_us\n\
         FROM kernels k JOIN step s ON k.rank = s.rank AND k.ts >= s.t0 AND k.ts < s.t1\n\
         GROUP BY k.name ORDER BY total_us DESC LIMIT 20".to_string(),
    ),
    (
        "Ops behind the longest kernels",
        "-- Each of the 20 longest kernels with the CPU op that launched it (same External id)\n\
         SELECT k.rank, k.ts, k.dur, k.name AS kernel, o.name AS op\n\
         FROM kernels k LEFT JOIN ops o\n  ON o.rank = k.rank AND o.\"args_External id\" = k.\"args_External id\"\n\
         ORDER BY k.dur DESC LIMIT 20".to_string(),
    ),
    (
        "Copies by direction and size",
        "-- Memory copies by direction (the copy's name) and size bucket\n\
         SELECT name AS direction,\n  CASE WHEN \"args_bytes\" < 1024 THEN '< 1 KiB' WHEN \"args_bytes\" < 1048576 THEN '< 1 MiB' ELSE '>= 1 MiB' END AS size,\n\
         count(*) AS copies, sum(\"args_bytes\") AS bytes, sum(dur) AS total_us\n\
         FROM memcpy GROUP BY ALL ORDER BY total_us DESC".to_string(),
    ),
    ("Collective time per rank", collective_example()),
    (
        "Idle time by cause",
        "-- Where the GPU sat idle, and why (the diagnosis's attribution)\n\
         SELECT rank, cause, count(*) AS gaps, sum(dur) AS idle_us\n\
         FROM idle GROUP BY ALL ORDER BY idle_us DESC".to_string(),
    ),
    (
        "Tables and columns",
        "-- The tables (events, idle) and views (kernels, ops, runtime, memcpy) with their columns\n\
         SELECT table_name, column_name, data_type FROM information_schema.columns\n\
         ORDER BY table_name, ordinal_position".to_string(),
    ),
    ]
}

/// How far the engine and its tables have come.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum SqlStatus {
    /// The tab was never opened: nothing fetched.
    #[default]
    Closed,
    /// The engine is fetched and the tables made.
    Starting,
    /// Ready: the events' rows and the time the engine and tables took, ms.
    Ready {
        events: u64,
        load_ms: f64,
    },
    Failed(String),
}

/// One column's values, typed as DuckDB's Arrow answer had them.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub enum SqlValues {
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
    Bool(Vec<Option<bool>>),
}

/// One value of a cell, borrowed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SqlCell<'a> {
    Null,
    Int(i64),
    Float(f64),
    Text(&'a str),
    Bool(bool),
}

impl SqlValues {
    pub fn len(&self) -> usize {
        match self {
            SqlValues::Int(v) => v.len(),
            SqlValues::Float(v) => v.len(),
            SqlValues::Text(v) => v.len(),
            SqlValues::Bool(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn cell(&self, row: usize) -> SqlCell<'_> {
        let cell = match self {
            SqlValues::Int(v) => v.get(row).copied().flatten().map(SqlCell::Int),
            SqlValues::Float(v) => v.get(row).copied().flatten().map(SqlCell::Float),
            SqlValues::Text(v) => v.get(row).and_then(|s| s.as_deref()).map(SqlCell::Text),
            SqlValues::Bool(v) => v.get(row).copied().flatten().map(SqlCell::Bool),
        };
        cell.unwrap_or(SqlCell::Null)
    }

    /// A number for the timeline (ints and floats).
    fn number(&self, row: usize) -> Option<f64> {
        match self.cell(row) {
            SqlCell::Int(i) => Some(i as f64),
            SqlCell::Float(f) => Some(f),
            _ => None,
        }
    }
}

impl SqlCell<'_> {
    /// The cell as the table shows it and CSV writes it (empty for null).
    pub fn text(&self) -> String {
        match self {
            SqlCell::Null => String::new(),
            SqlCell::Int(i) => i.to_string(),
            SqlCell::Float(f) => crate::table::float_text::float_text(*f),
            SqlCell::Text(s) => s.to_string(),
            SqlCell::Bool(b) => b.to_string(),
        }
    }

    /// Order of two cells of one column: nulls last.
    fn order(&self, other: &SqlCell) -> std::cmp::Ordering {
        use std::cmp::Ordering::*;
        match (self, other) {
            (SqlCell::Null, SqlCell::Null) => Equal,
            (SqlCell::Null, _) => Greater,
            (_, SqlCell::Null) => Less,
            (SqlCell::Int(a), SqlCell::Int(b)) => a.cmp(b),
            (SqlCell::Float(a), SqlCell::Float(b)) => a.total_cmp(b),
            (SqlCell::Text(a), SqlCell::Text(b)) => a.cmp(b),
            (SqlCell::Bool(a), SqlCell::Bool(b)) => a.cmp(b),
            _ => Equal,
        }
    }

    pub fn is_number(&self) -> bool {
        matches!(self, SqlCell::Int(_) | SqlCell::Float(_))
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct SqlColumn {
    pub name: String,
    /// DuckDB's Arrow type, as Arrow JS writes it (`Int64`, `Float64`, `Utf8`...).
    pub type_name: String,
    pub values: SqlValues,
}

/// A query's answer: its columns (at most [`MAX_ROWS`] rows read), the rows it had, its time.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct SqlAnswer {
    pub columns: Vec<SqlColumn>,
    pub total_rows: u64,
    /// Time DuckDB took to run it, ms.
    pub ms: f64,
}

/// Where a row is on the timeline: its rank and its span, µs as the trace has it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowSpan {
    pub rank: i64,
    pub ts_us: f64,
    pub dur_us: f64,
}

impl SqlAnswer {
    /// Reads the engine's answer (the JSON text `sqlQuery` writes).
    pub fn from_json(text: &str) -> Result<SqlAnswer, String> {
        let a: SqlAnswer = serde_json::from_str(text)
            .map_err(|e| format!("the page could not read the engine's answer: {e}"))?;
        let rows = a.rows();
        if let Some(c) = a.columns.iter().find(|c| c.values.len() != rows) {
            return Err(format!(
                "the engine's answer is uneven: column {} has {} rows, {} expected",
                c.name,
                c.values.len(),
                rows
            ));
        }
        Ok(a)
    }

    /// Rows read (at most [`MAX_ROWS`]).
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.values.len())
    }

    /// Rows in the order shown: sorted by column `by` (nulls last), descending when asked.
    pub fn order(&self, sort: Option<(usize, bool)>) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.rows()).collect();
        if let Some((col, descending)) = sort {
            if let Some(c) = self.columns.get(col) {
                crate::sort::sort_by(&mut order, |&a, &b| {
                    let (x, y) = (c.values.cell(a), c.values.cell(b));
                    match (x, y, descending) {
                        (SqlCell::Null, _, _) | (_, SqlCell::Null, _) => x.order(&y),
                        (_, _, true) => y.order(&x),
                        (_, _, false) => x.order(&y),
                    }
                });
            }
        }
        order
    }

    fn column_named(&self, name: &str) -> Option<&SqlColumn> {
        self.columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// Where row `row` is on the timeline, when the answer has `rank`, `ts` and `dur` columns with
    /// numbers there.
    pub fn span(&self, row: usize) -> Option<RowSpan> {
        let number = |name| self.column_named(name)?.values.number(row);
        Some(RowSpan {
            rank: number("rank")? as i64,
            ts_us: number("ts")?,
            dur_us: number("dur")?,
        })
    }

    /// The answer as CSV (a header line; rows in `order`; RFC 4180 quoting).
    pub fn csv(&self, order: &[usize]) -> String {
        let field = |s: &str| {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        let mut out = String::new();
        let header: Vec<String> = self.columns.iter().map(|c| field(&c.name)).collect();
        out.push_str(&header.join(","));
        out.push('\n');
        for &row in order {
            let line: Vec<String> = self
                .columns
                .iter()
                .map(|c| field(&c.values.cell(row).text()))
                .collect();
            out.push_str(&line.join(","));
            out.push('\n');
        }
        out
    }
}

/// A query's error in plain words, with where it is when DuckDB says.
#[derive(Clone, Debug, PartialEq)]
pub struct SqlError {
    /// DuckDB's first line (`Parser Error: syntax error at or near "fro"`).
    pub message: String,
    /// 1-based line and column of the query where it is.
    pub at: Option<(usize, usize)>,
    /// That line of the query, for a caret under the column.
    pub line_text: Option<String>,
}

impl SqlError {
    /// Reads DuckDB's message: its first line, and the place its `LINE n: ...` and caret lines
    /// point to, found again in the query (DuckDB shows a window of a long line, `...` before it).
    pub fn of(message: &str, query: &str) -> SqlError {
        let lines: Vec<&str> = message.lines().collect();
        let first = lines
            .iter()
            .find(|l| !l.trim().is_empty())
            .map_or("", |l| l.trim());
        let at = lines.windows(2).find_map(|w| place(w[0], w[1], query));
        SqlError {
            message: first.to_string(),
            at,
            line_text: at.and_then(|(line, _)| query.lines().nth(line - 1).map(str::to_string)),
        }
    }

    /// The error in one sentence: `Line 1, column 10: Parser Error: ...`.
    pub fn text(&self) -> String {
        match self.at {
            Some((line, col)) => format!("Line {line}, column {col}: {}", self.message),
            None => self.message.clone(),
        }
    }
}

/// The (line, column) a `LINE n: text` line and the caret line under it point to in the query.
fn place(line: &str, caret: &str, query: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix("LINE ")?;
    let (n, shown) = rest.split_once(": ")?;
    let n: usize = n.trim().parse().ok()?;
    let prefix = line.len() - shown.len();
    let caret_at = caret.find('^')?.checked_sub(prefix)?;
    let query_line = query.lines().nth(n.checked_sub(1)?)?;
    let (window, skipped) = match shown.strip_prefix("...") {
        Some(w) => (w, 3),
        None => (shown, 0),
    };
    let window = window.strip_suffix("...").unwrap_or(window);
    let start = query_line.find(window.get(..window.len().min(40))?)?;
    let offset = caret_at.checked_sub(skipped)?;
    let col = query_line[..start].chars().count()
        + window.get(..offset.min(window.len()))?.chars().count()
        + 1;
    Some((n, col))
}

/// The SQL tab's whole state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SqlState {
    pub status: SqlStatus,
    /// The query last run (or picked from the examples).
    pub query: String,
    pub running: bool,
    pub answer: Option<SqlAnswer>,
    pub error: Option<SqlError>,
    /// Column index and descending.
    pub sort: Option<(usize, bool)>,
    /// Page of the answer's table, from 0.
    pub page: usize,
}

impl SqlState {
    /// The tab opened on a set of `events` events: true when the engine must be started (the first
    /// time only, and not for a set over [`MAX_EVENTS`], which the tab refuses in words).
    pub fn open(&mut self, events: u64) -> bool {
        if self.status != SqlStatus::Closed {
            return false;
        }
        if events > MAX_EVENTS {
            self.status = SqlStatus::Failed(too_big_text(events));
            return false;
        }
        self.status = SqlStatus::Starting;
        if self.query.is_empty() {
            self.query = examples()[0].1.clone();
        }
        true
    }

    /// The worker's tables came (`bytes` of Arrow IPC in all): true when the engine may make them;
    /// over [`MAX_TABLE_BYTES`] the tab says so instead.
    pub fn tables_fit(&mut self, bytes: u64, events: u64) -> bool {
        if bytes <= MAX_TABLE_BYTES {
            return true;
        }
        self.status = SqlStatus::Failed(format!(
            "{} The tables would take {} MB in the engine, over its {} MB.",
            too_big_text(events),
            bytes / 1_000_000,
            MAX_TABLE_BYTES / 1_000_000
        ));
        false
    }

    pub fn ready(&mut self, events: u64, load_ms: f64) {
        self.status = SqlStatus::Ready { events, load_ms };
    }

    /// The worker holding the trace stopped (its memory full, most often while it wrote the tables):
    /// tables still being made never come, so the tab says so instead of "starting" for ever.
    pub fn worker_stopped(&mut self) {
        if self.status == SqlStatus::Starting {
            self.status = SqlStatus::Failed(
                "The page's worker stopped while it made the SQL tables: this trace and its tables do not fit in \
                 this tab's memory. Query it with DuckDB on this machine instead: `profile-model export --format \
                 parquet TRACE -o events.parquet`, then `duckdb -c \"select ... from 'events.parquet'\"`."
                    .to_string(),
            );
        }
    }

    pub fn failed(&mut self, message: String) {
        self.status = SqlStatus::Failed(message);
        self.running = false;
    }

    /// A query is asked: true when it may run now (the engine ready, none running).
    pub fn run(&mut self, query: &str) -> bool {
        self.query = query.to_string();
        if self.running || !matches!(self.status, SqlStatus::Ready { .. }) {
            return false;
        }
        self.running = true;
        true
    }

    pub fn answered(&mut self, answer: SqlAnswer) {
        self.running = false;
        self.answer = Some(answer);
        self.error = None;
        self.sort = None;
        self.page = 0;
    }

    pub fn query_failed(&mut self, message: &str) {
        self.running = false;
        self.error = Some(SqlError::of(message, &self.query));
    }

    /// A click on column `col`'s header: sorted by it descending, then ascending, then descending...
    pub fn sort_by(&mut self, col: usize) {
        self.sort = match self.sort {
            Some((c, true)) if c == col => Some((col, false)),
            _ => Some((col, true)),
        };
        self.page = 0;
    }

    /// Pages of the answer's table (at least 1).
    pub fn pages(&self) -> usize {
        self.answer
            .as_ref()
            .map_or(1, |a| a.rows().div_ceil(PAGE_ROWS).max(1))
    }

    pub fn set_page(&mut self, page: usize) {
        self.page = page.min(self.pages() - 1);
    }

    /// The rows of the page shown, in order.
    pub fn page_rows(&self) -> Vec<usize> {
        let Some(a) = &self.answer else {
            return Vec::new();
        };
        a.order(self.sort)
            .into_iter()
            .skip(self.page * PAGE_ROWS)
            .take(PAGE_ROWS)
            .collect()
    }

    /// The whole answer as CSV, in the order shown.
    pub fn csv(&self) -> Option<String> {
        let a = self.answer.as_ref()?;
        Some(a.csv(&a.order(self.sort)))
    }
}

#[cfg(test)]
#[path = "sql_tests.rs"]
mod tests;
