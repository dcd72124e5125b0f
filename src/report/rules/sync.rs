//! Synchronising calls: the GPU's queue drained by a host wait, and waits for work the trace does not
//! hold; the advice follows the call, its calling op and the copy it made.

use super::{idle_headline, top_evidence, Draft, SYNC_PCT};
use crate::report::attribution::IdleCause;
use crate::report::findings::{Finding, FindingId};
use crate::report::inputs::{DiagnosisInputs, SyncFigure};
use crate::report::rich_text::{code, op, runtime, RichText};
use crate::report::wording::dur;
use crate::rich;

/// What a synchronising call's calling op means, in the user's code; `copy` is the device copy a
/// copy call made (its direction and host memory).
fn sync_cause_words(call: &str, caller: &str, copy: Option<&str>) -> RichText {
    use crate::analysis::names::{copy_kind, copy_words, CopyDirection};
    let has = |m: &str| caller.contains(m);
    let direction = copy_kind(copy.unwrap_or(call)).map(|k| k.0);
    match (direction, copy.and_then(copy_words)) {
        (Some(CopyDirection::HostToDevice), Some(words)) => {
            return rich!(
                format!("a blocking {words}: the host waits until it is done ("),
                code(".to(device)"),
                "/",
                code(".cuda()"),
                " of a CPU tensor that is not pinned): pin the source (",
                code("tensor.pin_memory()"),
                ", ",
                code("DataLoader(pin_memory=True)"),
                ") and copy with ",
                code(".to(device, non_blocking=True)"),
                ", or create the tensor on the device"
            );
        }
        (Some(CopyDirection::DeviceToDevice | CopyDirection::PeerToPeer), Some(words)) => {
            return rich!(
                format!("a blocking {words}: copy on a stream with "),
                code("non_blocking=True"),
                " (",
                code("copy_"),
                "), or avoid the copy (views, in-place ops)"
            );
        }
        _ => {}
    }
    let d2h = direction == Some(CopyDirection::DeviceToHost);
    sync_cause_words_of_caller(call, caller, d2h, has).into()
}

/// The words for a synchronising call from the op it is called in; `d2h` when it is known to be a
/// device-to-host copy.
fn sync_cause_words_of_caller(
    call: &str,
    caller: &str,
    d2h: bool,
    has: impl Fn(&str) -> bool,
) -> &'static str {
    let _ = caller;
    if crate::analysis::names::is_device_free_call(call) {
        "the caching allocator returns memory to the device every step, and each free synchronises the device: find what empties the cache (`torch.cuda.empty_cache()` in the loop, memory pressure near the limit, `PYTORCH_NO_CUDA_MEMORY_CACHING`), keep shapes static, and check `torch.cuda.memory_stats()` (`num_alloc_retries`) — a smaller batch or `expandable_segments:True` in `PYTORCH_CUDA_ALLOC_CONF` stops the churn"
    } else if has("is_nonzero") {
        "`if tensor:` (or `bool(tensor)`, `while tensor`) on a GPU tensor reads its value on the host: compare on the GPU (`torch.where`) or test a host-side value instead"
    } else if has("_local_scalar_dense") || has("aten::item") {
        "`.item()` (or `float(tensor)`, `if tensor:`) reads a GPU value on the host: keep it on the GPU, or read it every N steps"
    } else if has("nonzero")
        || has("masked_select")
        || has("aten::unique")
        || has("index_put") && has("bool")
    {
        "an op whose output size depends on the data (`nonzero`, boolean-mask indexing, `unique`) must wait for the GPU: use fixed-size forms (`torch.where(mask, x, 0)`) or move it out of the step"
    } else if d2h || has("cpu") || has("numpy") || has("tolist") {
        "a device-to-host copy (`.cpu()`, `.numpy()`, `.tolist()`, `.to(\"cpu\")`) waits for the GPU: keep the tensor on the GPU, or copy with `non_blocking=True` into pinned memory and read it later"
    } else if has("aten::to") || has("aten::copy_") || has("aten::_to_copy") {
        "a copy between host and device (`.to()`, `copy_`) that blocks the host: for a host-to-device copy pin the source and use `non_blocking=True`; for a device-to-host read keep the value on the GPU or read it later"
    } else if has("synchronize") {
        "an explicit `torch.cuda.synchronize()`: remove it from the step (time with CUDA events instead)"
    } else {
        "it waits for the GPU: move it out of the step or do it every N steps"
    }
}

