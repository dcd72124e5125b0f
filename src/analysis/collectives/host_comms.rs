//! The host side of one rank's collectives: the communication ops (`c10d::*`, `record_param_comms`,
//! `nccl:*`, `gloo:*`) each kernel launch sits in, with their args, and the host intervals the
//! late-rank causes read (backward, DataLoader).

use serde_json::Value;

use super::kind::{dtype_bytes, CollectiveKind};
use crate::analysis::gpu::RankPrep;
use crate::analysis::intervals::union;
use crate::analysis::names::{
    collective_kind_of, is_backward_op, is_data_loader_op, is_gloo_op, NameClass,
};
use crate::table::{ArgColumn, EventKind, TraceTable};

/// The args a collective can carry, on its kernel or on its `record_param_comms` op.
pub struct CommArgColumns<'t> {
    collective_name: Option<&'t ArgColumn>,
    group_name: Option<&'t ArgColumn>,
    seq: Option<&'t ArgColumn>,
    in_nelems: Option<&'t ArgColumn>,
    out_nelems: Option<&'t ArgColumn>,
    dtype: Option<&'t ArgColumn>,
    group_size: Option<&'t ArgColumn>,
    group_ranks: Option<&'t ArgColumn>,
    input_dims: Option<&'t ArgColumn>,
    input_type: Option<&'t ArgColumn>,
}

/// What the args of one row say about its collective (each field when present).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommArgs {
    pub kind: Option<CollectiveKind>,
    pub group: Option<String>,
    pub seq: Option<i64>,
    /// Message size in the nccl-tests sense: the larger of the input and output, bytes.
    pub bytes: Option<u64>,
    pub group_size: Option<u32>,
}

impl CommArgs {
    /// Fills what `self` lacks from `other`.
    pub fn or(self, other: CommArgs) -> CommArgs {
        CommArgs {
            kind: self.kind.or(other.kind),
            group: self.group.or(other.group),
            seq: self.seq.or(other.seq),
            bytes: self.bytes.or(other.bytes),
            group_size: self.group_size.or(other.group_size),
        }
    }
}

fn text_at(c: Option<&ArgColumn>, row: usize) -> Option<String> {
    let c = c?;
    match c.json_at(c.find(row)?) {
        Value::String(s) => Some(s),
        Value::Null => None,
        v => Some(v.to_string()),
    }
}

fn int_at(c: Option<&ArgColumn>, row: usize) -> Option<i64> {
    let c = c?;
    let i = c.find(row)?;
    c.i64_at(i)
        .or_else(|| c.json_at(i).as_str().and_then(|s| s.trim().parse().ok()))
}

/// Bytes of the largest tensor of an `Input Dims` / `Input type` pair (record_shapes).
fn largest_input_bytes(dims: &str, types: &str) -> Option<u64> {
    let dims: Vec<Value> = serde_json::from_str(dims).ok()?;
    let types: Vec<Value> = serde_json::from_str(types).ok()?;
    dims.iter()
        .zip(&types)
        .filter_map(|(d, t)| {
            let shape = d.as_array()?;
            if shape.is_empty() {
                return None;
            }
            let n = shape
                .iter()
                .try_fold(1u64, |acc, x| acc.checked_mul(x.as_u64()?))?;
            n.checked_mul(dtype_bytes(t.as_str()?)?)
        })
        .max()
}

impl<'t> CommArgColumns<'t> {
    pub fn of(table: &'t TraceTable) -> Self {
        CommArgColumns {
            collective_name: table.arg("Collective name"),
            group_name: table.arg("Process Group Name"),
            seq: table.arg("Seq"),
            in_nelems: table.arg("In msg nelems"),
            out_nelems: table.arg("Out msg nelems"),
            dtype: table.arg("dtype"),
            group_size: table.arg("Group size"),
            group_ranks: table.arg("Process Group Ranks"),
            input_dims: table.arg("Input Dims"),
            input_type: table.arg("Input type"),
        }
    }

    /// The collective args of one row.
    pub fn at(&self, row: usize) -> CommArgs {
        let elt = text_at(self.dtype, row).and_then(|d| dtype_bytes(&d));
        let nelems = [self.in_nelems, self.out_nelems]
            .iter()
            .filter_map(|c| int_at(*c, row))
            .filter_map(|n| u64::try_from(n).ok())
            .max();
        let mut bytes = nelems.zip(elt).and_then(|(n, e)| n.checked_mul(e));
        if bytes.is_none() && (self.in_nelems.is_none() || nelems.is_none()) {
            bytes = text_at(self.input_dims, row)
                .zip(text_at(self.input_type, row))
                .and_then(|(d, t)| largest_input_bytes(&d, &t));
        }
        let group_size = int_at(self.group_size, row)
            .and_then(|n| u32::try_from(n).ok())
            .or_else(|| {
                let ranks = text_at(self.group_ranks, row)?;
                let list: Vec<Value> = serde_json::from_str(&ranks).ok()?;
                u32::try_from(list.len()).ok().filter(|n| *n > 0)
            });
        CommArgs {
            kind: text_at(self.collective_name, row).and_then(|n| collective_kind_of(&n)),
            group: text_at(self.group_name, row),
            seq: int_at(self.seq, row),
            bytes,
            group_size,
        }
    }
}

