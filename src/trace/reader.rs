//! The resumable top-level reader: JSON text in chunks of any size → events, metadata and diagnostics.
//!
//! It never holds the whole text: complete events are parsed straight from each chunk; only an event
//! cut by a chunk boundary is copied into a carry buffer, and a byte scanner (resumable byte by byte)
//! finds where it ends, so feeding one byte at a time stays linear.

use serde_json::{Map, Value};

use super::diagnostics::{DiagnosticKind, Diagnostics};
use super::event::EventSink;
use super::json::{prefetch, read_string, skip_value, skip_ws, ScanResult, Stop, ValueScanner};
use super::parse_event::EventParser;
use super::LoadError;

/// The UTF-8 byte order mark, which some editors and Windows tools put at the start of a file.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Bytes of a text that is not JSON shown in the message.
/// Bytes kept of an input that does not start like JSON, to name its format (a tar header's magic
/// sits at bytes 257-261).
const BAD_START_BYTES: usize = 264;

/// Top-level metadata values larger than this are counted and dropped, not kept.
pub const MAX_METADATA_VALUE_BYTES: usize = 64 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Start,
    TopKeyOrEnd,
    TopColon,
    TopValue,
    Events,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `{"traceEvents": [...], ...}`
    Object,
    /// `[...]` (old Kineto)
    BareArray,
}

/// What the reader found once the input has ended.
#[derive(Debug, Default)]
pub struct ReadSummary {
    /// Entries of `traceEvents` seen (objects or not, complete ones only).
    pub entries: u64,
    /// Every top-level key except `traceEvents`, with its value.
    pub metadata: Map<String, Value>,
    /// Top-level keys in the order written (`traceEvents` included).
    pub top_level_keys: Vec<String>,
    pub diagnostics: Diagnostics,
}

/// Resumable reader of one trace's JSON text.
pub struct TraceReader {
    state: State,
    form: Option<Form>,
    carry: Vec<u8>,
    carrying: bool,
    carry_discard: bool,
    carry_offset: u64,
    scanner: ValueScanner,
    parser: EventParser,
    /// Absolute offset (in the JSON text) of the start of the input being run.
    offset: u64,
    after_comma: bool,
    /// Bytes of a UTF-8 byte order mark read at the start.
    bom: usize,
    /// The text does not start like JSON: where, and its first bytes (gathered for the message).
    bad_start: Option<(u64, Vec<u8>)>,
    /// Entries of `traceEvents` that are not objects, and the first byte of the first of them.
    non_objects: u64,
    first_non_object: u8,
    current_key: String,
    saw_trace_events: bool,
    summary: ReadSummary,
    stopped: bool,
    file: String,
}

impl TraceReader {
    pub fn new(file: &str) -> Self {
        TraceReader {
            state: State::Start,
            form: None,
            carry: Vec::new(),
            carrying: false,
            carry_discard: false,
            carry_offset: 0,
            scanner: ValueScanner::default(),
            parser: EventParser::default(),
            offset: 0,
            after_comma: false,
            bom: 0,
            bad_start: None,
            non_objects: 0,
            first_non_object: 0,
            current_key: String::new(),
            saw_trace_events: false,
            summary: ReadSummary::default(),
            stopped: false,
            file: file.to_string(),
        }
    }

    pub fn entries(&self) -> u64 {
        self.summary.entries
    }

