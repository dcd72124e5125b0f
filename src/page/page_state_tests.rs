//! Tests of the page state machine: what is on screen is what the worker can answer about.

use super::*;
use crate::protocol::{FromWorker, RankSummary};

pub(super) fn set(file: &str) -> LoadedSet {
    LoadedSet {
        ranks: vec![RankSummary {
            rank: 0,
            rank_source: "load order".into(),
            file: file.into(),
            device: None,
            file_bytes: 10,
            text_bytes: 10,
            load_ms: 1.0,
            summary: serde_json::from_str(
                r#"{"events":1,"categories":[],"kernels":0,"kernel_time_us":0.0,"top_kernels":[],
                    "distinct_kernels":0,"span_us":1.0,"device":null,"rank":null,"world_size":null}"#,
            )
            .unwrap(),
            diagnostics: Vec::new(),
        }],
        ..Default::default()
    }
}

fn file_shown(s: &PageState) -> Option<String> {
    s.shown().map(|s| s.loaded.ranks[0].file.clone())
}

pub(super) fn has(effects: &[Effect], f: impl Fn(&Effect) -> bool) -> bool {
    effects.iter().any(f)
}

fn posts_query(effects: &[Effect]) -> bool {
    has(effects, |e| {
        matches!(e, Effect::Post(ToWorker::Query { .. }))
    })
}

pub(super) fn loaded_state(file: &str) -> PageState {
    let mut s = PageState::default();
    s.start_load(Some(format!("{file}:10:0")));
    s.loaded(set(file));
    s
}

pub(super) fn reports() -> Reports {
    let plain = DiagnosisReport {
        main_finding: "gemm_kernel dominates".into(),
        ..Default::default()
    };
    let redacted = DiagnosisReport {
        main_finding: "kernel_000001 dominates".into(),
        redacted: true,
        ..Default::default()
    };
    Reports { plain, redacted }
}

fn exact() -> AllAnalyses {
    AllAnalyses::default()
}

fn compat() -> AllAnalyses {
    AllAnalyses {
        mode: Mode::HtaCompat,
        ..Default::default()
    }
}

#[test]
fn a_load_runs_in_a_new_worker_and_replaces_the_old_one_only_when_it_succeeds() {
    let mut s = PageState::default();
    let e = s.start_load(Some("a".into()));
    assert!(has(&e, |e| matches!(e, Effect::StartLoadWorker)));
    assert!(!has(&e, |e| matches!(e, Effect::PromoteLoadWorker)));
    assert!(s.can_cancel());
    assert!(s.shown().is_none());
    let e = s.loaded(set("a.json"));
    assert!(has(&e, |e| matches!(e, Effect::PromoteLoadWorker)));
    assert!(has(&e, |e| matches!(
        e,
        Effect::Post(ToWorker::Analyze { mode: Mode::Exact })
    )));
    assert!(has(&e, |e| matches!(
        e,
        Effect::Post(ToWorker::Report { .. })
    )));
    assert!(posts_query(&e));
    assert_eq!(file_shown(&s).as_deref(), Some("a.json"));
    assert!(s.worker_answers());
}

#[test]
fn cancel_is_possible_only_while_a_load_runs() {
    let mut s = PageState::default();
    assert!(!s.can_cancel());
    s.start_load(None);
    assert!(s.can_cancel());
    s.loaded(set("a.json"));
    assert!(!s.can_cancel(), "a finished load cannot be cancelled");
    s.start_load(None);
    s.nothing_loaded();
    assert!(!s.can_cancel(), "a failed load cannot be cancelled");
    // A late cancel (the load ended meanwhile) changes nothing.
    assert!(s.cancel().is_empty());
    assert_eq!(file_shown(&s).as_deref(), Some("a.json"));
}

#[test]
fn a_failed_load_shows_the_previous_trace_and_keeps_its_worker() {
    let mut s = loaded_state("a.json");
    s.start_load(Some("b".into()));
    assert!(
        s.shown().is_none(),
        "nothing old is shown while the new load runs"
    );
    s.file_failed("b.json: not a Kineto trace".into());
    let e = s.nothing_loaded();
    assert!(has(&e, |e| matches!(e, Effect::DropLoadWorker)));
    assert!(!has(&e, |e| matches!(
        e,
        Effect::PromoteLoadWorker | Effect::ReplaceCurrentWorker
    )));
    assert_eq!(file_shown(&s).as_deref(), Some("a.json"));
    assert!(s.worker_answers(), "the old worker still holds a.json");
    assert_eq!(s.errors, vec!["b.json: not a Kineto trace".to_string()]);
    // The explorer asks again and gets an answer (no stale rows, no hang).
    assert!(posts_query(&e));
    assert_eq!(s.events, Events::Waiting);
    let e = s.run_query(first_query());
    assert!(posts_query(&e));
}

#[test]
fn a_cancelled_load_shows_the_previous_trace_and_keeps_its_worker() {
    let mut s = loaded_state("a.json");
    s.start_load(Some("b".into()));
    let e = s.cancel();
    assert!(has(&e, |e| matches!(e, Effect::DropLoadWorker)));
    assert_eq!(file_shown(&s).as_deref(), Some("a.json"));
    assert!(s.worker_answers());
    assert!(s.notice.as_deref().unwrap_or("").starts_with("Cancelled"));
    assert!(!s.can_cancel());
}

#[test]
fn a_cancelled_first_load_shows_nothing() {
    let mut s = PageState::default();
    s.start_load(None);
    s.cancel();
    assert!(matches!(s.page, Page::Cancelled));
    assert!(s.shown().is_none());
    assert!(s.run_query(first_query()).is_empty());
}

#[test]
fn a_load_worker_that_dies_leaves_the_previous_trace_with_its_worker() {
    let mut s = loaded_state("a.json");
    s.start_load(None);
    let e = s.load_worker_died("the worker failed".into());
    assert!(has(&e, |e| matches!(e, Effect::DropLoadWorker)));
    assert!(!has(&e, |e| matches!(e, Effect::ReplaceCurrentWorker)));
    assert!(s.worker_answers());
    assert_eq!(s.errors.len(), 1);
}

