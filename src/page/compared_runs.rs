//! Two runs compared: how the picked files of each run are named, and what the page keeps of the one
//! run the worker holds once they are compared.

use super::page_state::Shown;
use crate::protocol::RunShown;

impl Shown {
    /// After a comparison, the one run the worker holds: its ranks (each keeping its load time)
    /// and notes replace the set's; what was computed over both runs is dropped.
    pub(super) fn show_one_run(&mut self, run: RunShown) {
        let load_ms_of = |file: &str| {
            self.loaded
                .ranks
                .iter()
                .find(|r| r.file == file)
                .map_or(0.0, |r| r.load_ms)
        };
        let ranks = run
            .ranks
            .into_iter()
            .map(|mut r| {
                r.load_ms = load_ms_of(&r.file);
                r
            })
            .collect();
        self.loaded.ranks = ranks;
        self.loaded.notes = run.notes;
        self.loaded.runs = None;
        self.report = None;
        self.analyses = [None, None];
        self.views = None;
    }
}

/// A file of one of two runs picked to compare, renamed so that files of the same name in both
/// runs stay apart: `baseline: NAME` or `candidate: NAME`.
pub fn file_of_run(run: &str, name: &str) -> String {
    format!("{run}{RUN_SEPARATOR}{name}")
}

/// The two runs of a comparison, as [`file_of_run`] names their files.
pub const RUNS: [&str; 2] = ["baseline", "candidate"];
const RUN_SEPARATOR: &str = ": ";

/// The name a file was picked under, without the run [`file_of_run`] put before it.
pub fn picked_name(file: &str) -> &str {
    RUNS.iter()
        .find_map(|run| file.strip_prefix(run)?.strip_prefix(RUN_SEPARATOR))
        .unwrap_or(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_file_shows_the_name_it_was_picked_under() {
        for run in RUNS {
            assert_eq!(picked_name(&file_of_run(run, "rank0.json")), "rank0.json");
        }
        assert_eq!(picked_name("baseline.json"), "baseline.json");
        assert_eq!(picked_name("other: a.json"), "other: a.json");
    }
}
