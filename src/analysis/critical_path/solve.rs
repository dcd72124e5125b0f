//! The solve phase: repeated edges merged as networkx keeps them, HTA's graph check, topological
//! generations and the longest path (first maximum wins, no recursion).

use super::graph::{Graph, NONE};
use super::result::{CriticalPathStatus, EdgeType};

/// One edge of the merged graph: repeated (u, v) edges sit at the first one's position, with the
/// last one's weight and the last attribution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UniqueEdge {
    /// The first inserted edge (its position, u and v).
    pub first: u32,
    /// The last inserted edge (its weight and type).
    pub last: u32,
    /// The last attributed edge, `NONE` when none was.
    pub attr_from: u32,
}

/// The longest path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    pub edges: Vec<UniqueEdge>,
    /// Indices into `edges`, in path order.
    pub path: Vec<u32>,
}

/// Counting sort of `0..len` by `key` (stable): offsets per key (`keys + 1` of them) and the items
/// in that order.
fn group_by(len: usize, keys: usize, key: impl Fn(usize) -> u32) -> (Vec<u32>, Vec<u32>) {
    let mut off = vec![0u32; keys + 1];
    for k in 0..len {
        off[key(k) as usize + 1] += 1;
    }
    for x in 0..keys {
        off[x + 1] += off[x];
    }
    let mut fill = off.clone();
    let mut list = vec![0u32; len];
    for k in 0..len {
        let x = key(k) as usize;
        list[fill[x] as usize] = k as u32;
        fill[x] += 1;
    }
    (off, list)
}

/// Repeated (u, v) edges merged, in first-insertion order.
pub fn unique_edges(g: &Graph) -> Vec<UniqueEdge> {
    let m = g.edges.len();
    let nn = g.node_count();
    // For each first edge: (last edge, last attributed edge or NONE); NONE for later repeats.
    let mut last_of = vec![(NONE, NONE); m];
    let (off, by_u) = group_by(m, nn, |k| g.edges[k].u);
    let mut scratch: Vec<(u32, u32)> = Vec::new();
    for x in 0..nn {
        let list = &by_u[off[x] as usize..off[x + 1] as usize];
        if let [k] = list {
            let e = &g.edges[*k as usize];
            last_of[*k as usize] = (*k, if e.has_attr { *k } else { NONE });
            continue;
        }
        scratch.clear();
        scratch.extend(list.iter().map(|&k| (g.edges[k as usize].v, k)));
        scratch.sort_unstable();
        for same_v in scratch.chunk_by(|a, b| a.0 == b.0) {
            let first = same_v[0].1;
            let last = same_v[same_v.len() - 1].1;
            let attr_from = same_v
                .iter()
                .rev()
                .find(|x| g.edges[x.1 as usize].has_attr)
                .map_or(NONE, |x| x.1);
            last_of[first as usize] = (last, attr_from);
        }
    }
    (0..m as u32)
        .filter_map(|k| {
            let (last, attr_from) = last_of[k as usize];
            (last != NONE).then_some(UniqueEdge {
                first: k,
                last,
                attr_from,
            })
        })
        .collect()
}

/// HTA rejects a graph with a sync edge between two events of one stream; it reports the first in
/// (u, v) order.
pub fn check_same_stream_sync(
    g: &Graph,
    stream: &[i64],
    uniq: &[UniqueEdge],
) -> Result<(), CriticalPathStatus> {
    let mut bad: Option<(u32, u32, i64)> = None;
    for ue in uniq {
        let e = &g.edges[ue.last as usize];
        if e.t != EdgeType::SyncDependency {
            continue;
        }
        let a = g.node_ev[e.u as usize] as usize;
        let b = g.node_ev[e.v as usize] as usize;
        if stream[a] != -1
            && stream[a] == stream[b]
            && bad.is_none_or(|(u, v, _)| (e.u, e.v) < (u, v))
        {
            bad = Some((e.u, e.v, stream[a]));
        }
    }
    match bad {
        Some((_, _, stream)) => Err(CriticalPathStatus::SyncEdgeOnOneStream { stream }),
        None => Ok(()),
    }
}

