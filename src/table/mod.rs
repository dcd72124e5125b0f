//! Events → arrow2 columns: one [`TraceTable`] per rank, every column documented; the only module that names arrow2.
//!
//! # Columns of a [`TraceTable`]
//! One row per entry of `traceEvents`, **in file order** (row = the entry's index, as HTA's `index`).
//! The table is not sorted by time; analyses sort the few rows they need.
//!
//! | column | arrow type | unit / meaning | null when |
//! |---|---|---|---|
//! | `kind` | UInt8 | canonical [`EventKind`] (`as u8`), from phase and category | never |
//! | `phase` | UInt8 | first byte of `ph` (`b'X'`, `b'B'`, ...) | `ph` absent (stored as 0) |
//! | `category` | Dictionary<UInt32, Utf8> | original `cat` (a non-string as its JSON text) | `cat` absent or `null` |
//! | `name` | Dictionary<UInt32, Utf8> | `name` (a non-string as its JSON text) | `name` absent or `null` (key of `""`) |
//! | `pid`, `tid` | Dictionary<UInt32, Utf8> | as written (`"7"`, `"stream 7"`, `"Spans"`) | absent or `null` (key of `""`) |
//! | `ts_ns` | Int64 | start, integer ns (µs × 1000, ns digits kept exactly) | `ts` absent, or not a number within [-2^61, 2^62) ns |
//! | `dur_ns` | Int64 | duration, ns, as written (a negative one is counted; `dur_at` leaves it out, `raw_dur_at` gives it); for `B` rows the paired `E` gives it (texts with digits past the ns also keep their f64 in `sub_ns`) | no duration, one over 2^53 ns, or an `E` before its `B` (counted) |
//! | `external_id` | Int64 | `args["External id"]` (old: `"external id"`) | absent |
//! | `correlation` | Int64 | `args.correlation` (links a runtime call to its GPU activity) | absent |
//! | `stream` | Int32, or Int64 when a value needs it ([`IntColumn`]) | `args.stream` when a decimal integer; for GPU activity without it, the number in `tid` (those rows are listed in `stream_from_tid`; other values, e.g. ROCm's `"0x0"` handles on runtime calls, stay in the sparse `args_stream`) | absent |
//! | `device` | Int32, or Int64 when a value needs it | `args.device` | absent |
//! | `flow_id` | Int64 | `id` of flow events (`s`/`f`/`t`) and async events | absent |
//! | `args_<key>` | see [`ArgColumn`] | every other `args` key, sparse: (row, value) pairs | row not listed |

pub mod arg_cell;
mod builder;
#[cfg(not(target_arch = "wasm32"))]
pub mod cache;
pub mod float_text;
pub mod intern;
pub mod loader;
pub mod query;
pub mod set;
pub mod split;
pub mod store;

use arrow2::array::{Array, BooleanArray, DictionaryArray, PrimitiveArray, Utf8Array};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub use crate::trace::dialect::EventKind;
use crate::trace::Diagnostics;
pub use arg_cell::{ArgCell, RowArgs};
pub use builder::TableBuilder;
#[cfg(not(target_arch = "wasm32"))]
pub use loader::load_path;
pub use loader::{is_trace_file_name, load_bytes, trace_files_in, TraceLoader};
pub use set::{
    runs_split_of, separate_runs_of, RankIdentity, RankTrace, RunsSplit, SkippedFile, TraceSet,
};

/// Values of one sparse args column.
#[derive(Clone, Debug)]
pub enum ArgValues {
    Int(PrimitiveArray<i64>),
    Float(PrimitiveArray<f64>),
    Bool(BooleanArray),
    /// Strings, and arrays/objects as compact JSON, dictionary-encoded.
    Text(DictionaryArray<u32>),
}

/// One `args` key as a column. Stored sparse: `rows[i]` (ascending) holds `values[i]`; rows not listed
/// did not have the key. JSON `null` is a null value.
#[derive(Clone, Debug)]
pub struct ArgColumn {
    /// The key as written in the trace (`"Input Dims"`); the column's display name is `args_<key>`.
    pub key: String,
    pub rows: PrimitiveArray<u32>,
    pub values: ArgValues,
    /// Values of more than one JSON type were seen (stored as text).
    pub mixed_types: bool,
}

