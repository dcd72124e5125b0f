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

/// The window the report analysed on one rank (ns on its clock): what "Show on timeline" looks in
/// first (the page sends the report's windows: the automatic one, or the steps the user picked).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalysedWindow {
    pub rank: i64,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// Where "Show on timeline" goes: the event's rank index, row, start and duration (ns), and whether
/// it lies outside the analysed windows (none of the query's events was inside them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    pub rank_index: usize,
    pub row: u32,
    pub start_ns: i64,
    pub dur_ns: i64,
    pub outside: bool,
}

/// The longest event a query matches: where the timeline shows a finding's evidence or a view's
/// row. Looked for inside the analysed `windows` first (a rank's rows there as
/// [`Frame::keep_window`](crate::analysis::frame::Frame::keep_window) keeps them: host rows starting in it,
/// device rows they launched or starting in it; a rank without a window: all its rows), over the
/// whole trace only when none is inside. Ties go to the first rank, then the first row. `None` when
/// nothing with a time matches.
pub fn locate(
    set: &crate::table::TraceSet,
    query: &crate::table::query::EventQuery,
    windows: &[AnalysedWindow],
) -> Option<Found> {
    use crate::analysis::frame::Frame;
    use crate::analysis::options::Mode;
    let hits = crate::table::query::matched_rows(set, query);
    // Per rank of the hits: the frame its window keeps (`None`: no window, every row).
    let mut frames: Vec<Option<Option<Frame>>> = vec![None; set.ranks.len()];
    let mut inside_window = |ri: usize, row: u32| -> bool {
        let frame = frames[ri].get_or_insert_with(|| {
            let t = &set.ranks[ri].table;
            windows
                .iter()
                .find(|w| w.rank == set.ranks[ri].rank)
                .map(|w| {
                    let mut f = Frame::new(t, Mode::Exact);
                    f.keep_window(t, (w.start_ns, w.end_ns));
                    f
                })
        });
        frame.as_ref().is_none_or(|f| f.keeps(row as usize))
    };
    // The longest with a time: inside first, then outside; ties by rank, then row.
    let mut best: Option<Found> = None;
    for (ri, row) in hits {
        let t = &set.ranks[ri].table;
        let Some(start_ns) = t.ts_at(row as usize) else {
            continue;
        };
        let dur_ns = t.dur_at(row as usize).unwrap_or(0);
        let outside = !inside_window(ri, row);
        let better = best
            .as_ref()
            .is_none_or(|b| (!outside, dur_ns) > (!b.outside, b.dur_ns));
        if better {
            best = Some(Found {
                rank_index: ri,
                row,
                start_ns,
                dur_ns,
                outside,
            });
        }
    }
    best
}
