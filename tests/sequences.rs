//! Frequent kernel sequences: against HTA's reference outputs and small traces built in code.

use crate::common;

use profile_model::analysis::options::Mode;
use profile_model::analysis::sequences::{frequent_kernel_sequences, SequenceOptions};
use profile_model::table::{load_bytes, load_path};

fn check_against_ref(case: &str, file: &str) {
    let trace = common::traces_dir().join(file);
    let refd = common::ref_dir().join(case);
    if !trace.exists() || !refd.exists() {
        eprintln!("skipping {case}: data not found");
        return;
    }
    let meta: serde_json::Value =
        serde_json::from_slice(&std::fs::read(refd.join("meta.json")).unwrap()).unwrap();
    let op = meta["frequent_cuda_kernel_sequences_operator"]
        .as_str()
        .unwrap()
        .to_string();
    let expected: Vec<serde_json::Value> = serde_json::from_slice(
        &std::fs::read(refd.join("frequent_cuda_kernel_sequences.json")).unwrap(),
    )
    .unwrap();
    let table = load_path(&trace).unwrap();
    let got = frequent_kernel_sequences(
        &table,
        &SequenceOptions {
            operator_name: op,
            min_pattern_len: 3,
            top_k: 0,
            mode: Mode::HtaCompat,
        },
    );
    assert_eq!(got.rows.len(), expected.len(), "{case}: {:#?}", got.rows);
    for (g, e) in got.rows.iter().zip(&expected) {
        assert_eq!(g.pattern, e["pattern"].as_str().unwrap(), "{case}");
        assert_eq!(g.count, e["count"].as_u64().unwrap(), "{case}");
        let eg = e["GPU kernel duration (us)"].as_f64().unwrap();
        let ec = e["CPU op duration (us)"].as_f64().unwrap();
        assert!(
            (g.gpu_kernel_duration_us - eg).abs() <= eg * 1e-3,
            "{case} gpu {} vs {eg}",
            g.gpu_kernel_duration_us
        );
        assert!(
            (g.cpu_op_duration_us - ec).abs() <= ec * 1e-3,
            "{case} cpu {} vs {ec}",
            g.cpu_op_duration_us
        );
    }
}

#[test]
fn matches_hta_critical_path_alexnet() {
    check_against_ref(
        "hta__critical_path_alexnet",
        "hta__critical_path_alexnet.json.gz",
    );
}

#[test]
fn matches_hta_critical_path_simple_add() {
    check_against_ref(
        "hta__critical_path_simple_add",
        "hta__critical_path_simple_add.json.gz",
    );
}

#[test]
fn matches_hta_df_index_resolver() {
    check_against_ref("hta__df_index_resolver", "hta__df_index_resolver.json.gz");
}

#[test]
fn matches_hta_negative_queue_length() {
    check_against_ref(
        "hta__negative_queue_length__rank0",
        "hta__negative_queue_length__rank0.json.gz",
    );
}

/// An operator launching three kernels, twice, on one thread; plus an unrelated op.
fn small_trace() -> String {
    let mut ev = Vec::new();
    let mut corr = 1;
    for i in 0..2 {
        let base = 1000 * i;
        ev.push(format!(r#"{{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":{},"dur":100}}"#, base));
        ev.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::addmm","pid":1,"tid":1,"ts":{},"dur":80}}"#,
            base + 5
        ));
        for (k, kname) in ["k_a", "k_b", "k_c"].iter().enumerate() {
            let t = base + 10 + 20 * k as i64;
            ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":{t},"dur":5,"args":{{"correlation":{corr}}}}}"#));
            ev.push(format!(r#"{{"ph":"X","cat":"kernel","name":"{kname}","pid":0,"tid":7,"ts":{},"dur":7,"args":{{"correlation":{corr},"stream":7,"device":0}}}}"#, t + 300 - 10 * k as i64 * 0));
            corr += 1;
        }
    }
    ev.push(
        r#"{"ph":"X","cat":"cpu_op","name":"aten::relu","pid":1,"tid":1,"ts":5000,"dur":10}"#
            .to_string(),
    );
    format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","))
}

