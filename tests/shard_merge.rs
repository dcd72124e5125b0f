//! Shards of a rank set (each a `TraceSet` holding some of its ranks) combined by the coordinator's
//! merge functions give what the whole set gives: the analyses (`merge_analyses`), the explorer's
//! pages and CSV (`shard_query` / `merge_pages` / `merge_csv`) and the rank lanes
//! (`merge_rank_lanes`), for every contiguous split of two real rank sets into two shards.

use crate::common;

use profile_model::analysis::all::{analyze, AllAnalyses, AnalysisOptions};
use profile_model::analysis::kernel_merge::MEDIAN_NOTE;
use profile_model::analysis::merge::merge_analyses;
use profile_model::analysis::rank_lanes::{merge_rank_lanes, rank_lanes, BusyIndex};
use profile_model::analysis::timeline::TimelineRequest;
use profile_model::table::query::{
    export_csv, merge_csv, merge_pages, query_events, shard_query, EventQuery, GroupBy, SortBy,
};
use profile_model::table::{load_path, EventKind, TraceSet, TraceTable};
use serde_json::Value;

/// The files loaded as the given ranks.
fn tables(files: &[&str], ranks: &[i64]) -> Vec<TraceTable> {
    files
        .iter()
        .zip(ranks)
        .map(|(f, &r)| {
            let mut t = load_path(&common::trace(f)).expect("loads");
            t.metadata.rank = Some(r);
            t
        })
        .collect()
}

fn two_ranks() -> Vec<TraceTable> {
    tables(
        &["hta__sampled_rank-0.json.gz", "hta__sampled_rank-1.json.gz"],
        &[0, 1],
    )
}

/// Three traces as ranks 0, 2 and 3 (rank 1 missing: the set notes it).
fn three_ranks() -> Vec<TraceTable> {
    tables(
        &[
            "hta__nccl_data.json.gz",
            "hta__negative_queue_length__rank0.json.gz",
            "hta__critical_path_alexnet.json.gz",
        ],
        &[0, 2, 3],
    )
}

/// Every split of the tables into a first and a second shard (both non-empty).
fn splits(tables: &[TraceTable]) -> Vec<(TraceSet, TraceSet)> {
    (1..tables.len())
        .map(|k| {
            (
                TraceSet::from_tables(tables[..k].to_vec()),
                TraceSet::from_tables(tables[k..].to_vec()),
            )
        })
        .collect()
}

/// Equal JSON, except the merged kernel statistics over ranks: std within 1e-9 relative, median
/// anywhere between min and max (it is approximated), and the median note.
fn assert_same_analysis(merged: &AllAnalyses, whole: &AllAnalyses, what: &str) {
    let mut m = serde_json::to_value(merged).unwrap();
    let mut w = serde_json::to_value(whole).unwrap();
    let notes = m["kernel_breakdown"]["notes"].as_array_mut().unwrap();
    notes.retain(|n| n != MEDIAN_NOTE);
    for key in ["kernels_all_ranks", "top_all_ranks"] {
        let mk = m["kernel_breakdown"][key].as_array_mut().unwrap();
        let wk = w["kernel_breakdown"][key].as_array_mut().unwrap();
        assert_eq!(mk.len(), wk.len(), "{what}: {key} length");
        for (a, b) in mk.iter_mut().zip(wk.iter_mut()) {
            let name = b["name"].clone();
            let (sa, sb) = (a["std_us"].as_f64().unwrap(), b["std_us"].as_f64().unwrap());
            let mean = b["mean_us"].as_f64().unwrap().abs();
            assert!(
                (sa - sb).abs() <= 1e-9 * sa.abs().max(sb.abs()) + 1e-12 * mean,
                "{what}: {key} {name} std {sa} vs {sb}"
            );
            let med = a["median_us"].as_f64().unwrap();
            let (lo, hi) = (b["min_us"].as_f64().unwrap(), b["max_us"].as_f64().unwrap());
            assert!(
                lo <= med && med <= hi,
                "{what}: {key} {name} median {med} outside [{lo}, {hi}]"
            );
            for v in [&mut *a, &mut *b] {
                v["std_us"] = Value::Null;
                v["median_us"] = Value::Null;
            }
        }
    }
    if m != w {
        for (k, v) in m.as_object().unwrap() {
            assert_eq!(v, &w[k], "{what}: {k} differs");
        }
    }
    assert_eq!(m, w, "{what}");
}

