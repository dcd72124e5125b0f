//! Event exploration over the tables: filter, group, sort and page the rows of a [`TraceSet`], and export CSV.
//!
//! The page's "Explore events" view and the CLI's `events` command both call [`query_events`]; only the
//! page of rows (or groups) asked for is materialised, so a query over millions of rows stays cheap.
//!
//! Times in results are µs (`f64`); `start_ms` is the row's start relative to the first timestamp of its
//! rank, so it reads like a timeline position.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

use super::{EventKind, RowArgs, TraceSet, TraceTable};

/// Rows returned per page when the query does not say.
pub const DEFAULT_PAGE_ROWS: usize = 100;
/// Most rows one page can hold.
pub const MAX_PAGE_ROWS: usize = 10_000;
/// Most rows a CSV export writes (beyond that the export says it was cut).
pub const MAX_EXPORT_ROWS: usize = 2_000_000;

crate::stable_enum! {
    /// What to group matched rows by.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum GroupBy {
        Name,
        Kind,
        Category,
        Stream,
        /// `pid/tid` as written.
        Thread,
        Rank,
    }
}

crate::stable_enum! {
    /// The order of rows (`Start`, `Duration`, `Name`, `Rank`, `Kind`, `Stream`, `Args`: one per column
    /// of the explorer's table) or groups (`Name` for the key, `Count`, `Total`, `Mean`, `Min`, `Max`,
    /// `Share`). A row order asked of groups sorts them by `Total`; a group order asked of rows sorts
    /// them by `Duration`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum SortBy {
        #[default]
        Start,
        Duration,
        Name,
        Count,
        Total,
        Mean,
        Max,
        /// Groups: the shortest row with a duration.
        Min,
        /// Groups: the share of the matched rows' summed duration (the order of `Total`).
        Share,
        /// Rows: the rank's number.
        Rank,
        /// Rows: the kind's name ([`EventKind::as_str`]).
        Kind,
        /// Rows: the stream (rows without one last).
        Stream,
        /// Rows: the args as the explorer shows them ([`EventRow::args_text`]; rows without any last).
        Args,
    }
}

impl SortBy {
    /// Whether a header's first click sorts this way largest first: a measure (a duration, a count,
    /// a share) is read biggest first; a name, a place or a time is read in its natural order.
    pub fn descending_first(self) -> bool {
        match self {
            SortBy::Duration
            | SortBy::Count
            | SortBy::Total
            | SortBy::Mean
            | SortBy::Max
            | SortBy::Min
            | SortBy::Share => true,
            SortBy::Start
            | SortBy::Name
            | SortBy::Rank
            | SortBy::Kind
            | SortBy::Stream
            | SortBy::Args => false,
        }
    }

    /// The group order this order stands for (a row order asked of groups: `Total`).
    pub fn of_groups(self) -> SortBy {
        match self {
            SortBy::Name
            | SortBy::Count
            | SortBy::Total
            | SortBy::Mean
            | SortBy::Max
            | SortBy::Min
            | SortBy::Share => self,
            SortBy::Start
            | SortBy::Duration
            | SortBy::Rank
            | SortBy::Kind
            | SortBy::Stream
            | SortBy::Args => SortBy::Total,
        }
    }

    /// The row order this order stands for (a group order asked of rows: `Duration`).
    pub fn of_rows(self) -> SortBy {
        match self {
            SortBy::Start
            | SortBy::Name
            | SortBy::Rank
            | SortBy::Kind
            | SortBy::Stream
            | SortBy::Args => self,
            SortBy::Duration
            | SortBy::Count
            | SortBy::Total
            | SortBy::Mean
            | SortBy::Max
            | SortBy::Min
            | SortBy::Share => SortBy::Duration,
        }
    }
}

/// A row's value in a row order ([`SortBy::of_rows`]): one kind per order, never mixed.
#[derive(Clone, Debug, PartialEq)]
enum RowKey<'a> {
    Int(i64),
    Micros(f64),
    Text(std::borrow::Cow<'a, str>),
}

