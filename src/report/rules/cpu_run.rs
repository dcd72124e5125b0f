//! A run without device work in words: what bounds it on the CPU (GEMMs and convolutions, memory-bound
//! operators, per-operator overhead, the DataLoader), whether its first pass was cold or only one
//! pass was recorded, whether it is a toy size, what else is in the window (the im2col convolution
//! fallback, a huge operand, weight initialisation), and the CPU advice each of those calls for.

use crate::report::context::cpu_run::{CpuBound, CpuRun, BOUND_SHARE};
use crate::report::format::bytes;
use crate::report::inputs::pct;
use crate::report::rich_text::{code, op_short, RichText};
use crate::report::wording::dur;
use crate::rich;

/// The im2col fallback is named when it takes this share of the convolutions' self time.
pub const SLOW_CONV_SHARE: f64 = 0.3;
/// Weight initialisation and input generation are named from this share of the window.
pub const INIT_SHARE: f64 = 0.03;
/// A single recorded pass is said to include first-call costs when its operators are busy less
/// than this (ns): a longer pass's first-call costs are a small part of it.
pub const SHORT_PASS_NS: i64 = 1_000_000_000;
/// Pooling is remarked on from this share of the operators' self time (and twice a GEMM or
/// convolution call's time per call).
pub const SLOW_POOL_SHARE: f64 = 0.1;
/// How the action to leave the first pass out begins.
pub const LEAVE_FIRST_PASS: &str = "Leave the first pass out of the profile";

/// What bounds the run, in words: "compute-bound on the CPU: GEMMs and convolutions take 78% of
/// the operators' self time (1.38 s of 1.76 s), at 150 GFLOP/s"; empty when nothing does.
pub fn bound_words(c: &CpuRun) -> RichText {
    match c.bound {
        CpuBound::Compute => format!(
            "compute-bound on the CPU: GEMMs and convolutions take {:.0}% of the operators' self time ({} of {}){}",
            pct(c.matmul_ns, c.self_ns),
            dur(c.matmul_ns),
            dur(c.self_ns),
            c.gflops().map_or(String::new(), |g| format!(
                ", at {g:.0} GFLOP/s ({:.1} GFLOP from the recorded shapes in {})",
                c.flops / 1e9,
                dur(c.flop_time_ns)
            ))
        ).into(),
        CpuBound::Memory => format!(
            "memory-bound on the CPU: element-wise, copy, normalisation, pooling and reduction operators take {:.0}% of the operators' self time ({} of {})",
            pct(c.memory_ns, c.self_ns),
            dur(c.memory_ns),
            dur(c.self_ns)
        ).into(),
        CpuBound::Overhead => format!(
            "framework-overhead-bound: {} operator calls with a median of {} each, so dispatch, allocation and Python around each operator weigh as much as its arithmetic",
            c.outer_calls,
            dur(c.outer_median_ns)
        ).into(),
        CpuBound::DataLoading => rich!("bound by data loading: the host is inside the DataLoader's ", code("__next__"), format!(" for {} ({:.0}% of the {} profiled)", dur(c.data_ns), pct(c.data_ns, c.span_ns), dur(c.span_ns))),
        CpuBound::Mixed => RichText::default(),
    }
}

/// The run's facts after the operator list, each a clause: ". It is compute-bound ...; the first
/// pass is cold ...".
pub fn run_words(c: &CpuRun) -> RichText {
    let mut parts: Vec<RichText> = Vec::new();
    let bound = bound_words(c);
    if !bound.is_empty() {
        parts.push(rich!("it is ", bound));
    }
    if let Some(w) = cold_words(c) {
        parts.push(w);
    }
    if c.toy() {
        parts.push(rich!(format!(
            "its operators are busy only {} in all (median operator {}): a toy or tutorial size, where per-operator overhead weighs heavily, so these figures would not carry over to a real workload",
            dur(c.busy_ns),
            dur(c.outer_median_ns)
        )));
    }
    if slow_conv(c) {
        parts.push(rich!(
            "the convolutions run ",
            code("aten::_slow_conv2d_forward"),
            format!(
                ", the im2col fallback, not oneDNN ({:.0}% of the convolutions' self time)",
                pct(c.slow_conv_ns, c.conv_ns)
            )
        ));
    }
    if slow_pooling(c) {
        parts.push(rich!(format!(
            "pooling takes {:.0}% of the operators' self time, {} a call against {} for a GEMM or convolution call: pooling does a few operations per element, so it is this slow only on a slow path (an input in a layout it must convert, a non-contiguous input) or on a very large activation; check its input's layout and size",
            pct(c.pool_ns, c.self_ns),
            dur(c.pool_ns / c.pool_calls.max(1) as i64),
            dur(c.matmul_outer_ns / c.matmul_outer_calls.max(1) as i64)
        )));
    }
    if let Some(o) = huge_operand(c) {
        parts.push(rich!(
            format!("its largest operand is {:?} in ", o.dims),
            op_short(&o.op),
            format!(
                " ({}): at that size every element-wise pass streams it through memory",
                bytes(o.bytes)
            )
        ));
    }
    if init_in_window(c) {
        parts.push(rich!("weight initialisation or input generation (", code("normal_"), ", ", code("uniform_"), ", ", code("randn"), format!(") takes {} ({:.1}% of the window): building the model or its inputs is inside the profiled region", dur(c.init_ns), pct(c.init_ns, c.span_ns))));
    }
    if parts.is_empty() {
        return RichText::default();
    }
    rich!(". ", RichText::join(parts, "; ").capitalised())
}

