//! Memory copies and sets: by direction (HtoD, DtoH, DtoD, ...) and host memory (pageable, pinned),
//! with bytes, time and bandwidth.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::gpu::{describe, us, Describe, KernelType, RankPrep};
use super::names::{is_memcpy_name, is_memset_name};
use super::options::{AnalysisOptions, Mode};
use crate::table::{EventKind, TraceSet};

/// One kind of copy or set on one rank.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryOps {
    pub rank: i64,
    /// Group label: `Memcpy HtoD (Pinned -> Device)`, `Memset (Device)`; in HTA-compat mode HTA's
    /// label (`Memcpy HtoD`, `Memset`).
    pub name: String,
    /// `memcpy` or `memset`.
    pub op: String,
    /// `HtoD`, `DtoH`, `DtoD`, `HtoH`, `PtoP` or `""` (sets).
    pub direction: String,
    /// Text in parentheses of the name (`Pageable -> Device`, `Pinned -> Device`, `Device`).
    pub memory: String,
    pub count: u64,
    pub bytes: u64,
    pub time_us: f64,
    /// `bytes / time`, GB/s (10^9 bytes per second); 0 when time is 0.
    pub bandwidth_gbps: f64,
    /// Per-operation bandwidth (the trace's `memory bandwidth (GB/s)` arg, else bytes/dur), GB/s.
    /// HTA-compat: statistics of HTA's bandwidth time series (running sum of concurrent copies).
    pub per_op_gbps: Describe,
}

pub(crate) fn direction_of(name: &str) -> &str {
    for d in [
        "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "HtoA", "AtoH", "AtoD", "DtoA", "AtoA",
    ] {
        if name.contains(d) {
            return d;
        }
    }
    ""
}

fn memory_of(name: &str) -> &str {
    match (name.find('('), name.rfind(')')) {
        (Some(a), Some(b)) if b > a => &name[a + 1..b],
        _ => "",
    }
}

/// HTA's bandwidth "time series": +bw at each start, −bw at each end, running sum in time order,
/// keeping the positive points (float residues of a sum back at zero included, as HTA counts them).
/// HTA lists every start, then every end, and sorts by time; at the same instant this takes that
/// list's order (starts first, each in file order), as a stable sort would (HTA's own sort is not
/// stable, so ties can still differ).
fn hta_bandwidth_series(ops: &[(i64, i64, f64)]) -> Vec<f64> {
    let mut ev: Vec<(i64, u8, usize, f64)> = Vec::with_capacity(ops.len() * 2);
    for (i, &(ts, end, bw)) in ops.iter().enumerate() {
        ev.push((ts, 0, i, bw));
        ev.push((end, 1, i, -bw));
    }
    crate::sort::sort_by_key(&mut ev, |e| (e.0, e.1, e.2));
    let mut sum = 0.0;
    let mut out = Vec::new();
    for (_, _, _, d) in ev {
        sum += d;
        if sum > 0.0 {
            out.push(sum);
        }
    }
    out
}

/// HTA's group of a memory row (`get_memory_kernel_type`): `Memset`, the first 11 characters of a
/// `Memcpy` name (`Memcpy HtoD`), else `Memcpy Unknown` (MTIA `dma_*`).
fn hta_memory_label(name: &str) -> String {
    if is_memset_name(name) {
        "Memset".into()
    } else if is_memcpy_name(name) {
        name.chars().take(11).collect()
    } else {
        "Memcpy Unknown".into()
    }
}

pub fn memory_prepared(rank: i64, prep: &RankPrep) -> Vec<MemoryOps> {
    let t = prep.table;
    let compat = prep.mode == Mode::HtaCompat;
    let bytes_col = t.arg("bytes");
    let bw_col = t.arg("memory bandwidth (GB/s)");
    type Group = (
        String,
        String,
        String,
        u64,
        i64,
        Vec<f64>,
        Vec<(i64, i64, f64)>,
    );
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    for d in &prep.dev {
        let name = t.name_of_id(d.name);
        let op = if compat {
            // HTA: rows typed MEMORY by name (`^Memcpy|^Memset|^dma`).
            if d.ktype != KernelType::Memory {
                continue;
            }
            if is_memset_name(name) {
                "memset"
            } else {
                "memcpy"
            }
        } else {
            match d.kind {
                EventKind::Memcpy => "memcpy",
                EventKind::Memset => "memset",
                _ => continue,
            }
        };
        let row = d.row as usize;
        let bytes = bytes_col
            .and_then(|c| c.find(row).and_then(|p| c.i64_at(p)))
            .unwrap_or(0)
            .max(0) as u64;
        let dur = d.end - d.ts;
        let bw_arg = bw_col.and_then(|c| c.find(row).and_then(|p| c.f64_at(p)));
        let bw = if compat {
            // HTA reads the bandwidth from the trace only, 0 when absent.
            Some(bw_arg.unwrap_or(0.0))
        } else {
            bw_arg.or_else(|| (dur > 0).then(|| bytes as f64 / dur as f64))
        };
        let label = if compat {
            hta_memory_label(name)
        } else {
            name.to_string()
        };
        let g = groups.entry(label).or_insert_with(|| {
            (
                op.to_string(),
                direction_of(name).to_string(),
                memory_of(name).to_string(),
                0,
                0,
                Vec::new(),
                Vec::new(),
            )
        });
        g.3 += bytes;
        g.4 += dur.max(0);
        if let Some(bw) = bw {
            g.5.push(bw);
            // HTA rounds 0-µs copies up to 1 µs in its bandwidth series.
            let end = if dur == 0 { d.ts + 1000 } else { d.end };
            g.6.push((d.ts, end, bw));
        }
    }
    groups
        .into_iter()
        .map(
            |(name, (op, direction, memory, bytes, time, bws, series))| MemoryOps {
                rank,
                name,
                op,
                direction,
                memory: if compat { String::new() } else { memory },
                count: bws.len() as u64,
                bytes,
                time_us: us(time),
                bandwidth_gbps: if time > 0 {
                    bytes as f64 / time as f64
                } else {
                    0.0
                },
                per_op_gbps: if compat {
                    describe(hta_bandwidth_series(&series))
                } else {
                    describe(bws)
                },
            },
        )
        // HTA describes the positive points only: a group without any has no row.
        .filter(|m| !compat || m.per_op_gbps.count > 0)
        .collect()
}

pub fn memory_bandwidth(set: &TraceSet, opts: &AnalysisOptions) -> Vec<MemoryOps> {
    set.ranks
        .iter()
        .flat_map(|r| memory_prepared(r.rank, &RankPrep::new(&r.table, opts)))
        .collect()
}
