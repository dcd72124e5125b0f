//! The event exploration (`table::query`): filters, groups, order, pages and CSV, on small traces built
//! in code (expected values computed from what the test wrote) and on every real trace (against an
//! independent serde_json pass over the file).

use crate::common;

use crate::common::TraceBuilder;
use profile_model::table::query::{export_csv, query_events, EventQuery, GroupBy, SortBy};
use profile_model::table::{load_path, EventKind, TraceSet};
use serde_json::Value;

/// Kernels `a` (3 × 10 µs), `b` (1 × 50 µs), `c` (2 × 5 µs) on streams 7 and 9, and two CPU ops.
fn small() -> (TraceBuilder, TraceSet) {
    let mut b = TraceBuilder::new();
    b.cpu_op("aten::mm", 0.0, 100.0);
    b.cpu_op("aten::add", 100.0, 20.0);
    b.kernel("a", 7, 1.0, 2.0, 10.0, 10.0);
    b.kernel("b", 7, 3.0, 2.0, 30.0, 50.0);
    b.kernel("a", 9, 5.0, 2.0, 20.0, 10.0);
    b.kernel("c", 9, 7.0, 2.0, 90.0, 5.0);
    b.kernel("a", 7, 9.0, 2.0, 100.0, 10.0);
    b.kernel("c", 7, 11.0, 2.0, 120.0, 5.0);
    let set = TraceSet::single(b.table("small.json"));
    (b, set)
}

fn kernels() -> EventQuery {
    EventQuery {
        kinds: vec![EventKind::Kernel],
        ..Default::default()
    }
}

#[test]
fn filters_by_kind_name_stream_and_duration() {
    let (_, set) = small();
    let p = query_events(&set, &kernels());
    assert_eq!(p.matched, 6);
    assert!((p.matched_dur_us - 90.0).abs() < 1e-9);
    // Start order: a@10, a@20, b@30, c@90, a@100, c@120.
    let names: Vec<&str> = p.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["a", "a", "b", "c", "a", "c"]);
    assert_eq!(p.rows[0].stream, Some(7));
    assert_eq!(p.rows[0].device, Some(0));

    let q = EventQuery {
        name_contains: "A".into(),
        ..kernels()
    };
    assert_eq!(
        query_events(&set, &q).matched,
        3,
        "name filter ignores case"
    );
    let q = EventQuery {
        stream: Some(9),
        ..kernels()
    };
    assert_eq!(query_events(&set, &q).matched, 2);
    let q = EventQuery {
        min_dur_us: Some(10.0),
        ..kernels()
    };
    assert_eq!(
        query_events(&set, &q).matched,
        4,
        "at least 10 µs: three a and b"
    );
    let q = EventQuery {
        names: vec!["b".into(), "c".into()],
        ..kernels()
    };
    assert_eq!(query_events(&set, &q).matched, 3);
    let q = EventQuery {
        category: "cpu_op".into(),
        ..Default::default()
    };
    let p = query_events(&set, &q);
    assert_eq!(p.matched, 2);
    assert!(p.rows.iter().all(|r| r.kind == EventKind::CpuOp));
    let q = EventQuery {
        category: "no such category".into(),
        ..Default::default()
    };
    assert_eq!(query_events(&set, &q).matched, 0);
}

