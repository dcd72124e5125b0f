//! Hostile structures: each loads (or is refused) with a clear outcome, in bounded time and memory, and
//! the analyses and the report run on whatever loads. Built in code, one case per test.

use std::io::Write;
use std::time::{Duration, Instant};

use profile_model::analysis::all::{analyze, AnalysisOptions};
use profile_model::report::diagnosis::diagnose;
use profile_model::table::{load_bytes, TraceSet, TraceTable};
use profile_model::trace::DiagnosticKind;

fn kernel(name: &str, ts: u64) -> String {
    format!(
        r#"{{"ph":"X","cat":"kernel","name":{},"pid":0,"tid":7,"ts":{ts},"dur":5,"args":{{"stream":7,"device":0}}}}"#,
        serde_json::to_string(name).unwrap()
    )
}

fn trace_of(events: &[String]) -> Vec<u8> {
    format!(r#"{{"traceEvents":[{}]}}"#, events.join(",")).into_bytes()
}

/// Loads within `limit`, then runs every analysis and the report (which must not panic).
fn load_and_analyse(name: &str, bytes: &[u8], limit: Duration) -> TraceTable {
    let started = Instant::now();
    let table = load_bytes(name, bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let set = TraceSet::single(table.clone());
    let _ = analyze(&set, &AnalysisOptions::default());
    let _ = analyze(&set, &AnalysisOptions::hta_compat());
    let r = diagnose(&set);
    assert!(!r.main_finding.is_empty(), "{name}: a report");
    assert!(
        started.elapsed() < limit,
        "{name} took {:?}",
        started.elapsed()
    );
    table
}

fn kernels(t: &TraceTable) -> u64 {
    profile_model::analysis::summary::summarize(t).kernels
}

fn has(t: &TraceTable, kind: DiagnosticKind) -> bool {
    t.diagnostics.list().iter().any(|d| d.kind == kind)
}

#[test]
fn arrays_and_objects_nested_100000_deep_inside_args() {
    let depth = 100_000;
    for (label, value) in [
        (
            "array",
            format!("{}{}", "[".repeat(depth), "]".repeat(depth)),
        ),
        (
            "object",
            format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth)),
        ),
    ] {
        let event = format!(
            r#"{{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":5,"args":{{"stream":7,"deep":{value}}}}}"#
        );
        let t = load_and_analyse(
            label,
            &trace_of(&[event, kernel("next", 10)]),
            Duration::from_secs(20),
        );
        assert_eq!(kernels(&t), 2, "{label}: both kernels load");
    }
}

#[test]
fn nesting_100000_deep_in_place_of_an_event_is_skipped_and_counted() {
    let depth = 100_000;
    let deep = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let t = load_and_analyse(
        "deep",
        &trace_of(&[deep, kernel("k", 1)]),
        Duration::from_secs(20),
    );
    assert_eq!(kernels(&t), 1);
    assert!(has(&t, DiagnosticKind::NonObjectEvent));
}

#[test]
fn a_10_mb_name_loads() {
    let big = "x".repeat(10 << 20);
    let t = load_and_analyse(
        "big",
        &trace_of(&[kernel(&big, 1), kernel("small", 10)]),
        Duration::from_secs(30),
    );
    assert_eq!(kernels(&t), 2);
}

