//! The reduce step past one machine: the cross-rank results (stragglers, the per-rank tables) from
//! per-rank `analyze --json` outputs, with the functions `analyze` runs on a folder.
//!
//! Each rank's output carries what the cross-rank analyses need (`straggler_inputs`); [`merge`]
//! checks the outputs belong together (one mode, each rank once), reduces the stragglers with
//! [`stragglers_from_inputs`] (the reduce `analyze` itself uses) and lists the per-rank tables in
//! rank order, as `analyze` lists them for a folder.
//!
//! [`merge_analyses`] is the same reduce for whole [`AllAnalyses`] of shards of one set (the page's
//! workers each analyse some of the ranks).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::all::{AllAnalyses, EXACT_MODE_NOTE};
use super::collectives::{collectives_from_inputs, CollectiveInputs, Collectives};
use super::idle::StreamIdle;
use super::kernel_merge::{combine_kernel_stats, MEDIAN_NOTE};
use super::kernels::RankKernelBreakdown;
use super::kernels::{by_type_all_ranks, KernelBreakdown};
use super::launch::LaunchStats;
use super::memcpy::MemoryOps;
use super::options::Mode;
use super::overlap::CommCompOverlap;
use super::queue::StreamQueue;
use super::steps::RankSteps;
use super::stragglers::{stragglers_from_inputs, StragglerInputs, Stragglers};
use super::temporal::TemporalBreakdown;
use crate::table::set::{missing_ranks_note, MISSING_RANKS};

/// The cross-rank results of a set of ranks analysed one by one. Field names are those of
/// [`AllAnalyses`]; `kernel_breakdown_ranks` is `kernel_breakdown.ranks`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MergedAnalyses {
    pub mode: Mode,
    /// Ranks merged, ascending.
    pub ranks: Vec<i64>,
    pub stragglers: Stragglers,
    pub temporal_breakdown: Vec<TemporalBreakdown>,
    pub idle_time_breakdown: Vec<StreamIdle>,
    pub comm_comp_overlap: Vec<CommCompOverlap>,
    pub kernel_launch_stats: Vec<LaunchStats>,
    pub queue_length: Vec<StreamQueue>,
    pub memory_bandwidth: Vec<MemoryOps>,
    pub profiler_steps: Vec<RankSteps>,
    pub kernel_breakdown_ranks: Vec<RankKernelBreakdown>,
    /// Collectives across the merged ranks (from each output's `collective_inputs`).
    #[serde(default)]
    pub collectives: Collectives,
    /// The outputs merged and the ranks each held.
    pub sources: Vec<MergeSource>,
}

/// One merged output.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MergeSource {
    pub file: String,
    pub ranks: Vec<i64>,
}

/// What [`merge`] keeps of one `analyze --json` output (the rest is dropped as it is read).
#[derive(Clone, Debug, Default)]
pub struct MergePart {
    pub file: String,
    pub mode: Mode,
    pub ranks: Vec<i64>,
    pub straggler_inputs: Vec<StragglerInputs>,
    pub temporal_breakdown: Vec<TemporalBreakdown>,
    pub idle_time_breakdown: Vec<StreamIdle>,
    pub comm_comp_overlap: Vec<CommCompOverlap>,
    pub kernel_launch_stats: Vec<LaunchStats>,
    pub queue_length: Vec<StreamQueue>,
    pub memory_bandwidth: Vec<MemoryOps>,
    pub profiler_steps: Vec<RankSteps>,
    pub kernel_breakdown_ranks: Vec<RankKernelBreakdown>,
    pub collective_inputs: Vec<CollectiveInputs>,
}

impl MergePart {
    /// The part of one analysis (of one rank, or of several).
    pub fn of(file: &str, all: AllAnalyses) -> MergePart {
        MergePart {
            file: file.to_string(),
            mode: all.mode,
            ranks: all.ranks,
            straggler_inputs: all.straggler_inputs,
            temporal_breakdown: all.temporal_breakdown,
            idle_time_breakdown: all.idle_time_breakdown,
            comm_comp_overlap: all.comm_comp_overlap,
            kernel_launch_stats: all.kernel_launch_stats,
            queue_length: all.queue_length,
            memory_bandwidth: all.memory_bandwidth,
            profiler_steps: all.profiler_steps,
            kernel_breakdown_ranks: all.kernel_breakdown.ranks,
            collective_inputs: all.collective_inputs,
        }
    }
}

