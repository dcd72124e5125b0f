//! Entry point of the exporter worker (wasm32 only): writes a Parquet or Arrow IPC file of the columns
//! the worker sends it, so that those writers are not in the worker's wasm
//! ([`profile_model::protocol::exporter`]).

#[cfg(target_arch = "wasm32")]
fn main() {
    profile_model::worker::exporter::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("the exporter binary only runs in the browser (wasm32)");
}
