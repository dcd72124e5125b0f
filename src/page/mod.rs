//! The page's native layer: its state machine and the view models its components draw, plain Rust
//! tested natively (the Leptos components in `ui/` only draw these types).
//!
//! [`page_state`] (what the page shows and asks the worker; its views in `page_state_views`),
//! [`tabs`] (the tabs and their part of the URL hash), [`saved`] (the IndexedDB cache's list),
//! [`first_screen`] (the header and verdict card), [`overview_verdict`], [`report_view`] (the report),
//! [`analyses_view`] (the deeper analyses' blocks; their charts' geometry in [`roofline_chart`] and
//! [`collectives_chart`]), [`profile_views`] (the TensorBoard views) and
//! [`timeline_select`] (the timeline's selected range), [`timeline_search`] (its search), [`timeline_walk`] (the arrow keys' walk over
//! its events), [`step_pick`] (the step picker: which steps
//! the report and the views are over), [`arrival_marks`] (collectives' last arrivals on
//! the rank lanes). It reads the diagnosis (`report`), never the
//! other way round.

pub mod analyses_view;
pub mod arrival_marks;
pub mod collectives_chart;
pub mod compared_runs;
pub mod first_screen;
pub mod overview_verdict;
pub mod page_state;
pub mod profile_views;
pub mod redacted_load;
pub mod report_view;
pub mod roofline_chart;
pub mod saved;
pub mod sql;
pub mod step_pick;
pub mod tabs;
pub mod timeline_search;
pub mod timeline_select;
pub mod timeline_walk;
