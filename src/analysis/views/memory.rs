//! Memory (TensorBoard's memory view), from the `[memory]` events `profile_memory=True` writes:
//! allocated and reserved bytes over time per device, the peak, and the allocations alive at the
//! peak with the operator that made each.
//!
//! Each event carries the device's totals after it (`Total Allocated`, `Total Reserved`), the
//! change (`Bytes`: positive for an allocation, negative for a free) and the block's `Addr`. The
//! allocations alive at the peak are those the trace saw made and not yet freed; blocks made before
//! profiling started are counted in `allocated_before_trace_bytes`.
//!
//! Over chosen steps ([`HostOps::window`]) the curve, the peak and the event count are those of
//! the events in the window; the blocks alive at its peak are still read from every event before
//! it (a block made before the window and not freed is alive in it).

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

use super::HostOps;
use crate::table::{EventKind, TraceTable};

/// Most points of a curve; longer curves keep each bucket's first, lowest and highest point.
pub const MAX_CURVE_POINTS: usize = 4000;

/// One point of a memory curve.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryPoint {
    pub ts_us: f64,
    pub allocated_bytes: i64,
    pub reserved_bytes: Option<i64>,
}

/// A block alive at the peak.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveAllocation {
    pub addr: i64,
    pub bytes: i64,
    pub ts_us: f64,
    /// The innermost CPU operator around the allocation, on its thread.
    pub operator: Option<String>,
}

/// One device's memory.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceMemory {
    /// "GPU 0", "CPU", ... from `Device Type` (0 = CPU) and `Device Id`.
    pub device: String,
    pub device_type: i64,
    pub device_id: i64,
    pub events: u64,
    pub curve: Vec<MemoryPoint>,
    pub peak_allocated_bytes: i64,
    pub peak_ts_us: f64,
    pub peak_reserved_bytes: Option<i64>,
    /// Largest first (at most 50).
    pub alive_at_peak: Vec<LiveAllocation>,
    /// Σ bytes of all the blocks alive at the peak that the trace saw allocated.
    pub alive_at_peak_bytes: i64,
    /// The peak minus those: blocks allocated before the trace began.
    pub allocated_before_trace_bytes: i64,
}

/// The memory of one rank.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryResult {
    pub devices: Vec<DeviceMemory>,
    /// How to record memory, when the trace has no `[memory]` events.
    pub note: String,
}

/// How many blocks alive at the peak are listed.
pub const MAX_LIVE_LISTED: usize = 50;

/// A `[memory]` event read from the table.
struct Event {
    row: usize,
    ts: i64,
    bytes: i64,
    addr: Option<i64>,
    allocated: i64,
    reserved: Option<i64>,
}

fn int(t: &TraceTable, key: &str, r: usize) -> Option<i64> {
    let c = t.arg(key)?;
    c.i64_at(c.find(r)?)
}

/// The `[memory]` events per (device type, device id), in time order.
fn events(t: &TraceTable) -> BTreeMap<(i64, i64), Vec<Event>> {
    let mut out: BTreeMap<(i64, i64), Vec<Event>> = BTreeMap::new();
    for r in 0..t.len() {
        if t.name_at(r) != "[memory]" || t.kind_at(r) == EventKind::Metadata {
            continue;
        }
        let (Some(ts), Some(allocated)) = (t.ts_at(r), int(t, "Total Allocated", r)) else {
            continue;
        };
        let device = (
            int(t, "Device Type", r).unwrap_or(-1),
            int(t, "Device Id", r).unwrap_or(-1),
        );
        out.entry(device).or_default().push(Event {
            row: r,
            ts,
            bytes: int(t, "Bytes", r).unwrap_or(0),
            addr: int(t, "Addr", r),
            allocated,
            reserved: int(t, "Total Reserved", r),
        });
    }
    for v in out.values_mut() {
        crate::sort::sort_by_key(v, |e| (e.ts, e.row));
    }
    out
}

fn point(e: &Event) -> MemoryPoint {
    MemoryPoint {
        ts_us: e.ts as f64 / 1000.0,
        allocated_bytes: e.allocated,
        reserved_bytes: e.reserved,
    }
}

/// The curve, at most [`MAX_CURVE_POINTS`]: per bucket of events, the first, lowest and highest.
fn curve(ev: &[Event]) -> Vec<MemoryPoint> {
    if ev.len() <= MAX_CURVE_POINTS {
        return ev.iter().map(point).collect();
    }
    let per = ev.len().div_ceil(MAX_CURVE_POINTS / 3);
    let mut out = Vec::new();
    for chunk in ev.chunks(per) {
        let lo = chunk.iter().min_by_key(|e| e.allocated).map(point);
        let hi = chunk.iter().max_by_key(|e| e.allocated).map(point);
        let mut pts: Vec<MemoryPoint> = [Some(point(&chunk[0])), lo, hi]
            .into_iter()
            .flatten()
            .collect();
        crate::sort::sort_by(&mut pts, |a, b| a.ts_us.total_cmp(&b.ts_us));
        pts.dedup();
        out.extend(pts);
    }
    out
}

