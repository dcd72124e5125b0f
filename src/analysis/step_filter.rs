//! HTA 0.5.0's "last ProfilerStep" filter, the one definition every HTA-compatible analysis uses.
//!
//! HTA (`Trace._filter_irrelevant_gpu_kernels`) takes the names that contain `ProfilerStep`
//! ([`is_profiler_step_name`]); with two or more of them it keeps the CPU rows that start before the
//! last step annotation on the CPU side starts, and the GPU rows (kernels, memory operations and sync
//! events: [`is_hta_device_row`]) whose correlation id is that of a kept CPU row. When no CPU row
//! carries a step name, pandas' maximum is NaN and every CPU row is dropped. The rows it keeps are
//! the frame's window up to the cut ([`Frame::keep_window`](super::frame::Frame::keep_window)).

use super::names::{is_hta_device_sync_name, is_profiler_step_name};
use crate::table::TraceTable;

/// A row HTA 0.5.0 counts as device-side (its `_filter_gpu_kernels_with_cuda_sync`): an
/// `args.stream` ≥ 0 with a correlation ≥ 0, or an `Event Sync` / `Context Sync` event.
pub fn is_hta_device_row(t: &TraceTable, row: usize) -> bool {
    (t.args_stream_at(row).is_some_and(|s| s >= 0) && t.correlation_at(row).is_some_and(|c| c >= 0))
        || is_hta_device_sync_name(t.name_at(row))
}

/// Where HTA's filter cuts the CPU timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LastStepCut {
    /// CPU rows starting at or after this time (ns) are dropped; `i64::MIN` when no CPU row is a
    /// step annotation (HTA's NaN maximum: every CPU row goes).
    pub cut: i64,
    /// The last step annotation on the CPU side, when there is one.
    pub last_step_row: Option<u32>,
}

/// The cut over the rows of a frame: `frame[r]` says row `r` is in it, `gpu[r]` that it is
/// device-side, `ts[r]` its start (ns). `None` when the frame has fewer than two distinct step names
/// (HTA then keeps everything).
pub fn hta_last_step_cut(
    t: &TraceTable,
    frame: &[bool],
    gpu: &[bool],
    ts: &[i64],
) -> Option<LastStepCut> {
    let dict = t.name_dictionary();
    let step_name: Vec<bool> = (0..dict.len())
        .map(|i| is_profiler_step_name(dict.value(i)))
        .collect();
    let mut names: Vec<u32> = Vec::new();
    let mut last: Option<(i64, u32)> = None;
    for r in (0..t.len()).filter(|&r| frame[r]) {
        let id = t.name_id(r);
        if !step_name[id as usize] {
            continue;
        }
        names.push(id);
        if !gpu[r] && last.is_none_or(|(l, _)| ts[r] > l) {
            last = Some((ts[r], r as u32));
        }
    }
    names.sort_unstable();
    names.dedup();
    (names.len() >= 2).then(|| LastStepCut {
        cut: last.map_or(i64::MIN, |l| l.0),
        last_step_row: last.map(|l| l.1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::frame::Frame;
    use crate::analysis::options::Mode;
    use crate::table::load_bytes;

    fn table(events: serde_json::Value) -> TraceTable {
        let b = serde_json::to_vec(&serde_json::json!({ "traceEvents": events })).unwrap();
        load_bytes("t.json", &b).unwrap()
    }

    /// The rows HTA keeps after a cut: the frame's window `(MIN, cut)`.
    fn keep(t: &TraceTable, cut: i64) -> Vec<bool> {
        let mut f = Frame::new(t, Mode::HtaCompat);
        f.keep_window(t, (i64::MIN, cut));
        (0..t.len()).map(|r| f.keeps(r)).collect()
    }

    fn step(n: i64, ts: i64, dur: i64) -> serde_json::Value {
        serde_json::json!({"ph": "X", "cat": "user_annotation", "name": format!("ProfilerStep#{n}"),
            "pid": 1, "tid": 1, "ts": ts, "dur": dur})
    }

    #[test]
    fn drops_the_last_step_and_the_kernels_it_launched() {
        let t = table(serde_json::json!([
            step(1, 0, 10),
            step(2, 10, 10),
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": 2, "dur": 1, "args": {"correlation": 5}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
             "ts": 12, "dur": 1, "args": {"correlation": 6}},
            {"ph": "X", "cat": "kernel", "name": "k1", "pid": 0, "tid": 7, "ts": 11, "dur": 3,
             "args": {"stream": 7, "correlation": 5}},
            {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 14, "dur": 3,
             "args": {"stream": 7, "correlation": 6}},
        ]));
        let n = t.len();
        let frame = vec![true; n];
        let gpu: Vec<bool> = (0..n).map(|r| is_hta_device_row(&t, r)).collect();
        assert_eq!(gpu, [false, false, false, false, true, true]);
        let ts: Vec<i64> = (0..n).map(|r| t.ts_at(r).unwrap()).collect();
        let cut = hta_last_step_cut(&t, &frame, &gpu, &ts).unwrap();
        assert_eq!(cut.cut, 10_000);
        assert_eq!(cut.last_step_row, Some(1));
        let keep = keep(&t, cut.cut);
        // step 1, the first launch and its kernel (which runs after the cut) stay.
        assert_eq!(keep, [true, false, true, false, true, false]);
        // One step name: no filter.
        let one: Vec<bool> = (0..n).map(|r| r != 1).collect();
        assert_eq!(hta_last_step_cut(&t, &one, &gpu, &ts), None);
    }

    #[test]
    fn a_device_side_step_annotation_names_a_step_but_does_not_cut() {
        // Two step names, but ProfilerStep#2 is on the device (a stream and a correlation): no CPU
        // row is a step after #1, so the cut is #1's start and everything from it on goes; with no
        // CPU step at all, HTA's NaN maximum drops every CPU row.
        let t = table(serde_json::json!([
            step(1, 5, 10),
            {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#2", "pid": 0, "tid": 7,
             "ts": 15, "dur": 5, "args": {"stream": 7, "correlation": 9}},
            {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
        ]));
        let n = t.len();
        let gpu: Vec<bool> = (0..n).map(|r| is_hta_device_row(&t, r)).collect();
        assert_eq!(gpu, [false, true, false]);
        let ts: Vec<i64> = (0..n).map(|r| t.ts_at(r).unwrap()).collect();
        let cut = hta_last_step_cut(&t, &[true; 3], &gpu, &ts).unwrap();
        assert_eq!(
            cut,
            LastStepCut {
                cut: 5_000,
                last_step_row: Some(0)
            }
        );
        let keep = keep(&t, cut.cut);
        assert_eq!(keep, [false, false, true]);
        let cut = hta_last_step_cut(&t, &[false, true, true], &gpu, &ts);
        assert_eq!(cut, None, "one step name in the frame");
    }
}
