//! The shards' answers to one request of the page, combined into the answer the page gets (wasm32
//! only): the same typed message a single worker would send.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::shards::{ask, to_page, with_shards, Ask, ShardSet};
use super::{post, post_raw, post_raw_with_buffers, post_with_buffers};
use crate::analysis::all::{AllAnalyses, AnalysisTiming, Mode};
use crate::analysis::merge::merge_analyses;
use crate::analysis::rank_lanes::{merge_rank_lanes, RankLanesView};
use crate::analysis::timeline::TimelineRequest;
use crate::protocol::shard::{FromShard, ShardOnly};
use crate::protocol::{FromWorker, ToWorker};
use crate::report::diagnosis::diagnose_reduced;
use crate::report::gather_parts::{context_of, gathered_of};
use crate::table::query::{merge_csv, merge_pages};

/// One shard's answer: the shard, its message, the buffers after it.
type Answer = (usize, FromShard, Vec<JsValue>);

/// Combines every asked shard's answer to a request and posts the result to the page.
pub fn combine(how: Ask, answers: Vec<Answer>) {
    match how {
        Ask::Forward => answers.into_iter().for_each(forward),
        Ask::ExportPart { part, parts } => answers
            .into_iter()
            .for_each(|a| export_part(a, part, parts)),
        Ask::Locate => locate(answers),
        Ask::StoreTables => store_tables(answers),
        Ask::SqlTables => sql_tables(answers),
        other => {
            if let Some(message) = answers.iter().find_map(|(_, m, _)| match m {
                FromShard::Error(message) => Some(message.clone()),
                _ => None,
            }) {
                return post(&FromWorker::Error { message });
            }
            combine_typed(other, answers.into_iter().map(|(s, m, _)| (s, m)).collect());
        }
    }
}

fn combine_typed(how: Ask, answers: Vec<(usize, FromShard)>) {
    match how {
        Ask::Analyze { mode } => analyses(mode, answers),
        Ask::ReportContext { steps } => {
            let parts: Vec<_> = answers
                .into_iter()
                .flat_map(|(_, m)| match m {
                    FromShard::Only(ShardOnly::ContextParts { parts }) => parts,
                    _ => Vec::new(),
                })
                .collect();
            if let Some(range) = steps {
                if let Err(message) = crate::report::context::check_chosen_steps(&parts, range) {
                    return post(&FromWorker::StepsRefused {
                        steps: range,
                        message,
                    });
                }
            }
            let context = Box::new(context_of(&parts));
            with_shards(|set| {
                let request = ToWorker::GatherParts {
                    context: context.clone(),
                };
                ask(set, None, request, Ask::ReportGather { context })
            });
        }
        Ask::ReportGather { context } => {
            let parts: Vec<_> = answers
                .into_iter()
                .flat_map(|(_, m)| match m {
                    FromShard::Only(ShardOnly::GatherParts { parts }) => parts,
                    _ => Vec::new(),
                })
                .collect();
            let gathered = gathered_of(*context, parts);
            let skipped = with_shards(|set| set.skipped.clone()).unwrap_or_default();
            let report = diagnose_reduced(&gathered, &skipped);
            let automatic = !report.context.steps_chosen;
            let msg = FromWorker::Report {
                redacted: report.redacted(),
                report,
            };
            if automatic {
                with_shards(|set| set.report = Some(msg.clone()));
            }
            post(&msg);
        }
        Ask::Query(query) => {
            let pages = answers
                .into_iter()
                .filter_map(|(_, m)| match m {
                    FromShard::Events(p) => Some(p),
                    _ => None,
                })
                .collect();
            post(&FromWorker::Events(merge_pages(&query, pages)));
        }
        Ask::ExportCsv(query) => {
            let csvs = answers
                .into_iter()
                .filter_map(|(_, m)| match m {
                    FromShard::Exported(csv) => Some(csv),
                    _ => None,
                })
                .collect();
            post(&FromWorker::Exported {
                csv: merge_csv(&query, csvs),
            });
        }
        Ask::Views { steps } => {
            let mut views: Vec<_> = answers
                .into_iter()
                .flat_map(|(_, m)| match m {
                    FromShard::Views(views, _) => views,
                    _ => Vec::new(),
                })
                .collect();
            crate::sort::sort_by_key(&mut views, |v| v.rank);
            post(&FromWorker::Views { views, steps });
        }
        Ask::LanesSpan { width_px } => {
            let lanes = lanes_of(answers);
            let start = lanes.iter().map(|l| l.span_ns.0).min().unwrap_or(0);
            let end = lanes.iter().map(|l| l.span_ns.1).max().unwrap_or(0);
            with_shards(|set| {
                set.lanes_span = Some((start, end));
                let request = TimelineRequest {
                    start_ns: start,
                    end_ns: end.max(start + 1),
                    width_px,
                };
                ask(set, None, ToWorker::RankLanes { request }, Ask::Lanes)
            });
        }
        Ask::Lanes => {
            let views = lanes_of(answers);
            post(&FromWorker::RankLanes(Box::new(merge_rank_lanes(views))));
        }
        Ask::Forward | Ask::ExportPart { .. } | Ask::Locate | Ask::StoreTables | Ask::SqlTables => {
        }
    }
}

