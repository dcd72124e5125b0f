//! Which rows the critical path reads, with their times, streams and correlation partners in the
//! mode's terms, and what it needs to know about each distinct name.

use super::super::gpu::{
    hta_kernel_type, hta_span, is_collective_name, is_launch_call, KernelType,
};
use super::super::names::{is_hta_blocking_call, is_hta_queue_launch_call, waits_for_device};
use super::super::step_filter::{hta_last_step_keep, is_hta_device_row};
use crate::table::{EventKind, TraceTable};

// What the path needs to know about a name, worked out once per distinct name (the tests are text
// comparisons, too slow to repeat per row).
/// A blocking call: its exit edge counts zero unless nothing explains the wait.
pub const F_BLOCKING: u8 = 1;
/// A call that waits for the device (synchronize, blocking copy).
pub const F_WAITS_DEVICE: u8 = 2;
/// A launch call, in the mode's list.
pub const F_LAUNCH: u8 = 4;
/// A launch call in HTA's list (its queue length).
pub const F_HTA_LAUNCH: u8 = 8;
pub const F_EVENT_RECORD: u8 = 16;
pub const F_STREAM_WAIT_CALL: u8 = 32;
pub const F_DATA_LOADING: u8 = 64;
/// A communication kernel, by the mode's name patterns.
pub const F_COMM: u8 = 128;

fn is_data_loading(name: &str) -> bool {
    name.contains("DataLoader") || name.contains("dataloader")
}

/// The flags of one name in the mode's terms.
fn flags_of(name: &str, compat: bool) -> u8 {
    let launch = if compat {
        is_hta_queue_launch_call(name)
    } else {
        is_launch_call(name)
    };
    let comm = if compat {
        hta_kernel_type(name) == KernelType::Communication
    } else {
        is_collective_name(name)
    };
    [
        (
            F_BLOCKING,
            is_hta_blocking_call(name) || (!compat && waits_for_device(name)),
        ),
        (F_WAITS_DEVICE, waits_for_device(name)),
        (F_LAUNCH, launch),
        (F_HTA_LAUNCH, is_hta_queue_launch_call(name)),
        (F_EVENT_RECORD, name == "cudaEventRecord"),
        (F_STREAM_WAIT_CALL, name == "cudaStreamWaitEvent"),
        (F_DATA_LOADING, is_data_loading(name)),
        (F_COMM, comm),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .fold(0, |f, (bit, _)| f | bit)
}

/// Per-row view of the trace in the mode's terms.
pub struct Rows<'a> {
    pub t: &'a TraceTable,
    pub compat: bool,
    /// Row is in the (filtered) data frame.
    pub sel: Vec<bool>,
    pub ts: Vec<i64>,
    pub end: Vec<i64>,
    pub stream: Vec<i64>,
    /// Device-side row (GPU op or sync event).
    pub gpu: Vec<bool>,
    /// Partner by correlation: HTA's `index_correlation` (-1 none, 0 unmatched GPU-side, else row);
    /// exact mode: -1 or the partner row.
    pub ic: Vec<i64>,
    /// Data-frame order (HTA-compat after its step filter: GPU rows first, then CPU rows).
    pub df_order: Vec<u32>,
    /// Name flags (`F_*`) per name id.
    flags: Vec<u8>,
}

impl Rows<'_> {
    /// Whether row `row`'s name has flag `f`.
    pub fn has(&self, row: usize, f: u8) -> bool {
        self.flags[self.t.name_id(row) as usize] & f != 0
    }

    pub fn dur(&self, i: usize) -> i64 {
        self.end[i] - self.ts[i]
    }

    /// A CPU-side row: HTA-compat by `args.stream` (-1), exact by kind.
    pub fn cpu_side(&self, i: usize) -> bool {
        if self.compat {
            self.stream[i] == -1
        } else {
            !self.gpu[i]
        }
    }

    /// The row's correlation partner, when it is in the frame (HTA's index 0 reads as none).
    pub fn partner(&self, i: usize) -> Option<usize> {
        let c = self.ic[i];
        let c = usize::try_from(c).ok().filter(|&c| c > 0 || !self.compat)?;
        (c < self.sel.len() && self.sel[c]).then_some(c)
    }

    /// A cuda_sync row (by category HTA-compat, by kind exact).
    pub fn is_sync_row(&self, i: usize) -> bool {
        if self.compat {
            self.t.category_at(i) == Some("cuda_sync")
        } else {
            self.t.kind_at(i) == EventKind::Sync
        }
    }
}

/// An `i64` arg of a row.
pub fn arg_i64(t: &TraceTable, key: &str, row: usize) -> Option<i64> {
    let c = t.arg(key)?;
    c.i64_at(c.find(row)?)
}

