//! The timeline's rank lanes mark each listed collective instance's last arrival (the moment every
//! rank of it could start moving data): one mark per rank of the instance at that time, the last
//! rank's mark set apart. Plain Rust tested natively; `ui::timeline_ranks` draws the marks.

use crate::analysis::collectives::Collectives;
use crate::analysis::rank_lanes::RankLanesView;

/// One mark on a rank's lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrivalMark {
    /// The lane's row (its position in the view's lanes).
    pub row: usize,
    /// The instance's last arrival, ns (the lanes' time axis).
    pub at_ns: i64,
    /// This rank arrived last (the others waited for it).
    pub last: bool,
}

/// The marks inside the view's range, for the instances the collectives analysis lists (those with
/// the most wait).
pub fn arrival_marks(c: &Collectives, view: &RankLanesView) -> Vec<ArrivalMark> {
    let row_of = |rank: i64| view.lanes.iter().position(|l| l.rank == rank);
    let mut marks: Vec<ArrivalMark> = c
        .instances
        .iter()
        .filter_map(|i| {
            let at_ns = i.arrivals.iter().map(|a| a.1).max()?;
            (view.start_ns..=view.end_ns)
                .contains(&at_ns)
                .then_some((i, at_ns))
        })
        .flat_map(|(i, at_ns)| {
            i.arrivals.iter().filter_map(move |&(rank, ..)| {
                Some(ArrivalMark {
                    row: row_of(rank)?,
                    at_ns,
                    last: rank == i.last_rank,
                })
            })
        })
        .collect();
    crate::sort::sort_by_key(&mut marks, |m| (m.row, m.at_ns, m.last));
    marks.dedup();
    marks
}
