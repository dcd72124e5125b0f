//! The critical path's result: typed categories (`BoundBy`, `EdgeType`, `CriticalPathStatus`) that
//! serialise to the text the JSON has always had.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Path segments kept in [`CriticalPathResult::rows`] by default: a path over a million-event trace
/// has hundreds of thousands, too many to send to the page or print.
pub const DEFAULT_PATH_ROWS: usize = 1000;

crate::stable_enum! {
    /// What bounds a path segment.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub enum BoundBy {
        #[serde(rename = "cpu_bound")]
        Cpu,
        #[serde(rename = "data_loading")]
        DataLoading,
        #[serde(rename = "gpu_compute_bound")]
        GpuCompute,
        #[serde(rename = "gpu_communication_bound")]
        GpuCommunication,
        #[serde(rename = "gpu_kernel_kernel_overhead")]
        GpuKernelKernelOverhead,
        #[serde(rename = "gpu_kernel_launch_overhead")]
        GpuKernelLaunchOverhead,
        /// A zero-weight dependency (sequencing or synchronisation): bounded by nothing, "".
        #[serde(rename = "")]
        Nothing,
    }
}

/// The bounds the shares are given for, in the summary's order.
pub const BOUND_BY: [BoundBy; 6] = [
    BoundBy::Cpu,
    BoundBy::DataLoading,
    BoundBy::GpuCompute,
    BoundBy::GpuCommunication,
    BoundBy::GpuKernelKernelOverhead,
    BoundBy::GpuKernelLaunchOverhead,
];

impl BoundBy {
    /// Position in [`BOUND_BY`] (`None` for [`BoundBy::Nothing`]).
    pub fn share_index(self) -> Option<usize> {
        BOUND_BY.iter().position(|b| *b == self)
    }
}

crate::stable_enum! {
    /// HTA's edge type of a path segment.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
    pub enum EdgeType {
        /// The span of an operation, or CPU nesting / sequencing on a thread.
        #[serde(rename = "critical_path_operator")]
        Operator,
        /// Zero-weight dependency between consecutive top-level operations of a thread.
        #[serde(rename = "critical_path_dependency")]
        Dependency,
        /// Runtime call start → kernel start.
        #[serde(rename = "critical_path_kernel_launch_delay")]
        KernelLaunchDelay,
        /// Gap between consecutive kernels on a stream.
        #[serde(rename = "critical_path_kernel_kernel_delay")]
        KernelKernelDelay,
        /// Zero-weight synchronisation (GPU → CPU or GPU → GPU).
        #[serde(rename = "critical_path_sync_dependency")]
        SyncDependency,
    }
}

/// Whether a path was found, and why not. Serialised as today's `ok` and `error` fields.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "StatusFields", from = "StatusFields")]
pub enum CriticalPathStatus {
    Ok,
    /// Not computed (the default: `ok: false`, no error).
    #[default]
    NotComputed,
    AnnotationNotFound {
        annotation: String,
    },
    InstanceOutOfRange {
        annotation: String,
        instances: usize,
        asked: usize,
    },
    /// The window is empty (no events with times).
    EmptyTrace,
    NoNodes,
    /// HTA rejects a graph with a sync edge between two events of one stream.
    SyncEdgeOnOneStream {
        stream: i64,
    },
    Cycle,
    /// An error read back from JSON, where only its text is kept.
    Saved {
        message: String,
    },
}

impl CriticalPathStatus {
    /// A stable name of the status kind (`ok`, `annotation_not_found`, ...); the message is
    /// [`Display`](fmt::Display).
    pub fn as_str(&self) -> &'static str {
        match self {
            CriticalPathStatus::Ok => "ok",
            CriticalPathStatus::NotComputed => "not_computed",
            CriticalPathStatus::AnnotationNotFound { .. } => "annotation_not_found",
            CriticalPathStatus::InstanceOutOfRange { .. } => "instance_out_of_range",
            CriticalPathStatus::EmptyTrace => "empty_trace",
            CriticalPathStatus::NoNodes => "no_nodes",
            CriticalPathStatus::SyncEdgeOnOneStream { .. } => "sync_edge_on_one_stream",
            CriticalPathStatus::Cycle => "cycle",
            CriticalPathStatus::Saved { .. } => "saved",
        }
    }

    pub fn is_ok(&self) -> bool {
        *self == CriticalPathStatus::Ok
    }

    /// The JSON's `error`: the message, for a failure.
    pub fn error(&self) -> Option<String> {
        match self {
            CriticalPathStatus::Ok | CriticalPathStatus::NotComputed => None,
            e => Some(e.to_string()),
        }
    }
}

