//! The coordinator's read of a shard's messages: each kind it combines comes back typed from the
//! bytes the shard wrote with the page's [`FromWorker`]; the rest is passed on untouched.

use super::*;
use crate::analysis::rank_lanes::RankLane;
use crate::analysis::timeline::EventDetails;
use crate::protocol::{Phase, SqlPart, SqlTable};
use crate::report::timeline_view::TimelineAnswer;

fn bytes(msg: &FromWorker) -> Vec<u8> {
    encode(msg).unwrap()
}

fn read(msg: &FromWorker) -> FromShard {
    FromShard::read(&bytes(msg)).expect("a shard's message")
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
    let inner = bytes(&FromWorker::Exported {
        csv: "a,b\n".into(),
    });
    match FromShard::read(&part_bytes(42, &inner)).unwrap() {
        FromShard::Part { id, answer } => {
            assert_eq!(id, 42);
            assert!(matches!(*answer, FromShard::Exported(ref csv) if csv == "a,b\n"));
        }
        other => panic!("{other:?}"),
    }
    let only = ShardOnly::ContextParts { parts: Vec::new() };
    let wrapped = part_bytes(7, &shard_only_bytes(&only).unwrap());
    match FromShard::read(&wrapped).unwrap() {
        FromShard::Part { id: 7, answer } => {
            assert!(matches!(*answer, FromShard::Only(ref o) if *o == only))
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

/// Each variant the coordinator reads through its own struct comes back to the page byte for
/// byte (the wire format is positional: a struct that drifted from `FromWorker` fails here).
#[test]
fn codec_matches_from_worker() {
    let messages = [
        FromWorker::Analysis {
            analysis: Default::default(),
            timings: vec![AnalysisTiming {
                name: "gpu".into(),
                ms: 2.5,
            }],
        },
        FromWorker::Exported { csv: "x\n".into() },
        FromWorker::Views {
            views: vec![RankViews {
                rank: 4,
                ..Default::default()
            }],
            steps: Some((1, 3)),
        },
        FromWorker::Tables {
            format: 2,
            bytes: vec![1, 2, 3],
        },
        FromWorker::DownloadBytes {
            file_name: "a.arrow".into(),
            mime: "application/octet-stream".into(),
            bytes: 9,
        },
        FromWorker::SqlTables {
            parts: vec![SqlPart {
                table: SqlTable::Idle,
                rows: 3,
                bytes: 40,
            }],
        },
        FromWorker::Error {
            message: "m".into(),
        },
    ];
    for msg in messages {
        let sent = bytes(&msg);
        let page = FromShard::read(&sent)
            .unwrap()
            .into_page_bytes(|i| i)
            .unwrap();
        assert_eq!(page, sent, "{msg:?}");
    }
}

#[test]
fn located_and_lanes_get_the_whole_sets_rank_index() {
    let located = Located {
        rank_index: 1,
        row: 7,
        start_ns: 100,
        dur_ns: 5,
        outside: false,
    };
    let page = read(&FromWorker::Located(located))
        .into_page_bytes(|local| local + 10)
        .unwrap();
    let expected = Located {
        rank_index: 11,
        ..located
    };
    assert_eq!(page, bytes(&FromWorker::Located(expected)));

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
                .into_page_bytes(|l| l + 3)
                .unwrap();
            let Ok(FromWorker::RankLanes(lanes)) = decode(&page) else {
                panic!("lanes")
            };
            assert_eq!(lanes.lanes[0].rank_index, 3);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_message_about_one_rank_is_passed_on_with_its_index_mapped() {
    let details = EventDetails {
        rank_index: 2,
        name: "k".into(),
        ..Default::default()
    };
    match read(&FromWorker::EventDetails(Box::new(details.clone()))) {
        FromShard::OfRank { rank_index, bytes } => {
            assert_eq!(rank_index, 2);
            let page = with_rank_index(&bytes, 9).unwrap();
            let Ok(FromWorker::EventDetails(back)) = decode(&page) else {
                panic!("details")
            };
            assert_eq!(
                *back,
                EventDetails {
                    rank_index: 9,
                    ..details
                }
            );
        }
        other => panic!("{other:?}"),
    }
    let track = |key, name: &str| crate::analysis::timeline::TrackInfo {
        key,
        name: name.into(),
        depth: 2,
        events: 9,
    };
    let answer = TimelineAnswer {
        rank_index: 1,
        rank: 5,
        // Both kinds of track: the codec reads every enum the page gets (no internally tagged one).
        tracks: vec![
            track(
                crate::analysis::timeline::TrackKey::Stream {
                    device: 0,
                    stream: 7,
                },
                "GPU 0 stream 7",
            ),
            track(
                crate::analysis::timeline::TrackKey::Thread {
                    pid: "12".into(),
                    tid: "34".into(),
                },
                "thread 34",
            ),
        ],
        ..Default::default()
    };
    let page = read(&FromWorker::Timeline(Box::new(answer.clone())))
        .into_page_bytes(|l| l + 1)
        .unwrap();
    let Ok(FromWorker::Timeline(back)) = decode(&page) else {
        panic!("timeline")
    };
    assert_eq!((back.rank_index, back.rank), (2, 5));
    assert_eq!(back.tracks, answer.tracks);
}

#[test]
fn views_come_back_typed_and_are_passed_on_in_the_order_given() {
    let view = |rank| RankViews {
        rank,
        ..Default::default()
    };
    let FromShard::Views(mut views, steps) = read(&FromWorker::Views {
        views: vec![view(3), view(1)],
        steps: Some((2, 4)),
    }) else {
        panic!("views")
    };
    assert_eq!(steps, Some((2, 4)));
    assert_eq!(views.iter().map(|v| v.rank).collect::<Vec<_>>(), [3, 1]);
    views.sort_by_key(|v| v.rank);
    assert_eq!(
        views_bytes(views, steps).unwrap(),
        bytes(&FromWorker::Views {
            views: vec![view(1), view(3)],
            steps: Some((2, 4)),
        })
    );
    // The page reads what the coordinator writes.
    let msg: FromWorker = decode(&views_bytes(vec![], None).unwrap()).unwrap();
    assert!(matches!(msg, FromWorker::Views { steps: None, .. }));
}

#[test]
fn anything_else_is_passed_on_untouched() {
    let msg = FromWorker::Failed {
        file: "b.json".into(),
        message: "bad".into(),
    };
    let sent = bytes(&msg);
    match FromShard::read(&sent).unwrap() {
        FromShard::Passed(back) => assert_eq!(back, sent),
        other => panic!("{other:?}"),
    }
}

#[test]
fn what_is_not_a_message_is_an_error() {
    assert!(FromShard::read(&[1, 2]).is_err());
    assert!(FromShard::read(&[200, 0, 0, 0]).is_err(), "no such variant");
    let loaded = variant_names::<FromWorker>()
        .iter()
        .position(|n| *n == "Loaded")
        .unwrap() as u32;
    let mut cut = loaded.to_le_bytes().to_vec();
    cut.push(1);
    assert!(FromShard::read(&cut).is_err(), "a load cut short");
}
