//! Blocks of launches and the work around kernels: launch statistics, queue length, kernel
//! sequences, memory copies, profiler steps.

use super::{block, fact, figure, notes, rank_ctx, Block, Cell, Ctx, Inline, Part, Table, Unit};
use crate::analysis::all::RankSequences;
use crate::analysis::gpu::Describe;
use crate::analysis::launch::LaunchStats;
use crate::analysis::memcpy::MemoryOps;
use crate::analysis::queue::StreamQueue;
use crate::analysis::steps::RankSteps;
use crate::report::format;
use crate::report::redact::NameKind;

/// Names of a kernel sequence listed before "… N more".
const PATTERN_SHOWN: usize = 8;

/// Mean, median and max of a distribution as three figures `{prefix}-mean-us`, ...
fn describe_cells(
    d: &Describe,
    metrics: [&'static str; 3],
    c: &[(&'static str, String)],
) -> [Cell; 3] {
    [
        figure(d.mean, metrics[0], Unit::Micros, c),
        figure(d.p50, metrics[1], Unit::Micros, c),
        figure(d.max, metrics[2], Unit::Micros, c),
    ]
}

pub fn launches(rows: &[LaunchStats], ctx: &Ctx) -> Block {
    let mine = rows.iter().find(|r| r.rank == ctx.rank);
    let gist = mine.map_or(String::new(), |r| {
        format!(
            "{} launches · median launch delay {} · {} short kernels",
            format::number(r.launches as f64),
            format::micros(r.delay_us.p50),
            format::number(r.short_kernels as f64)
        )
    });
    let mut parts = vec![Part::Intro(vec![
        Inline::Text(
            "Per kernel launch: the CPU time of the launch call, the kernel's GPU time, and the \
             delay from the launch call to the kernel's start. ",
        ),
        Inline::Bold("Short kernels"),
        Inline::Text(
            " take less GPU time than their launch took CPU time (launch-bound: fuse them, or use \
             CUDA graphs / torch.compile).",
        ),
    ])];
    if rows.is_empty() {
        parts.push(Part::Muted("No kernel launches matched to kernels.".into()));
        return block(gist, parts);
    }
    parts.push(Part::Table(launch_table(rows)));
    if let Some(r) = mine {
        parts.push(launch_facts(r));
    }
    block(gist, parts)
}

fn launch_table(rows: &[LaunchStats]) -> Table {
    let table_rows = rows
        .iter()
        .map(|r| {
            let c = rank_ctx(r.rank);
            let mut cells = vec![
                Cell::Number(r.rank.to_string()),
                figure(r.launches as f64, "launch-count", Unit::Count, &c),
            ];
            cells.extend(describe_cells(
                &r.cpu_us,
                [
                    "launch-cpu-mean-us",
                    "launch-cpu-p50-us",
                    "launch-cpu-max-us",
                ],
                &c,
            ));
            cells.extend(describe_cells(
                &r.gpu_us,
                [
                    "launch-gpu-mean-us",
                    "launch-gpu-p50-us",
                    "launch-gpu-max-us",
                ],
                &c,
            ));
            cells.extend(describe_cells(
                &r.delay_us,
                [
                    "launch-delay-mean-us",
                    "launch-delay-p50-us",
                    "launch-delay-max-us",
                ],
                &c,
            ));
            cells.extend([
                figure(
                    r.short_kernels as f64,
                    "launch-short-kernels",
                    Unit::Count,
                    &c,
                ),
                figure(
                    r.runtime_outliers as f64,
                    "launch-runtime-outliers",
                    Unit::Count,
                    &c,
                ),
                figure(
                    r.delay_outliers as f64,
                    "launch-delay-outliers",
                    Unit::Count,
                    &c,
                ),
            ]);
            cells
        })
        .collect();
    Table::new(
        &[],
        &[
            "Rank",
            "Launches",
            "CPU mean",
            "CPU median",
            "CPU max",
            "GPU mean",
            "GPU median",
            "GPU max",
            "Delay mean",
            "Delay median",
            "Delay max",
            "Short kernels",
            "Slow launches",
            "Late starts",
        ],
        table_rows,
    )
}

fn launch_facts(r: &LaunchStats) -> Part {
    let c = rank_ctx(r.rank);
    Part::Facts(
        [
            fact(
                "Launch calls, CPU total",
                r.cpu_total_us,
                "launch-cpu-total-us",
                Unit::Micros,
                &c,
            ),
            fact(
                "Kernels, GPU total",
                r.gpu_total_us,
                "launch-gpu-total-us",
                Unit::Micros,
                &c,
            ),
            fact(
                "Launch delay, total",
                r.delay_total_us,
                "launch-delay-total-us",
                Unit::Micros,
                &c,
            ),
            fact(
                "Slow launch: CPU time over",
                r.runtime_cutoff_us,
                "launch-runtime-cutoff-us",
                Unit::Micros,
                &c,
            ),
            fact(
                "Late start: delay over",
                r.launch_delay_cutoff_us,
                "launch-delay-cutoff-us",
                Unit::Micros,
                &c,
            ),
        ]
        .into_iter()
        .flatten()
        .collect(),
    )
}

pub fn queue(rows: &[StreamQueue], ctx: &Ctx) -> Block {
    let mine: Vec<&StreamQueue> = rows.iter().filter(|r| r.rank == ctx.rank).collect();
    let longest = mine.iter().map(|r| r.queue_length.max).fold(0.0, f64::max);
    let blocked: f64 = mine.iter().map(|r| r.blocked_us).sum();
    let mut parts = ctx.rank_label();
    parts.push(Part::Intro(vec![Inline::Text(
        "Kernels launched but not finished, per stream. A queue that stays near zero means \
         the GPU waits for the CPU; a full queue (1024) blocks the CPU on the next launch.",
    )]));
    if mine.is_empty() {
        parts.push(Part::Muted("No GPU streams on this rank.".into()));
        return block("", parts);
    }
    let table_rows = mine
        .iter()
        .map(|r| {
            let c = [
                ("rank", r.rank.to_string()),
                ("stream", r.stream.to_string()),
            ];
            let q = &r.queue_length;
            vec![
                Cell::Number(r.stream.to_string()),
                figure(q.mean, "queue-length-mean", Unit::Count, &c),
                figure(q.p50, "queue-length-p50", Unit::Count, &c),
                figure(q.max, "queue-length-max", Unit::Count, &c),
                figure(r.blocked_us, "queue-blocked-us", Unit::Micros, &c),
                figure(r.blocked_ratio, "queue-blocked-ratio", Unit::Ratio, &c),
            ]
        })
        .collect();
    parts.push(Part::Table(Table::new(
        &[],
        &[
            "Stream",
            "Mean length",
            "Median",
            "Max",
            "Blocked",
            "Blocked share",
        ],
        table_rows,
    )));
    let gist = format!(
        "longest queue {} · blocked on a full queue {}",
        format::number(longest),
        format::micros(blocked)
    );
    block(gist, parts)
}

pub fn sequences(list: &[RankSequences], ctx: &Ctx) -> Block {
    let mut parts = ctx.rank_label();
    parts.push(Part::Intro(vec![Inline::Text(
        "Kernel sequences that repeat under the same operator: candidates for fusion \
         (torch.compile, a fused kernel) to save launches and memory round trips.",
    )]));
    let Some(r) = list.iter().find(|r| r.rank == ctx.rank).or(list.first()) else {
        parts.push(Part::Muted("No result.".into()));
        return block("", parts);
    };
    let r = &r.result;
    let gist = format!(
        "{} repeated patterns",
        format::number(r.patterns_total as f64)
    );
    if r.rows.is_empty() {
        parts.push(Part::Muted("No repeated kernel sequences.".into()));
    } else {
        let rows = r
            .rows
            .iter()
            .map(|s| {
                let c = [
                    ("rank", ctx.rank.to_string()),
                    ("pattern", s.pattern.clone()),
                ];
                let steps: Vec<&str> = s.pattern.split('|').collect();
                vec![
                    Cell::Steps {
                        shown: steps
                            .iter()
                            .take(PATTERN_SHOWN)
                            .map(|p| p.to_string())
                            .collect(),
                        more: steps.len().saturating_sub(PATTERN_SHOWN),
                    },
                    figure(s.count as f64, "sequence-count", Unit::Count, &c),
                    figure(
                        s.gpu_kernel_duration_us,
                        "sequence-gpu-us",
                        Unit::Micros,
                        &c,
                    ),
                    figure(s.cpu_op_duration_us, "sequence-cpu-us", Unit::Micros, &c),
                ]
            })
            .collect();
        parts.push(Part::Table(Table::new(
            &["Operator, then its kernels"],
            &["Times", "GPU time", "CPU op time"],
            rows,
        )));
    }
    parts.extend(notes(std::slice::from_ref(&r.note)));
    block(gist, parts)
}

pub fn memory(rows: &[MemoryOps], ctx: &Ctx) -> Block {
    let mine: Vec<&MemoryOps> = rows.iter().filter(|r| r.rank == ctx.rank).collect();
    let time: f64 = mine.iter().map(|r| r.time_us).sum();
    let bytes: u64 = mine.iter().map(|r| r.bytes).sum();
    let mut parts = ctx.rank_label();
    parts.push(Part::Intro(vec![
        Inline::Text(
            "GPU copies and sets by kind. Host-to-device copies from pageable memory are slow and \
             block: use ",
        ),
        Inline::Code("pin_memory=True"),
        Inline::Text(" and "),
        Inline::Code("non_blocking=True"),
        Inline::Text("."),
    ]));
    if mine.is_empty() {
        parts.push(Part::Muted("No memory copies or sets on this rank.".into()));
        return block("no copies or sets", parts);
    }
    let table_rows = mine
        .iter()
        .map(|r| {
            let c = [
                ("rank", r.rank.to_string()),
                ("op", r.op.to_string()),
                ("direction", r.direction.to_string()),
                ("memory", r.memory.to_string()),
            ];
            vec![
                Cell::Name(NameKind::Copy, r.name.clone()),
                Cell::Text(r.direction.to_string()),
                Cell::Text(r.memory.to_string()),
                figure(r.count as f64, "memcpy-count", Unit::Count, &c),
                figure(r.bytes as f64, "memcpy-bytes", Unit::Bytes, &c),
                figure(r.time_us, "memcpy-time-us", Unit::Micros, &c),
                figure(r.bandwidth_gbps, "memcpy-gbps", Unit::Gbps, &c),
            ]
        })
        .collect();
    parts.push(Part::Table(Table::new(
        &["Operation", "Direction", "Memory"],
        &["Count", "Bytes", "Time", "Bandwidth"],
        table_rows,
    )));
    let gist = format!("{} moved in {}", format::bytes(bytes), format::micros(time));
    block(gist, parts)
}

pub fn steps(rows: &[RankSteps], ctx: &Ctx) -> Block {
    let mut parts = ctx.rank_label();
    let Some(r) = rows
        .iter()
        .find(|r| r.rank == ctx.rank)
        .filter(|r| !r.steps.is_empty())
    else {
        parts.push(Part::Muted(
            "No ProfilerStep#N events: record with torch.profiler.schedule and call prof.step() each iteration to get per-step figures.".into(),
        ));
        return block("no ProfilerStep annotations", parts);
    };
    let c = rank_ctx(ctx.rank);
    let mean = r
        .mean_step_us
        .and_then(|m| fact("Mean step", m, "step-mean-us", Unit::Micros, &c));
    parts.extend(mean.map(|f| Part::Facts(vec![f])));
    let table_rows = r
        .steps
        .iter()
        .map(|s| {
            let c = [("rank", ctx.rank.to_string()), ("step", s.step.to_string())];
            vec![
                Cell::Number(s.step.to_string()),
                figure(s.start_us, "step-start-us", Unit::Micros, &c),
                figure(s.duration_us, "step-duration-us", Unit::Micros, &c),
                Cell::Number(if s.analysed { "yes" } else { "no" }.into()),
            ]
        })
        .collect();
    parts.push(Part::Table(Table::new(
        &[],
        &["Step", "Start", "Duration", "Analysed"],
        table_rows,
    )));
    let gist = r
        .mean_step_us
        .map_or("no ProfilerStep annotations".into(), |m| {
            format!(
                "{} steps · mean {}",
                format::int(r.steps.len() as u64),
                format::micros(m)
            )
        });
    block(gist, parts)
}
