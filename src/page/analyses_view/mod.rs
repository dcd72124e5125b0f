//! The deeper analyses as a typed view model: one block per analysis, every figure named.
//!
//! Built from the typed [`AllAnalyses`] (no JSON lookups), drawn by the page's components in
//! `ui::analyses` and checked natively by `tests/analysis_view.rs`: every figure's value is the
//! analysis result it shows. A block's parts are typed ([`Part`]); nothing here is HTML.
//!
//! # Figures (`data-metric` names)
//! Every figure element carries `data-value` (the number of the analysis result: µs, %, bytes) and
//! the attributes that say which row it is. Names are stable.
//!
//! | analysis | `data-metric` | context |
//! |---|---|---|
//! | kernel breakdown | `kernel-type-us`, `kernel-type-pct` | `data-rank` (`all` or a rank), `data-kernel-type` |
//! | | `breakdown-kernel-count`, `breakdown-kernel-sum-us`, `breakdown-kernel-pct-of-type`, `breakdown-kernel-mean-us`, `breakdown-kernel-median-us`, `breakdown-kernel-min-us`, `breakdown-kernel-max-us`, `breakdown-kernel-std-us` | `data-rank`, `data-kernel`, `data-kernel-type` |
//! | temporal | `temporal-window-us`, `temporal-compute-us`, `temporal-compute-pct`, `temporal-non-compute-us`, `temporal-non-compute-pct`, `temporal-idle-us`, `temporal-idle-pct` | `data-rank` |
//! | idle time | `idle-us`; `idle-category-us`, `idle-category-ratio`, `idle-gap-count` | `data-rank`, `data-stream`; `data-category` |
//! | overlap | `overlap-comm-us`, `overlap-us`, `overlap-pct` | `data-rank` |
//! | stragglers | `straggler-flagged-steps`; `rank-busy-us`, `rank-busy-vs-median-pct` | `data-rank` |
//! | collectives | `collective-count`, `collective-kernel-us`, `collective-wait-us`, `collective-transfer-us`, `collective-exposed-wait-us`, `collective-exposed-transfer-us`, `collective-arrived-last`; `late-rank-times-last`, `late-rank-caused-wait-us` | `data-rank` |
//! | | `collective-bw-count`, `collective-bw-time-us`, `collective-algbw-gbps`, `collective-busbw-gbps`, `collective-busbw-link-pct` (% of the peer link: NVLink, Infinity Fabric or PCIe) | `data-collective`, `data-bytes`, `data-basis`, `data-ranks` |
//! | | `parallelism-ops-per-rank`, `parallelism-ops-per-step` | `data-parallelism` |
//! | | `collective-instance-spread-us`, `collective-instance-wait-us`, `collective-instance-transfer-us` | `data-instance` (position, most wait first) |
//! | launches | `launch-count`, `launch-cpu-mean-us`, `launch-cpu-p50-us`, `launch-cpu-max-us`, `launch-gpu-mean-us`, `launch-gpu-p50-us`, `launch-gpu-max-us`, `launch-delay-mean-us`, `launch-delay-p50-us`, `launch-delay-max-us`, `launch-short-kernels`, `launch-runtime-outliers`, `launch-delay-outliers`; `launch-cpu-total-us`, `launch-gpu-total-us`, `launch-delay-total-us`, `launch-runtime-cutoff-us`, `launch-delay-cutoff-us` | `data-rank` |
//! | queue length | `queue-length-mean`, `queue-length-p50`, `queue-length-max`, `queue-blocked-us`, `queue-blocked-ratio` | `data-rank`, `data-stream` |
//! | kernel sequences | `sequence-count`, `sequence-gpu-us`, `sequence-cpu-us` | `data-rank`, `data-pattern` |
//! | critical path | `critical-path-total-us`, `critical-path-segments`; `critical-path-share-us`, `critical-path-share-pct`; `critical-path-event-us`, `critical-path-event-segments`; `critical-path-segment-start-us`, `critical-path-segment-us` | `data-rank`; `data-bound-by`; `data-event`; `data-list` (`longest`, `path`), `data-segment`, `data-row` |
//! | memory copies | `memcpy-count`, `memcpy-bytes`, `memcpy-time-us`, `memcpy-gbps` | `data-rank`, `data-op`, `data-direction`, `data-memory` |
//! | profiler steps | `step-start-us`, `step-duration-us`; `step-mean-us` | `data-rank`, `data-step`; `data-rank` |
//! | roofline | `roofline-peak-tflops`, `roofline-ridge` (FLOP/byte); `roofline-memory-gbps`, `roofline-link-gbps`, `roofline-coverage-pct`, `roofline-mfu-pct`; `roofline-time-us`, `roofline-intensity`, `roofline-tflops`, `roofline-gbps`, `roofline-roof-tflops`, `roofline-pct-of-roof` (the points: intensity, achieved) | `data-rank`, `data-dtype`; `data-rank`; `data-rank` with `data-kernel`, or `data-event`, `data-shapes`, `data-dtype` |
//! | roofline chart (`ui::charts`) | `roofline-point-tflops` (a point; `data-intensity`, `data-time-us`), `roofline-roof-peak-tflops` (a roof; `data-ridge`), `roofline-picked-tflops` (the clicked point) | `data-rank`, `data-kernel`; `data-dtype` |
//! | collectives bars (`ui::charts`) | `collective-bar-wait-us`, `collective-bar-transfer-us` (the row: `data-late` `true` for a rank the others wait for) | `data-rank` |

