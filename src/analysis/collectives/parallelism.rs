//! The kinds of parallelism a set's collectives show: the operation, where in the step it is issued
//! and how often per step. Gradient all-reduce after or during backward: data parallel (DDP);
//! all-gather in forward with reduce-scatter in backward: sharded data parallel (FSDP/ZeRO); several
//! all-reduces (or all-gathers with reduce-scatters) inside forward every step: tensor parallel;
//! all-to-all: expert parallel (MoE) or sharded embeddings; send/recv: pipeline parallel.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

use super::inputs::{CollectiveInputs, StepPhase};
use super::kind::CollectiveKind;

crate::stable_enum! {
    /// A kind of parallelism.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Parallelism {
        /// DDP: gradients all-reduced during or after backward.
        DataParallel,
        /// FSDP / ZeRO: parameters all-gathered, gradients reduce-scattered.
        ShardedDataParallel,
        /// Megatron-style: collectives inside forward on every layer.
        TensorParallel,
        /// All-to-all: MoE expert dispatch/combine, or sharded embeddings.
        ExpertParallel,
        /// Send/recv between stages.
        PipelineParallel,
    }
}

impl Parallelism {
    /// The parallelism in words.
    pub fn label(self) -> &'static str {
        match self {
            Parallelism::DataParallel => "data parallel (gradient all-reduce, DDP)",
            Parallelism::ShardedDataParallel => {
                "sharded data parallel (FSDP/ZeRO: all-gather + reduce-scatter)"
            }
            Parallelism::TensorParallel => {
                "tensor parallel (collectives inside forward on every layer)"
            }
            Parallelism::ExpertParallel => "all-to-all (MoE experts or sharded embeddings)",
            Parallelism::PipelineParallel => "pipeline parallel (send/recv between stages)",
        }
    }
}

/// A kind of parallelism seen, with what shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParallelismUse {
    pub kind: Parallelism,
    /// Collectives that show it, per rank (mean over the ranks with collectives).
    pub ops_per_rank: f64,
    /// The same per analysed step (`None` without steps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ops_per_step: Option<f64>,
    /// Σ kernel time of those collectives over the ranks, ns.
    pub kernel_ns: i64,
    /// The operations and phases that show it, in words.
    pub evidence: String,
}

/// Operation and phase → (count, kernel ns), summed over ranks.
type Tally = BTreeMap<(CollectiveKind, StepPhase), (u64, i64)>;

/// The kinds of parallelism the ranks' collectives show, in [`Parallelism`] order.
pub fn detect(inputs: &[&CollectiveInputs]) -> Vec<ParallelismUse> {
    let mut tally: Tally = BTreeMap::new();
    for i in inputs {
        for o in &i.ops {
            let e = tally.entry((o.kind, o.phase)).or_default();
            e.0 += 1;
            e.1 += o.end - o.start;
        }
    }
    let ranks = inputs.iter().filter(|i| !i.ops.is_empty()).count().max(1) as f64;
    let steps = inputs
        .iter()
        .filter(|i| !i.ops.is_empty())
        .map(|i| i.steps)
        .max()
        .unwrap_or(0);
    let get = |k: CollectiveKind, p: StepPhase| tally.get(&(k, p)).copied().unwrap_or((0, 0));
    let per_step = |n: u64| n as f64 / ranks / steps.max(1) as f64;
    use CollectiveKind as K;
    use StepPhase as P;
    let mut out = Vec::new();
    let mut push = |kind: Parallelism, parts: &[(K, P)]| {
        let (n, ns) = parts.iter().fold((0, 0), |acc, &(k, p)| {
            (acc.0 + get(k, p).0, acc.1 + get(k, p).1)
        });
        if n == 0 {
            return;
        }
        let evidence = parts
            .iter()
            .filter(|&&(k, p)| get(k, p).0 > 0)
            .map(|&(k, p)| {
                format!(
                    "{} in {} ×{}",
                    k.label(),
                    p.as_str().replace('_', " "),
                    get(k, p).0
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        out.push(ParallelismUse {
            kind,
            ops_per_rank: n as f64 / ranks,
            ops_per_step: (steps > 0).then(|| per_step(n)),
            kernel_ns: ns,
            evidence,
        });
    };
    let fwd_ar = get(K::AllReduce, P::Forward).0;
    let fwd_ag = get(K::AllGather, P::Forward).0;
    let bwd_rs = get(K::ReduceScatter, P::Backward).0 + get(K::ReduceScatter, P::AfterBackward).0;
    let fwd_rs = get(K::ReduceScatter, P::Forward).0;
    let has_backward = tally.keys().any(|(_, p)| *p != P::Forward);
    // Several all-reduces inside forward every step; or all-gather and reduce-scatter both in
    // forward (sequence parallelism).
    // Layers compute between them: most forward all-reduces follow device compute (a burst of
    // all-reduces with nothing between, or host-only Gloo ones, is not a layer's).
    let between = inputs
        .iter()
        .flat_map(|i| i.ops.iter())
        .filter(|o| o.kind == K::AllReduce && o.phase == P::Forward && o.lead.busy_ns > 0)
        .count() as u64;
    let tp = (steps > 0 || has_backward) && per_step(fwd_ar) >= 2.0 && 2 * between >= fwd_ar
        || fwd_ag > 0 && fwd_rs > 0;
    let fsdp = fwd_ag > 0 && bwd_rs > 0 || bwd_rs > 0 && fwd_ag == 0 && !tp;
    // A tensor-parallel group all-reduces in backward too: data parallel needs a gradient
    // all-reduce in a group that does not all-reduce in forward.
    let fwd_groups: BTreeSet<&str> = ops_where(inputs, |k, p| k == K::AllReduce && p == P::Forward);
    let ddp = ops_where(inputs, |k, p| k == K::AllReduce && p != P::Forward)
        .iter()
        .any(|g| !tp || !fwd_groups.contains(g));
    if ddp {
        push(
            Parallelism::DataParallel,
            &[
                (K::AllReduce, P::Backward),
                (K::AllReduce, P::AfterBackward),
            ],
        );
    }
    if fsdp {
        push(
            Parallelism::ShardedDataParallel,
            &[
                (K::AllGather, P::Forward),
                (K::AllGather, P::Backward),
                (K::ReduceScatter, P::Backward),
                (K::ReduceScatter, P::AfterBackward),
            ],
        );
    }
    if tp {
        push(
            Parallelism::TensorParallel,
            &[
                (K::AllReduce, P::Forward),
                (K::AllGather, P::Forward),
                (K::ReduceScatter, P::Forward),
            ],
        );
    }
    let all = [P::Forward, P::Backward, P::AfterBackward];
    let a2a: Vec<(K, P)> = all.iter().map(|&p| (K::AllToAll, p)).collect();
    push(Parallelism::ExpertParallel, &a2a);
    let p2p: Vec<(K, P)> = all.iter().map(|&p| (K::SendRecv, p)).collect();
    push(Parallelism::PipelineParallel, &p2p);
    out
}

/// The groups of the ops whose operation and phase pass `test`.
fn ops_where<'a>(
    inputs: &[&'a CollectiveInputs],
    test: impl Fn(CollectiveKind, StepPhase) -> bool,
) -> BTreeSet<&'a str> {
    crate::sort::set_of(
        inputs
            .iter()
            .flat_map(|i| i.ops.iter())
            .filter(|o| test(o.kind, o.phase))
            .map(|o| o.group.as_str()),
    )
}
