//! The findings model: what a rule found, with its threshold, measured value, impact, evidence and action.

use serde::{Deserialize, Serialize};

use crate::table::query::{EventQuery, SortBy};

/// Every finding the diagnosis can make: one documented enum, serialised as the stable ids of
/// `findings[].id` and `main_finding_id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingId {
    /// The trace is a CUDA/HIP graph capture: the kernels did not run; profile the replay.
    GraphCapture,
    /// Warm-up fills the trace (or a part of the analysed window).
    Warmup,
    /// Too little device work to diagnose.
    InsufficientTrace,
    /// The file holds no PyTorch profiler events.
    NotPytorchTrace,
    /// Launch calls but no kernel events: device activities were not recorded.
    NoKernelEvents,
    /// No device work at all: a CPU-only run.
    NoGpuKernels,
    /// The file was cut off mid-write.
    TruncatedTrace,
    /// Attention computed as softmax + batched matmuls, without a fused attention kernel.
    UnfusedAttention,
    /// Memory-bound element-wise / copy / reduction kernels take a large share: fusion helps.
    FusionCandidates,
    /// fp32 GEMMs without tensor cores.
    Fp32Matmul,
    /// The GPU waits inside steps for the host to dispatch work (Python/ATen overhead).
    HostOverhead,
    /// Many tiny kernels: the launch cost, not the kernels, sets the pace.
    LaunchOverhead,
    /// One kernel takes most of the kernel time.
    DominantKernel,
    /// Memory copies and sets take a large share, or copies are pageable or tiny.
    MemoryTraffic,
    /// Communication not hidden behind compute.
    Communication,
    /// The GPU waits while the CPU loads data.
    DataLoading,
    /// The GPU waits for host work between steps.
    HostBound,
    /// Synchronising calls drain the GPU's queue.
    Synchronization,
    /// One rank is slower than the others.
    Straggler,
}

impl FindingId {
    /// The stable text of the id (`graph_capture`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            FindingId::GraphCapture => "graph_capture",
            FindingId::Warmup => "warmup",
            FindingId::InsufficientTrace => "insufficient_trace",
            FindingId::NotPytorchTrace => "not_pytorch_trace",
            FindingId::NoKernelEvents => "no_kernel_events",
            FindingId::NoGpuKernels => "no_gpu_kernels",
            FindingId::TruncatedTrace => "truncated_trace",
            FindingId::UnfusedAttention => "unfused_attention",
            FindingId::FusionCandidates => "fusion_candidates",
            FindingId::Fp32Matmul => "fp32_matmul",
            FindingId::HostOverhead => "host_overhead",
            FindingId::LaunchOverhead => "launch_overhead",
            FindingId::DominantKernel => "dominant_kernel",
            FindingId::MemoryTraffic => "memory_traffic",
            FindingId::Communication => "communication",
            FindingId::DataLoading => "data_loading",
            FindingId::HostBound => "host_bound",
            FindingId::Synchronization => "synchronization",
            FindingId::Straggler => "straggler",
        }
    }

    /// Whether the finding is about the trace itself (it leaves nothing, or little, to diagnose).
    pub fn is_about_the_trace(self) -> bool {
        matches!(
            self,
            FindingId::GraphCapture
                | FindingId::InsufficientTrace
                | FindingId::NotPytorchTrace
                | FindingId::NoKernelEvents
                | FindingId::NoGpuKernels
        )
    }
}

impl std::fmt::Display for FindingId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for FindingId {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; nothing to change necessarily.
    Info,
    /// Costs a noticeable share of the run.
    Warning,
    /// The largest cost in the trace, or above twice the threshold.
    Critical,
}

/// What the event references of a finding point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EvidenceKind {
    Kernel,
    /// A memory copy or set on the GPU.
    Memory,
    /// A CPU operator (or annotation) on the host timeline.
    Op,
    /// A CUDA runtime call (launch, synchronise, copy).
    Runtime,
    Stream,
    Rank,
}

/// The events behind a finding: a named kernel/op/stream/rank and (some of) its rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvidenceRef {
    pub kind: EvidenceKind,
    /// Rank whose table `rows` index; `None` when the reference is not about one rank's rows.
    pub rank: Option<i64>,
    /// Full name (kernel, op, runtime call), or `stream 7` / `rank 3`.
    pub name: String,
    pub stream: Option<i64>,
    /// How many events of this name the figure counts.
    pub count: u64,
    /// Their summed time, ns.
    pub time_ns: i64,
    /// Row indexes (file order) of the first events, at most [`MAX_EVIDENCE_ROWS`].
    pub rows: Vec<u32>,
}