impl RowKey<'_> {
    fn cmp(&self, other: &RowKey<'_>) -> std::cmp::Ordering {
        match (self, other) {
            (RowKey::Int(a), RowKey::Int(b)) => a.cmp(b),
            (RowKey::Micros(a), RowKey::Micros(b)) => a.total_cmp(b),
            (RowKey::Text(a), RowKey::Text(b)) => a.cmp(b),
            _ => std::cmp::Ordering::Equal,
        }
    }
}

/// Two rows' keys in a row order: a row without a value sorts last either way.
fn key_order(
    a: &Option<RowKey<'_>>,
    b: &Option<RowKey<'_>>,
    descending: bool,
) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Some(x), Some(y)) => {
            if descending {
                y.cmp(x)
            } else {
                x.cmp(y)
            }
        }
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// Text as a key, `None` when empty (no args).
fn text_key(s: String) -> Option<RowKey<'static>> {
    (!s.is_empty()).then_some(RowKey::Text(std::borrow::Cow::Owned(s)))
}

/// Which rows to show and how. Every filter left empty matches everything.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EventQuery {
    /// Only these ranks.
    pub ranks: Vec<i64>,
    /// Only these kinds (serialised as [`EventKind::as_str`]: `kernel`, `cpu_op`, `memcpy`, ...).
    pub kinds: Vec<EventKind>,
    /// The name contains this text (case-insensitive).
    pub name_contains: String,
    /// The name is exactly one of these.
    pub names: Vec<String>,
    /// The original `cat` is exactly this.
    pub category: String,
    /// `stream` equals this.
    pub stream: Option<i64>,
    /// Duration at least this, µs (rows without a duration never match).
    pub min_dur_us: Option<f64>,
    pub group_by: Option<GroupBy>,
    pub sort: SortBy,
    pub descending: bool,
    /// First row (or group) of the page.
    pub offset: usize,
    /// Rows (or groups) per page; 0 means [`DEFAULT_PAGE_ROWS`], at most [`MAX_PAGE_ROWS`].
    pub limit: usize,
    /// Set by [`shard_query`] only: `limit` is not capped at [`MAX_PAGE_ROWS`] (a shard's page must
    /// hold every row or group the whole set's page may need).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uncapped: bool,
}

/// One event of a page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EventRow {
    pub rank: i64,
    /// Row index in its rank's table (= index in `traceEvents`).
    pub row: u32,
    /// `ts` as in the trace, µs.
    pub ts_us: Option<f64>,
    /// Start relative to the rank's first timestamp, ms.
    pub start_ms: Option<f64>,
    pub dur_us: Option<f64>,
    pub kind: EventKind,
    pub phase: String,
    pub category: String,
    pub name: String,
    pub pid: String,
    pub tid: String,
    pub stream: Option<i64>,
    pub device: Option<i64>,
    pub correlation: Option<i64>,
    pub external_id: Option<i64>,
    /// The row's other `args` (the keys above have their own fields): every sparse args column that
    /// has this row, typed as the table stores them (one JSON object in JSON).
    pub args: RowArgs,
}

impl EventRow {
    /// The row's other args as one line of JSON text (empty without any), as the explorer shows them.
    pub fn args_text(&self) -> String {
        self.args.json_line()
    }

    /// The row's value in a row order: what [`sort_hits`] reads from the table, read from the row
    /// (times in µs, as the row has them).
    fn key(&self, sort: SortBy) -> Option<RowKey<'_>> {
        use std::borrow::Cow;
        match sort.of_rows() {
            SortBy::Start => self.ts_us.map(RowKey::Micros),
            SortBy::Name => Some(RowKey::Text(Cow::Borrowed(&self.name))),
            SortBy::Rank => Some(RowKey::Int(self.rank)),
            SortBy::Kind => Some(RowKey::Text(Cow::Borrowed(self.kind.as_str()))),
            SortBy::Stream => self.stream.map(RowKey::Int),
            SortBy::Args => text_key(self.args_text()),
            _ => self.dur_us.map(RowKey::Micros),
        }
    }
}

