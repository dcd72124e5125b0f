//! The GPU graph phase: kernel spans, launch delays, kernel-kernel delays and synchronisation edges
//! (`cudaStreamWaitEvent`, Event / Stream / Context Sync), and exact mode's inferred waits of
//! blocking calls.

use super::cpu_graph::BlockingExit;
use super::graph::{Graph, NONE, ROOT};
use super::result::EdgeType;
use super::rows::{
    arg_i64, Rows, F_EVENT_RECORD, F_HTA_LAUNCH, F_LAUNCH, F_STREAM_WAIT_CALL, F_WAITS_DEVICE,
};
use crate::analysis::names::{device_sync_event, is_hta_device_sync_name, DeviceSyncEvent};
use crate::table::intern::FxHashMap;

/// A launch call of the whole frame (HTA's `_get_cuda_runtime_calls_df`).
struct Launch {
    gpu_pid: u32,
    stream: i64,
    ts: i64,
    row: u32,
    pid: u32,
    tid: u32,
}

/// What the sync events need to find their ends: the launch before each recorded event, the launch
/// after each stream wait, and (HTA-compat) the queue length after each launch / kernel start.
#[derive(Default)]
pub struct SyncLinks {
    /// cudaEventRecord correlation → previous launch on the recorded stream.
    record_prev: FxHashMap<i64, u32>,
    /// cudaStreamWaitEvent row → next launch on the same thread and stream.
    wait_next: FxHashMap<u32, u32>,
    /// Queue length per launch / kernel row (HTA-compat).
    qlen: FxHashMap<u32, i64>,
}

/// Launch calls of the frame with a GPU partner, by (gpu pid, stream, ts, row).
fn launches(r: &Rows) -> Vec<Launch> {
    let t = r.t;
    let (pid, tid) = (t.pid.keys(), t.tid.keys());
    let mut out: Vec<Launch> = Vec::new();
    for &i in &r.df_order {
        let iu = i as usize;
        if r.gpu[iu] || !r.has(iu, F_LAUNCH) {
            continue;
        }
        let Some(gk) = r.partner(iu) else { continue };
        let gpu_ok = if r.compat {
            r.stream[gk] != -1 && r.ic[gk] > 0
        } else {
            t.kind_at(gk).is_gpu_activity()
        };
        if gpu_ok {
            out.push(Launch {
                gpu_pid: pid.value(gk),
                stream: r.stream[gk],
                ts: r.ts[iu],
                row: i,
                pid: pid.value(iu),
                tid: tid.value(iu),
            });
        }
    }
    crate::sort::sort_by_key(&mut out, |l| (l.gpu_pid, l.stream, l.ts, l.row));
    out
}

/// cudaEventRecord correlation → the last launch on the recorded stream at or before the record.
fn records(r: &Rows, launches: &[Launch]) -> FxHashMap<i64, u32> {
    let t = r.t;
    let pid = t.pid.keys();
    let mut rec_stream: FxHashMap<i64, (i64, u32)> = FxHashMap::default();
    if let Some(col) = t.arg("wait_on_stream") {
        for (k, &row) in col.rows.values().iter().enumerate() {
            let row = row as usize;
            let Some(ws) = col.i64_at(k).filter(|&ws| r.sel[row] && ws > -1) else {
                continue;
            };
            if let Some(c) = arg_i64(t, "wait_on_cuda_event_record_corr_id", row) {
                rec_stream.entry(c).or_insert((ws, pid.value(row)));
            }
        }
    }
    let mut out = FxHashMap::default();
    if rec_stream.is_empty() {
        return out;
    }
    for &i in &r.df_order {
        let iu = i as usize;
        if !r.has(iu, F_EVENT_RECORD) {
            continue;
        }
        let Some(c) = t.correlation_at(iu) else {
            continue;
        };
        let Some(&(stream, gpid)) = rec_stream.get(&c) else {
            continue;
        };
        let ts = r.ts[iu];
        let hi = launches.partition_point(|l| (l.gpu_pid, l.stream, l.ts) <= (gpid, stream, ts));
        if hi > 0 {
            let l = &launches[hi - 1];
            if l.gpu_pid == gpid && l.stream == stream {
                out.insert(c, l.row);
            }
        }
    }
    out
}

