//! The timeline's rank lanes: for every rank of a multi-rank set and many ranges and widths, the
//! busy time of its pixels equals that rank's GPU busy time in the range (the union of its kernels,
//! copies and sets over all streams), computed here straight from the table; an answer holds at
//! most a pixel per pixel of width.

use crate::common;

use crate::common::TraceBuilder;
use profile_model::analysis::rank_lanes::{rank_lanes, BusyIndex};
use profile_model::analysis::timeline::TimelineRequest;
use profile_model::table::{load_path, TraceSet, TraceTable};

/// The rank's GPU busy time inside `[start, end)`: its device events merged by a sweep, clipped.
fn gpu_busy_in(t: &TraceTable, start: i64, end: i64) -> i64 {
    let mut iv: Vec<(i64, i64)> = (0..t.len())
        .filter(|&r| t.kind_at(r).is_gpu_activity())
        .filter_map(|r| Some((t.ts_at(r)?, t.ts_at(r)? + t.dur_at(r)?)))
        .map(|(s, e)| (s.max(start), e.min(end)))
        .filter(|(s, e)| e > s)
        .collect();
    iv.sort();
    let (mut total, mut reach) = (0, i64::MIN);
    for (s, e) in iv {
        let from = s.max(reach);
        if e > from {
            total += e - from;
        }
        reach = reach.max(e);
    }
    total
}

fn check(name: &str, set: &TraceSet, tries: u64) {
    let indexes: Vec<BusyIndex> = set.ranks.iter().map(|r| BusyIndex::new(&r.table)).collect();
    let whole = rank_lanes(
        set,
        &indexes,
        &TimelineRequest {
            start_ns: 0,
            end_ns: 0,
            width_px: 800,
        },
    );
    let (lo, hi) = whole.span_ns;
    assert!(hi > lo, "{name}: GPU work found");
    let span = hi - lo;
    for i in 0..tries {
        let (start, end) = if i == 0 {
            (lo, hi)
        } else {
            let a = lo - span / 10 + ((i * 7919) as i64 * 104_729) % (span + span / 5);
            (
                a,
                a + 1 + span / (1 + (i as i64 % 37)) / (1 + (i as i64 % 5)),
            )
        };
        let width = [1, 7, 300, 1280, 3840][i as usize % 5];
        let req = TimelineRequest {
            start_ns: start,
            end_ns: end,
            width_px: width,
        };
        let view = rank_lanes(set, &indexes, &req);
        assert_eq!((view.start_ns, view.end_ns), (start, end));
        assert_eq!(view.lanes.len(), set.ranks.len());
        for (lane, rank) in view.lanes.iter().zip(&set.ranks) {
            let summed: i64 = lane.pixels.iter().map(|p| p.busy_ns).sum();
            assert_eq!(summed, lane.busy_ns);
            assert_eq!(
                summed,
                gpu_busy_in(&rank.table, start, end),
                "{name}: rank {} over [{start}, {end}) at {width} px",
                rank.rank
            );
            assert!(lane.pixels.len() <= width as usize);
            assert!(lane.pixels.iter().all(|p| p.px < width));
            assert_eq!(lane.rank, rank.rank);
        }
    }
}

#[test]
fn each_ranks_busy_pixels_sum_to_its_gpu_busy_time_on_the_multi_rank_set() {
    let tables = ["hta__sampled_rank-0.json.gz", "hta__sampled_rank-1.json.gz"]
        .map(|n| load_path(&common::trace(n)).expect("loads"));
    let set = TraceSet::from_tables(tables.into());
    assert_eq!(set.ranks.len(), 2);
    check("sampled ranks", &set, 120);
}

/// Many overlapping kernels on two streams: the merged lane is summarised and stays exact.
#[test]
fn a_dense_rank_is_summarised_and_stays_exact() {
    let mut b = TraceBuilder::new();
    let mut ts = 100.0;
    for i in 0..30_000 {
        let dur = 0.3 + (i % 13) as f64 * 0.37;
        b.kernel("a", 7, ts - 3.0, 1.0, ts, dur);
        b.kernel("b", 9, ts - 2.0, 1.0, ts + dur * 0.5, dur);
        ts += dur * 1.2 + (i % 7) as f64 * 0.3;
    }
    let set = TraceSet::from_tables(vec![b.table("dense.json")]);
    check("dense", &set, 100);
}
