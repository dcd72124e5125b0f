//! Builds a [`TraceTable`] from events as the reader finds them (implements [`EventSink`]).

mod args;
mod columns;
mod growth;
mod ids;

use arrow2::array::PrimitiveArray;

use args::{dictionary, ArgBuilder};
use columns::{IntColumnBuilder, NullableColumn};
use growth::room_for;
use ids::{stream_from_tid, stream_from_tid_text, IdInterner, ProcessRoles};

use super::intern::{same_bytes, FxHashMap, Interner};
use super::{ArgColumn, TraceMetadata, TraceTable};
use crate::trace::dialect::{
    is_known_phase, kind_in_process, kind_of_category, kind_of_event, EventKind,
};
use crate::trace::{
    ArgValue, DiagnosticKind, Diagnostics, EventSink, RawEvent, ReadSummary, TsForm,
};

/// Durations over this (2^53 ns, 104 days) are not a profiled event's; kept as no duration, so that
/// sums of durations cannot overflow.
pub const MAX_DURATION_NS: i64 = 1 << 53;

/// Where the value of an args key goes.
#[derive(Clone, Copy, Debug)]
enum ArgSlot {
    /// A typed column of the table: external id, correlation, stream, device (in this order).
    Dense(u8),
    /// A sparse args column (index in `TableBuilder::args`).
    Column(u32),
}

/// Receives events and grows the columns; [`TableBuilder::finish`] makes the table.
pub struct TableBuilder {
    file: String,
    kind: Vec<u8>,
    phase: Vec<u8>,
    category: NullableColumn<u32>,
    name: Vec<u32>,
    pid: Vec<u32>,
    tid: Vec<u32>,
    ts_ns: NullableColumn<i64>,
    dur_ns: NullableColumn<i64>,
    external_id: NullableColumn<i64>,
    correlation: NullableColumn<i64>,
    stream: IntColumnBuilder,
    /// Rows whose stream was read from `tid` (no integer `args.stream`).
    stream_from_tid: Vec<u32>,
    /// (row, ts µs, dur µs) as parsed, for rows whose text has digits past the ns (NaN: not so).
    sub_ns: Vec<(u32, f64, f64)>,
    /// Some `ts` is a float or missing / some `ts` is neither a number nor missing.
    ts_float_or_missing: bool,
    ts_other: bool,
    device: IntColumnBuilder,
    flow_id: NullableColumn<i64>,
    names: Interner,
    categories: Interner,
    category_kinds: Vec<Option<EventKind>>,
    pids: IdInterner,
    tids: IdInterner,
    arg_index: FxHashMap<Box<[u8]>, usize>,
    args: Vec<ArgBuilder>,
    /// By position in `args` of the last event that had it: the key there and where it goes.
    arg_slots: Vec<(Vec<u8>, ArgSlot)>,
    open_begins: FxHashMap<(u32, u32), Vec<(usize, i64)>>,
    process_names: Vec<(u32, String)>,
    thread_names: Vec<(u32, u32, String)>,
    diagnostics: Diagnostics,
}

impl TableBuilder {
    pub fn new(file: &str) -> Self {
        TableBuilder {
            file: file.to_string(),
            kind: Vec::new(),
            phase: Vec::new(),
            category: NullableColumn::new(),
            name: Vec::new(),
            pid: Vec::new(),
            tid: Vec::new(),
            ts_ns: NullableColumn::new(),
            dur_ns: NullableColumn::new(),
            external_id: NullableColumn::new(),
            correlation: NullableColumn::new(),
            stream: IntColumnBuilder::Int32(NullableColumn::new()),
            stream_from_tid: Vec::new(),
            sub_ns: Vec::new(),
            ts_float_or_missing: false,
            ts_other: false,
            device: IntColumnBuilder::Int32(NullableColumn::new()),
            flow_id: NullableColumn::new(),
            names: Interner::default(),
            categories: Interner::default(),
            category_kinds: Vec::new(),
            pids: IdInterner::default(),
            tids: IdInterner::default(),
            arg_index: FxHashMap::default(),
            args: Vec::new(),
            arg_slots: Vec::new(),
            open_begins: FxHashMap::default(),
            process_names: Vec::new(),
            thread_names: Vec::new(),
            diagnostics: Diagnostics::default(),
        }
    }

