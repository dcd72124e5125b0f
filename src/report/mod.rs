//! Reports: plain serde structs and their Markdown/JSON renderings, built from analysis results.

pub mod diagnosis;
pub mod markdown;
