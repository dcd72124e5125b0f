//! Tests of the routing of each worker message: the transition it makes and the effects it asks
//! for, by the role of the worker that sent it.

use super::super::tests::{has, loaded_state, reports, set};
use super::*;
use crate::analysis::all::AllAnalyses;
use crate::analysis::rank_lanes::RankLanesView;
use crate::analysis::timeline::EventDetails;
use crate::page::page_state::Events;
use crate::protocol::{Located, Phase, Progress, ToWorker};
use crate::report::timeline_view::TimelineAnswer;
use crate::table::query::EventPage;

fn progress() -> Progress {
    Progress {
        phase: Phase::Parsing,
        bytes_done: 1,
        bytes_total: 2,
        file_index: 0,
        file_count: 1,
        file: "a.json".into(),
        mb_per_s: 1.0,
        files: Vec::new(),
    }
}

fn loading_state() -> PageState {
    let mut s = PageState::default();
    s.start_load(Some("a.json:10:0".into()));
    s
}

fn error(message: &str) -> FromWorker {
    FromWorker::Error {
        message: message.into(),
    }
}

#[test]
fn ready_marks_the_worker_that_said_it() {
    let mut s = PageState::default();
    for role in [WorkerRole::Current, WorkerRole::Loader, WorkerRole::Spare] {
        let e = s.on_message(role, FromWorker::Ready);
        assert!(matches!(e.as_slice(), [Effect::WorkerReady(r)] if *r == role));
    }
}

#[test]
fn progress_is_shown_only_from_the_loads_worker() {
    let mut s = loading_state();
    let e = s.on_message(WorkerRole::Loader, FromWorker::Progress(progress()));
    assert!(matches!(e.as_slice(), [Effect::ShowProgress(p)] if p.bytes_done == 1));
    assert!(s
        .on_message(WorkerRole::Current, FromWorker::Progress(progress()))
        .is_empty());
}

#[test]
fn a_failed_file_is_named_once() {
    let mut s = loading_state();
    let failed = |file: &str, message: &str| FromWorker::Failed {
        file: file.into(),
        message: message.into(),
    };
    s.on_message(WorkerRole::Loader, failed("b.json", "not JSON"));
    s.on_message(WorkerRole::Loader, failed("c.json", "c.json is empty"));
    assert_eq!(s.errors, ["b.json: not JSON", "c.json is empty"]);
}

#[test]
fn loaded_completes_the_progress_and_promotes_the_loads_worker() {
    let mut s = loading_state();
    let e = s.on_message(WorkerRole::Loader, FromWorker::Loaded(set("a.json")));
    assert!(matches!(
        e.first(),
        Some(Effect::EndProgress { complete: true })
    ));
    assert!(has(&e, |e| matches!(e, Effect::PromoteLoadWorker)));
    assert!(s.worker_answers());
    // The same message from the current worker changes nothing.
    let mut other = loading_state();
    assert!(other
        .on_message(WorkerRole::Current, FromWorker::Loaded(set("a.json")))
        .is_empty());
    assert!(other.is_loading());
}

#[test]
fn nothing_loaded_hides_the_progress_only_when_results_are_back() {
    let mut first = loading_state();
    let e = first.on_message(WorkerRole::Loader, FromWorker::NothingLoaded);
    assert!(matches!(
        e.first(),
        Some(Effect::EndProgress { complete: false })
    ));
    assert!(has(&e, |e| matches!(e, Effect::DropLoadWorker)));
    assert!(!has(&e, |e| matches!(e, Effect::HideProgress)));

    let mut again = loaded_state("a.json");
    again.start_load(Some("b.json:10:0".into()));
    let e = again.on_message(WorkerRole::Loader, FromWorker::NothingLoaded);
    assert!(has(&e, |e| matches!(e, Effect::HideProgress)));
    assert_eq!(
        again.shown().unwrap().loaded.ranks[0].file,
        "a.json",
        "what was shown before is back"
    );
}

#[test]
fn a_saved_trace_that_cannot_be_restored_is_forgotten() {
    let mut s = PageState::default();
    s.start_load(Some("k".into()));
    s.opening_saved = Some("k".into());
    let e = s.on_message(
        WorkerRole::Loader,
        FromWorker::RestoreFailed {
            message: "bad table".into(),
        },
    );
    assert!(matches!(&e[0], Effect::Warn(w) if w.contains("bad table")));
    assert!(matches!(e[1], Effect::HideProgress));
    assert!(has(&e, |e| matches!(e, Effect::ForgetEntry(k) if k == "k")));
    assert!(!s.is_loading());
}

#[test]
fn the_report_and_analyses_are_kept_from_the_current_worker_only() {
    let mut s = loaded_state("a.json");
    let report = |r: crate::page::page_state::Reports| FromWorker::Report {
        report: r.plain,
        redacted: r.redacted,
    };
    s.on_message(WorkerRole::Loader, report(reports()));
    assert!(s.report_shown().is_none());
    s.on_message(WorkerRole::Current, report(reports()));
    assert_eq!(
        s.report_shown().unwrap().main_finding,
        "gemm_kernel dominates"
    );

    s.on_message(
        WorkerRole::Current,
        FromWorker::Analysis {
            analysis: AllAnalyses::default(),
            timings: Vec::new(),
        },
    );
    assert!(s.shown().unwrap().analyses[0].is_some());
}