    /// Makes room, before `next_text` more bytes of JSON are read, for the rows and args values
    /// they may bring, projected from what the `seen_text` bytes so far brought and the
    /// `total_text` bytes expected in all (`None`: not known). See [`room_for`].
    pub fn make_room(&mut self, seen_text: u64, next_text: u64, total_text: Option<u64>) {
        let rows = self.kind.len();
        if let Some(target) = room_for(rows, self.kind.capacity(), seen_text, next_text, total_text)
        {
            let more = target - rows;
            self.kind.reserve_exact(more);
            self.phase.reserve_exact(more);
            self.name.reserve_exact(more);
            self.pid.reserve_exact(more);
            self.tid.reserve_exact(more);
            for c in [
                &mut self.ts_ns,
                &mut self.dur_ns,
                &mut self.external_id,
                &mut self.correlation,
                &mut self.flow_id,
            ] {
                c.reserve_exact(more);
            }
            self.stream.reserve_exact(more);
            self.device.reserve_exact(more);
            self.category.reserve_exact(more);
        }
        for a in &mut self.args {
            let len = a.rows.len();
            if let Some(target) = room_for(len, a.rows.capacity(), seen_text, next_text, total_text)
            {
                a.reserve_exact(target - len);
            }
        }
    }

    fn column_of(&mut self, key: &[u8]) -> usize {
        match self.arg_index.get(key) {
            Some(&c) => c,
            None => {
                let c = self.args.len();
                self.args.push(ArgBuilder::new(key));
                self.arg_index.insert(key.into(), c);
                c
            }
        }
    }

    /// Where `key` goes, remembered as the key at position `k` of args.
    #[cold]
    #[inline(never)]
    fn remember_slot(&mut self, k: usize, key: &[u8]) -> ArgSlot {
        let slot = match key {
            b"External id" | b"external id" => ArgSlot::Dense(0),
            b"correlation" => ArgSlot::Dense(1),
            b"stream" => ArgSlot::Dense(2),
            b"device" => ArgSlot::Dense(3),
            _ => ArgSlot::Column(self.column_of(key) as u32),
        };
        if self.arg_slots.len() <= k {
            self.arg_slots.resize(k + 1, (Vec::new(), slot));
        }
        let (cached, s) = &mut self.arg_slots[k];
        cached.clear();
        cached.extend_from_slice(key);
        *s = slot;
        slot
    }

    pub fn rows(&self) -> usize {
        self.kind.len()
    }

    /// Counts a duration that is negative or over [`MAX_DURATION_NS`].
    #[cold]
    #[inline(never)]
    fn bad_duration(&mut self, d: i64, index: u64) {
        let kind = if d < 0 {
            DiagnosticKind::NegativeDuration
        } else {
            DiagnosticKind::ImplausibleDuration
        };
        self.diagnostics
            .add(kind, || format!("dur {d} ns at traceEvents[{index}]"));
    }

    fn category_kind(&mut self, id: u32) -> Option<EventKind> {
        let idx = id as usize;
        while self.category_kinds.len() <= idx {
            let cid = self.category_kinds.len() as u32;
            let text = String::from_utf8_lossy(self.categories.get(cid)).into_owned();
            let k = kind_of_category(&text);
            self.category_kinds.push(k);
        }
        self.category_kinds[idx]
    }