#[test]
fn saved_results_are_shown_as_needing_the_file_and_refuse_worker_requests() {
    let mut s = loaded_state("a.json");
    s.start_load(Some("b".into()));
    s.saved_found("b");
    assert!(s.saved_available);
    let saved = SavedResults {
        format: SAVED_FORMAT,
        loaded: set("b.json"),
        report: Some(reports()),
        redact: true,
        analyses: vec![exact()],
    };
    let e = s.restore_saved(saved, "b".into());
    assert!(has(&e, |e| matches!(e, Effect::DropLoadWorker)));
    assert_eq!(file_shown(&s).as_deref(), Some("b.json"));
    assert!(!s.worker_answers(), "no worker holds b.json");
    assert_eq!(s.detached(), Some(Detached::Saved));
    assert!(s.redact);
    assert!(s.analyses().is_some());
    // The explorer and the other mode are refused instead of waiting forever.
    assert!(s.run_query(first_query()).is_empty());
    assert_eq!(s.events, Events::None);
    assert!(s.export().is_empty());
    assert!(s
        .export_table(crate::export::ExportFormat::Parquet)
        .is_empty());
    assert!(s.set_hta_compat(true).is_empty());
    assert!(s.analyses().is_none());
    s.set_hta_compat(false);
    assert!(
        s.analyses().is_some(),
        "switching back shows the saved exact analyses"
    );
    // Late answers from the worker about another trace are dropped.
    s.events(EventPage::default());
    assert_eq!(s.events, Events::None);
    assert!(s.analysis(exact(), Vec::new()).is_empty());
    assert!(needs_file_text(Detached::Saved).contains("load the trace file again"));
}

#[test]
fn a_failed_load_after_saved_results_shows_them_again_still_needing_the_file() {
    let mut s = PageState::default();
    let saved = SavedResults {
        format: SAVED_FORMAT,
        loaded: set("b.json"),
        report: None,
        redact: false,
        analyses: Vec::new(),
    };
    s.restore_saved(saved, "b".into());
    s.start_load(None);
    let e = s.nothing_loaded();
    assert!(!posts_query(&e));
    assert_eq!(file_shown(&s).as_deref(), Some("b.json"));
    assert_eq!(s.detached(), Some(Detached::Saved));
}

#[test]
fn the_hta_switch_keeps_the_exact_analyses_and_asks_only_for_what_is_missing() {
    let mut s = loaded_state("a.json");
    s.analysis(exact(), Vec::new());
    let e = s.set_hta_compat(true);
    assert!(has(&e, |e| matches!(
        e,
        Effect::Post(ToWorker::Analyze {
            mode: Mode::HtaCompat
        })
    )));
    assert!(s.analyses().is_none(), "compat figures are not there yet");
    s.analysis(compat(), Vec::new());
    assert_eq!(s.analyses().map(|a| a.all.mode), Some(Mode::HtaCompat));
    let e = s.set_hta_compat(false);
    assert!(e.is_empty(), "the exact analyses were kept: nothing to ask");
    assert_eq!(s.analyses().map(|a| a.all.mode), Some(Mode::Exact));
    // An answer of the other mode arriving late fills its own slot, not the one shown.
    s.analysis(compat(), Vec::new());
    assert_eq!(s.analyses().map(|a| a.all.mode), Some(Mode::Exact));
}

#[test]
fn a_current_worker_that_dies_marks_the_results_as_needing_the_file() {
    let mut s = loaded_state("a.json");
    let e = s.current_worker_died("The page's worker failed".into());
    assert!(has(&e, |e| matches!(e, Effect::ReplaceCurrentWorker)));
    assert_eq!(s.detached(), Some(Detached::WorkerDied));
    assert!(s.run_query(first_query()).is_empty());
}

#[test]
fn keep_saves_only_results_a_worker_computed_and_saves_them_again_as_they_arrive() {
    let mut s = loaded_state("a.json");
    s.set_keep(KeepOffer::Kept);
    let e = s.report(reports());
    assert!(has(&e, |e| matches!(e, Effect::Save)));
    let (key, saved) = s.to_saved().expect("something to save");
    assert_eq!(key, "a.json:10:0");
    assert_eq!(saved.format, SAVED_FORMAT);
    assert!(saved.report.is_some());
}

#[test]
fn saved_results_round_trip_and_old_formats_are_refused_politely() {
    let saved = SavedResults {
        format: SAVED_FORMAT,
        loaded: set("a.json"),
        report: Some(reports()),
        redact: false,
        analyses: vec![exact(), compat()],
    };
    let bytes = encode_saved(&saved).unwrap();
    let back = decode_saved(&bytes).expect("this version reads its own format");
    assert_eq!(back.loaded, saved.loaded);
    assert_eq!(back.analyses.len(), 2);
    assert_eq!(
        serde_json::to_string(&back.report).unwrap(),
        serde_json::to_string(&saved.report).unwrap()
    );
    // Format 1: no version field, the report as Markdown, the analyses as untyped JSON.
    let old = r##"{"loaded":{"ranks":[],"notes":[],"load_ms":1.0},"report":"# Diagnosis","report_redacted":false,"analysis":{"mode":"exact"}}"##;
    assert_eq!(decode_saved(old.as_bytes()).unwrap_err(), SavedError::Older);
    // Format 2: the same results as JSON text.
    let two = serde_json::to_string(&SavedResults {
        format: 2,
        ..saved.clone()
    })
    .unwrap();
    assert_eq!(decode_saved(two.as_bytes()).unwrap_err(), SavedError::Older);
    assert!(SavedError::Older.message().contains("older version"));
    let newer = encode_saved(&SavedResults {
        format: 99,
        ..saved.clone()
    })
    .unwrap();
    assert_eq!(decode_saved(&newer).unwrap_err(), SavedError::Unreadable);
    assert_eq!(
        decode_saved(&bytes[..bytes.len() / 2]).unwrap_err(),
        SavedError::Unreadable
    );
}

