//! Reports: plain serde structs and their Markdown/JSON renderings, built from analysis results.
//!
//! The diagnosis runs in stages: [`host`] (what the host did) → [`context`] (what the trace holds, the
//! analysed window) → [`gather`] (figures over that window; both stages a map-reduce over ranks,
//! [`gather_parts`]) with [`attribution`] (each idle interval one cause) and [`patterns`] (kernel
//! names) → [`rules`] (findings by recoverable time) → [`bottleneck`] →
//! [`diagnosis`] (the fixed-form report).

pub mod attribution;
pub mod bottleneck;
pub mod cold;
pub mod collectives_text;
pub mod compare;
pub mod compare_text;
pub mod context;
pub mod diagnosis;
pub mod findings;
pub mod format;
pub mod gate;
pub mod gather;
pub mod gather_parts;
pub mod host;
pub mod inputs;
pub mod markdown;
pub mod patterns;
pub mod perfetto;
pub mod redact;
pub mod regression_gate;
pub mod rich_text;
pub mod roofline_rules;
pub mod roofline_text;
pub mod rules;
pub mod text;
pub mod timeline_view;
pub mod views_text;
pub mod wording;