    /// Counts timed events that start outside the profiler's own span (the `Trace` event, when there is one).
    fn count_outside_profiling_window(&mut self) {
        let trace = EventKind::Trace as u8;
        let mut window: Option<(i64, i64)> = None;
        for (row, &k) in self.kind.iter().enumerate() {
            if k != trace {
                continue;
            }
            if let (Some(ts), Some(dur)) =
                (self.ts_ns.values().get(row), self.dur_ns.values().get(row))
            {
                if self.ts_ns.validity().is_none_or(|v| v.get(row))
                    && self.dur_ns.validity().is_none_or(|v| v.get(row))
                {
                    let (lo, hi) = window.unwrap_or((i64::MAX, i64::MIN));
                    window = Some((lo.min(*ts), hi.max(ts + dur)));
                }
            }
        }
        let Some((lo, hi)) = window else { return };
        let meta = EventKind::Metadata as u8;
        let mut outside = 0u64;
        let mut example = None;
        for (row, &k) in self.kind.iter().enumerate() {
            // Markers without a category ("Record Window End", "Iteration Start") sit at the edges by design.
            let marker = !self.category.validity().is_none_or(|v| v.get(row));
            if k == meta
                || k == trace
                || marker
                || !self.ts_ns.validity().is_none_or(|v| v.get(row))
            {
                continue;
            }
            let ts = self.ts_ns.values()[row];
            if ts < lo || ts > hi {
                outside += 1;
                example.get_or_insert(row);
            }
        }
        self.diagnostics
            .add_n(DiagnosticKind::OutsideProfilingWindow, outside, || {
                format!(
                    "row {} starts outside the profiler span [{lo}, {hi}] ns",
                    example.unwrap_or(0)
                )
            });
    }

    /// Timestamps in two time bases (some events at absolute epoch times, others relative to the
    /// start, as old exporters wrote): two clusters of timestamps at least [`MIXED_TIME_GAP_NS`]
    /// apart, which would make a window of years out of events of milliseconds. The cluster with
    /// the device work (else the one with more events) is kept; the other's timestamps are left
    /// out (null: out of every time figure) and counted as [`DiagnosticKind::MixedTimeBases`].
    fn separate_time_bases(&mut self) {
        let meta = EventKind::Metadata as u8;
        let valid = |c: &NullableColumn<i64>, row: usize| c.validity().is_none_or(|v| v.get(row));
        let timed = |b: &Self, row: usize| b.kind[row] != meta && valid(&b.ts_ns, row);
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for row in 0..self.kind.len() {
            if timed(self, row) {
                let ts = self.ts_ns.values()[row];
                lo = lo.min(ts);
                hi = hi.max(ts);
            }
        }
        if lo > hi || hi.saturating_sub(lo) < MIXED_TIME_GAP_NS {
            return;
        }
        let mut all: Vec<i64> = (0..self.kind.len())
            .filter(|&r| timed(self, r))
            .map(|r| self.ts_ns.values()[r])
            .collect();
        all.sort_unstable();
        let Some((gap_lo, gap_hi)) = all
            .windows(2)
            .map(|w| (w[0], w[1]))
            .max_by_key(|(a, b)| b.saturating_sub(*a))
            .filter(|(a, b)| b.saturating_sub(*a) >= MIXED_TIME_GAP_NS)
        else {
            return;
        };
        // (events, device events) below and above the gap.
        let (mut below, mut above) = ((0u64, 0u64), (0u64, 0u64));
        for row in 0..self.kind.len() {
            if !timed(self, row) {
                continue;
            }
            let device = u64::from(EventKind::from_u8(self.kind[row]).is_gpu_activity());
            let side = if self.ts_ns.values()[row] <= gap_lo {
                &mut below
            } else {
                &mut above
            };
            side.0 += 1;
            side.1 += device;
        }
        let keep_above = (above.1, above.0) > (below.1, below.0);
        let mut dropped = 0u64;
        for row in 0..self.kind.len() {
            if !timed(self, row) {
                continue;
            }
            let ts = self.ts_ns.values()[row];
            if (ts >= gap_hi) != keep_above {
                self.ts_ns.set_null(row);
                dropped += 1;
            }
        }
        let (kept, kept_range, left_range) = if keep_above {
            (above.0, (gap_hi, hi), (lo, gap_lo))
        } else {
            (below.0, (lo, gap_lo), (gap_hi, hi))
        };
        self.diagnostics
            .add_n(DiagnosticKind::MixedTimeBases, dropped, || {
                format!(
                    "{kept} events at ts {}..{} µs kept (the device work), {dropped} at ts {}..{} µs left out: {:.0} years apart",
                    kept_range.0 / 1000,
                    kept_range.1 / 1000,
                    left_range.0 / 1000,
                    left_range.1 / 1000,
                    (gap_hi - gap_lo) as f64 / (365.25 * 86_400e9)
                )
            });
    }