#[test]
fn events_and_their_export_reach_the_page() {
    let mut s = loaded_state("a.json");
    let page = EventPage {
        matched: 7,
        ..Default::default()
    };
    s.on_message(WorkerRole::Current, FromWorker::Events(page.clone()));
    assert_eq!(s.events, Events::Page(page));
    let e = s.on_message(
        WorkerRole::Current,
        FromWorker::Exported {
            csv: "name\nk\n".into(),
        },
    );
    assert!(matches!(
        e.as_slice(),
        [Effect::Download { text, mime, file_name }]
            if text == "name\nk\n" && mime == "text/csv" && file_name == "profile-model-events.csv"
    ));
}

#[test]
fn an_error_is_said_to_the_user() {
    let mut s = loaded_state("a.json");
    s.on_message(WorkerRole::Current, error("no rank 3"));
    assert_eq!(s.request_error.as_deref(), Some("no rank 3"));
    let mut other = loaded_state("a.json");
    other.on_message(WorkerRole::Spare, error("no rank 3"));
    assert_eq!(
        other.request_error, None,
        "a spare worker's error is not the page's"
    );
}

#[test]
fn tables_are_stored_only_from_the_current_worker() {
    let mut s = loaded_state("a.json");
    let tables = || FromWorker::Tables {
        format: 2,
        bytes: vec![5],
    };
    let e = s.on_message(WorkerRole::Current, tables());
    assert!(matches!(
        e.as_slice(),
        [Effect::StoreTables { format: 2, bytes }] if bytes == &[5]
    ));
    assert!(s.on_message(WorkerRole::Loader, tables()).is_empty());
}

#[test]
fn tables_that_could_not_be_prepared_withdraw_the_keep() {
    let mut s = loaded_state("a.json");
    s.keep();
    let e = s.on_message(
        WorkerRole::Current,
        FromWorker::TablesFailed {
            message: "no memory".into(),
        },
    );
    assert!(matches!(&e[0], Effect::Warn(w) if w.contains("no memory")));
    assert!(s.notice.is_some());
    assert_eq!(s.tables_wanted(), None);
}

#[test]
fn the_timeline_answers_are_kept_for_the_rank_shown() {
    let mut s = loaded_state("a.json");
    s.on_message(
        WorkerRole::Current,
        FromWorker::Timeline(Box::new(TimelineAnswer {
            rank_index: 0,
            span_ns: (1, 9),
            ..Default::default()
        })),
    );
    assert_eq!(s.timeline.as_ref().unwrap().span_ns, (1, 9));
    s.on_message(
        WorkerRole::Current,
        FromWorker::RankLanes(Box::new(RankLanesView {
            width_px: 640,
            ..Default::default()
        })),
    );
    assert_eq!(s.rank_lanes.as_ref().unwrap().width_px, 640);
    s.on_message(
        WorkerRole::Current,
        FromWorker::EventDetails(Box::new(EventDetails {
            rank_index: 0,
            row: 4,
            ..Default::default()
        })),
    );
    assert_eq!(s.event_details.as_ref().unwrap().row, 4);
}

#[test]
fn a_located_event_brings_the_timeline_into_view() {
    let mut s = loaded_state("a.json");
    let e = s.on_message(
        WorkerRole::Current,
        FromWorker::Located(Located {
            rank_index: 0,
            row: 3,
            start_ns: 10,
            dur_ns: 5,
            outside: false,
        }),
    );
    assert!(matches!(e.last(), Some(Effect::ScrollToTimeline)));
    assert!(
        has(&e, |e| matches!(
            e,
            Effect::Post(ToWorker::EventDetails { row: 3, .. })
        )),
        "its details are asked for: {e:?}"
    );
    assert_eq!(s.timeline_focus.map(|l| l.row), Some(3));
}

#[test]
fn views_and_comparisons_are_kept() {
    let mut s = loaded_state("a.json");
    s.on_message(
        WorkerRole::Current,
        FromWorker::Views {
            views: Vec::new(),
            steps: None,
        },
    );
    assert_eq!(s.shown().unwrap().views, Some(Vec::new()));
    s.on_message(
        WorkerRole::Current,
        FromWorker::Compared {
            comparison: Box::new(super::super::tests::a_comparison()),
            shown: None,
        },
    );
    assert!(s.shown().unwrap().comparison.is_some());
}

#[test]
fn files_are_offered_to_the_user() {
    let mut s = loaded_state("a.json");
    let e = s.on_message(
        WorkerRole::Current,
        FromWorker::Download {
            file_name: "a.perfetto.json".into(),
            mime: "application/json".into(),
            text: "{}".into(),
        },
    );
    assert!(matches!(
        e.as_slice(),
        [Effect::Download { file_name, .. }] if file_name == "a.perfetto.json"
    ));
    // A binary file comes with its buffer, whichever worker made it.
    let e = s.on_message(
        WorkerRole::Loader,
        FromWorker::DownloadBytes {
            file_name: "t.parquet".into(),
            mime: "m".into(),
            bytes: 3,
        },
    );
    assert!(matches!(
        e.as_slice(),
        [Effect::DownloadBuffer { file_name, .. }] if file_name == "t.parquet"
    ));
}
