//! Diagnosis scenarios: one small Kineto trace built in code per phenomenon of issue 15 (context, exclusive
//! idle attribution, kernel-side patterns, ranks), each checked for its main finding, bottleneck, context
//! and figures computed here from the timestamps the test wrote.

use crate::common;
use crate::common::has_finding as has;

use crate::common::TraceBuilder;
use profile_model::report::attribution::IdleCause;
use profile_model::report::bottleneck::BottleneckKind;
use profile_model::report::context::TraceHolds;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::{Finding, FindingId};
use profile_model::table::TraceSet;
use serde_json::json;

const GEMM: &str = "sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel";
const GEMM_NT: &str = "ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_stages_64x4_nt";
const GEMM_NN: &str = "ampere_fp16_s16816gemm_fp16_128x64_ldg8_f2f_stages_64x4_nn";
const SOFTMAX: &str = "void (anonymous namespace)::softmax_warp_forward<c10::Half, c10::Half, float, 9, false, false>(c10::Half*, c10::Half const*, int, int, int, bool const*, int, bool)";
const FLASH: &str = "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::half_t>, false, false, false, false, true, true, false>(Flash_fwd_params)";
const ELEMENTWISE: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)";
const TRITON: &str = "triton_poi_fused_add_0";
const SGEMM: &str = "volta_sgemm_128x64_nn";
const BN: &str = "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct, float const*)";
const DEEP_EP: &str = "void deep_ep::internode::dispatch<8>(int4*, float*, int*, long*)";
const CUSTOM_AR: &str = "void vllm::cross_device_reduce_1stage<c10::BFloat16, 8>(vllm::RankData*, vllm::RankSignals, vllm::Signal*, c10::BFloat16*, int, int)";
const ALL_REDUCE: &str =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
const DATA_LOADER: &str = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__";

fn one(b: &TraceBuilder) -> DiagnosisReport {
    diagnose(&TraceSet::single(b.table("trace.json")))
}

fn finding<'a>(r: &'a DiagnosisReport, id: FindingId) -> &'a Finding {
    r.findings
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("no `{id}` finding in\n{}", r.to_markdown()))
}

fn bottleneck(r: &DiagnosisReport) -> BottleneckKind {
    r.bottleneck.as_ref().expect("bottleneck").kind
}

fn idle_pct(r: &DiagnosisReport) -> f64 {
    r.bottleneck.as_ref().expect("bottleneck").idle_pct
}

fn close(a: f64, b: f64, what: &str) {
    assert!(
        (a - b).abs() <= 0.05_f64.max(1e-3 * b.abs()),
        "{what}: {a} vs expected {b}"
    );
}

/// The main finding is `id`, with `kind` as bottleneck, and the report keeps its invariants.
fn check(r: &DiagnosisReport, id: FindingId, kind: BottleneckKind, what: &str) {
    invariants(r, what);
    assert_eq!(r.main_finding_id, Some(id), "{what}:\n{}", r.to_markdown());
    assert_eq!(bottleneck(r), kind, "{what}:\n{}", r.to_markdown());
}

/// The invariants, the page's fixed section order, and the JSON fields issue 15 asks for.
fn invariants(r: &DiagnosisReport, what: &str) {
    common::assert_report_invariants(r, what);
    common::assert_report_sections(&r.to_markdown(), what);
    wording(r, what);
    let json = r.to_json();
    for key in ["\"context\"", "\"idle_attribution\"", "\"main_finding_id\""] {
        assert!(json.contains(key), "{what}: {key} missing in {json}");
    }
}

/// Text outside `code spans`.
fn prose(text: &str) -> String {
    text.split('`').step_by(2).collect::<Vec<_>>().join(" ")
}

/// Issue 15's wording rules: one sentence without doubled colons or periods; a small item is never
/// "heavy"; notes such as "one rank only" are not numbered recommendations.
fn wording(r: &DiagnosisReport, what: &str) {
    let main = prose(&r.main_finding.to_markdown());
    assert!(
        !main.contains("::") && !main.contains(": :") && !main.contains(".."),
        "{what}: {}",
        r.main_finding
    );
    assert!(r.main_finding.ends_with("."), "{what}: {}", r.main_finding);
    for f in &r.findings {
        if f.impact.pct_of_gpu_time.unwrap_or(0.0) < 5.0 {
            assert!(
                !f.title.to_markdown().to_lowercase().contains("heavy"),
                "{what}: {} is titled {}",
                f.id,
                f.title
            );
        }
        assert!(!f.title.contains("one rank"), "{what}: {}", f.title);
    }
}

fn attributed_us(r: &DiagnosisReport, cause: IdleCause) -> f64 {
    r.idle_attribution
        .iter()
        .filter(|s| s.cause == cause)
        .map(|s| s.time_us)
        .sum()
}

// 1. Graph capture ---------------------------------------------------------------------------------

/// A stream capture records 40 launches into a graph; no replay, no kernels ran.
#[test]
fn graph_capture_says_profile_the_replay() {
    let mut b = TraceBuilder::new();
    b.step(1, 0.0, 3_000.0);
    b.runtime("cudaStreamBeginCapture", 100.0, 20.0);
    for i in 0..40 {
        let t = 200.0 + 60.0 * i as f64;
        b.cpu_op("aten::mm", t, 50.0);
        b.runtime("cudaLaunchKernel", t + 10.0, 30.0);
    }
    b.runtime("cudaStreamEndCapture", 2_700.0, 50.0);
    let r = one(&b);
    check(
        &r,
        FindingId::GraphCapture,
        BottleneckKind::Undetermined,
        "graph capture",
    );
    assert_eq!(r.findings.len(), 1, "{}", r.to_markdown());
    assert!(r.idle_attribution.is_empty(), "{:?}", r.idle_attribution);
    assert!(r.context.holds(TraceHolds::GraphCapture));
    assert_eq!(r.context.capture_calls, 1);
    assert_eq!(r.context.launch_calls, 40);
    assert!(
        r.main_finding.contains("graph capture") && r.main_finding.contains("1 capture"),
        "{}",
        r.main_finding
    );
}

/// A capture after eager warm-up kernels (as `torch.cuda.graph` does): still a capture, nothing replayed.
#[test]
fn graph_capture_after_eager_kernels_says_profile_the_replay() {
    let mut b = TraceBuilder::new();
    for i in 0..6 {
        let t = 500.0 * i as f64;
        b.cpu_op("aten::mm", t, 50.0);
        b.kernel(GEMM, 7, t + 10.0, 5.0, t + 100.0, 300.0);
    }
    b.runtime("cudaStreamBeginCapture", 3_100.0, 20.0);
    for i in 0..40 {
        let t = 3_200.0 + 60.0 * i as f64;
        b.cpu_op("aten::mm", t, 50.0);
        b.runtime("cudaLaunchKernel", t + 10.0, 30.0);
    }
    b.runtime("cudaStreamEndCapture", 5_700.0, 50.0);
    let r = one(&b);
    check(
        &r,
        FindingId::GraphCapture,
        BottleneckKind::Undetermined,
        "graph capture after eager kernels",
    );
    assert_eq!(r.findings.len(), 1, "{}", r.to_markdown());
    assert!(r.idle_attribution.is_empty(), "{:?}", r.idle_attribution);
    assert!(r.context.holds(TraceHolds::GraphCapture));
    assert_eq!(r.context.steps, None);
    assert_eq!(r.context.capture_calls, 1);
    assert_eq!(r.context.graph_launches, 0);
    assert!(r.main_finding.contains("1 capture"), "{}", r.main_finding);
}

