//! Modules (TensorBoard's module view): the `nn.Module` tree from the Python frames PyTorch writes
//! with `with_stack=True` / `with_modules=True` (`nn.Module: Linear_0`), with each module's host
//! time and the device time of the work launched inside it.
//!
//! A module's path is the chain of module frames above it (`BertModel_0/BertEncoder_0/...`); calls
//! of the same path are summed. Host time is the frame's duration; device time is the duration of
//! the kernels, copies and sets whose runtime call ran inside the frame.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{us, HostOps};
use crate::analysis::callstack::NONE;
use crate::table::{EventKind, TraceTable};

/// The prefix PyTorch gives module frames.
pub const MODULE_PREFIX: &str = "nn.Module: ";

/// One module path.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModuleRow {
    /// Module names from the root, joined with `/`.
    pub path: String,
    /// The module's own name (`Linear_0`).
    pub name: String,
    pub depth: u32,
    pub calls: u64,
    pub host_us: f64,
    pub device_us: f64,
}

/// The module tree of one rank, in depth-first order (children by host time).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ModulesResult {
    pub rows: Vec<ModuleRow>,
    pub note: String,
}

fn module_name(t: &TraceTable, r: usize) -> Option<&str> {
    (t.kind_at(r) == EventKind::PythonFunction)
        .then(|| t.name_at(r).strip_prefix(MODULE_PREFIX))
        .flatten()
}

/// The path of every module frame (by row), from its module ancestors.
fn paths(t: &TraceTable, h: &HostOps) -> Vec<Option<String>> {
    let n = t.len();
    let mut module_above = vec![NONE; n];
    let mut path: Vec<Option<String>> = vec![None; n];
    // Parents come before children in time order on a thread; rows sorted by start do it.
    let mut rows: Vec<usize> = (0..n).filter(|&r| h.frame.member[r]).collect();
    crate::sort::sort_by_key(&mut rows, |&r| {
        (h.frame.ts[r], std::cmp::Reverse(h.frame.end[r]), r)
    });
    for r in rows {
        let p = h.parent[r];
        let above = if p == NONE {
            NONE
        } else if path[p as usize].is_some() {
            p
        } else {
            module_above[p as usize]
        };
        module_above[r] = above;
        if let Some(name) = module_name(t, r) {
            path[r] = Some(match above {
                NONE => name.to_string(),
                a => format!("{}/{name}", path[a as usize].as_deref().unwrap_or("")),
            });
        }
    }
    path
}

/// The module tree of one table.
pub fn modules(t: &TraceTable) -> ModulesResult {
    modules_in(t, &HostOps::new(t))
}

/// The module tree of one table whose call stacks are built.
pub fn modules_in(t: &TraceTable, h: &HostOps) -> ModulesResult {
    let path = paths(t, h);
    let mut by_path: BTreeMap<String, ModuleRow> = BTreeMap::new();
    for r in (0..t.len()).filter(|&r| path[r].is_some()) {
        let p = path[r].clone().unwrap_or_default();
        let e = by_path.entry(p.clone()).or_insert_with(|| ModuleRow {
            name: p.rsplit('/').next().unwrap_or("").to_string(),
            depth: p.matches('/').count() as u32,
            path: p,
            ..ModuleRow::default()
        });
        e.calls += 1;
        e.host_us += us(h.dur(r));
    }
    if by_path.is_empty() {
        return ModulesResult {
            rows: Vec::new(),
            note: "the trace names no nn.Module: record with torch.profiler.profile(with_stack=True) (or with_modules=True) to see modules".into(),
        };
    }
    for d in (0..t.len()).filter(|&d| h.frame.member[d] && t.kind_at(d).is_gpu_activity()) {
        let l = h.launcher[d];
        if l == NONE {
            continue;
        }
        let mut x = l;
        while x != NONE {
            if let Some(p) = &path[x as usize] {
                if let Some(e) = by_path.get_mut(p) {
                    e.device_us += us(h.dur(d));
                }
            }
            x = h.parent[x as usize];
        }
    }
    ModulesResult {
        rows: tree_order(by_path.into_values().collect()),
        note: String::new(),
    }
}

/// Depth-first order, siblings by host time (descending).
fn tree_order(rows: Vec<ModuleRow>) -> Vec<ModuleRow> {
    let parent_of = |p: &str| p.rsplit_once('/').map(|(a, _)| a.to_string());
    let mut children: BTreeMap<Option<String>, Vec<ModuleRow>> = BTreeMap::new();
    for r in rows {
        children.entry(parent_of(&r.path)).or_default().push(r);
    }
    for v in children.values_mut() {
        crate::sort::sort_by(v, |a, b| {
            b.host_us
                .total_cmp(&a.host_us)
                .then_with(|| a.path.cmp(&b.path))
        });
    }
    let mut out = Vec::new();
    let mut stack: Vec<ModuleRow> = children
        .remove(&None)
        .unwrap_or_default()
        .into_iter()
        .rev()
        .collect();
    while let Some(r) = stack.pop() {
        if let Some(kids) = children.remove(&Some(r.path.clone())) {
            stack.extend(kids.into_iter().rev());
        }
        out.push(r);
    }
    out
}