#[test]
fn one_pattern_twice() {
    let table = load_bytes("small.json", small_trace().as_bytes()).unwrap();
    let got = frequent_kernel_sequences(
        &table,
        &SequenceOptions {
            operator_name: "aten::".into(),
            ..Default::default()
        },
    );
    assert_eq!(got.rows.len(), 1, "{got:#?}");
    let r = &got.rows[0];
    // minimum depth: aten::linear (depth 0), not aten::addmm (depth 1)
    assert_eq!(r.pattern, "aten::linear|k_a|k_b|k_c");
    assert_eq!(r.count, 2);
    assert!((r.gpu_kernel_duration_us - 2.0 * 3.0 * 7.0).abs() < 1e-9);
    assert!((r.cpu_op_duration_us - 200.0).abs() < 1e-9);
    // a longer minimum length finds nothing, with a note
    let none = frequent_kernel_sequences(
        &table,
        &SequenceOptions {
            operator_name: "aten::".into(),
            min_pattern_len: 4,
            ..Default::default()
        },
    );
    assert!(none.rows.is_empty() && !none.note.is_empty());
}

#[test]
fn empty_and_cpu_only_traces_do_not_panic() {
    let t = load_bytes("e.json", br#"{"traceEvents":[]}"#).unwrap();
    assert!(frequent_kernel_sequences(&t, &SequenceOptions::default())
        .rows
        .is_empty());
    let t = load_bytes(
        "c.json",
        br#"{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":3}]}"#,
    )
    .unwrap();
    let r = frequent_kernel_sequences(&t, &SequenceOptions::default());
    assert!(r.rows.is_empty() && !r.note.is_empty());
}

/// A kernel with a negative `dur` adds nothing to the exact GPU time of its sequence (it added its
/// negative duration, which made the sum negative).
#[test]
fn a_negative_kernel_duration_adds_nothing() {
    let text = small_trace().replacen(
        r#""name":"k_b","pid":0,"tid":7,"ts":330,"dur":7"#,
        r#""name":"k_b","pid":0,"tid":7,"ts":330,"dur":-5000"#,
        1,
    );
    assert_ne!(text, small_trace(), "the fixture changed");
    let table = load_bytes("neg.json", text.as_bytes()).unwrap();
    let got = frequent_kernel_sequences(
        &table,
        &SequenceOptions {
            operator_name: "aten::".into(),
            ..Default::default()
        },
    );
    let r = &got.rows[0];
    assert_eq!(r.count, 2);
    // Six kernels of 7 µs, one of them written with dur -5000 µs: 5 × 7.
    assert!(
        (r.gpu_kernel_duration_us - 35.0).abs() < 1e-9,
        "{}",
        r.gpu_kernel_duration_us
    );
}

/// Every reference case (`$PROFILE_MODEL_REF`): for each operator HTA was asked about, the same
/// number of patterns (often none), and the patterns themselves where HTA found some.
#[test]
fn matches_hta_on_every_reference_case() {
    let Ok(dirs) = std::fs::read_dir(common::ref_dir()) else {
        eprintln!("reference folder absent: skipped");
        return;
    };
    let mut dirs: Vec<std::path::PathBuf> = dirs.filter_map(|d| d.ok().map(|d| d.path())).collect();
    dirs.sort();
    let mut checked = 0;
    let mut failures = Vec::new();
    for dir in dirs {
        let Ok(bytes) = std::fs::read(dir.join("meta.json")) else {
            continue;
        };
        let meta: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        if meta["analyses"]["get_frequent_cuda_kernel_sequences"]["ok"] != true {
            continue;
        }
        // HTA ran it on the first rank.
        let Some(rank) = meta["ranks"].get(0).and_then(|r| r.as_i64()) else {
            continue;
        };
        let Some(file) = meta["trace_files_used"][rank.to_string()].as_str() else {
            continue;
        };
        let path = common::traces_dir().join(file.trim_start_matches("traces/"));
        let Ok(table) = load_path(&path) else {
            continue;
        };
        let expected: Vec<serde_json::Value> =
            std::fs::read(dir.join("frequent_cuda_kernel_sequences.json"))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default();
        let case = dir.file_name().unwrap().to_string_lossy().to_string();
        for tried in meta["frequent_cuda_kernel_sequences_tried"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let op = tried["operator_name"].as_str().unwrap_or("");
            let rows = tried["rows"].as_u64().unwrap_or(0) as usize;
            let got = frequent_kernel_sequences(
                &table,
                &SequenceOptions {
                    operator_name: op.into(),
                    min_pattern_len: 3,
                    top_k: 0,
                    mode: Mode::HtaCompat,
                },
            );
            checked += 1;
            if got.rows.len() != rows {
                failures.push(format!(
                    "{case} {op}: {} patterns, HTA {rows}",
                    got.rows.len()
                ));
                continue;
            }
            if rows == 0 || meta["frequent_cuda_kernel_sequences_operator"] != op {
                continue;
            }
            for (g, e) in got.rows.iter().zip(&expected) {
                let eg = e["GPU kernel duration (us)"].as_f64().unwrap_or(f64::NAN);
                let ec = e["CPU op duration (us)"].as_f64().unwrap_or(f64::NAN);
                if g.pattern != e["pattern"].as_str().unwrap_or("")
                    || g.count != e["count"].as_u64().unwrap_or(0)
                    || (g.gpu_kernel_duration_us - eg).abs() > eg.abs() * 1e-3 + 0.011
                    || (g.cpu_op_duration_us - ec).abs() > ec.abs() * 1e-3 + 0.011
                {
                    failures.push(format!("{case} {op}: {g:?} vs {e}"));
                    break;
                }
            }
        }
    }
    eprintln!("{checked} (case, operator) pairs compared with HTA");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `aten::matmul` twice: a set and a kernel on stream 20 and an `Event Sync` (stream -1) of a
/// `cudaEventQuery`; then `aten::linear` twice: one kernel on stream 0, three on stream 7.
fn sync_and_stream0_trace() -> String {
    let mut ev = Vec::new();
    let mut corr = 1;
    let mut call = |ev: &mut Vec<String>, name: &str, cat: &str, gpu: &str, stream: i64, t: i64| {
        ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"{name}","pid":1,"tid":1,"ts":{t},"dur":2,"args":{{"correlation":{corr}}}}}"#));
        ev.push(format!(r#"{{"ph":"X","cat":"{cat}","name":"{gpu}","pid":0,"tid":{stream},"ts":{},"dur":5,"args":{{"correlation":{corr},"stream":{stream},"device":0}}}}"#, t + 50));
        corr += 1;
    };
    for i in 0..2 {
        let b = 1000 * i;
        ev.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::matmul","pid":1,"tid":1,"ts":{b},"dur":40}}"#
        ));
        call(
            &mut ev,
            "cudaMemsetAsync",
            "gpu_memset",
            "Memset (Device)",
            20,
            b + 5,
        );
        call(&mut ev, "cudaLaunchKernel", "kernel", "gemm", 20, b + 10);
        call(
            &mut ev,
            "cudaEventQuery",
            "cuda_sync",
            "Event Sync",
            -1,
            b + 20,
        );
        let b = b + 500;
        ev.push(format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"aten::linear","pid":1,"tid":1,"ts":{b},"dur":40}}"#
        ));
        call(&mut ev, "cudaLaunchKernel", "kernel", "k0", 0, b + 5);
        for (k, name) in ["k1", "k2", "k3"].iter().enumerate() {
            call(
                &mut ev,
                "cudaLaunchKernel",
                "kernel",
                name,
                7,
                b + 10 + 5 * k as i64,
            );
        }
    }
    format!(r#"{{"traceEvents":[{}]}}"#, ev.join(","))
}

