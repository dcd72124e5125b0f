//! What a shard worker tells its coordinator, and how the coordinator reads it: typed only where it
//! combines the shards' answers (analyses, pages, lanes, views' order, the report's parts, tables),
//! the rest kept as the JSON text it came in and passed on to the page untouched.
//!
//! A shard is the worker program itself, so it posts the page's [`FromWorker`] messages; its
//! answers to [`super::ToWorker::Part`] are wrapped ([`part_text`]), and the report's parts, which
//! only a coordinator asks for, are a [`ShardOnly`] message the page never reads.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::{FromWorker, LoadedSet, Located, Progress};
use crate::analysis::all::{AllAnalyses, AnalysisTiming};
use crate::analysis::rank_lanes::RankLanesView;
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

/// A shard's answer to request `id`: `message` (the JSON text of a [`FromWorker`] or a
/// [`ShardOnly`]) wrapped so the coordinator knows which request it answers.
pub fn part_text(id: u64, message: &str) -> String {
    format!("{{\"{PART}\":{{\"id\":{id},\"message\":{message}}}}}")
}

const PART: &str = "Part";

/// One view of a shard's rank, kept as its JSON text (the coordinator only orders them by rank).
#[derive(Clone, Debug, PartialEq)]
pub struct RankViewsText {
    pub rank: i64,
    pub json: String,
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
        Vec<RankViewsText>,
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
        json: String,
    },
    /// Anything else: passed on to the page as it is.
    Passed(String),
}

#[derive(Deserialize)]
struct PartRead<'a> {
    id: u64,
    #[serde(borrow)]
    message: &'a RawValue,
}

#[derive(Deserialize)]
struct AnalysisRead {
    analysis: Box<AllAnalyses>,
    #[serde(default)]
    timings: Vec<AnalysisTiming>,
}

#[derive(Deserialize)]
struct CsvRead {
    csv: String,
}

#[derive(Deserialize)]
struct MessageRead {
    message: String,
}

#[derive(Deserialize)]
struct ViewsRead<'a> {
    #[serde(borrow)]
    views: Vec<&'a RawValue>,
    #[serde(default)]
    steps: Option<crate::analysis::step_filter::StepRange>,
}

#[derive(Deserialize)]
struct RankRead {
    rank: i64,
}

#[derive(Deserialize)]
struct RankIndexRead {
    rank_index: usize,
}

#[derive(Deserialize)]
struct TablesRead {
    format: u32,
    bytes: Vec<u64>,
}

#[derive(Deserialize)]
struct SqlTablesRead {
    parts: Vec<super::SqlPart>,
}

#[derive(Deserialize)]
struct DownloadBytesRead {
    file_name: String,
    mime: String,
    bytes: u64,
}

/// A message's variant name and its content (`None` for a unit variant such as `"Ready"`).
fn variant_of(text: &str) -> Result<(String, Option<&RawValue>), String> {
    if text.trim_start().starts_with('"') {
        let name: String = serde_json::from_str(text).map_err(|e| e.to_string())?;
        return Ok((name, None));
    }
    let map: BTreeMap<String, &RawValue> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    match (map.len(), map.into_iter().next()) {
        (1, Some((name, content))) => Ok((name, Some(content))),
        _ => Err("expected one message, an object of one key".into()),
    }
}

fn typed<'a, T: Deserialize<'a>>(name: &str, content: Option<&'a RawValue>) -> Result<T, String> {
    let content = content.ok_or_else(|| format!("{name}: no content"))?;
    serde_json::from_str(content.get()).map_err(|e| format!("{name}: {e}"))
}

