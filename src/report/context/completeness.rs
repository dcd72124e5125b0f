//! Whether the trace is whole and what it is: the holds read from each rank's [`RankFacts`] (empty,
//! GPU-only, dropped device events, fused ranks, a cut before any device event, a legacy export, a
//! micro-benchmark), the device, the findings a hold withholds, and the report's first lines (data
//! loss first, then the device and what is missing).

use crate::report::rich_text::{code, file as rich_file, runtime, RichText};
use crate::rich;
use serde::{Deserialize, Serialize};

use super::facts::{RankFacts, Repeats};
use super::{RankContextPart, TraceContext, TraceHolds, TraceOrigin};
use crate::report::findings::FindingId;
use crate::report::wording::dur;
use crate::trace::dialect::DeviceKind;

/// The device of the trace: `context.device` in `report --json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceContext {
    pub kind: DeviceKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Devices over all ranks.
    pub count: u64,
}

/// An empty capture has at most this many events of categories this tool does not know (beyond
/// that, the file is another tool's trace).
pub const EMPTY_MAX_FOREIGN: u64 = 10;
/// Launches without their device operation are "dropped events" from this many...
pub const DROPPED_MIN_LAUNCHES: u64 = 10;
/// ... and this share of the correlated launches (a few at the edges of the window are usual).
pub const DROPPED_MIN_SHARE: f64 = 0.1;
/// Host waits outlasting the recorded device work make the device record partial when their tails
/// reach this share of the recorded device window (first to last device operation)...
pub const UNRECORDED_WINDOW_SHARE: f64 = 0.5;
/// A micro-benchmark repeats its operation at least this many times...
pub const MICRO_MIN_REPEATS: u64 = 5;
/// ... its top kernel takes this share of the kernel time...
pub const MICRO_TOP_SHARE: f64 = 0.8;
/// ... among at most this many kernel names, launched (nearly all) from at most this many CPU
/// operators (`aten::mm`, or `aten::matmul` around it).
pub const MICRO_MAX_KERNEL_NAMES: u64 = 4;
pub const MICRO_MAX_LAUNCHING_OPS: usize = 2;
/// A copy benchmark has fewer device operations than this (a model's step has many more).
pub const MICRO_MAX_COPY_BENCH_OPS: u64 = 20;
/// A copy benchmark's copies fill at least this share of the trace's span: the copies are what
/// the window is made of, not a transfer beside host work that fills most of it.
pub const MICRO_COPY_SPAN_SHARE: f64 = 0.5;

