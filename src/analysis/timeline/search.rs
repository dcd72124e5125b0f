//! The timeline's search: the drawn events whose name holds a text, by start.

use serde::{Deserialize, Serialize};

use super::drawable;
use crate::table::TraceTable;

/// An event a timeline search found (a row of the rank's table and its span, ns).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchHit {
    pub row: u32,
    pub start_ns: i64,
    pub end_ns: i64,
}

/// Most hits a search answers with (its count says how many there are).
pub const MAX_SEARCH_HITS: usize = 5000;

/// The events the timeline draws ([`drawable`]) whose name contains `text` (any case, trimmed), by
/// start: at most [`MAX_SEARCH_HITS`] of them, and how many match. Nothing for an empty text.
pub fn search(t: &TraceTable, text: &str) -> (Vec<SearchHit>, u64) {
    let needle = text.trim().to_lowercase();
    if needle.is_empty() {
        return (Vec::new(), 0);
    }
    let dict = t.name_dictionary();
    let matches: Vec<bool> = (0..dict.len())
        .map(|i| dict.value(i).to_lowercase().contains(&needle))
        .collect();
    let mut hits: Vec<SearchHit> = (0..t.len())
        .filter(|&r| matches[t.name_id(r) as usize])
        .filter_map(|r| {
            drawable(t, r).map(|(_, start_ns, end_ns)| SearchHit {
                row: r as u32,
                start_ns,
                end_ns,
            })
        })
        .collect();
    crate::sort::sort_by_key(&mut hits, |h| (h.start_ns, h.row));
    let total = hits.len() as u64;
    hits.truncate(MAX_SEARCH_HITS);
    (hits, total)
}