/// Each shard's rank lanes, their rank indexes those of the whole set.
fn lanes_of(answers: Vec<(usize, FromShard)>) -> Vec<RankLanesView> {
    with_shards(|set| {
        answers
            .into_iter()
            .filter_map(|(s, m)| match m {
                FromShard::RankLanes(mut view) => {
                    for lane in &mut view.lanes {
                        lane.rank_index = set
                            .map
                            .global(s, lane.rank_index)
                            .unwrap_or(lane.rank_index);
                    }
                    Some(*view)
                }
                _ => None,
            })
            .collect()
    })
    .unwrap_or_default()
}

/// The whole set's analyses from the shards' (kept, like a single worker keeps its own).
fn analyses(mode: Mode, answers: Vec<(usize, FromShard)>) {
    let mut parts = Vec::new();
    let mut timings: Vec<AnalysisTiming> = Vec::new();
    for (_, m) in answers {
        if let FromShard::Analysis {
            analysis,
            timings: t,
        } = m
        {
            parts.push(*analysis);
            slowest_of(&mut timings, t);
        }
    }
    let mut all: AllAnalyses = merge_analyses(parts);
    with_shards(|set| {
        set_notes_of_the_whole(set, &mut all);
        set.analyses[mode.index()] = Some((all.clone(), timings.clone()));
    });
    post(&FromWorker::Analysis {
        analysis: all,
        timings,
    });
}

/// Each analysis's time is the slowest shard's: the shards ran together.
fn slowest_of(kept: &mut Vec<AnalysisTiming>, more: Vec<AnalysisTiming>) {
    for t in more {
        match kept.iter_mut().find(|k| k.name == t.name) {
            Some(k) => k.ms = k.ms.max(t.ms),
            None => kept.push(t),
        }
    }
}

/// The shards' own set notes (about their ranks alone) give way to the whole set's.
fn set_notes_of_the_whole(set: &ShardSet, all: &mut AllAnalyses) {
    all.notes
        .retain(|n| !set.shard_notes.contains(n) && !set.set_notes.contains(n));
    let mut notes = set.set_notes.clone();
    notes.append(&mut all.notes);
    all.notes = notes;
}

fn forward((shard, msg, buffers): Answer) {
    let Some(bytes) = with_shards(|set| to_page(&set.map, shard, msg)).flatten() else {
        return;
    };
    if buffers.is_empty() {
        post_raw(&bytes);
    } else {
        let buffers: Vec<js_sys::ArrayBuffer> = buffers
            .into_iter()
            .filter_map(|b| b.dyn_into().ok())
            .collect();
        post_raw_with_buffers(&bytes, &buffers);
    }
}

