//! The roofline in the diagnosis: each rank's kernels judged against the device's roof
//! ([`crate::analysis::roofline`]) become [`RooflineFigures`] (a map-reduce part like the others), and
//! [`far_under_roof`] names a kernel or host copy far under its roof that takes a large share of the
//! time, with its efficiency judged against the hardware and what would raise it. Which resource
//! bounds a kernel follows from its arithmetic intensity against the ridge point.

use crate::report::rich_text::{code, kernel, RichText};
use crate::rich;
use serde::{Deserialize, Serialize};

use super::findings::{EvidenceKind, EvidenceRef, Finding, FindingId, MAX_EVIDENCE_ROWS};
use super::inputs::{pct, DiagnosisInputs};
use super::patterns::{is_fp32_simt_gemm, is_fusable_memory_bound};
use super::wording::dur;
use crate::analysis::gpu::RankPrep;
use crate::analysis::names::is_library_kernel;
use crate::analysis::roofline::{
    roofline_prepared, Bound, Dtype, KernelRoofline, OpFamily, RankRoofline, RoofSource,
};
use crate::report::roofline_text::sig;

/// A kernel under this share (%) of its roof is "far under" it (datasheet peaks are rarely reached:
/// tuned GEMMs and attention reach 40-80% of them).
pub const FAR_UNDER_ROOF_PCT: f64 = 15.0;
/// ... when it takes at least this share (%) of kernel time (host copies: of the GPU window).
pub const ROOF_SHARE_PCT: f64 = 10.0;
/// What a well-used kernel reaches (% of roof): tuned libraries reach 50-80% of the datasheet peak on
/// large shapes. The recoverable time is the time above what the kernel would take there.
pub const ROOF_TARGET_PCT: f64 = 50.0;
/// Under this share (%) of its roof a matrix kernel that is not a library's is a naive one.
const NAIVE_PCT: f64 = 5.0;
/// Leads kept per rank and per set.
const MAX_LEADS: usize = 8;
/// A host copy moving less than this per call is small (per-call overheads dominate).
const SMALL_TRANSFER_BYTES: f64 = 1024.0 * 1024.0;

/// One kernel name (or host copy) of one rank judged against the roof.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoofLead {
    pub rank: i64,
    pub name: String,
    pub operator: Option<String>,
    pub family: Option<OpFamily>,
    pub dtype: Option<Dtype>,
    pub calls: u64,
    /// Time of the calls with figures, ns.
    pub time_ns: i64,
    pub tflops: f64,
    pub gbps: f64,
    pub intensity: Option<f64>,
    pub pct_of_roof: f64,
    pub roof_tflops: Option<f64>,
    pub roof_gbps: Option<f64>,
    /// The device's peak for its type, TFLOP/s.
    pub peak_tflops: Option<f64>,
    /// For an fp32 matrix product: the TF32 tensor-core peak `allow_tf32` would give, TFLOP/s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tf32_peak_tflops: Option<f64>,
    pub bound: Option<Bound>,
    pub bytes_per_call: f64,
    pub evidence: EvidenceRef,
}

/// The roofline figures of a set, as the rules read them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RooflineFigures {
    /// The table's device name (`A100 SXM4 80GB`) and whether it is an estimate.
    pub device: Option<String>,
    pub estimate: bool,
    /// Kernel time with figures, and the part of it on either side of the ridge point, ns.
    pub time_with_figures_ns: i64,
    pub memory_bound_ns: i64,
    pub compute_bound_ns: i64,
    /// The kernels with most time, largest first.
    pub leads: Vec<RoofLead>,
    /// The GPU's link to its peers (collectives' bus bandwidth is judged against it).
    #[serde(default)]
    pub peer_link: Option<crate::analysis::roofline::PeerLink>,
    /// The GPU's link to the host (host↔device copies are judged against it).
    #[serde(default)]
    pub host_link: Option<crate::analysis::roofline::HostLink>,
    /// The device's peaks, when it has a roof (the precision advice reads them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peaks: Option<crate::analysis::roofline::Peaks>,
}