/// "the first pass is cold: 14 operators' first calls take 168 ms beyond their later medians ..."
fn cold_words(c: &CpuRun) -> Option<RichText> {
    let single = short_single_pass(c).then_some(
        "one pass was recorded (its first GEMM or convolution shape runs once), so every figure includes first-call costs",
    );
    let led = |k: &crate::report::context::cpu_run::ColdFirst| {
        rich!(
            "led by the first ",
            op_short(&k.name),
            format!(
                "{} {} against {} later",
                k.dims
                    .as_ref()
                    .map_or(String::new(), |d| format!(" on {d}")),
                dur(k.first_ns),
                dur(k.later_median_ns)
            )
        )
    };
    let passes = (c.passes >= 2).then(|| {
        rich!(format!(
            "it runs {} passes (its first and last GEMM or convolution shapes run {} times each), the first {}{}",
            c.passes,
            c.passes,
            dur(c.first_pass_ns),
            if c.later_pass_median_ns > 0 {
                format!(" and the later ones {} each (median)", dur(c.later_pass_median_ns))
            } else {
                String::new()
            }
        ))
    });
    let cold = if c.cold_pass() {
        Some(rich!(
            format!(
                "the first pass is cold: {} against {} for a steady one ({:.1}×)",
                dur(c.first_pass_ns),
                dur(c.later_pass_median_ns),
                c.first_pass_ns as f64 / c.later_pass_median_ns as f64,
            ),
            c.cold.as_ref().map(|k| rich!(", ", led(k))),
            ", so a steady-state pass is faster than these figures"
        ))
    } else {
        c.cold.as_ref().map(|k| {
            rich!(
                format!(
                    "the first pass is cold: the first calls of {} operator{} take {} beyond their later medians ({:.0}% of the operators' busy time), ",
                    k.ops,
                    if k.ops == 1 { "" } else { "s" },
                    dur(k.excess_ns),
                    pct(k.excess_ns, c.busy_ns),
                ),
                led(k),
                ", so a steady-state pass is faster than these figures"
            )
        })
    };
    let cold = match (passes, cold) {
        (Some(p), Some(k)) => Some(rich!(p, "; ", k)),
        (p, k) => p.or(k),
    };
    match (single, cold) {
        (Some(s), Some(k)) => Some(rich!(s, "; ", k)),
        (Some(s), None) => Some(rich!(s)),
        (None, k) => k,
    }
}

/// Pooling takes a large share and more per call than the GEMMs and convolutions do.
fn slow_pooling(c: &CpuRun) -> bool {
    c.pool_calls > 0
        && c.matmul_outer_calls > 0
        && c.pool_ns as f64 >= SLOW_POOL_SHARE * c.self_ns as f64
        && (c.pool_ns / c.pool_calls as i64)
            >= 2 * (c.matmul_outer_ns / c.matmul_outer_calls as i64)
}

/// One short pass was recorded: its first calls weigh in every figure.
fn short_single_pass(c: &CpuRun) -> bool {
    c.single_pass && c.busy_ns < SHORT_PASS_NS
}

fn slow_conv(c: &CpuRun) -> bool {
    c.conv_ns > 0 && c.slow_conv_ns as f64 >= SLOW_CONV_SHARE * c.conv_ns as f64
}

