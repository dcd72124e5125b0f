//! Benchmark (rerunnable, not a test) of the timeline's level-of-detail query: index build time,
//! then the time of 200 views (zoom levels from the whole trace down to 1/10,000 of it, at
//! 1,500 px) and the items each answer holds. Usage:
//! `cargo run --release --example bench_timeline -- FILE`

use std::time::Instant;

use profile_model::analysis::timeline::{TimelineIndex, TimelineRequest};
use profile_model::table::load_path;

fn main() {
    let path = std::env::args().nth(1).expect("usage: bench_timeline FILE");
    let t = load_path(std::path::Path::new(&path)).expect("loads");
    let clock = Instant::now();
    let index = TimelineIndex::new(&t);
    let build_ms = clock.elapsed().as_secs_f64() * 1e3;
    let clock = Instant::now();
    let idle = profile_model::report::gather::idle_pieces(&t);
    let idle_ms = clock.elapsed().as_secs_f64() * 1e3;
    let drawable: u64 = index.tracks.iter().map(|t| t.events).sum();
    let (lo, hi) = index.span_ns;
    let mut times = Vec::new();
    let mut items = Vec::new();
    for i in 0..200u32 {
        let zoom = 10f64.powf(-((i % 5) as f64)); // 1, 1/10, ... 1/10,000 of the span
        let len = ((hi - lo) as f64 * zoom).max(1000.0) as i64;
        let start = lo + ((hi - lo - len).max(0) as f64 * (i as f64 / 200.0)) as i64;
        let clock = Instant::now();
        let view = index.view(
            &t,
            &TimelineRequest {
                start_ns: start,
                end_ns: start + len,
                width_px: 1500,
            },
        );
        times.push(clock.elapsed().as_secs_f64() * 1e3);
        items.push(view.drawn_items());
    }
    times.sort_by(f64::total_cmp);
    items.sort_unstable();
    println!(
        "{} events ({} drawable, {} tracks): index {:.0} ms, idle causes {:.0} ms ({} pieces); view median {:.2} ms, p95 {:.2} ms, max {:.2} ms; items median {}, max {}",
        t.len(),
        drawable,
        index.tracks.len(),
        build_ms,
        idle_ms,
        idle.len(),
        times[100],
        times[190],
        times[199],
        items[100],
        items[199]
    );
}
