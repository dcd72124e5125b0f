//! Helpers shared by the integration tests: where the real traces (and HTA's reference outputs) are, a
//! column-by-column fingerprint, and [`TraceBuilder`], which writes small synthetic Kineto traces in code.
#![allow(dead_code)]

use std::path::PathBuf;

use profile_model::table::{load_bytes, TraceTable};
use serde_json::{json, Value};

/// The folder of real traces: `PROFILE_MODEL_TRACES`, else `../shared/traces` beside the crate.
pub fn traces_dir() -> PathBuf {
    match std::env::var_os("PROFILE_MODEL_TRACES") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/traces"),
    }
}

/// Every trace file in the folder (sorted), failing clearly when the folder is absent.
pub fn trace_files() -> Vec<PathBuf> {
    let dir = traces_dir();
    let rd = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!("real traces not found at {} ({e}); set PROFILE_MODEL_TRACES to the shared traces folder", dir.display())
    });
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x != "md"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no trace files in {}", dir.display());
    files
}

/// HTA 0.5.0's reference outputs: `PROFILE_MODEL_REF`, else `../shared/ref` beside the crate.
pub fn ref_dir() -> PathBuf {
    match std::env::var_os("PROFILE_MODEL_REF") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/ref"),
    }
}

/// Kineto trace files of the folder (`.json`/`.gz`, not `*NOT_KINETO*`), sorted.
pub fn kineto_trace_files() -> Vec<PathBuf> {
    trace_files()
        .into_iter()
        .filter(|p| {
            let n = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            (n.ends_with(".json") || n.ends_with(".gz")) && !n.contains("NOT_KINETO")
        })
        .collect()
}

pub fn trace(name: &str) -> PathBuf {
    traces_dir().join(name)
}

/// The file's JSON text (gunzipped with flate2, independently of the crate's own decoder).
pub fn json_text(path: &std::path::Path) -> Vec<u8> {
    use std::io::Read;
    let raw = std::fs::read(path).unwrap();
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    }
}

/// Every value of every column, row by row, as text: two tables with equal fingerprints are equal.
pub fn fingerprint(t: &TraceTable) -> Vec<String> {
    let mut out = Vec::with_capacity(t.len() + t.args.len() + 4);
    for r in 0..t.len() {
        out.push(format!(
            "{}|{}|{:?}|{}|{}|{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
            t.kind_at(r) as u8,
            t.phase_at(r),
            t.category_at(r),
            t.name_at(r),
            t.pid_at(r),
            t.tid_at(r),
            t.ts_at(r),
            t.dur_at(r),
            t.external_id_at(r),
            t.correlation_at(r),
            t.stream_at(r),
            t.device_at(r),
            t.flow_id_at(r)
        ));
    }
    for c in &t.args {
        let rows: Vec<u32> = c.rows.values().to_vec();
        let vals: Vec<String> = (0..rows.len()).map(|i| c.json_at(i).to_string()).collect();
        out.push(format!(
            "args_{} {} mixed={} rows={:?} values={:?}",
            c.key,
            c.type_name(),
            c.mixed_types,
            rows,
            vals
        ));
    }
    out.push(format!("diagnostics {:?}", t.diagnostics.list()));
    out.push(format!(
        "metadata {:?} {:?} {:?}",
        t.metadata.rank, t.metadata.device_name, t.metadata.top_level
    ));
    out.push(format!(
        "names {:?} {:?}",
        t.metadata.process_names, t.metadata.thread_names
    ));
    out
}

/// Host process/thread of the synthetic traces.
pub const HOST_PID: i64 = 100;
pub const HOST_TID: i64 = 100;

/// Writes a small Kineto Chrome trace: CPU ops, `ProfilerStep#N` annotations, runtime calls with their
/// kernels/copies (joined by `correlation`, with `External id`), and `distributedInfo`. Times are µs.
#[derive(Clone, Debug, Default)]
pub struct TraceBuilder {
    events: Vec<Value>,
    next_correlation: i64,
    next_external: i64,
    rank: Option<(i64, i64)>,
}

impl TraceBuilder {
    pub fn new() -> Self {
        TraceBuilder {
            next_correlation: 1,
            next_external: 1,
            ..Default::default()
        }
    }

    /// `distributedInfo` rank and world size.
    pub fn rank(mut self, rank: i64, world_size: i64) -> Self {
        self.rank = Some((rank, world_size));
        self
    }

    fn host(&mut self, cat: &str, name: &str, ts: f64, dur: f64, args: Value) -> &mut Self {
        self.events.push(json!({
            "ph": "X", "cat": cat, "name": name, "pid": HOST_PID, "tid": HOST_TID,
            "ts": ts, "dur": dur, "args": args
        }));
        self
    }

