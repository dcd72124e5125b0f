//! The path's DAG: a start and an end node per operator, runtime call and GPU operation in the
//! window, numbered by (time, start before end, row), and its edges in insertion order.

use super::result::{CriticalPathStatus, EdgeType};
use super::rows::Rows;

/// Sentinel for "no node / no row".
pub const NONE: u32 = u32::MAX;
/// Sentinel for the call-stack root as an attribution.
pub const ROOT: u32 = NONE - 1;

pub struct Edge {
    pub u: u32,
    pub v: u32,
    /// Weight as reported (HTA-compat: may be negative).
    pub w: i64,
    pub t: EdgeType,
    /// Attributed row (`NONE`: none, `ROOT`: the root).
    pub attr: u32,
    pub has_attr: bool,
}

#[derive(Default)]
pub struct Graph {
    pub node_ts: Vec<i64>,
    /// Row of each node.
    pub node_ev: Vec<u32>,
    pub node_start: Vec<bool>,
    pub edges: Vec<Edge>,
    /// Start / end node of each row (`NONE`: not a node).
    pub start_node: Vec<u32>,
    pub end_node: Vec<u32>,
}

impl Graph {
    /// Adds an edge u → v (none for a loop or a missing end); its weight is the time between the
    /// nodes, zero for dependencies, sync edges and when `zero`.
    pub fn add(&mut self, u: u32, v: u32, t: EdgeType, zero: bool) -> Option<usize> {
        if u == v || u == NONE || v == NONE {
            return None;
        }
        let w = if matches!(t, EdgeType::Dependency | EdgeType::SyncDependency) || zero {
            0
        } else {
            self.node_ts[v as usize] - self.node_ts[u as usize]
        };
        self.edges.push(Edge {
            u,
            v,
            w,
            t,
            attr: NONE,
            has_attr: false,
        });
        Some(self.edges.len() - 1)
    }

    /// HTA's `_attribute_edge`.
    pub fn attribute(&mut self, e: Option<usize>, src_parent: u32) {
        let Some(e) = e else { return };
        let (u, v, t) = (self.edges[e].u, self.edges[e].v, self.edges[e].t);
        if !matches!(t, EdgeType::Operator | EdgeType::KernelKernelDelay) {
            return;
        }
        let ev = if t == EdgeType::KernelKernelDelay || self.node_start[u as usize] {
            self.node_ev[u as usize]
        } else if !self.node_start[v as usize] {
            self.node_ev[v as usize]
        } else {
            src_parent
        };
        self.edges[e].attr = ev;
        self.edges[e].has_attr = true;
    }

    /// Whether a row has nodes.
    pub fn has_node(&self, row: u32) -> bool {
        row != NONE && self.start_node[row as usize] != NONE
    }

    pub fn node_count(&self) -> usize {
        self.node_ts.len()
    }
}

/// Whether a clipped row becomes nodes: operators and runtime/driver calls, and GPU operations with
/// a partner.
fn is_node_row(r: &Rows, i: usize) -> bool {
    let t = r.t;
    if r.compat {
        matches!(
            t.category_at(i),
            Some("cpu_op") | Some("cuda_runtime") | Some("cuda_driver")
        ) || (r.stream[i] != -1 && r.ic[i] >= 0)
    } else {
        matches!(
            t.kind_at(i),
            crate::table::EventKind::CpuOp
                | crate::table::EventKind::Runtime
                | crate::table::EventKind::Driver
        ) || (t.kind_at(i).is_gpu_activity() && r.ic[i] >= 0)
    }
}

/// The graph's nodes (no edges yet) for the clipped rows.
pub fn build_nodes(r: &Rows, clip: &[bool]) -> Result<Graph, CriticalPathStatus> {
    let n = clip.len();
    let mut keys: Vec<(i64, bool, u32)> = Vec::new();
    for i in (0..n).filter(|&i| clip[i] && is_node_row(r, i)) {
        keys.push((r.ts[i], false, i as u32));
        keys.push((r.end[i], true, i as u32));
    }
    keys.sort_unstable();
    if keys.is_empty() {
        return Err(CriticalPathStatus::NoNodes);
    }
    let mut g = Graph {
        node_ts: Vec::with_capacity(keys.len()),
        node_ev: Vec::with_capacity(keys.len()),
        node_start: Vec::with_capacity(keys.len()),
        edges: Vec::new(),
        start_node: vec![NONE; n],
        end_node: vec![NONE; n],
    };
    for (idx, &(ts, is_end, row)) in keys.iter().enumerate() {
        g.node_ts.push(ts);
        g.node_ev.push(row);
        g.node_start.push(!is_end);
        if is_end {
            g.end_node[row as usize] = idx as u32;
        } else {
            g.start_node[row as usize] = idx as u32;
        }
    }
    Ok(g)
}