/// Whether a synchronising call is the script's own (`torch.cuda.synchronize()`,
/// `event.synchronize()`): a device or event synchronisation called by no operator, or from a
/// Python `synchronize` frame, not a copy or a free.
fn is_explicit_sync(s: &SyncFigure) -> bool {
    use crate::analysis::names::{is_blocking_copy_call, is_device_free_call};
    let caller = s
        .callers
        .first()
        .map_or("(no enclosing op)", |(c, _)| c.as_str());
    !is_blocking_copy_call(&s.name)
        && !is_device_free_call(&s.name)
        && s.copy.is_none()
        && (caller == "(no enclosing op)" || caller.contains("synchronize"))
}

/// Whether a synchronising call is a benchmark harness's: an explicit synchronisation
/// ([`is_explicit_sync`]) in a micro-benchmark (`microbenchmark`), an event synchronisation
/// (timing with CUDA events), or a timing loop: no ProfilerStep, at least
/// [`crate::report::context::completeness::MICRO_MIN_REPEATS`] explicit syncs, and the top kernel
/// run the same number of times between each two of them. Its time is the measurement's: it is
/// never advised away (only a model run's syncs are).
pub fn is_harness_sync(s: &SyncFigure, i: &DiagnosisInputs, microbenchmark: bool) -> bool {
    use crate::report::context::completeness::MICRO_MIN_REPEATS;
    if !is_explicit_sync(s) {
        return false;
    }
    let event = s.name.contains("EventSynchronize");
    let timing_loop = i.steps == 0
        && s.count >= MICRO_MIN_REPEATS
        && i.kernels.first().is_some_and(|k| {
            let per = k.calls / s.count;
            per >= 1 && k.calls.abs_diff(per * s.count) <= per + 1
        });
    microbenchmark || event || timing_loop
}

/// The harness's syncs ([`is_harness_sync`]) when they are most of the synchronising calls'
/// blocked time: then no sync finding advises removing them, and a note says whose they are.
pub fn harness_syncs<'a>(i: &'a DiagnosisInputs, microbenchmark: bool) -> Vec<&'a SyncFigure> {
    let harness: Vec<&SyncFigure> = i
        .syncs
        .iter()
        .filter(|s| is_harness_sync(s, i, microbenchmark))
        .collect();
    let all: i64 = i.syncs.iter().map(|s| s.total_ns).sum();
    let theirs: i64 = harness.iter().map(|s| s.total_ns).sum();
    if harness.is_empty() || 2 * theirs < all {
        return Vec::new();
    }
    harness
}

/// The note for a benchmark harness's syncs: they are the measurement's.
pub fn harness_note(syncs: &[&SyncFigure]) -> Option<RichText> {
    if syncs.is_empty() {
        return None;
    }
    let calls = RichText::join(
        syncs.iter().map(|s| {
            rich!(
                format!("{} × ", s.count),
                runtime(&s.name),
                format!(" ({} blocked)", dur(s.total_ns))
            )
        }),
        ", ",
    );
    Some(rich!(
        "The synchronisations ",
        calls,
        " are the benchmark harness's: a timing loop synchronises around each timed call so that the time it measures includes the device's work. They are part of the measurement, not overhead to remove; the work between them is what the benchmark measures."
    ))
}

/// Reads of single values this many times per step are a loop reading one element at a time.
pub const PER_STEP_READS: f64 = 8.0;

