//! The TensorBoard-style views (overview, operators, kernels, memory, modules) as a typed view model
//! over [`RankViews`]: tables and figures of the deeper analyses' model ([`Part`], [`Table`],
//! [`Figure`]) plus two charts (stacked step bars, a memory line). Drawn by `ui::views`; every
//! figure is the result's own number (`tests/profile_views.rs`).
//!
//! # Figures (`data-metric` names)
//! | view | `data-metric` | context |
//! |---|---|---|
//! | overview | `step-total-us`; `step-part-us` | `data-step` (a number or `average`); and `data-category` |
//! | | `tensor-core-pct`, `kernel-time-us` | `data-rank` |
//! | operators | `op-calls`, `op-host-total-us`, `op-host-self-us`, `op-device-total-us`, `op-device-self-us`; `op-kernel-us` (a device operation an operator launched, in its opened details) | `data-name`, `data-shapes` (by shape); and `data-kernel` |
//! | kernels | `kernel-calls`, `kernel-total-us`, `kernel-mean-us`, `kernel-min-us`, `kernel-max-us`, `kernel-blocks-per-sm`, `kernel-occupancy-pct` | `data-name` |
//! | memory | `memory-peak-bytes`, `memory-peak-reserved-bytes`, `memory-curve-peak-bytes` (the chart's mark); `memory-live-bytes`; `memory-hover-bytes` (allocated under the pointer, with `data-ts-us`) | `data-device`; and `data-row` |
//! | modules | `module-calls`, `module-host-us`, `module-device-us` | `data-path` |
//!
//! The overview also shows the diagnosis (`page::overview_verdict`): `overview-bottleneck`,
//! `overview-busy-pct`, `overview-idle-pct` and `overview-idle-us` (`data-cause`).

use serde::{Deserialize, Serialize};

use super::analyses_view::{BarPart, Cell, Fact, Figure, Part, Table, Unit};
use super::chart_axis::Axis;
use super::palette::Hue;
use crate::analysis::views::kernel_table::KernelsResult;
use crate::analysis::views::memory::{DeviceMemory, MemoryResult};
use crate::analysis::views::modules::ModulesResult;
use crate::analysis::views::operators::OperatorsResult;
use crate::analysis::views::step_time::{StepCategory, StepTime, StepTimeResult};
use crate::analysis::views::RankViews;
use crate::report::redact::NameKind;

crate::stable_enum! {
    /// The views, in tab order.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum ViewId {
        Overview,
        Operators,
        Kernels,
        Memory,
        Modules,
    }
}

impl ViewId {
    pub fn title(self) -> &'static str {
        match self {
            ViewId::Overview => "Overview",
            ViewId::Operators => "Operators",
            ViewId::Kernels => "GPU kernels",
            ViewId::Memory => "Memory",
            ViewId::Modules => "Modules",
        }
    }
}

/// One segment of a stacked bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    pub category: StepCategory,
    pub figure: Figure,
    /// Where it starts and how wide it is, % of the longest bar.
    pub start_pct: f64,
    pub width_pct: f64,
}

/// One bar: a step (or the average, or the whole trace).
#[derive(Clone, Debug, PartialEq)]
pub struct StepBar {
    pub label: String,
    pub total: Figure,
    pub segments: Vec<Segment>,
}

/// Step time as horizontal stacked bars on one scale.
#[derive(Clone, Debug, PartialEq)]
pub struct StepBars {
    pub bars: Vec<StepBar>,
    /// The bars' scale: 0 to a round time at or past the longest bar.
    pub axis: Axis,
}

/// One line of a chart, in data units.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: &'static str,
    /// The colour's CSS class.
    pub class: &'static str,
    /// (x µs, y bytes).
    pub points: Vec<(f64, f64)>,
}

/// A line chart: memory over time.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub series: Vec<Series>,
    pub x_range: (f64, f64),
    pub y_max: f64,
    /// Time from the chart's start (`x_range.0`) and the value, each with its ticks.
    pub x_axis: Axis,
    pub y_axis: Axis,
    /// The peak, marked: (x, y) and its figure.
    pub peak: Option<((f64, f64), Figure)>,
}

