//! The three file formats, each written one rank at a time (one record batch / row group per rank), so
//! that only one rank's columns are held at once: Arrow IPC file, Parquet (snappy, `parquet.rs`), CSV (RFC 4180).

use std::io::Write;

use arrow2::array::{Array, BooleanArray, PrimitiveArray, Utf8Array};
use arrow2::chunk::Chunk;
use arrow2::datatypes::DataType;

use super::columns::{plain_chunk, rank_chunk};
use super::plain::PlainValues;
use super::schema::ExportSchema;
use crate::table::float_text::float_text;
use crate::table::TraceSet;

/// Why an encoder stopped: the arrow/parquet encoding failed, or the destination would not take the bytes.
#[derive(Debug)]
pub enum WriteFailure {
    Encode(String),
    Io(std::io::Error),
}

impl From<arrow2::error::Error> for WriteFailure {
    fn from(e: arrow2::error::Error) -> Self {
        match e {
            arrow2::error::Error::Io(io) => WriteFailure::Io(io),
            other => WriteFailure::Encode(other.to_string()),
        }
    }
}

impl From<parquet2::error::Error> for WriteFailure {
    fn from(e: parquet2::error::Error) -> Self {
        WriteFailure::Encode(e.to_string())
    }
}

impl From<std::io::Error> for WriteFailure {
    fn from(e: std::io::Error) -> Self {
        WriteFailure::Io(e)
    }
}

/// Each rank's rows, one chunk per rank with rows (an empty rank adds nothing).
fn chunks<'a>(
    set: &'a TraceSet,
    schema: &'a ExportSchema,
) -> impl Iterator<Item = Result<Chunk<Box<dyn Array>>, WriteFailure>> + 'a {
    set.ranks
        .iter()
        .filter(|r| !r.table.is_empty())
        .map(|r| rank_chunk(schema, r).map_err(WriteFailure::Encode))
}

/// Ranks' plain columns (what an exporter worker is sent), one chunk per rank.
pub fn plain_chunks<'a>(
    ranks: &'a [Vec<PlainValues>],
) -> impl Iterator<Item = Result<Chunk<Box<dyn Array>>, WriteFailure>> + 'a {
    ranks
        .iter()
        .map(|r| plain_chunk(r).map_err(WriteFailure::Encode))
}

/// An Arrow IPC file of `set` (see [`write_arrow_chunks`]).
pub fn write_arrow(
    set: &TraceSet,
    schema: &ExportSchema,
    out: &mut dyn Write,
) -> Result<(), WriteFailure> {
    write_arrow_chunks(schema, chunks(set, schema), out)
}

/// An Arrow IPC file (`ARROW1` magic; what pyarrow's `ipc.open_file` and Feather v2 read), uncompressed.
pub fn write_arrow_chunks(
    schema: &ExportSchema,
    chunks: impl Iterator<Item = Result<Chunk<Box<dyn Array>>, WriteFailure>>,
    out: &mut dyn Write,
) -> Result<(), WriteFailure> {
    use arrow2::io::ipc::write::{FileWriter, WriteOptions};
    let mut writer = FileWriter::try_new(
        out,
        schema.arrow_schema(),
        None,
        WriteOptions { compression: None },
    )?;
    for chunk in chunks {
        writer.write(&chunk?, None)?;
    }
    writer.finish()?;
    Ok(())
}

/// A Parquet file (`PAR1` magic; see [`super::parquet`]).
pub fn write_parquet(
    set: &TraceSet,
    schema: &ExportSchema,
    out: &mut dyn Write,
) -> Result<(), WriteFailure> {
    super::parquet::write(schema, chunks(set, schema), out)
}

/// A CSV field: quoted when it holds a comma, quote or line break, quotes doubled (RFC 4180).
fn push_field(line: &mut String, s: &str) {
    if s.contains([',', '"', '\n', '\r']) {
        line.push('"');
        line.push_str(&s.replace('"', "\"\""));
        line.push('"');
    } else {
        line.push_str(s);
    }
}

/// The text of one cell (empty for null).
fn push_cell(line: &mut String, array: &dyn Array, row: usize) {
    use std::fmt::Write as _;
    if array.is_null(row) {
        return;
    }
    let any = array.as_any();
    match array.data_type() {
        DataType::Int64 => {
            if let Some(a) = any.downcast_ref::<PrimitiveArray<i64>>() {
                let _ = write!(line, "{}", a.value(row));
            }
        }
        DataType::Float64 => {
            if let Some(a) = any.downcast_ref::<PrimitiveArray<f64>>() {
                line.push_str(&float_text(a.value(row)));
            }
        }
        DataType::Boolean => {
            if let Some(a) = any.downcast_ref::<BooleanArray>() {
                line.push_str(if a.value(row) { "true" } else { "false" });
            }
        }
        _ => {
            if let Some(a) = any.downcast_ref::<Utf8Array<i32>>() {
                push_field(line, a.value(row));
            }
        }
    }
}

/// CSV with a header line, one line per row (`\n`), nulls as empty fields, written rank by rank and
/// line by line (buffered by the caller's writer).
pub fn write_csv(
    set: &TraceSet,
    schema: &ExportSchema,
    out: &mut dyn Write,
) -> Result<(), WriteFailure> {
    write_csv_chunks(schema, chunks(set, schema), out)
}

/// CSV of chunks (see [`write_csv`]).
pub fn write_csv_chunks(
    schema: &ExportSchema,
    chunks: impl Iterator<Item = Result<Chunk<Box<dyn Array>>, WriteFailure>>,
    out: &mut dyn Write,
) -> Result<(), WriteFailure> {
    let mut line = String::new();
    for (i, c) in schema.columns.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        push_field(&mut line, &c.name);
    }
    line.push('\n');
    out.write_all(line.as_bytes())?;
    for chunk in chunks {
        let chunk = chunk?;
        for row in 0..chunk.len() {
            line.clear();
            for (i, array) in chunk.arrays().iter().enumerate() {
                if i > 0 {
                    line.push(',');
                }
                push_cell(&mut line, array.as_ref(), row);
            }
            line.push('\n');
            out.write_all(line.as_bytes())?;
        }
    }
    out.flush()?;
    Ok(())
}
