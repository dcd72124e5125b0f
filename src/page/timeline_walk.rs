//! Walking the timeline's events with the keyboard: left/right to the previous/next event in time
//! on the selected event's lane, up/down to the nearest event on the lane above/below (the one
//! under the selected event's middle, else the nearest in time). Over the events the timeline's
//! answer draws, lanes in the order [`layout`] draws them. Left/right from a selected event go to
//! the worker instead ([`crate::protocol::ToWorker::Walk`], `TimelineIndex::neighbour`), which
//! reaches the next event on the lane wherever it is; this walk starts one and moves up/down.

use crate::analysis::timeline::{DrawnEvent, LaneView};
use crate::report::timeline_view::{layout, TimelineAnswer};

/// A walking key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    Left,
    Right,
    Up,
    Down,
}

impl Walk {
    /// The walk an arrow key makes (`ArrowLeft`, ...).
    pub fn of_key(key: &str) -> Option<Walk> {
        match key {
            "ArrowLeft" => Some(Walk::Left),
            "ArrowRight" => Some(Walk::Right),
            "ArrowUp" => Some(Walk::Up),
            "ArrowDown" => Some(Walk::Down),
            _ => None,
        }
    }
}

/// The drawn lanes with their events by start, top to bottom (lanes without drawn events kept, so
/// up/down skip over them).
fn lanes<'a>(answer: &'a TimelineAnswer, collapsed: &[u32]) -> Vec<Vec<&'a DrawnEvent>> {
    layout(answer, collapsed, false)
        .iter()
        .map(|row| {
            let mut events: Vec<&DrawnEvent> = answer
                .view
                .lanes
                .iter()
                .filter(|l: &&LaneView| l.track == row.track && l.depth == row.depth)
                .flat_map(|l| l.events.iter())
                .collect();
            crate::sort::sort_by_key(&mut events, |e| (e.start_ns, e.row));
            events
        })
        .collect()
}

/// The event to select after `walk` from the event of row `selected` (none selected, or not drawn:
/// the first event of the top lane for right/down, the last of the bottom lane for left/up).
/// `None` when there is nowhere to go (the edge of a lane, no lane above or below with events).
pub fn walk(
    answer: &TimelineAnswer,
    collapsed: &[u32],
    selected: Option<u32>,
    walk: Walk,
) -> Option<DrawnEvent> {
    let lanes = lanes(answer, collapsed);
    let at = selected.and_then(|row| {
        lanes
            .iter()
            .enumerate()
            .find_map(|(li, l)| l.iter().position(|e| e.row == row).map(|ei| (li, ei)))
    });
    let Some((li, ei)) = at else {
        return match walk {
            Walk::Right | Walk::Down => lanes.iter().find_map(|l| l.first()),
            Walk::Left | Walk::Up => lanes.iter().rev().find_map(|l| l.last()),
        }
        .map(|e| (*e).clone());
    };
    let here = lanes[li][ei];
    let found = match walk {
        Walk::Left => ei.checked_sub(1).map(|i| lanes[li][i]),
        Walk::Right => lanes[li].get(ei + 1).copied(),
        Walk::Up => lanes[..li]
            .iter()
            .rev()
            .find(|l| !l.is_empty())
            .and_then(|l| nearest(l, here)),
        Walk::Down => lanes[li + 1..]
            .iter()
            .find(|l| !l.is_empty())
            .and_then(|l| nearest(l, here)),
    };
    found.cloned()
}

