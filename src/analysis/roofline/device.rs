//! The device's roof: peak TFLOP/s per element type and memory bandwidth from a table of vendor
//! datasheet figures keyed by the `deviceProperties` name, the host link host copies cross, the peer
//! link collectives cross (NVLink, Infinity Fabric, else PCIe), and an estimate scaled by SM (CU) count and clock when the name is not in the table.
//!
//! Figures are dense (no 2:4 sparsity), at boost clock, in TFLOP/s (10^12 FLOP/s) and GB/s (10^9 B/s).
//! fp64 is the higher of the vector and matrix (tensor core) figures: DGEMM runs on the latter. An
//! AMD MI250/MI250X shows each of its two dies (GCDs) as one device, so their rows hold half a package.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::kinds::{Dtype, LinkKind, PeerLinkKind, RoofSource};

/// Peak rates of one device, TFLOP/s; `None` where the device has no such unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Peaks {
    pub fp64: f64,
    pub fp32: f64,
    pub tf32: Option<f64>,
    pub fp16: f64,
    pub bf16: Option<f64>,
    pub fp8: Option<f64>,
}

impl Peaks {
    /// Peak TFLOP/s for an element type, if the device multiplies it.
    pub fn of(&self, d: Dtype) -> Option<f64> {
        match d {
            Dtype::Fp64 => Some(self.fp64),
            Dtype::Fp32 => Some(self.fp32),
            Dtype::Tf32 => self.tf32,
            Dtype::Fp16 => Some(self.fp16),
            Dtype::Bf16 => self.bf16,
            Dtype::Fp8 => self.fp8,
            _ => None,
        }
        .filter(|v| *v > 0.0)
    }

    /// What this device offers an fp32 matrix product beyond fp32: TF32 when it runs well above the
    /// fp32 rate (not on GeForce Ampere/Ada/Blackwell, where dense TF32 runs at the fp32 rate), else
    /// bf16 or fp16 autocast, else nothing faster. The one definition the advice reads.
    pub fn fp32_lever(&self) -> Fp32Lever {
        let gain = |v: Option<f64>| {
            v.filter(|v| *v > 0.0 && self.fp32 > 0.0)
                .map(|v| v / self.fp32)
                .filter(|g| *g >= PRECISION_MIN_GAIN)
        };
        if let Some(g) = gain(self.tf32) {
            return Fp32Lever::Tf32(g);
        }
        match (gain(self.bf16), gain(Some(self.fp16))) {
            (Some(g), _) => Fp32Lever::Half {
                gain: g,
                bf16: true,
            },
            (None, Some(g)) => Fp32Lever::Half {
                gain: g,
                bf16: false,
            },
            (None, None) => Fp32Lever::Nothing,
        }
    }

    fn scaled(&self, k: f64) -> Peaks {
        Peaks {
            fp64: self.fp64 * k,
            fp32: self.fp32 * k,
            tf32: self.tf32.map(|v| v * k),
            fp16: self.fp16 * k,
            bf16: self.bf16.map(|v| v * k),
            fp8: self.fp8.map(|v| v * k),
        }
    }
}

/// A reduced-precision rate is a way up for fp32 matrix products from this many times the fp32 rate.
pub const PRECISION_MIN_GAIN: f64 = 1.5;

/// What a device offers an fp32 matrix product ([`Peaks::fp32_lever`]), with the gain over fp32.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fp32Lever {
    /// TF32 tensor cores (a flag, the same code), this many times the fp32 rate.
    Tf32(f64),
    /// No TF32 gain: bf16 (or, without it, fp16) autocast, this many times the fp32 rate.
    Half { gain: f64, bf16: bool },
    /// No unit faster than fp32.
    Nothing,
}

/// The host link of a device: what host↔device copies can reach, per direction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostLink {
    pub kind: LinkKind,
    /// PCIe generation (0 for NVLink-C2C).
    pub generation: u8,
    /// Lanes (16 for a x16 slot).
    pub width: u8,
    /// GB/s per direction after encoding (PCIe 3/4/5 x16: 15.75 / 31.5 / 63).
    pub gbps: f64,
}

