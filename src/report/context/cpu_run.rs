//! What a run without device work spends its time on, from its CPU operators alone: the host's busy
//! time (the union of the outermost operators over every thread, so parallel threads are not summed),
//! self time by what the operators do (GEMMs and convolutions, the im2col convolution fallback,
//! element-wise and memory-bound work, weight initialisation), FLOPs from `record_shapes`, the
//! largest operand, the time the host waits on the DataLoader, whether the first pass was cold (the
//! first call of an operator on a shape many times its later median) and what bounds the run.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::analysis::intervals::{intersect, length, union};
use crate::analysis::names::{is_data_loader_op, NameClass, NameClasses};
use crate::analysis::roofline::args::ShapeColumns;
use crate::analysis::roofline::model::{family_of, work_of};
use crate::analysis::roofline::OpFamily;
use crate::table::{EventKind, TraceTable};

/// A first call is cold when it takes this many times the later median of its operator on the
/// same shapes (with `record_shapes`)...
pub const COLD_FACTOR_SHAPED: f64 = 2.0;
/// ... or this many times its operator's later median when the trace has no shapes (calls of one
/// operator on different layers differ more).
pub const COLD_FACTOR_UNSHAPED: f64 = 4.0;
/// ... and at least this much (ns) more than it.
pub const COLD_MIN_EXCESS_NS: i64 = 500_000;
/// The first of several passes is cold from this many times the later passes' median.
pub const COLD_PASS_FACTOR: f64 = 1.5;
/// The first pass is cold when first calls' excess reaches this share of the host's busy time.
pub const COLD_MIN_SHARE: f64 = 0.05;
/// A run whose operators are busy less than this (ns) is a toy or tutorial size.
pub const TOY_BUSY_NS: i64 = 20_000_000;
/// Outermost operators this short (median, ns) are dominated by per-operator overhead...
pub const OVERHEAD_MEDIAN_NS: i64 = 30_000;
/// ... when there are at least this many of them.
pub const OVERHEAD_MIN_CALLS: u64 = 20;
/// An operand this large (bytes) makes the operators around it memory-bound.
pub const HUGE_OPERAND_BYTES: u64 = 1 << 30;
/// A share (of the window or of operator self time) from which one class bounds the run.
pub const BOUND_SHARE: f64 = 0.5;

crate::stable_enum! {
    /// What bounds a run without device work.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum CpuBound {
        /// GEMMs and convolutions take most of the operators' self time.
        Compute,
        /// Element-wise, copy, normalisation and reduction operators take most of it.
        Memory,
        /// Operators so short that dispatch, allocation and Python around them are the cost.
        Overhead,
        /// The host waits on the DataLoader most of the window.
        DataLoading,
        /// No class takes most of the time.
        Mixed,
    }
}

/// The first pass's cold calls: first calls many times their later median.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ColdFirst {
    /// Their time beyond their later medians, summed, ns.
    pub excess_ns: i64,
    /// How many operators (on one shape each) were cold.
    pub ops: u64,
    /// The largest: its name, shapes (`[[5, 3, 224, 224], [64, 3, 7, 7]]`) and times.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dims: Option<String>,
    pub first_ns: i64,
    pub later_median_ns: i64,
}

/// The largest operand of any operator.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Operand {
    pub op: String,
    pub dims: Vec<i64>,
    pub bytes: u64,
}

