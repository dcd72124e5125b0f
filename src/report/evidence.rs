//! TEMPORARY adapter, to be replaced by the `analysis` temporal / idle-time / overlap results once they
//! exist: the GPU window, busy/compute/communication/memory unions and the idle split of one rank.
//!
//! Definitions (device level, every stream together, integer ns):
//! - window = first start to last end of GPU activity (kernels, copies, sets, accelerator ops);
//! - busy = union of that activity; idle = window − busy, cut into the gaps between merged intervals;
//! - a gap is *host wait* when the activity that ends it was launched (its runtime call started) after the
//!   gap began, else *kernel wait* when shorter than 30 µs, else *other* (HTA's idle-time categories,
//!   applied to the device's merged timeline instead of one stream);
//! - exposed communication = communication union minus compute union; exposed memory = copy/set union
//!   minus the union of all kernels.

use std::collections::BTreeMap;

use super::inputs::TimeFigures;
use crate::table::{EventKind, TraceTable};

/// Gaps shorter than this (ns) that are not host waits are kernel waits.
pub const KERNEL_WAIT_CUTOFF_NS: i64 = 30_000;

/// What a GPU activity row is, for the unions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuClass {
    Compute,
    Communication,
    Memory,
}

/// Merges `[start, end)` intervals (sorted or not) into sorted disjoint ones; touching intervals merge.
pub fn union(mut v: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    v.sort_unstable();
    let mut out: Vec<(i64, i64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Total length of sorted disjoint intervals.
pub fn length(v: &[(i64, i64)]) -> i64 {
    v.iter().map(|(s, e)| e - s).sum()
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

/// The time figures of one rank. `classify` says what a GPU row is; `data_loader` are the (disjoint,
/// sorted) DataLoader intervals on the CPU.
pub fn time_figures(
    table: &TraceTable,
    classify: impl Fn(usize) -> Option<GpuClass>,
    data_loader: &[(i64, i64)],
) -> TimeFigures {
    let mut all = Vec::new();
    let mut compute = Vec::new();
    let mut comm = Vec::new();
    let mut memory = Vec::new();
    // (start, row) of each GPU row, to find which activity ends a gap.
    let mut starts: Vec<(i64, usize)> = Vec::new();
    for row in 0..table.len() {
        let Some(class) = classify(row) else { continue };
        let (Some(ts), Some(dur)) = (table.ts_at(row), table.dur_at(row)) else {
            continue;
        };
        if dur < 0 {
            continue;
        }
        let iv = (ts, ts + dur);
        all.push(iv);
        starts.push((ts, row));
        match class {
            GpuClass::Compute => compute.push(iv),
            GpuClass::Communication => comm.push(iv),
            GpuClass::Memory => memory.push(iv),
        }
    }
    if all.is_empty() {
        return TimeFigures::default();
    }
    let all = union(all);
    let compute = union(compute);
    let comm = union(comm);
    let memory = union(memory);
    let kernels = union(compute.iter().chain(comm.iter()).copied().collect());
    let window = all.last().map_or(0, |l| l.1) - all.first().map_or(0, |f| f.0);
    let busy = length(&all);
    let comm_len = length(&comm);
    let memory_len = length(&memory);

    // Launch time of each GPU row: the runtime/driver call with the same correlation.
    let mut launch_ts: BTreeMap<i64, i64> = BTreeMap::new();
    for row in 0..table.len() {
        if matches!(table.kind_at(row), EventKind::Runtime | EventKind::Driver) {
            if let (Some(c), Some(ts)) = (table.correlation_at(row), table.ts_at(row)) {
                launch_ts.entry(c).or_insert(ts);
            }
        }
    }
    starts.sort_unstable();
    let mut gaps = Vec::new();
    let (mut host_wait, mut kernel_wait, mut other) = (0, 0, 0);
    for w in all.windows(2) {
        let (gap_start, gap_end) = (w[0].1, w[1].0);
        let gap = gap_end - gap_start;
        gaps.push((gap_start, gap_end));
        // The activities starting at gap_end; the gap is a host wait if any was launched after gap_start.
        let first = starts.partition_point(|&(s, _)| s < gap_end);
        let launched_late = starts[first..]
            .iter()
            .take_while(|&&(s, _)| s == gap_end)
            .any(|&(_, row)| {
                table
                    .correlation_at(row)
                    .and_then(|c| launch_ts.get(&c))
                    .is_some_and(|&l| l > gap_start)
            });
        if launched_late {
            host_wait += gap;
        } else if gap < KERNEL_WAIT_CUTOFF_NS {
            kernel_wait += gap;
        } else {
            other += gap;
        }
    }
    TimeFigures {
        window_ns: window,
        busy_ns: busy,
        compute_ns: length(&compute),
        comm_ns: comm_len,
        comm_exposed_ns: comm_len - intersection_length(&comm, &compute),
        memory_ns: memory_len,
        memory_exposed_ns: memory_len - intersection_length(&memory, &kernels),
        idle_ns: window - busy,
        host_wait_ns: host_wait,
        kernel_wait_ns: kernel_wait,
        other_idle_ns: other,
        idle_in_data_loader_ns: intersection_length(&gaps, data_loader),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_and_intersection() {
        let u = union(vec![(5, 7), (0, 2), (1, 3), (3, 4)]);
        assert_eq!(u, vec![(0, 4), (5, 7)]);
        assert_eq!(length(&u), 6);
        assert_eq!(intersection_length(&u, &[(3, 6)]), 2);
        assert_eq!(intersection_length(&u, &[]), 0);
    }
}
