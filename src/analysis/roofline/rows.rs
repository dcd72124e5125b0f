//! The roofline's rows: kernels by name and operators by (name, shapes, type), each judged against the
//! device's roof at its arithmetic intensity, and the per-step model FLOPs and MFU.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::attribute::{Assigned, Attribution, OpCall};
use super::device::DeviceRoof;
use super::kinds::{Bound, Dtype, MissingReason, OpFamily};
use crate::analysis::gpu::{us, StepSpan};
use crate::table::TraceTable;

/// How many kernel names and operator rows a rank lists (largest kernel time first).
pub const MAX_ROWS: usize = 200;

/// Achieved against possible for a sum of work done in a time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    /// FLOPs and bytes moved, as modelled.
    pub flops: f64,
    pub bytes: f64,
    /// Achieved TFLOP/s and GB/s over the time of the calls with figures.
    pub tflops: f64,
    pub gbps: f64,
    /// FLOP per byte (`None` without bytes).
    pub intensity: Option<f64>,
    /// The element type the roof is read for (fp32 becomes tf32 when the kernel says so or it ran
    /// faster than fp32 can).
    pub dtype: Option<Dtype>,
    /// The roof at this intensity: min(peak, intensity × bandwidth), TFLOP/s (`None`: no compute roof).
    pub roof_tflops: Option<f64>,
    /// The bandwidth roof: the memory's, or the host link's for host copies, GB/s.
    pub roof_gbps: Option<f64>,
    /// Achieved as a share of the roof at this intensity, % (`None`: no roof).
    pub pct_of_roof: Option<f64>,
    pub bound: Option<Bound>,
}

/// Judges `flops`/`bytes` done in `time_ns` against `roof`.
pub fn judge(
    roof: &DeviceRoof,
    family: Option<OpFamily>,
    dtype: Option<Dtype>,
    host_copy: bool,
    flops: f64,
    bytes: f64,
    time_ns: i64,
) -> Judged {
    let secs = time_ns as f64 / 1e9;
    let (tflops, gbps) = if secs > 0.0 {
        (flops / secs / 1e12, bytes / secs / 1e9)
    } else {
        (0.0, 0.0)
    };
    let intensity = (bytes > 0.0).then(|| flops / bytes);
    let mut out = Judged {
        flops,
        bytes,
        tflops,
        gbps,
        intensity,
        dtype,
        ..Judged::default()
    };
    if host_copy {
        if let Some(link) = &roof.host_link {
            out.roof_gbps = Some(link.gbps);
            out.pct_of_roof = (secs > 0.0).then(|| 100.0 * gbps / link.gbps);
            out.bound = Some(Bound::HostLink);
        }
        return out;
    }
    let mem = (roof.memory_gbps > 0.0).then_some(roof.memory_gbps);
    out.roof_gbps = mem;
    // fp32 products that ran faster than fp32 can were on tensor cores (TF32).
    if dtype == Some(Dtype::Fp32)
        && family.is_some_and(OpFamily::has_main_kernel)
        && roof.peaks.tf32.is_some()
        && tflops > roof.peaks.fp32 * 1.05
    {
        out.dtype = Some(Dtype::Tf32);
    }
    let peak = out
        .dtype
        .and_then(|d| roof.peaks.of(d))
        .filter(|_| flops > 0.0);
    match (peak, mem, intensity) {
        (Some(p), Some(m), Some(i)) => {
            let attainable = p.min(i * m / 1e3);
            out.roof_tflops = Some(attainable);
            out.pct_of_roof = (secs > 0.0).then(|| 100.0 * tflops / attainable);
            out.bound = Some(if i * m / 1e3 >= p {
                Bound::Compute
            } else {
                Bound::Memory
            });
        }
        // Memory bandwidth unknown (an estimated device): a matrix product is judged against its
        // compute peak; a memory-bound operator is not judged at all.
        (Some(p), None, Some(_)) if family.is_some_and(OpFamily::has_main_kernel) => {
            out.roof_tflops = Some(p);
            out.pct_of_roof = (secs > 0.0).then(|| 100.0 * tflops / p);
            out.bound = Some(Bound::Compute);
        }
        (Some(p), _, None) => {
            out.roof_tflops = Some(p);
            out.pct_of_roof = (secs > 0.0).then(|| 100.0 * tflops / p);
            out.bound = Some(Bound::Compute);
        }
        (_, Some(m), Some(_)) => {
            out.pct_of_roof = (secs > 0.0).then(|| 100.0 * gbps / m);
            out.bound = Some(Bound::Memory);
        }
        _ => {}
    }
    out
}