    /// Feeds the next piece of JSON text.
    pub fn feed(&mut self, mut input: &[u8], sink: &mut impl EventSink) -> Result<(), LoadError> {
        if self.stopped {
            return Ok(());
        }
        if self.carrying {
            match self.scanner.scan(input) {
                ScanResult::Complete(n) => {
                    self.push_carry(&input[..n]);
                    self.carrying = false;
                    let unit = std::mem::take(&mut self.carry);
                    let saved_offset = self.offset + n as u64;
                    if !self.carry_discard {
                        self.offset = self.carry_offset;
                        let used = self.run(&unit, true, sink)?;
                        if used < unit.len() && !self.stopped {
                            self.summary
                                .diagnostics
                                .add(DiagnosticKind::MalformedEvent, || {
                                    format!(
                                        "malformed JSON near byte {}",
                                        self.carry_offset + used as u64
                                    )
                                });
                        }
                    } else {
                        self.carry_discard = false;
                        self.state = State::TopKeyOrEnd;
                    }
                    self.carry = unit;
                    self.carry.clear();
                    self.offset = saved_offset;
                    input = &input[n..];
                }
                ScanResult::NeedMore => {
                    self.push_carry(input);
                    self.offset += input.len() as u64;
                    return Ok(());
                }
                ScanResult::Invalid(at) => {
                    return self.structural_error(
                        self.offset + at as u64,
                        "a value with balanced brackets",
                    );
                }
                ScanResult::BadEscape(at, expected) => {
                    return self.structural_error(self.offset + at as u64, expected);
                }
            }
        }
        let used = self.run(input, false, sink)?;
        if used < input.len() && !self.stopped {
            self.carry.clear();
            self.carry_offset = self.offset + used as u64;
            self.carry_discard = false;
            self.scanner = ValueScanner::default();
            self.carrying = true;
            let rest = &input[used..];
            match self.scanner.scan(rest) {
                ScanResult::NeedMore => self.push_carry(rest),
                ScanResult::BadEscape(at, expected) => {
                    self.carrying = false;
                    self.structural_error(self.carry_offset + at as u64, expected)?;
                }
                _ => {
                    // The scanner sees a complete value that the parser could not finish: malformed.
                    self.carrying = false;
                    self.summary
                        .diagnostics
                        .add(DiagnosticKind::MalformedEvent, || {
                            format!("malformed JSON near byte {}", self.carry_offset)
                        });
                    self.stopped = true;
                }
            }
        }
        self.offset += input.len() as u64;
        Ok(())
    }

    fn push_carry(&mut self, bytes: &[u8]) {
        if self.carry_discard {
            return;
        }
        if self.state == State::TopValue
            && self.carry.len() + bytes.len() > MAX_METADATA_VALUE_BYTES
        {
            self.carry_discard = true;
            self.carry = Vec::new();
            let key = self.current_key.clone();
            self.summary
                .diagnostics
                .add(DiagnosticKind::OversizedMetadata, || key.clone());
            self.summary.top_level_keys.push(key);
            return;
        }
        self.carry.extend_from_slice(bytes);
    }

    fn structural_error(&mut self, at: u64, expected: &str) -> Result<(), LoadError> {
        if self.summary.entries > 0 {
            // Keep what was loaded; say where it stopped.
            self.summary.diagnostics.add(DiagnosticKind::MalformedEvent, || {
                format!("the JSON is malformed at byte {at} (expected {expected}); events after it were not loaded")
            });
            self.stopped = true;
            Ok(())
        } else {
            Err(LoadError::not_json(&self.file, at, expected))
        }
    }