fn check_analyses(tables: Vec<TraceTable>, label: &str) {
    let whole_set = TraceSet::from_tables(tables.clone());
    for opts in [AnalysisOptions::default(), AnalysisOptions::hta_compat()] {
        let whole = analyze(&whole_set, &opts);
        assert!(!whole.kernel_breakdown.kernels_all_ranks.is_empty());
        for (a, b) in splits(&tables) {
            let what = format!(
                "{label} {:?} split {:?}|{:?}",
                opts.mode,
                ranks(&a),
                ranks(&b)
            );
            // Given in either order.
            let merged = merge_analyses(vec![analyze(&b, &opts), analyze(&a, &opts)]);
            assert_same_analysis(&merged, &whole, &what);
            // Kernels run on several ranks: their median is approximated, and the note says so.
            assert!(
                merged
                    .kernel_breakdown
                    .notes
                    .iter()
                    .any(|n| n == MEDIAN_NOTE),
                "{what}: median note"
            );
            assert!(!whole
                .kernel_breakdown
                .notes
                .iter()
                .any(|n| n == MEDIAN_NOTE));
        }
    }
}

fn ranks(set: &TraceSet) -> Vec<i64> {
    set.ranks.iter().map(|r| r.rank).collect()
}

#[test]
fn merged_shard_analyses_equal_the_whole_sets() {
    check_analyses(two_ranks(), "sampled");
    check_analyses(three_ranks(), "three");
}

#[test]
fn one_rank_merged_with_an_empty_shard_is_that_ranks_analysis_exactly() {
    let t = tables(&["hta__sampled_rank-0.json.gz"], &[0]);
    for opts in [AnalysisOptions::default(), AnalysisOptions::hta_compat()] {
        let one = TraceSet::from_tables(t.clone());
        let whole = analyze(&one, &opts);
        let alone = merge_analyses(vec![analyze(&one, &opts)]);
        assert_eq!(
            serde_json::to_value(&alone).unwrap(),
            serde_json::to_value(&whole).unwrap()
        );
        let with_empty = merge_analyses(vec![analyze(&TraceSet::default(), &opts), whole.clone()]);
        assert_eq!(
            serde_json::to_value(&with_empty).unwrap(),
            serde_json::to_value(&whole).unwrap()
        );
    }
}

/// Queries: every row order both ways with pages across the shards' boundaries, every grouping,
/// filters by kind, name and rank.
fn queries(matched: usize) -> Vec<EventQuery> {
    let mut out = Vec::new();
    // Every order, the columns' new ones (min, share, rank, kind, stream, args) included.
    for sort in SortBy::ALL.iter().copied() {
        for descending in [false, true] {
            for (offset, limit) in [
                (0, 0),
                (7, 40),
                (matched / 2, 300),
                (matched.saturating_sub(5), 20),
            ] {
                out.push(EventQuery {
                    sort,
                    descending,
                    offset,
                    limit,
                    ..Default::default()
                });
            }
            for group_by in [
                GroupBy::Name,
                GroupBy::Kind,
                GroupBy::Category,
                GroupBy::Stream,
                GroupBy::Thread,
                GroupBy::Rank,
            ] {
                out.push(EventQuery {
                    group_by: Some(group_by),
                    sort,
                    descending,
                    offset: 1,
                    limit: 5,
                    ..Default::default()
                });
            }
        }
    }
    out.push(EventQuery {
        kinds: vec![EventKind::Kernel],
        sort: SortBy::Duration,
        descending: true,
        offset: 3,
        limit: 50,
        ..Default::default()
    });
    out.push(EventQuery {
        name_contains: "nccl".into(),
        sort: SortBy::Start,
        limit: 100,
        ..Default::default()
    });
    out.push(EventQuery {
        ranks: vec![1, 2],
        kinds: vec![EventKind::Kernel, EventKind::CpuOp],
        group_by: Some(GroupBy::Name),
        sort: SortBy::Total,
        descending: true,
        limit: 20,
        ..Default::default()
    });
    out.push(EventQuery {
        min_dur_us: Some(10.0),
        sort: SortBy::Name,
        offset: 15,
        limit: 30,
        ..Default::default()
    });
    out.push(EventQuery {
        kinds: vec![EventKind::Kernel],
        group_by: Some(GroupBy::Name),
        sort: SortBy::Max,
        limit: 10_000,
        ..Default::default()
    });
    out
}