impl HostLink {
    fn pcie(generation: u8) -> HostLink {
        // 8, 16, 32 GT/s per lane × 128b/130b encoding × 16 lanes / 8 bits.
        let gts = 8.0 * f64::from(1u32 << (generation.saturating_sub(3)));
        HostLink {
            kind: LinkKind::Pcie,
            generation,
            width: 16,
            gbps: gts * 128.0 / 130.0 * 16.0 / 8.0,
        }
    }

    /// NVLink-C2C: 900 GB/s both directions (NVIDIA GH200 Grace Hopper Superchip datasheet).
    fn c2c() -> HostLink {
        HostLink {
            kind: LinkKind::NvlinkC2c,
            generation: 0,
            width: 0,
            gbps: 450.0,
        }
    }

    /// `PCIe 4.0 x16 (31.5 GB/s)`, `NVLink-C2C (450 GB/s)`.
    pub fn label(&self) -> String {
        match self.kind {
            LinkKind::Pcie => format!(
                "PCIe {}.0 x{} ({:.1} GB/s)",
                self.generation, self.width, self.gbps
            ),
            LinkKind::NvlinkC2c => format!("NVLink-C2C ({:.0} GB/s)", self.gbps),
        }
    }
}

/// The link from a GPU to its peers in the node: what a collective's bus bandwidth can reach.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PeerLink {
    pub kind: PeerLinkKind,
    /// GB/s per direction per GPU (all its links together): what nccl-tests' bus bandwidth is
    /// compared with.
    pub gbps: f64,
}

impl PeerLink {
    /// A bus bandwidth (GB/s, nccl-tests' definition) as % of the link's rate per direction.
    pub fn pct_of(&self, busbw_gbps: f64) -> f64 {
        100.0 * busbw_gbps / self.gbps
    }

    /// `NVLink (300 GB/s per direction)`, `PCIe 4.0 x16 (31.5 GB/s per direction, no NVLink)`.
    pub fn label(&self) -> String {
        match self.kind {
            PeerLinkKind::Nvlink => format!("NVLink ({:.0} GB/s per direction)", self.gbps),
            PeerLinkKind::InfinityFabric => {
                format!("Infinity Fabric ({:.0} GB/s per direction)", self.gbps)
            }
            PeerLinkKind::Pcie => format!("PCIe ({:.1} GB/s per direction, no NVLink)", self.gbps),
        }
    }
}

/// GPU-to-GPU links of the table's devices with one, as (table name, kind, GB/s both directions
/// per GPU). Every other device of the table talks to its peers over PCIe (its host link's
/// figure); bridges sold as options (A100/H100 PCIe, RTX 2080 Ti/3090, MI210) are not assumed.
const PEER_LINKS: &[(&str, PeerLinkKind, f64)] = &[
    // NVIDIA Tesla V100 datasheet (SXM2): NVLink 300 GB/s.
    ("V100 SXM2", PeerLinkKind::Nvlink, 300.0),
    // NVIDIA A100 datasheet (SXM): NVLink 600 GB/s.
    ("A100 SXM4 80GB", PeerLinkKind::Nvlink, 600.0),
    ("A100 SXM4 40GB", PeerLinkKind::Nvlink, 600.0),
    // NVIDIA GH200 datasheet: NVLink 900 GB/s GPU to GPU (besides C2C to the CPU).
    ("GH200", PeerLinkKind::Nvlink, 900.0),
    // NVIDIA H200 datasheet (SXM): NVLink 900 GB/s.
    ("H200", PeerLinkKind::Nvlink, 900.0),
    // NVIDIA H100 datasheet: NVL pairs through their NVLink bridge 600 GB/s; SXM NVLink 900 GB/s.
    ("H100 NVL", PeerLinkKind::Nvlink, 600.0),
    ("H100 SXM", PeerLinkKind::Nvlink, 900.0),
    // NVIDIA HGX B200 datasheet: NVLink 5, 1.8 TB/s per GPU.
    ("B200", PeerLinkKind::Nvlink, 1800.0),
    // AMD Instinct MI325X / MI300X datasheets: 7 Infinity Fabric links × 128 GB/s = 896 GB/s.
    ("MI325X", PeerLinkKind::InfinityFabric, 896.0),
    ("MI300X", PeerLinkKind::InfinityFabric, 896.0),
    // AMD Instinct MI250X / MI250 datasheets: 8 Infinity Fabric links, 800 GB/s per package; half
    // per GCD (each GCD is one device).
    ("MI250X (one GCD)", PeerLinkKind::InfinityFabric, 400.0),
    ("MI250 (one GCD)", PeerLinkKind::InfinityFabric, 400.0),
];

