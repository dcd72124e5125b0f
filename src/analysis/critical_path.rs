//! Critical path of one rank (or one annotation instance): what bounds it, as shares of the path.
//!
//! The trace becomes a DAG with a start and an end node per CPU operator / runtime call and per GPU
//! operation. Edges: the span of each operation (weight = duration), CPU nesting and sequencing on
//! each thread (weight = the time between the two points), a zero-weight dependency between
//! consecutive top-level operations of a thread, the launch delay (runtime call start → kernel start)
//! when the kernel did not wait behind other work, the kernel-kernel delay on a stream, and zero-weight
//! synchronisation edges (`cudaStreamWaitEvent`, Event / Stream / Context Sync: GPU → CPU or GPU →
//! GPU). The longest path is found in one pass over a topological order (flat `Vec` adjacency, no
//! recursion), and each path edge is classified by what bounds it.
//!
//! Two modes (see [`Mode`]):
//! * HTA-compat follows HolisticTraceAnalysis 0.5.0 (`critical_path_analysis`): whole-µs rounding,
//!   its last-ProfilerStep filter, rows chosen by `args.stream`, the launch-delay test on its queue
//!   length, blocking calls (`cudaDeviceSynchronize`, `cudaMemcpy`, ...) counted as zero even when no
//!   sync event says what they waited for (so a trace without `cuda_sync` events loses every wait and
//!   comes out "cpu_bound", quirk 10), negative edges zeroed for the path but summed in the shares,
//!   and networkx's `dag_longest_path` tie-breaking (topological generations, first maximum).
//! * Exact uses integer ns and the events' kinds; a blocking call without a sync event gets a
//!   sync edge from the last GPU operation that finished while it waited (so the wait is attributed to
//!   the GPU work it waited for), and is counted as CPU time only when nothing on the GPU finished in
//!   it; kernel-kernel delays need a gap below 1.5 ms (HTA 0.6); CPU operators named like data loaders
//!   are `data_loading`.
//!
//! Tie-breaking (both modes): nodes are numbered by (time, start before end, row); predecessors are
//! scanned in edge-insertion order and the first maximum wins; the path ends at the first node (in
//! topological order) with the largest distance.

use serde::{Deserialize, Serialize};

use super::callstack::sort_by_thread;
use super::gpu::{hta_kernel_type, hta_span, is_collective_name, is_launch_call, KernelType};
use super::options::Mode;
use crate::table::intern::FxHashMap;
use crate::table::{EventKind, TraceTable};

/// Options of [`critical_path`].
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CriticalPathOptions {
    /// Substring of the annotation that delimits the window ("" = the whole trace).
    pub annotation: String,
    /// Which instance of the annotation (0-based).
    pub instance: usize,
    /// Last instance of a range (inclusive), when set.
    #[serde(default)]
    pub instance_end: Option<usize>,
    /// How many path segments `rows` keeps, in path order (`None`: [`DEFAULT_PATH_ROWS`], 0: all).
    /// The shares, the longest segments and the top events always cover the whole path.
    #[serde(default)]
    pub max_rows: Option<usize>,
}

/// Path segments kept in [`CriticalPathResult::rows`] by default: a path over a million-event trace
/// has hundreds of thousands, too many to send to the page or print.
pub const DEFAULT_PATH_ROWS: usize = 1000;

/// What bounds a path segment.
pub const BOUND_BY: [&str; 6] = [
    "cpu_bound",
    "data_loading",
    "gpu_compute_bound",
    "gpu_communication_bound",
    "gpu_kernel_kernel_overhead",
    "gpu_kernel_launch_overhead",
];

/// One edge of the critical path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathSegment {
    /// HTA's edge type (`critical_path_operator`, `critical_path_dependency`,
    /// `critical_path_kernel_launch_delay`, `critical_path_kernel_kernel_delay`,
    /// `critical_path_sync_dependency`).
    pub edge_type: String,
    /// Row of the event the segment is attributed to (operator / kernel spans and kernel gaps).
    pub row: Option<u32>,
    pub name: Option<String>,
    pub stream: Option<i64>,
    /// Where the segment starts, µs (trace clock).
    pub start_us: f64,
    pub duration_us: f64,
    /// One of [`BOUND_BY`], or "" for zero-weight dependencies.
    pub bound_by: String,
}

/// Share of the path bounded by one resource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoundShare {
    pub bound_by: String,
    pub duration_us: f64,
    /// Percent of the path length.
    pub pct: f64,
}

/// Path time of one event (all its segments), for citing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathEvent {
    pub name: String,
    pub bound_by: String,
    pub segments: usize,
    pub duration_us: f64,
}

/// The critical path's breakdown.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CriticalPathResult {
    /// Path edges in path order (the first [`CriticalPathOptions::max_rows`] of them).
    pub rows: Vec<PathSegment>,
    /// Number of edges on the whole path.
    #[serde(default)]
    pub segments: usize,
    /// Whether a path was found (false: no events in the window, annotation not found, or an invalid
    /// graph; see `error`).
    #[serde(default)]
    pub ok: bool,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub annotation: String,
    #[serde(default)]
    pub instance: usize,
    /// Window analysed, µs.
    #[serde(default)]
    pub window_us: (f64, f64),
    /// Length of the path, µs (Σ segment durations).
    #[serde(default)]
    pub total_us: f64,
    #[serde(default)]
    pub nodes: usize,
    #[serde(default)]
    pub edges: usize,
    /// Share per bound_by, all of [`BOUND_BY`] in that order.
    #[serde(default)]
    pub summary: Vec<BoundShare>,
    /// The longest segments (up to 10), longest first.
    #[serde(default)]
    pub top_segments: Vec<PathSegment>,
    /// Events with the most path time (up to 10).
    #[serde(default)]
    pub top_events: Vec<PathEvent>,
    #[serde(default)]
    pub notes: Vec<String>,
}

impl CriticalPathResult {
    /// Percent of the path bounded by `b` (0 when absent).
    pub fn pct(&self, b: &str) -> f64 {
        self.summary
            .iter()
            .find(|s| s.bound_by == b)
            .map_or(0.0, |s| s.pct)
    }
}

const NONE: u32 = u32::MAX;

// Edge types.
const E_OP: u8 = 0;
const E_DEP: u8 = 1;
const E_LAUNCH: u8 = 2;
const E_KK: u8 = 3;
const E_SYNC: u8 = 4;

fn edge_type_name(t: u8) -> &'static str {
    match t {
        E_OP => "critical_path_operator",
        E_DEP => "critical_path_dependency",
        E_LAUNCH => "critical_path_kernel_launch_delay",
        E_KK => "critical_path_kernel_kernel_delay",
        _ => "critical_path_sync_dependency",
    }
}

