//! The timeline's level-of-detail query: a rank's tracks (GPU streams, then CPU threads with their
//! op nesting) and what is visible in `[start, end)` at a width in pixels. An event at least a pixel
//! wide comes on its own; narrower ones are merged per pixel with their count and busy time, so an
//! answer holds O(width) items per lane whatever the trace size.
//!
//! Built once per rank ([`TimelineIndex::new`]): each track is cut into lanes (one per nesting
//! depth, where events never overlap), each lane sorted by start with a running maximum of ends,
//! and a lane with many events gets summaries at coarser and coarser bin widths (each made when a
//! query first needs it). A query over many
//! events reads the coarsest summary whose bins are no wider than a pixel, and reads the events
//! themselves only at the two edge bins, so busy time stays exact.
//!
//! The search over the drawn events is `search.rs`; one event's details (and where a finding's
//! evidence is) `details.rs`.

use serde::{Deserialize, Serialize};

use super::gpu::{exact_kernel_type, KernelType};
use crate::table::{EventKind, TraceTable};

mod details;
mod search;

pub use details::{event_details, locate, AnalysedWindow, EventDetails, Found, Partner, Relation};
pub use search::{search, SearchHit, MAX_SEARCH_HITS};

/// Lanes with at most this many events are read event by event, never summarised.
const SUMMARY_MIN_EVENTS: usize = 4096;
/// The finest summary has about this many bins over the lane's span at most.
const SUMMARY_MAX_BINS: i64 = 1 << 16;
/// An event drawn at least this many pixels wide comes with its name (the page labels events over
/// 40 px; the margin keeps labels while a zoom waits for the next answer).
pub const LABEL_MIN_PX: f64 = 16.0;
/// A query reads events one by one when at most this many per pixel of width overlap its range.
const DIRECT_PER_PIXEL: usize = 4;

/// Which track an event is drawn on.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
// Externally tagged (`{"stream":{..}}`): the binary codec of the page's messages reads no
// internally tagged enum (it would need `deserialize_any`).
#[serde(rename_all = "snake_case")]
pub enum TrackKey {
    /// A GPU stream of a device.
    Stream { device: i64, stream: i64 },
    /// A CPU thread.
    Thread { pid: String, tid: String },
}

/// What colour an event gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventClass {
    Compute,
    Communication,
    Memory,
    /// A GPU-side annotation or sync.
    GpuOther,
    CpuOp,
    Runtime,
    Python,
    Annotation,
    Other,
}

impl EventClass {
    fn of(kind: EventKind, name: &str) -> EventClass {
        match kind {
            EventKind::Kernel
            | EventKind::Memcpy
            | EventKind::Memset
            | EventKind::AcceleratorOp => match exact_kernel_type(kind, name) {
                KernelType::Communication => EventClass::Communication,
                KernelType::Memory => EventClass::Memory,
                _ => EventClass::Compute,
            },
            EventKind::GpuUserAnnotation | EventKind::Sync => EventClass::GpuOther,
            EventKind::CpuOp => EventClass::CpuOp,
            EventKind::Runtime | EventKind::Driver => EventClass::Runtime,
            EventKind::PythonFunction => EventClass::Python,
            EventKind::UserAnnotation => EventClass::Annotation,
            _ => EventClass::Other,
        }
    }
}

/// One track as the page lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrackInfo {
    pub key: TrackKey,
    /// "GPU 0 stream 7", "thread 1234 (python)".
    pub name: String,
    /// Nesting depths (lanes) of the track.
    pub depth: u16,
    pub events: u64,
}

/// What the page asks: the visible range and its width.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimelineRequest {
    pub start_ns: i64,
    pub end_ns: i64,
    pub width_px: u32,
}

/// An event drawn on its own (at least a pixel wide); its name only when wide enough for a label
/// ([`LABEL_MIN_PX`]), else empty (the details panel asks for everything about an event).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DrawnEvent {
    /// Its row in the rank's table (for the details panel).
    pub row: u32,
    pub start_ns: i64,
    pub end_ns: i64,
    pub name: String,
    pub class: EventClass,
}

