//! The event table as a file in the seed's DataFrame schema: Parquet, Arrow IPC file or CSV, for pandas,
//! polars, DuckDB or Spark.
//!
//! # Schema
//! One row per event the table holds (every object of `traceEvents`, in file order, `M` metadata and
//! flow rows included: the row count is the summary's `events` unless the file had non-object entries,
//! which are counted as a diagnostic and are no row). With several ranks the ranks follow each other in
//! rank order and a `rank` column is added after `id`. Columns:
//!
//! | column | type | value |
//! |---|---|---|
//! | `name`, `cat` | Utf8 | as written; null when absent (an explicit `""` name too: the table keeps no difference) |
//! | `ph` | Utf8 | the phase letter; null when absent |
//! | `ts` | Int64 or Float64 | µs as the file wrote it: Float64 when pandas would read a float column (a fraction or a missing `ts` somewhere), else Int64 |
//! | `dur` | Int64 or Float64 | µs as written: Float64 when some duration has a fraction of a µs; null when absent and on `B` rows (the file gives them none) |
//! | `pid`, `tid` | Int64 or Utf8 | Int64 when every value of all ranks is an integer (`7` and `"7"` alike), else the text as written; null when absent |
//! | `id` | Int64 | flow/async `id` (a hex string read as its number); null when absent |
//! | `rank` | Int64 | only with several ranks |
//! | `args_<key>` | Int64, Float64, Boolean or Utf8 | one per `args` key of any rank, sorted by key; null where the row lacks the key |
//!
//! Args types follow the seed: ints and floats together make Float64; any other mix of types makes Utf8
//! (numbers and booleans as JSON text); an array or object is its compact JSON text; a key with only
//! nulls is Utf8. Known limits of the table: the old `external id` key comes out as `args_External id`;
//! `args.stream`, `correlation`, `device` and `External id` written as numeric strings (`"7"`) come out
//! as integers; a few well-known keys have a fixed type (`bytes` Int64, ...), a value of the wrong type
//! is null there (and counted as a diagnostic).
//!
//! # Fallback (the seed's)
//! If encoding fails, the file is encoded again with every `args_*` column as strings; if that fails too
//! the export is an [`ExportError::Encode`] naming both failures. An I/O error of the destination is not
//! retried.

mod columns;
mod parquet;
pub mod plain;
mod schema;
pub mod sql;
mod writers;

use std::io::Write;

use serde::{Deserialize, Serialize};

pub use plain::{plain_rank, PlainValues};
pub use schema::{ColumnType, ExportColumn, ExportSchema, NameMap, Source};
use writers::WriteFailure;

use crate::table::TraceSet;

crate::stable_enum! {
    /// A file format of the export.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
    #[serde(rename_all = "lowercase")]
    pub enum ExportFormat {
        Parquet,
        Arrow,
        Csv,
    }
}

impl ExportFormat {
    /// The usual file name ending.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Parquet => "parquet",
            ExportFormat::Arrow => "arrow",
            ExportFormat::Csv => "csv",
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            ExportFormat::Parquet => "application/vnd.apache.parquet",
            ExportFormat::Arrow => "application/vnd.apache.arrow.file",
            ExportFormat::Csv => "text/csv",
        }
    }

    /// The format a file name's ending says (`.parquet`, `.arrow`/`.feather`/`.ipc`, `.csv`).
    pub fn of_file_name(name: &str) -> Option<ExportFormat> {
        let lower = name.to_ascii_lowercase();
        let (_, ext) = lower.rsplit_once('.')?;
        match ext {
            "parquet" | "pq" => Some(ExportFormat::Parquet),
            "arrow" | "feather" | "ipc" => Some(ExportFormat::Arrow),
            "csv" => Some(ExportFormat::Csv),
            _ => None,
        }
    }
}