fn check_queries(tables: Vec<TraceTable>, label: &str) {
    let whole = TraceSet::from_tables(tables.clone());
    let matched = query_events(&whole, &EventQuery::default()).matched as usize;
    let mut grouped_compared = 0;
    for (a, b) in splits(&tables) {
        for q in queries(matched) {
            let want = query_events(&whole, &q);
            let pages = vec![
                query_events(&b, &shard_query(&q)),
                query_events(&a, &shard_query(&q)),
            ];
            let got = merge_pages(&q, pages);
            assert_eq!(got, want, "{label} {:?}|{:?}: {q:?}", ranks(&a), ranks(&b));
            // The CSV of every group (cheap); the rows' CSV of one query (the export writes every row).
            if q.group_by.is_some() {
                let csvs = vec![export_csv(&b, &q), export_csv(&a, &q)];
                assert_eq!(
                    merge_csv(&q, csvs),
                    export_csv(&whole, &q),
                    "{label} csv: {q:?}"
                );
                grouped_compared += 1;
            }
        }
        let q = EventQuery {
            kinds: vec![EventKind::Kernel],
            ..Default::default()
        };
        let whole_csv = export_csv(&whole, &q);
        let merged_csv = merge_csv(&q, vec![export_csv(&a, &q), export_csv(&b, &q)]);
        assert_eq!(merged_csv.lines().count(), whole_csv.lines().count());
        assert_eq!(merged_csv.lines().next(), whole_csv.lines().next());
        let mut m: Vec<&str> = merged_csv.lines().collect();
        let mut w: Vec<&str> = whole_csv.lines().collect();
        m.sort_unstable();
        w.sort_unstable();
        assert_eq!(m, w, "{label}: the same rows");
    }
    assert!(grouped_compared > 0);
}

#[test]
fn merged_shard_pages_equal_the_whole_sets() {
    check_queries(two_ranks(), "sampled");
    check_queries(three_ranks(), "three");
}

#[test]
fn merged_shard_rank_lanes_equal_the_whole_sets() {
    for tables in [two_ranks(), three_ranks()] {
        let whole = TraceSet::from_tables(tables.clone());
        let idx = |s: &TraceSet| -> Vec<BusyIndex> {
            s.ranks.iter().map(|r| BusyIndex::new(&r.table)).collect()
        };
        let all = rank_lanes(
            &whole,
            &idx(&whole),
            &TimelineRequest {
                start_ns: 0,
                end_ns: 0,
                width_px: 10,
            },
        );
        // Within the first rank's GPU work (the ranks' clocks may be far apart).
        let (lo, hi) = all.lanes[0].span_ns;
        assert!(hi > lo);
        let req = TimelineRequest {
            start_ns: lo + (hi - lo) / 10,
            end_ns: hi - (hi - lo) / 7,
            width_px: 777,
        };
        let want = rank_lanes(&whole, &idx(&whole), &req);
        assert!(want.lanes.iter().any(|l| l.busy_ns > 0));
        for (a, b) in splits(&tables) {
            let mut got = merge_rank_lanes(vec![
                rank_lanes(&b, &idx(&b), &req),
                rank_lanes(&a, &idx(&a), &req),
            ]);
            // The caller maps each shard's rank index to the whole set's.
            for (i, lane) in got.lanes.iter_mut().enumerate() {
                lane.rank_index = i;
            }
            assert_eq!(got, want);
        }
    }
}
