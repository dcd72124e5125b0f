//! The `collectives` command's text and CSV: per rank wait versus transfer, the late ranks and why,
//! bandwidth per operation and size, the parallelism the collectives show, the instances with the
//! most wait.

use super::format::{bytes, decimal, int, micros, pct};
use super::views_text::Grid;
use crate::analysis::collectives::{Collectives, LateRank};

/// Instances listed in the text.
const TEXT_INSTANCES: usize = 10;

fn ms(ns: i64) -> String {
    micros(ns as f64 / 1000.0)
}

fn share(part: i64, whole: i64) -> String {
    if whole <= 0 {
        "-".into()
    } else {
        pct(100.0 * part as f64 / whole as f64)
    }
}

/// Per rank: collectives, kernel time, wait, transfer (and their exposed parts), times last.
pub fn per_rank_grid(c: &Collectives) -> Grid {
    let header = [
        "rank",
        "collectives",
        "kernel",
        "wait",
        "transfer",
        "wait_exposed",
        "transfer_exposed",
        "wait_share",
        "matched",
        "arrived_last",
    ];
    let rows = c
        .per_rank
        .iter()
        .map(|r| {
            let split = |ns: i64| if c.split { ms(ns) } else { "-".into() };
            vec![
                r.rank.to_string(),
                int(r.ops),
                ms(r.kernel_ns),
                split(r.wait_ns),
                split(r.transfer_ns),
                split(r.exposed_wait_ns),
                split(r.exposed_transfer_ns),
                if c.split {
                    share(r.wait_ns, r.kernel_ns)
                } else {
                    "-".into()
                },
                int(r.matched),
                int(r.arrived_last),
            ]
        })
        .collect();
    Grid {
        header: header.iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

/// Per operation and size: count, time, algorithm and bus bandwidth.
pub fn bandwidth_grid(c: &Collectives) -> Grid {
    let header = [
        "operation",
        "size",
        "ranks",
        "count",
        "time",
        "over",
        "algbw GB/s",
        "busbw GB/s",
    ];
    let gb = |x: Option<f64>| x.map_or("-".into(), |v| decimal(v, 2));
    let rows = c
        .bandwidth
        .iter()
        .map(|b| {
            vec![
                b.kind.label().to_string(),
                b.bytes.map_or("?".into(), bytes),
                b.ranks.map_or("?".into(), |n| n.to_string()),
                int(b.count),
                ms(b.time_ns),
                b.basis.as_str().replace('_', " "),
                gb(b.algbw_gbps),
                gb(b.busbw_gbps),
            ]
        })
        .collect();
    Grid {
        header: header.iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

fn late_line(l: &LateRank) -> String {
    let causes: Vec<String> = l
        .causes
        .iter()
        .map(|s| format!("{} ({}, ×{})", s.cause.label(), ms(s.wait_ns), s.instances))
        .collect();
    format!(
        "  rank {}: arrived last {}×, the others waited {} for it; why: {}\n",
        l.rank,
        l.times_last,
        ms(l.caused_wait_ns),
        causes.join("; ")
    )
}

/// The whole text.
pub fn collectives_text(c: &Collectives) -> String {
    let mut out = String::new();
    out += &format!(
        "Collectives over {} rank(s): {} matched by Seq, {} by order, {} on one rank only\n\n",
        c.ranks.len(),
        int(c.matched.by_seq),
        int(c.matched.by_order),
        int(c.matched.unmatched)
    );
    if c.is_empty() {
        out += "No collectives in the analysed window.\n";
    } else {
        out += &per_rank_grid(c).to_text(40);
        if c.split {
            out += &format!(
                "\nIn all: wait {} (waiting for the last rank), transfer {} (moving data).\n",
                ms(c.total_wait_ns()),
                ms(c.total_transfer_ns())
            );
        }
    }
    if !c.late_ranks.is_empty() {
        out += "\nRanks the others wait for:\n";
        for l in c.late_ranks.iter().take(8) {
            out += &late_line(l);
        }
    }
    if !c.bandwidth.is_empty() {
        out += "\nBandwidth per operation and size (nccl-tests: algbw = size/time, busbw = algbw × factor):\n";
        out += &bandwidth_grid(c).to_text(40);
    }
    if !c.parallelism.is_empty() {
        out += "\nParallelism the collectives show:\n";
        for p in &c.parallelism {
            out += &format!(
                "  {}: {} per rank{} ({})\n",
                p.kind.label(),
                decimal(p.ops_per_rank, 1),
                p.ops_per_step
                    .map_or(String::new(), |s| format!(", {} per step", decimal(s, 1))),
                p.evidence
            );
        }
    }
    let waiting: Vec<_> = c
        .instances
        .iter()
        .filter(|i| i.wait_ns > 0)
        .take(TEXT_INSTANCES)
        .collect();
    if !waiting.is_empty() {
        out += "\nInstances with the most wait:\n";
        for i in waiting {
            out += &format!(
                "  {} {}{}{}: last rank {} ({} after the first), total wait {}, transfer {}\n",
                i.kind.label(),
                i.group,
                i.seq.map_or(String::new(), |s| format!(" seq {s}")),
                i.step
                    .map_or(String::new(), |s| format!(" step {s} #{}", i.ordinal)),
                i.last_rank,
                ms(i.spread_ns),
                ms(i.wait_ns),
                ms(i.transfer_ns)
            );
        }
    }
    if !c.notes.is_empty() {
        out += "\nNotes:\n";
        for n in &c.notes {
            out += &format!("  - {n}\n");
        }
    }
    out
}
