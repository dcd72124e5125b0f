//! The cross-rank reduce: collectives matched across ranks into instances, each split per rank into
//! wait (arrival → last arrival) and transfer (last arrival → end), summed per rank.

use std::collections::{BTreeMap, BTreeSet};

use super::bandwidth::BandwidthBasis;
use super::bandwidth::{bandwidth_table, Measured};
use super::host_comms::covered;
use super::kind::CollectiveKind;
use super::late::{late_cause, LateTally};
use super::parallelism::detect;
use super::{
    CollectiveInputs, CollectiveOp, Collectives, Instance, RankCollectives, MAX_INSTANCES,
};

/// What identifies one instance across ranks.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    /// Process group and its sequence number.
    Seq(String, i64),
    /// Group, operation, step and position among those.
    Order(String, CollectiveKind, Option<i64>, u32),
}

/// The note on a set of one rank.
pub const ONE_RANK_NOTE: &str = "one rank: a collective's kernel time includes waiting for the other ranks, which only their traces show, so wait and transfer are not split; bandwidth is over the whole kernel time (a lower bound). Load every rank's file together to split them";

/// The note on comparing start times across ranks.
pub const CLOCK_NOTE: &str = "arrivals are compared on each rank's own clock: ranks on different hosts can be offset by their clocks' skew";

/// Groups whose every op, on every rank, has a `Seq`.
fn seq_groups(inputs: &[&CollectiveInputs]) -> BTreeSet<String> {
    let mut all: BTreeMap<&str, bool> = BTreeMap::new();
    for i in inputs {
        for o in &i.ops {
            *all.entry(&o.group).or_insert(true) &= o.seq.is_some();
        }
    }
    crate::sort::set_of(
        all.into_iter()
            .filter(|(_, s)| *s)
            .map(|(g, _)| g.to_string()),
    )
}

fn key_of(o: &CollectiveOp, seq_groups: &BTreeSet<String>) -> Key {
    match o.seq {
        Some(s) if seq_groups.contains(&o.group) => Key::Seq(o.group.clone(), s),
        _ => Key::Order(o.group.clone(), o.kind, o.step, o.ordinal),
    }
}

/// The lower median of a list.
fn median(mut v: Vec<i64>) -> i64 {
    if v.is_empty() {
        return 0;
    }
    crate::sort::sort(&mut v);
    v[(v.len() - 1) / 2]
}

/// The reduce over every rank's inputs.
pub fn reduce(inputs: &[CollectiveInputs]) -> Collectives {
    let mut inputs: Vec<&CollectiveInputs> = inputs.iter().collect();
    crate::sort::sort_by_key(&mut inputs, |i| i.rank);
    let mut res = Collectives {
        ranks: inputs.iter().map(|i| i.rank).collect(),
        ..Default::default()
    };
    let seqs = seq_groups(&inputs);
    let world = inputs.iter().filter_map(|i| i.world_size).max();
    // The ranks of a collective without `Group size`: those it was seen on when the set holds
    // the whole job (or the job's size is unknown), else unknown.
    let ranks_of = |seen: usize| match world {
        Some(w) if w as usize != inputs.len() => None,
        _ => u32::try_from(seen).ok(),
    };
    // key -> (input index, op index), one op per rank (the first).
    let mut by_key: BTreeMap<Key, Vec<(usize, usize)>> = BTreeMap::new();
    for (ii, input) in inputs.iter().enumerate() {
        for (oi, o) in input.ops.iter().enumerate() {
            let list = by_key.entry(key_of(o, &seqs)).or_default();
            if list.last().is_none_or(|l| l.0 != ii) {
                list.push((ii, oi));
            }
        }
    }
    res.per_rank = inputs
        .iter()
        .map(|i| RankCollectives {
            rank: i.rank,
            ops: i.ops.len() as u64,
            kernel_ns: i.ops.iter().map(|o| o.end - o.start).sum(),
            window_ns: i.window_ns,
            ..Default::default()
        })
        .collect();
    let mut late = LateTally::default();
    let mut measured: Vec<Measured> = Vec::new();
    let mut instances: Vec<Instance> = Vec::new();
    let (mut skewed, mut partial) = (0u64, 0u64);
    for (key, members) in &by_key {
        let ops: Vec<(usize, &CollectiveOp)> = members
            .iter()
            .map(|&(i, o)| (i, &inputs[i].ops[o]))
            .collect();
        if ops.len() < 2 {
            res.matched.unmatched += 1;
            let o = ops[0].1;
            // Without its peers, the device's own wait tasks still split it: waiting, the rest
            // transfer.
            if o.device_wait_ns > 0 {
                let (i, _) = ops[0];
                let wait = o.device_wait_ns.min(o.end - o.start);
                let r = &mut res.per_rank[i];
                r.wait_ns += wait;
                r.transfer_ns += o.end - o.start - wait;
            }
            measured.push(Measured::of(
                o,
                o.end - o.start,
                None,
                BandwidthBasis::KernelDuration,
            ));
            continue;
        }
        match key {
            Key::Seq(..) => res.matched.by_seq += 1,
            Key::Order(..) => res.matched.by_order += 1,
        }
        let inst = split_instance(&ops, &inputs, &mut res.per_rank, &mut skewed);
        if ops
            .iter()
            .any(|(_, o)| o.group_size.is_some_and(|n| n as usize > ops.len()))
        {
            partial += 1;
        }
        if inst.wait_ns > 0 {
            let (li, lo) = ops
                .iter()
                .max_by_key(|(i, o)| (o.start, std::cmp::Reverse(inputs[*i].rank)))
                .copied()
                .expect("two or more ops");
            let (_, eo) = ops
                .iter()
                .min_by_key(|(_, o)| o.start)
                .copied()
                .expect("ops");
            res.per_rank[li].arrived_last += 1;
            late.add(inputs[li].rank, inst.wait_ns, late_cause(lo, eo));
        }
        if inst.transfer_ns > 0 {
            measured.push(Measured::of(
                ops[0].1,
                inst.transfer_ns,
                ranks_of(ops.len()),
                BandwidthBasis::Transfer,
            ));
        }
        instances.push(inst);
    }
    res.split = res.ranks.len() >= 2 && res.matched.by_seq + res.matched.by_order > 0;
    res.late_ranks = late.finish();
    res.bandwidth = bandwidth_table(measured);
    res.parallelism = detect(&inputs);
    crate::sort::sort_by(&mut instances, |a, b| {
        b.wait_ns
            .cmp(&a.wait_ns)
            .then(a.arrivals[0].1.cmp(&b.arrivals[0].1))
    });
    instances.truncate(MAX_INSTANCES);
    res.instances = instances;
    res.notes = notes(&res, skewed, partial);
    if let Some(w) = world.filter(|&w| w as usize > res.ranks.len() && res.ranks.len() > 1) {
        res.notes.push(format!(
            "the set holds {} of the job's {w} ranks: waits are for the last of the ranks loaded, and bus bandwidth needs the group size (`Group size`) where the args lack it",
            res.ranks.len()
        ));
    }
    res
}