#[test]
fn groups_carry_count_sum_mean_min_max_and_share() {
    let (_, set) = small();
    let q = EventQuery {
        group_by: Some(GroupBy::Name),
        sort: SortBy::Total,
        descending: true,
        ..kernels()
    };
    let p = query_events(&set, &q);
    assert_eq!(p.group_count, 3);
    let keys: Vec<&str> = p.groups.iter().map(|g| g.key.as_str()).collect();
    assert_eq!(keys, ["b", "a", "c"], "by total time: b 50, a 30, c 10");
    let a = &p.groups[1];
    assert_eq!(a.count, 3);
    assert!((a.total_us - 30.0).abs() < 1e-9);
    assert_eq!(a.mean_us, Some(10.0));
    assert_eq!((a.min_us, a.max_us), (Some(10.0), Some(10.0)));
    assert!((a.pct_of_matched - 30.0 / 90.0 * 100.0).abs() < 1e-9);

    let by_count = query_events(
        &set,
        &EventQuery {
            sort: SortBy::Count,
            ..q.clone()
        },
    );
    let keys: Vec<&str> = by_count.groups.iter().map(|g| g.key.as_str()).collect();
    assert_eq!(keys, ["a", "c", "b"]);

    let by_stream = query_events(
        &set,
        &EventQuery {
            group_by: Some(GroupBy::Stream),
            sort: SortBy::Name,
            ..kernels()
        },
    );
    let keys: Vec<(&str, u64)> = by_stream
        .groups
        .iter()
        .map(|g| (g.key.as_str(), g.count))
        .collect();
    assert_eq!(keys, [("stream 7", 4), ("stream 9", 2)]);
}

#[test]
fn longest_first_and_pages_are_consistent() {
    let (_, set) = small();
    let q = EventQuery {
        sort: SortBy::Duration,
        descending: true,
        ..kernels()
    };
    let all = query_events(
        &set,
        &EventQuery {
            limit: 100,
            ..q.clone()
        },
    );
    let durs: Vec<f64> = all.rows.iter().map(|r| r.dur_us.unwrap()).collect();
    assert_eq!(durs, [50.0, 10.0, 10.0, 10.0, 5.0, 5.0]);
    // Pages of two, put together, are the whole ordered list (the partial sort keeps ties in row order).
    let mut paged = Vec::new();
    for offset in [0, 2, 4] {
        let p = query_events(
            &set,
            &EventQuery {
                offset,
                limit: 2,
                ..q.clone()
            },
        );
        paged.extend(p.rows.into_iter().map(|r| r.row));
    }
    let whole: Vec<u32> = all.rows.iter().map(|r| r.row).collect();
    assert_eq!(paged, whole);
    let past = query_events(&set, &EventQuery { offset: 50, ..q });
    assert!(past.rows.is_empty());
    assert_eq!(past.matched, 6);
}

#[test]
fn ranks_are_filtered_and_grouped() {
    let mut r0 = TraceBuilder::new().rank(0, 2);
    r0.kernel("k", 7, 0.0, 1.0, 2.0, 10.0);
    let mut r1 = TraceBuilder::new().rank(1, 2);
    r1.kernel("k", 7, 0.0, 1.0, 2.0, 30.0);
    r1.kernel("k", 7, 3.0, 1.0, 40.0, 30.0);
    let set = TraceSet::from_tables(vec![r0.table("a.json"), r1.table("b.json")]);
    let p = query_events(
        &set,
        &EventQuery {
            group_by: Some(GroupBy::Rank),
            sort: SortBy::Name,
            ..kernels()
        },
    );
    let got: Vec<(&str, u64, f64)> = p
        .groups
        .iter()
        .map(|g| (g.key.as_str(), g.count, g.total_us))
        .collect();
    assert_eq!(got, [("rank 0", 1, 10.0), ("rank 1", 2, 60.0)]);
    let only1 = query_events(
        &set,
        &EventQuery {
            ranks: vec![1],
            ..kernels()
        },
    );
    assert_eq!(only1.matched, 2);
    assert!(only1.rows.iter().all(|r| r.rank == 1));
    // Grouping by name merges the ranks.
    let p = query_events(
        &set,
        &EventQuery {
            group_by: Some(GroupBy::Name),
            ..kernels()
        },
    );
    assert_eq!(p.groups.len(), 1);
    assert_eq!((p.groups[0].count, p.groups[0].min_us), (3, Some(10.0)));
}

/// Splits one CSV line (quoted fields with doubled quotes).
fn csv_fields(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            _ => out.last_mut().unwrap().push(c),
        }
    }
    out
}

