//! The "Collectives across ranks" block: per rank wait versus transfer, the ranks the others wait
//! for, bandwidth per operation and size, the parallelism the collectives show, the instances with
//! the most wait.

use super::{
    block, figure, figure_opt, notes, rank_ctx, Block, Cell, Ctx, Inline, Part, Table, Unit,
};
use crate::analysis::collectives::Collectives;
use crate::analysis::roofline::PeerLink;
use crate::report::format;

fn us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}

fn gist(c: &Collectives) -> String {
    if c.is_empty() {
        return "no collectives".into();
    }
    if !c.split {
        let n: u64 = c.per_rank.iter().map(|r| r.ops).sum();
        return format!(
            "{} collectives; wait and transfer need two or more ranks",
            format::int(n)
        );
    }
    let mut g = format!(
        "wait {} · transfer {}",
        format::micros(us(c.total_wait_ns())),
        format::micros(us(c.total_transfer_ns()))
    );
    if let Some(l) = c.late_ranks.first() {
        g += &format!(" · rank {} most waited for", l.rank);
    }
    g
}

fn per_rank(c: &Collectives) -> Part {
    let split = |ns: i64, metric: &'static str, ctx: &[(&'static str, String)]| {
        if c.split {
            figure(us(ns), metric, Unit::Micros, ctx)
        } else {
            Cell::Missing
        }
    };
    let rows = c
        .per_rank
        .iter()
        .map(|r| {
            let x = rank_ctx(r.rank);
            vec![
                Cell::Number(r.rank.to_string()),
                figure(r.ops as f64, "collective-count", Unit::Count, &x),
                figure(us(r.kernel_ns), "collective-kernel-us", Unit::Micros, &x),
                split(r.wait_ns, "collective-wait-us", &x),
                split(r.transfer_ns, "collective-transfer-us", &x),
                split(r.exposed_wait_ns, "collective-exposed-wait-us", &x),
                split(r.exposed_transfer_ns, "collective-exposed-transfer-us", &x),
                figure(
                    r.arrived_last as f64,
                    "collective-arrived-last",
                    Unit::Count,
                    &x,
                ),
            ]
        })
        .collect();
    Part::Table(Table::new(
        &[],
        &[
            "Rank",
            "Collectives",
            "Kernel time",
            "Wait",
            "Transfer",
            "Wait, nothing else running",
            "Transfer, nothing else running",
            "Arrived last",
        ],
        rows,
    ))
}

fn late_ranks(c: &Collectives) -> Part {
    let rows = c
        .late_ranks
        .iter()
        .map(|l| {
            let x = rank_ctx(l.rank);
            vec![
                Cell::Text(l.causes.first().map_or("", |s| s.cause.label()).to_string()),
                Cell::Number(l.rank.to_string()),
                figure(l.times_last as f64, "late-rank-times-last", Unit::Count, &x),
                figure(
                    us(l.caused_wait_ns),
                    "late-rank-caused-wait-us",
                    Unit::Micros,
                    &x,
                ),
            ]
        })
        .collect();
    Part::Table(Table::new(
        &["Mostly because"],
        &["Rank", "Times last", "Others' wait"],
        rows,
    ))
}

fn bandwidth(c: &Collectives, link: Option<&PeerLink>) -> Part {
    let rows = c
        .bandwidth
        .iter()
        .map(|b| {
            let x = vec![
                ("collective", b.kind.as_str().to_string()),
                ("bytes", b.bytes.map_or("unknown".into(), |v| v.to_string())),
                ("basis", b.basis.as_str().to_string()),
                ("ranks", b.ranks.map_or("unknown".into(), |v| v.to_string())),
            ];
            vec![
                Cell::Text(b.kind.label().to_string()),
                Cell::Text(b.bytes.map_or("?".into(), format::bytes)),
                Cell::Text(b.basis.as_str().replace('_', " ")),
                Cell::Number(b.ranks.map_or("?".into(), |n| n.to_string())),
                figure(b.count as f64, "collective-bw-count", Unit::Count, &x),
                figure(us(b.time_ns), "collective-bw-time-us", Unit::Micros, &x),
                figure_opt(b.algbw_gbps, "collective-algbw-gbps", Unit::Gbps, &x),
                figure_opt(b.busbw_gbps, "collective-busbw-gbps", Unit::Gbps, &x),
                figure_opt(
                    link.zip(b.busbw_gbps).map(|(l, bw)| l.pct_of(bw)),
                    "collective-busbw-link-pct",
                    Unit::Pct,
                    &x,
                ),
            ]
        })
        .collect();
    Part::Table(Table::new(
        &["Operation", "Size", "Time over"],
        &[
            "Ranks",
            "Count",
            "Time",
            "Algorithm bandwidth",
            "Bus bandwidth",
            "% of link",
        ],
        rows,
    ))
}