impl ArgColumn {
    pub fn type_name(&self) -> &'static str {
        match self.values {
            ArgValues::Int(_) => "Int64",
            ArgValues::Float(_) => "Float64",
            ArgValues::Bool(_) => "Boolean",
            ArgValues::Text(_) => "Utf8",
        }
    }

    /// Position in `rows` of `row`, if the row has this key.
    pub fn find(&self, row: usize) -> Option<usize> {
        self.rows.values().binary_search(&(row as u32)).ok()
    }

    /// The value at position `i` (not row) as JSON.
    pub fn json_at(&self, i: usize) -> Value {
        self.cell_at(i).to_json()
    }

    /// The value at position `i` (not row), typed as stored.
    pub fn cell_at(&self, i: usize) -> ArgCell {
        let cell = match &self.values {
            ArgValues::Int(a) => a.get(i).map(ArgCell::Int),
            ArgValues::Float(a) => a.get(i).map(ArgCell::Float),
            ArgValues::Bool(a) => a.get(i).map(ArgCell::Bool),
            ArgValues::Text(a) => a.is_valid(i).then(|| {
                let k = a.keys().value(i) as usize;
                let dict = a
                    .values()
                    .as_any()
                    .downcast_ref::<Utf8Array<i32>>()
                    .expect("utf8 dictionary");
                ArgCell::Text(dict.value(k).to_string())
            }),
        };
        cell.unwrap_or(ArgCell::Null)
    }

    pub fn i64_at(&self, i: usize) -> Option<i64> {
        match &self.values {
            ArgValues::Int(a) => a.get(i),
            ArgValues::Float(a) => a.get(i).map(|v| v as i64),
            _ => None,
        }
    }

    pub fn f64_at(&self, i: usize) -> Option<f64> {
        match &self.values {
            ArgValues::Int(a) => a.get(i).map(|v| v as f64),
            ArgValues::Float(a) => a.get(i),
            _ => None,
        }
    }

    pub fn text_at(&self, i: usize) -> Option<&str> {
        match &self.values {
            ArgValues::Text(a) if a.is_valid(i) => {
                let k = a.keys().value(i) as usize;
                let dict = a.values().as_any().downcast_ref::<Utf8Array<i32>>()?;
                Some(dict.value(k))
            }
            _ => None,
        }
    }
}

/// What the trace says about itself (top-level keys and `M` events).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TraceMetadata {
    /// `distributedInfo.rank`.
    pub rank: Option<i64>,
    pub world_size: Option<i64>,
    pub backend: Option<String>,
    /// Name of the first entry of `deviceProperties`.
    pub device_name: Option<String>,
    pub device_count: usize,
    pub schema_version: Option<i64>,
    pub trace_id: Option<String>,
    pub display_time_unit: Option<String>,
    pub base_time_ns: Option<i64>,
    /// `M` events: pid → process name, (pid, tid) → thread name.
    pub process_names: BTreeMap<String, String>,
    pub thread_names: BTreeMap<String, String>,
    /// Every top-level key except `traceEvents`, as written.
    pub top_level: Map<String, Value>,
    /// Entries of `traceEvents` (rows, plus entries that were not objects).
    pub trace_events: u64,
    /// `{"traceEvents": ...}` (false: old bare-array form).
    pub object_form: bool,
    /// The file was gzip-compressed.
    pub gzip: bool,
    /// Bytes of the file as given, and of its JSON text.
    pub file_bytes: u64,
    pub text_bytes: u64,
    /// Every rank of the one file this rank was split from ([`split::split_fused`]); empty for a
    /// rank that had its own file.
    #[serde(default)]
    pub fused_ranks: Vec<i64>,
}

impl TraceMetadata {
    pub fn from_top_level(top: Map<String, Value>) -> Self {
        let dist = top.get("distributedInfo");
        // An integer, also when written as a string (`"3"`) or a whole float (`3.0`, as JSON
        // rewritten by pandas or JavaScript may have it).
        let int = |v: Option<&Value>| {
            v.and_then(|v| {
                v.as_i64()
                    .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                    .or_else(|| {
                        v.as_f64()
                            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                            .map(|f| f as i64)
                    })
            })
        };
        let devices = top.get("deviceProperties").and_then(Value::as_array);
        TraceMetadata {
            rank: int(dist.and_then(|d| d.get("rank"))),
            world_size: int(dist.and_then(|d| d.get("world_size"))),
            backend: dist
                .and_then(|d| d.get("backend"))
                .and_then(Value::as_str)
                .map(str::to_string),
            device_name: devices
                .and_then(|d| d.first())
                .and_then(|d| d.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string),
            device_count: devices.map_or(0, Vec::len),
            schema_version: int(top.get("schemaVersion")),
            trace_id: top.get("trace_id").map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| v.to_string())
            }),
            display_time_unit: top
                .get("displayTimeUnit")
                .and_then(Value::as_str)
                .map(str::to_string),
            base_time_ns: int(top.get("baseTimeNanoseconds")),
            top_level: top,
            ..Default::default()
        }
    }
}

