//! The step picker: which ProfilerSteps the report and the views are over. The automatic window
//! (warm-up steps left out) until the user picks a range; a range is checked against the steps the
//! trace has before the worker is asked ([`crate::analysis::step_filter`], the CLI's `--steps`), and
//! an answer about other steps than the ones asked last is stale and dropped.

use crate::analysis::step_filter::{in_step_range, steps_words, StepRange};
use crate::report::context::TraceContext;

/// The picker's state for one loaded set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepPick {
    /// The steps every rank has (the report's context): what can be picked.
    pub available: Vec<i64>,
    /// The steps the automatic window analyses (the first report's).
    pub automatic: Option<StepRange>,
    /// The picked steps the report shown is over (`None`: the automatic window).
    pub applied: Option<StepRange>,
    /// Asked of the worker, its report not here yet (`Some(None)`: back to automatic).
    pub pending: Option<Option<StepRange>>,
    /// Why the last pick was refused, in words.
    pub error: Option<String>,
    /// The steps the views shown are over (`None`: the whole trace).
    pub views_over: Option<StepRange>,
}

/// The picker's two inputs as a range (the last empty: the first step alone), or what is wrong.
pub fn parse_inputs(first: &str, last: &str) -> Result<StepRange, String> {
    let number = |text: &str, which: &str| {
        text.trim()
            .parse::<i64>()
            .map_err(|_| format!("The {which} step is not a step number: {:?}.", text.trim()))
    };
    let a = number(first, "first")?;
    let b = if last.trim().is_empty() {
        a
    } else {
        number(last, "last")?
    };
    Ok((a, b))
}

impl StepPick {
    /// Whether there is anything to pick: two steps or more.
    pub fn offered(&self) -> bool {
        self.available.len() >= 2
    }

    /// The steps asked last: pending, else applied (`None`: automatic).
    pub fn wanted(&self) -> Option<StepRange> {
        self.pending.unwrap_or(self.applied)
    }

    /// The range the picker's inputs show: the picked one, else the automatic window, else every step.
    pub fn shown_range(&self) -> Option<StepRange> {
        self.wanted()
            .or(self.automatic)
            .or_else(|| Some((*self.available.first()?, *self.available.last()?)))
    }

    /// `first..last` when the trace has a step in it, else why not (nothing is asked then).
    pub fn check(&self, first: i64, last: i64) -> Result<StepRange, String> {
        if first > last {
            return Err(format!(
                "The first step ({first}) comes after the last ({last})."
            ));
        }
        if self.available.is_empty() {
            return Err("This trace has no ProfilerStep annotations to pick from.".into());
        }
        if !self
            .available
            .iter()
            .any(|&s| in_step_range(s, (first, last)))
        {
            return Err(format!(
                "No step in {first}-{last}: this trace has steps {}.",
                steps_words(&self.available)
            ));
        }
        Ok((first, last))
    }

    /// A pick is asked of the worker (`None`: back to the automatic window).
    pub fn ask(&mut self, range: Option<StepRange>) {
        self.pending = Some(range);
        self.error = None;
    }

    /// A report came: kept (true) unless it is about other steps than the ones asked last.
    pub fn on_report(&mut self, c: &TraceContext) -> bool {
        let chosen = c.steps_chosen.then_some(c.steps).flatten();
        if let Some(want) = self.pending {
            let same = match (want, chosen) {
                (None, None) => !c.steps_chosen,
                (Some(w), Some((a, b))) => in_step_range(a, w) && in_step_range(b, w),
                _ => false,
            };
            if !same {
                return false;
            }
        }
        if !c.step_numbers.is_empty() {
            self.available = c.step_numbers.clone();
        }
        if chosen.is_none() {
            self.automatic = c.steps;
        }
        self.applied = self.pending.take().unwrap_or(chosen);
        self.error = None;
        true
    }

    /// The worker refused the steps asked (`message` says why): the report shown stays.
    pub fn refused(&mut self, steps: StepRange, message: String) {
        if self.pending == Some(Some(steps)) {
            self.pending = None;
        }
        self.error = Some(message);
    }

    /// Views came over `steps`: kept (true) when they are the steps asked last.
    pub fn on_views(&mut self, steps: Option<StepRange>) -> bool {
        if steps != self.wanted() {
            return false;
        }
        self.views_over = steps;
        true
    }