/// Aggregates of one group of matched rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EventGroup {
    pub key: String,
    pub count: u64,
    /// Rows with a duration.
    pub timed: u64,
    pub total_us: f64,
    /// Over rows with a duration (`None` when none has one).
    pub mean_us: Option<f64>,
    pub min_us: Option<f64>,
    pub max_us: Option<f64>,
    /// Share of the matched rows' summed duration, percent.
    pub pct_of_matched: f64,
}

/// One page of a query's result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EventPage {
    pub query: EventQuery,
    /// Rows that pass the filters (all pages).
    pub matched: u64,
    /// Their summed duration, µs.
    pub matched_dur_us: f64,
    /// Groups over all pages (0 when not grouped).
    pub group_count: u64,
    /// The page's rows (when not grouped).
    pub rows: Vec<EventRow>,
    /// The page's groups (when grouped).
    pub groups: Vec<EventGroup>,
}

/// Duration statistics of a group, in ns.
#[derive(Clone, Copy, Debug, Default)]
struct Stats {
    count: u64,
    timed: u64,
    total_ns: i64,
    min_ns: i64,
    max_ns: i64,
}

impl Stats {
    fn add(&mut self, dur: Option<i64>) {
        self.count += 1;
        if let Some(d) = dur {
            if self.timed == 0 {
                self.min_ns = d;
                self.max_ns = d;
            } else {
                self.min_ns = self.min_ns.min(d);
                self.max_ns = self.max_ns.max(d);
            }
            self.timed += 1;
            self.total_ns += d;
        }
    }

    fn merge(&mut self, o: &Stats) {
        if o.timed > 0 {
            if self.timed == 0 {
                self.min_ns = o.min_ns;
                self.max_ns = o.max_ns;
            } else {
                self.min_ns = self.min_ns.min(o.min_ns);
                self.max_ns = self.max_ns.max(o.max_ns);
            }
        }
        self.count += o.count;
        self.timed += o.timed;
        self.total_ns += o.total_ns;
    }
}

/// A matched row: index of its rank in the set, and its row.
type Hit = (u32, u32);

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

/// The rows of one table that pass the query's filters (rank filter aside), in file order.
fn matching_rows(t: &TraceTable, q: &EventQuery) -> Vec<u32> {
    let mut kind_ok = [q.kinds.is_empty(); 32];
    for &kind in &q.kinds {
        kind_ok[kind as usize] = true;
    }
    let name_filter = !q.name_contains.is_empty() || !q.names.is_empty();
    let name_ok: Vec<bool> = if name_filter {
        let needle = q.name_contains.to_lowercase();
        t.name_dictionary()
            .iter()
            .map(|n| {
                let n = n.unwrap_or("");
                (needle.is_empty() || n.to_lowercase().contains(&needle))
                    && (q.names.is_empty() || q.names.iter().any(|x| x == n))
            })
            .collect()
    } else {
        Vec::new()
    };
    let category_id = if q.category.is_empty() {
        None
    } else {
        match t
            .category_dictionary()
            .iter()
            .position(|c| c == Some(q.category.as_str()))
        {
            Some(i) => Some(i as u32),
            None => return Vec::new(),
        }
    };
    let min_dur_ns = q.min_dur_us.map(|m| (m * 1000.0).ceil() as i64);
    let kinds = t.kind.values();
    let mut out = Vec::new();
    for (row, &k) in kinds.iter().enumerate() {
        if !kind_ok[k as usize & 31] {
            continue;
        }
        if name_filter && !name_ok[t.name_id(row) as usize] {
            continue;
        }
        if let Some(c) = category_id {
            if t.category_id_at(row) != Some(c) {
                continue;
            }
        }
        if let Some(s) = q.stream {
            if t.stream_at(row) != Some(s) {
                continue;
            }
        }
        if let Some(m) = min_dur_ns {
            match t.dur_at(row) {
                Some(d) if d >= m => {}
                _ => continue,
            }
        }
        out.push(row as u32);
    }
    out
}

