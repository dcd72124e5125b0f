//! HTA 0.5.0's "last ProfilerStep" filter, the one definition every HTA-compatible analysis uses.
//!
//! HTA (`Trace._filter_irrelevant_gpu_kernels`) takes the names that contain `ProfilerStep`
//! ([`is_profiler_step_name`]); with two or more of them it keeps the CPU rows that start before the
//! last step annotation on the CPU side starts, and the GPU rows (kernels, memory operations and sync
//! events: [`is_hta_device_row`]) whose correlation id is that of a kept CPU row. When no CPU row
//! carries a step name, pandas' maximum is NaN and every CPU row is dropped. The rows it keeps are
//! the frame's window up to the cut ([`Frame::keep_window`](super::frame::Frame::keep_window)).
//!
//! It is also where a chosen step range (`--steps A..B`, the MCP tools' `steps`, the page's step
//! picker) is read and checked ([`parse_step_range`], [`check_step_range`]) and turned into a window
//! ([`step_range_window`]): the analyses, the diagnosis and the views keep the same steps.

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
    crate::sort::sort(&mut names);
    names.dedup();
    (names.len() >= 2).then(|| LastStepCut {
        cut: last.map_or(i64::MIN, |l| l.0),
        last_step_row: last.map(|l| l.1),
    })
}

/// A ProfilerStep range, both ends included (`3..5`; one step `4` is `4..4`).
pub type StepRange = (i64, i64);

/// Whether step number `step` is in `range`.
pub fn in_step_range(step: i64, (first, last): StepRange) -> bool {
    step >= first && step <= last
}

/// `A..B` or `N` as a step range, or what is wrong with the text.
pub fn parse_step_range(text: &str) -> Result<StepRange, String> {
    let number = |t: &str| {
        t.trim()
            .parse::<i64>()
            .map_err(|_| format!("a step range is A..B or N (step numbers), found {text:?}"))
    };
    let range = match text.split_once("..") {
        Some((a, b)) => (number(a)?, number(b.strip_prefix('=').unwrap_or(b))?),
        None => {
            let n = number(text)?;
            (n, n)
        }
    };
    if range.0 > range.1 {
        return Err(format!(
            "the step range {text:?} is empty: its first step ({}) comes after its last ({})",
            range.0, range.1
        ));
    }
    Ok(range)
}

/// The window `(first start, last end)` of the steps of `range` among `spans` (`(step, start,
/// end)`), `None` when none is in it.
pub fn step_range_window(
    spans: impl IntoIterator<Item = (i64, i64, i64)>,
    range: StepRange,
) -> Option<(i64, i64)> {
    spans
        .into_iter()
        .filter(|s| in_step_range(s.0, range))
        .fold(None, |w, (_, s, e)| match w {
            None => Some((s, e)),
            Some((lo, hi)) => Some((lo.min(s), hi.max(e))),
        })
}

/// Steps as words: `1-8`, `1-3, 5, 7-8`, or `none`.
pub fn steps_words(steps: &[i64]) -> String {
    let mut v = steps.to_vec();
    crate::sort::sort(&mut v);
    v.dedup();
    let mut runs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        runs.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    if runs.is_empty() {
        "none".into()
    } else {
        runs.join(", ")
    }
}

/// Whether every rank (`(rank, its step numbers)`) has a step in `range`: else what is wrong, in
/// words that say which steps there are.
pub fn check_step_range(range: StepRange, ranks: &[(i64, Vec<i64>)]) -> Result<(), String> {
    let (first, last) = range;
    let shown = if first == last {
        format!("step {first}")
    } else {
        format!("steps {first}..{last}")
    };
    if ranks.iter().all(|(_, steps)| steps.is_empty()) {
        return Err(format!(
            "cannot analyse {shown}: the trace has no ProfilerStep annotation (record it with torch.profiler's schedule and prof.step())"
        ));
    }
    let missing: Vec<&(i64, Vec<i64>)> = ranks
        .iter()
        .filter(|(_, steps)| !steps.iter().any(|&s| in_step_range(s, range)))
        .collect();
    match missing.as_slice() {
        [] => Ok(()),
        [(rank, steps)] if ranks.len() == 1 => Err(format!(
            "no ProfilerStep in {first}..{last}: the trace has steps {} (rank {rank})",
            steps_words(steps)
        )),
        many => Err(format!(
            "no ProfilerStep in {first}..{last} on {}: {}",
            if many.len() == 1 { "rank" } else { "ranks" },
            many.iter()
                .map(|(r, s)| format!("rank {r} has steps {}", steps_words(s)))
                .collect::<Vec<_>>()
                .join("; ")
        )),
    }
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

    #[test]
    fn a_step_range_is_read_checked_and_made_a_window() {
        assert_eq!(parse_step_range("3..5"), Ok((3, 5)));
        assert_eq!(parse_step_range(" 4 "), Ok((4, 4)));
        assert_eq!(parse_step_range("2..=6"), Ok((2, 6)));
        let e = parse_step_range("5..3").unwrap_err();
        assert!(e.contains("first step (5) comes after its last (3)"), "{e}");
        let e = parse_step_range("a..3").unwrap_err();
        assert!(e.contains("A..B or N"), "{e}");
        assert!(parse_step_range("").is_err());
        let spans = [(1, 0, 10), (2, 10, 25), (3, 25, 31), (4, 31, 40)];
        assert_eq!(step_range_window(spans, (2, 3)), Some((10, 31)));
        assert_eq!(step_range_window(spans, (4, 9)), Some((31, 40)));
        assert_eq!(step_range_window(spans, (5, 9)), None);
        assert_eq!(steps_words(&[3, 1, 2, 5, 7, 8]), "1-3, 5, 7-8");
        assert_eq!(steps_words(&[]), "none");
        let ranks = vec![(0, vec![1, 2, 3]), (1, vec![1, 2])];
        assert_eq!(check_step_range((2, 3), &ranks), Ok(()));
        let e = check_step_range((3, 3), &ranks).unwrap_err();
        assert_eq!(e, "no ProfilerStep in 3..3 on rank: rank 1 has steps 1-2");
        let e = check_step_range((7, 9), &ranks[..1]).unwrap_err();
        assert_eq!(
            e,
            "no ProfilerStep in 7..9: the trace has steps 1-3 (rank 0)"
        );
        let e = check_step_range((1, 2), &[(0, vec![])]).unwrap_err();
        assert!(e.contains("no ProfilerStep annotation"), "{e}");
    }
}
