//! Every real trace in ../shared/traces loads (or is refused with the right message), and the summary's
//! figures equal an independent count made by walking the JSON with serde_json.

use crate::common;

use profile_model::analysis::summary::summarize;
use profile_model::table::{load_path, TraceLoader};
use profile_model::trace::LoadErrorKind;
use serde_json::Value;

struct Independent {
    events: u64,
    kernels: u64,
    kernel_time_us: f64,
    top_kernel: Option<String>,
    rank: Option<i64>,
    device: Option<String>,
}

/// Counts with serde_json::Value, another decoder (flate2) and float arithmetic: shares no code with the crate.
fn independent(path: &std::path::Path) -> Independent {
    let doc: Value = serde_json::from_slice(&common::json_text(path)).unwrap();
    let (events, meta) = match &doc {
        Value::Array(a) => (a.clone(), None),
        Value::Object(o) => (o["traceEvents"].as_array().unwrap().clone(), Some(o)),
        _ => unreachable!(),
    };
    let mut kernels = 0;
    let mut total = 0.0;
    let mut by_name: std::collections::BTreeMap<String, f64> = Default::default();
    for e in &events {
        let cat = e.get("cat").and_then(Value::as_str).unwrap_or("");
        if cat == "kernel" || cat == "Kernel" {
            kernels += 1;
            let d = e.get("dur").and_then(Value::as_f64).unwrap_or(0.0);
            total += d;
            *by_name
                .entry(e["name"].as_str().unwrap().to_string())
                .or_default() += d;
        }
    }
    let top_kernel = by_name
        .iter()
        .max_by(|a, b| a.1.partial_cmp(b.1).unwrap().then(b.0.cmp(a.0)))
        .map(|(k, _)| k.clone());
    Independent {
        events: events.len() as u64,
        kernels,
        kernel_time_us: total,
        top_kernel,
        rank: meta
            .and_then(|m| m.get("distributedInfo"))
            .and_then(|d| d.get("rank"))
            .and_then(Value::as_i64),
        device: meta
            .and_then(|m| m.get("deviceProperties"))
            .and_then(|d| d.get(0))
            .and_then(|d| d.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

#[test]
fn every_real_trace_loads_or_is_refused_clearly() {
    let mut loaded = 0;
    for path in common::trace_files() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let result = load_path(&path);
        if name.contains("NOT_KINETO") {
            let err = result.expect_err(&name);
            assert_eq!(err.kind, LoadErrorKind::NotATrace, "{name}: {err}");
            if name.contains("execution_trace") {
                assert!(err.message.contains("execution trace"), "{name}: {err}");
            } else {
                assert!(err.message.contains("memory-timeline"), "{name}: {err}");
            }
            continue;
        }
        let table = result.unwrap_or_else(|e| panic!("{name}: {e}"));
        let s = summarize(&table);
        let want = independent(&path);
        assert_eq!(s.events, want.events, "{name}: events");
        assert_eq!(s.kernels, want.kernels, "{name}: kernels");
        let tol = 1e-6 * want.kernel_time_us.abs().max(1.0);
        assert!(
            (s.kernel_time_us - want.kernel_time_us).abs() <= tol,
            "{name}: kernel time {} vs {}",
            s.kernel_time_us,
            want.kernel_time_us
        );
        assert_eq!(
            s.top_kernels.first().map(|k| k.name.clone()),
            want.top_kernel,
            "{name}: top kernel"
        );
        assert_eq!(s.rank, want.rank, "{name}: rank");
        assert_eq!(s.device, want.device, "{name}: device");
        let pct: f64 = s.top_kernels.iter().map(|k| k.pct_of_kernel_time).sum();
        assert!(
            pct <= 100.0 + 1e-9,
            "{name}: top-kernel shares add to {pct}"
        );
        // No real trace here is damaged: nothing of data-loss severity or worse may be reported.
        for d in table.diagnostics.list() {
            assert!(
                d.severity == profile_model::trace::Severity::Info,
                "{name}: unexpected diagnostic {d:?}"
            );
        }
        loaded += 1;
    }
    assert!(loaded >= 20, "only {loaded} traces loaded");
}

#[test]
fn float_microsecond_timestamps_keep_their_nanoseconds() {
    // nccl_data writes ts like 4458676522690.655: the table must hold 4458676522690655 ns exactly.
    let path = common::trace("hta__nccl_data.json.gz");
    let table = load_path(&path).unwrap();
    let doc: Value = serde_json::from_slice(&common::json_text(&path)).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let mut checked = 0;
    for (row, e) in events.iter().enumerate() {
        // The text of the number, as written, gives the exact ns.
        if let Some(ts) = e.get("ts").and_then(Value::as_f64) {
            let ns = (ts * 1000.0).round() as i64;
            let got = table.ts_at(row).unwrap();
            assert!((got - ns).abs() <= 1, "row {row}: {got} vs {ns}");
            checked += 1;
        }
    }
    assert!(checked > 40_000);
}

#[test]
fn loading_reports_progress_in_bytes_and_entries() {
    let path = common::trace("hta__sampled_rank-0.json.gz");
    let raw = std::fs::read(&path).unwrap();
    let mut loader = TraceLoader::new("rank0", Some(raw.len() as u64));
    let half = raw.len() / 2;
    loader.feed(&raw[..half]).unwrap();
    assert_eq!(loader.raw_bytes(), half as u64);
    let mid_entries = loader.entries();
    loader.feed(&raw[half..]).unwrap();
    assert!(loader.entries() > mid_entries);
    let text_len = common::json_text(&path).len() as u64;
    assert_eq!(loader.text_bytes(), text_len);
    let table = loader.finish().unwrap();
    assert_eq!(table.metadata.text_bytes, text_len);
    assert!(table.metadata.gzip);
}
