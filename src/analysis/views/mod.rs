//! The aggregations behind the TensorBoard-style views: operators, GPU kernels, step time and
//! memory. Each is a pure function of one rank's table; [`HostOps`] is the call-stack structure the
//! first two share (which CPU operator each host row and each device row belongs to).

pub mod kernel_table;
pub mod memory;
pub mod modules;
pub mod operators;
pub mod step_time;

use super::callstack::{build_forest, launchers, NONE};
use super::frame::Frame;
use super::names::NameClasses;
use super::options::Mode;
use super::step_filter::{step_range_window, StepRange};
use crate::table::{EventKind, TraceTable};

/// Host rows nested into call stacks per thread, each mapped to its CPU operator, and each device
/// row to the operator that launched it (through its runtime call's correlation id).
pub struct HostOps {
    /// Exact-mode times and membership.
    pub frame: Frame,
    /// Parent row in the call stack (`NONE` for roots and rows outside it).
    pub parent: Vec<u32>,
    /// The innermost CPU operator at or above each host row (`NONE`: none).
    pub op_of: Vec<u32>,
    /// The innermost CPU operator strictly above each host row.
    pub parent_op: Vec<u32>,
    /// The host row (runtime call preferred) that launched each device row.
    pub launcher: Vec<u32>,
    /// The classes of every name of the table.
    pub names: NameClasses,
}

/// The host rows the call stacks hold: operators, annotations, Python frames and runtime calls.
fn is_host_row(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::CpuOp
            | EventKind::UserAnnotation
            | EventKind::PythonFunction
            | EventKind::Runtime
            | EventKind::Driver
    )
}

impl HostOps {
    pub fn new(t: &TraceTable) -> HostOps {
        Self::within(t, None)
    }

    /// [`HostOps::new`] over the ProfilerSteps of `steps` only (`None`, or a range the rank has no
    /// step in: the whole trace): the host rows starting in those steps and the device rows they
    /// launched ([`Frame::keep_window`], the window of [`step_range_window`]).
    pub fn within(t: &TraceTable, steps: Option<StepRange>) -> HostOps {
        let mut frame = Frame::new(t, Mode::Exact);
        let spans = super::gpu::step_spans(t, Mode::Exact);
        let window = steps.and_then(|range| {
            step_range_window(spans.iter().map(|s| (s.step, s.ts, s.end)), range)
        });
        if let Some(window) = window {
            frame.keep_window(t, window);
            for r in 0..t.len() {
                frame.member[r] = frame.keeps(r);
            }
        }
        let n = t.len();
        let host: Vec<bool> = (0..n)
            .map(|r| frame.member[r] && is_host_row(t.kind_at(r)))
            .collect();
        let forest = build_forest(t, &host, &frame.ts, &frame.end);
        let mut op_of = vec![NONE; n];
        let mut parent_op = vec![NONE; n];
        for &r in &forest.preorder {
            let r = r as usize;
            let p = forest.parent[r];
            parent_op[r] = if p == NONE { NONE } else { op_of[p as usize] };
            op_of[r] = if t.kind_at(r) == EventKind::CpuOp {
                r as u32
            } else {
                parent_op[r]
            };
        }
        let launcher = launchers(t, &frame.member, &frame.device);
        HostOps {
            frame,
            parent: forest.parent,
            op_of,
            parent_op,
            launcher,
            names: NameClasses::of(t),
        }
    }

    /// The CPU operator that launched device row `d`, if any.
    pub fn op_of_device(&self, d: usize) -> Option<usize> {
        let l = self.launcher[d];
        if l == NONE {
            return None;
        }
        let o = self.op_of[l as usize];
        (o != NONE).then_some(o as usize)
    }

    /// Duration of a row in the frame, ns.
    pub fn dur(&self, r: usize) -> i64 {
        self.frame.end[r] - self.frame.ts[r]
    }
}

pub(crate) use super::gpu::us;

/// One rank's result of a view.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RankView<T> {
    pub rank: i64,
    pub result: T,
}

/// A view's result for every rank of a set.
pub fn per_rank<T>(
    set: &crate::table::TraceSet,
    view: impl Fn(&TraceTable) -> T,
) -> Vec<RankView<T>> {
    set.ranks
        .iter()
        .map(|r| RankView {
            rank: r.rank,
            result: view(&r.table),
        })
        .collect()
}

/// Every view of one rank, from one set of call stacks.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RankViews {
    pub rank: i64,
    pub operators: operators::OperatorsResult,
    pub operators_by_shape: operators::OperatorsResult,
    pub kernels: kernel_table::KernelsResult,
    pub step_time: step_time::StepTimeResult,
    pub memory: memory::MemoryResult,
    pub modules: modules::ModulesResult,
}

impl RankViews {
    pub fn of(rank: i64, t: &TraceTable) -> RankViews {
        Self::of_steps(rank, t, None)
    }

    /// Every view of one rank over the ProfilerSteps of `steps` ([`HostOps::within`]).
    pub fn of_steps(rank: i64, t: &TraceTable, steps: Option<StepRange>) -> RankViews {
        let h = HostOps::within(t, steps);
        RankViews {
            rank,
            operators: operators::operators_in(t, &h, false),
            operators_by_shape: operators::operators_in(t, &h, true),
            kernels: kernel_table::kernels_in(t, &h),
            step_time: step_time::step_time_in(t, &h),
            memory: memory::memory_in(t, Some(&h)),
            modules: modules::modules_in(t, &h),
        }
    }
}

/// Every view of every rank of a set.
pub fn all_views(set: &crate::table::TraceSet) -> Vec<RankViews> {
    all_views_in(set, None)
}

/// Every view of every rank of a set over the ProfilerSteps of `steps` (`None`: the whole trace).
pub fn all_views_in(set: &crate::table::TraceSet, steps: Option<StepRange>) -> Vec<RankViews> {
    set.ranks
        .iter()
        .map(|r| RankViews::of_steps(r.rank, &r.table, steps))
        .collect()
}
