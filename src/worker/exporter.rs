//! The exporter worker (wasm32 only; its own wasm, `src/bin/exporter.rs`): takes a file's columns from
//! the worker ([`ToExporter`]) and answers with the file ([`FromExporter`]); the Arrow IPC and
//! Parquet writers live here, not in the worker.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{DedicatedWorkerGlobalScope, MessageEvent};

use crate::export::{encode_plain, Encoding, ExportSchema, PlainValues};
use crate::protocol::codec;
use crate::protocol::exporter::{FromExporter, ToExporter};

/// The file being sent: its format, columns and the ranks received so far.
struct Job {
    encoding: Encoding,
    schema: ExportSchema,
    ranks: Vec<Vec<PlainValues>>,
}

thread_local! {
    static JOB: RefCell<Option<Job>> = const { RefCell::new(None) };
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

/// Posts `msg`, or `[msg, buffer]` with the buffer transferred.
fn post(msg: &FromExporter, buffer: Option<&js_sys::ArrayBuffer>) {
    let head = super::js_bytes(&codec::encode(msg).unwrap_or_default());
    let _ = match buffer {
        None => scope().post_message(&head),
        Some(b) => scope()
            .post_message_with_transfer(&js_sys::Array::of2(&head, b), &js_sys::Array::of1(b)),
    };
}

/// Starts the exporter: installs its message handler and says it is ready.
pub fn start() {
    console_error_panic_hook::set_once();
    let handler = Closure::<dyn FnMut(MessageEvent)>::new(on_message);
    scope().set_onmessage(Some(handler.as_ref().unchecked_ref()));
    handler.forget();
    post(&FromExporter::Ready, None);
}

fn on_message(event: MessageEvent) {
    let bytes = event
        .data()
        .dyn_into::<js_sys::Uint8Array>()
        .map(|b| b.to_vec())
        .unwrap_or_default();
    match codec::decode::<ToExporter>(&bytes) {
        Ok(ToExporter::Begin { encoding, columns }) => JOB.with(|j| {
            *j.borrow_mut() = Some(Job {
                encoding,
                schema: ExportSchema {
                    columns,
                    names: None,
                },
                ranks: Vec::new(),
            })
        }),
        Ok(ToExporter::Rank(columns)) => JOB.with(|j| {
            if let Some(job) = j.borrow_mut().as_mut() {
                job.ranks.push(columns);
            }
        }),
        Ok(ToExporter::End) => finish(),
        Err(e) => post(
            &FromExporter::Failed {
                message: format!("the exporter got a message it does not understand: {e}"),
            },
            None,
        ),
    }
}

/// Writes the file of what was sent and posts it.
fn finish() {
    let Some(job) = JOB.with(|j| j.borrow_mut().take()) else {
        return post(
            &FromExporter::Failed {
                message: "the exporter was sent no columns".into(),
            },
            None,
        );
    };
    let made = encode_plain(&job.schema, job.encoding, &job.ranks);
    drop(job);
    match made {
        Ok(file) => {
            let buffer = js_sys::Uint8Array::from(file.as_slice()).buffer();
            drop(file);
            post(&FromExporter::Done, Some(&buffer));
        }
        Err(message) => post(&FromExporter::Failed { message }, None),
    }
}
