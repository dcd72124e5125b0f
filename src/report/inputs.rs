//! The figures the diagnosis rules read: plain numbers and named evidence, so every rule is a pure function.

use serde::{Deserialize, Serialize};

use super::attribution::{IdleCause, IdleShare};
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
    /// The longest single call, ns.
    #[serde(default)]
    pub max_ns: i64,
    /// A communication kernel ([`crate::analysis::names::is_collective_name`]).
    pub communication: bool,
    /// Where the rows are: one reference per rank (first rows only).
    pub evidence: Vec<EvidenceRef>,
}

/// Device time on one rank's analysed window, ns: unions of its device rows (every stream merged).
/// The window is first start to last end of the rank's device work in the analysed window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeFigures {
    pub window_ns: i64,
    /// Union of all device activity (the "GPU busy" of every per-rank figure).
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
    /// The idle time by cause ([`IdleCause`] order); sums to `idle_ns`.
    pub idle_by_cause_ns: [i64; IdleCause::ALL.len()],
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
        for (a, b) in self.idle_by_cause_ns.iter_mut().zip(o.idle_by_cause_ns) {
            *a += b;
        }
    }

    /// `part` as a percentage of the window (0 when the window is empty).
    pub fn pct(&self, part: i64) -> f64 {
        pct(part, self.window_ns)
    }

    /// Idle time of one cause, ns.
    pub fn idle(&self, cause: IdleCause) -> i64 {
        self.idle_by_cause_ns[cause as usize]
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
    /// Σ over the calls of the time inside them when the rank's GPU ran nothing, ns: a call that
    /// blocks with nothing queued waits for work this trace does not hold.
    #[serde(default)]
    pub gpu_idle_ns: i64,
    /// The CPU operators the calls happen inside (innermost first, `a > b` for nesting), with counts,
    /// most frequent first.
    pub callers: Vec<(String, u64)>,
    pub evidence: Vec<EvidenceRef>,
    /// For a synchronising copy call: the device copy it made (`Memcpy HtoD (Pageable -> Device)`),
    /// which says its direction and host memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<String>,
}

/// One one-off cost inside the analysed window ([`crate::analysis::one_off`]): an innermost host
/// event, so it says what the cost is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OneOffFigure {
    pub rank: i64,
    pub kind: Option<crate::analysis::one_off::OneOffKind>,
    /// The call, op or Python function.
    pub name: String,
    /// For a first launch: the kernel it launched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launched: Option<String>,
    pub dur_ns: i64,
    /// Median of the later occurrences (of the launch call, for a launch), ns.
    pub later_median_ns: i64,
    pub row: u32,
}

/// One rank's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RankFigure {
    pub rank: i64,
    pub time: TimeFigures,
    /// `ProfilerStep#N` annotations in the analysed window.
    pub steps: u64,
    /// Mean step duration, ns (0 without steps).
    pub mean_step_ns: i64,
    /// Σ dur of communication kernels (not the union), ns.
    pub comm_kernel_ns: i64,
    /// Communication kernels whose first run in the window takes many times their later median
    /// ([`crate::analysis::one_off::OneOffKind::FirstKernel`]): communicator or connection set-up,
    /// a one-off, not steady-state communication.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cold_comm: Vec<OneOffFigure>,
}

impl RankFigure {
    /// GPU time the cold first collectives take beyond their later median, ns.
    pub fn cold_comm_excess_ns(&self) -> i64 {
        self.cold_comm
            .iter()
            .map(|o| (o.dur_ns - o.later_median_ns).max(0))
            .sum()
    }
}

/// CPU-side attention ops (`aten::softmax`, `aten::bmm`, ...) and the shape the softmax ran on most.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AttentionFigures {
    pub softmax_ops: u64,
    pub bmm_ops: u64,
    /// `Input Dims` of the most frequent softmax shape, e.g. `[[8, 12, 512, 512]]`, with its count.
    pub softmax_shape: Option<(String, u64)>,
}

/// Copies of one name along one route (`fromDevice` → `toDevice` of peer copies; `None` when the
/// event does not say), across the ranks: what they moved and in how long.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CopyRoute {
    pub name: String,
    pub from: Option<i64>,
    pub to: Option<i64>,
    pub count: u64,
    /// Σ `args.bytes`, and Σ duration of the copies that have it, ns.
    pub bytes: i64,
    pub ns: i64,
}

