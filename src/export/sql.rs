//! The tables the page's SQL tab queries, as Arrow IPC streams (what DuckDB's `insertArrowFromIPCStream`
//! reads): `events` in the export's schema with a `rank` column always (so that every row can be put on
//! the timeline, one rank or many) and a `kind` column after it (the table's [`EventKind`], whatever
//! the Kineto dialect called the category: the views `kernels`, `ops`... select on it), and `idle`,
//! the GPU's idle intervals with their cause.
//!
//! [`EventKind`]: crate::table::EventKind
//!
//! Column names are made unique without regard to case (SQL names are case-insensitive, args keys are
//! not: `args_External id` and `args_external id` may both exist); a later one gets `_2`, `_3`...

use arrow2::array::Array;
use arrow2::chunk::Chunk;
use arrow2::io::ipc::write::{StreamWriter, WriteOptions};

use super::columns::rank_chunk;
use super::plain::PlainValues;
use super::schema::{ColumnType, ExportColumn, ExportSchema, Source};
use super::writers::WriteFailure;
use super::Encoding;
use crate::table::TraceSet;

fn column(name: &str, source: Source, ty: ColumnType) -> ExportColumn {
    ExportColumn {
        name: name.into(),
        source,
        ty,
        mixed: false,
    }
}

/// The args columns `events` always has (null where the trace has no such arg): the page's example queries
/// join kernels to their ops by `args_External id` and bucket copies by `args_bytes`, on any trace.
pub const ALWAYS_ARGS: [&str; 2] = ["External id", "bytes"];

/// The `events` schema of `set`: the export's columns, `rank` added after `id` when the export
/// leaves it out (one rank), then `kind`, and the [`ALWAYS_ARGS`] the trace lacks; names unique whatever
/// their case.
pub fn events_schema(set: &TraceSet) -> ExportSchema {
    let mut schema = ExportSchema::of(set);
    let after_id = schema
        .columns
        .iter()
        .position(|c| c.source == Source::Id)
        .map_or(schema.columns.len(), |i| i + 1);
    let mut at = after_id;
    if !schema.columns.iter().any(|c| c.source == Source::Rank) {
        schema
            .columns
            .insert(at, column("rank", Source::Rank, ColumnType::Int64));
    }
    at += 1;
    schema
        .columns
        .insert(at, column("kind", Source::Kind, ColumnType::Utf8));
    for key in ALWAYS_ARGS {
        if !schema
            .columns
            .iter()
            .any(|c| c.source == Source::Arg(key.into()))
        {
            let name = format!("args_{key}");
            schema
                .columns
                .push(column(&name, Source::Arg(key.into()), ColumnType::Int64));
        }
    }
    let mut seen: Vec<String> = Vec::new();
    for c in &mut schema.columns {
        let base = c.name.to_lowercase();
        let mut n = 1;
        let mut lower = base.clone();
        while seen.contains(&lower) {
            n += 1;
            lower = format!("{base}_{n}");
        }
        if n > 1 {
            c.name = format!("{}_{n}", c.name);
        }
        seen.push(lower);
    }
    schema
}

/// An Arrow IPC stream of `chunks` in `schema` (what DuckDB's `insertArrowFromIPCStream` reads).
pub(super) fn write_stream(
    schema: &ExportSchema,
    chunks: impl Iterator<Item = Result<Chunk<Box<dyn Array>>, WriteFailure>>,
    out: &mut Vec<u8>,
) -> Result<(), WriteFailure> {
    let mut writer = StreamWriter::new(out, WriteOptions { compression: None });
    writer.start(&schema.arrow_schema(), None)?;
    for chunk in chunks {
        writer.write(&chunk?, None)?;
    }
    writer.finish()?;
    Ok(())
}

fn failure_text(e: WriteFailure) -> String {
    match e {
        WriteFailure::Encode(e) => e,
        WriteFailure::Io(e) => e.to_string(),
    }
}

/// Every rank's events as one Arrow IPC stream (a record batch per rank with rows), and the row
/// count; the args as strings when their types do not encode (the export's fallback).
pub fn events_stream(set: &TraceSet) -> Result<(Vec<u8>, u64), String> {
    let schema = events_schema(set);
    let write = |schema: &ExportSchema| -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let chunks = set
            .ranks
            .iter()
            .filter(|r| !r.table.is_empty())
            .map(|r| rank_chunk(schema, r).map_err(WriteFailure::Encode));
        write_stream(schema, chunks, &mut out).map_err(failure_text)?;
        Ok(out)
    };
    let bytes = write(&schema).or_else(|typed| {
        write(&schema.with_args_as_text()).map_err(|text| format!("{typed}; as text: {text}"))
    })?;
    let rows = set.ranks.iter().map(|r| r.table.len() as u64).sum();
    Ok((bytes, rows))
}

/// One idle interval of a rank's GPU and its cause (the diagnosis's attribution).
#[derive(Clone, Debug, PartialEq)]
pub struct IdleRow {
    pub rank: i64,
    pub start_ns: i64,
    pub end_ns: i64,
    /// The cause's stable name (`IdleCause::as_str`).
    pub cause: &'static str,
}

/// The `idle` table's columns and values: `rank` Int64, `ts` and `dur` Float64 µs (the events'
/// unit), `cause` Utf8 (what the page's worker sends its exporter).
pub fn idle_table(rows: &[IdleRow]) -> (ExportSchema, Vec<PlainValues>) {
    let schema = ExportSchema {
        columns: vec![
            column("rank", Source::Rank, ColumnType::Int64),
            column("ts", Source::Ts, ColumnType::Float64),
            column("dur", Source::Dur, ColumnType::Float64),
            column("cause", Source::Kind, ColumnType::Utf8),
        ],
        names: None,
    };
    let us = |ns: i64| Some(ns as f64 / 1000.0);
    let values = vec![
        PlainValues::Int(rows.iter().map(|r| Some(r.rank)).collect()),
        PlainValues::Float(rows.iter().map(|r| us(r.start_ns)).collect()),
        PlainValues::Float(rows.iter().map(|r| us(r.end_ns - r.start_ns)).collect()),
        PlainValues::Text(rows.iter().map(|r| Some(r.cause.to_string())).collect()),
    ];
    (schema, values)
}

/// The `idle` table as an Arrow IPC stream ([`idle_table`]: one batch, none when there are no rows).
pub fn idle_stream(rows: &[IdleRow]) -> Result<Vec<u8>, String> {
    let (schema, values) = idle_table(rows);
    let batches: Vec<_> = (!rows.is_empty()).then_some(values).into_iter().collect();
    super::encode_plain(&schema, Encoding::Stream, &batches)
}
