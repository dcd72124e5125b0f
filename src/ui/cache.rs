//! The opt-in IndexedDB cache, written only after the user says Keep. Three object stores:
//! `saved-results` (the results as JSON, keyed by the set's key), `saved-tables` (each rank's table
//! as Arrow IPC bytes, keyed by [`table_key`]) and `saved-index` (one small [`SavedEntry`] per set,
//! so the list of saved traces never reads the tables).

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    File, IdbDatabase, IdbOpenDbRequest, IdbRequest, IdbTransaction, IdbTransactionMode,
};

use crate::page::saved::{table_key, SavedEntry, SavedFile};

const DB_NAME: &str = "profile-model";
/// 1: results only; 2: the tables and the index too.
const DB_VERSION: u32 = 2;
const RESULTS: &str = "saved-results";
const TABLES: &str = "saved-tables";
const INDEX: &str = "saved-index";

/// How the browser describes these files.
pub fn files_of(files: &[File]) -> Vec<SavedFile> {
    files
        .iter()
        .map(|f| SavedFile {
            name: f.name(),
            size: f.size() as u64,
            last_modified: f.last_modified() as u64,
        })
        .collect()
}

/// A promise settled by `setup(resolve, reject)`'s callbacks.
async fn settle(
    setup: impl FnOnce(js_sys::Function, js_sys::Function),
) -> Result<JsValue, JsValue> {
    let mut setup = Some(setup);
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
        if let Some(setup) = setup.take() {
            setup(resolve, reject);
        }
    });
    JsFuture::from(promise).await
}

/// Waits for an IndexedDB request; resolves with its result.
async fn done(request: &IdbRequest) -> Result<JsValue, JsValue> {
    settle(|resolve, reject| {
        let ok_request = request.clone();
        let on_success = Closure::once(move |_: web_sys::Event| {
            let result = ok_request.result().unwrap_or(JsValue::UNDEFINED);
            let _ = resolve.call1(&JsValue::NULL, &result);
        });
        let failed_request = request.clone();
        let on_error = Closure::once(move |_: web_sys::Event| {
            // The request's DOMException (QuotaExceededError, ...) when there is one.
            let error = failed_request
                .error()
                .ok()
                .flatten()
                .map(JsValue::from)
                .unwrap_or_else(|| JsValue::from_str("IndexedDB request failed"));
            let _ = reject.call1(&JsValue::NULL, &error);
        });
        request.set_onsuccess(Some(on_success.as_ref().unchecked_ref()));
        request.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_success.forget();
        on_error.forget();
    })
    .await
}

/// Waits for a transaction to commit (a full quota often shows only here, as its abort).
async fn committed(tx: &IdbTransaction) -> Result<(), JsValue> {
    settle(|resolve, reject| {
        let on_complete = Closure::once(move |_: web_sys::Event| {
            let _ = resolve.call0(&JsValue::NULL);
        });
        let failed = tx.clone();
        let on_abort = Closure::once(move |_: web_sys::Event| {
            let error = failed
                .error()
                .map(JsValue::from)
                .unwrap_or_else(|| JsValue::from_str("IndexedDB transaction aborted"));
            let _ = reject.call1(&JsValue::NULL, &error);
        });
        tx.set_oncomplete(Some(on_complete.as_ref().unchecked_ref()));
        tx.set_onabort(Some(on_abort.as_ref().unchecked_ref()));
        on_complete.forget();
        on_abort.forget();
    })
    .await
    .map(|_| ())
}

fn factory() -> Result<web_sys::IdbFactory, JsValue> {
    web_sys::window()
        .ok_or("no window")?
        .indexed_db()?
        .ok_or_else(|| "IndexedDB is not available".into())
}

/// Whether the page's database exists, asked without creating it (`indexedDB.databases()`; a
/// browser without it is answered yes).
async fn exists() -> bool {
    let Ok(factory) = factory() else {
        return false;
    };
    let databases = js_sys::Reflect::get(&factory, &"databases".into()).ok();
    let Some(f) = databases.and_then(|d| d.dyn_into::<js_sys::Function>().ok()) else {
        return true;
    };
    let Ok(promise) = f.call0(&factory) else {
        return true;
    };
    let Ok(list) = JsFuture::from(js_sys::Promise::from(promise)).await else {
        return true;
    };
    js_sys::Array::from(&list).iter().any(|db| {
        js_sys::Reflect::get(&db, &"name".into())
            .ok()
            .and_then(|n| n.as_string())
            .as_deref()
            == Some(DB_NAME)
    })
}

async fn open() -> Result<IdbDatabase, JsValue> {
    let request: IdbOpenDbRequest = factory()?.open_with_u32(DB_NAME, DB_VERSION)?;
    let upgrade_request = request.clone();
    let on_upgrade = Closure::once(move |_: web_sys::Event| {
        if let Ok(db) = upgrade_request.result() {
            let db: IdbDatabase = db.unchecked_into();
            for store in [RESULTS, TABLES, INDEX] {
                if !db.object_store_names().contains(store) {
                    let _ = db.create_object_store(store);
                }
            }
        }
    });
    request.set_onupgradeneeded(Some(on_upgrade.as_ref().unchecked_ref()));
    on_upgrade.forget();
    Ok(done(&request).await?.unchecked_into())
}

fn transaction(
    db: &IdbDatabase,
    stores: &[&str],
    mode: IdbTransactionMode,
) -> Result<IdbTransaction, JsValue> {
    let names = js_sys::Array::new();
    for s in stores {
        names.push(&JsValue::from_str(s));
    }
    db.transaction_with_str_sequence_and_mode(&names, mode)
}

