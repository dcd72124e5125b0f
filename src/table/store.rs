//! A versioned, exact round trip of one [`TraceTable`]: bytes the page and the CLI's `--cache` keep instead of the trace's JSON.
//!
//! # The container
//! `PMTS` (4 bytes), the format [`STORE_FORMAT`] (u32 LE), the header's length (u64 LE) and the header
//! (JSON: format, part encoding, file name, row count, [`TraceMetadata`], diagnostics, the small `Vec`
//! fields, each args column's key/type/mixed flag/length, and each part's length and checksum), then
//! the parts, each a u64 LE length and its bytes: first the event columns (13 columns, one row per
//! event), then one part per args column (`rows`, `values`). A part is the columns in a plain binary
//! layout (`store_plain.rs`, [`table_to_plain`], every target: what the page keeps, so that its worker
//! has no Arrow IPC reader or writer), an Arrow IPC file ([`table_to_ipc`], native only) or a Parquet
//! file, snappy ([`table_to_parquet`], native only: the CLI's cache).
//!
//! Every length is checked against the buffer before it is used (nothing is allocated from a length
//! field) and each part's checksum (FNV-1a over 64-bit words) before arrow2 reads it, so a truncated,
//! cut or bit-flipped buffer is a [`StoreError`], never a panic. The reader then checks what the table's
//! accessors rely on: column types and lengths, dictionary keys in range, args rows ascending.
//!
//! A `TraceTable` holds only arrow arrays and plain data (no interner or cache), so nothing is rebuilt
//! on read: every array comes back with the same values, keys and dictionaries. (A validity bitmap
//! with no null may come back as none: the same array for arrow2's equality and every accessor.)

use arrow2::array::{Array, BooleanArray, DictionaryArray, PrimitiveArray, Utf8Array};
use arrow2::chunk::Chunk;
use arrow2::datatypes::{DataType, Field, Schema};
use serde::{Deserialize, Serialize};

use super::{ArgColumn, ArgValues, IntColumn, TraceMetadata, TraceTable};
use crate::trace::diagnostics::DiagnosticKind;
use crate::trace::Diagnostics;

/// The version of the stored layout; a buffer of another version is [`StoreError::Older`] or
/// [`StoreError::Newer`].
/// (2: the page's parts are plain columns, no longer Arrow IPC files.)
pub const STORE_FORMAT: u32 = 2;

const MAGIC: &[u8; 4] = b"PMTS";

/// Why stored bytes could not be written or read back.
#[derive(Debug, Clone, PartialEq)]
pub enum StoreError {
    /// Not a stored table, cut short, or damaged: `what` says where and what was expected.
    Corrupt { what: String },
    /// Written by an older build (format `found`); rebuild it from the trace.
    Older { found: u32 },
    /// Written by a newer build (format `found`).
    Newer { found: u32 },
    /// Reading or writing the bytes failed.
    Io(String),
    /// arrow2 could not encode the table.
    Encode(String),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::Corrupt { what } => write!(f, "not a readable stored trace table: {what}"),
            StoreError::Older { found } => write!(
                f,
                "stored trace table has format {found}, older than this build's format {STORE_FORMAT}: rebuild it from the trace"
            ),
            StoreError::Newer { found } => write!(
                f,
                "stored trace table has format {found}, newer than this build's format {STORE_FORMAT}: read it with a newer profile-model"
            ),
            StoreError::Io(e) => write!(f, "{e}"),
            StoreError::Encode(e) => write!(f, "could not encode the trace table: {e}"),
        }
    }
}

impl std::error::Error for StoreError {}

fn corrupt(what: impl Into<String>) -> StoreError {
    StoreError::Corrupt { what: what.into() }
}

/// How the parts (the column chunks) are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum PartEncoding {
    Ipc,
    Parquet,
    Plain,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ArgType {
    Int,
    Float,
    Bool,
    Text,
}

#[derive(Debug, Serialize, Deserialize)]
struct ArgHeader {
    key: String,
    ty: ArgType,
    mixed_types: bool,
    len: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct PartHeader {
    bytes: u64,
    /// [`checksum`] of the part's bytes, 16 hex digits.
    check: String,
}

/// Everything of a table that is not an event or args column.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    format: u32,
    encoding: PartEncoding,
    file: String,
    rows: u64,
    metadata: TraceMetadata,
    /// (kind, count, first example).
    diagnostics: Vec<(DiagnosticKind, u64, String)>,
    stream_from_tid: Vec<u32>,
    /// (row, ts bits, dur bits): the f64s by their bits, as JSON has no NaN.
    sub_ns: Vec<(u32, u64, u64)>,
    ts_float: bool,
    args: Vec<ArgHeader>,
    parts: Vec<PartHeader>,
}

