//! Several ranks of one job: one [`TraceTable`] per rank, with the rank found from the trace or the file name.

use serde::{Deserialize, Serialize};

use super::TraceTable;
use crate::trace::{DiagnosticKind, LoadError, LoadErrorKind};

/// A file of a rank set that could not be loaded: the other ranks are analysed without it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedFile {
    pub file: String,
    pub kind: LoadErrorKind,
    /// Why, in the user's words (the load error's message).
    pub reason: String,
}

impl SkippedFile {
    pub fn of(error: &LoadError) -> Self {
        SkippedFile {
            file: error.file.clone(),
            kind: error.kind.clone(),
            reason: error.message.clone(),
        }
    }
}

/// One rank's table.
#[derive(Clone, Debug)]
pub struct RankTrace {
    pub rank: i64,
    /// Where the rank number came from: `distributedInfo`, `file name` or `load order`.
    pub rank_source: &'static str,
    pub table: TraceTable,
}

/// All ranks loaded together, sorted by rank (ties in load order).
#[derive(Clone, Debug, Default)]
pub struct TraceSet {
    pub ranks: Vec<RankTrace>,
    /// Problems across files (duplicate or missing ranks, files not loaded), in plain words.
    pub notes: Vec<String>,
    /// Files given with the others that could not be loaded.
    pub skipped: Vec<SkippedFile>,
}

/// The rank a file name names: `rank-3`, `rank3`, `rank_3`, `worker3` (case-insensitive).
pub fn rank_from_file_name(name: &str) -> Option<i64> {
    let lower = name.to_ascii_lowercase();
    for tag in ["rank", "worker"] {
        let mut from = 0;
        while let Some(p) = lower[from..].find(tag) {
            let start = from + p + tag.len();
            let rest = &lower[start..];
            let rest = rest.strip_prefix(['-', '_', '.']).unwrap_or(rest);
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            if !digits.is_empty() {
                return digits.parse().ok();
            }
            from = start;
        }
    }
    None
}

impl TraceSet {
    /// Builds the set from tables in load order: rank from `distributedInfo.rank`, else the file name,
    /// else the load order. Duplicate ranks are kept (both), counted and reported.
    pub fn from_tables(tables: Vec<TraceTable>) -> TraceSet {
        let mut set = TraceSet::default();
        let mut used = std::collections::BTreeSet::new();
        let several = tables.len() > 1;
        for (i, mut table) in tables.into_iter().enumerate() {
            let (rank, source) = match table.metadata.rank {
                Some(r) => (r, "distributedInfo"),
                None => match rank_from_file_name(&table.file) {
                    Some(r) => (r, "file name"),
                    None => {
                        if several {
                            table
                                .diagnostics
                                .add(DiagnosticKind::MissingRank, || table.file.clone());
                        }
                        (i as i64, "load order")
                    }
                },
            };
            if !used.insert(rank) {
                let file = table.file.clone();
                table.diagnostics.add(DiagnosticKind::DuplicateRank, || {
                    format!("rank {rank} in {file}")
                });
                set.notes.push(format!(
                    "rank {rank} appears in more than one file ({file} is one); both are kept"
                ));
            }
            set.ranks.push(RankTrace {
                rank,
                rank_source: source,
                table,
            });
        }
        // Stable: files of the same rank stay in load order.
        set.ranks.sort_by_key(|r| r.rank);
        if set.ranks.len() > 1 {
            let lo = set.ranks.first().map_or(0, |r| r.rank);
            let hi = set.ranks.last().map_or(0, |r| r.rank);
            let missing: Vec<i64> = (lo..=hi).filter(|r| !used.contains(r)).collect();
            if !missing.is_empty() && missing.len() < 64 {
                set.notes
                    .push(format!("ranks missing between {lo} and {hi}: {missing:?}"));
            }
        }
        set
    }

    /// The set of the files that loaded, with the failures of the others recorded (and noted):
    /// a bad file in a rank folder costs its rank, never the others.
    pub fn from_loads(results: Vec<Result<TraceTable, LoadError>>) -> TraceSet {
        let mut tables = Vec::new();
        let mut failed = Vec::new();
        for r in results {
            match r {
                Ok(t) => tables.push(t),
                Err(e) => failed.push(SkippedFile::of(&e)),
            }
        }
        let mut set = TraceSet::from_tables(tables);
        for f in &failed {
            set.notes.push(format!(
                "{} was not loaded, so its rank is missing from every figure: {}",
                f.file, f.reason
            ));
        }
        set.skipped = failed;
        set
    }

    pub fn single(table: TraceTable) -> TraceSet {
        TraceSet::from_tables(vec![table])
    }

    pub fn len(&self) -> usize {
        self.ranks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_from_names() {
        assert_eq!(rank_from_file_name("rank-3.json.gz"), Some(3));
        assert_eq!(rank_from_file_name("trace_rank_12.json"), Some(12));
        assert_eq!(rank_from_file_name("worker7.pt.trace.json"), Some(7));
        assert_eq!(rank_from_file_name("Rank5"), Some(5));
        assert_eq!(rank_from_file_name("hta__sampled_rank-1.json.gz"), Some(1));
        assert_eq!(rank_from_file_name("trace.json"), None);
    }
}
