//! Which operator's work each kernel does: a kernel's launch (its runtime call's correlation) names
//! the CPU operator it runs for; PyTorch-internal operators (`aten::_flash_attention_forward`) hand
//! over to the modelled operator above them. GEMM, convolution and attention figures go to the
//! operator's main (longest) kernel; element-wise, reduction and copy figures are split among its
//! kernels by duration. Memory copies and sets carry their own `bytes`.

use std::collections::BTreeMap;

use super::args::ShapeColumns;
use super::kinds::{Dtype, MissingReason, OpFamily};
use super::model::{family_of, is_internal, work_of, Work};
use crate::analysis::callstack::NONE;
use crate::analysis::gpu::{KernelType, RankPrep};
use crate::analysis::memcpy::direction_of;
use crate::analysis::names::is_tf32_kernel;
use crate::analysis::views::kernel_table::uses_tensor_cores;
use crate::analysis::views::HostOps;
use crate::table::{EventKind, TraceTable};

/// How far above the launching operator the model may look for a modelled one.
const MAX_HOPS: usize = 4;

/// The figures one device row got.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Assigned {
    /// The operator row the figures come from (`None`: a copy's own `bytes`).
    pub op_row: Option<u32>,
    pub family: OpFamily,
    pub dtype: Option<Dtype>,
    pub flops: f64,
    pub bytes: f64,
    /// A copy between host and device (judged against the host link).
    pub host_copy: bool,
}

/// One device row of the analysed window with its figures or why it has none.
#[derive(Clone, Copy, Debug)]
pub struct KernelWork {
    pub row: u32,
    pub name: u32,
    pub ts: i64,
    pub dur_ns: i64,
    pub figures: Result<Assigned, MissingReason>,
}

/// One modelled operator call and the kernels it launched.
#[derive(Clone, Debug)]
pub struct OpCall {
    pub row: u32,
    pub ts: i64,
    pub work: Work,
    /// Σ duration of its kernels (helpers included), ns.
    pub kernel_ns: i64,
    /// Name id of its longest kernel.
    pub main_kernel: u32,
}

/// Every device row's figures and the operator calls they come from.
pub struct Attribution {
    pub kernels: Vec<KernelWork>,
    pub ops: Vec<OpCall>,
    /// The trace has `Input Dims` on some row.
    pub has_shapes: bool,
}

/// The modelled operator above a launching one and its work, or why there is none.
fn modelled_op(
    t: &TraceTable,
    h: &HostOps,
    cols: &ShapeColumns,
    op: usize,
) -> Result<(usize, Work), MissingReason> {
    let mut cur = op;
    for _ in 0..=MAX_HOPS {
        let name = t.name_at(cur);
        if let Some((flops, bytes)) = cols.inductor(cur) {
            return Ok((
                cur,
                Work {
                    family: OpFamily::Inductor,
                    flops,
                    bytes,
                    dtype: cols.read(cur).and_then(|a| a.first_dtype()),
                },
            ));
        }
        if family_of(name).is_some() {
            let args = cols.read(cur).ok_or(MissingReason::NoShapes)?;
            return work_of(name, &args).map(|w| (cur, w));
        }
        let up = h.parent_op[cur];
        if !is_internal(name) || up == NONE {
            break;
        }
        cur = up as usize;
    }
    Err(MissingReason::UnmodelledOp)
}

/// A copy's or set's own figures from its `bytes` arg: device-to-device copies read and write them.
fn memory_figures(t: &TraceTable, row: usize, kind: EventKind) -> Result<Assigned, MissingReason> {
    let bytes = t
        .arg("bytes")
        .and_then(|c| c.find(row).and_then(|i| c.f64_at(i)))
        .ok_or(MissingReason::NoBytes)?;
    let dir = direction_of(t.name_at(row));
    let host_copy = kind == EventKind::Memcpy && matches!(dir, "HtoD" | "DtoH" | "HtoH");
    let moved = if kind == EventKind::Memcpy && matches!(dir, "DtoD" | "PtoP" | "") {
        2.0 * bytes
    } else {
        bytes
    };
    Ok(Assigned {
        op_row: None,
        family: OpFamily::Copy,
        dtype: None,
        flops: 0.0,
        bytes: moved,
        host_copy,
    })
}

