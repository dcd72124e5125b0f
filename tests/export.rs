//! The export in the seed's schema: each typing rule on a small trace built here, the seed's fallback,
//! and real traces written as Arrow IPC and Parquet, read back with arrow2's readers and compared with
//! values read straight from the JSON with serde_json.

use crate::common;

use std::collections::BTreeMap;

use arrow2::array::{Array, BooleanArray, PrimitiveArray, Utf8Array};
use arrow2::chunk::Chunk;
use arrow2::datatypes::{DataType, Schema};
use profile_model::export::{
    export_bytes, export_schema, with_text_fallback, ColumnType, ExportError, ExportFormat,
    ExportSchema, Source,
};
use profile_model::table::{load_bytes, TraceSet};
use serde_json::Value;

fn set_of(json: &str) -> TraceSet {
    TraceSet::single(load_bytes("t.json", json.as_bytes()).expect("fixture loads"))
}

/// The file written as Arrow IPC, read back: schema and every batch. The same written as Parquet reads
/// back with the same fields and values.
fn arrow_round_trip(set: &TraceSet, schema: &ExportSchema) -> (Schema, Vec<Chunk<Box<dyn Array>>>) {
    let (bytes, report) = export_bytes(set, schema, ExportFormat::Arrow).expect("exports");
    assert!(!report.args_as_text, "no fallback expected");
    assert_eq!(&bytes[..6], b"ARROW1");
    let (s, chunks) = read_arrow(&bytes);
    let (parquet, _) = export_bytes(set, schema, ExportFormat::Parquet).expect("exports");
    let (ps, pchunks) = read_parquet(&parquet);
    assert_eq!(ps.fields, s.fields, "Parquet and Arrow fields");
    for f in &s.fields {
        assert_eq!(
            column(&ps, &pchunks, &f.name),
            column(&s, &chunks, &f.name),
            "{}",
            f.name
        );
    }
    (s, chunks)
}

fn read_arrow(bytes: &[u8]) -> (Schema, Vec<Chunk<Box<dyn Array>>>) {
    use arrow2::io::ipc::read::{read_file_metadata, FileReader};
    let mut cursor = std::io::Cursor::new(bytes);
    let metadata = read_file_metadata(&mut cursor).expect("arrow metadata");
    let schema = metadata.schema.clone();
    let chunks = FileReader::new(cursor, metadata, None, None)
        .collect::<Result<Vec<_>, _>>()
        .expect("arrow batches");
    (schema, chunks)
}

fn read_parquet(bytes: &[u8]) -> (Schema, Vec<Chunk<Box<dyn Array>>>) {
    use arrow2::io::parquet::read::{infer_schema, read_metadata, FileReader};
    let mut cursor = std::io::Cursor::new(bytes);
    let metadata = read_metadata(&mut cursor).expect("parquet metadata");
    let schema = infer_schema(&metadata).expect("parquet schema");
    let chunks = FileReader::new(
        cursor,
        metadata.row_groups,
        schema.clone(),
        None,
        None,
        None,
    )
    .collect::<Result<Vec<_>, _>>()
    .expect("parquet row groups");
    (schema, chunks)
}

