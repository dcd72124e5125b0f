//! Pure, deterministic analyses of [`TraceTable`](crate::table::TraceTable)s: one file per analysis.
//! No clocks, no rendering, no hash-order leaks: the same table gives the same result.

pub mod all;
pub mod bounded;
pub mod callstack;
pub mod collectives;
pub mod critical_path;
pub mod frame;
pub mod gpu;
pub mod idle;
pub mod intervals;
pub mod kernel_merge;
pub mod kernels;
pub mod launch;
pub mod memcpy;
pub mod merge;
pub mod names;
pub mod one_off;
pub mod options;
pub mod overlap;
pub mod queue;
pub mod rank_lanes;
pub mod registry;
pub mod roofline;
pub mod sequences;
pub mod step_filter;
pub mod steps;
pub mod stragglers;
pub mod summary;
pub mod temporal;
pub mod timeline;
pub mod views;
