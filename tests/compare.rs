//! Comparing two runs: scenario pairs built in code with known changes (the expected deltas come from
//! what the test wrote), a real trace against itself, a real pair against an independent count, the CLI,
//! and telling separate runs from ranks of one job.

use crate::common;

use crate::common::TraceBuilder;
use profile_model::report::compare::{compare, Basis, Comparison, Presence};
use profile_model::report::diagnosis::diagnose;
use profile_model::report::findings::FindingId;
use profile_model::table::{load_path, TraceSet};
use serde_json::Value;

/// One step's plan: its duration (µs), the kernels it runs back to back (name, µs), and whether the
/// host waits for them with `cudaDeviceSynchronize`.
struct Step<'a> {
    dur_us: f64,
    kernels: &'a [(&'a str, f64)],
    sync: bool,
}

/// A trace of `steps`, laid end to end from t = 1000 µs.
fn trace(steps: &[Step], rank: Option<(i64, i64)>) -> TraceBuilder {
    let mut b = TraceBuilder::new();
    if let Some((r, w)) = rank {
        b = b.rank(r, w);
    }
    let mut t0 = 1000.0;
    for (n, s) in steps.iter().enumerate() {
        b.step(n as i64 + 1, t0, s.dur_us);
        let mut k_ts = t0 + 50.0;
        for (i, (name, dur)) in s.kernels.iter().enumerate() {
            b.kernel(name, 7, t0 + 10.0 + 5.0 * i as f64, 4.0, k_ts, *dur);
            k_ts += dur;
        }
        if s.sync {
            b.runtime("cudaDeviceSynchronize", t0 + 40.0, k_ts - t0 - 40.0);
        }
        t0 += s.dur_us;
    }
    b
}

fn set_of(builders: &[(&str, TraceBuilder)]) -> TraceSet {
    TraceSet::from_tables(builders.iter().map(|(f, b)| b.table(f)).collect())
}

fn kernel<'a>(c: &'a Comparison, name: &str) -> &'a profile_model::report::compare::NamedDelta {
    &c.kernels
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no kernel {name}"))
        .1
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 1e-6 * (1.0 + b.abs()), "{what}: {a} vs {b}");
}

#[test]
fn a_removed_sync_shortens_the_step_by_what_was_written() {
    let work: &[(&str, f64)] = &[("gemm", 2000.0), ("relu", 1000.0), ("gemm", 1000.0)];
    let before: Vec<Step> = (0..6)
        .map(|_| Step {
            dur_us: 10_000.0,
            kernels: work,
            sync: true,
        })
        .collect();
    let after: Vec<Step> = (0..6)
        .map(|_| Step {
            dur_us: 8_000.0,
            kernels: work,
            sync: false,
        })
        .collect();
    let c = compare(
        &set_of(&[("before.json", trace(&before, None))]),
        &set_of(&[("after.json", trace(&after, None))]),
    );
    assert_eq!(c.basis, Basis::PerStep);
    close(c.total.baseline, 10.0, "baseline step ms");
    close(c.total.candidate, 8.0, "candidate step ms");
    close(c.total.change, -2.0, "step change");
    // The waterfall's parts are the step, in each run.
    close(
        c.waterfall.iter().map(|d| d.baseline).sum(),
        10.0,
        "baseline parts",
    );
    close(
        c.waterfall.iter().map(|d| d.candidate).sum(),
        8.0,
        "candidate parts",
    );
    // The kernels did not change: 3 ms of gemm and 1 ms of relu per step in both.
    close(kernel(&c, "gemm").time.baseline, 3.0, "gemm per step");
    close(kernel(&c, "gemm").time.change, 0.0, "gemm change");
    close(
        kernel(&c, "gemm").calls.baseline,
        2.0,
        "gemm calls per step",
    );
    assert!(
        c.headline
            .starts_with("Step time 10.0 ms → 8.00 ms (−20%): synchronisation −"),
        "{}",
        c.headline
    );
    assert!(c.warnings.is_empty(), "{:?}", c.warnings);
}

