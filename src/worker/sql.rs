//! The worker's side of the SQL tab (wasm32 only): the kept set's `events` and `idle` tables as Arrow
//! IPC streams ([`crate::export::sql`]), written by an exporter worker (its own wasm, with the Arrow
//! IPC writer: [`super::export_file`]) and posted to the page with their buffers transferred.

use super::export_file::{run, with_loaded, Job, SendColumns};
use super::{post, post_with_buffers};
use crate::export::plain_ranks;
use crate::export::sql::{events_schema, idle_table, IdleRow};
use crate::export::Encoding;
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

/// `events` as the export's columns with `rank` and `kind` (args as text on the second try).
fn events_job() -> Job {
    let send: SendColumns = Box::new(|sender, as_text| {
        with_loaded(|set| {
            let schema = events_schema(set);
            let schema = if as_text {
                schema.with_args_as_text()
            } else {
                schema
            };
            sender.file(Encoding::Stream, &schema, plain_ranks(set, &schema))
        })
    });
    Job {
        send,
        failure: Box::new(|typed, text| format!("{typed}; as text: {text}")),
    }
}

/// `idle`: one batch of every rank's idle intervals (none when there are none).
fn idle_job(rows: Vec<IdleRow>) -> Job {
    let send: SendColumns = Box::new(move |sender, _| {
        let (schema, columns) = idle_table(&rows);
        let batch = (!rows.is_empty()).then_some(columns);
        sender.file(Encoding::Stream, &schema, batch.into_iter())
    });
    Job {
        send,
        failure: Box::new(|typed, _| typed),
    }
}

/// Asks an exporter for both tables' streams, then posts `[bytes(SqlTables), ArrayBuffer per part]`,
/// or `SqlTablesFailed`.
pub fn sql_tables() {
    let counts = with_loaded(|set| {
        let rows: u64 = set.ranks.iter().map(|r| r.table.len() as u64).sum();
        Ok((rows, idle_rows(set)))
    });
    let (rows, idle) = match counts {
        Ok(c) => c,
        Err(message) => return post(&FromWorker::SqlTablesFailed { message }),
    };
    let idle_count = idle.len() as u64;
    let done = Box::new(move |files: Result<Vec<js_sys::ArrayBuffer>, String>| {
        let files = match files {
            Ok(f) if f.len() == 2 => f,
            Ok(_) => {
                return post(&FromWorker::SqlTablesFailed {
                    message: "the exporter did not write both tables".into(),
                })
            }
            Err(message) => return post(&FromWorker::SqlTablesFailed { message }),
        };
        let part = |table, rows, bytes: &js_sys::ArrayBuffer| SqlPart {
            table,
            rows,
            bytes: bytes.byte_length() as u64,
        };
        let msg = FromWorker::SqlTables {
            parts: vec![
                part(SqlTable::Events, rows, &files[0]),
                part(SqlTable::Idle, idle_count, &files[1]),
            ],
        };
        if !post_with_buffers(&msg, &files) {
            post(&FromWorker::SqlTablesFailed {
                message: "the worker could not send the tables to the page".into(),
            });
        }
    });
    run(vec![events_job(), idle_job(idle)], done);
}
