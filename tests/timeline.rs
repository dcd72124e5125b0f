//! The timeline's level-of-detail query: for many ranges and widths, the busy time of what it
//! answers (drawn events clipped to the range, plus the merged pixel buckets) equals the busy time
//! of the trace's events in that range, computed here straight from the table; an answer stays
//! O(width) per lane; tracks come in the usual order with their nesting depth.

use crate::common;

use crate::common::TraceBuilder;
use profile_model::analysis::timeline::{
    search, TimelineIndex, TimelineRequest, TrackKey, MAX_SEARCH_HITS,
};
use profile_model::table::{load_path, EventKind, TraceTable};

/// Σ over the table's complete events of their time inside `[start, end)`, ns (the independent sum).
fn busy_in(t: &TraceTable, start: i64, end: i64) -> i64 {
    (0..t.len())
        .filter(|&r| {
            !matches!(
                t.kind_at(r),
                EventKind::Flow | EventKind::Metadata | EventKind::Trace | EventKind::Instant
            )
        })
        .filter_map(|r| Some((t.ts_at(r)?, t.ts_at(r)? + t.dur_at(r)?)))
        .map(|(s, e)| (e.min(end) - s.max(start)).max(0))
        .sum()
}

/// A deterministic pseudo-random sequence (no dependency on a random crate).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn check_ranges(name: &str, t: &TraceTable, tries: usize) {
    let index = TimelineIndex::new(t);
    let (lo, hi) = index.span_ns;
    let span = (hi - lo).max(1);
    let mut rng = Lcg(7);
    for i in 0..tries {
        let (start, end) = if i == 0 {
            (lo, hi.max(lo + 1))
        } else {
            let a = lo - span / 10 + (rng.next() as i64 % (span + span / 5)).abs();
            let len = 1 + (rng.next() as i64 % span.max(2)) >> (rng.next() % 20);
            (a, a + len.max(1))
        };
        let width = [1, 7, 300, 1280, 3840][i % 5];
        let view = index.view(
            t,
            &TimelineRequest {
                start_ns: start,
                end_ns: end,
                width_px: width,
            },
        );
        let ours: i64 = view.lanes.iter().map(|l| l.busy_ns(start, end)).sum();
        assert_eq!(
            ours,
            busy_in(t, start, end),
            "{name}: range [{start}, {end}) at {width} px"
        );
        for lane in &view.lanes {
            assert!(
                lane.buckets.len() <= width as usize,
                "{name}: {} buckets for {width} px",
                lane.buckets.len()
            );
        }
    }
}

#[test]
fn busy_time_of_the_answer_equals_the_events_on_every_real_trace() {
    for f in common::kineto_trace_files() {
        let t = load_path(&f).expect("loads");
        check_ranges(&f.display().to_string(), &t, 60);
    }
}

/// One stream with `n` back-to-back kernels of varying length (enough to be summarised), and a
/// host thread with nested ops.
fn dense_trace(n: usize) -> TraceTable {
    let mut b = TraceBuilder::new();
    let mut ts = 100.0;
    for i in 0..n {
        let dur = 0.3 + (i % 17) as f64 * 0.41 + if i % 1000 == 0 { 900.0 } else { 0.0 };
        b.kernel("k", 7, ts - 5.0, 2.0, ts, dur);
        ts += dur + (i % 5) as f64 * 0.2;
    }
    b.cpu_op("outer", 50.0, ts);
    b.cpu_op("inner", 60.0, 10.0);
    b.table("dense.json")
}

#[test]
fn a_dense_lane_is_summarised_and_stays_exact_and_small() {
    let t = dense_trace(60_000);
    check_ranges("dense", &t, 300);
    let index = TimelineIndex::new(&t);
    let (lo, hi) = index.span_ns;
    let view = index.view(
        &t,
        &TimelineRequest {
            start_ns: lo,
            end_ns: hi,
            width_px: 1000,
        },
    );
    let stream = index
        .tracks
        .iter()
        .position(|tr| matches!(tr.key, TrackKey::Stream { stream: 7, .. }))
        .expect("stream 7");
    let lane = view
        .lanes
        .iter()
        .find(|l| l.track == stream as u32)
        .expect("its lane");
    // 60,000 kernels, answered with at most a bucket per pixel and the few long kernels.
    assert!(lane.buckets.len() <= 1000, "{}", lane.buckets.len());
    assert!(lane.events.len() <= 120, "{}", lane.events.len());
    let counted: u64 =
        lane.buckets.iter().map(|b| b.count as u64).sum::<u64>() + lane.events.len() as u64;
    assert_eq!(counted, 60_000);
}

