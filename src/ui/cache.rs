//! The opt-in IndexedDB cache of results (summaries, report, analyses; never the raw trace).

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{File, IdbDatabase, IdbOpenDbRequest, IdbRequest, IdbTransactionMode};

const DB_NAME: &str = "profile-model";
const STORE: &str = "saved-results";

/// The key of a set of files: name, size and last-modified time of each, sorted.
pub fn key_of(files: &[File]) -> String {
    let mut parts: Vec<String> = files
        .iter()
        .map(|f| {
            format!(
                "{}:{}:{}",
                f.name(),
                f.size() as u64,
                f.last_modified() as u64
            )
        })
        .collect();
    parts.sort();
    parts.join("|")
}

/// Waits for an IndexedDB request; resolves with its result.
async fn done(request: &IdbRequest) -> Result<JsValue, JsValue> {
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
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
    });
    JsFuture::from(promise).await
}

async fn open() -> Result<IdbDatabase, JsValue> {
    let factory = web_sys::window()
        .ok_or("no window")?
        .indexed_db()?
        .ok_or("IndexedDB is not available")?;
    let request: IdbOpenDbRequest = factory.open_with_u32(DB_NAME, 1)?;
    let upgrade_request = request.clone();
    let on_upgrade = Closure::once(move |_: web_sys::Event| {
        if let Ok(db) = upgrade_request.result() {
            let db: IdbDatabase = db.unchecked_into();
            if !db.object_store_names().contains(STORE) {
                let _ = db.create_object_store(STORE);
            }
        }
    });
    request.set_onupgradeneeded(Some(on_upgrade.as_ref().unchecked_ref()));
    on_upgrade.forget();
    Ok(done(&request).await?.unchecked_into())
}

/// The saved JSON text under `key`, if any.
pub async fn get(key: &str) -> Result<Option<String>, JsValue> {
    let db = open().await?;
    let store = db
        .transaction_with_str_and_mode(STORE, IdbTransactionMode::Readonly)?
        .object_store(STORE)?;
    let value = done(&store.get(&JsValue::from_str(key))?).await?;
    db.close();
    Ok(value.as_string())
}

/// Saves JSON text under `key`.
pub async fn put(key: &str, json: &str) -> Result<(), JsValue> {
    let db = open().await?;
    let store = db
        .transaction_with_str_and_mode(STORE, IdbTransactionMode::Readwrite)?
        .object_store(STORE)?;
    done(&store.put_with_key(&JsValue::from_str(json), &JsValue::from_str(key))?).await?;
    db.close();
    Ok(())
}

/// Whether a storage error says the browser's quota for this page is used up.
pub fn is_quota_error(e: &JsValue) -> bool {
    e.dyn_ref::<web_sys::DomException>()
        .is_some_and(|d| d.name() == "QuotaExceededError")
}

/// Forgets every saved result.
pub async fn clear() -> Result<(), JsValue> {
    let db = open().await?;
    let store = db
        .transaction_with_str_and_mode(STORE, IdbTransactionMode::Readwrite)?
        .object_store(STORE)?;
    done(&store.clear()?).await?;
    db.close();
    Ok(())
}