#[test]
fn fusion_replaces_three_kernels_by_one() {
    let unfused: &[(&str, f64)] = &[
        ("add_kernel", 100.0),
        ("mul_kernel", 100.0),
        ("relu_kernel", 100.0),
        ("gemm", 700.0),
    ];
    let fused: &[(&str, f64)] = &[("fused_add_mul_relu", 150.0), ("gemm", 700.0)];
    let steps = |k| {
        (0..5)
            .map(|_| Step {
                dur_us: 1_200.0,
                kernels: k,
                sync: false,
            })
            .collect::<Vec<_>>()
    };
    let c = compare(
        &set_of(&[("eager.json", trace(&steps(unfused), None))]),
        &set_of(&[("fused.json", trace(&steps(fused), None))]),
    );
    for name in ["add_kernel", "mul_kernel", "relu_kernel"] {
        let k = kernel(&c, name);
        assert_eq!(k.presence, Presence::Removed, "{name}");
        close(k.time.baseline, 0.1, name);
        close(k.calls.baseline, 1.0, name);
        close(k.time.candidate, 0.0, name);
    }
    let f = kernel(&c, "fused_add_mul_relu");
    assert_eq!(f.presence, Presence::Added);
    close(f.time.candidate, 0.15, "fused per step");
    let compute = c
        .categories
        .iter()
        .find(|d| d.key == "computation")
        .unwrap();
    close(compute.baseline, 1.0, "computation before");
    close(compute.candidate, 0.85, "computation after");
}

#[test]
fn a_slower_rank_shows_in_the_rank_deltas() {
    let work: &[(&str, f64)] = &[("gemm", 3000.0)];
    let steps = |d| {
        (0..5)
            .map(|_| Step {
                dur_us: d,
                kernels: work,
                sync: false,
            })
            .collect::<Vec<_>>()
    };
    let before = set_of(&[
        ("rank-0.json", trace(&steps(10_000.0), Some((0, 2)))),
        ("rank-1.json", trace(&steps(10_000.0), Some((1, 2)))),
    ]);
    let after = set_of(&[
        ("rank-0.json", trace(&steps(10_000.0), Some((0, 2)))),
        ("rank-1.json", trace(&steps(12_000.0), Some((1, 2)))),
    ]);
    let c = compare(&before, &after);
    assert_eq!(c.ranks.len(), 2);
    assert_eq!(c.ranks[0].key, "rank 0");
    close(c.ranks[0].change, 0.0, "rank 0");
    assert_eq!(c.ranks[1].key, "rank 1");
    close(c.ranks[1].change, 2.0, "rank 1");
    close(c.total.change, 1.0, "mean step over ranks");
}

#[test]
fn a_trace_against_itself_changes_nothing() {
    let path = common::trace("hta__trace_compare_base.json.gz");
    let a = TraceSet::single(load_path(&path).unwrap());
    let b = TraceSet::single(load_path(&path).unwrap());
    let c = compare(&a, &b);
    close(c.total.change, 0.0, "total");
    for d in c.waterfall.iter().chain(&c.categories).chain(&c.ranks) {
        close(d.change, 0.0, &d.key);
    }
    for (name, d) in c.kernels.iter().chain(&c.ops) {
        assert_eq!(d.presence, Presence::Both, "{name}");
        close(d.time.change, 0.0, name);
        close(d.calls.change, 0.0, name);
    }
    assert!(c.findings.iter().all(|f| f.impact.change == 0.0));
    assert!(c.headline.contains("(+0%)"), "{}", c.headline);
}

/// Mean duration (ms) of `ProfilerStep#N` annotations with N in `steps`, read from the JSON itself.
fn mean_step_ms(path: &std::path::Path, steps: (i64, i64)) -> f64 {
    let doc: Value = serde_json::from_slice(&common::json_text(path)).unwrap();
    let durs: Vec<f64> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| {
            let n: i64 = e["name"]
                .as_str()?
                .strip_prefix("ProfilerStep#")?
                .parse()
                .ok()?;
            (n >= steps.0 && n <= steps.1)
                .then(|| e["dur"].as_f64())
                .flatten()
        })
        .collect();
    durs.iter().sum::<f64>() / durs.len() as f64 / 1e3
}

