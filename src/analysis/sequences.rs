//! Frequent GPU kernel sequences launched under one CPU operator: candidates for fusion.
//!
//! Definition (as HTA's `get_frequent_cuda_kernel_sequences`): build the CPU call-stack forest per
//! thread, attach every GPU event to the CPU call that launched it (correlation id), take the CPU
//! events whose name contains `operator_name` and that launch at least `min_pattern_len` GPU events in
//! their subtree, keep only those at the smallest depth, and group them by pattern = operator name
//! followed by the subtree's GPU event names ordered by start.

use serde::{Deserialize, Serialize};

use super::callstack::{build_forest, launchers, NONE};
use super::frame::Frame;
use super::gpu::RankPrep;
use super::options::{AnalysisOptions, Mode};
use crate::table::TraceTable;

/// Options of [`frequent_kernel_sequences`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SequenceOptions {
    /// Substring an operator's name must contain ("" = every operator).
    pub operator_name: String,
    /// Minimum number of GPU events under the operator.
    pub min_pattern_len: usize,
    /// How many patterns to return (0 = all).
    pub top_k: usize,
    /// Which definitions to follow: [`Mode::HtaCompat`] drops the last ProfilerStep (when ≥ 2 steps)
    /// and rounds times to whole µs (start = ceil, end = floor) before summing.
    pub mode: Mode,
}

impl Default for SequenceOptions {
    fn default() -> Self {
        SequenceOptions {
            operator_name: String::new(),
            min_pattern_len: 3,
            top_k: 10,
            mode: Mode::Exact,
        }
    }
}

/// One kernel pattern and how often it occurs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SequenceRow {
    /// Operator name then GPU event names, joined with `|`.
    pub pattern: String,
    /// Number of operator instances with this pattern.
    pub count: u64,
    /// Σ duration of the GPU events of all instances, µs.
    pub gpu_kernel_duration_us: f64,
    /// Σ duration of the operator instances, µs.
    pub cpu_op_duration_us: f64,
}

/// Frequent kernel sequences of one rank, sorted by count (desc) then pattern (asc).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SequencesResult {
    pub rows: Vec<SequenceRow>,
    /// Number of distinct patterns before `top_k` was applied.
    pub patterns_total: usize,
    /// Why the result is empty, when it is.
    pub note: String,
}

/// Frequent kernel sequences of a whole table, in the mode `opts.mode` says.
pub fn frequent_kernel_sequences(table: &TraceTable, opts: &SequenceOptions) -> SequencesResult {
    let analysis = AnalysisOptions {
        mode: opts.mode,
        ..AnalysisOptions::default()
    };
    frequent_kernel_sequences_in(&RankPrep::new(table, &analysis).frame(), table, opts)
}

