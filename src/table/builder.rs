//! Builds a [`TraceTable`] from events as the reader finds them (implements [`EventSink`]).

use arrow2::array::{BooleanArray, DictionaryArray, PrimitiveArray, Utf8Array};
use arrow2::bitmap::{Bitmap, MutableBitmap};
use arrow2::datatypes::DataType;
use arrow2::types::NativeType;

use super::float_text::float_text;
use super::intern::{same_bytes, FxHashMap, Interner};
use super::{ArgColumn, ArgValues, IntColumn, TraceMetadata, TraceTable};
use crate::trace::dialect::{
    is_known_phase, kind_in_process, kind_of_category, kind_of_event, process_role, EventKind,
    ProcessRole,
};
use crate::trace::{
    ArgValue, DiagnosticKind, Diagnostics, EventSink, IdValue, RawEvent, ReadSummary, TsForm,
};

/// The type a well-known args key always gets, whatever the values look like.
#[derive(Clone, Copy, Debug, PartialEq)]
enum FixedType {
    Int,
    Float,
    Text,
}

fn fixed_type_of(key: &[u8]) -> Option<FixedType> {
    Some(match key {
        b"bytes"
        | b"cbid"
        | b"queued"
        | b"context"
        | b"registers per thread"
        | b"shared memory"
        | b"Record function id"
        | b"Sequence number"
        | b"Fwd thread id"
        | b"Ev Idx"
        | b"Python id"
        | b"Python parent id"
        | b"Python thread"
        | b"In msg nelems"
        | b"Out msg nelems"
        | b"Group size"
        | b"Process Group Ranks size" => FixedType::Int,
        b"memory bandwidth (GB/s)"
        | b"blocks per SM"
        | b"warps per SM"
        | b"est. achieved occupancy %" => FixedType::Float,
        b"grid"
        | b"block"
        | b"Input Dims"
        | b"Input type"
        | b"Input Strides"
        | b"Concrete Inputs"
        | b"Collective name"
        | b"Process Group Name"
        | b"Process Group Description"
        | b"dtype"
        | b"kernel_backend"
        | b"name" => FixedType::Text,
        _ => return None,
    })
}

enum ArgData {
    /// Only nulls so far.
    Empty,
    Int(Vec<i64>),
    Float(Vec<f64>),
    Bool(Vec<bool>),
    Text(Vec<u32>),
}

/// One sparse args column under construction.
struct ArgBuilder {
    key: Vec<u8>,
    rows: Vec<u32>,
    data: ArgData,
    /// Validity, created at the first null.
    valid: Option<Vec<bool>>,
    strings: Interner,
    mixed: bool,
    fixed: Option<FixedType>,
}

