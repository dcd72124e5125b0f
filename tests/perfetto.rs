//! "Download for Perfetto": the trace written back from the columns reads again with the same
//! kernels, kernel time and names, and carries the added tracks (why the GPU was idle, the
//! critical path) with the durations they were computed with.

use crate::common;

use profile_model::analysis::critical_path::{critical_path_mode, CriticalPathOptions};
use profile_model::analysis::options::Mode;
use profile_model::report::gather::idle_pieces;
use profile_model::report::perfetto::perfetto_json;
use profile_model::table::{load_bytes, load_path, EventKind, TraceTable};

fn kernels(t: &TraceTable) -> (usize, i64, Vec<String>) {
    let rows: Vec<usize> = t.rows_of_kind(EventKind::Kernel).collect();
    let mut names: Vec<String> = rows.iter().map(|&r| t.name_at(r).to_string()).collect();
    names.sort();
    (
        rows.len(),
        rows.iter().filter_map(|&r| t.dur_at(r)).sum(),
        names,
    )
}

fn category_time(t: &TraceTable, cat: &str) -> (usize, i64) {
    let rows: Vec<usize> = t.rows_of_category(cat).collect();
    (rows.len(), rows.iter().filter_map(|&r| t.dur_at(r)).sum())
}

#[test]
fn the_written_trace_reads_back_with_the_same_kernels_and_the_added_tracks() {
    for name in [
        "hta__critical_path_alexnet.json.gz",
        "hta__simple_add_kineto.json.gz",
        "hta__nccl_data.json.gz",
    ] {
        let t = load_path(&common::trace(name)).expect("loads");
        let idle = idle_pieces(&t);
        let path = critical_path_mode(&t, &CriticalPathOptions::default(), Mode::Exact).rows;
        let json = perfetto_json(&t, &idle, &path, false);
        let back = load_bytes("back.json", json.as_bytes()).expect("reads back");
        assert_eq!(kernels(&back), kernels(&t), "{name}: kernels");
        let mut names = back.metadata.thread_names.clone();
        names.retain(|k, _| !k.starts_with("999999001/"));
        assert_eq!(names, t.metadata.thread_names, "{name}: thread names");
        let idle_ns: i64 = idle.iter().map(|p| p.1 - p.0).sum();
        assert_eq!(
            category_time(&back, "gpu_idle"),
            (idle.len(), idle_ns),
            "{name}: idle"
        );
        assert_eq!(
            category_time(&back, "critical_path").0,
            path.len(),
            "{name}: path"
        );
        // The correlation between a launch and its kernel survives (Perfetto draws it as a flow).
        let k = back
            .rows_of_kind(EventKind::Kernel)
            .next()
            .expect("a kernel");
        let c = back.correlation_at(k).expect("correlation");
        assert!(
            back.rows_of_kind(EventKind::Runtime)
                .any(|r| back.correlation_at(r) == Some(c)),
            "{name}: the kernel's launch"
        );
    }
}

#[test]
fn the_redacted_file_names_no_kernel_or_op_and_keeps_the_figures() {
    use profile_model::report::redact::redact_kind_name;
    let name = "hta__critical_path_alexnet.json.gz";
    let t = load_path(&common::trace(name)).expect("loads");
    let idle = idle_pieces(&t);
    let path = critical_path_mode(&t, &CriticalPathOptions::default(), Mode::Exact).rows;
    let json = perfetto_json(&t, &idle, &path, true);
    for kind in [EventKind::Kernel, EventKind::CpuOp] {
        for r in t.rows_of_kind(kind) {
            let n = t.name_at(r);
            if n.starts_with("ProfilerStep") {
                continue;
            }
            assert!(
                !json.contains(&format!("\"{n}\"")),
                "{name}: {n} is named in the redacted file"
            );
        }
    }
    let back = load_bytes("back.json", json.as_bytes()).expect("reads back");
    let (count, time, _) = kernels(&back);
    assert_eq!((count, time), (kernels(&t).0, kernels(&t).1));
    let k = t.rows_of_kind(EventKind::Kernel).next().expect("a kernel");
    let hashed = redact_kind_name(EventKind::Kernel, t.name_at(k));
    assert!(json.contains(&hashed), "the kernel by its hash");
    assert!(!json.contains("traceName"));
}
