//! The diagnosis as a map-reduce over ranks, so ranks held apart (one Web Worker each, or several)
//! give the same report as the whole set: each rank gives a [`RankContextPart`], [`context_of`]
//! reduces them to the [`TraceContext`] (the analysed window is chosen across ranks); then each rank
//! gives a [`RankGatherPart`] over that window, and [`gathered_of`] reduces them to the figures the
//! rules read. Parts are plain serde data (they cross a worker boundary as JSON); the whole-set path
//! ([`super::gather::gather_with`]) runs these same functions.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use super::context::{context_of, rank_context_part, RankContextPart};

use super::attribution::{attribute_rank, merge, IdleCause, RankAttribution};
use super::context::{self, TraceContext};
use super::findings::{EvidenceRef, MAX_EVIDENCE_ROWS};
use super::gather::{cause_intervals, rank_figures, Gathered};
use super::host::HostTimeline;
use super::inputs::{
    AttentionFigures, CopyFigure, CopyRoute, DiagnosisInputs, KernelFigure, RankFigure, SyncFigure,
};
use crate::analysis::all::{AnalysisOptions, Mode};
use crate::analysis::collectives::{collective_inputs, collectives_from_inputs, CollectiveInputs};
use crate::analysis::gpu::RankPrep;
use crate::table::{RankTrace, TraceSet};

/// Each rank's context part, in set order.
pub fn context_parts(set: &TraceSet) -> Vec<RankContextPart> {
    context_parts_in(set, None)
}

/// Each rank's context part with the steps chosen (`steps`; `None`: the automatic window).
pub fn context_parts_in(
    set: &TraceSet,
    steps: Option<crate::analysis::step_filter::StepRange>,
) -> Vec<RankContextPart> {
    set.ranks
        .iter()
        .map(|r| context::rank_context_part_in(r, &HostTimeline::of(&r.table), steps))
        .collect()
}

/// Each rank's figures over the analysed window `context` chose (`opts.steps`/`opts.window_ns`,
/// when set, fix it instead), in set order.
pub fn gather_parts(
    set: &TraceSet,
    context: &TraceContext,
    opts: &AnalysisOptions,
) -> Vec<RankGatherPart> {
    let wopts = window_options(context, opts);
    set.ranks
        .iter()
        .map(|r| rank_gather_part(r, &HostTimeline::of(&r.table), &wopts))
        .collect()
}

/// The options the figures are computed with: exact, over `opts`' steps or window, else the
/// context's (chosen steps: those of the range every rank has, as the context says).
pub fn window_options(context: &TraceContext, opts: &AnalysisOptions) -> AnalysisOptions {
    let steps = if context.steps_chosen {
        context.steps
    } else {
        opts.steps.or(context.steps)
    };
    AnalysisOptions {
        mode: Mode::Exact,
        steps,
        window_ns: opts.window_ns.or(context.time_window()),
        ..opts.clone()
    }
}

/// One rank's figures over the window of `wopts` ([`window_options`]), from its host timeline.
pub fn rank_gather_part(
    rank: &RankTrace,
    host: &HostTimeline,
    wopts: &AnalysisOptions,
) -> RankGatherPart {
    let prep = RankPrep::new(&rank.table, wopts);
    let mut attribution = attribute_rank(&prep, &cause_intervals(host));
    let mut names = NameFigures::default();
    let mut sums = RankSums::default();
    // The figures read the pieces (host compute inside the GPU window); the part leaves them out.
    let figure = rank_figures(&prep, host, &attribution, rank.rank, &mut names, &mut sums);
    attribution.pieces = Vec::new();
    RankGatherPart {
        rank: rank.rank,
        load_order: rank.load_order,
        device_name: rank.table.metadata.device_name.clone(),
        device_ops_in_window: prep.dev.len() as u64,
        figure,
        attribution,
        sums,
        names,
        roofline: super::roofline_rules::rank_roofline_figures(rank.rank, &prep),
        collectives: collective_inputs(rank.rank, &prep),
    }
}

