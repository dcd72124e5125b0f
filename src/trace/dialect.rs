//! Kineto dialects 2020-2026: maps old and new category names and phases to one canonical event kind.

use serde::{Deserialize, Serialize};

crate::stable_enum! {
    /// What an event is, whatever the Kineto version called it. Stored as `u8` in the `kind` column.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    #[repr(u8)]
    pub enum EventKind {
        /// A GPU kernel (`kernel`, old `Kernel`).
        Kernel = 0,
        /// A GPU memory copy (`gpu_memcpy`, old `Memcpy`).
        Memcpy = 1,
        /// A GPU memory set (`gpu_memset`, old `Memset`).
        Memset = 2,
        /// A CPU operator (`cpu_op`, old `Operator`).
        CpuOp = 3,
        /// A CUDA/HIP/MTIA runtime call (`cuda_runtime`, old `Runtime`, `hip_runtime`, `mtia_runtime`).
        Runtime = 4,
        /// A CUDA driver call (`cuda_driver`).
        Driver = 5,
        /// A CPU-side annotation (`user_annotation`, `record_param_comms`, `ProfilerStep#N`).
        UserAnnotation = 6,
        /// A GPU-side annotation (`gpu_user_annotation`).
        GpuUserAnnotation = 7,
        /// A Python function (`python_function`, with_stack).
        PythonFunction = 8,
        /// A synchronisation event (`cuda_sync`: Event Sync, Stream Wait Event, Context Sync, ...).
        Sync = 9,
        /// Profiler overhead (`overhead`).
        Overhead = 10,
        /// An instant event (`cpu_instant_event`, ph `i`/`I`).
        Instant = 11,
        /// A flow link (`ac2g`, `fwdbwd`, old `async`; ph `s`/`f`/`t`).
        Flow = 12,
        /// The profiler's own span (`Trace`).
        Trace = 13,
        /// Process/thread names and sort indexes (ph `M`).
        Metadata = 14,
        /// A counter sample (ph `C`).
        Counter = 15,
        /// A CUPTI profiler range (`cuda_profiler_range`).
        ProfilerRange = 16,
        /// An operation on a non-CUDA accelerator (`mtia_ccp_events`).
        AcceleratorOp = 17,
        /// Anything else (unknown category or phase); the original category is kept.
        Other = 18,
    }
}

impl EventKind {
    pub fn from_u8(v: u8) -> EventKind {
        EventKind::ALL
            .get(v as usize)
            .copied()
            .unwrap_or(EventKind::Other)
    }

    /// Work that runs on the device: kernels, copies, sets and accelerator ops.
    pub fn is_gpu_activity(self) -> bool {
        matches!(
            self,
            EventKind::Kernel | EventKind::Memcpy | EventKind::Memset | EventKind::AcceleratorOp
        )
    }
}

crate::stable_enum! {
    /// The kind of accelerator a trace was recorded on.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum DeviceKind {
        /// NVIDIA GPUs (CUDA runtime, CUPTI).
        Cuda,
        /// AMD GPUs (HIP runtime, roctracer).
        Rocm,
        /// Meta MTIA accelerators.
        Mtia,
        /// Huawei Ascend NPUs (torch_npu, CANN).
        Npu,
        /// Intel GPUs (XPU: SYCL / Level Zero / Unified Runtime).
        Xpu,
        /// Apple GPUs through Metal Performance Shaders (`aten::_mps_*` operators; the PyTorch
        /// profiler records no MPS device activity).
        Mps,
        /// No accelerator: the trace holds host events only.
        Cpu,
        /// Nothing in the trace says.
        #[default]
        Unknown,
    }
}

