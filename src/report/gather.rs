//! Fills [`DiagnosisInputs`] for the analysed window: the context stage picks the window, then each
//! rank's device rows in it (the analyses' own [`RankPrep`], so a figure has one definition) give the
//! time figures, kernels, copies and the exclusive idle attribution; the host timeline gives the
//! synchronising calls with the ops they come from, DataLoader ops and launch calls.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::attribution::{attribute_rank, CauseIntervals, RankAttribution};
use super::context::TraceContext;
use super::context::{check_chosen_steps, rank_context_part_in};
use super::findings::{EvidenceKind, EvidenceRef, MAX_EVIDENCE_ROWS};
use super::gather_parts::{
    context_of, gathered_of, rank_gather_part, window_options, NameFigures, RankContextPart,
    RankGatherPart, RankSums,
};
use super::host::HostTimeline;
use super::inputs::{DiagnosisInputs, OneOffFigure, RankFigure, SyncFigure, TimeFigures};
use super::patterns;
use super::rules::{SMALL_COPY_BYTES, SMALL_KERNEL_NS};
use crate::analysis::all::AnalysisOptions;
use crate::analysis::gpu::{KernelType, RankPrep};
use crate::analysis::intervals::{covered, intersect, length, subtract, union};
use crate::analysis::names::{is_collective_name, is_device_free_call};
use crate::analysis::names::{is_data_loader_op, NameClass, NameClasses};
use crate::analysis::one_off::OneOffKind;
use crate::table::{EventKind, TraceSet, TraceTable};

/// Evidence for one name on one rank, filled while scanning.
#[derive(Default)]
struct Acc {
    count: u64,
    time_ns: i64,
    small: u64,
    bytes: i64,
    max_ns: i64,
    rows: Vec<u32>,
}

