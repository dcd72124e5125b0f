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

/// Files that look like two separate runs, split into a baseline and a candidate (file names).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunsSplit {
    /// Why they look like separate runs ([`TraceSet::separate_runs`]).
    pub why: String,
    pub baseline: Vec<String>,
    pub candidate: Vec<String>,
}

/// Ranks of one job start profiling within this of each other (ns): 10 minutes.
pub const SAME_JOB_START_SPREAD_NS: i64 = 600_000_000_000;

/// One rank's table.
#[derive(Clone, Debug)]
pub struct RankTrace {
    pub rank: i64,
    /// Where the rank number came from: `distributedInfo`, `file name` or `load order`.
    pub rank_source: &'static str,
    /// The file's position among all the files given (ranks of the same number keep this order).
    pub load_order: usize,
    pub table: TraceTable,
}

/// What telling ranks from separate runs reads of one rank ([`separate_runs_of`]): small, so a part
/// of the set held elsewhere (a worker) can hand it over.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RankIdentity {
    pub rank: i64,
    /// [`RankTrace::rank_source`].
    pub rank_source: String,
    /// [`RankTrace::load_order`].
    pub load_order: usize,
    pub file: String,
    /// `distributedInfo.world_size`.
    pub world_size: Option<i64>,
    /// `baseTimeNanoseconds`: when the recording started.
    pub start_ns: Option<i64>,
}

