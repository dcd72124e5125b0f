//! One file holding several ranks (written together by a merge tool: `args.rank` on the events, or
//! `rank N` in the process names) split into one [`TraceTable`] per rank, so the set is analysed as
//! the rank set it is. Each rank's rows keep their file order; a rank's table carries
//! `metadata.fused_ranks` (every rank of the file) so the report can say where the ranks came from.

use std::collections::{BTreeMap, BTreeSet};

use arrow2::array::{BooleanArray, DictionaryArray, PrimitiveArray};

use super::{ArgColumn, ArgValues, IntColumn, TraceTable};
use crate::sort::{map_of, set_of};
use crate::trace::Diagnostics;

/// The number after `rank` in a text (`[rank3] python`, `rank_12`, `Rank 0 pid 4242`).
pub fn rank_in_text(text: &str) -> Option<i64> {
    let lower = text.to_ascii_lowercase();
    let at = lower.find("rank")? + 4;
    let rest = &lower[at..];
    let skip = rest
        .char_indices()
        .take_while(|(i, c)| {
            *i < 3 && !c.is_ascii_digit() && matches!(c, ' ' | '_' | '-' | ':' | '#' | '=')
        })
        .count();
    let digits: String = rest[skip..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// Each row's rank in a fused file, or `None` when the file is not one: at least two ranks, and
/// every event with a timestamp (not `M` metadata) placed by its own `args.rank` or by its pid's
/// (from the pid's other events or its process name). A file naming fewer than two ranks is told
/// apart before any per-row vector is made (a big single-rank load must not pay for one).
pub fn rank_of_rows(t: &TraceTable) -> Option<Vec<Option<i64>>> {
    let own = row_ranks_from_args(t);
    let by_pid = pid_ranks(t, &own);
    let named: BTreeSet<i64> = set_of(own.values().chain(by_pid.values()).copied());
    if named.len() < 2 {
        return None;
    }
    let rows: Vec<Option<i64>> = (0..t.len())
        .map(|row| {
            own.get(&row)
                .copied()
                .or_else(|| by_pid.get(&t.pid_id(row)).copied())
        })
        .collect();
    let distinct: BTreeSet<i64> = set_of(rows.iter().flatten().copied());
    if distinct.len() < 2 {
        return None;
    }
    let unplaced = (0..t.len()).any(|row| rows[row].is_none() && t.ts_at(row).is_some());
    (!unplaced).then_some(rows)
}

/// `args.rank` of the rows that have one (when an integer), by row.
fn row_ranks_from_args(t: &TraceTable) -> BTreeMap<usize, i64> {
    let mut own = BTreeMap::new();
    if let Some(c) = t.arg("rank") {
        for (i, row) in c.rows.values().iter().enumerate() {
            if let Some(r) = c.i64_at(i) {
                own.insert(*row as usize, r);
            }
        }
    }
    own
}

/// The rank of each pid: the one its ranked events agree on, else the one its process name (or
/// the pid's own text) says.
fn pid_ranks(t: &TraceTable, own: &BTreeMap<usize, i64>) -> BTreeMap<u32, i64> {
    let mut seen: BTreeMap<u32, BTreeSet<i64>> = BTreeMap::new();
    for (&row, &r) in own {
        seen.entry(t.pid_id(row)).or_default().insert(r);
    }
    let mut out: BTreeMap<u32, i64> = map_of(
        seen.into_iter()
            .filter(|(_, rs)| rs.len() == 1)
            .filter_map(|(pid, rs)| rs.into_iter().next().map(|r| (pid, r))),
    );
    let names: BTreeMap<&str, i64> = map_of(
        t.metadata
            .process_names
            .iter()
            .filter_map(|(pid, n)| rank_in_text(n).map(|r| (pid.as_str(), r))),
    );
    for row in 0..t.len() {
        let pid = t.pid_id(row);
        if out.contains_key(&pid) {
            continue;
        }
        let text = t.pid_at(row);
        if let Some(r) = names.get(text).copied().or_else(|| rank_in_text(text)) {
            out.insert(pid, r);
        }
    }
    out
}

/// The file split into one table per rank (ascending), or the table itself when it is not a fused
/// file ([`rank_of_rows`]).
pub fn split_fused(t: TraceTable) -> Vec<TraceTable> {
    let Some(rows) = rank_of_rows(&t) else {
        return vec![t];
    };
    let mut by_rank: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    for (row, r) in rows.iter().enumerate() {
        if let Some(r) = r {
            by_rank.entry(*r).or_default().push(row);
        }
    }
    let ranks: Vec<i64> = by_rank.keys().copied().collect();
    by_rank
        .into_iter()
        .enumerate()
        .map(|(i, (rank, rows))| rank_table(&t, rank, &rows, &ranks, i == 0))
        .collect()
}

/// The rows `rows` (ascending) of `t` as rank `rank`'s table; the file's diagnostics go to the
/// first rank only (they are counted once).
fn rank_table(t: &TraceTable, rank: i64, rows: &[usize], ranks: &[i64], first: bool) -> TraceTable {
    let mut new_of = vec![u32::MAX; t.len()];
    for (i, &r) in rows.iter().enumerate() {
        new_of[r] = i as u32;
    }
    let remap = |old: &[u32]| -> Vec<u32> {
        old.iter()
            .filter_map(|&r| Some(new_of[r as usize]).filter(|n| *n != u32::MAX))
            .collect()
    };
    let pids: BTreeSet<&str> = set_of(rows.iter().map(|&r| t.pid_at(r)));
    let mut metadata = t.metadata.clone();
    metadata.rank = Some(rank);
    metadata.world_size = metadata.world_size.or(Some(ranks.len() as i64));
    metadata.fused_ranks = ranks.to_vec();
    metadata.trace_events = rows.len() as u64;
    metadata
        .process_names
        .retain(|pid, _| pids.contains(pid.as_str()));
    metadata
        .thread_names
        .retain(|key, _| pids.iter().any(|p| key.starts_with(&format!("{p}/"))));
    TraceTable {
        file: format!("{} [rank {rank}]", t.file),
        kind: take_prim(&t.kind, rows),
        phase: take_prim(&t.phase, rows),
        category: take_dict(&t.category, rows),
        name: take_dict(&t.name, rows),
        pid: take_dict(&t.pid, rows),
        tid: take_dict(&t.tid, rows),
        ts_ns: take_prim(&t.ts_ns, rows),
        dur_ns: take_prim(&t.dur_ns, rows),
        external_id: take_prim(&t.external_id, rows),
        correlation: take_prim(&t.correlation, rows),
        stream: take_int(&t.stream, rows),
        stream_from_tid: remap(&t.stream_from_tid),
        sub_ns: t
            .sub_ns
            .iter()
            .filter(|(r, _, _)| new_of[*r as usize] != u32::MAX)
            .map(|(r, a, b)| (new_of[*r as usize], *a, *b))
            .collect(),
        ts_float: t.ts_float,
        device: take_int(&t.device, rows),
        flow_id: take_prim(&t.flow_id, rows),
        args: t.args.iter().filter_map(|c| take_arg(c, &new_of)).collect(),
        metadata,
        diagnostics: if first {
            t.diagnostics.clone()
        } else {
            Diagnostics::default()
        },
    }
}

fn take_prim<T: arrow2::types::NativeType>(
    a: &PrimitiveArray<T>,
    rows: &[usize],
) -> PrimitiveArray<T> {
    let values: Vec<Option<T>> = rows.iter().map(|&r| a.get(r)).collect();
    PrimitiveArray::<T>::from(values).to(a.data_type().clone())
}

fn take_dict(d: &DictionaryArray<u32>, rows: &[usize]) -> DictionaryArray<u32> {
    let keys = take_prim(d.keys(), rows);
    DictionaryArray::try_new(d.data_type().clone(), keys, d.values().clone())
        .expect("keys of the same dictionary")
}

fn take_int(c: &IntColumn, rows: &[usize]) -> IntColumn {
    match c {
        IntColumn::Int32(a) => IntColumn::Int32(take_prim(a, rows)),
        IntColumn::Int64(a) => IntColumn::Int64(take_prim(a, rows)),
    }
}

/// The column's values on the kept rows, renumbered; `None` when no kept row has the key.
fn take_arg(c: &ArgColumn, new_of: &[u32]) -> Option<ArgColumn> {
    let kept: Vec<(usize, u32)> = c
        .rows
        .values()
        .iter()
        .enumerate()
        .filter(|(_, r)| new_of[**r as usize] != u32::MAX)
        .map(|(i, r)| (i, new_of[*r as usize]))
        .collect();
    if kept.is_empty() {
        return None;
    }
    let at: Vec<usize> = kept.iter().map(|(i, _)| *i).collect();
    let values = match &c.values {
        ArgValues::Int(a) => ArgValues::Int(take_prim(a, &at)),
        ArgValues::Float(a) => ArgValues::Float(take_prim(a, &at)),
        ArgValues::Bool(a) => {
            let v: Vec<Option<bool>> = at.iter().map(|&i| a.get(i)).collect();
            ArgValues::Bool(BooleanArray::from(v))
        }
        ArgValues::Text(d) => ArgValues::Text(take_dict(d, &at)),
    };
    Some(ArgColumn {
        key: c.key.clone(),
        rows: PrimitiveArray::<u32>::from_vec(kept.iter().map(|(_, r)| *r).collect()),
        values,
        mixed_types: c.mixed_types,
    })
}