impl Acc {
    fn add(&mut self, row: usize, dur: i64) {
        self.count += 1;
        self.time_ns += dur;
        self.max_ns = self.max_ns.max(dur);
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

/// The figures and the context of a set: what [`super::diagnosis`] reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Gathered {
    pub inputs: DiagnosisInputs,
    pub context: TraceContext,
}

/// Computes every figure the rules need over the analysed window of every rank (exact mode).
pub fn gather(set: &TraceSet) -> Gathered {
    gather_with(set, &AnalysisOptions::default())
}

/// The figures of a set; `opts.steps`, when set, fixes the analysed steps instead of the context
/// stage. The map-reduce of [`super::gather_parts`] over every rank, each host timeline read once.
pub fn gather_with(set: &TraceSet, opts: &AnalysisOptions) -> Gathered {
    gather_checked(set, opts, false).unwrap_or_default()
}

/// [`gather_with`] over the steps of `opts.steps` (the automatic window without them), or what is
/// wrong with that range ([`check_chosen_steps`]): a rank without a step in it.
pub fn gather_steps(set: &TraceSet, opts: &AnalysisOptions) -> Result<Gathered, String> {
    gather_checked(set, opts, true)
}

fn gather_checked(set: &TraceSet, opts: &AnalysisOptions, check: bool) -> Result<Gathered, String> {
    let hosts: Vec<HostTimeline> = set
        .ranks
        .iter()
        .map(|r| HostTimeline::of(&r.table))
        .collect();
    let context_parts: Vec<RankContextPart> = set
        .ranks
        .iter()
        .zip(&hosts)
        .map(|(r, h)| rank_context_part_in(r, h, opts.steps))
        .collect();
    if let (true, Some(range)) = (check, opts.steps) {
        check_chosen_steps(&context_parts, range)?;
    }
    let ctx = context_of(&context_parts);
    let wopts = window_options(&ctx, opts);
    let parts: Vec<RankGatherPart> = set
        .ranks
        .iter()
        .zip(&hosts)
        .map(|(r, h)| rank_gather_part(r, h, &wopts))
        .collect();
    Ok(gathered_of(ctx, parts))
}

/// Where one rank's GPU (all streams) is idle over the whole trace, and why: the attribution's
/// pieces, sorted by start (for the timeline).
pub fn idle_pieces(t: &crate::table::TraceTable) -> Vec<(i64, i64, super::attribution::IdleCause)> {
    let host = HostTimeline::of(t);
    let prep = RankPrep::new(t, &AnalysisOptions::default());
    attribute_rank(&prep, &cause_intervals(&host)).pieces
}

/// The host intervals each idle cause reads.
pub(super) fn cause_intervals(host: &HostTimeline) -> CauseIntervals {
    CauseIntervals {
        captures: host.captures.clone(),
        warmup: host.warmup_marks.clone(),
        startup: host.startup.clone(),
        data_loader: host.data_loader.clone(),
        syncs: host.syncs.clone(),
        waits: host.waits.clone(),
        comm_ops: host.comm_ops.clone(),
        host_compute: host.host_compute.clone(),
        steps: host.step_intervals(),
    }
}

/// One rank's figures over its analysed window; names go into `acc`, set-wide sums into `inputs`.
pub(super) fn rank_figures(
    prep: &RankPrep,
    host: &HostTimeline,
    attribution: &RankAttribution,
    rank: i64,
    acc: &mut NameFigures,
    inputs: &mut RankSums,
) -> RankFigure {
    let t = prep.table;
    let time = time_figures(prep, attribution);
    device_names(prep, rank, acc, inputs);
    let window = (
        prep.dev.iter().map(|d| d.ts).min().unwrap_or(0),
        prep.dev.iter().map(|d| d.end).max().unwrap_or(0),
    );
    let host_window = if prep.window == (i64::MIN, i64::MAX) {
        window
    } else {
        prep.window
    };
    let inside = |row: usize| {
        t.ts_at(row)
            .is_some_and(|ts| ts >= host_window.0 && ts < host_window.1)
    };
    let sync_rows: Vec<(usize, String)> = host
        .sync_rows
        .iter()
        .filter(|(row, _)| inside(*row))
        .cloned()
        .collect();
    if !sync_rows.is_empty() {
        let busy = union(prep.dev.iter().map(|d| (d.ts, d.end.max(d.ts))).collect());
        let copies: BTreeMap<usize, &str> = crate::sort::map_of(
            host.sync_copies
                .iter()
                .map(|(row, copy)| (*row, copy.as_str())),
        );
        let sync_rows = sync_rows
            .into_iter()
            .map(|(row, name)| (row, name, copies.get(&row).map(|c| c.to_string())))
            .collect();
        collect_syncs(t, rank, sync_rows, &busy, &mut acc.syncs);
    }
    let dl = intersect(&host.data_loader, &[host_window]);
    inputs.data_loader_ns += length(&dl);
    if !dl.is_empty() {
        data_loader_evidence(t, &prep.names, rank, &inside, &mut acc.loaders);
    }
    let (launches, launch_ns) = launch_calls(t, &prep.names, &inside, &mut acc.launch_durations);
    inputs.launch_calls += launches;
    inputs.launch_call_ns += launch_ns;
    super::cold::one_off_figures(host, rank, host_window, inputs);
    inputs.host_compute = host_compute(prep, host, attribution);
    patterns::attention_ops(t, &inside, &mut inputs.attention);
    let steps: Vec<&(i64, i64, i64)> = host
        .steps
        .iter()
        .filter(|s| s.1 >= host_window.0 && s.1 < host_window.1)
        .collect();
    let step_ns: i64 = steps.iter().map(|s| s.2 - s.1).sum();
    RankFigure {
        rank,
        steps: steps.len() as u64,
        mean_step_ns: if steps.is_empty() {
            0
        } else {
            step_ns / steps.len() as i64
        },
        comm_kernel_ns: prep
            .dev
            .iter()
            .filter(|d| d.ktype == KernelType::Communication)
            .map(|d| d.end - d.ts)
            .sum(),
        cold_comm: cold_collectives(host, rank, host_window),
        time,
    }
}

/// The rank's host compute with the device idle, over its analysed window on the host (the
/// analysed window clipped to the rank's span, or the whole span): inside the GPU window the idle
/// pieces attributed to it (so no other cause's time is claimed twice), outside it (before the
/// first device operation, after the last) the operators' own spans.
fn host_compute(
    prep: &RankPrep,
    host: &HostTimeline,
    attribution: &RankAttribution,
) -> super::inputs::HostCompute {
    use super::attribution::IdleCause;
    let Some((lo, hi)) = host.span else {
        return Default::default();
    };
    let window = (prep.window.0.max(lo), prep.window.1.min(hi));
    if window.1 <= window.0 {
        return Default::default();
    }
    let gpu = (
        prep.dev.iter().map(|d| d.ts).min(),
        prep.dev.iter().map(|d| d.end).max(),
    );
    let outside_gpu = match gpu {
        (Some(a), Some(b)) => subtract(&[window], &[(a, b)]),
        _ => vec![window],
    };
    let inside: Vec<(i64, i64)> = attribution
        .pieces
        .iter()
        .filter(|p| p.2 == IdleCause::HostCompute)
        .map(|p| (p.0, p.1))
        .collect();
    let idle_compute = union(
        intersect(&host.host_compute, &outside_gpu)
            .into_iter()
            .chain(inside)
            .collect(),
    );
    let mut ops: BTreeMap<&str, i64> = BTreeMap::new();
    for (s, e, name) in &host.host_compute_ops {
        let ns = length(&intersect(&idle_compute, &[(*s, *e)]));
        if ns > 0 {
            *ops.entry(name.as_str()).or_insert(0) += ns;
        }
    }
    let mut out = super::inputs::HostCompute {
        ns: length(&idle_compute),
        window_ns: window.1 - window.0,
        ops: Vec::new(),
    };
    out.add(&super::inputs::HostCompute {
        ops: ops.into_iter().map(|(n, t)| (n.to_string(), t)).collect(),
        ..Default::default()
    });
    out
}

/// The rank's communication kernels whose first run (inside the window) is a one-off: many times
/// their later median ([`crate::analysis::one_off::is_one_off`]).
fn cold_collectives(host: &HostTimeline, rank: i64, (lo, hi): (i64, i64)) -> Vec<OneOffFigure> {
    host.one_offs
        .items
        .iter()
        .filter(|o| o.kind == OneOffKind::FirstKernel && is_collective_name(&o.name))
        .filter(|o| o.ts >= lo && o.ts < hi)
        .map(|o| OneOffFigure {
            rank,
            kind: Some(o.kind),
            name: o.name.clone(),
            launched: None,
            dur_ns: o.dur_ns(),
            later_median_ns: o.later_median_ns,
            row: o.row,
        })
        .collect()
}

/// Window, busy, compute, communication and memory unions of one rank, and its idle causes.
fn time_figures(prep: &RankPrep, a: &RankAttribution) -> TimeFigures {
    let of = |ty: KernelType| {
        union(
            prep.dev
                .iter()
                .filter(|d| d.ktype == ty)
                .map(|d| (d.ts, d.end))
                .collect(),
        )
    };
    let busy = union(prep.dev.iter().map(|d| (d.ts, d.end.max(d.ts))).collect());
    let compute = of(KernelType::Computation);
    let comm = of(KernelType::Communication);
    let memory = of(KernelType::Memory);
    let kernels = union(compute.iter().chain(comm.iter()).copied().collect());
    TimeFigures {
        window_ns: a.window_ns,
        busy_ns: length(&busy),
        compute_ns: length(&compute),
        comm_ns: length(&comm),
        comm_exposed_ns: length(&subtract(&comm, &compute)),
        memory_ns: length(&memory),
        memory_exposed_ns: length(&subtract(&memory, &kernels)),
        idle_ns: a.idle_ns,
        idle_by_cause_ns: a.by_cause_ns,
    }
}

/// Kernels (and accelerator ops) and copies of the window by name, with their rows as evidence.
fn device_names(prep: &RankPrep, rank: i64, acc: &mut NameFigures, inputs: &mut RankSums) {
    let t = prep.table;
    let mut k_acc: BTreeMap<u32, (Acc, KernelType)> = BTreeMap::new();
    let mut c_acc: BTreeMap<u32, Acc> = BTreeMap::new();
    let bytes_col = t.arg("bytes");
    for d in &prep.dev {
        let row = d.row as usize;
        let dur = d.end - d.ts;
        if d.ktype == KernelType::Memory {
            let a = c_acc.entry(d.name).or_default();
            a.add(row, dur);
            let bytes = bytes_col
                .and_then(|c| c.find(row).and_then(|p| c.i64_at(p)))
                .unwrap_or(0);
            a.bytes += bytes.max(0);
            if bytes > 0 && d.kind == EventKind::Memcpy {
                copy_route(t, row, dur, bytes, acc);
            }
            if d.kind == EventKind::Memcpy && bytes > 0 && bytes < SMALL_COPY_BYTES {
                a.small += 1;
            }
            continue;
        }
        let (a, _) = k_acc
            .entry(d.name)
            .or_insert_with(|| (Acc::default(), d.ktype));
        a.add(row, dur);
        inputs.accelerator_ops += u64::from(d.kind == EventKind::AcceleratorOp);
        // A kernel a graph replay launched has no launch of its own: it is not counted among the
        // small kernels whose launches set the pace, nor in their median.
        let replayed = d.launch.is_some_and(|r| {
            prep.names
                .of_row(t, r as usize)
                .has(crate::analysis::names::NameClass::GRAPH_LAUNCH)
        });
        if replayed {
            continue;
        }
        *acc.durations.entry(dur).or_insert(0) += 1;
        if dur < SMALL_KERNEL_NS {
            a.small += 1;
            inputs.small_kernel_time_ns += dur;
        }
    }
    for (id, (a, ty)) in k_acc {
        let name = t.name_of_id(id);
        let f = acc.kernels.entry(name.to_string()).or_default();
        f.name = name.to_string();
        f.calls += a.count;
        f.total_ns += a.time_ns;
        f.small_calls += a.small;
        f.max_ns = f.max_ns.max(a.max_ns);
        f.communication = ty == KernelType::Communication;
        f.evidence
            .push(a.evidence(EvidenceKind::Kernel, rank, name));
    }
    for (id, a) in c_acc {
        let name = t.name_of_id(id);
        let f = acc.copies.entry(name.to_string()).or_default();
        f.name = name.to_string();
        f.count += a.count;
        f.total_ns += a.time_ns;
        f.bytes += a.bytes;
        f.small_count += a.small;
        f.pageable = name.contains("Pageable");
        f.host = name.contains("HtoD") || name.contains("DtoH");
        f.evidence
            .push(a.evidence(EvidenceKind::Memory, rank, name));
    }
}

/// Launch calls inside the window: count and Σ dur, ns.
fn launch_calls(
    t: &TraceTable,
    classes: &NameClasses,
    inside: &dyn Fn(usize) -> bool,
    durations: &mut BTreeMap<i64, u64>,
) -> (u64, i64) {
    let (mut n, mut ns) = (0, 0);
    for row in 0..t.len() {
        if classes.of_row(t, row).has(NameClass::LAUNCH)
            && matches!(t.kind_at(row), EventKind::Runtime | EventKind::Driver)
            && inside(row)
        {
            let d = t.dur_at(row).unwrap_or(0).max(0);
            n += 1;
            ns += d;
            *durations.entry(d).or_insert(0) += 1;
        }
    }
    (n, ns)
}

/// DataLoader ops inside the window, by name.
fn data_loader_evidence(
    t: &TraceTable,
    classes: &NameClasses,
    rank: i64,
    inside: &dyn Fn(usize) -> bool,
    out: &mut Vec<EvidenceRef>,
) {
    let mut by_name: BTreeMap<u32, Acc> = BTreeMap::new();
    for row in 0..t.len() {
        if is_data_loader_op(t.kind_at(row), classes.of_row(t, row)) && inside(row) {
            by_name
                .entry(t.name_id(row))
                .or_default()
                .add(row, t.dur_at(row).unwrap_or(0).max(0));
        }
    }
    for (id, a) in by_name {
        out.push(a.evidence(EvidenceKind::Op, rank, t.name_of_id(id)));
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

/// Synchronising calls of one rank and the ops they come from, merged into `syncs` by call name;
/// `busy` is the rank's GPU busy union (to tell the GPU idle inside each call).
fn collect_syncs(
    t: &TraceTable,
    r: i64,
    sync_rows: Vec<(usize, String, Option<String>)>,
    busy: &[(i64, i64)],
    syncs: &mut BTreeMap<String, (SyncFigure, BTreeMap<String, u64>)>,
) {
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
        crate::sort::sort(&mut th.ops);
    }
    for (row, name, copy) in sync_rows {
        let dur = t.dur_at(row).unwrap_or(0).max(0);
        let caller = t
            .ts_at(row)
            .and_then(|ts| {
                threads
                    .get(&(t.pid.keys().value(row), t.tid.keys().value(row)))
                    .map(|th| th.caller(t, ts))
            })
            .unwrap_or_else(|| "(no enclosing op)".to_string());
        // A copy call in each direction is its own figure: their causes and fixes differ.
        let key = match &copy {
            Some(c) => format!("{name} | {c}"),
            None => name.clone(),
        };
        let (f, callers) = syncs.entry(key).or_default();
        f.name = name.clone();
        f.copy = copy;
        f.count += 1;
        f.total_ns += dur;
        if let Some(ts) = t.ts_at(row).filter(|_| !is_device_free_call(&name)) {
            f.gpu_idle_ns += dur - covered(busy, ts, ts + dur);
        }
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

/// Adds one copy with bytes to its route ([`crate::report::inputs::CopyRoute`]): its name and,
/// for peer copies, `fromDevice` → `toDevice`.
fn copy_route(t: &TraceTable, row: usize, dur: i64, bytes: i64, acc: &mut NameFigures) {
    let arg = |k: &str| t.arg(k).and_then(|c| c.find(row).and_then(|p| c.i64_at(p)));
    let (from, to) = (arg("fromDevice"), arg("toDevice"));
    let name = t.name_at(row);
    let key = super::gather_parts::route_key(name, from, to);
    let one = crate::report::inputs::CopyRoute {
        name: name.to_string(),
        from,
        to,
        count: 1,
        bytes,
        ns: dur,
    };
    super::gather_parts::add_route(acc.copy_routes.entry(key).or_default(), &one);
}
