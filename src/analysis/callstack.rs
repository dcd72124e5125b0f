//! CPU call-stack forest per (pid, tid) built from the nesting of complete events, and GPU events
//! attached to the runtime call that launched them (the rows come from the mode's frame).

use crate::table::intern::FxHashMap;
use crate::table::TraceTable;
use crate::trace::dialect::EventKind;

/// Sentinel for "no row".
pub const NONE: u32 = u32::MAX;

/// For each GPU row, the CPU row with the same correlation id (runtime/driver calls preferred);
/// `NONE` when there is none. CPU rows map to `NONE`.
pub fn launchers(t: &TraceTable, span: &[bool], gpu: &[bool]) -> Vec<u32> {
    let n = t.len();
    let mut cpu: Vec<(i64, u8, u32)> = Vec::new();
    for r in 0..n {
        if span[r] && !gpu[r] {
            if let Some(c) = t.correlation_at(r) {
                let pref = match t.kind_at(r) {
                    EventKind::Runtime | EventKind::Driver => 0,
                    _ => 1,
                };
                cpu.push((c, pref, r as u32));
            }
        }
    }
    crate::sort::sort(&mut cpu); // adaptive: correlation ids mostly rise in file order
    let mut out = vec![NONE; n];
    for r in 0..n {
        if span[r] && gpu[r] {
            if let Some(c) = t.correlation_at(r) {
                let i = cpu.partition_point(|x| x.0 < c);
                if i < cpu.len() && cpu[i].0 == c {
                    out[r] = cpu[i].2;
                }
            }
        }
    }
    out
}

/// The CPU call-stack forest: one tree per (pid, tid), children ordered by start.
#[derive(Clone, Debug, Default)]
pub struct CallForest {
    /// Parent row of each row (`NONE` for roots and rows not in the forest).
    pub parent: Vec<u32>,
    /// Depth of each row (0 = root); meaningless for rows not in the forest.
    pub depth: Vec<u32>,
    /// Rows in depth-first (pre-)order, grouped by thread (threads ordered by pid, tid ids).
    pub preorder: Vec<u32>,
    /// One past the last descendant's position in `preorder`, per position.
    pub subtree_end: Vec<u32>,
}

/// Builds the forest over rows with `member[row]` (CPU spans). Rows are nested when one lies within
/// another on the same thread; a partial overlap closes the earlier event.
pub fn build_forest(t: &TraceTable, member: &[bool], ts: &[i64], end: &[i64]) -> CallForest {
    let n = t.len();
    let members: Vec<u32> = (0..n as u32).filter(|&r| member[r as usize]).collect();
    // (thread, start, later end first, row)
    let keys = sort_by_thread(t, &members, |r| (ts[r], !end[r]));
    let rows: Vec<u32> = keys.iter().map(|k| k.2).collect();
    let mut f = CallForest {
        parent: vec![NONE; n],
        depth: vec![0; n],
        preorder: Vec::new(),
        subtree_end: vec![0; rows.len()],
    };
    // stack of positions in `rows`
    let mut stack: Vec<usize> = Vec::new();
    let mut thread = u64::MAX;
    for (pos, &(th, _, r)) in keys.iter().enumerate() {
        let ru = r as usize;
        if th != thread {
            while let Some(p) = stack.pop() {
                f.subtree_end[p] = pos as u32;
            }
            thread = th;
        }
        while let Some(&p) = stack.last() {
            let pr = rows[p] as usize;
            if ts[ru] < end[pr] && end[ru] <= end[pr] || ts[ru] == ts[pr] && end[ru] <= end[pr] {
                break;
            }
            stack.pop();
            f.subtree_end[p] = pos as u32;
        }
        if let Some(&p) = stack.last() {
            f.parent[ru] = rows[p];
            f.depth[ru] = stack.len() as u32;
        }
        stack.push(pos);
    }
    let len = rows.len() as u32;
    while let Some(p) = stack.pop() {
        f.subtree_end[p] = len;
    }
    f.preorder = rows;
    f
}

