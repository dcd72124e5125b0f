//! One small inline trace per dialect and oddity (speedscope-style fixtures built in code).

use profile_model::analysis::summary::summarize;
use profile_model::table::query::{query_events, EventQuery, GroupBy};
use profile_model::table::{load_bytes, EventKind, TraceLoader, TraceSet, TraceTable};
use profile_model::trace::{DiagnosticKind, LoadErrorKind};

fn load(text: &str) -> TraceTable {
    load_bytes("fixture.json", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"))
}

fn load_chunked(text: &str, chunk: usize) -> TraceTable {
    let mut l = TraceLoader::new("fixture.json", None);
    for c in text.as_bytes().chunks(chunk) {
        l.feed(c).unwrap();
    }
    l.finish().unwrap()
}

fn gzip(text: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(text).unwrap();
    e.finish().unwrap()
}

const OLD_KINETO: &str = r#"[
  {"ph": "X", "cat": "Operator", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, "dur": 50, "args": {"external id": 7}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 5, "args": {"correlation": 99, "external id": 7}},
  {"ph": "X", "cat": "Kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": "stream 7", "ts": 120, "dur": 30, "args": {"correlation": 99, "external id": 7, "device": 0}},
  {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": "stream 7", "ts": 160, "dur": 4, "args": {"bytes": 4096}},
  {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7", "ts": 170, "dur": 1},
  {"ph": "s", "cat": "async", "name": "launch", "pid": 1, "tid": 1, "ts": 110, "id": 99},
  {"ph": "f", "cat": "async", "name": "launch", "pid": 0, "tid": "stream 7", "ts": 120, "id": 99, "bp": "e"}
]"#;

#[test]
fn old_kineto_bare_array_with_old_categories() {
    let t = load(OLD_KINETO);
    assert_eq!(t.len(), 7);
    assert!(!t.metadata.object_form);
    let kinds: Vec<EventKind> = (0..t.len()).map(|r| t.kind_at(r)).collect();
    use EventKind::*;
    assert_eq!(
        kinds,
        vec![CpuOp, Runtime, Kernel, Memcpy, Memset, Flow, Flow]
    );
    // Original categories are kept.
    assert_eq!(t.category_at(2), Some("Kernel"));
    // Lower-case "external id" lands in the same column as "External id".
    assert_eq!(t.external_id_at(0), Some(7));
    // A string tid: kept as written; the kernel's stream comes from it when args.stream is absent.
    assert_eq!(t.tid_at(2), "stream 7");
    assert_eq!(t.stream_at(2), Some(7));
    assert_eq!(t.stream_at(0), None);
    assert_eq!(t.flow_id_at(5), Some(99));
    let s = summarize(&t);
    assert_eq!((s.kernels, s.kernel_time_us), (1, 30.0));
    assert!(t.diagnostics.is_empty(), "{:?}", t.diagnostics.list());
}

#[test]
fn metadata_keys_before_and_after_the_events() {
    let t = load(
        r#"{"schemaVersion": 1, "distributedInfo": {"rank": 3, "world_size": 8, "backend": "nccl"},
            "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2, "args": {"stream": 7}}],
            "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}], "displayTimeUnit": "ms", "baseTimeNanoseconds": 1700000000000000000,
            "trace_id": "ABC"}"#,
    );
    assert_eq!(t.metadata.rank, Some(3));
    assert_eq!(t.metadata.world_size, Some(8));
    assert_eq!(t.metadata.backend.as_deref(), Some("nccl"));
    assert_eq!(t.metadata.device_name.as_deref(), Some("NVIDIA H100"));
    assert_eq!(t.metadata.display_time_unit.as_deref(), Some("ms"));
    assert_eq!(t.metadata.base_time_ns, Some(1_700_000_000_000_000_000));
    assert_eq!(t.metadata.trace_id.as_deref(), Some("ABC"));
    assert_eq!(t.metadata.top_level.len(), 6);
    assert!(t.metadata.object_form);
}

#[test]
fn truncated_file_keeps_complete_events_and_says_what_was_lost() {
    let full = r#"{"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "tid": 7, "ts": 1, "dur": 2},
        {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "tid": 7, "ts": 5, "dur": 3},
        {"ph": "X", "cat": "kernel", "name": "c", "pid": 0, "tid": 7, "ts": 9, "dur": 4}]}"#;
    let cut = full.find(r#""name": "c""#).unwrap();
    for chunk in [1, 3, 1000] {
        let t = load_chunked(&full[..cut], chunk);
        assert_eq!(t.len(), 2, "chunk {chunk}");
        assert_eq!(t.diagnostics.count(DiagnosticKind::TruncatedTail), 1);
        assert_eq!(
            t.diagnostics.count(DiagnosticKind::MissingClosingBrackets),
            1
        );
    }
    // Cut right after a complete event: nothing truncated, only the brackets missing.
    let after_b = full
        .find(r#"{"ph": "X", "cat": "kernel", "name": "c""#)
        .unwrap();
    let t = load(&full[..after_b]);
    assert_eq!(t.len(), 2);
    assert_eq!(t.diagnostics.count(DiagnosticKind::TruncatedTail), 0);
    assert_eq!(
        t.diagnostics.count(DiagnosticKind::MissingClosingBrackets),
        1
    );
    // A gzip file cut in the middle behaves the same.
    let gz = gzip(full.as_bytes());
    let t = load_bytes("cut.json.gz", &gz[..gz.len() * 2 / 3]).unwrap();
    assert!(t.len() < 3);
    assert!(t.diagnostics.count(DiagnosticKind::TruncatedTail) >= 1);
}

#[test]
fn truncated_before_any_event_is_an_error() {
    let e = load_bytes("t.json", br#"{"schemaVersion": 1, "traceEv"#).unwrap_err();
    assert_eq!(e.kind, LoadErrorKind::Truncated, "{e}");
}

#[test]
fn trailing_commas_are_tolerated() {
    let t = load(
        r#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 1, "args": {"x": 1,},},],}"#,
    );
    assert_eq!(t.len(), 1);
    assert_eq!(t.diagnostics.count(DiagnosticKind::TrailingComma), 1);
    assert_eq!(t.arg("x").unwrap().i64_at(0), Some(1));
}

#[test]
fn float_nanosecond_timestamps_are_exact() {
    let t = load(
        r#"[{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 4458676522690.655, "dur": 41.407}]"#,
    );
    assert_eq!(t.ts_at(0), Some(4_458_676_522_690_655));
    assert_eq!(t.dur_at(0), Some(41_407));
    let s = summarize(&t);
    assert_eq!(s.kernel_time_us, 41.407);
}

#[test]
fn begin_end_pairs_become_durations() {
    let t = load(
        r#"[{"ph": "B", "name": "outer", "cat": "user_annotation", "pid": 1, "tid": 1, "ts": 10},
            {"ph": "B", "name": "inner", "cat": "user_annotation", "pid": 1, "tid": 1, "ts": 12},
            {"ph": "B", "name": "other thread", "cat": "user_annotation", "pid": 1, "tid": 2, "ts": 13},
            {"ph": "E", "pid": 1, "tid": 1, "ts": 15},
            {"ph": "E", "pid": 1, "tid": 1, "ts": 30},
            {"ph": "E", "pid": 1, "tid": 1, "ts": 31}]"#,
    );
    assert_eq!(t.dur_at(0), Some(20_000));
    assert_eq!(t.dur_at(1), Some(3_000));
    assert_eq!(t.dur_at(2), None);
    assert_eq!(t.diagnostics.count(DiagnosticKind::UnpairedBegin), 1);
    assert_eq!(t.diagnostics.count(DiagnosticKind::UnpairedEnd), 1);
}

#[test]
fn args_become_typed_columns() {
    let t = load(
        r#"[{"ph": "X", "name": "a", "cat": "cpu_op", "ts": 1, "dur": 1, "args": {"i": 1, "f": 1, "b": true, "s": "x", "m": 1, "dims": [[1, 2], []], "n": null}},
            {"ph": "X", "name": "b", "cat": "cpu_op", "ts": 2, "dur": 1, "args": {"i": 2, "f": 2.5, "b": false, "s": "x", "m": "one"}},
            {"ph": "X", "name": "c", "cat": "cpu_op", "ts": 3, "dur": 1, "args": {"n": 4}}]"#,
    );
    let ty = |k: &str| t.arg(k).unwrap().type_name();
    assert_eq!(ty("i"), "Int64");
    assert_eq!(ty("f"), "Float64");
    assert_eq!(ty("b"), "Boolean");
    assert_eq!(ty("s"), "Utf8");
    assert_eq!(ty("m"), "Utf8");
    assert_eq!(ty("dims"), "Utf8");
    assert_eq!(ty("n"), "Int64");
    assert!(t.arg("m").unwrap().mixed_types);
    assert!(!t.arg("i").unwrap().mixed_types);
    assert_eq!(t.diagnostics.count(DiagnosticKind::MixedTypeArg), 1);
    assert_eq!(t.arg("m").unwrap().text_at(0), Some("1"));
    assert_eq!(t.arg("dims").unwrap().text_at(0), Some("[[1,2],[]]"));
    let f = t.arg("f").unwrap();
    assert_eq!((f.f64_at(0), f.f64_at(1)), (Some(1.0), Some(2.5)));
    let n = t.arg("n").unwrap();
    assert_eq!(n.rows.values().as_slice(), &[0, 2]);
    assert_eq!((n.i64_at(0), n.i64_at(1)), (None, Some(4)));
    // A row without the key is not listed.
    assert_eq!(t.arg("i").unwrap().find(2), None);
}