/// Why outputs cannot be merged.
#[derive(Clone, Debug, PartialEq)]
pub enum MergeError {
    /// No output given.
    Empty,
    /// A file that could not be read.
    Unreadable { file: String, reason: String },
    /// A file that is not an `analyze --json` output (or one without `straggler_inputs`).
    NotAnalyzeOutput { file: String, reason: String },
    /// The same rank in two outputs (or twice in one).
    SameRank {
        rank: i64,
        first: String,
        second: String,
    },
    /// Outputs analysed in different modes (`--compat hta` and not).
    MixedModes {
        first: String,
        first_mode: Mode,
        second: String,
        second_mode: Mode,
    },
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MergeError::Empty => write!(f, "no analyze outputs to merge"),
            MergeError::Unreadable { file, reason } => write!(f, "{file}: {reason}"),
            MergeError::NotAnalyzeOutput { file, reason } => write!(
                f,
                "{file} is not an output of `profile-model analyze --json`: {reason}"
            ),
            MergeError::SameRank {
                rank,
                first,
                second,
            } => write!(
                f,
                "rank {rank} is in {first} and in {second}: give each rank's output once"
            ),
            MergeError::MixedModes {
                first,
                first_mode,
                second,
                second_mode,
            } => write!(
                f,
                "{first} was analysed in {} mode and {second} in {} mode: analyze every rank the same way \
                 (with or without --compat hta)",
                first_mode.as_str(),
                second_mode.as_str()
            ),
        }
    }
}

impl std::error::Error for MergeError {}

/// Reads one `analyze --json` output. `file` names it in errors.
pub fn parse_part(file: &str, text: &str) -> Result<MergePart, MergeError> {
    let not = |reason: String| MergeError::NotAnalyzeOutput {
        file: file.to_string(),
        reason,
    };
    if text.starts_with('\u{1f}') {
        return Err(not(
            "not JSON but gzip (a trace? merge takes `analyze --json` outputs)".into(),
        ));
    }
    let doc: Value = serde_json::from_str(text).map_err(|e| not(format!("not JSON ({e})")))?;
    let Some(obj) = doc.as_object() else {
        return Err(not("not a JSON object".into()));
    };
    let missing: Vec<&str> = ["mode", "ranks", "stragglers", "temporal_breakdown"]
        .into_iter()
        .filter(|k| !obj.contains_key(*k))
        .collect();
    if !missing.is_empty() {
        return Err(not(format!("no {} key", missing.join(", "))));
    }
    if !obj.contains_key("straggler_inputs") {
        return Err(not(
            "no straggler_inputs (written by an older profile-model): run analyze --json again"
                .into(),
        ));
    }
    let all = AllAnalyses::deserialize(doc).map_err(|e| not(e.to_string()))?;
    if all.straggler_inputs.len() != all.ranks.len() {
        return Err(not(format!(
            "straggler_inputs has {} entries for {} ranks",
            all.straggler_inputs.len(),
            all.ranks.len()
        )));
    }
    Ok(MergePart::of(file, all))
}

/// Rows of every part, stably sorted by rank: the order `analyze` gives a folder (ranks ascending,
/// each rank's rows in its own order).
fn by_rank<P, T: Clone>(
    parts: &[P],
    rows: impl Fn(&P) -> &Vec<T>,
    rank: impl Fn(&T) -> i64,
) -> Vec<T> {
    let mut out: Vec<T> = parts.iter().flat_map(|p| rows(p).iter().cloned()).collect();
    crate::sort::sort_by_key(&mut out, |r| rank(r));
    out
}