/// The rank indexes (into `set.ranks`) a query covers.
fn ranks_in_scope(set: &TraceSet, q: &EventQuery) -> Vec<usize> {
    (0..set.ranks.len())
        .filter(|&i| q.ranks.is_empty() || q.ranks.contains(&set.ranks[i].rank))
        .collect()
}

/// Every matched row over the ranks in scope, with the summed duration (ns).
fn all_hits(set: &TraceSet, q: &EventQuery) -> (Vec<Hit>, i64) {
    let mut hits = Vec::new();
    let mut total = 0i64;
    for ri in ranks_in_scope(set, q) {
        let t = &set.ranks[ri].table;
        for row in matching_rows(t, q) {
            total += t.dur_at(row as usize).unwrap_or(0);
            hits.push((ri as u32, row));
        }
    }
    (hits, total)
}

/// Every row the query's filters pass (its order, grouping and page aside), as (index of its rank
/// in `set.ranks`, row), ranks in set order, rows in file order.
pub fn matched_rows(set: &TraceSet, q: &EventQuery) -> Vec<(usize, u32)> {
    all_hits(set, q)
        .0
        .into_iter()
        .map(|(ri, row)| (ri as usize, row))
        .collect()
}

/// The group key of a row, as text.
fn group_label(set: &TraceSet, by: GroupBy, (ri, row): Hit) -> String {
    let r = &set.ranks[ri as usize];
    let t = &r.table;
    let row = row as usize;
    match by {
        GroupBy::Name => t.name_at(row).to_string(),
        GroupBy::Kind => t.kind_at(row).as_str().to_string(),
        GroupBy::Category => t.category_at(row).unwrap_or("").to_string(),
        GroupBy::Stream => t
            .stream_at(row)
            .map_or_else(|| "(none)".to_string(), |s| format!("stream {s}")),
        GroupBy::Thread => format!("{}/{}", t.pid_at(row), t.tid_at(row)),
        GroupBy::Rank => format!("rank {}", r.rank),
    }
}

/// A cheap per-rank key of a row for grouping (dictionary ids, kind or stream), turned into text once per group.
fn group_code(t: &TraceTable, by: GroupBy, row: usize) -> i64 {
    match by {
        GroupBy::Name => t.name_id(row) as i64,
        GroupBy::Kind => t.kind.value(row) as i64,
        GroupBy::Category => t.category_id_at(row).map_or(-1, |c| c as i64),
        GroupBy::Stream => t.stream_at(row).unwrap_or(i64::MIN),
        GroupBy::Thread => {
            ((t.pid.keys().value(row) as i64) << 32) | t.tid.keys().value(row) as i64
        }
        GroupBy::Rank => 0,
    }
}

/// Groups of the matched rows with their statistics, in key order.
fn groups_of(set: &TraceSet, by: GroupBy, hits: &[Hit]) -> BTreeMap<String, Stats> {
    let mut per_rank: HashMap<(u32, i64), (Hit, Stats)> = HashMap::new();
    for &(ri, row) in hits {
        let t = &set.ranks[ri as usize].table;
        let e = per_rank
            .entry((ri, group_code(t, by, row as usize)))
            .or_insert(((ri, row), Stats::default()));
        e.1.add(t.dur_at(row as usize));
    }
    let mut out: BTreeMap<String, Stats> = BTreeMap::new();
    for (_, (example, stats)) in per_rank {
        out.entry(group_label(set, by, example))
            .or_default()
            .merge(&stats);
    }
    out
}

