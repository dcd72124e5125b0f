//! Counted oddities of a trace (Perfetto-style stats): what was odd, how often, how bad, one example.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

crate::stable_enum! {
    /// How much a diagnostic matters to the figures.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum Severity {
        /// Worth knowing; no figure is affected.
        Info,
        /// Some events or values were dropped or changed; figures may be affected.
        DataLoss,
        /// Input is malformed in a way that makes some figures unreliable.
        Error,
    }
}

crate::stable_enum! {
    /// The kinds of oddity counted while loading.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
    #[serde(rename_all = "kebab-case")]
    pub enum DiagnosticKind {
        UnknownPhase,
        UnknownCategory,
        MissingPhase,
        MissingTimestamp,
        MissingDuration,
        NegativeDuration,
        ImplausibleDuration,
        MixedTypeArg,
        WellKnownArgWrongType,
        TruncatedTail,
        GzipChecksum,
        MissingClosingBrackets,
        TrailingComma,
        TrailingPadding,
        TrailingData,
        DuplicateTraceEvents,
        NonObjectEvent,
        UnpairedBegin,
        UnpairedEnd,
        BadFlowId,
        MalformedEvent,
        OversizedMetadata,
        DuplicateRank,
        MissingRank,
        OutsideProfilingWindow,
        MixedTimeBases,
    }
}

impl DiagnosticKind {
    pub fn severity(self) -> Severity {
        use DiagnosticKind::*;
        match self {
            UnknownPhase
            | UnknownCategory
            | MixedTypeArg
            | TrailingComma
            | TrailingPadding
            | OversizedMetadata
            | MissingRank
            | OutsideProfilingWindow
            | UnpairedBegin
            | UnpairedEnd
            | BadFlowId => Severity::Info,
            MissingPhase
            | ImplausibleDuration
            | MissingTimestamp
            | MissingDuration
            | TruncatedTail
            | GzipChecksum
            | MissingClosingBrackets
            | NonObjectEvent
            | TrailingData
            | DuplicateTraceEvents
            | WellKnownArgWrongType
            | DuplicateRank
            | MixedTimeBases => Severity::DataLoss,
            NegativeDuration | MalformedEvent => Severity::Error,
        }
    }

    /// What the user should read, in plain words.
    pub fn describe(self) -> &'static str {
        use DiagnosticKind::*;
        match self {
            UnknownPhase => "events with a phase (ph) this tool does not know; kept, counted as 'other'",
            UnknownCategory => "events with a category this tool does not know; kept with kind 'other'",
            MissingPhase => "events without a phase (ph)",
            MissingTimestamp => "timed events without a readable timestamp (ts absent, not a number, or outside 1897-2116 as epoch µs); left out of time figures",
            ImplausibleDuration => "events with a duration over 2^53 ns (104 days); kept without a duration, so left out of time figures",
            MissingDuration => "complete events (ph X) without a duration (dur)",
            NegativeDuration => "events with a negative duration (dur < 0, or an E before its B); left out of time figures (the HTA-compatible mode takes dur as HTA does)",
            MixedTypeArg => "args keys whose values have different types across events; stored as text",
            WellKnownArgWrongType => "well-known args (bytes, memory bandwidth, ...) with a value of the wrong type; set to null",
            TruncatedTail => "the file ends inside an event: the trace was cut off mid-write; the incomplete event was dropped",
            GzipChecksum => "a gzip member whose checksum (CRC-32 or length) disagrees with the text it inflated to: the file was damaged after it was written; the figures come from the text as read",
            MissingClosingBrackets => "the file ends before its closing brackets; every complete event before that was loaded",
            TrailingComma => "a trailing comma before a closing bracket; tolerated",
            TrailingPadding => "zero bytes after the end of the JSON (a preallocated file); ignored",
            TrailingData => "data after the end of the JSON (a second document, or garbage); not read",
            DuplicateTraceEvents => "more than one top-level \"traceEvents\" list; the events of all were read (a JSON reader would keep only the last)",
            NonObjectEvent => "entries of traceEvents that are not JSON objects; skipped",
            UnpairedBegin => "begin events (ph B) without a matching end (ph E)",
            UnpairedEnd => "end events (ph E) without a matching begin (ph B)",
            BadFlowId => "flow events whose id is neither a number nor a hex string",
            MalformedEvent => "events that are not valid JSON; skipped",
            OversizedMetadata => "a top-level metadata value larger than the limit; not kept",
            DuplicateRank => "two files claim the same rank",
            MissingRank => "no rank in distributedInfo or the file name; rank taken from load order",
            OutsideProfilingWindow => "events outside the profiler's window",
            MixedTimeBases => "events whose timestamps are in another time base (absolute epoch times among relative ones, years apart): the window would span years, so the cluster with the device work is analysed and these are left out of time figures",
        }
    }
}

/// One counted oddity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub kind: DiagnosticKind,
    pub severity: Severity,
    pub count: u64,
    /// The first example seen (an event index, a key, a byte offset...).
    pub example: String,
    pub description: String,
}

/// All oddities of one load, counted by kind.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Diagnostics {
    counts: BTreeMap<DiagnosticKind, (u64, String)>,
}

impl Diagnostics {
    /// Count one occurrence; `example` is only evaluated for the first one.
    pub fn add(&mut self, kind: DiagnosticKind, example: impl FnOnce() -> String) {
        self.add_n(kind, 1, example);
    }

    pub fn add_n(&mut self, kind: DiagnosticKind, n: u64, example: impl FnOnce() -> String) {
        if n == 0 {
            return;
        }
        match self.counts.get_mut(&kind) {
            Some(entry) => entry.0 += n,
            None => {
                self.counts.insert(kind, (n, example()));
            }
        }
    }

    pub fn count(&self, kind: DiagnosticKind) -> u64 {
        self.counts.get(&kind).map_or(0, |e| e.0)
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    pub fn merge(&mut self, other: &Diagnostics) {
        for (kind, (n, ex)) in &other.counts {
            self.add_n(*kind, *n, || ex.clone());
        }
    }

    /// Every diagnostic, worst first, then by kind.
    pub fn list(&self) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = self
            .counts
            .iter()
            .map(|(kind, (count, example))| Diagnostic {
                kind: *kind,
                severity: kind.severity(),
                count: *count,
                example: example.clone(),
                description: kind.describe().to_string(),
            })
            .collect();
        crate::sort::sort_by(&mut out, |a, b| {
            b.severity.cmp(&a.severity).then(a.kind.cmp(&b.kind))
        });
        out
    }
}
