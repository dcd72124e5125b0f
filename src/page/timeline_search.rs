//! The timeline's search: the events of the picked rank whose name contains the text (the worker
//! finds them: [`crate::analysis::timeline::search`]), highlighted on the timeline and stepped
//! through with next/previous ("3 of 17"); the current one is where the timeline goes.

use crate::analysis::timeline::SearchHit;
use crate::protocol::Located;

/// The search's state.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimelineSearch {
    /// The text searched last (trimmed).
    pub text: String,
    /// The rank it was searched on.
    pub rank_index: usize,
    /// Asked, not answered yet.
    pub waiting: bool,
    /// The hits, by start (at most the worker's cap).
    pub hits: Vec<SearchHit>,
    /// How many events match (more than `hits` when capped).
    pub total: u64,
    /// The hit the timeline shows (index into `hits`).
    pub current: Option<usize>,
}

impl TimelineSearch {
    /// A new search of `text` on `rank_index` is asked: `false` (nothing to ask) for an empty text,
    /// which clears the search.
    pub fn ask(&mut self, rank_index: usize, text: &str) -> bool {
        *self = TimelineSearch {
            text: text.trim().to_string(),
            rank_index,
            ..Default::default()
        };
        self.waiting = !self.text.is_empty();
        self.waiting
    }

    /// The worker's hits: kept (true) when they answer the search asked last.
    pub fn on_hits(
        &mut self,
        rank_index: usize,
        text: &str,
        hits: Vec<SearchHit>,
        total: u64,
    ) -> bool {
        if rank_index != self.rank_index || text.trim() != self.text {
            return false;
        }
        self.waiting = false;
        self.hits = hits;
        self.total = total;
        self.current = None;
        true
    }

    /// Moves to the next hit (`forward`) or the previous one, wrapping around; the first step goes
    /// to the first hit (or the last, backwards). Where the timeline goes, `None` without hits.
    pub fn step(&mut self, forward: bool) -> Option<Located> {
        let n = self.hits.len();
        if n == 0 {
            return None;
        }
        let i = match (self.current, forward) {
            (None, true) => 0,
            (None, false) => n - 1,
            (Some(i), true) => (i + 1) % n,
            (Some(i), false) => (i + n - 1) % n,
        };
        self.current = Some(i);
        let h = self.hits[i];
        Some(Located {
            rank_index: self.rank_index,
            row: h.row,
            start_ns: h.start_ns,
            dur_ns: h.end_ns - h.start_ns,
            outside: false,
        })
    }

    /// "3 of 17", "17 found" (none shown yet), "No match", "Searching…", or "" without a search;
    /// "(first 5,000 listed)" when the worker's cap cut the hits.
    pub fn counter(&self) -> String {
        if self.text.is_empty() {
            return String::new();
        }
        if self.waiting {
            return "Searching…".into();
        }
        if self.total == 0 {
            return "No match".into();
        }
        let total = crate::report::format::int(self.total);
        let mut s = match self.current {
            Some(i) => format!("{} of {total}", crate::report::format::int(i as u64 + 1)),
            None => format!("{total} found"),
        };
        if (self.hits.len() as u64) < self.total {
            s.push_str(&format!(
                " (first {} listed)",
                crate::report::format::int(self.hits.len() as u64)
            ));
        }
        s
    }

    /// The hits that overlap `[start, end)` ns on `rank_index` (what the timeline highlights), with
    /// whether each is the current one.
    pub fn visible(&self, rank_index: usize, start: f64, end: f64) -> Vec<(SearchHit, bool)> {
        if rank_index != self.rank_index {
            return Vec::new();
        }
        let first = self
            .hits
            .partition_point(|h| (h.start_ns as f64) < start - self.longest() as f64);
        self.hits[first..]
            .iter()
            .enumerate()
            .take_while(|(_, h)| (h.start_ns as f64) < end)
            .filter(|(_, h)| (h.end_ns.max(h.start_ns + 1) as f64) > start)
            .map(|(i, h)| (*h, self.current == Some(first + i)))
            .collect()
    }

    /// The longest hit (ns): how far before a range a hit that reaches into it can start.
    fn longest(&self) -> i64 {
        self.hits
            .iter()
            .map(|h| h.end_ns - h.start_ns)
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(row: u32, start: i64, end: i64) -> SearchHit {
        SearchHit {
            row,
            start_ns: start,
            end_ns: end,
        }
    }

    #[test]
    fn a_search_is_stepped_through_with_a_count() {
        let mut s = TimelineSearch::default();
        assert_eq!(s.counter(), "");
        assert!(s.ask(1, "  gemm "));
        assert_eq!(s.counter(), "Searching…");
        // An answer for another text or rank is not this search's.
        assert!(!s.on_hits(1, "conv", vec![hit(1, 0, 5)], 1));
        assert!(!s.on_hits(0, "gemm", vec![hit(1, 0, 5)], 1));
        let hits = vec![hit(4, 0, 10), hit(9, 20, 25), hit(2, 40, 100)];
        assert!(s.on_hits(1, "gemm", hits, 3));
        assert_eq!(s.counter(), "3 found");
        let at = s.step(true).unwrap();
        assert_eq!(
            (at.rank_index, at.row, at.start_ns, at.dur_ns),
            (1, 4, 0, 10)
        );
        assert_eq!(s.counter(), "1 of 3");
        assert_eq!(s.step(true).unwrap().row, 9);
        assert_eq!(s.step(true).unwrap().row, 2);
        assert_eq!(s.step(true).unwrap().row, 4, "wraps to the first");
        assert_eq!(s.step(false).unwrap().row, 2, "and back to the last");
        assert_eq!(s.counter(), "3 of 3");
        // Highlighted in a range: the hits overlapping it, the current one marked.
        let v: Vec<(u32, bool)> = s
            .visible(1, 22.0, 50.0)
            .into_iter()
            .map(|(h, c)| (h.row, c))
            .collect();
        assert_eq!(v, [(9, false), (2, true)]);
        assert!(s.visible(0, 0.0, 100.0).is_empty(), "another rank");
        let v: Vec<u32> = s.visible(1, 60.0, 70.0).iter().map(|h| h.0.row).collect();
        assert_eq!(v, [2], "a long hit that started before the range");
    }

    #[test]
    fn no_match_an_empty_text_and_a_capped_answer() {
        let mut s = TimelineSearch::default();
        assert!(s.ask(0, "x"));
        s.on_hits(0, "x", Vec::new(), 0);
        assert_eq!(s.counter(), "No match");
        assert_eq!(s.step(true), None);
        assert!(!s.ask(0, "   "), "nothing to ask");
        assert_eq!(s.counter(), "");
        assert!(s.ask(0, "k"));
        s.on_hits(0, "k", vec![hit(1, 0, 1), hit(2, 1, 2)], 12_345);
        s.step(false);
        assert_eq!(s.counter(), "2 of 12,345 (first 2 listed)");
    }
}