/// Names of the event part's columns, in order.
const EVENT_COLUMNS: [&str; 13] = [
    "kind",
    "phase",
    "category",
    "name",
    "pid",
    "tid",
    "ts_ns",
    "dur_ns",
    "external_id",
    "correlation",
    "stream",
    "device",
    "flow_id",
];

type Part = (Schema, Chunk<Box<dyn Array>>);

fn int_column(c: &IntColumn) -> Box<dyn Array> {
    match c {
        IntColumn::Int32(a) => a.clone().boxed(),
        IntColumn::Int64(a) => a.clone().boxed(),
    }
}

fn part(names: &[&str], arrays: Vec<Box<dyn Array>>) -> Result<Part, StoreError> {
    let fields = names
        .iter()
        .zip(&arrays)
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect::<Vec<_>>();
    let chunk = Chunk::try_new(arrays).map_err(|e| StoreError::Encode(e.to_string()))?;
    Ok((Schema::from(fields), chunk))
}

/// A table as its header (parts not yet filled in) and its column chunks: the events, then one per
/// args column.
fn split(t: &TraceTable, encoding: PartEncoding) -> Result<(Header, Vec<Part>), StoreError> {
    let events = vec![
        t.kind.clone().boxed(),
        t.phase.clone().boxed(),
        t.category.clone().boxed(),
        t.name.clone().boxed(),
        t.pid.clone().boxed(),
        t.tid.clone().boxed(),
        t.ts_ns.clone().boxed(),
        t.dur_ns.clone().boxed(),
        t.external_id.clone().boxed(),
        t.correlation.clone().boxed(),
        int_column(&t.stream),
        int_column(&t.device),
        t.flow_id.clone().boxed(),
    ];
    let mut parts = vec![part(&EVENT_COLUMNS, events)?];
    let mut args = Vec::with_capacity(t.args.len());
    for c in &t.args {
        let (ty, values): (ArgType, Box<dyn Array>) = match &c.values {
            ArgValues::Int(a) => (ArgType::Int, a.clone().boxed()),
            ArgValues::Float(a) => (ArgType::Float, a.clone().boxed()),
            ArgValues::Bool(a) => (ArgType::Bool, a.clone().boxed()),
            ArgValues::Text(a) => (ArgType::Text, a.clone().boxed()),
        };
        args.push(ArgHeader {
            key: c.key.clone(),
            ty,
            mixed_types: c.mixed_types,
            len: c.rows.len() as u64,
        });
        parts.push(part(
            &["rows", "values"],
            vec![c.rows.clone().boxed(), values],
        )?);
    }
    let header = Header {
        format: STORE_FORMAT,
        encoding,
        file: t.file.clone(),
        rows: t.len() as u64,
        metadata: t.metadata.clone(),
        diagnostics: t
            .diagnostics
            .list()
            .into_iter()
            .map(|d| (d.kind, d.count, d.example))
            .collect(),
        stream_from_tid: t.stream_from_tid.clone(),
        sub_ns: t
            .sub_ns
            .iter()
            .map(|&(r, ts, dur)| (r, ts.to_bits(), dur.to_bits()))
            .collect(),
        ts_float: t.ts_float,
        args,
        parts: Vec::new(),
    };
    Ok((header, parts))
}