/// Checks the parts belong together: one mode, each rank in one part only.
fn check_parts(parts: &[MergePart]) -> Result<(), MergeError> {
    let Some(first) = parts.first() else {
        return Err(MergeError::Empty);
    };
    if let Some(other) = parts.iter().find(|p| p.mode != first.mode) {
        return Err(MergeError::MixedModes {
            first: first.file.clone(),
            first_mode: first.mode,
            second: other.file.clone(),
            second_mode: other.mode,
        });
    }
    let mut seen: std::collections::BTreeMap<i64, &str> = Default::default();
    for p in parts {
        for &rank in &p.ranks {
            if let Some(prev) = seen.insert(rank, &p.file) {
                return Err(MergeError::SameRank {
                    rank,
                    first: prev.to_string(),
                    second: p.file.clone(),
                });
            }
        }
    }
    Ok(())
}

/// The reduce: the cross-rank results of the parts (each rank once, one mode), equal to those of
/// `analyze` over all their ranks at once.
pub fn merge(parts: Vec<MergePart>) -> Result<MergedAnalyses, MergeError> {
    check_parts(&parts)?;
    let inputs = by_rank(&parts, |p| &p.straggler_inputs, |r| r.rank);
    let mode = parts[0].mode;
    let mut ranks: Vec<i64> = parts.iter().flat_map(|p| p.ranks.iter().copied()).collect();
    crate::sort::sort(&mut ranks);
    Ok(MergedAnalyses {
        mode,
        ranks,
        stragglers: stragglers_from_inputs(&inputs, mode),
        temporal_breakdown: by_rank(&parts, |p| &p.temporal_breakdown, |r| r.rank),
        idle_time_breakdown: by_rank(&parts, |p| &p.idle_time_breakdown, |r| r.rank),
        comm_comp_overlap: by_rank(&parts, |p| &p.comm_comp_overlap, |r| r.rank),
        kernel_launch_stats: by_rank(&parts, |p| &p.kernel_launch_stats, |r| r.rank),
        queue_length: by_rank(&parts, |p| &p.queue_length, |r| r.rank),
        memory_bandwidth: by_rank(&parts, |p| &p.memory_bandwidth, |r| r.rank),
        profiler_steps: by_rank(&parts, |p| &p.profiler_steps, |r| r.rank),
        kernel_breakdown_ranks: by_rank(&parts, |p| &p.kernel_breakdown_ranks, |r| r.rank),
        collectives: collectives_from_inputs(&by_rank(
            &parts,
            |p| &p.collective_inputs,
            |r| r.rank,
        )),
        sources: parts
            .iter()
            .map(|p| MergeSource {
                file: p.file.clone(),
                ranks: p.ranks.clone(),
            })
            .collect(),
    })
}

/// The [`AllAnalyses`] of a set from those of shards of it (disjoint sets of its ranks, one mode,
/// in any order): what [`analyze`](super::all::analyze) gives over all the ranks at once.
///
/// Per-rank lists are concatenated in rank order; the stragglers, the by-type table over ranks and
/// the bounded-output notes are computed again over all ranks. Exact but for
/// `kernel_breakdown.kernels_all_ranks` / `top_all_ranks` of several ranks: their std is pooled
/// (equal up to rounding) and a median over several ranks is approximated (see
/// [`combine_kernel_stats`]; [`MEDIAN_NOTE`] is then added to `kernel_breakdown.notes`). Set notes
/// are those of the shards, once each, with the missing-ranks note made again for all the ranks.
pub fn merge_analyses(parts: Vec<AllAnalyses>) -> AllAnalyses {
    let mode = parts.first().map(|p| p.mode).unwrap_or_default();
    let mut ranks: Vec<i64> = parts.iter().flat_map(|p| p.ranks.iter().copied()).collect();
    crate::sort::sort(&mut ranks);
    let straggler_inputs = by_rank(&parts, |p| &p.straggler_inputs, |r| r.rank);
    let kernel_breakdown = merge_kernel_breakdowns(&parts, mode == Mode::HtaCompat);
    let idle_time_breakdown = by_rank(&parts, |p| &p.idle_time_breakdown, |r| r.rank);
    let queue_length = by_rank(&parts, |p| &p.queue_length, |r| r.rank);
    let mut notes = set_and_rank_notes(&parts, &ranks);
    if mode == Mode::Exact {
        notes.push(EXACT_MODE_NOTE.into());
    }
    notes.extend(super::bounded::notes(
        &idle_time_breakdown,
        &queue_length,
        &kernel_breakdown,
    ));
    let collective_inputs = by_rank(&parts, |p| &p.collective_inputs, |r| r.rank);
    AllAnalyses {
        mode,
        collectives: collectives_from_inputs(&collective_inputs),
        collective_inputs,
        stragglers: stragglers_from_inputs(&straggler_inputs, mode),
        straggler_inputs,
        kernel_breakdown,
        temporal_breakdown: by_rank(&parts, |p| &p.temporal_breakdown, |r| r.rank),
        idle_time_breakdown,
        comm_comp_overlap: by_rank(&parts, |p| &p.comm_comp_overlap, |r| r.rank),
        kernel_launch_stats: by_rank(&parts, |p| &p.kernel_launch_stats, |r| r.rank),
        queue_length,
        memory_bandwidth: by_rank(&parts, |p| &p.memory_bandwidth, |r| r.rank),
        profiler_steps: by_rank(&parts, |p| &p.profiler_steps, |r| r.rank),
        frequent_kernel_sequences: by_rank(&parts, |p| &p.frequent_kernel_sequences, |r| r.rank),
        critical_path: by_rank(&parts, |p| &p.critical_path, |r| r.rank),
        roofline: by_rank(&parts, |p| &p.roofline, |r| r.rank),
        ranks,
        notes,
    }
}