impl RankTrace {
    pub fn identity(&self) -> RankIdentity {
        RankIdentity {
            rank: self.rank,
            rank_source: self.rank_source.to_string(),
            load_order: self.load_order,
            file: self.table.file.clone(),
            world_size: self.table.metadata.world_size,
            start_ns: self.table.metadata.base_time_ns,
        }
    }
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

/// What the ranks of a set (rank, file; in load order) call for: each file of a rank seen before,
/// then the ranks missing between the lowest and the highest (when fewer than 64).
pub fn rank_notes(ranks: &[(i64, String)]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut used = std::collections::BTreeSet::new();
    for (rank, file) in ranks {
        if !used.insert(*rank) {
            notes.push(format!(
                "rank {rank} appears in more than one file ({file} is one); both are kept"
            ));
        }
    }
    let mut sorted: Vec<i64> = ranks.iter().map(|r| r.0).collect();
    crate::sort::sort(&mut sorted);
    notes.extend(missing_ranks_note(&sorted));
    notes
}

/// The note for a file that could not be loaded.
pub fn skipped_note(file: &str, reason: &str) -> String {
    format!("{file} was not loaded, so its rank is missing from every figure: {reason}")
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

/// The start of [`missing_ranks_note`]'s text.
pub const MISSING_RANKS: &str = "ranks missing between ";

/// The set's note on the ranks missing between its lowest and highest (`ranks` ascending; none
/// with fewer than two ranks, none missing, or 64 and more missing).
pub fn missing_ranks_note(ranks: &[i64]) -> Option<String> {
    if ranks.len() < 2 {
        return None;
    }
    let lo = ranks[0];
    let hi = ranks[ranks.len() - 1];
    let used: std::collections::BTreeSet<i64> = crate::sort::set_of(ranks.iter().copied());
    let missing: Vec<i64> = (lo..=hi).filter(|r| !used.contains(r)).collect();
    (!missing.is_empty() && missing.len() < 64)
        .then(|| format!("{MISSING_RANKS}{lo} and {hi}: {missing:?}"))
}

impl TraceSet {
    /// Builds the set from tables in load order: rank from `distributedInfo.rank`, else the file name,
    /// else the load order. Duplicate ranks are kept (both), counted and reported.
    pub fn from_tables(tables: Vec<TraceTable>) -> TraceSet {
        let given = tables.len();
        TraceSet::from_tables_at(tables.into_iter().enumerate().collect(), given)
    }

    /// The set of some of the `given` files, each table with its position among them (as
    /// [`TraceSet::from_tables`] numbers them): a part of a set held apart from the others (a shard
    /// worker's) keeps the ranks and order the whole set gives it. Notes about duplicate or missing
    /// ranks only see this part.
    pub fn from_tables_at(tables: Vec<(usize, TraceTable)>, given: usize) -> TraceSet {
        let mut set = TraceSet::default();
        let mut used = std::collections::BTreeSet::new();
        let mut ids = Vec::with_capacity(tables.len());
        let several = given > 1;
        for (i, mut table) in tables {
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
            }
            ids.push((rank, table.file.clone()));
            set.ranks.push(RankTrace {
                rank,
                rank_source: source,
                load_order: i,
                table,
            });
        }
        // Files of the same rank stay in load order.
        crate::sort::sort_by_key(&mut set.ranks, |r| (r.rank, r.load_order));
        set.notes = rank_notes(&ids);
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
        let given = tables.len();
        TraceSet::from_loads_at(tables.into_iter().enumerate().collect(), failed, given)
    }

    /// [`TraceSet::from_loads`] for tables given with their place in a larger load (see
    /// [`TraceSet::from_tables_at`]).
    pub fn from_loads_at(
        tables: Vec<(usize, TraceTable)>,
        failed: Vec<SkippedFile>,
        given: usize,
    ) -> TraceSet {
        let mut set = TraceSet::from_tables_at(tables, given);
        for f in &failed {
            set.notes.push(skipped_note(&f.file, &f.reason));
        }
        set.skipped = failed;
        set
    }

    /// Each rank's identity, in set order.
    pub fn identities(&self) -> Vec<RankIdentity> {
        self.ranks.iter().map(RankTrace::identity).collect()
    }

    /// Why these files look like separate runs rather than ranks of one job ([`separate_runs_of`]).
    pub fn separate_runs(&self) -> Option<String> {
        separate_runs_of(&self.identities())
    }

    /// The files as two runs to compare, when they look like separate runs ([`runs_split_of`]).
    pub fn runs_split(&self) -> Option<RunsSplit> {
        runs_split_of(&self.identities())
    }

    /// One file's set: its ranks when a merge tool wrote several into it
    /// ([`super::split::split_fused`]), else the one rank.
    pub fn single(table: TraceTable) -> TraceSet {
        TraceSet::from_tables(super::split::split_fused(table))
    }

    pub fn len(&self) -> usize {
        self.ranks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }
}

/// Why these files look like separate runs rather than ranks of one job, if they do: two files
/// claim the same rank, no file names its rank, each says the job has fewer ranks than were given,
/// or they were recorded far apart in time. (Ranks of one job are profiled together.) `ranks` in set
/// order (by rank, then load order).
pub fn separate_runs_of(ranks: &[RankIdentity]) -> Option<String> {
    if ranks.len() < 2 {
        return None;
    }
    let files = |a: &RankIdentity, b: &RankIdentity| format!("{} and {}", a.file, b.file);
    for (i, a) in ranks.iter().enumerate() {
        if let Some(b) = ranks[i + 1..].iter().find(|b| {
            b.rank == a.rank && a.rank_source != "load order" && b.rank_source == a.rank_source
        }) {
            return Some(format!("{} both say they are rank {}", files(a, b), a.rank));
        }
    }
    if ranks.iter().all(|r| r.rank_source == "load order") {
        return Some(
            "no file names its rank (no distributedInfo, no rank in the file name)".into(),
        );
    }
    let given = ranks.len() as i64;
    if let Some(w) = ranks
        .iter()
        .find_map(|r| r.world_size.filter(|&w| w < given))
    {
        return Some(format!(
            "a file says its job has {w} rank(s), but {given} files were given"
        ));
    }
    far_apart_in_time(ranks)
}

/// The files as two runs to compare, when they look like separate runs: with a rank repeated,
/// each rank's first file is the baseline; with start times, the files before the largest gap
/// in start time; otherwise the first half of the files. `ranks` in set order.
pub fn runs_split_of(ranks: &[RankIdentity]) -> Option<RunsSplit> {
    let why = separate_runs_of(ranks)?;
    let mut seen = std::collections::BTreeSet::new();
    let first_of_rank: Vec<bool> = ranks.iter().map(|r| seen.insert(r.rank)).collect();
    let in_baseline: Vec<bool> = if first_of_rank.iter().any(|f| !f) {
        first_of_rank
    } else if let Some(split) = split_at_largest_start_gap(ranks) {
        split
    } else {
        let half = ranks.len().div_ceil(2);
        (0..ranks.len()).map(|i| i < half).collect()
    };
    let pick = |want: bool| -> Vec<String> {
        ranks
            .iter()
            .zip(&in_baseline)
            .filter(|(_, b)| **b == want)
            .map(|(r, _)| r.file.clone())
            .collect()
    };
    Some(RunsSplit {
        why,
        baseline: pick(true),
        candidate: pick(false),
    })
}

/// With every file's start time known: the files that started before the largest gap.
fn split_at_largest_start_gap(ranks: &[RankIdentity]) -> Option<Vec<bool>> {
    let starts: Vec<i64> = ranks.iter().map(|r| r.start_ns).collect::<Option<_>>()?;
    let mut sorted = starts.clone();
    crate::sort::sort(&mut sorted);
    let (cut, _) = sorted
        .windows(2)
        .map(|w| (w[1], w[1] - w[0]))
        .max_by_key(|(_, gap)| *gap)?;
    Some(starts.iter().map(|&s| s < cut).collect())
}

/// Files whose recordings started more than [`SAME_JOB_START_SPREAD_NS`] apart.
fn far_apart_in_time(ranks: &[RankIdentity]) -> Option<String> {
    let starts: Vec<(i64, &RankIdentity)> = ranks
        .iter()
        .filter_map(|r| r.start_ns.map(|t| (t, r)))
        .collect();
    let lo = starts.iter().min_by_key(|s| s.0)?;
    let hi = starts.iter().max_by_key(|s| s.0)?;
    (hi.0 - lo.0 > SAME_JOB_START_SPREAD_NS).then(|| {
        format!(
            "{} was recorded {:.0} minutes after {}",
            hi.1.file,
            (hi.0 - lo.0) as f64 / 60e9,
            lo.1.file
        )
    })
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