fn downcast<'a, T: 'static>(a: &'a dyn Array, what: &str) -> Result<&'a T, StoreError> {
    a.as_any().downcast_ref::<T>().ok_or_else(|| {
        corrupt(format!(
            "column {what}: expected {}, found {:?}",
            std::any::type_name::<T>(),
            a.data_type()
        ))
    })
}

fn primitive<T: arrow2::types::NativeType>(
    a: &dyn Array,
    what: &str,
    len: usize,
) -> Result<PrimitiveArray<T>, StoreError> {
    let p = downcast::<PrimitiveArray<T>>(a, what)?;
    check_len(a, what, len)?;
    Ok(p.clone())
}

fn check_len(a: &dyn Array, what: &str, len: usize) -> Result<(), StoreError> {
    if a.len() != len {
        return Err(corrupt(format!(
            "column {what}: expected {len} rows, found {}",
            a.len()
        )));
    }
    Ok(())
}

/// A dictionary column of UInt32 keys into Utf8 values, every key (null or not) in range of the
/// values when there are values (the table reads keys without looking at validity), every key null
/// when there are none.
fn dictionary(a: &dyn Array, what: &str, len: usize) -> Result<DictionaryArray<u32>, StoreError> {
    let d = downcast::<DictionaryArray<u32>>(a, what)?;
    check_len(a, what, len)?;
    let values = downcast::<Utf8Array<i32>>(d.values().as_ref(), what)?;
    let n = values.len();
    let keys = d.keys();
    let bad = if n == 0 {
        keys.null_count() != keys.len()
    } else {
        keys.values().iter().any(|&k| k as usize >= n)
    };
    if bad {
        return Err(corrupt(format!(
            "column {what}: a dictionary key past its {n} values"
        )));
    }
    Ok(d.clone())
}

fn int_col(a: &dyn Array, what: &str, len: usize) -> Result<IntColumn, StoreError> {
    match a.data_type() {
        DataType::Int32 => Ok(IntColumn::Int32(primitive(a, what, len)?)),
        DataType::Int64 => Ok(IntColumn::Int64(primitive(a, what, len)?)),
        other => Err(corrupt(format!(
            "column {what}: expected Int32 or Int64, found {other:?}"
        ))),
    }
}

fn ascending(rows: &[u32], below: u64, what: &str) -> Result<(), StoreError> {
    let sorted = rows.windows(2).all(|w| w[0] < w[1]);
    if !sorted || rows.last().is_some_and(|&r| r as u64 >= below) {
        return Err(corrupt(format!("{what}: rows not ascending below {below}")));
    }
    Ok(())
}

/// The table back from its header and chunks (checked as the module documentation says).
fn assemble(h: Header, chunks: Vec<Chunk<Box<dyn Array>>>) -> Result<TraceTable, StoreError> {
    let n = usize::try_from(h.rows).map_err(|_| corrupt("row count past this machine's usize"))?;
    let mut chunks = chunks.into_iter();
    let events = chunks.next().ok_or_else(|| corrupt("no event part"))?;
    let c = events.arrays();
    if c.len() != EVENT_COLUMNS.len() {
        return Err(corrupt(format!(
            "event part: expected {} columns, found {}",
            EVENT_COLUMNS.len(),
            c.len()
        )));
    }
    let col = |i: usize| c[i].as_ref();
    let name = |i: usize| EVENT_COLUMNS[i];
    let mut args = Vec::with_capacity(h.args.len());
    for (a, chunk) in h.args.into_iter().zip(chunks.by_ref()) {
        let what = format!("args_{}", a.key);
        let [rows, values] = chunk.arrays() else {
            return Err(corrupt(format!(
                "{what}: expected 2 columns, found {}",
                chunk.arrays().len()
            )));
        };
        let len = usize::try_from(a.len).map_err(|_| corrupt(format!("{what}: length")))?;
        let rows = primitive::<u32>(rows.as_ref(), &what, len)?;
        if rows.null_count() > 0 {
            return Err(corrupt(format!("{what}: a null row number")));
        }
        ascending(rows.values(), h.rows, &what)?;
        let values = values.as_ref();
        let values = match a.ty {
            ArgType::Int => ArgValues::Int(primitive(values, &what, len)?),
            ArgType::Float => ArgValues::Float(primitive(values, &what, len)?),
            ArgType::Bool => {
                check_len(values, &what, len)?;
                ArgValues::Bool(downcast::<BooleanArray>(values, &what)?.clone())
            }
            ArgType::Text => ArgValues::Text(dictionary(values, &what, len)?),
        };
        args.push(ArgColumn {
            key: a.key,
            rows,
            values,
            mixed_types: a.mixed_types,
        });
    }
    if chunks.next().is_some() {
        return Err(corrupt("more parts than the header lists"));
    }
    if !args.windows(2).all(|w| w[0].key < w[1].key) {
        return Err(corrupt("args columns not sorted by key"));
    }
    ascending(&h.stream_from_tid, h.rows, "stream_from_tid")?;
    let sub_rows: Vec<u32> = h.sub_ns.iter().map(|s| s.0).collect();
    ascending(&sub_rows, h.rows, "sub_ns")?;
    let mut diagnostics = Diagnostics::default();
    for (kind, count, example) in h.diagnostics {
        diagnostics.add_n(kind, count, || example);
    }
    Ok(TraceTable {
        file: h.file,
        kind: primitive(col(0), name(0), n)?,
        phase: primitive(col(1), name(1), n)?,
        category: dictionary(col(2), name(2), n)?,
        name: dictionary(col(3), name(3), n)?,
        pid: dictionary(col(4), name(4), n)?,
        tid: dictionary(col(5), name(5), n)?,
        ts_ns: primitive(col(6), name(6), n)?,
        dur_ns: primitive(col(7), name(7), n)?,
        external_id: primitive(col(8), name(8), n)?,
        correlation: primitive(col(9), name(9), n)?,
        stream: int_col(col(10), name(10), n)?,
        stream_from_tid: h.stream_from_tid,
        sub_ns: h
            .sub_ns
            .into_iter()
            .map(|(r, ts, dur)| (r, f64::from_bits(ts), f64::from_bits(dur)))
            .collect(),
        ts_float: h.ts_float,
        device: int_col(col(11), name(11), n)?,
        flow_id: primitive(col(12), name(12), n)?,
        args,
        metadata: h.metadata,
        diagnostics,
    })
}

/// FNV-1a over the bytes taken 8 at a time (little-endian words, the tail zero-padded), with the
/// length mixed in last: 8 times fewer steps than byte-wise FNV, enough to tell a damaged part.
fn checksum(bytes: &[u8]) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut words = bytes.chunks_exact(8);
    for w in words.by_ref() {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        h = (h ^ u64::from_le_bytes(b)).wrapping_mul(PRIME);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut b = [0u8; 8];
        b[..rest.len()].copy_from_slice(rest);
        h = (h ^ u64::from_le_bytes(b)).wrapping_mul(PRIME);
    }
    (h ^ bytes.len() as u64).wrapping_mul(PRIME)
}