/// HTA 0.5.0's blocking calls (the CPU edge into their end weighs zero).
fn hta_blocking(name: &str) -> bool {
    matches!(
        name,
        "cudaDeviceSynchronize"
            | "cudaStreamSynchronize"
            | "cudaEventQuery"
            | "cudaEventSynchronize"
            | "cudaMemcpy"
            | "cudaMemcpyAsync"
    )
}

/// Calls that really wait for the device (exact mode infers a sync edge for them).
fn waits_for_device(name: &str) -> bool {
    matches!(
        name,
        "cudaDeviceSynchronize"
            | "cudaStreamSynchronize"
            | "cudaEventSynchronize"
            | "cudaMemcpy"
            | "cudaMemcpy2D"
            | "cudaMemset"
            | "cuCtxSynchronize"
            | "cuStreamSynchronize"
            | "cuEventSynchronize"
            | "cuMemcpyDtoH_v2"
            | "cuMemcpyHtoD_v2"
            | "hipDeviceSynchronize"
            | "hipStreamSynchronize"
            | "hipEventSynchronize"
            | "hipMemcpy"
    )
}

/// HTA 0.5.0's launch calls (`get_runtime_launch_events_query`).
fn hta_launch(name: &str) -> bool {
    matches!(
        name,
        "cudaMemsetAsync"
            | "cudaMemcpyAsync"
            | "cudaLaunchKernel"
            | "cudaLaunchKernelExC"
            | "cuLaunchKernel"
            | "runFunction - job_prep_and_submit_for_execution"
            | "hipLaunchKernel"
            | "hipExtModuleLaunchKernel"
            | "hipMemcpyAsync"
            | "hipMemsetAsync"
            | "hipMemcpyWithStream"
    )
}

fn is_data_loading(name: &str) -> bool {
    name.contains("DataLoader") || name.contains("dataloader")
}

// What the path needs to know about a name, worked out once per distinct name (the tests are text
// comparisons, too slow to repeat per row).
/// A blocking call: its exit edge counts zero unless nothing explains the wait.
const F_BLOCKING: u8 = 1;
/// A call that waits for the device (synchronize, blocking copy).
const F_WAITS_DEVICE: u8 = 2;
/// A launch call, in the mode's list.
const F_LAUNCH: u8 = 4;
/// A launch call in HTA's list (its queue length).
const F_HTA_LAUNCH: u8 = 8;
const F_EVENT_RECORD: u8 = 16;
const F_STREAM_WAIT_CALL: u8 = 32;
const F_DATA_LOADING: u8 = 64;
/// A communication kernel, by the mode's name patterns.
const F_COMM: u8 = 128;

fn name_flags(t: &TraceTable, compat: bool) -> Vec<u8> {
    let dict = t.name_dictionary();
    (0..dict.len())
        .map(|i| {
            let name = dict.value(i);
            let mut f = 0;
            let mut set = |bit: u8, on: bool| {
                if on {
                    f |= bit;
                }
            };
            set(
                F_BLOCKING,
                hta_blocking(name) || (!compat && waits_for_device(name)),
            );
            set(F_WAITS_DEVICE, waits_for_device(name));
            set(
                F_LAUNCH,
                if compat {
                    hta_launch(name)
                } else {
                    is_launch_call(name)
                },
            );
            set(F_HTA_LAUNCH, hta_launch(name));
            set(F_EVENT_RECORD, name == "cudaEventRecord");
            set(F_STREAM_WAIT_CALL, name == "cudaStreamWaitEvent");
            set(F_DATA_LOADING, is_data_loading(name));
            set(
                F_COMM,
                if compat {
                    hta_kernel_type(name) == KernelType::Communication
                } else {
                    is_collective_name(name)
                },
            );
            f
        })
        .collect()
}

struct Edge {
    u: u32,
    v: u32,
    /// Weight as reported (HTA-compat: may be negative).
    w: i64,
    t: u8,
    /// Attributed row (`NONE`: none, `NONE - 1`: the root).
    attr: u32,
    has_attr: bool,
}

struct Graph {
    node_ts: Vec<i64>,
    node_ev: Vec<u32>,
    node_start: Vec<bool>,
    edges: Vec<Edge>,
}

