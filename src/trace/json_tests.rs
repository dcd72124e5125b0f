//! Unit tests of the JSON tokenizer (`json.rs`).

use super::number::{digit_run, eight_digits};
use super::string::find_quote_or_backslash_swar;
use super::*;

#[test]
fn nanos_are_exact() {
    assert_eq!(
        micros_text_to_nanos(b"4458676522690.655"),
        Some(4458676522690655)
    );
    assert_eq!(micros_text_to_nanos(b"12"), Some(12000));
    assert_eq!(micros_text_to_nanos(b"-1.5"), Some(-1500));
    assert_eq!(micros_text_to_nanos(b"0.0005"), Some(1));
    assert_eq!(micros_text_to_nanos(b"0.0004"), Some(0));
    // Outside [-2^61, 2^62) ns: unreadable, not wrapped.
    assert_eq!(
        micros_text_to_nanos(b"4611686018427387.903"),
        Some((1 << 62) - 1)
    );
    assert_eq!(micros_text_to_nanos(b"4611686018427387.904"), None);
    assert_eq!(
        micros_text_to_nanos(b"-2305843009213693.952"),
        Some(-(1 << 61))
    );
    assert_eq!(micros_text_to_nanos(b"-2305843009213693.953"), None);
    assert_eq!(micros_text_to_nanos(b"9223372036854775"), None);
    assert_eq!(micros_text_to_nanos(b"1.5e3"), Some(1_500_000));
    assert_eq!(micros_text_to_nanos(b""), None);
}

#[test]
fn exponents_are_exact_too() {
    // 17 significant digits: f64 would give 1604203670000123520 ns.
    assert_eq!(
        micros_text_to_nanos(b"1.6042036700001235e15"),
        Some(1_604_203_670_000_123_500)
    );
    assert_eq!(
        micros_text_to_nanos(b"1.604203670000123456E+15"),
        Some(1_604_203_670_000_123_456)
    );
    assert_eq!(micros_text_to_nanos(b"1e-05"), Some(0));
    assert_eq!(micros_text_to_nanos(b"5e-4"), Some(1));
    assert_eq!(micros_text_to_nanos(b"2.5E-1"), Some(250));
    assert_eq!(micros_text_to_nanos(b"-1.5e3"), Some(-1_500_000));
    assert_eq!(micros_text_to_nanos(b"0.00125e3"), Some(1_250));
    assert_eq!(micros_text_to_nanos(b"12e0"), Some(12_000));
    assert_eq!(micros_text_to_nanos(b"1e400"), None);
    assert_eq!(micros_text_to_nanos(b"1e-400"), Some(0));
    assert_eq!(micros_text_to_nanos(b"1e"), None);
    assert_eq!(micros_text_to_nanos(b"e5"), None);
    assert_eq!(micros_text_to_nanos(b"1.2.3e4"), None);
    assert_eq!(
        micros_text_to_nanos(b"123456789012345678901234567890123456789e-30"),
        Some(123_456_789_012)
    );
}