/// An integer column stored as Int32 when every value fits (the usual case: it takes half the
/// memory), else as Int64.
#[derive(Clone, Debug)]
pub enum IntColumn {
    Int32(PrimitiveArray<i32>),
    Int64(PrimitiveArray<i64>),
}

impl IntColumn {
    #[inline]
    pub fn get(&self, row: usize) -> Option<i64> {
        match self {
            IntColumn::Int32(a) => a.get(row).map(i64::from),
            IntColumn::Int64(a) => a.get(row),
        }
    }

    /// Bytes per value.
    pub fn width(&self) -> usize {
        match self {
            IntColumn::Int32(_) => 4,
            IntColumn::Int64(_) => 8,
        }
    }
}

/// One rank's events as columns. See the module documentation for every column.
#[derive(Clone, Debug)]
pub struct TraceTable {
    /// The file name it came from.
    pub file: String,
    pub kind: PrimitiveArray<u8>,
    pub phase: PrimitiveArray<u8>,
    pub category: DictionaryArray<u32>,
    pub name: DictionaryArray<u32>,
    pub pid: DictionaryArray<u32>,
    pub tid: DictionaryArray<u32>,
    pub ts_ns: PrimitiveArray<i64>,
    pub dur_ns: PrimitiveArray<i64>,
    pub external_id: PrimitiveArray<i64>,
    pub correlation: PrimitiveArray<i64>,
    pub stream: IntColumn,
    /// Rows (ascending) whose `stream` was read from `tid` because `args.stream` was absent or not an
    /// integer; HTA sees no stream (-1) there.
    pub stream_from_tid: Vec<u32>,
    /// Rows (ascending) whose `ts` or `dur` text has digits past the ns (`11.689600000000002`):
    /// (row, ts, dur) in µs as a JSON parser reads them, NaN where the ns column is exact. Only
    /// HTA-compat rounding needs them.
    pub sub_ns: Vec<(u32, f64, f64)>,
    /// pandas would read the `ts` column as float64 (some `ts` is written with a fraction or
    /// missing, none is a string): then, and only then, HTA rounds every row to whole µs.
    pub ts_float: bool,
    pub device: IntColumn,
    pub flow_id: PrimitiveArray<i64>,
    /// Sparse args columns, sorted by key.
    pub args: Vec<ArgColumn>,
    pub metadata: TraceMetadata,
    pub diagnostics: Diagnostics,
}

fn dict_strings(d: &DictionaryArray<u32>) -> &Utf8Array<i32> {
    d.values()
        .as_any()
        .downcast_ref::<Utf8Array<i32>>()
        .expect("utf8 dictionary")
}