/// One kernel name on one rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelRoofline {
    pub name: String,
    /// The family of the operators it ran for (the one with most time).
    pub family: Option<OpFamily>,
    /// The operator most of its time ran for.
    pub operator: Option<String>,
    pub calls: u64,
    pub time_us: f64,
    /// Calls and time with FLOP/byte figures.
    pub calls_with_figures: u64,
    pub time_with_figures_us: f64,
    /// Why the other calls have none (the reason with most time).
    pub missing: Option<MissingReason>,
    #[serde(flatten)]
    pub judged: Judged,
}

/// One operator (name, input shapes, type) on one rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct OperatorRoofline {
    pub name: String,
    /// `Input Dims` as written.
    pub shapes: String,
    pub family: Option<OpFamily>,
    pub calls: u64,
    /// Σ duration of the kernels it launched, µs.
    pub kernel_time_us: f64,
    /// Its longest kernel (by name) on its most expensive call.
    pub main_kernel: String,
    #[serde(flatten)]
    pub judged: Judged,
}

/// Kernels without figures, by reason.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MissingCount {
    pub reason: Option<MissingReason>,
    pub kernels: u64,
    pub time_us: f64,
}

/// Model FLOPs of one profiler step and the share of the device's peak they reach.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StepRoofline {
    pub step: i64,
    pub duration_us: f64,
    /// FLOPs of the operator calls that started within the step.
    pub flops: f64,
    pub tflops: f64,
    /// The element type with most FLOPs in the step, whose peak MFU is read against.
    pub dtype: Option<Dtype>,
    pub peak_tflops: Option<f64>,
    /// Model FLOPs utilisation: achieved / peak, %.
    pub mfu_pct: Option<f64>,
}

#[derive(Default)]
struct KernelAcc {
    calls: u64,
    time: i64,
    with: u64,
    with_time: i64,
    flops: f64,
    bytes: f64,
    host_copy: bool,
    by_family: BTreeMap<OpFamily, i64>,
    by_dtype: BTreeMap<Dtype, i64>,
    by_op: BTreeMap<u32, i64>,
    missing: BTreeMap<MissingReason, i64>,
}

fn most<K: Copy>(m: &BTreeMap<K, i64>) -> Option<K> {
    m.iter().max_by_key(|(_, &v)| v).map(|(&k, _)| k)
}

/// Kernel rows by name, largest time first (at most [`MAX_ROWS`]).
pub fn kernel_rows(t: &TraceTable, a: &Attribution, roof: &DeviceRoof) -> Vec<KernelRoofline> {
    let mut acc: BTreeMap<u32, KernelAcc> = BTreeMap::new();
    for k in &a.kernels {
        let e = acc.entry(k.name).or_default();
        e.calls += 1;
        e.time += k.dur_ns;
        match k.figures {
            Ok(Assigned {
                op_row,
                family,
                dtype,
                flops,
                bytes,
                host_copy,
            }) => {
                e.with += 1;
                e.with_time += k.dur_ns;
                e.flops += flops;
                e.bytes += bytes;
                e.host_copy |= host_copy;
                *e.by_family.entry(family).or_default() += k.dur_ns;
                if let Some(d) = dtype {
                    *e.by_dtype.entry(d).or_default() += k.dur_ns;
                }
                if let Some(o) = op_row {
                    *e.by_op.entry(t.name_id(o as usize)).or_default() += k.dur_ns;
                }
            }
            Err(r) => *e.missing.entry(r).or_default() += k.dur_ns,
        }
    }
    let mut rows: Vec<KernelRoofline> = acc
        .into_iter()
        .map(|(name, e)| {
            let family = most(&e.by_family);
            KernelRoofline {
                name: t.name_of_id(name).to_string(),
                family,
                operator: most(&e.by_op).map(|o| t.name_of_id(o).to_string()),
                calls: e.calls,
                time_us: us(e.time),
                calls_with_figures: e.with,
                time_with_figures_us: us(e.with_time),
                missing: most(&e.missing),
                judged: judge(
                    roof,
                    family,
                    most(&e.by_dtype),
                    e.host_copy,
                    e.flops,
                    e.bytes,
                    e.with_time,
                ),
            }
        })
        .collect();
    crate::sort::sort_by(&mut rows, |a, b| {
        b.time_us
            .total_cmp(&a.time_us)
            .then_with(|| a.name.cmp(&b.name))
    });
    rows.truncate(MAX_ROWS);
    rows
}

