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

pub(super) fn file_shown(s: &PageState) -> Option<String> {
    s.shown().map(|s| s.loaded.ranks[0].file.clone())
}

pub(super) fn has(effects: &[Effect], f: impl Fn(&Effect) -> bool) -> bool {
    effects.iter().any(f)
}

pub(super) fn posts_query(effects: &[Effect]) -> bool {
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

pub(super) fn exact() -> AllAnalyses {
    AllAnalyses::default()
}

pub(super) fn compat() -> AllAnalyses {
    AllAnalyses {
        mode: Mode::HtaCompat,
        ..Default::default()
    }
}

#[test]
pub(super) fn a_load_runs_in_a_new_worker_and_replaces_the_old_one_only_when_it_succeeds() {
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
pub(super) fn cancel_is_possible_only_while_a_load_runs() {
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
pub(super) fn a_failed_load_shows_the_previous_trace_and_keeps_its_worker() {
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
pub(super) fn a_cancelled_load_shows_the_previous_trace_and_keeps_its_worker() {
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
pub(super) fn a_cancelled_first_load_shows_nothing() {
    let mut s = PageState::default();
    s.start_load(None);
    s.cancel();
    assert!(matches!(s.page, Page::Cancelled));
    assert!(s.shown().is_none());
    assert!(s.run_query(first_query()).is_empty());
}

#[test]
pub(super) fn a_load_worker_that_dies_leaves_the_previous_trace_with_its_worker() {
    let mut s = loaded_state("a.json");
    s.start_load(None);
    let e = s.load_worker_died("the worker failed".into());
    assert!(has(&e, |e| matches!(e, Effect::DropLoadWorker)));
    assert!(!has(&e, |e| matches!(e, Effect::ReplaceCurrentWorker)));
    assert!(s.worker_answers());
    assert_eq!(s.errors.len(), 1);
}

#[test]
pub(super) fn saved_results_are_shown_as_needing_the_file_and_refuse_worker_requests() {
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
pub(super) fn a_failed_load_after_saved_results_shows_them_again_still_needing_the_file() {
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
pub(super) fn the_hta_switch_keeps_the_exact_analyses_and_asks_only_for_what_is_missing() {
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
pub(super) fn a_current_worker_that_dies_marks_the_results_as_needing_the_file() {
    let mut s = loaded_state("a.json");
    let e = s.current_worker_died("The page's worker failed".into());
    assert!(has(&e, |e| matches!(e, Effect::ReplaceCurrentWorker)));
    assert_eq!(s.detached(), Some(Detached::WorkerDied));
    assert!(s.run_query(first_query()).is_empty());
}

#[test]
pub(super) fn keep_saves_only_results_a_worker_computed_and_saves_them_again_as_they_arrive() {
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
pub(super) fn saved_results_round_trip_and_old_formats_are_refused_politely() {
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
pub(super) fn download_table_asks_the_worker_holding_the_trace_for_every_column() {
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
pub(super) fn typed_messages_cross_the_wire_unchanged() {
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
pub(super) fn a_late_loaded_message_changes_nothing() {
    let mut s = loaded_state("a.json");
    assert!(s.loaded(set("b.json")).is_empty());
    assert_eq!(file_shown(&s).as_deref(), Some("a.json"));
    let mut s = PageState::default();
    s.current_worker_died("gone".into());
    assert!(s.shown().is_none());
}

#[test]
pub(super) fn the_redact_switch_shows_the_worker_redacted_report_without_asking_again() {
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

pub(super) fn posts_compare(effects: &[Effect]) -> Option<Vec<String>> {
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
pub(super) fn a_compare_load_asks_for_the_comparison_once_loaded_and_only_then() {
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
pub(super) fn after_a_comparison_the_page_shows_the_candidate_run_alone() {
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
pub(super) fn a_failed_compare_load_forgets_the_comparison_asked_for() {
    let mut s = loaded_state("shown.json");
    s.start_compare_load(None, vec!["a.json".into()]);
    s.nothing_loaded();
    assert_eq!(s.pending_compare, None);
    assert_eq!(file_shown(&s).as_deref(), Some("shown.json"));
}

#[test]
pub(super) fn separate_runs_are_compared_by_the_worker_that_holds_them() {
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
