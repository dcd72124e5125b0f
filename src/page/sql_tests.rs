//! Tests of the SQL tab's state: the answer read, sorted, paged and written as CSV, rows put on the
//! timeline, DuckDB's errors placed in the query.

use super::*;

fn answer() -> SqlAnswer {
    SqlAnswer::from_json(
        r#"{"columns":[
            {"name":"name","type_name":"Utf8","values":{"Text":["b","a",null,"c,d"]}},
            {"name":"rank","type_name":"Int64","values":{"Int":[1,0,9223372036854775807,null]}},
            {"name":"ts","type_name":"Float64","values":{"Float":[10.5,2.0,null,1.0]}},
            {"name":"dur","type_name":"Int64","values":{"Int":[3,4,5,6]}}
        ],"total_rows":7,"ms":1.5}"#,
    )
    .expect("reads")
}

#[test]
fn reads_typed_columns_with_exact_64_bit_integers() {
    let a = answer();
    assert_eq!(a.rows(), 4);
    assert_eq!(a.total_rows, 7);
    assert_eq!(a.columns[1].values.cell(2), SqlCell::Int(i64::MAX));
    assert_eq!(a.columns[0].values.cell(2), SqlCell::Null);
}

#[test]
fn an_uneven_answer_is_an_error_not_a_panic() {
    let e = SqlAnswer::from_json(
        r#"{"columns":[{"name":"a","type_name":"Int64","values":{"Int":[1]}},
        {"name":"b","type_name":"Int64","values":{"Int":[]}}],"total_rows":1,"ms":0}"#,
    );
    assert!(e.unwrap_err().contains("column b has 0 rows"));
}

#[test]
fn sorts_descending_then_ascending_with_nulls_last() {
    let mut s = SqlState {
        answer: Some(answer()),
        ..Default::default()
    };
    s.sort_by(2);
    assert_eq!(s.page_rows(), vec![0, 1, 3, 2]);
    s.sort_by(2);
    assert_eq!(s.page_rows(), vec![3, 1, 0, 2]);
    s.sort_by(0);
    assert_eq!(s.page_rows(), vec![3, 0, 1, 2]);
}

#[test]
fn pages_hold_page_rows_each() {
    let n = PAGE_ROWS * 2 + 5;
    let values: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let json = format!(
        r#"{{"columns":[{{"name":"x","type_name":"Int64","values":{{"Int":[{}]}}}}],"total_rows":{n},"ms":0}}"#,
        values.join(",")
    );
    let mut s = SqlState::default();
    s.answered(SqlAnswer::from_json(&json).unwrap());
    assert_eq!(s.pages(), 3);
    s.set_page(9);
    assert_eq!(s.page, 2);
    assert_eq!(s.page_rows(), (PAGE_ROWS * 2..n).collect::<Vec<_>>());
}

#[test]
fn csv_quotes_and_leaves_nulls_empty() {
    let a = answer();
    let csv = a.csv(&[3, 2]);
    assert_eq!(
        csv,
        "name,rank,ts,dur\n\"c,d\",,1,6\n,9223372036854775807,,5\n"
    );
}

#[test]
fn rows_with_rank_ts_and_dur_have_a_span() {
    let a = answer();
    assert_eq!(
        a.span(0),
        Some(RowSpan {
            rank: 1,
            ts_us: 10.5,
            dur_us: 3.0
        })
    );
    // a null ts or rank: no place on the timeline
    assert_eq!(a.span(2), None);
    assert_eq!(a.span(3), None);
}

#[test]
fn a_parser_error_is_placed_at_its_line_and_column() {
    let query = "select name,\n  count(*) fro events";
    let message = "Parser Error: syntax error at or near \"fro\"\n\nLINE 2:   count(*) fro events\n                   ^";
    let e = SqlError::of(message, query);
    assert_eq!(e.message, "Parser Error: syntax error at or near \"fro\"");
    // "  count(*) " is 11 characters: "fro" starts at column 12
    assert_eq!(e.at, Some((2, 12)));
    assert_eq!(e.line_text.as_deref(), Some("  count(*) fro events"));
    assert!(e.text().starts_with("Line 2, column 12: Parser Error"));
}

#[test]
fn a_window_of_a_long_line_is_found_again() {
    let pad = "x".repeat(100);
    let query = format!("select '{pad}' as a, nosuch from events");
    let shown = "...' as a, nosuch from events";
    let caret_col = "LINE 1: ...' as a, ".len();
    let message = format!(
        "Binder Error: Referenced column \"nosuch\" not found\n\nLINE 1: {shown}\n{}^",
        " ".repeat(caret_col)
    );
    let e = SqlError::of(&message, &query);
    let want = query.find("nosuch").unwrap() + 1;
    assert_eq!(e.at, Some((1, want)));
}

#[test]
fn an_error_without_a_place_keeps_its_words() {
    let e = SqlError::of(
        "Catalog Error: Table with name nosuch does not exist!",
        "select 1",
    );
    assert_eq!(e.at, None);
    assert_eq!(
        e.text(),
        "Catalog Error: Table with name nosuch does not exist!"
    );
}

#[test]
fn the_engine_starts_once_and_runs_one_query_at_a_time() {
    let mut s = SqlState::default();
    assert!(s.open(10));
    assert!(!s.open(10));
    assert!(s.query.contains("ProfilerStep#"));
    assert!(!s.run("select 1"), "not before the engine is ready");
    s.ready(10, 5.0);
    assert!(s.run("select 1"));
    assert!(!s.run("select 2"), "one at a time");
    s.query_failed("Parser Error: x");
    assert!(!s.running);
    assert_eq!(
        s.error.as_ref().map(|e| e.message.as_str()),
        Some("Parser Error: x")
    );
}

#[test]
fn a_set_over_the_limit_is_refused_in_words_without_starting() {
    let mut s = SqlState::default();
    assert!(!s.open(MAX_EVENTS + 1));
    match &s.status {
        SqlStatus::Failed(text) => assert!(text.contains("profile-model export"), "{text}"),
        other => panic!("{other:?}"),
    }
    let mut fits = SqlState::default();
    assert!(fits.open(MAX_EVENTS));
}

#[test]
fn tables_over_the_engine_budget_are_refused_in_words() {
    let mut s = SqlState::default();
    assert!(s.open(10));
    assert!(s.tables_fit(MAX_TABLE_BYTES, 10));
    assert!(!s.tables_fit(MAX_TABLE_BYTES + 1, 10));
    assert!(matches!(&s.status, SqlStatus::Failed(t) if t.contains("MB in the engine")));
}