mod blocks;
mod collectives;
mod critical_path;
mod gpu_time;
mod redacted;
mod roofline;
pub mod sort;

use crate::analysis::all::{AllAnalyses, Mode};
pub use crate::analysis::registry::AnalysisId;
use crate::report::format;
use crate::report::redact::NameKind;

/// Rows of a long table shown before "N of M rows shown".
pub const MAX_ROWS: usize = 100;

/// How a figure is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Micros,
    Pct,
    /// A 0-1 share shown as %.
    Ratio,
    /// A count, or any plain number.
    Count,
    Bytes,
    Gbps,
}

impl Unit {
    /// `x` as the page writes it.
    pub fn show(self, x: f64) -> String {
        if !x.is_finite() {
            return "—".into();
        }
        match self {
            Unit::Micros => format::micros(x),
            Unit::Pct => format::pct(x),
            Unit::Ratio => format::pct(x * 100.0),
            Unit::Count => format::number(x),
            Unit::Bytes => format::bytes(x.max(0.0) as u64),
            Unit::Gbps => format!("{} GB/s", format::number(x)),
        }
    }
}

/// One figure: its stable name, its value and which row it belongs to (`data-rank`, ...).
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// The `data-metric` name.
    pub metric: &'static str,
    pub value: f64,
    pub unit: Unit,
    /// `(attribute without "data-", value)`, e.g. `("rank", "0")`.
    pub context: Vec<(&'static str, String)>,
}

impl Figure {
    /// The `data-value` text: the number itself (shortest text that reads back the same value).
    pub fn data_value(&self) -> String {
        self.value.to_string()
    }

    /// The figure as the page writes it.
    pub fn shown(&self) -> String {
        self.unit.show(self.value)
    }
}

/// A table cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// Left-aligned text.
    Text(String),
    /// A name from the trace, with what it names (ellipsised, with the full name as a tooltip;
    /// "Redact names" hashes it by its kind).
    Name(NameKind, String),
    /// A right-aligned number that is not a figure of its own (a rank, a stream).
    Number(String),
    Figure(Figure),
    /// A figure the result does not have (not finite, or absent).
    Missing,
    /// Nothing (beside a missing figure).
    Blank,
    /// A kernel sequence: its steps, the first few of them, and how many more.
    Steps {
        shown: Vec<String>,
        more: usize,
    },
}

/// A table: the `text` columns first (left-aligned), then the `num` columns (right-aligned).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub text_columns: Vec<&'static str>,
    pub num_columns: Vec<&'static str>,
    /// At most [`MAX_ROWS`].
    pub rows: Vec<Vec<Cell>>,
    /// Rows there are in all.
    pub total: usize,
    /// When a row's name can be shown on the timeline: which column holds it, and what kind of
    /// event it names (None when the names are hashed: they no longer match an event).
    pub locate: Option<LocateBy>,
}

/// Which column of a table names events, and of what kind: its rows open the longest such event
/// on the timeline (of the table's rank when its figures are one rank's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocateBy {
    pub column: usize,
    pub kinds: &'static [crate::table::EventKind],
    /// The rank whose figures the table shows (None: every rank's).
    pub rank: Option<i64>,
}

/// What a device-time table's names stand for: kernels, copies and sets.
pub const DEVICE_EVENTS: &[crate::table::EventKind] = &[
    crate::table::EventKind::Kernel,
    crate::table::EventKind::Memcpy,
    crate::table::EventKind::Memset,
];
/// What an operator table's names stand for.
pub const CPU_OPS: &[crate::table::EventKind] = &[crate::table::EventKind::CpuOp];