impl RooflineFigures {
    /// Adds another rank's figures.
    pub fn merge(&mut self, o: RooflineFigures) {
        if self.device.is_none() {
            self.device = o.device;
            self.estimate = o.estimate;
        }
        if self.peer_link.is_none() {
            self.peer_link = o.peer_link;
        }
        if self.host_link.is_none() {
            self.host_link = o.host_link;
        }
        if self.peaks.is_none() {
            self.peaks = o.peaks;
        }
        self.time_with_figures_ns += o.time_with_figures_ns;
        self.memory_bound_ns += o.memory_bound_ns;
        self.compute_bound_ns += o.compute_bound_ns;
        self.leads.extend(o.leads);
        self.leads
            .sort_by(|a, b| b.time_ns.cmp(&a.time_ns).then_with(|| a.rank.cmp(&b.rank)));
        self.leads.truncate(MAX_LEADS);
    }

    /// Which side of the ridge point most of the kernel time with figures is on, when figures cover
    /// at least half of `kernel_time_ns`.
    pub fn bound_by_intensity(&self, kernel_time_ns: i64) -> Option<Bound> {
        if self.time_with_figures_ns * 2 < kernel_time_ns || self.time_with_figures_ns == 0 {
            return None;
        }
        Some(if self.memory_bound_ns > self.compute_bound_ns {
            Bound::Memory
        } else {
            Bound::Compute
        })
    }
}

fn ns(us: f64) -> i64 {
    (us * 1000.0).round() as i64
}

/// What the hardware could do for a kernel: the roof of the type it runs in. An fp32 matrix product
/// is judged against the fp32 peak unless its kernel shows TF32 (a `tf32`/`xf32` name or a
/// tensor-op kernel: then the roofline already typed it TF32): `sgemm` alone says neither, and
/// `allow_tf32` is off by default for matmuls, so the TF32 peak is named as the way up, not as
/// the roof ([`RoofLead::tf32_peak_tflops`]).
type HardwareRoof = (Option<Dtype>, Option<f64>, f64, Option<Bound>);

fn hardware_roof(k: &KernelRoofline) -> Option<HardwareRoof> {
    let j = &k.judged;
    Some((j.dtype, j.roof_tflops, j.pct_of_roof?, j.bound))
}

/// The TF32 tensor-core peak an fp32 matrix product could reach with `allow_tf32`, when the device
/// has one.
fn tf32_way_up(r: &RankRoofline, k: &KernelRoofline) -> Option<f64> {
    r.roof.peaks.tf32.filter(|_| {
        k.judged.dtype == Some(Dtype::Fp32) && k.family.is_some_and(OpFamily::has_main_kernel)
    })
}

fn lead_of(rank: i64, prep: &RankPrep, r: &RankRoofline, k: &KernelRoofline) -> Option<RoofLead> {
    let j = &k.judged;
    let (dtype, roof_tflops, pct_of_roof, bound) = hardware_roof(k)?;
    let t = prep.table;
    let memory = k.judged.bound == Some(Bound::HostLink) || k.family == Some(OpFamily::Copy);
    let rows: Vec<u32> = prep
        .dev
        .iter()
        .filter(|d| t.name_of_id(d.name) == k.name)
        .take(MAX_EVIDENCE_ROWS)
        .map(|d| d.row)
        .collect();
    Some(RoofLead {
        rank,
        name: k.name.clone(),
        operator: k.operator.clone(),
        family: k.family,
        dtype,
        calls: k.calls_with_figures,
        time_ns: ns(k.time_with_figures_us),
        tflops: j.tflops,
        gbps: j.gbps,
        intensity: j.intensity,
        pct_of_roof,
        roof_tflops,
        roof_gbps: j.roof_gbps,
        peak_tflops: dtype.and_then(|d| r.roof.peaks.of(d)),
        tf32_peak_tflops: tf32_way_up(r, k),
        bound,
        bytes_per_call: j.bytes / k.calls_with_figures.max(1) as f64,
        evidence: EvidenceRef {
            kind: if memory && j.flops == 0.0 && k.name.starts_with("Mem") {
                EvidenceKind::Memory
            } else {
                EvidenceKind::Kernel
            },
            rank: Some(rank),
            name: k.name.clone(),
            stream: None,
            count: k.calls,
            time_ns: ns(k.time_us),
            rows,
        },
    })
}

