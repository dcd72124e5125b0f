//! Bounded outputs: per-stream and per-name lists keep their largest entries and merge the rest into
//! one "other" entry, so no result grows with the number of streams or distinct names in a trace.

/// The stream number of the row that sums the streams left out of a list.
pub const OTHER_STREAMS: i64 = -1;

/// `rows` unchanged when there are at most `max`; otherwise the `max` with the largest `size` (in
/// their original order) followed by one row that `merge` makes of all the others.
pub fn keep_largest<T>(
    rows: Vec<T>,
    max: usize,
    size: impl Fn(&T) -> f64,
    merge: impl FnOnce(Vec<T>) -> T,
) -> Vec<T> {
    if rows.len() <= max {
        return rows;
    }
    let mut order: Vec<usize> = (0..rows.len()).collect();
    // Largest first; ties keep the original order (the sort is stable).
    crate::sort::sort_by(&mut order, |&a, &b| {
        size(&rows[b]).total_cmp(&size(&rows[a]))
    });
    let mut keep = vec![false; rows.len()];
    for &i in &order[..max] {
        keep[i] = true;
    }
    let (kept, rest): (Vec<(usize, T)>, Vec<(usize, T)>) =
        rows.into_iter().enumerate().partition(|(i, _)| keep[*i]);
    let mut out: Vec<T> = kept.into_iter().map(|(_, r)| r).collect();
    out.push(merge(rest.into_iter().map(|(_, r)| r).collect()));
    out
}

/// What was cut, in words, for the analyses' notes (nothing when no list was cut).
pub fn notes(
    idle: &[super::idle::StreamIdle],
    queue: &[super::queue::StreamQueue],
    kernels: &super::kernels::KernelBreakdown,
) -> Vec<String> {
    let mut out = Vec::new();
    if idle.iter().any(|r| r.stream == OTHER_STREAMS)
        || queue.iter().any(|r| r.stream == OTHER_STREAMS)
    {
        out.push(format!(
            "a rank has more than {} streams: the idle-time breakdown and the queue length list the {} with the most idle time (or launches) and sum the others in the row of stream {OTHER_STREAMS}",
            super::idle::MAX_STREAMS,
            super::idle::MAX_STREAMS
        ));
    }
    let cut = kernels
        .kernels_all_ranks
        .iter()
        .chain(kernels.ranks.iter().flat_map(|r| r.kernels.iter()))
        .any(|k| k.name == "others");
    if cut {
        out.push(format!(
            "more than {} kernel names of one type: the kernel breakdown lists the {} with the most time per type and sums the others in a row named 'others'",
            super::kernels::MAX_NAMES_PER_TYPE,
            super::kernels::MAX_NAMES_PER_TYPE
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::keep_largest;

    #[test]
    fn keeps_the_largest_in_order_and_merges_the_rest() {
        let rows = vec![("a", 1.0), ("b", 5.0), ("c", 3.0), ("d", 4.0), ("e", 2.0)];
        let out = keep_largest(
            rows,
            2,
            |r| r.1,
            |rest| ("other", rest.iter().map(|r| r.1).sum()),
        );
        assert_eq!(out, vec![("b", 5.0), ("d", 4.0), ("other", 6.0)]);
    }

    #[test]
    fn leaves_short_lists_alone() {
        let rows = vec![1.0, 2.0];
        assert_eq!(keep_largest(rows.clone(), 2, |r| *r, |_| 0.0), rows);
    }
}