    /// Makes the table. `summary` is what the reader found (metadata, diagnostics).
    pub fn finish(mut self, summary: ReadSummary) -> TraceTable {
        let unpaired: usize = self.open_begins.values().map(Vec::len).sum();
        self.diagnostics
            .add_n(DiagnosticKind::UnpairedBegin, unpaired as u64, || {
                "a B event left open at the end".into()
            });
        self.separate_time_bases();
        self.count_outside_profiling_window();
        let mut diagnostics = summary.diagnostics;
        diagnostics.merge(&self.diagnostics);
        let mut metadata = TraceMetadata::from_top_level(summary.metadata);
        let pid_strings = self.pids.strings.into_strings();
        let tid_strings = self.tids.strings.into_strings();
        let mut args: Vec<ArgColumn> = self.args.into_iter().map(ArgBuilder::finish).collect();
        crate::sort::sort_by(&mut args, |a, b| a.key.cmp(&b.key));
        let roles = ProcessRoles::new(&pid_strings, &self.process_names);
        if !roles.is_empty() {
            let threads: FxHashMap<(u32, u32), &str> = self
                .thread_names
                .iter()
                .map(|(p, t, n)| ((*p, *t), n.as_str()))
                .collect();
            let task_type = args.iter().find(|c| c.key == "Task Type");
            for row in 0..self.kind.len() {
                let Some(role) = roles.of(self.pid[row]) else {
                    continue;
                };
                if EventKind::from_u8(self.kind[row]) != EventKind::Other
                    || !matches!(self.phase[row], b'X' | b'B')
                {
                    continue;
                }
                let thread = threads.get(&(self.pid[row], self.tid[row])).copied();
                let task = task_type.and_then(|c| c.find(row).and_then(|i| c.text_at(i)));
                let Some(kind) = kind_in_process(role, thread, task) else {
                    continue;
                };
                self.kind[row] = kind as u8;
                if kind.is_gpu_activity() && self.stream.get(row).is_none() {
                    if let Some(s) = stream_from_tid_text(&tid_strings[self.tid[row] as usize]) {
                        self.stream.set(row, s);
                        self.stream_from_tid.push(row as u32);
                    }
                }
            }
            self.stream_from_tid.sort_unstable();
            self.stream_from_tid.dedup();
            legacy_outer_ranges(
                &mut self.kind,
                (&self.pid, &self.tid),
                (&self.ts_ns, &self.dur_ns),
                &roles,
            );
        }
        for (pid, name) in self.process_names {
            metadata
                .process_names
                .insert(pid_strings[pid as usize].clone(), name);
        }
        for (pid, tid, name) in self.thread_names {
            metadata.thread_names.insert(
                format!(
                    "{}/{}",
                    pid_strings[pid as usize], tid_strings[tid as usize]
                ),
                name,
            );
        }
        for c in &args {
            if c.mixed_types {
                let key = c.key.clone();
                diagnostics.add(DiagnosticKind::MixedTypeArg, || key);
            }
        }
        let u32col = |v: Vec<u32>| PrimitiveArray::<u32>::from_vec(v);
        TraceTable {
            file: self.file,
            kind: PrimitiveArray::from_vec(self.kind),
            phase: PrimitiveArray::from_vec(self.phase),
            category: dictionary(self.category.into_array(), self.categories.into_strings()),
            name: dictionary(u32col(self.name), self.names.into_strings()),
            pid: dictionary(u32col(self.pid), pid_strings),
            tid: dictionary(u32col(self.tid), tid_strings),
            ts_ns: self.ts_ns.into_array(),
            dur_ns: self.dur_ns.into_array(),
            external_id: self.external_id.into_array(),
            correlation: self.correlation.into_array(),
            stream: self.stream.into_array(),
            stream_from_tid: self.stream_from_tid,
            sub_ns: self.sub_ns,
            ts_float: self.ts_float_or_missing && !self.ts_other,
            device: self.device.into_array(),
            flow_id: self.flow_id.into_array(),
            args,
            metadata,
            diagnostics,
        }
    }
}