/// Events narrower than a pixel, merged: `count` events busy for `busy_ns` within pixel `px`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PixelBucket {
    pub px: u32,
    pub count: u32,
    pub busy_ns: i64,
    /// The class of the first event merged here.
    pub class: EventClass,
}

/// One lane of the answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LaneView {
    /// Index into [`TimelineIndex::tracks`].
    pub track: u32,
    pub depth: u16,
    pub events: Vec<DrawnEvent>,
    pub buckets: Vec<PixelBucket>,
}

impl LaneView {
    /// Busy time inside the range: drawn events clipped to it, plus the merged buckets.
    pub fn busy_ns(&self, start: i64, end: i64) -> i64 {
        let drawn: i64 = self
            .events
            .iter()
            .map(|e| (e.end_ns.min(end) - e.start_ns.max(start)).max(0))
            .sum();
        drawn + self.buckets.iter().map(|b| b.busy_ns).sum::<i64>()
    }
}

/// The answer to a [`TimelineRequest`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimelineView {
    pub start_ns: i64,
    pub end_ns: i64,
    pub width_px: u32,
    pub lanes: Vec<LaneView>,
}

impl TimelineView {
    /// Items to draw: events plus buckets.
    pub fn drawn_items(&self) -> usize {
        self.lanes
            .iter()
            .map(|l| l.events.len() + l.buckets.len())
            .sum()
    }
}

/// A lane summarised at one bin width: short events' busy time per bin (split at bin edges) and
/// count (by the bin they start in); events at least a bin long are listed on their own.
struct Summary {
    width: i64,
    origin: i64,
    /// (bin index, busy ns, events starting in it, class of the first), ascending.
    bins: Vec<(i64, i64, u32, EventClass)>,
    /// Lane positions of the events at least `width` long, ascending.
    long: Vec<u32>,
}

/// The events of one track at one nesting depth: they never overlap.
pub(super) struct Lane {
    track: u32,
    depth: u16,
    rows: Vec<u32>,
    start: Vec<i64>,
    end: Vec<i64>,
    /// Running maximum of `end` (finds the first event that reaches into a range).
    reach: Vec<i64>,
    class: Vec<EventClass>,
    /// Summaries by bin width, ascending; each is made the first time a query needs it (a first
    /// frame needs one, so the index is built without any).
    summaries: Vec<(i64, std::sync::OnceLock<Summary>)>,
}

/// Every lane of a rank, ready to answer queries.
pub struct TimelineIndex {
    pub tracks: Vec<TrackInfo>,
    /// First start and last end over every lane (ns); `(0, 0)` without events.
    pub span_ns: (i64, i64),
    lanes: Vec<Lane>,
}

/// A track while the index is built: the table's ids, no text (its [`TrackKey`] is made once
/// per track, from one of its rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum TrackId {
    Stream { device: i64, stream: i64 },
    Thread { pid: u32, tid: u32 },
}

impl TrackId {
    fn key(self, t: &TraceTable, row: usize) -> TrackKey {
        match self {
            TrackId::Stream { device, stream } => TrackKey::Stream { device, stream },
            TrackId::Thread { .. } => TrackKey::Thread {
                pid: t.pid_at(row).to_string(),
                tid: t.tid_at(row).to_string(),
            },
        }
    }
}

/// A complete event worth drawing: (track, start, end).
fn drawable(t: &TraceTable, row: usize) -> Option<(TrackId, i64, i64)> {
    let kind = t.kind_at(row);
    if matches!(
        kind,
        EventKind::Flow | EventKind::Metadata | EventKind::Trace | EventKind::Instant
    ) {
        return None;
    }
    let start = t.ts_at(row)?;
    let end = start + t.dur_at(row)?;
    let gpu = matches!(
        kind,
        EventKind::Kernel
            | EventKind::Memcpy
            | EventKind::Memset
            | EventKind::AcceleratorOp
            | EventKind::GpuUserAnnotation
    ) || (kind == EventKind::Sync && t.stream_at(row).is_some());
    let id = if gpu {
        TrackId::Stream {
            device: t.device_at(row).unwrap_or(0),
            stream: t.stream_at(row).unwrap_or(-1),
        }
    } else {
        TrackId::Thread {
            pid: t.pid_id(row),
            tid: t.tid_id(row),
        }
    };
    Some((id, start, end))
}

