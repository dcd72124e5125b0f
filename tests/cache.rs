//! `--cache DIR`: a table read from the cache gives the same output as the trace's JSON (every shared trace, `summary` and `analyze --json`); a changed file is a miss; a damaged entry is said in one line and replaced; the entry's name is the FNV-1a of the key.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::TraceBuilder;

struct Run {
    ok: bool,
    stdout: Vec<u8>,
    stderr: String,
}

fn run(args: &[&str], path: &Path, cache: Option<&Path>) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_profile-model"));
    cmd.args(args);
    if let Some(dir) = cache {
        cmd.arg("--cache").arg(dir);
    }
    let out = cmd.arg(path).output().expect("run profile-model");
    Run {
        ok: out.status.success(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A fresh, empty folder under the system's temp folder.
fn temp_dir(what: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pm-cache-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn cache_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.to_string_lossy().ends_with(".pmcache.parquet"));
    v.sort();
    v
}

/// FNV-1a 64, written here again (not the crate's) for the name check.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

fn expected_entry(dir: &Path, trace: &Path) -> PathBuf {
    let canonical = std::fs::canonicalize(trace).unwrap();
    let meta = std::fs::metadata(&canonical).unwrap();
    let ns = meta
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let key = format!("{}\n{}\n{ns}", canonical.display(), meta.len());
    dir.join(format!("{:016x}.pmcache.parquet", fnv(key.as_bytes())))
}

fn hits(stderr: &str) -> usize {
    stderr
        .lines()
        .filter(|l| l.starts_with("cache: read "))
        .count()
}

#[test]
fn cached_tables_give_the_same_summary_and_analysis_on_every_shared_trace() {
    let dir = common::traces_dir();
    if !dir.is_dir() {
        eprintln!(
            "skipped: no traces at {} (set PROFILE_MODEL_TRACES)",
            dir.display()
        );
        return;
    }
    let mut checked = 0;
    for path in common::trace_files() {
        let cache = temp_dir("shared");
        let commands: [&[&str]; 2] = [&["summary"], &["analyze", "--json"]];
        for (i, command) in commands.iter().enumerate() {
            let plain = run(command, &path, None);
            let first = run(command, &path, Some(&cache));
            let second = run(command, &path, Some(&cache));
            let what = format!("{} {command:?}", path.display());
            assert_eq!(first.ok, plain.ok, "{what}: status");
            assert_eq!(first.stdout, plain.stdout, "{what}: first run with --cache");
            assert_eq!(second.stdout, plain.stdout, "{what}: run from the cache");
            if !plain.ok {
                assert!(
                    cache_files(&cache).is_empty(),
                    "{what}: a failed load is not cached"
                );
                continue;
            }
            // The first command of this file misses; every later run hits.
            assert_eq!(
                hits(&first.stderr),
                usize::from(i > 0),
                "{what}: {}",
                first.stderr
            );
            assert_eq!(hits(&second.stderr), 1, "{what}: {}", second.stderr);
            assert!(second.stderr.contains(&format!(
                "cache: read {} from ",
                path.file_name().unwrap().to_string_lossy()
            )));
            assert_eq!(
                cache_files(&cache),
                vec![expected_entry(&cache, &path)],
                "{what}"
            );
            checked += 1;
        }
        let _ = std::fs::remove_dir_all(&cache);
    }
    assert!(checked > 0, "no trace checked");
}

fn small_trace(dir: &Path, name: &str, rank: i64) -> PathBuf {
    let mut b = TraceBuilder::new().rank(rank, 2);
    b.step(1, 0.0, 100.0);
    b.cpu_op("aten::mm", 1.0, 20.0);
    b.kernel("gemm", 7, 2.0, 3.0, 10.0, 40.0);
    b.runtime("cudaDeviceSynchronize", 30.0, 50.0);
    let path = dir.join(name);
    std::fs::write(&path, b.json()).unwrap();
    path
}

#[test]
fn cache_miss_after_the_file_changes_and_a_damaged_entry_is_replaced() {
    let work = temp_dir("small");
    let cache = work.join("cache");
    let trace = small_trace(&work, "t.json", 0);
    let plain = run(&["summary", "--json"], &trace, None);
    assert!(plain.ok, "{}", plain.stderr);
    assert!(!cache.exists(), "nothing written without --cache");

    let miss = run(&["summary", "--json"], &trace, Some(&cache));
    assert_eq!(hits(&miss.stderr), 0, "{}", miss.stderr);
    let entry = expected_entry(&cache, &trace);
    assert_eq!(cache_files(&cache), vec![entry.clone()]);
    let hit = run(&["summary", "--json"], &trace, Some(&cache));
    assert_eq!(
        hit.stderr.trim_end(),
        format!("cache: read t.json from {}", entry.display())
    );
    assert_eq!(hit.stdout, plain.stdout);

    // A new mtime is a new key: a miss, then a hit on the new entry.
    let f = std::fs::File::options().write(true).open(&trace).unwrap();
    let later =
        std::fs::metadata(&trace).unwrap().modified().unwrap() + std::time::Duration::from_secs(5);
    f.set_modified(later).unwrap();
    drop(f);
    let touched = run(&["summary", "--json"], &trace, Some(&cache));
    assert_eq!(hits(&touched.stderr), 0, "{}", touched.stderr);
    assert_eq!(touched.stdout, plain.stdout);
    let entry = expected_entry(&cache, &trace);
    assert!(entry.exists());
    assert_eq!(
        hits(&run(&["summary", "--json"], &trace, Some(&cache)).stderr),
        1
    );

    // A damaged entry: one line, the right output, and the entry is rewritten.
    let mut bytes = std::fs::read(&entry).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0xff;
    bytes.truncate(n - 10);
    std::fs::write(&entry, &bytes).unwrap();
    let damaged = run(&["summary", "--json"], &trace, Some(&cache));
    let lines: Vec<&str> = damaged.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{}", damaged.stderr);
    assert!(
        lines[0].starts_with(&format!("cache: {} unreadable (", entry.display()))
            && lines[0].ends_with("); reading the trace"),
        "{}",
        lines[0]
    );
    assert_eq!(damaged.stdout, plain.stdout);
    let again = run(&["summary", "--json"], &trace, Some(&cache));
    assert_eq!(hits(&again.stderr), 1, "replaced: {}", again.stderr);
    assert_eq!(again.stdout, plain.stdout);

    // Not a cache file at all.
    std::fs::write(&entry, b"hello").unwrap();
    let garbage = run(&["summary"], &trace, Some(&cache));
    assert!(garbage.stderr.contains("unreadable"), "{}", garbage.stderr);
    assert!(garbage.ok);
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn cache_serves_every_rank_of_a_folder() {
    let work = temp_dir("folder");
    let ranks = work.join("ranks");
    std::fs::create_dir_all(&ranks).unwrap();
    small_trace(&ranks, "rank0.json", 0);
    small_trace(&ranks, "rank1.json", 1);
    let cache = work.join("cache");
    let plain = run(&["analyze", "--json"], &ranks, None);
    assert!(plain.ok, "{}", plain.stderr);
    let first = run(&["analyze", "--json"], &ranks, Some(&cache));
    assert_eq!(hits(&first.stderr), 0);
    assert_eq!(cache_files(&cache).len(), 2);
    let second = run(&["analyze", "--json"], &ranks, Some(&cache));
    assert_eq!(hits(&second.stderr), 2, "{}", second.stderr);
    assert_eq!(second.stdout, plain.stdout);
    let _ = std::fs::remove_dir_all(&work);
}