/// Graph replays: each 6 ms step is one `cudaGraphLaunch` running 50 kernels of 100 µs with 20 µs
/// GPU-side gaps; the gaps inside a replay are not host wait.
#[test]
fn gaps_inside_a_graph_replay_are_not_host_wait() {
    let mut b = TraceBuilder::new();
    let names = [GEMM_NT, GEMM_NN, BN];
    for s in 0..4 {
        let t = 6_000.0 * s as f64;
        b.step(s, t, 6_000.0);
        b.cpu_op("aten::mm", t + 10.0, 40.0);
        let kernels: Vec<(&str, f64, f64)> = (0..50)
            .map(|k| (names[k % 3], t + 100.0 + 120.0 * k as f64, 100.0))
            .collect();
        b.graph_launch(7, t + 20.0, 30.0, &kernels);
    }
    let r = one(&b);
    invariants(&r, "graph replay");
    assert!(r.context.holds(TraceHolds::GraphReplay), "{:?}", r.context);
    assert!(!r.context.holds(TraceHolds::GraphCapture));
    assert_eq!(r.context.graph_launches, 4);
    assert_eq!(r.context.steps, Some((0, 3)));
    // Window: first kernel (100 µs) to the last one's end (18 ms + 100 µs + 49 × 120 µs + 100 µs).
    let window = 18_000.0 + 100.0 + 49.0 * 120.0 + 100.0 - 100.0;
    let busy = 4.0 * 50.0 * 100.0;
    let idle = window - busy;
    close(idle_pct(&r), 100.0 * idle / window, "idle %");
    // 49 gaps of 20 µs inside each replay, and 20 µs between replays (a replay ends 80 µs into the
    // next step, whose graph launch, 20 µs into it, was already queued): all on the GPU side.
    let inside = 4.0 * 49.0 * 20.0;
    let between = 3.0 * 20.0;
    close(inside + between, idle, "idle µs");
    close(
        attributed_us(&r, IdleCause::DeviceSide),
        inside + between,
        "GPU-side idle of the replays",
    );
    for id in [
        FindingId::HostOverhead,
        FindingId::LaunchOverhead,
        FindingId::Synchronization,
    ] {
        assert!(
            !has(&r, id),
            "{id} in
{}",
            r.to_markdown()
        );
    }
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("4 CUDA/HIP graph launches")),
        "{:?}",
        r.notes
    );
}

/// Step 0 captures a graph (40 launches recorded); steps 1-4 replay it: the capture is set-up work left
/// out as warm-up, not a "graph capture" trace.
#[test]
fn a_capture_followed_by_replays_is_warmup_then_replay() {
    let mut b = TraceBuilder::new();
    b.step(0, 0.0, 3_000.0);
    b.runtime("cudaStreamBeginCapture", 100.0, 20.0);
    for i in 0..40 {
        let t = 200.0 + 60.0 * i as f64;
        b.cpu_op("aten::mm", t, 50.0);
        b.runtime("cudaLaunchKernel", t + 10.0, 30.0);
    }
    b.runtime("cudaStreamEndCapture", 2_700.0, 50.0);
    let names = [GEMM_NT, GEMM_NN, BN];
    for s in 1..5 {
        let t = 3_000.0 + 6_000.0 * (s - 1) as f64;
        b.step(s, t, 6_000.0);
        let kernels: Vec<(&str, f64, f64)> = (0..50)
            .map(|k| (names[k % 3], t + 100.0 + 115.0 * k as f64, 100.0))
            .collect();
        b.graph_launch(7, t + 20.0, 30.0, &kernels);
    }
    let r = one(&b);
    invariants(&r, "capture then replays");
    assert!(r.context.holds(TraceHolds::GraphReplay), "{:?}", r.context);
    assert!(
        !r.context.holds(TraceHolds::GraphCapture),
        "{:?}",
        r.context
    );
    assert!(r.context.holds(TraceHolds::Warmup), "{:?}", r.context);
    assert_eq!(r.context.steps, Some((1, 4)));
    assert_eq!(
        r.context.warmup.as_ref().map(|w| w.steps.clone()),
        Some(vec![0])
    );
    assert!(!has(&r, FindingId::GraphCapture), "{}", r.to_markdown());
    // The analysed window: the four replays' 200 kernels, from the first (3.1 ms) to the end of the
    // last (21 ms + 100 µs + 49 × 115 µs + 100 µs).
    let calls: u64 = r.top_kernels.iter().map(|k| k.calls).sum();
    assert_eq!(calls, 4 * 50);
    let window = 3.0 * 6_000.0 + 49.0 * 115.0 + 100.0;
    let idle = window - 4.0 * 50.0 * 100.0;
    close(idle_pct(&r), 100.0 * idle / window, "idle % of the replays");
}

// 2. The double-count case -------------------------------------------------------------------------

/// Each 10 ms step: two 2 ms GEMMs; `aten::item` blocks in `cudaStreamSynchronize` until it ends (the GPU
/// is busy all along); then the DataLoader runs 5.38 ms while the GPU idles; the next step launches its
/// work 0.55 ms after the DataLoader returns.
fn sync_then_loader_trace() -> TraceBuilder {
    let mut b = TraceBuilder::new();
    for s in 0..4 {
        let t = 10_000.0 * s as f64;
        b.step(s, t, 10_000.0);
        b.cpu_op("aten::mm", t + 40.0, 20.0);
        b.kernel(GEMM, 7, t + 50.0, 5.0, t + 100.0, 2_000.0);
        b.kernel(GEMM, 7, t + 60.0, 5.0, t + 2_100.0, 2_000.0);
        b.cpu_op("aten::item", t + 200.0, 3_910.0);
        b.cpu_op("aten::_local_scalar_dense", t + 205.0, 3_900.0);
        b.runtime("cudaStreamSynchronize", t + 210.0, 3_890.0);
        b.cpu_op(DATA_LOADER, t + 4_120.0, 5_380.0);
    }
    b
}

#[test]
fn sync_followed_by_data_loader_is_not_counted_twice() {
    let r = one(&sync_then_loader_trace());
    check(
        &r,
        FindingId::DataLoading,
        BottleneckKind::Cpu,
        "sync + DataLoader",
    );
    assert!(r.context.holds(TraceHolds::SteadyState));
    assert_eq!(r.context.steps, Some((0, 3)));
    // GPU window: first kernel (100 µs) to the last kernel's end (30 ms + 4.1 ms).
    let window = 30_000.0 + 4_100.0 - 100.0;
    let idle = window - 4.0 * 4_000.0;
    // Three gaps (4.1 ms → 10.1 ms of each step), each overlapping 5.38 ms of DataLoader.
    let in_loader = 3.0 * 5_380.0;
    close(idle_pct(&r), 100.0 * idle / window, "idle %");
    let dl = finding(&r, FindingId::DataLoading);
    assert_eq!(
        dl.impact.time_ns,
        (in_loader * 1000.0) as i64,
        "{}",
        dl.measured
    );
    close(dl.value, 100.0 * in_loader / window, "DataLoader idle %");
    close(
        attributed_us(&r, IdleCause::DataLoading),
        in_loader,
        "data_loading attribution µs",
    );
    // Synchronisation keeps only what the DataLoader does not cover: 20 µs before it and 600 µs
    // after it in each gap; it is a finding of its own, claiming just that.
    let sync_part = idle - in_loader;
    close(
        attributed_us(&r, IdleCause::Synchronization),
        sync_part,
        "synchronization attribution µs",
    );
    let sync = finding(&r, FindingId::Synchronization);
    assert_eq!(
        sync.impact.time_ns,
        (sync_part * 1000.0) as i64,
        "{}",
        sync.measured
    );
    let claimed: i64 = r
        .findings
        .iter()
        .filter(|f| matches!(f.id, FindingId::DataLoading | FindingId::Synchronization))
        .map(|f| f.impact.time_ns)
        .sum();
    assert!(
        claimed as f64 <= idle * 1000.0 + 1.0,
        "data_loading + synchronization claim {claimed} ns of {idle} µs idle"
    );
    let total_us: f64 = r.idle_attribution.iter().map(|s| s.time_us).sum();
    close(total_us, idle, "attributed idle µs");
}

// 3. Warm-up steps ---------------------------------------------------------------------------------

/// Step 1 (20 ms) is full of cudaMalloc/cudaFree; steps 2-5 (2 ms each) run two 1 ms GEMMs back to back.
fn warmup_trace() -> TraceBuilder {
    let mut b = TraceBuilder::new();
    b.step(1, 0.0, 20_000.0);
    for i in 0..100 {
        let t = 200.0 * i as f64;
        b.runtime(if i % 2 == 0 { "cudaMalloc" } else { "cudaFree" }, t, 150.0);
    }
    b.kernel(GEMM, 7, 460.0, 5.0, 500.0, 500.0);
    for s in 2..6 {
        let t = 20_000.0 + 2_000.0 * (s - 2) as f64;
        b.step(s, t, 2_000.0);
        b.kernel(GEMM, 7, t - 60.0, 5.0, t, 1_000.0);
        b.kernel(GEMM, 7, t - 50.0, 5.0, t + 1_000.0, 1_000.0);
    }
    b
}