/// The peer link of a table device: its row of [`PEER_LINKS`], else PCIe at its host link's rate.
fn peer_link_of(name: &str, host: &HostLink) -> PeerLink {
    PEER_LINKS.iter().find(|(n, ..)| *n == name).map_or(
        PeerLink {
            kind: PeerLinkKind::Pcie,
            gbps: if host.kind == LinkKind::Pcie {
                host.gbps
            } else {
                HostLink::pcie(5).gbps
            },
        },
        |(_, kind, both)| PeerLink {
            kind: *kind,
            gbps: both / 2.0,
        },
    )
}

/// The roof a rank's kernels are judged against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceRoof {
    /// `deviceProperties[0].name` as written (`None`: the trace has no device properties).
    pub trace_name: Option<String>,
    /// The table's name of the device the figures are from (`A100 SXM4 80GB`).
    pub device: Option<String>,
    pub source: RoofSource,
    pub peaks: Peaks,
    /// Memory bandwidth, GB/s (0: unknown).
    pub memory_gbps: f64,
    pub host_link: Option<HostLink>,
    /// The link to the GPU's peers in the node (collectives), for devices of the table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_link: Option<PeerLink>,
    /// How an estimate was made, or why there is no roof.
    pub note: String,
}

impl DeviceRoof {
    /// No roof: nothing is judged, figures are still given.
    pub fn unknown(trace_name: Option<String>, note: String) -> DeviceRoof {
        DeviceRoof {
            trace_name,
            device: None,
            source: RoofSource::Unknown,
            peaks: Peaks::default(),
            memory_gbps: 0.0,
            host_link: None,
            peer_link: None,
            note,
        }
    }

    /// Ridge point for an element type: the intensity (FLOP/byte) where compute and memory meet.
    pub fn ridge(&self, d: Dtype) -> Option<f64> {
        let peak = self.peaks.of(d)?;
        (self.memory_gbps > 0.0).then(|| peak * 1e3 / self.memory_gbps)
    }
}

/// One row of the datasheet table.
struct Spec {
    /// The table's name of the device.
    name: &'static str,
    /// Tokens of the lower-cased device name (split at non-alphanumerics) that must all be present.
    tokens: &'static [&'static str],
    /// SM (CU) count; also required to match when the trace gives one and `exact_sms` is set.
    sms: u32,
    exact_sms: bool,
    /// CUDA compute capability, or the gfx major/minor ROCm reports (gfx90a: 9.0, gfx942: 9.4).
    arch: (u8, u8),
    amd: bool,
    boost_mhz: f64,
    peaks: Peaks,
    memory_gbps: f64,
    /// PCIe generation of the host link, 0 for NVLink-C2C.
    pcie: u8,
    /// Variant words ([`VARIANT_MARKS`], memory sizes) the row also accepts in a name beyond its
    /// tokens (`sxm4`, `40gb` for the A100 SXM4 40GB).
    accepts: &'static [&'static str],
}

/// Words of a device name that make it another device than the same model number without them: a
/// laptop part (`Laptop`, `Mobile`, `Max-Q`), a bin (`Ti`, `Super`, `D`), a form factor (SXM,
/// PCIe, NVL). A row matches a name only when it names (or accepts) every one the name has; a
/// memory size (`80GB`) likewise when the row names any size.
const VARIANT_MARKS: [&str; 12] = [
    "laptop", "mobile", "maxq", "ti", "super", "d", "sxm", "sxm2", "sxm4", "sxm5", "pcie", "nvl",
];