/// A run without device work, read from its CPU operators.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuRun {
    /// The window: first to last timed host event, ns.
    pub span_ns: i64,
    /// The union of the outermost CPU operators over all threads, ns (≤ the window).
    pub busy_ns: i64,
    /// Threads that run CPU operators (intra-op worker threads are not profiled).
    pub op_threads: u64,
    /// Outermost operator calls and their median duration, ns.
    pub outer_calls: u64,
    pub outer_median_ns: i64,
    /// Self time of all CPU operators, and of GEMMs and convolutions, of convolutions, of the
    /// im2col fallback (`_slow_conv2d_forward`), of memory-bound operators (element-wise, copies,
    /// normalisations, reductions, pooling), of weight initialisation and input generation, ns.
    pub self_ns: i64,
    pub matmul_ns: i64,
    pub conv_ns: i64,
    pub slow_conv_ns: i64,
    pub memory_ns: i64,
    pub init_ns: i64,
    /// Self time of pooling operators, and the calls of the one with most of it
    /// (`max_pool2d_with_indices`, not the `max_pool2d` around it).
    pub pool_ns: i64,
    pub pool_calls: u64,
    /// Per pooling operator name id: self time and calls (read into `pool_calls`).
    #[serde(skip)]
    pools: BTreeMap<u32, (i64, u64)>,
    /// FLOPs of the outermost GEMM and convolution calls with shapes, and those calls' time, ns.
    pub flops: f64,
    pub flop_time_ns: i64,
    /// Time and count of all outermost GEMM and convolution calls, ns (the FLOPs cover
    /// `flop_time_ns` of it).
    pub matmul_outer_ns: i64,
    pub matmul_outer_calls: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub largest: Option<Operand>,
    /// A backward pass ran (training), else forward only.
    pub backward: bool,
    /// The host inside DataLoader frames (`__next__`), union, ns.
    pub data_ns: i64,
    /// One pass was recorded (the first GEMM or convolution shape runs once).
    pub single_pass: bool,
    /// Passes, when the first and the last GEMM or convolution shape run equally often (≥ 2; 0
    /// when not told), the first pass's time (start to the next pass's start) and the later
    /// passes' median, ns.
    pub passes: u64,
    pub first_pass_ns: i64,
    pub later_pass_median_ns: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cold: Option<ColdFirst>,
    pub bound: CpuBound,
    /// The run was recorded on a Mac ([`apple_hints`]): no CUDA, Accelerate or MPS instead.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub apple: bool,
    /// Outermost operators on float64 (`double`) inputs (`record_shapes`): their time, ns, and
    /// the one with most of it.
    #[serde(default)]
    pub fp64_ns: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp64_op: Option<String>,
}

/// Whether a trace was recorded on a Mac: no device in `deviceProperties`, and a name says macOS
/// (an MPS operator, Accelerate or vecLib, a `.dylib`, a macOS path such as `/Users/` or
/// `/opt/homebrew/`, a `com.apple` thread). One definition, read by every advice that depends on
/// the platform.
pub fn apple_hints(t: &TraceTable) -> bool {
    if t.metadata.device_count > 0 || t.metadata.device_name.is_some() {
        return false;
    }
    const MARKS: [&str; 9] = [
        "_mps_",
        "aten::mps",
        "Accelerate",
        "vecLib",
        ".dylib",
        "/Users/",
        "/opt/homebrew/",
        "/Library/Frameworks/",
        "com.apple",
    ];
    let names = t.name_dictionary();
    (0..names.len()).any(|i| MARKS.iter().any(|m| names.value(i).contains(m)))
        || t.metadata
            .thread_names
            .values()
            .chain(t.metadata.process_names.values())
            .any(|n| MARKS.iter().any(|m| n.contains(m)))
}

/// Operators on float64 take this share of the operators' self time: said, with float32 advised.
pub const FP64_SHARE: f64 = 0.1;

impl Default for CpuBound {
    fn default() -> Self {
        CpuBound::Mixed
    }
}

/// One operator call: (start, end, row).
type Call = (i64, i64, usize);

