//! Operators (TensorBoard's operator view): every CPU operator grouped by name (optionally by name
//! and input shapes), with calls, host time and the device time of the kernels it launched.
//!
//! Definitions: host total = Σ duration; host self = duration − Σ duration of the operators directly
//! inside it (annotations and Python frames between them are looked through; runtime calls count
//! as the operator's own time). A device operation (kernel, copy, set) belongs to the operator
//! around the runtime call that launched it (same correlation id): it is that operator's device
//! self time and device total time of it and of every operator above it. An operator nested in one
//! of the same name counts in both, as TensorBoard counts it.

use serde::{Deserialize, Serialize};

use super::{us, HostOps};
use crate::analysis::callstack::NONE;
use crate::table::TraceTable;
use std::collections::HashMap;

/// One group of operators.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OperatorRow {
    pub name: String,
    /// `Input Dims` as written (JSON), when grouping by shape.
    pub input_shapes: Option<String>,
    pub calls: u64,
    pub host_total_us: f64,
    pub host_self_us: f64,
    pub device_total_us: f64,
    pub device_self_us: f64,
    /// Device operations launched directly by these operators.
    pub device_ops: u64,
    /// The frames above the group's longest call (Python functions, annotations, operators),
    /// outermost first; at most [`STACK_FRAMES`] (the innermost ones).
    pub call_stack: Vec<String>,
    /// The device operations these operators launched directly, by name, most time first; at
    /// most [`OP_KERNELS`].
    pub kernels: Vec<OpKernel>,
}

/// Device operations of one name launched by an operator group.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OpKernel {
    pub name: String,
    pub calls: u64,
    pub total_us: f64,
}

/// Frames kept of an operator's call stack.
pub const STACK_FRAMES: usize = 12;
/// Device operations listed per operator group.
pub const OP_KERNELS: usize = 5;

/// The operators of one rank, by device total time then host total time (descending).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OperatorsResult {
    pub rows: Vec<OperatorRow>,
    pub by_shape: bool,
    /// Σ device time of the kernels, copies and sets, µs.
    pub device_time_us: f64,
    /// The part of it no CPU operator launched (launched outside any operator, or no launch found).
    pub device_time_outside_ops_us: f64,
    /// Why there is nothing, when there is nothing.
    pub note: String,
}

/// Per-row sums before grouping.
struct Sums {
    host_self: Vec<i64>,
    device_self: Vec<i64>,
    device_total: Vec<i64>,
    device_ops: Vec<u64>,
}

/// Host self and device times per operator row.
fn sums(t: &TraceTable, h: &HostOps) -> (Sums, i64, i64) {
    let n = t.len();
    let mut s = Sums {
        host_self: vec![0; n],
        device_self: vec![0; n],
        device_total: vec![0; n],
        device_ops: vec![0; n],
    };
    for r in (0..n).filter(|&r| h.op_of[r] == r as u32) {
        s.host_self[r] += h.dur(r);
        let p = h.parent_op[r];
        if p != NONE {
            s.host_self[p as usize] -= h.dur(r);
        }
    }
    let (mut device, mut outside) = (0i64, 0i64);
    for d in (0..n).filter(|&d| h.frame.member[d] && t.kind_at(d).is_gpu_activity()) {
        let dur = h.dur(d);
        device += dur;
        let Some(o) = h.op_of_device(d) else {
            outside += dur;
            continue;
        };
        s.device_self[o] += dur;
        s.device_ops[o] += 1;
        let mut x = o as u32;
        while x != NONE {
            s.device_total[x as usize] += dur;
            x = h.parent_op[x as usize];
        }
    }
    (s, device, outside)
}

/// The operators of one table.
pub fn operators(t: &TraceTable, by_shape: bool) -> OperatorsResult {
    operators_in(t, &HostOps::new(t), by_shape)
}

