//! The wire format read back: every serde shape the messages use, fields left out by
//! `skip_serializing_if`, borrowed strings, and damaged input refused.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::*;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum Shape {
    Unit,
    Newtype(i64),
    Tuple(u8, String),
    Struct {
        a: Option<f64>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        b: Vec<u32>,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Everything {
    flag: bool,
    small: i8,
    big: u128,
    size: usize,
    x: f64,
    c: char,
    text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    maybe: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nested: Option<Option<u16>>,
    list: Vec<Shape>,
    map: BTreeMap<String, (i32, bool)>,
    pair: (u64, f32),
    unit: (),
    boxed: Box<Shape>,
    #[serde(skip)]
    local: u32,
    after: i64,
}

fn sample() -> Everything {
    Everything {
        flag: true,
        small: -3,
        big: u128::MAX - 7,
        size: 123_456,
        x: -0.5e-300,
        c: 'é',
        text: "a \"quoted\" ünïcode line\n".into(),
        maybe: None,
        nested: Some(None),
        list: vec![
            Shape::Unit,
            Shape::Newtype(-9),
            Shape::Tuple(7, "t".into()),
            Shape::Struct { a: None, b: vec![] },
            Shape::Struct {
                a: Some(f64::INFINITY),
                b: vec![1, 2, 3],
            },
        ],
        map: [("k".to_string(), (5, false)), ("z".to_string(), (-1, true))].into(),
        pair: (u64::MAX, 1.25),
        unit: (),
        boxed: Box::new(Shape::Newtype(1)),
        local: 0,
        after: i64::MIN,
    }
}

#[test]
fn every_shape_comes_back_as_it_was() {
    let value = sample();
    let bytes = encode(&value).unwrap();
    let back: Everything = decode(&bytes).unwrap();
    assert_eq!(back, value);
    let with = Everything {
        maybe: Some("here".into()),
        nested: Some(Some(4)),
        ..sample()
    };
    assert_eq!(decode::<Everything>(&encode(&with).unwrap()).unwrap(), with);
}

#[test]
fn a_field_left_out_is_one_byte_and_reads_back_missing() {
    let short = encode(&Shape::Struct { a: None, b: vec![] }).unwrap();
    // Variant index 3, then field `a` present (1) as None (0), field `b` left out (0).
    assert_eq!(short, [3, 0, 0, 0, 1, 0, 0]);
    let long = encode(&Shape::Struct {
        a: None,
        b: vec![9],
    })
    .unwrap();
    assert_eq!(long, [3, 0, 0, 0, 1, 0, 1, 1, 0, 0, 0, 9, 0, 0, 0]);
}

#[test]
fn strings_are_borrowed_from_the_message() {
    #[derive(Serialize, Deserialize)]
    struct Borrowed<'a> {
        name: &'a str,
    }
    let bytes = encode(&Borrowed { name: "kernel" }).unwrap();
    let back: Borrowed = decode(&bytes).unwrap();
    assert_eq!(back.name, "kernel");
}

#[test]
fn damaged_messages_are_errors_not_values() {
    let bytes = encode(&sample()).unwrap();
    for cut in [0, 1, 5, bytes.len() / 2, bytes.len() - 1] {
        assert!(decode::<Everything>(&bytes[..cut]).is_err(), "cut at {cut}");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(decode::<Everything>(&longer).is_err());
    assert!(decode::<Shape>(&[9, 0, 0, 0]).is_err(), "no variant 9");
    // A huge count with few bytes behind it fails without allocating for the count.
    assert!(decode::<Vec<u64>>(&[255, 255, 255, 255, 1]).is_err());
    assert!(
        decode::<String>(&[2, 0, 0, 0, 0xff, 0xfe]).is_err(),
        "not UTF-8"
    );
}

#[test]
fn a_prefix_reads_the_first_fields_and_says_how_many_bytes() {
    #[derive(Serialize)]
    struct Long {
        first: u64,
        second: String,
    }
    #[derive(Deserialize)]
    struct First {
        first: u64,
    }
    let bytes = encode(&Long {
        first: 77,
        second: "rest".into(),
    })
    .unwrap();
    let (first, used) = decode_prefix::<First>(&bytes).unwrap();
    assert_eq!((first.first, used), (77, 9));
}

#[test]
fn variant_names_are_in_index_order() {
    assert_eq!(
        variant_names::<Shape>(),
        ["Unit", "Newtype", "Tuple", "Struct"]
    );
    let bytes = encode(&Shape::Tuple(1, String::new())).unwrap();
    assert_eq!(variant_index(&bytes), Some(2));
    assert_eq!(variant_index(&[1, 2]), None);
}

#[test]
fn untyped_json_crosses_as_its_text_and_stays_json_in_json() {
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Row {
        #[serde(with = "crate::protocol::codec::json_text")]
        args: serde_json::Map<String, serde_json::Value>,
    }
    let json = r#"{"args":{"a":1.5,"b":["x",null],"c":{"d":true}}}"#;
    let row: Row = serde_json::from_str(json).unwrap();
    assert_eq!(decode::<Row>(&encode(&row).unwrap()).unwrap(), row);
    assert_eq!(serde_json::to_string(&row).unwrap(), json);
    // Without it, the codec refuses the untyped value instead of guessing.
    let value = serde_json::json!({"a": 1});
    assert!(decode::<serde_json::Value>(&encode(&value).unwrap()).is_err());
}

#[test]
fn a_field_left_out_without_a_default_is_an_error_not_a_value() {
    #[derive(Serialize)]
    struct Sent {
        #[serde(skip_serializing_if = "Option::is_none")]
        seq: Option<i64>,
    }
    #[derive(Debug, Deserialize)]
    struct Read {
        #[allow(dead_code)]
        seq: Option<i64>,
    }
    let bytes = encode(&Sent { seq: None }).unwrap();
    assert_eq!(bytes, [0]);
    assert!(decode::<Read>(&bytes).is_err());
}

/// Every `skip_serializing_if` field of the crate has its `#[serde(default)]` in the same
/// attribute: the codec reads a field left out as the field's default ([`Fields`]).
#[test]
fn every_skipped_field_has_a_default() {
    fn rs_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                rs_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    rs_files(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() > 50, "the sources are found");
    let mut without = Vec::new();
    // This file's own examples leave the default out on purpose.
    for file in files
        .iter()
        .filter(|f| !f.ends_with("protocol/codec_tests.rs"))
    {
        let text = std::fs::read_to_string(file).unwrap();
        for (at, _) in text.match_indices("#[serde(") {
            let attribute = &text[at..];
            let end = attribute.find(")]").unwrap_or(attribute.len());
            let attribute = &attribute[..end];
            let has_default = attribute
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|word| word == "default");
            if attribute.contains("skip_serializing_if") && !has_default {
                without.push(format!("{}: {attribute}", file.display()));
            }
        }
    }
    assert!(without.is_empty(), "{without:#?}");
}