#[test]
fn warmup_steps_are_left_out() {
    let r = one(&warmup_trace());
    invariants(&r, "warm-up steps");
    assert!(r.context.holds(TraceHolds::Warmup), "{:?}", r.context);
    assert!(r.context.holds(TraceHolds::SteadyState), "{:?}", r.context);
    assert_eq!(r.context.steps, Some((2, 5)));
    let w = r.context.warmup.as_ref().expect("warm-up summary");
    assert_eq!(w.steps, vec![1]);
    assert_eq!(w.setup_calls, 100);
    // The analysed window: steps 2-5, 20 ms → 28 ms, 8 GEMMs of 1 ms; step 1's GEMM is left out.
    let top = &r.top_kernels[0];
    assert_eq!(top.calls, 8, "{}", r.to_markdown());
    close(top.total_us, 8.0 * 1_000.0, "GEMM µs in the window");
    close(idle_pct(&r), 0.0, "idle % of the steady state");
    assert_eq!(r.main_finding_id, Some(FindingId::DominantKernel));
    assert_eq!(bottleneck(&r), BottleneckKind::Compute);
    // The analysed line: steps 2-5 and their GPU window, 20 ms → 28 ms.
    let analysed_ms = (20_000.0 + 4.0 * 2_000.0 - 20_000.0) / 1000.0;
    assert!(
        r.context.analysed.contains("steps 2-5")
            && r.context.analysed.contains(&format!("{analysed_ms:.2} ms")),
        "{}",
        r.context.analysed
    );
    let md = r.to_markdown();
    assert!(md.contains("left out"), "{md}");
    assert!(md.contains(&r.context.analysed), "{md}");
}

/// The note on a single warm-up step says "step 1", not "steps 1".
#[test]
fn warmup_note_names_a_single_step_in_the_singular() {
    let r = one(&warmup_trace());
    let note = r
        .notes
        .iter()
        .find(|n| n.contains("warm-up"))
        .expect("warm-up note");
    assert!(note.contains("(step 1)"), "{note}");
}

/// A file cut off mid-write: what was read is diagnosed, and the report says the file was cut.
#[test]
fn a_cut_file_is_diagnosed_and_said_to_be_cut() {
    let text = sync_then_loader_trace().json();
    // Cut inside the last events (the last step's DataLoader op and the closing brackets are lost).
    let cut = &text[..text.len() - 150];
    let table =
        profile_model::table::load_bytes("cut.json", cut.as_bytes()).expect("cut file loads");
    let r = diagnose(&TraceSet::single(table));
    invariants(&r, "cut file");
    assert!(r.context.holds(TraceHolds::Truncated), "{:?}", r.context);
    assert_ne!(r.main_finding_id, Some(FindingId::NoGpuKernels));
    assert_eq!(
        r.main_finding_id,
        Some(FindingId::DataLoading),
        "{}",
        r.to_markdown()
    );
    assert!(
        r.notes.iter().any(|n| n.contains("cut off")),
        "{:?}",
        r.notes
    );
}

/// Without steps: a dense prefix of cudaMalloc/cudaFree (0-10 ms) then ten 1 ms GEMMs back to back.
#[test]
fn a_warmup_prefix_is_left_out_without_steps() {
    let mut b = TraceBuilder::new();
    for i in 0..50 {
        let t = 200.0 * i as f64;
        b.runtime(if i % 2 == 0 { "cudaMalloc" } else { "cudaFree" }, t, 150.0);
    }
    b.kernel(GEMM, 7, 1_000.0, 5.0, 1_100.0, 300.0);
    for k in 0..10 {
        let t = 10_000.0 + 1_000.0 * k as f64;
        b.cpu_op("aten::mm", 9_950.0 + 4.0 * k as f64, 3.0);
        b.kernel(
            if k % 2 == 0 { GEMM_NT } else { GEMM_NN },
            7,
            9_951.0 + 4.0 * k as f64,
            2.0,
            t,
            1_000.0,
        );
    }
    let r = one(&b);
    invariants(&r, "warm-up prefix");
    assert!(r.context.holds(TraceHolds::Warmup), "{:?}", r.context);
    assert!(r.context.holds(TraceHolds::SteadyState), "{:?}", r.context);
    assert_eq!(r.context.steps, None);
    // The prefix ends with the last set-up call: 49 × 200 µs + 150 µs.
    let prefix_end_ns = ((49.0 * 200.0 + 150.0) * 1000.0) as i64;
    assert_eq!(
        r.context.windows[0].start_ns, prefix_end_ns,
        "{:?}",
        r.context.windows
    );
    assert_eq!(
        r.context.windows[0].warmup_ns.map(|w| w.1),
        Some(prefix_end_ns)
    );
    // Only the ten steady GEMMs are analysed (the warm-up GEMM at 1.1 ms is left out), and the GPU
    // is busy all the window.
    let calls: u64 = r.top_kernels.iter().map(|k| k.calls).sum();
    assert_eq!(calls, 10, "{}", r.to_markdown());
    assert!(
        r.top_kernels.iter().all(|k| k.name != GEMM),
        "{:?}",
        r.top_kernels
    );
    close(idle_pct(&r), 0.0, "idle % after the warm-up");
    assert!(r.to_markdown().contains("left out"), "{}", r.to_markdown());
}

// 4. Only warm-up ----------------------------------------------------------------------------------

/// Every step is mostly torch.compile compilation.
#[test]
fn only_warmup_says_so() {
    let mut b = TraceBuilder::new();
    for s in 1..4 {
        let t = 5_000.0 * (s - 1) as f64;
        b.step(s, t, 5_000.0);
        b.annotation("_compile.compile_inner", t + 100.0, 4_000.0);
        for k in 0..3 {
            let k = k as f64;
            b.kernel(
                GEMM,
                7,
                t + 4_150.0 + 10.0 * k,
                5.0,
                t + 4_200.0 + 250.0 * k,
                200.0,
            );
        }
    }
    let r = one(&b);
    check(
        &r,
        FindingId::Warmup,
        BottleneckKind::Undetermined,
        "only warm-up",
    );
    assert!(r.context.holds(TraceHolds::WarmupOnly), "{:?}", r.context);
    assert_eq!(r.context.steps, None);
    let w = r.context.warmup.as_ref().expect("warm-up summary");
    assert_eq!(w.compile_events, 3);
    close(w.compile_ms, 3.0 * 4_000.0 / 1000.0, "compile ms");
    assert_eq!(w.steps, vec![1, 2, 3]);
    assert!(r.idle_attribution.is_empty());
    assert!(
        r.main_finding.contains("only warm-up"),
        "{}",
        r.main_finding
    );
}

// 5. Not a PyTorch trace ---------------------------------------------------------------------------

#[test]
fn a_browser_trace_is_not_a_pytorch_trace() {
    let mut b = TraceBuilder::new();
    for i in 0..50 {
        let t = 100.0 * i as f64;
        b.event("devtools.timeline", "RunTask", t, 80.0);
        b.event("devtools.timeline", "ParseHTML", t + 10.0, 30.0);
    }
    let r = one(&b);
    check(
        &r,
        FindingId::NotPytorchTrace,
        BottleneckKind::Undetermined,
        "browser trace",
    );
    assert!(r.context.holds(TraceHolds::NotPytorch), "{:?}", r.context);
    assert_eq!(r.findings.len(), 1);
    assert!(
        r.main_finding.contains("browser trace"),
        "{}",
        r.main_finding
    );
    assert!(
        !r.main_finding.contains("ProfilerActivity.CUDA"),
        "{}",
        r.main_finding
    );
    let md = r.to_markdown();
    assert!(!md.contains("without ProfilerActivity.CUDA"), "{md}");
}

// 6. Launches without kernel events ---------------------------------------------------------------

#[test]
fn launches_without_kernels_give_the_launch_count() {
    let mut b = TraceBuilder::new();
    let (steps, per_step) = (3, 40);
    for s in 0..steps {
        let t = 5_000.0 * s as f64;
        b.step(s, t, 5_000.0);
        for k in 0..per_step {
            let u = t + 100.0 + 100.0 * k as f64;
            b.cpu_op("aten::add", u, 60.0);
            b.runtime("cudaLaunchKernel", u + 10.0, 20.0);
        }
    }
    let r = one(&b);
    check(
        &r,
        FindingId::NoKernelEvents,
        BottleneckKind::Undetermined,
        "launches without kernels",
    );
    assert!(r.context.holds(TraceHolds::NoKernelEvents));
    let n = steps * per_step;
    assert_eq!(r.context.launch_calls, n as u64);
    assert!(
        r.main_finding.contains(&format!("{n} kernel launch calls")),
        "{}",
        r.main_finding
    );
}

// 7. Unfused attention ----------------------------------------------------------------------------