impl fmt::Display for CriticalPathStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CriticalPathStatus::Ok => f.write_str("ok"),
            CriticalPathStatus::NotComputed => f.write_str("not computed"),
            CriticalPathStatus::AnnotationNotFound { annotation } => {
                write!(f, "annotation {annotation:?} not found in the trace")
            }
            CriticalPathStatus::InstanceOutOfRange {
                annotation,
                instances,
                asked,
            } => write!(
                f,
                "annotation {annotation:?} has {instances} instances, asked for {asked}"
            ),
            CriticalPathStatus::EmptyTrace => f.write_str("empty trace"),
            CriticalPathStatus::NoNodes => f.write_str("no operators or kernels in the window"),
            CriticalPathStatus::SyncEdgeOnOneStream { stream } => write!(
                f,
                "HTA rejects the graph: a sync edge between two events of stream {stream}"
            ),
            CriticalPathStatus::Cycle => f.write_str("the graph has a cycle"),
            CriticalPathStatus::Saved { message } => f.write_str(message),
        }
    }
}

impl PartialEq<&str> for BoundBy {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<&str> for EdgeType {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// The JSON form of [`CriticalPathStatus`]: today's `ok` and `error` fields.
#[derive(Serialize, Deserialize)]
struct StatusFields {
    #[serde(default)]
    ok: bool,
    #[serde(default)]
    error: Option<String>,
}

impl From<CriticalPathStatus> for StatusFields {
    fn from(s: CriticalPathStatus) -> Self {
        StatusFields {
            ok: s.is_ok(),
            error: s.error(),
        }
    }
}

impl From<StatusFields> for CriticalPathStatus {
    fn from(s: StatusFields) -> Self {
        match (s.ok, s.error) {
            (true, _) => CriticalPathStatus::Ok,
            (false, None) => CriticalPathStatus::NotComputed,
            (false, Some(message)) => CriticalPathStatus::Saved { message },
        }
    }
}

/// One edge of the critical path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathSegment {
    pub edge_type: EdgeType,
    /// Row of the event the segment is attributed to (operator / kernel spans and kernel gaps).
    pub row: Option<u32>,
    pub name: Option<String>,
    pub stream: Option<i64>,
    /// Where the segment starts, µs (trace clock).
    pub start_us: f64,
    pub duration_us: f64,
    /// What bounds it ([`BoundBy::Nothing`] for zero-weight dependencies).
    pub bound_by: BoundBy,
}

/// Share of the path bounded by one resource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoundShare {
    pub bound_by: BoundBy,
    pub duration_us: f64,
    /// Percent of the path length.
    pub pct: f64,
}

/// Path time of one event (all its segments), for citing.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathEvent {
    pub name: String,
    pub bound_by: BoundBy,
    pub segments: usize,
    pub duration_us: f64,
}

/// The critical path's breakdown.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(into = "ResultFields", from = "ResultFields")]
pub struct CriticalPathResult {
    /// Path edges in path order (the first [`CriticalPathOptions::max_rows`](super::CriticalPathOptions::max_rows) of them).
    pub rows: Vec<PathSegment>,
    /// Number of edges on the whole path.
    pub segments: usize,
    /// Whether a path was found, and why not (JSON: `ok` and `error`).
    pub status: CriticalPathStatus,
    pub annotation: String,
    pub instance: usize,
    /// Window analysed, µs.
    pub window_us: (f64, f64),
    /// Length of the path, µs (Σ segment durations).
    pub total_us: f64,
    pub nodes: usize,
    pub edges: usize,
    /// Share per bound, all of [`BOUND_BY`] in that order.
    pub summary: Vec<BoundShare>,
    /// The longest segments (up to 10), longest first.
    pub top_segments: Vec<PathSegment>,
    /// Events with the most path time (up to 10).
    pub top_events: Vec<PathEvent>,
    pub notes: Vec<String>,
}

