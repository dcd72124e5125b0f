//! Fuzzing harnesses, shared by the `cargo fuzz` targets (`fuzz/`) and the stable smoke test
//! (`tests/fuzz_smoke.rs`): each takes arbitrary bytes and panics only on a real bug (a panic in the
//! core, or two ways of reading the same bytes that disagree).

use crate::analysis::all::{analyze, AnalysisOptions};
use crate::report::diagnosis::diagnose;
use crate::table::{load_bytes, TraceLoader, TraceSet, TraceTable};
use crate::trace::crc32::Crc32;
use crate::trace::LoadError;

/// What a load gave, reduced to what must not depend on how the bytes were fed.
#[derive(Debug, PartialEq)]
enum Outcome {
    Loaded { rows: usize, names: Vec<String> },
    Refused(crate::trace::LoadErrorKind),
}

fn outcome(r: &Result<TraceTable, LoadError>) -> Outcome {
    match r {
        Ok(t) => Outcome::Loaded {
            rows: t.len(),
            names: (0..t.len().min(64))
                .map(|i| t.name_at(i).to_string())
                .collect(),
        },
        Err(e) => Outcome::Refused(e.kind.clone()),
    }
}

/// Feeds `bytes` in pieces whose sizes come from `sizes` (cycled; 0 counts as 1).
fn load_in_pieces(bytes: &[u8], sizes: &[u8]) -> Result<TraceTable, LoadError> {
    let mut loader = TraceLoader::new("fuzz.json", Some(bytes.len() as u64));
    let mut at = 0;
    let mut i = 0;
    while at < bytes.len() {
        let size = sizes
            .get(i % sizes.len().max(1))
            .map_or(7, |&s| s.max(1) as usize);
        let end = (at + size).min(bytes.len());
        loader.feed(&bytes[at..end])?;
        at = end;
        i += 1;
    }
    loader.finish()
}

/// The resumable reader: the bytes fed whole and fed in random pieces load the same (or are refused
/// the same way). The first byte picks how many of the next bytes give the piece sizes.
pub fn reader_in_pieces(data: &[u8]) {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let (sizes, bytes) = rest.split_at((n as usize % 16).min(rest.len()));
    let whole = load_bytes("fuzz.json", bytes);
    let pieces = load_in_pieces(bytes, sizes);
    assert_eq!(outcome(&whole), outcome(&pieces), "whole vs in pieces");
}

/// A gzip file of `text` (one member, stored blocks compressed by miniz_oxide) with a right trailer.
pub fn gzip_of(text: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    out.extend(miniz_oxide::deflate::compress_to_vec(text, 6));
    let mut crc = Crc32::new();
    crc.update(text);
    out.extend(crc.value().to_le_bytes());
    out.extend((text.len() as u32).to_le_bytes());
    out
}

/// Gzip then the reader: the bytes gzipped load as the plain bytes do, in any pieces; and the bytes
/// taken as (damaged) gzip data never panic.
pub fn gzip_and_reader(data: &[u8]) {
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let (sizes, bytes) = rest.split_at((n as usize % 16).min(rest.len()));
    let plain = load_bytes("fuzz.json", bytes);
    let gz = load_in_pieces(&gzip_of(bytes), sizes);
    if bytes.starts_with(&[0x1f, 0x8b]) {
        // Plain bytes that are (damaged) gzip themselves are read as gzip, gzipped they are a gzip
        // inside a gzip: two different refusals, both right.
        return;
    }
    match (&plain, &gz) {
        // An empty or cut text is said of the gzip file (its sizes differ), same kind.
        (Err(a), Err(b)) => assert_eq!(a.kind, b.kind, "plain vs gzip: {} / {}", a, b),
        _ => assert_eq!(outcome(&plain), outcome(&gz), "plain vs gzip"),
    }
    let mut damaged = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    damaged.extend_from_slice(bytes);
    let _ = load_in_pieces(&damaged, sizes);
}

/// The analyses (both modes), the report and a comparison over whatever the loader accepts.
pub fn analyses_and_report(data: &[u8]) {
    let Ok(table) = load_bytes("fuzz.json", data) else {
        return;
    };
    let set = TraceSet::single(table);
    let _ = analyze(&set, &AnalysisOptions::default());
    let _ = analyze(&set, &AnalysisOptions::hta_compat());
    let report = diagnose(&set);
    assert!(
        !report.main_finding.is_empty(),
        "a report always has a main finding"
    );
    let idle: f64 = report.idle_attribution.iter().map(|s| s.time_us).sum();
    assert!(idle.is_finite() && idle >= 0.0, "idle attribution {idle}");
    let c = crate::report::compare::compare(&set, &set);
    assert!(
        c.total.change.abs() < 1e-9,
        "a trace against itself: {}",
        c.total.change
    );
}
