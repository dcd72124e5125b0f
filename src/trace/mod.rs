//! Bytes → events: gzip sniffing and streaming inflate, a resumable JSON reader, Kineto dialects and
//! counted diagnostics. Nothing here holds the whole text; nothing here knows about tables.

pub mod crc32;
pub mod diagnostics;
pub mod dialect;
pub mod event;
pub mod json;
pub mod parse_event;
pub mod reader;
pub mod source;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use diagnostics::{Diagnostic, DiagnosticKind, Diagnostics, Severity};
pub use event::{ArgValue, EventSink, IdValue, RawEvent, TsForm};
pub use reader::{ReadSummary, TraceReader};
pub use source::Decompressor;

/// Why a file could not be loaded at all.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoadErrorKind {
    Empty,
    CorruptGzip,
    NotJson,
    NotATrace,
    Truncated,
    Cancelled,
    Io,
}

/// A fatal load error: what was expected, what was found, and where, in the user's words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadError {
    pub kind: LoadErrorKind,
    pub file: String,
    /// Byte offset in the (decompressed) text, when it helps.
    pub offset: Option<u64>,
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LoadError {}

/// What the first bytes of a non-JSON input look like, as " (…: what to do)", or "".
fn format_guess(head: &[u8], inside_gzip: bool) -> &'static str {
    let tar = head.get(257..262) == Some(b"ustar".as_slice());
    if inside_gzip && head.starts_with(&[0x1f, 0x8b]) {
        " (gzip compressed twice: decompress it once, e.g. `gunzip -c FILE > trace.json.gz`)"
    } else if tar && inside_gzip {
        " (a tar archive inside the gzip, a .tar.gz: extract it with `tar -xzf` and load the trace files)"
    } else if tar {
        " (a tar archive: extract it with `tar -xf` and load the trace files)"
    } else if head.starts_with(b"PK\x03\x04") {
        " (a zip archive: unzip it first)"
    } else if head.starts_with(b"\x28\xb5\x2f\xfd") {
        " (zstd-compressed: decompress it first)"
    } else if head.starts_with(b"\xff\xfe") || head.starts_with(b"\xfe\xff") {
        " (UTF-16 text: convert it to UTF-8, e.g. `iconv -f UTF-16 -t UTF-8`)"
    } else if head.starts_with(b"BZh") {
        " (bzip2-compressed: decompress it first)"
    } else if head.starts_with(b"\x89PNG") || head.starts_with(b"\xff\xd8\xff") {
        " (an image, not a trace)"
    } else if head.starts_with(b"\x80") || head.starts_with(b"PTMF") {
        " (a binary file, perhaps a pickle or a protobuf trace)"
    } else {
        ""
    }
}

const WHAT_WE_READ: &str =
    "a PyTorch profiler trace (the Chrome-trace JSON that torch.profiler writes, \
                            with a \"traceEvents\" list; .json or .json.gz)";

fn name(file: &str) -> &str {
    if file.is_empty() {
        "the input"
    } else {
        file
    }
}

impl LoadError {
    pub fn new(kind: LoadErrorKind, file: &str, offset: Option<u64>, message: String) -> Self {
        LoadError {
            kind,
            file: file.to_string(),
            offset,
            message,
        }
    }

    pub fn empty(file: &str, bytes: u64) -> Self {
        let what = if bytes == 0 {
            "is empty (0 bytes)".to_string()
        } else {
            format!("holds only white space ({bytes} bytes)")
        };
        Self::new(
            LoadErrorKind::Empty,
            file,
            (bytes > 0).then_some(bytes),
            format!("{} {what}: expected {WHAT_WE_READ}.", name(file)),
        )
    }

    pub fn truncated(file: &str, bytes: u64) -> Self {
        Self::new(
            LoadErrorKind::Truncated,
            file,
            Some(bytes),
            format!(
                "{} ends after {bytes} bytes, before any complete trace event: the file was cut off \
                 (an interrupted download or a profiler that did not finish writing).",
                name(file)
            ),
        )
    }