impl LocateBy {
    /// The events a row's `name` stands for (on the table's rank, when it has one).
    pub fn query(self, name: &str) -> crate::table::query::EventQuery {
        crate::table::query::EventQuery {
            names: vec![name.to_string()],
            kinds: self.kinds.to_vec(),
            ranks: self.rank.into_iter().collect(),
            ..Default::default()
        }
    }
}

impl Table {
    pub fn new(text: &[&'static str], num: &[&'static str], rows: Vec<Vec<Cell>>) -> Table {
        let total = rows.len();
        Table {
            text_columns: text.to_vec(),
            num_columns: num.to_vec(),
            rows: rows.into_iter().take(MAX_ROWS).collect(),
            total,
            locate: None,
        }
    }

    /// The table whose `column` names events of `kinds` (of `rank`, when its figures are that
    /// rank's), each row able to show its event.
    pub fn locating(
        self,
        column: usize,
        kinds: &'static [crate::table::EventKind],
        rank: Option<i64>,
    ) -> Table {
        Table {
            locate: Some(LocateBy {
                column,
                kinds,
                rank,
            }),
            ..self
        }
    }

    /// "100 of 2,000 rows shown." when rows were left out.
    pub fn cut_note(&self) -> Option<String> {
        (self.total > self.rows.len()).then(|| {
            format!(
                "{} of {} rows shown.",
                format::int(self.rows.len() as u64),
                format::int(self.total as u64)
            )
        })
    }
}

/// Running text: plain, bold or code.
#[derive(Clone, Debug, PartialEq)]
pub enum Inline {
    Text(&'static str),
    Bold(&'static str),
    Code(&'static str),
}

/// One part of a bar split into shares of a whole.
#[derive(Clone, Debug, PartialEq)]
pub struct BarPart {
    pub label: String,
    /// 0-100.
    pub pct: f64,
    /// The colour's CSS class (`c-compute`, ...).
    pub class: &'static str,
}

/// A labelled figure of a facts list.
#[derive(Clone, Debug, PartialEq)]
pub struct Fact {
    pub label: &'static str,
    pub figure: Figure,
}

/// One piece of a block, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    /// What the analysis measures (a muted paragraph).
    Intro(Vec<Inline>),
    /// "Rank 3 (pick another rank in the summary)." when there are several ranks.
    RankLabel(i64),
    Heading(String),
    /// A muted line: why there is nothing to show, or how it was computed.
    Muted(String),
    /// A note of the analysis (how it was computed, what was left out).
    Note(String),
    Bar(Vec<BarPart>),
    Facts(Vec<Fact>),
    Table(Table),
    /// A table folded away under a summary line.
    Folded {
        summary: String,
        table: Table,
    },
    /// The roofline chart: kernels on log-log axes under the device's roof.
    Roofline(Box<crate::page::roofline_chart::RooflineChart>),
    /// The collectives' per-rank wait and transfer bars, the late ranks marked.
    RankBars(crate::page::collectives_chart::RankBars),
    /// "Collective: `name` on stream 7; steps 3, 4." (stragglers).
    Collective {
        kernel: String,
        stream: Option<i64>,
        steps: Vec<i64>,
    },
}

/// One analysis, as the page shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub id: AnalysisId,
    /// A few words shown beside the title, so the block says something while closed.
    pub gist: String,
    pub parts: Vec<Part>,
}

/// Every block, then the mode line.
#[derive(Clone, Debug, PartialEq)]
pub struct AnalysesModel {
    pub blocks: Vec<Block>,
    pub mode: Mode,
    /// The analyses' notes, after the mode.
    pub notes: Vec<String>,
}

impl AnalysesModel {
    /// The mode line's text after "Mode: ".
    pub fn mode_text(&self) -> &'static str {
        match self.mode {
            Mode::HtaCompat => "HTA 0.5.0-compatible (whole-µs timestamps, last ProfilerStep dropped, HTA's name patterns)",
            Mode::Exact => "exact (integer-ns timestamps, every event of the trace window)",
        }
    }

    /// Every figure, in page order (for tests and checkers).
    pub fn figures(&self) -> Vec<&Figure> {
        self.blocks
            .iter()
            .flat_map(|b| b.parts.iter())
            .flat_map(part_figures)
            .collect()
    }
}