/// A memory size in a device name: `80gb`, `144g`.
fn is_memory_size(token: &str) -> bool {
    let digits = token.trim_end_matches("gb").trim_end_matches('g');
    digits.len() < token.len() && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

mod specs;
use specs::SPECS;

/// What `deviceProperties[0]` says about the device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceProps {
    pub name: Option<String>,
    pub sms: Option<u32>,
    pub arch: Option<(u8, u8)>,
    /// `clockRate`, kHz, when given.
    pub clock_khz: Option<f64>,
    pub warp_size: Option<u32>,
}

impl DeviceProps {
    /// From a trace's top-level keys.
    pub fn of(top: &serde_json::Map<String, Value>) -> DeviceProps {
        let first = top
            .get("deviceProperties")
            .and_then(Value::as_array)
            .and_then(|a| a.first());
        let int = |k: &str| first.and_then(|d| d.get(k)).and_then(Value::as_u64);
        DeviceProps {
            name: first
                .and_then(|d| d.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string),
            sms: int("numSms").map(|v| v as u32),
            arch: int("computeMajor")
                .zip(int("computeMinor"))
                .map(|(a, b)| (a as u8, b as u8)),
            clock_khz: first
                .and_then(|d| d.get("clockRate"))
                .and_then(Value::as_f64),
            warp_size: int("warpSize").map(|v| v as u32),
        }
    }

    fn is_amd(&self) -> bool {
        let n = self.name.as_deref().unwrap_or("").to_ascii_lowercase();
        n.contains("amd")
            || n.contains("radeon")
            || n.contains("instinct")
            || self.warp_size == Some(64)
    }
}

/// A GeForce (consumer) card: `NVIDIA GeForce RTX 3060`, or a table row `RTX 3090`.
pub fn is_geforce(name: &str) -> bool {
    let t = tokens(name);
    t.iter().any(|w| w == "geforce")
        || t.windows(2)
            .any(|w| w[0] == "rtx" && w[1].len() == 4 && w[1].bytes().all(|b| b.is_ascii_digit()))
}

/// A laptop part: `Laptop`, `Mobile` or `Max-Q` in its name.
fn is_laptop(name: &str) -> bool {
    tokens(name)
        .iter()
        .any(|t| matches!(t.as_str(), "laptop" | "mobile" | "maxq"))
}

/// The lower-cased words of a device name (`Max-Q` as one word, `maxq`).
fn tokens(name: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in name
        .to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|t| !t.is_empty())
    {
        if t == "q" && out.last().is_some_and(|l| l == "max") {
            out.pop();
            out.push("maxq".to_string());
        } else {
            out.push(t.to_string());
        }
    }
    out
}

/// Whether a row is the device a name (its [`tokens`]) names: every token of the row is in the
/// name, and every variant word of the name ([`VARIANT_MARKS`]; a memory size when the row names
/// one) is the row's or one it accepts: an `RTX 4080 Laptop GPU` is not an RTX 4080, an `H200
/// NVL` not an H200 SXM.
fn names_this_device(s: &Spec, have: &[String]) -> bool {
    let known = |t: &str| s.tokens.contains(&t) || s.accepts.contains(&t);
    let sizes_named = s.tokens.iter().chain(s.accepts).any(|t| is_memory_size(t));
    // A laptop part is named `Laptop`, `Mobile` or `Max-Q`.
    let laptop_word = |h: &String| matches!(h.as_str(), "laptop" | "mobile" | "maxq");
    let has = |t: &str| {
        have.iter()
            .any(|h| h == t || t == "laptop" && laptop_word(h))
    };
    s.tokens.iter().all(|t| has(t))
        && have.iter().all(|h| {
            let variant = VARIANT_MARKS.contains(&h.as_str()) || sizes_named && is_memory_size(h);
            !variant || known(h)
        })
}

fn roof_of(
    s: &Spec,
    trace_name: Option<String>,
    source: RoofSource,
    peaks: Peaks,
    note: String,
) -> DeviceRoof {
    let host = if s.pcie == 0 {
        HostLink::c2c()
    } else {
        HostLink::pcie(s.pcie)
    };
    DeviceRoof {
        trace_name,
        device: Some(s.name.to_string()),
        source,
        peaks,
        memory_gbps: s.memory_gbps,
        peer_link: Some(peer_link_of(s.name, &host)),
        host_link: Some(host),
        note,
    }
}

