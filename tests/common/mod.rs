//! Helpers shared by the integration tests: where the real traces are, and a column-by-column fingerprint.
#![allow(dead_code)]

use std::path::PathBuf;

use profile_model::table::TraceTable;

/// The folder of real traces: `PROFILE_MODEL_TRACES`, else `../shared/traces` beside the crate.
pub fn traces_dir() -> PathBuf {
    match std::env::var_os("PROFILE_MODEL_TRACES") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/traces"),
    }
}

/// Every trace file in the folder (sorted), failing clearly when the folder is absent.
pub fn trace_files() -> Vec<PathBuf> {
    let dir = traces_dir();
    let rd = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!("real traces not found at {} ({e}); set PROFILE_MODEL_TRACES to the shared traces folder", dir.display())
    });
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x != "md"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no trace files in {}", dir.display());
    files
}

pub fn trace(name: &str) -> PathBuf {
    traces_dir().join(name)
}

/// The file's JSON text (gunzipped with flate2, independently of the crate's own decoder).
pub fn json_text(path: &std::path::Path) -> Vec<u8> {
    use std::io::Read;
    let raw = std::fs::read(path).unwrap();
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    }
}

/// Every value of every column, row by row, as text: two tables with equal fingerprints are equal.
pub fn fingerprint(t: &TraceTable) -> Vec<String> {
    let mut out = Vec::with_capacity(t.len() + t.args.len() + 4);
    for r in 0..t.len() {
        out.push(format!(
            "{}|{}|{:?}|{}|{}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
            t.kind_at(r) as u8,
            t.phase_at(r),
            t.category_at(r),
            t.name_at(r),
            t.pid_at(r),
            t.tid_at(r),
            t.ts_at(r),
            t.dur_at(r),
            t.external_id_at(r),
            t.correlation_at(r),
            t.stream_at(r),
            t.device_at(r),
            t.flow_id_at(r)
        ));
    }
    for c in &t.args {
        let rows: Vec<u32> = c.rows.values().to_vec();
        let vals: Vec<String> = (0..rows.len()).map(|i| c.json_at(i).to_string()).collect();
        out.push(format!(
            "args_{} {} mixed={} rows={:?} values={:?}",
            c.key,
            c.type_name(),
            c.mixed_types,
            rows,
            vals
        ));
    }
    out.push(format!("diagnostics {:?}", t.diagnostics.list()));
    out.push(format!(
        "metadata {:?} {:?} {:?}",
        t.metadata.rank, t.metadata.device_name, t.metadata.top_level
    ));
    out.push(format!(
        "names {:?} {:?}",
        t.metadata.process_names, t.metadata.thread_names
    ));
    out
}
