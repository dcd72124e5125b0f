//! GPU kernels (TensorBoard's kernel view): per kernel name, calls and time, the operator that
//! launched most of its time, its launch configuration where CUDA args give it (grid, block,
//! registers, shared memory, blocks per SM, estimated achieved occupancy) and whether its name says
//! it runs on tensor cores.
//!
//! Blocks per SM and occupancy are means weighted by duration (as TensorBoard shows them); grid,
//! block, registers and shared memory are the most frequent value of the name's launches.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::{us, HostOps};
use crate::analysis::gpu::{exact_kernel_type, KernelType};
use crate::table::{ArgColumn, EventKind, TraceTable};

/// One kernel name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelRow {
    pub name: String,
    pub kernel_type: Option<KernelType>,
    pub calls: u64,
    pub total_us: f64,
    pub mean_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    /// The CPU operator that launched most of its time.
    pub top_operator: Option<String>,
    pub grid: Option<String>,
    pub block: Option<String>,
    pub registers_per_thread: Option<i64>,
    pub shared_memory_bytes: Option<i64>,
    pub blocks_per_sm: Option<f64>,
    pub est_achieved_occupancy_pct: Option<f64>,
    /// The name says tensor cores (MMA instructions or tensor-op GEMM kernels).
    pub tensor_cores: bool,
}

/// The kernels of one rank, by total time (descending).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelsResult {
    pub rows: Vec<KernelRow>,
    /// Σ kernel time, µs.
    pub kernel_time_us: f64,
    /// Σ time of the kernels that use tensor cores, µs.
    pub tensor_core_time_us: f64,
    /// Whether any kernel carried a launch configuration (CUDA args).
    pub has_launch_config: bool,
    pub note: String,
}

/// Names that say tensor cores: MMA instruction shapes and tensor-op GEMM families, as the
/// TensorBoard plugin recognised them, plus the newer Hopper/Blackwell and CK/ROCm spellings.
pub fn uses_tensor_cores(name: &str) -> bool {
    const MARKS: [&str; 22] = [
        "h884",
        "s884",
        "h1688",
        "s1688",
        "h16816",
        "s16816",
        "i8816",
        "i16832",
        "884gemm",
        "1688gemm",
        "16816gemm",
        "hmma",
        "imma",
        "wmma",
        "xmma",
        "gmma",
        "tensorop",
        "_tc_",
        "mfma",
        "flash_fwd",
        "flash_bwd",
        "fmha",
    ];
    let l = name.to_ascii_lowercase();
    MARKS.iter().any(|m| l.contains(m)) || l.contains("sm90_") || l.contains("sm100_")
}

/// The args the view reads, looked up once.
struct LaunchArgs<'a> {
    grid: Option<&'a ArgColumn>,
    block: Option<&'a ArgColumn>,
    registers: Option<&'a ArgColumn>,
    shared: Option<&'a ArgColumn>,
    blocks_per_sm: Option<&'a ArgColumn>,
    occupancy: Option<&'a ArgColumn>,
}

impl<'a> LaunchArgs<'a> {
    fn of(t: &'a TraceTable) -> Self {
        LaunchArgs {
            grid: t.arg("grid"),
            block: t.arg("block"),
            registers: t.arg("registers per thread"),
            shared: t.arg("shared memory"),
            blocks_per_sm: t.arg("blocks per SM"),
            occupancy: t.arg("est. achieved occupancy %"),
        }
    }
}

fn text(c: Option<&ArgColumn>, r: usize) -> Option<String> {
    let c = c?;
    let i = c.find(r)?;
    c.text_at(i)
        .map(|s| s.replace(' ', ""))
        .or_else(|| c.i64_at(i).map(|v| v.to_string()))
}

fn number(c: Option<&ArgColumn>, r: usize) -> Option<f64> {
    let c = c?;
    c.f64_at(c.find(r)?)
}

/// Sums for one kernel name while scanning.
#[derive(Default)]
struct Acc {
    calls: u64,
    total: i64,
    min: i64,
    max: i64,
    kind: Option<KernelType>,
    by_op: HashMap<u32, i64>,
    grid: BTreeMap<String, u64>,
    block: BTreeMap<String, u64>,
    registers: BTreeMap<i64, u64>,
    shared: BTreeMap<i64, u64>,
    /// (Σ value × dur, Σ dur) of the launches that carry it.
    blocks_per_sm: (f64, f64),
    occupancy: (f64, f64),
}

