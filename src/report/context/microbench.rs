//! A micro-benchmark's measured figure (what repeats, how often, how long each takes), said
//! instead of a recoverable time: the gaps between its calls are the harness's, not a model's.

use super::{TraceContext, TraceHolds};
use crate::report::inputs::{pct, DiagnosisInputs};
use crate::report::rich_text::{kernel, name, NameKind, RichText};
use crate::report::wording::dur;
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
    if let Some(k) = i.kernels.first() {
        return Some(rich!("A micro-benchmark of one operation: ", kernel(&k.name), format!(" runs {} times, {} each on average ({:.1}% of kernel time; the GPU is busy {busy:.1}% of the {} window). That per-call time is what it measures; the gaps between calls are the harness's, not recoverable time.", k.calls, dur(k.total_ns / k.calls.max(1) as i64), pct(k.total_ns, i.kernel_time_ns), dur(i.time.window_ns))));
    }
    let c = i.copies.first()?;
    let rate = if c.bytes > 0 && c.total_ns > 0 {
        format!(", {:.1} GB/s", c.bytes as f64 / c.total_ns as f64)
    } else {
        String::new()
    };
    Some(rich!(format!("A copy benchmark: {} copies ", c.count), name(NameKind::Copy, &c.name), format!(", {} each on average{rate} (the GPU is busy {busy:.1}% of the {} window). That transfer rate is what it measures; the gaps between copies are the harness's, not recoverable time.", dur(c.total_ns / c.count.max(1) as i64), dur(i.time.window_ns))))
}