#[test]
fn csv_export_has_every_matched_row_with_args() {
    let mut b = TraceBuilder::new();
    b.kernel("void f<float, 4>(int, \"x\")", 7, 0.0, 1.0, 2.0, 10.0);
    b.kernel("g", 7, 3.0, 1.0, 20.0, 4.0);
    b.memcpy(
        "Memcpy HtoD (Pageable -> Device)",
        4096,
        7,
        5.0,
        1.0,
        30.0,
        2.0,
    );
    let set = TraceSet::single(b.table("csv.json"));
    let csv = export_csv(
        &set,
        &EventQuery {
            limit: 1,
            ..kernels()
        },
    );
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines.len(),
        3,
        "header and both rows (limit ignored): {csv}"
    );
    let head = csv_fields(lines[0]);
    let first = csv_fields(lines[1]);
    assert_eq!(head.len(), first.len());
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    assert_eq!(first[col("name")], "void f<float, 4>(int, \"x\")");
    assert_eq!(first[col("dur_us")], "10");
    assert_eq!(first[col("stream")], "7");
    assert_eq!(first[col("device")], "0");
    assert_eq!(first[col("args")], "", "no other args");
    let copy = export_csv(
        &set,
        &EventQuery {
            kinds: vec![EventKind::Memcpy],
            ..Default::default()
        },
    );
    let copy = csv_fields(copy.lines().nth(1).unwrap());
    let args: Value = serde_json::from_str(&copy[col("args")]).unwrap();
    assert_eq!(args["bytes"], 4096);
    let grouped = export_csv(
        &set,
        &EventQuery {
            group_by: Some(GroupBy::Kind),
            ..kernels()
        },
    );
    assert_eq!(
        grouped.lines().nth(1).map(csv_fields).unwrap()[..3],
        ["kernel", "2", "2"]
    );
}

/// Kernel count, time and per-name calls of a real trace, straight from its JSON.
fn independent_kernels(text: &[u8]) -> (u64, i64, std::collections::BTreeMap<String, u64>) {
    let v: Value = serde_json::from_slice(text).unwrap();
    let events = match &v {
        Value::Array(a) => a.clone(),
        _ => v["traceEvents"].as_array().cloned().unwrap_or_default(),
    };
    let mut n = 0;
    let mut total = 0i64;
    let mut calls = std::collections::BTreeMap::new();
    for e in &events {
        let cat = e["cat"].as_str().unwrap_or("");
        if e["ph"] == "X" && cat.eq_ignore_ascii_case("kernel") {
            n += 1;
            total += (e["dur"].as_f64().unwrap_or(0.0) * 1000.0).round() as i64;
            *calls
                .entry(e["name"].as_str().unwrap_or("").to_string())
                .or_insert(0) += 1;
        }
    }
    (n, total, calls)
}

#[test]
fn real_traces_kernel_groups_match_an_independent_count() {
    let mut checked = 0;
    for path in common::kineto_trace_files() {
        let text = common::json_text(&path);
        let (n, total_ns, calls) = independent_kernels(&text);
        let set = TraceSet::single(load_path(&path).unwrap());
        let p = query_events(
            &set,
            &EventQuery {
                group_by: Some(GroupBy::Name),
                sort: SortBy::Name,
                limit: 10_000,
                ..kernels()
            },
        );
        assert_eq!(p.matched, n, "{}", path.display());
        assert!(
            (p.matched_dur_us * 1000.0 - total_ns as f64).abs() <= n as f64,
            "{}: {} vs {} ns",
            path.display(),
            p.matched_dur_us * 1000.0,
            total_ns
        );
        let got: std::collections::BTreeMap<String, u64> =
            p.groups.iter().map(|g| (g.key.clone(), g.count)).collect();
        assert_eq!(got, calls, "{}", path.display());
        checked += 1;
    }
    if common::traces_dir().exists() {
        assert!(checked >= 10, "only {checked} traces checked");
    }
}