/// The colour class of each row, worked out once per (kind, name): a slot per interned name
/// (for the kind first seen with it), a map for the rare name seen with a second kind.
pub(super) struct Classes<'a> {
    t: &'a TraceTable,
    by_name: Vec<Option<(EventKind, EventClass)>>,
    other_kinds: std::collections::HashMap<(EventKind, u32), EventClass>,
}

impl<'a> Classes<'a> {
    /// No colour worked out yet.
    pub(super) fn new(t: &'a TraceTable) -> Classes<'a> {
        Classes {
            t,
            by_name: vec![None; t.name_dictionary().len()],
            other_kinds: std::collections::HashMap::new(),
        }
    }

    fn of(&mut self, row: usize) -> EventClass {
        let t = self.t;
        let kind = t.kind_at(row);
        let id = t.name_id(row);
        let class_of = || EventClass::of(kind, t.name_at(row));
        match self.by_name.get_mut(id as usize) {
            Some(Some((k, class))) if *k == kind => *class,
            Some(slot @ None) => slot.insert((kind, class_of())).1,
            _ => *self.other_kinds.entry((kind, id)).or_insert_with(class_of),
        }
    }
}

/// Sort key of a thread id: numbers in numeric order, then the rest.
fn id_order(id: &str) -> (bool, i64, &str) {
    match id.parse::<i64>() {
        Ok(n) => (false, n, id),
        Err(_) => (true, 0, id),
    }
}

fn track_order(a: &TrackKey, b: &TrackKey) -> std::cmp::Ordering {
    match (a, b) {
        (TrackKey::Thread { pid: p1, tid: t1 }, TrackKey::Thread { pid: p2, tid: t2 }) => {
            (id_order(p1), id_order(t1)).cmp(&(id_order(p2), id_order(t2)))
        }
        _ => a.cmp(b),
    }
}

fn track_name(t: &TraceTable, key: &TrackKey) -> String {
    match key {
        TrackKey::Stream { device, stream } => format!("GPU {device} stream {stream}"),
        TrackKey::Thread { pid, tid } => {
            match t.metadata.thread_names.get(&format!("{pid}/{tid}")) {
                Some(name) if name.contains(tid.as_str()) => name.clone(),
                Some(name) => format!("thread {tid} ({name})"),
                None => format!("thread {tid}"),
            }
        }
    }
}

/// Sorts a track's events by start, longer first at equal starts (a parent before its children),
/// then by row; the usual trace is already in that order, which is checked first.
fn sort_by_start(events: &mut [(i64, i64, u32)]) {
    let order = |a: &(i64, i64, u32), b: &(i64, i64, u32)| {
        a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2))
    };
    if !events.is_sorted_by(|a, b| order(a, b).is_le()) {
        // Stable merge sort: it finds the sorted runs a trace written in batches has.
        crate::sort::sort_by(events, order);
    }
}

/// Splits a track's events (sorted by [`sort_by_start`]) into lanes by nesting depth: the number
/// of events still open when one starts. Events of one depth never overlap.
fn split_by_depth(events: &[(i64, i64, u32)]) -> Vec<Vec<(i64, i64, u32)>> {
    let mut open: Vec<i64> = Vec::new();
    let mut lanes: Vec<Vec<(i64, i64, u32)>> = Vec::new();
    for &(start, end, row) in events {
        while open.last().is_some_and(|&e| e <= start) {
            open.pop();
        }
        let depth = open.len().min(u16::MAX as usize);
        if depth == lanes.len() {
            lanes.push(Vec::new());
        }
        lanes[depth].push((start, end, row));
        open.push(end);
    }
    lanes
}