/// One rank's roofline figures over the analysed window of `prep` (exact mode).
pub fn rank_roofline_figures(rank: i64, prep: &RankPrep) -> RooflineFigures {
    let r = roofline_prepared(rank, prep);
    let side = |b: Bound| -> i64 {
        r.kernels
            .iter()
            .filter(|k| k.judged.bound == Some(b) && k.judged.flops > 0.0)
            .map(|k| ns(k.time_with_figures_us))
            .sum()
    };
    let mut leads: Vec<RoofLead> = r
        .kernels
        .iter()
        .filter(|k| k.calls_with_figures > 0)
        .filter_map(|k| lead_of(rank, prep, &r, k))
        .collect();
    crate::sort::sort_by(&mut leads, |a, b| {
        b.time_ns.cmp(&a.time_ns).then_with(|| a.name.cmp(&b.name))
    });
    leads.truncate(MAX_LEADS);
    RooflineFigures {
        device: r.roof.device.clone(),
        estimate: r.roof.source == RoofSource::SmCountEstimate,
        time_with_figures_ns: ns(r.time_with_figures_us),
        memory_bound_ns: side(Bound::Memory),
        compute_bound_ns: side(Bound::Compute),
        leads,
        peer_link: r.roof.peer_link.clone(),
        host_link: r.roof.host_link.clone(),
        peaks: (r.roof.source != RoofSource::Unknown).then_some(r.roof.peaks),
    }
}

/// The hardware in words: `the A100 SXM4 80GB's` (`an estimated` roof when it is one).
fn device_words(f: &RooflineFigures) -> String {
    match &f.device {
        Some(d) if f.estimate => format!("the estimated roof of this device (like a {d})"),
        Some(d) => format!("the {d}'s"),
        None => "the device's".into(),
    }
}

/// The figure against the roof: `0.3 TFLOP/s, 0.2% of the A100 SXM4 80GB's 312 TFLOP/s bf16`.
fn against_roof(f: &RooflineFigures, l: &RoofLead) -> String {
    let dev = device_words(f);
    match (l.bound, l.roof_tflops, l.roof_gbps) {
        (Some(Bound::HostLink), _, Some(link)) => format!(
            "{} GB/s, {:.1}% of {dev} host link ({} GB/s)",
            sig(l.gbps),
            l.pct_of_roof,
            sig(link)
        ),
        (_, Some(roof), _)
            if l.dtype == Some(Dtype::Fp32) && l.family.is_some_and(OpFamily::has_main_kernel) =>
        {
            format!(
                "{} TFLOP/s in fp32, {}% of {dev} {} TFLOP/s fp32 roof at its intensity{}",
                sig(l.tflops),
                sig(l.pct_of_roof),
                sig(roof),
                l.tf32_peak_tflops.map_or(String::new(), |p| format!(
                    " (TF32 tensor cores, when enabled, reach {} TFLOP/s)",
                    sig(p)
                ))
            )
        }
        (Some(Bound::Compute), Some(roof), _) => format!(
            "{} TFLOP/s, {}% of {dev} {} TFLOP/s {}",
            sig(l.tflops),
            sig(l.pct_of_roof),
            sig(roof),
            l.dtype.map_or("", |d| d.as_str())
        ),
        (_, Some(_), Some(bw)) => format!(
            "{} GB/s ({} TFLOP/s at {} FLOP/byte, below the ridge point), {}% of {dev} {} GB/s memory bandwidth",
            sig(l.gbps),
            sig(l.tflops),
            sig(l.intensity.unwrap_or(0.0)),
            sig(l.pct_of_roof),
            sig(bw)
        ),
        (_, _, Some(bw)) => format!(
            "{} GB/s, {}% of {dev} {} GB/s memory bandwidth",
            sig(l.gbps),
            sig(l.pct_of_roof),
            sig(bw)
        ),
        _ => format!("{}% of its roof", sig(l.pct_of_roof)),
    }
}