#[test]
fn a_million_distinct_names_load_and_the_results_stay_bounded() {
    let mut text = Vec::with_capacity(100 << 20);
    text.extend_from_slice(br#"{"traceEvents":["#);
    for i in 0..1_000_000u64 {
        if i > 0 {
            text.push(b',');
        }
        write!(
            text,
            r#"{{"ph":"X","cat":"kernel","name":"k{i}","pid":0,"tid":7,"ts":{},"dur":1,"args":{{"stream":7}}}}"#,
            i * 2
        )
        .unwrap();
    }
    text.extend_from_slice(b"]}");
    let started = Instant::now();
    let table = load_bytes("names.json", &text).unwrap();
    assert_eq!(kernels(&table), 1_000_000);
    let set = TraceSet::single(table);
    let all = analyze(&set, &AnalysisOptions::default());
    let listed = all.kernel_breakdown.kernels_all_ranks.len();
    assert!(
        listed <= profile_model::analysis::kernels::MAX_NAMES_PER_TYPE + 1,
        "{listed} names listed"
    );
    let json = serde_json::to_string(&all).unwrap();
    assert!(
        json.len() < text.len() / 10,
        "analyze JSON {} bytes for {} of trace",
        json.len(),
        text.len()
    );
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn numbers_that_overflow_are_counted_not_trusted() {
    let events = [
        r#"{"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":1e400,"dur":5,"args":{"stream":7}}"#.to_string(),
        r#"{"ph":"X","cat":"kernel","name":"b","pid":99999999999999999999999,"tid":-99999999999999999999,"ts":5,"dur":99999999999999999999999999,"args":{"stream":1e999}}"#.to_string(),
        r#"{"ph":"X","cat":"kernel","name":"c","pid":0,"tid":7,"ts":10,"dur":-1e400,"args":{"stream":7}}"#.to_string(),
        kernel("d", 20),
    ];
    let t = load_and_analyse("overflow", &trace_of(&events), Duration::from_secs(10));
    assert_eq!(t.len(), 4, "every event is kept");
    assert!(
        has(&t, DiagnosticKind::MissingTimestamp),
        "{:?}",
        t.diagnostics.list()
    );
    // The only figures are those of the well-formed kernel and the ones with a usable time.
    let time = profile_model::analysis::summary::summarize(&t).kernel_time_us;
    assert!(time.is_finite() && time < 1e6, "{time}");
}

#[test]
fn lone_surrogates_and_invalid_utf8_in_names_are_replaced() {
    let surrogate = br#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"bad\ud800name","pid":0,"tid":7,"ts":1,"dur":5,"args":{"stream":7}}]}"#;
    let t = load_and_analyse("surrogate", surrogate, Duration::from_secs(5));
    assert_eq!(t.name_at(0), "bad\u{FFFD}name");
    let mut invalid = br#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"bad"#.to_vec();
    invalid.extend_from_slice(b"\xff\xfe");
    invalid.extend_from_slice(br#"name","pid":0,"tid":7,"ts":1,"dur":5,"args":{"stream":7}}]}"#);
    let t = load_and_analyse("invalid", &invalid, Duration::from_secs(5));
    assert!(t.name_at(0).starts_with("bad\u{FFFD}"), "{}", t.name_at(0));
    assert_eq!(kernels(&t), 1);
}

#[test]
fn duplicate_keys_keep_the_last_value_as_json_readers_do() {
    let text = br#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"first","name":"second","pid":0,"tid":7,"ts":1,"ts":3,"dur":5,"args":{"stream":7}}]}"#;
    let t = load_and_analyse("dup", text, Duration::from_secs(5));
    assert_eq!(t.name_at(0), "second");
    assert_eq!(t.ts_at(0), Some(3_000));
}

#[test]
fn a_gzip_bomb_inflates_in_bounded_memory_and_time() {
    // 512 MiB of white space inside a valid trace, about 0.5 MB compressed.
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(br#"{"traceEvents":["#).unwrap();
    let spaces = vec![b' '; 1 << 20];
    for _ in 0..512 {
        e.write_all(&spaces).unwrap();
    }
    e.write_all(kernel("k", 1).as_bytes()).unwrap();
    e.write_all(b"]}").unwrap();
    let gz = e.finish().unwrap();
    assert!(gz.len() < 2 << 20, "{} bytes compressed", gz.len());
    let dir = std::env::temp_dir().join(format!("pm-bomb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bomb.json.gz");
    std::fs::write(&path, &gz).unwrap();
    let started = Instant::now();
    let t = profile_model::table::load_path(&path).unwrap();
    assert_eq!(kernels(&t), 1);
    assert_eq!(
        t.metadata.text_bytes,
        (512u64 << 20) + 16 + 2 + kernel("k", 1).len() as u64
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