/// "; 32 per step: a Python loop reads one element at a time ..." for scalar reads (`.item()`,
/// `if tensor:`) repeated within each step; empty otherwise.
fn per_step_reads(i: &DiagnosisInputs, count: u64, caller: &str) -> RichText {
    let scalar = ["_local_scalar_dense", "aten::item", "is_nonzero"]
        .iter()
        .any(|m| caller.contains(m));
    let steps = i.steps.max(1) as f64 * i.ranks.len().max(1) as f64;
    let per_step = count as f64 / steps;
    if !scalar || i.steps == 0 || per_step < PER_STEP_READS {
        return RichText::default();
    }
    rich!(
        format!(
            "; {per_step:.0} per step: a Python loop reads one element at a time (per-element "
        ),
        code(".item()"),
        "/",
        code(".cpu()"),
        "), each read a full synchronisation: stack the values into one tensor and read it once (",
        code(".tolist()"),
        format!("), or keep the loop on the {}", i.device_word())
    )
}

/// Synchronising calls drain the GPU's queue; it waits until the host refills it.
pub fn synchronization(i: &DiagnosisInputs) -> Option<Finding> {
    let ns = i.time.idle(IdleCause::Synchronization);
    let p = i.time.pct(ns);
    if p < SYNC_PCT || i.syncs.is_empty() {
        return None;
    }
    let n: u64 = i.syncs.iter().map(|s| s.count).sum();
    let top = &i.syncs[0];
    let from = top
        .callers
        .first()
        .map(|(c, _)| rich!(" from ", op(c)))
        .unwrap_or_default();
    let mut actions: Vec<RichText> = i
        .syncs
        .iter()
        .take(3)
        .map(|s| {
            let from = RichText::join(
                s.callers
                    .iter()
                    .take(2)
                    .map(|(c, n)| rich!(op(c), format!(" ({n}×)"))),
                ", ",
            );
            let first = s.callers.first().map_or("", |(c, _)| c.as_str());
            let what = s
                .copy
                .as_deref()
                .and_then(crate::analysis::names::copy_words)
                .map(|w| format!(" ({w})"))
                .unwrap_or_default();
            rich!(
                format!("{} × ", s.count),
                runtime(&s.name),
                format!("{what} ({} blocked), from ", dur(s.total_ns)),
                from,
                ": ",
                sync_cause_words(&s.name, first, s.copy.as_deref()),
                per_step_reads(i, s.count, first),
                "."
            )
        })
        .collect();
    actions.push("Keep values on the GPU (accumulate losses/metrics as tensors, read them once per logging interval) so the host stays ahead of the GPU.".into());
    Some(Draft {
        id: FindingId::Synchronization,
        headline: idle_headline(
            i,
            ns,
            rich!("after synchronising calls (", runtime(&top.name), from, ") drain its queue"),
        ),
        title: "Synchronisations drain the GPU queue".into(),
        threshold: format!("GPU idle caused by synchronising calls ≥ {SYNC_PCT:.0}% of the window").into(),
        measured: format!("{n} synchronising calls; GPU idle {} because of them ({p:.1}%)", dur(ns)).into(),
        value: p,
        time_ns: ns,
        explanation: format!(
            "Each synchronising call makes the host wait until the GPU finishes, so the GPU then idles until the host has launched new work: {} in total.",
            dur(ns)
        ).into(),
        actions,
        evidence: top_evidence(i.syncs.iter().flat_map(|s| s.evidence.iter().cloned()), 5),
    }
    .finish(i))
}

/// What a synchronising call reads back to the host, in the user's words (`.item()`, `.cpu()`),
/// when it is a device-to-host read: its copy goes to the host, or its caller reads a value.
fn read_words(s: &crate::report::inputs::SyncFigure) -> Option<&'static str> {
    use crate::analysis::names::{copy_kind, CopyDirection};
    let direction = s.copy.as_deref().and_then(copy_kind).map(|k| k.0);
    let caller = s.callers.first().map_or("", |(c, _)| c.as_str());
    let has = |m: &str| caller.contains(m);
    if matches!(
        direction,
        Some(
            CopyDirection::HostToDevice | CopyDirection::DeviceToDevice | CopyDirection::PeerToPeer
        )
    ) {
        return None;
    }
    if has("is_nonzero") {
        Some("`if tensor:`")
    } else if has("_local_scalar_dense") || has("aten::item") {
        Some("`.item()`")
    } else if has("tolist") {
        Some("`.tolist()`")
    } else if direction == Some(CopyDirection::DeviceToHost)
        || s.name == "Memcpy DtoH"
        || has("aten::to")
        || has("aten::_to_copy")
        || has("aten::copy_")
        || has("cpu")
    {
        Some("`.cpu()`/`.to(\"cpu\")`/`copy_`")
    } else {
        None
    }
}