/// Everything the rules read, for a whole set of ranks (the analysed window of each).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiagnosisInputs {
    pub ranks: Vec<RankFigure>,
    /// Sums over the ranks.
    pub time: TimeFigures,
    /// Kernels and accelerator ops (not copies or sets).
    pub kernel_count: u64,
    /// Σ dur of kernels, ns.
    pub kernel_time_ns: i64,
    /// Kernels shorter than 10 µs: count and Σ dur.
    pub small_kernel_count: u64,
    pub small_kernel_time_ns: i64,
    /// Median kernel duration, ns.
    pub median_kernel_ns: i64,
    /// Every kernel name, by total time (largest first, ties by name).
    pub kernels: Vec<KernelFigure>,
    /// Copies and sets by name, largest total first.
    pub copies: Vec<CopyFigure>,
    /// The copies with bytes by name and route, most time first (judged against the links).
    #[serde(default)]
    pub copy_routes: Vec<CopyRoute>,
    pub syncs: Vec<SyncFigure>,
    /// Kernel launch calls (`cudaLaunchKernel`, ...): count and Σ dur on the CPU, ns.
    pub launch_calls: u64,
    pub launch_call_ns: i64,
    /// DataLoader operations on the CPU (names containing `DataLoader`): union time and names.
    pub data_loader_ns: i64,
    pub data_loader_ops: Vec<EvidenceRef>,
    /// Accelerator operations that are not CUDA kernels (MTIA, ...), counted among the kernels.
    pub accelerator_ops: u64,
    /// Largest number of profiler steps on one rank in the analysed window.
    pub steps: u64,
    /// The exclusive idle attribution (all ranks), causes with time only.
    pub idle: Vec<IdleShare>,
    /// Idle gaps ended by work launched after the gap began, host stalls left out.
    pub dispatch_gaps: u64,
    /// Median dispatch idle of those gaps, host stalls included (all ranks), ns.
    #[serde(default)]
    pub dispatch_gap_median_ns: i64,
    /// Gaps that are host stalls ([`super::attribution::is_stall`]): count and median, ns.
    #[serde(default)]
    pub stall_gaps: u64,
    #[serde(default)]
    pub stall_gap_median_ns: i64,
    pub attention: AttentionFigures,
    /// `deviceProperties[0].name`, when the trace has it.
    pub device_name: Option<String>,
    /// The device family (the context's), for the words and the advice that fit it.
    #[serde(default)]
    pub device_kind: crate::trace::dialect::DeviceKind,
    /// Kernels judged against the device's roof.
    #[serde(default)]
    pub roofline: super::roofline_rules::RooflineFigures,
    /// One-off costs inside the analysed window, longest first (at most [`MAX_ONE_OFFS`]).
    #[serde(default)]
    pub one_offs: Vec<OneOffFigure>,
    /// GPU time first runs of kernels in the window take beyond their later median, ns.
    #[serde(default)]
    pub one_off_kernel_ns: i64,
    /// Median and 90th percentile of the launch calls' CPU time in the window, ns.
    #[serde(default)]
    pub launch_call_median_ns: i64,
    #[serde(default)]
    pub launch_call_p90_ns: i64,
    /// Collectives across ranks: wait versus transfer, late ranks, parallelism.
    #[serde(default)]
    pub collectives: crate::analysis::collectives::Collectives,
    /// What the trace shows already in use (graphs, compilation, precision): advice not to repeat.
    #[serde(default)]
    pub in_use: InUse,
    /// Training or inference (the context's): the advice that fits the run.
    #[serde(default)]
    pub run: crate::analysis::names::RunKind,
    /// Host compute on CPU tensors over the analysed window on the host (all ranks).
    #[serde(default)]
    pub host_compute: HostCompute,
}

/// Where the launching threads compute on the CPU while the device runs nothing
/// ([`super::host::host_compute_ops`]), measured on the host over the analysed window: a CPU op
/// before the first kernel counts, which the GPU window would not see.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HostCompute {
    /// Host compute with the device idle, ns (all ranks).
    pub ns: i64,
    /// The analysed window on the host (first to last event in it), summed over ranks, ns.
    pub window_ns: i64,
    /// The operators, most time first: (name, ns with the device idle).
    pub ops: Vec<(String, i64)>,
}