/// 10 attention layers, back to back on the GPU: QKᵀ bmm 300 µs, softmax `attn_softmax` µs, AV bmm 300 µs.
fn attention_trace(softmax_name: &str, softmax_us: f64) -> TraceBuilder {
    let mut b = TraceBuilder::new();
    let layer = 600.0 + softmax_us;
    b.step(0, 0.0, 1_000.0 + 10.0 * layer);
    for l in 0..10 {
        let t = 500.0 + layer * l as f64;
        let h = 100.0 + 40.0 * l as f64;
        b.cpu_op("aten::bmm", h, 8.0);
        b.kernel(GEMM_NT, 7, h + 1.0, 5.0, t, 300.0);
        b.cpu_op_args(
            "aten::softmax",
            h + 10.0,
            8.0,
            json!({"Input Dims": [[8, 16, 512, 512], [], []]}),
        );
        b.kernel(softmax_name, 7, h + 11.0, 5.0, t + 300.0, softmax_us);
        b.cpu_op("aten::bmm", h + 20.0, 8.0);
        b.kernel(GEMM_NN, 7, h + 21.0, 5.0, t + 300.0 + softmax_us, 300.0);
    }
    b
}

#[test]
fn softmax_and_bmm_is_unfused_attention() {
    let r = one(&attention_trace(SOFTMAX, 400.0));
    check(
        &r,
        FindingId::UnfusedAttention,
        BottleneckKind::Compute,
        "unfused attention",
    );
    assert!(r.context.holds(TraceHolds::SteadyState));
    assert_eq!(r.context.steps, Some((0, 0)));
    let f = finding(&r, FindingId::UnfusedAttention);
    let (softmax, kernel) = (10.0 * 400.0, 10.0 * 1_000.0);
    close(
        f.value,
        100.0 * softmax / kernel,
        "softmax % of kernel time",
    );
    assert_eq!(f.impact.time_ns, (softmax * 1000.0) as i64);
    close(
        f.impact.pct_of_gpu_time.unwrap(),
        100.0 * softmax / kernel,
        "% of the window (the GPU is never idle)",
    );
    assert!(
        f.measured.contains("[8,16,512,512]") && f.measured.contains("10 calls"),
        "{}",
        f.measured
    );
    assert!(f.measured.contains("20 `aten::bmm`"), "{}", f.measured);
    assert!(
        f.actions_markdown("\n")
            .contains("scaled_dot_product_attention"),
        "{:?}",
        f.actions
    );
}

#[test]
fn flash_attention_is_not_unfused() {
    let r = one(&attention_trace(FLASH, 400.0));
    invariants(&r, "flash attention");
    assert!(!has(&r, FindingId::UnfusedAttention), "{}", r.to_markdown());
    assert_eq!(r.context.steps, Some((0, 0)));
}

// 8. Fusion candidates ----------------------------------------------------------------------------

/// 20 iterations, GPU always busy: two GEMMs of 300 µs and an element-wise add of 400 µs.
fn elementwise_trace(add: &str) -> TraceBuilder {
    let mut b = TraceBuilder::new();
    b.step(0, 0.0, 21_000.0);
    for i in 0..20 {
        let t = 500.0 + 1_000.0 * i as f64;
        let h = 100.0 + 20.0 * i as f64;
        b.kernel(GEMM_NT, 7, h, 5.0, t, 300.0);
        b.kernel(GEMM_NN, 7, h + 6.0, 5.0, t + 300.0, 300.0);
        b.cpu_op("aten::add", h + 12.0, 7.0);
        b.kernel(add, 7, h + 13.0, 5.0, t + 600.0, 400.0);
    }
    b
}

#[test]
fn elementwise_kernels_are_fusion_candidates() {
    let r = one(&elementwise_trace(ELEMENTWISE));
    // Element-wise kernels are memory-bound: bandwidth, not arithmetic, sets their time.
    check(
        &r,
        FindingId::FusionCandidates,
        BottleneckKind::Memory,
        "fusion candidates",
    );
    assert_eq!(r.context.steps, Some((0, 0)));
    close(idle_pct(&r), 0.0, "idle %");
    let f = finding(&r, FindingId::FusionCandidates);
    let (ew, kernel) = (20.0 * 400.0, 20.0 * 1_000.0);
    close(
        f.value,
        100.0 * ew / kernel,
        "element-wise % of kernel time",
    );
    // Fusion is expected to save half of their time.
    assert_eq!(f.impact.time_ns, (ew / 2.0 * 1000.0) as i64);
    assert!(f.measured.contains("20 calls"), "{}", f.measured);
    assert!(f.actions_markdown("\n").contains("torch.compile"));
}

#[test]
fn triton_fused_kernels_are_not_fusion_candidates() {
    let r = one(&elementwise_trace(TRITON));
    invariants(&r, "triton");
    assert!(!has(&r, FindingId::FusionCandidates), "{}", r.to_markdown());
}

// 9. fp32 matmul -----------------------------------------------------------------------------------

#[test]
fn sgemm_is_fp32_matmul() {
    let mut b = TraceBuilder::new();
    b.step(0, 0.0, 21_000.0);
    for i in 0..20 {
        let t = 500.0 + 1_000.0 * i as f64;
        let h = 100.0 + 20.0 * i as f64;
        b.cpu_op("aten::mm", h, 7.0);
        b.kernel(SGEMM, 7, h + 1.0, 5.0, t, 600.0);
        b.kernel(BN, 7, h + 8.0, 5.0, t + 600.0, 400.0);
    }
    let r = one(&b);
    check(
        &r,
        FindingId::Fp32Matmul,
        BottleneckKind::Compute,
        "fp32 matmul",
    );
    assert_eq!(r.context.steps, Some((0, 0)));
    let f = finding(&r, FindingId::Fp32Matmul);
    let (sgemm, kernel) = (20.0 * 600.0, 20.0 * 1_000.0);
    close(f.value, 100.0 * sgemm / kernel, "sgemm % of kernel time");
    assert_eq!(f.impact.time_ns, (sgemm / 2.0 * 1000.0) as i64);
    assert!(f.measured.contains("20 calls"), "{}", f.measured);
    assert!(f.actions_markdown("\n").contains("TF32"), "{:?}", f.actions);
}

// 10. Launch overhead vs host overhead -------------------------------------------------------------

/// 2000 kernels of 3 µs, each launched 2 µs after the previous one ended: 7 µs gaps.
#[test]
fn tiny_kernels_launched_late_are_launch_overhead() {
    let mut b = TraceBuilder::new();
    let n = 2000;
    b.step(0, 0.0, 1_000.0 + 10.0 * n as f64);
    let names = ["add_kernel", "mul_kernel", "sigmoid_kernel", "neg_kernel"];
    for i in 0..n {
        let t = 1_000.0 + 10.0 * i as f64;
        b.cpu_op("aten::add", t - 6.0, 5.5);
        b.kernel(names[i % 4], 7, t - 5.0, 4.0, t, 3.0);
    }
    let r = one(&b);
    check(
        &r,
        FindingId::LaunchOverhead,
        BottleneckKind::Cpu,
        "launch overhead",
    );
    assert_eq!(r.context.steps, Some((0, 0)));
    let window = 10.0 * (n - 1) as f64 + 3.0;
    let idle = 7.0 * (n - 1) as f64;
    close(idle_pct(&r), 100.0 * idle / window, "idle %");
    let f = finding(&r, FindingId::LaunchOverhead);
    close(f.value, 100.0, "% of kernels under 10 µs");
    assert_eq!(f.impact.time_ns, (idle * 1000.0).round() as i64);
    assert!(
        f.measured.contains(&format!("{n} kernels")),
        "{}",
        f.measured
    );
    assert!(!has(&r, FindingId::HostOverhead));
}

/// 200 kernels of 200 µs; between them the host spends 300 µs in `aten::index` before the next launch.
#[test]
fn slow_host_ops_between_long_kernels_are_host_overhead() {
    let mut b = TraceBuilder::new();
    let n = 200;
    b.step(0, 0.0, 1_000.0 + 500.0 * n as f64);
    for i in 0..n {
        let t = 1_000.0 + 500.0 * i as f64;
        b.cpu_op("aten::index", t - 300.0, 295.0);
        b.kernel(GEMM, 7, t - 20.0, 10.0, t, 200.0);
    }
    let r = one(&b);
    check(
        &r,
        FindingId::HostOverhead,
        BottleneckKind::Cpu,
        "host overhead",
    );
    assert_eq!(r.context.steps, Some((0, 0)));
    let window = 500.0 * (n - 1) as f64 + 200.0;
    let idle = 300.0 * (n - 1) as f64;
    close(idle_pct(&r), 100.0 * idle / window, "idle %");
    let f = finding(&r, FindingId::HostOverhead);
    assert_eq!(f.impact.time_ns, (idle * 1000.0) as i64, "{}", f.measured);
    let words = format!("{}\n{}", f.explanation, f.actions_markdown("\n"));
    assert!(words.contains("aten::index"), "{words}");
    assert!(!has(&r, FindingId::LaunchOverhead));
    let dispatch = r
        .idle_attribution
        .iter()
        .find(|s| s.cause == IdleCause::DispatchOverhead)
        .expect("dispatch overhead row");
    assert_eq!(dispatch.top_ops[0].name, "aten::index", "{dispatch:?}");
}

