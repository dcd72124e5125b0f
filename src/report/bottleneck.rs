//! The bottleneck line: compute-, memory-, communication- or CPU-bound. It follows the main finding, so
//! the two always agree; without one it is read from the GPU time shares.

use crate::report::rich_text::{name, NameKind, RichText};
use crate::rich;
use serde::{Deserialize, Serialize};

use super::context::TraceContext;
use super::findings::{Finding, FindingId};
use super::inputs::{pct, DiagnosisInputs};
use super::patterns::is_fusable_memory_bound;
use super::wording::blocking_words;

/// What limits the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BottleneckKind {
    Compute,
    Memory,
    Communication,
    Cpu,
    /// The trace cannot tell (no device work, a capture, too little).
    Undetermined,
}

impl BottleneckKind {
    /// The heading word(s): `Compute-bound`, ...
    pub fn label(self) -> &'static str {
        match self {
            BottleneckKind::Compute => "Compute-bound",
            BottleneckKind::Memory => "Memory-bound",
            BottleneckKind::Communication => "Communication-bound",
            BottleneckKind::Cpu => "CPU-bound",
            BottleneckKind::Undetermined => "Undetermined",
        }
    }

    /// The bottleneck a finding explains (`None` for findings about the trace itself); a dominant
    /// kernel that is memory-bound makes it memory (see [`classify`]).
    pub fn of_finding(id: FindingId) -> Option<BottleneckKind> {
        Some(match id {
            FindingId::DataLoading
            | FindingId::Synchronization
            | FindingId::PerElementReads
            | FindingId::HostBound
            | FindingId::HostOverhead
            | FindingId::HostStall
            | FindingId::HostCompute
            | FindingId::LaunchOverhead
            | FindingId::Warmup => BottleneckKind::Cpu,
            FindingId::Communication | FindingId::Straggler => BottleneckKind::Communication,
            FindingId::MemoryTraffic | FindingId::FusionCandidates => BottleneckKind::Memory,
            FindingId::UnfusedAttention
            | FindingId::Fp32Matmul
            | FindingId::DominantKernel
            | FindingId::AvoidableKernels
            | FindingId::FarUnderRoof => BottleneckKind::Compute,
            _ => return None,
        })
    }
}

/// When the host waits for work outside the trace, what the rest of the window shows: compute-bound
/// when the GPU is busy for most of the time apart from the wait (the wait itself says nothing
/// about the job's own work).
fn busy_apart_from_the_wait(i: &DiagnosisInputs, b: &Bottleneck) -> Option<Bottleneck> {
    let t = &i.time;
    let wait = t.idle(crate::report::attribution::IdleCause::BlockedWait);
    let rest = t.window_ns - wait;
    let busy = pct(t.busy_ns, rest);
    (rest > 0 && busy >= COMPUTE_BOUND_BUSY_PCT).then(|| Bottleneck {
        kind: BottleneckKind::Compute,
        reason: format!(
            "apart from the {} the host waits for work outside the trace, the GPU is busy {busy:.1}% of the rest of the window, {:.1}% in compute kernels",
            super::wording::dur(wait),
            pct(t.compute_ns, rest)
        ).into(),
        ..b.clone()
    })
}

/// The classification and its one-line reason.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bottleneck {
    pub kind: BottleneckKind,
    pub reason: RichText,
    /// Shares of the GPU window, percent: idle, exposed communication, exposed memory, compute.
    pub idle_pct: f64,
    pub comm_exposed_pct: f64,
    pub memory_exposed_pct: f64,
    pub compute_pct: f64,
}

/// An intensity below this fraction of the ridge point is far left of it: only bandwidth can bound
/// such a kernel (element-wise work), however little of it the kernel reaches.
pub const FAR_LEFT_OF_RIDGE: f64 = 0.125;

