//! The figures the diagnosis rules read: plain numbers and named evidence, so every rule is a pure function.

use serde::{Deserialize, Serialize};

use super::findings::EvidenceRef;

/// All kernels of one name across the ranks.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelFigure {
    pub name: String,
    pub calls: u64,
    /// Σ dur, ns.
    pub total_ns: i64,
    /// Launches shorter than [`SMALL_KERNEL_NS`](super::rules::SMALL_KERNEL_NS).
    pub small_calls: u64,
    /// It is a communication kernel (the analyses' `COMMUNICATION` type: NCCL, RCCL, HCCL, oneCCL).
    pub communication: bool,
    /// Where the rows are: one reference per rank (first rows only).
    pub evidence: Vec<EvidenceRef>,
}

/// GPU time on one rank, ns, from the analyses (temporal breakdown, overlap, kernel-type combinations) and
/// the device-level idle split of [`super::evidence`]. The window is first start to last end of GPU activity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeFigures {
    pub window_ns: i64,
    /// Union of all GPU activity.
    pub busy_ns: i64,
    /// Union of computation kernels (kernels that are not communication).
    pub compute_ns: i64,
    /// Union of communication kernels.
    pub comm_ns: i64,
    /// Union of communication kernels while no computation kernel runs.
    pub comm_exposed_ns: i64,
    /// Union of copies and sets.
    pub memory_ns: i64,
    /// Union of copies and sets while no kernel runs.
    pub memory_exposed_ns: i64,
    /// `window - busy`.
    pub idle_ns: i64,
    /// Idle gaps after which the next GPU activity was launched only after the gap began.
    pub host_wait_ns: i64,
    /// Other idle gaps shorter than the kernel-wait cutoff (30 µs).
    pub kernel_wait_ns: i64,
    /// The remaining idle gaps.
    pub other_idle_ns: i64,
    /// Idle time that falls inside DataLoader operations on the CPU.
    pub idle_in_data_loader_ns: i64,
    /// Host time blocked in synchronising calls while the window is open (their union, clipped
    /// to the window: a share of the window is at most 100%).
    pub sync_in_window_ns: i64,
    /// GPU idle time the synchronising calls cost: while each call blocks the host, and after it
    /// until the GPU has work again (the queue drained by the sync is refilled only then). A sync
    /// while the GPU stays busy costs nothing.
    pub sync_gpu_idle_ns: i64,
}

impl TimeFigures {
    pub fn add(&mut self, o: &TimeFigures) {
        self.window_ns += o.window_ns;
        self.busy_ns += o.busy_ns;
        self.compute_ns += o.compute_ns;
        self.comm_ns += o.comm_ns;
        self.comm_exposed_ns += o.comm_exposed_ns;
        self.memory_ns += o.memory_ns;
        self.memory_exposed_ns += o.memory_exposed_ns;
        self.idle_ns += o.idle_ns;
        self.host_wait_ns += o.host_wait_ns;
        self.kernel_wait_ns += o.kernel_wait_ns;
        self.other_idle_ns += o.other_idle_ns;
        self.idle_in_data_loader_ns += o.idle_in_data_loader_ns;
        self.sync_in_window_ns += o.sync_in_window_ns;
        self.sync_gpu_idle_ns += o.sync_gpu_idle_ns;
    }

    /// `part` as a percentage of the window (0 when the window is empty).
    pub fn pct(&self, part: i64) -> f64 {
        pct(part, self.window_ns)
    }
}

/// `part / whole` in percent, 0 when `whole` is not positive.
pub fn pct(part: i64, whole: i64) -> f64 {
    if whole > 0 {
        100.0 * part as f64 / whole as f64
    } else {
        0.0
    }
}

/// Copies and sets of one name (`Memcpy HtoD (Pageable -> Device)`, ...), across the ranks.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CopyFigure {
    pub name: String,
    pub count: u64,
    pub total_ns: i64,
    /// Σ `args.bytes` (0 when absent).
    pub bytes: i64,
    /// Copies moving fewer than [`SMALL_COPY_BYTES`](super::rules::SMALL_COPY_BYTES).
    pub small_count: u64,
    /// Host memory is pageable (name says `Pageable`).
    pub pageable: bool,
    /// A copy to or from the host (HtoD/DtoH).
    pub host: bool,
    pub evidence: Vec<EvidenceRef>,
}

/// Synchronising runtime calls of one name (`cudaStreamSynchronize`, ...), with the ops they come from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SyncFigure {
    pub name: String,
    pub count: u64,
    /// Σ dur of the calls (host time blocked), ns.
    pub total_ns: i64,
    /// The CPU operators the calls happen inside (innermost first, `a > b` for nesting), with counts,
    /// most frequent first.
    pub callers: Vec<(String, u64)>,
    pub evidence: Vec<EvidenceRef>,
}

/// One rank's figures for the straggler comparison.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankFigure {
    pub rank: i64,
    pub time: TimeFigures,
    /// `ProfilerStep#N` annotations.
    pub steps: u64,
    /// Mean step duration, ns (0 without steps).
    pub mean_step_ns: i64,
    /// Σ dur of communication kernels (not the union), ns.
    pub comm_kernel_ns: i64,
}

/// Everything the rules read, for a whole set of ranks.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiagnosisInputs {
    pub ranks: Vec<RankFigure>,
    /// Sums over the ranks.
    pub time: TimeFigures,
    pub kernel_count: u64,
    /// Σ dur of kernels, ns.
    pub kernel_time_ns: i64,
    /// Kernels shorter than 10 µs: count and Σ dur.
    pub small_kernel_count: u64,
    pub small_kernel_time_ns: i64,
    /// Every kernel name, by total time (largest first, ties by name).
    pub kernels: Vec<KernelFigure>,
    /// Copies and sets by name, largest total first.
    pub copies: Vec<CopyFigure>,
    pub syncs: Vec<SyncFigure>,
    /// Kernel launch calls (`cudaLaunchKernel`, ...): count and Σ dur on the CPU, ns.
    pub launch_calls: u64,
    pub launch_call_ns: i64,
    /// DataLoader operations on the CPU (names containing `DataLoader`): union time and names.
    pub data_loader_ns: i64,
    pub data_loader_ops: Vec<EvidenceRef>,
    /// Accelerator operations that are not CUDA kernels (MTIA, ...).
    pub accelerator_ops: u64,
    /// Largest number of profiler steps on one rank.
    pub steps: u64,
}

impl DiagnosisInputs {
    /// Time per profiler step, ms, for a time summed over ranks (None without steps).
    pub fn ms_per_step(&self, time_ns: i64) -> Option<f64> {
        let ranks = self.ranks.len().max(1) as f64;
        (self.steps > 0).then(|| time_ns as f64 / 1e6 / ranks / self.steps as f64)
    }

    /// Mean kernel duration, ns.
    pub fn mean_kernel_ns(&self) -> f64 {
        if self.kernel_count == 0 {
            0.0
        } else {
            self.kernel_time_ns as f64 / self.kernel_count as f64
        }
    }
}