#[test]
fn download_table_asks_the_worker_holding_the_trace_for_every_column() {
    use crate::export::ExportFormat;
    assert!(PageState::default()
        .export_table(ExportFormat::Csv)
        .is_empty());
    let mut s = loaded_state("a.json");
    for format in ExportFormat::ALL {
        let e = s.export_table(format);
        assert!(
            matches!(&e[..], [Effect::Post(ToWorker::ExportTable { format: f, columns, redact: false })] if *f == format && columns.is_empty()),
            "{e:?}"
        );
    }
    s.set_redact(true);
    assert!(matches!(
        &s.export_table(ExportFormat::Csv)[..],
        [Effect::Post(ToWorker::ExportTable { redact: true, .. })]
    ));
    let text = serde_json::to_string(&ToWorker::ExportTable {
        format: ExportFormat::Arrow,
        columns: Vec::new(),
        redact: false,
    })
    .unwrap();
    assert_eq!(
        text,
        r#"{"ExportTable":{"format":"arrow","columns":[],"redact":false}}"#
    );
}

#[test]
fn typed_messages_cross_the_wire_unchanged() {
    let msg = FromWorker::Analysis {
        analysis: compat(),
        timings: Vec::new(),
    };
    let text = serde_json::to_string(&msg).unwrap();
    let FromWorker::Analysis { analysis, .. } = serde_json::from_str(&text).unwrap() else {
        panic!("an Analysis message comes back as one");
    };
    assert_eq!(analysis.mode, Mode::HtaCompat);
    let msg = FromWorker::Report {
        report: DiagnosisReport::default(),
        redacted: DiagnosisReport::default(),
    };
    let text = serde_json::to_string(&msg).unwrap();
    assert!(matches!(
        serde_json::from_str::<FromWorker>(&text).unwrap(),
        FromWorker::Report { .. }
    ));
}

#[test]
fn a_late_loaded_message_changes_nothing() {
    let mut s = loaded_state("a.json");
    assert!(s.loaded(set("b.json")).is_empty());
    assert_eq!(file_shown(&s).as_deref(), Some("a.json"));
    let mut s = PageState::default();
    s.current_worker_died("gone".into());
    assert!(s.shown().is_none());
}

#[test]
fn the_redact_switch_shows_the_worker_redacted_report_without_asking_again() {
    let mut s = loaded_state("a.json");
    s.report(reports());
    assert_eq!(
        s.report_shown().unwrap().main_finding,
        "gemm_kernel dominates"
    );
    s.set_redact(true);
    let shown = s.report_shown().unwrap();
    assert_eq!(shown.main_finding, "kernel_000001 dominates");
    assert!(shown.redacted);
}

fn posts_compare(effects: &[Effect]) -> Option<Vec<String>> {
    effects.iter().find_map(|e| match e {
        Effect::Post(ToWorker::Compare { baseline_files }) => Some(baseline_files.clone()),
        _ => None,
    })
}

pub(super) fn a_comparison() -> Comparison {
    let none = crate::table::TraceSet::default();
    crate::report::compare::compare(&none, &none)
}

#[test]
fn a_compare_load_asks_for_the_comparison_once_loaded_and_only_then() {
    let mut s = PageState::default();
    let effects = s.start_compare_load(Some("k".into()), vec!["before.json".into()]);
    assert!(posts_compare(&effects).is_none());
    let effects = s.loaded(set("before.json"));
    assert_eq!(
        posts_compare(&effects),
        Some(vec!["before.json".to_string()])
    );
    assert!(
        !has(&effects, |e| matches!(
            e,
            Effect::Post(ToWorker::Report { .. })
        )),
        "no report of both runs mixed is asked for"
    );
    assert!(s.comparing);
    s.compared(a_comparison(), None);
    assert!(!s.comparing);
    assert!(s.shown().unwrap().comparison.is_some());
    // A plain load afterwards compares nothing.
    s.start_load(None);
    assert!(posts_compare(&s.loaded(set("other.json"))).is_none());
    assert!(s.shown().unwrap().comparison.is_none());
}

#[test]
fn after_a_comparison_the_page_shows_the_candidate_run_alone() {
    let mut s = PageState::default();
    s.start_load(None);
    let mut two = set("run-a.json");
    two.ranks.push(set("run-b.json").ranks.remove(0));
    two.ranks[1].load_ms = 7.0;
    two.runs = Some(crate::table::RunsSplit {
        why: "both say they are rank 0".into(),
        baseline: vec!["run-a.json".into()],
        candidate: vec!["run-b.json".into()],
    });
    s.loaded(two);
    s.compare_runs();
    let mut candidate = set("run-b.json").ranks;
    candidate[0].load_ms = 0.0;
    let effects = s.compared(
        a_comparison(),
        Some(RunShown {
            ranks: candidate,
            notes: Vec::new(),
        }),
    );
    let shown = s.shown().unwrap();
    let files: Vec<&str> = shown.loaded.ranks.iter().map(|r| r.file.as_str()).collect();
    assert_eq!(files, ["run-b.json"], "the header names one run");
    assert_eq!(shown.loaded.ranks[0].load_ms, 7.0, "its load time is kept");
    assert!(shown.loaded.runs.is_none() && shown.report.is_none());
    assert!(shown.comparison.is_some());
    for asked in ["report", "timeline", "analyses"] {
        let found = has(&effects, |e| match e {
            Effect::Post(ToWorker::Report { .. }) => asked == "report",
            Effect::Post(ToWorker::Timeline { .. }) => asked == "timeline",
            Effect::Post(ToWorker::Analyze { .. }) => asked == "analyses",
            _ => false,
        });
        assert!(found, "the page asks again for the {asked} of the one run");
    }
}