fn most_frequent<K: Clone + Ord>(m: &BTreeMap<K, u64>) -> Option<K> {
    m.iter()
        .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
        .map(|(k, _)| k.clone())
}

fn weighted((sum, w): (f64, f64)) -> Option<f64> {
    (w > 0.0).then(|| sum / w)
}

fn add(acc: &mut Acc, t: &TraceTable, h: &HostOps, a: &LaunchArgs, r: usize) {
    let dur = h.dur(r);
    if acc.calls == 0 {
        acc.min = dur;
        acc.max = dur;
        acc.kind = Some(exact_kernel_type(t.kind_at(r), t.name_at(r)));
    }
    acc.calls += 1;
    acc.total += dur;
    acc.min = acc.min.min(dur);
    acc.max = acc.max.max(dur);
    if let Some(o) = h.op_of_device(r) {
        *acc.by_op.entry(t.name_id(o)).or_default() += dur;
    }
    if let Some(g) = text(a.grid, r) {
        *acc.grid.entry(g).or_default() += 1;
    }
    if let Some(b) = text(a.block, r) {
        *acc.block.entry(b).or_default() += 1;
    }
    if let Some(v) = number(a.registers, r) {
        *acc.registers.entry(v as i64).or_default() += 1;
    }
    if let Some(v) = number(a.shared, r) {
        *acc.shared.entry(v as i64).or_default() += 1;
    }
    let w = dur.max(0) as f64;
    if let Some(v) = number(a.blocks_per_sm, r) {
        acc.blocks_per_sm.0 += v * w;
        acc.blocks_per_sm.1 += w;
    }
    if let Some(v) = number(a.occupancy, r) {
        acc.occupancy.0 += v * w;
        acc.occupancy.1 += w;
    }
}

fn row(t: &TraceTable, name: u32, a: Acc) -> KernelRow {
    let nm = t.name_of_id(name);
    let top = a
        .by_op
        .iter()
        .max_by(|x, y| x.1.cmp(y.1).then(y.0.cmp(x.0)))
        .map(|(op, _)| t.name_of_id(*op).to_string());
    KernelRow {
        name: nm.to_string(),
        kernel_type: a.kind,
        calls: a.calls,
        total_us: us(a.total),
        mean_us: us(a.total) / a.calls.max(1) as f64,
        min_us: us(a.min),
        max_us: us(a.max),
        top_operator: top,
        grid: most_frequent(&a.grid),
        block: most_frequent(&a.block),
        registers_per_thread: most_frequent(&a.registers),
        shared_memory_bytes: most_frequent(&a.shared),
        blocks_per_sm: weighted(a.blocks_per_sm),
        est_achieved_occupancy_pct: weighted(a.occupancy),
        tensor_cores: uses_tensor_cores(nm),
    }
}

/// The kernels of one table (kernel events: copies and sets are in the memory analyses).
pub fn kernels(t: &TraceTable) -> KernelsResult {
    kernels_in(t, &HostOps::new(t))
}

/// The kernels of one table whose call stacks are built.
pub fn kernels_in(t: &TraceTable, h: &HostOps) -> KernelsResult {
    let args = LaunchArgs::of(t);
    let mut by_name: HashMap<u32, Acc> = HashMap::new();
    for r in (0..t.len()).filter(|&r| h.frame.member[r] && t.kind_at(r) == EventKind::Kernel) {
        add(by_name.entry(t.name_id(r)).or_default(), t, h, &args, r);
    }
    let mut rows: Vec<KernelRow> = by_name.into_iter().map(|(n, a)| row(t, n, a)).collect();
    crate::sort::sort_by(&mut rows, |a, b| {
        b.total_us
            .total_cmp(&a.total_us)
            .then_with(|| a.name.cmp(&b.name))
    });
    let kernel_time_us = rows.iter().map(|r| r.total_us).sum();
    let tensor_core_time_us = rows
        .iter()
        .filter(|r| r.tensor_cores)
        .map(|r| r.total_us)
        .sum();
    let has_launch_config = rows
        .iter()
        .any(|r| r.grid.is_some() || r.blocks_per_sm.is_some());
    let note = if rows.is_empty() {
        "the trace has no GPU kernels: record it with ProfilerActivity.CUDA (or the accelerator's activity)".into()
    } else {
        String::new()
    };
    KernelsResult {
        rows,
        kernel_time_us,
        tensor_core_time_us,
        has_launch_config,
        note,
    }
}