impl TraceTable {
    /// Number of rows (= entries of `traceEvents`).
    pub fn len(&self) -> usize {
        self.kind.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub fn kind_at(&self, row: usize) -> EventKind {
        EventKind::from_u8(self.kind.value(row))
    }

    /// `ph` of a row as a char (`'\0'` when absent).
    #[inline]
    pub fn phase_at(&self, row: usize) -> char {
        self.phase.value(row) as char
    }

    #[inline]
    pub fn ts_at(&self, row: usize) -> Option<i64> {
        self.ts_ns.get(row)
    }

    /// The duration for time figures: `None` when absent or negative (a negative `dur` is kept in
    /// the column as written and counted as a diagnostic; see [`TraceTable::raw_dur_at`]).
    #[inline]
    pub fn dur_at(&self, row: usize) -> Option<i64> {
        self.dur_ns.get(row).filter(|&d| d >= 0)
    }

    /// The duration as written, negative or not: for the HTA-compatible definitions, which take
    /// the trace's values as HTA does (and for code that clamps them itself).
    #[inline]
    pub fn raw_dur_at(&self, row: usize) -> Option<i64> {
        self.dur_ns.get(row)
    }

    /// End (`ts + dur`), ns, for rows with both.
    #[inline]
    pub fn end_at(&self, row: usize) -> Option<i64> {
        Some(self.ts_at(row)? + self.dur_at(row)?)
    }

    #[inline]
    pub fn name_id(&self, row: usize) -> u32 {
        self.name.keys().value(row)
    }

    /// Distinct names (the dictionary); `name_id` indexes it.
    pub fn name_dictionary(&self) -> &Utf8Array<i32> {
        dict_strings(&self.name)
    }

    #[inline]
    pub fn name_of_id(&self, id: u32) -> &str {
        dict_strings(&self.name).value(id as usize)
    }

    #[inline]
    pub fn name_at(&self, row: usize) -> &str {
        self.name_of_id(self.name_id(row))
    }

    pub fn category_at(&self, row: usize) -> Option<&str> {
        if !self.category.is_valid(row) {
            return None;
        }
        Some(dict_strings(&self.category).value(self.category.keys().value(row) as usize))
    }

    /// Dictionary id of a row's category (`None` when the event has no `cat`).
    #[inline]
    pub fn category_id_at(&self, row: usize) -> Option<u32> {
        if self.category.is_valid(row) {
            Some(self.category.keys().value(row))
        } else {
            None
        }
    }

    pub fn category_dictionary(&self) -> &Utf8Array<i32> {
        dict_strings(&self.category)
    }

    /// The row's process id as its index in the table's distinct pids (one number per pid).
    pub fn pid_id(&self, row: usize) -> u32 {
        self.pid.keys().value(row)
    }

    /// The row's thread id as its index in the table's distinct tids.
    pub fn tid_id(&self, row: usize) -> u32 {
        self.tid.keys().value(row)
    }

    pub fn pid_at(&self, row: usize) -> &str {
        dict_strings(&self.pid).value(self.pid.keys().value(row) as usize)
    }

    pub fn tid_at(&self, row: usize) -> &str {
        dict_strings(&self.tid).value(self.tid.keys().value(row) as usize)
    }

    #[inline]
    pub fn external_id_at(&self, row: usize) -> Option<i64> {
        self.external_id.get(row)
    }

    #[inline]
    pub fn correlation_at(&self, row: usize) -> Option<i64> {
        self.correlation.get(row)
    }

    #[inline]
    pub fn stream_at(&self, row: usize) -> Option<i64> {
        self.stream.get(row)
    }

    /// `ts` and `dur` of a row in µs as a JSON parser (HTA's) reads them, when its text has digits past
    /// the ns; `None` when the ns columns hold the text exactly.
    pub fn sub_ns_at(&self, row: usize) -> Option<(Option<f64>, Option<f64>)> {
        if self.sub_ns.is_empty() {
            return None;
        }
        let i = self
            .sub_ns
            .binary_search_by_key(&(row as u32), |x| x.0)
            .ok()?;
        let (_, ts, dur) = self.sub_ns[i];
        Some(((!ts.is_nan()).then_some(ts), (!dur.is_nan()).then_some(dur)))
    }

    /// The stream as `args.stream` gives it (`None` when it was read from `tid`), as HTA sees it.
    #[inline]
    pub fn args_stream_at(&self, row: usize) -> Option<i64> {
        let s = self.stream.get(row)?;
        if !self.stream_from_tid.is_empty()
            && self.stream_from_tid.binary_search(&(row as u32)).is_ok()
        {
            return None;
        }
        Some(s)
    }

    #[inline]
    pub fn device_at(&self, row: usize) -> Option<i64> {
        self.device.get(row)
    }

    #[inline]
    pub fn flow_id_at(&self, row: usize) -> Option<i64> {
        self.flow_id.get(row)
    }

    /// The sparse column of an args key (exact key as written, e.g. `"bytes"`, `"Input Dims"`).
    pub fn arg(&self, key: &str) -> Option<&ArgColumn> {
        self.args
            .binary_search_by(|c| c.key.as_str().cmp(key))
            .ok()
            .map(|i| &self.args[i])
    }

    /// Rows of one kind, in file order.
    pub fn rows_of_kind(&self, kind: EventKind) -> impl Iterator<Item = usize> + '_ {
        let k = kind as u8;
        self.kind
            .values()
            .iter()
            .enumerate()
            .filter(move |(_, &v)| v == k)
            .map(|(i, _)| i)
    }

    /// Rows whose original category is exactly `cat`.
    pub fn rows_of_category<'a>(&'a self, cat: &str) -> impl Iterator<Item = usize> + 'a {
        let id = self
            .category_dictionary()
            .iter()
            .position(|v| v == Some(cat))
            .map(|i| i as u32);
        let keys = self.category.keys();
        (0..self.len())
            .filter(move |&r| id.is_some() && keys.is_valid(r) && Some(keys.value(r)) == id)
    }

    /// Approximate memory held by the columns, bytes (values, keys and dictionaries).
    pub fn memory_bytes(&self) -> usize {
        fn dict(d: &DictionaryArray<u32>) -> usize {
            let s = dict_strings(d);
            d.len() * 4 + s.values().len() + s.offsets().len() * 4
        }
        let n = self.len();
        let mut total = n * 2
            + n * 8 * 5
            + n * (self.stream.width() + self.device.width())
            + dict(&self.category)
            + dict(&self.name)
            + dict(&self.pid)
            + dict(&self.tid);
        for c in &self.args {
            total += c.rows.len() * 4;
            total += match &c.values {
                ArgValues::Int(a) => a.len() * 8,
                ArgValues::Float(a) => a.len() * 8,
                ArgValues::Bool(a) => a.len() / 8 + 1,
                ArgValues::Text(a) => dict(a),
            };
        }
        total
    }
}