#[test]
fn a_failed_compare_load_forgets_the_comparison_asked_for() {
    let mut s = loaded_state("shown.json");
    s.start_compare_load(None, vec!["a.json".into()]);
    s.nothing_loaded();
    assert_eq!(s.pending_compare, None);
    assert_eq!(file_shown(&s).as_deref(), Some("shown.json"));
}

#[test]
fn separate_runs_are_compared_by_the_worker_that_holds_them() {
    let mut s = PageState::default();
    s.start_load(None);
    let mut two = set("run-a.json");
    two.runs = Some(crate::table::RunsSplit {
        why: "both say they are rank 0".into(),
        baseline: vec!["run-a.json".into()],
        candidate: vec!["run-b.json".into()],
    });
    s.loaded(two);
    assert_eq!(
        posts_compare(&s.compare_runs()),
        Some(vec!["run-a.json".to_string()])
    );
    // Once the worker is gone, nothing is asked and the user is told why.
    s.current_worker_died("gone".into());
    assert!(s.compare_runs().is_empty());
    assert!(s.request_error.is_some());
    // A comparison that arrives for a trace no worker holds is not shown.
    s.compared(a_comparison(), None);
    assert!(s.shown().unwrap().comparison.is_none());
}

fn timeline_answer(rank_index: usize) -> TimelineAnswer {
    TimelineAnswer {
        rank_index,
        ..Default::default()
    }
}

#[test]
fn the_timeline_asks_only_a_worker_holding_the_trace_and_forgets_another_traces_answer() {
    let request = TimelineRequest {
        start_ns: 0,
        end_ns: 1000,
        width_px: 100,
    };
    let mut s = PageState::default();
    assert!(s.ask_timeline(request).is_empty(), "nothing loaded");
    let mut s = loaded_state("a.json");
    assert!(has(&s.ask_timeline(request), |e| matches!(
        e,
        Effect::Post(ToWorker::Timeline { rank_index: 0, .. })
    )));
    s.timeline_answer(timeline_answer(0));
    s.event_details(EventDetails::default());
    assert!(s.timeline.is_some() && s.event_details.is_some());
    // An answer about another rank than the one picked now is dropped.
    s.pick_rank(1);
    assert!(s.timeline.is_none() && s.event_details.is_none());
    s.timeline_answer(timeline_answer(0));
    assert!(s.timeline.is_none());
    // A new load: the old trace's timeline goes, whatever worker answers late.
    s.pick_rank(0);
    s.timeline_answer(timeline_answer(0));
    s.start_load(Some("b.json:10:0".into()));
    assert!(s.timeline.is_none());
    s.timeline_answer(timeline_answer(0));
    assert!(s.timeline.is_none(), "no worker answers while loading");
    // Saved results: the timeline needs the file again.
    s.current_worker_died("gone".into());
    assert!(s.ask_timeline(request).is_empty());
    assert!(s.ask_event_details(3).is_empty());
}

#[test]
fn rank_lanes_are_asked_of_a_worker_holding_the_trace_and_a_clicked_row_picks_its_rank() {
    use crate::analysis::rank_lanes::{RankLane, RankLanesView};
    let request = TimelineRequest {
        start_ns: 0,
        end_ns: 1000,
        width_px: 100,
    };
    assert!(PageState::default().ask_rank_lanes(request).is_empty());
    let mut s = loaded_state("a.json");
    assert!(has(&s.ask_rank_lanes(request), |e| matches!(
        e,
        Effect::Post(ToWorker::RankLanes { .. })
    )));
    let lane = |rank_index| RankLane {
        rank_index,
        rank: rank_index as i64 * 10,
        ..Default::default()
    };
    s.rank_lanes_answer(RankLanesView {
        lanes: vec![lane(0), lane(1)],
        ..Default::default()
    });
    s.timeline_answer(timeline_answer(0));
    // A row not in the answer picks nothing; rank 1's row picks rank 1.
    s.pick_rank_lane(5);
    assert_eq!(s.rank_index, 0);
    s.pick_rank_lane(1);
    assert_eq!(s.rank_index, 1);
    assert!(
        s.timeline.is_none(),
        "the other rank's timeline is asked again"
    );
    // A new load forgets them.
    s.start_load(Some("b.json:10:0".into()));
    assert!(s.rank_lanes.is_none());
    s.rank_lanes_answer(RankLanesView::default());
    assert!(s.rank_lanes.is_none(), "no worker answers while loading");
}

#[test]
fn show_on_timeline_picks_the_evidences_rank_and_asks_its_details() {
    let link = FindingLink {
        id: "sync".into(),
        title: "sync".into(),
        query: EventQuery::default(),
    };
    let mut s = PageState::default();
    assert!(s.locate(&link).is_empty(), "nothing loaded");
    let mut s = loaded_state("a.json");
    assert!(has(&s.locate(&link), |e| matches!(
        e,
        Effect::Post(ToWorker::Locate { .. })
    )));
    let at = Located {
        rank_index: 1,
        row: 42,
        start_ns: 1000,
        dur_ns: 500,
    };
    let effects = s.located(at);
    assert_eq!(s.rank_index, 1);
    assert_eq!(s.timeline_focus, Some(at));
    assert!(has(&effects, |e| matches!(
        e,
        Effect::Post(ToWorker::EventDetails {
            rank_index: 1,
            row: 42
        })
    )));
    // A new load forgets it.
    s.start_load(None);
    assert_eq!(s.timeline_focus, None);
}

fn posts_views(effects: &[Effect]) -> bool {
    has(effects, |e| {
        matches!(e, Effect::Post(ToWorker::Views { .. }))
    })
}

fn some_views() -> Vec<RankViews> {
    vec![RankViews {
        rank: 0,
        ..Default::default()
    }]
}