impl CpuRun {
    /// Reads the CPU operators of `t` over its window `span`; `None` without any.
    pub fn of(t: &TraceTable, classes: &NameClasses, span: (i64, i64)) -> Option<CpuRun> {
        let mut threads: BTreeMap<(u32, u32), Vec<Call>> = BTreeMap::new();
        let mut data = Vec::new();
        let mut r = CpuRun {
            span_ns: span.1 - span.0,
            ..CpuRun::default()
        };
        for row in 0..t.len() {
            let kind = t.kind_at(row);
            let class = classes.of_row(t, row);
            let (Some(ts), Some(dur)) = (t.ts_at(row), t.dur_at(row)) else {
                continue;
            };
            if is_data_loader_op(kind, class) {
                data.push((ts, ts + dur.max(0)));
            }
            if kind != EventKind::CpuOp || class.has(NameClass::PROFILER_STEP) {
                continue;
            }
            let name = t.name_at(row);
            r.backward |= name.contains("Backward") || name.starts_with("autograd::engine");
            threads
                .entry((t.pid_id(row), t.tid_id(row)))
                .or_default()
                .push((ts, ts + dur.max(0), row));
        }
        if threads.is_empty() {
            return None;
        }
        r.op_threads = threads.len() as u64;
        r.data_ns = length(&intersect(&union(data), &[span]));
        let shapes = ShapeColumns::of(t);
        let mut outer = Vec::new();
        for calls in threads.values_mut() {
            crate::sort::sort_by_key(calls, |c| (c.0, std::cmp::Reverse(c.1)));
            r.self_times(t, calls);
            outer.extend(outermost(calls));
        }
        r.busy_ns = length(&intersect(
            &union(outer.iter().map(|c| (c.0, c.1)).collect()),
            &[span],
        ));
        r.outer_calls = outer.len() as u64;
        r.outer_median_ns = median(outer.iter().map(|c| c.1 - c.0).collect());
        crate::sort::sort_by_key(&mut outer, |c| (c.0, c.2));
        r.work(t, &shapes, &outer);
        r.cold = cold_first(t, &outer, r.busy_ns);
        r.pool_calls = r.pools.values().max().map_or(0, |p| p.1);
        r.bound = r.bound_of();
        r.apple = apple_hints(t);
        Some(r)
    }

    /// Self time by what the operators do, from one thread's calls (sorted by start, outer first).
    fn self_times(&mut self, t: &TraceTable, calls: &[Call]) {
        let mut stack: Vec<(i64, usize, i64)> = Vec::new();
        let close = |(_, row, own): (i64, usize, i64), r: &mut CpuRun| {
            let own = own.max(0);
            let name = t.name_at(row);
            r.self_ns += own;
            match family_of(name) {
                Some(OpFamily::Gemm | OpFamily::BatchedGemm) => r.matmul_ns += own,
                Some(OpFamily::Elementwise | OpFamily::Reduction | OpFamily::Copy) => {
                    r.memory_ns += own
                }
                _ => {}
            }
            let n = name.to_ascii_lowercase();
            if is_conv(&n) {
                r.matmul_ns += own;
                r.conv_ns += own;
                if is_slow_conv(&n) {
                    r.slow_conv_ns += own;
                }
            } else if n.contains("pool") {
                r.memory_ns += own;
                r.pool_ns += own;
                let p = r.pools.entry(t.name_id(row)).or_default();
                p.0 += own;
                p.1 += 1;
            }
            if is_init_op(&n) {
                r.init_ns += own;
            }
        };
        for &(ts, end, row) in calls {
            while stack.last().is_some_and(|top| top.0 <= ts) {
                let e = stack.pop().expect("non-empty");
                close(e, self);
            }
            let end = stack.last().map_or(end, |p| end.min(p.0));
            if let Some(parent) = stack.last_mut() {
                parent.2 -= end - ts;
            }
            stack.push((end, row, end - ts));
        }
        while let Some(e) = stack.pop() {
            close(e, self);
        }
    }