/// The operators of one table whose call stacks are built.
pub fn operators_in(t: &TraceTable, h: &HostOps, by_shape: bool) -> OperatorsResult {
    let (s, device, outside) = sums(t, h);
    let dims = by_shape.then(|| t.arg("Input Dims")).flatten();
    let mut index: HashMap<(u32, Option<String>), usize> = HashMap::new();
    let mut rows: Vec<OperatorRow> = Vec::new();
    // Per row, its group; per group, its longest call.
    let mut group_of = vec![NONE; t.len()];
    let mut longest: Vec<(i64, usize)> = Vec::new();
    for r in (0..t.len()).filter(|&r| h.op_of[r] == r as u32) {
        let shapes = dims.and_then(|c| c.find(r).and_then(|i| c.text_at(i)).map(str::to_string));
        let g = *index
            .entry((t.name_id(r), shapes.clone()))
            .or_insert_with(|| {
                rows.push(OperatorRow {
                    name: t.name_at(r).to_string(),
                    input_shapes: shapes.or_else(|| by_shape.then(String::new)),
                    ..OperatorRow::default()
                });
                longest.push((i64::MIN, r));
                rows.len() - 1
            });
        group_of[r] = g as u32;
        if h.dur(r) > longest[g].0 {
            longest[g] = (h.dur(r), r);
        }
        let row = &mut rows[g];
        row.calls += 1;
        row.host_total_us += us(h.dur(r));
        row.host_self_us += us(s.host_self[r]);
        row.device_total_us += us(s.device_total[r]);
        row.device_self_us += us(s.device_self[r]);
        row.device_ops += s.device_ops[r];
    }
    for (row, &(_, r)) in rows.iter_mut().zip(&longest) {
        row.call_stack = call_stack(t, h, r);
    }
    add_kernels(t, h, &group_of, &mut rows);
    crate::sort::sort_by(&mut rows, |a, b| {
        b.device_total_us
            .total_cmp(&a.device_total_us)
            .then(b.host_total_us.total_cmp(&a.host_total_us))
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.input_shapes.cmp(&b.input_shapes))
    });
    let note = if rows.is_empty() {
        "the trace has no CPU operators (cpu_op events): record it with torch.profiler's CPU activity".into()
    } else {
        String::new()
    };
    OperatorsResult {
        rows,
        by_shape,
        device_time_us: us(device),
        device_time_outside_ops_us: us(outside),
        note,
    }
}

/// The names of the frames above row `r`, outermost first, the innermost [`STACK_FRAMES`].
fn call_stack(t: &TraceTable, h: &HostOps, r: usize) -> Vec<String> {
    let mut frames = Vec::new();
    let mut x = h.parent[r];
    while x != NONE && frames.len() < STACK_FRAMES {
        frames.push(t.name_at(x as usize).to_string());
        x = h.parent[x as usize];
    }
    frames.reverse();
    frames
}

/// Each group's device operations by name (those its calls launched directly).
fn add_kernels(t: &TraceTable, h: &HostOps, group_of: &[u32], rows: &mut [OperatorRow]) {
    let mut by_name: HashMap<(usize, u32), (u64, i64)> = HashMap::new();
    for d in (0..t.len()).filter(|&d| h.frame.member[d] && t.kind_at(d).is_gpu_activity()) {
        let Some(g) = h
            .op_of_device(d)
            .map(|o| group_of[o])
            .filter(|&g| g != NONE)
        else {
            continue;
        };
        let g = g as usize;
        let e = by_name.entry((g, t.name_id(d))).or_default();
        e.0 += 1;
        e.1 += h.dur(d);
    }
    let mut per_group: Vec<Vec<(u32, u64, i64)>> = vec![Vec::new(); rows.len()];
    for ((g, name), (calls, ns)) in by_name {
        per_group[g].push((name, calls, ns));
    }
    for (row, mut kernels) in rows.iter_mut().zip(per_group) {
        crate::sort::sort_by(&mut kernels, |a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
        row.kernels = kernels
            .into_iter()
            .take(OP_KERNELS)
            .map(|(name, calls, ns)| OpKernel {
                name: t.name_dictionary().value(name as usize).to_string(),
                calls,
                total_us: us(ns),
            })
            .collect();
    }
}
