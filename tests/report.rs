//! The diagnosis report of every real trace renders in the fixed order, its top-kernel table equals
//! summarize()'s, its time figures equal the analyses', and the redacted export leaks no kernel name.

use crate::common;

use profile_model::analysis::all::{analyze, AnalysisOptions};
use profile_model::analysis::gpu::KernelType;
use profile_model::analysis::summary::summarize;
use profile_model::report::diagnosis::{diagnose, diagnose_with, DiagnosisReport};
use profile_model::report::findings::FindingId;
use profile_model::table::{load_path, TraceSet};

/// The options that analyse the window the report picked (its steps, or the time after a warm-up).
fn window_options(r: &DiagnosisReport) -> AnalysisOptions {
    AnalysisOptions {
        steps: r.context.steps,
        window_ns: r.context.time_window(),
        ..Default::default()
    }
}

#[test]
fn every_real_trace_reports_in_order_and_agrees_with_the_analyses_of_its_window() {
    let files = common::kineto_trace_files();
    assert!(files.len() >= 20, "{} traces", files.len());
    for f in files {
        let name = f.display().to_string();
        let table = load_path(&f).expect("loads");
        let s = summarize(&table);
        let set = TraceSet::single(table);
        let opts = AnalysisOptions::default();
        let r = diagnose_with(&set, &analyze(&set, &opts), &opts);
        let md = r.to_markdown();
        assert_eq!(md, diagnose(&set).to_markdown(), "{name}");
        common::assert_report_sections(&md, &name);
        // The bottleneck heading names a type and is followed by a one-line reason.
        let b = r.bottleneck.as_ref().expect("bottleneck");
        assert!(md.contains(&format!(
            "### Bottleneck: {}\n\n{}.\n",
            b.kind.label(),
            b.reason
        )));
        assert!(!b.reason.is_empty() && !b.reason.contains("\n"), "{name}");
        // The report's figures are the analyses' over the window it says it analysed.
        let wall = analyze(&set, &window_options(&r));
        let kernels: Vec<_> = wall
            .kernel_breakdown
            .kernels_all_ranks
            .iter()
            .filter(|k| k.kernel_type != KernelType::Memory)
            .collect();
        let total: f64 = kernels.iter().map(|k| k.sum_us).sum();
        let mut ranked = kernels.clone();
        ranked.sort_by(|a, b| b.sum_us.total_cmp(&a.sum_us).then(a.name.cmp(&b.name)));
        assert_eq!(r.top_kernels.len(), ranked.len().min(5), "{name}");
        for (a, k) in r.top_kernels.iter().zip(&ranked) {
            assert_eq!(a.name, k.name, "{name}");
            assert_eq!(a.calls, k.count, "{name}");
            assert!(
                (a.total_us - k.sum_us).abs() < 1e-3,
                "{name}: {} vs {}",
                a.total_us,
                k.sum_us
            );
            assert!(
                (a.pct_of_kernel_time - 100.0 * k.sum_us / total).abs() < 1e-6,
                "{name}"
            );
        }
        if r.context.blocking().is_none() {
            let t = wall.temporal_breakdown.first().expect("temporal");
            assert!(
                (b.idle_pct - t.idle_pct).abs() < 1e-6,
                "{name}: idle {} vs {}",
                b.idle_pct,
                t.idle_pct
            );
            assert!(
                (b.compute_pct - t.compute_pct).abs() < 1e-6,
                "{name}: compute"
            );
            let o = &wall.comm_comp_overlap[0];
            let exposed = 100.0 * (o.comm_us - o.overlap_us) / t.window_us;
            assert!(
                (b.comm_exposed_pct - exposed).abs() < 1e-6,
                "{name}: exposed comm"
            );
        }
        if s.kernels == 0 && r.context.blocking().is_some() {
            assert!(
                r.findings.iter().all(|f| f.id != FindingId::DominantKernel),
                "{name}"
            );
        }
        assert!(
            r.findings.iter().all(|f| f.id != FindingId::Straggler),
            "{name}: one rank"
        );
        let red = r.redacted();
        let (red_json, red_md) = (red.to_json(), red.to_markdown());
        for k in &s.top_kernels {
            assert!(
                !red_json.contains(&k.name),
                "{} leaks in redacted JSON",
                k.name
            );
            // Markdown shows names in backticks, long ones cut: look for the name's start there
            // (a kernel named `Kernel` is not the table's "Kernel" heading).
            let start: String = k.name.chars().take(40).collect();
            assert!(
                !red_md.contains(&format!("`{start}")),
                "{} leaks in redacted Markdown",
                k.name
            );
        }
    }
}

/// The three invariants of every report, on every shared trace: the idle attribution sums to the
/// window's idle time; the main finding agrees with the bottleneck; no finding claims more time than
/// the window, and the idle-based findings together never claim more than the idle time.
#[test]
fn invariants_hold_on_every_shared_trace() {
    for f in common::kineto_trace_files() {
        let set = TraceSet::single(load_path(&f).expect("loads"));
        common::assert_report_invariants(&diagnose(&set), &f.display().to_string());
    }
    let pair = ["hta__sampled_rank-0.json.gz", "hta__sampled_rank-1.json.gz"]
        .map(|n| load_path(&common::trace(n)).expect("loads"));
    let set = TraceSet::from_tables(pair.into());
    common::assert_report_invariants(&diagnose(&set), "sampled ranks 0+1");
}

/// Two kernels whose short forms are the same (`at::native::vectorized_elementwise_kernel` of two
/// functors) get two different names in the report's top-kernel table.
#[test]
fn kernels_with_the_same_short_name_are_told_apart() {
    let fill = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";
    let mul = "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>, at::detail::Array<char*, 3> >(int, at::native::MulFunctor<float>, at::detail::Array<char*, 3>)";
    let mut b = common::TraceBuilder::new();
    b.kernel(fill, 7, 0.0, 5.0, 10.0, 30.0);
    b.kernel(mul, 7, 50.0, 5.0, 60.0, 20.0);
    let set = TraceSet::single(b.table("two.json"));
    let md = diagnose(&set).to_markdown();
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("vectorized_elementwise_kernel"))
        .collect();
    assert_eq!(rows.len(), 2, "{md}");
    assert!(rows[0].contains("FillFunctor"), "{}", rows[0]);
    assert!(rows[1].contains("MulFunctor"), "{}", rows[1]);
    assert_ne!(rows[0].split('|').nth(4), rows[1].split('|').nth(4));
}