/// `rows` (ascending) as (thread, key, row), sorted by thread (pid then tid dictionary keys), then
/// `key`, then row. A thread's events are almost always in time order in the file, so bucketing by
/// thread first leaves nearly sorted runs, which the adaptive stable sort merges in close to linear
/// time (a plain sort of the whole array is several times slower, most of all in WebAssembly).
pub fn sort_by_thread<K: Ord + Copy>(
    t: &TraceTable,
    rows: &[u32],
    key: impl Fn(usize) -> K,
) -> Vec<(u64, K, u32)> {
    let pid = t.pid.keys().values().as_slice();
    let tid = t.tid.keys().values().as_slice();
    let code = |r: usize| (u64::from(pid[r]) << 32) | u64::from(tid[r]);
    // Dense thread index per row (consecutive rows are mostly on the same thread).
    let mut index: FxHashMap<u64, u32> = FxHashMap::default();
    let mut codes: Vec<u64> = Vec::new();
    let mut thread_of: Vec<u32> = Vec::with_capacity(rows.len());
    let mut last = (u64::MAX, 0u32);
    for &r in rows {
        let c = code(r as usize);
        if c != last.0 {
            let next = codes.len() as u32;
            let i = *index.entry(c).or_insert(next);
            if i == next {
                codes.push(c);
            }
            last = (c, i);
        }
        thread_of.push(last.1);
    }
    // Threads in code order; rows bucketed by thread, keeping row order.
    let mut order: Vec<u32> = (0..codes.len() as u32).collect();
    order.sort_unstable_by_key(|&i| codes[i as usize]);
    let mut rank = vec![0u32; codes.len()];
    for (k, &i) in order.iter().enumerate() {
        rank[i as usize] = k as u32;
    }
    let mut start = vec![0usize; codes.len() + 1];
    for &i in &thread_of {
        start[rank[i as usize] as usize + 1] += 1;
    }
    for k in 0..codes.len() {
        start[k + 1] += start[k];
    }
    let mut out: Vec<(u64, K, u32)> = Vec::with_capacity(rows.len());
    let mut slot: Vec<u32> = vec![0; rows.len()];
    for (j, &i) in thread_of.iter().enumerate() {
        let k = rank[i as usize] as usize;
        slot[start[k]] = rows[j];
        start[k] += 1;
    }
    drop(thread_of);
    out.extend(slot.iter().map(|&r| {
        let ru = r as usize;
        (code(ru), key(ru), r)
    }));
    crate::sort::sort(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::load_bytes;

    #[test]
    fn sort_by_thread_matches_a_plain_sort() {
        // Two threads interleaved, one event out of time order, equal starts.
        let ev = serde_json::json!([
            {"ph": "X", "name": "a", "pid": 2, "tid": 1, "ts": 5, "dur": 1},
            {"ph": "X", "name": "b", "pid": 1, "tid": 9, "ts": 3, "dur": 1},
            {"ph": "X", "name": "c", "pid": 2, "tid": 1, "ts": 1, "dur": 9},
            {"ph": "X", "name": "d", "pid": 1, "tid": 9, "ts": 3, "dur": 4},
            {"ph": "X", "name": "e", "pid": 2, "tid": 1, "ts": 1, "dur": 2},
            {"ph": "X", "name": "f", "pid": 1, "tid": 7, "ts": 0, "dur": 1},
        ]);
        let b = serde_json::to_vec(&serde_json::json!({ "traceEvents": ev })).unwrap();
        let t = load_bytes("t.json", &b).unwrap();
        let rows: Vec<u32> = (0..t.len() as u32).collect();
        let key = |r: usize| (t.ts_at(r).unwrap(), -t.raw_dur_at(r).unwrap());
        let got = sort_by_thread(&t, &rows, key);
        let pid = t.pid.keys();
        let tid = t.tid.keys();
        let mut want: Vec<(u64, (i64, i64), u32)> = rows
            .iter()
            .map(|&r| {
                let ru = r as usize;
                let th = (u64::from(pid.value(ru)) << 32) | u64::from(tid.value(ru));
                (th, key(ru), r)
            })
            .collect();
        want.sort_unstable();
        assert_eq!(got, want);
        let names: Vec<&str> = got.iter().map(|x| t.name_at(x.2 as usize)).collect();
        // threads in dictionary-key order (pid 2 seen first), then by start, longer first
        assert_eq!(names, ["c", "e", "a", "d", "b", "f"]);
    }
}
