//! One rank's rows in the export's schema as plain typed columns ([`PlainValues`], no arrow2: what
//! the worker sends an exporter worker through the binary codec): every column read from the table
//! as cells, then typed by the column's type. `columns.rs` makes arrow arrays of them.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::schema::{ColumnType, ExportColumn, ExportSchema, NameMap, Source, DENSE_ARGS};
use crate::table::float_text::float_text;
use crate::table::{ArgColumn, ArgValues, RankTrace, TraceTable};

/// One column of one rank, typed (null where a row has no value of the column's type).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PlainValues {
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
    Text(Vec<Option<String>>),
}

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

/// Cells typed by the column's type (a cell of another type is written as text in a Utf8 column; in a
/// typed one it cannot occur, as the schema joined every rank's types).
fn typed(cells: Vec<Option<Cell<'_>>>, ty: ColumnType) -> PlainValues {
    match ty {
        ColumnType::Int64 => PlainValues::Int(
            cells
                .iter()
                .map(|c| c.as_ref().and_then(Cell::as_i64))
                .collect(),
        ),
        ColumnType::Float64 => PlainValues::Float(
            cells
                .iter()
                .map(|c| c.as_ref().and_then(Cell::as_f64))
                .collect(),
        ),
        ColumnType::Boolean => PlainValues::Bool(
            cells
                .iter()
                .map(|c| c.as_ref().and_then(Cell::as_bool))
                .collect(),
        ),
        ColumnType::Utf8 => {
            PlainValues::Text(cells.into_iter().map(|c| c.map(Cell::into_text)).collect())
        }
    }
}

/// One rank's rows in the schema's columns, typed.
pub fn plain_rank(schema: &ExportSchema, rank: &RankTrace) -> Vec<PlainValues> {
    schema
        .columns
        .iter()
        .map(|c| typed(cells(rank, c, schema.names), c.ty))
        .collect()
}