/// Two clusters of timestamps this far apart (a year, ns) are two time bases, not one recording:
/// a profiler window lasts seconds to hours.
pub const MIXED_TIME_GAP_NS: i64 = 365 * 86_400 * 1_000_000_000;

fn as_i64(v: &ArgValue<'_>) -> Option<Option<i64>> {
    match *v {
        ArgValue::Int(n) => Some(Some(n)),
        ArgValue::Float(f) if f.fract() == 0.0 && f.abs() < 9e18 => Some(Some(f as i64)),
        ArgValue::Null => Some(None),
        ArgValue::Text(t) => std::str::from_utf8(t)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .map(Some),
        _ => None,
    }
}

/// The parts of [`EventSink::event`]: one event's phase, category, times, B/E pairing and args.
impl TableBuilder {
    /// Counts an event without a phase, or with one this tool does not know.
    #[inline]
    fn check_phase(&mut self, e: &RawEvent<'_>, phase: u8) {
        if e.phase.is_none() {
            self.diagnostics.add(DiagnosticKind::MissingPhase, || {
                format!("traceEvents[{}]", e.index)
            });
        } else if !is_known_phase(phase) {
            self.diagnostics.add(DiagnosticKind::UnknownPhase, || {
                format!("ph \"{}\" at traceEvents[{}]", phase as char, e.index)
            });
        }
    }

    /// Pushes the event's category; its kind, if the category names one (counted when it does not).
    #[inline]
    fn push_category(&mut self, category: Option<&[u8]>, phase: u8) -> Option<EventKind> {
        match category {
            Some(c) => {
                let id = self.categories.intern(c);
                self.category.push(Some(id));
                let k = self.category_kind(id);
                if k.is_none() && !matches!(phase, b'M' | b'C' | b's' | b'f' | b't') {
                    self.diagnostics.add(DiagnosticKind::UnknownCategory, || {
                        format!("\"{}\"", String::from_utf8_lossy(c))
                    });
                }
                k
            }
            None => {
                self.category.push(None);
                None
            }
        }
    }

    /// Records how `ts` was written and the µs text of sub-ns times; pushes the duration (a bad one
    /// counted, a too long one dropped).
    #[inline]
    fn push_times(&mut self, e: &RawEvent<'_>, row: usize, phase: u8) {
        match e.ts_form {
            TsForm::Int => {}
            TsForm::Float | TsForm::Missing => self.ts_float_or_missing = true,
            TsForm::Other => self.ts_other = true,
        }
        if e.ts_us.is_some() || e.dur_us.is_some() {
            self.sub_ns.push((
                row as u32,
                e.ts_us.unwrap_or(f64::NAN),
                e.dur_us.unwrap_or(f64::NAN),
            ));
        }
        let mut dur = e.dur_ns;
        if let Some(d) = dur {
            // One compare for both: a negative value is a huge unsigned one.
            if d as u64 > MAX_DURATION_NS as u64 {
                self.bad_duration(d, e.index);
                // A negative one is kept as written (`TraceTable::dur_at` leaves it out, the
                // HTA-compatible definitions take it as HTA does); a too long one is dropped, so
                // that sums of durations cannot overflow.
                if d > 0 {
                    dur = None;
                }
            }
        } else if phase == b'X' {
            self.diagnostics.add(DiagnosticKind::MissingDuration, || {
                format!("traceEvents[{}]", e.index)
            });
        }
        if e.ts_ns.is_none() && !matches!(phase, b'M') {
            self.diagnostics.add(DiagnosticKind::MissingTimestamp, || {
                format!("traceEvents[{}]", e.index)
            });
        }
        self.dur_ns.push(dur);
    }

