//! Profile Model: turns a PyTorch profiler (Kineto) trace into columnar tables, analyses and a diagnosis.
//!
//! Layers point one way: [`trace`] (bytes → events, resumable across chunks) → [`table`] (arrow2
//! columns, one table per rank) → [`analysis`] (pure, deterministic analyses) → [`report`] (the diagnosis: plain serde
//! structs and Markdown) → [`page`] (the page's state and view models, native). Browser-only code (`ui`, `worker`) sits behind `cfg(target_arch = "wasm32")`;
//! the native command line lives in [`cli`], the MCP server for agents in [`mcp`], both over [`commands`].

pub mod analysis;
pub mod export;
pub mod page;
pub mod protocol;
pub mod report;
pub mod sort;
pub mod stable_name;
pub mod table;
pub mod trace;

#[cfg(not(target_arch = "wasm32"))]
pub mod cli;
/// What the commands write, shared by the CLI and the MCP server (native).
#[cfg(not(target_arch = "wasm32"))]
pub mod commands;
/// Harnesses of the fuzz targets (`fuzz/`) and the stable smoke test.
#[cfg(not(target_arch = "wasm32"))]
pub mod fuzzing;
/// A trace file or a rank folder → a `TraceSet` (native: files in parallel, the `--cache`).
#[cfg(not(target_arch = "wasm32"))]
pub mod load;
/// The MCP server for AI agents (`profile-model mcp`, native).
#[cfg(not(target_arch = "wasm32"))]
pub mod mcp;
/// The sample trace ("Try a sample", `profile-model sample DIR`).
pub mod sample;

#[cfg(target_arch = "wasm32")]
pub mod ui;
/// The Web Worker (wasm32 only, apart from its native split plan, `worker::shard_plan`).
pub mod worker;

pub use table::TraceLoader;
pub use table::TraceTable;
pub use trace::LoadError;