// 11. Host work between steps ---------------------------------------------------------------------

/// Each step: two 2.9 ms GEMMs; then `log_metrics` runs 3.9 ms outside any step while the GPU idles.
#[test]
fn host_work_between_steps_names_the_op() {
    let mut b = TraceBuilder::new();
    for s in 0..4 {
        let t = 10_000.0 * s as f64;
        b.step(s, t, 6_000.0);
        b.cpu_op("aten::mm", t + 40.0, 20.0);
        b.kernel(GEMM, 7, t + 50.0, 5.0, t + 100.0, 2_900.0);
        b.kernel(GEMM, 7, t + 60.0, 5.0, t + 3_000.0, 2_900.0);
        b.cpu_op("log_metrics", t + 6_000.0, 3_900.0);
    }
    let r = one(&b);
    check(
        &r,
        FindingId::HostBound,
        BottleneckKind::Cpu,
        "between steps",
    );
    assert_eq!(r.context.steps, Some((0, 3)));
    let window = 30_000.0 + 5_900.0 - 100.0;
    let idle = window - 4.0 * 5_800.0;
    // Outside the steps: 6 ms → 10 ms of each of the three gaps.
    let between = 3.0 * 4_000.0;
    close(idle_pct(&r), 100.0 * idle / window, "idle %");
    let f = finding(&r, FindingId::HostBound);
    assert_eq!(
        f.impact.time_ns,
        (between * 1000.0) as i64,
        "{}",
        f.measured
    );
    close(f.value, 100.0 * between / window, "between-steps %");
    assert!(
        f.actions_markdown("\n").contains("log_metrics"),
        "{:?}",
        f.actions
    );
    close(
        attributed_us(&r, IdleCause::BetweenSteps),
        between,
        "between-steps attribution",
    );
}

// 12. Communication beyond NCCL -------------------------------------------------------------------

/// Each 1 ms: 700 µs of GEMM, then a DeepEP dispatch and a custom all-reduce of 150 µs each, with
/// nothing to overlap them.
#[test]
fn deepep_and_custom_all_reduce_are_communication() {
    let mut b = TraceBuilder::new().rank(0, 1);
    b.step(0, 0.0, 21_000.0);
    for i in 0..20 {
        let t = 500.0 + 1_000.0 * i as f64;
        let h = 100.0 + 20.0 * i as f64;
        b.kernel(GEMM, 7, h, 5.0, t, 700.0);
        b.kernel(DEEP_EP, 20, h + 6.0, 5.0, t + 700.0, 150.0);
        b.kernel(CUSTOM_AR, 20, h + 12.0, 5.0, t + 850.0, 150.0);
    }
    let r = one(&b);
    check(
        &r,
        FindingId::Communication,
        BottleneckKind::Communication,
        "DeepEP",
    );
    assert_eq!(r.context.steps, Some((0, 0)));
    let (window, exposed) = (20.0 * 1_000.0, 20.0 * 300.0);
    let f = finding(&r, FindingId::Communication);
    close(f.value, 100.0 * exposed / window, "exposed communication %");
    assert_eq!(f.impact.time_ns, (exposed * 1000.0) as i64);
    close(
        r.bottleneck.as_ref().unwrap().comm_exposed_pct,
        100.0 * exposed / window,
        "bottleneck exposed %",
    );
}

/// The host waits in a CPU-side barrier (`c10d::barrier`) 3.9 ms per step while the GPU idles.
#[test]
fn host_waits_in_a_barrier_are_communication() {
    let mut b = TraceBuilder::new();
    for s in 0..4 {
        let t = 8_000.0 * s as f64;
        b.step(s, t, 8_000.0);
        b.cpu_op("aten::mm", t + 40.0, 20.0);
        b.kernel(GEMM, 7, t + 50.0, 5.0, t + 100.0, 2_000.0);
        b.kernel(GEMM, 7, t + 60.0, 5.0, t + 2_100.0, 2_000.0);
        b.cpu_op("c10d::barrier", t + 4_100.0, 3_850.0);
    }
    let r = one(&b);
    check(
        &r,
        FindingId::Communication,
        BottleneckKind::Communication,
        "barrier wait",
    );
    assert_eq!(r.context.steps, Some((0, 3)));
    let window = 24_000.0 + 4_100.0 - 100.0;
    let wait = 3.0 * 3_850.0;
    close(
        attributed_us(&r, IdleCause::CommunicationWait),
        wait,
        "communication wait µs",
    );
    let f = finding(&r, FindingId::Communication);
    assert_eq!(f.impact.time_ns, (wait * 1000.0) as i64, "{}", f.measured);
    close(f.value, 100.0 * wait / window, "communication %");
}

// 13. Stragglers ----------------------------------------------------------------------------------

/// Rank `rank` of 8: each 5.4 ms step computes `compute` µs, then all-reduces until the step's end (the
/// fast ranks wait in it for the slow one).
fn rank_trace(rank: i64, compute: f64) -> TraceBuilder {
    let mut b = TraceBuilder::new().rank(rank, 8);
    for s in 0..3 {
        let t = 1_000.0 + 5_400.0 * s as f64;
        b.step(s, t - 200.0, 5_400.0);
        b.kernel(GEMM, 7, t - 100.0, 5.0, t, compute);
        b.kernel(
            ALL_REDUCE,
            20,
            t - 90.0,
            5.0,
            t + compute,
            5_400.0 - compute,
        );
    }
    b
}

fn eight_ranks(slow: Option<i64>) -> DiagnosisReport {
    let tables = (0..8)
        .map(|r| {
            let compute = if Some(r) == slow { 5_200.0 } else { 4_000.0 };
            rank_trace(r, compute).table(&format!("rank{r}.json"))
        })
        .collect();
    diagnose(&TraceSet::from_tables(tables))
}

#[test]
fn a_slow_rank_of_eight_is_the_straggler() {
    let r = eight_ranks(Some(5));
    check(
        &r,
        FindingId::Straggler,
        BottleneckKind::Communication,
        "8 ranks, rank 5 slow",
    );
    assert_eq!(r.ranks, (0..8).collect::<Vec<i64>>());
    assert_eq!(r.context.steps, Some((0, 2)));
    let f = finding(&r, FindingId::Straggler);
    assert!(f.title.contains("rank 5"), "{}", f.title);
    assert!(r.main_finding.contains("Rank 5"), "{}", r.main_finding);
    let (slow, median) = (3.0 * 5_200.0, 3.0 * 4_000.0);
    // The 7 other ranks each wait the excess in their all-reduce (from their arrival to rank 5's),
    // with nothing else running: the share of the 8 ranks' GPU windows (3 steps of 5.4 ms each).
    let wait = 7.0 * (slow - median);
    close(f.value, 100.0 * wait / (8.0 * 3.0 * 5_400.0), "wait %");
    assert_eq!(f.impact.time_ns, (wait * 1000.0) as i64);
    assert!(
        f.measured.starts_with("rank 5: last at 3 of 3 collectives"),
        "{}",
        f.measured
    );
}

#[test]
fn tied_ranks_have_no_straggler() {
    let r = eight_ranks(None);
    invariants(&r, "8 tied ranks");
    assert!(!has(&r, FindingId::Straggler), "{}", r.to_markdown());
    assert_eq!(r.context.steps, Some((0, 2)));
    // Nobody is late: the all-reduce itself (1.4 ms of each 5.4 ms step, every rank) is what is exposed.
    assert_eq!(r.main_finding_id, Some(FindingId::Communication));
    assert_eq!(bottleneck(&r), BottleneckKind::Communication);
    let f = finding(&r, FindingId::Communication);
    close(
        f.value,
        100.0 * 1_400.0 / 5_400.0,
        "exposed communication %",
    );
    let md = r.to_markdown();
    assert!(!md.contains("most often last"), "{md}");
}

// Allocator churn and one-op micro-benchmarks ---------------------------------------------------------

