//! Collective and communication name classes: kernels of every collective library, their kind and library,
//! the host's communication operators (HTA's narrower lists beside the exact ones).

use super::*;

/// Communication kernel of any current collective library or custom kernel: NCCL (`ncclKernel_*`,
/// `ncclDevKernel_*`), RCCL, HCCL (Ascend's `hcom_allReduce_*`), oneCCL, MSCCL, NVSHMEM, custom and symmetric-memory
/// all-reduce, all-to-all kernels, and expert-parallel dispatch/combine kernels (DeepEP, pplx-kernels,
/// AMD's MoRI `EpDispatch*`/`EpCombine*`): they move tokens between ranks, so they are
/// communication, not compute.
pub fn is_collective_name(name: &str) -> bool {
    let b = name.as_bytes();
    let starts = |p: &str| b.len() >= p.len() && b[..p.len()].eq_ignore_ascii_case(p.as_bytes());
    COLLECTIVE_PREFIXES.iter().any(|p| starts(p))
        || COLLECTIVE_MARKS.iter().any(|m| name.contains(m))
}

/// [`is_collective_name`]'s prefixes, matched without regard to case.
pub const COLLECTIVE_PREFIXES: [&str; 6] = ["nccl", "rccl", "hccl", "hcom", "ccl", "msccl"];

/// [`is_collective_name`]'s marks, found anywhere in the name, case as written.
pub const COLLECTIVE_MARKS: [&str; 20] = [
    "ncclKernel",
    "ncclDevKernel",
    "nvshmem",
    "deep_ep::",
    "dpsk::ep",
    "pplx::",
    "mori::",
    "EpDispatch",
    "EpCombine",
    "multimem_all_reduce",
    "multimem_all_gather",
    "cross_device_reduce",
    "one_shot_all_reduce",
    "two_shot_all_reduce",
    "symm_mem",
    "all_to_all",
    "alltoall",
    "AllToAll",
    "all_gather_into_tensor_kernel",
    "mscclpp",
];

/// The operation a collective's text names: a kernel (`ncclDevKernel_AllReduce_Sum_f32_RING_LL`,
/// `void vllm::cross_device_reduce_1stage<...>`), a `Collective name` arg (`allreduce`,
/// `_allgather_base`, `reduce_scatter_tensor_coalesced`, `alltoall_base`, `send`) or a host
/// annotation (`nccl:all_reduce`, `c10d::allreduce_`, `gloo:all_gather`, `hccl:...`). `None` when
/// the text does not say (`ncclDevKernel_Generic`, `rcclGenericKernel`).
pub fn collective_kind_of(text: &str) -> Option<CollectiveKind> {
    let t: String = text
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    const MARKS: [(&str, CollectiveKind); 16] = [
        ("reducescatter", CollectiveKind::ReduceScatter),
        ("allreduce", CollectiveKind::AllReduce),
        ("crossdevicereduce", CollectiveKind::AllReduce),
        ("allgather", CollectiveKind::AllGather),
        ("alltoall", CollectiveKind::AllToAll),
        ("deepep", CollectiveKind::AllToAll),
        ("dpskep", CollectiveKind::AllToAll),
        ("broadcast", CollectiveKind::Broadcast),
        ("bcast", CollectiveKind::Broadcast),
        ("sendrecv", CollectiveKind::SendRecv),
        ("barrier", CollectiveKind::Barrier),
        ("send", CollectiveKind::SendRecv),
        ("recv", CollectiveKind::SendRecv),
        ("reduce", CollectiveKind::Reduce),
        ("gather", CollectiveKind::Other),
        ("scatter", CollectiveKind::Other),
    ];
    MARKS.iter().find(|(m, _)| t.contains(m)).map(|(_, k)| *k)
}

/// The library (or kind of kernel) of a communication kernel or host op.
pub fn collective_library_of(name: &str) -> CollectiveLibrary {
    let l = name.to_ascii_lowercase();
    if l.contains("mscclpp") || l.starts_with("msccl") {
        CollectiveLibrary::Msccl
    } else if l.starts_with("rccl") {
        CollectiveLibrary::Rccl
    } else if l.starts_with("nccl") || l.contains("ncclkernel") || l.contains("nccldevkernel") {
        CollectiveLibrary::Nccl
    } else if l.starts_with("hccl") {
        CollectiveLibrary::Hccl
    } else if l.starts_with("gloo") || l.contains("processgroupgloo") {
        CollectiveLibrary::Gloo
    } else if l.contains("nvshmem") || l.contains("deep_ep") || l.contains("dpsk::ep") {
        CollectiveLibrary::Nvshmem
    } else if [
        "cross_device_reduce",
        "one_shot_all_reduce",
        "two_shot_all_reduce",
        "multimem_all",
        "symm_mem",
        "custom_all_reduce",
        "customallreduce",
    ]
    .iter()
    .any(|m| l.contains(m))
    {
        CollectiveLibrary::CustomAllReduce
    } else {
        CollectiveLibrary::Other
    }
}

/// A host-side Gloo collective (`gloo:all_reduce`, `ProcessGroupGloo::...`): on a CPU-only rank
/// its span is the collective.
pub fn is_gloo_op(name: &str) -> bool {
    name.starts_with("gloo:") || name.starts_with("ProcessGroupGloo")
}

/// A host op that carries a collective's args (`record_param_comms`: `Collective name`, `Seq`,
/// `Process Group Name`, message sizes).
pub fn is_param_comms(name: &str) -> bool {
    name.starts_with("record_param_comms")
}

/// HTA 0.5.0's communication kernels: `^nccl.*Kernel`.
pub fn is_hta_collective_name(name: &str) -> bool {
    name.starts_with("nccl") && name[4..].contains("Kernel")
}

/// A CPU-side communication call: c10d / ProcessGroup ops, NCCL/Gloo annotations, barriers.
pub fn is_comm_op(name: &str) -> bool {
    name.starts_with("c10d::")
        || name.starts_with("nccl:")
        || name.starts_with("gloo:")
        || name.starts_with("record_param_comms")
        || name.starts_with("ProcessGroupNCCL")
        || name.starts_with("ProcessGroupGloo")
        || name.contains("all_reduce")
        || name.contains("allreduce")
        || name.contains("barrier")
}