/// cudaStreamWaitEvent row → the next launch on the same thread and stream.
fn stream_waits(r: &Rows, launches: &[Launch]) -> FxHashMap<u32, u32> {
    let t = r.t;
    let (pid, tid) = (t.pid.keys(), t.tid.keys());
    let mut by_thread: Vec<(u32, u32, i64, i64, u32)> = launches
        .iter()
        .map(|l| (l.pid, l.tid, l.stream, l.ts, l.row))
        .collect();
    by_thread.sort_unstable();
    let mut out = FxHashMap::default();
    for &i in &r.df_order {
        let iu = i as usize;
        if r.gpu[iu] || !r.has(iu, F_STREAM_WAIT_CALL) {
            continue;
        }
        let Some(gk) = r.partner(iu) else { continue };
        if r.compat && !(r.stream[gk] != -1 && r.ic[gk] > 0) {
            continue;
        }
        let key = (pid.value(iu), tid.value(iu), r.stream[gk], r.ts[iu]);
        let p = by_thread.partition_point(|x| (x.0, x.1, x.2, x.3) <= key);
        if let Some(x) = by_thread.get(p) {
            if (x.0, x.1, x.2) == (key.0, key.1, key.2) {
                out.insert(i, x.4);
            }
        }
    }
    out
}

/// HTA-compat: queue length after each launch / kernel start, per stream, on the whole frame.
fn queue_lengths(r: &Rows) -> FxHashMap<u32, i64> {
    let t = r.t;
    let mut gpu_by_corr: Vec<(i64, u32)> = Vec::new();
    for &i in r.df_order.iter().filter(|&&i| r.stream[i as usize] != -1) {
        if let Some(c) = t.correlation_at(i as usize) {
            gpu_by_corr.push((c, i));
        }
    }
    gpu_by_corr.sort_unstable();
    let mut runtime_corr: Vec<i64> = Vec::new();
    // (stream, ts, 0 launch / 1 kernel start, row)
    let mut evq: Vec<(i64, i64, u8, u32)> = Vec::new();
    for &i in &r.df_order {
        let iu = i as usize;
        if !(r.has(iu, F_HTA_LAUNCH) && r.ic[iu] > 0) {
            continue;
        }
        let Some(c) = t.correlation_at(iu) else {
            continue;
        };
        runtime_corr.push(c);
        let lo = gpu_by_corr.partition_point(|x| x.0 < c);
        if lo < gpu_by_corr.len() && gpu_by_corr[lo].0 == c {
            let gk = gpu_by_corr[lo].1 as usize;
            evq.push((r.stream[gk], r.ts[iu], 0, i));
        }
    }
    runtime_corr.sort_unstable();
    for &(c, i) in &gpu_by_corr {
        if runtime_corr.binary_search(&c).is_ok() {
            evq.push((r.stream[i as usize], r.ts[i as usize], 1, i));
        }
    }
    evq.sort_unstable();
    let mut qlen = FxHashMap::default();
    let mut cur_stream = i64::MIN;
    let mut q = 0i64;
    for &(s, _, kind, row) in &evq {
        if s != cur_stream {
            cur_stream = s;
            q = 0;
        }
        q += if kind == 0 { 1 } else { -1 };
        qlen.insert(row, q);
    }
    qlen
}

impl SyncLinks {
    pub fn new(r: &Rows) -> Self {
        let launches = launches(r);
        SyncLinks {
            record_prev: records(r, &launches),
            wait_next: stream_waits(r, &launches),
            qlen: if r.compat {
                queue_lengths(r)
            } else {
                FxHashMap::default()
            },
        }
    }
}

/// Per-stream state of the walk over the GPU rows.
#[derive(Default)]
struct StreamState {
    /// (stream, end node of its last kernel), first-seen order.
    last_on: Vec<(i64, u32)>,
    last_idx: FxHashMap<i64, usize>,
    /// Kernel row → the kernel a stream wait makes it wait for.
    kernel_sync: FxHashMap<u32, u32>,
}

impl StreamState {
    fn last(&self, stream: i64) -> Option<u32> {
        self.last_idx.get(&stream).map(|&k| self.last_on[k].1)
    }

    fn set_last(&mut self, stream: i64, end: u32) {
        match self.last_idx.get(&stream) {
            Some(&k) => self.last_on[k].1 = end,
            None => {
                self.last_idx.insert(stream, self.last_on.len());
                self.last_on.push((stream, end));
            }
        }
    }
}

