//! Notes on the trace that are not recommendations: a warm-up left out, a refused cut, a cold pass, a
//! cut file, graph replays, separate runs, one rank of a communicating job.

use crate::report::context::{TraceContext, TraceHolds};
use crate::report::inputs::DiagnosisInputs;
use crate::report::rich_text::{code, RichText};
use crate::rich;

/// Notes on the trace that are not recommendations (one rank only, a warm-up left out, a cut file).
pub fn notes(inputs: &DiagnosisInputs, ctx: &TraceContext) -> Vec<RichText> {
    let mut out: Vec<RichText> = Vec::new();
    if let Some(w) = &ctx.warmup {
        if ctx.holds(TraceHolds::Warmup) {
            out.push(
                format!(
                    "A warm-up was left out of the analysis{}: {}.",
                    if w.steps.is_empty() {
                        String::new()
                    } else {
                        let word = if w.steps.len() == 1 { "step" } else { "steps" };
                        format!(" ({word} {})", join_steps(&w.steps))
                    },
                    warmup_words(ctx)
                )
                .into(),
            );
        }
    }
    if let Some(c) = &ctx.cut_refused {
        out.push(crate::report::gate::note(c).into());
    }
    if ctx.holds(TraceHolds::ColdStart) {
        out.push(rich!(
            "This trace is one cold pass (one-off start-up costs dominate its window): its launch, dispatch and idle figures describe start-up, not a steady state. ",
            crate::report::cold::RECORD_AFTER_WARMUP
        ));
    }
    if ctx.holds(TraceHolds::Truncated) {
        out.push("The file was cut off mid-write (see trace health): the figures cover the events read before the cut.".into());
    }
    if ctx.holds(TraceHolds::GraphReplay) {
        let capture = if ctx.capture_calls > 0 {
            format!(
                " after {} graph capture{}: the replays are the steady state analysed, the capture is a one-off (paid once, before the replays)",
                ctx.capture_calls,
                if ctx.capture_calls == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        out.push(format!(
            "{} CUDA/HIP graph launches{capture}; the kernels they run are attributed to them; gaps inside a replay count as GPU-side gaps, not host wait.",
            ctx.graph_launches
        ).into());
    }
    if let Some(why) = &ctx.separate_runs {
        out.push(rich!(
            format!(
                "These {} files look like separate runs, not ranks of one job ({why}): compare them with ",
                inputs.ranks.len()
            ),
            code("profile-model diff BASELINE CANDIDATE"),
            " (or the page's Compare), rather than as ranks."
        ));
    }
    if let Some((ns, words)) = super::collectives::cold_collectives(inputs) {
        out.push(rich!(
            words.capitalised(),
            format!(
                ": its {} beyond the later runs is left out of the communication figures; run one collective of each kind before profiling to keep it out of the trace.",
                crate::report::wording::dur(ns)
            )
        ));
    }
    out.extend(super::sync::harness_note(&super::sync::harness_syncs(
        inputs,
        ctx.holds(TraceHolds::Microbenchmark),
    )));
    if inputs.ranks.len() == 1 && inputs.time.comm_ns > 0 {
        out.push("The job communicates but only one rank's trace was given: load every rank's file together to compare ranks.".into());
    }
    out
}

fn join_steps(steps: &[i64]) -> String {
    match (steps.first(), steps.last()) {
        (Some(a), Some(b)) if a == b => a.to_string(),
        (Some(a), Some(b)) => format!("{a}-{b}"),
        _ => String::new(),
    }
}

/// What the warm-up consisted of, in words.
pub(super) fn warmup_words(ctx: &TraceContext) -> String {
    let Some(w) = &ctx.warmup else {
        return "slow first steps".into();
    };
    let mut parts = Vec::new();
    if w.compile_events > 0 {
        parts.push(format!(
            "torch.compile compilation ({:.0} ms)",
            w.compile_ms
        ));
    }
    if w.search_calls > 0 {
        parts.push(format!(
            "{} cuDNN/MIOpen algorithm-search calls",
            w.search_calls
        ));
    }
    if w.setup_calls > 0 {
        parts.push(format!(
            "{} device set-up and allocation calls (cudaMalloc/cudaFree, ...)",
            w.setup_calls
        ));
    }
    if ctx.capture_calls > 0 {
        parts.push(format!("{} graph captures", ctx.capture_calls));
    }
    if parts.is_empty() {
        "first steps much slower than the rest".into()
    } else {
        parts.join(", ")
    }
}
