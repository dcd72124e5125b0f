//! The roofline: achieved against possible. FLOPs and bytes of each kernel and operator from the
//! `record_shapes` args ([`model`]), given to kernels through their launch ([`attribute`]), judged
//! against the device's roof ([`device`]) at their arithmetic intensity ([`rows`]); per step, model
//! FLOPs and MFU.

pub mod args;
pub mod attribute;
pub mod device;
pub mod kinds;
pub mod model;
pub mod rows;

use serde::{Deserialize, Serialize};

use super::gpu::{us, RankPrep};
use super::options::{AnalysisOptions, Mode};
use super::views::HostOps;
use crate::table::{TraceSet, TraceTable};
pub use device::{device_roof, DeviceProps, DeviceRoof, HostLink, PeerLink};
pub use kinds::{Bound, Dtype, LinkKind, MissingReason, OpFamily, PeerLinkKind, RoofSource};
pub use rows::{Judged, KernelRoofline, MissingCount, OperatorRoofline, StepRoofline};

/// The roofline of one rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RankRoofline {
    pub rank: i64,
    pub roof: DeviceRoof,
    /// Σ duration of device operations (kernels, copies, sets, collectives) in the window, µs.
    pub device_time_us: f64,
    /// The part of it with FLOP/byte figures, µs.
    pub time_with_figures_us: f64,
    /// Σ modelled FLOPs and bytes.
    pub flops: f64,
    pub bytes: f64,
    /// The trace has `Input Dims` (was recorded with `record_shapes=True`).
    pub has_shapes: bool,
    /// Kernel names, largest time first (at most [`rows::MAX_ROWS`]).
    pub kernels: Vec<KernelRoofline>,
    /// Operators by (name, shapes, type), largest kernel time first.
    pub operators: Vec<OperatorRoofline>,
    /// Device time without figures, by reason.
    pub missing: Vec<MissingCount>,
    /// Model FLOPs and MFU per profiler step in the window (empty without steps).
    pub steps: Vec<StepRoofline>,
    pub notes: Vec<String>,
}

/// The roofline of every rank of a set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RooflineResult {
    pub ranks: Vec<RankRoofline>,
}

/// The roofline of a set (exact mode; `opts.steps`/`opts.window_ns` choose the window).
pub fn roofline(set: &TraceSet, opts: &AnalysisOptions) -> RooflineResult {
    let opts = AnalysisOptions {
        mode: Mode::Exact,
        ..opts.clone()
    };
    RooflineResult {
        ranks: set
            .ranks
            .iter()
            .map(|r| {
                let prep = RankPrep::new(&r.table, &opts);
                roofline_prepared(r.rank, &prep)
            })
            .collect(),
    }
}

/// The device roof of a table (from its `deviceProperties`).
pub fn roof_of_table(t: &TraceTable) -> DeviceRoof {
    device_roof(&DeviceProps::of(&t.metadata.top_level))
}

/// The roofline of one rank over the window of `prep` (which should be exact mode).
pub fn roofline_prepared(rank: i64, prep: &RankPrep) -> RankRoofline {
    let t = prep.table;
    let roof = roof_of_table(t);
    let h = HostOps::new(t);
    let a = attribute::attribute(prep, &h);
    let device_ns: i64 = a.kernels.iter().map(|k| k.dur_ns).sum();
    let with: Vec<_> = a
        .kernels
        .iter()
        .filter_map(|k| k.figures.ok().map(|f| (k, f)))
        .collect();
    let with_ns: i64 = with.iter().map(|(k, _)| k.dur_ns).sum();
    let mut notes = Vec::new();
    if !a.has_shapes {
        notes.push(
            "the trace has no Input Dims: profile with record_shapes=True for FLOPs and bytes of operators"
                .to_string(),
        );
    }
    if !roof.note.is_empty() {
        notes.push(roof.note.clone());
    }
    let kept: Vec<_> = prep
        .steps
        .iter()
        .filter(|s| prep.kept_steps.contains(&s.step))
        .cloned()
        .collect();
    RankRoofline {
        rank,
        device_time_us: us(device_ns),
        time_with_figures_us: us(with_ns),
        flops: with.iter().map(|(_, f)| f.flops).sum(),
        bytes: with.iter().map(|(_, f)| f.bytes).sum(),
        has_shapes: a.has_shapes,
        kernels: rows::kernel_rows(t, &a, &roof),
        operators: rows::operator_rows(t, &a, &roof),
        missing: rows::missing_counts(&a),
        steps: rows::step_rows(&a, &kept, &roof),
        notes,
        roof,
    }
}
