//! Pure, deterministic analyses of [`TraceTable`](crate::table::TraceTable)s: one file per analysis.
//! No clocks, no rendering, no hash-order leaks: the same table gives the same result.

pub mod all;
pub mod callstack;
pub mod critical_path;
pub mod sequences;
pub mod summary;