    /// One line on what the report is over: "Steps 3-7: the automatic window (warm-up left out)".
    pub fn status(&self) -> String {
        let words = |(a, b): StepRange| {
            if a == b {
                format!("step {a}")
            } else {
                format!("steps {a}-{b}")
            }
        };
        match (self.pending, self.applied, self.automatic) {
            (Some(Some(r)), _, _) => format!("Analysing {}…", words(r)),
            (Some(None), _, _) => "Going back to the automatic window…".into(),
            (None, Some(r), _) => format!("Report and views over {}, as picked.", words(r)),
            (None, None, Some(r)) => format!(
                "Report over {}: the automatic window (warm-up steps left out).",
                words(r)
            ),
            (None, None, None) => "Report over the automatic window.".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(steps: Option<StepRange>, chosen: bool, numbers: &[i64]) -> TraceContext {
        TraceContext {
            steps,
            steps_chosen: chosen,
            step_numbers: numbers.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn the_automatic_window_then_a_pick_then_back() {
        let mut p = StepPick::default();
        assert!(!p.offered());
        assert!(p.on_report(&context(Some((3, 8)), false, &[1, 2, 3, 4, 5, 6, 7, 8])));
        assert!(p.offered());
        assert_eq!(p.automatic, Some((3, 8)));
        assert_eq!(p.applied, None);
        assert_eq!(p.shown_range(), Some((3, 8)));
        assert!(p.status().contains("steps 3-8: the automatic window"));

        assert_eq!(p.check(2, 4), Ok((2, 4)));
        p.ask(Some((2, 4)));
        assert_eq!(p.wanted(), Some((2, 4)));
        assert_eq!(p.status(), "Analysing steps 2-4…");
        // A stale automatic report (asked before the pick) is dropped.
        assert!(!p.on_report(&context(Some((3, 8)), false, &[1, 2, 3, 4, 5, 6, 7, 8])));
        assert_eq!(p.pending, Some(Some((2, 4))));
        assert!(p.on_report(&context(Some((2, 4)), true, &[1, 2, 3, 4, 5, 6, 7, 8])));
        assert_eq!(p.applied, Some((2, 4)));
        assert_eq!(p.pending, None);
        assert_eq!(
            p.automatic,
            Some((3, 8)),
            "the automatic window is remembered"
        );
        assert_eq!(p.status(), "Report and views over steps 2-4, as picked.");

        p.ask(None);
        assert!(!p.on_report(&context(Some((2, 4)), true, &[1, 2, 3, 4, 5, 6, 7, 8])));
        assert!(p.on_report(&context(Some((3, 8)), false, &[1, 2, 3, 4, 5, 6, 7, 8])));
        assert_eq!(p.applied, None);
        assert_eq!(p.shown_range(), Some((3, 8)));
    }

    #[test]
    fn a_range_the_trace_lacks_is_refused_before_asking() {
        let mut p = StepPick::default();
        p.on_report(&context(Some((2, 6)), false, &[1, 2, 3, 4, 5, 6]));
        assert_eq!(
            p.check(9, 12),
            Err("No step in 9-12: this trace has steps 1-6.".into())
        );
        assert_eq!(
            p.check(5, 3),
            Err("The first step (5) comes after the last (3).".into())
        );
        // A wider range is fine: the worker keeps the steps the trace has.
        assert_eq!(p.check(5, 40), Ok((5, 40)));
        p.ask(Some((5, 40)));
        assert!(p.on_report(&context(Some((5, 6)), true, &[1, 2, 3, 4, 5, 6])));
        assert_eq!(p.applied, Some((5, 40)));
        // Refused by the worker: the report shown stays, the reason is said.
        p.ask(Some((1, 1)));
        p.refused(
            (1, 1),
            "no ProfilerStep in 1..1 on rank: rank 1 has steps 2-6".into(),
        );
        assert_eq!(p.pending, None);
        assert_eq!(p.applied, Some((5, 40)));
        assert!(p.error.as_deref().unwrap().contains("rank 1"));
        let none = StepPick::default();
        assert!(none.check(1, 2).unwrap_err().contains("no ProfilerStep"));
    }

    #[test]
    fn the_inputs_are_read_as_a_range() {
        assert_eq!(parse_inputs(" 2", "5 "), Ok((2, 5)));
        assert_eq!(parse_inputs("4", ""), Ok((4, 4)));
        assert_eq!(
            parse_inputs("x", "5"),
            Err("The first step is not a step number: \"x\".".into())
        );
        assert!(parse_inputs("1", "2.5")
            .unwrap_err()
            .starts_with("The last step"));
    }

    #[test]
    fn views_are_kept_only_for_the_steps_asked_last() {
        let mut p = StepPick::default();
        assert!(p.on_views(None));
        p.ask(Some((2, 3)));
        assert!(!p.on_views(None), "views of the whole trace, asked before");
        assert!(p.on_views(Some((2, 3))));
        assert_eq!(p.views_over, Some((2, 3)));
    }
}
