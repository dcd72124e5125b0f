//! Entry point of the Web Worker that loads and analyses traces off the main thread (wasm32 only).

#[cfg(target_arch = "wasm32")]
fn main() {
    profile_model::worker::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("the worker binary only runs in the browser (wasm32)");
}
