//! `profile-model merge`: per-rank `analyze --json` outputs merged give the cross-rank results of
//! `analyze --json` over the folder (a rank set made by `make-big-trace`, and two real ranks through
//! the library); outputs that do not fit together exit 2 with a message.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use profile_model::analysis::all::{analyze, AnalysisOptions, Mode};
use profile_model::analysis::merge::{merge, parse_part, MergeError, MergePart};
use profile_model::table::{load_path, TraceSet};
use serde_json::Value;

use common::cli;

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pm-merge-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Equal JSON, numbers within 1e-9 relative.
fn assert_close(a: &Value, b: &Value, path: &str) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let kx: Vec<&String> = x.keys().collect();
            let ky: Vec<&String> = y.keys().collect();
            assert_eq!(kx, ky, "{path}: keys");
            for (k, v) in x {
                assert_close(v, &y[k], &format!("{path}.{k}"));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{path}: length");
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                assert_close(v, w, &format!("{path}[{i}]"));
            }
        }
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            let scale = x.abs().max(y.abs());
            assert!((x - y).abs() <= 1e-9 * scale, "{path}: {x} vs {y}");
        }
        _ => assert_eq!(a, b, "{path}"),
    }
}

/// The merged output against the folder's: every key of the merge is the folder's key of that name
/// (`kernel_breakdown_ranks` is `kernel_breakdown.ranks`).
fn assert_merge_matches_folder(merged: &Value, folder: &Value) {
    let m = merged.as_object().unwrap();
    for (key, v) in m {
        let want = match key.as_str() {
            "sources" => continue,
            "kernel_breakdown_ranks" => &folder["kernel_breakdown"]["ranks"],
            k => &folder[k],
        };
        assert!(!want.is_null(), "the folder's output has {key}");
        assert_close(v, want, key);
    }
}

/// `make-big-trace SRC --mb 2 --ranks 4 --slow-rank 2 --slow 1.3 -o DIR/`, or `None` (with a
/// note) when the tool is not there.
fn make_rank_set(dir: &Path) -> Option<Vec<PathBuf>> {
    let tool = common::traces_dir().join("../tools/make-big-trace");
    if !tool.is_file() {
        eprintln!("note: {} not found: rank-set test skipped", tool.display());
        return None;
    }
    let src = common::trace("hta__negative_queue_length__rank0.json.gz");
    let out = Command::new("python3")
        .arg(&tool)
        .arg(&src)
        .args([
            "--mb",
            "2",
            "--ranks",
            "4",
            "--slow-rank",
            "2",
            "--slow",
            "1.3",
            "-o",
        ])
        .arg(format!("{}/", dir.display()))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "make-big-trace: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        (0..4)
            .map(|r| dir.join(format!("rank{r}.json.gz")))
            .collect(),
    )
}

/// Analyze each rank file on its own, merge, and compare with analyze over the folder.
fn merge_equals_folder(ranks_dir: &Path, files: &[PathBuf], extra: &[&str]) {
    let mode = if extra.is_empty() { "exact" } else { "hta" };
    let out_dir = temp_dir(&format!("outs-{mode}"));
    let mut outs = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let mut args = vec!["analyze", "--json"];
        args.extend(extra);
        args.push(f.to_str().unwrap());
        let (code, out, err) = cli(&args);
        assert_eq!(code, 0, "{err}");
        let o = out_dir.join(format!("rank{i}.json"));
        std::fs::write(&o, out).unwrap();
        outs.push(o.to_str().unwrap().to_string());
    }
    // Given in another order than the ranks: merge sorts.
    outs.reverse();
    let mut args = vec!["merge", "--json"];
    args.extend(outs.iter().map(String::as_str));
    let (code, merged, err) = cli(&args);
    assert_eq!(code, 0, "{err}");
    let mut args = vec!["analyze", "--json"];
    args.extend(extra);
    args.push(ranks_dir.to_str().unwrap());
    let (code, folder, err) = cli(&args);
    assert_eq!(code, 0, "{err}");
    std::fs::remove_dir_all(&out_dir).ok();
    let merged: Value = serde_json::from_str(&merged).unwrap();
    let folder: Value = serde_json::from_str(&folder).unwrap();
    assert_eq!(merged["ranks"], serde_json::json!([0, 1, 2, 3]));
    assert!(
        folder["stragglers"]["kernel"].is_string(),
        "a collective was compared"
    );
    assert_merge_matches_folder(&merged, &folder);
}

#[test]
fn merged_rank_outputs_equal_the_folder_analysis() {
    let dir = temp_dir("ranks");
    let Some(files) = make_rank_set(&dir) else {
        return;
    };
    merge_equals_folder(&dir, &files, &[]);
    merge_equals_folder(&dir, &files, &["--compat", "hta"]);
    // The slow rank's kernels take longer: the per-rank tables show it.
    let (_, out, _) = cli(&["analyze", "--json", files[2].to_str().unwrap()]);
    let slow: Value = serde_json::from_str(&out).unwrap();
    let (_, out, _) = cli(&["analyze", "--json", files[0].to_str().unwrap()]);
    let fast: Value = serde_json::from_str(&out).unwrap();
    let compute = |v: &Value| v["temporal_breakdown"][0]["compute_us"].as_f64().unwrap();
    assert!(compute(&slow) > 1.1 * compute(&fast));
    std::fs::remove_dir_all(&dir).ok();
}