fn parallelism(c: &Collectives) -> Part {
    let rows = c
        .parallelism
        .iter()
        .map(|p| {
            let x = vec![("parallelism", p.kind.as_str().to_string())];
            vec![
                Cell::Text(p.kind.label().to_string()),
                Cell::Text(p.evidence.clone()),
                figure(p.ops_per_rank, "parallelism-ops-per-rank", Unit::Count, &x),
                figure_opt(p.ops_per_step, "parallelism-ops-per-step", Unit::Count, &x),
            ]
        })
        .collect();
    Part::Table(Table::new(
        &["Parallelism", "Shown by"],
        &["Per rank", "Per step"],
        rows,
    ))
}

fn instances(c: &Collectives) -> Part {
    let rows: Vec<Vec<Cell>> = c
        .instances
        .iter()
        .enumerate()
        .map(|(n, i)| {
            let x = vec![("instance", n.to_string())];
            let at = match (i.seq, i.step) {
                (Some(s), _) => format!("seq {s}"),
                (None, Some(s)) => format!("step {s} #{}", i.ordinal),
                (None, None) => format!("#{}", i.ordinal),
            };
            vec![
                Cell::Text(i.kind.label().to_string()),
                Cell::Text(format!("{} {at}", i.group)),
                Cell::Number(i.last_rank.to_string()),
                figure(
                    us(i.spread_ns),
                    "collective-instance-spread-us",
                    Unit::Micros,
                    &x,
                ),
                figure(
                    us(i.wait_ns),
                    "collective-instance-wait-us",
                    Unit::Micros,
                    &x,
                ),
                figure(
                    us(i.transfer_ns),
                    "collective-instance-transfer-us",
                    Unit::Micros,
                    &x,
                ),
            ]
        })
        .collect();
    Part::Folded {
        summary: format!(
            "{} instances, most wait first",
            format::int(rows.len() as u64)
        ),
        table: Table::new(
            &["Operation", "Group"],
            &[
                "Last rank",
                "Last after first",
                "Wait (all ranks)",
                "Transfer",
            ],
            rows,
        ),
    }
}

/// The GPUs' peer link, from the first rank whose device is in the table.
fn peer_link(ctx: &Ctx) -> Option<PeerLink> {
    ctx.all
        .roofline
        .iter()
        .find_map(|r| r.roof.peer_link.clone())
}

pub fn collectives(c: &Collectives, ctx: &Ctx) -> Block {
    let mut parts = vec![Part::Intro(vec![
        Inline::Text("Each collective matched across the ranks (by process group and "),
        Inline::Code("Seq"),
        Inline::Text(", else by order): "),
        Inline::Bold("wait"),
        Inline::Text(" runs from a rank's arrival to the last rank's, "),
        Inline::Bold("transfer"),
        Inline::Text(" from the last arrival to the end. Waiting is the late rank's cost; only transfer is the network's."),
    ])];
    if c.is_empty() {
        parts.push(Part::Muted("No collectives in the analysed window.".into()));
        parts.extend(notes(&c.notes));
        return block(gist(c), parts);
    }
    parts.extend(crate::page::collectives_chart::rank_bars(c).map(Part::RankBars));
    parts.push(per_rank(c));
    if !c.late_ranks.is_empty() {
        parts.push(Part::Heading("Ranks the others wait for".into()));
        parts.push(late_ranks(c));
    }
    if !c.bandwidth.is_empty() {
        parts.push(Part::Heading(
            "Bandwidth per operation and size (nccl-tests definitions)".into(),
        ));
        let link = peer_link(ctx);
        parts.push(Part::Muted(match &link {
            Some(l) => format!(
                "Bus bandwidth judged against the GPUs' peer link: {}.",
                l.label()
            ),
            None => "The device's peer link is not known: bus bandwidth is not judged.".into(),
        }));
        parts.push(bandwidth(c, link.as_ref()));
    }
    if !c.parallelism.is_empty() {
        parts.push(Part::Heading("Parallelism the collectives show".into()));
        parts.push(parallelism(c));
    }
    if !c.instances.is_empty() {
        parts.push(instances(c));
    }
    parts.extend(notes(&c.notes));
    block(gist(c), parts)
}
