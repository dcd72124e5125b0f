//! What the worker and its exporter worker tell each other: the exporter (its own wasm, `src/bin/exporter.rs`,
//! fetched only when the page asks for a Parquet or Arrow file) holds the Arrow IPC and Parquet
//! writers, so the worker does not. Worker → exporter: one `Uint8Array` of [`ToExporter`] per message
//! ([`ToExporter::Begin`], one [`ToExporter::Rank`] per rank with rows, [`ToExporter::End`]);
//! exporter → worker: [`FromExporter`], `[bytes(Done), ArrayBuffer]` with the file.

use serde::{Deserialize, Serialize};

use crate::export::{Encoding, ExportColumn, PlainValues};

/// The worker's side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ToExporter {
    /// A new file (or SQL table's stream) with these columns (what was sent before is dropped).
    Begin {
        encoding: Encoding,
        columns: Vec<ExportColumn>,
    },
    /// The next rank's columns, in the order of `columns` ([`crate::export::plain_ranks`]).
    Rank(Vec<PlainValues>),
    /// Every rank was sent: write the file.
    End,
}

/// The exporter's side.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum FromExporter {
    /// Its wasm runs: the worker may send the columns.
    Ready,
    /// The file follows as an `ArrayBuffer`.
    Done,
    /// The encoding failed (the worker then tries again with every `args_*` column as text).
    Failed { message: String },
}