/// The figures of a set from its context and its ranks' parts, in any order (they are put in set
/// order: by rank, then load order).
pub fn gathered_of(context: TraceContext, mut parts: Vec<RankGatherPart>) -> Gathered {
    crate::sort::sort_by_key(&mut parts, |p| (p.rank, p.load_order));
    let mut ctx = context;
    let mut inputs = DiagnosisInputs {
        device_name: parts.iter().find_map(|p| p.device_name.clone()),
        ..Default::default()
    };
    let mut names = NameFigures::default();
    let mut attributions: Vec<RankAttribution> = Vec::new();
    let mut device_ops_in_window = 0u64;
    let collectives: Vec<CollectiveInputs> = parts.iter().map(|p| p.collectives.clone()).collect();
    inputs.collectives = collectives_from_inputs(&collectives);
    for p in parts {
        device_ops_in_window += p.device_ops_in_window;
        p.sums.add_to(&mut inputs);
        names.merge(p.names);
        inputs.roofline.merge(p.roofline);
        inputs.time.add(&p.figure.time);
        inputs.steps = inputs.steps.max(p.figure.steps);
        inputs.ranks.push(p.figure);
        attributions.push(p.attribution);
    }
    inputs.device_kind = ctx.device.kind;
    inputs.run = ctx.run;
    let gpu_window: i64 = attributions.iter().map(|a| a.window_ns).max().unwrap_or(0);
    context::check_sufficient(
        &mut ctx,
        window_work(&inputs, device_ops_in_window, gpu_window),
    );
    inputs.idle = merge(&attributions);
    inputs.dispatch_gaps = attributions.iter().map(|a| a.dispatch_gaps).sum();
    dispatch_gap_figures(&mut inputs, &attributions);
    names.finish(&mut inputs);
    inputs.in_use = super::inputs::InUse::of(&ctx, &inputs.kernels);
    ctx.in_use = inputs.in_use.clone();
    super::cold::check_cold_start(&mut ctx, &inputs);
    ctx.analysed = super::wording::analysed_line(&ctx, &inputs);
    Gathered {
        inputs,
        context: ctx,
    }
}

/// The dispatch gaps' median and the host stalls' count and median, over every rank.
fn dispatch_gap_figures(inputs: &mut DiagnosisInputs, ranks: &[RankAttribution]) {
    use super::attribution::{is_stall, median_ns};
    let mut all = Vec::new();
    let mut stalls = Vec::new();
    for r in ranks {
        let median = median_ns(&r.dispatch_gap_ns);
        all.extend_from_slice(&r.dispatch_gap_ns);
        stalls.extend(r.dispatch_gap_ns.iter().filter(|&&n| is_stall(n, median)));
    }
    inputs.dispatch_gap_median_ns = median_ns(&all);
    inputs.stall_gaps = stalls.len() as u64;
    inputs.stall_gap_median_ns = median_ns(&stalls);
}

/// What the gate reads of the analysed window, from the figures of all ranks.
fn window_work(i: &DiagnosisInputs, device_ops: u64, window_ns: i64) -> super::gate::WindowWork {
    let clear_idle_ns = IdleCause::ALL
        .iter()
        .filter(|c| c.is_clear())
        .map(|c| i.time.idle_by_cause_ns[c.index()])
        .sum();
    super::gate::WindowWork {
        device_ops,
        window_ns,
        busy_ns: i.time.busy_ns,
        clear_idle_ns,
        windows_ns: i.time.window_ns,
        copy_ns: i.time.memory_ns,
        host_compute_ns: i.host_compute.ns,
        host_window_ns: i.host_compute.window_ns,
    }
}

/// One rank's figures over the analysed window: what [`gathered_of`] reads of it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankGatherPart {
    pub rank: i64,
    /// [`RankTrace::load_order`]: orders the files of one rank.
    pub load_order: usize,
    /// `deviceProperties[0].name`, when the trace has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_name: Option<String>,
    /// Device operations in the analysed window.
    pub device_ops_in_window: u64,
    pub figure: RankFigure,
    /// The idle attribution (without its pieces).
    pub attribution: RankAttribution,
    pub sums: RankSums,
    pub names: NameFigures,
    pub roofline: super::roofline_rules::RooflineFigures,
    /// The rank's collectives (the cross-rank split is made over every rank's).
    pub collectives: CollectiveInputs,
}

/// One rank's share of the set-wide sums of [`DiagnosisInputs`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankSums {
    pub small_kernel_time_ns: i64,
    pub accelerator_ops: u64,
    pub data_loader_ns: i64,
    pub launch_calls: u64,
    pub launch_call_ns: i64,
    pub attention: AttentionFigures,
    pub one_offs: Vec<super::inputs::OneOffFigure>,
    pub one_off_kernel_ns: i64,
    pub host_compute: super::inputs::HostCompute,
}