/// Five equal 2 ms steps; each runs one 1 ms GEMM (20 → 1020 µs into the step), then frees and
/// re-allocates memory: `cudaFree` at 1000, 1400, 1800 µs and `cudaMalloc` at 1200, 1600 µs (150 µs
/// each). The first free starts while the GEMM runs, so it drains the queue; the GPU then idles until
/// the next step's GEMM, 1000 µs per step.
fn allocator_churn_trace() -> TraceBuilder {
    let mut b = TraceBuilder::new();
    for s in 1..=5 {
        let t = 2_000.0 * s as f64;
        b.step(s, t, 2_000.0);
        b.kernel(GEMM, 7, t + 5.0, 5.0, t + 20.0, 1_000.0);
        for (k, at) in [1_000.0, 1_200.0, 1_400.0, 1_600.0, 1_800.0]
            .iter()
            .enumerate()
        {
            let call = if k % 2 == 0 { "cudaFree" } else { "cudaMalloc" };
            b.runtime(call, t + at, 150.0);
        }
    }
    b
}

#[test]
fn allocator_churn_in_every_step_is_not_warmup() {
    let r = one(&allocator_churn_trace());
    check(
        &r,
        FindingId::Synchronization,
        BottleneckKind::Cpu,
        "allocator churn",
    );
    assert!(!r.context.holds(TraceHolds::Warmup), "{:?}", r.context);
    assert!(r.context.holds(TraceHolds::SteadyState), "{:?}", r.context);
    assert_eq!(r.context.steps, Some((1, 5)));
    // Window: first GEMM start (2020) → last GEMM end (11020) = 9000 µs; idle 4 gaps of 1000 µs.
    close(idle_pct(&r), 100.0 * 4_000.0 / 9_000.0, "idle %");
    close(
        attributed_us(&r, IdleCause::Synchronization),
        4_000.0,
        "idle after the frees µs",
    );
    close(attributed_us(&r, IdleCause::Warmup), 0.0, "warm-up µs");
    let f = finding(&r, FindingId::Synchronization);
    assert!(f.headline.contains("cudaFree"), "{}", f.headline);
    assert!(
        f.actions.iter().any(|a| a.contains("caching allocator")),
        "{:?}",
        f.actions
    );
}

#[test]
fn allocation_only_in_the_first_step_stays_warmup() {
    // The same trace with allocations in step 1 only: they happen once, so step 1 is warm-up.
    let mut b = TraceBuilder::new();
    for s in 1..=5 {
        let t = 2_000.0 * s as f64;
        b.step(s, t, 2_000.0);
        b.kernel(GEMM, 7, t + 5.0, 5.0, t + 20.0, 1_900.0);
    }
    for k in 0..12 {
        let call = if k % 2 == 0 { "cudaMalloc" } else { "cudaFree" };
        b.runtime(call, 2_000.0 + 150.0 * k as f64, 140.0);
    }
    let r = one(&b);
    invariants(&r, "allocation in step 1");
    assert!(r.context.holds(TraceHolds::Warmup), "{:?}", r.context);
    assert_eq!(r.context.steps, Some((2, 5)));
    assert!(!has(&r, FindingId::Synchronization), "{}", r.to_markdown());
}

/// Ten back-to-back 400 µs element-wise adds and nothing else: a one-op bandwidth micro-benchmark.
#[test]
fn a_lone_elementwise_kernel_is_memory_bound_not_a_fusion_candidate() {
    let mut b = TraceBuilder::new();
    for i in 0..10 {
        let h = 10.0 * i as f64;
        b.cpu_op("aten::add", h, 8.0);
        b.kernel(
            ELEMENTWISE,
            7,
            h + 1.0,
            5.0,
            200.0 + 400.0 * i as f64,
            400.0,
        );
    }
    let r = one(&b);
    check(
        &r,
        FindingId::DominantKernel,
        BottleneckKind::Memory,
        "one element-wise kernel",
    );
    assert!(!has(&r, FindingId::FusionCandidates), "{}", r.to_markdown());
    let f = finding(&r, FindingId::DominantKernel);
    close(f.value, 100.0, "share of kernel time");
    assert!(
        f.actions.iter().any(|a| a.contains("bandwidth")),
        "{:?}",
        f.actions
    );
    let reason = &r.bottleneck.as_ref().unwrap().reason;
    assert!(reason.contains("memory bandwidth"), "{reason}");
}

/// fp32 cuDNN convolutions (`dgrad_engine<float…>`, `volta_scudnn_…`) on a GPU the trace does not
/// name: the kernel names say Volta, which has no TF32, so the advice is fp16 autocast.
#[test]
fn fp32_convolutions_on_an_unnamed_volta_gpu_get_fp16_advice() {
    const DGRAD: &str = "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int)";
    const FPROP: &str = "volta_scudnn_128x64_relu_interior_nn_v1";
    let mut b = TraceBuilder::new();
    b.step(0, 0.0, 21_000.0);
    for i in 0..20 {
        let t = 500.0 + 1_000.0 * i as f64;
        let h = 100.0 + 20.0 * i as f64;
        b.cpu_op("aten::cudnn_convolution", h, 7.0);
        b.kernel(DGRAD, 7, h + 1.0, 5.0, t, 500.0);
        b.kernel(FPROP, 7, h + 8.0, 5.0, t + 500.0, 300.0);
        b.kernel(BN, 7, h + 12.0, 3.0, t + 800.0, 200.0);
    }
    let mut doc: serde_json::Value = serde_json::from_str(&b.json()).unwrap();
    doc.as_object_mut().unwrap().remove("deviceProperties");
    let table = profile_model::table::load_bytes("volta.json", doc.to_string().as_bytes()).unwrap();
    let r = diagnose(&TraceSet::single(table));
    check(
        &r,
        FindingId::Fp32Matmul,
        BottleneckKind::Compute,
        "fp32 convolutions",
    );
    let f = finding(&r, FindingId::Fp32Matmul);
    let (fp32, kernel) = (20.0 * 800.0, 20.0 * 1_000.0);
    close(f.value, 100.0 * fp32 / kernel, "fp32 share of kernel time");
    assert!(
        f.headline.starts_with("fp32 convolutions"),
        "{}",
        f.headline
    );
    let advice = f.actions_markdown("\n");
    assert!(
        advice.contains("Volta") && advice.contains("float16"),
        "{advice}"
    );
    assert!(!advice.contains("allow_tf32"), "{advice}");
}

// A blocking read-back while the GPU has nothing to run ----------------------------------------------

/// A server's decode step as one profile caught it: a short kernel, then the host blocks 400 ms in a
/// `cudaMemcpy` with nothing on the GPU (what it waits for is outside the trace), then one decode's
/// kernels (40 × 100 µs GEMMs).
fn read_back_wait_trace() -> TraceBuilder {
    let mut b = TraceBuilder::new();
    b.cpu_op("aten::arange", 0.0, 20.0);
    b.kernel(GEMM_NT, 7, 5.0, 5.0, 10.0, 10.0);
    b.cpu_op("aten::copy_", 50.0, 400_010.0);
    b.runtime("cudaMemcpy", 55.0, 400_000.0);
    for k in 0..40 {
        let t = 400_100.0 + 120.0 * k as f64;
        b.cpu_op("aten::mm", t, 10.0);
        b.kernel(GEMM, 7, t + 2.0, 5.0, t + 20.0, 100.0);
    }
    b
}

#[test]
fn a_sync_that_blocks_with_nothing_queued_is_a_wait_outside_the_trace() {
    let r = one(&read_back_wait_trace());
    assert_eq!(
        r.main_finding_id,
        Some(FindingId::WaitOutsideTrace),
        "{}",
        r.to_markdown()
    );
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != FindingId::Synchronization),
        "not also a queue-draining sync:\n{}",
        r.to_markdown()
    );
    // Apart from the wait, the GPU runs 40 × 100 µs of GEMMs in 40 × 120 µs: the rest of the window
    // decides, and it is compute-bound.
    let b = r.bottleneck.as_ref().expect("a bottleneck");
    assert_eq!(b.kind, BottleneckKind::Compute, "{}", b.reason);
    assert!(
        b.reason.starts_with("apart from the 400.0 ms"),
        "{}",
        b.reason
    );
    let f = finding(&r, FindingId::WaitOutsideTrace);
    // The GPU ran the first kernel until 20 µs, before the copy began at 55 µs: all 400 ms of the
    // call were idle.
    assert!(
        f.measured
            .contains("400.0 ms of it with the GPU running nothing"),
        "{}",
        f.measured
    );
    assert!(r.to_markdown().contains("At stake"), "{}", r.to_markdown());
    assert!(
        !r.to_markdown().contains("Recoverable: ≈"),
        "{}",
        r.to_markdown()
    );
}