/// Why an export could not be made.
#[derive(Debug)]
pub enum ExportError {
    /// `--columns` named columns the export does not have.
    UnknownColumns {
        unknown: Vec<String>,
        available: Vec<String>,
    },
    /// `--columns` named a column twice.
    RepeatedColumn(String),
    /// `--columns` named none.
    NoColumns,
    /// Encoding failed as typed and again with every `args_*` column as strings.
    Encode {
        format: ExportFormat,
        typed: String,
        as_text: String,
    },
    /// The destination would not take the bytes.
    Io(std::io::Error),
}

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExportError::UnknownColumns { unknown, available } => write!(
                f,
                "no column {} in this trace; the columns are: {}",
                unknown.join(", "),
                available.join(", ")
            ),
            ExportError::RepeatedColumn(c) => write!(f, "column {c} is named twice"),
            ExportError::NoColumns => write!(f, "no column named (--columns takes a,b,c)"),
            ExportError::Encode {
                format,
                typed,
                as_text,
            } => write!(
                f,
                "could not encode the {format} file ({typed}), nor with every args_* column as strings ({as_text})"
            ),
            ExportError::Io(e) => write!(f, "could not write the file: {e}"),
        }
    }
}

impl std::error::Error for ExportError {}

/// What was written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportReport {
    pub format: ExportFormat,
    pub rows: u64,
    pub columns: Vec<String>,
    /// Args columns written as strings because their values have mixed types.
    pub mixed_to_text: Vec<String>,
    /// The first encoding failed, so every `args_*` column was written as strings.
    pub args_as_text: bool,
    /// Why the first encoding failed (when `args_as_text`).
    pub first_failure: Option<String>,
}

/// The schema of `set`'s export, limited to `columns` (in that order) when given.
pub fn export_schema(
    set: &TraceSet,
    columns: Option<&[String]>,
) -> Result<ExportSchema, ExportError> {
    let schema = ExportSchema::of(set);
    match columns {
        Some(names) => schema.select(names),
        None => Ok(schema),
    }
}

/// Runs `encode` with `schema`, and when the encoding fails, once more with every `args_*` column as
/// strings (the seed's rule). Returns what it made and the first failure, if there was one.
pub fn with_text_fallback<T>(
    schema: &ExportSchema,
    format: ExportFormat,
    mut encode: impl FnMut(&ExportSchema) -> Result<T, String>,
) -> Result<(T, Option<String>), ExportError> {
    let typed = match encode(schema) {
        Ok(v) => return Ok((v, None)),
        Err(e) => e,
    };
    match encode(&schema.with_args_as_text()) {
        Ok(v) => Ok((v, Some(typed))),
        Err(as_text) => Err(ExportError::Encode {
            format,
            typed,
            as_text,
        }),
    }
}

fn encode_into(
    set: &TraceSet,
    schema: &ExportSchema,
    format: ExportFormat,
    out: &mut dyn Write,
) -> Result<(), WriteFailure> {
    match format {
        ExportFormat::Parquet => writers::write_parquet(set, schema, out),
        ExportFormat::Arrow => writers::write_arrow(set, schema, out),
        ExportFormat::Csv => writers::write_csv(set, schema, out),
    }
}

fn report(
    set: &TraceSet,
    schema: &ExportSchema,
    format: ExportFormat,
    first: Option<String>,
) -> ExportReport {
    ExportReport {
        format,
        rows: set.ranks.iter().map(|r| r.table.len() as u64).sum(),
        columns: schema.names(),
        mixed_to_text: schema.mixed_columns(),
        args_as_text: first.is_some(),
        first_failure: first,
    }
}

/// The export as bytes (the whole file in memory: what the page downloads, and what the CLI writes
/// for Parquet and Arrow, so that a failed first encoding leaves nothing behind).
pub fn export_bytes(
    set: &TraceSet,
    schema: &ExportSchema,
    format: ExportFormat,
) -> Result<(Vec<u8>, ExportReport), ExportError> {
    let mut io_error = None;
    let (bytes, first) = with_text_fallback(schema, format, |s| {
        let mut buf = Vec::new();
        match encode_into(set, s, format, &mut buf) {
            Ok(()) => Ok(buf),
            Err(WriteFailure::Encode(e)) => Err(e),
            Err(WriteFailure::Io(e)) => {
                let text = e.to_string();
                io_error = Some(e);
                Err(text)
            }
        }
    })
    .map_err(|e| io_error.take().map_or(e, ExportError::Io))?;
    let used = if first.is_some() {
        schema.with_args_as_text()
    } else {
        schema.clone()
    };
    Ok((bytes, report(set, &used, format, first)))
}