/// The rows of the mode's frame (HTA-compat: after its last-ProfilerStep filter), their times,
/// streams and correlation partners.
pub fn build_rows(t: &TraceTable, compat: bool) -> Rows<'_> {
    let n = t.len();
    let dict = t.name_dictionary();
    let mut r = Rows {
        t,
        compat,
        sel: vec![false; n],
        ts: vec![0; n],
        end: vec![0; n],
        stream: vec![-1; n],
        gpu: vec![false; n],
        ic: vec![-1; n],
        df_order: Vec::new(),
        flags: (0..dict.len())
            .map(|i| flags_of(dict.value(i), compat))
            .collect(),
    };
    for i in 0..n {
        select_row(&mut r, i);
    }
    if compat {
        hta_partners(&mut r);
        // HTA's last-ProfilerStep filter; its frame then lists GPU rows first.
        if let Some(keep) = hta_last_step_keep(t, &r.sel, &r.gpu, &r.ts) {
            r.sel = keep;
            let (sel, gpu) = (&r.sel, &r.gpu);
            r.df_order = (0..n as u32)
                .filter(|&i| sel[i as usize] && gpu[i as usize])
                .chain((0..n as u32).filter(|&i| sel[i as usize] && !gpu[i as usize]))
                .collect();
        }
    } else {
        exact_partners(&mut r);
    }
    if r.df_order.is_empty() {
        r.df_order = (0..n as u32).filter(|&i| r.sel[i as usize]).collect();
    }
    r
}

/// Whether row `i` is in the frame, and its times, stream and side.
fn select_row(r: &mut Rows, i: usize) {
    let t = r.t;
    let k = t.kind_at(i);
    let (Some(ts), Some(dur)) = (t.ts_at(i), t.raw_dur_at(i)) else {
        return;
    };
    if r.compat {
        if t.category_id_at(i).is_none() || k == EventKind::Trace {
            return;
        }
        (r.ts[i], r.end[i]) = hta_span(t, i).unwrap_or((ts, ts + dur));
        r.stream[i] = t.args_stream_at(i).unwrap_or(-1);
        r.gpu[i] = is_hta_device_row(t, i);
        r.ic[i] = t.correlation_at(i).map_or(-1, |c| c.min(0));
    } else {
        if matches!(
            k,
            EventKind::Trace
                | EventKind::Metadata
                | EventKind::Counter
                | EventKind::Flow
                | EventKind::Instant
        ) {
            return;
        }
        r.ts[i] = ts;
        r.end[i] = ts + dur.max(0);
        r.gpu[i] = k.is_gpu_activity() || k == EventKind::Sync;
        r.stream[i] = if k.is_gpu_activity() {
            t.stream_at(i).unwrap_or(0).max(0)
        } else if k == EventKind::Sync {
            t.stream_at(i).unwrap_or(-1)
        } else {
            -1
        };
    }
    r.sel[i] = true;
}

/// (correlation id, row) pairs.
type ByCorrelation = Vec<(i64, u32)>;

/// Rows of the frame with a correlation id, split into (CPU side, GPU side).
fn correlated(r: &Rows) -> (ByCorrelation, ByCorrelation) {
    let t = r.t;
    let mut cpu: Vec<(i64, u32)> = Vec::new();
    let mut gpu: Vec<(i64, u32)> = Vec::new();
    for i in (0..t.len()).filter(|&i| r.sel[i]) {
        let Some(c) = t.correlation_at(i).filter(|&c| c != -1) else {
            continue;
        };
        if r.gpu[i] {
            gpu.push((c, i as u32));
        } else if r.compat || matches!(t.kind_at(i), EventKind::Runtime | EventKind::Driver) {
            cpu.push((c, i as u32));
        }
    }
    // Adaptive sort: correlation ids mostly rise in file order.
    gpu.sort();
    (cpu, gpu)
}

/// HTA's pandas merge (left = CPU rows in file order): every pair assigned, the last one wins.
fn hta_partners(r: &mut Rows) {
    let (cpu, gpu) = correlated(r);
    for &(c, x) in &cpu {
        let lo = gpu.partition_point(|g| g.0 < c);
        for &(gc, y) in &gpu[lo..] {
            if gc != c {
                break;
            }
            r.ic[x as usize] = y as i64;
            r.ic[y as usize] = x as i64;
        }
    }
}

/// Exact partners: runtime calls preferred over driver calls, then the first in file order.
fn exact_partners(r: &mut Rows) {
    let t = r.t;
    let (mut cpu, gpu) = correlated(r);
    let rank = |x: u32| u8::from(t.kind_at(x as usize) != EventKind::Runtime);
    cpu.sort_by_key(|&(c, x)| (c, rank(x), x));
    for &(c, y) in &gpu {
        let lo = cpu.partition_point(|p| p.0 < c);
        if lo < cpu.len() && cpu[lo].0 == c {
            let x = cpu[lo].1;
            r.ic[y as usize] = x as i64;
            if r.ic[x as usize] < 0 {
                r.ic[x as usize] = y as i64;
            }
        }
    }
}