/// The serialised form of [`CriticalPathResult`]: its status as today's `ok` and `error` fields in
/// its place. A plain struct, not `#[serde(flatten)]`, so that the binary codec carries it as it is
/// (flatten reads through a map of untyped values, which only JSON can give).
#[derive(Serialize, Deserialize)]
struct ResultFields {
    rows: Vec<PathSegment>,
    #[serde(default)]
    segments: usize,
    #[serde(default)]
    ok: bool,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    annotation: String,
    #[serde(default)]
    instance: usize,
    #[serde(default)]
    window_us: (f64, f64),
    #[serde(default)]
    total_us: f64,
    #[serde(default)]
    nodes: usize,
    #[serde(default)]
    edges: usize,
    #[serde(default)]
    summary: Vec<BoundShare>,
    #[serde(default)]
    top_segments: Vec<PathSegment>,
    #[serde(default)]
    top_events: Vec<PathEvent>,
    #[serde(default)]
    notes: Vec<String>,
}

impl From<CriticalPathResult> for ResultFields {
    fn from(r: CriticalPathResult) -> Self {
        let StatusFields { ok, error } = r.status.into();
        ResultFields {
            rows: r.rows,
            segments: r.segments,
            ok,
            error,
            annotation: r.annotation,
            instance: r.instance,
            window_us: r.window_us,
            total_us: r.total_us,
            nodes: r.nodes,
            edges: r.edges,
            summary: r.summary,
            top_segments: r.top_segments,
            top_events: r.top_events,
            notes: r.notes,
        }
    }
}

impl From<ResultFields> for CriticalPathResult {
    fn from(r: ResultFields) -> Self {
        CriticalPathResult {
            rows: r.rows,
            segments: r.segments,
            status: StatusFields {
                ok: r.ok,
                error: r.error,
            }
            .into(),
            annotation: r.annotation,
            instance: r.instance,
            window_us: r.window_us,
            total_us: r.total_us,
            nodes: r.nodes,
            edges: r.edges,
            summary: r.summary,
            top_segments: r.top_segments,
            top_events: r.top_events,
            notes: r.notes,
        }
    }
}

impl CriticalPathResult {
    /// Percent of the path bounded by `b` (a [`BoundBy`], or its text); 0 when absent.
    pub fn pct<B>(&self, b: B) -> f64
    where
        BoundBy: PartialEq<B>,
    {
        self.summary
            .iter()
            .find(|s| s.bound_by == b)
            .map_or(0.0, |s| s.pct)
    }

    /// Whether a path was found.
    pub fn ok(&self) -> bool {
        self.status.is_ok()
    }

    /// Why no path was found, as the JSON's `error` says it.
    pub fn error(&self) -> Option<String> {
        self.status.error()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_serialise_to_todays_text() {
        for b in BOUND_BY.into_iter().chain([BoundBy::Nothing]) {
            let json = serde_json::to_string(&b).unwrap();
            assert_eq!(json, format!("\"{b}\""));
            assert_eq!(serde_json::from_str::<BoundBy>(&json).unwrap(), b);
        }
        assert_eq!(
            serde_json::to_string(&EdgeType::KernelLaunchDelay).unwrap(),
            "\"critical_path_kernel_launch_delay\""
        );
        assert!(BoundBy::GpuCompute == "gpu_compute_bound");
    }

    #[test]
    fn status_keeps_the_ok_and_error_fields_in_place() {
        let r = CriticalPathResult {
            status: CriticalPathStatus::AnnotationNotFound {
                annotation: "x".into(),
            },
            ..Default::default()
        };
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.starts_with(
            r#"{"rows":[],"segments":0,"ok":false,"error":"annotation \"x\" not found in the trace","annotation":"""#
        ));
        let back: CriticalPathResult = serde_json::from_str(&json).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
        let ok = CriticalPathResult {
            status: CriticalPathStatus::Ok,
            ..Default::default()
        };
        let json = serde_json::to_string(&ok).unwrap();
        assert!(json.contains(r#""ok":true,"error":null,"#));
        assert!(serde_json::from_str::<CriticalPathResult>(&json)
            .unwrap()
            .ok());
    }
}
