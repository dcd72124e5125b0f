//! What a shard worker tells its coordinator, and how the coordinator reads it: typed only where it
//! combines the shards' answers (analyses, pages, lanes, views, the report's parts, tables), the
//! rest kept as the bytes it came in and passed on to the page untouched.
//!
//! A shard is the worker program itself, so it posts the page's [`FromWorker`] messages (in the
//! wire format of [`super::codec`]); its answers to [`super::ToWorker::Part`] are wrapped
//! ([`part_bytes`]), and the report's parts, which only a coordinator asks for, are a [`ShardOnly`]
//! message ([`shard_only_bytes`]) the page never reads.

use serde::{Deserialize, Serialize};

use super::codec::{decode, decode_prefix, encode, variant_index, variant_names};
use super::{FromWorker, LoadedSet, Located, Progress};
use crate::analysis::all::{AllAnalyses, AnalysisTiming};
use crate::analysis::rank_lanes::RankLanesView;
use crate::analysis::views::RankViews;
use crate::report::gather_parts::{RankContextPart, RankGatherPart};
use crate::table::query::EventPage;

/// What only a shard tells its coordinator (the page never reads it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ShardOnly {
    /// Each rank's part of the report's context, in the shard's rank order.
    ContextParts { parts: Vec<RankContextPart> },
    /// Each rank's report figures, in the shard's rank order.
    GatherParts { parts: Vec<RankGatherPart> },
}

/// Marks a shard's answer to a part (`u32::MAX`, then the part's id, then the message); no
/// [`FromWorker`] variant has that index.
const PART: u32 = u32::MAX;
/// Marks a [`ShardOnly`] message (`u32::MAX - 1`, then the message).
const SHARD_ONLY: u32 = u32::MAX - 1;

/// A shard's answer to request `id`: `message` (the bytes of a [`FromWorker`] or of
/// [`shard_only_bytes`]) wrapped so the coordinator knows which request it answers.
pub fn part_bytes(id: u64, message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 + message.len());
    out.extend_from_slice(&PART.to_le_bytes());
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(message);
    out
}

/// A [`ShardOnly`] message as a shard posts it.
pub fn shard_only_bytes(message: &ShardOnly) -> Result<Vec<u8>, String> {
    let mut out = SHARD_ONLY.to_le_bytes().to_vec();
    out.extend(encode(message).map_err(|e| e.to_string())?);
    Ok(out)
}

/// A shard's message as the coordinator reads it.
#[derive(Debug)]
pub enum FromShard {
    Ready,
    Progress(Progress),
    /// Its load ended (`None`: nothing of it loaded).
    Loaded(Option<LoadedSet>),
    /// The answer to the coordinator's request `id`.
    Part {
        id: u64,
        answer: Box<FromShard>,
    },
    Analysis {
        analysis: Box<AllAnalyses>,
        timings: Vec<AnalysisTiming>,
    },
    Events(EventPage),
    Exported(String),
    /// Each rank's views and the steps they are over.
    Views(
        Vec<RankViews>,
        Option<crate::analysis::step_filter::StepRange>,
    ),
    RankLanes(Box<RankLanesView>),
    Located(Located),
    Tables {
        format: u32,
        bytes: Vec<u64>,
    },
    DownloadBytes {
        file_name: String,
        mime: String,
        bytes: u64,
    },
    SqlTables(Vec<super::SqlPart>),
    Error(String),
    Only(ShardOnly),
    /// About one of the shard's ranks (a timeline, an event's details), `rank_index` the shard's:
    /// passed on with the index mapped ([`with_rank_index`]).
    OfRank {
        rank_index: usize,
        bytes: Vec<u8>,
    },
    /// Anything else: passed on to the page as it is.
    Passed(Vec<u8>),
}

// The content of the variants the coordinator reads, field for field as in `FromWorker` (the wire
// format is positional: `codec_matches_from_worker` in the tests checks each against it).

#[derive(Serialize, Deserialize)]
struct AnalysisRead {
    analysis: Box<AllAnalyses>,
    #[serde(default)]
    timings: Vec<AnalysisTiming>,
}

#[derive(Serialize, Deserialize)]
struct CsvRead {
    csv: String,
}

#[derive(Serialize, Deserialize)]
struct MessageRead {
    message: String,
}

#[derive(Serialize, Deserialize)]
struct ViewsRead {
    views: Vec<RankViews>,
    #[serde(default)]
    steps: Option<crate::analysis::step_filter::StepRange>,
}

/// The first field of a message about one rank ([`FromWorker::Timeline`], [`FromWorker::EventDetails`],
/// [`FromWorker::SearchHits`]).
#[derive(Serialize, Deserialize)]
struct RankIndexRead {
    rank_index: usize,
}

#[derive(Serialize, Deserialize)]
struct TablesRead {
    format: u32,
    bytes: Vec<u64>,
}

#[derive(Serialize, Deserialize)]
struct SqlTablesRead {
    parts: Vec<super::SqlPart>,
}

#[derive(Serialize, Deserialize)]
struct DownloadBytesRead {
    file_name: String,
    mime: String,
    bytes: u64,
}

fn typed<'a, T: Deserialize<'a>>(name: &str, content: &'a [u8]) -> Result<T, String> {
    decode(content).map_err(|e| format!("{name}: {e}"))
}

