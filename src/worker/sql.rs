//! The worker's side of the SQL tab (wasm32 only): the kept set's `events` and `idle` tables as Arrow
//! IPC streams ([`crate::export::sql`]), posted to the page with their buffers transferred.

use super::{post, post_with_buffers, LOADED};
use crate::export::sql::{events_stream, idle_stream, IdleRow};
use crate::protocol::{FromWorker, SqlPart, SqlTable};
use crate::table::TraceSet;

/// The GPU's idle intervals of every rank, with their cause.
fn idle_rows(set: &TraceSet) -> Vec<IdleRow> {
    set.ranks
        .iter()
        .flat_map(|r| {
            crate::report::gather::idle_pieces(&r.table)
                .into_iter()
                .map(move |(start_ns, end_ns, cause)| IdleRow {
                    rank: r.rank,
                    start_ns,
                    end_ns,
                    cause: cause.as_str(),
                })
        })
        .collect()
}

/// Both tables' streams, with what the page reads of them.
fn tables(set: &TraceSet) -> Result<Vec<(SqlPart, Vec<u8>)>, String> {
    let (events, rows) = events_stream(set)?;
    let idle = idle_rows(set);
    let idle_bytes = idle_stream(&idle)?;
    let part = |table, rows, bytes: Vec<u8>| {
        let info = SqlPart {
            table,
            rows,
            bytes: bytes.len() as u64,
        };
        (info, bytes)
    };
    Ok(vec![
        part(SqlTable::Events, rows, events),
        part(SqlTable::Idle, idle.len() as u64, idle_bytes),
    ])
}

/// Posts `[json(SqlTables), ArrayBuffer per part]`, or `SqlTablesFailed`.
pub fn sql_tables() {
    let made = LOADED.with(|l| match l.borrow().as_ref() {
        None => Err("no trace is loaded in the worker".to_string()),
        Some(set) => tables(set),
    });
    let parts = match made {
        Ok(p) => p,
        Err(message) => return post(&FromWorker::SqlTablesFailed { message }),
    };
    let buffers: Vec<js_sys::ArrayBuffer> = parts
        .iter()
        .map(|(_, b)| js_sys::Uint8Array::from(b.as_slice()).buffer())
        .collect();
    let msg = FromWorker::SqlTables {
        parts: parts.into_iter().map(|(p, _)| p).collect(),
    };
    if !post_with_buffers(&msg, &buffers) {
        post(&FromWorker::SqlTablesFailed {
            message: "the worker could not send the tables to the page".into(),
        });
    }
}