/// Whether memory bandwidth sets a kernel's time: by its arithmetic intensity where the shapes give
/// it: far left of the ridge point, or below it and reaching a fair share of that roof (a GEMM or
/// attention near the ridge and far under both roofs is bound by latency or occupancy, not
/// bandwidth); else by its name (element-wise, copy, reduction).
pub fn sets_by_bandwidth(i: &DiagnosisInputs, name: &str) -> bool {
    use crate::analysis::roofline::Bound;
    let lead = i
        .roofline
        .leads
        .iter()
        .find(|l| l.name == name && l.bound.is_some());
    match lead {
        Some(l) if l.bound == Some(Bound::Compute) => false,
        Some(l) => {
            let far_left = match (l.intensity, l.peak_tflops, l.roof_gbps) {
                (Some(x), Some(peak), Some(bw)) if bw > 0.0 => {
                    x < FAR_LEFT_OF_RIDGE * peak * 1e3 / bw
                }
                _ => true,
            };
            far_left
                || is_fusable_memory_bound(name)
                || l.pct_of_roof >= super::roofline_rules::FAR_UNDER_ROOF_PCT
        }
        None => is_fusable_memory_bound(name),
    }
}

/// The main finding is about kernels whose time memory bandwidth sets: fusion candidates, or one
/// dominant kernel (or one far under its roof) that bandwidth bounds ([`sets_by_bandwidth`]).
fn memory_bound_kernels(i: &DiagnosisInputs, main: &Finding) -> bool {
    match main.id {
        FindingId::FusionCandidates => true,
        FindingId::DominantKernel => i
            .kernels
            .first()
            .is_some_and(|k| sets_by_bandwidth(i, &k.name)),
        FindingId::FarUnderRoof => main
            .evidence
            .first()
            .is_some_and(|e| sets_by_bandwidth(i, &e.name)),
        _ => false,
    }
}

/// Device-side waits (`event_wait`, ...) from this share (%) of the operation time keep a busy device
/// from being called compute-bound.
pub const DEVICE_WAIT_PCT: f64 = 25.0;

/// Whether device-side waits take at least [`DEVICE_WAIT_PCT`] of the operation time.
pub fn waits_most(i: &DiagnosisInputs) -> bool {
    pct(i.device_wait_ns(), i.kernel_time_ns) >= DEVICE_WAIT_PCT
}

/// The device-side wait operations, largest first: "`event_wait` (352.6 ms)".
fn wait_names(i: &DiagnosisInputs) -> RichText {
    let waits = i
        .kernels
        .iter()
        .filter(|k| crate::analysis::names::is_device_wait_op(&k.name))
        .take(2)
        .map(|k| {
            rich!(
                name(NameKind::Kernel, &k.name),
                format!(" {}", super::wording::dur(k.total_ns))
            )
        });
    RichText::join(waits, ", ")
}

/// GPU busy share (%) from which a run without findings is compute-bound.
pub const COMPUTE_BOUND_BUSY_PCT: f64 = 75.0;

/// The device record has holes (dropped or unrecorded device operations): busy and idle shares
/// describe the recorded operations only.
pub fn partial_record(ctx: &TraceContext) -> bool {
    ctx.holds(super::context::TraceHolds::EventsDropped)
}

/// A run whose operators ran on the CPU, bound by one class of them (compute, memory-bound
/// operators, per-operator overhead, the DataLoader): the reason in words.
fn cpu_run_reason(ctx: &TraceContext, h: super::context::TraceHolds) -> Option<RichText> {
    if h != super::context::TraceHolds::CpuOnly {
        return None;
    }
    let host = ctx.host_only.as_ref()?;
    if host.evidence_kind.is_some() {
        return None;
    }
    super::rules::cpu_run::bottleneck_reason(host.cpu.as_ref()?)
}

