//! Blocks of where the GPU time goes: kernel breakdown, temporal and idle breakdowns, overlap,
//! stragglers.

use super::{
    bar, block, figure, figure_opt, notes, rank_ctx, Block, Cell, Ctx, Inline, Part, Table, Unit,
};
use crate::analysis::gpu::KernelType;
use crate::analysis::idle::{IdleCategory, StreamIdle};
use crate::analysis::kernels::{KernelBreakdown, KernelStats, KernelTypeSet, TypeTime};
use crate::analysis::overlap::CommCompOverlap;
use crate::analysis::stragglers::Stragglers;
use crate::analysis::temporal::TemporalBreakdown;
use crate::page::palette::Hue;
use crate::report::format;
use crate::report::redact::NameKind;

/// Kernel rows shown before the rest is folded away.
const KERNELS_SHOWN: usize = 15;

pub fn kernel_breakdown(v: &KernelBreakdown, ctx: &Ctx) -> Block {
    let rank_entry = v.ranks.iter().find(|r| r.rank == ctx.rank);
    let (types, kernels, scope): (&[TypeTime], &[KernelStats], String) = if ctx.several {
        (&v.by_type_all_ranks, &v.kernels_all_ranks, "all".into())
    } else {
        rank_entry.map_or((&[], &[], ctx.rank.to_string()), |r| {
            (&r.by_type, &r.kernels, ctx.rank.to_string())
        })
    };
    let type_pct = |t: KernelType| {
        types
            .iter()
            .find(|x| x.kernel_type.single() == Some(t))
            .map_or(0.0, |x| x.pct)
    };
    let all_ranks = if ctx.several { ", all ranks" } else { "" };
    let mut parts = Vec::new();
    let gist = if types.is_empty() {
        parts.push(Part::Muted("No GPU kernels in this trace.".into()));
        "no GPU kernels".to_string()
    } else {
        parts.push(Part::Heading(format!("Time by kernel type{all_ranks}")));
        parts.push(Part::Muted(
            "Wall-clock time of each type (union of intervals); overlapping types are split out."
                .into(),
        ));
        parts.push(type_bar(types));
        parts.push(Part::Table(type_table(types, &scope)));
        parts.push(Part::Heading(format!("Kernels{all_ranks}")));
        parts.extend(kernel_tables(kernels, &scope));
        format!(
            "computation {} · communication {} · memory {}",
            format::pct(type_pct(KernelType::Computation)),
            format::pct(type_pct(KernelType::Communication)),
            format::pct(type_pct(KernelType::Memory))
        )
    };
    if let (true, Some(r)) = (ctx.several, rank_entry) {
        parts.push(Part::Heading(format!("Kernels of rank {}", ctx.rank)));
        parts.extend(kernel_tables(&r.kernels, &ctx.rank.to_string()));
    }
    parts.extend(notes(&v.notes));
    block(gist, parts)
}

/// The colour of a kernel type (or of a set of overlapping types).
fn type_class(kernel_type: KernelTypeSet) -> &'static str {
    match kernel_type.single() {
        Some(t) => Hue::of_kernel_type(Some(t)),
        None if kernel_type.is_overlap() => Hue::Overlap,
        None => Hue::Other,
    }
    .class()
}