/// Two ranks of CPU ops (some with `Input Dims`), runtime calls, kernels on streams 7 and 9 and a
/// copy: every column of the explorer has values that differ, some missing (no stream, no args).
fn mixed_ranks() -> TraceSet {
    let mut tables = Vec::new();
    for rank in [0, 1] {
        let mut b = TraceBuilder::new().rank(rank, 2);
        let shift = rank as f64 * 3.0;
        b.cpu_op_args(
            "aten::mm",
            0.0,
            80.0 + shift,
            serde_json::json!({"Input Dims": [[4, 8], [8, 2]]}),
        );
        b.cpu_op("aten::add", 100.0, 20.0);
        b.cpu_op_args(
            "aten::bmm",
            130.0,
            15.0,
            serde_json::json!({"Input Dims": [[2, 4, 8]]}),
        );
        b.runtime("cudaDeviceSynchronize", 150.0, 30.0 - shift);
        b.kernel("gemm", 7, 1.0, 2.0, 10.0, 12.0 + shift);
        b.kernel("relu", 9, 5.0, 2.0, 30.0, 4.0);
        b.kernel("gemm", 9, 9.0, 2.0, 40.0, 12.0);
        b.memcpy(
            "Memcpy HtoD (Pageable -> Device)",
            4096 * (rank + 1),
            7,
            11.0,
            1.0,
            60.0,
            6.0,
        );
        tables.push(b.table(&format!("rank{rank}.json")));
    }
    TraceSet::from_tables(tables)
}

/// A row's shown value of a column, as the explorer shows it: a number, a text, or none.
#[derive(Clone, Debug, PartialEq, PartialOrd)]
enum Shown {
    Num(f64),
    Text(String),
}

fn shown(r: &profile_model::table::query::EventRow, sort: SortBy) -> Option<Shown> {
    match sort {
        SortBy::Rank => Some(Shown::Num(r.rank as f64)),
        SortBy::Start => r.ts_us.map(Shown::Num),
        SortBy::Duration => r.dur_us.map(Shown::Num),
        SortBy::Kind => Some(Shown::Text(r.kind.as_str().to_string())),
        SortBy::Stream => r.stream.map(|s| Shown::Num(s as f64)),
        SortBy::Name => Some(Shown::Text(r.name.clone())),
        SortBy::Args => Some(r.args_text())
            .filter(|a| !a.is_empty())
            .map(Shown::Text),
        other => panic!("{other:?} is not a column of the rows"),
    }
}

#[test]
fn every_column_of_the_rows_sorts_both_ways_with_missing_values_last() {
    let set = mixed_ranks();
    let every = query_events(
        &set,
        &EventQuery {
            limit: 1000,
            ..Default::default()
        },
    );
    assert_eq!(
        every.matched,
        2 * (4 + 2 * 4),
        "ops, runtime calls, launches, kernels, copy"
    );
    for sort in [
        SortBy::Rank,
        SortBy::Start,
        SortBy::Duration,
        SortBy::Kind,
        SortBy::Stream,
        SortBy::Name,
        SortBy::Args,
    ] {
        for descending in [false, true] {
            let q = EventQuery {
                sort,
                descending,
                limit: 1000,
                ..Default::default()
            };
            let got: Vec<(i64, u32)> = query_events(&set, &q)
                .rows
                .iter()
                .map(|r| (r.rank, r.row))
                .collect();
            // Here: the rows in file order, sorted by the value shown, none last, ties by rank and row.
            let mut want = every.rows.clone();
            want.sort_by(|a, b| {
                let (x, y) = (shown(a, sort), shown(b, sort));
                let by_value = match (&x, &y) {
                    (Some(x), Some(y)) if descending => y.partial_cmp(x).unwrap(),
                    (Some(x), Some(y)) => x.partial_cmp(y).unwrap(),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                };
                by_value.then((a.rank, a.row).cmp(&(b.rank, b.row)))
            });
            let want: Vec<(i64, u32)> = want.iter().map(|r| (r.rank, r.row)).collect();
            assert_eq!(got, want, "{sort:?} descending={descending}");
            // Pages of five, put together, are the same order (the partial sort of a page).
            let mut paged = Vec::new();
            for offset in (0..want.len()).step_by(5) {
                let p = query_events(
                    &set,
                    &EventQuery {
                        offset,
                        limit: 5,
                        ..q.clone()
                    },
                );
                paged.extend(p.rows.iter().map(|r| (r.rank, r.row)));
            }
            assert_eq!(paged, want, "{sort:?} descending={descending}, paged");
        }
    }
    // What each order puts first and last, written out.
    let first_last = |sort, descending| {
        let p = query_events(
            &set,
            &EventQuery {
                sort,
                descending,
                limit: 1000,
                ..Default::default()
            },
        );
        let (a, z) = (p.rows.first().unwrap(), p.rows.last().unwrap());
        (shown(a, sort), shown(z, sort))
    };
    assert_eq!(
        first_last(SortBy::Rank, true),
        (Some(Shown::Num(1.0)), Some(Shown::Num(0.0)))
    );
    assert_eq!(
        first_last(SortBy::Kind, false),
        (
            Some(Shown::Text("cpu_op".into())),
            Some(Shown::Text("runtime".into()))
        )
    );
    assert_eq!(
        first_last(SortBy::Stream, true),
        (Some(Shown::Num(9.0)), None),
        "rows without a stream last, descending too"
    );
    assert_eq!(
        first_last(SortBy::Args, false).1,
        None,
        "rows without args last"
    );
    assert!(
        matches!(first_last(SortBy::Args, true).0, Some(Shown::Text(t)) if t.contains("bytes"))
    );
}

