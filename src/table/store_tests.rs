//! Unit tests of the table store (`store.rs`).

use super::*;
use crate::table::load_bytes;

const TRACE: &str = r#"{
  "schemaVersion": 1,
  "distributedInfo": {"rank": 2, "world_size": 4, "backend": "nccl"},
  "deviceProperties": [{"name": "GPU X"}],
  "baseTimeNanoseconds": 1700000000000000000,
  "traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "python"}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 8, "ts": 10.5, "dur": 3,
     "args": {"External id": 5, "Input Dims": [[2, 3], [3, 4]], "flag": true, "ratio": 0.25, "mix": 1, "count": 4}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 8, "ts": 11,
     "dur": 1, "args": {"correlation": 99, "External id": 5, "mix": "two"}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": "stream 7", "ts": 12.000001,
     "dur": 11.689600000000002, "args": {"correlation": 99, "stream": 7, "device": 0, "flag": null}},
    {"ph": "X", "name": "no cat", "pid": 7, "tid": 8, "ts": 13, "dur": -2},
    {"ph": "B", "cat": "user_annotation", "name": "open", "pid": 7, "tid": 9, "ts": 20},
    {"ph": "s", "id": 3, "cat": "ac2g", "name": "flow", "pid": 7, "tid": 8, "ts": 11},
    "not an object",
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 3, "ts": 30, "dur": 2,
     "args": {"stream": 12345678901, "device": 1}}
  ]
}"#;

fn table() -> TraceTable {
    load_bytes("t.json", TRACE.as_bytes()).expect("test trace loads")
}

fn same_dict(a: &DictionaryArray<u32>, b: &DictionaryArray<u32>, what: &str) {
    assert_eq!(a.keys(), b.keys(), "{what}: keys");
    assert_eq!(
        a.values().as_ref(),
        b.values().as_ref(),
        "{what}: dictionary"
    );
    let (va, vb) = (
        a.values()
            .as_any()
            .downcast_ref::<Utf8Array<i32>>()
            .unwrap(),
        b.values()
            .as_any()
            .downcast_ref::<Utf8Array<i32>>()
            .unwrap(),
    );
    let (sa, sb): (Vec<_>, Vec<_>) = (va.iter().collect(), vb.iter().collect());
    assert_eq!(sa, sb, "{what}: dictionary strings in order");
    assert_eq!(a.len(), b.len(), "{what}: length");
    for r in 0..a.len() {
        assert_eq!(a.is_valid(r), b.is_valid(r), "{what}: validity of row {r}");
        if a.is_valid(r) {
            assert_eq!(
                a.keys().value(r),
                b.keys().value(r),
                "{what}: key of row {r}"
            );
        }
    }
}

fn same_int(a: &IntColumn, b: &IntColumn, what: &str) {
    match (a, b) {
        (IntColumn::Int32(x), IntColumn::Int32(y)) => assert_eq!(x, y, "{what}"),
        (IntColumn::Int64(x), IntColumn::Int64(y)) => assert_eq!(x, y, "{what}"),
        _ => panic!("{what}: width changed"),
    }
}

/// Every column, array by array, and every other field.
fn assert_same(a: &TraceTable, b: &TraceTable) {
    assert_eq!(a.file, b.file);
    assert_eq!(a.kind, b.kind);
    assert_eq!(a.phase, b.phase);
    same_dict(&a.category, &b.category, "category");
    same_dict(&a.name, &b.name, "name");
    same_dict(&a.pid, &b.pid, "pid");
    same_dict(&a.tid, &b.tid, "tid");
    assert_eq!(a.ts_ns, b.ts_ns);
    assert_eq!(a.dur_ns, b.dur_ns);
    assert_eq!(a.external_id, b.external_id);
    assert_eq!(a.correlation, b.correlation);
    same_int(&a.stream, &b.stream, "stream");
    same_int(&a.device, &b.device, "device");
    assert_eq!(a.flow_id, b.flow_id);
    assert_eq!(a.stream_from_tid, b.stream_from_tid);
    assert_eq!(a.sub_ns.len(), b.sub_ns.len());
    for (x, y) in a.sub_ns.iter().zip(&b.sub_ns) {
        assert_eq!(
            (x.0, x.1.to_bits(), x.2.to_bits()),
            (y.0, y.1.to_bits(), y.2.to_bits())
        );
    }
    assert_eq!(a.ts_float, b.ts_float);
    assert_eq!(a.args.len(), b.args.len());
    for (x, y) in a.args.iter().zip(&b.args) {
        assert_eq!(x.key, y.key);
        assert_eq!(x.mixed_types, y.mixed_types, "{}", x.key);
        assert_eq!(x.rows, y.rows, "{}", x.key);
        match (&x.values, &y.values) {
            (ArgValues::Int(p), ArgValues::Int(q)) => assert_eq!(p, q, "{}", x.key),
            (ArgValues::Float(p), ArgValues::Float(q)) => assert_eq!(p, q, "{}", x.key),
            (ArgValues::Bool(p), ArgValues::Bool(q)) => assert_eq!(p, q, "{}", x.key),
            (ArgValues::Text(p), ArgValues::Text(q)) => same_dict(p, q, &x.key),
            _ => panic!("{}: value type changed", x.key),
        }
        for i in 0..x.rows.len() {
            assert_eq!(x.json_at(i), y.json_at(i), "{} value {i}", x.key);
        }
    }
    assert_eq!(
        serde_json::to_value(&a.metadata).unwrap(),
        serde_json::to_value(&b.metadata).unwrap()
    );
    assert_eq!(a.diagnostics, b.diagnostics);
}