fn sorted_groups(
    q: &EventQuery,
    groups: BTreeMap<String, Stats>,
    matched_ns: i64,
) -> Vec<EventGroup> {
    let mut v: Vec<(String, Stats)> = groups.into_iter().collect();
    let mean = |s: &Stats| {
        if s.timed > 0 {
            s.total_ns as f64 / s.timed as f64
        } else {
            f64::NEG_INFINITY
        }
    };
    let timed = |s: &Stats, ns: i64| {
        if s.timed > 0 {
            ns as f64
        } else {
            f64::NEG_INFINITY
        }
    };
    let sort = q.sort.of_groups();
    let value = |s: &Stats| match sort {
        SortBy::Count => s.count as f64,
        SortBy::Mean => mean(s),
        SortBy::Max => timed(s, s.max_ns),
        SortBy::Min => timed(s, s.min_ns),
        // The share of the matched time is in the order of the total.
        _ => s.total_ns as f64,
    };
    // Keys are unique and already in order: by name is a reverse at most; by value, ties stay by key.
    if sort == SortBy::Name {
        if q.descending {
            v.reverse();
        }
    } else if q.descending {
        crate::sort::sort_by(&mut v, |a, b| value(&b.1).total_cmp(&value(&a.1)));
    } else {
        crate::sort::sort_by(&mut v, |a, b| value(&a.1).total_cmp(&value(&b.1)));
    }
    v.into_iter()
        .map(|(key, s)| EventGroup {
            key,
            count: s.count,
            timed: s.timed,
            total_us: us(s.total_ns),
            mean_us: (s.timed > 0).then(|| s.total_ns as f64 / s.timed as f64 / 1000.0),
            min_us: (s.timed > 0).then(|| us(s.min_ns)),
            max_us: (s.timed > 0).then(|| us(s.max_ns)),
            pct_of_matched: if matched_ns > 0 {
                s.total_ns as f64 * 100.0 / matched_ns as f64
            } else {
                0.0
            },
        })
        .collect()
}

/// A hit's value in a row order, read from its table (what [`EventRow::key`] reads from the row).
fn hit_key(set: &TraceSet, sort: SortBy, (ri, row): Hit) -> Option<RowKey<'_>> {
    use std::borrow::Cow;
    let r = &set.ranks[ri as usize];
    let t = &r.table;
    let i = row as usize;
    match sort.of_rows() {
        SortBy::Start => t.ts_at(i).map(RowKey::Int),
        SortBy::Name => Some(RowKey::Text(Cow::Borrowed(t.name_at(i)))),
        SortBy::Rank => Some(RowKey::Int(r.rank)),
        SortBy::Kind => Some(RowKey::Text(Cow::Borrowed(t.kind_at(i).as_str()))),
        SortBy::Stream => t.stream_at(i).map(RowKey::Int),
        SortBy::Args => text_key(row_args(t, i).json_line()),
        _ => t.dur_at(i).map(RowKey::Int),
    }
}

