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
    /// The order of rows (`Start`, `Duration`, `Name`) or groups (`Count`, `Total`, `Mean`, `Max`, `Name`).
    /// A row order asked of groups sorts them by `Total`; a group order asked of rows sorts them by `Duration`.
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
    }
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
    let value = |s: &Stats| match q.sort {
        SortBy::Count => s.count as f64,
        SortBy::Mean => mean(s),
        SortBy::Max => {
            if s.timed > 0 {
                s.max_ns as f64
            } else {
                f64::NEG_INFINITY
            }
        }
        _ => s.total_ns as f64,
    };
    // Keys are unique and already in order: by name is a reverse at most; by value, ties stay by key.
    if q.sort == SortBy::Name {
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

/// Orders the hits; only the first `keep` need be in order (the rest are cut by the caller).
fn sort_hits(set: &TraceSet, q: &EventQuery, hits: &mut Vec<Hit>, keep: usize) {
    let table = |h: &Hit| &set.ranks[h.0 as usize].table;
    let sort = match q.sort {
        SortBy::Start | SortBy::Name => q.sort,
        _ => SortBy::Duration,
    };
    let desc = q.descending;
    // Missing values sort last either way; ties by rank then row.
    let cmp = |a: &Hit, b: &Hit| -> std::cmp::Ordering {
        let ord = match sort {
            SortBy::Name => {
                let o = table(a)
                    .name_at(a.1 as usize)
                    .cmp(table(b).name_at(b.1 as usize));
                if desc {
                    o.reverse()
                } else {
                    o
                }
            }
            _ => {
                let get = |h: &Hit| {
                    let t = table(h);
                    if sort == SortBy::Start {
                        t.ts_at(h.1 as usize)
                    } else {
                        t.dur_at(h.1 as usize)
                    }
                };
                match (get(a), get(b)) {
                    (Some(x), Some(y)) => {
                        if desc {
                            y.cmp(&x)
                        } else {
                            x.cmp(&y)
                        }
                    }
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                }
            }
        };
        ord.then_with(|| a.cmp(b))
    };
    if keep < hits.len() && keep > 0 {
        hits.select_nth_unstable_by(keep - 1, cmp);
        hits.truncate(keep);
    }
    hits.sort_unstable_by(cmp);
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