/// The kernel breakdown of the shards together. Its notes are those every shard has (the mode's
/// note, and "no GPU kernels" only when no shard has any), then [`MEDIAN_NOTE`] when it applies.
fn merge_kernel_breakdowns(parts: &[AllAnalyses], compat: bool) -> KernelBreakdown {
    let ranks = by_rank(parts, |p| &p.kernel_breakdown.ranks, |r| r.rank);
    let (kernels_all_ranks, top_all_ranks, approximate) = combine_kernel_stats(&ranks);
    let mut notes: Vec<String> = parts.first().map_or_else(Vec::new, |first| {
        first
            .kernel_breakdown
            .notes
            .iter()
            .filter(|n| parts.iter().all(|p| p.kernel_breakdown.notes.contains(n)))
            .cloned()
            .collect()
    });
    if approximate {
        notes.push(MEDIAN_NOTE.into());
    }
    KernelBreakdown {
        by_type_all_ranks: by_type_all_ranks(&ranks, compat),
        kernels_all_ranks,
        top_all_ranks,
        ranks,
        notes,
    }
}

/// The rank of a `rank N: ...` note (those `analyze` writes for each rank's own notes).
fn rank_of_note(note: &str) -> Option<i64> {
    let (head, _) = note.strip_prefix("rank ")?.split_once(": ")?;
    head.parse().ok()
}

/// The notes `analyze` writes before the exact-mode note: the set's notes (each once, the
/// missing-ranks note made again for `ranks`), then each rank's notes in rank order.
fn set_and_rank_notes(parts: &[AllAnalyses], ranks: &[i64]) -> Vec<String> {
    let mut set_notes: Vec<String> = Vec::new();
    let mut rank_notes: Vec<(i64, String)> = Vec::new();
    for p in parts {
        // What `analyze` wrote after the set and rank notes: the bounded notes, the exact note.
        let tail =
            super::bounded::notes(&p.idle_time_breakdown, &p.queue_length, &p.kernel_breakdown);
        let mut own = &p.notes[..];
        if own.ends_with(&tail) {
            own = &own[..own.len() - tail.len()];
        }
        if own.last().is_some_and(|n| n == EXACT_MODE_NOTE) {
            own = &own[..own.len() - 1];
        }
        for n in own {
            match rank_of_note(n) {
                Some(r) => rank_notes.push((r, n.clone())),
                None if n.starts_with(MISSING_RANKS) => {}
                None if !set_notes.contains(n) => set_notes.push(n.clone()),
                None => {}
            }
        }
    }
    // The set writes the missing-ranks note after its duplicate-rank notes.
    if let Some(missing) = missing_ranks_note(ranks) {
        let at = set_notes
            .iter()
            .rposition(|n| n.starts_with("rank "))
            .map_or(0, |i| i + 1);
        set_notes.insert(at, missing);
    }
    crate::sort::sort_by_key(&mut rank_notes, |r| r.0);
    set_notes.extend(rank_notes.into_iter().map(|r| r.1));
    set_notes
}