impl FromShard {
    /// Reads a shard's message (the JSON text it posted).
    pub fn read(text: &str) -> Result<FromShard, String> {
        let (name, content) = variant_of(text)?;
        Ok(match name.as_str() {
            "Ready" => FromShard::Ready,
            "NothingLoaded" => FromShard::Loaded(None),
            "Progress" => FromShard::Progress(typed(&name, content)?),
            "Loaded" => FromShard::Loaded(Some(typed(&name, content)?)),
            PART => {
                let part: PartRead = typed(&name, content)?;
                FromShard::Part {
                    id: part.id,
                    answer: Box::new(FromShard::read(part.message.get())?),
                }
            }
            "Analysis" => {
                let read: AnalysisRead = typed(&name, content)?;
                FromShard::Analysis {
                    analysis: read.analysis,
                    timings: read.timings,
                }
            }
            "Events" => FromShard::Events(typed(&name, content)?),
            "Exported" => FromShard::Exported(typed::<CsvRead>(&name, content)?.csv),
            "Views" => {
                let read: ViewsRead = typed(&name, content)?;
                let steps = read.steps;
                FromShard::Views(views_of(read)?, steps)
            }
            "RankLanes" => FromShard::RankLanes(typed(&name, content)?),
            "Located" => FromShard::Located(typed(&name, content)?),
            "Tables" => {
                let read: TablesRead = typed(&name, content)?;
                FromShard::Tables {
                    format: read.format,
                    bytes: read.bytes,
                }
            }
            "DownloadBytes" => {
                let read: DownloadBytesRead = typed(&name, content)?;
                FromShard::DownloadBytes {
                    file_name: read.file_name,
                    mime: read.mime,
                    bytes: read.bytes,
                }
            }
            "SqlTables" => FromShard::SqlTables(typed::<SqlTablesRead>(&name, content)?.parts),
            "Error" => FromShard::Error(typed::<MessageRead>(&name, content)?.message),
            "ContextParts" | "GatherParts" => {
                FromShard::Only(serde_json::from_str(text).map_err(|e| e.to_string())?)
            }
            "Timeline" | "EventDetails" | "SearchHits" | "Walked" => FromShard::OfRank {
                rank_index: typed::<RankIndexRead>(&name, content)?.rank_index,
                json: text.to_string(),
            },
            _ => FromShard::Passed(text.to_string()),
        })
    }
}

fn views_of(read: ViewsRead) -> Result<Vec<RankViewsText>, String> {
    read.views
        .into_iter()
        .map(|v| {
            let rank = serde_json::from_str::<RankRead>(v.get())
                .map_err(|e| format!("Views: {e}"))?
                .rank;
            Ok(RankViewsText {
                rank,
                json: v.get().to_string(),
            })
        })
        .collect()
}

/// The page's [`FromWorker::Views`] message of views kept as text, in the order given, over the
/// steps `steps`.
pub fn views_text(
    views: &[RankViewsText],
    steps: Option<crate::analysis::step_filter::StepRange>,
) -> String {
    let each: Vec<&str> = views.iter().map(|v| v.json.as_str()).collect();
    let steps = serde_json::to_string(&steps).unwrap_or_else(|_| "null".into());
    format!(
        "{{\"Views\":{{\"views\":[{}],\"steps\":{steps}}}}}",
        each.join(",")
    )
}

/// A message about one rank (`json`, read as [`FromShard::OfRank`]) with its `rank_index` set to
/// `rank_index`; the rest of it untouched.
pub fn with_rank_index(json: &str, rank_index: usize) -> Result<String, String> {
    let mut message: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let content = message
        .as_object_mut()
        .and_then(|m| m.values_mut().next())
        .and_then(|c| c.as_object_mut())
        .ok_or("expected a message about one rank")?;
    content.insert("rank_index".into(), rank_index.into());
    serde_json::to_string(&message).map_err(|e| e.to_string())
}

impl FromShard {
    /// The page's message (JSON) for a shard's message passed on, its rank indexes mapped by
    /// `global`; `None` for what only the coordinator reads (ready, a part's wrapper, the report's
    /// parts).
    pub fn into_page_text(self, global: impl Fn(usize) -> usize) -> Option<String> {
        let page = |msg: FromWorker| serde_json::to_string(&msg).ok();
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
            FromShard::Views(views, steps) => Some(views_text(&views, steps)),
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
            FromShard::OfRank { rank_index, json } => {
                with_rank_index(&json, global(rank_index)).ok()
            }
            FromShard::Passed(json) => Some(json),
        }
    }
}

#[cfg(test)]
#[path = "shard_tests.rs"]
mod tests;
