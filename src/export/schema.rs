//! The export's columns and their types, decided once over every rank of a [`TraceSet`] (so that every
//! rank's chunk has the same schema), and the `--columns` selection.

use std::collections::BTreeMap;

use arrow2::array::Array;
use arrow2::datatypes::{DataType, Field, Schema};

use serde::{Deserialize, Serialize};

use super::ExportError;
use crate::table::{ArgColumn, ArgValues, EventKind, TraceSet, TraceTable};

/// The type of an exported column (the arrow type; pandas reads them as int64, float64, bool, object).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ColumnType {
    Int64,
    Float64,
    Boolean,
    Utf8,
}

impl ColumnType {
    pub fn data_type(self) -> DataType {
        match self {
            ColumnType::Int64 => DataType::Int64,
            ColumnType::Float64 => DataType::Float64,
            ColumnType::Boolean => DataType::Boolean,
            ColumnType::Utf8 => DataType::Utf8,
        }
    }
}

/// Where an exported column's values come from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Source {
    Name,
    Cat,
    Ph,
    Ts,
    Dur,
    Pid,
    Tid,
    Id,
    /// The rank of the row's file (only when several ranks are exported).
    Rank,
    /// The event's kind as the table resolved it (`EventKind::as_str`: `kernel`, `cpu_op`...; the
    /// SQL tab's tables only, not the export).
    Kind,
    /// One `args` key, as written in the trace.
    Arg(String),
}

/// One column of the export.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExportColumn {
    /// `name`, `ts`, ..., `rank`, `args_<key>`.
    pub name: String,
    pub source: Source,
    pub ty: ColumnType,
    /// An args column whose values have more than one JSON type, so written as strings.
    pub mixed: bool,
}

/// The columns of an export, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportSchema {
    pub columns: Vec<ExportColumn>,
    /// What the `name` column writes instead of each name (the page's redact switch), if anything.
    pub names: Option<NameMap>,
}

/// A function that rewrites an event's name given its kind (for instance, hashing it).
#[derive(Clone, Copy)]
pub struct NameMap(pub fn(EventKind, &str) -> String);

impl std::fmt::Debug for NameMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NameMap")
    }
}

impl PartialEq for NameMap {
    fn eq(&self, other: &NameMap) -> bool {
        std::ptr::fn_addr_eq(self.0, other.0)
    }
}

/// The value type an args key has seen so far (over one rank's rows, then over all ranks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArgType {
    /// Only nulls.
    Empty,
    Int,
    Float,
    Bool,
    Text {
        mixed: bool,
    },
}

impl ArgType {
    /// The type of a column holding values of both: int and float make float (as pandas does);
    /// any other pair of different types makes strings.
    fn join(self, other: ArgType) -> ArgType {
        use ArgType::*;
        match (self, other) {
            (Empty, x) | (x, Empty) => x,
            (Int, Int) => Int,
            (Float, Float) | (Int, Float) | (Float, Int) => Float,
            (Bool, Bool) => Bool,
            (Text { mixed: a }, Text { mixed: b }) => Text { mixed: a || b },
            _ => Text { mixed: true },
        }
    }

    fn column_type(self) -> ColumnType {
        match self {
            ArgType::Int => ColumnType::Int64,
            ArgType::Float => ColumnType::Float64,
            ArgType::Bool => ColumnType::Boolean,
            ArgType::Empty | ArgType::Text { .. } => ColumnType::Utf8,
        }
    }
}

/// Reads a row's value of one of the table's typed integer columns.
pub(super) type ReadInt = fn(&TraceTable, usize) -> Option<i64>;

/// The args keys the table keeps in typed columns of their own, and how to read each back as the
/// trace's `args` value (`stream` only where `args.stream` gave it, not where it was read from `tid`).
pub(super) const DENSE_ARGS: [(&str, ReadInt); 4] = [
    ("External id", TraceTable::external_id_at),
    ("correlation", TraceTable::correlation_at),
    ("stream", TraceTable::args_stream_at),
    ("device", TraceTable::device_at),
];

fn dense_type(table: &TraceTable, read: ReadInt) -> ArgType {
    if (0..table.len()).any(|row| read(table, row).is_some()) {
        ArgType::Int
    } else {
        ArgType::Empty
    }
}

fn sparse_type(column: &ArgColumn) -> ArgType {
    let all_null = match &column.values {
        ArgValues::Int(a) => a.null_count() == a.len(),
        ArgValues::Float(a) => a.null_count() == a.len(),
        ArgValues::Bool(a) => a.null_count() == a.len(),
        ArgValues::Text(a) => a.null_count() == a.len(),
    };
    if all_null {
        return ArgType::Empty;
    }
    match &column.values {
        ArgValues::Int(_) => ArgType::Int,
        ArgValues::Float(_) => ArgType::Float,
        ArgValues::Bool(_) => ArgType::Bool,
        ArgValues::Text(_) => ArgType::Text {
            mixed: column.mixed_types,
        },
    }
}

/// Every args key of one rank with the type of its values there. A key present (with only nulls)
/// is kept, as the seed keeps a column every row of which is empty.
fn rank_arg_types(table: &TraceTable) -> BTreeMap<String, ArgType> {
    let mut types = BTreeMap::new();
    for (key, read) in DENSE_ARGS {
        let t = dense_type(table, read);
        if t != ArgType::Empty {
            types.insert(key.to_string(), t);
        }
    }
    for column in &table.args {
        let t = sparse_type(column);
        let joined = types
            .get(&column.key)
            .map_or(t, |&before: &ArgType| before.join(t));
        types.insert(column.key.clone(), joined);
    }
    types
}

/// True when every value of a `pid`/`tid` dictionary (but the empty one of an absent id) is an integer.
fn all_integers<'a>(mut values: impl Iterator<Item = &'a str>) -> bool {
    values.all(|v| v.is_empty() || v.parse::<i64>().is_ok())
}