#[test]
fn the_views_are_asked_once_per_trace_and_only_of_a_worker_holding_it() {
    let mut s = loaded_state("a.json");
    assert!(posts_views(&s.ask_views()));
    assert!(s.ask_views().is_empty(), "asked already");
    s.views(some_views(), None);
    assert!(s.shown().unwrap().views.is_some());
    assert!(s.ask_views().is_empty(), "they are here");
    // A new load: the old views go with the old trace, and an answer that comes during the load
    // is not taken for the new one.
    s.start_load(Some("b.json:10:0".into()));
    s.views(some_views(), None);
    s.loaded(set("b.json"));
    assert!(s.shown().unwrap().views.is_none());
    assert!(posts_views(&s.ask_views()));
    // Results without a worker (the worker died): nothing is asked.
    let mut d = loaded_state("c.json");
    d.current_worker_died("The page's worker failed".into());
    assert!(d.ask_views().is_empty());
}

#[test]
fn the_tab_follows_what_the_user_asked_to_see_and_survives_a_new_load() {
    let link = FindingLink {
        id: "sync".into(),
        title: "sync".into(),
        query: EventQuery::default(),
    };
    let mut s = loaded_state("a.json");
    assert_eq!(s.tab, Tab::Report, "the report first");
    s.set_tab(Tab::Analyses);
    s.start_load(None);
    s.loaded(set("b.json"));
    assert_eq!(s.tab, Tab::Analyses, "a new load keeps the tab");
    // A finding's events open the explorer; its evidence on the timeline opens the timeline.
    assert!(posts_query(&s.open_finding(&link)));
    assert_eq!(s.tab, Tab::Explore);
    s.located(Located {
        rank_index: 0,
        row: 1,
        start_ns: 0,
        dur_ns: 1,
    });
    assert_eq!(s.tab, Tab::Timeline);
    // Comparing shows the comparison.
    s.start_compare_load(None, vec!["a.json".into()]);
    assert_eq!(s.tab, Tab::Compare);
}

#[test]
fn the_redact_switch_hashes_the_explorer_and_its_csv_too() {
    use crate::table::query::{EventPage, EventRow};
    let mut s = loaded_state("a.json");
    let row: EventRow = serde_json::from_value(serde_json::json!({
        "rank": 0, "row": 1, "ts_us": null, "start_ms": null, "dur_us": null, "kind": "kernel",
        "phase": "X", "category": "kernel", "name": "gemm_kernel", "pid": "0", "tid": "7",
        "stream": 7, "device": 0, "correlation": 1, "external_id": null, "args": {}
    }))
    .unwrap();
    s.events(EventPage {
        query: first_query(),
        matched: 1,
        matched_dur_us: 0.0,
        group_count: 0,
        rows: vec![row],
        groups: Vec::new(),
    });
    let name = |s: &PageState| match s.events_shown() {
        Events::Page(p) => p.rows[0].name.clone(),
        _ => unreachable!(),
    };
    assert_eq!(name(&s), "gemm_kernel");
    assert!(has(&s.export(), |e| matches!(
        e,
        Effect::Post(ToWorker::Export { redact: false, .. })
    )));
    s.set_redact(true);
    assert_eq!(
        name(&s),
        crate::report::redact::redacted_name("kernel", "gemm_kernel")
    );
    assert!(has(&s.export(), |e| matches!(
        e,
        Effect::Post(ToWorker::Export { redact: true, .. })
    )));
    // The events themselves are kept as they are (turning the switch off shows them again).
    s.set_redact(false);
    assert_eq!(name(&s), "gemm_kernel");
}

#[test]
fn the_redact_switch_hashes_the_timelines_names_and_details() {
    use crate::analysis::timeline::{DrawnEvent, EventClass, LaneView, Partner, Relation};
    let mut s = loaded_state("a.json");
    let mut answer = timeline_answer(0);
    answer.view.lanes = vec![LaneView {
        track: 0,
        depth: 0,
        events: vec![
            DrawnEvent {
                row: 1,
                start_ns: 0,
                end_ns: 5,
                name: "gemm".into(),
                class: EventClass::Compute,
            },
            DrawnEvent {
                row: 2,
                start_ns: 0,
                end_ns: 5,
                name: "cudaLaunchKernel".into(),
                class: EventClass::Runtime,
            },
            DrawnEvent {
                row: 3,
                start_ns: 0,
                end_ns: 5,
                name: "aten::mm".into(),
                class: EventClass::CpuOp,
            },
        ],
        buckets: Vec::new(),
    }];
    s.timeline_answer(answer);
    s.event_details(EventDetails {
        rank_index: 0,
        row: 2,
        name: "cudaLaunchKernel".into(),
        category: "cuda_runtime".into(),
        args: vec![("correlation".into(), "1".into())],
        partners: vec![Partner {
            row: 1,
            relation: Relation::Launched,
            name: "gemm".into(),
            start_ns: 0,
            dur_ns: 5,
        }],
        ..Default::default()
    });
    let names = |s: &PageState| -> Vec<String> {
        s.timeline_shown().unwrap().view.lanes[0]
            .events
            .iter()
            .map(|e| e.name.clone())
            .collect()
    };
    assert_eq!(names(&s), ["gemm", "cudaLaunchKernel", "aten::mm"]);
    s.set_redact(true);
    use crate::report::redact::redacted_name;
    assert_eq!(
        names(&s),
        [
            redacted_name("kernel", "gemm"),
            "cudaLaunchKernel".into(),
            redacted_name("op", "aten::mm")
        ]
    );
    let d = s.event_details_shown().unwrap();
    assert_eq!(
        d.name, "cudaLaunchKernel",
        "runtime calls are kept, as in the report"
    );
    assert_eq!(d.partners[0].name, redacted_name("kernel", "gemm"));
    assert!(d.args.is_empty());
    s.set_redact(false);
    assert_eq!(s.event_details_shown().unwrap().partners[0].name, "gemm");
}

