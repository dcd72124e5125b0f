//! HTA 0.5.0 quirks that the HTA-compatible mode copies on purpose, each on a trace built in code,
//! through `analyze()` and through the CLI.

use profile_model::analysis::all::{analyze, AnalysisOptions};
use profile_model::table::{load_bytes, TraceSet};
use serde_json::json;

/// The first event of the file is a CPU op at 500 µs. Kernel A (launched at 10 µs) runs 100-200 µs;
/// kernel B runs 600-700 µs with a correlation whose launch is not in the trace. HTA joins B to the
/// file's first event (`index_correlation = 0`): its "launch" (500 µs) is after A's end, so the
/// 400 µs gap is host wait. Exact mode does not know B's launch: the gap is "other" (≥ 30 µs).
fn trace() -> Vec<u8> {
    let ev = json!({"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "aten::first", "pid": 1, "tid": 1, "ts": 500, "dur": 5},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
         "args": {"correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": "kernel_a", "pid": 0, "tid": 7, "ts": 100, "dur": 100,
         "args": {"correlation": 1, "stream": 7, "device": 0}},
        {"ph": "X", "cat": "kernel", "name": "kernel_b", "pid": 0, "tid": 7, "ts": 600, "dur": 100,
         "args": {"correlation": 2, "stream": 7, "device": 0}}
    ]});
    serde_json::to_vec(&ev).unwrap()
}

fn category_us(v: &serde_json::Value, cat: &str) -> f64 {
    v["idle_time_breakdown"][0]["categories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["category"] == cat)
        .map_or(0.0, |c| c["idle_us"].as_f64().unwrap())
}

#[test]
fn a_device_row_whose_launch_is_missing_joins_the_first_event_in_compat_mode() {
    let set = TraceSet::single(load_bytes("quirk.json", &trace()).unwrap());
    let compat = serde_json::to_value(analyze(&set, &AnalysisOptions::hta_compat())).unwrap();
    assert_eq!(
        category_us(&compat, "host_wait"),
        400.0,
        "{}",
        compat["idle_time_breakdown"]
    );
    let exact = serde_json::to_value(analyze(&set, &AnalysisOptions::default())).unwrap();
    assert_eq!(category_us(&exact, "host_wait"), 0.0);
    assert_eq!(category_us(&exact, "other"), 400.0);
    // The CLI gives the same.
    let dir = std::env::temp_dir().join(format!("pm-quirk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("quirk.json");
    std::fs::write(&file, trace()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_profile-model"))
        .args(["analyze", "--json", "--compat", "hta"])
        .arg(&file)
        .output()
        .unwrap();
    let cli: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(category_us(&cli, "host_wait"), 400.0);
    let _ = std::fs::remove_dir_all(&dir);
}
