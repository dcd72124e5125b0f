//! Early exits never hang, output errors are reported, gzip damage is caught: the edges a new user hits
//! (a refused file of any size, `| head`, a full disk, a damaged or doubly compressed file, a bad rank file).

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use flate2::write::GzEncoder;
use flate2::Compression;
use profile_model::table::load_path;
use profile_model::trace::LoadErrorKind;
use serde_json::Value;

/// A scratch folder of this test binary, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pm-robustness-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `len` bytes that start with `head`, the rest pseudo-random (xorshift), written in 1 MiB pieces.
fn write_file(path: &Path, head: &[u8], len: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    f.write_all(head).unwrap();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut left = len.saturating_sub(head.len());
    let mut buf = vec![0u8; 1 << 20];
    while left > 0 {
        for b in buf.iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        let n = left.min(buf.len());
        f.write_all(&buf[..n]).unwrap();
        left -= n;
    }
}

/// JSON that is valid but not a trace: an object with one long list of numbers, `len` bytes.
fn write_json_not_a_trace(path: &Path, len: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    f.write_all(b"{\"values\": [0").unwrap();
    let mut written = 13;
    while written + 2 < len {
        f.write_all(b",1").unwrap();
        written += 2;
    }
    f.write_all(b"]}").unwrap();
}

/// Runs `load_path` on another thread; fails the test if it does not return within `limit`.
fn load_within(
    path: &Path,
    limit: Duration,
) -> Result<profile_model::table::TraceTable, profile_model::trace::LoadError> {
    let (tx, rx) = mpsc::channel();
    let p = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(load_path(&p));
    });
    rx.recv_timeout(limit).unwrap_or_else(|_| {
        panic!(
            "loading {} did not return within {limit:?} (a hang)",
            path.display()
        )
    })
}

#[test]
fn refused_inputs_of_every_size_return_at_once() {
    let dir = scratch("refused");
    let zip_head: &[u8] = b"PK\x03\x04";
    let png_head: &[u8] = b"\x89PNG\r\n\x1a\n";
    for (size, label) in [
        (1usize << 10, "1KB"),
        (20 << 20, "20MB"),
        (200 << 20, "200MB"),
    ] {
        let cases: [(&str, &[u8], LoadErrorKind); 3] = [
            ("zip", zip_head, LoadErrorKind::NotJson),
            ("png", png_head, LoadErrorKind::NotJson),
            ("random", b"\x01", LoadErrorKind::NotJson),
        ];
        for (kind, head, expected) in cases {
            let path = dir.join(format!("{label}.{kind}"));
            write_file(&path, head, size);
            let started = Instant::now();
            let err = load_within(&path, Duration::from_secs(60)).expect_err("refused");
            assert_eq!(err.kind, expected, "{label} {kind}: {}", err.message);
            // A refusal at the first bytes must not read the whole file.
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "{label} {kind} took {:?}",
                started.elapsed()
            );
            std::fs::remove_file(&path).unwrap();
        }
        let path = dir.join(format!("{label}.json"));
        write_json_not_a_trace(&path, size);
        let err = load_within(&path, Duration::from_secs(120)).expect_err("not a trace");
        assert_eq!(
            err.kind,
            LoadErrorKind::NotATrace,
            "{label} json: {}",
            err.message
        );
        std::fs::remove_file(&path).unwrap();
    }
}

fn cli() -> Command {
    Command::new(env!("CARGO_BIN_EXE_profile-model"))
}

