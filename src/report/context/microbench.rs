//! A micro-benchmark's measured figure (what repeats, how often, how long each takes), said
//! instead of a recoverable time: the gaps between its calls are the harness's, not a model's.

use super::{TraceContext, TraceHolds};
use crate::analysis::names::{copy_kind, copy_words, CopyDirection, HostMemory};
use crate::report::inputs::{pct, DiagnosisInputs};
use crate::report::rich_text::{kernel, name, NameKind, RichText};
use crate::report::rules::copy_speed;
use crate::report::wording::{count, dur};
use crate::rich;

/// The main sentence of a micro-benchmark, `None` for any other trace.
pub fn measured_sentence(ctx: &TraceContext, i: &DiagnosisInputs) -> Option<RichText> {
    if !ctx.holds(TraceHolds::Microbenchmark) {
        return None;
    }
    if let Some(s) = super::phases::comparison_sentence(&ctx.phases) {
        return Some(s);
    }
    let busy = i.time.pct(i.time.busy_ns);
    let copies_rule = ctx.repeats.as_ref().is_some_and(|r| {
        r.copy_ns as f64 >= super::completeness::MICRO_TOP_SHARE * r.device_ns.max(1) as f64
    });
    if copies_rule {
        if let Some(s) = copy_sentence(i) {
            return Some(s);
        }
    }
    if let Some(k) = i.kernels.first() {
        return Some(rich!(
            "A micro-benchmark of one operation: ",
            kernel(&k.name),
            format!(
                " runs {}, {} each on average ({:.1}% of kernel time; the GPU is busy {busy:.1}% of the {} window). That per-call time is what it measures; the gaps between calls are the harness's, not recoverable time.",
                count(k.calls, "time"),
                dur(k.total_ns / k.calls.max(1) as i64),
                pct(k.total_ns, i.kernel_time_ns),
                dur(i.time.window_ns)
            )
        ));
    }
    copy_sentence(i)
}

/// A copy benchmark's measurement: the route with most copy time, its bytes, time per copy, rate
/// against the link it crosses, its host memory and what that means for the host.
fn copy_sentence(i: &DiagnosisInputs) -> Option<RichText> {
    let busy = i.time.busy_ns;
    let r = i.copy_routes.iter().find(|r| r.ns > 0)?;
    let copy_ns: i64 = i.copies.iter().map(|c| c.total_ns).sum();
    let what =
        copy_words(&r.name).map_or_else(|| rich!(name(NameKind::Copy, &r.name)), RichText::from);
    let rate = copy_speed::gbps(r);
    let link = match copy_kind(&r.name).map(|k| k.0) {
        Some(CopyDirection::HostToDevice | CopyDirection::DeviceToHost) => {
            i.roofline.host_link.as_ref().map(|l| (l.label(), l.gbps))
        }
        Some(CopyDirection::PeerToPeer) => {
            i.roofline.peer_link.as_ref().map(|l| (l.label(), l.gbps))
        }
        _ => None,
    };
    let judged = link.map_or(String::new(), |(label, gbps)| {
        format!(
            ", {:.0}% of {label}",
            100.0 * rate / gbps.max(f64::MIN_POSITIVE)
        )
    });
    let host = match copy_kind(&r.name).and_then(|k| k.1) {
        Some(HostMemory::Pageable) => " From pageable memory the driver stages the data through a pinned buffer and the call blocks the host until the copy ends: pinned memory (`tensor.pin_memory()`) with `non_blocking=True` is faster and leaves the host free.",
        Some(HostMemory::Pinned) => " From pinned memory the copy is asynchronous: the host is free while it runs.",
        None => "",
    };
    Some(rich!(
        "A copy benchmark of the ",
        what,
        format!(
            ": {} moved {} in {}{} at {rate:.1} GB/s{judged}; the copies are {:.0}% of the {} busy time.",
            count(r.count, "copy"),
            crate::report::format::bytes(r.bytes.max(0) as u64),
            dur(r.ns),
            if r.count > 1 {
                format!(" ({} each)", dur(r.ns / r.count as i64))
            } else {
                String::new()
            },
            pct(copy_ns, busy),
            i.device_word()
        ),
        host,
        " That transfer rate is what it measures; the gaps around it are the harness's, not recoverable time."
    ))
}