/// Every drawable event's (start, end, row), by track; rows of one track usually come in runs,
/// so the track of the previous row is tried first.
fn events_by_track(t: &TraceTable) -> Vec<(TrackId, Vec<(i64, i64, u32)>)> {
    let mut tracks: Vec<(TrackId, Vec<(i64, i64, u32)>)> = Vec::new();
    let mut slot_of: std::collections::HashMap<TrackId, usize> = std::collections::HashMap::new();
    let mut last: Option<usize> = None;
    for row in 0..t.len() {
        let Some((id, start, end)) = drawable(t, row) else {
            continue;
        };
        let slot = match last {
            Some(i) if tracks[i].0 == id => i,
            _ => *slot_of.entry(id).or_insert_with(|| {
                tracks.push((id, Vec::new()));
                tracks.len() - 1
            }),
        };
        tracks[slot].1.push((start, end, row as u32));
        last = Some(slot);
    }
    tracks
}

impl TimelineIndex {
    pub fn new(t: &TraceTable) -> TimelineIndex {
        let mut keyed: Vec<(TrackKey, Vec<(i64, i64, u32)>)> = events_by_track(t)
            .into_iter()
            .map(|(id, events)| (id.key(t, events[0].2 as usize), events))
            .collect();
        crate::sort::sort_by(&mut keyed, |a, b| track_order(&a.0, &b.0));
        let mut classes = Classes::new(t);
        let mut tracks = Vec::new();
        let mut lanes = Vec::new();
        for (key, mut events) in keyed {
            sort_by_start(&mut events);
            let by_depth = split_by_depth(&events);
            let track = tracks.len() as u32;
            tracks.push(TrackInfo {
                name: track_name(t, &key),
                key,
                depth: by_depth.len() as u16,
                events: events.len() as u64,
            });
            drop(events);
            for (d, mine) in by_depth.into_iter().enumerate() {
                lanes.push(Lane::new(&mut classes, track, d as u16, mine));
            }
        }
        let span_ns = lanes
            .iter()
            .filter(|l| !l.start.is_empty())
            .fold(None, |acc: Option<(i64, i64)>, l| {
                let (s, e) = (l.start[0], *l.reach.last().unwrap_or(&l.start[0]));
                Some(acc.map_or((s, e), |(a, b)| (a.min(s), b.max(e))))
            })
            .unwrap_or((0, 0));
        TimelineIndex {
            tracks,
            span_ns,
            lanes,
        }
    }

    /// The event after (`forward`) or before row `row` on the lane that holds it, wherever it is
    /// (the keyboard's walk, not only over what a range draws): its row and span, ns. `None` at
    /// the lane's end, or for a row no lane holds.
    pub fn neighbour(&self, t: &TraceTable, row: u32, forward: bool) -> Option<SearchHit> {
        let (id, start, _) = drawable(t, row as usize)?;
        let key = id.key(t, row as usize);
        let track = self.tracks.iter().position(|tr| tr.key == key)? as u32;
        let lane = self
            .lanes
            .iter()
            .filter(|l| l.track == track)
            .find_map(|l| {
                let from = l.start.partition_point(|&s| s < start);
                (from..l.start.len())
                    .take_while(|&i| l.start[i] == start)
                    .find(|&i| l.rows[i] == row)
                    .map(|i| (l, i))
            });
        let (lane, i) = lane?;
        let j = if forward { i + 1 } else { i.checked_sub(1)? };
        Some(SearchHit {
            row: *lane.rows.get(j)?,
            start_ns: lane.start[j],
            end_ns: lane.end[j],
        })
    }

    /// What is visible in the request's range at its width, lane by lane.
    pub fn view(&self, t: &TraceTable, req: &TimelineRequest) -> TimelineView {
        let start = req.start_ns;
        let end = req.end_ns.max(start + 1);
        let width = req.width_px.clamp(1, 16384);
        let px_ns = (end - start) as f64 / width as f64;
        let lanes = self
            .lanes
            .iter()
            .map(|lane| lane.view(t, start, end, width, px_ns))
            .collect();
        TimelineView {
            start_ns: start,
            end_ns: end,
            width_px: width,
            lanes,
        }
    }
}

/// Pixel buckets being filled.
struct Buckets {
    start: i64,
    px_ns: f64,
    width: u32,
    cells: std::collections::BTreeMap<u32, PixelBucket>,
}

