//! The worker's side of the table export and of the SQL tab's tables (wasm32 only). CSV is written
//! here; a Parquet or Arrow IPC file, and the SQL tab's Arrow IPC streams, by an exporter worker
//! started for them (`exporter_loader.js`: its own wasm, so that those writers are fetched only when
//! asked for, [`crate::protocol::exporter`]): the kept set's columns go to it one rank per message,
//! each file comes back, and the exporter is ended. When its encoding fails, the columns go once more
//! with every `args_*` column as text (the export's fallback, as [`crate::export::with_text_fallback`]
//! does natively).

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{MessageEvent, Worker, WorkerOptions};

use super::{post, post_bytes, post_with_buffers, ANSWERING_PART, LOADED};
use crate::export::{
    csv_bytes, export_schema, file_name, plain_ranks, Encoding, ExportError, ExportFormat,
    ExportSchema, NameMap, PlainValues,
};
use crate::protocol::codec;
use crate::protocol::exporter::{FromExporter, ToExporter};
use crate::protocol::FromWorker;
use crate::table::TraceSet;

/// Sends one file's columns to the exporter: [`ToExporter::Begin`], the ranks, [`ToExporter::End`]
/// (every `args_*` column as text when asked).
pub(super) type SendColumns = Box<dyn Fn(&Sender, bool) -> Result<(), String>>;

/// One file for the exporter to write: how its columns are sent, and the words of a failure (the
/// typed encoding's, then the one with args as text).
pub(super) struct Job {
    pub send: SendColumns,
    pub failure: Box<dyn Fn(String, String) -> String>,
}

/// What is done with the files once all are written (or with why one could not be).
type Done = Box<dyn FnOnce(Result<Vec<js_sys::ArrayBuffer>, String>)>;

/// The exporter worker and the messages to it.
pub(super) struct Sender(Worker);

impl Sender {
    /// Posts one message to the exporter, its bytes transferred.
    pub fn send(&self, msg: &ToExporter) -> Result<(), String> {
        let bytes = codec::encode(msg).map_err(|e| e.to_string())?;
        let array = js_sys::Uint8Array::from(bytes.as_slice());
        drop(bytes);
        self.0
            .post_message_with_transfer(&array, &js_sys::Array::of1(&array.buffer()))
            .map_err(|e| format!("{e:?}"))
    }

    /// A whole file: begin, the ranks, end.
    pub fn file(
        &self,
        encoding: Encoding,
        schema: &ExportSchema,
        ranks: impl Iterator<Item = Vec<PlainValues>>,
    ) -> Result<(), String> {
        self.send(&ToExporter::Begin {
            encoding,
            columns: schema.columns.clone(),
        })?;
        for rank in ranks {
            self.send(&ToExporter::Rank(rank))?;
        }
        self.send(&ToExporter::End)
    }
}

/// The jobs of one exporter, and how far they got.
struct Run {
    jobs: Vec<Job>,
    /// The job being written.
    at: usize,
    /// The current job's typed failure, once it failed.
    first_failure: Option<String>,
    files: Vec<js_sys::ArrayBuffer>,
    /// The shard part being answered when it was asked (its answer is wrapped as that part).
    part: Option<u64>,
    sender: Sender,
    done: Option<Done>,
}

/// Runs `f` as the answer to shard part `part` (an exporter's answer comes after the request's turn).
fn as_part(part: Option<u64>, f: impl FnOnce()) {
    let before = ANSWERING_PART.with(|a| a.replace(part));
    f();
    ANSWERING_PART.with(|a| a.set(before));
}

/// Starts an exporter worker for `jobs` (written in turn once it says it is ready), then calls
/// `done` with their files.
pub(super) fn run(jobs: Vec<Job>, done: Done) {
    let part = ANSWERING_PART.with(|a| a.get());
    let options = WorkerOptions::new();
    options.set_name("exporter");
    let Ok(worker) = Worker::new_with_options("./exporter_loader.js", &options) else {
        return as_part(part, || {
            done(Err("the exporter worker could not be started".into()))
        });
    };
    let run = Rc::new(RefCell::new(Run {
        jobs,
        at: 0,
        first_failure: None,
        files: Vec::new(),
        part,
        sender: Sender(worker.clone()),
        done: Some(done),
    }));
    let on_message = {
        let run = run.clone();
        Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| on_answer(&run, e))
    };
    let on_error = Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(move |e: web_sys::ErrorEvent| {
        finish(
            &run,
            Err(format!("the exporter worker stopped: {}", e.message())),
        )
    });
    worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    // One of each per exporter (a few bytes); the exporter is ended once it has answered.
    on_message.forget();
    on_error.forget();
}

/// Ends the exporter and hands its files (or the failure) to the run's `done`, once.
fn finish(run: &Rc<RefCell<Run>>, outcome: Result<(), String>) {
    let mut r = run.borrow_mut();
    r.sender.0.terminate();
    let Some(done) = r.done.take() else {
        return;
    };
    let files = std::mem::take(&mut r.files);
    let part = r.part;
    drop(r);
    as_part(part, || done(outcome.map(|()| files)));
}