/// The test trace holds what the round trip must keep (else the test could pass vacuously).
#[test]
fn the_test_table_has_every_kind_of_column() {
    let t = table();
    assert_eq!(t.len(), 8, "the string entry is no row");
    assert!(matches!(t.stream, IntColumn::Int64(_)), "a stream past i32");
    assert_eq!(t.category_at(4), None);
    assert!(!t.sub_ns.is_empty());
    assert!(!t.diagnostics.is_empty());
    assert_eq!(t.metadata.rank, Some(2));
    assert_eq!(
        t.metadata.process_names.get("7").map(String::as_str),
        Some("python")
    );
    let types: Vec<&str> = t.args.iter().map(|c| c.type_name()).collect();
    for ty in ["Int64", "Float64", "Boolean", "Utf8"] {
        assert!(types.contains(&ty), "{ty} in {types:?}");
    }
    assert!(t.args.iter().any(|c| c.mixed_types));
    assert_eq!(
        t.arg("flag")
            .and_then(|c| c.find(3))
            .map(|i| t.arg("flag").unwrap().json_at(i)),
        Some(serde_json::Value::Null)
    );
}

#[test]
fn plain_round_trip_is_exact() {
    let t = table();
    let back = table_from_plain(&table_to_plain(&t).unwrap()).unwrap();
    assert_same(&t, &back);
    // Independent: the values as the trace wrote them.
    assert_eq!(back.name_at(1), "aten::mm");
    assert_eq!(back.ts_at(1), Some(10_500));
    assert_eq!(back.dur_at(4), None);
    assert_eq!(back.raw_dur_at(4), Some(-2_000));
    assert_eq!(back.stream_at(7), Some(12_345_678_901));
    assert_eq!(back.correlation_at(2), Some(99));
    assert_eq!(back.flow_id_at(6), Some(3));
    assert_eq!(back.arg("ratio").unwrap().f64_at(0), Some(0.25));
    assert_eq!(
        back.arg("Input Dims").unwrap().text_at(0),
        Some("[[2,3],[3,4]]")
    );
    assert_eq!(back.metadata.world_size, Some(4));
    assert_eq!(back.metadata.base_time_ns, Some(1_700_000_000_000_000_000));
}

#[test]
fn ipc_round_trip_is_exact() {
    let t = table();
    assert_same(&t, &table_from_ipc(&table_to_ipc(&t).unwrap()).unwrap());
}

#[test]
fn parquet_round_trip_is_exact() {
    let t = table();
    let back = table_from_parquet(&table_to_parquet(&t).unwrap()).unwrap();
    assert_same(&t, &back);
}

#[test]
fn an_empty_table_round_trips() {
    let t = load_bytes("e.json", br#"{"traceEvents": []}"#).unwrap();
    assert_eq!(t.len(), 0);
    assert_same(&t, &table_from_plain(&table_to_plain(&t).unwrap()).unwrap());
    assert_same(
        &t,
        &table_from_parquet(&table_to_parquet(&t).unwrap()).unwrap(),
    );
}

#[test]
fn truncated_buffers_are_errors() {
    let t = table();
    for bytes in [table_to_plain(&t).unwrap(), table_to_parquet(&t).unwrap()] {
        let parquet = bytes != table_to_plain(&t).unwrap();
        for cut in (0..bytes.len()).step_by(7) {
            let r = if parquet {
                table_from_parquet(&bytes[..cut])
            } else {
                table_from_plain(&bytes[..cut])
            };
            assert!(
                matches!(r, Err(StoreError::Corrupt { .. })),
                "cut at {cut} of {}",
                bytes.len()
            );
        }
    }
}

#[test]
fn flipped_bytes_are_errors() {
    let bytes = table_to_plain(&table()).unwrap();
    for at in (0..bytes.len()).step_by(13) {
        let mut b = bytes.clone();
        b[at] ^= 0x5a;
        // Bytes the header's JSON does not read (spaces cannot occur: compact) may still load;
        // what matters is no panic, and a damaged part never loads.
        let r = table_from_plain(&b);
        if at >= 16 + header_len(&bytes) {
            assert!(r.is_err(), "flip at {at}");
        }
    }
}

fn header_len(bytes: &[u8]) -> usize {
    u64::from_le_bytes(bytes[8..16].try_into().unwrap()) as usize
}

#[test]
fn wrong_magic_and_other_formats_are_errors() {
    let bytes = table_to_plain(&table()).unwrap();
    let mut b = bytes.clone();
    b[0] = b'X';
    let e = table_from_plain(&b).unwrap_err();
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("PMTS"), "{e}");
    for (format, want) in [
        (0u32, StoreError::Older { found: 0 }),
        (99, StoreError::Newer { found: 99 }),
    ] {
        let mut b = bytes.clone();
        b[4..8].copy_from_slice(&format.to_le_bytes());
        assert_eq!(table_from_plain(&b).unwrap_err(), want);
    }
    assert!(StoreError::Newer { found: 99 }.to_string().contains("99"));
    // The other part encoding is refused, not misread.
    let p = table_to_parquet(&table()).unwrap();
    let e = table_from_plain(&p).unwrap_err();
    assert!(e.to_string().contains("Parquet"), "{e}");
    // Trailing bytes.
    let mut b = bytes.clone();
    b.push(0);
    assert!(matches!(
        table_from_plain(&b),
        Err(StoreError::Corrupt { .. })
    ));
}

#[test]
fn a_huge_length_field_is_an_error_not_an_allocation() {
    let mut b = table_to_plain(&table()).unwrap();
    b[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        table_from_plain(&b),
        Err(StoreError::Corrupt { .. })
    ));
}