    /// Runs the state machine over `input`; returns how many bytes were used. Bytes not used start a
    /// unit (event, key or value) that the input ends inside. `eof`: the input's end ends the text.
    fn run(
        &mut self,
        input: &[u8],
        eof: bool,
        sink: &mut impl EventSink,
    ) -> Result<usize, LoadError> {
        let mut i = 0usize;
        loop {
            if self.stopped {
                return Ok(input.len());
            }
            match self.state {
                State::Events => {
                    i = skip_ws(input, i);
                    if i >= input.len() {
                        return Ok(i);
                    }
                    match input[i] {
                        b',' => {
                            self.after_comma = true;
                            i += 1;
                        }
                        b']' => {
                            if self.after_comma && self.summary.entries > 0 {
                                self.summary
                                    .diagnostics
                                    .add(DiagnosticKind::TrailingComma, || {
                                        format!(
                                            "before the end of traceEvents at byte {}",
                                            self.offset + i as u64
                                        )
                                    });
                            }
                            self.after_comma = false;
                            self.state = match self.form {
                                Some(Form::BareArray) => State::Done,
                                _ => State::TopKeyOrEnd,
                            };
                            i += 1;
                        }
                        b'{' => match {
                            prefetch(input, i + 2048);
                            self.parser.parse(input, i)
                        } {
                            Ok(end) => {
                                let index = self.summary.entries;
                                self.parser.with_event(input, index, |e| sink.event(e));
                                self.summary.entries += 1;
                                self.after_comma = false;
                                i = end;
                            }
                            Err(Stop::Incomplete) => return Ok(i),
                            Err(Stop::Invalid { at, expected }) => {
                                // Counted once its end is found (an event cut off in the middle
                                // is a truncated tail, however the pieces fell).
                                match skip_value(input, i, eof) {
                                    Ok(end) => {
                                        let abs = self.offset + at as u64;
                                        let index = self.summary.entries;
                                        self.summary.diagnostics.add(
                                            DiagnosticKind::MalformedEvent,
                                            || format!("traceEvents[{index}] at byte {abs}: expected {expected}"),
                                        );
                                        self.summary.entries += 1;
                                        self.after_comma = false;
                                        i = end;
                                    }
                                    Err(Stop::Incomplete) => return Ok(i),
                                    Err(Stop::Invalid { at, expected }) => {
                                        self.structural_error(self.offset + at as u64, expected)?;
                                        return Ok(input.len());
                                    }
                                }
                            }
                        },
                        first => {
                            // Whether a bare array of non-objects is a trace at all is decided at
                            // the end: `[null, {...}]` is one, `[[1, 2], [3, 4]]` is not.
                            match skip_value(input, i, eof) {
                                Ok(end) => {
                                    sink.non_object_entry(self.summary.entries);
                                    if self.non_objects == 0 {
                                        self.first_non_object = first;
                                    }
                                    self.non_objects += 1;
                                    self.summary.entries += 1;
                                    self.after_comma = false;
                                    i = end;
                                }
                                Err(Stop::Incomplete) => return Ok(i),
                                Err(Stop::Invalid { at, expected }) => {
                                    self.structural_error(self.offset + at as u64, expected)?;
                                    return Ok(input.len());
                                }
                            }
                        }
                    }
                }
                State::Start if self.bad_start.is_some() => {
                    // Not JSON: the first bytes are gathered for the message, whatever the pieces.
                    let (at, head) = self.bad_start.as_mut().expect("bad start");
                    let take = (BAD_START_BYTES - head.len()).min(input.len());
                    head.extend_from_slice(&input[..take]);
                    if head.len() == BAD_START_BYTES || eof {
                        return Err(LoadError::not_json_start(&self.file, *at, head, false));
                    }
                    return Ok(input.len());
                }
                State::Start => {
                    // A UTF-8 byte order mark, which the first pieces may split.
                    while self.bom < BOM.len()
                        && self.offset + i as u64 == self.bom as u64
                        && input.get(i) == Some(&BOM[self.bom])
                    {
                        self.bom += 1;
                        i += 1;
                    }
                    i = skip_ws(input, i);
                    if i >= input.len() {
                        return Ok(i);
                    }
                    match input[i] {
                        b'{' => {
                            self.form = Some(Form::Object);
                            self.state = State::TopKeyOrEnd;
                        }
                        b'[' => {
                            self.form = Some(Form::BareArray);
                            self.saw_trace_events = true;
                            self.state = State::Events;
                        }
                        _ => {
                            self.bad_start = Some((self.offset + i as u64, Vec::new()));
                            let rest = &input[i..];
                            return self.run(rest, eof, sink).map(|_| input.len());
                        }
                    }
                    i += 1;
                }
                State::TopKeyOrEnd => {
                    i = skip_ws(input, i);
                    if i >= input.len() {
                        return Ok(i);
                    }
                    match input[i] {
                        b'"' => {
                            let mut scratch = Vec::new();
                            match read_string(input, i, &mut scratch) {
                                Ok((loc, end)) => {
                                    self.current_key =
                                        String::from_utf8_lossy(loc.get(input, &scratch))
                                            .into_owned();
                                    self.state = State::TopColon;
                                    i = end;
                                }
                                Err(Stop::Incomplete) => return Ok(i),
                                Err(Stop::Invalid { at, expected }) => {
                                    self.structural_error(self.offset + at as u64, expected)?;
                                    return Ok(input.len());
                                }
                            }
                        }
                        b',' => i += 1,
                        b'}' => {
                            self.state = State::Done;
                            i += 1;
                        }
                        _ => {
                            self.structural_error(
                                self.offset + i as u64,
                                "a key or '}' at the top level",
                            )?;
                            return Ok(input.len());
                        }
                    }
                }
                State::TopColon => {
                    i = skip_ws(input, i);
                    if i >= input.len() {
                        return Ok(i);
                    }
                    if input[i] != b':' {
                        self.structural_error(self.offset + i as u64, "':' after a top-level key")?;
                        return Ok(input.len());
                    }
                    self.state = State::TopValue;
                    i += 1;
                }
                State::TopValue => {
                    i = skip_ws(input, i);
                    if i >= input.len() {
                        return Ok(i);
                    }
                    if self.current_key == "traceEvents" && input[i] == b'[' {
                        if self.saw_trace_events {
                            // A JSON reader keeps only the last list; the events of both are read.
                            let before = self.summary.entries;
                            self.summary
                                .diagnostics
                                .add(DiagnosticKind::DuplicateTraceEvents, || {
                                    format!("a second \"traceEvents\" list after {before} entries")
                                });
                        }
                        self.summary.top_level_keys.push(self.current_key.clone());
                        self.saw_trace_events = true;
                        self.state = State::Events;
                        i += 1;
                        continue;
                    }
                    let mut scanner = ValueScanner::default();
                    let end = match scanner.scan(&input[i..]) {
                        ScanResult::Complete(n) => i + n,
                        ScanResult::NeedMore if eof && scanner.is_scalar_pending() => input.len(),
                        ScanResult::NeedMore => return Ok(i),
                        ScanResult::Invalid(at) => {
                            self.structural_error(self.offset + (i + at) as u64, "a JSON value")?;
                            return Ok(input.len());
                        }
                        ScanResult::BadEscape(at, expected) => {
                            self.structural_error(self.offset + (i + at) as u64, expected)?;
                            return Ok(input.len());
                        }
                    };
                    let key = std::mem::take(&mut self.current_key);
                    let value = self.metadata_value(&key, &input[i..end]);
                    self.summary.top_level_keys.push(key.clone());
                    self.summary.metadata.insert(key, value);
                    self.state = State::TopKeyOrEnd;
                    i = end;
                }
                State::Done => {
                    loop {
                        i = skip_ws(input, i);
                        match input.get(i) {
                            None => return Ok(input.len()),
                            Some(0) => {
                                // Zero bytes after the JSON: a file written into a preallocated
                                // one. Counted once, however many pieces they come in.
                                let at = self.offset + i as u64;
                                let d = &mut self.summary.diagnostics;
                                if d.count(DiagnosticKind::TrailingPadding) == 0 {
                                    d.add(DiagnosticKind::TrailingPadding, || {
                                        format!("zero bytes from byte {at}")
                                    });
                                }
                                while input.get(i) == Some(&0) {
                                    i += 1;
                                }
                            }
                            Some(_) => {
                                self.summary
                                    .diagnostics
                                    .add(DiagnosticKind::TrailingData, || {
                                        format!(
                                            "data after the end of the JSON at byte {}; ignored",
                                            self.offset + i as u64
                                        )
                                    });
                                self.stopped = true;
                                return Ok(input.len());
                            }
                        }
                    }
                }
            }
        }
    }

