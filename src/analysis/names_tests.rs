//! Unit tests of the name classes (`names.rs`).

#[test]
fn name_classes_are_worked_out_once_per_name_and_read_per_row() {
    let c = NameClass::of("cudaLaunchKernel");
    assert!(c.has(NameClass::LAUNCH) && c.has(NameClass::HTA_LAUNCH));
    assert!(c.launches(true) && c.launches(false) && !c.has(NameClass::SYNC));
    let c = NameClass::of("cudaMemcpy");
    for k in [
        NameClass::SYNC,
        NameClass::WAITS_FOR_DEVICE,
        NameClass::HTA_BLOCKING,
        NameClass::MEMCPY_CALL,
    ] {
        assert!(c.has(k), "{k:?}");
    }
    assert!(!c.launches(false));
    // HIP launches are launches, but not in HTA 0.5.0's launch statistics.
    let c = NameClass::of("hipModuleLaunchKernel");
    assert!(c.launches(false) && !c.launches(true) && !c.has(NameClass::HTA_LAUNCH));
    let c = NameClass::of("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
    assert!(c.has(NameClass::COLLECTIVE) && c.has(NameClass::HTA_COLLECTIVE));
    let c = NameClass::of("rcclGenericKernel");
    assert!(c.has(NameClass::COLLECTIVE) && !c.has(NameClass::HTA_COLLECTIVE));
    let c = NameClass::of("ProfilerStep#3");
    assert!(c.has(NameClass::PROFILER_STEP) && c.has(NameClass::PROFILER_STEP_NAME));
    let c = NameClass::of("ProfilerStep");
    assert!(!c.has(NameClass::PROFILER_STEP) && c.has(NameClass::PROFILER_STEP_NAME));
    assert_eq!(NameClass::of("aten::mm"), NameClass::default());
    assert!(is_data_loader_op(
        EventKind::PythonFunction,
        NameClass::of("dataloader_next")
    ));
    assert!(!is_data_loader_op(
        EventKind::Runtime,
        NameClass::of("DataLoader")
    ));

    let b = br#"{"traceEvents":[
        {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpy","pid":1,"tid":1,"ts":1,"dur":1},
        {"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":3,"dur":1},
        {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpy","pid":1,"tid":1,"ts":5,"dur":1}]}"#;
    let t = crate::table::load_bytes("t.json", b).unwrap();
    let classes = NameClasses::of(&t);
    let per_row: Vec<bool> = (0..t.len())
        .map(|r| classes.of_row(&t, r).has(NameClass::SYNC))
        .collect();
    assert_eq!(per_row, [true, false, true]);
    assert_eq!(classes.of_name(u32::MAX), NameClass::default());
}

use super::*;

#[test]
fn collectives_beyond_nccl() {
    for n in [
        "ncclDevKernel_AllGather_RING_LL",
        "rcclGenericKernel",
        "void deep_ep::internode::dispatch<8>(int)",
        "nvshmemi_proxy_kernel",
        "void vllm::cross_device_reduce_1stage<half, 8>",
        "multimem_all_reduce_kernel",
        "all_to_all_single_kernel",
    ] {
        assert!(is_collective_name(n), "{n}");
    }
    for n in [
        "sgemm_128x64",
        "void at::native::reduce_kernel<512>",
        "softmax_warp_forward",
    ] {
        assert!(!is_collective_name(n), "{n}");
    }
    assert!(!is_hta_collective_name("deep_ep::internode::dispatch"));
}

#[test]
fn collective_kinds_and_libraries_from_names_and_args() {
    use CollectiveKind as K;
    for (text, kind) in [
        (
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
            Some(K::AllReduce),
        ),
        (
            "ncclKernel_ReduceScatter_RING_LL_Sum_float",
            Some(K::ReduceScatter),
        ),
        (
            "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t",
            Some(K::SendRecv),
        ),
        ("ncclKernel_Reduce_RING_LL_Sum_float", Some(K::Reduce)),
        ("_allgather_base", Some(K::AllGather)),
        ("alltoall_base", Some(K::AllToAll)),
        ("nccl:all_to_all", Some(K::AllToAll)),
        ("gloo:all_reduce", Some(K::AllReduce)),
        ("hcclAllGather", Some(K::AllGather)),
        (
            "void vllm::cross_device_reduce_1stage<half, 8>",
            Some(K::AllReduce),
        ),
        (
            "void deep_ep::internode::dispatch<8>(int)",
            Some(K::AllToAll),
        ),
        ("send", Some(K::SendRecv)),
        ("ncclDevKernel_Generic_4", None),
    ] {
        assert_eq!(collective_kind_of(text), kind, "{text}");
    }
    use CollectiveLibrary as L;
    for (name, lib) in [
        ("ncclDevKernel_AllGather_RING_LL", L::Nccl),
        ("rcclGenericKernel", L::Rccl),
        ("hcclAllReduce", L::Hccl),
        ("mscclpp::allreduce8", L::Msccl),
        (
            "void vllm::cross_device_reduce_2stage<half, 8>",
            L::CustomAllReduce,
        ),
        ("gloo:all_reduce", L::Gloo),
        ("nvshmemi_proxy_kernel", L::Nvshmem),
    ] {
        assert_eq!(collective_library_of(name), lib, "{name}");
    }
}

#[test]
fn profiler_steps() {
    assert_eq!(profiler_step_number("ProfilerStep#12"), Some(12));
    assert_eq!(profiler_step_number("ProfilerStep # 3"), Some(3));
    assert_eq!(profiler_step_number("ProfilerStepX"), None);
    assert!(is_profiler_step_name("ProfilerStep#3") && is_profiler_step_name("## ProfilerStep ##"));
    assert!(!is_profiler_step_name("profilerstep#3"));
}

#[test]
fn blocking_call_lists() {
    assert!(is_hta_blocking_call("cudaMemcpyAsync") && !waits_for_device("cudaMemcpyAsync"));
    assert!(waits_for_device("cudaDeviceSynchronize"));
    assert!(is_hta_queue_launch_call("cudaLaunchKernel"));
    assert!(!is_hta_queue_launch_call("hipModuleLaunchKernel"));
}

#[test]
fn graph_and_capture_calls() {
    assert!(is_graph_launch("cudaGraphLaunch") && is_graph_launch("hipGraphLaunch"));
    assert!(!is_launch_call("cudaGraphLaunch"));
    assert!(is_capture_begin("cudaStreamBeginCapture") && is_capture_end("hipStreamEndCapture"));
}

#[test]
fn waiting_frames_only_wait() {
    for n in [
        "selectors.py(415): select",
        "multiprocessing/connection.py(379): _recv",
        "multiprocessing/connection.py(216): recv_bytes",
        "threading.py(320): wait",
        "threading.py(1116): join",
        "<built-in method acquire of _thread.lock object at 0x7f3c>",
        "<method 'acquire' of '_thread.lock' objects>",
        "<built-in function sleep>",
        "time.sleep",
        "queue.py(171): get",
        "<built-in method poll of select.epoll object at 0x1>",
    ] {
        assert!(is_waiting_frame(n), "{n}");
    }
    for n in [
        "aten::mm",
        "train.py(42): train_step",
        "torch/nn/modules/module.py(1501): _call_impl",
        "dict.get",
        "models/net.py(10): get",
        "<built-in method matmul of type object at 0x1>",
    ] {
        assert!(!is_waiting_frame(n), "{n}");
    }
}

#[test]
fn copies_by_direction_and_memory() {
    assert_eq!(
        copy_words("Memcpy HtoD (Pageable -> Device)").as_deref(),
        Some("host-to-device copy from pageable host memory")
    );
    assert_eq!(
        copy_words("Memcpy DtoH (Device -> Pinned)").as_deref(),
        Some("device-to-host copy into pinned host memory")
    );
    assert_eq!(
        copy_words("Memcpy DtoD (Device -> Device)").as_deref(),
        Some("device-to-device copy")
    );
    assert_eq!(copy_words("Memset (Device)"), None);
    assert!(is_one_off_call("cuModuleLoadData") && is_one_off_call("cudaGetFuncBySymbol"));
    assert!(!is_one_off_call("cudaLaunchKernel"));
}

#[test]
fn compile_and_setup() {
    assert!(is_compile_event("_compile.compile_inner (dynamo_timed)"));
    assert!(is_compile_event("compile_fx.<locals>.fw_compiler_base"));
    assert!(!is_compile_event("aten::mm"));
    assert!(!is_compile_event(
        "torch/_functorch/_aot_autograd/runtime_wrappers.py(310): runtime_wrapper"
    ));
    assert!(!is_compile_event("TorchDynamo Cache Lookup"));
    // Python frames by their function: compile_fx.py's `run` and the cudagraph trees wrap every
    // replay of compiled code; `compile_fx_inner` and Dynamo's tracer compile.
    assert!(!is_compile_event(
        "torch/_inductor/compile_fx.py(1104): run"
    ));
    assert!(!is_compile_event(
        "torch/_inductor/cudagraph_trees.py(1942): run"
    ));
    assert!(!is_compile_event(
        "torch/_functorch/aot_autograd.py(920): compiled_function"
    ));
    assert!(is_compile_event(
        "torch/_inductor/compile_fx.py(415): compile_fx_inner"
    ));
    assert!(!is_compile_event(
        "torch/_dynamo/eval_frame.py(655): compile_wrapper"
    ));
    assert!(is_compile_event(
        "torch/_dynamo/convert_frame.py(676): transform"
    ));
    assert!(is_compile_event(
        "torch/_inductor/async_compile.py(250): wait"
    ));
    assert!(is_graph_instantiate("cudaGraphInstantiateWithFlags"));
    assert!(!is_graph_instantiate("cudaGraphLaunch"));
    assert!(!is_setup_call("hipGetDevicePropertiesR0600"));
    assert!(is_compiled_region("Torch-Compiled Region: 0/0"));
    assert!(is_setup_call("cudaMalloc") && !is_setup_call("cudaLaunchKernel"));
    assert!(is_algorithm_search(
        "cudnnFindConvolutionForwardAlgorithmEx"
    ));
}
