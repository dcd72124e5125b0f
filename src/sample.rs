//! The sample trace the page offers ("Try a sample") and `profile-model sample DIR` writes: a small
//! data-parallel training loop on four ranks, made here so that what it shows is known: a DataLoader
//! stall in one step, launch overhead (short element-wise kernels behind longer host ops), a
//! synchronising `.item()` per step, and rank 2 late to every gradient all-reduce because its
//! DataLoader is slower.
//!
//! The files are written as gzip JSON in Kineto's form (host ops, runtime calls, kernels and copies
//! linked by correlation ids; `distributedInfo`; NCCL kernels with their collective args). The
//! copies served with the page (`samples/`) are this generator's output, checked byte for byte by
//! `tests/sample.rs`.

use serde_json::{json, Value};

/// Ranks of the sample job.
pub const WORLD: usize = 4;
/// The rank the others wait for.
pub const LATE_RANK: usize = 2;
/// Profiler steps per rank.
pub const STEPS: usize = 6;
/// The step (0-based) whose DataLoader stalls on every rank.
pub const STALL_STEP: usize = 3;

const HOST_PID: i64 = 1000;
const HOST_TID: i64 = 1000;
const COMPUTE_STREAM: i64 = 7;
const COMM_STREAM: i64 = 20;
/// How long a launched kernel takes to start after its launch call, µs.
const LAUNCH_LATENCY: f64 = 5.0;
const LAYERS: usize = 4;
const SMALL_OPS_PER_LAYER: usize = 24;
const GEMM_US: f64 = 420.0;
const SMALL_KERNEL_US: f64 = 4.0;
const SMALL_OP_HOST_US: f64 = 30.0;
const LOADER_US: f64 = 900.0;
/// How much slower the late rank's DataLoader is, every step, µs.
pub const LATE_LOADER_EXTRA_US: f64 = 2500.0;
const STALL_US: f64 = 25_000.0;
const ALLREDUCE_TRANSFER_US: f64 = 250.0;
/// Gradient elements all-reduced per step (4 layers of 1024 × 1024 fp32).
const GRAD_ELEMS: i64 = (LAYERS as i64) * 1024 * 1024;

/// One rank's trace as it is being written.
struct RankWriter {
    rank: usize,
    events: Vec<Value>,
    /// The host thread's clock and the compute stream's, µs.
    host: f64,
    gpu: f64,
    next_correlation: i64,
    next_external: i64,
}

impl RankWriter {
    fn new(rank: usize) -> Self {
        RankWriter {
            rank,
            events: Vec::new(),
            host: 1_000.0,
            gpu: 0.0,
            next_correlation: 1,
            next_external: 1,
        }
    }

    fn push(&mut self, cat: &str, name: &str, pid: i64, tid: i64, ts: f64, dur: f64, args: Value) {
        self.events.push(json!({
            "ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
            "ts": round(ts), "dur": round(dur), "args": args
        }));
    }

    fn external(&mut self) -> i64 {
        self.next_external += 1;
        self.next_external - 1
    }

    /// A host operator of `dur` µs from now, with `args`; the host clock moves past it.
    fn cpu_op(&mut self, name: &str, dur: f64, mut args: Value) {
        args["External id"] = json!(self.external());
        let ts = self.host;
        self.push("cpu_op", name, HOST_PID, HOST_TID, ts, dur, args);
        self.host += dur;
    }

    /// A launch call at `at` and its device op of `dur` µs on `stream`, queued after `ready`;
    /// returns the device op's end.
    #[allow(clippy::too_many_arguments)]
    fn device_op(
        &mut self,
        at: f64,
        call: &str,
        cat: &str,
        name: &str,
        stream: i64,
        ready: f64,
        dur: f64,
        extra: Value,
    ) -> f64 {
        let correlation = self.next_correlation;
        self.next_correlation += 1;
        let external = self.external();
        let link = json!({"correlation": correlation, "External id": external});
        self.push(
            "cuda_runtime",
            call,
            HOST_PID,
            HOST_TID,
            at,
            LAUNCH_LATENCY,
            link,
        );
        let start = ready.max(at + LAUNCH_LATENCY);
        let mut args = json!({"device": 0, "stream": stream, "correlation": correlation, "External id": external});
        merge(&mut args, extra);
        self.push(cat, name, 0, stream, start, dur, args);
        start + dur
    }