    /// A CPU operator (`aten::mm`, `enumerate(DataLoader)#...`).
    pub fn cpu_op(&mut self, name: &str, ts: f64, dur: f64) -> &mut Self {
        let e = self.next_external;
        self.next_external += 1;
        self.host("cpu_op", name, ts, dur, json!({"External id": e}))
    }

    /// A `ProfilerStep#n` user annotation.
    pub fn step(&mut self, n: i64, ts: f64, dur: f64) -> &mut Self {
        self.host(
            "user_annotation",
            &format!("ProfilerStep#{n}"),
            ts,
            dur,
            json!({}),
        )
    }

    /// A runtime call without device work (`cudaStreamSynchronize`, `cudaDeviceSynchronize`).
    pub fn runtime(&mut self, name: &str, ts: f64, dur: f64) -> &mut Self {
        let c = self.next_correlation;
        self.next_correlation += 1;
        self.host("cuda_runtime", name, ts, dur, json!({"correlation": c}))
    }

    fn device(
        &mut self,
        cat: &str,
        call: &str,
        name: &str,
        stream: i64,
        call_ts: f64,
        call_dur: f64,
        ts: f64,
        dur: f64,
        extra: Value,
    ) -> i64 {
        let c = self.next_correlation;
        self.next_correlation += 1;
        let e = self.next_external;
        self.next_external += 1;
        self.host(
            "cuda_runtime",
            call,
            call_ts,
            call_dur,
            json!({"correlation": c, "External id": e}),
        );
        let mut args = json!({"device": 0, "stream": stream, "correlation": c, "External id": e});
        if let (Some(a), Some(x)) = (args.as_object_mut(), extra.as_object()) {
            for (k, v) in x {
                a.insert(k.clone(), v.clone());
            }
        }
        self.events.push(json!({
            "ph": "X", "cat": cat, "name": name, "pid": 0, "tid": stream,
            "ts": ts, "dur": dur, "args": args
        }));
        c
    }

    /// `cudaLaunchKernel` at `call_ts` (for `call_dur`) and the kernel it launches on `stream`.
    pub fn kernel(
        &mut self,
        name: &str,
        stream: i64,
        call_ts: f64,
        call_dur: f64,
        ts: f64,
        dur: f64,
    ) -> i64 {
        self.device(
            "kernel",
            "cudaLaunchKernel",
            name,
            stream,
            call_ts,
            call_dur,
            ts,
            dur,
            json!({}),
        )
    }

    /// [`TraceBuilder::kernel`] with extra kernel args (`Seq`, `Process Group Name`, ...).
    #[allow(clippy::too_many_arguments)]
    pub fn kernel_args(
        &mut self,
        name: &str,
        stream: i64,
        call_ts: f64,
        call_dur: f64,
        ts: f64,
        dur: f64,
        args: Value,
    ) -> i64 {
        self.device(
            "kernel",
            "cudaLaunchKernel",
            name,
            stream,
            call_ts,
            call_dur,
            ts,
            dur,
            args,
        )
    }

    /// `cudaMemcpyAsync` and its copy (`Memcpy HtoD (Pageable -> Device)`, ...) moving `bytes`.
    #[allow(clippy::too_many_arguments)]
    pub fn memcpy(
        &mut self,
        name: &str,
        bytes: i64,
        stream: i64,
        call_ts: f64,
        call_dur: f64,
        ts: f64,
        dur: f64,
    ) -> i64 {
        self.device(
            "gpu_memcpy",
            "cudaMemcpyAsync",
            name,
            stream,
            call_ts,
            call_dur,
            ts,
            dur,
            json!({"bytes": bytes}),
        )
    }

    /// A copy like [`TraceBuilder::memcpy`] with more args (`fromDevice`/`toDevice` of a peer copy).
    #[allow(clippy::too_many_arguments)]
    pub fn memcpy_args(
        &mut self,
        name: &str,
        bytes: i64,
        stream: i64,
        call_ts: f64,
        ts: f64,
        dur: f64,
        mut extra: Value,
    ) -> i64 {
        extra["bytes"] = json!(bytes);
        self.device(
            "gpu_memcpy",
            "cudaMemcpyAsync",
            name,
            stream,
            call_ts,
            5.0,
            ts,
            dur,
            extra,
        )
    }

