//! The rows an analysis reads, in the mode's terms: the one definition of HTA 0.5.0's data frame
//! (and of the rows its last-ProfilerStep filter keeps) and of the exact mode's, for every analysis.
//!
//! [`RankPrep`](super::gpu::RankPrep) selects its device rows from it, and the analyses that walk
//! CPU call stacks too (kernel sequences, critical path) take the whole frame from
//! [`RankPrep::frame`](super::gpu::RankPrep::frame).

use super::gpu::hta_span;
use super::options::Mode;
use super::step_filter::is_hta_device_row;
use crate::table::{EventKind, TraceTable};

/// Whether a row is in the mode's frame. HTA-compat: a start, a duration and a category (pandas
/// drops the rest), trace metadata left out. Exact: a start and a duration, and an operation
/// (on the host or the device) rather than metadata, a counter, a flow, an instant or a GPU
/// annotation (a label on the device's timeline, neither host nor device work).
pub fn in_frame(t: &TraceTable, row: usize, mode: Mode) -> bool {
    if t.ts_at(row).is_none() || t.raw_dur_at(row).is_none() {
        return false;
    }
    let kind = t.kind_at(row);
    match mode {
        Mode::HtaCompat => t.category_id_at(row).is_some() && kind != EventKind::Trace,
        Mode::Exact => !matches!(
            kind,
            EventKind::Trace
                | EventKind::Metadata
                | EventKind::Counter
                | EventKind::Flow
                | EventKind::Instant
                | EventKind::GpuUserAnnotation
        ),
    }
}

/// Whether a row is device-side. HTA-compat: [`is_hta_device_row`]. Exact: a kernel, copy, set,
/// accelerator op or a sync event.
pub fn is_device_row(t: &TraceTable, row: usize, mode: Mode) -> bool {
    match mode {
        Mode::HtaCompat => is_hta_device_row(t, row),
        Mode::Exact => {
            let kind = t.kind_at(row);
            kind.is_gpu_activity() || kind == EventKind::Sync
        }
    }
}

/// Start and end (ns) of a row in the mode's terms: HTA-compat whole µs ([`hta_span`]), exact the
/// integer ns with a negative duration read as zero. `None` without a start.
pub fn span_of(t: &TraceTable, row: usize, mode: Mode) -> Option<(i64, i64)> {
    match mode {
        Mode::HtaCompat => hta_span(t, row),
        Mode::Exact => {
            let ts = t.ts_at(row)?;
            Some((ts, ts + t.dur_at(row).unwrap_or(0).max(0)))
        }
    }
}

/// A rank's frame: which rows are in it, which are device-side, their times, and which the
/// analysed window keeps.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    pub mode: Mode,
    /// Row is in the frame ([`in_frame`]).
    pub member: Vec<bool>,
    /// Row is in the frame and device-side ([`is_device_row`]).
    pub device: Vec<bool>,
    /// Start of each row, ns ([`span_of`]; 0 outside the frame).
    pub ts: Vec<i64>,
    /// End of each row, ns.
    pub end: Vec<i64>,
    /// Rows the window keeps ([`Frame::keep_window`]); `None` when it keeps every member.
    pub kept: Option<Vec<bool>>,
}

impl Frame {
    /// Every row of `t` in the mode's frame, no window applied.
    pub fn new(t: &TraceTable, mode: Mode) -> Frame {
        let n = t.len();
        let mut f = Frame {
            mode,
            member: vec![false; n],
            device: vec![false; n],
            ts: vec![0; n],
            end: vec![0; n],
            kept: None,
        };
        for row in (0..n).filter(|&r| in_frame(t, r, mode)) {
            let Some((ts, end)) = span_of(t, row, mode) else {
                continue;
            };
            f.member[row] = true;
            f.device[row] = is_device_row(t, row, mode);
            f.ts[row] = ts;
            f.end[row] = end;
        }
        f
    }