/// The exporter's answer: ready (send the first job), a file (the next job, or done), or a failure
/// (once more as text, then give up).
fn on_answer(run: &Rc<RefCell<Run>>, event: MessageEvent) {
    let Some((head, rest)) = super::message_parts(event.data()) else {
        return;
    };
    let step = {
        let mut r = run.borrow_mut();
        match codec::decode::<FromExporter>(&head).map_err(|e| e.to_string()) {
            Ok(FromExporter::Ready) => send_job(&r, false),
            Ok(FromExporter::Done) => {
                match rest.into_iter().find_map(|b| b.dyn_into().ok()) {
                    Some(file) => r.files.push(file),
                    None => return finish_later(run, Err("the exporter sent no file".into()), r),
                }
                r.at += 1;
                r.first_failure = None;
                if r.at == r.jobs.len() {
                    return finish_later(run, Ok(()), r);
                }
                send_job(&r, false)
            }
            Ok(FromExporter::Failed { message }) => match r.first_failure.take() {
                None => {
                    r.first_failure = Some(message);
                    send_job(&r, true)
                }
                Some(typed) => Err((r.jobs[r.at].failure)(typed, message)),
            },
            Err(message) => Err(message),
        }
    };
    if let Err(message) = step {
        finish(run, Err(message));
    }
}

fn finish_later(
    run: &Rc<RefCell<Run>>,
    outcome: Result<(), String>,
    borrowed: std::cell::RefMut<'_, Run>,
) {
    drop(borrowed);
    finish(run, outcome);
}

fn send_job(r: &Run, as_text: bool) -> Result<(), String> {
    (r.jobs[r.at].send)(&r.sender, as_text)
}

/// The export's schema: the chosen columns (all when none), names redacted when asked.
fn schema_of(
    set: &TraceSet,
    columns: &[String],
    redact: bool,
) -> Result<ExportSchema, ExportError> {
    let chosen = (!columns.is_empty()).then_some(columns);
    export_schema(set, chosen).map(|schema| {
        if redact {
            schema.redacted(NameMap(crate::report::redact::redact_kind_name))
        } else {
            schema
        }
    })
}

/// The download's file name (redacted when asked).
fn download_name(set: &TraceSet, format: ExportFormat, redact: bool) -> String {
    let name = file_name(set, format);
    if redact {
        crate::report::redact::redact_file_name(&name)
    } else {
        name
    }
}

fn failed(e: impl std::fmt::Display) -> FromWorker {
    FromWorker::Error {
        message: format!("could not export the table: {e}"),
    }
}

/// Calls `f` with the kept set, or says none is loaded.
pub(super) fn with_loaded<T>(f: impl FnOnce(&TraceSet) -> Result<T, String>) -> Result<T, String> {
    LOADED.with(|l| match l.borrow().as_ref() {
        None => Err("no trace is loaded in the worker; load the files again".to_string()),
        Some(set) => f(set),
    })
}

/// The kept set's event table as a file (Parquet, Arrow IPC or CSV), posted with its bytes
/// transferred (Parquet and Arrow once the exporter has written them).
pub fn export_table(format: ExportFormat, columns: &[String], redact: bool) {
    if format != ExportFormat::Csv {
        return export_by_exporter(format, columns.to_vec(), redact);
    }
    let made = with_loaded(|set| {
        schema_of(set, columns, redact)
            .and_then(|schema| csv_bytes(set, &schema))
            .map(|bytes| (bytes, download_name(set, format, redact)))
            .map_err(|e| format!("could not export the table: {e}"))
    });
    match made {
        Ok((bytes, file_name)) => post_bytes(
            &FromWorker::DownloadBytes {
                file_name,
                mime: format.mime().into(),
                bytes: bytes.len() as u64,
            },
            &bytes,
        ),
        Err(message) => post(&FromWorker::Error { message }),
    }
}

fn export_by_exporter(format: ExportFormat, columns: Vec<String>, redact: bool) {
    let send: SendColumns = Box::new(move |sender, as_text| {
        with_loaded(|set| {
            let schema = schema_of(set, &columns, redact).map_err(|e| e.to_string())?;
            let schema = if as_text {
                schema.with_args_as_text()
            } else {
                schema
            };
            sender.file(Encoding::File(format), &schema, plain_ranks(set, &schema))
        })
    });
    let failure = Box::new(move |typed, as_text| {
        ExportError::Encode {
            format,
            typed,
            as_text,
        }
        .to_string()
    });
    let done: Done = Box::new(move |files| match files {
        Ok(files) => post_file(format, redact, files),
        Err(message) => post(&failed(message)),
    });
    run(vec![Job { send, failure }], done);
}

/// Posts the exporter's file on to the page (its buffer transferred again, not copied).
fn post_file(format: ExportFormat, redact: bool, files: Vec<js_sys::ArrayBuffer>) {
    let Some(buffer) = files.into_iter().next() else {
        return post(&failed("the exporter sent no file"));
    };
    let file_name = LOADED.with(|l| {
        l.borrow()
            .as_ref()
            .map_or_else(String::new, |set| download_name(set, format, redact))
    });
    let msg = FromWorker::DownloadBytes {
        file_name,
        mime: format.mime().into(),
        bytes: buffer.byte_length() as u64,
    };
    if !post_with_buffers(&msg, &[buffer]) {
        post(&failed("the worker could not send the file to the page"));
    }
}
