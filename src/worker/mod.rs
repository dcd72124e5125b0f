//! The Web Worker (wasm32 only): loads files in slices and runs analyses off the main thread.

pub fn start() {}