/// The roof of a device: its datasheet row by name, else an estimate from the nearest row of the same
/// architecture scaled by SM count (and clock when `clockRate` is given), else none.
pub fn device_roof(props: &DeviceProps) -> DeviceRoof {
    if let Some(name) = &props.name {
        let have = tokens(name);
        let by_name = SPECS.iter().find(|s| {
            names_this_device(s, &have) && !(s.exact_sms && props.sms.is_some_and(|n| n != s.sms))
        });
        if let Some(s) = by_name {
            return roof_of(
                s,
                props.name.clone(),
                RoofSource::Datasheet,
                s.peaks,
                String::new(),
            );
        }
    }
    estimate(props).unwrap_or_else(|| {
        DeviceRoof::unknown(
            props.name.clone(),
            match &props.name {
                Some(n) => format!(
                    "device {n:?} is not in the datasheet table and its architecture ({}) matches no row: no roof",
                    props.arch.map_or("not given".to_string(), |(a, b)| format!("{a}.{b}"))
                ),
                None => "the trace has no deviceProperties: no roof".to_string(),
            },
        )
    })
}

/// The estimate from SM count and clock: the row of the same vendor and architecture with the
/// nearest SM count, scaled.
fn estimate(props: &DeviceProps) -> Option<DeviceRoof> {
    let arch = props.arch?;
    let sms = props.sms.filter(|n| *n > 0)?;
    let amd = props.is_amd();
    // A GeForce card is estimated from a GeForce row: its tensor cores run TF32 at the fp32 rate,
    // a data-centre part of the same architecture (A10, L40S) at twice it.
    let geforce = props.name.as_deref().is_some_and(is_geforce);
    // Likewise a laptop part from a laptop row (lower clocks), a desktop part from a desktop one.
    let laptop = props.name.as_deref().is_some_and(is_laptop);
    let s = SPECS
        .iter()
        .filter(|s| s.arch == arch && s.amd == amd)
        .min_by_key(|s| {
            (
                is_geforce(s.name) != geforce,
                is_laptop(s.name) != laptop,
                s.sms.abs_diff(sms),
            )
        })?;
    let clock = props
        .clock_khz
        .filter(|k| *k > 0.0)
        .map(|k| k / 1e3 / s.boost_mhz)
        .unwrap_or(1.0);
    let k = f64::from(sms) / f64::from(s.sms) * clock;
    let mhz = props
        .clock_khz
        .filter(|k| *k > 0.0)
        .map_or(s.boost_mhz, |k| k / 1e3);
    let note = format!(
        "estimated: {:?} is not in the datasheet table; peaks computed as the per-SM rates of compute capability {}.{} (from the {}) × {} SMs × {:.0} MHz{}; memory bandwidth unknown (the trace does not give it), so kernels are judged against the compute peak only",
        props.name.as_deref().unwrap_or("the device"),
        arch.0,
        arch.1,
        s.name,
        sms,
        mhz,
        if props.clock_khz.is_some() {
            " (the trace's clock)"
        } else {
            " (that device's boost clock: the trace gives none)"
        },
    );
    let mut roof = roof_of(
        s,
        props.name.clone(),
        RoofSource::SmCountEstimate,
        s.peaks.scaled(k),
        note,
    );
    // A device not in the table: its memory and links are not known (never another device's);
    // `device` names the row whose per-SM rates were used. The exception is a device of that row's
    // vendor, architecture and exact SM count: that is the row's chip under another name (ROCm
    // names an Instinct GCD "AMD Radeon Graphics"), so its memory and host link are the row's.
    roof.peer_link = None;
    if s.sms == sms {
        roof.note = format!(
            "identified by architecture {}.{} and {} SMs (CUs) as the {}: {:?} is not in the datasheet table by name; peaks scaled by the trace's clock when it gives one, memory bandwidth and host link the {}'s",
            arch.0,
            arch.1,
            sms,
            s.name,
            props.name.as_deref().unwrap_or("the device"),
            s.name
        );
        return Some(roof);
    }
    roof.memory_gbps = 0.0;
    roof.host_link = None;
    Some(roof)
}
