//! What the diagnosis needs that the analyses do not give: the idle gaps of a rank's *device* timeline
//! (every stream merged), split into host wait / kernel wait / other, and how much of them falls inside
//! DataLoader operations on the CPU.
//!
//! The rows, their launch calls (joined by correlation) and the kernel-wait threshold are the analyses'
//! own ([`RankPrep`], [`AnalysisOptions`]); the per-stream split is `analysis::idle`. Here a gap of the
//! merged device timeline is *host wait* when an activity that ends it was launched after the gap began,
//! else *kernel wait* when shorter than the threshold, else *other* (HTA's categories, device-wide).

use crate::analysis::all::AnalysisOptions;
use crate::analysis::gpu::{union, RankPrep};

/// Idle time of one rank's device timeline, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceIdle {
    /// Σ gaps between merged device activity (= window − busy).
    pub idle_ns: i64,
    pub host_wait_ns: i64,
    pub kernel_wait_ns: i64,
    pub other_ns: i64,
    /// The part of the gaps that falls inside the `data_loader` intervals.
    pub in_data_loader_ns: i64,
    /// The part of the gaps that synchronising calls cause: while each call blocks the host, and
    /// after it until the GPU has work again (a sync while the GPU stays busy causes none).
    pub around_syncs_ns: i64,
}

/// Length of the intersection of two sorted disjoint interval lists.
pub fn intersection_length(a: &[(i64, i64)], b: &[(i64, i64)]) -> i64 {
    let (mut i, mut j, mut total) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if hi > lo {
            total += hi - lo;
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

/// The device-level idle split of one prepared rank; `data_loader` are sorted disjoint CPU intervals.
pub fn device_idle(
    prep: &RankPrep,
    opts: &AnalysisOptions,
    data_loader: &[(i64, i64)],
    syncs: &[(i64, i64)],
) -> DeviceIdle {
    let threshold = opts.kernel_wait_threshold_ns();
    let all = union(prep.dev.iter().map(|d| (d.ts, d.end)).collect());
    let launch_ts = |d: &crate::analysis::gpu::DevRow| {
        d.launch
            .and_then(|r| prep.span(r as usize))
            .map(|(ts, _)| ts)
    };
    let mut out = DeviceIdle::default();
    let mut gaps = Vec::with_capacity(all.len());
    // `prep.dev` is sorted by start: walk it once alongside the gaps.
    let mut next = 0;
    for w in all.windows(2) {
        let (gap_start, gap_end) = (w[0].1, w[1].0);
        let gap = gap_end - gap_start;
        gaps.push((gap_start, gap_end));
        while next < prep.dev.len() && prep.dev[next].ts < gap_end {
            next += 1;
        }
        let late = prep.dev[next..]
            .iter()
            .take_while(|d| d.ts == gap_end)
            .any(|d| launch_ts(d).is_some_and(|l| l > gap_start));
        if late {
            out.host_wait_ns += gap;
        } else if gap < threshold {
            out.kernel_wait_ns += gap;
        } else {
            out.other_ns += gap;
        }
        out.idle_ns += gap;
    }
    out.in_data_loader_ns = intersection_length(&gaps, data_loader);
    out.around_syncs_ns = idle_around(&all, &gaps, syncs);
    out
}

/// The part of the idle `gaps` between the merged device activity `busy` that falls while a sync
/// blocks, or, when the GPU has drained by the sync's end, after it until the next activity starts.
fn idle_around(busy: &[(i64, i64)], gaps: &[(i64, i64)], syncs: &[(i64, i64)]) -> i64 {
    let lost = syncs
        .iter()
        .map(|&(s, e)| {
            let k = busy.partition_point(|b| b.0 <= e);
            let still_busy = k > 0 && busy[k - 1].1 > e;
            let refilled = if still_busy {
                e
            } else {
                busy.get(k).map_or(e, |b| b.0)
            };
            (s, refilled)
        })
        .collect();
    intersection_length(gaps, &union(lost))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sync_causes_the_idle_until_the_gpu_has_work_again() {
        // Idle gaps of the GPU: 100-150 and 200-300; syncs block the host 40-100 (the GPU then
        // waits until 150) and 210-220 while the GPU idles anyway until 300.
        let all = [(0, 100), (150, 200), (300, 400)];
        let gaps: Vec<(i64, i64)> = all.windows(2).map(|w| (w[0].1, w[1].0)).collect();
        let after = |syncs: &[(i64, i64)]| idle_around(&all, &gaps, syncs);
        assert_eq!(after(&[(40, 100)]), 50);
        assert_eq!(after(&[(210, 220)]), 90);
        // A sync that returns while the GPU is still busy causes nothing (the later gap is the host's).
        assert_eq!(after(&[(10, 60)]), 0);
        // Two syncs sharing a gap count it once.
        assert_eq!(after(&[(40, 100), (120, 130)]), 50);
    }

    #[test]
    fn intersection() {
        let u = union(vec![(5, 7), (0, 2), (1, 3), (3, 4)]);
        assert_eq!(u, vec![(0, 4), (5, 7)]);
        assert_eq!(intersection_length(&u, &[(3, 6)]), 2);
        assert_eq!(intersection_length(&u, &[]), 0);
    }
}