pub(crate) fn part_figures(part: &Part) -> Vec<&Figure> {
    match part {
        Part::Facts(facts) => facts.iter().map(|f| &f.figure).collect(),
        Part::Table(t) | Part::Folded { table: t, .. } => t
            .rows
            .iter()
            .flatten()
            .filter_map(|c| match c {
                Cell::Figure(f) => Some(f),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// What every block builder reads besides its own result.
pub struct Ctx<'a> {
    /// The rank whose detailed tables are shown.
    pub rank: i64,
    pub several: bool,
    /// Every result, for blocks that set one analysis beside another.
    pub all: &'a AllAnalyses,
}

impl Ctx<'_> {
    /// `[Part::RankLabel]` when there are several ranks.
    fn rank_label(&self) -> Vec<Part> {
        if self.several {
            vec![Part::RankLabel(self.rank)]
        } else {
            Vec::new()
        }
    }
}

/// Every analysis block, for the picked rank (`None` or an unknown rank: the first).
pub fn analyses_model(all: &AllAnalyses, rank: Option<i64>) -> AnalysesModel {
    let rank = rank
        .filter(|r| all.ranks.contains(r))
        .or_else(|| all.ranks.first().copied())
        .unwrap_or(0);
    let ctx = Ctx {
        rank,
        several: all.ranks.len() > 1,
        all,
    };
    let blocks = AnalysisId::ALL
        .into_iter()
        .map(|id| Block {
            id,
            ..block_of(id, &ctx)
        })
        .collect();
    AnalysesModel {
        blocks,
        mode: all.mode,
        notes: all.notes.clone(),
    }
}

fn block_of(id: AnalysisId, ctx: &Ctx) -> Block {
    let all = ctx.all;
    match id {
        AnalysisId::KernelBreakdown => gpu_time::kernel_breakdown(&all.kernel_breakdown, ctx),
        AnalysisId::TemporalBreakdown => gpu_time::temporal(&all.temporal_breakdown, ctx),
        AnalysisId::IdleTimeBreakdown => gpu_time::idle(&all.idle_time_breakdown, ctx),
        AnalysisId::CommCompOverlap => gpu_time::overlap(&all.comm_comp_overlap, ctx),
        AnalysisId::Stragglers => gpu_time::stragglers(&all.stragglers, ctx),
        AnalysisId::Collectives => collectives::collectives(&all.collectives, ctx),
        AnalysisId::KernelLaunchStats => blocks::launches(&all.kernel_launch_stats, ctx),
        AnalysisId::QueueLength => blocks::queue(&all.queue_length, ctx),
        AnalysisId::FrequentKernelSequences => {
            blocks::sequences(&all.frequent_kernel_sequences, ctx)
        }
        AnalysisId::CriticalPath => critical_path::critical_path(&all.critical_path, ctx),
        AnalysisId::MemoryBandwidth => blocks::memory(&all.memory_bandwidth, ctx),
        AnalysisId::ProfilerSteps => blocks::steps(&all.profiler_steps, ctx),
        AnalysisId::Roofline => roofline::roofline(&all.roofline, ctx),
    }
}

/// A block's builder result before its id is set.
fn block(gist: impl Into<String>, parts: Vec<Part>) -> Block {
    Block {
        id: AnalysisId::KernelBreakdown,
        gist: gist.into(),
        parts,
    }
}

/// Context attributes from `(name, value)` pairs.
fn context(pairs: &[(&'static str, String)]) -> Vec<(&'static str, String)> {
    pairs.to_vec()
}

/// A figure cell, or [`Cell::Missing`] for a value that is not finite.
fn figure(value: f64, metric: &'static str, unit: Unit, ctx: &[(&'static str, String)]) -> Cell {
    if value.is_finite() {
        Cell::Figure(Figure {
            metric,
            value,
            unit,
            context: context(ctx),
        })
    } else {
        Cell::Missing
    }
}

/// A figure cell of an optional value.
fn figure_opt(
    value: Option<f64>,
    metric: &'static str,
    unit: Unit,
    ctx: &[(&'static str, String)],
) -> Cell {
    value.map_or(Cell::Missing, |x| figure(x, metric, unit, ctx))
}

/// A fact of a facts list, when finite.
fn fact(
    label: &'static str,
    value: f64,
    metric: &'static str,
    unit: Unit,
    ctx: &[(&'static str, String)],
) -> Option<Fact> {
    match figure(value, metric, unit, ctx) {
        Cell::Figure(figure) => Some(Fact { label, figure }),
        _ => None,
    }
}

fn rank_ctx(rank: i64) -> Vec<(&'static str, String)> {
    vec![("rank", rank.to_string())]
}

fn notes(list: &[String]) -> impl Iterator<Item = Part> + '_ {
    list.iter()
        .filter(|n| !n.is_empty())
        .map(|n| Part::Note(n.clone()))
}

fn bar(parts: &[(&str, f64, &'static str)]) -> Part {
    Part::Bar(
        parts
            .iter()
            .map(|(label, pct, class)| BarPart {
                label: label.to_string(),
                pct: *pct,
                class,
            })
            .collect(),
    )
}
