//! The one registry of analyses: each analysis is declared once here (its id, its [`AllAnalyses`]
//! field and type, its title and the words the report's "deeper analysis" offer uses).
//!
//! [`AnalysisId`] (with `ALL`, `key`, `title`, `offer`) and the [`AllAnalyses`] struct are derived
//! from the list below, in its order: the JSON keys of `analyze --json`, the timing names, the page's
//! blocks, the CLI's text sections and the report's offer all follow it. What the compiler then asks
//! of a new entry: its run in `all::analyze_timed` and its merge in `merge::merge_analyses` (both
//! build the struct whole), its block in `page::analyses_view` and its text section in
//! `report::text` (both exhaustive matches on [`AnalysisId`]).

use serde::{Deserialize, Serialize};

use super::all::{RankCriticalPath, RankSequences};
use super::collectives::{CollectiveInputs, Collectives};
use super::idle::StreamIdle;
use super::kernels::KernelBreakdown;
use super::launch::LaunchStats;
use super::memcpy::MemoryOps;
use super::options::Mode;
use super::overlap::CommCompOverlap;
use super::queue::StreamQueue;
use super::steps::RankSteps;
use super::stragglers::{StragglerInputs, Stragglers};
use super::temporal::TemporalBreakdown;

/// Declares the analyses: `Variant => field: Type [companion fields], "title", offer;` where offer is
/// `Some("words")` (named in the report's offer of deeper analysis) or `None`. A companion field is
/// serialised right after its analysis's field (what a reduce over per-rank outputs needs).
macro_rules! analysis_registry {
    (
        $(
            $(#[$doc:meta])*
            $variant:ident => $field:ident : $ty:ty
                $([ $( $(#[$cdoc:meta])* $companion:ident : $cty:ty ),* ])?,
                $title:literal, $offer:expr;
        )*
    ) => {
        /// One analysis (its stable text is its [`AllAnalyses`] field name).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum AnalysisId {
            $( $variant, )*
        }

        impl AnalysisId {
            /// Every analysis, in registry order.
            pub const ALL: [AnalysisId; [$(stringify!($variant)),*].len()] =
                [$(AnalysisId::$variant),*];

            /// The [`AllAnalyses`] field it fills (the block's `id="analysis-…"`, the timing name).
            pub fn key(self) -> &'static str {
                match self {
                    $( AnalysisId::$variant => stringify!($field), )*
                }
            }

            /// The title the page and the CLI give it.
            pub fn title(self) -> &'static str {
                match self {
                    $( AnalysisId::$variant => $title, )*
                }
            }

            /// How the report's "deeper analysis" offer names it (`None`: not offered).
            pub fn offer(self) -> Option<&'static str> {
                match self {
                    $( AnalysisId::$variant => $offer, )*
                }
            }

            /// The analysis of a stable key ([`Self::key`]), if any.
            pub fn parse(key: &str) -> Option<AnalysisId> {
                AnalysisId::ALL.into_iter().find(|id| id.key() == key)
            }
        }

        /// Every analysis, typed. Field names are stable (the JSON of `analyze --json` uses them as
        /// keys), in registry order between `ranks` and `notes`.
        #[derive(Clone, Debug, Default, Serialize, Deserialize)]
        pub struct AllAnalyses {
            pub mode: Mode,
            /// Ranks analysed, ascending.
            pub ranks: Vec<i64>,
            $(
                $(#[$doc])*
                pub $field: $ty,
                $($(
                    $(#[$cdoc])*
                    #[serde(default)]
                    pub $companion: $cty,
                )*)?
            )*
            /// Notes on how the results were computed (differences from HTA, filters applied).
            pub notes: Vec<String>,
        }
    };
}

analysis_registry! {
    /// Time by kernel type and per-kernel statistics, per rank and summed over ranks.
    KernelBreakdown => kernel_breakdown: KernelBreakdown,
        "GPU kernel breakdown", Some("kernel breakdown by type and rank");
    /// Idle / compute / non-compute per rank (ranks without device events are absent).
    TemporalBreakdown => temporal_breakdown: Vec<TemporalBreakdown>,
        "Temporal breakdown", Some("temporal breakdown (compute / non-compute / idle)");
    /// Idle time per rank and stream: host wait / kernel wait / other.
    IdleTimeBreakdown => idle_time_breakdown: Vec<StreamIdle>,
        "Idle time breakdown", Some("idle time per stream (host wait, kernel wait)");
    /// Share of communication hidden under computation, per rank.
    CommCompOverlap => comm_comp_overlap: Vec<CommCompOverlap>,
        "Communication / computation overlap", Some("communication/compute overlap");
    /// Stragglers across ranks (with a note when there is one rank only).
    Stragglers => stragglers: Stragglers [
        /// What each rank contributes to `stragglers` (the input of the reduce `profile-model merge`
        /// runs over per-rank outputs; see `analysis::merge`).
        straggler_inputs: Vec<StragglerInputs>
    ], "Stragglers across ranks", Some("straggler ranks");
    /// Launch call time, kernel time, launch delay per rank.
    KernelLaunchStats => kernel_launch_stats: Vec<LaunchStats>,
        "Kernel launch statistics", Some("kernel launch statistics");
    /// Queue length per rank and stream, with time blocked on a full queue.
    QueueLength => queue_length: Vec<StreamQueue>,
        "Launch queue length", Some("launch queue length");
    /// Memory copies and sets per rank and kind.
    MemoryBandwidth => memory_bandwidth: Vec<MemoryOps>,
        "Memory copies and bandwidth", Some("memory-copy bandwidth");
    /// `ProfilerStep#N` times per rank.
    ProfilerSteps => profiler_steps: Vec<RankSteps>,
        "Profiler steps", Some("profiler step times");
    /// Frequent kernel sequences per rank.
    FrequentKernelSequences => frequent_kernel_sequences: Vec<RankSequences>,
        "Frequent kernel sequences", Some("frequent kernel sequences");
    /// Critical path per rank.
    CriticalPath => critical_path: Vec<RankCriticalPath>,
        "Critical path", Some("critical path of a step");
    /// Kernels and operators against the device's roof, per rank (exact mode). (Its rows'
    /// `judged` is `#[serde(flatten)]`: it crosses to the page as JSON text.)
    #[serde(default, with = "crate::protocol::codec::json_text")]
    Roofline => roofline: Vec<super::roofline::RankRoofline>,
        "Roofline: achieved against possible", Some("every kernel against the device's roof (roofline)");
    /// Collectives across ranks: wait versus transfer, late ranks, bandwidth, parallelism.
    #[serde(default)]
    Collectives => collectives: Collectives [
        /// What each rank contributes to `collectives` (the reduce `merge` runs over per-rank outputs).
        collective_inputs: Vec<CollectiveInputs>
    ], "Collectives: waiting versus moving", Some("collectives split into waiting and moving, per rank");
}

/// The report's offer of deeper analysis: every offered analysis, in registry order.
pub fn offered() -> Vec<&'static str> {
    AnalysisId::ALL
        .into_iter()
        .filter_map(AnalysisId::offer)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_serde_names_and_the_json_fields_in_order() {
        for id in AnalysisId::ALL {
            assert_eq!(crate::stable_name::serde_name(&id), id.key());
            assert_eq!(AnalysisId::parse(id.key()), Some(id));
        }
        // The serialised text keeps field order (a `Value` map would sort its keys).
        let json = serde_json::to_string(&AllAnalyses::default()).unwrap();
        let mut expected = vec!["mode", "ranks"];
        for id in AnalysisId::ALL {
            expected.push(id.key());
            match id {
                AnalysisId::Stragglers => expected.push("straggler_inputs"),
                AnalysisId::Collectives => expected.push("collective_inputs"),
                _ => {}
            }
        }
        expected.push("notes");
        assert_eq!(top_level_keys(&json), expected);
    }

    /// The keys of a JSON object's text at its top level, in text order.
    fn top_level_keys(json: &str) -> Vec<&str> {
        let (mut depth, mut keys, mut in_str, mut start) = (0, Vec::new(), false, 0);
        let bytes = json.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            match (in_str, bytes[i]) {
                (true, b'\\') => i += 1,
                (true, b'"') => {
                    in_str = false;
                    if depth == 1 && bytes.get(i + 1) == Some(&b':') {
                        keys.push(&json[start..i]);
                    }
                }
                (false, b'"') => {
                    in_str = true;
                    start = i + 1;
                }
                (false, b'{' | b'[') => depth += 1,
                (false, b'}' | b']') => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        keys
    }

    #[test]
    fn every_analysis_has_a_title_and_the_offer_skips_none() {
        assert!(AnalysisId::ALL.iter().all(|id| !id.title().is_empty()));
        assert_eq!(offered().len(), AnalysisId::ALL.len());
    }
}
