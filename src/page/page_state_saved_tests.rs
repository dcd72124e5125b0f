//! Tests of the page state's cache of results and tables (Keep, the list, open, forget), and of
//! the findings' links.

use super::tests::*;
use super::*;

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
        format: crate::table::store::STORE_FORMAT,
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
        headline: Default::default(),
        title: title.to_string().into(),
        severity: Severity::Info,
        threshold: Default::default(),
        measured: Default::default(),
        value: 0.0,
        impact: Impact {
            pct_of_gpu_time: None,
            ms_per_step: None,
            time_ns: 0,
        },
        explanation: Default::default(),
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
