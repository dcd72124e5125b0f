//! One event of the timeline in full (the details panel: its args, track and the launches it is
//! linked to by correlation id), and where a finding's evidence is on the timeline.

use serde::{Deserialize, Serialize};

use super::{drawable, track_name};
use crate::table::{EventKind, TraceTable};

/// How a partner event is related to the one shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    /// The runtime call that launched this device event (same correlation id).
    LaunchedBy,
    /// A device event this call launched (same correlation id).
    Launched,
}

/// An event linked to the one shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Partner {
    pub row: u32,
    pub relation: Relation,
    pub name: String,
    pub start_ns: i64,
    pub dur_ns: i64,
}

/// Everything the details panel shows about one event.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EventDetails {
    pub rank_index: usize,
    pub row: u32,
    pub name: String,
    pub category: String,
    pub start_ns: i64,
    pub dur_ns: i64,
    /// "GPU 0 stream 7", "thread 1234 (python)".
    pub track: String,
    /// `args` as written (text of each value).
    pub args: Vec<(String, String)>,
    pub partners: Vec<Partner>,
}

/// Partners of a row at most listed (a graph launch may have thousands of kernels).
const MAX_PARTNERS: usize = 50;

/// The details of `row` of a rank's table; `None` for a row that is not there.
pub fn event_details(t: &TraceTable, rank_index: usize, row: u32) -> Option<EventDetails> {
    let i = row as usize;
    if i >= t.len() {
        return None;
    }
    let track = drawable(t, i).map_or(String::new(), |(key, _, _)| track_name(t, &key.key(t, i)));
    let args = t
        .args
        .iter()
        .filter_map(|c| {
            c.find(i)
                .map(|at| (c.key.clone(), c.json_at(at).to_string()))
        })
        .collect();
    Some(EventDetails {
        rank_index,
        row,
        name: t.name_at(i).to_string(),
        category: t.category_at(i).unwrap_or("").to_string(),
        start_ns: t.ts_at(i).unwrap_or(0),
        dur_ns: t.dur_at(i).unwrap_or(0),
        track,
        args,
        partners: partners(t, i),
    })
}

/// The launch of a device event, or the device events of a launch (same correlation id).
fn partners(t: &TraceTable, i: usize) -> Vec<Partner> {
    let Some(correlation) = t.correlation_at(i).filter(|c| *c != 0) else {
        return Vec::new();
    };
    let on_device = |r: usize| {
        matches!(
            t.kind_at(r),
            EventKind::Kernel | EventKind::Memcpy | EventKind::Memset | EventKind::AcceleratorOp
        )
    };
    let launch_side = |r: usize| matches!(t.kind_at(r), EventKind::Runtime | EventKind::Driver);
    let device = on_device(i);
    (0..t.len())
        .filter(|&r| r != i && t.correlation_at(r) == Some(correlation))
        .filter(|&r| if device { launch_side(r) } else { on_device(r) })
        .take(MAX_PARTNERS)
        .map(|r| Partner {
            row: r as u32,
            relation: if device {
                Relation::LaunchedBy
            } else {
                Relation::Launched
            },
            name: t.name_at(r).to_string(),
            start_ns: t.ts_at(r).unwrap_or(0),
            dur_ns: t.dur_at(r).unwrap_or(0),
        })
        .collect()
}

/// The longest event a query matches, as (rank index, row, start, duration): where the timeline
/// shows a finding's evidence. `None` when nothing with a time matches.
pub fn locate(
    set: &crate::table::TraceSet,
    query: &crate::table::query::EventQuery,
) -> Option<(usize, u32, i64, i64)> {
    let mut q = query.clone();
    q.group_by = None;
    q.sort = crate::table::query::SortBy::Duration;
    q.descending = true;
    q.offset = 0;
    q.limit = 1;
    let page = crate::table::query::query_events(set, &q);
    let hit = page.rows.first()?;
    let rank_index = set.ranks.iter().position(|r| r.rank == hit.rank)?;
    let t = &set.ranks[rank_index].table;
    let row = hit.row as usize;
    Some((
        rank_index,
        hit.row,
        t.ts_at(row)?,
        t.dur_at(row).unwrap_or(0),
    ))
}