// ---- the cache of tables (report/saved.rs) ----

use crate::page::saved::{CacheProblem, SavedEntry, SavedFile};

fn entry(key: &str, ranks: usize) -> SavedEntry {
    SavedEntry {
        key: key.into(),
        files: vec![SavedFile {
            name: "a.json".into(),
            size: 10,
            last_modified: 0,
        }],
        saved_ms: 1.0,
        table_bytes: vec![100; ranks],
        results_bytes: 20,
        format: 1,
    }
}

fn saves(effects: &[Effect]) -> bool {
    has(effects, |e| {
        matches!(e, Effect::Save | Effect::Post(ToWorker::StoreTables))
    })
}

#[test]
fn consent_nothing_is_stored_before_keep_then_results_and_tables() {
    let mut s = loaded_state("a.json");
    assert_eq!(s.keep_offer, KeepOffer::Asking);
    assert!(!saves(&s.report(reports())));
    assert!(!saves(&s.analysis(exact(), Vec::new())));
    assert_eq!(
        s.tables_wanted(),
        None,
        "tables arriving unasked are not stored"
    );
    // Declined: still nothing.
    s.set_keep(KeepOffer::Declined);
    assert!(!saves(&s.report(reports())));
    let e = s.keep();
    assert!(has(&e, |e| matches!(e, Effect::Save)));
    assert!(has(&e, |e| matches!(
        e,
        Effect::Post(ToWorker::StoreTables)
    )));
    assert_eq!(s.keep_offer, KeepOffer::Kept);
    assert_eq!(s.tables_wanted().as_deref(), Some("a.json:10:0"));
    // Results that come later are saved again; the tables are not asked again.
    let e = s.report(reports());
    assert!(has(&e, |e| matches!(e, Effect::Save)));
    assert!(!has(&e, |e| matches!(
        e,
        Effect::Post(ToWorker::StoreTables)
    )));
}

#[test]
fn keep_without_a_worker_stores_the_results_only() {
    let mut s = loaded_state("a.json");
    s.current_worker_died("gone".into());
    let e = s.keep();
    assert!(has(&e, |e| matches!(e, Effect::Save)));
    assert!(!has(&e, |e| matches!(e, Effect::Post(_))));
    assert_eq!(
        PageState::default().keep().len(),
        0,
        "nothing shown: nothing kept"
    );
}

#[test]
fn the_list_shows_what_is_stored_and_open_rebuilds_it_in_a_fresh_worker() {
    let mut s = PageState::default();
    s.saved_listed(vec![entry("k", 2), entry("old-results-only", 0)]);
    assert_eq!(s.saved.len(), 2);
    assert_eq!(s.saved.total_bytes(), 220 + 20);
    assert!(s.saved_tables("old-results-only").is_none());
    let e = s.open_saved("k");
    assert!(has(&e, |e| matches!(e, Effect::StartLoadWorker)));
    assert!(s.is_loading());
    assert_eq!(s.current_key(), Some("k"));
    // The worker rebuilt the set: the page goes on as after a load, already kept.
    let e = s.loaded(set("a.json"));
    assert!(has(&e, |e| matches!(e, Effect::PromoteLoadWorker)));
    assert!(has(&e, |e| matches!(
        e,
        Effect::Post(ToWorker::Report { .. })
    )));
    assert!(has(&e, |e| matches!(
        e,
        Effect::Post(ToWorker::Timeline { .. })
    )));
    assert!(posts_query(&e), "the explorer asks the new worker");
    assert!(s.worker_answers());
    assert_eq!(s.detached(), None);
    assert_eq!(s.keep_offer, KeepOffer::Kept);
    assert!(!s.saved_available, "no offer to show what is shown");
    // A later file load asks again.
    s.start_load(Some("x".into()));
    s.loaded(set("x.json"));
    assert_eq!(s.keep_offer, KeepOffer::Asking);
}

#[test]
fn dropped_files_are_offered_their_saved_trace_only_by_their_own_key() {
    let mut s = PageState::default();
    s.saved_listed(vec![entry("a.json:10:5", 1)]);
    // The same name, another date: another key, not offered.
    s.start_load(Some("a.json:10:6".into()));
    s.saved_found("a.json:10:5");
    assert!(!s.saved_available);
    assert!(s.saved_tables("a.json:10:6").is_none());
    s.start_load(Some("a.json:10:5".into()));
    s.saved_found("a.json:10:5");
    assert!(s.saved_available);
    // "Show the saved results" opens the tables: the file's load is dropped for a fresh worker.
    let e = s.open_saved("a.json:10:5");
    assert!(has(&e, |e| matches!(e, Effect::DropLoadWorker)));
    assert!(has(&e, |e| matches!(e, Effect::StartLoadWorker)));
    s.loaded(set("a.json"));
    assert!(s.worker_answers());
}

