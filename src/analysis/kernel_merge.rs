//! Per-kernel statistics of a set combined from those of its shards (disjoint sets of ranks): what
//! the kernel breakdown's `kernels_all_ranks` and `top_all_ranks` give over all the calls, from
//! each rank's `kernels` list.
//!
//! Count, sum, mean, min and max are exact (sums in whole ns); the sample std is pooled from each
//! part's mean and std (exact up to rounding); the median of several parts cannot be rebuilt from
//! their summaries: it is the count-weighted median of their medians, and [`MEDIAN_NOTE`] says so.

use std::collections::BTreeMap;

use super::gpu::{us, KernelType};
use super::kernels::{ns_of, rank_and_cut, KernelStats, RankKernelBreakdown};

/// The note of a combined list where a median was made of several parts' medians.
pub const MEDIAN_NOTE: &str = "kernel statistics over all ranks were combined from the ranks' own: a kernel's median over several ranks is the call-count-weighted median of the ranks' medians, not the median of every call (count, sum, mean, min, max are exact, the std is pooled)";

/// One name's statistics gathered over parts.
#[derive(Clone, Debug, Default)]
struct Acc {
    count: u64,
    sum_ns: i64,
    min: f64,
    max: f64,
    /// Each part's (count, mean µs, sum of squared deviations, std).
    parts: Vec<(u64, f64, f64, f64)>,
    /// Each part's (median, count).
    medians: Vec<(f64, u64)>,
}

impl Acc {
    fn add(&mut self, k: &KernelStats) {
        if k.count == 0 {
            return;
        }
        if self.count == 0 {
            self.min = k.min_us;
            self.max = k.max_us;
        } else {
            self.min = self.min.min(k.min_us);
            self.max = self.max.max(k.max_us);
        }
        self.count += k.count;
        self.sum_ns += ns_of(k.sum_us);
        let m2 = k.std_us * k.std_us * (k.count.saturating_sub(1)) as f64;
        self.parts.push((k.count, k.mean_us, m2, k.std_us));
        self.medians.push((k.median_us, k.count));
    }

    fn absorb(&mut self, o: &Acc) {
        if o.count == 0 {
            return;
        }
        if self.count == 0 {
            self.min = o.min;
            self.max = o.max;
        } else {
            self.min = self.min.min(o.min);
            self.max = self.max.max(o.max);
        }
        self.count += o.count;
        self.sum_ns += o.sum_ns;
        self.parts.extend(o.parts.iter().copied());
        self.medians.extend(o.medians.iter().copied());
    }

    fn stats(&self, name: String, kernel_type: KernelType) -> KernelStats {
        let n = self.count;
        let sum_us = us(self.sum_ns);
        let mean = if n > 0 { sum_us / n as f64 } else { f64::NAN };
        let std = if let [(_, _, _, std)] = self.parts[..] {
            std
        } else if n > 1 {
            let m2: f64 = self
                .parts
                .iter()
                .map(|&(c, m, m2, _)| m2 + c as f64 * (m - mean) * (m - mean))
                .sum();
            (m2.max(0.0) / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        KernelStats {
            name,
            kernel_type,
            count: n,
            sum_us,
            mean_us: mean,
            min_us: if n > 0 { self.min } else { 0.0 },
            max_us: if n > 0 { self.max } else { 0.0 },
            std_us: std,
            median_us: weighted_median(&self.medians),
            pct_of_type: 0.0,
        }
    }
}

/// The median of the medians, each counted as many times as its part has calls (the lower middle
/// one for an even total; the only one for one part, so one part's median is kept exactly).
fn weighted_median(medians: &[(f64, u64)]) -> f64 {
    let mut v = medians.to_vec();
    crate::sort::sort_by(&mut v, |a, b| a.0.total_cmp(&b.0));
    let total: u64 = v.iter().map(|m| m.1).sum();
    let half = total.div_ceil(2);
    let mut seen = 0;
    for (m, c) in &v {
        seen += c;
        if seen >= half {
            return *m;
        }
    }
    v.last().map_or(f64::NAN, |m| m.0)
}

/// `kernels_all_ranks` and `top_all_ranks` of the ranks together from each rank's `kernels` list,
/// and whether a median was combined from several parts (then the caller adds [`MEDIAN_NOTE`]).
/// One rank: its own lists, unchanged. A rank's `others` row (more than
/// [`MAX_NAMES_PER_TYPE`](super::kernels::MAX_NAMES_PER_TYPE) names of a type) is combined as one
/// more name, so with such ranks the names cut differ from a computation over every call.
pub fn combine_kernel_stats(
    ranks: &[RankKernelBreakdown],
) -> (Vec<KernelStats>, Vec<KernelStats>, bool) {
    if ranks.len() <= 1 {
        return ranks
            .first()
            .map(|r| (r.kernels.clone(), r.top.clone(), false))
            .unwrap_or_default();
    }
    let mut per: BTreeMap<(KernelType, String), Acc> = BTreeMap::new();
    for r in ranks {
        for k in &r.kernels {
            per.entry((k.kernel_type, k.name.clone()))
                .or_default()
                .add(k);
        }
    }
    let approx = std::cell::Cell::new(per.values().any(|a| a.medians.len() > 1));
    let per = crate::sort::map_of(
        per.into_iter()
            .map(|((t, name), acc)| ((t, name.clone()), (acc.stats(name, t), acc))),
    );
    let (kernels, top) = rank_and_cut(per, |t, rest: &[&Acc]| {
        let mut all = Acc::default();
        for a in rest {
            all.absorb(a);
        }
        if all.medians.len() > 1 {
            approx.set(true);
        }
        all.stats("others".into(), t)
    });
    (kernels, top, approx.get())
}

#[cfg(test)]
mod tests {
    use super::weighted_median;

    #[test]
    fn the_weighted_median_counts_each_median_by_its_calls() {
        assert_eq!(weighted_median(&[(5.0, 3)]), 5.0);
        assert_eq!(weighted_median(&[(9.0, 1), (1.0, 5)]), 1.0);
        assert_eq!(weighted_median(&[(1.0, 2), (9.0, 2)]), 1.0);
        assert_eq!(weighted_median(&[(1.0, 1), (9.0, 3), (4.0, 1)]), 9.0);
    }
}