impl DeviceKind {
    /// What the report calls the device: "GPU", "NPU", "MTIA accelerator".
    pub fn device_word(self) -> &'static str {
        match self {
            DeviceKind::Npu => "NPU",
            DeviceKind::Mtia => "MTIA accelerator",
            DeviceKind::Cpu => "CPU",
            _ => "GPU",
        }
    }

    /// The host runtime whose calls launch and wait for its work, in words.
    pub fn runtime_words(self) -> &'static str {
        match self {
            DeviceKind::Rocm => "HIP runtime events",
            DeviceKind::Npu => "CANN/AscendCL runtime events",
            DeviceKind::Mtia => "MTIA runtime events",
            DeviceKind::Xpu => "SYCL/Level Zero runtime events",
            _ => "CUDA runtime events",
        }
    }

    /// Whether CUDA's toolbox applies (CUDA graphs, TF32, cuDNN/MIOpen autotuning, NVLink/xGMI):
    /// NVIDIA and AMD GPUs, and a device nothing names (a GPU trace without its properties).
    pub fn has_cuda_toolbox(self) -> bool {
        matches!(
            self,
            DeviceKind::Cuda | DeviceKind::Rocm | DeviceKind::Unknown
        )
    }
}

/// The device kind a `deviceProperties` name says (`NVIDIA A100-SXM4-80GB`, `AMD Instinct MI300X`,
/// `Intel(R) Data Center GPU Max 1550`, `Ascend910B`), if any.
pub fn device_kind_of_device_name(name: &str) -> Option<DeviceKind> {
    let n = name.to_ascii_lowercase();
    let has = |m: &str| n.contains(m);
    if has("ascend") {
        Some(DeviceKind::Npu)
    } else if has("mtia") {
        Some(DeviceKind::Mtia)
    } else if has("amd") || has("instinct") || has("radeon") || has("gfx") {
        Some(DeviceKind::Rocm)
    } else if has("intel") || has("data center gpu max") || has("arc") && has("graphics") {
        Some(DeviceKind::Xpu)
    } else if has("nvidia")
        || has("tesla")
        || has("geforce")
        || has("quadro")
        || has("rtx")
        || [
            "a100", "h100", "h200", "b200", "gb200", "l4", "l40", "a10", "t4", "v100",
        ]
        .iter()
        .any(|m| {
            n.split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == *m)
        })
    {
        Some(DeviceKind::Cuda)
    } else {
        None
    }
}

/// The device kind of a `[memory]` event's `Device Type` (c10's `DeviceType`: 0 CPU, 1 CUDA, 6
/// HIP, 12 XPU, 13 MPS, 19 MTIA, 20 PrivateUse1 such as torch_npu's NPU); `None` for the CPU and
/// types that are not an accelerator. ROCm builds report their GPUs as CUDA (1).
pub fn device_kind_of_device_type(device_type: i64) -> Option<DeviceKind> {
    match device_type {
        1 => Some(DeviceKind::Cuda),
        6 => Some(DeviceKind::Rocm),
        12 => Some(DeviceKind::Xpu),
        13 => Some(DeviceKind::Mps),
        19 => Some(DeviceKind::Mtia),
        20 => Some(DeviceKind::Unknown),
        _ => None,
    }
}

/// The device kind a host runtime call or category names (`cudaLaunchKernel`, `hipMemcpyAsync`,
/// `AscendCL@aclnnAdd`, `urEnqueueKernelLaunch`, `mtia_runtime`), if any.
pub fn device_kind_of_runtime(name: &str) -> Option<DeviceKind> {
    let lower = |p: &str| {
        name.len() > p.len() && name.starts_with(p) && name.as_bytes()[p.len()].is_ascii_uppercase()
    };
    if lower("cuda") || lower("cu") || name.starts_with("cuda_") {
        Some(DeviceKind::Cuda)
    } else if lower("hip") || lower("hsa") || name.starts_with("hip_") {
        Some(DeviceKind::Rocm)
    } else if name.starts_with("AscendCL@") || lower("acl") || lower("aclnn") {
        Some(DeviceKind::Npu)
    } else if lower("ur") || lower("ze") || lower("pi") || lower("sycl") || name.starts_with("xpu_")
    {
        Some(DeviceKind::Xpu)
    } else if name.starts_with("mtia") || name.starts_with("runFunction") {
        Some(DeviceKind::Mtia)
    } else {
        None
    }
}