/// The clipped GPU rows (kernels by start, sync events by end).
fn gpu_rows_in_order(r: &Rows, clip: &[bool]) -> Vec<u32> {
    let t = r.t;
    let mut gk: Vec<(i64, u32)> = Vec::new();
    for i in (0..clip.len()).filter(|&i| clip[i] && r.ic[i] >= 0) {
        let take = if r.compat {
            r.stream[i] != -1 || is_hta_device_sync_name(t.name_at(i))
        } else {
            r.gpu[i]
        };
        if take {
            let key = if r.is_sync_row(i) { r.end[i] } else { r.ts[i] };
            gk.push((key, i as u32));
        }
    }
    gk.sort_unstable();
    gk.into_iter().map(|(_, i)| i).collect()
}

/// Adds the GPU edges: each kernel's span, what it waited for (launch, previous kernel, stream
/// wait), and the sync events' edges into the calls that waited.
pub fn add_gpu_edges(r: &Rows, clip: &[bool], links: &mut SyncLinks, g: &mut Graph) {
    let mut st = StreamState::default();
    for e in gpu_rows_in_order(r, clip) {
        if r.is_sync_row(e as usize) {
            add_sync_edges(r, e as usize, links, &mut st, g);
        } else {
            add_kernel_edges(r, e, links, &mut st, g);
        }
    }
}

/// The edges of one sync event.
fn add_sync_edges(r: &Rows, eu: usize, links: &SyncLinks, st: &mut StreamState, g: &mut Graph) {
    let sync = device_sync_event(r.t.name_at(eu));
    let call = r.ic[eu];
    if let Some(wait @ (DeviceSyncEvent::StreamWaitEvent | DeviceSyncEvent::EventSync)) = sync {
        let Some(&prev) = arg_i64(r.t, "wait_on_cuda_event_record_corr_id", eu)
            .and_then(|c| links.record_prev.get(&c))
        else {
            return;
        };
        let src_kernel = r.ic[prev as usize];
        if src_kernel < 0 || call < 0 {
            return;
        }
        if wait == DeviceSyncEvent::StreamWaitEvent {
            let Some(&next) = links.wait_next.get(&(call as u32)) else {
                return;
            };
            let dest = r.ic[next as usize];
            if dest >= 0 {
                st.kernel_sync.insert(dest as u32, src_kernel as u32);
            }
        } else {
            let src_end = g.end_node[src_kernel as usize];
            if src_end != NONE {
                g.add(
                    src_end,
                    g.end_node[call as usize],
                    EdgeType::SyncDependency,
                    false,
                );
            }
        }
        return;
    }
    if call < 0 {
        return;
    }
    let dst = g.end_node[call as usize];
    match sync {
        Some(DeviceSyncEvent::ContextSync) => {
            for &(_, node) in &st.last_on {
                g.add(node, dst, EdgeType::SyncDependency, false);
            }
        }
        Some(DeviceSyncEvent::StreamSync) => {
            if let Some(last) = st.last(r.stream[eu]) {
                g.add(last, dst, EdgeType::SyncDependency, false);
            }
        }
        _ => {}
    }
}

/// The edges of one kernel: its span, a stream-wait edge, and either its launch delay or the gap
/// after the previous kernel on its stream.
fn add_kernel_edges(r: &Rows, e: u32, links: &mut SyncLinks, st: &mut StreamState, g: &mut Graph) {
    let eu = e as usize;
    let stream = r.stream[eu];
    let (s, en) = (g.start_node[eu], g.end_node[eu]);
    if s == NONE {
        return;
    }
    let ke = g.add(s, en, EdgeType::Operator, false);
    g.attribute(ke, ROOT);
    let mut sync_end = NONE;
    if let Some(src) = st.kernel_sync.remove(&e) {
        let se = g.end_node[src as usize];
        if se != NONE {
            sync_end = se;
            g.add(se, s, EdgeType::SyncDependency, false);
        }
    }
    let runtime = r.ic[eu];
    let last = st.last(stream);
    let rt_ts = if runtime >= 0 {
        r.ts[runtime as usize]
    } else {
        i64::MAX
    };
    let before = |node: u32, strict: bool| {
        node == NONE || {
            let ts = g.node_ts[node as usize];
            ts < rt_ts || (!strict && ts == rt_ts)
        }
    };
    let launch_ok = if r.compat {
        links.qlen.get(&(runtime.max(0) as u32)) == Some(&1)
            && runtime > 0
            && links.qlen.get(&e) == Some(&0)
            && before(last.unwrap_or(NONE), true)
            && before(sync_end, true)
    } else {
        runtime >= 0 && before(last.unwrap_or(NONE), false) && before(sync_end, false)
    };
    let rt_start = if runtime >= 0 {
        g.start_node[runtime as usize]
    } else {
        NONE
    };
    let kk_limit = if r.compat { i64::MAX } else { 1_500_000 };
    let mut added = sync_end != NONE;
    if launch_ok && rt_start != NONE {
        g.add(rt_start, s, EdgeType::KernelLaunchDelay, false);
        added = true;
    } else if let Some(l) = last.filter(|&l| {
        g.node_ts[s as usize] - g.node_ts[l as usize] < kk_limit
            && (sync_end == NONE || g.node_ts[sync_end as usize] < g.node_ts[l as usize])
    }) {
        let e2 = g.add(l, s, EdgeType::KernelKernelDelay, false);
        g.attribute(e2, ROOT);
        added = true;
    }
    if !r.compat && !added && rt_start != NONE {
        // Nothing else explains when it started: its launch.
        g.add(rt_start, s, EdgeType::KernelLaunchDelay, false);
    }
    st.set_last(stream, en);
}

