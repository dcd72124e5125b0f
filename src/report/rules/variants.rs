//! A benchmark of variants ([`crate::report::context::phases`]): each variant's wall and device
//! time per run side by side, which is faster and by how much, as one finding. What the trace
//! measures, not recoverable time: the gaps between the variants' runs are the harness's.

use super::{Draft, Finding, FindingId};
use crate::report::context::phases::{fastest_and_slowest, is_cold_single_shot, why_words, Phase};
use crate::report::context::TraceContext;
use crate::report::findings::Severity;
use crate::report::inputs::DiagnosisInputs;
use crate::report::rich_text::{code, op, RichText};
use crate::report::wording::dur;
use crate::rich;

/// The comparison of the context's phases (two or more), `None` otherwise.
pub fn variant_comparison(i: &DiagnosisInputs, ctx: &TraceContext) -> Option<Finding> {
    let phases = &ctx.phases;
    if phases.len() < 2 {
        return None;
    }
    let side_by_side = RichText::join(phases.iter().map(variant_words), "; ");
    // Variants run once each, cold: their host times are set-up, the device ranks them.
    let cold = phases.iter().all(is_cold_single_shot);
    let (fast, slow, ratio, what) = if cold {
        let fast = phases
            .iter()
            .min_by_key(|p| (p.device_per_run(), p.start_ns))?;
        let slow = phases
            .iter()
            .max_by_key(|p| (p.device_per_run(), -p.start_ns))?;
        let ratio = slow.device_per_run() as f64 / fast.device_per_run().max(1) as f64;
        (fast, slow, ratio, "on the device")
    } else {
        let (fast, slow) = fastest_and_slowest(phases)?;
        let ratio = slow.wall_per_run() as f64 / fast.wall_per_run().max(1) as f64;
        (fast, slow, ratio, "of wall time")
    };
    let (a, b) = if cold {
        (fast.device_per_run(), slow.device_per_run())
    } else {
        (fast.wall_per_run(), slow.wall_per_run())
    };
    let explanation = if cold {
        "Each variant ran once, cold: its host time is the first call's set-up (library handles, algorithm selection, module loading), so the device time ranks them.".into()
    } else {
        rich!("Why: ", why_words(slow, fast))
    };
    Some(Finding {
        severity: Severity::Info,
        ..Draft {
            id: FindingId::VariantComparison,
            headline: rich!(
                op(&fast.name),
                format!(" is {ratio:.1}× faster than "),
                op(&slow.name),
                format!(" ({} against {} {what} per run).", dur(a), dur(b))
            ),
            title: rich!(
                format!("{} variants compared: ", phases.len()),
                op(&fast.name),
                format!(" {ratio:.1}× faster than "),
                op(&slow.name)
            ),
            threshold: "two or more named regions of the script run one after another".into(),
            measured: side_by_side,
            value: ratio,
            time_ns: 0,
            explanation,
            actions: vec![rich!(
                "Confirm the ratio outside the profiler, whose per-call overhead weighs most on the variant with most launches: time each variant after untimed warm-up runs with ",
                code("torch.utils.benchmark.Timer"),
                " (it synchronises the device), or with CUDA events around many runs."
            )],
            evidence: Vec::new(),
        }
        .finish(i)
    })
}

/// "`eager`: 1.20 ms wall, 0.90 ms on the device per run (10 runs)".
fn variant_words(p: &Phase) -> RichText {
    let runs = if p.runs() > 1 {
        format!(" per run ({} runs)", p.runs())
    } else {
        String::new()
    };
    rich!(
        op(&p.name),
        format!(
            ": {} wall, {} on the device{runs}",
            dur(p.wall_per_run()),
            dur(p.device_per_run())
        )
    )
}
