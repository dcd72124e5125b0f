//! The critical-path block: its length, what bounds it, the events and segments on it.

use super::{
    bar, block, fact, figure, notes, rank_ctx, Block, Cell, Ctx, Inline, Part, Table, Unit,
    MAX_ROWS,
};
use crate::analysis::all::RankCriticalPath;
use crate::analysis::critical_path::{BoundBy, CriticalPathResult, PathSegment};
use crate::report::format;
use crate::report::redact::NameKind;

/// What a `bound_by` category means, in words.
pub fn bound_label(b: BoundBy) -> &'static str {
    match b {
        BoundBy::Cpu => "CPU",
        BoundBy::GpuCompute => "GPU compute",
        BoundBy::GpuCommunication => "GPU communication",
        BoundBy::GpuKernelLaunchOverhead => "kernel launch overhead",
        BoundBy::GpuKernelKernelOverhead => "gaps between kernels",
        BoundBy::DataLoading => "data loading",
        BoundBy::Nothing => "",
    }
}

fn bound_class(b: BoundBy) -> &'static str {
    crate::page::palette::Hue::of_bound(b).class()
}

pub fn critical_path(list: &[RankCriticalPath], ctx: &Ctx) -> Block {
    let mut parts = ctx.rank_label();
    parts.push(Part::Intro(vec![Inline::Text(
        "The longest chain of dependent work (CPU ops, launches, kernels, syncs) through the \
         window: shortening anything off this path does not make the step faster.",
    )]));
    let Some(r) = list.iter().find(|r| r.rank == ctx.rank).or(list.first()) else {
        parts.push(Part::Muted("No result.".into()));
        return block("", parts);
    };
    let r = &r.result;
    if let Some(e) = r.error() {
        parts.push(Part::Muted(e));
        return block("not computed", parts);
    }
    let top = r
        .summary
        .iter()
        .max_by(|a, b| a.pct.total_cmp(&b.pct))
        .filter(|s| s.pct > 0.0);
    let gist = top.map_or(String::new(), |s| {
        format!(
            "{} of the path is {}",
            format::pct(s.pct),
            bound_label(s.bound_by)
        )
    });
    let c = rank_ctx(ctx.rank);
    parts.push(Part::Facts(
        [
            fact(
                "Path length",
                r.total_us,
                "critical-path-total-us",
                Unit::Micros,
                &c,
            ),
            fact(
                "Segments",
                r.segments as f64,
                "critical-path-segments",
                Unit::Count,
                &c,
            ),
        ]
        .into_iter()
        .flatten()
        .collect(),
    ));
    parts.extend(shares(r, ctx.rank));
    parts.extend(events(r, ctx.rank));
    if !r.top_segments.is_empty() {
        parts.push(Part::Heading("Longest segments".into()));
        parts.push(Part::Table(segment_table(
            &r.top_segments,
            ctx.rank,
            "longest",
        )));
    }
    if !r.rows.is_empty() {
        parts.push(Part::Folded {
            summary: format!(
                "The path, segment by segment ({} of {})",
                format::int(r.rows.len().min(MAX_ROWS) as u64),
                format::number(r.segments as f64)
            ),
            table: segment_table(&r.rows, ctx.rank, "path"),
        });
    }
    parts.extend(notes(&r.notes));
    block(gist, parts)
}

/// The share of the path each category bounds, as a bar and a table.
fn shares(r: &CriticalPathResult, rank: i64) -> [Part; 2] {
    let bar_parts: Vec<(&str, f64, &'static str)> = r
        .summary
        .iter()
        .map(|s| (bound_label(s.bound_by), s.pct, bound_class(s.bound_by)))
        .collect();
    let rows = r
        .summary
        .iter()
        .map(|s| {
            let c = [
                ("rank", rank.to_string()),
                ("bound-by", s.bound_by.as_str().to_string()),
            ];
            vec![
                Cell::Text(bound_label(s.bound_by).to_string()),
                figure(s.duration_us, "critical-path-share-us", Unit::Micros, &c),
                figure(s.pct, "critical-path-share-pct", Unit::Pct, &c),
            ]
        })
        .collect();
    [
        bar(&bar_parts),
        Part::Table(Table::new(&["Bound by"], &["Time", "Share"], rows)),
    ]
}

/// The events with the most time on the path.
fn events(r: &CriticalPathResult, rank: i64) -> Vec<Part> {
    if r.top_events.is_empty() {
        return Vec::new();
    }
    let rows = r
        .top_events
        .iter()
        .map(|e| {
            let c = [("rank", rank.to_string()), ("event", e.name.clone())];
            vec![
                Cell::Name(NameKind::Op, e.name.clone()),
                Cell::Text(bound_label(e.bound_by).to_string()),
                figure(e.duration_us, "critical-path-event-us", Unit::Micros, &c),
                figure(
                    e.segments as f64,
                    "critical-path-event-segments",
                    Unit::Count,
                    &c,
                ),
            ]
        })
        .collect();
    vec![
        Part::Heading("Events with the most time on the path".into()),
        Part::Table(Table::new(
            &["Event", "Bound by"],
            &["Time on path", "Segments"],
            rows,
        )),
    ]
}

/// Segments of the path; `list` (`longest`, `path`) and the position tell apart the figures of
/// the same event shown twice.
fn segment_table(rows: &[PathSegment], rank: i64, list: &'static str) -> Table {
    let origin = rows
        .iter()
        .map(|s| s.start_us)
        .fold(f64::INFINITY, f64::min);
    let table_rows = rows
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let c = [
                ("rank", rank.to_string()),
                ("list", list.to_string()),
                ("segment", i.to_string()),
                ("row", s.row.map_or(String::new(), |r| r.to_string())),
            ];
            vec![
                Cell::Name(NameKind::Op, s.name.clone().unwrap_or_default()),
                Cell::Text(bound_label(s.bound_by).to_string()),
                Cell::Text(s.edge_type.as_str().to_string()),
                Cell::Number(
                    s.stream
                        .filter(|x| *x >= 0)
                        .map_or("CPU".into(), |x| x.to_string()),
                ),
                figure(
                    s.start_us - origin,
                    "critical-path-segment-start-us",
                    Unit::Micros,
                    &c,
                ),
                figure(s.duration_us, "critical-path-segment-us", Unit::Micros, &c),
            ]
        })
        .collect();
    Table::new(
        &["Event", "Bound by", "Edge"],
        &["Stream", "Start (from first shown)", "Duration"],
        table_rows,
    )
}
