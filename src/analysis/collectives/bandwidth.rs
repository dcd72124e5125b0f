//! Algorithm and bus bandwidth per operation and message size, with nccl-tests' definitions:
//! algbw = size / time, busbw = algbw × the operation's factor for n ranks
//! ([`CollectiveKind::bus_factor`]). Time is the transfer (last arrival → end) when the instance is
//! matched across ranks, else the kernel's whole duration (which includes waiting: a lower bound).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::inputs::CollectiveOp;
use super::kind::CollectiveKind;

/// Rows the table keeps (most time first); the rest are summed in the note.
pub const MAX_ROWS: usize = 64;

crate::stable_enum! {
    /// Which time the bandwidth is over.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum BandwidthBasis {
        /// From the last rank's arrival to the end: the time data moves.
        Transfer,
        /// The kernel's whole duration (one rank only: includes waiting for peers).
        KernelDuration,
    }
}

/// One instance measured for bandwidth.
#[derive(Clone, Debug)]
pub struct Measured {
    pub kind: CollectiveKind,
    pub bytes: Option<u64>,
    /// Ranks of the collective: `Group size`, else the ranks the instance was seen on.
    pub ranks: Option<u32>,
    pub time_ns: i64,
    pub basis: BandwidthBasis,
}

impl Measured {
    pub fn of(
        op: &CollectiveOp,
        time_ns: i64,
        seen_on: Option<u32>,
        basis: BandwidthBasis,
    ) -> Self {
        Measured {
            kind: op.kind,
            bytes: op.bytes,
            ranks: op.group_size.or(seen_on),
            time_ns,
            basis,
        }
    }
}

/// Bandwidth of one operation and message size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KindBandwidth {
    pub kind: CollectiveKind,
    /// Message size, bytes (`None`: the trace does not say).
    pub bytes: Option<u64>,
    pub ranks: Option<u32>,
    pub basis: BandwidthBasis,
    pub count: u64,
    /// Σ time, ns.
    pub time_ns: i64,
    /// Σ bytes / Σ time, GB/s (10^9 bytes per second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algbw_gbps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busbw_gbps: Option<f64>,
}

/// The table: one row per (operation, size, ranks, basis), most time first.
pub fn bandwidth_table(measured: Vec<Measured>) -> Vec<KindBandwidth> {
    type Row = (u64, i64);
    let mut rows: BTreeMap<(CollectiveKind, Option<u64>, Option<u32>, BandwidthBasis), Row> =
        BTreeMap::new();
    for m in measured {
        let r = rows.entry((m.kind, m.bytes, m.ranks, m.basis)).or_default();
        r.0 += 1;
        r.1 += m.time_ns;
    }
    let mut out: Vec<KindBandwidth> = rows
        .into_iter()
        .map(|((kind, bytes, ranks, basis), (count, time_ns))| {
            let algbw = bytes
                .filter(|_| time_ns > 0)
                .map(|b| b as f64 * count as f64 / time_ns as f64);
            let busbw = algbw
                .zip(ranks.and_then(|n| kind.bus_factor(n)))
                .map(|(a, f)| a * f);
            KindBandwidth {
                kind,
                bytes,
                ranks,
                basis,
                count,
                time_ns,
                algbw_gbps: algbw,
                busbw_gbps: busbw,
            }
        })
        .collect();
    crate::sort::sort_by(&mut out, |a, b| {
        b.time_ns
            .cmp(&a.time_ns)
            .then(a.kind.cmp(&b.kind))
            .then(a.bytes.cmp(&b.bytes))
    });
    out.truncate(MAX_ROWS);
    out
}