/// The event of `lane` under the middle of `here`, else the one nearest to it in time.
fn nearest<'a>(lane: &[&'a DrawnEvent], here: &DrawnEvent) -> Option<&'a DrawnEvent> {
    let mid = here.start_ns + (here.end_ns - here.start_ns) / 2;
    let distance = |e: &DrawnEvent| {
        if e.start_ns <= mid && mid < e.end_ns.max(e.start_ns + 1) {
            0
        } else {
            (e.start_ns - mid).abs().min((e.end_ns - mid).abs())
        }
    };
    lane.iter()
        .copied()
        .min_by_key(|e| (distance(e), e.start_ns))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::timeline::{EventClass, LaneView, TimelineView, TrackInfo, TrackKey};

    fn ev(row: u32, start: i64, end: i64) -> DrawnEvent {
        DrawnEvent {
            row,
            start_ns: start,
            end_ns: end,
            name: format!("e{row}"),
            class: EventClass::CpuOp,
        }
    }

    fn track(name: &str, depth: u16) -> TrackInfo {
        TrackInfo {
            key: TrackKey::Thread {
                pid: "1".into(),
                tid: name.into(),
            },
            name: name.into(),
            depth,
            events: 0,
        }
    }

    /// Two threads: the first two deep (lanes 0 and 1), the second one lane (lane 2).
    fn answer() -> TimelineAnswer {
        TimelineAnswer {
            tracks: vec![track("main", 2), track("other", 1)],
            view: TimelineView {
                start_ns: 0,
                end_ns: 1000,
                width_px: 100,
                lanes: vec![
                    LaneView {
                        track: 0,
                        depth: 0,
                        events: vec![ev(3, 300, 400), ev(1, 0, 100), ev(2, 150, 250)],
                        buckets: Vec::new(),
                    },
                    LaneView {
                        track: 0,
                        depth: 1,
                        events: vec![ev(10, 160, 200)],
                        buckets: Vec::new(),
                    },
                    LaneView {
                        track: 1,
                        depth: 0,
                        events: vec![ev(20, 0, 50), ev(21, 380, 900)],
                        buckets: Vec::new(),
                    },
                ],
            },
            ..Default::default()
        }
    }

    fn rows(a: &TimelineAnswer, from: Option<u32>, keys: &[Walk]) -> Vec<Option<u32>> {
        let mut at = from;
        keys.iter()
            .map(|&k| {
                let next = walk(a, &[], at, k).map(|e| e.row);
                if next.is_some() {
                    at = next;
                }
                next
            })
            .collect()
    }

    #[test]
    fn left_and_right_walk_a_lane_in_time_and_stop_at_its_ends() {
        let a = answer();
        use Walk::*;
        assert_eq!(
            rows(&a, Some(1), &[Right, Right, Right, Left]),
            [Some(2), Some(3), None, Some(2)]
        );
        assert_eq!(rows(&a, Some(1), &[Left]), [None]);
        // Nothing selected: right starts at the first event of the top lane, left at the last of
        // the bottom lane.
        assert_eq!(rows(&a, None, &[Right]), [Some(1)]);
        assert_eq!(rows(&a, None, &[Left]), [Some(21)]);
        assert_eq!(Walk::of_key("ArrowUp"), Some(Up));
        assert_eq!(Walk::of_key("Enter"), None);
    }

    #[test]
    fn up_and_down_go_to_the_event_under_the_middle_else_the_nearest() {
        let a = answer();
        use Walk::*;
        // Row 2 (150-250, middle 200) → depth 1: row 10 (160-200) is nearest (ends at the middle).
        assert_eq!(rows(&a, Some(2), &[Down]), [Some(10)]);
        // Row 10 (middle 180) → the other thread: row 20 ends at 50, row 21 starts at 380: row 20.
        assert_eq!(rows(&a, Some(10), &[Down]), [Some(20)]);
        // Row 3 (middle 350) → down skips to row 10's lane (nearest there), then row 21 below it.
        assert_eq!(rows(&a, Some(3), &[Down, Down]), [Some(10), Some(20)]);
        assert_eq!(rows(&a, Some(21), &[Up]), [Some(10)]);
        assert_eq!(rows(&a, Some(1), &[Up]), [None], "the top lane");
        // A collapsed track shows its first lane only: down from the top lane goes to the other thread.
        let next = walk(&a, &[0], Some(3), Down).map(|e| e.row);
        assert_eq!(
            next,
            Some(21),
            "row 21 (380-900) is nearer to 350 than row 20 (0-50)"
        );
    }
}