    /// FLOPs of the outermost GEMMs and convolutions, the largest operand, whether one pass ran.
    fn work(&mut self, t: &TraceTable, shapes: &ShapeColumns, outer: &[Call]) {
        let mut first_shape: Option<(u32, Option<String>)> = None;
        let mut first_count = 0u64;
        let mut matmuls: Vec<((u32, Option<String>), i64)> = Vec::new();
        let mut fp64: BTreeMap<u32, i64> = BTreeMap::new();
        for &(ts, end, row) in outer {
            let name = t.name_at(row);
            let args = shapes.read(row);
            let double = args.as_ref().is_some_and(|a| {
                a.inputs
                    .iter()
                    .any(|i| i.dtype == Some(crate::analysis::roofline::Dtype::Fp64))
            });
            if double {
                self.fp64_ns += end - ts;
                *fp64.entry(t.name_id(row)).or_insert(0) += end - ts;
            }
            if let Some(a) = &args {
                for input in &a.inputs {
                    let bytes = input.bytes(0);
                    if bytes > self.largest.as_ref().map_or(0, |o| o.bytes) {
                        self.largest = Some(Operand {
                            op: name.to_string(),
                            dims: input.dims.clone(),
                            bytes,
                        });
                    }
                }
            }
            let is_matmul = matches!(
                family_of(name),
                Some(OpFamily::Gemm | OpFamily::BatchedGemm | OpFamily::Convolution)
            );
            if !is_matmul {
                continue;
            }
            self.matmul_outer_ns += end - ts;
            self.matmul_outer_calls += 1;
            let key = (t.name_id(row), dims_text(t, row));
            matmuls.push((key.clone(), ts));
            if first_shape.is_none() {
                first_shape = Some(key);
                first_count = 1;
            } else if first_shape.as_ref() == Some(&key) {
                first_count += 1;
            }
            if let Some(w) = args.as_ref().and_then(|a| work_of(name, a).ok()) {
                if w.flops > 0.0 {
                    self.flops += w.flops;
                    self.flop_time_ns += end - ts;
                }
            }
        }
        self.fp64_op = fp64
            .iter()
            .max_by_key(|(id, ns)| (**ns, std::cmp::Reverse(**id)))
            .map(|(id, _)| t.name_of_id(*id).to_string());
        self.single_pass = first_shape.is_some_and(|k| k.1.is_some()) && first_count == 1;
        self.passes_of(&matmuls);
    }

    /// Passes from the GEMM and convolution calls in start order: the first shape's calls start
    /// them, when the last shape runs as often (a model's first and last layers run once a pass).
    fn passes_of(&mut self, matmuls: &[((u32, Option<String>), i64)]) {
        let (Some(first), Some(last)) = (matmuls.first(), matmuls.last()) else {
            return;
        };
        if first.0 .1.is_none() {
            return;
        }
        let starts: Vec<i64> = matmuls
            .iter()
            .filter(|m| m.0 == first.0)
            .map(|m| m.1)
            .collect();
        let last_count = matmuls.iter().filter(|m| m.0 == last.0).count();
        if starts.len() < 2 || starts.len() != last_count || first.0 == last.0 {
            return;
        }
        let gaps: Vec<i64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
        self.passes = starts.len() as u64;
        self.first_pass_ns = gaps[0];
        self.later_pass_median_ns = if gaps.len() > 1 {
            median(gaps[1..].to_vec())
        } else {
            0
        };
    }

    /// Whether the first of several passes is cold: [`COLD_PASS_FACTOR`] times the later median.
    pub fn cold_pass(&self) -> bool {
        self.later_pass_median_ns > 0
            && self.first_pass_ns as f64 >= COLD_PASS_FACTOR * self.later_pass_median_ns as f64
    }

    /// GFLOP/s of the GEMMs and convolutions, when shapes cover most of their time.
    pub fn gflops(&self) -> Option<f64> {
        (self.flop_time_ns > 0 && self.flop_time_ns * 2 >= self.matmul_outer_ns)
            .then(|| self.flops / self.flop_time_ns as f64)
    }

    /// Whether the run is a toy or tutorial size.
    pub fn toy(&self) -> bool {
        self.busy_ns > 0 && self.busy_ns < TOY_BUSY_NS
    }

    fn share(&self, ns: i64, of: i64) -> f64 {
        if of <= 0 {
            0.0
        } else {
            ns as f64 / of as f64
        }
    }

    fn bound_of(&self) -> CpuBound {
        if self.share(self.data_ns, self.span_ns) >= BOUND_SHARE {
            CpuBound::DataLoading
        } else if self.outer_calls >= OVERHEAD_MIN_CALLS
            && self.outer_median_ns < OVERHEAD_MEDIAN_NS
            && self.share(self.matmul_ns, self.self_ns) < BOUND_SHARE
        {
            CpuBound::Overhead
        } else if self.share(self.matmul_ns, self.self_ns) >= BOUND_SHARE {
            CpuBound::Compute
        } else if self.share(self.memory_ns, self.self_ns) >= BOUND_SHARE {
            CpuBound::Memory
        } else {
            CpuBound::Mixed
        }
    }
}