/// The communication ops of one rank's host threads, sorted by thread then start.
pub struct HostComms {
    /// (thread, start, end, row).
    spans: Vec<(u32, i64, i64, u32)>,
    /// Of each span, the largest end of the spans before it on its thread (for the containment scan).
    max_end: Vec<i64>,
}

/// How far back the containment scan looks (nesting is shallow; this bounds a pathological trace).
const MAX_SCAN: usize = 256;

impl HostComms {
    pub fn of(prep: &RankPrep) -> HostComms {
        let t = prep.table;
        let mut spans: Vec<(u32, i64, i64, u32)> = (0..t.len())
            .filter(|&r| {
                matches!(t.kind_at(r), EventKind::CpuOp | EventKind::UserAnnotation)
                    && prep.names.of_row(t, r).has(NameClass::COMM_OP)
            })
            .filter_map(|r| {
                let (ts, end) = prep.span(r)?;
                Some((t.tid_id(r), ts, end, r as u32))
            })
            .collect();
        crate::sort::sort(&mut spans);
        let mut max_end = Vec::with_capacity(spans.len());
        let mut last: Option<(u32, i64)> = None;
        for s in &spans {
            let m = match last {
                Some((tid, m)) if tid == s.0 => m.max(s.2),
                _ => s.2,
            };
            max_end.push(m);
            last = Some((s.0, m));
        }
        HostComms { spans, max_end }
    }

    /// Rows of the comm ops on thread `tid` that contain time `t`, innermost (latest start) first.
    pub fn containing(&self, tid: u32, t: i64) -> Vec<u32> {
        let hi = self.spans.partition_point(|s| (s.0, s.1) <= (tid, t));
        let mut out = Vec::new();
        let mut i = hi;
        while i > 0 && hi - i < MAX_SCAN {
            i -= 1;
            let s = self.spans[i];
            if s.0 != tid || self.max_end[i] < t {
                break;
            }
            if s.2 >= t {
                out.push(s.3);
            }
        }
        out
    }

    /// Gloo's host-side collectives (`gloo:*`): (row, start, end).
    pub fn gloo_ops(&self, t: &TraceTable) -> Vec<(u32, i64, i64)> {
        let mut out: Vec<(u32, i64, i64)> = self
            .spans
            .iter()
            .filter(|s| is_gloo_op(t.name_at(s.3 as usize)))
            .map(|s| (s.3, s.1, s.2))
            .collect();
        crate::sort::sort_by_key(&mut out, |s| (s.1, s.0));
        out
    }
}

/// Host intervals of one rank the phase and late-cause tests read: backward and DataLoader ops.
pub struct HostMarks {
    pub backward: Vec<(i64, i64)>,
    pub data_loader: Vec<(i64, i64)>,
}

impl HostMarks {
    pub fn of(prep: &RankPrep) -> HostMarks {
        let t = prep.table;
        let mut backward = Vec::new();
        let mut data_loader = Vec::new();
        for r in 0..t.len() {
            let kind = t.kind_at(r);
            if !matches!(
                kind,
                EventKind::CpuOp | EventKind::UserAnnotation | EventKind::PythonFunction
            ) {
                continue;
            }
            let Some(span) = prep.span(r) else { continue };
            if is_data_loader_op(kind, prep.names.of_row(t, r)) {
                data_loader.push(span);
            } else if kind != EventKind::PythonFunction && is_backward_op(t.name_at(r)) {
                backward.push(span);
            }
        }
        HostMarks {
            backward: union(backward),
            data_loader: union(data_loader),
        }
    }
}

/// Time of a sorted, disjoint union inside `[start, end)`.
pub fn covered(u: &[(i64, i64)], start: i64, end: i64) -> i64 {
    let first = u.partition_point(|&(_, e)| e <= start);
    u[first..]
        .iter()
        .take_while(|&&(s, _)| s < end)
        .map(|&(s, e)| e.min(end) - s.max(start))
        .filter(|d| *d > 0)
        .sum()
}

/// The pieces of `[start, end)` a sorted, disjoint union does not cover.
pub fn uncovered(u: &[(i64, i64)], start: i64, end: i64) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut at = start;
    let first = u.partition_point(|&(_, e)| e <= start);
    for &(s, e) in u[first..].iter().take_while(|&&(s, _)| s < end) {
        if s > at {
            out.push((at, s));
        }
        at = at.max(e);
    }
    if at < end {
        out.push((at, end));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covered_and_uncovered_split_an_interval() {
        let u = [(0, 10), (20, 30)];
        assert_eq!(covered(&u, 5, 25), 10);
        assert_eq!(uncovered(&u, 5, 25), vec![(10, 20)]);
        assert_eq!(uncovered(&u, 30, 40), vec![(30, 40)]);
        assert_eq!(covered(&u, 30, 40), 0);
    }

    #[test]
    fn input_dims_give_the_largest_tensor() {
        assert_eq!(
            largest_input_bytes(
                "[[1073741824], [16777216], []]",
                r#"["signed char", "signed char", ""]"#
            ),
            Some(1073741824)
        );
        assert_eq!(largest_input_bytes("[[384]]", r#"["long"]"#), Some(3072));
        assert_eq!(
            largest_input_bytes("[[], []]", r#"["TensorList", ""]"#),
            None
        );
    }
}