    /// The same error said of a gzip file of `raw` bytes whose stream was `cut` (or not) before its
    /// end: the sizes of an empty or cut-off file are those of the file, not of its inflated text.
    pub fn of_gzip(self, raw: u64, cut: bool) -> Self {
        let text = self.offset.unwrap_or(0);
        let file = self.file.clone();
        let cut_off =
            "the file was cut off (an interrupted download or copy, or a profiler that did not \
                       finish writing)";
        match self.kind {
            LoadErrorKind::Empty | LoadErrorKind::Truncated if cut && text == 0 => Self::new(
                LoadErrorKind::Truncated,
                &file,
                Some(raw),
                format!(
                    "{} is a gzip file that ends after {raw} bytes, before any of its JSON text: {cut_off}.",
                    name(&file)
                ),
            ),
            LoadErrorKind::Empty => Self::new(
                LoadErrorKind::Empty,
                &file,
                None,
                format!(
                    "{} is gzip-compressed ({raw} bytes), but its text {}: expected {WHAT_WE_READ}.",
                    name(&file),
                    if text == 0 {
                        "is empty".to_string()
                    } else {
                        format!("holds only white space ({text} bytes)")
                    }
                ),
            ),
            LoadErrorKind::Truncated => Self::new(
                LoadErrorKind::Truncated,
                &file,
                Some(text),
                format!(
                    "{} is a gzip file ({raw} bytes) whose JSON text ends after {text} bytes, before any \
                     complete trace event: {cut_off}.",
                    name(&file)
                ),
            ),
            _ => self,
        }
    }

    pub fn corrupt_gzip(file: &str, offset: u64, detail: &str) -> Self {
        Self::new(
            LoadErrorKind::CorruptGzip,
            file,
            Some(offset),
            format!(
                "{} starts like a gzip file, but its compressed data is damaged at compressed byte {offset} \
                 ({detail}). Try `gunzip -t` on it, or export the trace again.",
                name(file)
            ),
        )
    }

    pub fn not_json(file: &str, offset: u64, expected: &str) -> Self {
        Self::new(
            LoadErrorKind::NotJson,
            file,
            Some(offset),
            format!(
                "{} is not valid JSON: at byte {offset} expected {expected}.",
                name(file)
            ),
        )
    }

    /// The input does not start like JSON: `head` is its first bytes (up to a few hundred), from
    /// `offset`; `inside_gzip`: they are the inflated text of a gzip file.
    pub fn not_json_start(file: &str, offset: u64, head: &[u8], inside_gzip: bool) -> Self {
        let hex: Vec<String> = head.iter().take(4).map(|b| format!("{b:02X}")).collect();
        let guess = format_guess(head, inside_gzip);
        let (what, expected) = if inside_gzip {
            (
                "is gzip-compressed, but what it holds is not JSON",
                "'{' or '['",
            )
        } else {
            ("is neither JSON nor gzip", "'{' or '[' (or gzip data)")
        };
        Self::new(
            LoadErrorKind::NotJson,
            file,
            Some(offset),
            format!(
                "{} {what}: expected {expected}, found bytes {}{guess} at byte {offset}. \
                 Expected {WHAT_WE_READ}.",
                name(file),
                hex.join(" ")
            ),
        )
    }

    pub fn not_a_trace_array(file: &str, first: u8) -> Self {
        let found = match first {
            b'[' => "a JSON array of arrays (this looks like a memory-timeline export, e.g. from export_memory_timeline)",
            b'0'..=b'9' | b'-' => "a JSON array of numbers",
            b'"' => "a JSON array of strings",
            _ => "a JSON array whose entries are not events",
        };
        Self::new(
            LoadErrorKind::NotATrace,
            file,
            None,
            format!("{} is JSON but not a profiler trace: expected a list of trace events (objects), found {found}. Expected {WHAT_WE_READ}.", name(file)),
        )
    }

    /// An object without a `traceEvents` list: `keys` as written, `values` the top-level values read.
    pub fn not_a_trace_object(
        file: &str,
        keys: &[String],
        values: &serde_json::Map<String, serde_json::Value>,
    ) -> Self {
        use serde_json::Value;
        let has = |k: &str| keys.iter().any(|x| x == k);
        // A trace wrapped in another object: `{"data": {"traceEvents": [...]}}`.
        let nested = values.iter().find_map(|(k, v)| match v.get("traceEvents") {
            Some(Value::Array(_)) => Some(k.as_str()),
            _ => None,
        });
        let guess = if let Some(outer) = nested {
            format!(
                " The events are one level down, in \"{outer}\".traceEvents: save that inner object \
                 (the value of \"{outer}\") as the trace."
            )
        } else if has("nodes") && (has("schema") || has("pid")) {
            " This looks like a PyTorch execution trace (Chakra ET, from ExecutionTraceObserver), which records \
             the operator graph but not timings. Record a Kineto trace with torch.profiler \
             (export_chrome_trace or tensorboard_trace_handler)."
                .to_string()
        } else if let Some(tool) = foreign_profiler(keys) {
            format!(
                " This looks like {tool}, not a PyTorch profiler trace. To see the PyTorch job, record it with \
                 torch.profiler (`torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], \
                 schedule=torch.profiler.schedule(wait=1, warmup=1, active=3), \
                 on_trace_ready=torch.profiler.tensorboard_trace_handler(\"./log\"))`; on ROCm the same call \
                 records HIP kernels) and load the JSON it writes."
            )
        } else if has("segments") || has("device_traces") {
            " This looks like a CUDA memory snapshot (torch.cuda.memory._snapshot), not a profiler trace."
                .to_string()
        } else {
            String::new()
        };
        let shown: Vec<&str> = keys.iter().take(12).map(|s| s.as_str()).collect();
        let found = if let Some(v) = values.get("traceEvents") {
            let what = match v {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                Value::Array(_) => "a list",
                Value::Object(_) => "an object",
            };
            format!("\"traceEvents\" holding {what}")
        } else if has("traceEvents") {
            "\"traceEvents\" holding a value too large to keep that is not a list".to_string()
        } else if keys.is_empty() {
            "an object with no keys".to_string()
        } else {
            format!("top-level keys {}", shown.join(", "))
        };
        Self::new(
            LoadErrorKind::NotATrace,
            file,
            None,
            format!("{} is JSON but not a profiler trace: expected a \"traceEvents\" list, found {found}.{guess}", name(file)),
        )
    }