/// The device a host operator's name says it ran on: cuDNN, cuBLAS, NCCL and `*_cuda` operators
/// run only on an NVIDIA GPU, MIOpen and RCCL on an AMD GPU, `_mps` operators on an Apple GPU;
/// `None` for operators that run anywhere (`aten::mm`) or on the CPU (`mkldnn`).
pub fn device_kind_of_op_name(name: &str) -> Option<DeviceKind> {
    let lower = name.to_ascii_lowercase();
    let has = |p: &str| lower.contains(p);
    if has("miopen") || has("rccl") {
        Some(DeviceKind::Rocm)
    } else if has("cudnn") || has("cublas") || has("nccl") || has("_cuda") || has("cuda::") {
        Some(DeviceKind::Cuda)
    } else if has("_mps") || has("mps_") || has("mps::") {
        Some(DeviceKind::Mps)
    } else {
        None
    }
}

/// What a process of a non-Kineto dialect holds, from its name (the `process_name` metadata event,
/// or the pid itself when written as text): the legacy `torch.autograd.profiler` export's
/// `CPU functions` / `CUDA functions`, torch_npu's `Ascend Hardware` (device tasks), `HCCL` /
/// `Communication` (collectives), `CANN` (the host runtime).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessRole {
    /// Host operators (`CPU functions`).
    HostOps,
    /// The host side of the accelerator runtime (`CANN`).
    HostRuntime,
    /// Device operations, one thread per stream (`Ascend Hardware`, `CUDA functions`).
    DeviceOps(DeviceKind),
    /// Collective operations on the device (`HCCL`, `Communication`); task-level threads
    /// (`Plane N`) repeat them and are left out.
    DeviceCollectives,
}

/// The role of a process by its name, for the dialects that say it there.
pub fn process_role(process: &str) -> Option<ProcessRole> {
    match process.trim() {
        "CPU functions" => Some(ProcessRole::HostOps),
        "CUDA functions" => Some(ProcessRole::DeviceOps(DeviceKind::Cuda)),
        "Ascend Hardware" | "NPU" => Some(ProcessRole::DeviceOps(DeviceKind::Npu)),
        "HCCL" | "Communication" => Some(ProcessRole::DeviceCollectives),
        "CANN" => Some(ProcessRole::HostRuntime),
        _ => None,
    }
}

/// The kind of an event of a process with a role, when its category says nothing (`None`: keep the
/// kind it has). `thread` is the thread's name, `task_type` torch_npu's `args["Task Type"]`.
pub fn kind_in_process(
    role: ProcessRole,
    thread: Option<&str>,
    task_type: Option<&str>,
) -> Option<EventKind> {
    match role {
        ProcessRole::HostOps => Some(EventKind::CpuOp),
        ProcessRole::HostRuntime => Some(EventKind::Runtime),
        ProcessRole::DeviceOps(_) => {
            let t = task_type.unwrap_or("").to_ascii_uppercase();
            Some(if t.contains("MEMCPY") {
                EventKind::Memcpy
            } else if t.contains("MEMSET") {
                EventKind::Memset
            } else if t.starts_with("EVENT_") || t.contains("NOTIFY") || t.contains("WAIT") {
                // Stream-event records and waits: synchronisation, not device work.
                EventKind::Sync
            } else {
                EventKind::Kernel
            })
        }
        ProcessRole::DeviceCollectives => {
            let plane = thread.is_some_and(|t| t.trim_start().starts_with("Plane"));
            (!plane).then_some(EventKind::Kernel)
        }
    }
}