#[test]
fn a_bad_rank_file_is_named_in_the_json_and_the_good_ranks_load() {
    let dir = scratch("rankfolder");
    let good = common::trace("hta__critical_path_simple_add.json.gz");
    std::fs::copy(&good, dir.join("rank-0.json.gz")).unwrap();
    std::fs::copy(&good, dir.join("rank-1.json.gz")).unwrap();
    write_file(&dir.join("rank-2.json"), b"\x89PNG\r\n\x1a\n", 20 << 20);
    for command in ["summary", "report", "analyze"] {
        let out = cli()
            .args([command, "--json", dir.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let skipped = v["skipped_files"]
            .as_array()
            .unwrap_or_else(|| panic!("{command}: no skipped_files"));
        assert_eq!(skipped.len(), 1, "{command}");
        assert_eq!(skipped[0]["file"], "rank-2.json");
        assert_eq!(skipped[0]["kind"], "not-json");
        assert!(
            skipped[0]["reason"].as_str().unwrap().contains("an image"),
            "{command}: {}",
            skipped[0]
        );
    }
    let out = cli()
        .args(["report", "--json", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["ranks"].as_array().unwrap().len(),
        2,
        "the two good files are analysed"
    );
    assert!(v["notes"][0]
        .as_str()
        .unwrap()
        .starts_with("rank-2.json could not be loaded"));
}

#[test]
fn a_closed_pipe_is_a_quiet_success() {
    let trace = common::trace("hta__critical_path_simple_add.json.gz");
    for args in [
        vec!["summary"],
        vec!["report"],
        vec!["analyze"],
        vec!["analyze", "--json"],
        vec!["events", "--csv"],
    ] {
        let mut child = cli()
            .args(&args)
            .arg(&trace)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read one byte, then hang up, as `| head -c 1` does.
        let mut stdout = child.stdout.take().unwrap();
        let mut one = [0u8; 1];
        let _ = std::io::Read::read(&mut stdout, &mut one);
        drop(stdout);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_an_error_with_a_message() {
    let trace = common::trace("hta__critical_path_simple_add.json.gz");
    for args in [
        vec!["summary"],
        vec!["report"],
        vec!["analyze", "--json"],
        vec!["events", "--csv"],
    ] {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = cli().args(&args).arg(&trace).stdout(full).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains("could not write the output"),
            "{args:?}: {err}"
        );
    }
}

/// A gzip file of `text` in one member per piece, written by flate2 (not the crate's decoder).
fn gzip_members(pieces: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    for p in pieces {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(p).unwrap();
        out.extend(e.finish().unwrap());
    }
    out
}

fn small_trace_text() -> Vec<u8> {
    let mut b = common::TraceBuilder::new();
    b.cpu_op("aten::mm", 0.0, 50.0);
    for i in 0..10 {
        let t = 100.0 + 20.0 * i as f64;
        b.kernel("gemm", 7, t, 5.0, t + 8.0, 10.0);
    }
    b.json().into_bytes()
}

fn load_file_bytes(
    dir: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<profile_model::table::TraceTable, profile_model::trace::LoadError> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    load_within(&path, Duration::from_secs(30))
}

fn kernels(t: &profile_model::table::TraceTable) -> usize {
    profile_model::analysis::summary::summarize(t).kernels as usize
}

#[test]
fn gzip_checksums_are_checked_and_the_figures_still_shown() {
    let dir = scratch("gzip");
    let text = small_trace_text();
    let good = gzip_members(&[&text]);
    let ok = load_file_bytes(&dir, "good.json.gz", &good).unwrap();
    assert_eq!(kernels(&ok), 10);
    assert!(ok
        .diagnostics
        .list()
        .iter()
        .all(|d| d.kind != profile_model::trace::DiagnosticKind::GzipChecksum));
    let n = good.len();
    // The trailer: CRC-32 at n-8..n-4, length at n-4..n.
    for (label, at) in [("crc", n - 8), ("length", n - 3)] {
        let mut bad = good.clone();
        bad[at] ^= 0x5A;
        let t = load_file_bytes(&dir, &format!("bad-{label}.json.gz"), &bad).unwrap();
        assert_eq!(kernels(&t), 10, "{label}: the figures are still shown");
        let d = t
            .diagnostics
            .list()
            .into_iter()
            .find(|d| d.kind == profile_model::trace::DiagnosticKind::GzipChecksum)
            .unwrap_or_else(|| panic!("{label}: no checksum diagnostic"));
        assert_eq!(d.severity, profile_model::trace::Severity::DataLoss);
        assert!(
            d.example
                .starts_with(&format!("bad-{label}.json.gz: gzip member 1")),
            "{}",
            d.example
        );
    }
    // A trailer cut short: the text is all there, but its checksum cannot be checked.
    let t = load_file_bytes(&dir, "short-trailer.json.gz", &good[..n - 3]).unwrap();
    assert_eq!(kernels(&t), 10);
    assert!(t
        .diagnostics
        .list()
        .iter()
        .any(|d| d.kind == profile_model::trace::DiagnosticKind::GzipChecksum));
}

#[test]
fn concatenated_gzip_members_are_one_text() {
    let dir = scratch("members");
    let text = small_trace_text();
    let (a, b) = text.split_at(text.len() / 2);
    let two = gzip_members(&[a, b]);
    let t = load_file_bytes(&dir, "two.json.gz", &two).unwrap();
    assert_eq!(kernels(&t), 10);
    assert!(t
        .diagnostics
        .list()
        .iter()
        .all(|d| d.kind != profile_model::trace::DiagnosticKind::GzipChecksum));
}

#[test]
fn what_a_gzip_holds_is_named_when_it_is_not_json() {
    let dir = scratch("inside");
    let text = small_trace_text();
    let twice = gzip_members(&[&gzip_members(&[&text])]);
    let e = load_file_bytes(&dir, "twice.json.gz", &twice).unwrap_err();
    assert!(e.message.contains("gzip compressed twice"), "{}", e.message);
    // A tar archive: a 512-byte header with "ustar" at byte 257.
    let mut tar = vec![0u8; 512];
    tar[..10].copy_from_slice(b"trace.json");
    tar[257..262].copy_from_slice(b"ustar");
    tar.extend_from_slice(&text);
    let e = load_file_bytes(&dir, "trace.tar.gz", &gzip_members(&[&tar])).unwrap_err();
    assert!(
        e.message.contains("a tar archive inside the gzip"),
        "{}",
        e.message
    );
    let e = load_file_bytes(&dir, "trace.tar", &tar).unwrap_err();
    assert!(e.message.contains("a tar archive:"), "{}", e.message);
}

#[test]
fn a_gzip_header_that_never_ends_is_refused() {
    let dir = scratch("header");
    // FNAME set, and the name never ends.
    let mut bytes = vec![0x1f, 0x8b, 8, 0x08, 0, 0, 0, 0, 0, 3];
    bytes.extend(std::iter::repeat_n(b'a', 200_000));
    let e = load_file_bytes(&dir, "endless.json.gz", &bytes).unwrap_err();
    assert_eq!(e.kind, LoadErrorKind::CorruptGzip, "{}", e.message);
}

/// A trace with `streams` streams of three kernels each (gaps of 2 and 7 µs), and a distinct kernel
/// name per kernel.
fn many_streams_trace(streams: usize) -> Vec<u8> {
    let mut b = common::TraceBuilder::new();
    for s in 0..streams {
        let t0 = 1000.0 + s as f64;
        for (k, start) in [0.0, 12.0, 29.0].iter().enumerate() {
            b.kernel(
                &format!("kernel_{s}_{k}"),
                10 + s as i64,
                t0,
                1.0,
                t0 + 5.0 + start,
                10.0,
            );
        }
    }
    b.json().into_bytes()
}

#[test]
fn one_result_does_not_grow_with_the_number_of_streams_or_names() {
    use profile_model::analysis::all::{analyze, AnalysisOptions};
    let streams = 1500;
    let table =
        profile_model::table::load_bytes("streams.json", &many_streams_trace(streams)).unwrap();
    let set = profile_model::table::TraceSet::single(table);
    let all = analyze(&set, &AnalysisOptions::default());
    // Written: per stream, gaps of 2 and 7 µs.
    let idle_written = streams as f64 * 9.0;
    let idle = &all.idle_time_breakdown;
    assert!(
        idle.len() <= profile_model::analysis::idle::MAX_STREAMS + 1,
        "{} rows",
        idle.len()
    );
    assert_eq!(
        idle.last().unwrap().stream,
        profile_model::analysis::bounded::OTHER_STREAMS
    );
    let listed: f64 = idle.iter().map(|r| r.idle_us).sum();
    assert!(
        (listed - idle_written).abs() < 1e-6,
        "{listed} vs {idle_written}"
    );
    assert!(all.queue_length.len() <= profile_model::analysis::idle::MAX_STREAMS + 1);
    let kernels = &all.kernel_breakdown.kernels_all_ranks;
    assert!(
        kernels.len() <= profile_model::analysis::kernels::MAX_NAMES_PER_TYPE + 1,
        "{}",
        kernels.len()
    );
    let time: f64 = kernels.iter().map(|k| k.sum_us).sum();
    assert!((time - streams as f64 * 30.0).abs() < 1e-6, "{time}");
    assert_eq!(
        kernels.iter().map(|k| k.count).sum::<u64>(),
        3 * streams as u64
    );
    assert!(
        all.notes.iter().any(|n| n.contains("streams")),
        "{:?}",
        all.notes
    );
    let json = serde_json::to_string(&all).unwrap();
    assert!(
        json.len() < 2_000_000,
        "analyze JSON is {} bytes",
        json.len()
    );
}
