//! One file holding several ranks, written together by a merge tool (pids renumbered per rank,
//! `args.rank` on every event, "RANK n" process names): split into its ranks and analysed as the
//! rank set it is. The fused file's straggler and communication findings equal those of the same
//! ranks loaded from their own files; nothing is withheld and no note says only one rank was given.

use crate::collectives::Job;
use profile_model::report::context::TraceHolds;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::{Finding, FindingId};
use profile_model::table::{load_bytes, TraceSet};
use serde_json::{json, Value};

/// The ranks' traces as one file the way TraceLens merges them: each rank's pids offset by
/// rank × 10^8, `args.rank` on every event, a "RANK n - CPU/GPU" process name per pid; `keep`
/// chooses the events kept (all, or the device's only).
fn fused(job: &Job, ranks: usize, keep: fn(&Value) -> bool) -> String {
    let mut events: Vec<Value> = Vec::new();
    let mut names: Vec<Value> = Vec::new();
    for r in 0..ranks {
        let top: Value = serde_json::from_str(&job.builder(r).json()).expect("json");
        let mut pids = std::collections::BTreeSet::new();
        for e in top["traceEvents"].as_array().expect("events") {
            if !keep(e) {
                continue;
            }
            let mut e = e.clone();
            let pid = e["pid"].as_i64().unwrap_or(0) + r as i64 * 100_000_000;
            pids.insert(pid);
            e["pid"] = json!(pid);
            if !e["args"].is_object() {
                e["args"] = json!({});
            }
            e["args"]["rank"] = json!(r);
            events.push(e);
        }
        for pid in pids {
            let side = if pid % 100_000_000 < 100 {
                "GPU"
            } else {
                "CPU"
            };
            names.push(
                json!({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                "args": {"name": format!("RANK {r} - {side}")}}),
            );
        }
    }
    events.extend(names);
    json!({"traceEvents": events}).to_string()
}

fn report(text: &str) -> DiagnosisReport {
    diagnose(&TraceSet::single(
        load_bytes("merged.json", text.as_bytes()).expect("loads"),
    ))
}

fn finding(r: &DiagnosisReport, id: FindingId) -> &Finding {
    r.findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no {id}: {:#?}", r.findings))
}

fn everything(_: &Value) -> bool {
    true
}

fn device_only(e: &Value) -> bool {
    e["cat"] == "kernel" || e["ph"] == "M"
}

#[test]
fn a_fused_file_is_split_into_its_ranks() {
    let mut job = Job::new(4);
    job.delay[2] = 3_000.0;
    let t = load_bytes("merged.json", fused(&job, 4, everything).as_bytes()).expect("loads");
    let rows = t.len();
    let set = TraceSet::single(t);
    let ranks: Vec<i64> = set.ranks.iter().map(|r| r.rank).collect();
    assert_eq!(ranks, vec![0, 1, 2, 3]);
    // Every event lands in exactly one rank, and each rank holds what its own file holds.
    let split: usize = set.ranks.iter().map(|r| r.table.len()).sum();
    assert_eq!(split, rows);
    for r in &set.ranks {
        let own = job.builder(r.rank as usize).table("own.json");
        let kernels = |t: &profile_model::table::TraceTable| {
            (0..t.len())
                .filter(|&i| t.kind_at(i) == profile_model::table::EventKind::Kernel)
                .map(|i| (t.name_at(i).to_string(), t.ts_at(i), t.dur_at(i)))
                .collect::<Vec<_>>()
        };
        assert_eq!(kernels(&r.table), kernels(&own), "rank {}", r.rank);
        assert_eq!(r.table.metadata.fused_ranks, vec![0, 1, 2, 3]);
    }
}

#[test]
fn a_fused_file_names_the_late_rank_as_its_own_files_do() {
    let mut job = Job::new(4);
    job.delay[2] = 3_000.0;
    let merged = report(&fused(&job, 4, everything));
    let apart = diagnose(&job.set());
    assert!(merged.context.holds(TraceHolds::FusedRanks));
    assert!(merged.context.fused_split);
    assert_eq!(merged.context.fused_ranks, vec![0, 1, 2, 3]);
    let (m, a) = (
        finding(&merged, FindingId::Straggler),
        finding(&apart, FindingId::Straggler),
    );
    assert_eq!(m.title, "Straggler: rank 2");
    assert_eq!(m.impact.time_ns, a.impact.time_ns);
    assert!(m.impact.time_ns > 0);
    // Moving is communication, waiting is not: the same split as the rank files'.
    assert_eq!(
        finding(&merged, FindingId::Communication).impact.time_ns,
        finding(&apart, FindingId::Communication).impact.time_ns
    );
    let md = merged.to_markdown();
    assert!(md.contains("split into its ranks"), "{md}");
    assert!(!md.contains("only one rank's trace"), "{md}");
    assert!(!md.contains("withheld"), "{md}");
    crate::common::assert_report_invariants(&merged, "fused");
}

/// Only the ranks' kernels (an extract without host events): the late rank is still named, but its
/// idle GPU before the collective is not blamed on a host the trace does not hold.
#[test]
fn a_fused_device_only_file_names_the_late_rank_without_blaming_its_host() {
    let mut job = Job::new(4);
    job.loader[1] = 3_000.0;
    let merged = report(&fused(&job, 4, device_only));
    assert!(merged.context.holds(TraceHolds::GpuOnly));
    assert!(merged.context.fused_split);
    let s = finding(&merged, FindingId::Straggler);
    assert_eq!(s.title, "Straggler: rank 1");
    let words = format!("{} {}", s.measured, s.actions_markdown(" "));
    assert!(!words.contains("waited for its host"), "{words}");
    assert!(!words.contains("host is late"), "{words}");
    assert!(words.contains("no host events"), "{words}");
}

/// A file whose events cannot all be placed in a rank is not split: it stays one timeline and
/// the report says what is withheld.
#[test]
fn a_file_with_events_of_no_rank_is_not_split() {
    let job = Job::new(2);
    let mut top: Value = serde_json::from_str(&fused(&job, 2, everything)).expect("json");
    top["traceEvents"].as_array_mut().expect("events").push(
        json!({"ph": "X", "cat": "cpu_op", "name": "aten::stray", "pid": 7, "tid": 7, "ts": 5, "dur": 1}),
    );
    let r = report(&top.to_string());
    assert!(r.context.holds(TraceHolds::FusedRanks));
    assert!(!r.context.fused_split);
    assert!(r.to_markdown().contains("withheld"));
}