/// Nodes in networkx's `topological_sort` order (generation by generation).
fn topological_order(
    nn: usize,
    succ: &(Vec<u32>, Vec<u32>),
    pred_off: &[u32],
    target: impl Fn(u32) -> usize,
) -> Result<Vec<u32>, CriticalPathStatus> {
    let (soff, slist) = succ;
    let mut indeg: Vec<u32> = (0..nn).map(|x| pred_off[x + 1] - pred_off[x]).collect();
    let mut topo: Vec<u32> = (0..nn as u32).filter(|&x| indeg[x as usize] == 0).collect();
    let mut gen_start = 0;
    while gen_start < topo.len() {
        let gen_end = topo.len();
        for p in gen_start..gen_end {
            let x = topo[p] as usize;
            for &k in &slist[soff[x] as usize..soff[x + 1] as usize] {
                let v = target(k);
                indeg[v] -= 1;
                if indeg[v] == 0 {
                    topo.push(v as u32);
                }
            }
        }
        gen_start = gen_end;
    }
    if topo.len() != nn {
        return Err(CriticalPathStatus::Cycle);
    }
    Ok(topo)
}

/// The longest path over the merged edges (networkx `dag_longest_path`: negative weights count
/// zero, predecessors in insertion order, the first maximum wins; the path ends at the first node in
/// topological order with the largest distance).
pub fn longest_path(g: &Graph, uniq: Vec<UniqueEdge>) -> Result<Solution, CriticalPathStatus> {
    let nn = g.node_count();
    let ue = uniq.len();
    let first = |k: u32| &g.edges[uniq[k as usize].first as usize];
    let succ = group_by(ue, nn, |k| first(k as u32).u);
    let (poff, plist) = group_by(ue, nn, |k| first(k as u32).v);
    let topo = topological_order(nn, &succ, &poff, |k| first(k).v as usize)?;
    let weight = |k: u32| g.edges[uniq[k as usize].last as usize].w.max(0);
    let mut dist = vec![0i64; nn];
    let mut via = vec![NONE; nn]; // unique-edge index of the best predecessor edge
    for &v in &topo {
        let v = v as usize;
        let mut best: Option<(i64, u32)> = None;
        for &k in &plist[poff[v] as usize..poff[v + 1] as usize] {
            let d = dist[first(k).u as usize] + weight(k);
            if best.is_none_or(|b| d > b.0) {
                best = Some((d, k));
            }
        }
        if let Some((d, k)) = best.filter(|b| b.0 >= 0) {
            dist[v] = d;
            via[v] = k;
        }
    }
    let mut endv = topo[0] as usize;
    for &v in &topo {
        if dist[v as usize] > dist[endv] {
            endv = v as usize;
        }
    }
    let mut path: Vec<u32> = Vec::new();
    let mut v = endv;
    while via[v] != NONE {
        path.push(via[v]);
        v = first(via[v]).u as usize;
    }
    path.reverse();
    Ok(Solution { edges: uniq, path })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A graph of `n` nodes at the given times with edges (u, v, type).
    fn graph(ts: &[i64], edges: &[(u32, u32, EdgeType)]) -> Graph {
        let mut g = Graph {
            node_ts: ts.to_vec(),
            node_ev: (0..ts.len() as u32).collect(),
            node_start: vec![true; ts.len()],
            ..Default::default()
        };
        for &(u, v, t) in edges {
            g.add(u, v, t, false);
        }
        g
    }

    #[test]
    fn longest_path_prefers_weight_then_the_first_maximum() {
        use EdgeType::*;
        // 0 →(5) 1 →(5) 3 and 0 →(2) 2 →(8) 3 tie at 10: the first predecessor edge of 3 wins.
        // A repeated 0 → 1 edge keeps the first position.
        let g = graph(
            &[0, 5, 2, 10],
            &[
                (0, 1, Operator),
                (1, 3, Operator),
                (0, 2, Operator),
                (2, 3, Operator),
                (0, 1, Dependency),
            ],
        );
        let uniq = unique_edges(&g);
        assert_eq!(uniq.len(), 4);
        assert_eq!(
            uniq[0],
            UniqueEdge {
                first: 0,
                last: 4,
                attr_from: NONE
            }
        );
        // The repeat is a dependency (weight 0): 0 → 1 → 3 is 5, 0 → 2 → 3 is 10.
        let s = longest_path(&g, uniq).unwrap();
        assert_eq!(s.path, [2, 3]);
        let g = graph(
            &[0, 5, 2, 10],
            &[
                (0, 1, Operator),
                (1, 3, Operator),
                (0, 2, Operator),
                (2, 3, Operator),
            ],
        );
        let s = longest_path(&g, unique_edges(&g)).unwrap();
        assert_eq!(s.path, [0, 1]);
        let cyclic = graph(&[0, 1], &[(0, 1, Operator), (1, 0, Dependency)]);
        assert_eq!(
            longest_path(&cyclic, unique_edges(&cyclic)),
            Err(CriticalPathStatus::Cycle)
        );
    }
}
