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
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersection() {
        let u = union(vec![(5, 7), (0, 2), (1, 3), (3, 4)]);
        assert_eq!(u, vec![(0, 4), (5, 7)]);
        assert_eq!(intersection_length(&u, &[(3, 6)]), 2);
        assert_eq!(intersection_length(&u, &[]), 0);
    }
}
