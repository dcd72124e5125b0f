//! The SQL tab's tables as the worker hands them to DuckDB: Arrow IPC streams read back here with
//! arrow2's stream reader; rows, columns and values checked against the trace built in code.

use crate::common::TraceBuilder;
use arrow2::array::{Array, PrimitiveArray, Utf8Array};
use arrow2::io::ipc::read::{read_stream_metadata, StreamReader, StreamState};
use profile_model::export::sql::{events_schema, events_stream, idle_stream, IdleRow};
use profile_model::table::{load_bytes, TraceSet};

/// The stream's column names and every batch.
fn read(bytes: &[u8]) -> (Vec<String>, Vec<arrow2::chunk::Chunk<Box<dyn Array>>>) {
    let mut cursor = std::io::Cursor::new(bytes);
    let meta = read_stream_metadata(&mut cursor).expect("a stream header");
    let names = meta.schema.fields.iter().map(|f| f.name.clone()).collect();
    let chunks = StreamReader::new(cursor, meta, None)
        .map(|s| match s.expect("a batch") {
            StreamState::Some(c) => c,
            StreamState::Waiting => panic!("the stream is complete"),
        })
        .collect();
    (names, chunks)
}

fn texts(a: &dyn Array) -> Vec<Option<String>> {
    let a = a.as_any().downcast_ref::<Utf8Array<i32>>().expect("utf8");
    a.iter().map(|v| v.map(str::to_string)).collect()
}

fn ints(a: &dyn Array) -> Vec<Option<i64>> {
    let a = a
        .as_any()
        .downcast_ref::<PrimitiveArray<i64>>()
        .expect("int64");
    a.iter().map(|v| v.copied()).collect()
}

/// A number column (`ts`, `dur`: Int64 or Float64 as the trace wrote them) as floats.
fn nums(a: &dyn Array) -> Vec<Option<f64>> {
    match a.as_any().downcast_ref::<PrimitiveArray<f64>>() {
        Some(f) => f.iter().map(|v| v.copied()).collect(),
        None => ints(a).into_iter().map(|v| v.map(|i| i as f64)).collect(),
    }
}

fn two_ranks() -> TraceSet {
    let mut tables = Vec::new();
    for rank in 0..2 {
        let mut b = TraceBuilder::new().rank(rank, 2);
        b.step(1, 0.0, 1000.0);
        b.kernel(
            "gemm_kernel",
            7,
            100.0,
            10.0,
            300.0 + rank as f64 * 100.0,
            50.0,
        );
        tables.push(Ok(b.table(&format!("rank{rank}.json"))));
    }
    TraceSet::from_loads(tables)
}

#[test]
fn events_hold_every_row_with_rank_and_kind() {
    let set = two_ranks();
    let (bytes, rows) = events_stream(&set).expect("encodes");
    let (names, chunks) = read(&bytes);
    let total: usize = chunks.iter().map(|c| c.len()).sum();
    let table_rows: usize = set.ranks.iter().map(|r| r.table.len()).sum();
    assert_eq!(total, table_rows);
    assert_eq!(rows as usize, table_rows);
    assert_eq!(chunks.len(), 2, "one batch per rank");
    let at = |n: &str| {
        names
            .iter()
            .position(|c| c == n)
            .unwrap_or_else(|| panic!("{n} in {names:?}"))
    };
    assert_eq!(at("kind"), at("rank") + 1, "kind follows rank");
    for (i, chunk) in chunks.iter().enumerate() {
        let ranks = ints(chunk.arrays()[at("rank")].as_ref());
        assert!(ranks.iter().all(|r| *r == Some(i as i64)));
        let kinds = texts(chunk.arrays()[at("kind")].as_ref());
        let names_col = texts(chunk.arrays()[at("name")].as_ref());
        let kernel_rows: Vec<_> = kinds
            .iter()
            .zip(&names_col)
            .filter(|(k, _)| k.as_deref() == Some("kernel"))
            .map(|(_, n)| n.clone())
            .collect();
        assert_eq!(kernel_rows, vec![Some("gemm_kernel".to_string())]);
        let dur = nums(chunk.arrays()[at("dur")].as_ref());
        let ts = nums(chunk.arrays()[at("ts")].as_ref());
        let kernel = kinds
            .iter()
            .position(|k| k.as_deref() == Some("kernel"))
            .unwrap();
        assert_eq!(ts[kernel], Some(300.0 + 100.0 * i as f64));
        assert_eq!(dur[kernel], Some(50.0));
    }
}