    /// The trace as JSON text.
    pub fn json(&self) -> String {
        let mut top = json!({
            "schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB"}],
            "traceEvents": self.events,
        });
        if let Some((rank, world)) = self.rank {
            top["distributedInfo"] = json!({"backend": "nccl", "rank": rank, "world_size": world});
        }
        top.to_string()
    }

    /// The trace loaded by the crate's loader.
    pub fn table(&self, file: &str) -> TraceTable {
        load_bytes(file, self.json().as_bytes()).expect("synthetic trace loads")
    }

    /// A user annotation (`record_function`, `_compile.compile_inner`, ...) on the host thread.
    pub fn annotation(&mut self, name: &str, ts: f64, dur: f64) -> &mut Self {
        self.host("user_annotation", name, ts, dur, json!({}))
    }

    /// A CPU operator with extra args (`"Input Dims"`, ...) beside its `External id`.
    pub fn cpu_op_args(&mut self, name: &str, ts: f64, dur: f64, args: Value) -> &mut Self {
        let e = self.next_external;
        self.next_external += 1;
        let mut a = json!({"External id": e});
        if let (Some(o), Some(x)) = (a.as_object_mut(), args.as_object()) {
            for (k, v) in x {
                o.insert(k.clone(), v.clone());
            }
        }
        self.host("cpu_op", name, ts, dur, a)
    }

    /// `cudaGraphLaunch` at `call_ts` and the kernels `(name, ts, dur)` it replays on `stream`, all
    /// sharing its correlation.
    pub fn graph_launch(
        &mut self,
        stream: i64,
        call_ts: f64,
        call_dur: f64,
        kernels: &[(&str, f64, f64)],
    ) -> i64 {
        let c = self.next_correlation;
        self.next_correlation += 1;
        let e = self.next_external;
        self.next_external += 1;
        self.host(
            "cuda_runtime",
            "cudaGraphLaunch",
            call_ts,
            call_dur,
            json!({"correlation": c, "External id": e}),
        );
        for (name, ts, dur) in kernels {
            self.events.push(json!({
                "ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream,
                "ts": ts, "dur": dur,
                "args": {"device": 0, "stream": stream, "correlation": c, "External id": e}
            }));
        }
        c
    }

    /// A complete (`ph: X`) host event with any category (`devtools.timeline`, `python_function`, ...).
    pub fn event(&mut self, cat: &str, name: &str, ts: f64, dur: f64) -> &mut Self {
        self.host(cat, name, ts, dur, json!({}))
    }
}

/// Asserts the report's sections appear in the seed's fixed order (`what` names the trace in failures).
#[allow(dead_code)]
pub fn assert_report_sections(md: &str, what: &str) {
    let heads = [
        "## Trace Analysis Summary",
        "**Main Finding**:",
        "### Top GPU Kernels (by time)",
        "### Bottleneck: ",
        "### Recommendations",
        "1. ",
        "**Want deeper analysis?**",
    ];
    let pos: Vec<usize> = heads
        .iter()
        .map(|h| {
            md.find(h)
                .unwrap_or_else(|| panic!("{h} missing in {what}:\n{md}"))
        })
        .collect();
    assert!(
        pos.windows(2).all(|w| w[0] < w[1]),
        "section order in {what}:\n{md}"
    );
}