impl Graph {
    fn add(&mut self, u: u32, v: u32, t: u8, zero: bool) -> Option<usize> {
        if u == v || u == NONE || v == NONE {
            return None;
        }
        let w = if t == E_DEP || t == E_SYNC || zero {
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
    fn attribute(&mut self, e: Option<usize>, src_parent: u32) {
        let Some(e) = e else { return };
        let (u, v, t) = (self.edges[e].u, self.edges[e].v, self.edges[e].t);
        if t != E_OP && t != E_KK {
            return;
        }
        let ev = if t == E_KK || self.node_start[u as usize] {
            self.node_ev[u as usize]
        } else if !self.node_start[v as usize] {
            self.node_ev[v as usize]
        } else {
            src_parent
        };
        self.edges[e].attr = ev;
        self.edges[e].has_attr = true;
    }
}

/// Per-row view of the trace in the mode's terms.
struct Rows<'a> {
    t: &'a TraceTable,
    compat: bool,
    /// Row is in the (filtered) data frame.
    sel: Vec<bool>,
    ts: Vec<i64>,
    end: Vec<i64>,
    stream: Vec<i64>,
    /// Device-side row (GPU op or sync event).
    gpu: Vec<bool>,
    /// Partner by correlation: HTA's `index_correlation` (-1 none, 0 unmatched GPU-side, else row);
    /// exact mode: -1 or the partner row.
    ic: Vec<i64>,
    /// Data-frame order (HTA-compat after its step filter: GPU rows first, then CPU rows).
    df_order: Vec<u32>,
}

fn build_rows(t: &TraceTable, compat: bool) -> Rows<'_> {
    let n = t.len();
    let mut r = Rows {
        t,
        compat,
        sel: vec![false; n],
        ts: vec![0; n],
        end: vec![0; n],
        stream: vec![-1; n],
        gpu: vec![false; n],
        ic: vec![-1; n],
        df_order: Vec::new(),
    };
    for i in 0..n {
        let k = t.kind_at(i);
        let (Some(ts), Some(dur)) = (t.ts_at(i), t.raw_dur_at(i)) else {
            continue;
        };
        if compat {
            if t.category_id_at(i).is_none() || k == EventKind::Trace {
                continue;
            }
            let (a, b) = hta_span(t, i).unwrap_or((ts, ts + dur));
            r.ts[i] = a;
            r.end[i] = b;
            r.stream[i] = t.args_stream_at(i).unwrap_or(-1);
            let name = t.name_at(i);
            r.gpu[i] = (r.stream[i] >= 0 && t.correlation_at(i).is_some_and(|c| c >= 0))
                || name == "Event Sync"
                || name == "Context Sync";
            r.ic[i] = t.correlation_at(i).map_or(-1, |c| c.min(0));
        } else {
            if matches!(
                k,
                EventKind::Trace
                    | EventKind::Metadata
                    | EventKind::Counter
                    | EventKind::Flow
                    | EventKind::Instant
            ) {
                continue;
            }
            r.ts[i] = ts;
            r.end[i] = ts + dur.max(0);
            r.gpu[i] = k.is_gpu_activity() || k == EventKind::Sync;
            r.stream[i] = if k.is_gpu_activity() {
                t.stream_at(i).unwrap_or(0).max(0)
            } else if k == EventKind::Sync {
                t.stream_at(i).unwrap_or(-1)
            } else {
                -1
            };
        }
        r.sel[i] = true;
    }
    // Correlation partners.
    let mut cpu: Vec<(i64, u32)> = Vec::new();
    let mut gpu: Vec<(i64, u32)> = Vec::new();
    for i in 0..n {
        if !r.sel[i] {
            continue;
        }
        let Some(c) = t.correlation_at(i) else {
            continue;
        };
        if c == -1 {
            continue;
        }
        if r.gpu[i] {
            gpu.push((c, i as u32));
        } else if compat || matches!(t.kind_at(i), EventKind::Runtime | EventKind::Driver) {
            cpu.push((c, i as u32));
        }
    }
    // Adaptive sorts: correlation ids mostly rise in file order.
    gpu.sort();
    if compat {
        // pandas merge (left = CPU rows in file order): every pair assigned, the last one wins.
        for &(c, x) in &cpu {
            let lo = gpu.partition_point(|g| g.0 < c);
            for &(gc, y) in &gpu[lo..] {
                if gc != c {
                    break;
                }
                r.ic[x as usize] = y as i64;
                r.ic[y as usize] = x as i64;
            }
        }
    } else {
        // Runtime calls preferred over driver calls, then the first in file order.
        let rank = |x: u32| u8::from(t.kind_at(x as usize) != EventKind::Runtime);
        cpu.sort_by_key(|&(c, x)| (c, rank(x), x));
        for &(c, y) in &gpu {
            let lo = cpu.partition_point(|p| p.0 < c);
            if lo < cpu.len() && cpu[lo].0 == c {
                let x = cpu[lo].1;
                r.ic[y as usize] = x as i64;
                if r.ic[x as usize] < 0 {
                    r.ic[x as usize] = y as i64;
                }
            }
        }
    }
    // HTA's last-ProfilerStep filter.
    if compat {
        let mut step_names: Vec<u32> = Vec::new();
        let mut last_start: Option<i64> = None;
        for i in 0..n {
            if r.sel[i] && t.name_at(i).contains("ProfilerStep") {
                step_names.push(t.name_id(i));
                if !r.gpu[i] {
                    last_start = Some(last_start.map_or(r.ts[i], |v| v.max(r.ts[i])));
                }
            }
        }
        step_names.sort_unstable();
        step_names.dedup();
        if step_names.len() >= 2 {
            let cut = last_start.unwrap_or(i64::MIN);
            let mut kept_corr: Vec<i64> = Vec::new();
            for i in 0..n {
                if r.sel[i] && !r.gpu[i] {
                    if r.ts[i] < cut {
                        if let Some(c) = t.correlation_at(i) {
                            kept_corr.push(c);
                        }
                    } else {
                        r.sel[i] = false;
                    }
                }
            }
            kept_corr.sort_unstable();
            for i in 0..n {
                if r.sel[i] && r.gpu[i] {
                    let c = t.correlation_at(i).unwrap_or(-1);
                    r.sel[i] = kept_corr.binary_search(&c).is_ok();
                }
            }
            r.df_order = (0..n as u32)
                .filter(|&i| r.sel[i as usize] && r.gpu[i as usize])
                .chain((0..n as u32).filter(|&i| r.sel[i as usize] && !r.gpu[i as usize]))
                .collect();
        }
    }
    if r.df_order.is_empty() {
        r.df_order = (0..n as u32).filter(|&i| r.sel[i as usize]).collect();
    }
    r
}

fn arg_i64(t: &TraceTable, key: &str, row: usize) -> Option<i64> {
    let c = t.arg(key)?;
    c.i64_at(c.find(row)?)
}

/// Critical path of one rank, HTA-compat or exact.
pub fn critical_path_mode(
    table: &TraceTable,
    opts: &CriticalPathOptions,
    mode: Mode,
) -> CriticalPathResult {
    let compat = mode == Mode::HtaCompat;
    let rows = build_rows(table, compat);
    let mut res = CriticalPathResult {
        annotation: opts.annotation.clone(),
        instance: opts.instance,
        ..Default::default()
    };
    match build_and_solve(&rows, opts, &mut res) {
        Ok(()) => res.ok = true,
        Err(e) => res.error = Some(e),
    }
    if compat {
        res.notes.push("HTA-compat: blocking calls (cudaDeviceSynchronize, cudaMemcpy, ...) count zero on the path even without a sync event saying what they waited for; a trace without cuda_sync events then reports (almost) everything as cpu_bound".into());
    }
    res
}

/// Critical path in exact mode (see [`critical_path_mode`]).
pub fn critical_path(table: &TraceTable, opts: &CriticalPathOptions) -> CriticalPathResult {
    critical_path_mode(table, opts, Mode::Exact)
}