/// The bottleneck of the report whose main finding is `main`.
pub fn classify(i: &DiagnosisInputs, ctx: &TraceContext, main: Option<&Finding>) -> Bottleneck {
    let t = &i.time;
    let mut b = Bottleneck {
        kind: BottleneckKind::Undetermined,
        reason: RichText::default(),
        idle_pct: t.pct(t.idle_ns),
        comm_exposed_pct: t.pct(t.comm_exposed_ns),
        memory_exposed_pct: t.pct(t.memory_exposed_ns),
        compute_pct: t.pct(t.compute_ns),
    };
    if let Some(h) = ctx.blocking() {
        if let Some(reason) = cpu_run_reason(ctx, h) {
            b.kind = BottleneckKind::Cpu;
            b.reason = reason;
            return b;
        }
        b.reason = format!("{}; see the main finding", blocking_words(ctx, h)).into();
        return b;
    }
    if let Some(b) = main
        .filter(|f| f.id == FindingId::WaitOutsideTrace)
        .and_then(|_| busy_apart_from_the_wait(i, &b))
    {
        return b;
    }
    let busy = t.pct(t.busy_ns);
    let bandwidth = main.is_some_and(|f| memory_bound_kernels(i, f));
    b.kind = match main.and_then(|f| BottleneckKind::of_finding(f.id)) {
        Some(BottleneckKind::Compute) if bandwidth => BottleneckKind::Memory,
        Some(k) => k,
        None if busy >= COMPUTE_BOUND_BUSY_PCT && !waits_most(i) && !partial_record(ctx) => {
            BottleneckKind::Compute
        }
        None => BottleneckKind::Undetermined,
    };
    b.reason = match b.kind {
        BottleneckKind::Cpu if main.is_some_and(|f| f.id == FindingId::HostCompute) => format!(
            "the host computes on CPU tensors {:.1}% of the analysed window on the host while the {} runs nothing ({} idle {:.1}% of its own window)",
            i.host_compute.pct(),
            i.device_word(),
            i.device_word(),
            b.idle_pct
        )
        .into(),
        BottleneckKind::Cpu => rich!(
            format!("{} idle {:.1}% of the window; ", i.device_word(), b.idle_pct),
            main.map(|f| rich!(
                "the largest cause: ",
                &f.title,
                format!(" ({:.1}% of the window)", f.impact.pct_of_gpu_time.unwrap_or(0.0))
            ))
        ),
        BottleneckKind::Communication => format!(
            "communication with no compute running takes {:.1}% of the window ({:.1}% of communication overlapped)",
            b.comm_exposed_pct,
            100.0 - pct(t.comm_exposed_ns, t.comm_ns)
        ).into(),
        BottleneckKind::Memory if bandwidth => format!(
            "memory-bound kernels (element-wise, copy, reduction, or below the ridge point near their roof) take {:.1}% of kernel time: memory bandwidth, not arithmetic, sets their time; GPU busy {busy:.1}% of the window",
            pct(
                i.kernels.iter().filter(|k| sets_by_bandwidth(i, &k.name)).map(|k| k.total_ns).sum(),
                i.kernel_time_ns
            )
        ).into(),
        BottleneckKind::Memory => format!(
            "memory copies/sets with no kernel running take {:.1}% of the window",
            b.memory_exposed_pct
        ).into(),
        BottleneckKind::Compute if partial_record(ctx) => rich!(
            main.map_or(rich!("compute kernels"), |f| f.title.clone()),
            format!(
                "; over the recorded operations the {} is busy {busy:.1}% of the window, but the record is incomplete, so how busy it was beyond them is unknown",
                i.device_word()
            )
        ),
        BottleneckKind::Compute => format!(
            "{} busy {busy:.1}% of the window, {:.1}% in compute kernels; idle {:.1}%",
            i.device_word(),
            b.compute_pct,
            b.idle_pct
        ).into(),
        BottleneckKind::Undetermined if main.is_some_and(|f| f.id == FindingId::WaitOutsideTrace) => format!(
            "GPU idle {:.1}% of the window while the host waits for work this trace does not show; the trace cannot tell what bounds the job",
            b.idle_pct
        ).into(),
        BottleneckKind::Undetermined if partial_record(ctx) => format!(
            "the {} record is incomplete (see the trace's first lines): busy {busy:.1}% and idle {:.1}% describe only the operations recorded, not what the {} did",
            i.device_word(),
            b.idle_pct,
            i.device_word()
        ).into(),
        BottleneckKind::Undetermined if waits_most(i) => rich!(
            format!(
                "{} busy {busy:.1}% of the window, but {:.1}% of its operation time is device-side waits (",
                i.device_word(),
                pct(i.device_wait_ns(), i.kernel_time_ns),
            ),
            wait_names(i),
            "), not compute: it waits on events of other queues or of the host"
        ),
        BottleneckKind::Undetermined => format!(
            "{} busy {busy:.1}% of the window and idle {:.1}%, but no single cause explains the idle time (see where it goes)",
            i.device_word(),
            b.idle_pct
        ).into(),
    };
    b
}