/// Calls that wait for the device block the host while the traced GPU runs nothing: removing them
/// would not give the time back, since the host waits for work this trace does not hold.
pub fn wait_outside_trace(i: &DiagnosisInputs) -> Option<Finding> {
    let ns = i.time.idle(IdleCause::BlockedWait);
    let p = i.time.pct(ns);
    if p < SYNC_PCT {
        return None;
    }
    if per_element_read(i).is_some_and(|s| s.gpu_idle_ns * 2 >= ns) {
        // Most of the wait is a per-element read's round trips: [`per_element_reads`] says so.
        return None;
    }
    let blocked_idle: i64 = i.syncs.iter().map(|s| s.gpu_idle_ns).sum();
    let mut syncs: Vec<_> = i.syncs.iter().filter(|s| s.gpu_idle_ns > 0).collect();
    crate::sort::sort_by(&mut syncs, |a, b| {
        b.gpu_idle_ns.cmp(&a.gpu_idle_ns).then(a.name.cmp(&b.name))
    });
    let top = syncs.first()?;
    let from = top
        .callers
        .first()
        .map(|(c, _)| rich!(" from ", op(c)))
        .unwrap_or_default();
    let calls = RichText::join(
        syncs.iter().take(3).map(|s| {
            rich!(
                format!("{} × ", s.count),
                runtime(&s.name),
                format!(
                    " blocked {}, {} of it with the GPU running nothing",
                    dur(s.total_ns),
                    dur(s.gpu_idle_ns)
                )
            )
        }),
        "; ",
    );
    let copy = crate::analysis::names::is_blocking_copy_call(&top.name);
    let to_device = top
        .copy
        .as_deref()
        .and_then(crate::analysis::names::copy_kind)
        .map(|k| k.0)
        == Some(crate::analysis::names::CopyDirection::HostToDevice);
    let what = match read_words(top) {
        Some(read) => rich!(
            "a synchronous device-to-host read (",
            read,
            ": ",
            runtime(&top.name),
            &from,
            ")"
        ),
        None => rich!(runtime(&top.name), &from),
    };
    Some(Draft {
        id: FindingId::WaitOutsideTrace,
        headline: idle_headline(
            i,
            ns,
            rich!(
                "while the host blocks in ",
                what,
                " with nothing queued on the GPU: it waits for work this trace does not show"
            ),
        ),
        title: "The host waits for work outside the trace".into(),
        threshold: format!("GPU idle while the host blocks in a wait with nothing queued ≥ {SYNC_PCT:.0}% of the window").into(),
        measured: rich!(calls, format!("; GPU idle {} because of them ({p:.1}%)", dur(ns))),
        value: p,
        time_ns: ns,
        explanation: format!(
            "A synchronising call normally waits for the GPU to finish what was queued. Here the GPU of this trace ran nothing for {} of the {} the calls blocked, so the host was waiting for something the profiler did not record: work launched before it started, another process or device (a tensor-parallel peer, a separate scheduler), or device activity it did not trace. Removing the call would not give this time back; the trace cannot say what the job waits for.",
            dur(blocked_idle),
            dur(syncs.iter().map(|s| s.total_ns).sum()),
        ).into(),
        actions: vec![
            rich!("Find what ", runtime(&top.name), &from, " waits for: profile every process and device of the job at once (all ranks, and the scheduler or server process), with ", code("ProfilerActivity.CUDA"), " on."),
            "Profile several iterations after a warm-up with `torch.profiler.schedule(wait=1, warmup=1, active=3)`, so the trace holds whole iterations and the work the host waits for, not one call in the middle of a wait.".into(),
            if copy && to_device {
                rich!(runtime(&top.name), format!(" is a blocking {}: the host cannot queue more work until it is done; pin the source and copy with ", top.copy.as_deref().and_then(crate::analysis::names::copy_words).unwrap_or_else(|| "host-to-device copy".into())), code("non_blocking=True"), " so it overlaps.")
            } else if copy {
                rich!("If ", runtime(&top.name), " reads a result back (", code(".tolist()"), ", ", code(".item()"), ", ", code(".cpu()"), "), check which stream and which launch produce it: on a server, overlap the next batch's scheduling with this read (an overlap scheduler, ", code("non_blocking=True"), " into pinned memory).")
            } else {
                "Check for waits on events recorded by other streams or processes (`stream.wait_event`, inter-process events, NCCL barriers).".into()
            },
        ],
        evidence: top_evidence(i.syncs.iter().flat_map(|s| s.evidence.iter().cloned()), 5),
    }
    .finish(i))
}