/// Holds that come before graph replays: what kind of file it is, whether anything ran.
pub(super) fn before_replay(
    parts: &[&RankContextPart],
    c: &mut TraceContext,
    holds: &mut Vec<TraceHolds>,
    host_events: u64,
) {
    let facts: Vec<&RankFacts> = parts.iter().map(|p| &p.facts).collect();
    let cut = parts.iter().any(|p| p.cut);
    let marks = facts.iter().any(|f| f.kineto_marks);
    let legacy = facts.iter().any(|f| f.legacy);
    c.device = device_of(parts, cut);
    c.correlated_launches = facts.iter().map(|f| f.correlated_launches).sum();
    c.orphan_launches = facts.iter().map(|f| f.orphan_launches).sum();
    c.orphans_trail = c.orphan_launches > 0
        && facts
            .iter()
            .all(|f| f.orphan_launches == 0 || f.orphans_trail);
    c.origin = Some(if legacy {
        TraceOrigin::PytorchLegacy
    } else {
        TraceOrigin::PytorchProfiler
    });
    // An empty capture: no operator and no device work (the profiler's own start-up runtime
    // calls, such as a `cudaDeviceSynchronize`, and the Python frames around its start and stop
    // are not the model's).
    let operators: u64 = facts.iter().map(|f| f.operators).sum();
    if c.device_ops == 0 && operators == 0 && c.launch_calls + c.graph_launches == 0 && !legacy {
        if cut {
            holds.push(TraceHolds::DeviceEventsCut);
        } else if host_events > 0
            || marks
                && facts.iter().map(|f| f.foreign_events).sum::<u64>() <= EMPTY_MAX_FOREIGN
                && parts
                    .iter()
                    .all(|p| matches!(p.origin, None | Some(TraceOrigin::OtherChromeTrace)))
        {
            holds.push(TraceHolds::Empty);
        } else {
            holds.push(TraceHolds::NotPytorch);
            c.origin = Some(
                parts
                    .iter()
                    .filter_map(|p| p.origin)
                    .find(|o| *o != TraceOrigin::OtherChromeTrace)
                    .unwrap_or(TraceOrigin::OtherChromeTrace),
            );
            c.found = facts
                .iter()
                .filter_map(|f| f.found.clone())
                .min_by_key(RichText::to_markdown);
        }
        return;
    }
    // A capture without replay comes first: its launches were recorded, so no kernel ran.
    if c.capture_calls > 0 && c.graph_launches == 0 {
        holds.push(TraceHolds::GraphCapture);
    }
    if c.device_ops == 0 {
        if cut {
            // Kineto writes the device events after the host's: the cut may have taken them all.
            holds.push(TraceHolds::DeviceEventsCut);
        } else if c.launch_calls + c.graph_launches > 0 {
            holds.push(TraceHolds::NoKernelEvents);
            if c.orphan_launches > 0 {
                holds.push(TraceHolds::EventsDropped);
            }
            // The host's side is whole: what it does is said, not only what is missing.
            host_only_figures(&facts, c, holds);
        } else if legacy {
            // The legacy export records CUDA work only with `use_cuda=True`: no device event
            // says nothing of where the model ran.
            holds.push(TraceHolds::Insufficient);
            host_only_figures(&facts, c, holds);
        } else if device_unrecorded(&facts) {
            // Allocations on a device, or operators that only run there: a device run whose
            // kernels and copies were not recorded, never a CPU-only one.
            holds.push(TraceHolds::NoKernelEvents);
            host_only_figures(&facts, c, holds);
        } else {
            holds.push(TraceHolds::CpuOnly);
            host_only_figures(&facts, c, holds);
        }
    }
}

/// Whether a trace without device events shows a device at work that the profiler did not record:
/// `[memory]` events on a device (allocations only a run on it makes). Apple's MPS is left out
/// (the profiler cannot record it at all: its own finding says so), and so are operator names
/// alone, which the CPU-only finding already reads as a run recorded without its device.
fn device_unrecorded(facts: &[&RankFacts]) -> bool {
    facts.iter().any(|f| {
        f.host_only
            .as_ref()
            .and_then(|h| h.device_memory.as_ref())
            .is_some_and(|m| m.kind != DeviceKind::Mps)
    })
}

/// One-off first calls above this share (%) of the host's span make a trace without device work
/// one cold pass (as [`crate::report::cold::COLD_START_PCT`] does of a GPU window).
pub const HOST_COLD_START_PCT: f64 = crate::report::cold::COLD_START_PCT;

/// A trace without device work: its operators by self time, its host (the rank with the longest
/// span), and `cold_start` when one-off first calls fill most of that span.
fn host_only_figures(facts: &[&RankFacts], c: &mut TraceContext, holds: &mut Vec<TraceHolds>) {
    c.top_ops = top_ops(facts);
    c.host_only = facts
        .iter()
        .filter_map(|f| f.host_only.clone())
        .max_by_key(|h| h.span_ns);
    let cold = c.host_only.as_ref().is_some_and(|h| {
        h.span_ns > 0 && crate::report::inputs::pct(h.one_off_ns, h.span_ns) >= HOST_COLD_START_PCT
    });
    if cold {
        holds.push(TraceHolds::ColdStart);
    }
}

