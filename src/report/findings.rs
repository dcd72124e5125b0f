//! The findings model: what a rule found, with its threshold, measured value, impact, evidence and action.

use crate::report::rich_text::RichText;
use serde::{Deserialize, Serialize};

use crate::table::query::{EventQuery, SortBy};
use crate::table::EventKind;

crate::stable_enum! {
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
        /// A kernel or host copy far under the hardware's roof at its arithmetic intensity.
        FarUnderRoof,
        /// The GPU waits inside steps for the host to dispatch work (Python/ATen overhead).
        HostOverhead,
        /// A few long gaps in which the host launched nothing (scheduling, input preparation,
        /// Python work between forwards): host stalls, not launch overhead.
        HostStall,
        /// The host computes on CPU tensors (operators that launched no device work) while the
        /// device runs nothing: CPU compute, not dispatch.
        HostCompute,
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
        /// The host blocks in synchronising calls while the traced GPU has nothing to run: it
        /// waits for work this trace does not hold.
        WaitOutsideTrace,
        /// One rank is slower than the others.
        Straggler,
        /// Kernels the model need not run: layout conversions, convolutions on the slow fallback,
        /// dropout in a forward-only run.
        AvoidableKernels,
        /// Device-to-host reads one element at a time (`.cpu()`, `.item()` in a loop): each is a
        /// blocking round trip, and batching the reads removes them.
        PerElementReads,
        /// A benchmark of variants (named regions of the script, each run once or several times
        /// in a row): each variant's wall and device time side by side, the faster one and by how
        /// much. A measurement, not recoverable time.
        VariantComparison,
    }
}

impl FindingId {
    /// How its impact is named: time removing the cause would give back, or (for a wait on work
    /// the trace does not show) only the time at stake.
    pub fn impact_word(self) -> &'static str {
        match self {
            FindingId::WaitOutsideTrace => "At stake",
            _ => "Recoverable",
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
                | FindingId::TruncatedTrace
        )
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
    /// Full name (kernel, op, runtime call), or [`stream_label`] / [`rank_label`] (`stream 7`, `rank 3`).
    pub name: String,
    pub stream: Option<i64>,
    /// How many events of this name the figure counts.
    pub count: u64,
    /// Their summed time, ns.
    pub time_ns: i64,
    /// Row indexes (file order) of the first events, at most [`MAX_EVIDENCE_ROWS`].
    pub rows: Vec<u32>,
}

/// Which events a finding is about, for the page to open them. Serialised as `{"kind": .., "names": [..]}`:
/// the [`EvidenceKind`] (`null` for [`EvidenceFilter::Names`]) and the full names, or `stream 7` /
/// `rank 3` ([`stream_label`], [`rank_label`]) for streams and ranks.
#[derive(Clone, Debug, PartialEq)]
pub enum EvidenceFilter {
    /// Kernels with one of these names.
    Kernels(Vec<String>),
    /// GPU memory copies and sets with one of these names.
    Memory(Vec<String>),
    /// CPU ops, annotations and Python functions with one of these names.
    Ops(Vec<String>),
    /// Runtime and driver calls with one of these names.
    Runtime(Vec<String>),
    /// The device work of these streams (the query opens the first).
    Streams(Vec<i64>),
    /// The device work of these ranks.
    Ranks(Vec<i64>),
    /// Events of any kind with one of these names.
    Names(Vec<String>),
}

/// How evidence names a stream (`stream 7`).
pub fn stream_label(stream: i64) -> String {
    format!("{STREAM_PREFIX}{stream}")
}

/// How evidence names a rank (`rank 3`).
pub fn rank_label(rank: i64) -> String {
    format!("{RANK_PREFIX}{rank}")
}

const STREAM_PREFIX: &str = "stream ";
const RANK_PREFIX: &str = "rank ";