#[test]
fn tracks_are_streams_then_threads_with_their_nesting_depth() {
    let mut b = TraceBuilder::new();
    b.cpu_op("outer", 0.0, 100.0);
    b.cpu_op("inner", 10.0, 20.0);
    b.kernel("k2", 20, 12.0, 3.0, 40.0, 5.0);
    b.kernel("k1", 7, 15.0, 3.0, 30.0, 5.0);
    let t = b.table("t.json");
    let index = TimelineIndex::new(&t);
    let names: Vec<&str> = index.tracks.iter().map(|t| t.name.as_str()).collect();
    assert!(names[0].ends_with("stream 7"), "{names:?}");
    assert!(names[1].ends_with("stream 20"), "{names:?}");
    assert!(names[2].starts_with("thread"), "{names:?}");
    // outer > inner > cudaLaunchKernel: three depths on the host thread.
    assert_eq!(index.tracks[2].depth, 3, "{:?}", index.tracks[2]);
    // Zoomed in on the kernel k1: drawn on its own, with its name.
    let view = index.view(
        &t,
        &TimelineRequest {
            start_ns: 29_000,
            end_ns: 36_000,
            width_px: 700,
        },
    );
    let k1: Vec<_> = view
        .lanes
        .iter()
        .flat_map(|l| &l.events)
        .filter(|e| e.name == "k1")
        .collect();
    assert_eq!(k1.len(), 1);
    assert_eq!((k1[0].start_ns, k1[0].end_ns), (30_000, 35_000));
}

#[test]
fn events_too_narrow_for_a_label_come_without_their_name() {
    use profile_model::analysis::timeline::LABEL_MIN_PX;
    let mut b = TraceBuilder::new();
    b.cpu_op("outer", 0.0, 100.0);
    b.kernel("k1", 7, 15.0, 3.0, 30.0, 5.0);
    let t = b.table("t.json");
    let index = TimelineIndex::new(&t);
    // 100 µs over 100 px: outer is 100 px wide, k1 5 px.
    let request = TimelineRequest {
        start_ns: 0,
        end_ns: 100_000,
        width_px: 100,
    };
    let view = index.view(&t, &request);
    let drawn: Vec<_> = view.lanes.iter().flat_map(|l| &l.events).collect();
    let px = |e: &&profile_model::analysis::timeline::DrawnEvent| {
        (e.end_ns - e.start_ns) as f64 / 1000.0
    };
    let outer = drawn
        .iter()
        .find(|e| t.name_at(e.row as usize) == "outer")
        .unwrap();
    let k1 = drawn
        .iter()
        .find(|e| t.name_at(e.row as usize) == "k1")
        .unwrap();
    assert!(px(outer) >= LABEL_MIN_PX && px(k1) < LABEL_MIN_PX);
    assert_eq!(outer.name, "outer");
    assert_eq!(k1.name, "", "a 5 px event is drawn without its name");
}

#[test]
fn a_parent_written_after_its_children_still_nests_above_them() {
    let mut b = TraceBuilder::new();
    // Written in the order the ops end (as a tracer that logs on exit does): children first.
    b.cpu_op("child_b", 50.0, 30.0);
    b.cpu_op("child_a", 0.0, 40.0);
    b.cpu_op("grandchild", 10.0, 5.0);
    b.cpu_op("parent", 0.0, 100.0);
    let t = b.table("t.json");
    let index = TimelineIndex::new(&t);
    assert_eq!(index.tracks[0].depth, 3, "{:?}", index.tracks[0]);
    let view = index.view(
        &t,
        &TimelineRequest {
            start_ns: 0,
            end_ns: 100_000,
            width_px: 1000,
        },
    );
    let depth_of = |name: &str| {
        view.lanes
            .iter()
            .find(|l| l.events.iter().any(|e| t.name_at(e.row as usize) == name))
            .map(|l| l.depth)
    };
    assert_eq!(depth_of("parent"), Some(0));
    assert_eq!(depth_of("child_a"), Some(1));
    assert_eq!(depth_of("child_b"), Some(1));
    assert_eq!(depth_of("grandchild"), Some(2));
}

