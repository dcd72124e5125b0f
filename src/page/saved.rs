//! What this browser keeps after the user says Keep (plain Rust, tested natively): the index of saved
//! traces the empty page lists, the keys the cache stores them under, and what to tell the user when
//! storing or reading them fails.
//!
//! One saved trace is: its results (JSON, keyed by the set's key), one table entry per rank (Arrow
//! IPC bytes, keyed by [`table_key`]) and one small index entry ([`SavedEntry`]), so that the list
//! never reads the tables.

use serde::{Deserialize, Serialize};

/// One file of a saved set, as the browser describes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedFile {
    pub name: String,
    pub size: u64,
    /// The file's last-modified time, ms since 1970.
    pub last_modified: u64,
}

/// The key of a set of files: `name:size:lastModified` of each, sorted, joined by `|`. Another file
/// with the same name but another size or date has another key, so stale results are never offered.
pub fn key_of(files: &[SavedFile]) -> String {
    let mut parts: Vec<String> = files
        .iter()
        .map(|f| format!("{}:{}:{}", f.name, f.size, f.last_modified))
        .collect();
    crate::sort::sort(&mut parts);
    parts.join("|")
}

/// The key of rank `rank_index`'s table of the set keyed `key`.
pub fn table_key(key: &str, rank_index: usize) -> String {
    format!("{key}#{rank_index}")
}

/// The index entry of one saved trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedEntry {
    /// [`key_of`] its files.
    pub key: String,
    pub files: Vec<SavedFile>,
    /// When it was saved, ms since 1970.
    pub saved_ms: f64,
    /// Bytes of each rank's stored table, in rank order.
    pub table_bytes: Vec<u64>,
    /// Bytes of the stored results (JSON).
    pub results_bytes: u64,
    /// The tables' storage format (`table::store::STORE_FORMAT` when saved).
    pub format: u32,
}

impl SavedEntry {
    /// Bytes this entry takes in the browser's storage (tables and results).
    pub fn bytes(&self) -> u64 {
        self.table_bytes.iter().sum::<u64>() + self.results_bytes
    }

    pub fn rank_count(&self) -> usize {
        self.table_bytes.len()
    }

    /// The files' names, comma-separated.
    pub fn names(&self) -> String {
        self.files
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Bytes of the files themselves.
    pub fn file_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }

    /// "2026-12-05 21:40 UTC".
    pub fn saved_text(&self) -> String {
        utc_minutes(self.saved_ms)
    }
}

/// The saved traces, newest first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SavedList {
    pub entries: Vec<SavedEntry>,
}

impl SavedList {
    /// The list of these entries, newest first (a key seen twice keeps its newest entry).
    pub fn of(entries: Vec<SavedEntry>) -> Self {
        let mut list = SavedList::default();
        for e in entries {
            list.upsert(e);
        }
        list
    }

    /// Adds an entry, or replaces the entry of the same key when this one is newer.
    pub fn upsert(&mut self, entry: SavedEntry) {
        if let Some(old) = self.get(&entry.key) {
            if old.saved_ms > entry.saved_ms {
                return;
            }
        }
        self.remove(&entry.key);
        self.entries.push(entry);
        crate::sort::sort_by(&mut self.entries, |a, b| b.saved_ms.total_cmp(&a.saved_ms));
    }

    pub fn remove(&mut self, key: &str) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| e.key != key);
        self.entries.len() != before
    }

    pub fn get(&self, key: &str) -> Option<&SavedEntry> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// Bytes all entries take.
    pub fn total_bytes(&self) -> u64 {
        self.entries.iter().map(SavedEntry::bytes).sum()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Why a saved trace could not be stored or opened; the page says so in one sentence and removes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheProblem {
    /// The browser's storage quota for the page is used up (QuotaExceededError).
    Quota,
    /// The browser refused the write for another reason (private mode, storage disabled).
    Denied,
    /// A table entry could not be read back (damaged, or written by another version).
    Corrupt,
    /// A table entry is missing.
    Missing,
    /// The worker could not prepare the tables for storage.
    NotPrepared,
}

impl CacheProblem {
    pub fn message(&self) -> &'static str {
        match self {
            CacheProblem::Quota => {
                "This browser's storage for this page is full, so the trace was not saved and the \
                 results stay on screen; \"Forget saved traces\" below makes room."
            }
            CacheProblem::Denied => {
                "This browser did not let the page save the trace; the results stay on screen."
            }
            CacheProblem::Corrupt => {
                "The saved trace could not be read back (it is damaged or was saved by another version), \
                 so it was removed: load the trace file again."
            }
            CacheProblem::Missing => {
                "Part of the saved trace is missing from this browser, so it was removed: load the trace \
                 file again."
            }
            CacheProblem::NotPrepared => {
                "The page could not prepare the trace for saving, so nothing was kept; the results \
                 stay on screen."
            }
        }
    }
}

