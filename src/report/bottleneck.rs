//! Classifies the run as compute-, memory-, communication- or CPU-bound from the GPU time figures.

use serde::{Deserialize, Serialize};

use super::inputs::DiagnosisInputs;

/// What limits the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BottleneckKind {
    Compute,
    Memory,
    Communication,
    Cpu,
    /// The trace cannot tell (no GPU activity).
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
}

/// The classification and its one-line reason.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Bottleneck {
    pub kind: BottleneckKind,
    pub reason: String,
    /// Shares of the GPU window, percent: idle, exposed communication, exposed memory, compute.
    pub idle_pct: f64,
    pub comm_exposed_pct: f64,
    pub memory_exposed_pct: f64,
    pub compute_pct: f64,
}

/// Idle share (%) of the window from which the run is CPU-bound.
pub const CPU_BOUND_IDLE_PCT: f64 = 25.0;
/// Exposed communication share (%) from which the run is communication-bound.
pub const COMM_BOUND_PCT: f64 = 15.0;
/// Exposed copy/set share (%) from which the run is memory-bound.
pub const MEMORY_BOUND_PCT: f64 = 15.0;

/// The largest of idle, exposed communication and exposed memory relative to its threshold wins; when
/// none reaches its threshold the run is compute-bound.
pub fn classify(i: &DiagnosisInputs) -> Bottleneck {
    let t = &i.time;
    let idle = t.pct(t.idle_ns);
    let comm = t.pct(t.comm_exposed_ns);
    let mem = t.pct(t.memory_exposed_ns);
    let compute = t.pct(t.compute_ns);
    let mut b = Bottleneck {
        kind: BottleneckKind::Undetermined,
        reason: String::new(),
        idle_pct: idle,
        comm_exposed_pct: comm,
        memory_exposed_pct: mem,
        compute_pct: compute,
    };
    if t.window_ns <= 0 {
        b.reason = if i.accelerator_ops > 0 {
            "no CUDA/HIP kernels with timings in the trace".into()
        } else {
            "no GPU activity in the trace (captured without ProfilerActivity.CUDA, or a CPU-only run)".into()
        };
        return b;
    }
    let candidates = [
        (BottleneckKind::Cpu, idle / CPU_BOUND_IDLE_PCT),
        (BottleneckKind::Communication, comm / COMM_BOUND_PCT),
        (BottleneckKind::Memory, mem / MEMORY_BOUND_PCT),
    ];
    let best =
        candidates
            .iter()
            .filter(|c| c.1 >= 1.0)
            .fold(None::<(BottleneckKind, f64)>, |acc, &c| match acc {
                Some(a) if a.1 >= c.1 => Some(a),
                _ => Some(c),
            });
    b.kind = best.map_or(BottleneckKind::Compute, |c| c.0);
    b.reason = match b.kind {
        BottleneckKind::Cpu => {
            let parts = [
                (t.pct(t.idle_in_data_loader_ns), "in DataLoader ops"),
                (t.pct(t.host_wait_ns - t.idle_in_data_loader_ns.min(t.host_wait_ns)), "host wait"),
                (t.pct(t.kernel_wait_ns), "kernel wait (gaps < 30 µs)"),
                (t.pct(t.other_idle_ns), "other gaps"),
            ];
            let main = parts
                .iter()
                .fold(parts[0], |a, &p| if p.0 > a.0 { p } else { a });
            let mean_kernel_ns = i.mean_kernel_ns();
            let launch = main.1 == parts[2].1
                && i.kernel_count >= super::rules::MIN_KERNELS_FOR_LAUNCH
                && mean_kernel_ns < super::rules::SMALL_KERNEL_NS as f64;
            let why = if launch {
                format!(
                    ": kernel launch overhead, {} kernels of {:.1} µs on average",
                    i.kernel_count,
                    mean_kernel_ns / 1000.0
                )
            } else {
                String::new()
            };
            format!(
                "GPU idle {idle:.1}% of the time, mostly {} ({:.1}%){why}",
                main.1, main.0
            )
        }
        BottleneckKind::Communication => format!(
            "communication with no compute running takes {comm:.1}% of GPU time ({:.1}% of communication \
             overlapped)",
            100.0 - super::inputs::pct(t.comm_exposed_ns, t.comm_ns)
        ),
        BottleneckKind::Memory => format!(
            "memory copies/sets with no kernel running take {mem:.1}% of GPU time"
        ),
        _ => format!(
            "GPU busy {:.1}% of the time, {compute:.1}% in compute kernels; idle {idle:.1}%",
            t.pct(t.busy_ns)
        ),
    };
    b
}