#[test]
fn well_known_args_keep_their_type() {
    let t = load(
        r#"[{"ph": "X", "name": "Memcpy HtoD", "cat": "gpu_memcpy", "pid": 0, "tid": 7, "ts": 1, "dur": 1,
             "args": {"bytes": 4096.0, "memory bandwidth (GB/s)": 3, "stream": 7, "correlation": 5, "grid": [1, 1, 1]}}]"#,
    );
    assert_eq!(t.arg("bytes").unwrap().type_name(), "Int64");
    assert_eq!(
        t.arg("memory bandwidth (GB/s)").unwrap().type_name(),
        "Float64"
    );
    assert_eq!(t.arg("grid").unwrap().type_name(), "Utf8");
    assert_eq!((t.stream_at(0), t.correlation_at(0)), (Some(7), Some(5)));
}

#[test]
fn streams_and_devices_widen_past_32_bits() {
    // The stream and device columns are Int32 until a value needs more (CUDA writes stream
    // 4294967295 on a context sync); then every value is kept exactly in Int64.
    let kernel = |ts: u32, stream: i64, device: i64| {
        format!(
            r#"{{"ph": "X", "name": "k", "cat": "kernel", "pid": 0, "tid": 7, "ts": {ts}, "dur": 1,
                "args": {{"stream": {stream}, "device": {device}, "correlation": {ts}}}}}"#
        )
    };
    let small = load(&format!("[{}, {}]", kernel(1, 7, 1), kernel(2, -1, 0)));
    assert_eq!(small.stream.width(), 4);
    assert_eq!(small.device.width(), 4);
    assert_eq!(
        (small.stream_at(1), small.device_at(1)),
        (Some(-1), Some(0))
    );
    let wide = load(&format!(
        "[{}, {}, {}]",
        kernel(1, 7, 1),
        kernel(2, 4294967295, 0),
        kernel(3, -1, 4294967296)
    ));
    assert_eq!((wide.stream.width(), wide.device.width()), (8, 8));
    let streams: Vec<_> = (0..3).map(|r| wide.stream_at(r)).collect();
    assert_eq!(streams, [Some(7), Some(4294967295), Some(-1)]);
    let devices: Vec<_> = (0..3).map(|r| wide.device_at(r)).collect();
    assert_eq!(devices, [Some(1), Some(0), Some(4294967296)]);
    assert!(
        wide.arg("stream").is_none(),
        "no sparse args_stream for numbers"
    );
}