/// The canonical kind of a category string, or `None` when the category is unknown.
/// Matching ignores case, spaces and underscores, so `gpu_memcpy`, `Memcpy` and `GPU Memcpy` agree.
pub fn kind_of_category(category: &str) -> Option<EventKind> {
    let mut norm = [0u8; 32];
    let mut n = 0;
    for b in category.bytes() {
        if b == b' ' || b == b'_' || b == b'-' {
            continue;
        }
        if n == norm.len() {
            return None;
        }
        norm[n] = b.to_ascii_lowercase();
        n += 1;
    }
    let kind = match &norm[..n] {
        b"kernel" | b"gpukernel" => EventKind::Kernel,
        b"gpumemcpy" | b"memcpy" => EventKind::Memcpy,
        b"gpumemset" | b"memset" => EventKind::Memset,
        b"cpuop" | b"operator" => EventKind::CpuOp,
        b"cudaruntime"
        | b"runtime"
        | b"hipruntime"
        | b"mtiaruntime"
        | b"xpuruntime"
        | b"privateuse1runtime" => EventKind::Runtime,
        b"cudadriver" | b"driver" | b"hipdriver" | b"privateuse1driver" => EventKind::Driver,
        b"userannotation" | b"recordparamcomms" => EventKind::UserAnnotation,
        b"gpuuserannotation" => EventKind::GpuUserAnnotation,
        b"pythonfunction" | b"python" => EventKind::PythonFunction,
        b"cudasync" | b"sync" => EventKind::Sync,
        b"overhead" => EventKind::Overhead,
        b"cpuinstantevent" | b"instant" => EventKind::Instant,
        b"ac2g" | b"fwdbwd" | b"async" | b"flow" | b"flowevent" => EventKind::Flow,
        b"trace" => EventKind::Trace,
        b"cudaprofilerrange" => EventKind::ProfilerRange,
        b"mtiaccpevents" | b"mtiainsight" => EventKind::AcceleratorOp,
        _ => return None,
    };
    Some(kind)
}

/// The canonical kind of an event from its phase and (already resolved) category kind.
/// Phases that fix the kind (metadata, counters, flows) win over the category.
pub fn kind_of_event(phase: u8, category_kind: Option<EventKind>) -> EventKind {
    match phase {
        b'M' => EventKind::Metadata,
        b'C' => EventKind::Counter,
        b's' | b'f' | b't' => EventKind::Flow,
        b'i' | b'I' | b'R' => match category_kind {
            Some(k) if k != EventKind::Flow => k,
            _ => EventKind::Instant,
        },
        _ => category_kind.unwrap_or(EventKind::Other),
    }
}

/// Phases of the Chrome trace format this tool understands.
pub fn is_known_phase(phase: u8) -> bool {
    matches!(
        phase,
        b'X' | b'B'
            | b'E'
            | b'i'
            | b'I'
            | b'C'
            | b's'
            | b'f'
            | b't'
            | b'M'
            | b'b'
            | b'e'
            | b'n'
            | b'R'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_and_new_names_agree() {
        assert_eq!(kind_of_category("kernel"), Some(EventKind::Kernel));
        assert_eq!(kind_of_category("Kernel"), Some(EventKind::Kernel));
        assert_eq!(kind_of_category("gpu_memcpy"), kind_of_category("Memcpy"));
        assert_eq!(kind_of_category("Operator"), Some(EventKind::CpuOp));
        assert_eq!(kind_of_category("Runtime"), Some(EventKind::Runtime));
        assert_eq!(kind_of_category("async"), Some(EventKind::Flow));
        assert_eq!(kind_of_category("no such thing"), None);
        for k in EventKind::ALL {
            assert_eq!(EventKind::from_u8(k as u8), k);
        }
    }

    #[test]
    fn phase_wins_over_category() {
        assert_eq!(kind_of_event(b'M', None), EventKind::Metadata);
        assert_eq!(kind_of_event(b's', Some(EventKind::Flow)), EventKind::Flow);
        assert_eq!(
            kind_of_event(b'X', Some(EventKind::Kernel)),
            EventKind::Kernel
        );
        assert_eq!(kind_of_event(b'i', None), EventKind::Instant);
        assert_eq!(kind_of_event(b'X', None), EventKind::Other);
    }
}
