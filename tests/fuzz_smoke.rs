//! The fuzz targets' harnesses on stable Rust, deterministically: seeds (small traces built in code, and
//! the shared traces cut small) mutated by bit flips, cuts, insertions and repeats. `scripts/fuzz.sh`
//! runs the same harnesses under cargo-fuzz (coverage-guided, nightly) for as long as asked.

use crate::common;

use profile_model::fuzzing::{analyses_and_report, gzip_and_reader, reader_in_pieces};

/// xorshift64*: the same mutations on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tokens a JSON trace is made of, inserted by the mutator.
const TOKENS: [&[u8]; 12] = [
    b"{",
    b"}",
    b"[",
    b"]",
    b",",
    b":",
    b"\"",
    b"\\u",
    b"\"ph\":\"X\"",
    b"\"dur\":",
    b"1e999",
    b"\"traceEvents\":[",
];

fn mutate(seed: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut d = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(d.len() + 1);
        match rng.below(5) {
            0 if !d.is_empty() => {
                let i = at.min(d.len() - 1);
                d[i] ^= 1 << rng.below(8);
            }
            1 => d.truncate(at),
            2 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                d.splice(at..at, t.iter().copied());
            }
            3 if at < d.len() => {
                let end = (at + rng.below(64)).min(d.len());
                let piece = d[at..end].to_vec();
                d.splice(at..at, piece);
            }
            _ => {
                let end = (at + rng.below(16)).min(d.len());
                d.drain(at..end);
            }
        }
    }
    d
}

fn seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut b = common::TraceBuilder::new();
    b.step(1, 0.0, 500.0);
    b.cpu_op("aten::mm", 10.0, 40.0);
    let k = b.kernel("gemm", 7, 20.0, 5.0, 60.0, 100.0);
    let _ = k;
    b.memcpy(
        "Memcpy HtoD (Pageable -> Device)",
        4096,
        7,
        200.0,
        5.0,
        210.0,
        20.0,
    );
    b.runtime("cudaDeviceSynchronize", 250.0, 30.0);
    b.graph_launch(7, 300.0, 5.0, &[("graph_k", 310.0, 20.0)]);
    out.push(b.json().into_bytes());
    out.push(
        br#"[{"ph":"B","name":"a","pid":1,"tid":1,"ts":1},{"ph":"E","pid":1,"tid":1,"ts":5}]"#
            .to_vec(),
    );
    out.push(br#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":"1.5","dur":2,"args":{"stream":7,"correlation":3}}],"distributedInfo":{"rank":1}}"#.to_vec());
    // The shared traces, cut small (their first 6 KB, closed as well as can be).
    if let Ok(dir) = std::fs::read_dir(common::traces_dir()) {
        let mut files: Vec<_> = dir.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for f in files
            .iter()
            .filter(|p| p.extension().is_some_and(|x| x == "gz" || x == "json"))
            .take(12)
        {
            let mut text = common::json_text(f);
            text.truncate(6 << 10);
            text.extend_from_slice(b"]}");
            out.push(text);
        }
    }
    out
}

fn run(harness: fn(&[u8]), rounds: usize, seed: u64) {
    let seeds = seeds();
    let mut rng = Rng(seed);
    for s in &seeds {
        harness(s);
    }
    for i in 0..rounds {
        let s = &seeds[i % seeds.len()];
        let input = mutate(s, &mut rng);
        let mut with_sizes = vec![rng.next() as u8];
        with_sizes.extend((0..8).map(|_| rng.next() as u8));
        with_sizes.extend_from_slice(&input);
        let r = std::panic::catch_unwind(|| harness(&with_sizes));
        if r.is_err() {
            let path = std::env::temp_dir().join(format!("pm-fuzz-crash-{seed}-{i}.bin"));
            let _ = std::fs::write(&path, &with_sizes);
            panic!(
                "round {i}: the harness panicked; input written to {}",
                path.display()
            );
        }
    }
}

#[test]
fn the_reader_reads_the_same_in_any_pieces() {
    run(reader_in_pieces, 20_000, 1);
}

#[test]
fn gzip_then_the_reader_reads_as_plain_text() {
    run(gzip_and_reader, 10_000, 2);
}

#[test]
fn analyses_and_the_report_run_on_whatever_loads() {
    run(|d| analyses_and_report(&d[9.min(d.len())..]), 10_000, 3);
}

/// Inputs the fuzzers once crashed on (`tests/fuzz_regressions/<target>-*.bin`), run again every time.
#[test]
fn inputs_that_once_crashed_a_fuzz_target_pass() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions");
    let mut ran = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let data = std::fs::read(&path).unwrap();
        let harness: fn(&[u8]) = match name.split('-').next() {
            Some("reader") => reader_in_pieces,
            Some("gzip") => gzip_and_reader,
            Some("analyses") => analyses_and_report,
            _ => panic!("{name}: name it <target>-<id>.bin"),
        };
        harness(&data);
        ran += 1;
    }
    assert!(ran > 0, "no regression inputs in {}", dir.display());
}