    pub fn cancelled(file: &str) -> Self {
        Self::new(
            LoadErrorKind::Cancelled,
            file,
            None,
            format!("Loading {} was cancelled.", name(file)),
        )
    }

    pub fn io(file: &str, detail: &str) -> Self {
        Self::new(
            LoadErrorKind::Io,
            file,
            None,
            format!("{} could not be read: {detail}.", name(file)),
        )
    }
}

/// Raw file bytes (plain or gzip) → events into a sink, fed in chunks of any size.
pub struct StreamReader<S: EventSink> {
    file: String,
    decompressor: Decompressor,
    reader: TraceReader,
    pub sink: S,
    text_bytes: u64,
    /// The gzip data broke after some events were read: the rest is ignored, what was read is kept.
    broken: Option<source::CorruptGzip>,
    /// Set when the text comes inflated from elsewhere ([`StreamReader::feed_text`]): whether the
    /// file is gzip, and the file bytes behind the text so far.
    text_source: Option<(bool, u64)>,
}

impl<S: EventSink> StreamReader<S> {
    pub fn new(file: &str, sink: S) -> Self {
        StreamReader {
            file: file.to_string(),
            decompressor: Decompressor::new(),
            reader: TraceReader::new(file),
            sink,
            text_bytes: 0,
            broken: None,
            text_source: None,
        }
    }

    /// Raw bytes taken so far (compressed, for gzip).
    pub fn raw_bytes(&self) -> u64 {
        match self.text_source {
            Some((_, raw)) => raw,
            None => self.decompressor.raw_bytes(),
        }
    }

    /// JSON text bytes read so far.
    pub fn text_bytes(&self) -> u64 {
        self.text_bytes
    }

    /// Entries of `traceEvents` read so far.
    pub fn entries(&self) -> u64 {
        self.reader.entries()
    }

    pub fn is_gzip(&self) -> bool {
        match self.text_source {
            Some((gzip, _)) => gzip,
            None => self.decompressor.is_gzip,
        }
    }

    /// Takes JSON text that a [`Decompressor`] elsewhere made from the file (the browser inflates in
    /// a second worker while this one parses). `gzip`: the file is gzip; `raw_bytes`: the file bytes
    /// behind all the text so far. Feed a file through this or through [`StreamReader::feed`], not both.
    pub fn feed_text(&mut self, text: &[u8], gzip: bool, raw_bytes: u64) -> Result<(), LoadError> {
        self.text_source = Some((gzip, raw_bytes));
        if self.broken.is_some() {
            return Ok(());
        }
        self.text_bytes += text.len() as u64;
        let fed = self.reader.feed(text, &mut self.sink);
        fed.map_err(|e| self.said_of_gzip_text(e, gzip))
    }

    /// An error of the JSON reader, said of the inflated text when the file is `gzip`: a non-JSON
    /// start then names what the gzip holds (a tar, another gzip).
    fn said_of_gzip_text(&self, e: LoadError, gzip: bool) -> LoadError {
        match self.reader.bad_start() {
            Some((at, head)) if gzip => LoadError::not_json_start(&self.file, at, head, true),
            _ => e,
        }
    }

    /// The [`Decompressor`] behind [`StreamReader::feed_text`] found the gzip data corrupt, after the
    /// text already fed: handled as [`StreamReader::feed`] handles it (what was read is kept).
    pub fn text_source_corrupt(&mut self, c: source::CorruptGzip) -> Result<(), LoadError> {
        self.corrupt(c)
    }

