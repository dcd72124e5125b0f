//! The findings model: what a rule found, with its threshold, measured value, impact, evidence and action.

use serde::{Deserialize, Serialize};

use crate::table::query::{EventQuery, SortBy};

/// What a finding is about; also the key the page uses to group findings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// Many short kernels and the GPU idle between them: kernel launch overhead.
    LaunchOverhead,
    /// One kernel takes most of the kernel time.
    DominantKernel,
    /// Memory copies and sets take a large share, or copies are pageable or tiny.
    MemoryTraffic,
    /// Communication kernels take a large share and are not hidden behind compute.
    Communication,
    /// The GPU waits on the host while the CPU loads data.
    DataLoading,
    /// The GPU waits on the host (not explained by data loading or tiny kernels).
    HostBound,
    /// Gaps between kernels and synchronisations that stall the host.
    Synchronization,
    /// One rank is slower than the others.
    Straggler,
    /// The trace cannot support some finding (no GPU kernels, one rank only, ...).
    TraceLimitation,
}

impl FindingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::LaunchOverhead => "launch_overhead",
            FindingKind::DominantKernel => "dominant_kernel",
            FindingKind::MemoryTraffic => "memory_traffic",
            FindingKind::Communication => "communication",
            FindingKind::DataLoading => "data_loading",
            FindingKind::HostBound => "host_bound",
            FindingKind::Synchronization => "synchronization",
            FindingKind::Straggler => "straggler",
            FindingKind::TraceLimitation => "trace_limitation",
        }
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
    /// The time in question, ns (summed over ranks).
    pub time_ns: i64,
}

/// One finding of a rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// Stable id of the rule (`launch_overhead`, ...).
    pub id: String,
    pub kind: FindingKind,
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
    /// Sort key: most important first (severity, then impact, then id for determinism).
    pub fn rank_key(&self) -> (std::cmp::Reverse<Severity>, std::cmp::Reverse<i64>, String) {
        (
            std::cmp::Reverse(self.severity),
            std::cmp::Reverse(self.impact.time_ns),
            self.id.clone(),
        )
    }
}
