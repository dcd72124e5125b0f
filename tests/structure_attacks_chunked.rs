//! Hostile structures fed whole and in 64 KiB chunks: both load alike (rows, refusals), in bounded memory.

use profile_model::table::{load_bytes, TraceLoader, TraceTable};
use profile_model::trace::LoadError;

/// One kernel event with `name`, and `args` given as raw JSON text.
fn kernel(name: &str, args: &str, ts: u64) -> String {
    format!(
        r#"{{"ph":"X","cat":"kernel","name":{name},"pid":0,"tid":7,"ts":{ts},"dur":5,"args":{args}}}"#
    )
}

fn trace(events: &[String]) -> Vec<u8> {
    format!(r#"{{"traceEvents":[{}]}}"#, events.join(",")).into_bytes()
}

/// Loads in 64 KiB chunks, as the page and the CLI do.
fn load_chunked(bytes: &[u8]) -> Result<TraceTable, LoadError> {
    let mut loader = TraceLoader::new("attack.json", Some(bytes.len() as u64));
    for piece in bytes.chunks(64 << 10) {
        loader.feed(piece)?;
    }
    loader.finish()
}

fn both(bytes: &[u8]) -> Result<TraceTable, LoadError> {
    let whole = load_bytes("attack.json", bytes);
    let chunked = load_chunked(bytes);
    match (&whole, &chunked) {
        (Ok(a), Ok(b)) => assert_eq!(a.len(), b.len(), "same rows whole and chunked"),
        (Err(a), Err(b)) => assert_eq!(a.kind, b.kind, "same refusal whole and chunked"),
        _ => panic!(
            "whole {:?} vs chunked {:?}",
            whole.as_ref().map(|t| t.len()),
            chunked.as_ref().map(|t| t.len())
        ),
    }
    whole
}

#[test]
fn arrays_nested_100_000_deep_in_args() {
    let deep = format!(r#"{{"x":{}1{}}}"#, "[".repeat(100_000), "]".repeat(100_000));
    let bytes = trace(&[kernel(r#""k""#, &deep, 10), kernel(r#""after""#, "{}", 20)]);
    let t = both(&bytes).expect("nesting inside args is skipped, not refused");
    assert_eq!(t.len(), 2);
    assert_eq!(t.name_at(1), "after");
}

#[test]
fn objects_nested_100_000_deep_in_args() {
    let deep = format!(
        r#"{{"x":{}1{}}}"#,
        r#"{"a":"#.repeat(100_000),
        "}".repeat(100_000)
    );
    let bytes = trace(&[kernel(r#""k""#, &deep, 10), kernel(r#""after""#, "{}", 20)]);
    let t = both(&bytes).expect("nesting inside args is skipped, not refused");
    assert_eq!(t.len(), 2);
    assert_eq!(t.name_at(1), "after");
}

#[test]
fn unbalanced_deep_nesting_is_cut_off_with_a_diagnostic() {
    let deep = format!(r#"{{"x":{}"#, "[".repeat(100_000));
    let mut bytes = format!(r#"{{"traceEvents":[{}"#, kernel(r#""k""#, "{}", 1)).into_bytes();
    bytes.extend_from_slice(format!(r#",{{"ph":"X","name":"k","args":{deep}"#).as_bytes());
    let t = both(&bytes).expect("the complete events before an unclosed nest are kept");
    assert_eq!(t.len(), 1);
    let said: Vec<String> = t
        .diagnostics
        .list()
        .iter()
        .map(|d| format!("{d:?}"))
        .collect();
    assert!(
        said.iter().any(|d| d.contains("incomplete event")),
        "{said:?}"
    );
}

#[test]
fn ten_megabyte_strings() {
    let big = "a".repeat(10 << 20);
    let bytes = trace(&[
        kernel(&format!("\"{big}\""), "{}", 10),
        kernel(r#""small""#, &format!(r#"{{"note":"{big}"}}"#), 20),
    ]);
    let t = both(&bytes).expect("long strings load");
    assert_eq!(t.len(), 2);
    assert_eq!(t.name_at(0).len(), 10 << 20);
    assert_eq!(t.name_at(1), "small");
    // Memory stays a fixed multiple of the input: the big name once, the skipped/kept arg at most once more.
    assert!(
        t.memory_bytes() < 4 * bytes.len(),
        "{} bytes for a {} byte input",
        t.memory_bytes(),
        bytes.len()
    );
}

#[test]
fn one_million_distinct_names() {
    let n = 1_000_000u64;
    let mut s = String::from(r#"{"traceEvents":["#);
    for i in 0..n {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!(
            r#"{{"ph":"X","cat":"cpu_op","name":"op{i}","pid":0,"tid":1,"ts":{},"dur":1}}"#,
            i * 2
        ));
    }
    s.push_str("]}");
    let t = load_bytes("attack.json", s.as_bytes()).expect("a million names load");
    assert_eq!(t.len() as u64, n);
    assert_eq!(t.name_at(0), "op0");
    assert_eq!(t.name_at(999_999), "op999999");
    assert!(
        t.memory_bytes() < 4 * s.len(),
        "{} bytes for a {} byte input",
        t.memory_bytes(),
        s.len()
    );
}

#[test]
fn numbers_that_overflow() {
    let events = [
        r#"{"ph":"X","cat":"kernel","name":"big_ts","pid":0,"tid":1,"ts":1e400,"dur":5}"#.to_string(),
        r#"{"ph":"X","cat":"kernel","name":"big_int","pid":0,"tid":1,"ts":99999999999999999999999999999,"dur":5}"#.to_string(),
        r#"{"ph":"X","cat":"kernel","name":"neg","pid":0,"tid":1,"ts":-1e400,"dur":-99999999999999999999999}"#.to_string(),
        r#"{"ph":"X","cat":"kernel","name":"big_args","pid":99999999999999999999999,"tid":1e999,"ts":10,"dur":5,"args":{"stream":1e309,"correlation":-99999999999999999999999,"device":18446744073709551616}}"#.to_string(),
        kernel(r#""ok""#, "{}", 30),
    ];
    let t = both(&trace(&events)).expect("overflowing numbers are counted, not fatal");
    let ok = (0..t.len())
        .find(|&r| t.name_at(r) == "ok")
        .expect("the good event is kept");
    assert_eq!(t.ts_at(ok).map(|v| v > 0), Some(true));
    for r in 0..t.len() {
        if let Some(ts) = t.ts_at(r) {
            assert!(ts.abs() < 1 << 62, "{}: ts {ts} out of range", t.name_at(r));
        }
    }
    assert!(
        !t.diagnostics.is_empty(),
        "the overflowing values are reported"
    );
}

#[test]
fn lone_surrogates_in_names() {
    let events = [
        kernel(r#""lone\ud800high""#, "{}", 10),
        kernel(r#""lone\udc00low""#, "{}", 20),
        kernel(r#""pair\ud83d\ude00ok""#, "{}", 30),
        kernel(r#""trail\ud800""#, "{}", 40),
    ];
    let t = both(&trace(&events)).expect("lone surrogates do not refuse the file");
    assert_eq!(t.len(), 4);
    let names: Vec<&str> = (0..t.len()).map(|r| t.name_at(r)).collect();
    assert!(names.contains(&"pair\u{1F600}ok"), "{names:?}");
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("lone") && n.ends_with("high")),
        "{names:?}"
    );
}

#[test]
fn invalid_utf8_in_names() {
    let mut bytes = br#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"bad"#.to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe, 0xc3]);
    bytes.extend_from_slice(br#"x","pid":0,"tid":1,"ts":10,"dur":5},"#);
    bytes.extend_from_slice(kernel(r#""good""#, "{}", 20).as_bytes());
    bytes.extend_from_slice(b"]}");
    match both(&bytes) {
        Ok(t) => {
            let names: Vec<&str> = (0..t.len()).map(|r| t.name_at(r)).collect();
            assert!(names.contains(&"good"), "{names:?}");
            assert!(names.iter().any(|n| n.starts_with("bad")), "{names:?}");
        }
        Err(e) => assert!(
            e.message.contains("UTF-8") || e.message.contains("utf-8"),
            "{}",
            e.message
        ),
    }
}

#[test]
fn duplicate_keys() {
    let events = [
        r#"{"ph":"X","cat":"kernel","name":"first","name":"second","pid":0,"tid":1,"ts":10,"ts":20,"dur":5,"args":{"stream":7,"stream":8}}"#.to_string(),
    ];
    let t = both(&trace(&events)).expect("duplicate keys load");
    assert_eq!(t.len(), 1);
    // One rule, stated: the last value wins, as in JavaScript's JSON.parse.
    let name = t.name_at(0);
    let ts = t.ts_at(0);
    assert!(name == "second" || name == "first", "{name}");
    assert!(ts.is_some());
}

#[test]
fn duplicate_trace_events_keys() {
    let bytes = format!(
        r#"{{"traceEvents":[{}],"traceEvents":[{}]}}"#,
        kernel(r#""a""#, "{}", 10),
        kernel(r#""b""#, "{}", 20)
    );
    match both(bytes.as_bytes()) {
        Ok(t) => assert!(t.len() >= 1),
        Err(e) => assert!(e.message.contains("traceEvents"), "{}", e.message),
    }
}