    /// Keeps the rows of the window `[start, end)`: host rows that start in it, and device rows
    /// launched by a kept host row (their correlation id is a kept host row's); exact mode also
    /// keeps device rows that start in it. HTA's last-ProfilerStep filter is the window
    /// `(i64::MIN, cut)`. The whole time line keeps every member.
    pub fn keep_window(&mut self, t: &TraceTable, (start, end): (i64, i64)) {
        if (start, end) == (i64::MIN, i64::MAX) {
            self.kept = None;
            return;
        }
        let n = self.member.len();
        let inside = |f: &Frame, r: usize| f.ts[r] >= start && f.ts[r] < end;
        let mut kept = vec![false; n];
        let mut kept_corr: Vec<i64> = Vec::new();
        for r in (0..n).filter(|&r| self.member[r] && !self.device[r] && inside(self, r)) {
            kept[r] = true;
            kept_corr.extend(t.correlation_at(r));
        }
        kept_corr.sort_unstable();
        for r in (0..n).filter(|&r| self.device[r]) {
            let launched = kept_corr
                .binary_search(&t.correlation_at(r).unwrap_or(-1))
                .is_ok();
            kept[r] = launched || (self.mode == Mode::Exact && inside(self, r));
        }
        self.kept = Some(kept);
    }

    /// Whether row `r` is in the frame and the window keeps it.
    #[inline]
    pub fn keeps(&self, r: usize) -> bool {
        match &self.kept {
            Some(k) => k[r],
            None => self.member[r],
        }
    }

    /// Whether the window leaves rows out.
    pub fn is_filtered(&self) -> bool {
        self.kept.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::load_bytes;

    fn table(events: serde_json::Value) -> TraceTable {
        let b = serde_json::to_vec(&serde_json::json!({ "traceEvents": events })).unwrap();
        load_bytes("t.json", &b).unwrap()
    }

    fn rows() -> TraceTable {
        table(serde_json::json!([
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": 2, "dur": 1, "args": {"correlation": 5}},
            {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 4.5, "dur": 3,
             "args": {"correlation": 5, "stream": 7}},
            {"ph": "X", "cat": "gpu_user_annotation", "name": "region", "pid": 0, "tid": 7,
             "ts": 4, "dur": 5},
            {"ph": "i", "cat": "cpu_instant_event", "name": "mark", "pid": 1, "tid": 1, "ts": 3},
            {"ph": "X", "name": "no category", "pid": 1, "tid": 1, "ts": 20, "dur": 1},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": 30, "dur": 1, "args": {"correlation": 6}},
            {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 33, "dur": 3,
             "args": {"correlation": 6, "stream": 7}},
        ]))
    }

    #[test]
    fn members_and_device_rows_follow_the_mode() {
        let t = rows();
        let exact = Frame::new(&t, Mode::Exact);
        let hta = Frame::new(&t, Mode::HtaCompat);
        let on = |v: &[bool]| (0..v.len()).filter(|&r| v[r]).collect::<Vec<_>>();
        // Exact: no GPU annotation, no instant; a row without a category is still an operation.
        assert_eq!(on(&exact.member), vec![0, 1, 2, 5, 6, 7]);
        assert_eq!(on(&exact.device), vec![2, 7]);
        // HTA: rows without a category are dropped, the GPU annotation (no correlation) is host-side.
        assert_eq!(on(&hta.member), vec![0, 1, 2, 3, 6, 7]);
        assert_eq!(on(&hta.device), vec![2, 7]);
        // 4.5 µs rounds up to 5 µs, 7.5 µs down to 7 µs in HTA's terms.
        assert_eq!((hta.ts[2], hta.end[2]), (5_000, 7_000));
        assert_eq!((exact.ts[2], exact.end[2]), (4_500, 7_500));
    }

    #[test]
    fn a_window_keeps_host_rows_by_start_and_device_rows_by_launch() {
        let t = rows();
        let mut f = Frame::new(&t, Mode::HtaCompat);
        assert!(!f.is_filtered());
        f.keep_window(&t, (i64::MIN, 25_000));
        assert!(f.is_filtered());
        let kept: Vec<usize> = (0..t.len()).filter(|&r| f.keeps(r)).collect();
        assert_eq!(kept, vec![0, 1, 2, 3]);
        f.keep_window(&t, (i64::MIN, i64::MAX));
        assert!(!f.is_filtered() && f.keeps(7));
    }
}