/// Holds about a trace with device work: what is missing from it, what it repeats.
pub(super) fn after_replay(
    parts: &[&RankContextPart],
    c: &mut TraceContext,
    holds: &mut Vec<TraceHolds>,
) {
    let facts: Vec<&RankFacts> = parts.iter().map(|p| &p.facts).collect();
    c.data_loss = data_loss_sentence(parts);
    let mut fused: Vec<i64> = facts.iter().flat_map(|f| f.fused_ranks.clone()).collect();
    let split: Vec<i64> = facts.iter().flat_map(|f| f.fused_split.clone()).collect();
    c.fused_split = fused.is_empty() && !split.is_empty();
    fused.extend(split);
    crate::sort::sort(&mut fused);
    fused.dedup();
    if !fused.is_empty() {
        holds.push(TraceHolds::FusedRanks);
        c.fused_ranks = fused;
    }
    if c.device_ops == 0 {
        return;
    }
    let ops: u64 = facts.iter().map(|f| f.ops).sum();
    if ops == 0 {
        holds.push(TraceHolds::GpuOnly);
    }
    c.graph_correlated = facts.iter().map(|f| f.graph_correlated).sum();
    c.graph_orphans = facts.iter().map(|f| f.graph_orphans).sum();
    c.replayed_kernels = facts.iter().map(|f| f.replayed_kernels).sum();
    c.unrecorded = unrecorded_of(&facts, c.graph_correlated > 0);
    let device_window: i64 = facts.iter().map(|f| f.device_window_ns).sum();
    let partial = c.unrecorded.waits > 0
        && c.unrecorded.tail_ns as f64 >= UNRECORDED_WINDOW_SHARE * device_window as f64;
    if !partial {
        c.unrecorded = Default::default();
    }
    if dropped(c.orphan_launches, c.correlated_launches)
        || dropped(c.graph_orphans, c.graph_correlated)
        || partial
    {
        holds.push(TraceHolds::EventsDropped);
    }
    if let Some(r) = micro_repeats(&facts) {
        holds.push(TraceHolds::Microbenchmark);
        c.repeats = Some(r);
    }
    // A script of named phases compared one after another: a micro-benchmark of variants. One
    // rank's phases (the first that has them): the ranks of a set run the same script.
    if let Some(f) = facts.iter().find(|f| f.phases.len() >= 2) {
        if !holds.contains(&TraceHolds::Microbenchmark) {
            holds.push(TraceHolds::Microbenchmark);
        }
        c.phases = f.phases.clone();
    }
}

/// The ranks' waits that outlast the recorded device work: every such wait when the trace replays
/// graphs (their kernels may be under-recorded anywhere), else only the tails past the last
/// recorded device operation (mid-trace, a wait on an idle device may wait on another process:
/// that is [`crate::report::attribution::IdleCause::BlockedWait`]).
fn unrecorded_of(facts: &[&RankFacts], graphs: bool) -> super::UnrecordedWaits {
    let mut out = super::UnrecordedWaits::default();
    for f in facts {
        let u = &f.unrecorded;
        let tail = if graphs { u.tail_ns } else { u.end_tail_ns };
        if tail == 0 {
            continue;
        }
        out.waits += u.waits;
        out.tail_ns += tail;
        out.end_tail_ns += u.end_tail_ns;
        if let Some(l) = &u.longest {
            if out
                .longest
                .as_ref()
                .is_none_or(|o| l.1 > o.1 || l.1 == o.1 && l.0 < o.0)
            {
                out.longest = Some(l.clone());
            }
        }
    }
    out
}

/// Launches without their device operation beyond the tolerance.
pub fn dropped(orphans: u64, launches: u64) -> bool {
    orphans >= DROPPED_MIN_LAUNCHES && orphans as f64 >= DROPPED_MIN_SHARE * launches as f64
}

/// The set's repeated work when every rank is a micro-benchmark of the same operation: one kernel
/// repeated, or copies only, launched (joined by `External id`) from one or two CPU operators.
fn micro_repeats(facts: &[&RankFacts]) -> Option<Repeats> {
    let first = &facts.first()?.repeats;
    let each = facts.iter().all(|f| {
        let r = &f.repeats;
        let launched_by_one_op = r.launching_ops.len() <= MICRO_MAX_LAUNCHING_OPS
            && r.linked as f64
                >= MICRO_TOP_SHARE * r.top_kernel.as_ref().map_or(r.copies, |k| k.1) as f64;
        let copies_only = r.kernels == 0 && r.copies >= MICRO_MIN_REPEATS && copies_fill(r);
        let one_kernel = r.top_kernel.as_ref().is_some_and(|(name, calls, ns)| {
            *calls >= MICRO_MIN_REPEATS
                && *ns as f64 >= MICRO_TOP_SHARE * r.kernel_ns as f64
                && r.distinct_kernels <= MICRO_MAX_KERNEL_NAMES
                && first.top_kernel.as_ref().is_some_and(|t| &t.0 == name)
        });
        launched_by_one_op && (copies_only || one_kernel) || copy_bench(r)
    });
    each.then(|| merged(facts))
}