/// A convolution (not a conversion).
fn is_conv(lower: &str) -> bool {
    lower.contains("conv") && !lower.contains("convert")
}

/// The im2col convolution path (THNN), taken where oneDNN (mkldnn) is not.
pub fn is_slow_conv(lower: &str) -> bool {
    lower.contains("slow_conv") || lower.contains("thnn_conv")
}

/// Random initialisation and input generation: model construction or data made inside the profile.
fn is_init_op(lower: &str) -> bool {
    let n = lower.rsplit("::").next().unwrap_or(lower);
    matches!(
        n,
        "normal_"
            | "uniform_"
            | "kaiming_uniform_"
            | "kaiming_normal_"
            | "xavier_uniform_"
            | "randn"
            | "rand"
            | "randint"
            | "randperm"
            | "random_"
    )
}

/// The calls of one thread no other call encloses (sorted by start, outer first).
fn outermost(calls: &[Call]) -> Vec<Call> {
    let mut out = Vec::new();
    let mut end = i64::MIN;
    for &c in calls {
        if c.0 >= end {
            out.push(c);
            end = c.1;
        }
    }
    out
}

fn median(mut v: Vec<i64>) -> i64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[v.len() / 2]
}

/// The `Input Dims` text of a row.
fn dims_text(t: &TraceTable, row: usize) -> Option<String> {
    let c = t.arg("Input Dims")?;
    let i = c.find(row)?;
    c.text_at(i)
        .map(str::to_string)
        .or_else(|| Some(c.json_at(i).to_string()))
}

/// First calls many times their later median (per operator and shapes), over the outermost calls
/// in start order; `None` when their excess is a small share of the busy time.
fn cold_first(t: &TraceTable, outer: &[Call], busy_ns: i64) -> Option<ColdFirst> {
    let shaped = t.arg("Input Dims").is_some();
    let factor = if shaped {
        COLD_FACTOR_SHAPED
    } else {
        COLD_FACTOR_UNSHAPED
    };
    let mut by_key: BTreeMap<(u32, Option<String>), Vec<i64>> = BTreeMap::new();
    for &(ts, end, row) in outer {
        by_key
            .entry((t.name_id(row), dims_text(t, row)))
            .or_default()
            .push(end - ts);
    }
    let mut cold = ColdFirst::default();
    for ((name, dims), durs) in by_key {
        if durs.len() < 3 {
            continue;
        }
        let later = median(durs[1..].to_vec());
        let excess = durs[0] - later;
        if (durs[0] as f64) < factor * later.max(1) as f64 || excess < COLD_MIN_EXCESS_NS {
            continue;
        }
        cold.excess_ns += excess;
        cold.ops += 1;
        if excess > cold.first_ns - cold.later_median_ns {
            cold.name = t.name_of_id(name).to_string();
            cold.dims = dims;
            cold.first_ns = durs[0];
            cold.later_median_ns = later;
        }
    }
    (cold.ops > 0 && cold.excess_ns as f64 >= COLD_MIN_SHARE * busy_ns as f64).then_some(cold)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outermost_calls_leave_nested_ones_out() {
        let calls = vec![
            (0, 100, 0),
            (10, 50, 1),
            (60, 90, 2),
            (100, 120, 3),
            (130, 140, 4),
        ];
        let o: Vec<usize> = outermost(&calls).iter().map(|c| c.2).collect();
        assert_eq!(o, vec![0, 3, 4]);
    }

    #[test]
    fn slow_conv_and_init_names() {
        assert!(is_slow_conv("aten::_slow_conv2d_forward"));
        assert!(is_slow_conv("aten::thnn_conv2d"));
        assert!(!is_slow_conv("aten::mkldnn_convolution"));
        assert!(is_init_op("aten::normal_"));
        assert!(is_init_op("aten::randn"));
        assert!(!is_init_op("aten::add_"));
    }
}