impl LineChart {
    /// A point in the chart's box `[0, width] × [0, height]` (y grows downwards).
    pub fn place(&self, (x, y): (f64, f64), width: f64, height: f64) -> (f64, f64) {
        let span = (self.x_range.1 - self.x_range.0).max(f64::MIN_POSITIVE);
        let px = (x - self.x_range.0) / span * width;
        let py = height - y / self.y_max.max(1.0) * height;
        (px, py)
    }

    /// What the chart reads at `frac` of its width (0 = left edge): the time there, and each
    /// series' value then (memory stays as the last event left it, so the last point at or before
    /// that time). `None` for an empty chart.
    pub fn readout_at(&self, frac: f64) -> Option<(f64, Vec<(&'static str, f64)>)> {
        let x = self.x_range.0 + frac.clamp(0.0, 1.0) * (self.x_range.1 - self.x_range.0);
        self.readout_at_us(x)
    }

    /// Each series' value at time `x` µs (see [`LineChart::readout_at`]).
    pub fn readout_at_us(&self, x: f64) -> Option<(f64, Vec<(&'static str, f64)>)> {
        let values: Vec<(&'static str, f64)> = self
            .series
            .iter()
            .filter_map(|s| {
                let after = s.points.partition_point(|p| p.0 <= x);
                let at = s.points.get(after.checked_sub(1)?)?;
                Some((s.label, at.1))
            })
            .collect();
        (!values.is_empty()).then_some((x, values))
    }
}

/// A piece of a view.
#[derive(Clone, Debug, PartialEq)]
pub enum ViewPart {
    Part(Part),
    Steps(StepBars),
    Line(LineChart),
    /// Operators that open to their call stack and kernels.
    Ops(Vec<OpDetail>),
}

/// An operator group that opens: the call stack of its longest call and the device operations
/// it launched.
#[derive(Clone, Debug, PartialEq)]
pub struct OpDetail {
    pub name: String,
    pub shapes: Option<String>,
    /// Its device total time (the line's figure is the table's).
    pub device_total_us: f64,
    pub call_stack: Vec<String>,
    /// (device operation, its total time: `op-kernel-us`).
    pub kernels: Vec<(String, Figure)>,
}

/// Operators that open below the table (the first ones in the table's order).
pub const OP_DETAILS: usize = 20;

/// One view of one rank.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    pub id: ViewId,
    pub parts: Vec<ViewPart>,
}

fn figure(
    metric: &'static str,
    value: f64,
    unit: Unit,
    context: Vec<(&'static str, String)>,
) -> Figure {
    Figure {
        metric,
        value,
        unit,
        context,
    }
}

/// The CSS class of a step category's colour.
pub fn category_class(c: StepCategory) -> &'static str {
    Hue::of_step(c).class()
}

fn step_bar(label: String, s: &StepTime, longest: f64) -> StepBar {
    let key = label.clone();
    let mut start = 0.0;
    let segments = s
        .parts
        .iter()
        .filter(|p| p.1 > 0.0)
        .map(|&(category, us)| {
            let width = us / longest * 100.0;
            let seg = Segment {
                category,
                figure: figure(
                    "step-part-us",
                    us,
                    Unit::Micros,
                    vec![
                        ("step", key.clone()),
                        ("category", category.as_str().into()),
                    ],
                ),
                start_pct: start,
                width_pct: width,
            };
            start += width;
            seg
        })
        .collect();
    StepBar {
        total: figure(
            "step-total-us",
            s.total_us,
            Unit::Micros,
            vec![("step", key)],
        ),
        label,
        segments,
    }
}

/// Every step and the average as bars on one scale.
pub fn step_bars(r: &StepTimeResult) -> StepBars {
    let mut rows: Vec<(String, &StepTime)> = r
        .steps
        .iter()
        .map(|s| (s.step.map_or("all".into(), |n| n.to_string()), s))
        .collect();
    if let Some(a) = &r.average {
        rows.push(("average".into(), a));
    }
    let longest = rows.iter().map(|r| r.1.total_us).fold(0.0, f64::max);
    let axis = Axis::linear("Time per step", longest, Unit::Micros);
    StepBars {
        bars: rows
            .into_iter()
            .map(|(l, s)| step_bar(l, s, axis.top))
            .collect(),
        axis,
    }
}

fn overview(v: &RankViews) -> View {
    let rank = || vec![("rank", v.rank.to_string())];
    let k = &v.kernels;
    let mut parts = vec![ViewPart::Part(Part::Heading(if v.step_time.has_steps {
        "Step time".into()
    } else {
        "Time of the trace (no ProfilerStep annotations)".into()
    }))];
    parts.push(ViewPart::Steps(step_bars(&v.step_time)));
    let tc_pct = if k.kernel_time_us > 0.0 {
        k.tensor_core_time_us / k.kernel_time_us * 100.0
    } else {
        0.0
    };
    parts.push(ViewPart::Part(Part::Facts(vec![
        Fact {
            label: "Kernel time",
            figure: figure("kernel-time-us", k.kernel_time_us, Unit::Micros, rank()),
        },
        Fact {
            label: "On tensor cores (by kernel name)",
            figure: figure("tensor-core-pct", tc_pct, Unit::Pct, rank()),
        },
    ])));
    parts.push(ViewPart::Part(Part::Heading("Kernel time by type".into())));
    parts.push(ViewPart::Part(Part::Bar(kernel_type_split(k))));
    parts.push(ViewPart::Part(Part::Heading("Top kernels".into())));
    let mut top = kernels_table(k, v.rank);
    top.rows.truncate(10);
    parts.push(ViewPart::Part(Part::Table(top)));
    View {
        id: ViewId::Overview,
        parts,
    }
}

fn kernel_type_split(k: &KernelsResult) -> Vec<BarPart> {
    use crate::analysis::gpu::KernelType;
    let total = k.kernel_time_us.max(f64::MIN_POSITIVE);
    [
        (KernelType::Computation, "Computation"),
        (KernelType::Communication, "Communication"),
        (KernelType::Memory, "Memory"),
    ]
    .into_iter()
    .map(|(ty, label)| BarPart {
        label: label.into(),
        pct: k
            .rows
            .iter()
            .filter(|r| r.kernel_type == Some(ty))
            .map(|r| r.total_us)
            .sum::<f64>()
            / total
            * 100.0,
        class: Hue::of_kernel_type(Some(ty)).class(),
    })
    .collect()
}

fn operators_table(o: &OperatorsResult, rank: i64) -> Table {
    let rows = o
        .rows
        .iter()
        .map(|r| {
            let mut ctx = vec![("name", r.name.clone())];
            if let Some(s) = &r.input_shapes {
                ctx.push(("shapes", s.clone()));
            }
            let f = |m, v| Cell::Figure(figure(m, v, Unit::Micros, ctx.clone()));
            let mut cells = vec![Cell::Name(NameKind::Op, r.name.clone())];
            if o.by_shape {
                cells.push(Cell::Text(r.input_shapes.clone().unwrap_or_default()));
            }
            cells.extend([
                Cell::Figure(figure("op-calls", r.calls as f64, Unit::Count, ctx.clone())),
                f("op-host-total-us", r.host_total_us),
                f("op-host-self-us", r.host_self_us),
                f("op-device-total-us", r.device_total_us),
                f("op-device-self-us", r.device_self_us),
            ]);
            cells
        })
        .collect();
    let text: &[&'static str] = if o.by_shape {
        &["Operator", "Input shapes"]
    } else {
        &["Operator"]
    };
    Table::new(
        text,
        &[
            "Calls",
            "Host total",
            "Host self",
            "Device total",
            "Device self",
        ],
        rows,
    )
    .locating(0, super::analyses_view::CPU_OPS, Some(rank))
}

fn op_details(o: &OperatorsResult) -> Vec<OpDetail> {
    o.rows
        .iter()
        .take(OP_DETAILS)
        .map(|r| {
            let mut ctx = vec![("name", r.name.clone())];
            if let Some(s) = &r.input_shapes {
                ctx.push(("shapes", s.clone()));
            }
            let kernels = r
                .kernels
                .iter()
                .map(|k| {
                    let mut c = ctx.clone();
                    c.push(("kernel", k.name.clone()));
                    (
                        k.name.clone(),
                        figure("op-kernel-us", k.total_us, Unit::Micros, c),
                    )
                })
                .collect();
            OpDetail {
                name: r.name.clone(),
                shapes: r.input_shapes.clone(),
                device_total_us: r.device_total_us,
                call_stack: r.call_stack.clone(),
                kernels,
            }
        })
        .collect()
}

/// The operators view: `by_shape` picks the grouping.
pub fn operators_view(v: &RankViews, by_shape: bool) -> View {
    let o = if by_shape {
        &v.operators_by_shape
    } else {
        &v.operators
    };
    let mut parts = Vec::new();
    if !o.note.is_empty() {
        parts.push(ViewPart::Part(Part::Muted(o.note.clone())));
    } else {
        parts.push(ViewPart::Part(Part::Note(format!(
            "Device time of an operator: the kernels, copies and sets its runtime calls launched; self for the innermost operator, total for it and every operator above. {} of device time was launched outside any operator.",
            Unit::Micros.show(o.device_time_outside_ops_us)
        ))));
        parts.push(ViewPart::Part(Part::Table(operators_table(o, v.rank))));
        parts.push(ViewPart::Ops(op_details(o)));
    }
    View {
        id: ViewId::Operators,
        parts,
    }
}

fn kernels_table(k: &KernelsResult, rank: i64) -> Table {
    let rows = k
        .rows
        .iter()
        .map(|r| {
            let ctx = vec![("name", r.name.clone())];
            let f = |m, v: f64, u| Cell::Figure(figure(m, v, u, ctx.clone()));
            let opt = |m, v: Option<f64>, u| v.map_or(Cell::Missing, |x| f(m, x, u));
            let text = |s: &Option<String>| Cell::Text(s.clone().unwrap_or_default());
            vec![
                Cell::Name(NameKind::Kernel, r.name.clone()),
                Cell::Text(
                    r.kernel_type
                        .map(|t| t.as_str().to_lowercase())
                        .unwrap_or_default(),
                ),
                r.top_operator
                    .clone()
                    .map_or(Cell::Blank, |n| Cell::Name(NameKind::Op, n)),
                Cell::Text(if r.tensor_cores {
                    "yes".into()
                } else {
                    String::new()
                }),
                text(&r.grid),
                text(&r.block),
                f("kernel-calls", r.calls as f64, Unit::Count),
                f("kernel-total-us", r.total_us, Unit::Micros),
                f("kernel-mean-us", r.mean_us, Unit::Micros),
                f("kernel-min-us", r.min_us, Unit::Micros),
                f("kernel-max-us", r.max_us, Unit::Micros),
                opt("kernel-blocks-per-sm", r.blocks_per_sm, Unit::Count),
                // A kernel that ran had some occupancy: Kineto's 0 is an estimate it could not make.
                opt(
                    "kernel-occupancy-pct",
                    r.est_achieved_occupancy_pct.filter(|&p| p > 0.0),
                    Unit::Pct,
                ),
            ]
        })
        .collect();
    Table::new(
        &[
            "Kernel",
            "Type",
            "Launched by",
            "Tensor cores",
            "Grid",
            "Block",
        ],
        &[
            "Calls",
            "Total",
            "Mean",
            "Min",
            "Max",
            "Blocks/SM",
            "Occupancy",
        ],
        rows,
    )
    .locating(0, super::analyses_view::DEVICE_EVENTS, Some(rank))
}

fn kernels_view(v: &RankViews) -> View {
    let k = &v.kernels;
    let mut parts = Vec::new();
    if !k.note.is_empty() {
        parts.push(ViewPart::Part(Part::Muted(k.note.clone())));
    } else {
        if !k.has_launch_config {
            parts.push(ViewPart::Part(Part::Muted(
                "The trace carries no launch configuration (grid, block, occupancy): CUDA traces from PyTorch 1.9 on do.".into(),
            )));
        }
        parts.push(ViewPart::Part(Part::Table(kernels_table(k, v.rank))));
    }
    View {
        id: ViewId::Kernels,
        parts,
    }
}

fn memory_chart(d: &DeviceMemory) -> LineChart {
    let alloc: Vec<(f64, f64)> = d
        .curve
        .iter()
        .map(|p| (p.ts_us, p.allocated_bytes as f64))
        .collect();
    let reserved: Vec<(f64, f64)> = d
        .curve
        .iter()
        .filter_map(|p| p.reserved_bytes.map(|r| (p.ts_us, r as f64)))
        .collect();
    let x0 = alloc.first().map_or(0.0, |p| p.0);
    let x1 = alloc.last().map_or(1.0, |p| p.0);
    let y_axis = Axis::linear(
        "Memory (bytes)",
        alloc
            .iter()
            .chain(&reserved)
            .map(|p| p.1)
            .fold(1.0, f64::max),
        Unit::Bytes,
    );
    let x_axis = Axis::linear("Time from the first event", x1 - x0, Unit::Micros);
    let mut series = vec![Series {
        label: "Allocated",
        class: Hue::Memory.class(),
        points: alloc,
    }];
    if !reserved.is_empty() {
        series.push(Series {
            label: "Reserved",
            class: Hue::Other.class(),
            points: reserved,
        });
    }
    LineChart {
        title: d.device.clone(),
        series,
        x_range: (x0, x0 + x_axis.top),
        y_max: y_axis.top,
        x_axis,
        y_axis,
        peak: Some((
            (d.peak_ts_us, d.peak_allocated_bytes as f64),
            figure(
                "memory-curve-peak-bytes",
                d.peak_allocated_bytes as f64,
                Unit::Bytes,
                vec![("device", d.device.clone())],
            ),
        )),
    }
}

fn memory_view(m: &MemoryResult) -> View {
    let mut parts = Vec::new();
    if m.devices.is_empty() {
        parts.push(ViewPart::Part(Part::Muted(m.note.clone())));
    }
    // The device's memory first (a GPU's gigabytes before the host's bytes).
    let mut devices: Vec<&DeviceMemory> = m.devices.iter().collect();
    crate::sort::sort_by_key(&mut devices, |d| {
        (d.device_type == 0, d.device_type, d.device_id)
    });
    for d in devices {
        let dev = || vec![("device", d.device.clone())];
        parts.push(ViewPart::Part(Part::Heading(d.device.clone())));
        parts.push(ViewPart::Line(memory_chart(d)));
        let mut facts = vec![Fact {
            label: "Peak allocated",
            figure: figure(
                "memory-peak-bytes",
                d.peak_allocated_bytes as f64,
                Unit::Bytes,
                dev(),
            ),
        }];
        if let Some(r) = d.peak_reserved_bytes {
            facts.push(Fact {
                label: "Peak reserved",
                figure: figure("memory-peak-reserved-bytes", r as f64, Unit::Bytes, dev()),
            });
        }
        parts.push(ViewPart::Part(Part::Facts(facts)));
        parts.push(ViewPart::Part(Part::Note(format!(
            "At the peak, {} is in blocks the trace saw allocated and {} in blocks allocated before it began.",
            Unit::Bytes.show(d.alive_at_peak_bytes as f64),
            Unit::Bytes.show(d.allocated_before_trace_bytes as f64)
        ))));
        let rows = d
            .alive_at_peak
            .iter()
            .enumerate()
            .map(|(i, a)| {
                vec![
                    a.operator
                        .clone()
                        .map_or(Cell::Blank, |n| Cell::Name(NameKind::Op, n)),
                    Cell::Figure(figure(
                        "memory-live-bytes",
                        a.bytes as f64,
                        Unit::Bytes,
                        vec![("device", d.device.clone()), ("row", i.to_string())],
                    )),
                    Cell::Number(
                        Unit::Micros.show(a.ts_us - d.curve.first().map_or(0.0, |p| p.ts_us)),
                    ),
                ]
            })
            .collect();
        parts.push(ViewPart::Part(Part::Table(Table::new(
            &["Allocated by"],
            &["Bytes", "At (from the first event)"],
            rows,
        ))));
    }
    View {
        id: ViewId::Memory,
        parts,
    }
}

fn modules_view(m: &ModulesResult) -> View {
    let mut parts = Vec::new();
    if m.rows.is_empty() {
        parts.push(ViewPart::Part(Part::Muted(m.note.clone())));
        return View {
            id: ViewId::Modules,
            parts,
        };
    }
    let top: Vec<_> = m.rows.iter().filter(|r| r.depth <= 1).collect();
    let root_host: f64 = m
        .rows
        .iter()
        .filter(|r| r.depth == 0)
        .map(|r| r.host_us)
        .sum::<f64>()
        .max(f64::MIN_POSITIVE);
    parts.push(ViewPart::Part(Part::Heading(
        "Host time of the top-level modules".into(),
    )));
    parts.push(ViewPart::Part(Part::Bar(
        top.iter()
            .filter(|r| {
                r.depth
                    == (if m.rows.iter().filter(|r| r.depth == 0).count() == 1 {
                        1
                    } else {
                        0
                    })
            })
            .map(|r| BarPart {
                label: r.name.clone(),
                pct: r.host_us / root_host * 100.0,
                class: Hue::CpuExec.class(),
            })
            .collect(),
    )));
    let rows = m
        .rows
        .iter()
        .map(|r| {
            let ctx = vec![("path", r.path.clone())];
            vec![
                Cell::Text(format!("{}{}", "\u{2003}".repeat(r.depth as usize), r.name)),
                Cell::Figure(figure(
                    "module-calls",
                    r.calls as f64,
                    Unit::Count,
                    ctx.clone(),
                )),
                Cell::Figure(figure(
                    "module-host-us",
                    r.host_us,
                    Unit::Micros,
                    ctx.clone(),
                )),
                Cell::Figure(figure("module-device-us", r.device_us, Unit::Micros, ctx)),
            ]
        })
        .collect();
    parts.push(ViewPart::Part(Part::Table(Table::new(
        &["Module"],
        &["Calls", "Host", "Device"],
        rows,
    ))));
    View {
        id: ViewId::Modules,
        parts,
    }
}

/// One view of one rank.
pub fn view(id: ViewId, v: &RankViews, by_shape: bool) -> View {
    match id {
        ViewId::Overview => overview(v),
        ViewId::Operators => operators_view(v, by_shape),
        ViewId::Kernels => kernels_view(v),
        ViewId::Memory => memory_view(&v.memory),
        ViewId::Modules => modules_view(&v.modules),
    }
}

impl View {
    /// Every figure of the view, in page order (for tests and checkers).
    pub fn figures(&self) -> Vec<&Figure> {
        self.parts
            .iter()
            .flat_map(|p| -> Vec<&Figure> {
                match p {
                    ViewPart::Part(part) => super::analyses_view::part_figures(part),
                    ViewPart::Steps(b) => b
                        .bars
                        .iter()
                        .flat_map(|bar| {
                            std::iter::once(&bar.total)
                                .chain(bar.segments.iter().map(|s| &s.figure))
                        })
                        .collect(),
                    ViewPart::Line(c) => c.peak.iter().map(|p| &p.1).collect(),
                    ViewPart::Ops(ops) => ops
                        .iter()
                        .flat_map(|o| o.kernels.iter().map(|k| &k.1))
                        .collect(),
                }
            })
            .collect()
    }
}

/// The view of the rows whose name contains `text` (any case; empty: every row): operators and
/// kernels by name, modules by path, before the tables are cut to their first rows.
pub fn filtered_view(id: ViewId, v: &RankViews, by_shape: bool, text: &str) -> View {
    let needle = text.trim().to_lowercase();
    if needle.is_empty() {
        return view(id, v, by_shape);
    }
    let hit = |name: &str| name.to_lowercase().contains(&needle);
    let mut v = v.clone();
    v.operators.rows.retain(|r| hit(&r.name));
    v.operators_by_shape.rows.retain(|r| hit(&r.name));
    v.kernels.rows.retain(|r| hit(&r.name));
    v.modules.rows.retain(|r| hit(&r.path));
    view(id, &v, by_shape)
}