#[test]
fn a_corrupt_or_missing_entry_is_removed_and_what_was_shown_stays() {
    // Corrupt, found by the worker: the load ends, the trace shown before comes back with its worker.
    let mut s = loaded_state("a.json");
    s.saved_listed(vec![entry("k", 1), entry("other", 1)]);
    s.open_saved("k");
    let e = s.saved_broken("k", CacheProblem::Corrupt);
    assert!(has(&e, |e| matches!(e, Effect::DropLoadWorker)));
    assert!(has(&e, |e| matches!(e, Effect::ForgetEntry(k) if k == "k")));
    assert!(posts_query(&e), "the old worker answers again");
    assert_eq!(file_shown(&s).as_deref(), Some("a.json"));
    assert!(s.worker_answers());
    assert!(s.saved.get("k").is_none());
    assert_eq!(s.saved.len(), 1);
    assert_eq!(s.notice.as_deref(), Some(CacheProblem::Corrupt.message()));
    // Corrupt on the empty page: the page is empty again (and lists the rest).
    let mut s = PageState::default();
    s.saved_listed(vec![entry("k", 1)]);
    s.open_saved("k");
    s.saved_broken("k", CacheProblem::Corrupt);
    assert!(matches!(s.page, Page::Empty));
    assert!(s.saved.is_empty());
    // Missing, found before opening (while the files load): the load goes on, the offer goes.
    let mut s = PageState::default();
    s.saved_listed(vec![entry("k", 1)]);
    s.start_load(Some("k".into()));
    s.saved_found("k");
    let e = s.saved_broken("k", CacheProblem::Missing);
    assert!(!has(&e, |e| matches!(e, Effect::DropLoadWorker)));
    assert!(s.is_loading());
    assert!(!s.saved_available);
    assert!(s.notice.as_deref().unwrap().contains("missing"));
    // An entry without tables cannot be opened.
    let mut s = PageState::default();
    s.saved_listed(vec![entry("r", 0)]);
    let e = s.open_saved("r");
    assert!(!s.is_loading());
    assert!(has(&e, |e| matches!(e, Effect::ForgetEntry(_))));
}

#[test]
fn a_full_quota_keeps_what_is_on_screen_and_removes_the_entry() {
    let mut s = loaded_state("a.json");
    s.report(reports());
    s.keep();
    s.stored(entry("a.json:10:0", 1));
    let e = s.store_failed("a.json:10:0", CacheProblem::Quota);
    assert!(has(
        &e,
        |e| matches!(e, Effect::ForgetEntry(k) if k == "a.json:10:0")
    ));
    assert!(s
        .notice
        .as_deref()
        .unwrap()
        .contains("storage for this page is full"));
    assert_eq!(s.keep_offer, KeepOffer::Hidden);
    assert!(s.saved.is_empty());
    assert!(s.worker_answers());
    assert!(s.report_shown().is_some(), "the results stay");
    assert_eq!(
        s.tables_wanted(),
        None,
        "tables arriving late are not stored"
    );
    assert!(!saves(&s.report(reports())));
}

#[test]
fn forget_clears_the_list_and_says_what_it_freed() {
    let mut s = loaded_state("a.json");
    s.keep();
    s.stored(entry("a.json:10:0", 2));
    assert_eq!(s.saved.total_bytes(), 220);
    s.forgotten(true);
    assert!(s.saved.is_empty());
    assert_eq!(s.keep_offer, KeepOffer::Hidden);
    assert!(s.notice.as_deref().unwrap().contains("220 B freed"));
    let mut s = PageState::default();
    s.saved_listed(vec![entry("k", 1)]);
    s.forgotten(false);
    assert_eq!(s.saved.len(), 1, "a refused clear keeps the list");
}

#[test]
fn forget_one_entry_keeps_the_others_and_says_what_it_freed() {
    let mut s = PageState::default();
    s.saved_listed(vec![entry("k", 1), entry("other", 2)]);
    let effects = s.forget_entry("k");
    assert!(matches!(effects.as_slice(), [Effect::ForgetEntry(k)] if k == "k"));
    assert_eq!(s.saved.len(), 1);
    assert!(s.saved.get("other").is_some());
    // 100 B of tables + 20 B of results.
    assert!(
        s.notice.as_deref().unwrap().contains("120 B freed"),
        "{:?}",
        s.notice
    );
    assert!(
        s.forget_entry("k").is_empty(),
        "an entry already gone: nothing to do"
    );
}

#[test]
fn an_entry_of_another_storage_format_is_removed_not_opened() {
    let mut s = PageState::default();
    let mut e = entry("k", 1);
    e.format = crate::table::store::STORE_FORMAT + 1;
    s.saved_listed(vec![e]);
    let effects = s.open_saved("k");
    assert!(!s.is_loading());
    assert!(has(
        &effects,
        |e| matches!(e, Effect::ForgetEntry(k) if k == "k")
    ));
    assert!(s.saved.is_empty());
    assert_eq!(s.notice.as_deref(), Some(CacheProblem::Corrupt.message()));
}

#[test]
fn finding_links_query_real_names_and_show_the_title_as_redacted() {
    use crate::report::findings::{EvidenceFilter, Finding, FindingId, Impact, Severity};
    let finding = |title: &str, name: &str| Finding {
        id: FindingId::ALL[0],
        headline: String::new(),
        title: title.into(),
        severity: Severity::Info,
        threshold: String::new(),
        measured: String::new(),
        value: 0.0,
        impact: Impact {
            pct_of_gpu_time: None,
            ms_per_step: None,
            time_ns: 0,
        },
        explanation: String::new(),
        actions: Vec::new(),
        evidence: Vec::new(),
        filter: Some(EvidenceFilter::Kernels(vec![name.into()])),
    };
    let mut r = reports();
    r.plain.findings = vec![finding("gemm_llama is slow", "gemm_llama")];
    r.redacted.findings = vec![finding("kernel_000001 is slow", "kernel_000001")];
    let mut s = loaded_state("a.json");
    s.report(r);
    let plain = s.finding_links();
    assert_eq!(plain[0].title, "gemm_llama is slow");
    s.set_redact(true);
    let links = s.finding_links();
    assert_eq!(links[0].title, "kernel_000001 is slow");
    assert_eq!(
        links[0].query, plain[0].query,
        "the query keeps the real name"
    );
    assert!(format!("{:?}", links[0].query).contains("gemm_llama"));
}

/// A report whose context analysed `steps` (picked when `chosen`) of a trace with steps 1-8.
fn step_reports(steps: (i64, i64), chosen: bool) -> FromWorker {
    let report = DiagnosisReport {
        main_finding: format!("over {steps:?}"),
        context: crate::report::context::TraceContext {
            steps: Some(steps),
            steps_chosen: chosen,
            step_numbers: (1..=8).collect(),
            ..Default::default()
        },
        ..Default::default()
    };
    FromWorker::Report {
        redacted: report.clone(),
        report,
    }
}