#[test]
fn a_real_pair_matches_an_independent_count() {
    let (pb, pc) = (
        common::trace("hta__trace_compare_base.json.gz"),
        common::trace("hta__trace_compare_test.json.gz"),
    );
    let (b, c) = (
        TraceSet::single(load_path(&pb).unwrap()),
        TraceSet::single(load_path(&pc).unwrap()),
    );
    let cmp = compare(&b, &c);
    assert_eq!(cmp.basis, Basis::PerStep);
    let (rb, rc) = (diagnose(&b), diagnose(&c));
    let steps_b = rb.context.steps.expect("steps analysed");
    let steps_c = rc.context.steps.expect("steps analysed");
    close(
        cmp.total.baseline,
        mean_step_ms(&pb, steps_b),
        "baseline step",
    );
    close(
        cmp.total.candidate,
        mean_step_ms(&pc, steps_c),
        "candidate step",
    );
}

use crate::common::cli;

#[test]
fn the_cli_diff_gives_the_library_figures() {
    let (pb, pc) = (
        common::trace("hta__trace_compare_base.json.gz"),
        common::trace("hta__trace_compare_test.json.gz"),
    );
    let lib = compare(
        &TraceSet::single(load_path(&pb).unwrap()),
        &TraceSet::single(load_path(&pc).unwrap()),
    );
    let (code, out, err) = cli(&["diff", "--json", pb.to_str().unwrap(), pc.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["headline"], lib.headline);
    assert_eq!(v["total"]["baseline"].as_f64().unwrap(), lib.total.baseline);
    assert_eq!(v["kernels"].as_array().unwrap().len(), lib.kernels.len());
    let (code, md, _) = cli(&["diff", pb.to_str().unwrap(), pc.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(md.contains(&lib.headline), "{md}");
    let (code, csv, _) = cli(&[
        "diff",
        "--csv",
        "kernels",
        pb.to_str().unwrap(),
        pc.to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert_eq!(csv.lines().count(), lib.kernels.len() + 1);
    let (code, _, err) = cli(&["diff", pb.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn separate_runs_are_not_ranks_and_have_no_straggler() {
    let work: &[(&str, f64)] = &[("gemm", 6000.0)];
    let steps = |d, k| {
        (0..5)
            .map(|_| Step {
                dur_us: d,
                kernels: k,
                sync: false,
            })
            .collect::<Vec<_>>()
    };
    let slow: &[(&str, f64)] = &[("gemm", 6000.0), ("gemm", 6000.0)];
    // Two runs of rank 0: the second is twice as busy.
    let runs = set_of(&[
        ("run-a.json", trace(&steps(14_000.0, work), Some((0, 1)))),
        ("run-b.json", trace(&steps(14_000.0, slow), Some((0, 1)))),
    ]);
    assert!(runs
        .separate_runs()
        .unwrap()
        .contains("both say they are rank 0"));
    let r = diagnose(&runs);
    assert!(
        r.findings.iter().all(|f| f.id != FindingId::Straggler),
        "{:?}",
        r.findings
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("look like separate runs")),
        "{:?}",
        r.notes
    );
    // The same files as ranks 0 and 1 of one job: a straggler.
    let job = set_of(&[
        ("rank-0.json", trace(&steps(14_000.0, work), Some((0, 2)))),
        ("rank-1.json", trace(&steps(14_000.0, slow), Some((1, 2)))),
    ]);
    assert_eq!(job.separate_runs(), None);
    assert!(diagnose(&job)
        .findings
        .iter()
        .any(|f| f.id == FindingId::Straggler));
}

#[test]
fn comparing_within_one_loaded_set_gives_the_same_figures_and_keeps_the_set() {
    let work: &[(&str, f64)] = &[("gemm", 3000.0)];
    let more: &[(&str, f64)] = &[("gemm", 3000.0), ("relu", 500.0)];
    let steps = |k| {
        (0..5)
            .map(|_| Step {
                dur_us: 5_000.0,
                kernels: k,
                sync: false,
            })
            .collect::<Vec<_>>()
    };
    let (a, b) = (
        trace(&steps(work), Some((0, 1))),
        trace(&steps(more), Some((0, 1))),
    );
    let alone = compare(
        &set_of(&[("a.json", trace(&steps(work), Some((0, 1))))]),
        &set_of(&[("b.json", trace(&steps(more), Some((0, 1))))]),
    );
    let both = set_of(&[("a.json", a), ("b.json", b)]);
    let (base, cand) =
        profile_model::report::compare::split_runs(both, &["a.json".to_string()]).unwrap();
    let files =
        |s: &TraceSet| -> Vec<String> { s.ranks.iter().map(|r| r.table.file.clone()).collect() };
    assert_eq!(
        (files(&base), files(&cand)),
        (vec!["a.json".to_string()], vec!["b.json".to_string()])
    );
    let within = compare(&base, &cand);
    assert_eq!(within.headline, alone.headline);
    assert_eq!(within.kernels, alone.kernels);
    let mut both = base;
    both.ranks.extend(cand.ranks);
    let (back, err) = profile_model::report::compare::split_runs(both, &[]).unwrap_err();
    assert!(err.contains("both sides"), "{err}");
    assert_eq!(back.len(), 2, "the set comes back whole");
}

/// Σ dur (ms) per step of host ops whose name contains `DataLoader`, read from the JSON itself.
fn data_loader_ms_per_step(path: &std::path::Path) -> f64 {
    let doc: Value = serde_json::from_slice(&common::json_text(path)).unwrap();
    // Old Kineto wrote a bare array of events.
    let events = doc.get("traceEvents").unwrap_or(&doc).as_array().unwrap();
    let steps = events
        .iter()
        .filter(|e| {
            e["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("ProfilerStep#"))
        })
        .count();
    let loader: f64 = events
        .iter()
        .filter(|e| {
            e["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("enumerate(DataLoader)"))
        })
        .filter_map(|e| e["dur"].as_f64())
        .sum();
    loader / 1e3 / steps as f64
}

#[test]
fn a_public_before_after_pair_names_what_changed() {
    // kineto's ResNet-50 with num_workers=0 and num_workers=4 (not committed; see tests/public_traces.rs).
    let Some(dir) = std::env::var_os("PROFILE_MODEL_PUBLIC_TRACES").map(std::path::PathBuf::from)
    else {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "\n*** SKIPPED: public before/after pair: set PROFILE_MODEL_PUBLIC_TRACES ***\n"
        );
        return;
    };
    let pb = dir.join("pytorch__kineto__resnet50_2021-01-10_workers0.json.gz");
    let pc = dir.join("pytorch__kineto__resnet50_2021-01-10_workers4.json.gz");
    let c = compare(
        &TraceSet::single(load_path(&pb).unwrap()),
        &TraceSet::single(load_path(&pc).unwrap()),
    );
    // Independently: the DataLoader took far longer per step with no workers.
    let (lb, lc) = (data_loader_ms_per_step(&pb), data_loader_ms_per_step(&pc));
    assert!(lb > 10.0 * lc, "DataLoader {lb} vs {lc} ms per step");
    let loader = c
        .waterfall
        .iter()
        .find(|d| d.key == "DataLoader wait")
        .unwrap();
    assert!(loader.change < -0.5 * lb, "{loader:?}");
    assert!(c.headline.contains("DataLoader wait −"), "{}", c.headline);
    assert!(c.total.change < 0.0);
}

#[test]
fn ops_are_matched_by_name_and_input_shapes_where_recorded() {
    let steps = |shape: serde_json::Value| {
        let mut b = TraceBuilder::new();
        for n in 0..5 {
            let t0 = 1000.0 + n as f64 * 2000.0;
            b.step(n + 1, t0, 2000.0);
            b.cpu_op_args(
                "aten::mm",
                t0 + 10.0,
                300.0,
                serde_json::json!({"Input Dims": shape.clone()}),
            );
            b.cpu_op("aten::relu", t0 + 400.0, 100.0);
            b.kernel("gemm", 7, t0 + 20.0, 5.0, t0 + 50.0, 1500.0);
        }
        b
    };
    let c = compare(
        &set_of(&[("a.json", steps(serde_json::json!([[64, 128], [128, 256]])))]),
        &set_of(&[("b.json", steps(serde_json::json!([[64, 128], [128, 512]])))]),
    );
    let op = |name: &str| {
        c.ops
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.clone())
    };
    let old = op("aten::mm [[64,128],[128,256]]").expect("the baseline's shape");
    assert_eq!(old.presence, Presence::Removed);
    close(old.time.baseline, 0.3, "mm per step");
    assert_eq!(
        op("aten::mm [[64,128],[128,512]]")
            .expect("the candidate's shape")
            .presence,
        Presence::Added
    );
    let relu = op("aten::relu").expect("ops without shapes by name");
    assert_eq!(relu.presence, Presence::Both);
    close(relu.time.change, 0.0, "relu");
}

/// A fresh, empty folder under the system's temp folder.
fn temp_dir(what: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("pm-compare-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Two runs of five steps: the candidate's steps are `slower_by` longer (its one kernel too).
fn gate_pair(dir: &std::path::Path, slower_by: f64) -> (std::path::PathBuf, std::path::PathBuf) {
    let steps = |extra: f64| {
        (0..5)
            .map(|_| Step {
                dur_us: 10_000.0 + extra,
                kernels: &[("gemm", 6000.0)],
                sync: false,
            })
            .collect::<Vec<_>>()
    };
    let (b, c) = (dir.join("base.json"), dir.join("cand.json"));
    std::fs::write(&b, trace(&steps(0.0), None).json()).unwrap();
    std::fs::write(&c, trace(&steps(slower_by), None).json()).unwrap();
    (b, c)
}

#[test]
fn the_regression_gate_fails_only_past_its_limit() {
    let dir = temp_dir("gate");
    // 10 ms steps made 0.8 ms longer: +8% step time.
    let (b, c) = gate_pair(&dir, 800.0);
    let (b, c) = (b.to_str().unwrap(), c.to_str().unwrap());
    let (code, out, err) = cli(&["diff", "--fail-if", "step_time>+5%", b, c]);
    assert_eq!(code, 1, "{err}");
    assert!(
        out.contains("Step time 10.0 ms → 10.8 ms"),
        "the comparison is still written: {out}"
    );
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("regression: step_time +8.0%"), "{err}");
    let (code, _, err) = cli(&["diff", "--fail-if", "step_time>+10%", b, c]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("within limits: step_time +8.0%"), "{err}");
    // Absolute: +0.8 ms per step against 0.5 and 1 ms.
    assert_eq!(cli(&["diff", "--fail-if", "step_time>+0.5ms", b, c]).0, 1);
    assert_eq!(cli(&["diff", "--fail-if", "step_time>1ms", b, c]).0, 0);
    // Two conditions, one holding: exit 1, one line.
    let (code, _, err) = cli(&["diff", "--fail-if", "step_time>+50%,idle>+5%", b, c]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        err.lines().filter(|l| l.contains("regression:")).count(),
        1,
        "{err}"
    );
}

#[test]
fn the_regression_gate_says_what_it_cannot_read() {
    let dir = temp_dir("gate-bad");
    let (b, c) = gate_pair(&dir, 0.0);
    let (b, c) = (b.to_str().unwrap(), c.to_str().unwrap());
    for (cond, says) in [
        ("step_tme>+5%", "unknown figure"),
        ("step_time=5%", "expected METRIC>LIMIT"),
        ("step_time>fast", "expected a limit"),
        ("gpu_busy<-3ms", "expected a limit"),
    ] {
        let (code, _, err) = cli(&["diff", "--fail-if", cond, b, c]);
        assert_eq!(code, 2, "{cond}: {err}");
        assert!(err.contains(says), "{cond}: {err}");
    }
    // The same run twice: nothing regressed.
    assert_eq!(
        cli(&["diff", "--fail-if", "step_time>+0%,idle>+0%", b, c]).0,
        0
    );
}
