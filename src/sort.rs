//! Stable sorts with one copy of the sorting code for the whole program.
//!
//! The standard library's stable sort is instantiated anew for every element type and comparator,
//! about 5 kB of WebAssembly each; with over a hundred sorts that was a sixth of the worker's code.
//! These sort the positions (`usize`, through one comparator type) and then move the elements into
//! that order, so the result is the standard stable sort's, element for element. [`map_of`] and
//! [`set_of`] build the ordered maps and sets that `collect` would build, without its sort.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// The positions `0..n` in the stable order `cmp` says (the one instance of the sort).
fn stable_order(n: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

/// Moves the elements so that position `k` holds the one that was at `order[k]`.
fn apply_order<T>(v: &mut [T], mut order: Vec<usize>) {
    for start in 0..v.len() {
        let mut at = start;
        while order[at] != start {
            let from = order[at];
            v.swap(at, from);
            order[at] = at;
            at = from;
        }
        order[at] = at;
    }
}

/// `v.sort_by(cmp)`, stable.
pub fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let order = stable_order(v.len(), &mut |a, b| cmp(&v[a], &v[b]));
    apply_order(v, order);
}

/// `v.sort_by_key(key)`, stable.
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// `v.sort()`, stable.
pub fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// The map of `pairs`, as `collect` builds it (a key seen again keeps its last value), built by
/// insertion: `collect` into a `BTreeMap` sorts the pairs with the standard stable sort first,
/// one more copy of it for every key and value type.
pub fn map_of<K: Ord, V>(pairs: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    for (k, v) in pairs {
        map.insert(k, v);
    }
    map
}

/// The set of `items`, as `collect` builds it, built by insertion (see [`map_of`]).
pub fn set_of<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    for t in items {
        set.insert(t);
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pseudo-random pairs with many equal keys: the order of equal keys shows stability.
    fn pairs(n: usize, seed: u64) -> Vec<(u32, usize)> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 33) as u32 % 17, i)
            })
            .collect()
    }

    #[test]
    fn the_same_order_as_the_standard_stable_sort() {
        for (n, seed) in [(0, 1), (1, 2), (2, 3), (7, 4), (100, 5), (5000, 6)] {
            let v = pairs(n, seed);
            let mut ours = v.clone();
            let mut std = v.clone();
            sort_by_key(&mut ours, |p| p.0);
            std.sort_by_key(|p| p.0);
            assert_eq!(ours, std, "n={n}");
            let mut ours = v.clone();
            let mut std = v;
            sort_by(&mut ours, |a, b| b.0.cmp(&a.0));
            std.sort_by(|a, b| b.0.cmp(&a.0));
            assert_eq!(ours, std, "n={n} descending");
            sort(&mut ours);
            std.sort();
            assert_eq!(ours, std, "n={n} sort");
        }
    }

    #[test]
    fn maps_and_sets_are_what_collect_builds_the_last_value_kept() {
        for (n, seed) in [(0, 1), (1, 2), (50, 3), (2000, 4)] {
            let v = pairs(n, seed);
            let ours = map_of(v.iter().copied());
            let std: BTreeMap<u32, usize> = v.iter().copied().collect();
            assert_eq!(ours, std, "n={n}");
            if let Some((k, _)) = v.last() {
                assert_eq!(ours[k], n - 1, "the last value of a key is kept");
            }
            let ours = set_of(v.iter().map(|p| p.0));
            let std: BTreeSet<u32> = v.iter().map(|p| p.0).collect();
            assert_eq!(ours, std, "n={n}");
        }
    }
}