fn encode(t: &TraceTable, encoding: PartEncoding) -> Result<Vec<u8>, StoreError> {
    let (mut header, parts) = split(t, encoding)?;
    let mut bodies = Vec::with_capacity(parts.len());
    for (schema, chunk) in parts {
        let body = match encoding {
            PartEncoding::Plain => plain::write(&chunk)?,
            #[cfg(not(target_arch = "wasm32"))]
            PartEncoding::Ipc => ipc::write(schema, chunk)?,
            #[cfg(not(target_arch = "wasm32"))]
            PartEncoding::Parquet => parquet::write(schema, chunk)?,
            #[cfg(target_arch = "wasm32")]
            PartEncoding::Ipc | PartEncoding::Parquet => {
                let _ = schema;
                return Err(StoreError::Encode(format!(
                    "{encoding:?} parts are not built into the page"
                )));
            }
        };
        header.parts.push(PartHeader {
            bytes: body.len() as u64,
            check: format!("{:016x}", checksum(&body)),
        });
        bodies.push(body);
    }
    let json = serde_json::to_vec(&header).map_err(|e| StoreError::Encode(e.to_string()))?;
    let total = 16 + json.len() + bodies.iter().map(|b| 8 + b.len()).sum::<usize>();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&STORE_FORMAT.to_le_bytes());
    out.extend_from_slice(&(json.len() as u64).to_le_bytes());
    out.extend_from_slice(&json);
    for b in &bodies {
        out.extend_from_slice(&(b.len() as u64).to_le_bytes());
        out.extend_from_slice(b);
    }
    Ok(out)
}

/// A cursor over the input that checks every length before taking it.
struct Input<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Input<'a> {
    fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8], StoreError> {
        let left = self.bytes.len() - self.at;
        if n > left as u64 {
            return Err(corrupt(format!(
                "{what} at byte {}: expected {n} bytes, found {left}",
                self.at
            )));
        }
        let s = &self.bytes[self.at..self.at + n as usize];
        self.at += n as usize;
        Ok(s)
    }

    fn u64(&mut self, what: &str) -> Result<u64, StoreError> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(b))
    }
}