    /// A host op that launches one kernel on the compute stream.
    fn launching_op(&mut self, op: &str, host_us: f64, kernel: &str, kernel_us: f64, args: Value) {
        let at = self.host + host_us - LAUNCH_LATENCY - 1.0;
        let gpu = self.gpu;
        self.gpu = self.device_op(
            at,
            "cudaLaunchKernel",
            "kernel",
            kernel,
            COMPUTE_STREAM,
            gpu,
            kernel_us,
            json!({}),
        );
        self.cpu_op(op, host_us, args);
    }

    fn gemm(&mut self) {
        let dims =
            json!({"Input Dims": [[512, 2048], [2048, 2048]], "Input type": ["float", "float"]});
        self.launching_op("aten::mm", 40.0, "ampere_sgemm_128x64_tn", GEMM_US, dims);
    }

    fn element_wise(&mut self, i: usize) {
        let (op, kernel) = [
            ("aten::add", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>"),
            ("aten::gelu", "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>"),
            ("aten::mul", "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, at::native::MulFunctor<float>>>"),
            ("aten::dropout", "void at::native::fused_dropout_kernel_vec<float, float, unsigned int, 1, 4>"),
        ][i % 4];
        self.launching_op(
            op,
            SMALL_OP_HOST_US,
            kernel,
            SMALL_KERNEL_US,
            json!({"Input Dims": [[256, 1024]]}),
        );
    }

    /// The DataLoader's next batch (slower on the late rank, stalled in one step on every rank).
    fn load_batch(&mut self, step: usize) {
        let mut dur = LOADER_US;
        if self.rank == LATE_RANK {
            dur += LATE_LOADER_EXTRA_US;
        }
        if step == STALL_STEP {
            dur += STALL_US;
        }
        self.cpu_op(
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            dur,
            json!({}),
        );
    }

    /// A pageable host-to-device copy of the batch.
    fn copy_batch(&mut self) {
        let at = self.host + 20.0;
        let gpu = self.gpu;
        self.gpu = self.device_op(
            at,
            "cudaMemcpyAsync",
            "gpu_memcpy",
            "Memcpy HtoD (Pageable -> Device)",
            COMPUTE_STREAM,
            gpu,
            160.0,
            json!({"bytes": 1_048_576}),
        );
        self.cpu_op(
            "aten::copy_",
            180.0,
            json!({"Input Dims": [[256, 1024], [256, 1024]]}),
        );
    }

    fn layers(&mut self, gemms_per_layer: usize) {
        for _ in 0..LAYERS {
            for _ in 0..gemms_per_layer {
                self.gemm();
            }
            for i in 0..SMALL_OPS_PER_LAYER {
                self.element_wise(i);
            }
        }
    }

    /// `loss.item()`: a 4-byte device-to-host copy the host waits for (`cudaStreamSynchronize`).
    fn item(&mut self) {
        let ext = self.external();
        let start = self.host;
        let at = self.host + 10.0;
        let gpu = self.gpu;
        self.gpu = self.device_op(
            at,
            "cudaMemcpyAsync",
            "gpu_memcpy",
            "Memcpy DtoH (Device -> Pageable)",
            COMPUTE_STREAM,
            gpu,
            2.0,
            json!({"bytes": 4}),
        );
        let sync_at = at + LAUNCH_LATENCY + 1.0;
        let wait = (self.gpu - sync_at).max(2.0);
        let correlation = self.next_correlation;
        self.next_correlation += 1;
        self.push(
            "cuda_runtime",
            "cudaStreamSynchronize",
            HOST_PID,
            HOST_TID,
            sync_at,
            wait,
            json!({"correlation": correlation}),
        );
        self.host = sync_at + wait + 5.0;
        self.push(
            "cpu_op",
            "aten::item",
            HOST_PID,
            HOST_TID,
            start,
            self.host - start,
            json!({"External id": ext}),
        );
    }

    /// When this rank's all-reduce kernel starts: after its launch and after the gradients (the
    /// compute stream's work so far).
    fn allreduce_arrival(&self) -> f64 {
        (self.host + 25.0 + LAUNCH_LATENCY).max(self.gpu)
    }

    /// The all-reduce kernel from this rank's arrival to the common end, and the host op around its
    /// launch; the compute stream waits for it (the optimizer needs the gradients).
    fn allreduce(&mut self, step: usize, arrival: f64, end: f64) {
        let at = self.host + 25.0;
        let args = json!({
            "Collective name": "allreduce", "Process Group Name": "0", "Process Group Description": "default_pg",
            "Seq": step as i64 + 1, "In msg nelems": GRAD_ELEMS, "Out msg nelems": GRAD_ELEMS,
            "dtype": "Float", "Group size": WORLD as i64
        });
        let kernel =
            "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
        self.device_op(
            at,
            "cudaLaunchKernel",
            "kernel",
            kernel,
            COMM_STREAM,
            arrival,
            end - arrival,
            args,
        );
        self.cpu_op(
            "record_param_comms",
            40.0,
            json!({"Collective name": "allreduce", "Seq": step as i64 + 1}),
        );
        self.gpu = self.gpu.max(end);
    }

    fn optimizer(&mut self) {
        self.launching_op("Optimizer.step#SGD.step", 120.0, "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<3>>", 180.0, json!({}));
    }

    fn json(&self) -> Value {
        let rank = self.rank as i64;
        let meta = [
            json!({"ph": "M", "name": "process_name", "pid": HOST_PID, "tid": 0, "args": {"name": format!("python rank {rank}")}}),
            json!({"ph": "M", "name": "thread_name", "pid": HOST_PID, "tid": HOST_TID, "args": {"name": "python (main thread)"}}),
            json!({"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "GPU 0"}}),
        ];
        json!({
            "schemaVersion": 1,
            "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": WORLD as i64},
            "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85_899_345_920_i64,
                "computeMajor": 8, "computeMinor": 0, "numSms": 108}],
            "displayTimeUnit": "ms",
            "traceEvents": meta.into_iter().chain(self.events.iter().cloned()).collect::<Vec<_>>(),
        })
    }
}