#[test]
fn strings_with_escapes() {
    let mut scratch = Vec::new();
    let input = br#""a\"b\u00e9\ud83d\ude00c" "#;
    let (loc, end) = read_string(input, 0, &mut scratch).unwrap();
    assert_eq!(loc.get(input, &scratch), "a\"bé😀c".as_bytes());
    assert_eq!(end, input.len() - 1);
    assert_eq!(
        read_string(br#""abc"#, 0, &mut scratch),
        Err(Stop::Incomplete)
    );
}

#[test]
fn scanner_resumes_byte_by_byte() {
    let text = br#"{"a": [1, "x}]\"", {"b": null}]} ,"#;
    let mut s = ValueScanner::default();
    let mut done = None;
    for (i, b) in text.iter().enumerate() {
        if let ScanResult::Complete(n) = s.scan(std::slice::from_ref(b)) {
            done = Some(i + n);
            break;
        }
    }
    assert_eq!(done, Some(text.len() - 2));
    assert_eq!(skip_value(b"123,", 0, false), Ok(3));
    assert_eq!(skip_value(b"123", 0, false), Err(Stop::Incomplete));
    assert_eq!(skip_value(b"123", 0, true), Ok(3));
}

#[test]
fn one_pass_numbers_agree_with_the_general_path() {
    for text in [
        "0",
        "12",
        "-7",
        "4458676522690.655",
        "1.5",
        "0.0005",
        "0.0004",
        "-1.5",
        "12.3456789",
        "999999999999999",
        "1669850453938123",
        "1669850453938123.5",
        "2305843009213692.999",
        "-2305843009213692.999",
    ] {
        let input = format!("{text},");
        let (ns, end) = read_micros(input.as_bytes(), 0).unwrap().unwrap();
        assert_eq!(Some(ns), micros_text_to_nanos(text.as_bytes()), "{text}");
        assert_eq!(end, text.len());
    }
    assert_eq!(read_micros(b"1e3,", 0), Ok(None));
    assert_eq!(read_micros(b"12", 0), Err(Stop::Incomplete));
    // The form of the text: a fraction (a float for a JSON parser), digits past the ns.
    assert_eq!(read_micros_digits(b"12,", 0), Ok(Some((12_000, 2, 0))));
    assert_eq!(
        read_micros_digits(b"12.0,", 0),
        Ok(Some((12_000, 4, MICROS_FRACTION)))
    );
    assert_eq!(
        read_micros_digits(b"11.689600000000002,", 0),
        Ok(Some((11_690, 18, MICROS_FRACTION | MICROS_PAST_NS)))
    );
    assert_eq!(read_plain_int(b"-42}", 0), Ok(Some((-42, 3))));
    assert_eq!(read_plain_int(b"4.5,", 0), Ok(None));
    assert_eq!(read_plain_int(b"42", 0), Err(Stop::Incomplete));
    let long = b"1234567890123456789,";
    assert_eq!(read_plain_int(long, 0), Ok(None));
}

#[test]
fn digit_runs_agree_with_a_byte_loop() {
    for text in [
        "",
        "7",
        "12345678",
        "123456789",
        "1683564914332916",
        "16835649143329168",
        "99999999999999999999",
        "0000000012",
        "1234567a",
        "12345678/",
        "1234567:",
    ] {
        let input = format!("{text}x");
        let mut v = 0i64;
        let end = digit_run(input.as_bytes(), 0, &mut v);
        let mut want = 0i64;
        let mut j = 0;
        while input.as_bytes()[j].is_ascii_digit() {
            want = want
                .wrapping_mul(10)
                .wrapping_add((input.as_bytes()[j] - b'0') as i64);
            j += 1;
        }
        assert_eq!((v, end), (want, j), "{text}");
    }
    for b in 0..=255u8 {
        let w = u64::from_le_bytes([b'1', b'2', b'3', b, b'5', b'6', b'7', b'8']);
        assert_eq!(eight_digits(w), b.is_ascii_digit(), "{b}");
    }
}

#[test]
fn white_space_runs_of_any_length() {
    for n in 0..70 {
        let text = format!("{}x", " \n\t\r".repeat(n / 4 + 1)[..n].to_string());
        assert_eq!(skip_ws(text.as_bytes(), 0), n, "{n}");
        assert_eq!(skip_ws(&text.as_bytes()[..n], 0), n);
    }
}

#[test]
fn quote_search_agrees_with_a_byte_loop() {
    let text: Vec<u8> = (0..200u8)
        .map(|i| {
            if i % 37 == 5 {
                b'"'
            } else if i % 53 == 7 {
                b'\\'
            } else {
                b'a' + i % 20
            }
        })
        .collect();
    for start in 0..text.len() {
        let want = text[start..]
            .iter()
            .position(|&b| b == b'"' || b == b'\\')
            .map(|p| p + start);
        assert_eq!(find_quote_or_backslash(&text, start), want);
        assert_eq!(find_quote_or_backslash_swar(&text, start), want);
    }
}

#[test]
fn numbers() {
    assert_eq!(parse_number(b"-42"), Some(Number::Int(-42)));
    assert_eq!(parse_number(b"4.5"), Some(Number::Float(4.5)));
    assert_eq!(
        parse_number(b"9223372036854775807"),
        Some(Number::Int(i64::MAX))
    );
    assert_eq!(parse_number(b"1e400"), None);
}

#[test]
fn one_pass_compaction_agrees_with_skip_and_compact() {
    for text in [
        r#"[[4096], [4096], []]"#,
        r#"[1,2]"#,
        r#"{"a": "x y\" ]", "b": [ {}, [] ]}"#,
        "[\n  1,\t2\r\n]",
        r#"["a\\", "b"]"#,
    ] {
        let input = format!("{text},");
        let mut scratch = b"junk".to_vec();
        let (loc, end) = read_compact_container(input.as_bytes(), 0, &mut scratch).unwrap();
        let mut want = Vec::new();
        let want_end = skip_value(input.as_bytes(), 0, false).unwrap();
        compact_json_into(&input.as_bytes()[..want_end], &mut want);
        assert_eq!(end, want_end, "{text}");
        assert_eq!(loc.get(input.as_bytes(), &scratch), &want[..], "{text}");
        for cut in 1..text.len() {
            assert_eq!(
                read_compact_container(&text.as_bytes()[..cut], 0, &mut scratch),
                Err(Stop::Incomplete)
            );
        }
    }
}

#[test]
fn compacts() {
    let mut out = Vec::new();
    compact_json_into(br#"[ [1, 2], "a b" ]"#, &mut out);
    assert_eq!(out, br#"[[1,2],"a b"]"#);
}