fn posted_report_steps(effects: &[Effect]) -> Option<Option<(i64, i64)>> {
    effects.iter().find_map(|e| match e {
        Effect::Post(ToWorker::Report { steps, .. }) => Some(*steps),
        _ => None,
    })
}

#[test]
fn the_step_picker_asks_the_report_and_views_again_over_the_picked_steps() {
    let mut s = loaded_state("a.json");
    s.on_message(WorkerRole::Current, step_reports((3, 8), false));
    let picker = |s: &PageState| s.shown().unwrap().steps.clone();
    assert_eq!(picker(&s).automatic, Some((3, 8)));
    assert!(picker(&s).offered());
    // Views not asked yet: only the report is asked again.
    let e = s.pick_steps(Some((2, 4)));
    assert_eq!(posted_report_steps(&e), Some(Some((2, 4))));
    assert!(!posts_views(&e));
    // The automatic report asked before comes late: dropped, the picked one is shown.
    s.on_message(WorkerRole::Current, step_reports((3, 8), false));
    assert_eq!(s.report_shown().unwrap().main_finding, "over (3, 8)");
    assert_eq!(picker(&s).pending, Some(Some((2, 4))));
    s.on_message(WorkerRole::Current, step_reports((2, 4), true));
    assert_eq!(s.report_shown().unwrap().main_finding, "over (2, 4)");
    assert_eq!(picker(&s).applied, Some((2, 4)));
    // The views, asked now, are over the picked steps; a later pick asks them again.
    let e = s.ask_views();
    assert!(has(&e, |e| matches!(
        e,
        Effect::Post(ToWorker::Views {
            steps: Some((2, 4))
        })
    )));
    s.on_message(
        WorkerRole::Current,
        FromWorker::Views {
            views: some_views(),
            steps: Some((2, 4)),
        },
    );
    assert_eq!(picker(&s).views_over, Some((2, 4)));
    let e = s.pick_steps(None);
    assert_eq!(posted_report_steps(&e), Some(None));
    assert!(has(&e, |e| matches!(
        e,
        Effect::Post(ToWorker::Views { steps: None })
    )));
    // Views of the old steps arriving now are not taken for the automatic window's.
    s.on_message(
        WorkerRole::Current,
        FromWorker::Views {
            views: Vec::new(),
            steps: Some((2, 4)),
        },
    );
    assert_eq!(s.shown().unwrap().views.as_ref().unwrap().len(), 1);
    s.on_message(WorkerRole::Current, step_reports((3, 8), false));
    assert_eq!(picker(&s).applied, None);
    assert_eq!(s.report_shown().unwrap().main_finding, "over (3, 8)");
}

#[test]
fn a_bad_step_range_is_said_and_nothing_is_asked() {
    let mut s = loaded_state("a.json");
    s.on_message(WorkerRole::Current, step_reports((3, 8), false));
    assert!(s.pick_steps(Some((9, 12))).is_empty());
    let p = s.shown().unwrap().steps.clone();
    assert_eq!(
        p.error.as_deref(),
        Some("No step in 9-12: this trace has steps 1-8.")
    );
    assert_eq!(p.pending, None);
    // The worker refuses a range a rank lacks: said beside the picker, the report stays.
    let e = s.pick_steps(Some((8, 8)));
    assert_eq!(posted_report_steps(&e), Some(Some((8, 8))));
    s.on_message(
        WorkerRole::Current,
        FromWorker::StepsRefused {
            steps: (8, 8),
            message: "no ProfilerStep in 8..8 on rank: rank 1 has steps 1-7".into(),
        },
    );
    let p = s.shown().unwrap().steps.clone();
    assert!(p.error.unwrap().contains("rank 1 has steps 1-7"));
    assert_eq!(p.pending, None);
    assert_eq!(s.report_shown().unwrap().main_finding, "over (3, 8)");
    // No worker holds the trace: nothing is asked.
    s.current_worker_died("The page's worker failed".into());
    assert!(s.pick_steps(Some((2, 3))).is_empty());
}

#[test]
fn the_timeline_search_asks_the_picked_rank_and_goes_to_each_hit() {
    use crate::analysis::timeline::SearchHit;
    let mut s = loaded_state("a.json");
    s.pick_rank(0);
    let e = s.search_timeline(" gemm ");
    assert!(has(&e, |e| matches!(
        e,
        Effect::Post(ToWorker::Search { rank_index: 0, text }) if text == "gemm"
    )));
    assert_eq!(s.search.counter(), "Searching…");
    let hits = vec![
        SearchHit {
            row: 7,
            start_ns: 1_000,
            end_ns: 3_000,
        },
        SearchHit {
            row: 9,
            start_ns: 5_000,
            end_ns: 6_000,
        },
    ];
    let e = s.on_message(
        WorkerRole::Current,
        FromWorker::SearchHits {
            rank_index: 0,
            text: "gemm".into(),
            hits,
            total: 2,
        },
    );
    // The first hit is shown: the timeline goes there and asks its details.
    assert!(has(&e, |e| matches!(
        e,
        Effect::Post(ToWorker::EventDetails { row: 7, .. })
    )));
    assert_eq!(
        s.timeline_focus.map(|f| (f.row, f.start_ns, f.dur_ns)),
        Some((7, 1_000, 2_000))
    );
    assert_eq!(s.search.counter(), "1 of 2");
    let e = s.search_step(true);
    assert!(has(&e, |e| matches!(
        e,
        Effect::Post(ToWorker::EventDetails { row: 9, .. })
    )));
    assert_eq!(s.search.counter(), "2 of 2");
    // An empty text clears the search; nothing is asked.
    assert!(s.search_timeline("").is_empty());
    assert_eq!(s.search.counter(), "");
    // No worker holds the trace: nothing is asked.
    s.current_worker_died("The page's worker failed".into());
    assert!(s.search_timeline("gemm").is_empty());
}