fn merge(into: &mut Value, extra: Value) {
    if let (Some(a), Value::Object(x)) = (into.as_object_mut(), extra) {
        a.extend(x);
    }
}

/// Times to a thousandth of a µs (as Kineto writes them).
fn round(us: f64) -> f64 {
    (us * 1000.0).round() / 1000.0
}

/// Runs one step on every rank in lockstep up to the all-reduce, then ends it at the last arrival
/// plus the transfer.
fn step(ranks: &mut [RankWriter], n: usize) {
    let starts: Vec<f64> = ranks.iter().map(|r| r.host).collect();
    for r in ranks.iter_mut() {
        r.load_batch(n);
        r.copy_batch();
        r.layers(1);
        r.item();
        r.layers(2);
    }
    let arrivals: Vec<f64> = ranks.iter().map(|r| r.allreduce_arrival()).collect();
    let end = arrivals.iter().cloned().fold(f64::MIN, f64::max) + ALLREDUCE_TRANSFER_US;
    for (r, arrival) in ranks.iter_mut().zip(arrivals) {
        r.allreduce(n, arrival, end);
        r.optimizer();
    }
    for (r, start) in ranks.iter_mut().zip(starts) {
        let ends = r.host.max(r.gpu) + 20.0;
        let step_name = format!("ProfilerStep#{}", n + 1);
        r.push(
            "user_annotation",
            &step_name,
            HOST_PID,
            HOST_TID,
            start,
            ends - start,
            json!({}),
        );
        r.host = ends;
    }
}

/// The file of `rank` (as served with the page, under `samples/`).
pub fn file_name(rank: usize) -> String {
    format!("sample_rank{rank}.json.gz")
}

/// Every rank's file name, rank 0 first.
pub fn file_names() -> Vec<String> {
    (0..WORLD).map(file_name).collect()
}

/// The sample's rank files: `(file name, gzip JSON bytes)`, rank 0 first.
pub fn sample_files() -> Vec<(String, Vec<u8>)> {
    let mut ranks: Vec<RankWriter> = (0..WORLD).map(RankWriter::new).collect();
    for n in 0..STEPS {
        step(&mut ranks, n);
    }
    ranks
        .iter()
        .map(|r| {
            let text = serde_json::to_string(&r.json()).expect("the sample is JSON");
            (file_name(r.rank), gzip(text.as_bytes()))
        })
        .collect()
}

/// A gzip member of `bytes` (deflate level 9, no name, mtime 0: the same bytes every run).
fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255];
    out.extend(miniz_oxide::deflate::compress_to_vec(bytes, 9));
    let mut crc = crate::trace::crc32::Crc32::new();
    crc.update(bytes);
    out.extend(crc.value().to_le_bytes());
    out.extend((bytes.len() as u32).to_le_bytes());
    out
}