/// One shard's part of the table export, named as a part of the whole (`NAME.part-2-of-4.parquet`).
fn export_part((shard, msg, buffers): Answer, part: usize, parts: usize) {
    let msg = match msg {
        FromShard::DownloadBytes {
            file_name,
            mime,
            bytes,
        } => {
            let (stem, ext) = file_name.rsplit_once('.').unwrap_or((&file_name, "bin"));
            FromShard::DownloadBytes {
                file_name: format!("{stem}.part-{}-of-{parts}.{ext}", part + 1),
                mime,
                bytes,
            }
        }
        other => other,
    };
    forward((shard, msg, buffers));
}

/// The longest event any shard found for a finding's evidence or a view's row (its rank index the
/// whole set's): inside the analysed window before outside, as one worker holding every rank picks.
fn locate(answers: Vec<Answer>) {
    let mut best: Option<(usize, crate::protocol::Located)> = None;
    let mut first_other: Option<Answer> = None;
    for (shard, msg, buffers) in answers {
        match msg {
            FromShard::Located(mut l) => {
                l.rank_index = with_shards(|set| set.map.global(shard, l.rank_index))
                    .flatten()
                    .unwrap_or(l.rank_index);
                let better = best.as_ref().is_none_or(|(_, b)| {
                    (!l.outside, l.dur_ns, std::cmp::Reverse(l.rank_index))
                        > (!b.outside, b.dur_ns, std::cmp::Reverse(b.rank_index))
                });
                if better {
                    best = Some((shard, l));
                }
            }
            other => {
                first_other.get_or_insert((shard, other, buffers));
            }
        }
    }
    match (best, first_other) {
        (Some((_, l)), _) => post(&FromWorker::Located(l)),
        (None, Some(other)) => forward(other),
        (None, None) => {}
    }
}

/// Every rank's table for the cache, in the whole set's rank order, the buffers moved on.
fn store_tables(answers: Vec<Answer>) {
    let mut format = 0;
    let mut by_shard: Vec<(usize, Vec<u64>, Vec<JsValue>)> = Vec::new();
    for (shard, msg, buffers) in answers {
        match msg {
            FromShard::Tables { format: f, bytes } => {
                format = f;
                by_shard.push((shard, bytes, buffers));
            }
            other => return forward((shard, other, buffers)),
        }
    }
    let order = with_shards(|set| set.map.places.clone()).unwrap_or_default();
    let mut bytes = Vec::with_capacity(order.len());
    let mut buffers = Vec::with_capacity(order.len());
    for (shard, local) in order {
        let Some((_, b, bufs)) = by_shard.iter().find(|(s, _, _)| *s == shard) else {
            continue;
        };
        if let (Some(n), Some(buf)) = (b.get(local), bufs.get(local)) {
            bytes.push(*n);
            if let Ok(buf) = buf.clone().dyn_into::<js_sys::ArrayBuffer>() {
                buffers.push(buf);
            }
        }
    }
    if !post_with_buffers(&FromWorker::Tables { format, bytes }, &buffers) {
        post(&FromWorker::TablesFailed {
            message: "the worker could not send the tables to the page".into(),
        });
    }
}

/// Every shard's SQL tables, appended (the page makes one table of each name's parts).
fn sql_tables(answers: Vec<Answer>) {
    let mut parts = Vec::new();
    let mut buffers = Vec::new();
    for (shard, msg, bufs) in answers {
        match msg {
            FromShard::SqlTables(p) => {
                for (part, buf) in p.into_iter().zip(bufs) {
                    if let Ok(buf) = buf.dyn_into::<js_sys::ArrayBuffer>() {
                        parts.push(part);
                        buffers.push(buf);
                    }
                }
            }
            other => return forward((shard, other, bufs)),
        }
    }
    if !post_with_buffers(&FromWorker::SqlTables { parts }, &buffers) {
        post(&FromWorker::SqlTablesFailed {
            message: "the worker could not send the tables to the page".into(),
        });
    }
}