fn decode(bytes: &[u8], expected: PartEncoding) -> Result<TraceTable, StoreError> {
    let mut input = Input { bytes, at: 0 };
    let magic = input.take(4, "the magic bytes")?;
    if magic != MAGIC {
        return Err(corrupt(format!(
            "expected the magic bytes \"PMTS\", found {magic:?}"
        )));
    }
    let mut f = [0u8; 4];
    f.copy_from_slice(input.take(4, "the format number")?);
    let found = u32::from_le_bytes(f);
    if found < STORE_FORMAT {
        return Err(StoreError::Older { found });
    }
    if found > STORE_FORMAT {
        return Err(StoreError::Newer { found });
    }
    let len = input.u64("the header length")?;
    let json = input.take(len, "the header")?;
    let header: Header =
        serde_json::from_slice(json).map_err(|e| corrupt(format!("the header: {e}")))?;
    if header.format != found {
        return Err(corrupt(format!(
            "the header says format {}, the container {found}",
            header.format
        )));
    }
    if header.encoding != expected {
        return Err(corrupt(format!(
            "expected {expected:?} parts, found {:?}",
            header.encoding
        )));
    }
    if header.parts.len() != 1 + header.args.len() {
        return Err(corrupt(format!(
            "the header lists {} parts for {} args columns",
            header.parts.len(),
            header.args.len()
        )));
    }
    let mut chunks = Vec::with_capacity(header.parts.len());
    for (i, p) in header.parts.iter().enumerate() {
        let what = format!("part {i}");
        let len = input.u64(&what)?;
        if len != p.bytes {
            return Err(corrupt(format!(
                "{what}: the header says {} bytes, the container {len}",
                p.bytes
            )));
        }
        let body = input.take(len, &what)?;
        let check = format!("{:016x}", checksum(body));
        if check != p.check {
            return Err(corrupt(format!(
                "{what}: checksum {check}, expected {} (damaged)",
                p.check
            )));
        }
        let chunk = match expected {
            PartEncoding::Plain => plain::read(body, &what)?,
            #[cfg(not(target_arch = "wasm32"))]
            PartEncoding::Ipc => ipc::read(body, &what)?,
            #[cfg(not(target_arch = "wasm32"))]
            PartEncoding::Parquet => parquet::read(body, &what)?,
            #[cfg(target_arch = "wasm32")]
            PartEncoding::Ipc | PartEncoding::Parquet => {
                return Err(corrupt(format!(
                    "{expected:?} parts are not built into the page"
                )))
            }
        };
        chunks.push(chunk);
    }
    if input.at != bytes.len() {
        return Err(corrupt(format!(
            "{} bytes after the last part",
            bytes.len() - input.at
        )));
    }
    assemble(header, chunks)
}

/// The table as a stored buffer whose parts are plain columns (every target; what the page keeps).
pub fn table_to_plain(t: &TraceTable) -> Result<Vec<u8>, StoreError> {
    encode(t, PartEncoding::Plain)
}

/// The table back from [`table_to_plain`]'s bytes.
pub fn table_from_plain(bytes: &[u8]) -> Result<TraceTable, StoreError> {
    decode(bytes, PartEncoding::Plain)
}

/// The table as a stored buffer whose parts are Arrow IPC files (native only).
#[cfg(not(target_arch = "wasm32"))]
pub fn table_to_ipc(t: &TraceTable) -> Result<Vec<u8>, StoreError> {
    encode(t, PartEncoding::Ipc)
}

/// The table back from [`table_to_ipc`]'s bytes.
#[cfg(not(target_arch = "wasm32"))]
pub fn table_from_ipc(bytes: &[u8]) -> Result<TraceTable, StoreError> {
    decode(bytes, PartEncoding::Ipc)
}

/// The table as a stored buffer whose parts are Parquet files (snappy; native only: the CLI's cache).
#[cfg(not(target_arch = "wasm32"))]
pub fn table_to_parquet(t: &TraceTable) -> Result<Vec<u8>, StoreError> {
    encode(t, PartEncoding::Parquet)
}

/// The table back from [`table_to_parquet`]'s bytes.
#[cfg(not(target_arch = "wasm32"))]
pub fn table_from_parquet(bytes: &[u8]) -> Result<TraceTable, StoreError> {
    decode(bytes, PartEncoding::Parquet)
}

#[path = "store_plain.rs"]
mod plain;