impl FromShard {
    /// Reads a shard's message (the bytes it posted).
    pub fn read(bytes: &[u8]) -> Result<FromShard, String> {
        let index = variant_index(bytes).ok_or("a message of under 4 bytes")?;
        let content = &bytes[4..];
        if index == PART {
            let id = content.get(..8).ok_or("a part without its id")?;
            return Ok(FromShard::Part {
                id: u64::from_le_bytes(id.try_into().map_err(|_| "a part's id")?),
                answer: Box::new(FromShard::read(&content[8..])?),
            });
        }
        if index == SHARD_ONLY {
            return Ok(FromShard::Only(typed("ShardOnly", content)?));
        }
        let name = *variant_names::<FromWorker>()
            .get(index as usize)
            .ok_or_else(|| format!("no message has index {index}"))?;
        Ok(match name {
            "Ready" => FromShard::Ready,
            "NothingLoaded" => FromShard::Loaded(None),
            "Progress" => FromShard::Progress(typed(name, content)?),
            "Loaded" => FromShard::Loaded(Some(typed(name, content)?)),
            "Analysis" => {
                let read: AnalysisRead = typed(name, content)?;
                FromShard::Analysis {
                    analysis: read.analysis,
                    timings: read.timings,
                }
            }
            "Events" => FromShard::Events(typed(name, content)?),
            "Exported" => FromShard::Exported(typed::<CsvRead>(name, content)?.csv),
            "Views" => {
                let read: ViewsRead = typed(name, content)?;
                FromShard::Views(read.views, read.steps)
            }
            "RankLanes" => FromShard::RankLanes(typed(name, content)?),
            "Located" => FromShard::Located(typed(name, content)?),
            "Tables" => {
                let read: TablesRead = typed(name, content)?;
                FromShard::Tables {
                    format: read.format,
                    bytes: read.bytes,
                }
            }
            "DownloadBytes" => {
                let read: DownloadBytesRead = typed(name, content)?;
                FromShard::DownloadBytes {
                    file_name: read.file_name,
                    mime: read.mime,
                    bytes: read.bytes,
                }
            }
            "SqlTables" => FromShard::SqlTables(typed::<SqlTablesRead>(name, content)?.parts),
            "Error" => FromShard::Error(typed::<MessageRead>(name, content)?.message),
            "Timeline" | "EventDetails" | "SearchHits" | "Walked" => FromShard::OfRank {
                rank_index: decode_prefix::<RankIndexRead>(content)
                    .map_err(|e| format!("{name}: {e}"))?
                    .0
                    .rank_index,
                bytes: bytes.to_vec(),
            },
            _ => FromShard::Passed(bytes.to_vec()),
        })
    }
}

/// The page's [`FromWorker::Views`] message of these views, in the order given, over the steps
/// `steps`.
pub fn views_bytes(
    views: Vec<RankViews>,
    steps: Option<crate::analysis::step_filter::StepRange>,
) -> Option<Vec<u8>> {
    encode(&FromWorker::Views { views, steps }).ok()
}

/// A message about one rank (`bytes`, read as [`FromShard::OfRank`]) with its `rank_index` set to
/// `rank_index`; the rest of it untouched.
pub fn with_rank_index(bytes: &[u8], rank_index: usize) -> Result<Vec<u8>, String> {
    let content = bytes.get(4..).ok_or("a message of under 4 bytes")?;
    let (_, used) = decode_prefix::<RankIndexRead>(content).map_err(|e| e.to_string())?;
    let mut out = bytes[..4].to_vec();
    out.extend(encode(&RankIndexRead { rank_index }).map_err(|e| e.to_string())?);
    out.extend_from_slice(&content[used..]);
    Ok(out)
}

impl FromShard {
    /// The page's message (bytes) for a shard's message passed on, its rank indexes mapped by
    /// `global`; `None` for what only the coordinator reads (ready, a part's wrapper, the report's
    /// parts).
    pub fn into_page_bytes(self, global: impl Fn(usize) -> usize) -> Option<Vec<u8>> {
        let page = |msg: FromWorker| encode(&msg).ok();
        match self {
            FromShard::Ready | FromShard::Part { .. } | FromShard::Only(_) => None,
            FromShard::Progress(p) => page(FromWorker::Progress(p)),
            FromShard::Loaded(Some(l)) => page(FromWorker::Loaded(l)),
            FromShard::Loaded(None) => page(FromWorker::NothingLoaded),
            FromShard::Analysis { analysis, timings } => page(FromWorker::Analysis {
                analysis: *analysis,
                timings,
            }),
            FromShard::Events(p) => page(FromWorker::Events(p)),
            FromShard::Exported(csv) => page(FromWorker::Exported { csv }),
            FromShard::Views(views, steps) => views_bytes(views, steps),
            FromShard::RankLanes(mut view) => {
                for lane in &mut view.lanes {
                    lane.rank_index = global(lane.rank_index);
                }
                page(FromWorker::RankLanes(view))
            }
            FromShard::Located(mut l) => {
                l.rank_index = global(l.rank_index);
                page(FromWorker::Located(l))
            }
            FromShard::Tables { format, bytes } => page(FromWorker::Tables { format, bytes }),
            FromShard::DownloadBytes {
                file_name,
                mime,
                bytes,
            } => page(FromWorker::DownloadBytes {
                file_name,
                mime,
                bytes,
            }),
            FromShard::SqlTables(parts) => page(FromWorker::SqlTables { parts }),
            FromShard::Error(message) => page(FromWorker::Error { message }),
            FromShard::OfRank { rank_index, bytes } => {
                with_rank_index(&bytes, global(rank_index)).ok()
            }
            FromShard::Passed(bytes) => Some(bytes),
        }
    }
}

#[cfg(test)]
#[path = "shard_tests.rs"]
mod tests;