#[test]
fn every_column_of_the_groups_sorts_both_ways() {
    let set = mixed_ranks();
    let every = query_events(
        &set,
        &EventQuery {
            limit: 1000,
            ..Default::default()
        },
    );
    // Here: each name's count, total, min and max from the rows.
    let mut by_name: std::collections::BTreeMap<String, (u64, f64, f64, f64)> = Default::default();
    for r in &every.rows {
        let d = r.dur_us.unwrap();
        let e = by_name
            .entry(r.name.clone())
            .or_insert((0, 0.0, f64::INFINITY, 0.0));
        *e = (e.0 + 1, e.1 + d, e.2.min(d), e.3.max(d));
    }
    let matched: f64 = by_name.values().map(|v| v.1).sum();
    for sort in [
        SortBy::Name,
        SortBy::Count,
        SortBy::Total,
        SortBy::Mean,
        SortBy::Min,
        SortBy::Max,
        SortBy::Share,
    ] {
        for descending in [false, true] {
            let p = query_events(
                &set,
                &EventQuery {
                    group_by: Some(GroupBy::Name),
                    sort,
                    descending,
                    limit: 1000,
                    ..Default::default()
                },
            );
            let value = |k: &String| {
                let (n, total, min, max) = by_name[k];
                match sort {
                    SortBy::Count => n as f64,
                    SortBy::Total | SortBy::Share => total,
                    SortBy::Mean => total / n as f64,
                    SortBy::Min => min,
                    SortBy::Max => max,
                    _ => 0.0,
                }
            };
            let mut want: Vec<String> = by_name.keys().cloned().collect();
            if sort == SortBy::Name {
                if descending {
                    want.reverse();
                }
            } else {
                // Ties stay in key order.
                want.sort_by(|a, b| {
                    let o = value(a).partial_cmp(&value(b)).unwrap();
                    if descending {
                        o.reverse()
                    } else {
                        o
                    }
                });
            }
            let got: Vec<String> = p.groups.iter().map(|g| g.key.clone()).collect();
            assert_eq!(got, want, "{sort:?} descending={descending}");
            for g in &p.groups {
                let (_, total, min, _) = by_name[&g.key];
                assert_eq!(g.min_us, Some(min), "{}", g.key);
                assert!((g.pct_of_matched - total * 100.0 / matched).abs() < 1e-9);
            }
        }
    }
    // A row order asked of groups sorts them by total, a group order asked of rows by duration.
    assert_eq!(SortBy::Kind.of_groups(), SortBy::Total);
    assert_eq!(SortBy::Min.of_rows(), SortBy::Duration);
    assert!(SortBy::Share.descending_first() && !SortBy::Args.descending_first());
}