/// One column of the read file, every chunk after the other, as JSON values (null as `Null`).
fn column(schema: &Schema, chunks: &[Chunk<Box<dyn Array>>], name: &str) -> Vec<Value> {
    let i = schema
        .fields
        .iter()
        .position(|f| f.name == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    let mut out = Vec::new();
    for c in chunks {
        let a = c.arrays()[i].as_ref();
        for row in 0..a.len() {
            out.push(if a.is_null(row) {
                Value::Null
            } else {
                match a.data_type() {
                    DataType::Int64 => Value::from(
                        a.as_any()
                            .downcast_ref::<PrimitiveArray<i64>>()
                            .unwrap()
                            .value(row),
                    ),
                    DataType::Float64 => Value::from(
                        a.as_any()
                            .downcast_ref::<PrimitiveArray<f64>>()
                            .unwrap()
                            .value(row),
                    ),
                    DataType::Boolean => Value::from(
                        a.as_any()
                            .downcast_ref::<BooleanArray>()
                            .unwrap()
                            .value(row),
                    ),
                    DataType::Utf8 => Value::from(
                        a.as_any()
                            .downcast_ref::<Utf8Array<i32>>()
                            .unwrap()
                            .value(row),
                    ),
                    other => panic!("unexpected type {other:?} of {name}"),
                }
            });
        }
    }
    out
}

fn type_of(schema: &ExportSchema, name: &str) -> ColumnType {
    schema
        .columns
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no column {name} in {:?}", schema.names()))
        .ty
}

#[test]
fn mixed_int_and_string_arg_becomes_strings() {
    let set = set_of(
        r#"{"traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"shape": 3}},
        {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {"shape": "3x4"}}]}"#,
    );
    let schema = export_schema(&set, None).unwrap();
    assert_eq!(type_of(&schema, "args_shape"), ColumnType::Utf8);
    assert_eq!(schema.mixed_columns(), vec!["args_shape".to_string()]);
    let (s, chunks) = arrow_round_trip(&set, &schema);
    assert_eq!(
        column(&s, &chunks, "args_shape"),
        vec![Value::from("3"), Value::from("3x4")]
    );
}

#[test]
fn bool_arg_is_boolean() {
    // More than a byte of booleans, with nulls between (Parquet packs the non-null ones 8 to a byte).
    let flags: Vec<Value> = (0..21)
        .map(|i| match i % 4 {
            0 => Value::Null,
            1 | 2 => Value::from(i % 3 == 0),
            _ => Value::from(true),
        })
        .collect();
    let events: Vec<Value> = flags
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mut e = serde_json::json!({"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": i, "dur": 1});
            if !f.is_null() {
                e["args"] = serde_json::json!({ "flag": f });
            }
            e
        })
        .collect();
    let set = set_of(&Value::Array(events).to_string());
    let schema = export_schema(&set, None).unwrap();
    assert_eq!(type_of(&schema, "args_flag"), ColumnType::Boolean);
    let (s, chunks) = arrow_round_trip(&set, &schema);
    assert_eq!(column(&s, &chunks, "args_flag"), flags);
}

#[test]
fn nested_object_arg_is_its_json_text() {
    let set = set_of(
        r#"[{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1,
             "args": {"meta": {"k": [1, 2], "s": "x"}, "dims": [[2, 3], []]}}]"#,
    );
    let schema = export_schema(&set, None).unwrap();
    assert_eq!(type_of(&schema, "args_meta"), ColumnType::Utf8);
    let (s, chunks) = arrow_round_trip(&set, &schema);
    let meta = column(&s, &chunks, "args_meta");
    let parsed: Value = serde_json::from_str(meta[0].as_str().unwrap()).unwrap();
    assert_eq!(parsed, serde_json::json!({"k": [1, 2], "s": "x"}));
    let dims: Value =
        serde_json::from_str(column(&s, &chunks, "args_dims")[0].as_str().unwrap()).unwrap();
    assert_eq!(dims, serde_json::json!([[2, 3], []]));
}

#[test]
fn missing_args_and_fields_are_null() {
    let set = set_of(
        r#"[{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 2, "ts": 1, "dur": 1, "args": {"n": 5}},
            {"ph": "i", "name": "b", "pid": 1, "tid": 2, "ts": 2},
            {"ph": "X", "name": "c", "ts": 3, "dur": 4, "args": {}}]"#,
    );
    let schema = export_schema(&set, None).unwrap();
    assert_eq!(
        schema.names(),
        ["name", "cat", "ph", "ts", "dur", "pid", "tid", "id", "args_n"]
    );
    let (s, chunks) = arrow_round_trip(&set, &schema);
    assert_eq!(
        column(&s, &chunks, "args_n"),
        vec![Value::from(5), Value::Null, Value::Null]
    );
    assert_eq!(
        column(&s, &chunks, "cat"),
        vec![Value::from("cpu_op"), Value::Null, Value::Null]
    );
    assert_eq!(
        column(&s, &chunks, "dur"),
        vec![Value::from(1), Value::Null, Value::from(4)]
    );
    assert_eq!(
        column(&s, &chunks, "pid"),
        vec![Value::from(1), Value::from(1), Value::Null]
    );
    assert_eq!(column(&s, &chunks, "id"), vec![Value::Null; 3]);
}