    /// A top-level value (`distributedInfo`, `deviceProperties`, ...) parsed; trailing commas are
    /// tolerated (and counted) as in the events. `null` when it is not JSON even so (counted).
    #[cold]
    fn metadata_value(&mut self, key: &str, raw: &[u8]) -> Value {
        if let Ok(v) = serde_json::from_slice::<Value>(raw) {
            return v;
        }
        let diagnostics = &mut self.summary.diagnostics;
        match serde_json::from_slice::<Value>(&without_trailing_commas(raw)) {
            Ok(v) => {
                diagnostics.add(DiagnosticKind::TrailingComma, || {
                    format!("in the top-level value of \"{key}\"")
                });
                v
            }
            Err(e) => {
                diagnostics.add(DiagnosticKind::MalformedEvent, || {
                    format!(
                        "the top-level value of \"{key}\" is not valid JSON ({e}); read as null"
                    )
                });
                Value::Null
            }
        }
    }

    /// Ends the input: counts what was cut off and says what the text turned out to be.
    /// The first bytes of an input that did not start like JSON, and where they start.
    pub fn bad_start(&self) -> Option<(u64, &[u8])> {
        self.bad_start
            .as_ref()
            .map(|(at, head)| (*at, head.as_slice()))
    }

    pub fn finish(mut self, sink: &mut impl EventSink) -> Result<ReadSummary, LoadError> {
        if self.carrying {
            self.carrying = false;
            if self.scanner.is_scalar_pending() && !self.carry_discard {
                let unit = std::mem::take(&mut self.carry);
                self.offset = self.carry_offset;
                self.run(&unit, true, sink)?;
            } else if self.state == State::Events {
                let n = self.carry.len();
                let at = self.carry_offset;
                self.summary
                    .diagnostics
                    .add(DiagnosticKind::TruncatedTail, || {
                        format!("{n} bytes of an incomplete event at byte {at} dropped")
                    });
            }
        }
        if let Some((at, head)) = &self.bad_start {
            return Err(LoadError::not_json_start(&self.file, *at, head, false));
        }
        match self.state {
            State::Done => {}
            State::Start => return Err(LoadError::empty(&self.file, self.offset)),
            _ if self.stopped => {}
            _ if self.saw_trace_events => {
                let loaded = self.summary.entries;
                self.summary
                    .diagnostics
                    .add(DiagnosticKind::MissingClosingBrackets, || {
                        format!(
                            "the text ends at byte {} with {loaded} complete events",
                            self.offset
                        )
                    });
            }
            _ => {}
        }
        if !self.saw_trace_events {
            if self.state != State::Done {
                return Err(LoadError::truncated(&self.file, self.offset));
            }
            return Err(LoadError::not_a_trace_object(
                &self.file,
                &self.summary.top_level_keys,
                &self.summary.metadata,
            ));
        }
        if self.form == Some(Form::BareArray)
            && self.non_objects > 0
            && self.non_objects == self.summary.entries
        {
            return Err(LoadError::not_a_trace_array(
                &self.file,
                self.first_non_object,
            ));
        }
        Ok(self.summary)
    }
}

/// `raw` (one JSON value) without the commas that come right before a closing bracket (outside strings).
fn without_trailing_commas(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let (mut in_string, mut escape) = (false, false);
    for (k, &b) in raw.iter().enumerate() {
        if in_string {
            if escape {
                escape = false;
            } else if b == b'\\' {
                escape = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else if b == b',' {
            let next = raw[k + 1..].iter().find(|c| !c.is_ascii_whitespace());
            if matches!(next, Some(b']' | b'}')) {
                continue;
            }
        }
        out.push(b);
    }
    out
}
