//! Copies judged against the hardware: each kind of copy along each route (host-to-device,
//! device-to-host, peer-to-peer from one GPU to another) at the GB/s its bytes and time give,
//! compared with the link it crosses (the device table's PCIe host link, its NVLink to peers) and
//! with the other routes of its kind: a peer route far slower than the fastest has no direct path;
//! pinned copies far under the link point at the slot or NUMA placement; pageable copies are
//! staged; small copies are latency.

use crate::analysis::names::{copy_kind, copy_words, CopyDirection, HostMemory};
use crate::report::inputs::{CopyRoute, DiagnosisInputs};
use crate::report::rich_text::{code, name, NameKind, RichText};
use crate::report::wording::count;
use crate::rich;

/// A route is judged only when its copies moved at least this much in all (bytes).
pub const JUDGED_BYTES: i64 = 1 << 20;
/// A peer route at most this fraction of the fastest peer route's GB/s has no direct path.
pub const SLOW_ROUTE_FRACTION: f64 = 0.25;
/// Pinned host copies under this share (%) of the host link are slow for the link.
pub const LOW_LINK_PCT: f64 = 50.0;
/// Copies moving on average under this many bytes are latency-bound.
pub const LATENCY_BYTES: i64 = 64 * 1024;

/// One route's achieved rate, GB/s (bytes per ns).
pub fn gbps(r: &CopyRoute) -> f64 {
    if r.ns <= 0 {
        0.0
    } else {
        r.bytes as f64 / r.ns as f64
    }
}

/// The route in words, capitalised to open a sentence.
fn route_opening(r: &CopyRoute) -> RichText {
    route_words(r).capitalised()
}

/// The route in words: "peer-to-peer copy GPU 0 → GPU 2".
fn route_words(r: &CopyRoute) -> RichText {
    let what =
        copy_words(&r.name).map_or_else(|| rich!(name(NameKind::Copy, &r.name)), RichText::from);
    match (r.from, r.to) {
        (Some(a), Some(b)) if a != b => rich!(what, format!(" GPU {a} → GPU {b}")),
        _ => what,
    }
}

/// What the copies achieve against their links and each other, one sentence per judged route
/// (most time first), then what follows from it; empty when no route moved enough bytes.
pub fn copy_speed(i: &DiagnosisInputs) -> (Vec<RichText>, Vec<RichText>) {
    let judged: Vec<&CopyRoute> = i
        .copy_routes
        .iter()
        .filter(|r| r.bytes >= JUDGED_BYTES && r.ns > 0)
        .collect();
    let mut said = Vec::new();
    let mut actions = Vec::new();
    let fastest_peer = judged
        .iter()
        .filter(|r| kind(r) == Some(CopyDirection::PeerToPeer))
        .map(|r| gbps(r))
        .fold(0.0_f64, f64::max);
    for r in judged.iter().take(6) {
        let rate = gbps(r);
        let mean = r.bytes / r.count.max(1) as i64;
        let mut s = rich!(
            route_words(r),
            format!(
                ": {}, {} at {rate:.1} GB/s",
                count(r.count, "copy"),
                bytes_words(r.bytes)
            )
        );
        if let Some((label, link)) = link_of(i, r) {
            s.push(format!(
                " ({:.0}% of {label})",
                100.0 * rate / link.max(f64::MIN_POSITIVE)
            ));
        }
        said.push(s);
        if let Some(a) = verdict(i, r, rate, mean, fastest_peer) {
            if !actions.contains(&a) {
                actions.push(a);
            }
        }
    }
    (said, actions)
}

fn kind(r: &CopyRoute) -> Option<CopyDirection> {
    copy_kind(&r.name).map(|k| k.0)
}

/// The link a route crosses and its GB/s per direction, when the device is in the table.
fn link_of(i: &DiagnosisInputs, r: &CopyRoute) -> Option<(String, f64)> {
    match kind(r)? {
        CopyDirection::HostToDevice | CopyDirection::DeviceToHost => {
            let l = i.roofline.host_link.as_ref()?;
            Some((l.label(), l.gbps))
        }
        CopyDirection::PeerToPeer => {
            let l = i.roofline.peer_link.as_ref()?;
            Some((l.label(), l.gbps))
        }
        CopyDirection::DeviceToDevice => None,
    }
}

/// What one route's rate says, if anything.
fn verdict(
    i: &DiagnosisInputs,
    r: &CopyRoute,
    rate: f64,
    mean: i64,
    fastest_peer: f64,
) -> Option<RichText> {
    let (dir, memory) = copy_kind(&r.name)?;
    if mean < LATENCY_BYTES {
        return Some(rich!(
            route_opening(r),
            format!(
                " moves {} per copy on average: at that size a copy costs its fixed latency (a few µs), not bandwidth; batch the transfers into fewer, larger ones.",
                bytes_words(mean)
            )
        ));
    }
    if dir == CopyDirection::PeerToPeer && rate <= SLOW_ROUTE_FRACTION * fastest_peer {
        return Some(rich!(route_opening(r), format!(" runs at {rate:.1} GB/s against {fastest_peer:.1} GB/s on the fastest peer route: that pair of GPUs has no direct peer-to-peer path (the copy is staged through host memory). Check the topology with "), code("nvidia-smi topo -m"), " and ", code("torch.cuda.can_device_access_peer"), ", and place the ranks that exchange data on GPUs linked by NVLink or one PCIe switch."));
    }
    if memory == Some(HostMemory::Pageable) {
        // The memory rule's pageable advice covers it; its rate is in the achieved rates.
        return None;
    }
    let (label, link) = link_of(i, r)?;
    let host = matches!(
        dir,
        CopyDirection::HostToDevice | CopyDirection::DeviceToHost
    );
    (host && 100.0 * rate / link < LOW_LINK_PCT).then(|| rich!(route_opening(r), format!(" reaches {rate:.1} GB/s, {:.0}% of {label}: check the slot's PCIe generation and width (", 100.0 * rate / link), code("nvidia-smi -q"), ", \"GPU Link Info\"), that the host buffer sits on the GPU's NUMA node (", code("numactl"), "), and that copies in both directions do not share the link at once."))
}

/// Bytes in words: "40.0 MB", "1.20 GB", "512 KiB".
fn bytes_words(b: i64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else {
        format!("{:.0} KiB", b / 1024.0)
    }
}
