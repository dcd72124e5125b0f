//! Quick summary of one rank: event counts by category, GPU kernel count and time, top kernels, span, device.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::table::{EventKind, TraceTable};

/// Events of one category (the original `cat` string of the trace, `(none)` when absent).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CategoryCount {
    pub category: String,
    pub events: u64,
}

/// One row of the top-kernels table: all launches of one kernel name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelRow {
    /// Full kernel name as in the trace.
    pub name: String,
    pub calls: u64,
    /// Sum of durations, µs (from integer ns, so exact to the ns).
    pub total_us: f64,
    /// `total_us / calls`, µs.
    pub avg_us: f64,
    /// Share of the total kernel time, percent (0-100).
    pub pct_of_kernel_time: f64,
}

/// The quick summary shown first. Figure names match the page's `data-metric` attributes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Entries of `traceEvents` (every phase, metadata included).
    pub events: u64,
    /// Events by original category, most frequent first (ties by name).
    pub categories: Vec<CategoryCount>,
    /// Events whose category is a GPU kernel (`kernel`, or `Kernel` in old traces).
    pub kernels: u64,
    /// Sum of the `dur` of those kernels, µs.
    pub kernel_time_us: f64,
    /// Top kernels by total time (10 at most).
    pub top_kernels: Vec<KernelRow>,
    /// Distinct kernel names.
    pub distinct_kernels: u64,
    /// Of `kernels`, those replayed by a CUDA/HIP graph launch (sharing a `cudaGraphLaunch`'s
    /// correlation): run from a captured graph, not launched one by one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replayed_kernels: u64,
    /// First timestamp to last end over all timed events, µs.
    pub span_us: f64,
    /// Device name from `deviceProperties` (the first device), when present.
    pub device: Option<String>,
    /// Rank from `distributedInfo.rank`, when present.
    pub rank: Option<i64>,
    /// World size from `distributedInfo.world_size`, when present.
    pub world_size: Option<i64>,
}

/// How many top kernels the summary lists.
pub const TOP_KERNELS: usize = 10;

/// Compute the quick summary of one rank's table.
pub fn summarize(table: &TraceTable) -> Summary {
    let n = table.len();
    // Events by category.
    let cat_dict = table.category_dictionary();
    let mut by_cat = vec![0u64; cat_dict.len()];
    let mut no_cat = 0u64;
    for row in 0..n {
        match table.category_id_at(row) {
            Some(id) => by_cat[id as usize] += 1,
            None => no_cat += 1,
        }
    }
    let mut categories: Vec<CategoryCount> = by_cat
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(i, &c)| CategoryCount {
            category: cat_dict.value(i).to_string(),
            events: c,
        })
        .collect();
    if no_cat > 0 {
        categories.push(CategoryCount {
            category: "(none)".into(),
            events: no_cat,
        });
    }
    crate::sort::sort_by(&mut categories, |a, b| {
        b.events
            .cmp(&a.events)
            .then_with(|| a.category.cmp(&b.category))
    });

    // Kernels: category `kernel` (or `Kernel`), or no category and a dialect's kernel.
    let kernel_cat: Vec<bool> = (0..cat_dict.len())
        .map(|i| is_kernel_category(cat_dict.value(i)))
        .collect();
    let graph_correlations = graph_launch_correlations(table);
    let mut replayed_kernels = 0u64;
    let mut per_name: BTreeMap<u32, (u64, i64)> = BTreeMap::new();
    let mut kernels = 0u64;
    let mut kernel_ns: i64 = 0;
    let (mut first, mut last) = (i64::MAX, i64::MIN);
    for row in 0..n {
        if let Some(ts) = table.ts_at(row) {
            if table.kind_at(row) != EventKind::Metadata {
                first = first.min(ts);
                last = last.max(ts + table.dur_at(row).unwrap_or(0).max(0));
            }
        }
        // A row without a category is a kernel when its dialect says so (torch_npu's device
        // tasks, the legacy export's `CUDA functions`).
        let kernel = match table.category_id_at(row) {
            Some(id) => kernel_cat[id as usize],
            None => table.kind_at(row) == EventKind::Kernel,
        };
        if !kernel {
            continue;
        }
        kernels += 1;
        replayed_kernels += u64::from(
            table
                .correlation_at(row)
                .is_some_and(|c| graph_correlations.contains(&c)),
        );
        let d = table.dur_at(row).unwrap_or(0);
        kernel_ns += d;
        let e = per_name.entry(table.name_id(row)).or_insert((0, 0));
        e.0 += 1;
        e.1 += d;
    }
    let distinct_kernels = per_name.len() as u64;
    let mut rows: Vec<(u32, u64, i64)> = per_name
        .into_iter()
        .map(|(id, (c, t))| (id, c, t))
        .collect();
    crate::sort::sort_by(&mut rows, |a, b| {
        b.2.cmp(&a.2)
            .then_with(|| table.name_of_id(a.0).cmp(table.name_of_id(b.0)))
    });
    let top_kernels = rows
        .iter()
        .take(TOP_KERNELS)
        .map(|&(id, calls, total)| KernelRow {
            name: table.name_of_id(id).to_string(),
            calls,
            total_us: ns_to_us(total),
            avg_us: ns_to_us(total) / calls as f64,
            pct_of_kernel_time: if kernel_ns > 0 {
                100.0 * total as f64 / kernel_ns as f64
            } else {
                0.0
            },
        })
        .collect();
    Summary {
        events: table.metadata.trace_events.max(n as u64),
        categories,
        kernels,
        kernel_time_us: ns_to_us(kernel_ns),
        top_kernels,
        distinct_kernels,
        replayed_kernels,
        span_us: if last >= first {
            ns_to_us(last - first)
        } else {
            0.0
        },
        device: table.metadata.device_name.clone(),
        rank: table.metadata.rank,
        world_size: table.metadata.world_size,
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The correlation ids of the graph launches (`cudaGraphLaunch`) of a table.
fn graph_launch_correlations(table: &TraceTable) -> std::collections::BTreeSet<i64> {
    [EventKind::Runtime, EventKind::Driver]
        .into_iter()
        .flat_map(|k| table.rows_of_kind(k))
        .filter(|&row| crate::analysis::names::is_graph_launch(table.name_at(row)))
        .filter_map(|row| table.correlation_at(row))
        .collect()
}

/// `kernel`, or `Kernel` in old traces: the categories the `kernels` figure counts.
pub fn is_kernel_category(cat: &str) -> bool {
    cat.eq_ignore_ascii_case("kernel")
}

/// Integer ns → µs.
pub fn ns_to_us(ns: i64) -> f64 {
    ns as f64 / 1000.0
}
