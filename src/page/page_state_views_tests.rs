//! Tests of the page state's views: the timeline (its answers, rank lanes, search, keyboard walk),
//! the TensorBoard views, the tab, redaction of what they show, and the step picker.

use super::tests::*;
use super::*;
use crate::protocol::FromWorker;

pub(super) fn timeline_answer(rank_index: usize) -> TimelineAnswer {
    TimelineAnswer {
        rank_index,
        ..Default::default()
    }
}

#[test]
pub(super) fn the_timeline_asks_only_a_worker_holding_the_trace_and_forgets_another_traces_answer()
{
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
pub(super) fn rank_lanes_are_asked_of_a_worker_holding_the_trace_and_a_clicked_row_picks_its_rank()
{
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
pub(super) fn show_on_timeline_picks_the_evidences_rank_and_asks_its_details() {
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
        outside: false,
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

#[test]
pub(super) fn show_on_timeline_looks_inside_the_window_the_report_shown_analysed() {
    use crate::analysis::timeline::AnalysedWindow;
    use crate::report::context::RankWindow;
    let query = EventQuery {
        names: vec!["gemm".into()],
        ..Default::default()
    };
    let within = |effects: &[Effect]| {
        effects.iter().find_map(|e| match e {
            Effect::Post(ToWorker::Locate { within, .. }) => Some(within.clone()),
            _ => None,
        })
    };
    let mut s = loaded_state("a.json");
    assert_eq!(
        within(&s.locate_events(query.clone())),
        Some(Vec::new()),
        "no report yet: the whole trace"
    );
    let mut r = reports();
    r.plain.context.windows = vec![RankWindow {
        rank: 0,
        trace_start_ns: 0,
        trace_end_ns: 9_000,
        start_ns: 2_000,
        end_ns: 7_000,
        warmup_ns: Some((0, 2_000)),
    }];
    s.report(r);
    assert_eq!(
        within(&s.locate_events(query)),
        Some(vec![AnalysedWindow {
            rank: 0,
            start_ns: 2_000,
            end_ns: 7_000
        }]),
        "the report's window, warm-up left out"
    );
}

pub(super) fn posts_views(effects: &[Effect]) -> bool {
    has(effects, |e| {
        matches!(e, Effect::Post(ToWorker::Views { .. }))
    })
}

pub(super) fn some_views() -> Vec<RankViews> {
    vec![RankViews {
        rank: 0,
        ..Default::default()
    }]
}

#[test]
pub(super) fn the_views_are_asked_once_per_trace_and_only_of_a_worker_holding_it() {
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
pub(super) fn the_tab_follows_what_the_user_asked_to_see_and_survives_a_new_load() {
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
        outside: false,
    });
    assert_eq!(s.tab, Tab::Timeline);
    // Comparing shows the comparison.
    s.start_compare_load(None, vec!["a.json".into()]);
    assert_eq!(s.tab, Tab::Compare);
}

#[test]
pub(super) fn the_redact_switch_hashes_the_explorer_and_its_csv_too() {
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
pub(super) fn the_redact_switch_hashes_the_timelines_names_and_details() {
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

/// A report whose context analysed `steps` (picked when `chosen`) of a trace with steps 1-8.
pub(super) fn step_reports(steps: (i64, i64), chosen: bool) -> FromWorker {
    let report = DiagnosisReport {
        main_finding: format!("over {steps:?}").into(),
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

pub(super) fn posted_report_steps(effects: &[Effect]) -> Option<Option<(i64, i64)>> {
    effects.iter().find_map(|e| match e {
        Effect::Post(ToWorker::Report { steps, .. }) => Some(*steps),
        _ => None,
    })
}

#[test]
pub(super) fn the_step_picker_asks_the_report_and_views_again_over_the_picked_steps() {
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
pub(super) fn a_bad_step_range_is_said_and_nothing_is_asked() {
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
pub(super) fn the_timeline_search_asks_the_picked_rank_and_goes_to_each_hit() {
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

#[test]
fn left_and_right_ask_the_worker_for_the_next_event_on_the_lane_and_select_it() {
    use crate::analysis::timeline::SearchHit;
    let mut s = loaded_state("a.json");
    let e = s.walk_timeline(5, true);
    assert!(has(&e, |e| matches!(
        e,
        Effect::Post(ToWorker::Walk {
            rank_index: 0,
            row: 5,
            forward: true
        })
    )));
    let to = SearchHit {
        row: 8,
        start_ns: 50_000,
        end_ns: 51_000,
    };
    let e = s.on_message(
        WorkerRole::Current,
        FromWorker::Walked {
            rank_index: 0,
            from: 5,
            to: Some(to),
        },
    );
    assert!(has(&e, |e| matches!(
        e,
        Effect::Post(ToWorker::EventDetails { row: 8, .. })
    )));
    assert_eq!(
        s.timeline_walked.map(|w| (w.row, w.start_ns, w.dur_ns)),
        Some((8, 50_000, 1_000)),
        "the timeline brings it into view"
    );
    // The lane's end, or another rank's answer: nothing changes.
    let before = s.timeline_walked;
    assert!(s.walked(0, None).is_empty());
    assert!(s.walked(3, Some(to)).is_empty());
    assert_eq!(s.timeline_walked, before);
    // No worker holds the trace: nothing is asked.
    s.current_worker_died("The page's worker failed".into());
    assert!(s.walk_timeline(8, false).is_empty());
}