/// A copy benchmark: a few device operations (under [`MICRO_MAX_COPY_BENCH_OPS`]) whose time is
/// mostly copies ([`MICRO_TOP_SHARE`]), however few copies (one timed transfer is a benchmark).
fn copy_bench(r: &Repeats) -> bool {
    copies_fill(r)
        && r.copies > 0
        && r.kernels + r.copies < MICRO_MAX_COPY_BENCH_OPS
        && r.copy_ns as f64 >= MICRO_TOP_SHARE * r.device_ns as f64
}

/// Whether the copies fill [`MICRO_COPY_SPAN_SHARE`] of the trace's span: a GPU run whose host
/// computes for most of the window and then copies is not a copy benchmark, however much of the
/// device time the copies are.
fn copies_fill(r: &Repeats) -> bool {
    r.copy_ns as f64 >= MICRO_COPY_SPAN_SHARE * r.span_ns as f64
}

/// The ranks' repeated work added up (the same whatever order the ranks come in).
fn merged(facts: &[&RankFacts]) -> Repeats {
    let mut out = Repeats::default();
    let mut ops = std::collections::BTreeSet::new();
    for f in facts {
        let r = &f.repeats;
        out.kernels += r.kernels;
        out.copies += r.copies;
        out.kernel_ns += r.kernel_ns;
        out.linked += r.linked;
        out.copy_ns += r.copy_ns;
        out.device_ns += r.device_ns;
        out.span_ns += r.span_ns;
        out.distinct_kernels = out.distinct_kernels.max(r.distinct_kernels);
        ops.extend(r.launching_ops.iter().cloned());
        if let Some((name, calls, ns)) = &r.top_kernel {
            let t = out.top_kernel.get_or_insert((name.clone(), 0, 0));
            t.1 += calls;
            t.2 += ns;
        }
    }
    out.launching_ops = ops.into_iter().collect();
    out
}

fn top_ops(facts: &[&RankFacts]) -> Vec<super::OpTotal> {
    let mut all: Vec<super::OpTotal> = facts.iter().flat_map(|f| f.top_ops.clone()).collect();
    crate::sort::sort_by(&mut all, |a, b| {
        b.self_ns.cmp(&a.self_ns).then(a.name.cmp(&b.name))
    });
    all.truncate(super::host_only::TOP_OPS);
    all
}

/// The set's device: the first rank's kind that is known, its name, the devices over all ranks. A
/// cut file is never said to be on the CPU.
fn device_of(parts: &[&RankContextPart], cut: bool) -> DeviceContext {
    // Smallest first, so that the order the ranks come in does not matter.
    let devices: Vec<_> = parts.iter().map(|p| &p.facts.device).collect();
    let known = |k: DeviceKind| !matches!(k, DeviceKind::Unknown | DeviceKind::Cpu);
    let mut kind = devices
        .iter()
        .map(|d| d.kind)
        .filter(|k| known(*k))
        .min()
        .or_else(|| devices.iter().map(|d| d.kind).min())
        .unwrap_or_default();
    if kind == DeviceKind::Cpu && (cut || devices.iter().any(|d| d.kind != DeviceKind::Cpu)) {
        kind = DeviceKind::Unknown;
    }
    DeviceContext {
        kind,
        name: devices.iter().filter_map(|d| d.name.clone()).min(),
        count: devices.iter().map(|d| d.count).sum(),
    }
}

