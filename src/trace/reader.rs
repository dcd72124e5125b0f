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
                                let abs = self.offset + at as u64;
                                let index = self.summary.entries;
                                self.summary.diagnostics.add(DiagnosticKind::MalformedEvent, || {
                                    format!("traceEvents[{index}] at byte {abs}: expected {expected}")
                                });
                                match skip_value(input, i, eof) {
                                    Ok(end) => {
                                        self.summary.entries += 1;
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
                            if self.form == Some(Form::BareArray) && self.summary.entries == 0 {
                                return Err(LoadError::not_a_trace_array(&self.file, first));
                            }
                            match skip_value(input, i, eof) {
                                Ok(end) => {
                                    sink.non_object_entry(self.summary.entries);
                                    self.summary.entries += 1;
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
                State::Start => {
                    i = skip_ws(input, i);
                    if self.offset == 0 && input[i..].starts_with(&[0xEF, 0xBB, 0xBF]) {
                        i += 3;
                        i = skip_ws(input, i);
                    }
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
                            let head = &input[i..input.len().min(i + 8)];
                            return Err(LoadError::not_json_start(
                                &self.file,
                                self.offset + i as u64,
                                head,
                            ));
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
                    };
                    let key = std::mem::take(&mut self.current_key);
                    let value =
                        serde_json::from_slice::<Value>(&input[i..end]).unwrap_or(Value::Null);
                    self.summary.top_level_keys.push(key.clone());
                    self.summary.metadata.insert(key, value);
                    self.state = State::TopKeyOrEnd;
                    i = end;
                }
                State::Done => {
                    i = skip_ws(input, i);
                    if i < input.len() {
                        self.summary
                            .diagnostics
                            .add(DiagnosticKind::MalformedEvent, || {
                                format!(
                                    "data after the end of the JSON at byte {}; ignored",
                                    self.offset + i as u64
                                )
                            });
                        self.stopped = true;
                    }
                    return Ok(input.len());
                }
            }
        }
    }

    /// Ends the input: counts what was cut off and says what the text turned out to be.
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
            ));
        }
        Ok(self.summary)
    }
}
