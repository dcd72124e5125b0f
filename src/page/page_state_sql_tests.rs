//! Tests of the SQL tab's page-state transitions: the engine started once and only with a worker holding
//! the trace, tables too big refused in words, one query at a time, a row put on the timeline.

use super::super::tests::{has, loaded_state};
use super::*;
use crate::page::sql::{SqlStatus, MAX_TABLE_BYTES};

fn part(table: SqlTable, rows: u64, bytes: u64) -> SqlPart {
    SqlPart { table, rows, bytes }
}

fn an_answer() -> SqlAnswer {
    SqlAnswer::from_json(
        r#"{"columns":[{"name":"n","type_name":"Int64","values":{"Int":[1]}}],"total_rows":1,"ms":0.5}"#,
    )
    .expect("an answer")
}

#[test]
fn the_engine_starts_once_and_only_with_a_worker_holding_the_trace() {
    let mut empty = PageState::default();
    assert!(
        empty.open_sql().is_empty(),
        "nothing loaded: nothing fetched"
    );
    let mut s = loaded_state("a.json");
    let first = s.open_sql();
    assert!(has(&first, |e| matches!(e, Effect::SqlStart)));
    assert!(has(&first, |e| matches!(
        e,
        Effect::Post(ToWorker::SqlTables)
    )));
    assert_eq!(s.sql().map(|q| q.status.clone()), Some(SqlStatus::Starting));
    assert!(
        s.open_sql().is_empty(),
        "opened again: the engine is not fetched twice"
    );
}

#[test]
fn tables_over_the_engines_limit_are_refused_in_words() {
    let mut s = loaded_state("a.json");
    s.open_sql();
    let too_big = vec![part(SqlTable::Events, 10, MAX_TABLE_BYTES + 1)];
    assert!(s.sql_tables(too_big).is_empty());
    let Some(SqlStatus::Failed(words)) = s.sql().map(|q| q.status.clone()) else {
        panic!("the tab says why it cannot query this trace");
    };
    assert!(words.contains("MB"), "{words}");

    let mut s = loaded_state("a.json");
    s.open_sql();
    let parts = vec![
        part(SqlTable::Events, 7, 1000),
        part(SqlTable::Idle, 2, 100),
    ];
    let effects = s.sql_tables(parts.clone());
    assert!(has(
        &effects,
        |e| matches!(e, Effect::SqlLoad { parts: p } if p.len() == 2)
    ));
    s.sql_ready(&parts, 12.0);
    assert_eq!(
        s.sql().map(|q| q.status.clone()),
        Some(SqlStatus::Ready {
            events: 7,
            load_ms: 12.0
        }),
        "the events counted are the events table's rows, not the idle table's"
    );
}

#[test]
fn one_query_runs_at_a_time_and_its_answer_or_error_ends_it() {
    let mut s = loaded_state("a.json");
    assert!(s.run_sql("select 1").is_empty(), "no engine yet");
    s.open_sql();
    let parts = vec![part(SqlTable::Events, 1, 10)];
    s.sql_tables(parts.clone());
    s.sql_ready(&parts, 1.0);
    assert!(has(
        &s.run_sql("select 1"),
        |e| matches!(e, Effect::SqlRun(q) if q == "select 1")
    ));
    assert!(s.run_sql("select 2").is_empty(), "a query is running");
    s.sql_answered(Ok(an_answer()));
    assert_eq!(
        s.sql().and_then(|q| q.answer.as_ref()).map(|a| a.rows()),
        Some(1)
    );
    assert!(
        !s.run_sql("selct").is_empty(),
        "the answer ended the first query"
    );
    s.sql_answered(Err("Parser Error: syntax error at or near \"selct\"".into()));
    let sql = s.sql().expect("the tab's state");
    assert!(sql.error.is_some() && !sql.running);
}

#[test]
fn a_row_goes_to_its_rank_on_the_timeline_and_an_unknown_rank_goes_nowhere() {
    let mut s = loaded_state("a.json");
    let effects = s.show_sql_row(RowSpan {
        rank: 0,
        ts_us: 2.5,
        dur_us: 1.25,
    });
    assert!(has(&effects, |e| matches!(e, Effect::ScrollToTimeline)));
    assert_eq!(s.tab, Tab::Timeline);
    let focus = s
        .timeline_focus
        .expect("the timeline is focused on the row");
    assert_eq!(
        (focus.rank_index, focus.start_ns, focus.dur_ns),
        (0, 2500, 1250)
    );
    assert_eq!(
        focus.row,
        Located::NO_ROW,
        "an answer's row names no event of the table"
    );

    let mut s = loaded_state("a.json");
    assert!(s
        .show_sql_row(RowSpan {
            rank: 5,
            ts_us: 1.0,
            dur_us: 1.0
        })
        .is_empty());
    assert_ne!(s.tab, Tab::Timeline);
}

/// The worker dies while it writes the tables (its memory full, as on a 603 MB trace): the tab says
/// why and how to query the trace instead of "starting" for ever.
#[test]
fn a_worker_that_dies_while_making_the_tables_ends_the_start_in_words() {
    let mut s = loaded_state("a.json");
    s.open_sql();
    s.current_worker_died("gone".into());
    let Some(SqlStatus::Failed(words)) = s.sql().map(|q| q.status.clone()) else {
        panic!("the tab no longer says it is starting");
    };
    assert!(
        words.contains("worker stopped") && words.contains("export"),
        "{words}"
    );
}
