//! Reports: plain serde structs and their Markdown/JSON renderings, built from analysis results.

pub mod bottleneck;
pub mod diagnosis;
pub mod evidence;
pub mod findings;
pub mod format;
pub mod gather;
pub mod html;
pub mod inputs;
pub mod markdown;
pub mod page_state;
pub mod redact;
pub mod report_view;
pub mod rules;
