//! Name classes of CUDA/HIP/accelerator events, in one place: launch, sync, memcpy, graph, capture,
//! collective, DataLoader, warm-up and compilation. Every analysis and rule asks here; HTA 0.5.0's own
//! (narrower) lists sit beside the exact ones and say so.

use super::collectives::kind::{CollectiveKind, CollectiveLibrary};
use crate::table::EventKind;

/// Runtime calls that put work on a stream (CUDA, HIP, XPU, MTIA `runFunction`), graph launches excluded.
pub fn is_launch_call(name: &str) -> bool {
    matches!(
        name,
        "cudaLaunchKernel"
            | "cudaLaunchKernelExC"
            | "cuLaunchKernel"
            | "cuLaunchKernelEx"
            | "cudaMemcpyAsync"
            | "cudaMemsetAsync"
            | "hipLaunchKernel"
            | "hipExtLaunchKernel"
            | "hipModuleLaunchKernel"
            | "hipExtModuleLaunchKernel"
            | "hipMemcpyAsync"
            | "hipMemsetAsync"
            | "hipMemcpyWithStream"
            // Intel XPU (Unified Runtime, Level Zero, the older PI layer).
            | "urEnqueueKernelLaunch"
            | "urEnqueueUSMMemcpy"
            | "urEnqueueUSMFill"
            | "zeCommandListAppendLaunchKernel"
            | "piEnqueueKernelLaunch"
    ) || name.starts_with("runFunction")
}

/// A launch call that copies or fills memory (`cudaMemsetAsync`, `hipMemcpyAsync`, `urEnqueueUSMFill`)
/// rather than launching a kernel: a zero-byte copy or fill runs nothing on the device, so its
/// device event may be absent without anything being lost.
pub fn is_copy_or_fill_call(name: &str) -> bool {
    name.contains("Memcpy") || name.contains("Memset") || name.contains("USMFill")
}

/// HTA 0.5.0's launch calls for queue length (its `get_runtime_launch_events_query`: exact names).
pub fn is_hta_queue_launch_call(name: &str) -> bool {
    matches!(
        name,
        "cudaLaunchKernel"
            | "cudaLaunchKernelExC"
            | "cuLaunchKernel"
            | "cudaMemcpyAsync"
            | "cudaMemsetAsync"
            | "runFunction - job_prep_and_submit_for_execution"
            | "hipLaunchKernel"
            | "hipExtModuleLaunchKernel"
            | "hipMemsetAsync"
            | "hipMemcpyAsync"
            | "hipMemcpyWithStream"
    )
}

/// HTA 0.5.0's launch calls for launch statistics (CUDA and MTIA only).
pub fn is_hta_launch_call(name: &str) -> bool {
    matches!(
        name,
        "cudaLaunchKernel" | "cudaLaunchKernelExC" | "cudaMemcpyAsync" | "cudaMemsetAsync"
    ) || name.starts_with("runFunction")
}

/// A CUDA/HIP graph launch: one call that runs every kernel of a captured graph.
pub fn is_graph_launch(name: &str) -> bool {
    matches!(
        name,
        "cudaGraphLaunch" | "cudaGraphLaunch_v10000" | "cuGraphLaunch" | "hipGraphLaunch"
    )
}

/// The start of a stream capture into a graph (the launches after it are recorded, not run).
pub fn is_capture_begin(name: &str) -> bool {
    matches!(
        name,
        "cudaStreamBeginCapture"
            | "cudaStreamBeginCapture_v10000"
            | "cudaStreamBeginCaptureToGraph"
            | "cuStreamBeginCapture"
            | "cuStreamBeginCapture_v2"
            | "hipStreamBeginCapture"
    )
}

