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

use arrow2::array::{Array, PrimitiveArray, Utf8Array};
use arrow2::chunk::Chunk;
use arrow2::datatypes::{DataType, Field, Schema};
use arrow2::io::ipc::write::{StreamWriter, WriteOptions};

use super::columns::rank_chunk;
use super::schema::{ColumnType, ExportColumn, ExportSchema, Source};
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

/// Every rank's events as one Arrow IPC stream (a record batch per rank with rows), and the row
/// count; the args as strings when their types do not encode (the export's fallback).
pub fn events_stream(set: &TraceSet) -> Result<(Vec<u8>, u64), String> {
    let schema = events_schema(set);
    let write = |schema: &ExportSchema| -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        let mut writer = StreamWriter::new(&mut out, WriteOptions { compression: None });
        writer
            .start(&schema.arrow_schema(), None)
            .map_err(|e| e.to_string())?;
        for rank in set.ranks.iter().filter(|r| !r.table.is_empty()) {
            let chunk = rank_chunk(schema, rank)?;
            writer.write(&chunk, None).map_err(|e| e.to_string())?;
        }
        writer.finish().map_err(|e| e.to_string())?;
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

/// The `idle` table as an Arrow IPC stream: `rank` Int64, `ts` and `dur` Float64 µs (the events'
/// unit), `cause` Utf8.
pub fn idle_stream(rows: &[IdleRow]) -> Result<Vec<u8>, String> {
    let schema = Schema::from(vec![
        Field::new("rank", DataType::Int64, false),
        Field::new("ts", DataType::Float64, false),
        Field::new("dur", DataType::Float64, false),
        Field::new("cause", DataType::Utf8, false),
    ]);
    let us = |ns: i64| ns as f64 / 1000.0;
    let arrays: Vec<Box<dyn Array>> = vec![
        PrimitiveArray::<i64>::from_vec(rows.iter().map(|r| r.rank).collect()).boxed(),
        PrimitiveArray::<f64>::from_vec(rows.iter().map(|r| us(r.start_ns)).collect()).boxed(),
        PrimitiveArray::<f64>::from_vec(rows.iter().map(|r| us(r.end_ns - r.start_ns)).collect())
            .boxed(),
        Utf8Array::<i32>::from_slice(rows.iter().map(|r| r.cause).collect::<Vec<_>>()).boxed(),
    ];
    let chunk = Chunk::try_new(arrays).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let mut writer = StreamWriter::new(&mut out, WriteOptions { compression: None });
    writer.start(&schema, None).map_err(|e| e.to_string())?;
    if !rows.is_empty() {
        writer.write(&chunk, None).map_err(|e| e.to_string())?;
    }
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}