/// Distinct items in first-seen order.
fn distinct<T: PartialEq>(items: impl Iterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for x in items {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

impl EvidenceFilter {
    /// The filter of a list of references: the kind of the first, the distinct names (or streams, ranks)
    /// of that kind in order.
    pub fn of(refs: &[EvidenceRef]) -> Option<EvidenceFilter> {
        let kind = refs.first()?.kind;
        let same = || refs.iter().filter(move |r| r.kind == kind);
        let names = || distinct(same().map(|r| r.name.clone()));
        Some(match kind {
            EvidenceKind::Kernel => EvidenceFilter::Kernels(names()),
            EvidenceKind::Memory => EvidenceFilter::Memory(names()),
            EvidenceKind::Op => EvidenceFilter::Ops(names()),
            EvidenceKind::Runtime => EvidenceFilter::Runtime(names()),
            EvidenceKind::Stream => {
                EvidenceFilter::Streams(distinct(same().filter_map(|r| r.stream)))
            }
            EvidenceKind::Rank => EvidenceFilter::Ranks(distinct(same().filter_map(|r| r.rank))),
        })
    }

    /// The kind of the events (`None` for names of any kind).
    pub fn kind(&self) -> Option<EvidenceKind> {
        match self {
            EvidenceFilter::Kernels(_) => Some(EvidenceKind::Kernel),
            EvidenceFilter::Memory(_) => Some(EvidenceKind::Memory),
            EvidenceFilter::Ops(_) => Some(EvidenceKind::Op),
            EvidenceFilter::Runtime(_) => Some(EvidenceKind::Runtime),
            EvidenceFilter::Streams(_) => Some(EvidenceKind::Stream),
            EvidenceFilter::Ranks(_) => Some(EvidenceKind::Rank),
            EvidenceFilter::Names(_) => None,
        }
    }

    /// The event names of a filter by kind and name (kernels, copies, ops, runtime calls), to rewrite
    /// them (redaction); `None` for streams, ranks and names of any kind.
    pub fn named_mut(&mut self) -> Option<(EvidenceKind, &mut Vec<String>)> {
        let kind = self.kind()?;
        match self {
            EvidenceFilter::Kernels(n)
            | EvidenceFilter::Memory(n)
            | EvidenceFilter::Ops(n)
            | EvidenceFilter::Runtime(n) => Some((kind, n)),
            EvidenceFilter::Streams(_) | EvidenceFilter::Ranks(_) | EvidenceFilter::Names(_) => {
                None
            }
        }
    }

    /// The exploration query that shows these events, longest first: kernels by name; copies and sets;
    /// CPU ops and annotations; runtime calls; a stream's device work; the ranks' device work.
    pub fn to_query(&self) -> EventQuery {
        use EventKind as K;
        let mut q = EventQuery {
            sort: SortBy::Duration,
            descending: true,
            ..Default::default()
        };
        let device = vec![K::Kernel, K::Memcpy, K::Memset, K::AcceleratorOp];
        match self {
            EvidenceFilter::Kernels(names) => {
                q.kinds = vec![K::Kernel];
                q.names = names.clone();
            }
            EvidenceFilter::Memory(names) => {
                q.kinds = vec![K::Memcpy, K::Memset];
                q.names = names.clone();
            }
            EvidenceFilter::Ops(names) => {
                q.kinds = vec![K::CpuOp, K::UserAnnotation, K::PythonFunction];
                q.names = names.clone();
            }
            EvidenceFilter::Runtime(names) => {
                q.kinds = vec![K::Runtime, K::Driver];
                q.names = names.clone();
            }
            EvidenceFilter::Streams(streams) => {
                q.kinds = device;
                q.stream = streams.first().copied();
            }
            EvidenceFilter::Ranks(ranks) => {
                q.kinds = device;
                q.ranks = ranks.clone();
            }
            EvidenceFilter::Names(names) => q.names = names.clone(),
        }
        q
    }
}

/// The serialised form of an [`EvidenceFilter`].
#[derive(Serialize, Deserialize)]
struct EvidenceFilterText {
    kind: Option<EvidenceKind>,
    names: Vec<String>,
}

impl Serialize for EvidenceFilter {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let names = match self {
            EvidenceFilter::Kernels(n)
            | EvidenceFilter::Memory(n)
            | EvidenceFilter::Ops(n)
            | EvidenceFilter::Runtime(n)
            | EvidenceFilter::Names(n) => n.clone(),
            EvidenceFilter::Streams(v) => v.iter().map(|&x| stream_label(x)).collect(),
            EvidenceFilter::Ranks(v) => v.iter().map(|&x| rank_label(x)).collect(),
        };
        EvidenceFilterText {
            kind: self.kind(),
            names,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for EvidenceFilter {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let EvidenceFilterText { kind, names } = EvidenceFilterText::deserialize(d)?;
        let numbers = |prefix: &str| -> Result<Vec<i64>, D::Error> {
            names
                .iter()
                .map(|n| {
                    n.strip_prefix(prefix)
                        .and_then(|x| x.parse().ok())
                        .ok_or_else(|| {
                            serde::de::Error::custom(format!("expected \"{prefix}N\", found {n:?}"))
                        })
                })
                .collect()
        };
        Ok(match kind {
            Some(EvidenceKind::Kernel) => EvidenceFilter::Kernels(names),
            Some(EvidenceKind::Memory) => EvidenceFilter::Memory(names),
            Some(EvidenceKind::Op) => EvidenceFilter::Ops(names),
            Some(EvidenceKind::Runtime) => EvidenceFilter::Runtime(names),
            Some(EvidenceKind::Stream) => EvidenceFilter::Streams(numbers(STREAM_PREFIX)?),
            Some(EvidenceKind::Rank) => EvidenceFilter::Ranks(numbers(RANK_PREFIX)?),
            None => EvidenceFilter::Names(names),
        })
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

impl Impact {
    /// The impact in words, each figure naming what it is of: "≈40.0% of the GPU window",
    /// "2.50 ms/step" ("per rank" on a run of `ranks` > 1: the time is a mean over the ranks).
    pub fn parts(&self, ranks: usize) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(p) = self.pct_of_gpu_time.filter(|p| p.is_finite() && *p > 0.0) {
            out.push(format!("≈{p:.1}% of the GPU window"));
        }
        if let Some(m) = self.ms_per_step.filter(|m| m.is_finite() && *m > 0.0) {
            let per = if ranks > 1 { " per rank" } else { "" };
            out.push(format!("{m:.2} ms/step{per}"));
        }
        out
    }
}

/// One finding of a rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub id: FindingId,
    /// The finding as one sentence, as the main finding states it.
    pub headline: RichText,
    pub title: RichText,
    pub severity: Severity,
    /// The rule's threshold in words (`average kernel < 10 µs ...`).
    pub threshold: RichText,
    /// The measured value in words (`average kernel 3.1 µs; GPU idle 42.0%`).
    pub measured: RichText,
    /// The measured number the threshold is compared with (unit in `threshold`).
    pub value: f64,
    pub impact: Impact,
    /// What it means, one sentence with numbers.
    pub explanation: RichText,
    /// What to change, concretely.
    pub actions: Vec<RichText>,
    pub evidence: Vec<EvidenceRef>,
    /// The events to open for this finding (`None` when it is not about named events).
    #[serde(default)]
    pub filter: Option<EvidenceFilter>,
}

impl Finding {
    /// The finding with one more action, when there is one.
    pub fn with_action(mut self, action: Option<RichText>) -> Finding {
        self.actions.extend(action);
        self
    }

    /// The actions' Markdown joined by `sep`.
    pub fn actions_markdown(&self, sep: &str) -> String {
        self.actions
            .iter()
            .map(RichText::to_markdown)
            .collect::<Vec<_>>()
            .join(sep)
    }

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