fn build_and_solve(
    r: &Rows,
    opts: &CriticalPathOptions,
    res: &mut CriticalPathResult,
) -> Result<(), String> {
    let t = r.t;
    let n = t.len();
    let compat = r.compat;
    let flags = name_flags(t, compat);
    let has = |row: usize, f: u8| flags[t.name_id(row) as usize] & f != 0;
    // ---- window
    let (start, end) = if opts.annotation.is_empty() {
        let mut lo = i64::MAX;
        let mut hi = i64::MIN;
        for &i in &r.df_order {
            lo = lo.min(r.ts[i as usize]);
            hi = hi.max(r.end[i as usize]);
        }
        (lo, hi)
    } else {
        let dict = t.name_dictionary();
        let matches: Vec<bool> = (0..dict.len())
            .map(|i| dict.value(i).contains(opts.annotation.as_str()))
            .collect();
        let mut ann: Vec<u32> = r
            .df_order
            .iter()
            .copied()
            .filter(|&i| {
                matches[t.name_id(i as usize) as usize]
                    && (compat || !r.gpu[i as usize])
                    && (compat || t.kind_at(i as usize) != EventKind::GpuUserAnnotation)
            })
            .collect();
        if !compat {
            ann.sort_by_key(|&i| (r.ts[i as usize], i));
        }
        if ann.is_empty() {
            return Err(format!(
                "annotation {:?} not found in the trace",
                opts.annotation
            ));
        }
        let a = opts.instance;
        let b = opts.instance_end.unwrap_or(a).max(a);
        let sl = &ann[a.min(ann.len())..(b + 1).min(ann.len())];
        if sl.is_empty() {
            return Err(format!(
                "annotation {:?} has {} instances, asked for {a}",
                opts.annotation,
                ann.len()
            ));
        }
        (
            sl.iter().map(|&i| r.ts[i as usize]).min().unwrap_or(0),
            sl.iter().map(|&i| r.end[i as usize]).max().unwrap_or(0),
        )
    };
    if start > end {
        return Err("empty trace".into());
    }
    res.window_us = (start as f64 / 1000.0, end as f64 / 1000.0);
    // ---- clip
    let in_df = &r.sel;
    let dur = |i: usize| r.end[i] - r.ts[i];
    let cpu_side = |i: usize| {
        if compat {
            r.stream[i] == -1
        } else {
            !r.gpu[i]
        }
    };
    let cpu_in = |i: usize| cpu_side(i) && r.ts[i] >= start && r.ts[i] <= end && dur(i) > 0;
    let mut clip = vec![false; n];
    for i in 0..n {
        if in_df[i] && cpu_in(i) {
            clip[i] = true;
        }
    }
    // GPU side: launched from a clipped CPU row (HTA joins on the CPU rows' index_correlation).
    for i in 0..n {
        if !in_df[i] || !cpu_in(i) {
            continue;
        }
        let g = r.ic[i];
        if g >= 0 && (g as usize) < n {
            let g = g as usize;
            if in_df[g] && !cpu_side(g) && (compat || r.ic[g] == i as i64) {
                clip[g] = true;
            }
        }
    }
    if compat {
        for i in 0..n {
            if in_df[i] && r.stream[i] != -1 && t.name_at(i) == "Stream Wait Event" {
                clip[i] = true;
            }
        }
    } else {
        // Sync events linked to a clipped call.
        for i in 0..n {
            if in_df[i] && r.gpu[i] && t.kind_at(i) == EventKind::Sync {
                let c = r.ic[i];
                if c >= 0 && clip[c as usize] {
                    clip[i] = true;
                }
            }
        }
    }
    // ---- nodes
    let is_node_ev = |i: usize| -> bool {
        if compat {
            matches!(
                t.category_at(i),
                Some("cpu_op") | Some("cuda_runtime") | Some("cuda_driver")
            ) || (r.stream[i] != -1 && r.ic[i] >= 0)
        } else {
            matches!(
                t.kind_at(i),
                EventKind::CpuOp | EventKind::Runtime | EventKind::Driver
            ) || (t.kind_at(i).is_gpu_activity() && r.ic[i] >= 0)
        }
    };
    let mut keys: Vec<(i64, bool, u32)> = Vec::new();
    for i in 0..n {
        if clip[i] && is_node_ev(i) {
            keys.push((r.ts[i], false, i as u32));
            keys.push((r.end[i], true, i as u32));
        }
    }
    keys.sort_unstable();
    let nn = keys.len();
    if nn == 0 {
        return Err("no operators or kernels in the window".into());
    }
    let mut g = Graph {
        node_ts: Vec::with_capacity(nn),
        node_ev: Vec::with_capacity(nn),
        node_start: Vec::with_capacity(nn),
        edges: Vec::new(),
    };
    let mut start_node = vec![NONE; n];
    let mut end_node = vec![NONE; n];
    for (idx, &(ts, is_end, row)) in keys.iter().enumerate() {
        g.node_ts.push(ts);
        g.node_ev.push(row);
        g.node_start.push(!is_end);
        if is_end {
            end_node[row as usize] = idx as u32;
        } else {
            start_node[row as usize] = idx as u32;
        }
    }
    drop(keys);
    let has_node = |i: u32| i != NONE && start_node[i as usize] != NONE;
    let blocking = |i: usize| has(i, F_BLOCKING);

    // ---- CPU call stacks
    let pid = t.pid.keys();
    let tid = t.tid.keys();
    // CPU rows by (thread, start, longest first, row): the order in which HTA's compare_events
    // opens them (positive durations).
    let members: Vec<u32> = (0..n as u32)
        .filter(|&i| clip[i as usize] && (compat || !r.gpu[i as usize]))
        .collect();
    let cpu_rows = sort_by_thread(t, &members, |i| (r.ts[i], -dur(i).max(0)));
    drop(members);
    // (exit edge, call row) of blocking calls: exact mode zeroes them only when a sync edge arrives.
    let mut blocking_exits: Vec<(usize, u32)> = Vec::new();
    let mut ends: Vec<i64> = Vec::new();
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let mut a = 0;
    while a < cpu_rows.len() {
        let mut b = a;
        while b < cpu_rows.len() && cpu_rows[b].0 == cpu_rows[a].0 {
            b += 1;
        }
        let group = &cpu_rows[a..b];
        a = b;
        if compat {
            if group.iter().any(|x| r.stream[x.2 as usize] > 0) {
                continue; // a GPU stream
            }
            if !group.iter().all(|x| r.stream[x.2 as usize] < 0) {
                continue; // HTA's "unknown" device type: no call stack
            }
        }
        // HTA walks starts and ends in time order, ends first on ties, and an end pops the top of
        // the stack whatever event it belongs to: only the end times matter.
        ends.clear();
        ends.extend(group.iter().map(|x| x.1 .0 - x.1 .1));
        ends.sort_unstable();
        stack.clear();
        let mut st = StackState {
            last_node: NONE,
            last_high: NONE,
            op_depth: 0,
            last_parent: NONE,
        };
        let mut exit = |st: &mut StackState, g: &mut Graph, stack: &mut Vec<(u32, u32)>| {
            if let Some((x, parent)) = stack.pop() {
                if has_node(x) {
                    let bl = blocking(x as usize);
                    if let Some(e) = st.exit(g, end_node[x as usize], parent, bl) {
                        if bl {
                            blocking_exits.push((e, x));
                        }
                    }
                }
            }
        };
        let mut next_end = 0;
        for &(_, (start, _), row) in group {
            while next_end < ends.len() && ends[next_end] <= start {
                exit(&mut st, &mut g, &mut stack);
                next_end += 1;
            }
            let parent = stack.last().map_or(ROOT, |p| p.0);
            stack.push((row, parent));
            if has_node(row) {
                st.enter(&mut g, start_node[row as usize], parent);
            }
        }
        while !stack.is_empty() {
            exit(&mut st, &mut g, &mut stack);
        }
    }

    // ---- GPU side
    // Launch calls of the whole (filtered) trace: (gpu pid, stream, ts, row); HTA's
    // `_get_cuda_runtime_calls_df`.
    let launch_name = |i: usize| has(i, F_LAUNCH);
    let partner = |i: usize| -> Option<usize> {
        let c = r.ic[i];
        if c > 0 || (!compat && c >= 0) {
            let c = c as usize;
            if c < n && in_df[c] {
                return Some(c);
            }
        }
        None
    };
    struct Launch {
        gpu_pid: u32,
        stream: i64,
        ts: i64,
        row: u32,
        pid: u32,
        tid: u32,
    }
    let mut launches: Vec<Launch> = Vec::new();
    for &i in &r.df_order {
        let iu = i as usize;
        if r.gpu[iu] || !launch_name(iu) {
            continue;
        }
        let Some(gk) = partner(iu) else { continue };
        let gpu_ok = if compat {
            r.stream[gk] != -1 && r.ic[gk] > 0
        } else {
            t.kind_at(gk).is_gpu_activity()
        };
        if !gpu_ok {
            continue;
        }
        launches.push(Launch {
            gpu_pid: pid.value(gk),
            stream: r.stream[gk],
            ts: r.ts[iu],
            row: i,
            pid: pid.value(iu),
            tid: tid.value(iu),
        });
    }
    launches.sort_by_key(|l| (l.gpu_pid, l.stream, l.ts, l.row));
    // cudaEventRecord correlation -> previous launch on the recorded stream.
    let mut record_prev: FxHashMap<i64, u32> = FxHashMap::default();
    {
        let mut rec_stream: FxHashMap<i64, (i64, u32)> = FxHashMap::default();
        if let Some(col) = t.arg("wait_on_stream") {
            for (k, &row) in col.rows.values().iter().enumerate() {
                let row = row as usize;
                if !in_df[row] {
                    continue;
                }
                let Some(ws) = col.i64_at(k) else { continue };
                if ws <= -1 {
                    continue;
                }
                if let Some(c) = arg_i64(t, "wait_on_cuda_event_record_corr_id", row) {
                    rec_stream.entry(c).or_insert((ws, pid.value(row)));
                }
            }
        }
        if !rec_stream.is_empty() {
            for &i in &r.df_order {
                let iu = i as usize;
                if !has(iu, F_EVENT_RECORD) {
                    continue;
                }
                let Some(c) = t.correlation_at(iu) else {
                    continue;
                };
                let Some(&(stream, gpid)) = rec_stream.get(&c) else {
                    continue;
                };
                let ts = r.ts[iu];
                // last launch with (gpu, stream) and ts <= record ts
                let hi =
                    launches.partition_point(|l| (l.gpu_pid, l.stream, l.ts) <= (gpid, stream, ts));
                if hi > 0 {
                    let l = &launches[hi - 1];
                    if l.gpu_pid == gpid && l.stream == stream {
                        record_prev.insert(c, l.row);
                    }
                }
            }
        }
    }
    // cudaStreamWaitEvent row -> next launch on the same thread and stream.
    let mut wait_next: FxHashMap<u32, u32> = FxHashMap::default();
    {
        let mut by_thread: Vec<(u32, u32, i64, i64, u32)> = launches
            .iter()
            .map(|l| (l.pid, l.tid, l.stream, l.ts, l.row))
            .collect();
        by_thread.sort_unstable();
        for &i in &r.df_order {
            let iu = i as usize;
            if r.gpu[iu] || !has(iu, F_STREAM_WAIT_CALL) {
                continue;
            }
            let Some(gk) = partner(iu) else { continue };
            if compat && !(r.stream[gk] != -1 && r.ic[gk] > 0) {
                continue;
            }
            let key = (pid.value(iu), tid.value(iu), r.stream[gk], r.ts[iu]);
            let p = by_thread.partition_point(|x| (x.0, x.1, x.2, x.3) <= key);
            if p < by_thread.len() {
                let x = by_thread[p];
                if (x.0, x.1, x.2) == (key.0, key.1, key.2) {
                    wait_next.insert(i, x.4);
                }
            }
        }
    }
    // HTA-compat: queue length after each launch / kernel start, per stream, on the whole trace.
    let mut qlen: FxHashMap<u32, i64> = FxHashMap::default();
    if compat {
        let mut gpu_by_corr: Vec<(i64, u32)> = Vec::new();
        for &i in &r.df_order {
            let iu = i as usize;
            if r.stream[iu] != -1 {
                if let Some(c) = t.correlation_at(iu) {
                    gpu_by_corr.push((c, i));
                }
            }
        }
        gpu_by_corr.sort_unstable();
        let mut runtime_corr: Vec<i64> = Vec::new();
        let mut evq: Vec<(i64, i64, u8, u32)> = Vec::new();
        for &i in &r.df_order {
            let iu = i as usize;
            if !(has(iu, F_HTA_LAUNCH) && r.ic[iu] > 0) {
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
    }
    // Kernels and sync events, by start (sync events by end).
    let is_sync_row = |i: usize| {
        if compat {
            t.category_at(i) == Some("cuda_sync")
        } else {
            t.kind_at(i) == EventKind::Sync
        }
    };
    let mut gk: Vec<(i64, u32)> = Vec::new();
    for i in 0..n {
        if !clip[i] {
            continue;
        }
        let take = if compat {
            (r.stream[i] != -1 || matches!(t.name_at(i), "Event Sync" | "Context Sync"))
                && r.ic[i] >= 0
        } else {
            r.gpu[i] && r.ic[i] >= 0
        };
        if take {
            let key = if is_sync_row(i) { r.end[i] } else { r.ts[i] };
            gk.push((key, i as u32));
        }
    }
    gk.sort_unstable();
    let mut last_on: Vec<(i64, u32)> = Vec::new(); // (stream, end node), first-seen order
    let mut last_idx: FxHashMap<i64, usize> = FxHashMap::default();
    let mut kernel_sync: FxHashMap<u32, u32> = FxHashMap::default();
    let kk_limit = if compat { i64::MAX } else { 1_500_000 };
    for &(_, e) in &gk {
        let eu = e as usize;
        if is_sync_row(eu) {
            let name = t.name_at(eu);
            let call = r.ic[eu];
            if name == "Stream Wait Event" || name == "Event Sync" {
                let Some(&prev) = arg_i64(t, "wait_on_cuda_event_record_corr_id", eu)
                    .and_then(|c| record_prev.get(&c))
                else {
                    continue;
                };
                let src_kernel = r.ic[prev as usize];
                if src_kernel < 0 {
                    continue;
                }
                if name == "Stream Wait Event" {
                    if call < 0 {
                        continue;
                    }
                    let Some(&next) = wait_next.get(&(call as u32)) else {
                        continue;
                    };
                    let dest = r.ic[next as usize];
                    if dest >= 0 {
                        kernel_sync.insert(dest as u32, src_kernel as u32);
                    }
                } else if call >= 0 {
                    let src_end = end_node[src_kernel as usize];
                    if src_end != NONE {
                        g.add(src_end, end_node[call as usize], E_SYNC, false);
                    }
                }
                continue;
            }
            if call < 0 {
                continue;
            }
            let dst = end_node[call as usize];
            if name == "Context Sync" {
                for &(_, node) in &last_on {
                    g.add(node, dst, E_SYNC, false);
                }
            } else if name == "Stream Sync" {
                if let Some(&k) = last_idx.get(&r.stream[eu]) {
                    g.add(last_on[k].1, dst, E_SYNC, false);
                }
            }
            continue;
        }
        let stream = r.stream[eu];
        let (s, en) = (start_node[eu], end_node[eu]);
        if s == NONE {
            continue;
        }
        let ke = g.add(s, en, E_OP, false);
        g.attribute(ke, ROOT);
        let mut sync_end = NONE;
        if let Some(src) = kernel_sync.remove(&e) {
            let se = end_node[src as usize];
            if se != NONE {
                sync_end = se;
                g.add(se, s, E_SYNC, false);
            }
        }
        let runtime = r.ic[eu];
        let last = last_idx.get(&stream).map(|&k| last_on[k].1);
        let rt_ts = if runtime >= 0 {
            r.ts[runtime as usize]
        } else {
            i64::MAX
        };
        let launch_ok = if compat {
            qlen.get(&(runtime.max(0) as u32)) == Some(&1)
                && runtime > 0
                && qlen.get(&e) == Some(&0)
                && last.map_or(true, |l| g.node_ts[l as usize] < rt_ts)
                && (sync_end == NONE || g.node_ts[sync_end as usize] < rt_ts)
        } else {
            runtime >= 0
                && last.map_or(true, |l| g.node_ts[l as usize] <= rt_ts)
                && (sync_end == NONE || g.node_ts[sync_end as usize] <= rt_ts)
        };
        let mut added = sync_end != NONE;
        let rt_start = if runtime >= 0 {
            start_node[runtime as usize]
        } else {
            NONE
        };
        if launch_ok && rt_start != NONE {
            g.add(rt_start, s, E_LAUNCH, false);
            added = true;
        } else if let Some(l) = last.filter(|&l| {
            g.node_ts[s as usize] - g.node_ts[l as usize] < kk_limit
                && (sync_end == NONE || g.node_ts[sync_end as usize] < g.node_ts[l as usize])
        }) {
            let e2 = g.add(l, s, E_KK, false);
            g.attribute(e2, ROOT);
            added = true;
        }
        if !compat && !added && rt_start != NONE {
            // Nothing else explains when it started: its launch.
            g.add(rt_start, s, E_LAUNCH, false);
        }
        match last_idx.get(&stream) {
            Some(&k) => last_on[k].1 = en,
            None => {
                last_idx.insert(stream, last_on.len());
                last_on.push((stream, en));
            }
        }
    }
    // Exact mode: blocking calls without a sync event wait for the last GPU operation that
    // finished while they waited; when none did, their time is CPU time.
    if !compat {
        let mut has_sync_in = vec![false; g.node_ts.len()];
        for e in &g.edges {
            if e.t == E_SYNC {
                has_sync_in[e.v as usize] = true;
            }
        }
        let mut gpu_ends: Vec<(i64, u32)> = (0..n)
            .filter(|&i| clip[i] && t.kind_at(i).is_gpu_activity() && end_node[i] != NONE)
            .map(|i| (r.end[i], i as u32))
            .collect();
        gpu_ends.sort_unstable();
        let mut inferred = 0usize;
        for &(e, call) in &blocking_exits {
            let cu = call as usize;
            let dst = end_node[cu];
            if has_sync_in[dst as usize] {
                continue;
            }
            let mut linked = false;
            if has(cu, F_WAITS_DEVICE) {
                let p = gpu_ends.partition_point(|x| x.0 <= r.end[cu]);
                if p > 0 && gpu_ends[p - 1].0 >= r.ts[cu] {
                    g.add(end_node[gpu_ends[p - 1].1 as usize], dst, E_SYNC, false);
                    linked = true;
                    inferred += 1;
                }
            }
            if !linked {
                let ed = &mut g.edges[e];
                ed.w = g.node_ts[ed.v as usize] - g.node_ts[ed.u as usize];
            }
        }
        if inferred > 0 {
            res.notes.push(format!(
                "{inferred} blocking calls without a sync event were linked to the last GPU operation that finished during them"
            ));
        }
    }

    // ---- validate, deduplicate (networkx keeps the first insertion position, the last
    // attributes), topological order, longest path.
    let m = g.edges.len();
    let nn = g.node_ts.len();
    // Counting sort of `items` by `key` (stable): offsets per key and the items in that order.
    let group_by = |len: usize, key: &dyn Fn(usize) -> u32| -> (Vec<u32>, Vec<u32>) {
        let mut off = vec![0u32; nn + 1];
        for k in 0..len {
            off[key(k) as usize + 1] += 1;
        }
        for x in 0..nn {
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
    };
    // Repeated (u, v) edges: one edge at the first one's position, with the last one's weight and
    // the last attribution. For each first edge: (last edge, last attributed edge or NONE).
    let mut last_of = vec![(NONE, NONE); m];
    {
        let (off, by_u) = group_by(m, &|k| g.edges[k].u);
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
            let mut i = 0;
            while i < scratch.len() {
                let (v0, first) = scratch[i];
                let mut attr_from = NONE;
                let mut last = first;
                while i < scratch.len() && scratch[i].0 == v0 {
                    last = scratch[i].1;
                    if g.edges[last as usize].has_attr {
                        attr_from = last;
                    }
                    i += 1;
                }
                last_of[first as usize] = (last, attr_from);
            }
        }
    }
    // unique edges in first-insertion order: (first, edge holding the final weight, attr edge)
    let uniq: Vec<(u32, u32, u32)> = (0..m as u32)
        .filter_map(|k| {
            let (last, attr_from) = last_of[k as usize];
            (last != NONE).then_some((k, last, attr_from))
        })
        .collect();
    drop(last_of);
    let ue = uniq.len();
    res.nodes = nn;
    res.edges = ue;
    let wgraph = |k: usize| -> i64 {
        let w = g.edges[uniq[k].1 as usize].w;
        if w < 0 {
            0
        } else {
            w
        }
    };
    if compat {
        // HTA reports the first offending edge in (u, v) order.
        let mut bad: Option<(u32, u32, i64)> = None;
        for &(_, last, _) in &uniq {
            let e = &g.edges[last as usize];
            if e.t == E_SYNC {
                let (a, b) = (
                    g.node_ev[e.u as usize] as usize,
                    g.node_ev[e.v as usize] as usize,
                );
                if r.stream[a] != -1
                    && r.stream[a] == r.stream[b]
                    && bad.map_or(true, |(u, v, _)| (e.u, e.v) < (u, v))
                {
                    bad = Some((e.u, e.v, r.stream[a]));
                }
            }
        }
        if let Some((_, _, stream)) = bad {
            return Err(format!(
                "HTA rejects the graph: a sync edge between two events of stream {stream}"
            ));
        }
    }
    // CSR by source (successors) and by target (predecessors), each in first-insertion order.
    let (soff, slist) = group_by(ue, &|k| g.edges[uniq[k].0 as usize].u);
    let (poff, plist) = group_by(ue, &|k| g.edges[uniq[k].0 as usize].v);
    // Topological generations (networkx `topological_sort`).
    let mut indeg: Vec<u32> = (0..nn).map(|x| poff[x + 1] - poff[x]).collect();
    let mut topo: Vec<u32> = (0..nn as u32).filter(|&x| indeg[x as usize] == 0).collect();
    let mut gen_start = 0;
    while gen_start < topo.len() {
        let gen_end = topo.len();
        for p in gen_start..gen_end {
            let x = topo[p] as usize;
            for &k in &slist[soff[x] as usize..soff[x + 1] as usize] {
                let v = g.edges[uniq[k as usize].0 as usize].v as usize;
                indeg[v] -= 1;
                if indeg[v] == 0 {
                    topo.push(v as u32);
                }
            }
        }
        gen_start = gen_end;
    }
    if topo.len() != nn {
        return Err("the graph has a cycle".into());
    }
    // Longest path (networkx `dag_longest_path`).
    let mut dist = vec![0i64; nn];
    let mut via = vec![NONE; nn]; // unique-edge index of the best predecessor edge
    for &v in &topo {
        let v = v as usize;
        let mut best: Option<(i64, u32)> = None;
        for &k in &plist[poff[v] as usize..poff[v + 1] as usize] {
            let u = g.edges[uniq[k as usize].0 as usize].u as usize;
            let d = dist[u] + wgraph(k as usize);
            if best.map_or(true, |b| d > b.0) {
                best = Some((d, k));
            }
        }
        if let Some((d, k)) = best {
            if d >= 0 {
                dist[v] = d;
                via[v] = k;
            }
        }
    }
    let mut endv = topo[0] as usize;
    for &v in &topo {
        if dist[v as usize] > dist[endv] {
            endv = v as usize;
        }
    }
    let mut path_edges: Vec<u32> = Vec::new();
    let mut v = endv;
    while via[v] != NONE {
        let k = via[v];
        path_edges.push(k);
        v = g.edges[uniq[k as usize].0 as usize].u as usize;
    }
    path_edges.reverse();

    // ---- breakdown: every path edge classified without building text, then segments only for
    // the rows kept and the longest ones.
    struct Seg {
        t: u8,
        attr_row: Option<u32>,
        bound: &'static str,
        w: i64,
        start: i64,
    }
    let mut sums = [0i64; 6];
    let mut total = 0i64;
    let mut segs: Vec<Seg> = Vec::with_capacity(path_edges.len());
    for &k in &path_edges {
        let (_, last, attr_from) = uniq[k as usize];
        let e = &g.edges[last as usize];
        let attr = if attr_from != NONE {
            g.edges[attr_from as usize].attr
        } else {
            NONE
        };
        let w = if compat { e.w } else { e.w.max(0) };
        let attr_row = (attr != NONE && attr != ROOT).then_some(attr);
        let bound = match e.t {
            E_KK => "gpu_kernel_kernel_overhead",
            E_LAUNCH => "gpu_kernel_launch_overhead",
            E_DEP | E_SYNC => "",
            _ => match attr_row {
                None => "cpu_bound",
                Some(a) => {
                    let au = a as usize;
                    let on_cpu = if compat {
                        r.stream[au] < 0
                    } else {
                        !t.kind_at(au).is_gpu_activity()
                    };
                    if on_cpu {
                        if !compat && has(au, F_DATA_LOADING) {
                            "data_loading"
                        } else {
                            "cpu_bound"
                        }
                    } else if has(au, F_COMM) {
                        "gpu_communication_bound"
                    } else {
                        "gpu_compute_bound"
                    }
                }
            },
        };
        if let Some(b) = BOUND_BY.iter().position(|x| *x == bound) {
            sums[b] += w;
        }
        total += w;
        segs.push(Seg {
            t: e.t,
            attr_row,
            bound,
            w,
            start: g.node_ts[e.u as usize],
        });
    }
    let segment = |s: &Seg| PathSegment {
        edge_type: edge_type_name(s.t).to_string(),
        row: s.attr_row,
        name: s.attr_row.map(|a| t.name_at(a as usize).to_string()),
        stream: s.attr_row.map(|a| r.stream[a as usize]),
        start_us: s.start as f64 / 1000.0,
        duration_us: s.w as f64 / 1000.0,
        bound_by: s.bound.to_string(),
    };
    res.segments = segs.len();
    let keep = match opts.max_rows {
        None => DEFAULT_PATH_ROWS,
        Some(0) => usize::MAX,
        Some(k) => k,
    };
    res.rows = segs.iter().take(keep).map(segment).collect();
    if segs.len() > res.rows.len() {
        res.notes.push(format!(
            "rows lists the first {} of the path's {} segments (the shares, longest segments and top events cover all of them)",
            res.rows.len(),
            segs.len()
        ));
    }
    res.total_us = total as f64 / 1000.0;
    res.summary = BOUND_BY
        .iter()
        .enumerate()
        .map(|(b, name)| BoundShare {
            bound_by: name.to_string(),
            duration_us: sums[b] as f64 / 1000.0,
            pct: if total != 0 {
                sums[b] as f64 / total as f64 * 100.0
            } else {
                0.0
            },
        })
        .collect();
    // The 10 longest segments, longest first, ties in path order.
    let longest_first = |&x: &usize, &y: &usize| segs[y].w.cmp(&segs[x].w).then(x.cmp(&y));
    let mut top: Vec<usize> = (0..segs.len()).collect();
    if top.len() > 10 {
        top.select_nth_unstable_by(9, longest_first);
        top.truncate(10);
    }
    top.sort_by(longest_first);
    res.top_segments = top.iter().map(|&x| segment(&segs[x])).collect();
    // Path time per (event name, bound), summed in path order.
    let mut agg: FxHashMap<(u32, &str), (usize, f64)> = FxHashMap::default();
    for s in &segs {
        if let Some(a) = s.attr_row {
            let e = agg
                .entry((t.name_id(a as usize), s.bound))
                .or_insert((0, 0.0));
            e.0 += 1;
            e.1 += s.w as f64 / 1000.0;
        }
    }
    let mut ev: Vec<PathEvent> = agg
        .into_iter()
        .map(|((id, b), (c, d))| PathEvent {
            name: t.name_of_id(id).to_string(),
            bound_by: b.to_string(),
            segments: c,
            duration_us: d,
        })
        .collect();
    ev.sort_by(|x, y| {
        y.duration_us
            .total_cmp(&x.duration_us)
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.bound_by.cmp(&y.bound_by))
    });
    ev.truncate(10);
    res.top_events = ev;
    Ok(())
}

/// Sentinel for the call-stack root as an attribution.
const ROOT: u32 = NONE - 1;

/// HTA's per-thread traversal state (`_construct_graph_from_call_stack`).
struct StackState {
    last_node: u32,
    last_high: u32,
    op_depth: i64,
    last_parent: u32,
}

impl StackState {
    fn enter(&mut self, g: &mut Graph, s: u32, parent: u32) {
        if self.op_depth == 0 && self.last_high != NONE {
            g.add(self.last_high, s, E_DEP, false);
        }
        self.op_depth += 1;
        if self.last_node != NONE {
            let e = g.add(self.last_node, s, E_OP, false);
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
            out = g.add(self.last_node, en, E_OP, blocking);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::load_bytes;

    fn table(events: serde_json::Value) -> TraceTable {
        let b = serde_json::to_vec(&serde_json::json!({ "traceEvents": events })).unwrap();
        load_bytes("t.json", &b).unwrap()
    }

    #[test]
    fn nested_ops_and_ties_are_deterministic() {
        // parent [0,10) with children [1,4) and [4,9): path = the parent's timeline, 10 µs, all CPU;
        // two runs give identical rows. Thread 2's op `q` ties (10 µs) with `p`'s chain: the path
        // ends at the first node in topological order with the largest distance, `q`'s end (fewer
        // generations), as networkx would.
        let t = table(serde_json::json!([
            {"ph": "X", "cat": "cpu_op", "name": "p", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
            {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 3},
            {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 4, "dur": 5},
            {"ph": "X", "cat": "cpu_op", "name": "q", "pid": 1, "tid": 2, "ts": 0, "dur": 10},
        ]));
        for mode in [Mode::Exact, Mode::HtaCompat] {
            let r = critical_path_mode(&t, &CriticalPathOptions::default(), mode);
            assert!(r.ok);
            assert_eq!(r.total_us, 10.0);
            assert_eq!(r.pct("cpu_bound"), 100.0);
            let names: Vec<_> = r.rows.iter().map(|s| s.name.clone().unwrap()).collect();
            assert_eq!(names, ["q"]);
            let again = critical_path_mode(&t, &CriticalPathOptions::default(), mode);
            assert_eq!(r.rows, again.rows);
        }
        let t = table(serde_json::json!([
            {"ph": "X", "cat": "cpu_op", "name": "p", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
            {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 3},
            {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 4, "dur": 5},
            {"ph": "X", "cat": "cpu_op", "name": "q", "pid": 1, "tid": 2, "ts": 0, "dur": 9},
        ]));
        for mode in [Mode::Exact, Mode::HtaCompat] {
            let r = critical_path_mode(&t, &CriticalPathOptions::default(), mode);
            assert_eq!(r.total_us, 10.0);
            // With `q` shorter, the path is p's timeline:
            // p start -> a start (p) -> a end (a) -> b start (p) -> b end (b) -> p end (p).
            let names: Vec<_> = r.rows.iter().map(|s| s.name.clone().unwrap()).collect();
            assert_eq!(names, ["p", "a", "p", "b", "p"]);
        }
    }

    #[test]
    fn rows_are_capped_but_the_shares_cover_the_whole_path() {
        let t = table(serde_json::json!([
            {"ph": "X", "cat": "cpu_op", "name": "p", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
            {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 3},
            {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 4, "dur": 5},
        ]));
        let keeping = |max_rows: usize| {
            let opts = CriticalPathOptions {
                max_rows: Some(max_rows),
                ..Default::default()
            };
            critical_path_mode(&t, &opts, Mode::Exact)
        };
        let (all, two) = (keeping(0), keeping(2));
        assert_eq!((all.rows.len(), all.segments), (5, 5));
        assert_eq!((two.rows.len(), two.segments), (2, 5));
        assert_eq!(two.rows[..], all.rows[..2]);
        assert_eq!(two.summary, all.summary);
        assert_eq!(two.top_segments, all.top_segments);
        assert_eq!(two.top_events, all.top_events);
        assert!(all.notes.is_empty());
        assert!(two
            .notes
            .iter()
            .any(|n| n.contains("first 2 of the path's 5")));
        // Top events: p has three segments (1 + 1 + 1 us), b 5 us, a 3 us.
        let ev: Vec<_> = all
            .top_events
            .iter()
            .map(|e| (e.name.as_str(), e.segments, e.duration_us))
            .collect();
        assert_eq!(ev, [("b", 1, 5.0), ("a", 1, 3.0), ("p", 3, 2.0)]);
    }

    #[test]
    fn blocking_call_lists() {
        assert!(hta_blocking("cudaMemcpyAsync") && !waits_for_device("cudaMemcpyAsync"));
        assert!(waits_for_device("cudaDeviceSynchronize"));
        assert!(hta_launch("cudaLaunchKernel") && !hta_launch("hipModuleLaunchKernel"));
    }
}
