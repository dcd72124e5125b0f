//! Memory copies and sets: exposed on the critical path, pageable host memory, many small copies.

use super::{top_evidence, Draft, MANY_SMALL_COPIES, MEMORY_EXPOSED_PCT, PAGEABLE_PCT};
use crate::report::findings::{Finding, FindingId};
use crate::report::inputs::DiagnosisInputs;
use crate::report::rich_text::{code, name, NameKind, RichText};
use crate::report::wording::{count, dur};
use crate::rich;

/// Copies and sets with no kernel running, pageable host copies, or many small copies.
pub fn memory_traffic(i: &DiagnosisInputs) -> Option<Finding> {
    let t = &i.time;
    if t.window_ns <= 0 || i.copies.is_empty() {
        return None;
    }
    let pageable: Vec<&crate::report::inputs::CopyFigure> =
        i.copies.iter().filter(|c| c.pageable).collect();
    let pageable_ns: i64 = pageable.iter().map(|c| c.total_ns).sum();
    let pageable_n: u64 = pageable.iter().map(|c| c.count).sum();
    let copies_n: u64 = i
        .copies
        .iter()
        .filter(|c| c.name.starts_with("Memcpy"))
        .map(|c| c.count)
        .sum();
    let small_n: u64 = i.copies.iter().map(|c| c.small_count).sum();
    let exposed_pct = t.pct(t.memory_exposed_ns);
    let pageable_pct = t.pct(pageable_ns);
    let many_small = copies_n >= MANY_SMALL_COPIES && 2 * small_n >= copies_n;
    if exposed_pct < MEMORY_EXPOSED_PCT && pageable_pct < PAGEABLE_PCT && !many_small {
        return None;
    }
    let mut actions = Vec::new();
    if pageable_n > 0 && pageable_pct >= PAGEABLE_PCT {
        actions.push(rich!(
            format!(
                "{} use pageable host memory ({}: {}): use pinned memory (",
                count(pageable_n, "copy"),
                dur(pageable_ns),
                pageable_kinds(&pageable)
            ),
            code("DataLoader(pin_memory=True)"),
            ", ",
            code("tensor.pin_memory()"),
            ") and ",
            code(".to(device, non_blocking=True)"),
            "; a pageable copy is staged through a driver buffer and blocks the host."
        ));
    }
    if many_small {
        actions.push(rich!(format!("{small_n} of {} move < 64 KiB: batch them into one tensor, create tensors on the device (", count(copies_n, "copy")), code("torch.zeros(..., device=\"cuda\")"), "), avoid per-element ", code(".item()"), "/", code(".cpu()"), "."));
    }
    let (speeds, speed_actions) = super::copy_speed::copy_speed(i);
    actions.extend(speed_actions);
    let top = &i.copies[0];
    actions.push(rich!("The largest is ", name(NameKind::Copy, &top.name), format!(" ({}, {}): check which op issues it (Explore events) and whether the data can stay on the device.", count(top.count, "call"), dur(top.total_ns))));
    let ns = t.memory_exposed_ns.max(pageable_ns.min(t.memory_ns));
    Some(Draft {
        id: FindingId::MemoryTraffic,
        headline: rich!(
            format!(
                "Memory copies and sets with no kernel running take {exposed_pct:.1}% of the GPU window ({} of {})",
                dur(t.memory_exposed_ns),
                dur(t.window_ns),
            ),
            speeds.first().map(|s| rich!("; ", s)),
            "."
        ),
        title: "Memory copies on the critical path".into(),
        threshold: format!("copies/sets with no kernel running ≥ {MEMORY_EXPOSED_PCT:.0}% of the window, or pageable copies ≥ {PAGEABLE_PCT:.0}%, or ≥ {MANY_SMALL_COPIES} copies mostly < 64 KiB").into(),
        measured: format!(
            "copies/sets {} ({} with no kernel running); {}; {small_n} of {} < 64 KiB",
            dur(t.memory_ns),
            dur(t.memory_exposed_ns),
            count(pageable_n, "pageable copy"),
            count(copies_n, "copy")
        ).into(),
        value: exposed_pct,
        time_ns: ns,
        explanation: rich!(
            format!(
                "Copies and sets keep the GPU busy {} and {} of it runs with no kernel alongside.",
                dur(t.memory_ns),
                dur(t.memory_exposed_ns),
            ),
            (!speeds.is_empty()).then(|| rich!(" Achieved rates: ", RichText::join(speeds.iter().cloned(), "; "), "."))
        ),
        actions,
        evidence: top_evidence(i.copies.iter().flat_map(|c| c.evidence.iter().cloned()), 5),
    }
    .finish(i))
}

/// The pageable copies by direction: "12 host-to-device, 3 device-to-host".
fn pageable_kinds(pageable: &[&crate::report::inputs::CopyFigure]) -> String {
    use crate::analysis::names::{copy_kind, CopyDirection};
    let count = |d: CopyDirection| -> u64 {
        pageable
            .iter()
            .filter(|c| copy_kind(&c.name).map(|k| k.0) == Some(d))
            .map(|c| c.count)
            .sum()
    };
    let parts: Vec<String> = [
        (CopyDirection::HostToDevice, "host-to-device"),
        (CopyDirection::DeviceToHost, "device-to-host"),
    ]
    .iter()
    .filter(|(d, _)| count(*d) > 0)
    .map(|(d, w)| format!("{} {w}", count(*d)))
    .collect();
    if parts.is_empty() {
        "direction not named".into()
    } else {
        parts.join(", ")
    }
}