#[test]
fn ids_as_strings_and_numbers() {
    let t = load(
        r#"[{"ph": "X", "name": "a", "cat": "cpu_op", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 1, "dur": 1},
            {"ph": "X", "name": "b", "cat": "cpu_op", "pid": 12, "tid": 13, "ts": 1, "dur": 1},
            {"ph": "s", "name": "f", "cat": "ac2g", "pid": 12, "tid": 13, "ts": 1, "id": "0x1f"},
            {"ph": "M", "name": "process_name", "pid": 12, "tid": 0, "args": {"name": "python3"}},
            {"ph": "M", "name": "thread_name", "pid": 12, "tid": 13, "args": {"name": "main"}}]"#,
    );
    assert_eq!((t.pid_at(0), t.tid_at(0)), ("Spans", "PyTorch Profiler"));
    assert_eq!((t.pid_at(1), t.tid_at(1)), ("12", "13"));
    assert_eq!(t.flow_id_at(2), Some(31));
    assert_eq!(
        t.metadata.process_names.get("12").map(String::as_str),
        Some("python3")
    );
    assert_eq!(
        t.metadata.thread_names.get("12/13").map(String::as_str),
        Some("main")
    );
}

#[test]
fn new_kineto_categories_map_to_one_kind() {
    let cats = [
        ("kernel", EventKind::Kernel),
        ("gpu_memcpy", EventKind::Memcpy),
        ("gpu_memset", EventKind::Memset),
        ("cpu_op", EventKind::CpuOp),
        ("cuda_runtime", EventKind::Runtime),
        ("cuda_driver", EventKind::Driver),
        ("user_annotation", EventKind::UserAnnotation),
        ("gpu_user_annotation", EventKind::GpuUserAnnotation),
        ("python_function", EventKind::PythonFunction),
        ("cuda_sync", EventKind::Sync),
        ("overhead", EventKind::Overhead),
        ("Trace", EventKind::Trace),
        ("mtia_ccp_events", EventKind::AcceleratorOp),
        ("mtia_runtime", EventKind::Runtime),
    ];
    let events: Vec<String> = cats
        .iter()
        .map(|(c, _)| format!(r#"{{"ph": "X", "cat": "{c}", "name": "n", "pid": 1, "tid": 1, "ts": 1, "dur": 1}}"#))
        .chain([r#"{"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1, "s": "t"}"#.to_string()])
        .collect();
    let t = load(&format!("[{}]", events.join(",")));
    for (row, (cat, kind)) in cats.iter().enumerate() {
        assert_eq!(t.kind_at(row), *kind, "{cat}");
    }
    assert_eq!(t.kind_at(cats.len()), EventKind::Instant);
    assert!(t.diagnostics.is_empty(), "{:?}", t.diagnostics.list());
}

#[test]
fn unknown_phases_and_categories_are_counted_not_dropped() {
    let t = load(
        r#"[{"ph": "Z", "cat": "cpu_op", "name": "a", "ts": 1},
            {"ph": "X", "cat": "brand_new_thing", "name": "b", "ts": 1, "dur": 1},
            {"ph": "X", "cat": "cpu_op", "name": "neg", "ts": 5, "dur": -2},
            {"ph": "X", "cat": "cpu_op", "name": "nodur", "ts": 5},
            7]"#,
    );
    assert_eq!(t.len(), 4);
    assert_eq!(t.metadata.trace_events, 5);
    assert_eq!(t.kind_at(1), EventKind::Other);
    assert_eq!(t.category_at(1), Some("brand_new_thing"));
    for k in [
        DiagnosticKind::UnknownPhase,
        DiagnosticKind::UnknownCategory,
        DiagnosticKind::NegativeDuration,
        DiagnosticKind::MissingDuration,
        DiagnosticKind::NonObjectEvent,
    ] {
        assert_eq!(t.diagnostics.count(k), 1, "{k:?}");
    }
}

#[test]
fn escaped_names_are_unescaped() {
    let t = load(
        r#"[{"ph": "X", "cat": "kernel", "name": "void k<\"a\">(float\u0020x) \\ \ud83d\ude00", "ts": 1, "dur": 1}]"#,
    );
    assert_eq!(t.name_at(0), "void k<\"a\">(float x) \\ 😀");
}

#[test]
fn bad_inputs_get_specific_messages() {
    let cases: [(&[u8], LoadErrorKind, &str); 6] = [
        (b"", LoadErrorKind::Empty, "empty"),
        (b"  \n ", LoadErrorKind::Empty, "white space"),
        (b"PK\x03\x04rest", LoadErrorKind::NotJson, "zip"),
        (b"hello", LoadErrorKind::NotJson, "neither JSON nor gzip"),
        (
            br#"{"nodes": [], "schema": "1.0.1", "pid": 1}"#,
            LoadErrorKind::NotATrace,
            "execution trace",
        ),
        (
            b"[[1, 2], [3, 4]]",
            LoadErrorKind::NotATrace,
            "memory-timeline",
        ),
    ];
    for (bytes, kind, words) in cases {
        let e = load_bytes("bad.json", bytes).unwrap_err();
        assert_eq!(e.kind, kind, "{e}");
        assert!(e.message.contains(words), "{e}");
        assert!(e.message.contains("bad.json"), "{e}");
    }
    let gz = gzip(br#"{"traceEvents": []}"#);
    let mut broken = gz.clone();
    for b in &mut broken[12..20] {
        *b ^= 0xA5;
    }
    let e = load_bytes("broken.json.gz", &broken).unwrap_err();
    assert!(
        matches!(
            e.kind,
            LoadErrorKind::CorruptGzip | LoadErrorKind::NotJson | LoadErrorKind::Truncated
        ),
        "{e}"
    );
}

#[test]
fn concatenated_gzip_members_are_one_text() {
    let text = r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "a", "ts": 1, "dur": 2}, {"ph": "X", "cat": "kernel", "name": "b", "ts": 5, "dur": 3}]}"#;
    let (a, b) = text.split_at(40);
    let mut gz = gzip(a.as_bytes());
    gz.extend(gzip(b.as_bytes()));
    let t = load_bytes("multi.json.gz", &gz).unwrap();
    assert_eq!(t.len(), 2);
    assert!(t.metadata.gzip);
}

#[test]
fn duplicate_and_missing_ranks_are_reported() {
    let mk = |file: &str, meta: &str| {
        load_bytes(file, format!(r#"{{{meta} "traceEvents": [{{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}}]}}"#).as_bytes())
            .unwrap()
    };
    let set = TraceSet::from_tables(vec![
        mk("a.json", r#""distributedInfo": {"rank": 1},"#),
        mk("trace_rank-3.json", ""),
        mk("b.json", r#""distributedInfo": {"rank": 1},"#),
        mk("c.json", ""),
    ]);
    let ranks: Vec<(i64, &str)> = set.ranks.iter().map(|r| (r.rank, r.rank_source)).collect();
    assert_eq!(
        ranks,
        vec![
            (1, "distributedInfo"),
            (1, "distributedInfo"),
            (3, "file name"),
            (3, "load order")
        ]
    );
    assert!(
        set.notes.iter().any(|n| n.contains("rank 1")),
        "{:?}",
        set.notes
    );
    assert!(
        set.notes.iter().any(|n| n.contains("rank 3")),
        "{:?}",
        set.notes
    );
    assert!(
        set.notes.iter().any(|n| n.contains("missing")),
        "{:?}",
        set.notes
    );
}

#[test]
fn negative_durations_are_left_out_of_time_figures() {
    // A kernel with dur < 0 and a B whose E comes earlier: both kept as events, without a duration.
    let t = load(
        r#"[{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100, "dur": 10},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 120, "dur": -5},
            {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 130, "dur": 3},
            {"ph": "B", "cat": "user_annotation", "name": "b", "pid": 1, "tid": 1, "ts": 50},
            {"ph": "E", "pid": 1, "tid": 1, "ts": 40}]"#,
    );
    // Kept as written for the HTA-compatible definitions, left out of every time figure.
    assert_eq!(t.dur_at(1), None);
    assert_eq!(t.raw_dur_at(1), Some(-5_000));
    assert_eq!(t.dur_at(3), None);
    assert_eq!(t.diagnostics.count(DiagnosticKind::NegativeDuration), 2);
    let set = TraceSet::single(t.clone());
    let q = EventQuery {
        kinds: vec![EventKind::Kernel],
        group_by: Some(GroupBy::Name),
        ..Default::default()
    };
    let page = query_events(&set, &q);
    assert_eq!((page.matched, page.matched_dur_us), (3, 13.0));
    let k = page.groups.iter().find(|g| g.key == "k").unwrap();
    assert_eq!((k.count, k.total_us, k.min_us), (2, 10.0, Some(10.0)));
    assert!(page.groups.iter().all(|g| g.pct_of_matched <= 100.0));
    let s = summarize(&t);
    assert_eq!((s.kernels, s.kernel_time_us), (3, 13.0));
    let k = &s.top_kernels[0];
    assert_eq!((k.name.as_str(), k.calls, k.total_us), ("k", 2, 10.0));
    assert!(s.top_kernels.iter().all(|k| k.pct_of_kernel_time <= 100.0));
    // First start (the E at 40) to last end (k2 at 133).
    assert_eq!(s.span_us, 93.0);
}

#[test]
fn escaped_keys_are_the_keys_they_spell() {
    // `"c\u0061t"` is the key `cat` once decoded (JSON allows escapes in keys).
    let t = load(
        r#"[{"ph": "X", "c\u0061t": "kernel", "n\u0061me": "k", "pid": 0, "tid": 7, "\u0074s": 5, "d\u0075r": 2,
             "\u0061rgs": {"stream": 7}}]"#,
    );
    assert_eq!(t.category_at(0), Some("kernel"));
    assert_eq!(t.kind_at(0), EventKind::Kernel);
    assert_eq!(t.name_at(0), "k");
    assert_eq!((t.ts_at(0), t.dur_at(0)), (Some(5_000), Some(2_000)));
    assert_eq!(t.stream_at(0), Some(7));
    assert_eq!(summarize(&t).kernels, 1);
}

#[test]
fn exponent_timestamps_keep_their_nanoseconds() {
    // 17 significant digits do not fit f64: the ns come from the digits.
    let t = load(
        r#"[{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.6042036700001235e15, "dur": 2.5E-1},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.604203670000124e+15, "dur": 1e-05}]"#,
    );
    assert_eq!(t.ts_at(0), Some(1_604_203_670_000_123_500));
    assert_eq!(t.dur_at(0), Some(250));
    assert_eq!(t.ts_at(1), Some(1_604_203_670_000_124_000));
    assert_eq!(t.dur_at(1), Some(0));
    assert_eq!(summarize(&t).span_us, 0.5);
}

#[test]
fn a_bare_array_may_start_with_entries_that_are_not_events() {
    let t = load(
        r#"[null, 3, "x", {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream 7", "ts": 1, "dur": 2}]"#,
    );
    assert_eq!(t.len(), 1);
    assert_eq!(t.metadata.trace_events, 4);
    assert_eq!(t.diagnostics.count(DiagnosticKind::NonObjectEvent), 3);
    let s = summarize(&t);
    assert_eq!((s.events, s.kernels, s.kernel_time_us), (4, 1, 2.0));
    // Without any event among them it is still not a trace.
    for (text, words) in [
        ("[1, 2, 3]", "array of numbers"),
        ("[[1], [2]]", "memory-timeline"),
    ] {
        let e = load_bytes("bad.json", text.as_bytes()).unwrap_err();
        assert_eq!(e.kind, LoadErrorKind::NotATrace, "{e}");
        assert!(e.message.contains(words), "{e}");
    }
}

#[test]
fn a_last_entry_that_is_not_an_event_is_no_trailing_comma() {
    for text in [
        r#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 1}, null]}"#,
        r#"[{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 1}, 7, "s"]"#,
        r#"{"traceEvents": [null, null]}"#,
    ] {
        let t = load(text);
        assert_eq!(
            t.diagnostics.count(DiagnosticKind::TrailingComma),
            0,
            "{text}"
        );
        assert!(t.diagnostics.count(DiagnosticKind::NonObjectEvent) >= 1);
    }
}

#[test]
fn top_level_values_with_trailing_commas_are_read() {
    let t = load(
        r#"{"distributedInfo": {"rank": 3, "world_size": 8,},
            "deviceProperties": [{"id": 0, "name": "NVIDIA H100", },],
            "traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2}]}"#,
    );
    assert_eq!((t.metadata.rank, t.metadata.world_size), (Some(3), Some(8)));
    assert_eq!(t.metadata.device_name.as_deref(), Some("NVIDIA H100"));
    // One for each value that had them.
    assert_eq!(t.diagnostics.count(DiagnosticKind::TrailingComma), 2);
    // A rank written as a whole float (JSON rewritten by pandas) is the same rank.
    let t = load(r#"{"distributedInfo": {"rank": 5.0, "world_size": 8.0}, "traceEvents": []}"#);
    assert_eq!((t.metadata.rank, t.metadata.world_size), (Some(5), Some(8)));
}

#[test]
fn a_byte_order_mark_is_skipped_however_the_bytes_arrive() {
    let text = format!("\u{feff}{OLD_KINETO}");
    let whole = load_bytes("bom.json", text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(whole.len(), 7);
    for chunk in [1, 2, 3, 5] {
        assert_eq!(load_chunked(&text, chunk).len(), 7, "chunk {chunk}");
    }
    let t = load_bytes("bom.json.gz", &gzip(text.as_bytes())).unwrap();
    assert_eq!(summarize(&t).kernels, 1);
}

#[test]
fn what_follows_the_json_is_named_for_what_it_is() {
    let doc = r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}]}"#;
    // Zero bytes after the end (a preallocated file): harmless padding, not a malformed event.
    let t = load(&format!("{doc}\n{}", "\0".repeat(100)));
    assert_eq!(t.len(), 1);
    assert_eq!(t.diagnostics.count(DiagnosticKind::TrailingPadding), 1);
    assert_eq!(t.diagnostics.count(DiagnosticKind::MalformedEvent), 0);
    assert!(t
        .diagnostics
        .list()
        .iter()
        .all(|d| d.severity == profile_model::trace::Severity::Info));
    // A second document (two traces concatenated): not read, and said so.
    let t = load(&format!("{doc}\n{doc}"));
    assert_eq!(t.len(), 1);
    assert_eq!(t.diagnostics.count(DiagnosticKind::TrailingData), 1);
    assert_eq!(t.diagnostics.count(DiagnosticKind::MalformedEvent), 0);
}

#[test]
fn gzip_files_cut_before_any_text_say_so() {
    let gz = gzip(OLD_KINETO.as_bytes());
    for cut in [2, 10, 12, 20] {
        let e = load_bytes("cut.json.gz", &gz[..cut]).unwrap_err();
        assert_eq!(e.kind, LoadErrorKind::Truncated, "{cut}: {e}");
        assert!(
            e.message.contains("gzip") && e.message.contains(&format!("{cut} bytes")),
            "{cut}: {e}"
        );
        assert!(!e.message.contains("is empty"), "{e}");
    }
    let e = load_bytes("nothing.json.gz", &gzip(b"")).unwrap_err();
    assert_eq!(e.kind, LoadErrorKind::Empty, "{e}");
    assert!(
        e.message.contains("gzip") && e.message.contains("empty"),
        "{e}"
    );
}

#[test]
fn objects_without_a_trace_events_list_say_what_they_hold() {
    let cases = [
        (
            r#"{"schemaVersion": 1, "traceEvents": null}"#,
            "\"traceEvents\" holding null",
        ),
        (
            r#"{"traceEvents": {"a": 1}}"#,
            "\"traceEvents\" holding an object",
        ),
        (
            r#"{"data": {"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1}]}}"#,
            "\"data\".traceEvents",
        ),
    ];
    for (text, words) in cases {
        let e = load_bytes("t.json", text.as_bytes()).unwrap_err();
        assert_eq!(e.kind, LoadErrorKind::NotATrace, "{e}");
        assert!(e.message.contains(words), "{e}");
    }
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain("[{}]".encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let e = load_bytes("t.json", &utf16).unwrap_err();
    assert_eq!(e.kind, LoadErrorKind::NotJson, "{e}");
    assert!(e.message.contains("UTF-16"), "{e}");
}

#[test]
fn null_names_categories_and_ids_are_absent() {
    let t = load(
        r#"[{"ph": "X", "cat": null, "name": null, "pid": null, "tid": null, "ts": 1, "dur": 1, "id": null},
            {"ph": "X", "cat": 7, "name": ["a"], "pid": 1.5, "tid": 2, "ts": 1, "dur": 1}]"#,
    );
    assert_eq!(t.category_at(0), None);
    assert_eq!((t.name_at(0), t.pid_at(0), t.tid_at(0)), ("", "", ""));
    assert_eq!(t.flow_id_at(0), None);
    assert_eq!(t.diagnostics.count(DiagnosticKind::BadFlowId), 0);
    // Other non-strings are kept as their JSON text.
    assert_eq!(t.category_at(1), Some("7"));
    assert_eq!((t.name_at(1), t.pid_at(1)), (r#"["a"]"#, "1.5"));
    let cats: Vec<(String, u64)> = summarize(&t)
        .categories
        .into_iter()
        .map(|c| (c.category, c.events))
        .collect();
    assert_eq!(cats, [("(none)".to_string(), 1), ("7".to_string(), 1)]);
}

#[test]
fn times_out_of_range_are_unreadable_not_wrapped() {
    // A start near i64::MAX ns plus a duration, or two durations near it, would wrap round.
    let t = load(
        r#"[{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 9223372036854775, "dur": 10000},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 100, "dur": 9223372036854775},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 200, "dur": 9007199254740.993},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": -9223372036854775, "dur": 1},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 300, "dur": 5}]"#,
    );
    assert_eq!(t.ts_at(0), None);
    assert_eq!(t.ts_at(3), None);
    assert_eq!(t.diagnostics.count(DiagnosticKind::MissingTimestamp), 2);
    // 9223372036854775 µs does not fit i64 ns; 9007199254740.993 µs is 2^53 + 1 ns: too long.
    assert_eq!((t.dur_at(1), t.dur_at(2)), (None, None));
    assert_eq!(t.diagnostics.count(DiagnosticKind::ImplausibleDuration), 1);
    let s = summarize(&t);
    assert_eq!((s.kernels, s.kernel_time_us), (5, 10_006.0));
    // First start (100 µs) to last end (300 + 5 µs).
    assert_eq!(s.span_us, 205.0);
}

#[test]
fn a_negative_stream_in_a_tid_keeps_its_sign() {
    let t = load(
        r#"[{"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream -3", "ts": 1, "dur": 1},
            {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": "stream 12", "ts": 2, "dur": 1}]"#,
    );
    assert_eq!((t.stream_at(0), t.stream_at(1)), (Some(-3), Some(12)));
}

#[test]
fn a_second_trace_events_list_is_read_and_said() {
    let t = load(
        r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "a", "ts": 1, "dur": 2}],
            "schemaVersion": 1,
            "traceEvents": [{"ph": "X", "cat": "kernel", "name": "b", "ts": 5, "dur": 3},
                            {"ph": "X", "cat": "kernel", "name": "c", "ts": 9, "dur": 4}]}"#,
    );
    assert_eq!(t.len(), 3);
    assert_eq!(t.metadata.trace_events, 3);
    assert_eq!(t.diagnostics.count(DiagnosticKind::DuplicateTraceEvents), 1);
    assert_eq!(summarize(&t).kernel_time_us, 9.0);
}

/// torch_npu's `trace_view.json`: a bare array, string timestamps, device tasks without a category
/// under the `Ascend Hardware` process (one thread per stream), the CANN runtime, HCCL collectives
/// (their task-level `Plane` threads repeat them and stay `other`).
const ASCEND_NPU: &str = r#"[
  {"ph": "M", "name": "process_name", "pid": 30, "tid": 0, "args": {"name": "Ascend Hardware"}},
  {"ph": "M", "name": "process_name", "pid": 20, "tid": 0, "args": {"name": "CANN"}},
  {"ph": "M", "name": "process_name", "pid": 40, "tid": 0, "args": {"name": "HCCL"}},
  {"ph": "M", "name": "thread_name", "pid": 40, "tid": 6, "args": {"name": "Plane 0"}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::matmul", "pid": 10, "tid": 1, "ts": "1700000000000100.000", "dur": 20.0},
  {"ph": "X", "name": "AscendCL@aclnnMatmul", "pid": 20, "tid": 1, "ts": "1700000000000102.000", "dur": 10.0},
  {"ph": "X", "name": "aclnnMatmul_MatMulV2", "pid": 30, "tid": 2, "ts": "1700000000000130.250", "dur": 50.0, "args": {"Task Type": "AI_CORE"}},
  {"ph": "X", "name": "MEMCPY_ASYNC", "pid": 30, "tid": 2, "ts": "1700000000000190.000", "dur": 5.0, "args": {"Task Type": "MEMCPY_ASYNC"}},
  {"ph": "X", "name": "hcom_allReduce__1", "pid": 40, "tid": 5, "ts": "1700000000000200.000", "dur": 30.0},
  {"ph": "X", "name": "Notify_Wait", "pid": 40, "tid": 6, "ts": "1700000000000201.000", "dur": 3.0},
  {"ph": "s", "cat": "async_npu", "name": "torch_to_npu", "id": 1, "pid": 10, "tid": 1, "ts": "1700000000000100.000"}
]"#;

#[test]
fn ascend_npu_device_tasks_are_device_operations() {
    for t in [load(ASCEND_NPU), load_chunked(ASCEND_NPU, 7)] {
        let kinds: Vec<EventKind> = (0..t.len()).map(|r| t.kind_at(r)).collect();
        use EventKind::*;
        assert_eq!(
            kinds,
            vec![
                Metadata, Metadata, Metadata, Metadata, CpuOp, Runtime, Kernel, Memcpy, Kernel,
                Other, Flow
            ]
        );
        // String timestamps parse, to the ns.
        assert_eq!(t.ts_at(6), Some(1_700_000_000_000_130_250));
        // The stream is the thread's number.
        assert_eq!(t.stream_at(6), Some(2));
        assert_eq!(t.stream_at(8), Some(5));
        let s = summarize(&t);
        assert_eq!((s.kernels, s.kernel_time_us), (2, 80.0));
    }
}

/// The legacy `torch.autograd.profiler` export: a bare array, no category, pids `CPU functions` and
/// `CUDA functions` written as text.
const LEGACY_AUTOGRAD: &str = r#"[
  {"name": "aten::conv2d", "ph": "X", "ts": 10.5, "dur": 100.0, "tid": 1, "pid": "CPU functions", "args": {}},
  {"name": "implicit_convolve_sgemm", "ph": "X", "ts": 20.0, "dur": 60.0, "tid": 0, "pid": "CUDA functions", "args": {}},
  {"name": "aten::relu", "ph": "X", "ts": 120.0, "dur": 5.0, "tid": 1, "pid": "CPU functions", "cat": "Operator"}
]"#;