/// The library's own reduce: two real ranks analysed one by one and merged equal the pair analysed
/// together, in both modes.
#[test]
fn library_merge_equals_analyze_of_the_set() {
    let files = ["hta__sampled_rank-0.json.gz", "hta__sampled_rank-1.json.gz"];
    for mode in [Mode::Exact, Mode::HtaCompat] {
        let opts = AnalysisOptions {
            mode,
            ..Default::default()
        };
        let tables: Vec<_> = files
            .iter()
            .map(|f| load_path(&common::trace(f)).unwrap())
            .collect();
        let parts: Vec<MergePart> = tables
            .iter()
            .zip(files)
            .map(|(t, f)| {
                let all = analyze(&TraceSet::single(t.clone()), &opts);
                let text = serde_json::to_string(&all).unwrap();
                parse_part(f, &text).unwrap()
            })
            .collect();
        let merged = merge(parts).unwrap();
        let whole = analyze(&TraceSet::from_tables(tables), &opts);
        assert_eq!(merged.stragglers, whole.stragglers, "{mode:?}");
        let folder = serde_json::to_value(&whole).unwrap();
        assert_merge_matches_folder(&serde_json::to_value(&merged).unwrap(), &folder);
    }
}

/// One rank's `analyze --json` output, written to `dir`.
fn rank_output(dir: &Path, trace: &str, extra: &[&str], name: &str) -> String {
    let path = common::trace(trace);
    let mut args = vec!["analyze", "--json"];
    args.extend(extra);
    args.push(path.to_str().unwrap());
    let (code, out, err) = cli(&args);
    assert_eq!(code, 0, "{err}");
    let o = dir.join(name);
    std::fs::write(&o, out).unwrap();
    o.to_str().unwrap().to_string()
}

fn assert_merge_fails(args: &[&str], says: &str) {
    let mut all = vec!["merge"];
    all.extend(args);
    let (code, out, err) = cli(&all);
    assert_eq!(code, 2, "exit 2 for {args:?}: {err}");
    assert!(out.is_empty(), "nothing on stdout: {out}");
    assert!(err.contains(says), "{err:?} says {says:?}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn outputs_that_do_not_fit_together_exit_2() {
    let dir = temp_dir("errors");
    let r0 = rank_output(&dir, "hta__sampled_rank-0.json.gz", &[], "r0.json");
    let r1 = rank_output(&dir, "hta__sampled_rank-1.json.gz", &[], "r1.json");
    let r1_hta = rank_output(
        &dir,
        "hta__sampled_rank-1.json.gz",
        &["--compat", "hta"],
        "r1-hta.json",
    );
    let trace = common::trace("hta__sampled_rank-0.json.gz");
    let summary = dir.join("summary.json");
    let (_, out, _) = cli(&["summary", "--json", trace.to_str().unwrap()]);
    std::fs::write(&summary, out).unwrap();
    let summary = summary.to_str().unwrap();
    let old = dir.join("old.json");
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&r0).unwrap()).unwrap();
    doc.as_object_mut().unwrap().remove("straggler_inputs");
    std::fs::write(&old, doc.to_string()).unwrap();
    let old = old.to_str().unwrap();
    let missing = dir.join("missing.json");
    let missing = missing.to_str().unwrap();

    assert_merge_fails(&[&r0, &r0], "rank 0 is in");
    assert_merge_fails(&[&r0, &r1_hta], "hta-compat mode");
    assert_merge_fails(
        &[&r0, summary],
        "not an output of `profile-model analyze --json`",
    );
    assert_merge_fails(&[&r0, trace.to_str().unwrap()], "not JSON but gzip");
    assert_merge_fails(&[&r0, old], "no straggler_inputs");
    assert_merge_fails(&[&r0, missing], "missing.json");
    assert_merge_fails(&[], "merge needs one or more");

    // The two that fit: text and JSON.
    let (code, text, err) = cli(&["merge", &r1, &r0]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("Merged 2 analyze outputs"), "{text}");
    assert!(text.contains("Stragglers"), "{text}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_reduce_rejects_what_does_not_fit() {
    assert_eq!(merge(Vec::new()), Err(MergeError::Empty));
    let part = |file: &str, rank: i64, mode: Mode| MergePart {
        file: file.into(),
        mode,
        ranks: vec![rank],
        ..Default::default()
    };
    let e = merge(vec![part("a", 0, Mode::Exact), part("b", 0, Mode::Exact)]).unwrap_err();
    assert!(matches!(e, MergeError::SameRank { rank: 0, .. }), "{e}");
    let e = merge(vec![
        part("a", 0, Mode::Exact),
        part("b", 1, Mode::HtaCompat),
    ])
    .unwrap_err();
    assert!(matches!(e, MergeError::MixedModes { .. }), "{e}");
    let e = parse_part("x.json", "[1, 2]").unwrap_err();
    assert!(e.to_string().contains("not a JSON object"), "{e}");
}
