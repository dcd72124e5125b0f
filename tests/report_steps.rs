//! `report --steps A..B` (and `diagnose_steps`, the MCP `report` tool's `first_step`/`last_step`):
//! the diagnosis runs on exactly the chosen ProfilerSteps. Traces built in code whose steps differ in
//! a way the report must show: other kernels, a DataLoader stall, a warm-up step the automatic
//! window leaves out; ranges the trace does not have are refused in words that say which it has.

use crate::common::has_finding as has;
use crate::common::TraceBuilder;

use profile_model::report::diagnosis::{diagnose, diagnose_steps, DiagnosisReport};
use profile_model::report::findings::FindingId;
use profile_model::table::TraceSet;

const STEP_US: f64 = 1000.0;
const DATA_LOADER: &str = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";

/// Steps `1..=n`, each 1 ms: steps 1-3 run 8 × 90 µs `alpha_gemm`; from step 4 on, a 600 µs
/// DataLoader wait and then 4 × 80 µs `beta_gemm`.
fn two_phase(n: i64) -> TraceBuilder {
    let mut b = TraceBuilder::new();
    for step in 1..=n {
        let t0 = (step - 1) as f64 * STEP_US;
        b.step(step, t0, STEP_US);
        if step <= 3 {
            for k in 0..8 {
                let k = k as f64;
                b.kernel(
                    "alpha_gemm",
                    7,
                    t0 + 5.0 + 10.0 * k,
                    5.0,
                    t0 + 20.0 + 100.0 * k,
                    90.0,
                );
            }
        } else {
            b.cpu_op(DATA_LOADER, t0 + 1.0, 600.0);
            for k in 0..4 {
                let k = k as f64;
                b.kernel(
                    "beta_gemm",
                    7,
                    t0 + 610.0 + 10.0 * k,
                    5.0,
                    t0 + 650.0 + 90.0 * k,
                    80.0,
                );
            }
        }
    }
    b
}

fn set_of(b: &TraceBuilder) -> TraceSet {
    TraceSet::single(b.table("steps.json"))
}

/// (name, calls, total µs) of the report's top kernels.
fn kernels(r: &DiagnosisReport) -> Vec<(String, u64, f64)> {
    r.top_kernels
        .iter()
        .map(|k| {
            (
                k.name.clone(),
                k.calls,
                (k.total_us * 1000.0).round() / 1000.0,
            )
        })
        .collect()
}

#[test]
fn the_chosen_steps_are_exactly_what_the_diagnosis_reads() {
    let set = set_of(&two_phase(6));
    let auto = diagnose(&set);
    assert_eq!(
        auto.context.steps,
        Some((1, 6)),
        "{}",
        auto.context.analysed
    );
    assert!(!auto.context.steps_chosen);
    assert_eq!(auto.context.step_numbers, vec![1, 2, 3, 4, 5, 6]);
    assert_eq!(
        kernels(&auto),
        vec![
            ("alpha_gemm".to_string(), 24, 24.0 * 90.0),
            ("beta_gemm".to_string(), 12, 12.0 * 80.0)
        ]
    );

    let early = diagnose_steps(&set, Some((1, 3))).unwrap();
    assert_eq!(
        kernels(&early),
        vec![("alpha_gemm".to_string(), 24, 2160.0)]
    );
    assert_eq!(early.context.steps, Some((1, 3)));
    assert!(early.context.steps_chosen);
    assert!(
        early
            .context
            .analysed
            .starts_with("Analysed: steps 1-3 (3 steps, as chosen)"),
        "{}",
        early.context.analysed
    );
    assert!(!has(&early, FindingId::DataLoading), "{:?}", early.findings);

    let late = diagnose_steps(&set, Some((4, 6))).unwrap();
    assert_eq!(kernels(&late), vec![("beta_gemm".to_string(), 12, 960.0)]);
    assert_eq!(late.context.steps, Some((4, 6)));
    assert!(has(&late, FindingId::DataLoading), "{:?}", late.findings);

    // One step (4 kernels: below the gate's 5, so "too little to diagnose", but its figures are
    // of that step); two steps say so; a range wider than the trace keeps the steps it has.
    let one = diagnose_steps(&set, Some((5, 5))).unwrap();
    assert_eq!(kernels(&one), vec![("beta_gemm".to_string(), 4, 320.0)]);
    assert_eq!(one.context.steps, Some((5, 5)));
    let two = diagnose_steps(&set, Some((1, 2))).unwrap();
    assert_eq!(kernels(&two), vec![("alpha_gemm".to_string(), 16, 1440.0)]);
    assert!(
        two.context
            .analysed
            .starts_with("Analysed: steps 1-2 (2 steps, as chosen)"),
        "{}",
        two.context.analysed
    );
    let wide = diagnose_steps(&set, Some((3, 40))).unwrap();
    assert_eq!(wide.context.steps, Some((3, 6)));
    assert_eq!(
        kernels(&wide),
        vec![
            ("beta_gemm".to_string(), 12, 960.0),
            ("alpha_gemm".to_string(), 8, 720.0)
        ]
    );
    // No range: the automatic window, as `diagnose`.
    assert_eq!(
        diagnose_steps(&set, None).unwrap().to_markdown(),
        auto.to_markdown()
    );
}