#[test]
fn a_kernel_shows_its_launch_and_a_launch_its_kernel() {
    use profile_model::analysis::timeline::{event_details, Relation};
    let mut b = TraceBuilder::new();
    b.cpu_op("aten::mm", 0.0, 50.0);
    b.kernel("gemm", 7, 10.0, 4.0, 20.0, 8.0);
    let t = b.table("t.json");
    let kernel = (0..t.len()).find(|&r| t.name_at(r) == "gemm").unwrap();
    let launch = (0..t.len())
        .find(|&r| t.name_at(r) == "cudaLaunchKernel")
        .unwrap();
    let d = event_details(&t, 0, kernel as u32).expect("details");
    assert_eq!(
        (d.name.as_str(), d.start_ns, d.dur_ns),
        ("gemm", 20_000, 8_000)
    );
    assert!(d.track.ends_with("stream 7"), "{}", d.track);
    assert_eq!(d.partners.len(), 1);
    assert_eq!(d.partners[0].row as usize, launch);
    assert_eq!(d.partners[0].relation, Relation::LaunchedBy);
    let l = event_details(&t, 0, launch as u32).expect("details");
    assert_eq!(l.partners[0].row as usize, kernel);
    assert_eq!(l.partners[0].relation, Relation::Launched);
    assert!(event_details(&t, 0, t.len() as u32).is_none());
}

#[test]
fn the_idle_pieces_cover_the_gpu_idle_time_of_the_temporal_breakdown() {
    use profile_model::analysis::all::{analyze, AnalysisOptions};
    use profile_model::report::gather::idle_pieces;
    use profile_model::table::TraceSet;
    for f in common::kineto_trace_files() {
        let t = load_path(&f).expect("loads");
        let pieces = idle_pieces(&t);
        assert!(
            pieces.windows(2).all(|w| w[0].1 <= w[1].0),
            "{}: sorted, apart",
            f.display()
        );
        let total_us: f64 = pieces.iter().map(|p| (p.1 - p.0) as f64 / 1000.0).sum();
        let set = TraceSet::single(t);
        let a = analyze(&set, &AnalysisOptions::default());
        let idle_us = a.temporal_breakdown.first().map_or(0.0, |r| r.idle_us);
        assert!(
            (total_us - idle_us).abs() <= 1e-3 * idle_us.max(1.0),
            "{}: pieces {total_us} us, temporal idle {idle_us} us",
            f.display()
        );
    }
}

#[test]
fn locate_finds_the_longest_event_a_query_matches() {
    use profile_model::analysis::timeline::locate;
    use profile_model::table::query::EventQuery;
    use profile_model::table::TraceSet;
    let mut b = TraceBuilder::new();
    b.kernel("short", 7, 0.0, 1.0, 10.0, 2.0);
    b.kernel("long", 7, 1.0, 1.0, 20.0, 9.0);
    let set = TraceSet::single(b.table("t.json"));
    let q = EventQuery {
        kinds: vec![EventKind::Kernel],
        ..Default::default()
    };
    let found = locate(&set, &q, &[]).expect("found");
    assert_eq!(found.rank_index, 0);
    assert_eq!(set.ranks[0].table.name_at(found.row as usize), "long");
    assert_eq!((found.start_ns, found.dur_ns), (20_000, 9_000));
    assert!(!found.outside, "no window: the whole trace");
    let nothing = EventQuery {
        name_contains: "absent".into(),
        ..Default::default()
    };
    assert!(locate(&set, &nothing, &[]).is_none());
}

