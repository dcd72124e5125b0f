//! The coordinator's read of a shard's messages: each kind it combines comes back typed from the
//! JSON the shard wrote with the page's [`FromWorker`]; the rest is passed on untouched.

use super::*;
use crate::analysis::rank_lanes::RankLane;
use crate::protocol::Phase;

fn text(msg: &FromWorker) -> String {
    serde_json::to_string(msg).unwrap()
}

fn read(msg: &FromWorker) -> FromShard {
    FromShard::read(&text(msg)).expect("a shard's message")
}

#[test]
fn unit_messages_are_read() {
    assert!(matches!(read(&FromWorker::Ready), FromShard::Ready));
    assert!(matches!(
        read(&FromWorker::NothingLoaded),
        FromShard::Loaded(None)
    ));
}

#[test]
fn a_load_and_its_progress_are_typed() {
    let loaded = LoadedSet {
        load_ms: 12.5,
        notes: vec!["a note".into()],
        ..Default::default()
    };
    match read(&FromWorker::Loaded(loaded.clone())) {
        FromShard::Loaded(Some(back)) => assert_eq!(back, loaded),
        other => panic!("{other:?}"),
    }
    let progress = Progress {
        phase: Phase::Parsing,
        bytes_done: 3,
        bytes_total: 9,
        file_index: 0,
        file_count: 1,
        file: "a.json".into(),
        mb_per_s: 1.5,
        files: Vec::new(),
    };
    match read(&FromWorker::Progress(progress.clone())) {
        FromShard::Progress(back) => assert_eq!(back, progress),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_part_carries_its_id_and_its_answer() {
    let inner = text(&FromWorker::Exported {
        csv: "a,b\n".into(),
    });
    match FromShard::read(&part_text(42, &inner)).unwrap() {
        FromShard::Part { id, answer } => {
            assert_eq!(id, 42);
            assert!(matches!(*answer, FromShard::Exported(ref csv) if csv == "a,b\n"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn tables_downloads_and_errors_are_typed() {
    assert!(matches!(
        read(&FromWorker::Tables { format: 3, bytes: vec![10, 20] }),
        FromShard::Tables { format: 3, ref bytes } if bytes == &[10, 20]
    ));
    assert!(matches!(
        read(&FromWorker::DownloadBytes {
            file_name: "t.parquet".into(),
            mime: "m".into(),
            bytes: 5
        }),
        FromShard::DownloadBytes { ref file_name, bytes: 5, .. } if file_name == "t.parquet"
    ));
    assert!(matches!(
        read(&FromWorker::Error { message: "no".into() }),
        FromShard::Error(ref m) if m == "no"
    ));
}

#[test]
fn located_and_lanes_get_the_whole_sets_rank_index() {
    let located = Located {
        rank_index: 1,
        row: 7,
        start_ns: 100,
        dur_ns: 5,
    };
    let page = read(&FromWorker::Located(located))
        .into_page_text(|local| local + 10)
        .unwrap();
    let expected = Located {
        rank_index: 11,
        ..located
    };
    assert_eq!(page, text(&FromWorker::Located(expected)));

    let view = RankLanesView {
        start_ns: 0,
        end_ns: 10,
        width_px: 2,
        span_ns: (0, 10),
        lanes: vec![RankLane {
            rank_index: 0,
            ..Default::default()
        }],
    };
    match read(&FromWorker::RankLanes(Box::new(view.clone()))) {
        FromShard::RankLanes(back) => {
            assert_eq!(*back, view);
            let page = FromShard::RankLanes(back)
                .into_page_text(|l| l + 3)
                .unwrap();
            assert!(page.contains("\"rank_index\":3"), "{page}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_message_about_one_rank_is_passed_on_with_its_index_mapped() {
    let json = r#"{"EventDetails":{"rank_index":2,"name":"k","args":{"x":1.25}}}"#;
    match FromShard::read(json).unwrap() {
        FromShard::OfRank { rank_index, json } => {
            assert_eq!(rank_index, 2);
            let page = with_rank_index(&json, 9).unwrap();
            let v: serde_json::Value = serde_json::from_str(&page).unwrap();
            assert_eq!(v["EventDetails"]["rank_index"], 9);
            assert_eq!(v["EventDetails"]["name"], "k");
            assert_eq!(v["EventDetails"]["args"]["x"], 1.25);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn views_are_ordered_by_rank_and_passed_on_as_written() {
    let json = r#"{"Views":{"views":[{"rank":3,"ops":[1,2]},{"rank":1,"ops":[]}],"steps":[2,4]}}"#;
    let FromShard::Views(mut views, steps) = FromShard::read(json).unwrap() else {
        panic!("views")
    };
    assert_eq!(steps, Some((2, 4)));
    assert_eq!(views.iter().map(|v| v.rank).collect::<Vec<_>>(), [3, 1]);
    views.sort_by_key(|v| v.rank);
    assert_eq!(
        views_text(&views, steps),
        r#"{"Views":{"views":[{"rank":1,"ops":[]},{"rank":3,"ops":[1,2]}],"steps":[2,4]}}"#
    );
    // The page reads what the coordinator writes.
    let msg: FromWorker = serde_json::from_str(&views_text(&[], None)).unwrap();
    assert!(matches!(msg, FromWorker::Views { steps: None, .. }));
}

#[test]
fn anything_else_is_passed_on_untouched() {
    let msg = FromWorker::Failed {
        file: "b.json".into(),
        message: "bad".into(),
    };
    let json = text(&msg);
    match FromShard::read(&json).unwrap() {
        FromShard::Passed(back) => assert_eq!(back, json),
        other => panic!("{other:?}"),
    }
}

#[test]
fn what_is_not_a_message_is_an_error() {
    assert!(FromShard::read("[1,2]").is_err());
    assert!(FromShard::read(r#"{"A":1,"B":2}"#).is_err());
    assert!(FromShard::read(r#"{"Loaded":{"ranks":3}}"#).is_err());
}
