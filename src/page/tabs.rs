//! The page's tabs (one view each) and the URL hash that names the tab shown (`#tab=analyses`).
//!
//! The hash is a list of `key=value` parts joined by `&`: `tab=` is this module's, `timeline=` is the
//! timeline's range ([`crate::report::timeline_view::hash_of`]); each writer replaces only its own
//! part ([`with_part`]), so both live in one hash. To add a tab (Overview, Operators, Kernels, Memory,
//! Modules...): a variant here (its serde name is its stable name, used in `#tab=` and the tab's
//! element ids `tab-NAME` / `panel-NAME`), its [`Tab::label`], and its panel in `ui::view`.

use serde::{Deserialize, Serialize};

use crate::page::profile_views::ViewId;

crate::stable_enum! {
    /// One view of the results, reachable from the tab bar.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "snake_case")]
    pub enum Tab {
        /// The diagnosis: the full report (the verdict card is above every tab).
        #[default]
        Report,
        /// The TensorBoard-style views, one tab each (one panel, `panel-views`).
        Overview,
        Operators,
        Kernels,
        Memory,
        Modules,
        Timeline,
        /// The HTA-style deeper analyses.
        Analyses,
        /// The event explorer.
        Explore,
        /// Two runs compared.
        Compare,
        /// SQL over every event (DuckDB-WASM, fetched when the tab first opens).
        Sql,
    }
}

impl Tab {
    /// The tab's text in the tab bar.
    pub fn label(self) -> &'static str {
        match self {
            Tab::Report => "Report",
            Tab::Overview => "Overview",
            Tab::Operators => "Operators",
            Tab::Kernels => "GPU kernels",
            Tab::Memory => "Memory",
            Tab::Modules => "Modules",
            Tab::Analyses => "Analyses",
            Tab::Timeline => "Timeline",
            Tab::Explore => "Explore",
            Tab::Compare => "Compare",
            Tab::Sql => "SQL",
        }
    }

    /// The TensorBoard-style view this tab shows, if it is one of them.
    pub fn view(self) -> Option<ViewId> {
        match self {
            Tab::Overview => Some(ViewId::Overview),
            Tab::Operators => Some(ViewId::Operators),
            Tab::Kernels => Some(ViewId::Kernels),
            Tab::Memory => Some(ViewId::Memory),
            Tab::Modules => Some(ViewId::Modules),
            _ => None,
        }
    }

    /// The name of the panel this tab shows (`panel-NAME`): the views share one panel, the others
    /// have their own.
    pub fn panel(self) -> &'static str {
        match self.view() {
            Some(_) => "views",
            None => self.as_str(),
        }
    }

    /// The tab a URL hash names: its `tab=` part; without one, a hash that names a timeline range
    /// (a link to a view of the timeline) opens the timeline. `None`: the hash names no tab.
    pub fn from_hash(hash: &str) -> Option<Tab> {
        match part(hash, "tab") {
            Some(name) => Tab::parse(name),
            None => part(hash, "timeline").map(|_| Tab::Timeline),
        }
    }

    /// `hash` with its `tab=` part naming this tab (other parts kept).
    pub fn in_hash(self, hash: &str) -> String {
        with_part(hash, &format!("tab={}", self.as_str()))
    }
}

/// The parts of a hash (`#a=1&b=2` → `["a=1", "b=2"]`), empty ones left out.
fn parts(hash: &str) -> impl Iterator<Item = &str> {
    hash.trim_start_matches('#')
        .split('&')
        .filter(|p| !p.is_empty())
}

/// The value of the `key=` part of a hash, if it has one.
pub fn part<'a>(hash: &'a str, key: &str) -> Option<&'a str> {
    parts(hash).find_map(|p| p.strip_prefix(key)?.strip_prefix('='))
}

/// `hash` (with or without its `#`) with `new_part` (`key=value`) in place of its part of the same
/// key, or added at the end; the result starts with `#`.
pub fn with_part(hash: &str, new_part: &str) -> String {
    let key = new_part.split('=').next().unwrap_or(new_part);
    let mut out: Vec<&str> = Vec::new();
    let mut placed = false;
    for p in parts(hash) {
        if p.split('=').next() == Some(key) {
            if !placed {
                out.push(new_part);
                placed = true;
            }
        } else {
            out.push(p);
        }
    }
    if !placed {
        out.push(new_part);
    }
    format!("#{}", out.join("&"))
}

/// `hash` without its `key=` part (the others kept, in order); the result starts with `#`.
pub fn without_part(hash: &str, key: &str) -> String {
    let kept: Vec<&str> = parts(hash)
        .filter(|p| p.split('=').next() != Some(key))
        .collect();
    format!("#{}", kept.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::timeline_view::{hash_of, parse_hash, Viewport};

    #[test]
    fn names_are_stable_and_round_trip() {
        let names: Vec<&str> = Tab::ALL.iter().map(|t| t.as_str()).collect();
        assert_eq!(
            names,
            [
                "report",
                "overview",
                "operators",
                "kernels",
                "memory",
                "modules",
                "timeline",
                "analyses",
                "explore",
                "compare",
                "sql"
            ]
        );
        for t in Tab::ALL {
            assert_eq!(
                Tab::from_hash(&Tab::Report.in_hash(&t.in_hash(""))),
                Some(Tab::Report)
            );
            assert_eq!(Tab::from_hash(&t.in_hash("#")), Some(t));
            assert!(!t.label().is_empty());
        }
        assert_eq!(Tab::default(), Tab::Report);
    }

    #[test]
    fn a_hash_without_a_tab_names_none_unless_it_names_a_timeline_range() {
        assert_eq!(Tab::from_hash(""), None);
        assert_eq!(Tab::from_hash("#main"), None);
        assert_eq!(Tab::from_hash("#tab=nonsense"), None);
        assert_eq!(Tab::from_hash("#tab=analyses"), Some(Tab::Analyses));
        assert_eq!(Tab::from_hash("#timeline=0:1-2"), Some(Tab::Timeline));
        assert_eq!(
            Tab::from_hash("#timeline=0:1-2&tab=explore"),
            Some(Tab::Explore)
        );
    }

    #[test]
    fn the_tab_and_the_timeline_range_share_the_hash() {
        let v = Viewport::new(100, 900);
        // The timeline writes its range: the tab stays.
        let h = with_part("#tab=analyses", &hash_of(1, &v));
        assert_eq!(h, "#tab=analyses&timeline=1:100-900");
        assert_eq!(Tab::from_hash(&h), Some(Tab::Analyses));
        assert_eq!(parse_hash(&h), Some((1, v)));
        // The tab changes: the range stays, in place.
        let h = Tab::Timeline.in_hash(&h);
        assert_eq!(h, "#tab=timeline&timeline=1:100-900");
        assert_eq!(parse_hash(&h), Some((1, v)));
        // A new range replaces the old one; repeated parts collapse into one.
        let w = Viewport::new(200, 300);
        let h = with_part(&format!("{h}&timeline=9:1-2"), &hash_of(0, &w));
        assert_eq!(h, "#tab=timeline&timeline=0:200-300");
        assert_eq!(with_part("", "tab=report"), "#tab=report");
        assert_eq!(part("#a=1&tab=x", "tab"), Some("x"));
        assert_eq!(part("#tabs=1", "tab"), None);
        assert_eq!(without_part("#a=1&sel=2-3&b=4", "sel"), "#a=1&b=4");
        assert_eq!(without_part("#sel=2-3", "sel"), "#");
        assert_eq!(without_part("#a=1", "sel"), "#a=1");
    }
}