fn huge_operand(c: &CpuRun) -> Option<&crate::report::context::cpu_run::Operand> {
    c.largest
        .as_ref()
        .filter(|o| o.bytes >= crate::report::context::cpu_run::HUGE_OPERAND_BYTES)
}

fn init_in_window(c: &CpuRun) -> bool {
    c.span_ns > 0 && c.init_ns as f64 >= INIT_SHARE * c.span_ns as f64
}

/// What to do on the CPU, most specific first, each tied to what was measured.
pub fn actions(c: &CpuRun) -> Vec<RichText> {
    let mut a = Vec::new();
    if let Some(op) = fp64(c) {
        a.push(rich!(
            "Run in float32, not float64: ",
            crate::report::rich_text::op(op),
            " and the other operators on ",
            code("double"),
            format!(
                " inputs take {} ({:.0}% of the operators' self time); float64 runs at half the float32 rate or less and moves twice the bytes. Make the tensors float32 (",
                dur(c.fp64_ns),
                pct(c.fp64_ns, c.self_ns)
            ),
            code(".float()"),
            ", ",
            code("torch.set_default_dtype(torch.float32)"),
            "; numpy arrays are float64 by default, so convert after ",
            code("torch.from_numpy"),
            ")."
        ));
    }
    if c.bound == CpuBound::DataLoading {
        a.push("The host waits on the DataLoader: with multiprocessing workers the first `__next__` pays their start-up (each worker re-imports the script under spawn, the default on Windows and macOS), so keep them alive across epochs (`persistent_workers=True`), start profiling after the first batch, and for a small in-memory dataset try `num_workers=0`; when later batches also wait, raise `num_workers` and `prefetch_factor` or move the decoding and augmentation out of `__getitem__`.".into());
    }
    if c.cold.is_some() || c.cold_pass() || short_single_pass(c) {
        a.push(rich!(LEAVE_FIRST_PASS, ": run one iteration untimed before ", code("profile()"), ", or record several with ", code("schedule=torch.profiler.schedule(wait=1, warmup=1, active=3)"), " and ", code("prof.step()"), " each iteration, so one-off costs (allocations, oneDNN primitive creation, lazy initialisation) are not read as the model's."));
    }
    if init_in_window(c) {
        a.push("Build the model and generate its inputs before entering the profiler, so the window holds only the work being measured.".into());
    }
    if slow_conv(c) {
        a.push("Make the convolutions take oneDNN: check `torch.backends.mkldnn.is_available()` and that `torch.backends.mkldnn.enabled` is not turned off; a build without oneDNN (some ARM or macOS wheels), an unsupported dtype or a non-contiguous input falls back to `_slow_conv2d_forward`, usually several times slower.".into());
    }
    match c.bound {
        CpuBound::Compute if c.apple => a.push(APPLE_COMPUTE.into()),
        CpuBound::Compute => a.extend(compute_actions(c)),
        CpuBound::Memory => a.push(memory_action(c)),
        CpuBound::Overhead => a.push(rich!(format!("Give each operator more work: a larger batch amortises the fixed cost of each of the {} calls; ", c.outer_calls), code("torch.compile"), " fuses the small operators into a few C++ loops", if c.backward { "" } else { "; run inference under `torch.inference_mode()` to drop the autograd bookkeeping" }, ".")),
        CpuBound::DataLoading | CpuBound::Mixed => {}
    }
    if c.toy() {
        a.push("Profile at the size the model will run at (batch, input size, sequence length): at this size per-operator overhead dominates and the ranking of operators changes.".into());
    }
    if matches!(
        c.bound,
        CpuBound::Compute | CpuBound::Memory | CpuBound::Mixed
    ) {
        a.push(threads_action(c));
    }
    if a.is_empty() {
        a.push(if c.apple { APPLE_GENERIC } else { GENERIC }.into());
    }
    if c.apple {
        a.push(APPLE_GPU.into());
    }
    a
}

/// The operator with most float64 time, when float64 operators take [`FP64_SHARE`] of the
/// operators' self time.
fn fp64(c: &CpuRun) -> Option<&str> {
    use crate::report::context::cpu_run::FP64_SHARE;
    (c.self_ns > 0 && c.fp64_ns as f64 >= FP64_SHARE * c.self_ns as f64)
        .then_some(c.fp64_op.as_deref())
        .flatten()
}

