//! The CLI's opt-in table cache (`--cache DIR`, native only): a trace file's [`TraceTable`] kept as a stored table with Parquet parts ([`super::store`]), read instead of the JSON while the file is unchanged.
//!
//! The key of a trace file is its canonical path, its size and its modification time in ns
//! ([`cache_key`]); the cache file is `DIR/<FNV-1a 64 of the key, 16 hex>.pmcache.parquet`. A changed
//! file (size or mtime) has another key, so its old entry is never read again and a new one is
//! written. An entry that cannot be read (damaged, another format, or not this file's table) is
//! named in a note and replaced. Nothing is written without `--cache`.

use std::path::{Path, PathBuf};

use super::store::{table_from_parquet, table_to_parquet};
use super::{load_path, TraceTable};
use crate::trace::LoadError;

/// Ending of a cache file's name.
pub const CACHE_SUFFIX: &str = ".pmcache.parquet";

/// FNV-1a, 64 bits, byte by byte.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The key of a trace file: `canonical path \n size \n mtime ns` (ns since the Unix epoch, negative
/// before it), and the file's size.
pub fn cache_key(path: &Path) -> std::io::Result<(String, u64)> {
    let canonical = std::fs::canonicalize(path)?;
    let meta = std::fs::metadata(&canonical)?;
    let mtime_ns: i128 = match meta.modified()?.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    };
    Ok((
        format!("{}\n{}\n{mtime_ns}", canonical.display(), meta.len()),
        meta.len(),
    ))
}

/// Where the cache keeps the table of a file with this key.
pub fn cache_file(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{:016x}{CACHE_SUFFIX}", fnv1a64(key.as_bytes())))
}

/// Loads a trace file through the cache in `dir`: the stored table when a fresh entry is there, else
/// the trace (then stored). Returns the table and the lines to show on stderr (a hit, an unreadable
/// entry, an entry that could not be written).
pub fn load_path_cached(path: &Path, dir: &Path) -> (Result<TraceTable, LoadError>, Vec<String>) {
    let mut notes = Vec::new();
    let Ok((key, size)) = cache_key(path) else {
        // Missing or unreadable: the loader says why.
        return (load_path(path), notes);
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = cache_file(dir, &key);
    match std::fs::read(&file) {
        Ok(bytes) => match table_from_parquet(&bytes) {
            Ok(t) if t.file == name && t.metadata.file_bytes == size => {
                notes.push(format!("cache: read {name} from {}", file.display()));
                return (Ok(t), notes);
            }
            Ok(t) => notes.push(format!(
                "cache: {} unreadable (it holds {} of {} bytes, expected {name} of {size} bytes); reading the trace",
                file.display(),
                t.file,
                t.metadata.file_bytes
            )),
            Err(e) => notes.push(format!(
                "cache: {} unreadable ({e}); reading the trace",
                file.display()
            )),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => notes.push(format!(
            "cache: {} unreadable ({e}); reading the trace",
            file.display()
        )),
    }
    let loaded = load_path(path);
    if let Ok(t) = &loaded {
        if let Err(e) = store(t, dir, &file) {
            notes.push(format!("cache: could not write {} ({e})", file.display()));
        }
    }
    (loaded, notes)
}

/// Writes the entry beside its place and renames it there, so a reader never sees half a file.
fn store(t: &TraceTable, dir: &Path, file: &Path) -> Result<(), String> {
    let bytes = table_to_parquet(t).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let mut tmp = file.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let written = std::fs::write(&tmp, &bytes).and_then(|()| std::fs::rename(&tmp, file));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_the_published_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
