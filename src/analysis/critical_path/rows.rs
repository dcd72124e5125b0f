//! Which rows the critical path reads, with their times, streams and correlation partners in the
//! mode's terms, and what it needs to know about each distinct name.

use super::super::frame::Frame;
use super::super::names::{NameClass, NameClasses};
use crate::table::{EventKind, TraceTable};

// What the path needs to know about a name, in the mode's terms, from its [`NameClass`].
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

/// The flags of one name's classes in the mode's terms.
fn flags_of(c: NameClass, compat: bool) -> u8 {
    let comm = if compat {
        NameClass::HTA_COLLECTIVE
    } else {
        NameClass::COLLECTIVE
    };
    [
        (
            F_BLOCKING,
            c.has(NameClass::HTA_BLOCKING) || (!compat && c.has(NameClass::WAITS_FOR_DEVICE)),
        ),
        (F_WAITS_DEVICE, c.has(NameClass::WAITS_FOR_DEVICE)),
        (F_LAUNCH, c.launches(compat)),
        (F_HTA_LAUNCH, c.has(NameClass::HTA_QUEUE_LAUNCH)),
        (F_EVENT_RECORD, c.has(NameClass::EVENT_RECORD)),
        (F_STREAM_WAIT_CALL, c.has(NameClass::STREAM_WAIT)),
        (F_DATA_LOADING, c.has(NameClass::DATA_LOADER)),
        (F_COMM, c.has(comm)),
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

/// The rows of the rank's frame (after the analysed window: HTA-compat its last-ProfilerStep
/// filter), their times, streams and correlation partners. HTA pairs rows before its filter, so
/// partners are found among all members.
pub fn build_rows<'a>(t: &'a TraceTable, frame: Frame, classes: &NameClasses) -> Rows<'a> {
    let n = t.len();
    let compat = frame.mode == super::Mode::HtaCompat;
    let flags = (0..t.name_dictionary().len() as u32)
        .map(|id| flags_of(classes.of_name(id), compat))
        .collect();
    let mut r = Rows {
        t,
        compat,
        sel: frame.member.clone(),
        ts: frame.ts.clone(),
        end: frame.end.clone(),
        stream: vec![-1; n],
        gpu: frame.device.clone(),
        ic: vec![-1; n],
        df_order: Vec::new(),
        flags,
    };
    for i in (0..n).filter(|&i| r.sel[i]) {
        r.stream[i] = stream_of(t, i, compat);
        if compat {
            r.ic[i] = t.correlation_at(i).map_or(-1, |c| c.min(0));
        }
    }
    if compat {
        hta_partners(&mut r);
    } else {
        exact_partners(&mut r);
    }
    if let Some(kept) = frame.kept {
        r.sel = kept;
        if compat {
            // HTA's frame lists GPU rows first after its filter.
            let (sel, gpu) = (&r.sel, &r.gpu);
            r.df_order = (0..n as u32)
                .filter(|&i| sel[i as usize] && gpu[i as usize])
                .chain((0..n as u32).filter(|&i| sel[i as usize] && !gpu[i as usize]))
                .collect();
        }
    }
    if r.df_order.is_empty() {
        r.df_order = (0..n as u32).filter(|&i| r.sel[i as usize]).collect();
    }
    r
}

/// The stream of a frame row: HTA-compat its `args.stream` (-1 without), exact the stream of a
/// device operation (0 when unknown), of a sync event (-1 when unknown), -1 on the host.
fn stream_of(t: &TraceTable, i: usize, compat: bool) -> i64 {
    let k = t.kind_at(i);
    if compat {
        t.args_stream_at(i).unwrap_or(-1)
    } else if k.is_gpu_activity() {
        t.stream_at(i).unwrap_or(0).max(0)
    } else if k == EventKind::Sync {
        t.stream_at(i).unwrap_or(-1)
    } else {
        -1
    }
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
    crate::sort::sort(&mut gpu);
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
    crate::sort::sort_by_key(&mut cpu, |&(c, x)| (c, rank(x), x));
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

/// The exact-mode rows of a whole table (for the phases' tests).
#[cfg(test)]
pub fn exact_rows(t: &TraceTable) -> Rows<'_> {
    build_rows(t, Frame::new(t, super::Mode::Exact), &NameClasses::of(t))
}