#[test]
fn the_search_finds_every_drawn_event_whose_name_contains_the_text() {
    // On a real trace: the hits are exactly the rows counted here from the table (timed, drawable,
    // the name containing the text in any case), by start.
    let t = load_path(&common::trace("hta__critical_path_alexnet.json.gz")).unwrap();
    for text in ["GEMM", "conv", "cudaLaunchKernel", "no such name at all"] {
        let needle = text.to_lowercase();
        let mut want: Vec<(i64, u32)> = (0..t.len())
            .filter(|&r| t.name_at(r).to_lowercase().contains(&needle))
            .filter(|&r| {
                !matches!(
                    t.kind_at(r),
                    EventKind::Flow | EventKind::Metadata | EventKind::Trace | EventKind::Instant
                )
            })
            .filter_map(|r| Some((t.ts_at(r)?, t.dur_at(r).map(|_| r as u32)?)))
            .collect();
        want.sort_unstable();
        let (hits, total) = search(&t, &format!("  {text} "));
        assert_eq!(total as usize, want.len(), "{text}");
        let got: Vec<(i64, u32)> = hits.iter().map(|h| (h.start_ns, h.row)).collect();
        assert_eq!(got, want[..want.len().min(MAX_SEARCH_HITS)], "{text}");
        for h in &hits {
            let r = h.row as usize;
            assert_eq!(h.end_ns - h.start_ns, t.dur_at(r).unwrap(), "{text}");
        }
    }
    assert_eq!(search(&t, "   ").1, 0, "an empty text finds nothing");
}

/// Rank 0: steps 1 [0, 100) and 2 [100, 200) µs; kernel `k` launched in step 1 (60 µs, the longest),
/// in step 2 (30 µs), and launched at the end of step 2 but running after it (40 µs); `early` only in
/// step 1. Rank 1 (no window given): `k` of `k1` µs.
fn windowed(k1: f64) -> profile_model::table::TraceSet {
    let mut r0 = TraceBuilder::new().rank(0, 2);
    r0.step(1, 0.0, 100.0).step(2, 100.0, 100.0);
    r0.kernel("k", 7, 10.0, 2.0, 20.0, 60.0);
    r0.kernel("early", 7, 50.0, 2.0, 85.0, 5.0);
    r0.kernel("k", 7, 110.0, 2.0, 120.0, 30.0);
    r0.kernel("k", 7, 190.0, 2.0, 205.0, 40.0);
    let mut r1 = TraceBuilder::new().rank(1, 2);
    r1.kernel("k", 7, 10.0, 2.0, 20.0, k1);
    profile_model::table::TraceSet::from_tables(vec![r0.table("r0.json"), r1.table("r1.json")])
}

#[test]
fn show_on_timeline_picks_the_longest_inside_the_analysed_window_else_the_whole_trace() {
    use profile_model::analysis::timeline::{locate, AnalysedWindow};
    use profile_model::table::query::EventQuery;
    let step2 = [AnalysedWindow {
        rank: 0,
        start_ns: 100_000,
        end_ns: 200_000,
    }];
    let named = |name: &str, ranks: Vec<i64>| EventQuery {
        names: vec![name.into()],
        kinds: vec![EventKind::Kernel],
        ranks,
        ..Default::default()
    };
    // Here: (start µs, dur µs) of what should be found.
    let at = |f: profile_model::analysis::timeline::Found| {
        (f.rank_index, f.start_ns / 1000, f.dur_ns / 1000, f.outside)
    };
    let set = windowed(35.0);
    // The whole trace: step 1's 60 µs.
    assert_eq!(
        locate(&set, &named("k", vec![0]), &[]).map(at),
        Some((0, 20, 60, false))
    );
    // Step 2: launched inside it, the 40 µs one (it runs past the step's end), not step 1's 60 µs.
    assert_eq!(
        locate(&set, &named("k", vec![0]), &step2).map(at),
        Some((0, 205, 40, false))
    );
    // Rank 1 has no window: all of it counts (35 µs < 40 µs; 45 µs > 40 µs).
    assert_eq!(
        locate(&set, &named("k", vec![]), &step2).map(at),
        Some((0, 205, 40, false))
    );
    assert_eq!(
        locate(&windowed(45.0), &named("k", vec![]), &step2).map(at),
        Some((1, 20, 45, false))
    );
    // None inside: the whole trace's longest, said to be outside.
    assert_eq!(
        locate(&set, &named("early", vec![]), &step2).map(at),
        Some((0, 85, 5, true))
    );
    assert_eq!(locate(&set, &named("nothing", vec![]), &step2), None);
}