impl Buckets {
    fn px(&self, at: i64) -> u32 {
        (((at - self.start) as f64 / self.px_ns) as u32).min(self.width - 1)
    }

    fn add(&mut self, at: i64, busy: i64, count: u32, class: EventClass) {
        let px = self.px(at.max(self.start));
        let cell = self.cells.entry(px).or_insert(PixelBucket {
            px,
            count: 0,
            busy_ns: 0,
            class,
        });
        cell.count += count;
        cell.busy_ns += busy;
    }
}

impl Lane {
    pub(super) fn new(
        classes: &mut Classes,
        track: u32,
        depth: u16,
        events: Vec<(i64, i64, u32)>,
    ) -> Lane {
        let n = events.len();
        let mut lane = Lane {
            track,
            depth,
            rows: Vec::with_capacity(n),
            start: Vec::with_capacity(n),
            end: Vec::with_capacity(n),
            reach: Vec::with_capacity(n),
            class: Vec::with_capacity(n),
            summaries: Vec::new(),
        };
        let mut reach = i64::MIN;
        for (s, e, row) in events {
            reach = reach.max(e);
            lane.rows.push(row);
            lane.start.push(s);
            lane.end.push(e);
            lane.reach.push(reach);
            lane.class.push(classes.of(row as usize));
        }
        lane.summaries = lane
            .summary_widths()
            .into_iter()
            .map(|w| (w, std::sync::OnceLock::new()))
            .collect();
        lane
    }

    /// The bin widths of the summaries: 1 µs × 4^k, from about `SUMMARY_MAX_BINS` bins over the
    /// span up to one bin for all of it; none for a lane with few events.
    fn summary_widths(&self) -> Vec<i64> {
        if self.start.len() <= SUMMARY_MIN_EVENTS {
            return Vec::new();
        }
        let span = (self.reach.last().copied().unwrap_or(self.start[0]) - self.start[0]).max(1);
        let mut out = Vec::new();
        let mut width: i64 = 1000;
        while width < span * 4 {
            if span / width <= SUMMARY_MAX_BINS {
                out.push(width);
            }
            width = width.saturating_mul(4);
        }
        out
    }

    /// The summary at the coarsest width that still fits a pixel of `px_ns` in a range of
    /// `range_ns`, made now if no query needed it before.
    fn summary_for(&self, px_ns: f64, range_ns: i64) -> Option<&Summary> {
        let (width, cell) = self
            .summaries
            .iter()
            .rev()
            .find(|(w, _)| (*w as f64) <= px_ns && range_ns >= 4 * w)?;
        Some(cell.get_or_init(|| self.summary(self.start[0], *width)))
    }

    fn summary(&self, origin: i64, width: i64) -> Summary {
        let mut bins: Vec<(i64, i64, u32, EventClass)> = Vec::new();
        let mut long = Vec::new();
        let mut add = |bin: i64, busy: i64, count: u32, class: EventClass| match bins.last_mut() {
            Some(last) if last.0 == bin => {
                last.1 += busy;
                last.2 += count;
            }
            _ => bins.push((bin, busy, count, class)),
        };
        for i in 0..self.start.len() {
            let (s, e) = (self.start[i], self.end[i]);
            if e - s >= width {
                long.push(i as u32);
                continue;
            }
            let b = (s - origin).div_euclid(width);
            let split = origin + (b + 1) * width;
            add(b, e.min(split) - s, 1, self.class[i]);
            if e > split {
                add(b + 1, e - split, 0, self.class[i]);
            }
        }
        Summary {
            width,
            origin,
            bins,
            long,
        }
    }

    /// Lane positions `[first, last)` of the events that may overlap `[start, end)`.
    fn overlapping(&self, start: i64, end: i64) -> (usize, usize) {
        let first = self.reach.partition_point(|&r| r <= start);
        let last = self.start.partition_point(|&s| s < end);
        (first, last.max(first))
    }

