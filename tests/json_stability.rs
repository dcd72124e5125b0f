//! `analyze --json` stability: the JSON round-trips through the typed `AllAnalyses` unchanged, and (when a baseline folder is given) is byte-identical to it.
//!
//! The baseline lives outside the repository (traces and outputs derived from them are never copied in):
//! set `PROFILE_MODEL_ANALYZE_BASELINE` to a folder holding `NAME.exact.json` and `NAME.hta.json`
//! written by an earlier build's `analyze --json [--compat hta] NAME`.

use crate::common;

use profile_model::analysis::all::AllAnalyses;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Runs the CLI's `analyze --json` (with `--compat hta` when `hta`); `None` when it refuses the file.
fn analyze_json(path: &Path, hta: bool) -> Option<Vec<u8>> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_profile-model"));
    cmd.arg("analyze").arg("--json");
    if hta {
        cmd.args(["--compat", "hta"]);
    }
    let out = cmd.arg(path).output().expect("run profile-model");
    out.status.success().then_some(out.stdout)
}

#[test]
fn analyze_json_round_trips_through_typed_analyses_on_every_shared_trace() {
    let mut checked = 0;
    for path in common::trace_files() {
        for hta in [false, true] {
            let Some(bytes) = analyze_json(&path, hta) else {
                continue;
            };
            let value: Value = serde_json::from_slice(&bytes).expect("analyze --json is JSON");
            let typed: AllAnalyses = serde_json::from_value(value.clone())
                .unwrap_or_else(|e| panic!("{} (hta={hta}): not AllAnalyses: {e}", path.display()));
            let back = serde_json::to_value(&typed).expect("serialise");
            assert_eq!(
                back,
                value,
                "{} (hta={hta}): JSON changed in a round trip",
                path.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "no trace analysed: set PROFILE_MODEL_TRACES");
}

#[test]
fn analyze_json_is_byte_identical_to_the_stored_baseline() {
    let Some(dir) = std::env::var_os("PROFILE_MODEL_ANALYZE_BASELINE") else {
        eprintln!("PROFILE_MODEL_ANALYZE_BASELINE not set: baseline comparison skipped");
        return;
    };
    let dir = Path::new(&dir);
    let mut differ = Vec::new();
    let mut checked = 0;
    for path in common::trace_files() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        for (hta, suffix) in [(false, "exact"), (true, "hta")] {
            let base = dir.join(format!("{name}.{suffix}.json"));
            let Ok(expected) = std::fs::read(&base) else {
                continue;
            };
            let got = analyze_json(&path, hta).unwrap_or_default();
            if got != expected {
                differ.push(format!("{name} ({suffix})"));
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "no baseline file found in {}", dir.display());
    assert!(differ.is_empty(), "analyze --json changed for: {differ:?}");
}
