//! The page's one palette: a colour per cause, defined here once. Every chart, bar, legend and
//! timeline lane reads its colour from a [`Hue`] (the canvas by [`Hue::hex`], the HTML by its CSS
//! class [`Hue::class`], whose rules [`css`] writes into the page), and every category the page
//! colours (a timeline event's class, a step-time part, an idle cause, a critical-path segment, a
//! kernel type) is mapped to its hue below, so one colour never means two things.

use crate::analysis::critical_path::BoundBy;
use crate::analysis::gpu::KernelType;
use crate::analysis::idle::IdleCategory;
use crate::analysis::timeline::EventClass;
use crate::analysis::views::step_time::StepCategory;
use crate::report::attribution::IdleCause;

/// A cause as the page colours it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Hue {
    /// GPU computation (kernels).
    Compute,
    /// Collectives and point-to-point communication.
    Communication,
    /// Copies (memcpy) and memory traffic.
    Memory,
    Memset,
    /// Computation overlapping communication or copies.
    Overlap,
    /// The GPU busy but not computing (communication, copies, syncs alone).
    NonCompute,
    /// CPU operators executing (a CPU-bound path).
    CpuExec,
    /// CUDA runtime calls: launching work, the CPU's dispatch.
    Dispatch,
    /// The DataLoader: waiting for input.
    DataLoading,
    /// The host came late: the GPU waited on it.
    HostWait,
    /// A short gap between kernels already queued.
    KernelWait,
    Synchronization,
    /// A collective waiting for the last rank to arrive.
    CommunicationWait,
    /// Waiting on an event or a stream.
    BlockedWait,
    BetweenSteps,
    GraphCapture,
    Warmup,
    Startup,
    /// Idle for a reason on the device's side.
    DeviceSide,
    Python,
    Annotation,
    /// Nothing ran: idle with no cause.
    Idle,
    Other,
}

impl Hue {
    pub const ALL: [Hue; 23] = [
        Hue::Compute,
        Hue::Communication,
        Hue::Memory,
        Hue::Memset,
        Hue::Overlap,
        Hue::NonCompute,
        Hue::CpuExec,
        Hue::Dispatch,
        Hue::DataLoading,
        Hue::HostWait,
        Hue::KernelWait,
        Hue::Synchronization,
        Hue::CommunicationWait,
        Hue::BlockedWait,
        Hue::BetweenSteps,
        Hue::GraphCapture,
        Hue::Warmup,
        Hue::Startup,
        Hue::DeviceSide,
        Hue::Python,
        Hue::Annotation,
        Hue::Idle,
        Hue::Other,
    ];

