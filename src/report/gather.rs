//! Fills [`DiagnosisInputs`] from a set of ranks and its [`AllAnalyses`]: the time figures, kernel and
//! copy totals, launch and step figures come from the analyses; this module adds only what they lack —
//! the rows behind each name (evidence), kernels < 10 µs and copies < 64 KiB, synchronising calls and
//! the ops they come from, DataLoader ops, and the device-level idle split ([`super::evidence`]).

use std::collections::BTreeMap;

use super::evidence::device_idle;
use super::findings::{EvidenceKind, EvidenceRef, MAX_EVIDENCE_ROWS};
use super::inputs::{
    CopyFigure, DiagnosisInputs, KernelFigure, RankFigure, SyncFigure, TimeFigures,
};
use super::rules::{SMALL_COPY_BYTES, SMALL_KERNEL_NS};
use crate::analysis::all::{analyze, AllAnalyses, AnalysisOptions};
use crate::analysis::gpu::{union, KernelType, RankPrep};
pub use crate::analysis::names::{is_data_loader_op, is_sync_call};
use crate::table::{EventKind, TraceSet, TraceTable};

/// µs (as the analyses give them) → ns.
fn ns(us: f64) -> i64 {
    if us.is_finite() {
        (us * 1000.0).round() as i64
    } else {
        0
    }
}

/// Evidence for one name on one rank, filled while scanning.
#[derive(Default)]
struct Acc {
    count: u64,
    time_ns: i64,
    small: u64,
    rows: Vec<u32>,
}

impl Acc {
    fn add(&mut self, row: usize, dur: i64) {
        self.count += 1;
        self.time_ns += dur;
        if self.rows.len() < MAX_EVIDENCE_ROWS {
            self.rows.push(row as u32);
        }
    }

    fn evidence(&self, kind: EvidenceKind, rank: i64, name: &str) -> EvidenceRef {
        EvidenceRef {
            kind,
            rank: Some(rank),
            name: name.to_string(),
            stream: None,
            count: self.count,
            time_ns: self.time_ns,
            rows: self.rows.clone(),
        }
    }
}

/// CPU operators and Python functions of one thread, sorted by start, for "where does this call come from".
struct ThreadOps {
    /// (start, end, row, is python function)
    ops: Vec<(i64, i64, usize, bool)>,
}

impl ThreadOps {
    /// `python > outer op > inner op` around time `t` (innermost ops last; at most two ops).
    fn caller(&self, table: &TraceTable, t: i64) -> String {
        let upto = self.ops.partition_point(|o| o.0 <= t);
        let mut ops: Vec<usize> = Vec::new();
        let mut python: Option<usize> = None;
        for &(s, e, row, py) in self.ops[..upto].iter().rev().take(5000) {
            if s <= t && t < e.max(s + 1) {
                if py {
                    python.get_or_insert(row);
                } else if ops.len() < 2 {
                    ops.push(row);
                }
            }
            if ops.len() == 2 && python.is_some() {
                break;
            }
        }
        let mut parts: Vec<&str> = Vec::new();
        if let Some(p) = python {
            parts.push(table.name_at(p));
        }
        for &r in ops.iter().rev() {
            parts.push(table.name_at(r));
        }
        if parts.is_empty() {
            "(no enclosing op)".to_string()
        } else {
            parts.join(" > ")
        }
    }
}

/// Computes every figure the rules need, over all ranks of the set (runs the analyses in exact mode).
pub fn gather(set: &TraceSet) -> DiagnosisInputs {
    let opts = AnalysisOptions::default();
    gather_with(set, &analyze(set, &opts), &opts)
}

