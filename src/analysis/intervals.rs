//! Sorted, disjoint interval lists (ns): union, intersection, difference, length; the one interval
//! algebra of the analyses and the diagnosis.

/// A sorted list of disjoint, non-empty `[start, end)` intervals.
pub type Intervals = Vec<(i64, i64)>;

/// Merges intervals (any order) into a sorted union; touching intervals merge, empty or negative
/// ones are dropped.
pub fn union(mut iv: Vec<(i64, i64)>) -> Intervals {
    iv.retain(|(s, e)| e > s);
    iv.sort_unstable();
    let mut out: Intervals = Vec::with_capacity(iv.len());
    for (s, e) in iv {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Total length of a sorted, disjoint list.
pub fn length(a: &[(i64, i64)]) -> i64 {
    a.iter().map(|(s, e)| e - s).sum()
}

/// Time of `[start, end)` covered by the sorted, disjoint intervals `union` (a binary search, then
/// only the intervals that reach into it).
pub fn covered(union: &[(i64, i64)], start: i64, end: i64) -> i64 {
    let first = union.partition_point(|&(_, e)| e <= start);
    union[first..]
        .iter()
        .take_while(|&&(s, _)| s < end)
        .map(|&(s, e)| e.min(end) - s.max(start))
        .sum()
}

/// `a ∩ b`.
pub fn intersect(a: &[(i64, i64)], b: &[(i64, i64)]) -> Intervals {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if hi > lo {
            out.push((lo, hi));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// `a \ b`.
pub fn subtract(a: &[(i64, i64)], b: &[(i64, i64)]) -> Intervals {
    let mut out = Vec::new();
    let mut j = 0;
    for &(s, e) in a {
        let mut cur = s;
        while j < b.len() && b[j].1 <= cur {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].0 < e {
            if b[k].0 > cur {
                out.push((cur, b[k].0));
            }
            cur = cur.max(b[k].1);
            if cur >= e {
                break;
            }
            k += 1;
        }
        if cur < e {
            out.push((cur, e));
        }
    }
    out
}

/// The gaps between the intervals of `busy` inside `[lo, hi)`.
pub fn gaps_within(busy: &[(i64, i64)], lo: i64, hi: i64) -> Intervals {
    subtract(&[(lo, hi)], busy)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slow reference: which of the points 0..100 are in the list.
    fn points(a: &[(i64, i64)]) -> Vec<bool> {
        (0..100)
            .map(|p| a.iter().any(|&(s, e)| s <= p && p < e))
            .collect()
    }

    #[test]
    fn algebra_matches_a_pointwise_reference() {
        let mut seed = 7u64;
        let mut rand = |n: i64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 33) % n as u64) as i64
        };
        for _ in 0..300 {
            let mut mk = || {
                union(
                    (0..rand(6))
                        .map(|_| {
                            let s = rand(100);
                            (s, s + rand(30))
                        })
                        .collect(),
                )
            };
            let (a, b) = (mk(), mk());
            let (pa, pb) = (points(&a), points(&b));
            let and: Vec<bool> = pa.iter().zip(&pb).map(|(x, y)| *x && *y).collect();
            let minus: Vec<bool> = pa.iter().zip(&pb).map(|(x, y)| *x && !*y).collect();
            let i = intersect(&a, &b);
            let d = subtract(&a, &b);
            assert_eq!(points(&i), and, "{a:?} ∩ {b:?}");
            assert_eq!(points(&d), minus, "{a:?} \\ {b:?}");
            assert_eq!(length(&i) + length(&d), length(&a));
        }
    }

    #[test]
    fn union_merges_overlapping_and_touching() {
        let u = union(vec![(5, 7), (0, 2), (2, 3), (1, 2), (10, 10), (8, 6)]);
        assert_eq!(u, vec![(0, 3), (5, 7)]);
        assert_eq!(length(&u), 5);
        assert!(union(vec![]).is_empty());
    }

    #[test]
    fn gaps() {
        assert_eq!(
            gaps_within(&[(2, 4), (6, 8)], 0, 10),
            vec![(0, 2), (4, 6), (8, 10)]
        );
        assert_eq!(
            union(vec![(5, 7), (0, 2), (1, 3), (3, 4), (9, 9)]),
            vec![(0, 4), (5, 7)]
        );
    }
}