impl ArgBuilder {
    fn new(key: &[u8]) -> Self {
        ArgBuilder {
            key: key.to_vec(),
            rows: Vec::new(),
            data: ArgData::Empty,
            valid: None,
            strings: Interner::default(),
            mixed: false,
            fixed: fixed_type_of(key),
        }
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    fn reserve_exact(&mut self, additional: usize) {
        self.rows.reserve_exact(additional);
        match &mut self.data {
            ArgData::Empty => {}
            ArgData::Int(v) => v.reserve_exact(additional),
            ArgData::Float(v) => v.reserve_exact(additional),
            ArgData::Bool(v) => v.reserve_exact(additional),
            ArgData::Text(v) => v.reserve_exact(additional),
        }
        if let Some(v) = &mut self.valid {
            v.reserve_exact(additional);
        }
    }

    fn push_validity(&mut self, ok: bool) {
        match (&mut self.valid, ok) {
            (Some(v), _) => v.push(ok),
            (None, true) => {}
            (None, false) => {
                let mut v = vec![true; self.len()];
                v.push(false);
                self.valid = Some(v);
            }
        }
    }

    fn to_text(&mut self) {
        let n_before = self.len();
        let texts: Vec<String> = match &self.data {
            ArgData::Empty => vec![String::new(); n_before],
            ArgData::Int(v) => v.iter().map(|x| x.to_string()).collect(),
            ArgData::Float(v) => v.iter().map(|x| float_text(*x)).collect(),
            ArgData::Bool(v) => v.iter().map(|x| x.to_string()).collect(),
            ArgData::Text(_) => return,
        };
        let ids = texts
            .iter()
            .map(|t| self.strings.intern(t.as_bytes()))
            .collect();
        self.data = ArgData::Text(ids);
    }

    /// Adds the value of `row`. Returns `false` when a well-known key got a value of the wrong type.
    fn push(&mut self, row: u32, value: &ArgValue<'_>) -> bool {
        let n = self.len();
        let mut ok = true;
        let value = match (self.fixed, *value) {
            (Some(FixedType::Int), ArgValue::Float(f)) if f.fract() == 0.0 && f.abs() < 9e18 => {
                ArgValue::Int(f as i64)
            }
            (Some(FixedType::Int), ArgValue::Int(_) | ArgValue::Null) => *value,
            (Some(FixedType::Int), _) => {
                ok = false;
                ArgValue::Null
            }
            (Some(FixedType::Float), ArgValue::Int(i)) => ArgValue::Float(i as f64),
            (Some(FixedType::Float), ArgValue::Float(_) | ArgValue::Null) => *value,
            (Some(FixedType::Float), _) => {
                ok = false;
                ArgValue::Null
            }
            _ => *value,
        };
        if self.fixed == Some(FixedType::Text) && matches!(self.data, ArgData::Empty) {
            self.to_text();
        }
        self.push_validity(!matches!(value, ArgValue::Null));
        match value {
            ArgValue::Null => match &mut self.data {
                ArgData::Empty => {}
                ArgData::Int(v) => v.push(0),
                ArgData::Float(v) => v.push(0.0),
                ArgData::Bool(v) => v.push(false),
                ArgData::Text(v) => v.push(0),
            },
            ArgValue::Int(i) => match &mut self.data {
                ArgData::Int(v) => v.push(i),
                ArgData::Float(v) => v.push(i as f64),
                ArgData::Empty => {
                    let mut v = vec![0; n];
                    v.push(i);
                    self.data = ArgData::Int(v);
                }
                ArgData::Bool(_) | ArgData::Text(_) => {
                    self.push_text(i.to_string().as_bytes(), false)
                }
            },
            ArgValue::Float(f) => match &mut self.data {
                ArgData::Float(v) => v.push(f),
                ArgData::Int(v) => {
                    let mut fl: Vec<f64> = v.iter().map(|&x| x as f64).collect();
                    fl.push(f);
                    self.data = ArgData::Float(fl);
                }
                ArgData::Empty => {
                    let mut v = vec![0.0; n];
                    v.push(f);
                    self.data = ArgData::Float(v);
                }
                ArgData::Bool(_) | ArgData::Text(_) => {
                    self.push_text(float_text(f).as_bytes(), false)
                }
            },
            ArgValue::Bool(b) => match &mut self.data {
                ArgData::Bool(v) => v.push(b),
                ArgData::Empty => {
                    let mut v = vec![false; n];
                    v.push(b);
                    self.data = ArgData::Bool(v);
                }
                _ => self.push_text(if b { b"true" } else { b"false" }, false),
            },
            ArgValue::Text(t) | ArgValue::Json(t) => self.push_text(t, true),
        }
        self.rows.push(row);
        ok
    }

    /// Stores a value as text, turning the column into text first if it was not (a mixed-type key).
    fn push_text(&mut self, t: &[u8], value_is_text: bool) {
        let data_is_text = matches!(self.data, ArgData::Text(_));
        let differs = if value_is_text {
            !data_is_text && !matches!(self.data, ArgData::Empty)
        } else {
            data_is_text
        };
        if differs && self.fixed != Some(FixedType::Text) {
            self.mixed = true;
        }
        self.to_text();
        let id = self.strings.intern(t);
        if let ArgData::Text(v) = &mut self.data {
            v.push(id);
        }
    }

    fn finish(self) -> ArgColumn {
        let validity = self.valid.map(|v| Bitmap::from_iter(v.iter().copied()));
        let n = self.rows.len();
        let values = match self.data {
            ArgData::Empty => ArgValues::Int(PrimitiveArray::new(
                DataType::Int64,
                vec![0i64; n].into(),
                validity,
            )),
            ArgData::Int(v) => {
                ArgValues::Int(PrimitiveArray::new(DataType::Int64, v.into(), validity))
            }
            ArgData::Float(v) => {
                ArgValues::Float(PrimitiveArray::new(DataType::Float64, v.into(), validity))
            }
            ArgData::Bool(v) => ArgValues::Bool(BooleanArray::new(
                DataType::Boolean,
                Bitmap::from_iter(v),
                validity,
            )),
            ArgData::Text(v) => {
                let keys = PrimitiveArray::<u32>::new(DataType::UInt32, v.into(), validity);
                ArgValues::Text(dictionary(keys, self.strings.into_strings()))
            }
        };
        ArgColumn {
            key: String::from_utf8_lossy(&self.key).into_owned(),
            rows: PrimitiveArray::<u32>::from_vec(self.rows),
            values,
            mixed_types: self.mixed,
        }
    }
}

fn dictionary(keys: PrimitiveArray<u32>, values: Vec<String>) -> DictionaryArray<u32> {
    let dict = Utf8Array::<i32>::from_iter_values(values.iter());
    let dtype = DataType::Dictionary(
        arrow2::datatypes::IntegerType::UInt32,
        Box::new(DataType::Utf8),
        false,
    );
    DictionaryArray::try_new(dtype, keys, dict.boxed()).expect("dictionary keys in range")
}

/// Interns `pid`/`tid` values, numbers and strings alike, as text.
#[derive(Default)]
struct IdInterner {
    ints: FxHashMap<i64, u32>,
    /// The last number interned and its id (runs of events share a pid and tid).
    last_int: Option<(i64, u32)>,
    strings: Interner,
}

impl IdInterner {
    #[inline]
    fn intern(&mut self, v: Option<IdValue<'_>>) -> u32 {
        match v {
            Some(IdValue::Int(n)) => {
                if let Some((last, id)) = self.last_int {
                    if last == n {
                        return id;
                    }
                }
                let id = match self.ints.get(&n) {
                    Some(&id) => id,
                    None => {
                        let id = self.strings.intern(n.to_string().as_bytes());
                        self.ints.insert(n, id);
                        id
                    }
                };
                self.last_int = Some((n, id));
                id
            }
            Some(IdValue::Text(t)) => self.strings.intern(t),
            None => self.strings.intern(b""),
        }
    }
}

/// The number a GPU row's `tid` names (`7`, `"stream 7"`, `"stream -3"`), used when `args.stream`
/// is absent.
fn stream_from_tid(tid: Option<IdValue<'_>>) -> Option<i64> {
    match tid? {
        IdValue::Int(n) => Some(n),
        IdValue::Text(t) => {
            let mut start = t
                .iter()
                .rposition(|b| !b.is_ascii_digit())
                .map_or(0, |p| p + 1);
            if start > 0 && t[start - 1] == b'-' {
                start -= 1;
            }
            std::str::from_utf8(&t[start..]).ok()?.parse().ok()
        }
    }
}

/// [`stream_from_tid`] of a `tid` as interned text.
fn stream_from_tid_text(tid: &str) -> Option<i64> {
    match tid.parse::<i64>() {
        Ok(n) => Some(n),
        Err(_) => stream_from_tid(Some(IdValue::Text(tid.as_bytes()))),
    }
}

/// The role of each process of a dialect that names it ([`process_role`]): from its `process_name`
/// event, or from the pid itself when written as text (the legacy export's `"CPU functions"`).
struct ProcessRoles(FxHashMap<u32, ProcessRole>);

impl ProcessRoles {
    fn new(pid_strings: &[String], process_names: &[(u32, String)]) -> Self {
        let mut roles = FxHashMap::default();
        for (pid, text) in pid_strings.iter().enumerate() {
            if let Some(r) = process_role(text) {
                roles.insert(pid as u32, r);
            }
        }
        for (pid, name) in process_names {
            if let Some(r) = process_role(name) {
                roles.insert(*pid, r);
            }
        }
        ProcessRoles(roles)
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn of(&self, pid: u32) -> Option<ProcessRole> {
        self.0.get(&pid).copied()
    }
}

/// Durations over this (2^53 ns, 104 days) are not a profiled event's; kept as no duration, so that
/// sums of durations cannot overflow.
pub const MAX_DURATION_NS: i64 = 1 << 53;

/// A nullable column under construction: a plain `Vec` of values (0 for a null) and a validity bitmap
/// made only at the first null. Same array as arrow2's `MutablePrimitiveArray`, with pushes inlined.
struct NullableColumn<T: NativeType> {
    values: Vec<T>,
    validity: Option<MutableBitmap>,
}

impl<T: NativeType> NullableColumn<T> {
    fn new() -> Self {
        NullableColumn {
            values: Vec::new(),
            validity: None,
        }
    }

