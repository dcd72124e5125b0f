//! Copies judged against the hardware (traces built in code): each kind and route of copy at the
//! GB/s its bytes and time give, against the device's PCIe host link and the other routes of its
//! kind: a peer route far slower than the fastest is named as having no direct path, pinned host
//! copies far under the link are named with the link, small copies are latency.

use crate::common::TraceBuilder;
use profile_model::report::diagnosis::{diagnose, DiagnosisReport};
use profile_model::report::findings::{Finding, FindingId};
use profile_model::table::TraceSet;
use serde_json::json;

const PTOP: &str = "Memcpy PtoP (Device -> Device)";
const HTOD_PINNED: &str = "Memcpy HtoD (Pinned -> Device)";
const MB40: i64 = 40_000_000;

fn memory(r: &DiagnosisReport) -> &Finding {
    r.findings
        .iter()
        .find(|f| f.id == FindingId::MemoryTraffic)
        .unwrap_or_else(|| panic!("no copy finding: {:#?}", r.findings))
}

/// `n` peer copies of 40 MB from GPU 0 to each `(to, µs per copy)`, back to back.
fn peer_copies(routes: &[(i64, f64)], n: usize) -> TraceBuilder {
    let mut b = TraceBuilder::new();
    let mut t = 100.0;
    for (to, us) in routes {
        for _ in 0..n {
            b.memcpy_args(
                PTOP,
                MB40,
                20 + to,
                t - 10.0,
                t,
                *us,
                json!({"fromDevice": 0, "toDevice": to}),
            );
            t += us + 5.0;
        }
    }
    b
}

#[test]
fn a_peer_route_far_slower_than_the_others_is_named_as_having_no_direct_path() {
    // GPU 0 → 1 at 40 MB / 450 µs = 88.9 GB/s; GPU 0 → 2 at 40 MB / 5333 µs = 7.5 GB/s.
    let r = diagnose(&TraceSet::single(
        peer_copies(&[(1, 450.0), (2, 5333.0)], 10).table("p2p.json"),
    ));
    let f = memory(&r);
    let words = format!(
        "{} {} {}",
        f.headline,
        f.explanation,
        f.actions_markdown(" ")
    );
    let slow = 40e6 / 5333e3;
    let fast = 40e6 / 450e3;
    assert!(
        words.contains(&format!(
            "GPU 0 → GPU 2: 10 copies, 400.0 MB at {slow:.1} GB/s"
        )),
        "{words}"
    );
    assert!(
        words.contains(&format!(
            "GPU 0 → GPU 1: 10 copies, 400.0 MB at {fast:.1} GB/s"
        )),
        "{words}"
    );
    let path: Vec<&profile_model::report::rich_text::RichText> = f
        .actions
        .iter()
        .filter(|a| a.contains("no direct peer-to-peer path"))
        .collect();
    assert_eq!(path.len(), 1, "{:#?}", f.actions);
    assert!(path[0].contains("GPU 0 → GPU 2"), "{}", path[0]);
    // The slowest route leads the headline: it holds most of the copy time.
    assert!(f.headline.contains("GPU 0 → GPU 2"), "{}", f.headline);
}

#[test]
fn routes_of_equal_speed_are_not_called_slow() {
    let r = diagnose(&TraceSet::single(
        peer_copies(&[(1, 450.0), (2, 470.0)], 10).table("p2p.json"),
    ));
    let f = memory(&r);
    assert!(
        !f.actions.iter().any(|a| a.contains("no direct")),
        "{:#?}",
        f.actions
    );
}

#[test]
fn pinned_host_copies_far_under_the_pcie_link_are_judged_against_it() {
    // An A100 SXM4 (the builder's device): PCIe 4.0 x16, 31.5 GB/s per direction. 100 MB pinned
    // copies in 20 ms: 5.0 GB/s, 16% of the link.
    let mut b = TraceBuilder::new();
    for k in 0..10 {
        let t = 100.0 + k as f64 * 20_100.0;
        b.memcpy(HTOD_PINNED, 100_000_000, 7, t - 10.0, 5.0, t, 20_000.0);
    }
    let r = diagnose(&TraceSet::single(b.table("h2d.json")));
    let f = memory(&r);
    let pct = 100.0 * 5.0 / 31.5;
    let link: Vec<&profile_model::report::rich_text::RichText> = f
        .actions
        .iter()
        .filter(|a| a.contains("PCIe generation"))
        .collect();
    assert_eq!(link.len(), 1, "{:#?}", f.actions);
    assert!(
        link[0].contains(&format!("5.0 GB/s, {pct:.0}% of PCIe 4.0 x16")),
        "{}",
        link[0]
    );
}

#[test]
fn small_copies_are_called_latency_not_bandwidth() {
    let mut b = TraceBuilder::new();
    for k in 0..400 {
        let t = 100.0 + k as f64 * 20.0;
        b.memcpy(HTOD_PINNED, 8_192, 7, t - 10.0, 5.0, t, 4.0);
    }
    let r = diagnose(&TraceSet::single(b.table("small.json")));
    let f = memory(&r);
    // 400 × 8 KiB = 3.3 MB moved in all: judged, and found latency-bound.
    assert!(
        f.actions.iter().any(|a| a.contains("fixed latency")),
        "{:#?}",
        f.actions
    );
    assert!(
        !f.actions.iter().any(|a| a.contains("PCIe generation")),
        "{:#?}",
        f.actions
    );
}