/// What would raise it.
fn actions(i: &DiagnosisInputs, f: &RooflineFigures, l: &RoofLead) -> Vec<RichText> {
    let mut out: Vec<RichText> = Vec::new();
    let matmul =
        l.family.is_some_and(OpFamily::has_main_kernel) || l.family == Some(OpFamily::Inductor);
    if l.bound == Some(Bound::HostLink) {
        if l.name.contains("Pageable") {
            out.push("Copy from pinned host memory: `DataLoader(pin_memory=True)` or `tensor.pin_memory()`, then `.to(device, non_blocking=True)`; pageable copies are staged through a bounce buffer at a fraction of the link.".into());
        }
        if l.bytes_per_call < SMALL_TRANSFER_BYTES {
            out.push(format!(
                "Each copy moves {} on average: batch them into fewer, larger transfers (one tensor per batch, not per sample) or create the tensors on the device.",
                bytes_words(l.bytes_per_call)
            ).into());
        }
        out.push("Overlap the copies with compute (a side stream, `non_blocking=True`, prefetching the next batch).".into());
        return out;
    }
    if matmul && l.dtype == Some(Dtype::Fp32) && f.device.is_some() {
        if let Some(a) = crate::report::wording::precision_advice(
            i,
            rich!(kernel(&l.name), " and its fp32 products"),
        ) {
            out.push(a);
        } else if let Some(a) = crate::report::wording::fp32_advice(i, &[l.name.as_str()]) {
            out.push(a);
        } else {
            out.push(
                crate::report::wording::fp32_lever_advice(i, "it")
                    .unwrap_or_else(|| "It multiplies in fp32 on hardware with tensor cores: enable TF32 (`torch.backends.cuda.matmul.allow_tf32 = True`, `torch.backends.cudnn.allow_tf32 = True`, or `torch.set_float32_matmul_precision(\"high\")`) or run it under bf16 autocast (`torch.autocast(\"cuda\", dtype=torch.bfloat16)`).".into()),
            );
        }
    }
    if matmul && !is_library_kernel(&l.name) && l.pct_of_roof < NAIVE_PCT {
        out.push(rich!(kernel(&l.name), " is not a library kernel: a hand-written kernel this far under the roof is usually a naive one; call the library instead (", code("torch.matmul"), "/", code("F.linear"), " → cuBLAS, ", code("F.conv2d"), " → cuDNN, ", code("F.scaled_dot_product_attention"), " → FlashAttention), or autotune it", if i.in_use.compiled.is_some() { " (Inductor's `max-autotune` mode)" } else { " (`torch.compile(mode=\"max-autotune\")`)" }, "."));
    } else if l.bound == Some(Bound::Compute) {
        out.push("Its shapes leave the tensor cores idle: make the GEMM dimensions multiples of 64 (pad the hidden size, the vocabulary, the batch), use larger batches or fuse small products (grouped GEMM), and for convolutions set `torch.backends.cudnn.benchmark = True` and channels-last.".into());
    }
    if l.bound == Some(Bound::Memory) && matmul {
        // A GEMM or convolution below the ridge point and far under both roofs is held back by
        // the algorithm its library chose, not by memory: fusing it or larger tensors is no fix.
        out.push(rich!(kernel(&l.name), format!(" is a GEMM or convolution at {} FLOP/byte reaching {} GB/s and {} TFLOP/s: far under both the memory and the arithmetic roof, so neither limits it; the algorithm the library chose does. Let the library pick by measuring (", sig(l.intensity.unwrap_or(0.0)), sig(l.gbps), sig(l.tflops)), code("torch.backends.cudnn.benchmark = True"), "; on ROCm MIOpen's ", code("MIOPEN_FIND_MODE=NORMAL"), " and ", code("MIOPEN_FIND_ENFORCE=SEARCH"), " for convolutions, ", code("PYTORCH_TUNABLEOP_ENABLED=1"), " for GEMMs) and compare the per-call times of identical shapes."));
    } else if l.bound == Some(Bound::Memory) {
        out.push(rich!(
            kernel(&l.name),
            format!(" is memory-bound at {} FLOP/byte and reaches {} GB/s: too little data per launch to fill the memory system, or strided access. ", sig(l.intensity.unwrap_or(0.0)), sig(l.gbps)),
            if i.in_use.compiled.is_some() { "Keep " } else { "Fuse it with its neighbours (`torch.compile`), keep " },
            "its inputs contiguous, and give it larger tensors (larger batches)",
            if i.in_use.precision() { "" } else { "; bf16 halves the bytes" },
            "."
        ));
    }
    out
}

/// "9 calls", or "5 of its 9 calls (those with recorded shapes)" when only some have figures: the
/// count agrees with the kernel table's.
fn calls_words(l: &RoofLead) -> String {
    if l.calls < l.evidence.count {
        format!(
            "{} of its {} calls (those with recorded shapes)",
            l.calls, l.evidence.count
        )
    } else {
        crate::report::wording::count(l.calls, "call")
    }
}

fn bytes_words(b: f64) -> String {
    if b >= 1e6 {
        format!("{} MB", sig(b / 1e6))
    } else {
        format!("{} KB", sig(b / 1e3))
    }
}