/// What was lost while loading, in one sentence per file: what was read, what is missing, what the
/// figures still mean. `None` when no file lost data. The one definition the report's first line
/// and the page's share.
pub fn data_loss_sentence(parts: &[&RankContextPart]) -> Option<RichText> {
    let mut lost: Vec<(String, RichText)> = parts
        .iter()
        .filter(|p| !p.facts.data_loss.is_empty())
        .map(|p| {
            let t = file_loss(p);
            (t.to_markdown(), t)
        })
        .collect();
    crate::sort::sort_by(&mut lost, |a, b| a.0.cmp(&b.0));
    (!lost.is_empty()).then(|| RichText::join(lost.into_iter().map(|(_, t)| t), " "))
}

fn file_loss(p: &RankContextPart) -> RichText {
    let f = &p.facts;
    let file = if p.identity.file.is_empty() {
        rich!("The file")
    } else {
        rich!(rich_file(&p.identity.file))
    };
    let span = p.span.map_or(String::new(), |(a, b)| {
        format!(", covering {} of trace time", dur(b - a))
    });
    let read = format!(
        "{} events were read ({}{span})",
        f.events_read,
        crate::report::format::bytes(f.text_bytes)
    );
    if p.cut {
        let device = if p.device_ops == 0 {
            "no device event was read, and as the profiler writes device events after the host's, they may all lie past the cut: their absence says nothing of where the model ran"
        } else {
            "the events after the cut are missing, device events most likely among them"
        };
        return rich!(
            "Data loss: ",
            file,
            format!(" was cut off mid-write. {read}; {device}. The figures describe only the part read: totals and shares are of that part, and the last step may be incomplete.")
        );
    }
    let what: Vec<String> = f
        .data_loss
        .iter()
        .map(|l| format!("{} {}", l.count, l.what))
        .collect();
    rich!(
        "Data loss while loading ",
        file,
        format!(
            ": {}. {read}; the figures leave the lost events out.",
            what.join("; ")
        )
    )
}

/// The findings a hold withholds: idle causes when the device timeline has holes (dropped events),
/// is one of several ranks fused together, or comes without the host; overlap when the host and
/// the compute are missing; idle-based advice for a micro-benchmark, whose gaps are the harness's.
pub fn withheld_findings(ctx: &TraceContext) -> Vec<FindingId> {
    const IDLE: [FindingId; 8] = [
        FindingId::DataLoading,
        FindingId::Synchronization,
        FindingId::WaitOutsideTrace,
        FindingId::HostBound,
        FindingId::HostOverhead,
        FindingId::HostStall,
        FindingId::LaunchOverhead,
        FindingId::Warmup,
    ];
    let mut out = Vec::new();
    let idle = [
        TraceHolds::EventsDropped,
        TraceHolds::GpuOnly,
        TraceHolds::FusedRanks,
        TraceHolds::Microbenchmark,
    ];
    if idle
        .iter()
        .any(|h| ctx.holds(*h) && (*h != TraceHolds::FusedRanks || fused_unsplit(ctx)))
    {
        out.extend(IDLE);
    }
    if ctx.holds(TraceHolds::GpuOnly) {
        out.push(FindingId::Communication);
    }
    if fused_unsplit(ctx) {
        out.push(FindingId::Straggler);
    }
    out
}

/// Ranks fused into one file that could not be split into its ranks (read as one timeline).
fn fused_unsplit(ctx: &TraceContext) -> bool {
    ctx.holds(TraceHolds::FusedRanks) && !ctx.fused_split
}

/// Whether the idle attribution is withheld from the report.
pub fn idle_withheld(ctx: &TraceContext) -> bool {
    withheld_findings(ctx).contains(&FindingId::DataLoading)
}