    fn reserve_exact(&mut self, additional: usize) {
        self.values.reserve_exact(additional);
        if let Some(v) = self.validity.as_mut() {
            v.reserve(additional);
        }
    }

    #[inline(always)]
    fn push(&mut self, value: Option<T>) {
        match value {
            Some(v) => {
                self.values.push(v);
                if let Some(validity) = &mut self.validity {
                    validity.push(true);
                }
            }
            None => {
                self.values.push(T::default());
                match &mut self.validity {
                    Some(validity) => validity.push(false),
                    None => self.first_null(),
                }
            }
        }
    }

    /// The first null (just pushed as the last value): every earlier row is valid.
    #[cold]
    #[inline(never)]
    fn first_null(&mut self) {
        let n = self.values.len();
        let mut validity = MutableBitmap::with_capacity(self.values.capacity());
        validity.extend_constant(n - 1, true);
        validity.push(false);
        self.validity = Some(validity);
    }

    /// Sets a row to a value (never to null).
    fn set_valid(&mut self, row: usize, value: T) {
        self.values[row] = value;
        if let Some(validity) = &mut self.validity {
            validity.set(row, true);
        }
    }

    #[inline]
    fn values(&self) -> &[T] {
        &self.values
    }

    #[inline]
    fn validity(&self) -> Option<&MutableBitmap> {
        self.validity.as_ref()
    }