/// Turning a captured graph into an executable one (`cudaGraphInstantiate`, its upload): graph
/// set-up, paid once per capture, like the capture itself; the replays after it are the steady state.
pub fn is_graph_instantiate(name: &str) -> bool {
    [
        "cudaGraphInstantiate",
        "cuGraphInstantiate",
        "hipGraphInstantiate",
        "cudaGraphUpload",
        "cuGraphUpload",
        "hipGraphUpload",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// The end of a stream capture.
pub fn is_capture_end(name: &str) -> bool {
    matches!(
        name,
        "cudaStreamEndCapture"
            | "cudaStreamEndCapture_v10000"
            | "cuStreamEndCapture"
            | "hipStreamEndCapture"
    )
}

/// Operators that only allocate or reshape storage (`aten::empty`, `aten::resize_`): a long one
/// is an allocation or a lazy device initialisation, never computation on CPU tensors.
pub fn is_allocation_op(name: &str) -> bool {
    [
        "aten::empty",
        "aten::new_empty",
        "aten::resize",
        "aten::set_",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}

/// Operators that only make a view of a tensor (new sizes, strides or offset over the same memory):
/// they compute nothing on any device, so their host time is framework overhead, never compute on
/// CPU tensors. A view that must copy (a `reshape` of a non-contiguous tensor) shows its copy as a
/// child operator (`aten::clone`, `aten::copy_`), read on its own.
pub fn is_view_op(name: &str) -> bool {
    let Some(op) = name.strip_prefix("aten::") else {
        return false;
    };
    matches!(
        op,
        "as_strided"
            | "view"
            | "view_as"
            | "_unsafe_view"
            | "_reshape_alias"
            | "reshape"
            | "flatten"
            | "unflatten"
            | "narrow"
            | "slice"
            | "select"
            | "split"
            | "split_with_sizes"
            | "unsafe_split"
            | "unbind"
            | "chunk"
            | "tensor_split"
            | "expand"
            | "expand_as"
            | "t"
            | "transpose"
            | "permute"
            | "squeeze"
            | "unsqueeze"
            | "detach"
            | "alias"
            | "diagonal"
            | "unfold"
            | "lift_fresh"
    )
}

/// Runtime calls that block the host until the device catches up.
pub fn is_sync_call(name: &str) -> bool {
    matches!(
        name,
        "cudaStreamSynchronize"
            | "cudaDeviceSynchronize"
            | "cudaEventSynchronize"
            | "cudaMemcpy"
            | "cuStreamSynchronize"
            | "cuCtxSynchronize"
            | "cuEventSynchronize"
            | "hipStreamSynchronize"
            | "hipDeviceSynchronize"
            | "hipEventSynchronize"
            | "hipMemcpy"
            | "hipMemcpyWithStream"
            | "cudaMemcpy2D"
    )
}

/// Synchronising calls that are copies (`cudaMemcpy`, `hipMemcpyWithStream`): a result read back.
pub fn is_blocking_copy_call(name: &str) -> bool {
    is_sync_call(name) && name.contains("Memcpy")
}

/// Runtime calls that set the device up or manage its memory: a burst of them is warm-up
/// (context creation, the caching allocator growing, module loading). Device-property queries are
/// not: ROCm makes one per launch.
pub fn is_setup_call(name: &str) -> bool {
    matches!(
        name,
        "cudaMalloc"
            | "cudaFree"
            | "cudaMallocHost"
            | "cudaFreeHost"
            | "cudaHostAlloc"
            | "cudaMallocAsync"
            | "cuMemAlloc_v2"
            | "cuMemFree_v2"
            | "cuMemCreate"
            | "cuMemMap"
            | "cuMemAddressReserve"
            | "cuModuleLoadData"
            | "cuModuleLoadDataEx"
            | "cuLibraryLoadData"
            | "cuModuleGetFunction"
            | "cuDevicePrimaryCtxRetain"
            | "cudaStreamCreate"
            | "cudaStreamCreateWithFlags"
            | "cudaStreamCreateWithPriority"
            | "hipStreamCreate"
            | "hipStreamCreateWithFlags"
            | "cuCtxCreate_v2"
            | "hipMalloc"
            | "hipFree"
            | "hipHostMalloc"
            | "hipHostFree"
            | "hipModuleLoadData"
    )
}

/// A device-memory free call: it synchronises the device before the memory is returned.
pub fn is_device_free_call(name: &str) -> bool {
    matches!(name, "cudaFree" | "cuMemFree_v2" | "hipFree")
}

/// cuDNN/MIOpen algorithm search (`cudnn.benchmark = True`): runs candidate kernels and synchronises
/// inside the library, once per new shape.
pub fn is_algorithm_search(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.contains("cudnnfind")
        || l.contains("findconvolution")
        || l.contains("miopenfind")
        || l.contains("cudnngetconvolution") && l.contains("algorithm")
        || l.contains("benchmark_conv")
}

/// torch.compile's compilation (Dynamo tracing, AOTAutograd, Inductor code generation, Triton
/// compilation), as CPU ops, annotations or Python frames. A Python frame (`file.py(N): function`)
/// is compilation by its function (`compile_fx_inner`, `_compile`, `fw_compiler_base`) or by a file
/// only compilation runs ([`COMPILE_ONLY_FILES`]), never by the file alone: `compile_fx.py`'s
/// `run` and the cudagraph trees' frames wrap every replay of compiled code, steady-state work.
pub fn is_compile_event(name: &str) -> bool {
    if let Some(file) = frame_file(name) {
        let f = frame_function(name).to_ascii_lowercase();
        // Only torch.compile's own stack compiles (not `re.compile`, an import's bytecode); there
        // `compiled_function` and `compile_wrapper` (Dynamo's `eval_frame.py`) run every call.
        let stack = ["torch/_dynamo/", "torch/_inductor/", "torch/_functorch/"]
            .iter()
            .any(|p| file.contains(p));
        let compiles = f == "compile"
            || f == "_compile"
            || f.starts_with("compile_") && !f.contains("wrapper")
            || f.starts_with("_compile_")
            || f.contains("compiler");
        return stack && compiles || COMPILE_ONLY_FILES.iter().any(|c| file.contains(c));
    }
    is_compile_name(name)
}

/// Files whose every frame is torch.compile's compilation (Dynamo's tracer, Inductor's code
/// generation), never the replay of what it compiled. Not Triton's `compiler/compiler.py`: its
/// `CompiledKernel.run` and `launch_metadata` launch every call of a compiled kernel.
pub const COMPILE_ONLY_FILES: [&str; 4] = [
    "async_compile.py",
    "_inductor/codegen/",
    "_dynamo/convert_frame.py",
    "_dynamo/symbolic_convert.py",
];

/// [`is_compile_event`] for a name that is not a Python frame (an operator or annotation).
fn is_compile_name(name: &str) -> bool {
    // Not `aot_autograd` (its runtime wrappers run every call) nor `TorchDynamo Cache Lookup` (every
    // call of a compiled function): those are steady-state work.
    const MARKS: [&str; 10] = [
        "_compile.compile_inner",
        "compile_fx",
        "inductor_compile",
        "OutputGraph.call_user_compiler",
        "create_aot_dispatcher_function",
        "dynamo_timed",
        "async_compile",
        "triton.compiler",
        "CachingAutotuner.benchmark_all_configs",
        "_compile_fx_inner",
    ];
    MARKS.iter().any(|m| name.contains(m))
        || name.starts_with("compile_fx")
        || name.starts_with("_compile")
        || name.starts_with("inductor_")
}

/// An annotation that says it is warm-up (`record_function("warmup")`, a benchmark's `|warmup|` tag).
pub fn is_warmup_label(name: &str) -> bool {
    let l = name.to_ascii_lowercase();
    l.contains("warmup") || l.contains("warm_up") || l.contains("warm-up")
}

/// A region compiled by torch.compile (`Torch-Compiled Region`, `CompiledFunction`).
pub fn is_compiled_region(name: &str) -> bool {
    name.starts_with("Torch-Compiled Region")
        || name == "CompiledFunction"
        || name == "CompiledFunctionBackward"
        || name.starts_with("## Call CompiledFxGraph")
}

mod kernels;
pub use kernels::*;

mod collectives;
pub use collectives::*;

/// A name that says DataLoader work (`enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__`,
/// `dataloader_next`, ...).
pub fn is_data_loader_name(name: &str) -> bool {
    name.contains("DataLoader") || name.contains("dataloader")
}

/// A CPU-side DataLoader operation: an op, annotation or Python frame whose name has the class
/// [`NameClass::DATA_LOADER`].
pub fn is_data_loader_op(kind: EventKind, class: NameClass) -> bool {
    matches!(
        kind,
        EventKind::CpuOp | EventKind::UserAnnotation | EventKind::PythonFunction
    ) && class.has(NameClass::DATA_LOADER)
}

/// A profiler-step annotation for HTA 0.5.0's last-step filter (`_filter_irrelevant_gpu_kernels`:
/// every symbol with `"ProfilerStep" in name`). Steps are numbered by [`profiler_step_number`].
pub fn is_profiler_step_name(name: &str) -> bool {
    name.contains("ProfilerStep")
}

/// The number of a `ProfilerStep#N` annotation (spaces allowed around `#`, HTA's
/// `ProfilerStep\s*#\s*(\d+)` at the start of the name); `None` for any other name.
pub fn profiler_step_number(name: &str) -> Option<i64> {
    let rest = name.strip_prefix("ProfilerStep")?.trim_start();
    let rest = rest.strip_prefix('#')?.trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    rest[..digits].parse().ok()
}

/// HTA 0.5.0's blocking calls (the critical path's CPU edge into their end weighs zero).
pub fn is_hta_blocking_call(name: &str) -> bool {
    matches!(
        name,
        "cudaDeviceSynchronize"
            | "cudaStreamSynchronize"
            | "cudaEventQuery"
            | "cudaEventSynchronize"
            | "cudaMemcpy"
            | "cudaMemcpyAsync"
    )
}

/// Calls that really wait for the device (synchronize, blocking copy).
pub fn waits_for_device(name: &str) -> bool {
    matches!(
        name,
        "cudaDeviceSynchronize"
            | "cudaStreamSynchronize"
            | "cudaEventSynchronize"
            | "cudaMemcpy"
            | "cudaMemcpy2D"
            | "cudaMemset"
            | "cuCtxSynchronize"
            | "cuStreamSynchronize"
            | "cuEventSynchronize"
            | "cuMemcpyDtoH_v2"
            | "cuMemcpyHtoD_v2"
            | "hipDeviceSynchronize"
            | "hipStreamSynchronize"
            | "hipEventSynchronize"
            | "hipMemcpy"
    )
}

/// Calls that load or look up device code, or create a library's handle: paid once per function,
/// module or process (lazy module loading, cuBLAS/cuDNN handle creation), never steady-state work.
pub fn is_one_off_call(name: &str) -> bool {
    const PREFIXES: [&str; 14] = [
        "cuModuleLoad",
        "cuModuleGetFunction",
        "cuLibraryLoad",
        "cuLibraryGetKernel",
        "cuLibraryGetModule",
        "cudaGetFuncBySymbol",
        "cudaGetDriverEntryPoint",
        "cuGetProcAddress",
        "hipModuleLoad",
        "hipModuleGetFunction",
        "cublasCreate",
        "cublasLtCreate",
        "cudnnCreate",
        "miopenCreate",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
        || matches!(
            name,
            "cuInit" | "cuDevicePrimaryCtxRetain" | "cuCtxCreate_v2"
        )
}

/// A Python frame or call that only waits (a selector, a pipe or socket read, a lock, a condition, a
/// queue, a sleep): a thread inside it does no work, so it is never the host work that kept the
/// device idle. Kineto writes Python frames as `file.py(line): function` and C functions as
/// `<built-in method NAME of ...>` / `<method 'NAME' of 'TYPE' objects>`.
pub fn is_waiting_frame(name: &str) -> bool {
    let function = python_function_name(name);
    let file = name.split('(').next().unwrap_or("");
    let in_file = |f: &str| file.ends_with(f);
    match function {
        "select" | "poll" | "epoll" | "kqueue" | "_poll" => {
            in_file("selectors.py")
                || in_file("connection.py")
                || in_file("windows_events.py")
                || name.starts_with('<')
        }
        "recv" | "_recv" | "_recv_bytes" | "recv_bytes" | "recv_into" | "recvfrom" => true,
        "wait" | "_wait" | "wait_for" => {
            in_file("threading.py")
                || in_file("connection.py")
                || in_file("popen_fork.py")
                || in_file("synchronize.py")
                || in_file("_base.py")
                || name.contains("Condition.wait")
                || name.contains("Event.wait")
                || name.starts_with('<')
        }
        "acquire" | "_acquire_restore" => true,
        "sleep" => true,
        // Windows: `_winapi` waits under multiprocessing's connection and queues.
        "WaitForSingleObject" | "WaitForMultipleObjects" | "GetQueuedCompletionStatus" => true,
        "get" => in_file("queue.py") || in_file("queues.py"),
        "join" => in_file("threading.py") || in_file("process.py"),
        _ => name.contains("Condition.wait") || name == "time.sleep",
    }
}

/// The function a Python frame name names: `threading.py(320): wait` → `wait`,
/// `<built-in method acquire of _thread.lock object at 0x7f>` → `acquire`,
/// `<method 'acquire' of '_thread.lock' objects>` → `acquire`, `<built-in function sleep>` → `sleep`.
fn python_function_name(name: &str) -> &str {
    if let Some(rest) = name.strip_prefix('<') {
        let rest = rest
            .strip_prefix("built-in method ")
            .or_else(|| rest.strip_prefix("built-in function "))
            .or_else(|| rest.strip_prefix("method "))
            .unwrap_or(rest);
        let word = rest
            .split([' ', '>'])
            .next()
            .unwrap_or("")
            .trim_matches('\'')
            .rsplit('.')
            .next()
            .unwrap_or("");
        return word;
    }
    match name.rsplit_once("): ") {
        Some((_, f)) => f.trim(),
        None => name.rsplit('.').next().unwrap_or(name),
    }
}

/// Which way a device copy moves data.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CopyDirection {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
    PeerToPeer,
}

/// What host memory a copy to or from the host uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HostMemory {
    Pageable,
    Pinned,
}

/// Direction and host memory of a device copy, from its name (`Memcpy HtoD (Pageable -> Device)`,
/// `Memcpy DtoH (Device -> Pinned)`, `Memcpy DtoD (Device -> Device)`, `Memcpy PtoP`, ROCm's
/// `CopyHostToDevice`); `None` for anything else.
pub fn copy_kind(name: &str) -> Option<(CopyDirection, Option<HostMemory>)> {
    let direction = if name.contains("HtoD") || name.contains("HostToDevice") {
        CopyDirection::HostToDevice
    } else if name.contains("DtoH") || name.contains("DeviceToHost") {
        CopyDirection::DeviceToHost
    } else if name.contains("DtoD") || name.contains("DeviceToDevice") {
        CopyDirection::DeviceToDevice
    } else if name.contains("PtoP") || name.contains("Peer") {
        CopyDirection::PeerToPeer
    } else {
        return None;
    };
    let memory = if name.contains("Pageable") {
        Some(HostMemory::Pageable)
    } else if name.contains("Pinned") {
        Some(HostMemory::Pinned)
    } else {
        None
    };
    Some((direction, memory))
}

/// A copy in words: "host-to-device copy from pageable memory", "device-to-host copy into pinned
/// memory", "device-to-device copy"; `None` when the name says no direction.
pub fn copy_words(name: &str) -> Option<String> {
    let (dir, mem) = copy_kind(name)?;
    let what = match dir {
        CopyDirection::HostToDevice => "host-to-device copy",
        CopyDirection::DeviceToHost => "device-to-host copy",
        CopyDirection::DeviceToDevice => "device-to-device copy",
        CopyDirection::PeerToPeer => "peer-to-peer copy",
    };
    let mem = match (dir, mem) {
        (CopyDirection::HostToDevice, Some(HostMemory::Pageable)) => " from pageable host memory",
        (CopyDirection::HostToDevice, Some(HostMemory::Pinned)) => " from pinned host memory",
        (CopyDirection::DeviceToHost, Some(HostMemory::Pageable)) => " into pageable host memory",
        (CopyDirection::DeviceToHost, Some(HostMemory::Pinned)) => " into pinned host memory",
        _ => "",
    };
    Some(format!("{what}{mem}"))
}

/// A copy by the name CUDA's profiler gives it (`Memcpy HtoD (Pageable -> Device)`).
pub fn is_memcpy_name(name: &str) -> bool {
    name.starts_with("Memcpy")
}

/// A memory set by the name CUDA's profiler gives it (`Memset (Device)`).
pub fn is_memset_name(name: &str) -> bool {
    name.starts_with("Memset")
}

/// An accelerator DMA by its name (MTIA `dma_request`).
pub fn is_dma_name(name: &str) -> bool {
    name.starts_with("dma")
}

/// HTA 0.5.0's memory kernels by name (`^Memcpy|^Memset|^dma`).
pub fn is_hta_memory_name(name: &str) -> bool {
    is_memcpy_name(name) || is_memset_name(name) || is_dma_name(name)
}

/// HTA 0.5.0's "other" kernels by name (`Memcpy|^Memset|Sync`), asked after its memory pattern.
pub fn is_hta_other_name(name: &str) -> bool {
    name.contains("Memcpy") || is_memset_name(name) || name.contains("Sync")
}

/// An NCCL kernel as HTA 0.5.0's straggler analysis picks them (`ncclKernel*`; not `ncclDevKernel*`).
pub fn is_nccl_kernel_name(name: &str) -> bool {
    name.starts_with("ncclKernel")
}

/// A kernel named like Triton's (`triton_…`), the code torch.compile generates.
pub fn is_triton_kernel(name: &str) -> bool {
    name.starts_with("triton_")
}

/// A host op of the backward pass (autograd's engine, a `*Backward*` node).
pub fn is_backward_op(name: &str) -> bool {
    name.starts_with("autograd::engine::evaluate_function") || name.contains("Backward")
}

/// The device-side synchronisation events of CUDA's profiler (category `cuda_sync`), by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceSyncEvent {
    /// `cudaEventSynchronize`: the host waits for an event.
    EventSync,
    /// `cudaDeviceSynchronize`: the host waits for every stream.
    ContextSync,
    /// `cudaStreamSynchronize`: the host waits for one stream.
    StreamSync,
    /// `cudaStreamWaitEvent`: a stream waits for an event of another.
    StreamWaitEvent,
}

/// The device-side sync event a name is, if any.
pub fn device_sync_event(name: &str) -> Option<DeviceSyncEvent> {
    match name {
        "Event Sync" => Some(DeviceSyncEvent::EventSync),
        "Context Sync" => Some(DeviceSyncEvent::ContextSync),
        "Stream Sync" => Some(DeviceSyncEvent::StreamSync),
        "Stream Wait Event" => Some(DeviceSyncEvent::StreamWaitEvent),
        _ => None,
    }
}

/// The sync events HTA 0.5.0 keeps as device rows whatever their stream (`Event Sync`, `Context Sync`).
pub fn is_hta_device_sync_name(name: &str) -> bool {
    matches!(
        device_sync_event(name),
        Some(DeviceSyncEvent::EventSync | DeviceSyncEvent::ContextSync)
    )
}

/// A device operation that waits (for an event, another queue, a notify) rather than computes:
/// MTIA's `event_wait`, Ascend's `EVENT_WAIT` / `Notify_Wait` tasks, a CUDA `Stream Wait Event`.
/// Its time on the device is not compute, whatever the kernel figures count it as.
pub fn is_device_wait_op(name: &str) -> bool {
    // Spaces and underscores alike: torch_npu writes `Notify_Wait`, msprof exports `Notify Wait`.
    let n = name.to_ascii_lowercase().replace(' ', "_");
    matches!(
        n.as_str(),
        "event_wait" | "notify_wait" | "stream_wait_event" | "wait_event"
    ) || n.starts_with("event_wait")
        || n.starts_with("notify_wait")
}

/// The classes of one name, as a set of bits: every predicate of this module, worked out once per
/// interned name by [`NameClasses`] (the tests are text comparisons, too slow to repeat per row).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NameClass(u32);

impl NameClass {
    /// [`is_launch_call`].
    pub const LAUNCH: NameClass = NameClass(1);
    /// [`is_hta_launch_call`] (HTA's launch statistics).
    pub const HTA_LAUNCH: NameClass = NameClass(1 << 1);
    /// [`is_hta_queue_launch_call`] (HTA's queue length and critical path).
    pub const HTA_QUEUE_LAUNCH: NameClass = NameClass(1 << 2);
    /// [`is_graph_launch`].
    pub const GRAPH_LAUNCH: NameClass = NameClass(1 << 3);
    /// [`is_sync_call`].
    pub const SYNC: NameClass = NameClass(1 << 4);
    /// [`waits_for_device`].
    pub const WAITS_FOR_DEVICE: NameClass = NameClass(1 << 5);
    /// [`is_hta_blocking_call`].
    pub const HTA_BLOCKING: NameClass = NameClass(1 << 6);
    /// `cudaEventRecord`.
    pub const EVENT_RECORD: NameClass = NameClass(1 << 7);
    /// `cudaStreamWaitEvent`.
    pub const STREAM_WAIT: NameClass = NameClass(1 << 8);
    /// A runtime call whose name says Memcpy.
    pub const MEMCPY_CALL: NameClass = NameClass(1 << 9);
    /// A copy from device to host (`DtoH` in the name).
    pub const DTOH: NameClass = NameClass(1 << 10);
    /// [`is_capture_begin`].
    pub const CAPTURE_BEGIN: NameClass = NameClass(1 << 11);
    /// [`is_capture_end`].
    pub const CAPTURE_END: NameClass = NameClass(1 << 12);
    /// [`is_setup_call`].
    pub const SETUP: NameClass = NameClass(1 << 13);
    /// [`is_device_free_call`].
    pub const DEVICE_FREE: NameClass = NameClass(1 << 14);
    /// [`is_algorithm_search`].
    pub const ALGORITHM_SEARCH: NameClass = NameClass(1 << 15);
    /// [`is_compile_event`].
    pub const COMPILE: NameClass = NameClass(1 << 16);
    /// [`is_compiled_region`].
    pub const COMPILED_REGION: NameClass = NameClass(1 << 17);
    /// [`is_warmup_label`].
    pub const WARMUP_LABEL: NameClass = NameClass(1 << 18);
    /// [`is_collective_name`].
    pub const COLLECTIVE: NameClass = NameClass(1 << 19);
    /// [`is_hta_collective_name`].
    pub const HTA_COLLECTIVE: NameClass = NameClass(1 << 20);
    /// [`is_comm_op`].
    pub const COMM_OP: NameClass = NameClass(1 << 21);
    /// [`is_data_loader_name`].
    pub const DATA_LOADER: NameClass = NameClass(1 << 22);
    /// [`is_profiler_step_name`] (HTA's last-step filter).
    pub const PROFILER_STEP_NAME: NameClass = NameClass(1 << 23);
    /// A `ProfilerStep#N` annotation ([`profiler_step_number`]).
    pub const PROFILER_STEP: NameClass = NameClass(1 << 24);
    /// [`is_waiting_frame`].
    pub const WAITING: NameClass = NameClass(1 << 25);
    /// [`is_one_off_call`].
    pub const ONE_OFF_CALL: NameClass = NameClass(1 << 26);
    /// [`is_graph_instantiate`].
    pub const GRAPH_INSTANTIATE: NameClass = NameClass(1 << 27);
    /// [`is_device_wait_op`] and not one of CUDA's own sync events ([`device_sync_event`]): a
    /// device task that waits for a signal (Ascend HCCL's `Notify_Wait`, `EVENT_WAIT`, MTIA's
    /// `event_wait`), the waiting part of the collective it sits in.
    pub const DEVICE_WAIT: NameClass = NameClass(1 << 28);

    /// Every class of `name`.
    pub fn of(name: &str) -> NameClass {
        let tests: [(NameClass, bool); 29] = [
            (Self::LAUNCH, is_launch_call(name)),
            (Self::HTA_LAUNCH, is_hta_launch_call(name)),
            (Self::HTA_QUEUE_LAUNCH, is_hta_queue_launch_call(name)),
            (Self::GRAPH_LAUNCH, is_graph_launch(name)),
            (Self::SYNC, is_sync_call(name)),
            (Self::WAITS_FOR_DEVICE, waits_for_device(name)),
            (Self::HTA_BLOCKING, is_hta_blocking_call(name)),
            (Self::EVENT_RECORD, name == "cudaEventRecord"),
            (Self::STREAM_WAIT, name == "cudaStreamWaitEvent"),
            (Self::MEMCPY_CALL, name.contains("Memcpy")),
            (Self::DTOH, name.contains("DtoH")),
            (Self::CAPTURE_BEGIN, is_capture_begin(name)),
            (Self::CAPTURE_END, is_capture_end(name)),
            (Self::SETUP, is_setup_call(name)),
            (Self::DEVICE_FREE, is_device_free_call(name)),
            (Self::ALGORITHM_SEARCH, is_algorithm_search(name)),
            (Self::COMPILE, is_compile_event(name)),
            (Self::COMPILED_REGION, is_compiled_region(name)),
            (Self::WARMUP_LABEL, is_warmup_label(name)),
            (Self::COLLECTIVE, is_collective_name(name)),
            (Self::HTA_COLLECTIVE, is_hta_collective_name(name)),
            (Self::COMM_OP, is_comm_op(name)),
            (Self::DATA_LOADER, is_data_loader_name(name)),
            (Self::PROFILER_STEP_NAME, is_profiler_step_name(name)),
            (Self::PROFILER_STEP, profiler_step_number(name).is_some()),
            (Self::WAITING, is_waiting_frame(name)),
            (Self::ONE_OFF_CALL, is_one_off_call(name)),
            (Self::GRAPH_INSTANTIATE, is_graph_instantiate(name)),
            (
                Self::DEVICE_WAIT,
                is_device_wait_op(name) && device_sync_event(name).is_none(),
            ),
        ];
        tests
            .iter()
            .filter(|(_, yes)| *yes)
            .fold(NameClass(0), |acc, (c, _)| NameClass(acc.0 | c.0))
    }

    /// Whether this set has every class of `c`.
    #[inline]
    pub fn has(self, c: NameClass) -> bool {
        self.0 & c.0 == c.0
    }

    /// A call that puts work on a stream, in the mode's list: HTA 0.5.0's queue-length list
    /// (`compat`) or every launch call.
    #[inline]
    pub fn launches(self, compat: bool) -> bool {
        self.has(if compat {
            Self::HTA_QUEUE_LAUNCH
        } else {
            Self::LAUNCH
        })
    }
}

/// The [`NameClass`] of every interned name of a table, by name id.
#[derive(Clone, Debug, Default)]
pub struct NameClasses(Vec<NameClass>);

impl NameClasses {
    /// The classes of every name in `t`'s dictionary.
    pub fn of(t: &crate::table::TraceTable) -> NameClasses {
        let dict = t.name_dictionary();
        NameClasses(
            (0..dict.len())
                .map(|i| NameClass::of(dict.value(i)))
                .collect(),
        )
    }

    /// The classes of name id `id` (none for an id outside the dictionary).
    #[inline]
    pub fn of_name(&self, id: u32) -> NameClass {
        self.0.get(id as usize).copied().unwrap_or_default()
    }

    /// The classes of row `row`'s name.
    #[inline]
    pub fn of_row(&self, t: &crate::table::TraceTable, row: usize) -> NameClass {
        self.of_name(t.name_id(row))
    }
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;

/// Path parts of Python frames that belong to libraries or the interpreter, not the user's script.
const LIBRARY_FRAME_PATHS: [&str; 12] = [
    "site-packages/",
    "dist-packages/",
    "torch/",
    "/lib/python",
    "multiprocessing/",
    "concurrent/",
    "threading.py",
    "contextlib.py",
    "tqdm/",
    "<frozen",
    "importlib/",
    "torchinductor_",
];

/// A frame of the user's own script (`bench.py(13): second_sum`): a `with_stack` Python frame whose
/// file is not a library's or the interpreter's, and that is a named function (not `<module>`,
/// a lambda or a comprehension). What a script's phases are made of.
pub fn is_user_code_frame(name: &str) -> bool {
    let Some((file, function)) = name.rsplit_once("): ") else {
        return false;
    };
    let Some((path, line)) = file.rsplit_once(".py(") else {
        return false;
    };
    !path.is_empty()
        && line.chars().all(|c| c.is_ascii_digit())
        && !function.starts_with('<')
        && !LIBRARY_FRAME_PATHS.iter().any(|p| name.contains(p))
}

/// The file of a Python frame (`bench.py(13): second_sum` → `bench.py`), if it is one.
pub fn frame_file(name: &str) -> Option<&str> {
    let (file, _) = name.rsplit_once("): ")?;
    let (path, _) = file.rsplit_once('(')?;
    path.ends_with(".py").then_some(path)
}

/// The file of the script that was run, from its top frame (`bench.py(36): <module>` → `bench.py`),
/// when that file is not a library's or the interpreter's.
pub fn script_file(name: &str) -> Option<&str> {
    let function = name.rsplit_once("): ")?.1.trim();
    (function == "<module>" && !LIBRARY_FRAME_PATHS.iter().any(|p| name.contains(p)))
        .then(|| frame_file(name))
        .flatten()
}

/// The function a user-code frame names (`bench.py(13): second_sum` → `second_sum`); the name
/// itself for anything else.
pub fn frame_function(name: &str) -> &str {
    name.rsplit_once("): ").map_or(name, |(_, f)| f.trim())
}

#[cfg(test)]
mod user_code_tests {
    use super::*;

    #[test]
    fn script_frames_are_user_code_and_library_frames_are_not() {
        assert!(is_user_code_frame("device_to_host_sync.py(6): first_sum"));
        assert!(is_user_code_frame(
            "/home/me/bench/streams.py(18): streams2"
        ));
        assert!(!is_user_code_frame("device_to_host_sync.py(36): <module>"));
        assert_eq!(
            script_file("device_to_host_sync.py(36): <module>"),
            Some("device_to_host_sync.py")
        );
        assert_eq!(script_file("device_to_host_sync.py(6): first_sum"), None);
        assert_eq!(
            frame_file("/w/device_to_host_sync.py(6): first_sum"),
            Some("/w/device_to_host_sync.py")
        );
        assert!(!is_user_code_frame(
            "torch/profiler/profiler.py(472): __enter__"
        ));
        assert!(!is_user_code_frame("threading.py(320): wait"));
        assert!(!is_user_code_frame(
            "<built-in method cpu of Tensor object at 0x7f>"
        ));
        assert!(!is_user_code_frame("aten::add_"));
        assert_eq!(frame_function("bench.py(13): second_sum"), "second_sum");
    }
}