#[test]
fn a_sync_that_waits_for_queued_kernels_still_drains_the_queue() {
    // The same read-back, but the 400 ms of kernels were queued before it: the copy waits for them.
    let mut b = TraceBuilder::new();
    for k in 0..4 {
        b.kernel(
            GEMM,
            7,
            1.0 + k as f64,
            1.0,
            10.0 + 100_000.0 * k as f64,
            100_000.0,
        );
    }
    b.cpu_op("aten::copy_", 50.0, 400_010.0);
    b.runtime("cudaMemcpy", 55.0, 400_000.0);
    for s in 0..3 {
        let t = 400_100.0 + 2_000.0 * s as f64;
        b.cpu_op("aten::copy_", t, 1_010.0);
        b.runtime("cudaMemcpy", t + 5.0, 1_000.0);
        b.kernel(GEMM, 7, t + 1_020.0, 5.0, t + 1_040.0, 100.0);
    }
    let r = one(&b);
    assert!(
        r.findings
            .iter()
            .all(|f| f.id != FindingId::WaitOutsideTrace),
        "{}",
        r.to_markdown()
    );
}

/// Steps of kernels of `kernel_us` every 50 µs, each launched 15 µs before it starts: the GPU
/// waits for the next launch between kernels (dispatch idle of 50 - `kernel_us` µs each).
fn dispatch_paced(kernel_us: f64) -> TraceBuilder {
    let mut b = TraceBuilder::new();
    let names = ["gemm_a", "gemm_b", "gemm_c", "gemm_d"];
    let mut t = 0.0;
    for s in 0..6 {
        let start = t;
        for k in 0..40 {
            b.cpu_op("aten::mm", t, 30.0);
            b.kernel(
                names[k % names.len()],
                7,
                t + 5.0,
                10.0,
                t + 20.0,
                kernel_us,
            );
            t += 50.0;
        }
        b.step(s + 1, start, t - start);
    }
    b
}

#[test]
fn a_small_dispatch_gap_on_a_busy_gpu_is_a_note_not_the_bottleneck() {
    // 45 of every 50 µs busy: the GPU is busy 90% of the window, idle 10% waiting for launches.
    let r = one(&dispatch_paced(45.0));
    invariants(&r, "busy gpu");
    let busy = 100.0 - idle_pct(&r);
    assert!(busy >= 85.0, "busy {busy}%\n{}", r.to_markdown());
    assert_eq!(
        bottleneck(&r),
        BottleneckKind::Compute,
        "{}",
        r.to_markdown()
    );
    assert!(
        r.main_finding_id
            .and_then(BottleneckKind::of_finding)
            .is_none_or(|k| k != BottleneckKind::Cpu),
        "{}",
        r.to_markdown()
    );
}

// Advice the trace contradicts (issue 30) ---------------------------------------------------------

/// [`tiny_kernels_launched_late_are_launch_overhead`]'s 2000 tiny kernels launched late, named
/// `names`, after `graphs` graph replays of one 50 µs kernel each.
fn tiny_kernels(names: [&str; 4], graphs: usize) -> DiagnosisReport {
    let mut b = TraceBuilder::new();
    let n = 2000;
    b.step(0, 0.0, 1_000.0 + 10.0 * n as f64);
    for g in 0..graphs {
        let t = 100.0 + 200.0 * g as f64;
        b.graph_launch(7, t, 5.0, &[(GEMM, t + 10.0, 50.0)]);
    }
    for i in 0..n {
        let t = 1_000.0 + 10.0 * i as f64;
        b.cpu_op("aten::add", t - 6.0, 5.5);
        b.kernel(names[i % 4], 7, t - 5.0, 4.0, t, 3.0);
    }
    one(&b)
}

#[test]
fn graphs_and_compilation_already_in_use_are_not_advised_again() {
    let eager = tiny_kernels(
        ["add_kernel", "mul_kernel", "sigmoid_kernel", "neg_kernel"],
        0,
    );
    let f = finding(&eager, FindingId::LaunchOverhead);
    let actions = f.actions_markdown("\n");
    assert!(
        actions.contains("Capture the steady-state step in a CUDA graph"),
        "{actions}"
    );
    assert!(
        actions.contains("Fuse the small kernels with `torch.compile(model)`"),
        "{actions}"
    );
    assert!(eager.context.in_use.compiled.is_none() && eager.context.in_use.graph_launches == 0);
    let compiled = [
        "triton_poi_fused_add_0",
        "triton_poi_fused_mul_1",
        "triton_red_fused_sum_2",
        "triton_poi_fused_neg_3",
    ];
    let r = tiny_kernels(compiled, 4);
    invariants(&r, "graphs and compiled code in use");
    assert_eq!(r.context.in_use.graph_launches, 4);
    assert!(r.context.in_use.compiled.is_some());
    let f = finding(&r, FindingId::LaunchOverhead);
    let actions = f.actions_markdown("\n");
    assert!(
        !actions.contains("Capture the steady-state step in a CUDA graph"),
        "{actions}"
    );
    assert!(
        !actions.contains("Fuse the small kernels with `torch.compile(model)`"),
        "{actions}"
    );
    assert!(actions.contains("already replays 4 graphs"), "{actions}");
    assert!(actions.contains("already compiled"), "{actions}");
    let md = r.to_markdown();
    assert!(!md.contains("mode=\"reduce-overhead\""), "{md}");
}

#[test]
fn fp32_gemms_beside_half_precision_ones_are_not_told_to_enable_mixed_precision() {
    // 20 steps: a 600 µs sgemm, a 300 µs fp16 GEMM, a 100 µs fp32 norm.
    let mut b = TraceBuilder::new();
    b.step(0, 0.0, 21_000.0);
    for i in 0..20 {
        let t = 500.0 + 1_000.0 * i as f64;
        let h = 100.0 + 20.0 * i as f64;
        b.cpu_op("aten::mm", h, 7.0);
        b.kernel(SGEMM, 7, h + 1.0, 5.0, t, 600.0);
        b.kernel(GEMM_NN, 7, h + 8.0, 5.0, t + 600.0, 300.0);
        b.kernel(BN, 7, h + 14.0, 5.0, t + 900.0, 100.0);
    }
    let r = one(&b);
    invariants(&r, "mixed precision in use");
    assert_eq!(r.context.in_use.low_precision.as_deref(), Some(GEMM_NN));
    let f = finding(&r, FindingId::Fp32Matmul);
    close(f.value, 100.0 * 600.0 / 1_000.0, "sgemm % of kernel time");
    let actions = f.actions_markdown("\n");
    assert!(!actions.contains("Enable TF32"), "{actions}");
    assert!(
        actions.contains("Reduced precision is already in use"),
        "{actions}"
    );
    assert!(actions.contains("autocast"), "{actions}");
}

// Waits read as data movement (issue 30) ------------------------------------------------------------

/// Five 4 ms steps: a 1 ms GEMM, then `.item()` (`aten::item` > `aten::_local_scalar_dense`): an
/// asynchronous device-to-host copy queued behind the GEMM and a 2.97 ms `cudaStreamSynchronize`
/// that returns long after the copy, the GPU running nothing else.
fn item_trace() -> TraceBuilder {
    let mut b = TraceBuilder::new();
    for s in 0..5 {
        let t = 4_000.0 * s as f64;
        b.step(s, t, 4_000.0);
        b.cpu_op("aten::mm", t + 5.0, 12.0);
        b.kernel(GEMM, 7, t + 10.0, 5.0, t + 20.0, 1_000.0);
        b.cpu_op("aten::item", t + 30.0, 3_000.0);
        b.cpu_op("aten::_local_scalar_dense", t + 31.0, 2_998.0);
        b.memcpy(
            "Memcpy DtoH (Device -> Pageable)",
            4,
            7,
            t + 40.0,
            5.0,
            t + 1_030.0,
            10.0,
        );
        b.runtime("cudaStreamSynchronize", t + 50.0, 2_970.0);
    }
    b
}