    /// As arrow2 converts a `MutablePrimitiveArray`: no validity when nothing is null.
    fn into_array(self) -> PrimitiveArray<T> {
        let validity = self.validity.and_then(|v| {
            let bitmap: Bitmap = v.into();
            (bitmap.unset_bits() != 0).then_some(bitmap)
        });
        PrimitiveArray::<T>::new(T::PRIMITIVE.into(), self.values.into(), validity)
    }
}

/// An [`IntColumn`] under construction: Int32 while every value fits (stream and device numbers
/// do, but for such as CUDA's 4294967295 "all streams" on a context sync), widened to Int64 at the
/// first that does not.
enum IntColumnBuilder {
    Int32(NullableColumn<i32>),
    Int64(NullableColumn<i64>),
}

impl IntColumnBuilder {
    fn reserve_exact(&mut self, additional: usize) {
        match self {
            IntColumnBuilder::Int32(c) => c.reserve_exact(additional),
            IntColumnBuilder::Int64(c) => c.reserve_exact(additional),
        }
    }

    #[inline(always)]
    fn push(&mut self, value: Option<i64>) {
        match self {
            IntColumnBuilder::Int32(c) => match value.map(i32::try_from) {
                None => c.push(None),
                Some(Ok(v)) => c.push(Some(v)),
                Some(Err(_)) => {
                    self.widen();
                    self.push(value);
                }
            },
            IntColumnBuilder::Int64(c) => c.push(value),
        }
    }

    fn get(&self, row: usize) -> Option<i64> {
        let valid = |v: Option<&MutableBitmap>| v.is_none_or(|b| b.get(row));
        match self {
            IntColumnBuilder::Int32(c) => valid(c.validity()).then(|| i64::from(c.values()[row])),
            IntColumnBuilder::Int64(c) => valid(c.validity()).then(|| c.values()[row]),
        }
    }