/// The saved results under `key`, if any: their bytes (the UTF-8 of the JSON text older versions
/// stored, read as older by [`crate::page::page_state::decode_saved`]).
pub async fn get(key: &str) -> Result<Option<Vec<u8>>, JsValue> {
    let db = open().await?;
    let store = db
        .transaction_with_str_and_mode(RESULTS, IdbTransactionMode::Readonly)?
        .object_store(RESULTS)?;
    let value = done(&store.get(&JsValue::from_str(key))?).await?;
    db.close();
    Ok(match value.dyn_ref::<js_sys::Uint8Array>() {
        Some(bytes) => Some(bytes.to_vec()),
        None => value.as_string().map(String::into_bytes),
    })
}

/// Saves the results' bytes under `key`.
pub async fn put(key: &str, bytes: &[u8]) -> Result<(), JsValue> {
    let db = open().await?;
    let tx = db.transaction_with_str_and_mode(RESULTS, IdbTransactionMode::Readwrite)?;
    let stored = tx
        .object_store(RESULTS)?
        .put_with_key(&js_sys::Uint8Array::from(bytes), &JsValue::from_str(key));
    let result = match stored {
        Ok(_) => committed(&tx).await,
        Err(e) => Err(e),
    };
    db.close();
    result
}

/// Saves each rank's table bytes (`buffers`, in rank order) and the index entry, in one transaction:
/// all or nothing.
pub async fn put_tables(entry: &SavedEntry, buffers: &[JsValue]) -> Result<(), JsValue> {
    let db = open().await?;
    let tx = transaction(&db, &[TABLES, INDEX], IdbTransactionMode::Readwrite)?;
    let write = || -> Result<(), JsValue> {
        let tables = tx.object_store(TABLES)?;
        for (i, b) in buffers.iter().enumerate() {
            tables.put_with_key(b, &JsValue::from_str(&table_key(&entry.key, i)))?;
        }
        let json = serde_json::to_string(entry).map_err(|e| JsValue::from_str(&e.to_string()))?;
        tx.object_store(INDEX)?
            .put_with_key(&JsValue::from_str(&json), &JsValue::from_str(&entry.key))?;
        Ok(())
    };
    let result = match write() {
        Ok(()) => committed(&tx).await,
        Err(e) => {
            let _ = tx.abort();
            Err(e)
        }
    };
    db.close();
    result
}

/// Every index entry (none, and no database created, when nothing was ever kept). Entries that do
/// not parse are left out.
pub async fn list() -> Result<Vec<SavedEntry>, JsValue> {
    if !exists().await {
        return Ok(Vec::new());
    }
    let db = open().await?;
    let store = db
        .transaction_with_str_and_mode(INDEX, IdbTransactionMode::Readonly)?
        .object_store(INDEX)?;
    let all = done(&store.get_all()?).await?;
    db.close();
    Ok(js_sys::Array::from(&all)
        .iter()
        .filter_map(|v| v.as_string())
        .filter_map(|s| serde_json::from_str(&s).ok())
        .collect())
}

/// The table bytes of the set keyed `key` (`ranks` of them): `None` for an entry that is missing or
/// not bytes.
pub async fn get_tables(key: &str, ranks: usize) -> Result<Vec<Option<JsValue>>, JsValue> {
    let db = open().await?;
    let store = db
        .transaction_with_str_and_mode(TABLES, IdbTransactionMode::Readonly)?
        .object_store(TABLES)?;
    let mut out = Vec::with_capacity(ranks);
    for i in 0..ranks {
        let v = done(&store.get(&JsValue::from_str(&table_key(key, i)))?).await?;
        out.push(v.is_instance_of::<js_sys::ArrayBuffer>().then_some(v));
    }
    db.close();
    Ok(out)
}

/// Removes everything saved under `key`: results, tables (every `key#…`) and index entry.
pub async fn forget(key: &str) -> Result<(), JsValue> {
    if !exists().await {
        return Ok(());
    }
    let db = open().await?;
    let tx = transaction(
        &db,
        &[RESULTS, TABLES, INDEX],
        IdbTransactionMode::Readwrite,
    )?;
    let k = JsValue::from_str(key);
    tx.object_store(RESULTS)?.delete(&k)?;
    tx.object_store(INDEX)?.delete(&k)?;
    // IDBKeyRange.bound("key#", "key#\u{ffff}"): every table of this key.
    let range_class = js_sys::Reflect::get(&js_sys::global(), &"IDBKeyRange".into())?;
    let bound: js_sys::Function =
        js_sys::Reflect::get(&range_class, &"bound".into())?.dyn_into()?;
    let range = bound.call2(
        &range_class,
        &JsValue::from_str(&format!("{key}#")),
        &JsValue::from_str(&format!("{key}#\u{ffff}")),
    )?;
    tx.object_store(TABLES)?.delete(&range)?;
    let result = committed(&tx).await;
    db.close();
    result
}

/// Whether a storage error says the browser's quota for this page is used up.
pub fn is_quota_error(e: &JsValue) -> bool {
    e.dyn_ref::<web_sys::DomException>()
        .is_some_and(|d| d.name() == "QuotaExceededError")
}

/// Forgets every saved trace: results, tables and index.
pub async fn clear() -> Result<(), JsValue> {
    let db = open().await?;
    let tx = transaction(
        &db,
        &[RESULTS, TABLES, INDEX],
        IdbTransactionMode::Readwrite,
    )?;
    for store in [RESULTS, TABLES, INDEX] {
        tx.object_store(store)?.clear()?;
    }
    let result = committed(&tx).await;
    db.close();
    result
}
