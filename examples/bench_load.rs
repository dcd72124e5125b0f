//! Load benchmark: our streaming loader against serde_json::Value on the same files, each in its own process
//! so peak memory is measured apart (peak MB: resident; heap MB: bytes allocated, the WebAssembly-like figure). `cargo run --release --example bench_load -- FILE...`

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The system allocator, counting the bytes asked for: their peak is about what a WebAssembly
/// memory has to hold (capacity reserved but never written counts here, not in the resident size).
struct CountingAlloc;

static HEAP_NOW: AtomicUsize = AtomicUsize::new(0);
static HEAP_PEAK: AtomicUsize = AtomicUsize::new(0);

fn heap_grew(by: usize) {
    let now = HEAP_NOW.fetch_add(by, Ordering::Relaxed) + by;
    HEAP_PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        heap_grew(layout.size());
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        heap_grew(layout.size());
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HEAP_NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as a copy (old and new both live), as a WebAssembly allocator mostly does it.
        heap_grew(new_size);
        let p = System.realloc(ptr, layout, new_size);
        HEAP_NOW.fetch_sub(layout.size(), Ordering::Relaxed);
        p
    }
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// Peak resident memory of this process so far, bytes (Linux: VmHWM).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Runs one measurement in this process and prints `seconds events text_bytes peak_rss`.
fn one(mode: &str, path: &Path) {
    let start = Instant::now();
    let (events, text_bytes) = match mode {
        "ours" => {
            let t = profile_model::table::load_path(path).expect("load");
            let s = profile_model::analysis::summary::summarize(&t);
            (s.events, t.metadata.text_bytes)
        }
        "serde_json" => {
            // The usual way: read the text (gunzip if needed), then parse it whole into a Value.
            let raw = std::fs::read(path).unwrap();
            let text = if raw.starts_with(&[0x1f, 0x8b]) {
                let mut out = Vec::new();
                flate2::read::MultiGzDecoder::new(&raw[..])
                    .read_to_end(&mut out)
                    .unwrap();
                out
            } else {
                raw
            };
            let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
            let n = v
                .get("traceEvents")
                .and_then(|e| e.as_array())
                .map_or(0, |a| a.len());
            (n as u64, text.len() as u64)
        }
        _ => panic!("unknown mode {mode}"),
    };
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{secs} {events} {text_bytes} {} {}",
        peak_rss(),
        HEAP_PEAK.load(Ordering::Relaxed)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--one") {
        one(&args[1], Path::new(&args[2]));
        return;
    }
    if args.is_empty() {
        eprintln!("usage: bench_load FILE... (plain or gzip Kineto traces)");
        std::process::exit(2);
    }
    let exe = std::env::current_exe().unwrap();
    println!(
        "{:<28} {:>11} {:>9} {:>10} {:>9} {:>11} {:>12} {:>9} {:>9}",
        "file",
        "loader",
        "JSON MB",
        "events",
        "seconds",
        "MB/s JSON",
        "Mevents/s",
        "peak MB",
        "heap MB"
    );
    for file in &args {
        let name = Path::new(file)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        for mode in ["ours", "serde_json"] {
            let out = Command::new(&exe)
                .args(["--one", mode, file])
                .output()
                .expect("run");
            if !out.status.success() {
                println!(
                    "{name:<28} {mode:>11} failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                continue;
            }
            let text = String::from_utf8_lossy(&out.stdout);
            let f: Vec<f64> = text
                .split_whitespace()
                .map(|x| x.parse().unwrap())
                .collect();
            let (secs, events, bytes, peak, heap) = (f[0], f[1], f[2], f[3], f[4]);
            println!(
                "{:<28} {:>11} {:>9.1} {:>10} {:>9.3} {:>11.1} {:>12.2} {:>9.1} {:>9.1}",
                name,
                mode,
                bytes / 1e6,
                events,
                secs,
                bytes / 1e6 / secs,
                events / 1e6 / secs,
                peak / 1e6,
                heap / 1e6
            );
        }
    }
}