impl RankSums {
    fn add_to(self, inputs: &mut DiagnosisInputs) {
        inputs.small_kernel_time_ns += self.small_kernel_time_ns;
        inputs.accelerator_ops += self.accelerator_ops;
        inputs.data_loader_ns += self.data_loader_ns;
        inputs.launch_calls += self.launch_calls;
        inputs.launch_call_ns += self.launch_call_ns;
        inputs.one_offs.extend(self.one_offs);
        inputs.one_off_kernel_ns += self.one_off_kernel_ns;
        inputs.host_compute.add(&self.host_compute);
        let a = &mut inputs.attention;
        a.softmax_ops += self.attention.softmax_ops;
        a.bmm_ops += self.attention.bmm_ops;
        if let Some((shape, n)) = self.attention.softmax_shape {
            if n > a.softmax_shape.as_ref().map_or(0, |s| s.1) {
                a.softmax_shape = Some((shape, n));
            }
        }
    }
}

/// Kernels, copies, synchronising calls and DataLoader ops by name (one rank's, or merged over
/// ranks), turned into the inputs' lists at the end.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NameFigures {
    pub kernels: BTreeMap<String, KernelFigure>,
    pub copies: BTreeMap<String, CopyFigure>,
    /// [`CopyRoute`]s keyed by name and route.
    pub copy_routes: BTreeMap<String, CopyRoute>,
    /// Each call's figure and its callers (caller → count; the figure's `callers` is filled at the end).
    pub syncs: BTreeMap<String, (SyncFigure, BTreeMap<String, u64>)>,
    pub loaders: Vec<EvidenceRef>,
    /// Kernel durations (ns) → how many kernels took them: the median's input. Written as a list
    /// of `[ns, count]`: JSON map keys are strings, which a tagged protocol message cannot read back
    /// as numbers.
    #[serde(with = "durations_as_list")]
    pub durations: BTreeMap<i64, u64>,
    /// Launch call durations (ns) → how many calls took them.
    #[serde(with = "durations_as_list")]
    pub launch_durations: BTreeMap<i64, u64>,
}

/// [`NameFigures::durations`] as a list of `[ns, count]`.
mod durations_as_list {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(m: &BTreeMap<i64, u64>, s: S) -> Result<S::Ok, S::Error> {
        let list: Vec<(i64, u64)> = m.iter().map(|(k, v)| (*k, *v)).collect();
        list.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<i64, u64>, D::Error> {
        let list: Vec<(i64, u64)> = Vec::deserialize(d)?;
        Ok(crate::sort::map_of(list))
    }
}

impl NameFigures {
    /// Adds the figures of the next rank (in set order).
    pub fn merge(&mut self, o: NameFigures) {
        for (name, k) in o.kernels {
            let f = self.kernels.entry(name).or_default();
            f.name = k.name;
            f.calls += k.calls;
            f.total_ns += k.total_ns;
            f.small_calls += k.small_calls;
            f.max_ns = f.max_ns.max(k.max_ns);
            f.communication = k.communication;
            f.evidence.extend(k.evidence);
        }
        for (name, c) in o.copies {
            let f = self.copies.entry(name).or_default();
            f.name = c.name;
            f.count += c.count;
            f.total_ns += c.total_ns;
            f.bytes += c.bytes;
            f.small_count += c.small_count;
            f.pageable = c.pageable;
            f.host = c.host;
            f.evidence.extend(c.evidence);
        }
        for (key, c) in o.copy_routes {
            add_route(self.copy_routes.entry(key).or_default(), &c);
        }
        for (name, (s, callers)) in o.syncs {
            let (f, all) = self.syncs.entry(name).or_default();
            f.name = s.name;
            f.count += s.count;
            f.total_ns += s.total_ns;
            f.gpu_idle_ns += s.gpu_idle_ns;
            f.copy = s.copy;
            for (c, n) in callers {
                *all.entry(c).or_insert(0) += n;
            }
            for e in s.evidence {
                // Two files of one rank share its evidence row, as one scan over both would.
                match f.evidence.iter_mut().find(|x| x.rank == e.rank) {
                    Some(x) => {
                        x.count += e.count;
                        x.time_ns += e.time_ns;
                        let room = MAX_EVIDENCE_ROWS.saturating_sub(x.rows.len());
                        x.rows.extend(e.rows.into_iter().take(room));
                    }
                    None => f.evidence.push(e),
                }
            }
        }
        self.loaders.extend(o.loaders);
        for (d, n) in o.durations {
            *self.durations.entry(d).or_insert(0) += n;
        }
        for (d, n) in o.launch_durations {
            *self.launch_durations.entry(d).or_insert(0) += n;
        }
    }