fn type_bar(types: &[TypeTime]) -> Part {
    let named: Vec<(String, f64, &'static str)> = types
        .iter()
        .map(|t| (t.kernel_type.to_string(), t.pct, type_class(t.kernel_type)))
        .collect();
    let parts: Vec<(&str, f64, &'static str)> = named
        .iter()
        .map(|(name, pct, class)| (name.as_str(), *pct, *class))
        .collect();
    bar(&parts)
}

fn type_table(types: &[TypeTime], scope: &str) -> Table {
    let rows = types
        .iter()
        .map(|t| {
            let name = t.kernel_type.to_string();
            let c = [("rank", scope.to_string()), ("kernel-type", name.clone())];
            vec![
                Cell::Text(name),
                figure(t.time_us, "kernel-type-us", Unit::Micros, &c),
                figure(t.pct, "kernel-type-pct", Unit::Pct, &c),
            ]
        })
        .collect();
    Table::new(&["Type"], &["Time", "Share"], rows)
}

/// The first kernels in a table, the rest folded away.
fn kernel_tables(kernels: &[KernelStats], scope: &str) -> Vec<Part> {
    if kernels.is_empty() {
        return vec![Part::Muted("No kernels.".into())];
    }
    let (first, rest) = kernels.split_at(kernels.len().min(KERNELS_SHOWN));
    let mut parts = vec![Part::Table(kernel_table(first, scope))];
    if !rest.is_empty() {
        parts.push(Part::Folded {
            summary: format!("{} more kernels", format::int(rest.len() as u64)),
            table: kernel_table(rest, scope),
        });
    }
    parts
}

fn kernel_table(kernels: &[KernelStats], scope: &str) -> Table {
    let rows = kernels
        .iter()
        .map(|k| {
            let kind = k.kernel_type.as_str();
            let c = [
                ("rank", scope.to_string()),
                ("kernel", k.name.clone()),
                ("kernel-type", kind.to_string()),
            ];
            vec![
                Cell::Name(NameKind::Kernel, k.name.clone()),
                Cell::Text(kind.to_lowercase()),
                figure(k.count as f64, "breakdown-kernel-count", Unit::Count, &c),
                figure(k.sum_us, "breakdown-kernel-sum-us", Unit::Micros, &c),
                figure(k.pct_of_type, "breakdown-kernel-pct-of-type", Unit::Pct, &c),
                figure(k.mean_us, "breakdown-kernel-mean-us", Unit::Micros, &c),
                figure(k.median_us, "breakdown-kernel-median-us", Unit::Micros, &c),
                figure(k.min_us, "breakdown-kernel-min-us", Unit::Micros, &c),
                figure(k.max_us, "breakdown-kernel-max-us", Unit::Micros, &c),
                figure(k.std_us, "breakdown-kernel-std-us", Unit::Micros, &c),
            ]
        })
        .collect();
    Table::new(
        &["Kernel", "Type"],
        &[
            "Calls",
            "Total",
            "% of type",
            "Mean",
            "Median",
            "Min",
            "Max",
            "Std",
        ],
        rows,
    )
    .locating(0, super::DEVICE_EVENTS, scope.parse().ok())
}

pub fn temporal(rows: &[TemporalBreakdown], ctx: &Ctx) -> Block {
    let Some(mine) = rows.iter().find(|r| r.rank == ctx.rank).or(rows.first()) else {
        return block(
            "",
            vec![Part::Muted(
                "No GPU activity: the trace has no kernels, copies or sets.".into(),
            )],
        );
    };
    let gist = format!(
        "idle {} · compute {} · non-compute {}",
        format::pct(mine.idle_pct),
        format::pct(mine.compute_pct),
        format::pct(mine.non_compute_pct)
    );
    let table_rows = rows
        .iter()
        .map(|r| {
            let c = rank_ctx(r.rank);
            vec![
                Cell::Number(r.rank.to_string()),
                figure(r.window_us, "temporal-window-us", Unit::Micros, &c),
                figure(r.compute_us, "temporal-compute-us", Unit::Micros, &c),
                figure(r.compute_pct, "temporal-compute-pct", Unit::Pct, &c),
                figure(
                    r.non_compute_us,
                    "temporal-non-compute-us",
                    Unit::Micros,
                    &c,
                ),
                figure(r.non_compute_pct, "temporal-non-compute-pct", Unit::Pct, &c),
                figure(r.idle_us, "temporal-idle-us", Unit::Micros, &c),
                figure(r.idle_pct, "temporal-idle-pct", Unit::Pct, &c),
            ]
        })
        .collect();
    let parts = vec![
        Part::Intro(vec![Inline::Text(
            "Between the first and the last GPU activity: time some kernel computes, time only \
             communication / copies / syncs run, and time the GPU does nothing.",
        )]),
        bar(&[
            ("compute", mine.compute_pct, Hue::Compute.class()),
            ("non-compute", mine.non_compute_pct, Hue::NonCompute.class()),
            ("idle", mine.idle_pct, Hue::Idle.class()),
        ]),
        Part::Table(Table::new(
            &[],
            &[
                "Rank",
                "GPU window",
                "Compute",
                "%",
                "Non-compute",
                "%",
                "Idle",
                "%",
            ],
            table_rows,
        )),
    ];
    block(gist, parts)
}

/// The label and colour of an idle category's column.
fn idle_column(c: IdleCategory) -> (&'static str, &'static str) {
    let label = match c {
        IdleCategory::HostWait => "host wait",
        IdleCategory::KernelWait => "kernel wait",
        IdleCategory::Other => "other",
    };
    (label, Hue::of_idle_category(c).class())
}

pub fn idle(rows: &[StreamIdle], ctx: &Ctx) -> Block {
    let mine: Vec<&StreamIdle> = rows.iter().filter(|r| r.rank == ctx.rank).collect();
    let total: f64 = mine.iter().map(|r| r.idle_us).sum();
    let by_category = |c: IdleCategory| -> f64 {
        mine.iter()
            .flat_map(|r| &r.categories)
            .filter(|x| x.category == c)
            .map(|x| x.idle_us)
            .sum()
    };
    let share = |x: f64| if total > 0.0 { 100.0 * x / total } else { 0.0 };
    let shares = IdleCategory::ALL.map(|c| {
        let (label, class) = idle_column(c);
        (label, share(by_category(c)), class)
    });
    let mut parts = ctx.rank_label();
    parts.push(Part::Intro(vec![
        Inline::Text("Each gap between two kernels on a stream: "),
        Inline::Bold("host wait"),
        Inline::Text(
            " when the next kernel was launched only after the gap began (the CPU was late), ",
        ),
        Inline::Bold("kernel wait"),
        Inline::Text(" for short gaps between kernels already queued, "),
        Inline::Bold("other"),
        Inline::Text(" for the rest (syncs, dependencies on other streams)."),
    ]));
    if mine.is_empty() {
        parts.push(Part::Muted("No GPU streams on this rank.".into()));
        return block("", parts);
    }
    parts.push(bar(&shares));
    parts.push(Part::Table(idle_table(&mine)));
    let gist = format!(
        "host wait {} · kernel wait {} · other {} of idle time",
        format::pct(shares[0].1),
        format::pct(shares[1].1),
        format::pct(shares[2].1)
    );
    block(gist, parts)
}

fn idle_table(mine: &[&StreamIdle]) -> Table {
    let rows = mine
        .iter()
        .map(|r| {
            let base = [
                ("rank", r.rank.to_string()),
                ("stream", r.stream.to_string()),
            ];
            let mut cells = vec![
                Cell::Number(r.stream.to_string()),
                figure(r.idle_us, "idle-us", Unit::Micros, &base),
            ];
            for c in IdleCategory::ALL {
                let found = r.categories.iter().find(|x| x.category == c);
                let mut a = base.to_vec();
                a.push(("category", c.to_string()));
                match found {
                    Some(x) => cells.extend([
                        figure(x.idle_us, "idle-category-us", Unit::Micros, &a),
                        figure_opt(x.ratio, "idle-category-ratio", Unit::Ratio, &a),
                        figure(x.gaps_us.count as f64, "idle-gap-count", Unit::Count, &a),
                    ]),
                    None => cells.extend([Cell::Missing, Cell::Blank, Cell::Blank]),
                }
            }
            cells
        })
        .collect();
    Table::new(
        &[],
        &[
            "Stream",
            "Idle",
            "Host wait",
            "%",
            "gaps",
            "Kernel wait",
            "%",
            "gaps",
            "Other",
            "%",
            "gaps",
        ],
        rows,
    )
}

pub fn overlap(rows: &[CommCompOverlap], ctx: &Ctx) -> Block {
    let mine = rows.iter().find(|r| r.rank == ctx.rank);
    let comm = mine.map_or(0.0, |r| r.comm_us);
    let gist = match mine.and_then(|r| r.overlap_pct) {
        _ if comm <= 0.0 => "no communication kernels".into(),
        Some(p) => format!("{} of communication overlaps computation", format::pct(p)),
        None => String::new(),
    };
    let mut parts = vec![Part::Intro(vec![Inline::Text(
        "Share of the time communication kernels run during which computation kernels run \
         too. Low overlap means the GPU waits for collectives: start them earlier (bucketing, async \
         collectives, prefetch).",
    )])];
    if rows.is_empty() {
        parts.push(Part::Muted(
            "No communication kernels (NCCL, RCCL, HCCL) in this trace.".into(),
        ));
        return block(gist, parts);
    }
    let table_rows = rows
        .iter()
        .map(|r| {
            let c = rank_ctx(r.rank);
            vec![
                Cell::Number(r.rank.to_string()),
                figure(r.comm_us, "overlap-comm-us", Unit::Micros, &c),
                figure(r.overlap_us, "overlap-us", Unit::Micros, &c),
                figure_opt(r.overlap_pct, "overlap-pct", Unit::Pct, &c),
            ]
        })
        .collect();
    parts.push(Part::Table(Table::new(
        &[],
        &["Rank", "Communication", "Overlapped", "Overlap"],
        table_rows,
    )));
    block(gist, parts)
}

pub fn stragglers(v: &Stragglers, ctx: &Ctx) -> Block {
    let gist = if !ctx.several {
        "needs two or more ranks".into()
    } else if v.flags.is_empty() {
        "no result (see the notes)".into()
    } else if v.ranks.is_empty() {
        "none found".into()
    } else {
        let ranks: Vec<String> = v.ranks.iter().map(i64::to_string).collect();
        format!("rank {} most often last", ranks.join(", "))
    };
    let mut parts = vec![Part::Intro(vec![Inline::Text(
        "For the collective whose timing varies most across ranks, the ranks that start it \
         last in each step: every other rank waits for them.",
    )])];
    if let Some(kernel) = &v.kernel {
        parts.push(Part::Collective {
            kernel: kernel.clone(),
            stream: v.stream,
            steps: v.steps_used.clone(),
        });
    }
    if !v.flags.is_empty() {
        let rows = v
            .flags
            .iter()
            .map(|f| {
                vec![
                    Cell::Number(f.rank.to_string()),
                    figure(
                        f.flagged_steps as f64,
                        "straggler-flagged-steps",
                        Unit::Count,
                        &rank_ctx(f.rank),
                    ),
                ]
            })
            .collect();
        parts.push(Part::Table(Table::new(
            &[],
            &["Rank", "Steps among the last"],
            rows,
        )));
    }
    parts.extend(busy_by_rank(&ctx.all.temporal_breakdown));
    parts.extend(notes(&v.notes));
    block(gist, parts)
}

/// Each rank's GPU busy time (compute + non-compute of the temporal breakdown) beside the median
/// rank's: in synchronous training the busiest rank sets the pace.
fn busy_by_rank(rows: &[TemporalBreakdown]) -> Vec<Part> {
    if rows.len() < 2 {
        return Vec::new();
    }
    let busy = |r: &TemporalBreakdown| r.compute_us + r.non_compute_us;
    let mut sorted: Vec<f64> = rows.iter().map(busy).collect();
    crate::sort::sort_by(&mut sorted, f64::total_cmp);
    let median = sorted[(sorted.len() - 1) / 2];
    let table_rows = rows
        .iter()
        .map(|r| {
            let c = rank_ctx(r.rank);
            let vs = if median > 0.0 {
                100.0 * (busy(r) - median) / median
            } else {
                0.0
            };
            vec![
                Cell::Number(r.rank.to_string()),
                figure(busy(r), "rank-busy-us", Unit::Micros, &c),
                figure(vs, "rank-busy-vs-median-pct", Unit::Pct, &c),
            ]
        })
        .collect();
    vec![
        Part::Heading("GPU busy time by rank".into()),
        Part::Muted(format!(
            "Compute and non-compute time of each rank's GPU, against the median rank ({}).",
            format::micros(median)
        )),
        Part::Table(Table::new(
            &[],
            &["Rank", "GPU busy", "vs median"],
            table_rows,
        )),
    ]
}