/// Orders the hits; only the first `keep` need be in order (the rest are cut by the caller). Rows
/// without a value sort last either way; ties by rank then row.
fn sort_hits(set: &TraceSet, q: &EventQuery, hits: &mut Vec<Hit>, keep: usize) {
    let desc = q.descending;
    if q.sort.of_rows() == SortBy::Args {
        // The args' text is made once per hit, not once per comparison.
        let mut keyed: Vec<(Option<RowKey<'_>>, Hit)> =
            hits.iter().map(|&h| (hit_key(set, q.sort, h), h)).collect();
        select_sorted(&mut keyed, keep, |a, b| {
            key_order(&a.0, &b.0, desc).then_with(|| a.1.cmp(&b.1))
        });
        *hits = keyed.into_iter().map(|(_, h)| h).collect();
    } else {
        select_sorted(hits, keep, |a, b| {
            key_order(&hit_key(set, q.sort, *a), &hit_key(set, q.sort, *b), desc)
                .then_with(|| a.cmp(b))
        });
    }
}

/// Sorts `v`, keeping only its first `keep` (0: all) when it has more.
fn select_sorted<T>(
    v: &mut Vec<T>,
    keep: usize,
    cmp: impl Fn(&T, &T) -> std::cmp::Ordering + Copy,
) {
    if keep < v.len() && keep > 0 {
        v.select_nth_unstable_by(keep - 1, cmp);
        v.truncate(keep);
    }
    v.sort_unstable_by(cmp);
}

/// The first timestamp of a table (ns).
fn first_ts(t: &TraceTable) -> Option<i64> {
    t.ts_ns.iter().flatten().copied().min()
}

/// The `args` of one row, from every sparse args column that has it.
pub fn row_args(t: &TraceTable, row: usize) -> RowArgs {
    RowArgs::new(
        t.args
            .iter()
            .filter_map(|c| Some((c.key.clone(), c.cell_at(c.find(row)?))))
            .collect(),
    )
}

fn event_row(set: &TraceSet, (ri, row): Hit, firsts: &HashMap<u32, Option<i64>>) -> EventRow {
    let r = &set.ranks[ri as usize];
    let t = &r.table;
    let i = row as usize;
    let first = firsts.get(&ri).copied().flatten();
    let ts = t.ts_at(i);
    let phase = t.phase_at(i);
    EventRow {
        rank: r.rank,
        row,
        ts_us: ts.map(us),
        start_ms: ts.zip(first).map(|(x, f)| (x - f) as f64 / 1e6),
        dur_us: t.dur_at(i).map(us),
        kind: t.kind_at(i),
        phase: if phase == '\0' {
            String::new()
        } else {
            phase.to_string()
        },
        category: t.category_at(i).unwrap_or("").to_string(),
        name: t.name_at(i).to_string(),
        pid: t.pid_at(i).to_string(),
        tid: t.tid_at(i).to_string(),
        stream: t.stream_at(i),
        device: t.device_at(i),
        correlation: t.correlation_at(i),
        external_id: t.external_id_at(i),
        args: row_args(t, i),
    }
}

fn first_timestamps(set: &TraceSet, hits: &[Hit]) -> HashMap<u32, Option<i64>> {
    let mut m = HashMap::new();
    for h in hits {
        m.entry(h.0)
            .or_insert_with(|| first_ts(&set.ranks[h.0 as usize].table));
    }
    m
}

/// The page size `query_events` uses for `q`.
fn page_limit(q: &EventQuery) -> usize {
    match q.limit {
        0 => DEFAULT_PAGE_ROWS,
        n if q.uncapped => n,
        n => n.min(MAX_PAGE_ROWS),
    }
}

/// One page of the events that match `q` (rows, or groups when `q.group_by` is set).
pub fn query_events(set: &TraceSet, q: &EventQuery) -> EventPage {
    let mut q = q.clone();
    q.limit = page_limit(&q);
    let (mut hits, matched_ns) = all_hits(set, &q);
    let matched = hits.len() as u64;
    let mut page = EventPage {
        matched,
        matched_dur_us: us(matched_ns),
        ..Default::default()
    };
    match q.group_by {
        Some(by) => {
            let groups = sorted_groups(&q, groups_of(set, by, &hits), matched_ns);
            page.group_count = groups.len() as u64;
            page.groups = groups.into_iter().skip(q.offset).take(q.limit).collect();
        }
        None => {
            let keep = q.offset.saturating_add(q.limit);
            sort_hits(set, &q, &mut hits, keep);
            let firsts = first_timestamps(set, &hits);
            page.rows = hits
                .iter()
                .skip(q.offset)
                .take(q.limit)
                .map(|&h| event_row(set, h, &firsts))
                .collect();
        }
    }
    page.query = q;
    page
}

mod csv;
mod shards;

pub use csv::{csv_field, export_csv, export_csv_mapped};
pub use shards::{merge_csv, merge_pages, shard_query};