#[test]
fn a_chosen_warm_up_step_is_analysed_not_left_out() {
    // Step 1 lasts 5 ms (five times the others): the automatic window leaves it out as warm-up.
    let mut b = TraceBuilder::new();
    b.step(1, 0.0, 5000.0);
    for k in 0..2 {
        let k = k as f64;
        b.kernel(
            "first_call_kernel",
            7,
            10.0 + k,
            1.0,
            100.0 + 1000.0 * k,
            900.0,
        );
    }
    for step in 2..=6 {
        let t0 = 5000.0 + (step - 2) as f64 * STEP_US;
        b.step(step, t0, STEP_US);
        b.kernel("steady_kernel", 7, t0 + 5.0, 5.0, t0 + 20.0, 900.0);
    }
    let set = set_of(&b);
    let auto = diagnose(&set);
    assert_eq!(
        auto.context.steps,
        Some((2, 6)),
        "{}",
        auto.context.analysed
    );
    assert!(
        auto.context.analysed.contains("left out"),
        "{}",
        auto.context.analysed
    );
    assert_eq!(
        kernels(&auto),
        vec![("steady_kernel".to_string(), 5, 4500.0)]
    );

    let warm = diagnose_steps(&set, Some((1, 1))).unwrap();
    assert_eq!(warm.context.steps, Some((1, 1)));
    assert!(warm.context.warmup.is_none());
    assert!(
        !warm.context.analysed.contains("left out"),
        "{}",
        warm.context.analysed
    );
    assert_eq!(
        kernels(&warm),
        vec![("first_call_kernel".to_string(), 2, 1800.0)]
    );
}

#[test]
fn a_range_the_trace_lacks_is_refused_in_words() {
    let set = set_of(&two_phase(6));
    let e = diagnose_steps(&set, Some((9, 12))).unwrap_err();
    assert_eq!(
        e,
        "no ProfilerStep in 9..12: the trace has steps 1-6 (rank 0)"
    );

    // Two ranks, the second without step 6: step 6 alone is refused, naming that rank.
    let ranks = TraceSet::from_tables(vec![
        two_phase(6).rank(0, 2).table("rank0.json"),
        two_phase(5).rank(1, 2).table("rank1.json"),
    ]);
    let e = diagnose_steps(&ranks, Some((6, 6))).unwrap_err();
    assert_eq!(e, "no ProfilerStep in 6..6 on rank: rank 1 has steps 1-5");
    let both = diagnose_steps(&ranks, Some((4, 6))).unwrap();
    // Every rank analyses the same steps: those of the range all of them have.
    assert_eq!(both.context.steps, Some((4, 5)));
    assert_eq!(both.context.step_numbers, vec![1, 2, 3, 4, 5]);
    assert_eq!(
        kernels(&both),
        vec![("beta_gemm".to_string(), 8 + 8, 16.0 * 80.0)]
    );

    // A trace without steps.
    let mut b = TraceBuilder::new();
    b.kernel("k", 7, 0.0, 5.0, 10.0, 100.0);
    let e = diagnose_steps(&set_of(&b), Some((1, 2))).unwrap_err();
    assert!(e.contains("no ProfilerStep annotation"), "{e}");
}

use crate::common::cli;

#[test]
fn report_steps_on_the_command_line() {
    let dir = std::env::temp_dir().join(format!("pm-report-steps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("steps.json");
    std::fs::write(&path, two_phase(6).json()).unwrap();
    let p = path.to_str().unwrap();

    let (code, out, err) = cli(&["report", "--json", "--steps", "4..6", p]);
    assert_eq!(code, 0, "{err}");
    let r: DiagnosisReport = serde_json::from_str(&out).unwrap();
    assert_eq!(kernels(&r), vec![("beta_gemm".to_string(), 12, 960.0)]);
    assert_eq!(r.context.steps, Some((4, 6)));
    let (code, md, _) = cli(&["report", "--steps", "2..3", p]);
    assert_eq!(code, 0);
    assert!(
        md.contains("Analysed: steps 2-3 (2 steps, as chosen)"),
        "{md}"
    );
    assert!(
        md.contains("alpha_gemm") && !md.contains("beta_gemm"),
        "{md}"
    );

    let (code, _, err) = cli(&["report", "--steps", "9..12", p]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("no ProfilerStep in 9..12: the trace has steps 1-6"),
        "{err}"
    );
    let (code, _, err) = cli(&["report", "--steps", "6..4", p]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("first step (6) comes after its last (4)"),
        "{err}"
    );
    let (code, _, err) = cli(&["report", "--steps", "four", p]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("A..B or N"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