/// What the trace lacks that the reader must know before any figure (the report's first lines
/// after the data loss, the main finding and the device).
pub fn trace_lines(ctx: &TraceContext) -> Vec<RichText> {
    let mut out: Vec<RichText> = Vec::new();
    if !ctx.fused_ranks.is_empty() && ctx.fused_split {
        out.push(format!(
            "This one file holds {} ranks ({}) written together by a merge tool: it was split into its ranks, each analysed on its own timeline and compared with the others as a rank set.",
            ctx.fused_ranks.len(),
            rank_list(&ctx.fused_ranks)
        ).into());
    }
    if !ctx.fused_ranks.is_empty() && !ctx.fused_split {
        out.push(format!(
            "This one file holds {} ranks ({}) written together by a merge tool: they are read as one timeline, so per-rank idle causes and straggler comparisons are withheld. Load each rank's own file together to analyse them as a rank set.",
            ctx.fused_ranks.len(),
            rank_list(&ctx.fused_ranks)
        ).into());
    }
    if ctx.holds(TraceHolds::GpuOnly) {
        out.push(format!(
            "The trace holds device events only ({} device operations) and no host events (no CPU operators, no runtime calls): what the GPU waited for cannot be known, so no idle cause and no communication overlap is claimed.",
            ctx.device_ops
        ).into());
    }
    if ctx.holds(TraceHolds::EventsDropped) && dropped(ctx.orphan_launches, ctx.correlated_launches)
    {
        out.push(if ctx.orphans_trail {
            rich!(format!("The last {} of {} kernel launches have no device operation in the trace (matched by correlation id), and every one of them came after the last launch whose kernel was recorded: the profiler stopped while the {} still had them queued (the host ran ahead of the device), so the device's work at the end is unrecorded and idle-based findings are withheld. Synchronize before the profiler stops (", ctx.orphan_launches, ctx.correlated_launches, ctx.device.kind.device_word()), code("torch.cuda.synchronize()"), " before the last ", code("prof.step()"), " or the end of the ", code("with torch.profiler.profile(...)"), " block) so the queued work is recorded.")
        } else {
            rich!(format!("{} of {} kernel launches have no device operation in the trace (matched by correlation id): the profiler dropped device events, so the GPU's idle time is unknowable and idle-based findings are withheld. Re-record with a shorter active window (fewer steps in ", ctx.orphan_launches, ctx.correlated_launches), code("schedule(active=...)"), ") so the profiler's activity buffers do not overflow.")
        });
    }
    if ctx.holds(TraceHolds::EventsDropped) && dropped(ctx.graph_orphans, ctx.graph_correlated) {
        out.push(format!(
            "{} of {} graph launches (replays) have no device operation in the trace: the kernels they replayed were not recorded, so the {}'s busy and idle time during the replays is unknowable and idle-based findings are withheld. Re-record with a PyTorch whose profiler traces the kernels inside graphs, or profile an eager (uncaptured) step.",
            ctx.graph_orphans,
            ctx.graph_correlated,
            ctx.device.kind.device_word()
        ).into());
    }
    if let Some((call, longest)) = &ctx.unrecorded.longest {
        out.push(rich!(format!("The device record is incomplete: {} host {} for the device return {} in total after the last device operation recorded before {} (longest ", ctx.unrecorded.waits, if ctx.unrecorded.waits == 1 { "wait" } else { "waits" }, dur(ctx.unrecorded.tail_ns), if ctx.unrecorded.waits == 1 { "it" } else { "them" }), runtime(call), format!(", {}){}. The {} was working on operations the profiler did not record, so the trace cannot say whether it was busy or idle then, and idle-based findings are withheld. Re-record with a shorter active window (", dur(*longest), if ctx.graph_correlated > 0 {
                format!("; the trace replays {}, whose kernels are under-recorded", crate::report::wording::count(ctx.graph_correlated, "graph"))
            } else {
                String::new()
            }, ctx.device.kind.device_word()), code("schedule(active=...)"), ") and check that every stream and graph replay is traced."));
    }
    if ctx.replayed_kernels > 0 {
        out.push(replayed_line(ctx));
    }
    if ctx.origin == Some(TraceOrigin::PytorchLegacy) {
        out.push(rich!(
            "This is a legacy ",
            code("torch.autograd.profiler"),
            " export (CPU operators, no Kineto device timeline)",
            (ctx.device_ops > 0).then_some(
                "; its `CUDA functions` are per-operator CUDA time ranges nested as the operators are (`aten::conv2d` ⊃ `aten::convolution` ⊃ `aten::cudnn_convolution`), not kernels: only the innermost range of each nest is counted as device time, and the names in the kernel table are operators"
            ),
            ". Record a Kineto trace instead: ",
            record_kineto(
                ctx.device_ops > 0
                    || ctx.device.count > 0
                    || ctx.device.name.is_some()
                    || ctx.host_only.as_ref().is_some_and(|h| h.evidence_kind.is_some()),
                ctx.apple()
            ),
            "."
        ));
    }
    out
}