/// This many synchronous reads of one call, each blocking the host briefly, are a loop reading one
/// element at a time.
pub const PER_ELEMENT_READS: u64 = 100;
/// ... when each blocks the host less than this (ns) on average: a round trip, not a long wait.
pub const PER_ELEMENT_MAX_NS: i64 = 100_000;

/// The synchronous device-to-host read repeated most, when it is a per-element loop
/// ([`PER_ELEMENT_READS`] calls, each under [`PER_ELEMENT_MAX_NS`]).
fn per_element_read(i: &DiagnosisInputs) -> Option<&crate::report::inputs::SyncFigure> {
    i.syncs
        .iter()
        .filter(|s| s.count >= PER_ELEMENT_READS && read_words(s).is_some())
        .filter(|s| s.total_ns / (s.count as i64) < PER_ELEMENT_MAX_NS)
        .max_by_key(|s| (s.count, s.total_ns))
}

/// Device-to-host reads one element at a time: each read is a blocking host↔device round trip
/// (the host waits for the device to drain and for the copy), so count × round trip is their cost,
/// and batching the reads into one copy removes it. Said whatever else the trace holds: the GPU
/// idle they cause is not work outside the trace.
pub fn per_element_reads(i: &DiagnosisInputs) -> Option<Finding> {
    let s = per_element_read(i)?;
    let idle = i.time.idle(IdleCause::BlockedWait) + i.time.idle(IdleCause::Synchronization);
    let stake = s.gpu_idle_ns.min(idle).max(0);
    let per = s.total_ns / s.count as i64;
    let read = read_words(s).unwrap_or("a read");
    let from = s
        .callers
        .first()
        .map(|(c, _)| rich!(" from ", op(c)))
        .unwrap_or_default();
    let p = i.time.pct(stake);
    Some(Draft {
        id: FindingId::PerElementReads,
        headline: rich!(
            format!("{} synchronous device-to-host reads (", s.count),
            read,
            from,
            format!(
                ") block the host {} in all, {} each: a loop reads one element at a time, one round trip per element.",
                dur(s.total_ns),
                dur(per)
            )
        ),
        title: "Per-element reads: one host↔device round trip each".into(),
        threshold: format!(
            "≥ {PER_ELEMENT_READS} synchronous reads of one call, each blocking < {}",
            dur(PER_ELEMENT_MAX_NS)
        ).into(),
        measured: rich!(format!("{} × ", s.count), runtime(&s.name), " (", read, format!("), {} blocked ({} each); the GPU ran nothing for {} of it", dur(s.total_ns), dur(per), dur(s.gpu_idle_ns))),
        value: p,
        time_ns: stake,
        explanation: format!(
            "Each read waits for the device to finish what was queued and then for its copy, and the host cannot queue the next work until it returns: the cost is the count times the round trip ({} × {} blocked, plus the host's own time per call). The device is not busy elsewhere: the reads themselves are the wait, so batching them gives the time back.",
            s.count,
            dur(per)
        ).into(),
        actions: vec![
            rich!("Read the whole tensor once (", code("t.cpu()"), " or ", code(".tolist()"), format!(" outside the loop, then index on the host), or keep the computation on the {} and read only the result: one round trip instead of {}.", i.device_word(), s.count)).into(),
            "If the values are needed during the loop, copy them asynchronously (`non_blocking=True` into pinned memory) and synchronise once when they are all read.".into(),
        ],
        evidence: top_evidence(s.evidence.iter().cloned(), 5),
    }
    .finish(i))
}