/// The figures of a set from its analyses (`all` must come from `analyze(set, opts)` in exact mode).
pub fn gather_with(set: &TraceSet, all: &AllAnalyses, opts: &AnalysisOptions) -> DiagnosisInputs {
    let mut inputs = DiagnosisInputs::default();
    // Per name: the rows (evidence) and the small launches/copies, which the analyses do not keep.
    let mut kernel_evidence: BTreeMap<String, (Vec<EvidenceRef>, u64)> = BTreeMap::new();
    let mut copy_evidence: BTreeMap<String, (Vec<EvidenceRef>, u64)> = BTreeMap::new();
    let mut syncs: BTreeMap<String, (SyncFigure, BTreeMap<String, u64>)> = BTreeMap::new();
    let mut loaders: Vec<EvidenceRef> = Vec::new();
    let kb = &all.kernel_breakdown;
    for (idx, rank) in set.ranks.iter().enumerate() {
        let t = &rank.table;
        let r = rank.rank;
        let mut k_acc: BTreeMap<u32, Acc> = BTreeMap::new();
        let mut c_acc: BTreeMap<u32, Acc> = BTreeMap::new();
        let mut dl_acc: BTreeMap<u32, Acc> = BTreeMap::new();
        let mut dl_intervals = Vec::new();
        let mut sync_rows: Vec<(usize, String)> = Vec::new();
        let mut dtoh_correlations = std::collections::BTreeSet::new();
        let mut runtime_rows: Vec<usize> = Vec::new();
        let bytes_col = t.arg("bytes");
        for row in 0..t.len() {
            let kind = t.kind_at(row);
            let dur = t.dur_at(row).unwrap_or(0).max(0);
            match kind {
                EventKind::Kernel => {
                    let a = k_acc.entry(t.name_id(row)).or_default();
                    a.add(row, dur);
                    if dur < SMALL_KERNEL_NS {
                        a.small += 1;
                        inputs.small_kernel_time_ns += dur;
                    }
                }
                EventKind::Memcpy | EventKind::Memset => {
                    let a = c_acc.entry(t.name_id(row)).or_default();
                    a.add(row, dur);
                    let bytes = bytes_col
                        .and_then(|c| c.find(row).and_then(|p| c.i64_at(p)))
                        .unwrap_or(0);
                    if kind == EventKind::Memcpy && bytes > 0 && bytes < SMALL_COPY_BYTES {
                        a.small += 1;
                    }
                    if kind == EventKind::Memcpy && t.name_at(row).contains("DtoH") {
                        if let Some(c) = t.correlation_at(row) {
                            dtoh_correlations.insert(c);
                        }
                    }
                }
                EventKind::AcceleratorOp => inputs.accelerator_ops += 1,
                EventKind::Runtime | EventKind::Driver => {
                    let name = t.name_at(row);
                    if is_sync_call(name) {
                        sync_rows.push((row, name.to_string()));
                    } else if name.contains("Memcpy") {
                        runtime_rows.push(row);
                    }
                }
                _ => {}
            }
            let name = t.name_at(row);
            if is_data_loader_op(kind, name) {
                dl_acc.entry(t.name_id(row)).or_default().add(row, dur);
                if let Some(ts) = t.ts_at(row) {
                    dl_intervals.push((ts, ts + dur));
                }
            }
        }
        // Asynchronous copy calls whose copy is device-to-host also make the host wait (`.item()`, `.cpu()`).
        for row in runtime_rows {
            if t.correlation_at(row)
                .is_some_and(|c| dtoh_correlations.contains(&c))
            {
                sync_rows.push((row, "Memcpy DtoH".to_string()));
            }
        }
        sync_rows.sort();
        // Where the synchronising calls block the host: sorted, merged.
        let blocked = union(
            sync_rows
                .iter()
                .filter_map(|&(row, _)| Some((t.ts_at(row)?, t.end_at(row)?)))
                .collect(),
        );
        for (id, a) in &k_acc {
            let name = t.name_of_id(*id);
            let e = kernel_evidence.entry(name.to_string()).or_default();
            e.0.push(a.evidence(EvidenceKind::Kernel, r, name));
            e.1 += a.small;
            inputs.small_kernel_count += a.small;
        }
        for (id, a) in &c_acc {
            let name = t.name_of_id(*id);
            let e = copy_evidence.entry(name.to_string()).or_default();
            e.0.push(a.evidence(EvidenceKind::Memory, r, name));
            e.1 += a.small;
        }
        for (id, a) in &dl_acc {
            loaders.push(a.evidence(EvidenceKind::Op, r, t.name_of_id(*id)));
        }
        if !sync_rows.is_empty() {
            collect_syncs(t, r, sync_rows, &mut syncs);
        }

        // Time figures: the analyses' temporal breakdown, overlap and type combinations, plus the
        // device-level idle split.
        let dl = union(dl_intervals);
        inputs.data_loader_ns += dl.iter().map(|(s, e)| e - s).sum::<i64>();
        // Ranks may repeat (duplicate files): the n-th file of a rank takes the n-th result of it.
        let nth = set.ranks[..idx].iter().filter(|o| o.rank == r).count();
        let mut time = TimeFigures::default();
        if let Some(tb) = all
            .temporal_breakdown
            .iter()
            .filter(|x| x.rank == r)
            .nth(nth)
        {
            time.window_ns = ns(tb.window_us);
            time.idle_ns = ns(tb.idle_us);
            time.busy_ns = time.window_ns - time.idle_ns;
            time.compute_ns = ns(tb.compute_us);
        }
        if let Some(o) = all.comm_comp_overlap.get(idx) {
            time.comm_ns = ns(o.comm_us);
            time.comm_exposed_ns = (time.comm_ns - ns(o.overlap_us)).max(0);
        }
        let rank_kb = kb.ranks.get(idx);
        if let Some(b) = rank_kb {
            for tt in &b.by_type {
                if tt.kernel_type.contains(KernelType::Memory.as_str()) {
                    time.memory_ns += ns(tt.time_us);
                }
                if tt.kernel_type == KernelType::Memory.as_str() {
                    time.memory_exposed_ns = ns(tt.time_us);
                }
            }
        }
        if time.window_ns > 0 {
            let prep = RankPrep::new(t, opts);
            let idle = device_idle(&prep, opts, &dl, &blocked);
            time.host_wait_ns = idle.host_wait_ns;
            time.kernel_wait_ns = idle.kernel_wait_ns;
            time.other_idle_ns = idle.other_ns;
            time.idle_in_data_loader_ns = idle.in_data_loader_ns;
            time.sync_gpu_idle_ns = idle.around_syncs_ns;
            let lo = prep.dev.iter().map(|d| d.ts).min().unwrap_or(0);
            let hi = prep.dev.iter().map(|d| d.end).max().unwrap_or(0);
            time.sync_in_window_ns = blocked
                .iter()
                .map(|&(s, e)| (e.min(hi) - s.max(lo)).max(0))
                .sum();
        }
        inputs.time.add(&time);
        if let Some(l) = all.kernel_launch_stats.get(idx) {
            inputs.launch_calls += l.launches;
            inputs.launch_call_ns += ns(l.cpu_total_us);
        }
        let (steps, mean_step_ns) = all.profiler_steps.get(idx).map_or((0, 0), |s| {
            (s.steps.len() as u64, s.mean_step_us.map_or(0, ns))
        });
        inputs.steps = inputs.steps.max(steps);
        let comm_kernel_ns = rank_kb.map_or(0, |b| {
            b.kernels
                .iter()
                .filter(|k| k.kernel_type == KernelType::Communication)
                .map(|k| ns(k.sum_us))
                .sum()
        });
        inputs.ranks.push(RankFigure {
            rank: r,
            time,
            steps,
            mean_step_ns,
            comm_kernel_ns,
        });
    }
    // Kernels and copies by name, over all ranks, from the analyses (only names the trace has as CUDA
    // kernels: accelerator ops are counted apart).
    let mut kernels: Vec<KernelFigure> = kb
        .kernels_all_ranks
        .iter()
        .filter(|k| k.kernel_type != KernelType::Memory && k.kernel_type != KernelType::Other)
        .filter_map(|k| {
            let (evidence, small) = kernel_evidence.remove(&k.name)?;
            Some(KernelFigure {
                name: k.name.clone(),
                calls: k.count,
                total_ns: ns(k.sum_us),
                small_calls: small,
                communication: k.kernel_type == KernelType::Communication,
                evidence,
            })
        })
        .collect();
    kernels.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name)));
    inputs.kernel_count = kernels.iter().map(|k| k.calls).sum();
    inputs.kernel_time_ns = kernels.iter().map(|k| k.total_ns).sum();
    inputs.kernels = kernels;
    let mut copies: BTreeMap<String, CopyFigure> = BTreeMap::new();
    for m in &all.memory_bandwidth {
        let f = copies.entry(m.name.clone()).or_default();
        f.name = m.name.clone();
        f.count += m.count;
        f.total_ns += ns(m.time_us);
        f.bytes += m.bytes.min(i64::MAX as u64) as i64;
        f.pageable = m.memory.contains("Pageable");
        f.host = m.direction == "HtoD" || m.direction == "DtoH";
    }
    for (name, f) in copies.iter_mut() {
        if let Some((evidence, small)) = copy_evidence.remove(name) {
            f.evidence = evidence;
            f.small_count = small;
        }
    }
    let mut copies: Vec<CopyFigure> = copies.into_values().collect();
    copies.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name)));
    inputs.copies = copies;
    let mut syncs: Vec<SyncFigure> = syncs
        .into_values()
        .map(|(mut f, callers)| {
            let mut c: Vec<(String, u64)> = callers.into_iter().collect();
            c.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            f.callers = c;
            f
        })
        .collect();
    syncs.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name)));
    inputs.syncs = syncs;
    loaders.sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then(a.name.cmp(&b.name)));
    inputs.data_loader_ops = loaders;
    inputs
}