#[test]
fn legacy_autograd_export_reads_as_cpu_ops_and_kernels() {
    let t = load(LEGACY_AUTOGRAD);
    let kinds: Vec<EventKind> = (0..t.len()).map(|r| t.kind_at(r)).collect();
    assert_eq!(
        kinds,
        vec![EventKind::CpuOp, EventKind::Kernel, EventKind::CpuOp]
    );
    assert_eq!(t.stream_at(1), Some(0));
}

/// Its `CUDA functions` are per-operator CUDA time ranges nested as the operators are, not
/// kernels: only the outermost of a nest is device work (the inner ones, down to a tiny
/// `aten::contiguous` inside the convolution, are device-side annotations), so a convolution's
/// 120 µs is counted once, not once per level, and not lost to what it holds.
#[test]
fn legacy_nested_cuda_ranges_count_the_outermost_only() {
    let text = r#"[
      {"name": "aten::conv2d", "ph": "X", "ts": 0.0, "dur": 200.0, "tid": 1, "pid": "CPU functions", "args": {}},
      {"name": "aten::conv2d", "ph": "X", "ts": 10.0, "dur": 120.0, "tid": 0, "pid": "CUDA functions", "args": {}},
      {"name": "aten::convolution", "ph": "X", "ts": 12.0, "dur": 115.0, "tid": 0, "pid": "CUDA functions", "args": {}},
      {"name": "aten::cudnn_convolution", "ph": "X", "ts": 20.0, "dur": 100.0, "tid": 0, "pid": "CUDA functions", "args": {}},
      {"name": "aten::contiguous", "ph": "X", "ts": 21.0, "dur": 2.0, "tid": 0, "pid": "CUDA functions", "args": {}},
      {"name": "aten::relu_", "ph": "X", "ts": 140.0, "dur": 8.0, "tid": 0, "pid": "CUDA functions", "args": {}}
    ]"#;
    let t = load(text);
    let kinds: Vec<EventKind> = (0..t.len()).map(|r| t.kind_at(r)).collect();
    assert_eq!(
        kinds,
        vec![
            EventKind::CpuOp,
            EventKind::Kernel,
            EventKind::GpuUserAnnotation,
            EventKind::GpuUserAnnotation,
            EventKind::GpuUserAnnotation,
            EventKind::Kernel
        ]
    );
    let s = summarize(&t);
    assert_eq!((s.kernels, s.kernel_time_us), (2, 128.0));
}

