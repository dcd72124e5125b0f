//! The loader: the drop zone and the two file pickers (files, folder), and the walk of dropped folders.
//! Once results are shown it shrinks to one line of buttons (still a drop target).

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{DragEvent, File, FileSystemDirectoryEntry, FileSystemEntry, FileSystemFileEntry};

use super::AppState;

/// What the file inputs accept.
const ACCEPT: &str = ".json,.gz,application/json,application/gzip";

/// Every file picked in a file input.
pub(super) fn trace_files_of(list: Option<web_sys::FileList>) -> Vec<File> {
    files_of(list, false)
}

fn files_of(list: Option<web_sys::FileList>, only_traces: bool) -> Vec<File> {
    let Some(list) = list else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| list.get(i))
        .filter(|f| !only_traces || crate::table::is_trace_file_name(&f.name()))
        .collect()
}

async fn callback_promise(
    start: impl FnOnce(&js_sys::Function, &js_sys::Function) -> Result<(), JsValue>,
) -> Result<JsValue, JsValue> {
    let mut start = Some(start);
    let mut failed = None;
    let promise = js_sys::Promise::new(&mut |resolve, reject| {
        if let Some(start) = start.take() {
            if let Err(e) = start(&resolve, &reject) {
                failed = Some(e);
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    JsFuture::from(promise).await
}

/// Every trace file under the dropped entries (folders are walked).
async fn files_of_entries(mut stack: Vec<FileSystemEntry>) -> Vec<File> {
    let mut files = Vec::new();
    while let Some(entry) = stack.pop() {
        if entry.is_file() {
            if !crate::table::is_trace_file_name(&entry.name()) {
                continue;
            }
            let file_entry: FileSystemFileEntry = entry.unchecked_into();
            let got = callback_promise(|ok, err| {
                file_entry.file_with_callback_and_callback(ok, err);
                Ok(())
            })
            .await;
            if let Ok(f) = got {
                files.push(f.unchecked_into::<File>());
            }
        } else if entry.is_directory() {
            let dir: FileSystemDirectoryEntry = entry.unchecked_into();
            let reader = dir.create_reader();
            loop {
                let batch = callback_promise(|ok, err| {
                    reader.read_entries_with_callback_and_callback(ok, err)
                })
                .await;
                let Ok(batch) = batch else { break };
                let batch: js_sys::Array = batch.unchecked_into();
                if batch.length() == 0 {
                    break;
                }
                stack.extend(batch.iter().map(|e| e.unchecked_into::<FileSystemEntry>()));
            }
        }
    }
    crate::sort::sort_by_key(&mut files, |f| f.name());
    files
}

/// The files of a drop go to `on_files` (a dropped folder's trace files, once it has been walked).
fn on_drop(dragging: RwSignal<bool>, on_files: Callback<Vec<File>>, ev: DragEvent) {
    ev.prevent_default();
    dragging.set(false);
    let Some(transfer) = ev.data_transfer() else {
        return;
    };
    // Entries must be taken while the event is live; folders are then walked asynchronously.
    let items = transfer.items();
    let mut entries = Vec::new();
    let mut has_folder = false;
    for i in 0..items.length() {
        if let Some(item) = items.get(i) {
            if let Ok(Some(entry)) = item.webkit_get_as_entry() {
                has_folder |= entry.is_directory();
                entries.push(entry);
            }
        }
    }
    if has_folder {
        leptos::task::spawn_local(async move {
            on_files.run(files_of_entries(entries).await);
        });
    } else {
        on_files.run(files_of(transfer.files(), false));
    }
}

/// The files picked in a file input (only trace files when `only_traces`); the input is emptied, so
/// that picking the same files again loads them again.
fn picked(ev: &leptos::ev::Event, only_traces: bool) -> Vec<File> {
    let input: web_sys::HtmlInputElement = event_target(ev);
    let files = files_of(input.files(), only_traces);
    input.set_value("");
    files
}

/// The loader: whatever is dropped or picked starts a load.
#[component]
pub fn Loader(state: AppState) -> impl IntoView {
    let on_files = Callback::new(move |files: Vec<File>| super::start_load(state, files));
    let compact = state.select(|p| p.shown().is_some());
    view! { <DropZone dragging=state.dragging on_files compact/> }
}

/// The drop zone, highlighted while something is dragged over it, with a file and a folder picker.
#[component]
fn DropZone(
    dragging: RwSignal<bool>,
    on_files: Callback<Vec<File>>,
    #[prop(into)] compact: Signal<bool>,
) -> impl IntoView {
    view! {
        <section class="loader" class:compact=move || compact.get()>
            <div
                id="drop-zone"
                class="drop-zone"
                class:dragging=move || dragging.get()
                class:compact=move || compact.get()
                on:dragover=move |ev: DragEvent| {
                    ev.prevent_default();
                    dragging.set(true);
                }
                on:dragleave=move |_| dragging.set(false)
                on:drop=move |ev: DragEvent| on_drop(dragging, on_files, ev)
            >
                <p class="drop-title">{move || if compact.get() { "Load another trace: drop it here, or" } else { "Drop trace files or a folder here" }}</p>
                <p class="muted drop-hint">
                    "A .json or .json.gz written by torch.profiler; several files = one per rank of the same job."
                </p>
                <div class="pickers">
                    <label class="button">
                        "Choose files"
                        <input
                            type="file"
                            id="file-input"
                            class="visually-hidden"
                            multiple=true
                            accept=ACCEPT
                            on:change=move |ev| on_files.run(picked(&ev, false))
                        />
                    </label>
                    <label class="button secondary">
                        "Choose a folder"
                        <input
                            type="file"
                            id="dir-input"
                            class="visually-hidden"
                            prop:webkitdirectory=true
                            on:change=move |ev| on_files.run(picked(&ev, true))
                        />
                    </label>
                </div>
            </div>
        </section>
    }
}

/// The first screen's offers while nothing is loaded: a sample and how to record a trace.
#[component]
pub fn FirstStepsWhileEmpty(state: AppState) -> impl IntoView {
    let empty = state.select(|p| p.shown().is_none() && !p.is_loading());
    move || {
        empty
            .get()
            .then(|| view! { <super::sample::FirstSteps state/> })
    }
}