#[test]
fn float_and_int_arg_is_float_and_fractional_times_are_float() {
    let set = set_of(
        r#"[{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 2, "args": {"occ": 1}},
            {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 12.5, "dur": 0.25, "args": {"occ": 2.5}}]"#,
    );
    let schema = export_schema(&set, None).unwrap();
    assert_eq!(type_of(&schema, "args_occ"), ColumnType::Float64);
    assert_eq!(type_of(&schema, "ts"), ColumnType::Float64);
    assert_eq!(type_of(&schema, "dur"), ColumnType::Float64);
    let (s, chunks) = arrow_round_trip(&set, &schema);
    assert_eq!(
        column(&s, &chunks, "args_occ"),
        vec![Value::from(1.0), Value::from(2.5)]
    );
    assert_eq!(
        column(&s, &chunks, "ts"),
        vec![Value::from(10.0), Value::from(12.5)]
    );
    assert_eq!(
        column(&s, &chunks, "dur"),
        vec![Value::from(2.0), Value::from(0.25)]
    );
    // Whole µs everywhere: int64, as pandas reads it.
    let ints = set_of(
        r#"[{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 2}]"#,
    );
    let schema = export_schema(&ints, None).unwrap();
    assert_eq!(type_of(&schema, "ts"), ColumnType::Int64);
    assert_eq!(type_of(&schema, "dur"), ColumnType::Int64);
}

#[test]
fn unicode_names_and_string_ids_survive_every_format() {
    let set = set_of(
        r#"[{"ph": "X", "cat": "cpu_op", "name": "ядро \"ü\", 内核\n2", "pid": "Spans", "tid": "stream 7", "ts": 1, "dur": 1},
            {"ph": "X", "cat": "cpu_op", "name": "🔥", "pid": 3, "tid": 4, "ts": 2, "dur": 1}]"#,
    );
    let schema = export_schema(&set, None).unwrap();
    assert_eq!(type_of(&schema, "pid"), ColumnType::Utf8);
    let names = vec![Value::from("ядро \"ü\", 内核\n2"), Value::from("🔥")];
    let (s, chunks) = arrow_round_trip(&set, &schema);
    assert_eq!(column(&s, &chunks, "name"), names);
    assert_eq!(
        column(&s, &chunks, "pid"),
        vec![Value::from("Spans"), Value::from("3")]
    );
    let (bytes, _) = export_bytes(&set, &schema, ExportFormat::Parquet).unwrap();
    assert_eq!(
        (&bytes[..4], &bytes[bytes.len() - 4..]),
        (&b"PAR1"[..], &b"PAR1"[..])
    );
    let (s, chunks) = read_parquet(&bytes);
    assert_eq!(column(&s, &chunks, "name"), names);
    let (csv, _) = export_bytes(&set, &schema, ExportFormat::Csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    assert!(
        csv.contains("\"ядро \"\"ü\"\", 内核\n2\",cpu_op,X,1,1,Spans,stream 7,\n"),
        "RFC 4180 quoting: {csv}"
    );
}