/// A kernel or host copy far under its roof with a large share of the time: named with its
/// efficiency against the hardware and what would raise it. Kernels another rule already claims
/// (fp32 SIMT GEMMs, fusable memory-bound kernels, copies) are left to that rule when it fires.
pub fn far_under_roof(i: &DiagnosisInputs) -> Option<Finding> {
    let f = &i.roofline;
    // One kernel alone (a micro-benchmark of one op): the dominant-kernel note gives its efficiency.
    if i.kernels.len() < 2 {
        return None;
    }
    let fp32_rule = super::rules::fp32_matmul(i).is_some();
    let fusion_rule = super::rules::fusion_candidates(i).is_some();
    let copy_rule = super::rules::memory_traffic(i).is_some();
    let share = |l: &RoofLead| {
        if l.bound == Some(Bound::HostLink) {
            i.time.pct(l.time_ns)
        } else {
            pct(l.time_ns, i.kernel_time_ns)
        }
    };
    let claimed = |l: &RoofLead| {
        (fp32_rule && is_fp32_simt_gemm(&l.name))
            || (fusion_rule && is_fusable_memory_bound(&l.name))
            || (copy_rule && l.bound == Some(Bound::HostLink))
    };
    let recoverable =
        |l: &RoofLead| (l.time_ns as f64 * (1.0 - l.pct_of_roof / ROOF_TARGET_PCT)).max(0.0) as i64;
    let mut far: Vec<&RoofLead> = f
        .leads
        .iter()
        .filter(|l| l.pct_of_roof < FAR_UNDER_ROOF_PCT && share(l) >= ROOF_SHARE_PCT && !claimed(l))
        .collect();
    crate::sort::sort_by_key(&mut far, |l| std::cmp::Reverse(recoverable(l)));
    let top = *far.first()?;
    let what = if top.bound == Some(Bound::HostLink) {
        "host copy"
    } else {
        "kernel"
    };
    let side = match top.bound {
        Some(Bound::Compute) => "compute-bound (its arithmetic intensity is above the ridge point)",
        Some(Bound::Memory) => "memory-bound (its arithmetic intensity is below the ridge point)",
        Some(Bound::HostLink) => "limited by the host link",
        None => "judged against its roof",
    };
    let time: i64 = far.iter().map(|l| recoverable(l)).sum();
    Some(Finding {
        id: FindingId::FarUnderRoof,
        headline: rich!(format!("The {what} "), kernel(&top.name), format!(" runs at {}, and takes {:.1}% of {} ({}).", against_roof(f, top), share(top), if what == "kernel" { "kernel time" } else { "the GPU window" }, dur(top.time_ns))).into(),
        title: rich!(kernel(&top.name), " far under the hardware's roof"),
        threshold: format!(
            "a kernel or host copy under {FAR_UNDER_ROOF_PCT:.0}% of its roof (the peak for its type, or bandwidth × intensity below the ridge point) taking ≥ {ROOF_SHARE_PCT:.0}% of the time"
        ).into(),
        measured: RichText::join(
            far.iter().take(3).map(|l| {
                rich!(
                    kernel(&l.name),
                    format!(
                        "{}: {} in {}, {}",
                        l.operator.as_ref().map_or(String::new(), |o| format!(" ({o})")),
                        dur(l.time_ns),
                        calls_words(l),
                        against_roof(f, l)
                    )
                )
            }),
            "; ",
        ),
        value: top.pct_of_roof,
        impact: super::rules::impact(i, time),
        explanation: rich!("FLOPs and bytes come from the operators' recorded shapes; ", kernel(&top.name), format!(" is {side}. At {ROOF_TARGET_PCT:.0}% of its roof, which tuned kernels reach, it would take {} instead of {}.", dur((top.time_ns as f64 * top.pct_of_roof / ROOF_TARGET_PCT) as i64), dur(top.time_ns))),
        actions: actions(i, f, top),
        evidence: far.iter().take(5).map(|l| l.evidence.clone()).collect(),
        severity: super::rules::severity_of(i.time.pct(time)),
        filter: None,
    })
}

/// The efficiency of a kernel against the roof in words, for the dominant-kernel note: "`k` runs at
/// 39.8 TFLOP/s and 621 GB/s, 11.7% of the MI300X's roof at its intensity (...)".
pub fn roof_words(i: &DiagnosisInputs, name: &str) -> Option<RichText> {
    let l = i.roofline.leads.iter().find(|l| l.name == name)?;
    Some(
        rich!(
            "Against the hardware: ",
            kernel(name),
            format!(" runs at {}.", against_roof(&i.roofline, l))
        )
        .into(),
    )
}

/// The bound of a kernel name by its intensity, when the roofline judged it.
pub fn bound_of_kernel(i: &DiagnosisInputs, name: &str) -> Option<Bound> {
    i.roofline
        .leads
        .iter()
        .find(|l| l.name == name)
        .and_then(|l| l.bound)
}