/// Operator rows by (name, shapes, type), largest kernel time first (at most [`MAX_ROWS`]).
pub fn operator_rows(t: &TraceTable, a: &Attribution, roof: &DeviceRoof) -> Vec<OperatorRoofline> {
    let dims = t.arg("Input Dims");
    let shapes = |row: u32| {
        dims.and_then(|c| c.find(row as usize).and_then(|i| c.text_at(i)))
            .unwrap_or("")
            .to_string()
    };
    let mut acc: BTreeMap<(u32, String, Option<Dtype>), (Vec<&OpCall>, f64, f64, i64)> =
        BTreeMap::new();
    for o in &a.ops {
        let e = acc
            .entry((t.name_id(o.row as usize), shapes(o.row), o.work.dtype))
            .or_default();
        e.0.push(o);
        e.1 += o.work.flops;
        e.2 += o.work.bytes;
        e.3 += o.kernel_ns;
    }
    let mut rows: Vec<OperatorRoofline> = acc
        .into_iter()
        .map(|((name, shapes, dtype), (calls, flops, bytes, time))| {
            let top = calls
                .iter()
                .max_by_key(|o| o.kernel_ns)
                .expect("a group has a call");
            let family = Some(top.work.family);
            OperatorRoofline {
                name: t.name_of_id(name).to_string(),
                shapes,
                family,
                calls: calls.len() as u64,
                kernel_time_us: us(time),
                main_kernel: t.name_of_id(top.main_kernel).to_string(),
                judged: judge(roof, family, dtype, false, flops, bytes, time),
            }
        })
        .collect();
    crate::sort::sort_by(&mut rows, |a, b| {
        b.kernel_time_us
            .total_cmp(&a.kernel_time_us)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.shapes.cmp(&b.shapes))
    });
    rows.truncate(MAX_ROWS);
    rows
}

/// Kernels without figures by reason, largest time first.
pub fn missing_counts(a: &Attribution) -> Vec<MissingCount> {
    let mut m: BTreeMap<MissingReason, (u64, i64)> = BTreeMap::new();
    for k in &a.kernels {
        if let Err(r) = k.figures {
            let e = m.entry(r).or_default();
            e.0 += 1;
            e.1 += k.dur_ns;
        }
    }
    let mut out: Vec<MissingCount> = m
        .into_iter()
        .map(|(r, (n, time))| MissingCount {
            reason: Some(r),
            kernels: n,
            time_us: us(time),
        })
        .collect();
    crate::sort::sort_by(&mut out, |a, b| b.time_us.total_cmp(&a.time_us));
    out
}

/// Model FLOPs and MFU per step: the operator calls that started within each step span.
pub fn step_rows(a: &Attribution, steps: &[StepSpan], roof: &DeviceRoof) -> Vec<StepRoofline> {
    steps
        .iter()
        .map(|s| {
            let mut by_dtype: BTreeMap<Dtype, f64> = BTreeMap::new();
            let mut flops = 0.0;
            for o in a.ops.iter().filter(|o| o.ts >= s.ts && o.ts < s.end) {
                flops += o.work.flops;
                if let Some(d) = o.work.dtype {
                    *by_dtype.entry(d).or_default() += o.work.flops;
                }
            }
            let dtype = by_dtype
                .iter()
                .filter(|(_, &f)| f > 0.0)
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map(|(&d, _)| d);
            let secs = (s.end - s.ts) as f64 / 1e9;
            let tflops = if secs > 0.0 { flops / secs / 1e12 } else { 0.0 };
            let peak = dtype.and_then(|d| roof.peaks.of(d));
            StepRoofline {
                step: s.step,
                duration_us: us(s.end - s.ts),
                flops,
                tflops,
                dtype,
                peak_tflops: peak,
                mfu_pct: peak.filter(|_| secs > 0.0).map(|p| 100.0 * tflops / p),
            }
        })
        .collect()
}