/// An fp32 product whose kernel runs on tensor cores runs in TF32 (its name says `tf32`/`xf32`,
/// or it is a tensor-core kernel: cuBLAS/CUTLASS `tensorop_s1688gemm` on fp32 inputs is TF32).
fn runs_on_tensor_cores(name: &str) -> bool {
    is_tf32_kernel(name) || uses_tensor_cores(name)
}

/// The figures of every device row of `prep` (its analysed window).
pub fn attribute(prep: &RankPrep, h: &HostOps) -> Attribution {
    let t = prep.table;
    let cols = ShapeColumns::of(t);
    let mut kernels = Vec::with_capacity(prep.dev.len());
    // Kernels per modelled operator row, with that operator's work.
    let mut by_op: BTreeMap<u32, (Work, Vec<usize>)> = BTreeMap::new();
    let mut op_cache: BTreeMap<usize, Result<(usize, Work), MissingReason>> = BTreeMap::new();
    for d in &prep.dev {
        let row = d.row as usize;
        let figures = match (d.kind, d.ktype) {
            (EventKind::Memcpy | EventKind::Memset, _) => memory_figures(t, row, d.kind),
            (_, KernelType::Communication) => Err(MissingReason::Collective),
            _ => match h.op_of_device(row) {
                None => Err(MissingReason::NoOperator),
                Some(op) => match *op_cache
                    .entry(op)
                    .or_insert_with(|| modelled_op(t, h, &cols, op))
                {
                    Err(e) => Err(e),
                    Ok((op_row, work)) => {
                        by_op
                            .entry(op_row as u32)
                            .or_insert_with(|| (work, Vec::new()))
                            .1
                            .push(kernels.len());
                        // Filled below, once the operator's kernels are all known.
                        Err(MissingReason::HelperKernel)
                    }
                },
            },
        };
        kernels.push(KernelWork {
            row: d.row,
            name: d.name,
            ts: d.ts,
            dur_ns: (d.end - d.ts).max(0),
            figures,
        });
    }
    let ops = by_op
        .into_iter()
        .map(|(op_row, (work, ks))| split(t, &mut kernels, op_row, work, &ks))
        .collect();
    Attribution {
        kernels,
        ops,
        has_shapes: cols_have_shapes(t),
    }
}

fn cols_have_shapes(t: &TraceTable) -> bool {
    t.arg("Input Dims").is_some_and(|c| c.rows.len() > 0)
}

/// Gives an operator call's work to its kernels: all to the longest for GEMM/conv/attention, else
/// split by duration (equally when they all last 0).
fn split(
    t: &TraceTable,
    kernels: &mut [KernelWork],
    op_row: u32,
    mut work: Work,
    ks: &[usize],
) -> OpCall {
    let total: i64 = ks.iter().map(|&k| kernels[k].dur_ns).sum();
    let main = ks
        .iter()
        .copied()
        .max_by_key(|&k| (kernels[k].dur_ns, std::cmp::Reverse(k)))
        .expect("an operator call has a kernel");
    if work.dtype == Some(Dtype::Fp32)
        && work.family.has_main_kernel()
        && runs_on_tensor_cores(t.name_of_id(kernels[main].name))
    {
        work.dtype = Some(Dtype::Tf32);
    }
    for &k in ks {
        let share = if work.family.has_main_kernel() {
            if k == main {
                1.0
            } else {
                continue;
            }
        } else if total > 0 {
            kernels[k].dur_ns as f64 / total as f64
        } else {
            1.0 / ks.len() as f64
        };
        kernels[k].figures = Ok(Assigned {
            op_row: Some(op_row),
            family: work.family,
            dtype: work.dtype,
            flops: work.flops * share,
            bytes: work.bytes * share,
            host_copy: false,
        });
    }
    OpCall {
        row: op_row,
        ts: t.ts_at(op_row as usize).unwrap_or(0),
        work,
        kernel_ns: total,
        main_kernel: kernels[main].name,
    }
}
