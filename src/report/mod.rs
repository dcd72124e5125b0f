//! Reports: plain serde structs and their Markdown/JSON renderings, built from analysis results.

pub mod markdown;