/// `ms` since 1970 as "YYYY-MM-DD HH:MM UTC".
pub fn utc_minutes(ms: f64) -> String {
    let secs = (ms / 1000.0).floor() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + (m <= 2) as i64;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        (rem % 3600) / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, saved_ms: f64, tables: &[u64]) -> SavedEntry {
        SavedEntry {
            key: key.into(),
            files: vec![SavedFile {
                name: key.into(),
                size: 100,
                last_modified: 5,
            }],
            saved_ms,
            table_bytes: tables.to_vec(),
            results_bytes: 10,
            format: 1,
        }
    }

    #[test]
    fn key_is_sorted_and_names_size_and_date() {
        let a = SavedFile {
            name: "b.json".into(),
            size: 2,
            last_modified: 3,
        };
        let b = SavedFile {
            name: "a.json".into(),
            size: 4,
            last_modified: 5,
        };
        assert_eq!(
            key_of(&[a.clone(), b.clone()]),
            "a.json:4:5|b.json:2:3",
            "sorted"
        );
        assert_eq!(key_of(&[b.clone(), a.clone()]), key_of(&[a.clone(), b]));
        let touched = SavedFile {
            last_modified: 9,
            ..a.clone()
        };
        assert_ne!(
            key_of(&[a]),
            key_of(&[touched]),
            "a newer file is another key"
        );
        assert_eq!(table_key("k", 2), "k#2");
    }

    #[test]
    fn list_is_newest_first_and_counts_bytes() {
        let mut list = SavedList::of(vec![
            entry("old", 1.0, &[100]),
            entry("new", 2.0, &[50, 50]),
        ]);
        assert_eq!(list.entries[0].key, "new");
        assert_eq!(list.len(), 2);
        assert_eq!(list.total_bytes(), 110 + 110);
        assert_eq!(list.get("new").unwrap().rank_count(), 2);
        // Saved again: replaced, not duplicated.
        list.upsert(entry("old", 3.0, &[1]));
        assert_eq!(list.len(), 2);
        assert_eq!(list.entries[0].key, "old");
        assert_eq!(list.total_bytes(), 11 + 110);
        // An older copy of an entry does not replace it.
        list.upsert(entry("old", 0.5, &[1000]));
        assert_eq!(list.get("old").unwrap().bytes(), 11);
        assert!(list.remove("old"));
        assert!(!list.remove("old"));
        assert_eq!(list.len(), 1);
    }

    #[test]
    fn entry_texts() {
        let e = entry("t.json", 1_764_970_800_000.0, &[1]);
        assert_eq!(e.names(), "t.json");
        assert_eq!(e.file_bytes(), 100);
        assert_eq!(e.saved_text(), "2025-12-05 21:40 UTC");
        assert_eq!(utc_minutes(0.0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_minutes(951_782_400_000.0), "2000-02-29 00:00 UTC");
    }

    #[test]
    fn every_problem_says_what_happened_in_one_sentence() {
        for p in [
            CacheProblem::Quota,
            CacheProblem::Denied,
            CacheProblem::Corrupt,
            CacheProblem::Missing,
            CacheProblem::NotPrepared,
        ] {
            let m = p.message();
            assert!(m.ends_with('.'), "{m}");
            assert_eq!(m.matches(". ").count(), 0, "one sentence: {m}");
        }
        assert!(CacheProblem::Quota
            .message()
            .contains("storage for this page is full"));
    }
}
