//! "Try a sample" and "How to record a trace" on the first screen: the sample job's rank files are
//! served with the page (`samples/`, written by `profile-model sample`) and loaded as if dropped.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::File;

use super::AppState;

/// Fetches one sample file from the page's own origin as a `File`.
async fn fetch_file(name: &str) -> Result<File, String> {
    let window = web_sys::window().ok_or("no window")?;
    let url = format!("samples/{name}");
    let said = |e: wasm_bindgen::JsValue| {
        format!(
            "{url}: {}",
            e.as_string().unwrap_or_else(|| format!("{e:?}"))
        )
    };
    let response: web_sys::Response = JsFuture::from(window.fetch_with_str(&url))
        .await
        .map_err(said)?
        .dyn_into()
        .map_err(said)?;
    if !response.ok() {
        return Err(format!("{url}: the server answered {}", response.status()));
    }
    let blob: web_sys::Blob = JsFuture::from(response.blob().map_err(said)?)
        .await
        .map_err(said)?
        .dyn_into()
        .map_err(said)?;
    File::new_with_blob_sequence(&js_sys::Array::of1(&blob), name).map_err(said)
}

/// Fetches every rank file of the sample, then loads them as one job.
fn load_sample(state: AppState) {
    leptos::task::spawn_local(async move {
        let mut files = Vec::new();
        for name in crate::sample::file_names() {
            match fetch_file(&name).await {
                Ok(f) => files.push(f),
                Err(e) => {
                    state.page.update(|p| {
                        p.notice = Some(format!("The sample could not be fetched ({e})."))
                    });
                    return;
                }
            }
        }
        super::start_load(state, files);
    });
}

/// The button and the recording recipe, under the drop zone while nothing is loaded.
#[component]
pub fn FirstSteps(state: AppState) -> impl IntoView {
    view! {
        <div class="first-steps">
            <button type="button" id="try-sample" class="button secondary" on:click=move |_| load_sample(state)>
                "Try a sample"
            </button>
            <span class="muted">" a 4-rank training job made by this project: a DataLoader stall, launch overhead, a sync, one late rank."</span>
            <details id="how-to-record">
                <summary>"How to record a trace"</summary>
                <pre><code>{RECORD_RECIPE}</code></pre>
                <p class="muted">
                    "Record a few steady steps after warm-up (the schedule), with shapes (for FLOPs and the roofline), memory and stacks. "
                    "Each rank writes its own file: drop the folder, or all files at once."
                </p>
            </details>
        </div>
    }
}

/// The `torch.profiler` recipe the panel shows.
const RECORD_RECIPE: &str = r#"from torch.profiler import profile, schedule, ProfilerActivity, tensorboard_trace_handler

with profile(
    activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
    schedule=schedule(wait=1, warmup=2, active=3),   # skip the cold first steps
    on_trace_ready=tensorboard_trace_handler("./traces"),  # one .json per rank
    record_shapes=True, profile_memory=True, with_stack=True,
) as prof:
    for step, batch in enumerate(loader):
        train_step(batch)
        prof.step()
        if step >= 6:
            break"#;