/// The invariants every report keeps: the idle attribution sums to the window's idle time (within
/// 0.1%); the main finding's bottleneck is the report's; no finding claims more than the window; the
/// idle-based findings together claim no more than the idle time.
pub fn assert_report_invariants(r: &profile_model::report::diagnosis::DiagnosisReport, what: &str) {
    use profile_model::report::bottleneck::BottleneckKind;
    use profile_model::report::findings::FindingId;
    let b = r.bottleneck.as_ref().expect("bottleneck");
    for t in r.texts() {
        // A code span or a name written into a `String` (not a `rich!` part) shows its backticks
        // on the page and escapes redaction.
        assert!(
            t.stray_backtick().is_none(),
            "{what}: a backtick in plain text: {:?}",
            t.stray_backtick()
        );
    }
    if r.context.blocking().is_none() && !r.idle_attribution.is_empty() {
        let attributed: f64 = r.idle_attribution.iter().map(|s| s.pct_of_window).sum();
        assert!(
            (attributed - b.idle_pct).abs() <= 0.001 * b.idle_pct.max(1.0),
            "{what}: idle attribution {attributed}% vs idle {}%",
            b.idle_pct
        );
    }
    if let Some(id) = r.main_finding_id {
        if let Some(h) = r.context.blocking() {
            // A run on the CPU is bound on the CPU (its operators, overhead, data loading); any
            // other trace that leaves nothing to diagnose is undetermined.
            let cpu_run = h == profile_model::report::context::TraceHolds::CpuOnly
                && b.kind == BottleneckKind::Cpu;
            assert!(
                cpu_run || b.kind == BottleneckKind::Undetermined,
                "{what}: {id} leaves nothing to diagnose, bottleneck {:?}",
                b.kind
            );
        } else if id == FindingId::WaitOutsideTrace {
            // The wait says nothing of the job's own work: the rest of the window decides.
            assert!(
                matches!(
                    b.kind,
                    BottleneckKind::Undetermined | BottleneckKind::Compute
                ),
                "{what}: {id} but bottleneck {:?}",
                b.kind
            );
        } else if let Some(k) = BottleneckKind::of_finding(id) {
            // One dominant memory-bound kernel (an element-wise micro-benchmark) is memory-bound.
            // So is a kernel far under its roof below the ridge point.
            let memory_kernel = matches!(id, FindingId::DominantKernel | FindingId::FarUnderRoof)
                && b.kind == BottleneckKind::Memory;
            assert!(
                k == b.kind || memory_kernel,
                "{what}: main finding {id} but bottleneck {:?} (expected {k:?})",
                b.kind
            );
        } else {
            assert_eq!(b.kind, BottleneckKind::Undetermined, "{what}: {id}");
        }
        let main = r
            .findings
            .iter()
            .find(|f| f.id == id)
            .expect("main finding listed");
        // The main finding is the largest recoverable time, unless nothing reaches 2% of the window;
        // idle causes under 15% of a window the GPU keeps 75% busy are notes, not the main finding.
        let busy_gpu = 100.0 - b.idle_pct >= 75.0;
        let minor = |f: &&profile_model::report::findings::Finding| {
            busy_gpu
                && BottleneckKind::of_finding(f.id) == Some(BottleneckKind::Cpu)
                && f.impact.pct_of_gpu_time.unwrap_or(0.0) < 15.0
        };
        let largest = r
            .findings
            .iter()
            .filter(|f| !minor(f))
            .map(|f| f.impact.time_ns)
            .max()
            .unwrap_or(0);
        let largest_pct = r
            .findings
            .iter()
            .filter_map(|f| f.impact.pct_of_gpu_time)
            .fold(0.0, f64::max);
        // A finding under 1 ms leads only when nothing larger can (a tiny sync never heads).
        assert!(
            id.is_about_the_trace()
                || main.impact.time_ns == largest
                || id == FindingId::Warmup
                || largest_pct < 2.0
                || largest < profile_model::report::diagnosis::MAIN_FINDING_MIN_NS,
            "{what}: main {id} is not the largest recoverable time"
        );
    }
    let idle_based = [
        FindingId::DataLoading,
        FindingId::Synchronization,
        FindingId::HostBound,
        FindingId::HostOverhead,
        FindingId::LaunchOverhead,
        FindingId::Warmup,
    ];
    let mut idle_claimed = 0.0;
    for f in &r.findings {
        let p = f.impact.pct_of_gpu_time.unwrap_or(0.0);
        assert!(p <= 100.0 + 1e-9, "{what}: {} claims {p}%", f.id);
        if idle_based.contains(&f.id) {
            idle_claimed += p;
        }
    }
    assert!(
        idle_claimed <= b.idle_pct + 1e-6,
        "{what}: idle findings claim {idle_claimed}% of {}% idle",
        b.idle_pct
    );
}

/// The CLI's exit code, stdout and stderr.
pub fn cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_profile-model"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The CLI's stdout for `args`; panics (with its stderr) when it does not exit 0.
pub fn cli_ok(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_profile-model"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every sentence a report gives: its Markdown, then each finding's headline, explanation and actions
/// (what a test searches for advice that must, or must not, be given).
pub fn all_words(r: &profile_model::report::diagnosis::DiagnosisReport) -> String {
    let mut s = r.to_markdown();
    for f in &r.findings {
        s.push_str(&f.headline.to_markdown());
        s.push_str(&f.explanation.to_markdown());
        s.push_str(&f.actions_markdown("\n"));
    }
    s
}

/// The time (µs) a report's idle attribution gives one cause.
pub fn idle_us(
    r: &profile_model::report::diagnosis::DiagnosisReport,
    cause: profile_model::report::attribution::IdleCause,
) -> f64 {
    r.idle_attribution
        .iter()
        .filter(|s| s.cause == cause)
        .map(|s| s.time_us)
        .sum()
}

/// Whether a report has a finding of this id.
pub fn has_finding(
    r: &profile_model::report::diagnosis::DiagnosisReport,
    id: profile_model::report::findings::FindingId,
) -> bool {
    r.findings.iter().any(|f| f.id == id)
}