    fn corrupt(&mut self, c: source::CorruptGzip) -> Result<(), LoadError> {
        if self.reader.entries() > 0 {
            // Keep what was loaded: a damaged tail is like a truncated one.
            self.broken = Some(c);
            Ok(())
        } else {
            Err(LoadError::corrupt_gzip(&self.file, c.offset, &c.detail))
        }
    }

    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), LoadError> {
        if self.broken.is_some() {
            return Ok(());
        }
        let reader = &mut self.reader;
        let sink = &mut self.sink;
        let text_bytes = &mut self.text_bytes;
        let mut emit = |text: &[u8]| {
            *text_bytes += text.len() as u64;
            reader.feed(text, sink)
        };
        match self.decompressor.feed(bytes, &mut emit) {
            Ok(()) => Ok(()),
            Err(source::Feed::Sink(e)) => Err(self.said_of_gzip_text(e, self.decompressor.is_gzip)),
            Err(source::Feed::Corrupt(c)) => self.corrupt(c),
        }
    }

    /// Ends the input; returns the reader's summary and the sink.
    pub fn finish(mut self) -> Result<(ReadSummary, S), LoadError> {
        let reader = &mut self.reader;
        let sink = &mut self.sink;
        let text_bytes = &mut self.text_bytes;
        let mut emit = |text: &[u8]| {
            *text_bytes += text.len() as u64;
            reader.feed(text, sink)
        };
        let gzip_end = if self.broken.is_none() {
            self.decompressor.finish(&mut emit)?
        } else {
            source::GzipEnd::default()
        };
        self.end(gzip_end)
    }

    /// Ends text fed by [`StreamReader::feed_text`], with the file's `gzip` and total `raw_bytes`.
    /// `gzip_end`: how the source's [`Decompressor::finish`] said the gzip stream ended (its text
    /// already fed).
    pub fn finish_text(
        mut self,
        gzip: bool,
        raw_bytes: u64,
        gzip_end: source::GzipEnd,
    ) -> Result<(ReadSummary, S), LoadError> {
        self.text_source = Some((gzip, raw_bytes));
        let gzip_end = if self.broken.is_none() {
            gzip_end
        } else {
            source::GzipEnd::default()
        };
        self.end(gzip_end)
    }

    fn end(mut self, gzip_end: source::GzipEnd) -> Result<(ReadSummary, S), LoadError> {
        let gzip_cut = gzip_end.cut;
        let (gzip, raw) = (self.is_gzip(), self.raw_bytes());
        let bad_start = self
            .reader
            .bad_start()
            .map(|(at, head)| (at, head.to_vec()));
        let file = self.file.clone();
        let mut summary = self
            .reader
            .finish(&mut self.sink)
            .map_err(|e| match &bad_start {
                Some((at, head)) if gzip => LoadError::not_json_start(&file, *at, head, true),
                _ if gzip => e.of_gzip(raw, gzip_cut),
                _ => e,
            })?;
        if let Some(c) = &self.broken {
            let detail = format!(
                "the gzip data is damaged at compressed byte {} ({}); the rest was not read",
                c.offset, c.detail
            );
            summary
                .diagnostics
                .add(DiagnosticKind::TruncatedTail, || detail);
        }
        if gzip_cut {
            summary.diagnostics.add(DiagnosticKind::TruncatedTail, || {
                "the gzip stream ends before its end marker".into()
            });
        }
        if let Some(mismatch) = gzip_end.checksum_mismatch {
            let file = self.file.clone();
            summary.diagnostics.add(DiagnosticKind::GzipChecksum, || {
                format!("{}: {mismatch}", name(&file))
            });
        }
        Ok((summary, self.sink))
    }
}

/// The profiler a non-Kineto JSON object's top-level keys name: rocprofiler-sdk (`rocprofv3`),
/// Nsight Systems' JSON export, a TensorFlow/XLA profile.
fn foreign_profiler(keys: &[String]) -> Option<&'static str> {
    let any = |m: &str| keys.iter().any(|k| k.to_ascii_lowercase().contains(m));
    if any("rocprof") || any("rocpd") {
        Some("a rocprofiler-sdk (rocprofv3) JSON result of HIP/HSA API calls and kernel dispatches")
    } else if any("nsys") || any("cupti_activity") || any("nvtx") {
        Some("an Nsight Systems (nsys) export")
    } else if any("xspace") || any("xplane") || any("tensorflow") {
        Some("a TensorFlow/XLA profiler export (XSpace)")
    } else {
        None
    }
}
