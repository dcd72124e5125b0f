//! A benchmark of variants (issue 30), built in code: named regions of the script each run several
//! times in a row are compared side by side (wall and device time per run, which is faster and by
//! how much) in one finding; a loop whose stages alternate is not a benchmark of variants.

use crate::common;
use crate::common::TraceBuilder;
use profile_model::report::context::TraceHolds;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::FindingId;
use profile_model::table::{load_bytes, TraceSet};

fn report_of(b: &TraceBuilder) -> DiagnosisReport {
    let t = load_bytes("variants.json", b.json().as_bytes()).expect("loads");
    let r = diagnose(&TraceSet::single(t));
    common::assert_report_invariants(&r, "variants");
    r
}

/// A benchmark of two variants, each run 5 times in a row under its own `record_function`: `eager`
/// (5 kernels of 20 µs, 200 µs per run) then `fused` (one 50 µs kernel, 80 µs per run).
fn two_variants() -> TraceBuilder {
    let mut b = TraceBuilder::new();
    let mut t = 0.0;
    for _ in 0..5 {
        b.annotation("eager", t, 200.0);
        for k in 0..5 {
            let at = t + 10.0 + 38.0 * k as f64;
            b.cpu_op("aten::add", at, 8.0);
            b.kernel(
                "vectorized_elementwise_kernel",
                7,
                at + 1.0,
                5.0,
                at + 8.0,
                20.0,
            );
        }
        t += 200.0;
    }
    for _ in 0..5 {
        b.annotation("fused", t, 80.0);
        b.cpu_op("aten::fused_add", t + 5.0, 8.0);
        b.kernel("triton_poi_fused_add_0", 7, t + 6.0, 5.0, t + 15.0, 50.0);
        t += 80.0;
    }
    b
}

#[test]
fn variants_run_several_times_each_are_compared_side_by_side() {
    let r = report_of(&two_variants());
    assert!(
        r.context.holds(TraceHolds::Microbenchmark),
        "{:?}",
        r.context.holds
    );
    let p = &r.context.phases;
    let figures: Vec<(&str, u64, i64, i64)> = p
        .iter()
        .map(|p| {
            (
                p.name.as_str(),
                p.runs(),
                p.wall_per_run(),
                p.device_per_run(),
            )
        })
        .collect();
    assert_eq!(
        figures,
        vec![("eager", 5, 200_000, 100_000), ("fused", 5, 80_000, 50_000)]
    );
    let f = &r.findings[0];
    assert_eq!(f.id, FindingId::VariantComparison, "{}", r.to_markdown());
    assert!(
        f.headline.to_markdown().contains(
            "`fused` is 2.5× faster than `eager` (80 µs against 200 µs of wall time per run)"
        ),
        "{}",
        f.headline.to_markdown()
    );
    let measured = f.measured.to_markdown();
    assert!(
        measured.contains("`eager`: 200 µs wall, 100 µs on the device per run (5 runs)"),
        "{measured}"
    );
    assert!(
        measured.contains("`fused`: 80 µs wall, 50 µs on the device per run (5 runs)"),
        "{measured}"
    );
    assert_eq!(f.impact.time_ns, 0, "a measurement, not recoverable time");
    assert!(
        r.main_finding.contains("A comparison of 2 variants"),
        "{}",
        r.main_finding
    );
}

/// A loop whose stages alternate (`forward`, `backward`, `forward`, ...) is not a benchmark of
/// variants, however many times it runs.
#[test]
fn alternating_stages_are_not_variants() {
    let mut b = TraceBuilder::new();
    let mut t = 0.0;
    for _ in 0..6 {
        for stage in ["forward", "backward"] {
            b.annotation(stage, t, 100.0);
            b.cpu_op("aten::mm", t + 5.0, 8.0);
            b.kernel("ampere_sgemm_128x64_tn", 7, t + 6.0, 5.0, t + 15.0, 60.0);
            t += 100.0;
        }
    }
    let r = report_of(&b);
    assert!(r.context.phases.is_empty(), "{:?}", r.context.phases);
    assert!(r
        .findings
        .iter()
        .all(|f| f.id != FindingId::VariantComparison));
}