    /// The colour.
    pub fn hex(self) -> &'static str {
        match self {
            Hue::Compute => "#4e79a7",
            Hue::Communication => "#e15759",
            Hue::Memory => "#f28e2b",
            Hue::Memset => "#ffbe7d",
            Hue::Overlap => "#8cd17d",
            Hue::NonCompute => "#a0cbe8",
            Hue::CpuExec => "#59a14f",
            Hue::Dispatch => "#edc948",
            Hue::DataLoading => "#b07aa1",
            Hue::HostWait => "#d37295",
            Hue::KernelWait => "#bab0ac",
            Hue::Synchronization => "#b6992d",
            Hue::CommunicationWait => "#ff9da7",
            Hue::BlockedWait => "#9d7660",
            Hue::BetweenSteps => "#79706e",
            Hue::GraphCapture => "#8e6bb8",
            Hue::Warmup => "#c9c9c9",
            Hue::Startup => "#8f8f8f",
            Hue::DeviceSide => "#499894",
            Hue::Python => "#d4a6c8",
            Hue::Annotation => "#86bcb6",
            Hue::Idle => "#e2e4e8",
            Hue::Other => "#a0a4ab",
        }
    }

    /// Its CSS class (`background`, and `stroke` on a chart's line).
    pub fn class(self) -> &'static str {
        match self {
            Hue::Compute => "c-compute",
            Hue::Communication => "c-comm",
            Hue::Memory => "c-memory",
            Hue::Memset => "c-memset",
            Hue::Overlap => "c-overlap",
            Hue::NonCompute => "c-non-compute",
            Hue::CpuExec => "c-cpu",
            Hue::Dispatch => "c-dispatch",
            Hue::DataLoading => "c-dataloading",
            Hue::HostWait => "c-host-wait",
            Hue::KernelWait => "c-kernel-wait",
            Hue::Synchronization => "c-sync",
            Hue::CommunicationWait => "c-comm-wait",
            Hue::BlockedWait => "c-blocked",
            Hue::BetweenSteps => "c-between-steps",
            Hue::GraphCapture => "c-graph-capture",
            Hue::Warmup => "c-warmup",
            Hue::Startup => "c-startup",
            Hue::DeviceSide => "c-device-side",
            Hue::Python => "c-python",
            Hue::Annotation => "c-annotation",
            Hue::Idle => "c-idle",
            Hue::Other => "c-other",
        }
    }

    /// A timeline event's colour.
    pub fn of_event(c: EventClass) -> Hue {
        match c {
            EventClass::Compute => Hue::Compute,
            EventClass::Communication => Hue::Communication,
            EventClass::Memory => Hue::Memory,
            EventClass::GpuOther | EventClass::Other => Hue::Other,
            EventClass::CpuOp => Hue::CpuExec,
            EventClass::Runtime => Hue::Dispatch,
            EventClass::Python => Hue::Python,
            EventClass::Annotation => Hue::Annotation,
        }
    }

    /// A step-time part's colour.
    pub fn of_step(c: StepCategory) -> Hue {
        match c {
            StepCategory::Kernel => Hue::Compute,
            StepCategory::Memcpy => Hue::Memory,
            StepCategory::Memset => Hue::Memset,
            StepCategory::Communication => Hue::Communication,
            StepCategory::Runtime => Hue::Dispatch,
            StepCategory::DataLoader => Hue::DataLoading,
            StepCategory::CpuExec => Hue::CpuExec,
            StepCategory::Other => Hue::Other,
        }
    }

    /// An idle cause's colour (the report's, the timeline's GPU-idle row, the window bar).
    pub fn of_idle(c: IdleCause) -> Hue {
        match c {
            IdleCause::GraphCapture => Hue::GraphCapture,
            IdleCause::Warmup => Hue::Warmup,
            IdleCause::Startup => Hue::Startup,
            IdleCause::DataLoading => Hue::DataLoading,
            IdleCause::Synchronization => Hue::Synchronization,
            IdleCause::BlockedWait => Hue::BlockedWait,
            IdleCause::CommunicationWait => Hue::CommunicationWait,
            IdleCause::BetweenSteps => Hue::BetweenSteps,
            IdleCause::HostCompute => Hue::CpuExec,
            IdleCause::DispatchOverhead | IdleCause::HostStall => Hue::Dispatch,
            IdleCause::DeviceSide => Hue::DeviceSide,
            IdleCause::Other => Hue::Idle,
        }
    }

    /// What bounds a critical-path segment.
    pub fn of_bound(b: BoundBy) -> Hue {
        match b {
            BoundBy::Cpu => Hue::CpuExec,
            BoundBy::DataLoading => Hue::DataLoading,
            BoundBy::GpuCompute => Hue::Compute,
            BoundBy::GpuCommunication => Hue::Communication,
            BoundBy::GpuKernelLaunchOverhead => Hue::Dispatch,
            BoundBy::GpuKernelKernelOverhead => Hue::KernelWait,
            BoundBy::Nothing => Hue::Idle,
        }
    }

    /// A kernel type's colour (`None`: no single type).
    pub fn of_kernel_type(t: Option<KernelType>) -> Hue {
        match t {
            Some(KernelType::Computation) => Hue::Compute,
            Some(KernelType::Communication) => Hue::Communication,
            Some(KernelType::Memory) => Hue::Memory,
            _ => Hue::Other,
        }
    }

    /// An HTA idle category's colour.
    pub fn of_idle_category(c: IdleCategory) -> Hue {
        match c {
            IdleCategory::HostWait => Hue::HostWait,
            IdleCategory::KernelWait => Hue::KernelWait,
            IdleCategory::Other => Hue::Idle,
        }
    }
}

/// The CSS of every hue's class: its background, and its stroke on a chart's line.
pub fn css() -> String {
    Hue::ALL
        .iter()
        .map(|h| {
            let (c, x) = (h.class(), h.hex());
            format!(".{c} {{ background: {x}; }} .chart polyline.{c} {{ stroke: {x}; background: none; }}\n")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_hue_has_its_own_colour_and_class() {
        let hex: HashSet<&str> = Hue::ALL.iter().map(|h| h.hex()).collect();
        let class: HashSet<&str> = Hue::ALL.iter().map(|h| h.class()).collect();
        assert_eq!(hex.len(), Hue::ALL.len(), "one colour means one cause");
        assert_eq!(class.len(), Hue::ALL.len());
        let css = css();
        for h in Hue::ALL {
            assert!(css.contains(&format!(".{} {{ background: {}; }}", h.class(), h.hex())));
        }
    }

    #[test]
    fn a_cause_has_the_same_colour_in_every_chart() {
        // CPU dispatch: the step-time part, the idle cause, the timeline's runtime calls and a
        // launch-bound critical path are one hue; so is the DataLoader, and it is not dispatch's.
        let dispatch = Hue::of_step(StepCategory::Runtime);
        assert_eq!(Hue::of_idle(IdleCause::DispatchOverhead), dispatch);
        assert_eq!(Hue::of_event(EventClass::Runtime), dispatch);
        assert_eq!(Hue::of_bound(BoundBy::GpuKernelLaunchOverhead), dispatch);
        let data = Hue::of_step(StepCategory::DataLoader);
        assert_eq!(Hue::of_idle(IdleCause::DataLoading), data);
        assert_eq!(Hue::of_bound(BoundBy::DataLoading), data);
        assert_ne!(data.hex(), dispatch.hex());
        assert_eq!(
            Hue::of_kernel_type(Some(KernelType::Memory)),
            Hue::of_step(StepCategory::Memcpy)
        );
        assert_eq!(
            Hue::of_event(EventClass::CpuOp),
            Hue::of_bound(BoundBy::Cpu)
        );
    }
}