/// Which events a finding is about, for the page to open them: every event of `kind` whose full name is
/// one of `names` (`rank 3` / `stream 7` for ranks and streams).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EvidenceFilter {
    pub kind: Option<EvidenceKind>,
    pub names: Vec<String>,
}

impl EvidenceFilter {
    /// The filter of a list of references: the kind of the first, the distinct names of that kind in order.
    pub fn of(refs: &[EvidenceRef]) -> Option<EvidenceFilter> {
        let kind = refs.first()?.kind;
        let mut names: Vec<String> = Vec::new();
        for r in refs.iter().filter(|r| r.kind == kind) {
            if !names.contains(&r.name) {
                names.push(r.name.clone());
            }
        }
        Some(EvidenceFilter {
            kind: Some(kind),
            names,
        })
    }
}

impl EvidenceFilter {
    /// The exploration query that shows these events, longest first: kernels by name; copies and sets;
    /// CPU ops and annotations; runtime calls; a stream's device work; a rank's device work.
    pub fn to_query(&self) -> EventQuery {
        let kinds = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let mut q = EventQuery {
            sort: SortBy::Duration,
            descending: true,
            ..Default::default()
        };
        let device = ["kernel", "memcpy", "memset", "accelerator_op"];
        let names = self.names.clone();
        match self.kind {
            Some(EvidenceKind::Kernel) => {
                q.kinds = kinds(&["kernel"]);
                q.names = names;
            }
            Some(EvidenceKind::Memory) => {
                q.kinds = kinds(&["memcpy", "memset"]);
                q.names = names;
            }
            Some(EvidenceKind::Op) => {
                q.kinds = kinds(&["cpu_op", "user_annotation", "python_function"]);
                q.names = names;
            }
            Some(EvidenceKind::Runtime) => {
                q.kinds = kinds(&["runtime", "driver"]);
                q.names = names;
            }
            Some(EvidenceKind::Stream) => {
                q.kinds = kinds(&device);
                q.stream = names.iter().find_map(|n| {
                    n.strip_prefix("stream ")
                        .and_then(|s| s.trim().parse().ok())
                });
            }
            Some(EvidenceKind::Rank) => {
                q.kinds = kinds(&device);
                q.ranks = names
                    .iter()
                    .filter_map(|n| n.strip_prefix("rank ").and_then(|s| s.trim().parse().ok()))
                    .collect();
            }
            None => q.names = names,
        }
        q
    }
}

/// Row indexes kept per evidence reference.
pub const MAX_EVIDENCE_ROWS: usize = 20;

/// What a finding costs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Impact {
    /// Share of the GPU window (first to last GPU activity, summed over ranks), percent.
    pub pct_of_gpu_time: Option<f64>,
    /// The same time per profiler step, ms (when the trace has `ProfilerStep#N` annotations).
    pub ms_per_step: Option<f64>,
    /// The recoverable time, ns (summed over ranks): what removing the cause would save at most.
    pub time_ns: i64,
}

/// One finding of a rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub id: FindingId,
    /// The finding as one sentence, as the main finding states it.
    pub headline: String,
    pub title: String,
    pub severity: Severity,
    /// The rule's threshold in words (`average kernel < 10 µs ...`).
    pub threshold: String,
    /// The measured value in words (`average kernel 3.1 µs; GPU idle 42.0%`).
    pub measured: String,
    /// The measured number the threshold is compared with (unit in `threshold`).
    pub value: f64,
    pub impact: Impact,
    /// What it means, one sentence with numbers.
    pub explanation: String,
    /// What to change, concretely.
    pub actions: Vec<String>,
    pub evidence: Vec<EvidenceRef>,
    /// The events to open for this finding (`None` when it is not about named events).
    #[serde(default)]
    pub filter: Option<EvidenceFilter>,
}

impl Finding {
    /// Sort key: findings about the trace itself first, then by recoverable time (largest first),
    /// then by id for determinism.
    pub fn rank_key(&self) -> (bool, std::cmp::Reverse<i64>, FindingId) {
        (
            !self.id.is_about_the_trace(),
            std::cmp::Reverse(self.impact.time_ns),
            self.id,
        )
    }
}
