//! The diagnosis report of every real trace renders, keeps the section order, and agrees with summarize().

use profile_model::analysis::summary::summarize;
use profile_model::report::diagnosis::diagnose;
use profile_model::table::{load_path, TraceSet};
use std::path::PathBuf;

fn traces_dir() -> PathBuf {
    std::env::var("PROFILE_MODEL_TRACES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/traces")))
}

#[test]
fn every_real_trace_reports_in_order_and_agrees_with_summary() {
    let dir = traces_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("traces folder {} absent: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().to_string();
            (n.ends_with(".json") || n.ends_with(".gz")) && !n.contains("NOT_KINETO")
        })
        .collect();
    files.sort();
    assert!(files.len() >= 20);
    for f in files {
        let table = load_path(&f).expect("loads");
        let s = summarize(&table);
        let r = diagnose(&TraceSet::single(table));
        let md = r.to_markdown();
        let heads = [
            "## Trace Analysis Summary",
            "**Main Finding**:",
            "### Top GPU Kernels (by time)",
            "### Bottleneck: ",
            "### Recommendations",
            "**Want deeper analysis?**",
        ];
        let pos: Vec<usize> = heads
            .iter()
            .map(|h| {
                md.find(h)
                    .unwrap_or_else(|| panic!("{h} missing in {}", f.display()))
            })
            .collect();
        assert!(
            pos.windows(2).all(|w| w[0] < w[1]),
            "order in {}",
            f.display()
        );
        assert_eq!(
            r.top_kernels.len(),
            s.top_kernels.len().min(5),
            "{}",
            f.display()
        );
        for (a, b) in r.top_kernels.iter().zip(&s.top_kernels) {
            assert_eq!(a.name, b.name);
            assert_eq!(a.calls, b.calls);
            assert!((a.avg_us - b.avg_us).abs() < 1e-6);
            assert!((a.pct_of_kernel_time - b.pct_of_kernel_time).abs() < 1e-6);
        }
        if s.kernels == 0 {
            assert!(r.findings.iter().any(|f| f.id == "no_gpu_kernels"));
        }
        let red = r.redacted();
        for k in &s.top_kernels {
            assert!(
                !red.to_json().contains(&k.name),
                "{} leaks in redacted report",
                k.name
            );
        }
    }
}
