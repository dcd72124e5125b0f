//! The window phase: which time range the path covers (the whole frame, or instances of an
//! annotation) and which rows fall in it.

use super::result::CriticalPathStatus;
use super::rows::Rows;
use super::CriticalPathOptions;
use crate::analysis::names::{device_sync_event, DeviceSyncEvent};
use crate::table::EventKind;

/// The analysed time range, ns (both ends inclusive for CPU starts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub start: i64,
    pub end: i64,
}

/// The window: the frame's extent without an annotation, else the span of the asked instances.
pub fn find_window(r: &Rows, opts: &CriticalPathOptions) -> Result<Window, CriticalPathStatus> {
    let (start, end) = if opts.annotation.is_empty() {
        r.df_order
            .iter()
            .fold((i64::MAX, i64::MIN), |(lo, hi), &i| {
                (lo.min(r.ts[i as usize]), hi.max(r.end[i as usize]))
            })
    } else {
        annotation_window(r, opts)?
    };
    if start > end {
        return Err(CriticalPathStatus::EmptyTrace);
    }
    Ok(Window { start, end })
}

/// The span of instances `instance..=instance_end` of the annotation (HTA-compat: in frame order,
/// any side; exact: host annotations by start).
fn annotation_window(
    r: &Rows,
    opts: &CriticalPathOptions,
) -> Result<(i64, i64), CriticalPathStatus> {
    let t = r.t;
    let dict = t.name_dictionary();
    let matches: Vec<bool> = (0..dict.len())
        .map(|i| dict.value(i).contains(opts.annotation.as_str()))
        .collect();
    let mut ann: Vec<u32> = r
        .df_order
        .iter()
        .copied()
        .filter(|&i| {
            let i = i as usize;
            matches[t.name_id(i) as usize]
                && (r.compat || (!r.gpu[i] && t.kind_at(i) != EventKind::GpuUserAnnotation))
        })
        .collect();
    if !r.compat {
        crate::sort::sort_by_key(&mut ann, |&i| (r.ts[i as usize], i));
    }
    if ann.is_empty() {
        return Err(CriticalPathStatus::AnnotationNotFound {
            annotation: opts.annotation.clone(),
        });
    }
    let a = opts.instance;
    let b = opts.instance_end.unwrap_or(a).max(a);
    let sl = &ann[a.min(ann.len())..(b + 1).min(ann.len())];
    if sl.is_empty() {
        return Err(CriticalPathStatus::InstanceOutOfRange {
            annotation: opts.annotation.clone(),
            instances: ann.len(),
            asked: a,
        });
    }
    Ok((
        sl.iter().map(|&i| r.ts[i as usize]).min().unwrap_or(0),
        sl.iter().map(|&i| r.end[i as usize]).max().unwrap_or(0),
    ))
}

/// The rows in the window: CPU rows with a positive duration starting in it, the GPU rows they
/// launched, and the sync events that belong to them (HTA-compat: every `Stream Wait Event`).
pub fn clip_rows(r: &Rows, w: Window) -> Vec<bool> {
    let t = r.t;
    let n = t.len();
    let cpu_in = |i: usize| {
        r.sel[i] && r.cpu_side(i) && r.ts[i] >= w.start && r.ts[i] <= w.end && r.dur(i) > 0
    };
    let mut clip: Vec<bool> = (0..n).map(cpu_in).collect();
    // GPU side: launched from a clipped CPU row (HTA joins on the CPU rows' index_correlation).
    for i in (0..n).filter(|&i| cpu_in(i)) {
        let g = r.ic[i];
        if g >= 0 && (g as usize) < n {
            let g = g as usize;
            if r.sel[g] && !r.cpu_side(g) && (r.compat || r.ic[g] == i as i64) {
                clip[g] = true;
            }
        }
    }
    for i in (0..n).filter(|&i| r.sel[i]) {
        let linked = if r.compat {
            r.stream[i] != -1
                && device_sync_event(t.name_at(i)) == Some(DeviceSyncEvent::StreamWaitEvent)
        } else {
            // Sync events linked to a clipped call.
            r.gpu[i] && t.kind_at(i) == EventKind::Sync && r.ic[i] >= 0 && clip[r.ic[i] as usize]
        };
        if linked {
            clip[i] = true;
        }
    }
    clip
}

#[cfg(test)]
mod tests {
    use super::super::rows::exact_rows;
    use super::super::tests::table;
    use super::*;

    #[test]
    fn window_of_an_annotation_instance_and_its_rows() {
        let t = table(serde_json::json!([
            {"ph": "X", "cat": "user_annotation", "name": "step", "pid": 1, "tid": 1, "ts": 0, "dur": 20},
            {"ph": "X", "cat": "user_annotation", "name": "step", "pid": 1, "tid": 1, "ts": 20, "dur": 30},
            {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 5},
            {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 21, "dur": 7},
            {"ph": "X", "cat": "cpu_op", "name": "zero", "pid": 1, "tid": 1, "ts": 22, "dur": 0},
        ]));
        let r = exact_rows(&t);
        let whole = find_window(&r, &CriticalPathOptions::default()).unwrap();
        assert_eq!(
            whole,
            Window {
                start: 0,
                end: 50_000
            }
        );
        let opts = CriticalPathOptions {
            annotation: "step".into(),
            instance: 1,
            ..Default::default()
        };
        let w = find_window(&r, &opts).unwrap();
        assert_eq!(
            w,
            Window {
                start: 20_000,
                end: 50_000
            }
        );
        // The second step and `b`; `a` starts before, `zero` has no duration.
        assert_eq!(clip_rows(&r, w), [false, true, false, true, false]);
        let opts = CriticalPathOptions {
            instance: 2,
            ..opts
        };
        assert_eq!(
            find_window(&r, &opts),
            Err(CriticalPathStatus::InstanceOutOfRange {
                annotation: "step".into(),
                instances: 2,
                asked: 2
            })
        );
    }
}