    /// The inputs' kernel, copy, sync and DataLoader lists (largest first) and kernel totals.
    pub fn finish(self, inputs: &mut DiagnosisInputs) {
        let mut kernels: Vec<KernelFigure> = self.kernels.into_values().collect();
        crate::sort::sort_by(&mut kernels, |a, b| {
            b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name))
        });
        inputs.kernel_count = kernels.iter().map(|k| k.calls).sum();
        inputs.kernel_time_ns = kernels.iter().map(|k| k.total_ns).sum();
        inputs.small_kernel_count = kernels.iter().map(|k| k.small_calls).sum();
        inputs.kernels = kernels;
        let mut copies: Vec<CopyFigure> = self.copies.into_values().collect();
        crate::sort::sort_by(&mut copies, |a, b| {
            b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name))
        });
        inputs.copies = copies;
        let mut routes: Vec<CopyRoute> = self.copy_routes.into_values().collect();
        crate::sort::sort_by(&mut routes, |a, b| {
            b.ns.cmp(&a.ns)
                .then(a.name.cmp(&b.name))
                .then(a.from.cmp(&b.from))
                .then(a.to.cmp(&b.to))
        });
        inputs.copy_routes = routes;
        let mut syncs: Vec<SyncFigure> = self
            .syncs
            .into_values()
            .map(|(mut f, callers)| {
                let mut c: Vec<(String, u64)> = callers.into_iter().collect();
                crate::sort::sort_by(&mut c, |a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
                f.callers = c;
                f
            })
            .collect();
        crate::sort::sort_by(&mut syncs, |a, b| {
            b.total_ns.cmp(&a.total_ns).then(a.name.cmp(&b.name))
        });
        inputs.syncs = syncs;
        let mut loaders = self.loaders;
        crate::sort::sort_by(&mut loaders, |a, b| {
            b.time_ns.cmp(&a.time_ns).then(a.name.cmp(&b.name))
        });
        inputs.data_loader_ops = loaders;
        inputs.median_kernel_ns = median(&self.durations);
        inputs.launch_call_median_ns = median(&self.launch_durations);
        inputs.launch_call_p90_ns = quantile(&self.launch_durations, 0.9);
        crate::sort::sort_by(&mut inputs.one_offs, |a, b| {
            b.dur_ns
                .cmp(&a.dur_ns)
                .then(a.rank.cmp(&b.rank))
                .then(a.row.cmp(&b.row))
        });
        inputs.one_offs.truncate(super::inputs::MAX_ONE_OFFS);
    }
}

/// The value at rank ⌊q·n⌋ of durations given with their counts (sorted); 0 when none.
fn quantile(durations: &BTreeMap<i64, u64>, q: f64) -> i64 {
    let total: u64 = durations.values().sum();
    let at = ((total as f64 * q) as u64).min(total.saturating_sub(1));
    let mut seen = 0;
    for (&d, &n) in durations {
        seen += n;
        if seen > at {
            return d;
        }
    }
    0
}

/// The middle value (the upper one of an even count) of durations given with their counts; 0 when none.
fn median(durations: &BTreeMap<i64, u64>) -> i64 {
    let total: u64 = durations.values().sum();
    let mid = total / 2;
    let mut seen = 0;
    for (&d, &n) in durations {
        seen += n;
        if seen > mid {
            return d;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_counted_durations_is_the_sorted_middle() {
        let of = |v: &[i64]| {
            let mut m = BTreeMap::new();
            for d in v {
                *m.entry(*d).or_insert(0) += 1;
            }
            median(&m)
        };
        assert_eq!(of(&[]), 0);
        assert_eq!(of(&[5]), 5);
        assert_eq!(of(&[9, 1]), 9);
        assert_eq!(of(&[3, 1, 2]), 2);
        assert_eq!(of(&[4, 4, 1, 7]), 4);
        assert_eq!(of(&[1, 1, 1, 7, 8, 9]), 7);
    }
}

/// Adds `c`'s copies to the route `f` (the same name and route).
pub fn add_route(f: &mut CopyRoute, c: &CopyRoute) {
    f.name.clone_from(&c.name);
    f.from = c.from;
    f.to = c.to;
    f.count += c.count;
    f.bytes += c.bytes;
    f.ns += c.ns;
}

/// The key of a copy route in [`NameFigures::copy_routes`].
pub fn route_key(name: &str, from: Option<i64>, to: Option<i64>) -> String {
    format!("{name}\u{1f}{from:?}\u{1f}{to:?}")
}