#[test]
fn one_rank_still_has_a_rank_column() {
    let mut b = TraceBuilder::new();
    b.cpu_op("aten::add", 0.0, 5.0);
    let set = TraceSet::single(b.table("one.json"));
    let names: Vec<String> = events_schema(&set)
        .columns
        .iter()
        .map(|c| c.name.clone())
        .collect();
    assert!(names.contains(&"rank".to_string()), "{names:?}");
    let (bytes, _) = events_stream(&set).expect("encodes");
    let (_, chunks) = read(&bytes);
    let rank_at = names.iter().position(|n| n == "rank").unwrap();
    assert!(ints(chunks[0].arrays()[rank_at].as_ref())
        .iter()
        .all(|r| *r == Some(0)));
}

#[test]
fn column_names_differing_only_in_case_are_made_unique() {
    let json = r#"{"traceEvents":[
        {"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":0,"dur":1,"args":{"Foo":1,"foo":2}}
    ]}"#;
    let set = TraceSet::single(load_bytes("t.json", json.as_bytes()).unwrap());
    let names: Vec<String> = events_schema(&set)
        .columns
        .iter()
        .map(|c| c.name.clone())
        .collect();
    let lower: Vec<String> = names.iter().map(|n| n.to_lowercase()).collect();
    let mut unique = lower.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), lower.len(), "{names:?}");
    assert!(
        names.contains(&"args_Foo".to_string()) && names.contains(&"args_foo_2".to_string()),
        "{names:?}"
    );
}

#[test]
fn idle_rows_are_in_microseconds_with_their_cause() {
    let rows = [
        IdleRow {
            rank: 3,
            start_ns: 1_500,
            end_ns: 4_000,
            cause: "data_loading",
        },
        IdleRow {
            rank: 3,
            start_ns: 10_000,
            end_ns: 10_250,
            cause: "other",
        },
    ];
    let (names, chunks) = read(&idle_stream(&rows).unwrap());
    assert_eq!(names, ["rank", "ts", "dur", "cause"]);
    let c = &chunks[0];
    let f = |i: usize| {
        let a = c.arrays()[i]
            .as_any()
            .downcast_ref::<PrimitiveArray<f64>>()
            .unwrap();
        a.iter().map(|v| v.copied().unwrap()).collect::<Vec<_>>()
    };
    assert_eq!(f(1), vec![1.5, 10.0]);
    assert_eq!(f(2), vec![2.5, 0.25]);
    assert_eq!(
        texts(c.arrays()[3].as_ref()),
        vec![Some("data_loading".into()), Some("other".into())]
    );
    let (_, none) = read(&idle_stream(&[]).unwrap());
    assert!(none.is_empty(), "no idle interval: a schema and no batch");
}

/// The examples join on `args_External id` and bucket by `args_bytes`: a trace with neither arg (one
/// step annotation) still has both columns, null on every row; a trace with them has each once.
#[test]
fn the_args_the_examples_read_are_always_columns() {
    let mut b = TraceBuilder::new();
    b.step(1, 0.0, 5.0);
    let set = TraceSet::single(b.table("one.json"));
    let (bytes, _) = events_stream(&set).expect("encodes");
    let (names, chunks) = read(&bytes);
    for column in ["args_External id", "args_bytes"] {
        let at = names
            .iter()
            .position(|n| n == column)
            .unwrap_or_else(|| panic!("{column} in {names:?}"));
        if column == "args_bytes" {
            assert!(ints(chunks[0].arrays()[at].as_ref())
                .iter()
                .all(Option::is_none));
        }
    }
    let (bytes, _) = events_stream(&two_ranks()).expect("encodes");
    let (names, _) = read(&bytes);
    for column in ["args_External id", "args_bytes"] {
        let copies = names
            .iter()
            .filter(|n| n.eq_ignore_ascii_case(column))
            .count();
        assert_eq!(copies, 1, "{column} once: {names:?}");
    }
}

/// The page's route (the worker's plain columns, written by the exporter worker as a stream) is the
/// same stream as `events_stream`'s, byte for byte, on one rank and on two.
#[test]
fn the_exporter_workers_stream_is_events_stream() {
    use profile_model::export::{encode_plain, plain_ranks, Encoding};
    let mut b = TraceBuilder::new();
    b.cpu_op("aten::add", 0.0, 5.0);
    for set in [TraceSet::single(b.table("one.json")), two_ranks()] {
        let schema = events_schema(&set);
        let ranks: Vec<_> = plain_ranks(&set, &schema).collect();
        let page = encode_plain(&schema, Encoding::Stream, &ranks).unwrap();
        assert!(page == events_stream(&set).unwrap().0);
    }
}