/// Synchronising calls of one rank and the ops they come from, merged into `syncs` by call name.
fn collect_syncs(
    t: &TraceTable,
    r: i64,
    sync_rows: Vec<(usize, String)>,
    syncs: &mut BTreeMap<String, (SyncFigure, BTreeMap<String, u64>)>,
) {
    let mut threads: BTreeMap<(u32, u32), ThreadOps> = BTreeMap::new();
    for row in 0..t.len() {
        let kind = t.kind_at(row);
        if !matches!(kind, EventKind::CpuOp | EventKind::PythonFunction) {
            continue;
        }
        if let (Some(ts), Some(d)) = (t.ts_at(row), t.dur_at(row)) {
            threads
                .entry((t.pid.keys().value(row), t.tid.keys().value(row)))
                .or_insert_with(|| ThreadOps { ops: Vec::new() })
                .ops
                .push((ts, ts + d, row, kind == EventKind::PythonFunction));
        }
    }
    for th in threads.values_mut() {
        th.ops.sort_unstable();
    }
    for (row, name) in sync_rows {
        let dur = t.dur_at(row).unwrap_or(0).max(0);
        let caller = t
            .ts_at(row)
            .and_then(|ts| {
                threads
                    .get(&(t.pid.keys().value(row), t.tid.keys().value(row)))
                    .map(|th| th.caller(t, ts))
            })
            .unwrap_or_else(|| "(no enclosing op)".to_string());
        let (f, callers) = syncs.entry(name.clone()).or_default();
        f.name = name.clone();
        f.count += 1;
        f.total_ns += dur;
        *callers.entry(caller).or_insert(0) += 1;
        match f.evidence.iter_mut().find(|e| e.rank == Some(r)) {
            Some(e) => {
                e.count += 1;
                e.time_ns += dur;
                if e.rows.len() < MAX_EVIDENCE_ROWS {
                    e.rows.push(row as u32);
                }
            }
            None => f.evidence.push(EvidenceRef {
                kind: EvidenceKind::Runtime,
                rank: Some(r),
                name: name.clone(),
                stream: None,
                count: 1,
                time_ns: dur,
                rows: vec![row as u32],
            }),
        }
    }
}