    /// B/E pairing per (pid, tid): the E gives the B its duration.
    #[inline]
    fn pair_begin_end(&mut self, e: &RawEvent<'_>, row: usize, phase: u8, (pid, tid): (u32, u32)) {
        match phase {
            b'B' => {
                if let Some(ts) = e.ts_ns {
                    self.open_begins
                        .entry((pid, tid))
                        .or_default()
                        .push((row, ts));
                }
            }
            b'E' => match self.open_begins.get_mut(&(pid, tid)).and_then(Vec::pop) {
                Some((b_row, b_ts)) => {
                    if let Some(ts) = e.ts_ns {
                        // An E before its B, or absurdly late: no duration, counted.
                        let d = ts - b_ts;
                        if d as u64 <= MAX_DURATION_NS as u64 {
                            self.dur_ns.set_valid(b_row, d);
                        } else {
                            self.bad_duration(d, e.index);
                        }
                    }
                }
                None => self.diagnostics.add(DiagnosticKind::UnpairedEnd, || {
                    format!("traceEvents[{}]", e.index)
                }),
            },
            _ => {}
        }
    }

    /// Pushes the event's args into their columns; returns the dense ones (external id,
    /// correlation, stream, device). Metadata events' `name` arg names a process or thread.
    #[inline]
    fn push_args(
        &mut self,
        e: &RawEvent<'_>,
        row: usize,
        phase: u8,
        (pid, tid): (u32, u32),
    ) -> [Option<i64>; 4] {
        let mut dense = [None; 4];
        for (k, (key, value)) in e.args.iter().enumerate() {
            // Events of one kind write the same keys in the same order: the key at this position
            // last time is compared first, before any hashing.
            let slot = match self.arg_slots.get(k) {
                Some((cached, slot)) if same_bytes(cached, key) => *slot,
                _ => self.remember_slot(k, key),
            };
            let col = match slot {
                ArgSlot::Dense(d) => {
                    if let Some(v) = as_i64(value) {
                        dense[d as usize] = v;
                        continue;
                    }
                    // Not a decimal integer (ROCm writes `"stream": "0x0"` on runtime calls): the typed
                    // column stays null and the value is kept, as written, in a sparse column of that key.
                    self.column_of(key)
                }
                ArgSlot::Column(c) => c as usize,
            };
            if !self.args[col].push(row as u32, value) {
                self.diagnostics
                    .add(DiagnosticKind::WellKnownArgWrongType, || {
                        format!(
                            "args[\"{}\"] = {value:?} at traceEvents[{}]",
                            String::from_utf8_lossy(key),
                            e.index
                        )
                    });
            }
            if phase == b'M' && *key == b"name" {
                if let ArgValue::Text(t) = value {
                    match e.name {
                        Some(b"process_name") => self
                            .process_names
                            .push((pid, String::from_utf8_lossy(t).into_owned())),
                        Some(b"thread_name") => self.thread_names.push((
                            pid,
                            tid,
                            String::from_utf8_lossy(t).into_owned(),
                        )),
                        _ => {}
                    }
                }
            }
        }
        dense
    }
}

impl EventSink for TableBuilder {
    fn event(&mut self, e: &RawEvent<'_>) {
        let row = self.kind.len();
        let phase = e.phase.unwrap_or(0);
        self.check_phase(e, phase);
        let cat_kind = self.push_category(e.category, phase);
        let kind = kind_of_event(phase, cat_kind);
        self.kind.push(kind as u8);
        self.phase.push(phase);
        self.name.push(self.names.intern(e.name.unwrap_or(b"")));
        let pid = self.pids.intern(e.pid);
        let tid = self.tids.intern(e.tid);
        self.pid.push(pid);
        self.tid.push(tid);
        self.ts_ns.push(e.ts_ns);
        self.push_times(e, row, phase);
        self.pair_begin_end(e, row, phase, (pid, tid));
        if e.bad_id {
            self.diagnostics.add(DiagnosticKind::BadFlowId, || {
                format!("traceEvents[{}]", e.index)
            });
        }
        self.flow_id.push(e.id);
        let [ext, corr, mut stream, device] = self.push_args(e, row, phase, (pid, tid));
        if stream.is_none() && kind.is_gpu_activity() {
            stream = stream_from_tid(e.tid);
            if stream.is_some() {
                self.stream_from_tid.push(row as u32);
            }
        }
        self.external_id.push(ext);
        self.correlation.push(corr);
        self.stream.push(stream);
        self.device.push(device);
    }