#[test]
fn hta_compat_counts_kernels_on_streams_above_0_only() {
    let table = load_bytes("s.json", sync_and_stream0_trace().as_bytes()).unwrap();
    let run = |op: &str, hta_compat: bool| {
        frequent_kernel_sequences(
            &table,
            &SequenceOptions {
                operator_name: op.into(),
                mode: if hta_compat {
                    Mode::HtaCompat
                } else {
                    Mode::Exact
                },
                ..Default::default()
            },
        )
        .rows
    };
    // HTA's call graph links kernels on streams > 0 only: the Event Sync (stream -1) is no kernel,
    // so aten::matmul has 2 and no pattern; exact mode counts the sync.
    assert!(run("aten::matmul", true).is_empty());
    let e = run("aten::matmul", false);
    assert_eq!(e[0].pattern, "aten::matmul|Memset (Device)|gemm|Event Sync");
    // The stream-0 kernel shows in HTA's pattern but neither counts nor adds GPU time.
    let c = run("aten::linear", true);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].pattern, "aten::linear|k0|k1|k2|k3");
    assert_eq!((c[0].count, c[0].gpu_kernel_duration_us), (2, 30.0));
    assert_eq!(run("aten::linear", false)[0].gpu_kernel_duration_us, 40.0);
}

/// `analyze()` in HTA-compatible mode (and so `analyze --compat hta` and the page's switch) gives the
/// HTA-compatible sequences, not the exact ones: a regression test of the orchestrator, which used to
/// call the sequences with default options whatever the mode.
#[test]
fn analyze_in_compat_mode_gives_compat_sequences() {
    use profile_model::analysis::all::{analyze, AnalysisOptions};
    use profile_model::table::TraceSet;
    let mut differ = 0;
    for f in common::kineto_trace_files() {
        let table = load_path(&f).unwrap();
        let compat = frequent_kernel_sequences(
            &table,
            &SequenceOptions {
                mode: Mode::HtaCompat,
                ..SequenceOptions::default()
            },
        );
        let exact = frequent_kernel_sequences(&table, &SequenceOptions::default());
        differ += usize::from(compat.rows != exact.rows);
        let set = TraceSet::single(table);
        let all = analyze(&set, &AnalysisOptions::hta_compat());
        assert_eq!(
            all.frequent_kernel_sequences[0].result.rows,
            compat.rows,
            "{}",
            f.display()
        );
        // Through the CLI as well.
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_profile-model"))
            .args(["analyze", "--json", "--compat", "hta"])
            .arg(&f)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let rows = &v["frequent_kernel_sequences"][0]["result"]["rows"];
        assert_eq!(
            rows.as_array().map_or(0, |r| r.len()),
            compat.rows.len(),
            "CLI {}",
            f.display()
        );
    }
    assert!(
        differ > 0,
        "no shared trace tells the two modes apart: the test could not fail"
    );
}