/// "1,200 kernels, 960 of them replayed from 40 CUDA graph launches: ...": kernels run from a
/// captured graph are not launched one by one, so no launch figure counts them.
fn replayed_line(ctx: &TraceContext) -> RichText {
    let graph = if ctx.device.kind == DeviceKind::Rocm {
        "HIP graph"
    } else {
        "CUDA graph"
    };
    let launched = ctx.kernels.saturating_sub(ctx.replayed_kernels);
    format!(
        "{} kernels, {} of them replayed from {} {graph} launches (one launch call runs a whole graph): {} {} launched one by one, and launch-overhead figures count only those.",
        ctx.kernels,
        ctx.replayed_kernels,
        ctx.graph_launches,
        launched,
        if launched == 1 { "was" } else { "were" }
    )
    .into()
}

/// How to record a Kineto trace, as code: with the CUDA activity only when something says the run
/// used a GPU (a device operation, a device seen, an operator that runs on one), else the CPU's
/// with a word on adding CUDA (none for a run recorded on a Mac: `apple`, which has no CUDA).
pub fn record_kineto(gpu: bool, apple: bool) -> RichText {
    if gpu {
        rich!(RECORD_KINETO)
    } else if apple {
        rich!(RECORD_KINETO_CPU)
    } else {
        rich!(
            RECORD_KINETO_CPU,
            " (add ",
            code("torch.profiler.ProfilerActivity.CUDA"),
            " to the activities if the model runs on a GPU)"
        )
    }
}

/// [`RECORD_KINETO`] without the CUDA activity, for a run with no sign of a GPU.
const RECORD_KINETO_CPU: &str = "`with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], schedule=torch.profiler.schedule(wait=1, warmup=2, active=3), on_trace_ready=torch.profiler.tensorboard_trace_handler(\"./log\")) as prof:` and `prof.step()` after each iteration";

/// How to record a Kineto trace, as code.
pub const RECORD_KINETO: &str = "`with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA], schedule=torch.profiler.schedule(wait=1, warmup=2, active=3), on_trace_ready=torch.profiler.tensorboard_trace_handler(\"./log\")) as prof:` and `prof.step()` after each iteration";

/// "Device: 8 × NVIDIA H100 (cuda)".
pub fn device_line(ctx: &TraceContext) -> String {
    let d = &ctx.device;
    let count = if d.count > 1 {
        format!("{} × ", d.count)
    } else {
        String::new()
    };
    let idle = if ctx.device_ops == 0 && d.kind != DeviceKind::Cpu {
        ", with no device work recorded"
    } else {
        ""
    };
    match (&d.name, d.kind) {
        (_, DeviceKind::Cpu) => "Device: none (host events only)".to_string(),
        (Some(n), k) => format!("Device: {count}{n} ({k}){idle}"),
        (None, DeviceKind::Unknown) => format!("Device: not named in the trace{idle}"),
        (None, k) => format!("Device: {count}{} ({k}){idle}", kind_words(k)),
    }
}

fn kind_words(k: DeviceKind) -> &'static str {
    match k {
        DeviceKind::Cuda => "NVIDIA GPU",
        DeviceKind::Rocm => "AMD GPU",
        DeviceKind::Mtia => "Meta MTIA accelerator",
        DeviceKind::Npu => "Ascend NPU",
        DeviceKind::Xpu => "Intel GPU",
        DeviceKind::Mps => "Apple GPU (MPS)",
        DeviceKind::Cpu => "CPU",
        DeviceKind::Unknown => "unknown device",
    }
}

fn rank_list(ranks: &[i64]) -> String {
    match (ranks.first(), ranks.last()) {
        (Some(a), Some(b)) if ranks.len() as i64 == b - a + 1 => format!("ranks {a}-{b}"),
        _ => ranks
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}