/// The export written to `out`: CSV streamed line by line, Parquet and Arrow encoded in memory first
/// (see [`export_bytes`]).
pub fn export_to(
    set: &TraceSet,
    schema: &ExportSchema,
    format: ExportFormat,
    out: &mut dyn Write,
) -> Result<ExportReport, ExportError> {
    if format != ExportFormat::Csv {
        let (bytes, report) = export_bytes(set, schema, format)?;
        out.write_all(&bytes)
            .and_then(|()| out.flush())
            .map_err(ExportError::Io)?;
        return Ok(report);
    }
    // CSV cannot fail to encode (every value has a text): only the destination can fail.
    match encode_into(set, schema, format, out) {
        Ok(()) => Ok(report(set, schema, format, None)),
        Err(WriteFailure::Io(e)) => Err(ExportError::Io(e)),
        Err(WriteFailure::Encode(e)) => Err(ExportError::Encode {
            format,
            typed: e.clone(),
            as_text: e,
        }),
    }
}

/// The CSV export as bytes, written with nothing but the table's columns (no Parquet or Arrow
/// writer: the page's worker writes CSV itself and leaves the other two to its exporter worker).
pub fn csv_bytes(set: &TraceSet, schema: &ExportSchema) -> Result<Vec<u8>, ExportError> {
    let mut out = Vec::new();
    match writers::write_csv(set, schema, &mut out) {
        Ok(()) => Ok(out),
        Err(WriteFailure::Io(e)) => Err(ExportError::Io(e)),
        Err(WriteFailure::Encode(e)) => Err(ExportError::Encode {
            format: ExportFormat::Csv,
            typed: e.clone(),
            as_text: e,
        }),
    }
}

/// Each rank with rows as plain typed columns in `schema` (one rank at a time, ranks in order): what
/// the page's worker sends its exporter worker, which writes the same file from them as
/// [`export_bytes`] writes from the set.
pub fn plain_ranks<'a>(
    set: &'a TraceSet,
    schema: &'a ExportSchema,
) -> impl Iterator<Item = Vec<PlainValues>> + 'a {
    set.ranks
        .iter()
        .filter(|r| !r.table.is_empty())
        .map(move |r| plain_rank(schema, r))
}

/// What an exporter worker writes of plain columns: a file of the export, or an Arrow IPC stream
/// (the SQL tab's tables, [`sql`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Encoding {
    File(ExportFormat),
    Stream,
}

/// A file of ranks' plain columns ([`plain_ranks`]) in `schema` (the exporter worker's side of the
/// export and of the SQL tables: one encoding, the caller retries with every `args_*` column as text
/// on an error).
pub fn encode_plain(
    schema: &ExportSchema,
    encoding: Encoding,
    ranks: &[Vec<PlainValues>],
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let chunks = writers::plain_chunks(ranks);
    let written = match encoding {
        Encoding::File(ExportFormat::Parquet) => parquet::write(schema, chunks, &mut out),
        Encoding::File(ExportFormat::Arrow) => {
            writers::write_arrow_chunks(schema, chunks, &mut out)
        }
        Encoding::File(ExportFormat::Csv) => writers::write_csv_chunks(schema, chunks, &mut out),
        Encoding::Stream => sql::write_stream(schema, chunks, &mut out),
    };
    match written {
        Ok(()) => Ok(out),
        Err(WriteFailure::Encode(e)) => Err(e),
        Err(WriteFailure::Io(e)) => Err(e.to_string()),
    }
}

/// A file name for the export of `set`: the first file's name without its ending, `-ranks` when several.
pub fn file_name(set: &TraceSet, format: ExportFormat) -> String {
    let stem = set.ranks.first().map_or("trace", |r| {
        r.table
            .file
            .trim_end_matches(".gz")
            .trim_end_matches(".json")
    });
    let several = if set.ranks.len() > 1 { "-ranks" } else { "" };
    format!("{stem}{several}.{}", format.extension())
}
