//! The worker's side of the cache (wasm32 only): each rank's table as bytes for the page to store
//! after Keep, and a set rebuilt from those bytes without the file ([`crate::table::store`]).

use wasm_bindgen::prelude::*;

use super::load::{forget_set, keep_set};
use super::{post, post_with_buffers, LOADED};
use crate::protocol::FromWorker;
use crate::table::store::{table_from_plain, table_to_plain, STORE_FORMAT};
use crate::table::TraceSet;

/// Posts `[json(Tables), ArrayBuffer per rank]`, the buffers transferred to the page.
pub fn store_tables() {
    let made = LOADED.with(|l| match l.borrow().as_ref() {
        None => Err("no trace is loaded in the worker".to_string()),
        Some(set) => set
            .ranks
            .iter()
            .map(|r| table_to_plain(&r.table).map_err(|e| e.to_string()))
            .collect::<Result<Vec<_>, _>>(),
    });
    let tables = match made {
        Ok(t) => t,
        Err(message) => return post(&FromWorker::TablesFailed { message }),
    };
    let msg = FromWorker::Tables {
        format: STORE_FORMAT,
        bytes: tables.iter().map(|t| t.len() as u64).collect(),
    };
    let buffers: Vec<js_sys::ArrayBuffer> = tables
        .iter()
        .map(|t| js_sys::Uint8Array::from(t.as_slice()).buffer())
        .collect();
    if !post_with_buffers(&msg, &buffers) {
        post(&FromWorker::TablesFailed {
            message: "the worker could not send the tables to the page".into(),
        });
    }
}

/// Rebuilds the set from saved tables (one `ArrayBuffer` per rank), then answers as a load does.
pub fn restore(buffers: Vec<JsValue>) {
    forget_set();
    let started_ms = js_sys::Date::now();
    let mut tables = Vec::with_capacity(buffers.len());
    let mut times = Vec::with_capacity(buffers.len());
    for b in &buffers {
        let t0 = js_sys::Date::now();
        let bytes = js_sys::Uint8Array::new(b).to_vec();
        match table_from_plain(&bytes) {
            Ok(t) => {
                times.push((t.file.clone(), js_sys::Date::now() - t0));
                tables.push(t);
            }
            Err(e) => {
                return post(&FromWorker::RestoreFailed {
                    message: e.to_string(),
                })
            }
        }
    }
    if tables.is_empty() {
        return post(&FromWorker::RestoreFailed {
            message: "no table was saved".into(),
        });
    }
    let set = TraceSet::from_loads(tables.into_iter().map(Ok).collect());
    let loaded = keep_set(set, &times, started_ms, "saved");
    post(&FromWorker::Loaded(loaded));
}