/// GEMMs and convolutions on a Mac's CPU.
const APPLE_COMPUTE: &str = "On a Mac the CPU's GEMMs go through Accelerate (vecLib) and the convolutions through oneDNN or the slow fallback: check `torch.backends.mkldnn.is_available()`, run the convolutions channels-last (`model.to(memory_format=torch.channels_last)`), and compile with `torch.compile` (Inductor's C++ backend); bf16 autocast does not speed up Apple CPUs, so keep float32.";

/// A Mac run's generic CPU advice.
const APPLE_GENERIC: &str = "Cut the operators with most self time below: set the intra-op threads to the performance cores (`torch.set_num_threads`), run convolutions channels-last (`model.to(memory_format=torch.channels_last)`), and compile with `torch.compile` (Inductor's C++ backend fuses element-wise work).";

/// A Mac's GPU.
const APPLE_GPU: &str = "On a Mac with Apple silicon, run the model on its GPU through Metal: `model.to(\"mps\")` and inputs created with `device=\"mps\"` (check `torch.backends.mps.is_available()`); profile its GPU side with `torch.mps.profiler.profile()` and Instruments, as torch.profiler records no MPS device activity.";

const GENERIC: &str = "Cut the operators with most self time below: set the intra-op threads to the physical cores (`torch.set_num_threads`, `OMP_NUM_THREADS`), run in bf16 where the CPU has AMX/AVX-512 BF16 (`torch.autocast(\"cpu\", dtype=torch.bfloat16)`), and compile with `torch.compile` (Inductor's C++ backend fuses element-wise work).";

fn compute_actions(c: &CpuRun) -> Vec<RichText> {
    let mut a = Vec::new();
    if c.conv_ns as f64 >= BOUND_SHARE * c.matmul_ns as f64 && !slow_conv(c) {
        a.push(rich!("Run the convolutions channels-last (", code("model.to(memory_format=torch.channels_last)"), " and the input likewise) so oneDNN skips its layout reorders", if c.backward {
                ""
            } else {
                "; for inference, freeze the model so batch norm folds into the convolutions (`torch.jit.freeze(torch.jit.script(model.eval()))`, or `torch.compile` with `torch._inductor.config.freezing = True`) and run under `torch.inference_mode()`"
            }, "."));
    }
    a.push("Lower the precision of the GEMMs and convolutions: bf16 (`torch.autocast(\"cpu\", dtype=torch.bfloat16)`) runs them at about twice the fp32 rate on CPUs with AVX-512 BF16 or AMX (Intel Sapphire Rapids and later, AMD Zen 4 and later); on other CPUs fp32 stays the fastest path, and int8 quantisation (`torch.ao.quantization`) is the lever for inference.".into());
    a
}

fn memory_action(c: &CpuRun) -> RichText {
    match huge_operand(c) {
        Some(o) => rich!("Process the input in chunks (", code("for x in torch.split(inputs, n)"), format!(") so each activation is a few MB instead of {}: the element-wise passes then run from cache, and peak memory falls with it", bytes(o.bytes)), if c.backward { "" } else { "; run under `torch.inference_mode()` so no activation is kept for backward" }, "."),
        None => "Fuse the element-wise chains: `torch.compile` (Inductor's C++ backend) turns them into one vectorised loop that reads each tensor once; use in-place activations where the input is not needed again.".into(),
    }
}

fn threads_action(c: &CpuRun) -> RichText {
    if c.apple {
        return rich!("Check the intra-op thread count (", code("torch.get_num_threads()"), format!("): the trace shows the operators on {} thread{} but not the intra-op worker threads, which should match the performance cores (", c.op_threads, if c.op_threads == 1 { "" } else { "s" }), code("torch.set_num_threads"), "); macOS has no thread pinning, so leave the efficiency cores out by count.");
    }
    rich!("Check the intra-op thread count (", code("torch.get_num_threads()"), format!("): the trace shows the operators on {} thread{} but not the intra-op worker threads, which should match the physical cores (", c.op_threads, if c.op_threads == 1 { "" } else { "s" }), code("torch.set_num_threads"), ", ", code("OMP_NUM_THREADS"), "), pinned to one socket (", code("taskset"), ", ", code("numactl"), ").")
}

/// The bottleneck's reason for a run without device work; `None` when no class bounds it.
pub fn bottleneck_reason(c: &CpuRun) -> Option<RichText> {
    let words = bound_words(c);
    (!words.is_empty()).then(|| rich!("no GPU work (a CPU-only run), ", words))
}