/// Frequent kernel sequences over a rank's frame ([`RankPrep::frame`]: the mode's rows and times,
/// within the analysed window).
pub fn frequent_kernel_sequences_in(
    frame: &Frame,
    table: &TraceTable,
    opts: &SequenceOptions,
) -> SequencesResult {
    let n = table.len();
    let compat = frame.mode == Mode::HtaCompat;
    let (gpu, ts, end) = (&frame.device, &frame.ts, &frame.end);
    let launcher = launchers(table, &frame.member, gpu);
    let keep: Vec<bool> = (0..n).map(|r| frame.keeps(r)).collect();
    let cpu: Vec<bool> = (0..n).map(|r| keep[r] && !gpu[r]).collect();
    let mut result = SequencesResult::default();
    if !gpu.iter().zip(&keep).any(|(g, k)| *g && *k) {
        result.note = "no GPU events in the trace".into();
        return result;
    }
    let forest = build_forest(table, &cpu, ts, end);
    // position of each CPU row in the preorder
    let mut pos_of = vec![NONE; n];
    for (p, &r) in forest.preorder.iter().enumerate() {
        pos_of[r as usize] = p as u32;
    }
    // GPU rows grouped by launcher position, sorted by (launcher position, ts, row). HTA-compat:
    // the rows with an `args.stream` other than -1 whose launch is not the file's first entry
    // (HTA's partner index 0 reads as none); only those on streams > 0 are linked in HTA's call
    // graph, so only they count toward the minimum length and the GPU time.
    let mut gpu_by_pos: Vec<(u32, i64, u32)> = Vec::new();
    let mut counted = vec![true; n];
    for r in 0..n {
        if keep[r] && gpu[r] && launcher[r] != NONE {
            if compat {
                let Some(s) = table.args_stream_at(r).filter(|&s| s != -1) else {
                    continue;
                };
                if launcher[r] == 0 {
                    continue;
                }
                counted[r] = s > 0;
            }
            let p = pos_of[launcher[r] as usize];
            if p != NONE {
                gpu_by_pos.push((p, ts[r], r as u32));
            }
        }
    }
    gpu_by_pos.sort_unstable();
    // candidates: name contains operator_name
    let mut names_match = vec![false; table.name_dictionary().len()];
    for (i, v) in table.name_dictionary().iter().enumerate() {
        names_match[i] = v.is_some_and(|s| s.contains(opts.operator_name.as_str()));
    }
    // gpu_before[p] = number of GPU entries launched from positions < p, so a subtree's GPU events
    // are gpu_by_pos[gpu_before[p]..gpu_before[subtree_end[p]]].
    let positions = forest.preorder.len();
    let mut gpu_before = vec![0usize; positions + 1];
    let mut counted_before = vec![0usize; positions + 1];
    for x in &gpu_by_pos {
        gpu_before[x.0 as usize + 1] += 1;
        counted_before[x.0 as usize + 1] += usize::from(counted[x.2 as usize]);
    }
    for p in 0..positions {
        gpu_before[p + 1] += gpu_before[p];
        counted_before[p + 1] += counted_before[p];
    }
    let min_len = opts.min_pattern_len.max(1);
    let mut cands: Vec<(u32, usize, usize, u32)> = Vec::new(); // (depth, gpu lo, gpu hi, position)
    for (p, &r) in forest.preorder.iter().enumerate() {
        let ru = r as usize;
        if !names_match
            .get(table.name_id(ru) as usize)
            .copied()
            .unwrap_or(false)
        {
            continue;
        }
        let lo = gpu_before[p];
        let hi = gpu_before[forest.subtree_end[p] as usize];
        let kernels = counted_before[forest.subtree_end[p] as usize] - counted_before[p];
        if kernels >= min_len {
            cands.push((forest.depth[ru], lo, hi, p as u32));
        }
    }
    let Some(min_depth) = cands.iter().map(|c| c.0).min() else {
        result.note = format!(
            "no operator containing {:?} launches at least {} GPU events",
            opts.operator_name, opts.min_pattern_len
        );
        return result;
    };
    // Each instance's pattern as name ids (operator, then its GPU events by start) in one arena.
    let mut ids: Vec<u32> = Vec::new();
    let mut instances: Vec<(usize, usize, i64, i64)> = Vec::new(); // (ids lo, ids hi, gpu ns, cpu ns)
    let mut ks: Vec<(i64, u32)> = Vec::new();
    for &(depth, lo, hi, p) in &cands {
        if depth != min_depth {
            continue;
        }
        let op = forest.preorder[p as usize] as usize;
        ks.clear();
        ks.extend(gpu_by_pos[lo..hi].iter().map(|x| (x.1, x.2)));
        ks.sort_unstable();
        let start = ids.len();
        ids.push(table.name_id(op));
        let mut gpu_dur = 0i64;
        for &(_, k) in &ks {
            ids.push(table.name_id(k as usize));
            if counted[k as usize] {
                gpu_dur += end[k as usize] - ts[k as usize];
            }
        }
        instances.push((start, ids.len(), gpu_dur, end[op] - ts[op]));
    }
    instances.sort_unstable_by(|a, b| ids[a.0..a.1].cmp(&ids[b.0..b.1]));
    // Equal id sequences, then equal texts (two names may join to the same text): (text, n, gpu, cpu).
    let mut groups: Vec<(String, u64, i64, i64)> = Vec::new();
    let mut i = 0;
    while i < instances.len() {
        let key = &ids[instances[i].0..instances[i].1];
        let (mut count, mut gpu_ns, mut cpu_ns) = (0u64, 0i64, 0i64);
        while i < instances.len() && &ids[instances[i].0..instances[i].1] == key {
            count += 1;
            gpu_ns += instances[i].2;
            cpu_ns += instances[i].3;
            i += 1;
        }
        let text = key
            .iter()
            .map(|&id| table.name_of_id(id))
            .collect::<Vec<_>>()
            .join("|");
        groups.push((text, count, gpu_ns, cpu_ns));
    }
    groups.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut merged: Vec<(String, u64, i64, i64)> = Vec::new();
    for g in groups {
        match merged.last_mut() {
            Some(m) if m.0 == g.0 => {
                m.1 += g.1;
                m.2 += g.2;
                m.3 += g.3;
            }
            _ => merged.push(g),
        }
    }
    let scale = 1e-3;
    let mut rows: Vec<SequenceRow> = merged
        .into_iter()
        .map(|(pattern, count, gpu_ns, cpu_ns)| SequenceRow {
            pattern,
            count,
            gpu_kernel_duration_us: gpu_ns as f64 * scale,
            cpu_op_duration_us: cpu_ns as f64 * scale,
        })
        .collect();
    crate::sort::sort_by(&mut rows, |a, b| {
        b.count
            .cmp(&a.count)
            .then_with(|| a.pattern.cmp(&b.pattern))
    });
    result.patterns_total = rows.len();
    if opts.top_k > 0 {
        rows.truncate(opts.top_k);
    }
    result.rows = rows;
    result
}