/// Exact mode: blocking calls without a sync event wait for the last GPU operation that finished
/// while they waited; when none did, their time is CPU time. Returns how many were linked.
pub fn link_blocking_calls(
    r: &Rows,
    clip: &[bool],
    blocking_exits: &[BlockingExit],
    g: &mut Graph,
) -> usize {
    let mut has_sync_in = vec![false; g.node_count()];
    for e in g.edges.iter().filter(|e| e.t == EdgeType::SyncDependency) {
        has_sync_in[e.v as usize] = true;
    }
    let mut gpu_ends: Vec<(i64, u32)> = (0..clip.len())
        .filter(|&i| clip[i] && r.t.kind_at(i).is_gpu_activity() && g.end_node[i] != NONE)
        .map(|i| (r.end[i], i as u32))
        .collect();
    gpu_ends.sort_unstable();
    let mut inferred = 0usize;
    for &BlockingExit { edge, row } in blocking_exits {
        let cu = row as usize;
        let dst = g.end_node[cu];
        if has_sync_in[dst as usize] {
            continue;
        }
        let p = gpu_ends.partition_point(|x| x.0 <= r.end[cu]);
        if r.has(cu, F_WAITS_DEVICE) && p > 0 && gpu_ends[p - 1].0 >= r.ts[cu] {
            g.add(
                g.end_node[gpu_ends[p - 1].1 as usize],
                dst,
                EdgeType::SyncDependency,
                false,
            );
            inferred += 1;
        } else {
            let ed = &mut g.edges[edge];
            ed.w = g.node_ts[ed.v as usize] - g.node_ts[ed.u as usize];
        }
    }
    inferred
}

#[cfg(test)]
mod tests {
    use super::super::graph::build_nodes;
    use super::super::rows::exact_rows;
    use super::super::tests::table;
    use super::*;

    #[test]
    fn launch_delay_then_kernel_gap() {
        // Launches at 1 and 4 µs; k1 [5,55), k2 [60,100) on stream 7.
        let t = table(serde_json::json!([
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": 1, "dur": 2, "args": {"correlation": 1}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": 4, "dur": 2, "args": {"correlation": 2}},
            {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 5, "dur": 50,
             "args": {"stream": 7, "correlation": 1}},
            {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 60, "dur": 40,
             "args": {"stream": 7, "correlation": 2}},
        ]));
        let r = exact_rows(&t);
        let clip = vec![true; t.len()];
        let mut g = build_nodes(&r, &clip).unwrap();
        let mut links = SyncLinks::new(&r);
        add_gpu_edges(&r, &clip, &mut links, &mut g);
        // Nodes: L1 1, L1 3, L2 4, k1 5, L2 6, k1 55, k2 60, k2 100 → 0..8.
        let edges: Vec<(u32, u32, i64, EdgeType)> =
            g.edges.iter().map(|e| (e.u, e.v, e.w, e.t)).collect();
        use EdgeType::*;
        assert_eq!(
            edges,
            [
                (3, 5, 50_000, Operator),
                (0, 3, 4_000, KernelLaunchDelay),
                (6, 7, 40_000, Operator),
                // k2 was launched (4 µs) before k1 ended: it waited for k1, not for its launch.
                (5, 6, 5_000, KernelKernelDelay),
            ]
        );
        assert_eq!(g.edges[3].attr, 2, "the gap is attributed to k1's row");
    }
}
