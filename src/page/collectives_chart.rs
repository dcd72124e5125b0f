//! The collectives view's per-rank bars, plain Rust tested natively: each rank's wait and transfer
//! as shares of the longest rank's total (one scale for every bar), and the late ranks the
//! diagnosis names (`report::rules::collectives::named_late`) marked. `ui::charts` only draws it.

use crate::analysis::collectives::Collectives;
use crate::report::rules::collectives::named_late;

/// One rank's bar.
#[derive(Clone, Debug, PartialEq)]
pub struct RankBar {
    pub rank: i64,
    pub wait_us: f64,
    pub transfer_us: f64,
    /// Widths, % of the track (the longest rank's wait + transfer fills it).
    pub wait_pct: f64,
    pub transfer_pct: f64,
    /// The others wait for this rank (named by the diagnosis).
    pub late: bool,
    /// Instances it arrived last at.
    pub times_last: u64,
}

/// Every rank's bar, in rank order.
#[derive(Clone, Debug, PartialEq)]
pub struct RankBars {
    pub bars: Vec<RankBar>,
    /// The late ranks marked, most wait caused first.
    pub late_ranks: Vec<i64>,
}

/// The bars; `None` when wait and transfer could not be split (fewer than two ranks matched).
pub fn rank_bars(c: &Collectives) -> Option<RankBars> {
    if !c.split || c.per_rank.is_empty() {
        return None;
    }
    let late_ranks: Vec<i64> = named_late(c).iter().map(|l| l.rank).collect();
    let longest = c
        .per_rank
        .iter()
        .map(|r| r.wait_ns + r.transfer_ns)
        .max()
        .unwrap_or(0);
    let share = |ns: i64| {
        if longest > 0 {
            100.0 * ns as f64 / longest as f64
        } else {
            0.0
        }
    };
    let mut bars: Vec<RankBar> = c
        .per_rank
        .iter()
        .map(|r| RankBar {
            rank: r.rank,
            wait_us: r.wait_ns as f64 / 1e3,
            transfer_us: r.transfer_ns as f64 / 1e3,
            wait_pct: share(r.wait_ns),
            transfer_pct: share(r.transfer_ns),
            late: late_ranks.contains(&r.rank),
            times_last: r.arrived_last,
        })
        .collect();
    crate::sort::sort_by_key(&mut bars, |b| b.rank);
    Some(RankBars { bars, late_ranks })
}