#[cfg(not(target_arch = "wasm32"))]
mod ipc {
    use super::{corrupt, StoreError};
    use arrow2::array::Array;
    use arrow2::chunk::Chunk;
    use arrow2::datatypes::Schema;
    use arrow2::io::ipc::read::{read_file_metadata, FileReader};
    use arrow2::io::ipc::write::{FileWriter, WriteOptions};

    pub(super) fn write(
        schema: Schema,
        chunk: Chunk<Box<dyn Array>>,
    ) -> Result<Vec<u8>, StoreError> {
        let enc = |e: arrow2::error::Error| StoreError::Encode(e.to_string());
        let mut out = Vec::new();
        let mut w = FileWriter::try_new(&mut out, schema, None, WriteOptions { compression: None })
            .map_err(enc)?;
        w.write(&chunk, None).map_err(enc)?;
        w.finish().map_err(enc)?;
        Ok(out)
    }

    pub(super) fn read(body: &[u8], what: &str) -> Result<Chunk<Box<dyn Array>>, StoreError> {
        let bad = |e: arrow2::error::Error| corrupt(format!("{what}: {e}"));
        let mut cursor = std::io::Cursor::new(body);
        let meta = read_file_metadata(&mut cursor).map_err(bad)?;
        let mut reader = FileReader::new(cursor, meta, None, None);
        let chunk = reader
            .next()
            .ok_or_else(|| corrupt(format!("{what}: no record batch")))?
            .map_err(bad)?;
        if reader.next().is_some() {
            return Err(corrupt(format!("{what}: more than one record batch")));
        }
        Ok(chunk)
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod parquet {
    use super::{corrupt, StoreError};
    use arrow2::array::{new_empty_array, Array};
    use arrow2::chunk::Chunk;
    use arrow2::datatypes::{DataType, Schema};
    use arrow2::io::parquet::read::{infer_schema, read_metadata, FileReader};
    use arrow2::io::parquet::write::{
        transverse, CompressionOptions, Encoding, FileWriter, RowGroupIterator, Version,
        WriteOptions,
    };

    pub(super) fn write(
        schema: Schema,
        chunk: Chunk<Box<dyn Array>>,
    ) -> Result<Vec<u8>, StoreError> {
        let enc = |e: arrow2::error::Error| StoreError::Encode(e.to_string());
        let options = WriteOptions {
            write_statistics: false,
            compression: CompressionOptions::Snappy,
            version: Version::V2,
            data_pagesize_limit: None,
        };
        let encodings = schema
            .fields
            .iter()
            .map(|f| {
                transverse(&f.data_type, |t| match t {
                    DataType::Dictionary(..) => Encoding::RleDictionary,
                    _ => Encoding::Plain,
                })
            })
            .collect();
        let groups =
            RowGroupIterator::try_new(std::iter::once(Ok(chunk)), &schema, options, encodings)
                .map_err(enc)?;
        let mut out = Vec::new();
        let mut w = FileWriter::try_new(&mut out, schema, options).map_err(enc)?;
        for group in groups {
            w.write(group.map_err(enc)?).map_err(enc)?;
        }
        w.end(None).map_err(enc)?;
        Ok(out)
    }

    pub(super) fn read(body: &[u8], what: &str) -> Result<Chunk<Box<dyn Array>>, StoreError> {
        let bad = |e: arrow2::error::Error| corrupt(format!("{what}: {e}"));
        let mut cursor = std::io::Cursor::new(body);
        let meta = read_metadata(&mut cursor).map_err(bad)?;
        let schema = infer_schema(&meta).map_err(bad)?;
        let empty: Vec<Box<dyn Array>> = schema
            .fields
            .iter()
            .map(|f| new_empty_array(f.data_type.clone()))
            .collect();
        let mut reader = FileReader::new(
            cursor,
            meta.row_groups,
            schema,
            Some(usize::MAX),
            None,
            None,
        );
        let mut chunk = None;
        for c in reader.by_ref() {
            let c = c.map_err(bad)?;
            if c.is_empty() {
                continue;
            }
            if chunk.is_some() {
                return Err(corrupt(format!("{what}: more than one row group")));
            }
            chunk = Some(c);
        }
        match chunk {
            Some(c) => Ok(c),
            None => Chunk::try_new(empty).map_err(bad),
        }
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
