//! A trace file, or a folder with one trace file per rank (or of per-rank folders), loaded into a [`TraceSet`] (native: files in
//! parallel, through the `--cache` when given). Shared by the CLI and the MCP server; it writes nothing
//! to stdout (the cache's notes go to stderr), so the MCP server's protocol stream stays clean.

use std::path::{Path, PathBuf};

use crate::table::{load_path, trace_files_in, TraceSet, TraceTable};
use crate::trace::LoadError;

/// Why nothing could be loaded: one line per reason (a file's load error, each skipped file of a
/// folder, then what that means for the folder), in the user's words.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadFailure {
    pub lines: Vec<String>,
}

impl LoadFailure {
    fn one(line: String) -> LoadFailure {
        LoadFailure { lines: vec![line] }
    }
}

impl std::fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.lines.join("\n"))
    }
}

/// Loads one trace file, through the cache in `cache` when given (its notes go to stderr).
pub fn load_file(path: &Path, cache: Option<&Path>) -> Result<TraceTable, LoadError> {
    let Some(dir) = cache else {
        return load_path(path);
    };
    let (table, notes) = crate::table::cache::load_path_cached(path, dir);
    for note in notes {
        eprintln!("{note}");
    }
    table
}

/// Loads a file, or every trace file of a folder (in parallel, one thread per core), through the
/// cache in `cache` when given. A folder's set keeps its notes and skipped files (`set.notes`,
/// `set.skipped`); it fails only when no file could be loaded.
pub fn load_set(path: &Path, cache: Option<&Path>) -> Result<TraceSet, LoadFailure> {
    if !path.is_dir() {
        return load_file(path, cache)
            .map(TraceSet::single)
            .map_err(|e| LoadFailure::one(e.to_string()));
    }
    let files = match trace_files_in(path) {
        Ok(f) if !f.is_empty() => f,
        Ok(_) => {
            return Err(LoadFailure::one(format!(
                "{} holds no .json or .json.gz files (nor do its subfolders, {} levels down)",
                path.display(),
                crate::table::loader::NESTED_TRACE_DEPTH
            )))
        }
        Err(e) => return Err(LoadFailure::one(format!("{}: {e}", path.display()))),
    };
    let loads = load_parallel(&files, cache)
        .into_iter()
        .zip(&files)
        .map(|(r, f)| r.map(|t| named_by_folder(t, path, f)))
        .collect();
    let set = TraceSet::from_loads(loads);
    if set.is_empty() {
        let mut lines: Vec<String> = set.skipped.iter().map(|f| f.reason.clone()).collect();
        lines.push(format!("no file in {} could be loaded", path.display()));
        return Err(LoadFailure { lines });
    }
    Ok(set)
}

/// A file whose own name says no rank, in a folder that does (`job/rank_3/trace.json`), is named
/// by its path under the loaded folder, so the set reads its rank from it (one job's ranks are
/// often written as `rank_N/` folders of identically named files).
fn named_by_folder(mut t: TraceTable, root: &Path, file: &Path) -> TraceTable {
    use crate::table::set::rank_from_file_name;
    if t.metadata.rank.is_some() || rank_from_file_name(&t.file).is_some() {
        return t;
    }
    let Ok(rel) = file.strip_prefix(root) else {
        return t;
    };
    let rel = rel.to_string_lossy().replace('\\', "/");
    if rank_from_file_name(&rel).is_some() {
        t.file = rel;
    }
    t
}

/// Loads `files` in parallel (one thread per core), each result at its file's place.
pub fn load_parallel(
    files: &[PathBuf],
    cache: Option<&Path>,
) -> Vec<Result<TraceTable, LoadError>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len())
        .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut slots: Vec<Option<Result<TraceTable, LoadError>>> =
        (0..files.len()).map(|_| None).collect();
    let results = std::sync::Mutex::new(&mut slots);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= files.len() {
                    break;
                }
                let r = load_file(&files[i], cache);
                results.lock().expect("no poisoned lock")[i] = Some(r);
            });
        }
    });
    slots
        .into_iter()
        .map(|r| r.expect("every file loaded"))
        .collect()
}
