//! Fills [`DiagnosisInputs`] from a set of ranks: named evidence (kernels, copies, synchronising calls and
//! the ops they come from, DataLoader ops, steps) plus the time figures of each rank.

use std::collections::BTreeMap;

use super::evidence::{self, GpuClass};
use super::findings::{EvidenceKind, EvidenceRef, MAX_EVIDENCE_ROWS};
use super::inputs::{
    CopyFigure, DiagnosisInputs, KernelFigure, RankFigure, SyncFigure, TimeFigures,
};
use super::rules::{SMALL_COPY_BYTES, SMALL_KERNEL_NS};
use crate::table::{EventKind, TraceSet, TraceTable};

/// A communication kernel: NCCL/RCCL (`ncclKernel_*`, `ncclDevKernel_*`, `rcclKernel*`).
pub fn is_communication_kernel(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let lower = lower.strip_prefix("void ").unwrap_or(&lower);
    lower.starts_with("nccl") || lower.starts_with("rccl") || lower.contains("ncclkernel")
}

/// Runtime calls that launch a kernel.
pub fn is_launch_call(name: &str) -> bool {
    name.contains("LaunchKernel") || name.contains("LaunchCooperativeKernel")
}

/// Runtime calls that block the host until the GPU catches up.
pub fn is_sync_call(name: &str) -> bool {
    matches!(
        name,
        "cudaStreamSynchronize"
            | "cudaDeviceSynchronize"
            | "cudaEventSynchronize"
            | "cudaMemcpy"
            | "cuStreamSynchronize"
            | "cuCtxSynchronize"
            | "cuEventSynchronize"
            | "hipStreamSynchronize"
            | "hipDeviceSynchronize"
            | "hipEventSynchronize"
            | "hipMemcpy"
    )
}

/// A CPU-side DataLoader operation (`enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__`, ...).
pub fn is_data_loader_op(kind: EventKind, name: &str) -> bool {
    matches!(
        kind,
        EventKind::CpuOp | EventKind::UserAnnotation | EventKind::PythonFunction
    ) && name.contains("DataLoader")
}

/// Evidence for one name on one rank, filled while scanning.
#[derive(Default)]
struct Acc {
    count: u64,
    time_ns: i64,
    small: u64,
    bytes: i64,
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

/// Computes every figure the rules need, over all ranks of the set.
pub fn gather(set: &TraceSet) -> DiagnosisInputs {
    let mut inputs = DiagnosisInputs::default();
    let mut kernels: BTreeMap<String, KernelFigure> = BTreeMap::new();
    let mut copies: BTreeMap<String, CopyFigure> = BTreeMap::new();
    let mut syncs: BTreeMap<String, (SyncFigure, BTreeMap<String, u64>)> = BTreeMap::new();
    let mut loaders: Vec<EvidenceRef> = Vec::new();
    for rank in &set.ranks {
        let t = &rank.table;
        let r = rank.rank;
        let mut k_acc: BTreeMap<u32, Acc> = BTreeMap::new();
        let mut c_acc: BTreeMap<u32, Acc> = BTreeMap::new();
        let mut dl_acc: BTreeMap<u32, Acc> = BTreeMap::new();
        let mut dl_intervals = Vec::new();
        let mut sync_rows: Vec<(usize, String)> = Vec::new();
        let mut dtoh_correlations = std::collections::BTreeSet::new();
        let mut runtime_rows: Vec<usize> = Vec::new();
        let mut step_durs: Vec<i64> = Vec::new();
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
                    }
                }
                EventKind::Memcpy | EventKind::Memset => {
                    let a = c_acc.entry(t.name_id(row)).or_default();
                    a.add(row, dur);
                    let bytes = bytes_col
                        .and_then(|c| c.find(row).and_then(|p| c.i64_at(p)))
                        .unwrap_or(0);
                    a.bytes += bytes;
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
                    if is_launch_call(name) {
                        inputs.launch_calls += 1;
                        inputs.launch_call_ns += dur;
                    }
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
            if kind == EventKind::UserAnnotation && name.starts_with("ProfilerStep#") {
                step_durs.push(dur);
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

        // Kernels and copies of this rank, merged by name into the job's figures.
        let mut comm_kernel_ns = 0;
        let mut comm_ids = std::collections::BTreeSet::new();
        for (id, a) in &k_acc {
            let name = t.name_of_id(*id);
            let comm = is_communication_kernel(name);
            if comm {
                comm_kernel_ns += a.time_ns;
                comm_ids.insert(*id);
            }
            let f = kernels.entry(name.to_string()).or_default();
            f.name = name.to_string();
            f.calls += a.count;
            f.total_ns += a.time_ns;
            f.small_calls += a.small;
            f.communication = comm;
            f.evidence.push(a.evidence(EvidenceKind::Kernel, r, name));
            inputs.kernel_count += a.count;
            inputs.kernel_time_ns += a.time_ns;
            inputs.small_kernel_count += a.small;
        }
        for (id, a) in &c_acc {
            let name = t.name_of_id(*id);
            let f = copies.entry(name.to_string()).or_default();
            f.name = name.to_string();
            f.count += a.count;
            f.total_ns += a.time_ns;
            f.bytes += a.bytes;
            f.small_count += a.small;
            f.pageable = name.contains("Pageable");
            f.host = name.contains("HtoD") || name.contains("DtoH");
            f.evidence.push(a.evidence(EvidenceKind::Memory, r, name));
        }
        for (id, a) in &dl_acc {
            loaders.push(a.evidence(EvidenceKind::Op, r, t.name_of_id(*id)));
        }
        // Small-kernel time needs per-launch durations.
        for row in t.rows_of_kind(EventKind::Kernel) {
            let d = t.dur_at(row).unwrap_or(0).max(0);
            if d < SMALL_KERNEL_NS {
                inputs.small_kernel_time_ns += d;
            }
        }

        // Synchronising calls and the ops they come from.
        if !sync_rows.is_empty() {
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

        // Time figures (temporary adapter until the analyses land).
        let dl = evidence::union(dl_intervals);
        inputs.data_loader_ns += evidence::length(&dl);
        let time: TimeFigures = evidence::time_figures(
            t,
            |row| match t.kind_at(row) {
                EventKind::Kernel if comm_ids.contains(&t.name_id(row)) => {
                    Some(GpuClass::Communication)
                }
                EventKind::Kernel | EventKind::AcceleratorOp => Some(GpuClass::Compute),
                EventKind::Memcpy | EventKind::Memset => Some(GpuClass::Memory),
                _ => None,
            },
            &dl,
        );
        inputs.time.add(&time);
        let steps = step_durs.len() as u64;
        inputs.steps = inputs.steps.max(steps);
        inputs.ranks.push(RankFigure {
            rank: r,
            time,
            steps,
            mean_step_ns: if steps > 0 {
                step_durs.iter().sum::<i64>() / steps as i64
            } else {
                0
            },
            comm_kernel_ns,
        });
    }
    let mut kernels: Vec<KernelFigure> = kernels.into_values().collect();
    kernels.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name)));
    inputs.kernels = kernels;
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