/// The sequences cover the analysed window like every other analysis: with `steps` set to the
/// first step only, the operator instance of the second step (and its kernels) is left out.
#[test]
fn the_analysed_steps_bound_the_sequences_and_the_critical_path() {
    use profile_model::analysis::all::{analyze, AnalysisOptions};
    use profile_model::table::TraceSet;
    let steps = r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":900},
        {"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":1000,"dur":900},"#;
    let text = small_trace().replacen(
        r#"{"traceEvents":["#,
        &format!(r#"{{"traceEvents":[{steps}"#),
        1,
    );
    let set = TraceSet::single(load_bytes("steps.json", text.as_bytes()).unwrap());
    // The shallowest operators are the steps themselves: count the kernels their patterns hold.
    let pattern_kernels = |rows: &[profile_model::analysis::sequences::SequenceRow]| -> u64 {
        rows.iter()
            .map(|r| r.count * (r.pattern.split('|').count() as u64 - 1))
            .sum()
    };
    let seq = |opts: &AnalysisOptions| {
        analyze(&set, opts).frequent_kernel_sequences[0]
            .result
            .rows
            .clone()
    };
    assert_eq!(pattern_kernels(&seq(&AnalysisOptions::default())), 6);
    assert_eq!(
        pattern_kernels(&seq(&AnalysisOptions {
            steps: Some((1, 1)),
            ..AnalysisOptions::default()
        })),
        3
    );
    // The critical path of the first step alone ends before the second step's kernels start.
    let cp = analyze(
        &set,
        &AnalysisOptions {
            steps: Some((1, 1)),
            ..AnalysisOptions::default()
        },
    )
    .critical_path[0]
        .result
        .clone();
    assert!(cp.window_us.1 < 1000.0 + 300.0, "{:?}", cp.window_us);
}
