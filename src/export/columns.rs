//! One rank's rows as arrow arrays in the export's schema: every column read from the table as cells,
//! then made an array of the column's type.

use std::borrow::Cow;

use arrow2::array::{Array, BooleanArray, MutableArray, MutableUtf8Array, PrimitiveArray, TryPush};
use arrow2::chunk::Chunk;

use super::schema::{ColumnType, ExportColumn, ExportSchema, NameMap, Source, DENSE_ARGS};
use crate::table::float_text::float_text;
use crate::table::{ArgColumn, ArgValues, RankTrace, TraceTable};

/// One value of a column before it is typed.
#[derive(Clone, Debug, PartialEq)]
enum Cell<'a> {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(Cow<'a, str>),
}

impl Cell<'_> {
    fn as_i64(&self) -> Option<i64> {
        match self {
            Cell::Int(i) => Some(*i),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self {
            Cell::Int(i) => Some(*i as f64),
            Cell::Float(f) => Some(*f),
            _ => None,
        }
    }

    fn as_bool(&self) -> Option<bool> {
        match self {
            Cell::Bool(b) => Some(*b),
            _ => None,
        }
    }

    fn into_text(self) -> String {
        match self {
            Cell::Int(i) => i.to_string(),
            Cell::Float(f) => float_text(f),
            Cell::Bool(b) => b.to_string(),
            Cell::Text(t) => t.into_owned(),
        }
    }
}

/// The duration the file wrote for a row: none for `B` rows (the table gives them their `E`'s time,
/// the file does not).
pub(super) fn written_dur_ns(t: &TraceTable, row: usize) -> Option<i64> {
    if t.phase_at(row) == 'B' {
        None
    } else {
        t.raw_dur_at(row)
    }
}

/// A µs value from ns: the file's float where its text had digits past the ns, else exact.
fn micros(ns: i64, written: Option<f64>, ty: ColumnType) -> Cell<'static> {
    match (ty, written) {
        (ColumnType::Int64, _) => Cell::Int(ns / 1000),
        (_, Some(us)) => Cell::Float(us),
        (_, None) => Cell::Float(ns as f64 / 1000.0),
    }
}

/// `pid`/`tid` as written: absent (`""` in the table) is null; a number when the column is Int64.
fn id_cell(text: &str, ty: ColumnType) -> Option<Cell<'_>> {
    if text.is_empty() {
        return None;
    }
    match ty {
        ColumnType::Int64 => text.parse().ok().map(Cell::Int),
        _ => Some(Cell::Text(Cow::Borrowed(text))),
    }
}

fn sparse_cell(column: &ArgColumn, i: usize) -> Option<Cell<'_>> {
    match &column.values {
        ArgValues::Int(a) => a.get(i).map(Cell::Int),
        ArgValues::Float(a) => a.get(i).map(Cell::Float),
        ArgValues::Bool(a) => a.get(i).map(Cell::Bool),
        ArgValues::Text(_) => column.text_at(i).map(|t| Cell::Text(Cow::Borrowed(t))),
    }
}

/// Every row's value of one args key: from the table's typed column of that key (external id,
/// correlation, stream, device) and from its sparse column (values that were not integers).
fn arg_cells<'a>(t: &'a TraceTable, key: &str) -> Vec<Option<Cell<'a>>> {
    let mut cells = vec![None; t.len()];
    if let Some((_, read)) = DENSE_ARGS.iter().find(|(k, _)| *k == key) {
        for (row, cell) in cells.iter_mut().enumerate() {
            *cell = read(t, row).map(Cell::Int);
        }
    }
    if let Some(column) = t.arg(key) {
        for (i, &row) in column.rows.values().iter().enumerate() {
            cells[row as usize] = sparse_cell(column, i);
        }
    }
    cells
}

/// Every row's value of one column, untyped.
fn cells<'a>(
    rank: &'a RankTrace,
    column: &ExportColumn,
    names: Option<NameMap>,
) -> Vec<Option<Cell<'a>>> {
    let t = &rank.table;
    let rows = 0..t.len();
    let text = |s: &'a str| (!s.is_empty()).then_some(Cell::Text(Cow::Borrowed(s)));
    match &column.source {
        Source::Name => match names {
            None => rows.map(|r| text(t.name_at(r))).collect(),
            Some(NameMap(map)) => rows
                .map(|r| {
                    let name = map(t.kind_at(r), t.name_at(r));
                    (!name.is_empty()).then_some(Cell::Text(Cow::Owned(name)))
                })
                .collect(),
        },
        Source::Cat => rows.map(|r| t.category_at(r).and_then(text)).collect(),
        Source::Ph => rows
            .map(|r| {
                let p = t.phase.value(r);
                (p != 0).then(|| Cell::Text(Cow::Owned((p as char).to_string())))
            })
            .collect(),
        Source::Ts => rows
            .map(|r| {
                let written = t.sub_ns_at(r).and_then(|(ts, _)| ts);
                t.ts_at(r).map(|ns| micros(ns, written, column.ty))
            })
            .collect(),
        Source::Dur => rows
            .map(|r| {
                let written = t.sub_ns_at(r).and_then(|(_, dur)| dur);
                written_dur_ns(t, r).map(|ns| micros(ns, written, column.ty))
            })
            .collect(),
        Source::Pid => rows.map(|r| id_cell(t.pid_at(r), column.ty)).collect(),
        Source::Tid => rows.map(|r| id_cell(t.tid_at(r), column.ty)).collect(),
        Source::Id => rows.map(|r| t.flow_id_at(r).map(Cell::Int)).collect(),
        Source::Rank => rows.map(|_| Some(Cell::Int(rank.rank))).collect(),
        Source::Kind => rows
            .map(|r| Some(Cell::Text(Cow::Borrowed(t.kind_at(r).as_str()))))
            .collect(),
        Source::Arg(key) => arg_cells(t, key),
    }
}

/// Cells as an array of the column's type (a cell of another type is written as text in a Utf8
/// column; in a typed one it cannot occur, as the schema joined every rank's types). Fails only when a
/// rank's text in one column passes 2 GiB (Utf8's 32-bit offsets).
fn to_array(cells: Vec<Option<Cell<'_>>>, ty: ColumnType) -> Result<Box<dyn Array>, String> {
    Ok(match ty {
        ColumnType::Int64 => PrimitiveArray::<i64>::from_iter(
            cells.iter().map(|c| c.as_ref().and_then(Cell::as_i64)),
        )
        .boxed(),
        ColumnType::Float64 => PrimitiveArray::<f64>::from_iter(
            cells.iter().map(|c| c.as_ref().and_then(Cell::as_f64)),
        )
        .boxed(),
        ColumnType::Boolean => {
            BooleanArray::from_iter(cells.iter().map(|c| c.as_ref().and_then(Cell::as_bool)))
                .boxed()
        }
        ColumnType::Utf8 => {
            let mut texts = MutableUtf8Array::<i32>::with_capacity(cells.len());
            for c in cells {
                texts
                    .try_push(c.map(Cell::into_text))
                    .map_err(|e| format!("a text column passes 2 GiB in one rank: {e}"))?;
            }
            texts.as_box()
        }
    })
}

/// One rank's rows in the schema's columns.
pub fn rank_chunk(
    schema: &ExportSchema,
    rank: &RankTrace,
) -> Result<Chunk<Box<dyn Array>>, String> {
    let arrays = schema
        .columns
        .iter()
        .map(|c| to_array(cells(rank, c, schema.names), c.ty))
        .collect::<Result<Vec<_>, _>>()?;
    Chunk::try_new(arrays).map_err(|e| e.to_string())
}