#[test]
fn a_trace_with_no_events_exports_the_standard_columns() {
    let set = set_of(r#"{"traceEvents": []}"#);
    let schema = export_schema(&set, None).unwrap();
    assert_eq!(
        schema.names(),
        ["name", "cat", "ph", "ts", "dur", "pid", "tid", "id"]
    );
    for format in ExportFormat::ALL {
        let (bytes, report) = export_bytes(&set, &schema, format).unwrap();
        assert_eq!(report.rows, 0, "{format}");
        match format {
            ExportFormat::Arrow => {
                let (s, chunks) = read_arrow(&bytes);
                assert_eq!(s.fields.len(), 8);
                assert_eq!(chunks.iter().map(|c| c.len()).sum::<usize>(), 0);
            }
            ExportFormat::Parquet => {
                let (s, chunks) = read_parquet(&bytes);
                assert_eq!(s.fields.len(), 8);
                assert_eq!(chunks.iter().map(|c| c.len()).sum::<usize>(), 0);
            }
            ExportFormat::Csv => assert_eq!(bytes, b"name,cat,ph,ts,dur,pid,tid,id\n"),
        }
    }
}

#[test]
fn columns_are_selected_in_the_order_named_and_unknown_ones_are_listed() {
    let set = set_of(
        r#"[{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 2, "args": {"grid": [1,1,1]}}]"#,
    );
    let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let schema = export_schema(&set, Some(&names(&["dur", "name"]))).unwrap();
    assert_eq!(schema.names(), ["dur", "name"]);
    match export_schema(&set, Some(&names(&["name", "nope"]))) {
        Err(ExportError::UnknownColumns { unknown, available }) => {
            assert_eq!(unknown, ["nope"]);
            assert!(available.contains(&"args_grid".to_string()));
        }
        other => panic!("expected unknown columns, got {other:?}"),
    }
    assert!(matches!(
        export_schema(&set, Some(&names(&["name", "name"]))),
        Err(ExportError::RepeatedColumn(_))
    ));
}

/// The seed's rule: when writing fails, try again with every args_* column as strings; when that fails
/// too, an error naming both failures.
#[test]
fn a_failed_encoding_is_retried_with_args_as_strings_then_is_an_error() {
    let set = set_of(
        r#"[{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1, "args": {"n": 5, "f": 0.5, "b": true}}]"#,
    );
    let schema = export_schema(&set, None).unwrap();
    let mut tries = Vec::new();
    let (value, first) = with_text_fallback(&schema, ExportFormat::Parquet, |s| {
        let typed: Vec<String> = s
            .columns
            .iter()
            .filter(|c| matches!(c.source, Source::Arg(_)) && c.ty != ColumnType::Utf8)
            .map(|c| c.name.clone())
            .collect();
        tries.push(typed.clone());
        if typed.is_empty() {
            Ok(s.names())
        } else {
            Err(format!("cannot write {}", typed.join(",")))
        }
    })
    .unwrap();
    assert_eq!(tries, vec![vec!["args_b", "args_f", "args_n"], vec![]]);
    assert_eq!(first.as_deref(), Some("cannot write args_b,args_f,args_n"));
    assert_eq!(value.len(), schema.columns.len());
    // Standard columns keep their types on the second try.
    let text = schema.with_args_as_text();
    assert_eq!(type_of(&text, "ts"), ColumnType::Int64);
    assert_eq!(type_of(&text, "args_n"), ColumnType::Utf8);
    let failed = with_text_fallback(&schema, ExportFormat::Arrow, |_| {
        Err::<(), _>("disk on fire".to_string())
    });
    match failed {
        Err(e @ ExportError::Encode { .. }) => {
            let message = e.to_string();
            assert!(
                message.contains("arrow") && message.contains("disk on fire"),
                "{message}"
            );
        }
        other => panic!("expected an encode error, got {other:?}"),
    }
}

/// Values of `traceEvents` straight from the JSON.
fn json_events(name: &str) -> Vec<Value> {
    let doc: Value = serde_json::from_slice(&common::json_text(&common::trace(name))).unwrap();
    match doc {
        Value::Array(a) => a,
        mut d => d["traceEvents"].take().as_array().cloned().unwrap(),
    }
}

/// Real traces, written as Arrow IPC and as Parquet and read back: one row per event of the JSON, the
/// same names, `ts`, `dur`, `ph` and `cat` per row, the same sum of kernel durations, and each args key's
/// values.
#[test]
fn real_traces_read_back_equal_the_json() {
    for name in [
        "hta__nccl_data.json.gz",
        "hta__ns_resolution__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
        "hta__amd_mi250_minitoy_train.json.gz",
        "hta__call_stack_backward_thread.json",
    ] {
        let events = json_events(name);
        let table = profile_model::table::load_path(&common::trace(name)).unwrap();
        let set = TraceSet::single(table);
        let schema = export_schema(&set, None).unwrap();
        for format in [ExportFormat::Arrow, ExportFormat::Parquet] {
            let (bytes, report) = export_bytes(&set, &schema, format).unwrap();
            assert_eq!(report.rows as usize, events.len(), "{name} {format}");
            let (s, chunks) = match format {
                ExportFormat::Arrow => read_arrow(&bytes),
                _ => read_parquet(&bytes),
            };
            let names = column(&s, &chunks, "name");
            let cats = column(&s, &chunks, "cat");
            let phases = column(&s, &chunks, "ph");
            let ts = column(&s, &chunks, "ts");
            let dur = column(&s, &chunks, "dur");
            assert_eq!(names.len(), events.len());
            let mut kernel_dur = (0.0, 0.0);
            for (i, e) in events.iter().enumerate() {
                assert_eq!(names[i], e["name"], "{name} {format} row {i} name");
                assert_eq!(cats[i], e["cat"], "{name} row {i} cat");
                assert_eq!(phases[i], e["ph"], "{name} row {i} ph");
                let close = |a: &Value, b: &Value| match (a.as_f64(), b.as_f64()) {
                    (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * y.abs().max(1.0),
                    _ => a.is_null() && b.is_null(),
                };
                assert!(
                    close(&ts[i], &e["ts"]),
                    "{name} row {i} ts {} vs {}",
                    ts[i],
                    e["ts"]
                );
                assert!(
                    close(&dur[i], &e["dur"]),
                    "{name} row {i} dur {} vs {}",
                    dur[i],
                    e["dur"]
                );
                if e["cat"] == "kernel" {
                    kernel_dur.0 += dur[i].as_f64().unwrap();
                    kernel_dur.1 += e["dur"].as_f64().unwrap();
                }
            }
            assert!((kernel_dur.0 - kernel_dur.1).abs() <= 1e-6 * kernel_dur.1.max(1.0));
            check_args(name, &events, &s, &chunks);
        }
    }
}

/// Every args value of the JSON is in its `args_<key>` column (numbers as numbers, text as text,
/// objects as their JSON), and no column has a value the JSON lacks.
fn check_args(name: &str, events: &[Value], s: &Schema, chunks: &[Chunk<Box<dyn Array>>]) {
    let mut keys: BTreeMap<String, ()> = BTreeMap::new();
    for e in events {
        if let Some(args) = e["args"].as_object() {
            for k in args.keys() {
                keys.insert(k.clone(), ());
            }
        }
    }
    for key in keys.keys() {
        // The old key of the external id is exported under the new one.
        let col_name = format!(
            "args_{}",
            if key == "external id" {
                "External id"
            } else {
                key
            }
        );
        let values = column(s, chunks, &col_name);
        let text = s
            .fields
            .iter()
            .find(|f| f.name == col_name)
            .unwrap()
            .data_type
            == DataType::Utf8;
        for (i, e) in events.iter().enumerate() {
            let want = &e["args"][key.as_str()];
            let got = &values[i];
            let same = match (want, got) {
                (Value::Null, g) => g.is_null(),
                (Value::String(w), Value::String(g)) => w == g,
                (w @ (Value::Array(_) | Value::Object(_)), Value::String(g)) => {
                    serde_json::from_str::<Value>(g).ok().as_ref() == Some(w)
                }
                (w, Value::String(g)) if text => &w.to_string() == g,
                // Within 2 ULP: the table's float parser may differ from serde_json's in the last bit.
                (w, g) => match (w.as_f64(), g.as_f64()) {
                    (Some(a), Some(b)) => (a - b).abs() <= 4.5e-16 * a.abs(),
                    _ => w == g,
                },
            };
            assert!(
                same,
                "{name} row {i} args[{key:?}]: JSON {want}, export {got}"
            );
        }
    }
}

#[test]
fn a_redacted_export_hashes_names_and_leaves_the_args_out() {
    use profile_model::export::{export_bytes, export_schema, ExportFormat, NameMap};
    use profile_model::report::redact::redact_kind_name;
    let table =
        profile_model::table::load_path(&common::trace("hta__df_index_resolver.json.gz")).unwrap();
    let set = TraceSet::single(table);
    let schema = export_schema(&set, None)
        .unwrap()
        .redacted(NameMap(redact_kind_name));
    assert!(schema.names().iter().all(|n| !n.starts_with("args_")));
    let (bytes, report) = export_bytes(&set, &schema, ExportFormat::Csv).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let t = &set.ranks[0].table;
    assert_eq!(report.rows as usize, text.lines().count() - 1);
    // Independently: every kernel's name is hashed, and no kernel name appears in the file.
    let kernel = (0..t.len())
        .find(|&r| t.kind_at(r) == profile_model::table::EventKind::Kernel)
        .unwrap();
    let name = t.name_at(kernel);
    assert!(!text.contains(name), "{name} is in the redacted export");
    assert!(text.contains(&profile_model::report::redact::redacted_name(
        "kernel", name
    )));
}

/// The page's route (the worker's plain columns through the wire format to the exporter worker, which
/// writes the file: `plain_ranks`, `ToExporter`, `encode_plain`) writes the same bytes as the CLI's
/// `export_bytes` for every format: on real traces (two of them as two ranks), redacted and not, and
/// with every `args_*` column as text (the fallback's second encoding).
#[test]
fn the_exporter_workers_file_is_the_clis() {
    use profile_model::export::{csv_bytes, encode_plain, plain_ranks, NameMap};
    use profile_model::protocol::codec;
    use profile_model::protocol::exporter::ToExporter;
    use profile_model::report::redact::redact_kind_name;
    let load = |name: &str| profile_model::table::load_path(&common::trace(name)).unwrap();
    let one = TraceSet::single(load("hta__nccl_data.json.gz"));
    let two = TraceSet::from_tables(vec![
        load("hta__amd_mi250_minitoy_train.json.gz"),
        load("hta__call_stack_backward_thread.json"),
    ]);
    for (what, set) in [("one rank", &one), ("two ranks", &two)] {
        let all = export_schema(set, None).unwrap();
        let schemas = [
            all.clone(),
            all.clone().redacted(NameMap(redact_kind_name)),
            all.with_args_as_text(),
        ];
        for schema in &schemas {
            // Through the wire: the ranks as the worker sends them, read as the exporter reads them.
            let begin = codec::encode(&ToExporter::Begin {
                encoding: profile_model::export::Encoding::Stream,
                columns: schema.columns.clone(),
            })
            .unwrap();
            let Ok(ToExporter::Begin { columns, .. }) = codec::decode(&begin) else {
                panic!("{what}: Begin reads back");
            };
            let received = ExportSchema {
                columns,
                names: None,
            };
            let ranks: Vec<_> = plain_ranks(set, schema)
                .map(|r| {
                    let bytes = codec::encode(&ToExporter::Rank(r)).unwrap();
                    match codec::decode(&bytes) {
                        Ok(ToExporter::Rank(r)) => r,
                        other => panic!("{what}: a rank reads back as {other:?}"),
                    }
                })
                .collect();
            assert_eq!(ranks.len(), set.ranks.len(), "{what}");
            for format in [
                ExportFormat::Parquet,
                ExportFormat::Arrow,
                ExportFormat::Csv,
            ] {
                let (cli, report) = export_bytes(set, schema, format).unwrap();
                assert!(!report.args_as_text, "{what} {format}");
                let page = encode_plain(
                    &received,
                    profile_model::export::Encoding::File(format),
                    &ranks,
                )
                .unwrap();
                assert!(page == cli, "{what} {format}: the exporter's file differs");
            }
            assert!(
                csv_bytes(set, schema).unwrap()
                    == export_bytes(set, schema, ExportFormat::Csv).unwrap().0
            );
        }
    }
}
