//! The Leptos web app (wasm32 only): renders reports and talks to the worker; no analysis here.

pub fn mount() {}