fn ids_type(
    set: &TraceSet,
    ids: fn(&TraceTable) -> &arrow2::array::DictionaryArray<u32>,
) -> ColumnType {
    let integers = set.ranks.iter().all(|r| {
        let dict = ids(&r.table)
            .values()
            .as_any()
            .downcast_ref::<arrow2::array::Utf8Array<i32>>();
        dict.is_some_and(|d| all_integers(d.values_iter()))
    });
    if integers {
        ColumnType::Int64
    } else {
        ColumnType::Utf8
    }
}

/// `ts` is float64 when pandas would read it so (a fraction or a gap somewhere), as the seed has it.
fn ts_type(set: &TraceSet) -> ColumnType {
    let float = set.ranks.iter().any(|r| {
        let t = &r.table;
        t.ts_float || t.ts_ns.iter().flatten().any(|ns| ns % 1000 != 0)
    });
    if float {
        ColumnType::Float64
    } else {
        ColumnType::Int64
    }
}

/// `dur` is float64 when a duration the file wrote has a fraction of a µs. (The table keeps ns, not
/// the text: `5.0` written as a float counts as whole.)
fn dur_type(set: &TraceSet) -> ColumnType {
    let float = set.ranks.iter().any(|r| {
        let t = &r.table;
        (0..t.len()).any(|row| {
            super::plain::written_dur_ns(t, row).is_some_and(|ns| ns % 1000 != 0)
                || t.sub_ns_at(row).is_some_and(|(_, dur)| dur.is_some())
        })
    });
    if float {
        ColumnType::Float64
    } else {
        ColumnType::Int64
    }
}

fn standard(name: &str, source: Source, ty: ColumnType) -> ExportColumn {
    ExportColumn {
        name: name.to_string(),
        source,
        ty,
        mixed: false,
    }
}

impl ExportSchema {
    /// The seed's columns for `set`: `name, cat, ph, ts, dur, pid, tid, id`, then `rank` when the set
    /// has several ranks, then one `args_<key>` per args key of any rank, sorted by key.
    pub fn of(set: &TraceSet) -> ExportSchema {
        let mut columns = vec![
            standard("name", Source::Name, ColumnType::Utf8),
            standard("cat", Source::Cat, ColumnType::Utf8),
            standard("ph", Source::Ph, ColumnType::Utf8),
            standard("ts", Source::Ts, ts_type(set)),
            standard("dur", Source::Dur, dur_type(set)),
            standard("pid", Source::Pid, ids_type(set, |t| &t.pid)),
            standard("tid", Source::Tid, ids_type(set, |t| &t.tid)),
            standard("id", Source::Id, ColumnType::Int64),
        ];
        if set.ranks.len() > 1 {
            columns.push(standard("rank", Source::Rank, ColumnType::Int64));
        }
        let mut args: BTreeMap<String, ArgType> = BTreeMap::new();
        for rank in &set.ranks {
            for (key, t) in rank_arg_types(&rank.table) {
                let joined = args.get(&key).map_or(t, |&before| before.join(t));
                args.insert(key, joined);
            }
        }
        columns.extend(args.into_iter().map(|(key, t)| ExportColumn {
            name: format!("args_{key}"),
            ty: t.column_type(),
            mixed: matches!(t, ArgType::Text { mixed: true }),
            source: Source::Arg(key),
        }));
        ExportSchema {
            columns,
            names: None,
        }
    }

    /// Column names, in order.
    pub fn names(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.name.clone()).collect()
    }

    /// Only the columns named, in the order named. Unknown or repeated names are an error that lists
    /// the available columns.
    pub fn select(&self, names: &[String]) -> Result<ExportSchema, ExportError> {
        if names.is_empty() {
            return Err(ExportError::NoColumns);
        }
        let unknown: Vec<String> = names
            .iter()
            .filter(|n| !self.columns.iter().any(|c| &c.name == *n))
            .cloned()
            .collect();
        if !unknown.is_empty() {
            return Err(ExportError::UnknownColumns {
                unknown,
                available: self.names(),
            });
        }
        let mut columns: Vec<ExportColumn> = Vec::with_capacity(names.len());
        for n in names {
            if columns.iter().any(|c| &c.name == n) {
                return Err(ExportError::RepeatedColumn(n.clone()));
            }
            if let Some(c) = self.columns.iter().find(|c| &c.name == n) {
                columns.push(c.clone());
            }
        }
        Ok(ExportSchema {
            columns,
            names: self.names,
        })
    }

    /// The schema that writes names through `map` and leaves the `args_*` columns out (args may
    /// hold names and paths), as the page's redact switch asks.
    pub fn redacted(mut self, map: NameMap) -> ExportSchema {
        self.columns.retain(|c| !matches!(c.source, Source::Arg(_)));
        self.names = Some(map);
        self
    }

    /// The seed's second try: every `args_*` column as strings.
    pub fn with_args_as_text(&self) -> ExportSchema {
        let mut s = self.clone();
        for c in &mut s.columns {
            if matches!(c.source, Source::Arg(_)) {
                c.ty = ColumnType::Utf8;
            }
        }
        s
    }

    /// Names of the args columns written as strings because their values have mixed types.
    pub fn mixed_columns(&self) -> Vec<String> {
        self.columns
            .iter()
            .filter(|c| c.mixed)
            .map(|c| c.name.clone())
            .collect()
    }

    /// The arrow schema (every column nullable).
    pub fn arrow_schema(&self) -> Schema {
        Schema::from(
            self.columns
                .iter()
                .map(|c| Field::new(c.name.clone(), c.ty.data_type(), true))
                .collect::<Vec<_>>(),
        )
    }
}
