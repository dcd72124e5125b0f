//! The CPU graph phase: host edges from each thread's call stack (nesting and sequencing as HTA's
//! `_construct_graph_from_call_stack` walks it).

use super::super::callstack::sort_by_thread;
use super::graph::{Graph, NONE, ROOT};
use super::result::EdgeType;
use super::rows::{Rows, F_BLOCKING};

/// The exit edge of a blocking call: exact mode zeroes it only when a sync edge arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockingExit {
    pub edge: usize,
    pub row: u32,
}

/// HTA's per-thread traversal state (`_construct_graph_from_call_stack`).
struct StackState {
    last_node: u32,
    last_high: u32,
    op_depth: i64,
    last_parent: u32,
}

impl StackState {
    fn new() -> Self {
        StackState {
            last_node: NONE,
            last_high: NONE,
            op_depth: 0,
            last_parent: NONE,
        }
    }

    fn enter(&mut self, g: &mut Graph, s: u32, parent: u32) {
        if self.op_depth == 0 && self.last_high != NONE {
            g.add(self.last_high, s, EdgeType::Dependency, false);
        }
        self.op_depth += 1;
        if self.last_node != NONE {
            let e = g.add(self.last_node, s, EdgeType::Operator, false);
            g.attribute(e, self.last_parent);
        }
        self.last_node = s;
        self.last_parent = parent;
    }

    /// Returns the edge into the end node, if one was added.
    fn exit(&mut self, g: &mut Graph, en: u32, parent: u32, blocking: bool) -> Option<usize> {
        self.op_depth -= 1;
        let mut out = None;
        if self.last_node != NONE {
            out = g.add(self.last_node, en, EdgeType::Operator, blocking);
            g.attribute(out, self.last_parent);
        }
        if self.op_depth == 0 {
            self.last_node = NONE;
            self.last_high = en;
        } else {
            self.last_node = en;
            self.last_parent = parent;
        }
        out
    }
}

/// Adds every thread's host edges; returns the exits of blocking calls.
pub fn add_cpu_edges(r: &Rows, clip: &[bool], g: &mut Graph) -> Vec<BlockingExit> {
    // CPU rows by (thread, start, longest first, row): the order in which HTA's compare_events
    // opens them (positive durations).
    let members: Vec<u32> = (0..clip.len() as u32)
        .filter(|&i| clip[i as usize] && (r.compat || !r.gpu[i as usize]))
        .collect();
    let cpu_rows = sort_by_thread(r.t, &members, |i| (r.ts[i], -r.dur(i).max(0)));
    let mut blocking_exits = Vec::new();
    for group in cpu_rows.chunk_by(|a, b| a.0 == b.0) {
        if r.compat {
            if group.iter().any(|x| r.stream[x.2 as usize] > 0) {
                continue; // a GPU stream
            }
            if !group.iter().all(|x| r.stream[x.2 as usize] < 0) {
                continue; // HTA's "unknown" device type: no call stack
            }
        }
        let rows: Vec<(i64, u32)> = group.iter().map(|x| (x.1 .0, x.2)).collect();
        let ends: Vec<i64> = group.iter().map(|x| x.1 .0 - x.1 .1).collect();
        walk_thread(r, g, &rows, ends, &mut blocking_exits);
    }
    blocking_exits
}

/// One thread: `rows` (start, row) in opening order, `ends` their end times. HTA walks starts and
/// ends in time order, ends first on ties, and an end pops the top of the stack whatever event it
/// belongs to: only the end times matter.
fn walk_thread(
    r: &Rows,
    g: &mut Graph,
    rows: &[(i64, u32)],
    mut ends: Vec<i64>,
    blocking_exits: &mut Vec<BlockingExit>,
) {
    ends.sort_unstable();
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let mut st = StackState::new();
    let mut exit = |st: &mut StackState, g: &mut Graph, stack: &mut Vec<(u32, u32)>| {
        let Some((x, parent)) = stack.pop() else {
            return;
        };
        if g.has_node(x) {
            let bl = r.has(x as usize, F_BLOCKING);
            let en = g.end_node[x as usize];
            if let Some(e) = st.exit(g, en, parent, bl) {
                if bl {
                    blocking_exits.push(BlockingExit { edge: e, row: x });
                }
            }
        }
    };
    let mut next_end = 0;
    for &(start, row) in rows {
        while next_end < ends.len() && ends[next_end] <= start {
            exit(&mut st, g, &mut stack);
            next_end += 1;
        }
        let parent = stack.last().map_or(ROOT, |p| p.0);
        stack.push((row, parent));
        if g.has_node(row) {
            let s = g.start_node[row as usize];
            st.enter(g, s, parent);
        }
    }
    while !stack.is_empty() {
        exit(&mut st, g, &mut stack);
    }
}

#[cfg(test)]
mod tests {
    use super::super::graph::build_nodes;
    use super::super::rows::exact_rows;
    use super::super::tests::table;
    use super::*;

    #[test]
    fn nesting_gives_operator_edges_and_top_level_dependencies() {
        // p [0,10) holds a [1,4); q [12,15) follows on the same thread.
        let t = table(serde_json::json!([
            {"ph": "X", "cat": "cpu_op", "name": "p", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
            {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 3},
            {"ph": "X", "cat": "cpu_op", "name": "q", "pid": 1, "tid": 1, "ts": 12, "dur": 3},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": 1, "tid": 1, "ts": 16, "dur": 4},
        ]));
        let r = exact_rows(&t);
        let clip = vec![true; t.len()];
        let mut g = build_nodes(&r, &clip).unwrap();
        let exits = add_cpu_edges(&r, &clip, &mut g);
        // Nodes by time: p0 a1 a4 p10 q12 q15 s16 s20 → 0..8.
        let edges: Vec<(u32, u32, i64, EdgeType, u32)> = g
            .edges
            .iter()
            .map(|e| (e.u, e.v, e.w, e.t, e.attr))
            .collect();
        use EdgeType::{Dependency as D, Operator as O};
        assert_eq!(
            edges,
            [
                (0, 1, 1_000, O, 0),
                (1, 2, 3_000, O, 1),
                (2, 3, 6_000, O, 0),
                (3, 4, 0, D, NONE),
                (4, 5, 3_000, O, 2),
                (5, 6, 0, D, NONE),
                // The blocking call's exit weighs zero until something explains the wait.
                (6, 7, 0, O, 3),
            ]
        );
        assert_eq!(exits, [BlockingExit { edge: 6, row: 3 }]);
    }
}