/// The innermost CPU operator around an instant on its thread (the op whose span holds it).
fn operator_at(
    t: &TraceTable,
    h: &HostOps,
    by_thread: &HashMap<(&str, &str), Vec<usize>>,
    r: usize,
    ts: i64,
) -> Option<String> {
    let ops = by_thread.get(&(t.pid_at(r), t.tid_at(r)))?;
    let i = ops.partition_point(|&o| h.frame.ts[o] <= ts);
    ops[..i]
        .iter()
        .rev()
        .filter(|&&o| h.frame.end[o] > ts || (h.frame.end[o] == ts && h.frame.ts[o] == ts))
        .min_by_key(|&&o| h.frame.end[o] - h.frame.ts[o])
        .map(|&o| t.name_at(o).to_string())
}

fn device_memory(
    t: &TraceTable,
    h: &HostOps,
    ops: &HashMap<(&str, &str), Vec<usize>>,
    (ty, id): (i64, i64),
    ev: &[Event],
    shown: std::ops::Range<usize>,
) -> DeviceMemory {
    let peak_i = shown
        .clone()
        .max_by(|&a, &b| ev[a].allocated.cmp(&ev[b].allocated).then(b.cmp(&a)))
        .unwrap_or(0);
    let peak = &ev[peak_i];
    let mut live: HashMap<i64, usize> = HashMap::new();
    for (i, e) in ev[..=peak_i].iter().enumerate() {
        let Some(addr) = e.addr else { continue };
        if e.bytes > 0 {
            live.insert(addr, i);
        } else if e.bytes < 0 {
            live.remove(&addr);
        }
    }
    let mut alive: Vec<&Event> = live.values().map(|&i| &ev[i]).collect();
    crate::sort::sort_by(&mut alive, |a, b| {
        b.bytes.cmp(&a.bytes).then(a.ts.cmp(&b.ts))
    });
    let alive_bytes: i64 = alive.iter().map(|e| e.bytes).sum();
    let listed = alive
        .iter()
        .take(MAX_LIVE_LISTED)
        .map(|e| LiveAllocation {
            addr: e.addr.unwrap_or(0),
            bytes: e.bytes,
            ts_us: e.ts as f64 / 1000.0,
            operator: operator_at(t, h, ops, e.row, e.ts),
        })
        .collect();
    DeviceMemory {
        device: if ty == 0 {
            "CPU".into()
        } else {
            format!("GPU {id}")
        },
        device_type: ty,
        device_id: id,
        events: shown.len() as u64,
        curve: curve(&ev[shown.clone()]),
        peak_allocated_bytes: peak.allocated,
        peak_ts_us: peak.ts as f64 / 1000.0,
        peak_reserved_bytes: ev[shown].iter().filter_map(|e| e.reserved).max(),
        alive_at_peak: listed,
        alive_at_peak_bytes: alive_bytes,
        allocated_before_trace_bytes: peak.allocated - alive_bytes,
    }
}

/// The memory of one table.
pub fn memory(t: &TraceTable) -> MemoryResult {
    memory_in(t, None)
}

/// The memory of one table, with its call stacks when they are built already.
pub fn memory_in(t: &TraceTable, built: Option<&HostOps>) -> MemoryResult {
    let by_device = events(t);
    if by_device.is_empty() {
        return MemoryResult {
            devices: Vec::new(),
            note: "the trace has no [memory] events: record with torch.profiler.profile(profile_memory=True, record_shapes=True) to see allocations".into(),
        };
    }
    let own;
    let h = match built {
        Some(h) => h,
        None => {
            own = HostOps::new(t);
            &own
        }
    };
    let mut ops: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for r in (0..t.len()).filter(|&r| h.op_of[r] == r as u32) {
        ops.entry((t.pid_at(r), t.tid_at(r))).or_default().push(r);
    }
    for v in ops.values_mut() {
        crate::sort::sort_by_key(v, |&o| (h.frame.ts[o], o));
    }
    let devices: Vec<DeviceMemory> = by_device
        .iter()
        .filter_map(|(&d, ev)| {
            let shown = in_window(ev, h.window);
            (!shown.is_empty()).then(|| device_memory(t, h, &ops, d, ev, shown))
        })
        .collect();
    let note = if devices.is_empty() {
        "no [memory] event falls in the chosen steps".into()
    } else {
        String::new()
    };
    MemoryResult { devices, note }
}

/// The events (in time order) that start in `window` (`None`: all of them).
fn in_window(ev: &[Event], window: Option<(i64, i64)>) -> std::ops::Range<usize> {
    match window {
        None => 0..ev.len(),
        Some((start, end)) => {
            ev.partition_point(|e| e.ts < start)..ev.partition_point(|e| e.ts < end)
        }
    }
}