#[test]
fn a_synchronous_device_to_host_read_that_waits_on_nothing_recorded_is_named_as_a_read() {
    // The sync returns 1.98 ms after the copy with nothing recorded running: what it waits for is
    // not in the trace, but what the step does is a synchronous read, and the report says so.
    let r = one(&item_trace());
    invariants(&r, "item");
    assert_eq!(
        r.main_finding_id,
        Some(FindingId::WaitOutsideTrace),
        "{}",
        r.to_markdown()
    );
    let f = finding(&r, FindingId::WaitOutsideTrace);
    assert!(
        f.headline
            .contains("a synchronous device-to-host read (`.item()`"),
        "{}",
        f.headline
    );
    // Blocked, inside each sync: the 10 µs the copy waits after the GEMM (t + 1,020 to t + 1,030)
    // and, in the first four steps, the copy's end (t + 1,040) to the sync's (t + 3,020); the last
    // step's window ends with its copy.
    close(
        attributed_us(&r, IdleCause::BlockedWait),
        4.0 * (10.0 + 1_980.0) + 10.0,
        "blocked µs",
    );
}

#[test]
fn a_wait_with_no_recorded_work_is_still_outside_the_trace() {
    // The same steps without the copy: the sync waits for nothing the trace holds.
    let mut b = TraceBuilder::new();
    for s in 0..5 {
        let t = 4_000.0 * s as f64;
        b.step(s, t, 4_000.0);
        b.cpu_op("aten::mm", t + 5.0, 12.0);
        b.kernel(GEMM, 7, t + 10.0, 5.0, t + 20.0, 1_000.0);
        b.runtime("cudaStreamSynchronize", t + 50.0, 2_970.0);
    }
    let r = one(&b);
    invariants(&r, "wait outside");
    let f = finding(&r, FindingId::WaitOutsideTrace);
    assert!(!f.headline.contains("device-to-host"), "{}", f.headline);
}

// Workload causes visible in names (issue 30) -------------------------------------------------------

const CONV: &str = "sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_stage3_warpsize2x2x1_g1_tensor16x8x16_kernel";
const TO_NHWC: &str = "void cudnn::ops::nchwToNhwcKernel<__half, __half, float, false, true, (cudnnKernelDataType_t)0>(cudnn::ops::nchw2nhwc_params_t<float>, __half const*, __half*)";
const TO_NCHW: &str = "void cudnn::ops::nhwcToNchwKernel<__half, __half, float, true, false, (cudnnKernelDataType_t)0>(cudnn::ops::nhwc2nchw_params_t<float>, __half const*, __half*)";
const DROPOUT: &str = "void at::native::(anonymous namespace)::fused_dropout_kernel_vec<c10::Half, float, unsigned int, 1, 4, bool>(at::cuda::detail::TensorInfo<c10::Half const, unsigned int>, at::cuda::detail::TensorInfo<c10::Half, unsigned int>, at::cuda::detail::TensorInfo<bool, unsigned int>, unsigned int, float, at::PhiloxCudaState)";
const IM2COL: &str = "void at::native::im2col_kernel<float>(long, float const*, long, long, long, long, long, long, long, long, long, long, long, long, float*)";
const WGRAD: &str =
    "sm80_xmma_wgrad_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_kernel";

/// Twenty steps of back-to-back kernels `(name, µs)`.
fn kernels_trace(kernels: &[(&str, f64)]) -> TraceBuilder {
    let mut b = TraceBuilder::new();
    let step: f64 = kernels.iter().map(|k| k.1).sum::<f64>() + 10.0;
    for s in 0..20 {
        let t = step * s as f64;
        b.step(s, t, step);
        let mut at = t + 5.0;
        for (j, (name, us)) in kernels.iter().enumerate() {
            b.cpu_op("aten::op", t + j as f64 * 0.5, 0.4);
            b.kernel(name, 7, t + j as f64 * 0.5, 0.2, at, *us);
            at += us;
        }
    }
    b
}

#[test]
fn layout_conversions_around_convolutions_are_avoidable() {
    let r = one(&kernels_trace(&[
        (TO_NHWC, 100.0),
        (CONV, 500.0),
        (TO_NCHW, 100.0),
    ]));
    invariants(&r, "layout conversions");
    let f = finding(&r, FindingId::AvoidableKernels);
    close(
        f.value,
        100.0 * 200.0 / 700.0,
        "conversions % of kernel time",
    );
    assert_eq!(f.impact.time_ns, 20 * 200_000);
    assert!(f.measured.contains("40 calls"), "{}", f.measured);
    assert!(
        f.actions_markdown("\n").contains("channels_last"),
        "{:?}",
        f.actions
    );
    // The same convolutions without conversions: nothing avoidable.
    let r = one(&kernels_trace(&[(CONV, 700.0)]));
    assert!(!has(&r, FindingId::AvoidableKernels), "{}", r.to_markdown());
}

#[test]
fn dropout_in_a_forward_only_run_is_avoidable_but_not_in_training() {
    let r = one(&kernels_trace(&[(GEMM, 500.0), (DROPOUT, 100.0)]));
    invariants(&r, "dropout at inference");
    let f = finding(&r, FindingId::AvoidableKernels);
    close(f.value, 100.0 * 100.0 / 600.0, "dropout % of kernel time");
    assert_eq!(f.impact.time_ns, 20 * 100_000);
    assert!(
        f.actions_markdown("\n").contains("model.eval()"),
        "{:?}",
        f.actions
    );
    // With a backward kernel it is training: dropout belongs there.
    let r = one(&kernels_trace(&[
        (GEMM, 500.0),
        (DROPOUT, 100.0),
        (WGRAD, 400.0),
    ]));
    assert!(!has(&r, FindingId::AvoidableKernels), "{}", r.to_markdown());
}

#[test]
fn convolutions_on_the_im2col_fallback_are_named() {
    let r = one(&kernels_trace(&[(IM2COL, 300.0), (SGEMM, 300.0)]));
    invariants(&r, "slow conv");
    let f = finding(&r, FindingId::AvoidableKernels);
    close(f.value, 50.0, "im2col % of kernel time");
    // Half of the fallback's time is expected back.
    assert_eq!(f.impact.time_ns, 20 * 150_000);
    assert!(
        f.actions_markdown("\n").contains("cudnn.enabled"),
        "{:?}",
        f.actions
    );
}

#[test]
fn per_element_item_reads_in_a_loop_are_named_per_step() {
    let mut b = TraceBuilder::new();
    for s in 0..4 {
        let t = 2_000.0 * s as f64;
        b.step(s, t, 2_000.0);
        for j in 0..20 {
            let u = t + 100.0 * j as f64;
            b.cpu_op("aten::item", u, 90.0);
            b.cpu_op("aten::_local_scalar_dense", u + 1.0, 88.0);
            b.kernel(GEMM, 7, u + 2.0, 3.0, u + 6.0, 50.0);
            b.memcpy(
                "Memcpy DtoH (Device -> Pageable)",
                4,
                7,
                u + 10.0,
                3.0,
                u + 56.0,
                2.0,
            );
            b.runtime("cudaStreamSynchronize", u + 14.0, 45.0);
        }
    }
    let r = one(&b);
    invariants(&r, "item loop");
    let f = finding(&r, FindingId::Synchronization);
    let actions = f.actions_markdown("\n");
    assert!(actions.contains("20 per step"), "{actions}");
    assert!(actions.contains("one element at a time"), "{actions}");
}

/// Two kernels of one template (`vectorized_elementwise_kernel` with a fill and a multiply functor):
/// the finding names them apart, never as the same short name twice.
#[test]
fn fusion_candidates_of_one_template_are_named_apart() {
    const FILL: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";
    const MUL: &str = "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>, at::detail::Array<char*, 3> >(int, at::native::MulFunctor<float>, at::detail::Array<char*, 3>)";
    let mut b = TraceBuilder::new();
    b.step(0, 0.0, 21_000.0);
    for i in 0..20 {
        let t = 500.0 + 1_000.0 * i as f64;
        let h = 100.0 + 20.0 * i as f64;
        b.kernel(GEMM_NT, 7, h, 5.0, t, 300.0);
        b.cpu_op("aten::fill_", h + 6.0, 5.0);
        b.kernel(FILL, 7, h + 7.0, 5.0, t + 300.0, 350.0);
        b.cpu_op("aten::mul", h + 12.0, 5.0);
        b.kernel(MUL, 7, h + 13.0, 5.0, t + 650.0, 350.0);
    }
    let r = one(&b);
    let f = finding(&r, FindingId::FusionCandidates);
    let measured = f.measured.to_markdown();
    let shown: Vec<&str> = measured.split('`').skip(1).step_by(2).collect();
    assert_eq!(shown.len(), 2, "{}", f.measured);
    assert_ne!(shown[0], shown[1], "{}", f.measured);
    assert!(
        shown.iter().any(|s| s.contains("FillFunctor"))
            && shown.iter().any(|s| s.contains("MulFunctor")),
        "{}",
        f.measured
    );
}
