//! The diagnosis report of every real trace renders in the fixed order, its top-kernel table equals
//! summarize()'s, its time figures equal the analyses', and the redacted export leaks no kernel name.

mod common;

use profile_model::analysis::all::{analyze, AnalysisOptions};
use profile_model::analysis::summary::summarize;
use profile_model::report::diagnosis::{diagnose, diagnose_with};
use profile_model::table::{load_path, TraceSet};

#[test]
fn every_real_trace_reports_in_order_and_agrees_with_summary_and_analyses() {
    let files = common::kineto_trace_files();
    assert!(files.len() >= 20, "{} traces", files.len());
    for f in files {
        let name = f.display().to_string();
        let table = load_path(&f).expect("loads");
        let s = summarize(&table);
        let set = TraceSet::single(table);
        let opts = AnalysisOptions::default();
        let all = analyze(&set, &opts);
        let r = diagnose_with(&set, &all, &opts);
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
        assert!(!b.reason.is_empty() && !b.reason.contains('\n'), "{name}");
        // Top 3-5 kernels, equal to the summary's figures.
        let n = s.top_kernels.len().min(5);
        assert_eq!(r.top_kernels.len(), n, "{name}");
        if s.kernels > 0 {
            assert!(
                md.contains("| % Time | Calls | Avg (μs) | Kernel |"),
                "{name}"
            );
            let rows = md
                .lines()
                .filter(|l| l.starts_with("| ") && !l.starts_with("| %"))
                .count();
            assert_eq!(rows, n, "{name}");
        }
        for (a, b) in r.top_kernels.iter().zip(&s.top_kernels) {
            assert_eq!(a.name, b.name, "{name}");
            assert_eq!(a.calls, b.calls, "{name}");
            assert!((a.avg_us - b.avg_us).abs() < 1e-6, "{name}");
            assert!(
                (a.pct_of_kernel_time - b.pct_of_kernel_time).abs() < 1e-6,
                "{name}"
            );
            let row = format!(
                "| {:.1} | {} | {:.2} |",
                b.pct_of_kernel_time, b.calls, b.avg_us
            );
            assert!(md.contains(&row), "{row} not in {name}");
        }
        // The time shares are the analyses' (temporal breakdown, overlap) for this one rank.
        if let Some(t) = all.temporal_breakdown.first() {
            assert!((b.idle_pct - t.idle_pct).abs() < 1e-6, "{name}: idle");
            assert!(
                (b.compute_pct - t.compute_pct).abs() < 1e-6,
                "{name}: compute"
            );
            let o = &all.comm_comp_overlap[0];
            let exposed = 100.0 * (o.comm_us - o.overlap_us) / t.window_us;
            assert!(
                (b.comm_exposed_pct - exposed).abs() < 1e-6,
                "{name}: exposed comm"
            );
        }
        if s.kernels == 0 {
            assert!(
                r.findings.iter().any(|f| f.id == "no_gpu_kernels"),
                "{name}"
            );
        }
        assert!(
            r.findings.iter().all(|f| f.id != "straggler"),
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

/// The main finding and the bottleneck type never contradict each other: when a warning-or-worse
/// finding explains the bottleneck type (`explains_bottleneck`), the main finding is one of those (a
/// straggler aside, which explains the others' waits). The two-rank sample used to say
/// "communication" in its main sentence and "CPU-bound" below it.
#[test]
fn main_finding_agrees_with_the_bottleneck_type() {
    use profile_model::report::diagnosis::explains_bottleneck as explains;
    use profile_model::report::findings::{FindingKind, Severity};
    let mut checked = 0;
    for f in common::kineto_trace_files() {
        let set = TraceSet::single(load_path(&f).expect("loads"));
        let r = diagnose(&set);
        let b = r.bottleneck.as_ref().expect("bottleneck").kind;
        let Some(main) = r
            .findings
            .iter()
            .find(|x| Some(&x.id) == r.main_finding_id.as_ref())
        else {
            continue;
        };
        let explained = r
            .findings
            .iter()
            .any(|x| x.severity >= Severity::Warning && explains(b, x.kind));
        if explained && main.kind != FindingKind::Straggler {
            assert!(
                explains(b, main.kind),
                "{}: main finding {:?} but bottleneck {:?}",
                f.display(),
                main.kind,
                b
            );
            checked += 1;
        }
    }
    if common::traces_dir().exists() {
        assert!(
            checked >= 3,
            "only {checked} traces had a finding explaining the bottleneck"
        );
    }
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