impl HostCompute {
    /// The share (%) of the host window.
    pub fn pct(&self) -> f64 {
        pct(self.ns, self.window_ns)
    }

    /// Adds one rank's figures (ops merged by name).
    pub fn add(&mut self, o: &HostCompute) {
        self.ns += o.ns;
        self.window_ns += o.window_ns;
        for (name, ns) in &o.ops {
            match self.ops.iter_mut().find(|x| &x.0 == name) {
                Some(x) => x.1 += ns,
                None => self.ops.push((name.clone(), *ns)),
            }
        }
        crate::sort::sort_by(&mut self.ops, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    }
}

/// What the trace shows already in use, so that no rule advises it again: one check per kind of
/// advice (graphs, compilation, reduced precision, TF32), read by every rule that advises it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InUse {
    /// CUDA/HIP graph launches (replays) in the trace.
    pub graph_launches: u64,
    /// torch.compile is in use: compiled regions, compilation, or kernels it generates; the
    /// evidence in words (`Triton kernels`, `compiled regions`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiled: Option<String>,
    /// A kernel in reduced precision (bf16/fp16/fp8/int8), the one with most time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low_precision: Option<String>,
    /// A kernel that multiplies fp32 on tensor cores (TF32), the one with most time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tf32: Option<String>,
}

impl InUse {
    /// From the context (graph replays, compiled regions) and the kernel names (largest first).
    pub fn of(ctx: &super::context::TraceContext, kernels: &[KernelFigure]) -> InUse {
        use crate::analysis::names::{is_compiled_kernel, is_low_precision_kernel, is_tf32_kernel};
        let first = |f: fn(&str) -> bool| {
            kernels
                .iter()
                .find(|k| !k.communication && f(&k.name))
                .map(|k| k.name.clone())
        };
        let triton = kernels.iter().any(|k| is_compiled_kernel(&k.name));
        let regions = ctx.holds(super::context::TraceHolds::Compiled);
        InUse {
            graph_launches: ctx.graph_launches,
            compiled: match (triton, regions) {
                (true, _) => Some("Inductor (Triton) kernels".into()),
                (false, true) => Some("torch.compile regions".into()),
                _ => None,
            },
            low_precision: first(is_low_precision_kernel),
            tf32: first(is_tf32_kernel),
        }
    }

    /// Nothing in use.
    pub fn is_empty(&self) -> bool {
        *self == InUse::default()
    }

    /// The advice to replay the step as a graph is already taken.
    pub fn graphs(&self) -> bool {
        self.graph_launches > 0
    }

    /// Mixed or reduced precision (or TF32) is already in use: the advice to enable it is taken.
    pub fn precision(&self) -> bool {
        self.low_precision.is_some() || self.tf32.is_some()
    }
}

/// One-off costs the inputs keep.
pub const MAX_ONE_OFFS: usize = 8;

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

    /// Device time in communication kernels (collectives, send/receive): a sum over kernel names,
    /// not a union. The collectives' device wait tasks ([`crate::analysis::names::is_device_wait_op`])
    /// are left out: they run inside a collective's own time (its waiting part).
    pub fn communication_kernel_ns(&self) -> i64 {
        self.kernels
            .iter()
            .filter(|k| k.communication && !crate::analysis::names::is_device_wait_op(&k.name))
            .map(|k| k.total_ns)
            .sum()
    }

    /// Device time in operations that wait rather than compute ([`crate::analysis::names::is_device_wait_op`]), ns.
    pub fn device_wait_ns(&self) -> i64 {
        self.kernels
            .iter()
            .filter(|k| crate::analysis::names::is_device_wait_op(&k.name))
            .map(|k| k.total_ns)
            .sum()
    }

    /// What the report calls the device ("GPU", "NPU", ...).
    pub fn device_word(&self) -> &'static str {
        self.device_kind.device_word()
    }

    /// The attribution row of one cause.
    pub fn idle_share(&self, cause: IdleCause) -> Option<&IdleShare> {
        self.idle.iter().find(|s| s.cause == cause)
    }
}