    pub(super) fn view(
        &self,
        t: &TraceTable,
        start: i64,
        end: i64,
        width: u32,
        px_ns: f64,
    ) -> LaneView {
        let mut out = LaneView {
            track: self.track,
            depth: self.depth,
            ..Default::default()
        };
        let mut buckets = Buckets {
            start,
            px_ns,
            width,
            cells: Default::default(),
        };
        let (first, last) = self.overlapping(start, end);
        let summary = (last - first > DIRECT_PER_PIXEL * width as usize)
            .then(|| self.summary_for(px_ns, end - start))
            .flatten();
        match summary {
            Some(s) => self.view_summary(t, s, start, end, &mut out, &mut buckets),
            None => {
                let all = first..last;
                self.view_events(t, all, start, end, i64::MAX, true, &mut out, &mut buckets)
            }
        }
        out.buckets = buckets.cells.into_values().collect();
        out
    }

    /// Events at lane positions `range` shorter than `shorter_than`, clipped to `[start, end)`:
    /// drawn when a pixel wide, else merged. `count_entering`: count events that began before
    /// `start` (false at a right edge, where the bin before counted them).
    #[allow(clippy::too_many_arguments)]
    fn view_events(
        &self,
        t: &TraceTable,
        range: std::ops::Range<usize>,
        start: i64,
        end: i64,
        shorter_than: i64,
        count_entering: bool,
        out: &mut LaneView,
        buckets: &mut Buckets,
    ) {
        for i in range {
            let (s, e) = (self.start[i], self.end[i]);
            if e - s >= shorter_than {
                continue;
            }
            let (cs, ce) = (s.max(start), e.min(end));
            let inside = ce > cs || (s == e && s >= start && s < end);
            if !inside {
                continue;
            }
            let count = u32::from(count_entering || s >= start);
            if (ce - cs) as f64 >= buckets.px_ns {
                out.events
                    .push(self.drawn(t, i, (ce - cs) as f64 / buckets.px_ns));
            } else {
                buckets.add(cs, ce - cs, count, self.class[i]);
            }
        }
    }

    /// Lane position `i` drawn `width_px` wide: named when wide enough for a label.
    fn drawn(&self, t: &TraceTable, i: usize, width_px: f64) -> DrawnEvent {
        let row = self.rows[i];
        DrawnEvent {
            row,
            start_ns: self.start[i],
            end_ns: self.end[i],
            name: if width_px >= LABEL_MIN_PX {
                t.name_at(row as usize).to_string()
            } else {
                String::new()
            },
            class: self.class[i],
        }
    }

    /// Many events: long ones on their own, the summary's whole bins as they are, and the two
    /// edge bins event by event (so the busy time is exact at the range's edges).
    fn view_summary(
        &self,
        t: &TraceTable,
        s: &Summary,
        start: i64,
        end: i64,
        out: &mut LaneView,
        buckets: &mut Buckets,
    ) {
        let first_long = s.long.partition_point(|&i| self.end[i as usize] <= start);
        for &i in s.long[first_long..]
            .iter()
            .take_while(|&&i| self.start[i as usize] < end)
        {
            let i = i as usize;
            let (cs, ce) = (self.start[i].max(start), self.end[i].min(end));
            if (ce - cs) as f64 >= buckets.px_ns {
                out.events
                    .push(self.drawn(t, i, (ce - cs) as f64 / buckets.px_ns));
            } else {
                buckets.add(cs, ce - cs, 1, self.class[i]);
            }
        }
        let bin_of = |x: i64| (x - s.origin).div_euclid(s.width);
        let (b0, b1) = (bin_of(start), bin_of(end - 1));
        let left_end = s.origin + (b0 + 1) * s.width;
        let right_start = s.origin + b1 * s.width;
        let edge = |from: i64, to: i64| self.overlapping(from, to);
        let (f, l) = edge(start, left_end);
        self.view_events(t, f..l, start, left_end, s.width, true, out, buckets);
        let (f, l) = edge(right_start, end);
        self.view_events(t, f..l, right_start, end, s.width, false, out, buckets);
        let lo = s.bins.partition_point(|b| b.0 <= b0);
        for &(bin, busy, count, class) in s.bins[lo..].iter().take_while(|b| b.0 < b1) {
            buckets.add(s.origin + bin * s.width, busy, count, class);
        }
    }
}