/// Intel XPU (Kineto with XPUPTI): `xpu_runtime` calls such as `urEnqueueKernelLaunch` launch
/// kernels by correlation.
#[test]
fn xpu_runtime_launches_are_launches() {
    use profile_model::analysis::names::{NameClass, NameClasses};
    let text = r#"{"deviceProperties": [{"id": 0, "name": "Intel(R) Data Center GPU Max 1550"}], "traceEvents": [
      {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 50},
      {"ph": "X", "cat": "xpu_runtime", "name": "urEnqueueKernelLaunch", "pid": 1, "tid": 1, "ts": 5, "dur": 5, "args": {"correlation": 3}},
      {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 0, "ts": 20, "dur": 30, "args": {"correlation": 3, "stream": 0, "device": 0}}
    ]}"#;
    let t = load(text);
    assert_eq!(t.kind_at(1), EventKind::Runtime);
    let classes = NameClasses::of(&t);
    assert!(classes.of_row(&t, 1).has(NameClass::LAUNCH));
    assert_eq!(
        profile_model::trace::dialect::device_kind_of_device_name(
            t.metadata.device_name.as_deref().unwrap()
        ),
        Some(profile_model::trace::dialect::DeviceKind::Xpu)
    );
}

/// Ascend HCCL's device wait tasks (`Notify_Wait` on the `Ascend Hardware` stream, loaded as
/// synchronisation; `Notify Wait` as msprof writes it) inside a collective are that collective's
/// waiting part: the collectives analysis splits the one rank's all-reduce into 24 µs of waiting
/// (the two waits' union) and 16 µs of transfer, and no wait task is a collective of its own.
#[test]
fn ascend_hccl_waits_are_the_collectives_waiting() {
    use profile_model::analysis::all::AnalysisOptions;
    use profile_model::analysis::collectives::collectives_prepared;
    use profile_model::analysis::gpu::{KernelType, RankPrep};
    let text = r#"[
      {"ph": "M", "name": "process_name", "pid": 30, "tid": 0, "args": {"name": "Ascend Hardware"}},
      {"ph": "M", "name": "process_name", "pid": 20, "tid": 0, "args": {"name": "CANN"}},
      {"ph": "M", "name": "process_name", "pid": 40, "tid": 0, "args": {"name": "HCCL"}},
      {"ph": "X", "cat": "cpu_op", "name": "aten::matmul", "pid": 10, "tid": 1, "ts": "1700000000000100.000", "dur": 20.0},
      {"ph": "X", "name": "aclnnMatmul_MatMulV2", "pid": 30, "tid": 2, "ts": "1700000000000130.000", "dur": 50.0, "args": {"Task Type": "AI_CORE"}},
      {"ph": "X", "name": "hcom_allReduce__1", "pid": 40, "tid": 5, "ts": "1700000000000200.000", "dur": 40.0},
      {"ph": "X", "name": "Notify_Wait", "pid": 30, "tid": 3, "ts": "1700000000000201.000", "dur": 20.0, "args": {"Task Type": "Notify_Wait"}},
      {"ph": "X", "name": "Notify Wait", "pid": 30, "tid": 3, "ts": "1700000000000215.000", "dur": 10.0, "args": {"Task Type": "Notify_Wait"}},
      {"ph": "X", "name": "Memcpy", "pid": 30, "tid": 3, "ts": "1700000000000226.000", "dur": 12.0, "args": {"Task Type": "MEMCPY_ASYNC"}},
      {"ph": "X", "name": "EVENT_WAIT", "pid": 30, "tid": 2, "ts": "1700000000000300.000", "dur": 5.0, "args": {"Task Type": "EVENT_WAIT"}}
    ]"#;
    let t = load(text);
    assert_eq!(
        t.kind_at(6),
        EventKind::Sync,
        "the loader keeps the wait a sync task"
    );
    let prep = RankPrep::new(&t, &AnalysisOptions::default());
    let waits: Vec<(&str, KernelType)> = prep
        .dev
        .iter()
        .filter(|d| t.kind_at(d.row as usize) == EventKind::Sync)
        .map(|d| (t.name_of_id(d.name), d.ktype))
        .collect();
    // The two waits inside the all-reduce join it; the EVENT_WAIT after it is no collective's.
    assert_eq!(
        waits,
        vec![
            ("Notify_Wait", KernelType::Communication),
            ("Notify Wait", KernelType::Communication)
        ]
    );
    let (inputs, c) = collectives_prepared(&[(0, prep)]);
    let ops = &inputs[0].ops;
    assert_eq!(ops.len(), 1, "one collective: {ops:?}");
    // Waits 201-221 and 215-225: a union of 24 µs inside the 40 µs all-reduce.
    assert_eq!(ops[0].device_wait_ns, 24_000);
    assert_eq!(c.per_rank[0].wait_ns, 24_000);
    assert_eq!(c.per_rank[0].transfer_ns, 16_000);
}