    fn non_object_entry(&mut self, index: u64) {
        self.diagnostics.add(DiagnosticKind::NonObjectEvent, || {
            format!("traceEvents[{index}]")
        });
    }
}

/// The legacy export's `CUDA functions` are per-operator CUDA time ranges, nested as the
/// operators are (`aten::conv2d` ⊃ `aten::convolution` ⊃ `aten::_convolution` ⊃
/// `aten::cudnn_convolution`), not kernels: a range inside another of its thread becomes a
/// device-side annotation, so the outermost ranges (the operators the model called) are the device
/// work, their sum is the union of the nest, and nothing is counted twice. (Counting the innermost
/// instead would lose a convolution to the tiny `aten::contiguous` ranges nested inside it.)
fn legacy_outer_ranges(
    kind: &mut [u8],
    (pid, tid): (&[u32], &[u32]),
    (ts_ns, dur_ns): (&NullableColumn<i64>, &NullableColumn<i64>),
    roles: &ProcessRoles,
) {
    use crate::trace::dialect::{DeviceKind, ProcessRole};
    let valid = |c: &NullableColumn<i64>, row: usize| {
        c.validity()
            .is_none_or(|v| v.get(row))
            .then(|| c.values()[row])
    };
    let mut ranges: FxHashMap<(u32, u32), Vec<(i64, i64, usize)>> = FxHashMap::default();
    for row in 0..kind.len() {
        if roles.of(pid[row]) != Some(ProcessRole::DeviceOps(DeviceKind::Cuda))
            || EventKind::from_u8(kind[row]) != EventKind::Kernel
        {
            continue;
        }
        let (Some(ts), Some(dur)) = (valid(ts_ns, row), valid(dur_ns, row)) else {
            continue;
        };
        ranges
            .entry((pid[row], tid[row]))
            .or_default()
            .push((ts, -(ts + dur.max(0)), row));
    }
    for list in ranges.values_mut() {
        list.sort_unstable();
        let mut outer_end = i64::MIN;
        for &(ts, neg_end, row) in list.iter() {
            let end = -neg_end;
            if ts < outer_end && end <= outer_end {
                kind[row] = EventKind::GpuUserAnnotation as u8;
            } else {
                outer_end = outer_end.max(end);
            }
        }
    }
}

#[cfg(test)]
mod hta_view_tests {
    use crate::table::load_bytes;

    #[test]
    fn stream_from_tid_sub_ns_and_float_ts_are_recorded() {
        let text = br#"{"traceEvents": [
            {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 10, "dur": 2,
             "args": {"stream": 7, "correlation": 1}},
            {"ph": "X", "cat": "mtia_ccp_events", "name": "dma", "pid": 9, "tid": 801, "ts": 20,
             "dur": 11.689600000000002},
            {"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": 1, "ts": 30, "dur": 1}]}"#;
        let t = load_bytes("t.json", text).unwrap();
        assert_eq!(t.stream_at(1), Some(801));
        assert_eq!(t.args_stream_at(1), None);
        assert_eq!(t.args_stream_at(0), Some(7));
        assert_eq!(t.dur_at(1), Some(11_690));
        assert_eq!(t.sub_ns_at(1), Some((None, Some(11.689600000000002))));
        assert_eq!(t.sub_ns_at(0), None);
        // Every ts an integer: pandas reads the column as int64.
        assert!(!t.ts_float);
        let t = load_bytes(
            "t.json",
            br#"[{"ph": "X", "cat": "a", "ts": 1, "dur": 1},
            {"ph": "i", "name": "no ts"}]"#,
        )
        .unwrap();
        assert!(t.ts_float);
    }
}