/// One instance's split: per rank wait and transfer (added to `per_rank`), and its summary.
fn split_instance(
    ops: &[(usize, &CollectiveOp)],
    inputs: &[&CollectiveInputs],
    per_rank: &mut [RankCollectives],
    skewed: &mut u64,
) -> Instance {
    let last = ops.iter().map(|(_, o)| o.start).max().unwrap_or(0);
    let first_arrival = ops.iter().map(|(_, o)| o.start).min().unwrap_or(0);
    let mut transfers = Vec::with_capacity(ops.len());
    let mut wait_total = 0;
    for &(i, o) in ops {
        // A kernel that ended before the last arrival did not wait for it (clock skew, or not
        // the same collective): its wait stops at its end.
        let wait = last.min(o.end) - o.start;
        if o.end < last {
            *skewed += 1;
        }
        let transfer = (o.end - last).max(0);
        let r = &mut per_rank[i];
        r.matched += 1;
        r.wait_ns += wait;
        r.transfer_ns += transfer;
        r.exposed_wait_ns += covered(&o.exposed, o.start, last.min(o.end));
        r.exposed_transfer_ns += covered(&o.exposed, last, o.end);
        wait_total += wait;
        transfers.push(transfer);
    }
    let (li, lo) = ops
        .iter()
        .max_by_key(|(i, o)| (o.start, std::cmp::Reverse(inputs[*i].rank)))
        .copied()
        .expect("two or more ops");
    Instance {
        kind: lo.kind,
        group: lo.group.clone(),
        seq: lo.seq,
        step: lo.step,
        ordinal: lo.ordinal,
        bytes: ops.iter().find_map(|(_, o)| o.bytes),
        last_rank: inputs[li].rank,
        spread_ns: last - first_arrival,
        wait_ns: wait_total,
        transfer_ns: median(transfers),
        arrivals: ops
            .iter()
            .map(|(i, o)| (inputs[*i].rank, o.start, o.end))
            .collect(),
    }
}

fn notes(res: &Collectives, skewed: u64, partial: u64) -> Vec<String> {
    let mut out = Vec::new();
    if res.ranks.len() < 2 {
        if !res.is_empty() {
            out.push(ONE_RANK_NOTE.into());
        }
        return out;
    }
    if !res.split && !res.is_empty() {
        out.push("no collective is seen on two or more ranks (different process groups, streams or steps on each): wait and transfer are not split".into());
    }
    if res.split {
        out.push(CLOCK_NOTE.into());
    }
    if res.matched.unmatched > 0 && res.split {
        out.push(format!(
            "{} collective(s) seen on one rank only are left out of the wait/transfer split",
            res.matched.unmatched
        ));
    }
    if partial > 0 {
        out.push(format!(
            "{partial} instance(s) belong to a process group larger than the ranks loaded: the last arrival is the last among the ranks loaded"
        ));
    }
    if skewed > 0 {
        out.push(format!(
            "{skewed} time(s) a rank's collective ended before another rank's began (clock skew between hosts, or a mismatched instance): its transfer counts as 0"
        ));
    }
    out
}