    /// Sets a row to a value, widening when it does not fit.
    fn set(&mut self, row: usize, value: i64) {
        match self {
            IntColumnBuilder::Int32(c) => match i32::try_from(value) {
                Ok(v) => c.set_valid(row, v),
                Err(_) => {
                    self.widen();
                    self.set(row, value);
                }
            },
            IntColumnBuilder::Int64(c) => c.set_valid(row, value),
        }
    }

    #[cold]
    #[inline(never)]
    fn widen(&mut self) {
        if let IntColumnBuilder::Int32(c) = self {
            let mut values = Vec::with_capacity(c.values.capacity());
            values.extend(c.values.iter().map(|&v| i64::from(v)));
            *self = IntColumnBuilder::Int64(NullableColumn {
                values,
                validity: c.validity.take(),
            });
        }
    }

    fn into_array(self) -> IntColumn {
        match self {
            IntColumnBuilder::Int32(c) => IntColumn::Int32(c.into_array()),
            IntColumnBuilder::Int64(c) => IntColumn::Int64(c.into_array()),
        }
    }
}

/// Where the value of an args key goes.
#[derive(Clone, Copy, Debug)]
enum ArgSlot {
    /// A typed column of the table: external id, correlation, stream, device (in this order).
    Dense(u8),
    /// A sparse args column (index in `TableBuilder::args`).
    Column(u32),
}

/// The capacity a growing column of `len` values (`capacity` now) should have before `next` more
/// bytes of text are read, when `seen` bytes brought those values and about `total` are expected in
/// all; `None` when it has room enough (for 4x the values per byte seen so far, since events are
/// not alike through a file: what overflows the room in a piece makes the `Vec` double).
///
/// A `Vec` doubles when full, so a column ends anywhere between 1x and 2x its length, and in
/// WebAssembly, whose memory never shrinks, the blocks it left behind stay too: the tables are most
/// of the memory a large trace takes. Here a column doubles only while less than an eighth of the
/// file is seen; from then on it grows straight to its projected final length plus 8%, which
/// takes one step when the events are alike through the file (a later step if they are not).
/// Before any text is seen: room for the rows of the first 4 MiB at 128 bytes a row.
fn room_for(
    len: usize,
    capacity: usize,
    seen: u64,
    next: u64,
    total: Option<u64>,
) -> Option<usize> {
    if seen == 0 {
        let first = (next.min(4 << 20) / 128) as usize;
        return (capacity < first).then_some(first);
    }
    if len == 0 {
        return None;
    }
    let per_byte = len as f64 / seen as f64;
    let must = len + (per_byte * next as f64 * 4.0) as usize + 16;
    if capacity >= must {
        return None;
    }
    let doubled = must.max(2 * len);
    match total {
        Some(total) if seen.saturating_mul(8) >= total => {
            let projected = (per_byte * total.max(seen + next) as f64 * 1.08) as usize + 16;
            Some(projected.max(len + len / 16).max(must))
        }
        _ => Some(doubled),
    }
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

    /// Makes the table. `summary` is what the reader found (metadata, diagnostics).
    pub fn finish(mut self, summary: ReadSummary) -> TraceTable {
        let unpaired: usize = self.open_begins.values().map(Vec::len).sum();
        self.diagnostics
            .add_n(DiagnosticKind::UnpairedBegin, unpaired as u64, || {
                "a B event left open at the end".into()
            });
        self.count_outside_profiling_window();
        let mut diagnostics = summary.diagnostics;
        diagnostics.merge(&self.diagnostics);
        let mut metadata = TraceMetadata::from_top_level(summary.metadata);
        let pid_strings = self.pids.strings.into_strings();
        let tid_strings = self.tids.strings.into_strings();
        let mut args: Vec<ArgColumn> = self.args.into_iter().map(ArgBuilder::finish).collect();
        args.sort_by(|a, b| a.key.cmp(&b.key));
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

impl EventSink for TableBuilder {
    fn event(&mut self, e: &RawEvent<'_>) {
        let row = self.kind.len();
        let phase = e.phase.unwrap_or(0);
        if e.phase.is_none() {
            self.diagnostics.add(DiagnosticKind::MissingPhase, || {
                format!("traceEvents[{}]", e.index)
            });
        } else if !is_known_phase(phase) {
            self.diagnostics.add(DiagnosticKind::UnknownPhase, || {
                format!("ph \"{}\" at traceEvents[{}]", phase as char, e.index)
            });
        }
        let cat_kind = match e.category {
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
        };
        let kind = kind_of_event(phase, cat_kind);
        self.kind.push(kind as u8);
        self.phase.push(phase);
        self.name.push(self.names.intern(e.name.unwrap_or(b"")));
        let pid = self.pids.intern(e.pid);
        let tid = self.tids.intern(e.tid);
        self.pid.push(pid);
        self.tid.push(tid);
        self.ts_ns.push(e.ts_ns);
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
        // B/E pairing per (pid, tid): the E gives the B its duration.
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
        if e.bad_id {
            self.diagnostics.add(DiagnosticKind::BadFlowId, || {
                format!("traceEvents[{}]", e.index)
            });
        }
        self.flow_id.push(e.id);

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
        let [ext, corr, mut stream, device] = dense;
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

#[cfg(test)]
mod tests {
    use super::room_for;

    /// Feeds `total` bytes in `piece`-byte steps to a column that gets one value per
    /// `bytes_per_value(offset)` bytes, growing it as `room_for` says (and doubling, as a `Vec`
    /// does, when a piece brings more than the room made). Returns (final length, capacity, steps
    /// made by `room_for`, doublings).
    fn grow(
        total: u64,
        piece: u64,
        bytes_per_value: impl Fn(u64) -> u64,
    ) -> (usize, usize, usize, usize) {
        let (mut len, mut cap, mut steps, mut doublings) = (0usize, 0usize, 0usize, 0usize);
        let mut seen = 0u64;
        while seen < total {
            let next = piece.min(total - seen);
            if let Some(target) = room_for(len, cap, seen, next, Some(total)) {
                assert!(target >= len, "room_for never shrinks a column");
                cap = target;
                steps += 1;
            }
            for offset in seen..seen + next {
                if offset % bytes_per_value(offset) == 0 {
                    if len == cap {
                        cap = (2 * cap).max(4);
                        doublings += 1;
                    }
                    len += 1;
                }
            }
            seen += next;
        }
        (len, cap, steps, doublings)
    }

    #[test]
    fn alike_events_end_within_a_tenth_of_their_length() {
        let (len, cap, steps, doublings) = grow(64 << 20, 256 << 10, |_| 200);
        assert_eq!(len, (64 << 20) / 200 + 1);
        assert!(
            cap >= len && cap as f64 <= len as f64 * 1.1,
            "{cap} for {len}"
        );
        // A few small steps over the first pieces, doubling to an eighth, then one to the end.
        assert!(steps <= 12, "{steps} steps");
        assert_eq!(doublings, 0);
    }

    #[test]
    fn denser_tail_grows_again_without_a_vec_doubling() {
        // 400-byte events for the first half, 100-byte ones after: the projection is low.
        let (len, cap, _, doublings) =
            grow(
                32 << 20,
                256 << 10,
                |o| if o < 16 << 20 { 400 } else { 100 },
            );
        assert!(
            cap >= len && (cap as f64) < len as f64 * 1.3,
            "{cap} for {len}"
        );
        assert_eq!(doublings, 0);
    }

    #[test]
    fn before_any_text_only_the_first_pieces_are_reserved() {
        assert_eq!(
            room_for(0, 0, 0, 1 << 30, Some(1 << 30)),
            Some((4 << 20) / 128)
        );
        assert_eq!(room_for(0, 1 << 20, 0, 1 << 30, Some(1 << 30)), None);
        // Unknown size: doubling.
        assert_eq!(room_for(1000, 1000, 200_000, 1000, None), Some(2000));
        // An args column nobody has used yet stays empty.
        assert_eq!(room_for(0, 0, 1 << 20, 1 << 20, Some(1 << 30)), None);
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
