//! Parses one `traceEvents` entry (a JSON object) from a contiguous slice into field locations.

use super::event::{ArgValue, IdValue, RawEvent, TsForm};
use super::json::{
    byte_at, micros_text_to_nanos, number_end, parse_number, read_compact_container,
    read_micros_digits, read_plain_int, read_string, skip_value, skip_ws, Number, Scan, Stop,
    StrLoc, MICROS_FRACTION, MICROS_PAST_NS,
};

/// The event fields the tables keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Ph,
    Name,
    Cat,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    Bp,
    Args,
    Other,
}

fn field_of(key: &[u8]) -> Field {
    match key {
        b"ph" => Field::Ph,
        b"name" => Field::Name,
        b"cat" => Field::Cat,
        b"pid" => Field::Pid,
        b"tid" => Field::Tid,
        b"ts" => Field::Ts,
        b"dur" => Field::Dur,
        b"id" => Field::Id,
        b"bp" => Field::Bp,
        b"args" => Field::Args,
        _ => Field::Other,
    }
}

/// `"key"` as the little-endian word of its bytes, quotes included (keys of 2 to 4 bytes).
const fn quoted(key: &[u8]) -> u64 {
    let mut w = b'"' as u64;
    let mut j = 0;
    while j < key.len() {
        w |= (key[j] as u64) << (8 * (j + 1));
        j += 1;
    }
    w | (b'"' as u64) << (8 * (key.len() + 1))
}

/// One of the fields the tables keep, matched straight in the input at the key's opening quote
/// (no decoding): the field and the index after the closing quote. `None` for any other key, an
/// escaped one, or fewer than 8 bytes left; then the caller reads the key as a string.
#[inline(always)]
fn known_key(input: &[u8], i: usize) -> Option<(Field, usize)> {
    const PH: u64 = quoted(b"ph");
    const TS: u64 = quoted(b"ts");
    const ID: u64 = quoted(b"id");
    const BP: u64 = quoted(b"bp");
    const CAT: u64 = quoted(b"cat");
    const PID: u64 = quoted(b"pid");
    const TID: u64 = quoted(b"tid");
    const DUR: u64 = quoted(b"dur");
    const NAME: u64 = quoted(b"name");
    const ARGS: u64 = quoted(b"args");
    let w = u64::from_le_bytes(input.get(i..i + 8)?.try_into().unwrap());
    let f = match w & 0xFFFF_FFFF {
        PH => Field::Ph,
        TS => Field::Ts,
        ID => Field::Id,
        BP => Field::Bp,
        _ => {
            let f = match w & 0xFF_FFFF_FFFF {
                CAT => Field::Cat,
                PID => Field::Pid,
                TID => Field::Tid,
                DUR => Field::Dur,
                _ => {
                    let f = match w & 0xFFFF_FFFF_FFFF {
                        NAME => Field::Name,
                        ARGS => Field::Args,
                        _ => return None,
                    };
                    return Some((f, i + 6));
                }
            };
            return Some((f, i + 5));
        }
    };
    Some((f, i + 4))
}

#[derive(Clone, Copy, Debug)]
enum IdLoc {
    Int(i64),
    Text(StrLoc),
}

#[derive(Clone, Copy, Debug)]
enum ValLoc {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(StrLoc),
    Json(StrLoc),
}

/// Field locations of one event, reused from event to event (no allocation in the steady state).
#[derive(Default)]
pub struct EventParser {
    scratch: Vec<u8>,
    phase: Option<u8>,
    name: Option<StrLoc>,
    category: Option<StrLoc>,
    pid: Option<IdLoc>,
    tid: Option<IdLoc>,
    ts_ns: Option<i64>,
    dur_ns: Option<i64>,
    ts_us: Option<f64>,
    dur_us: Option<f64>,
    ts_form: TsForm,
    id: Option<i64>,
    bad_id: bool,
    binding_point: Option<u8>,
    args: Vec<(StrLoc, ValLoc)>,
    /// Storage reused for [`RawEvent::args`].
    arg_store: Vec<(&'static [u8], ArgValue<'static>)>,
}

/// Reuses a vector's allocation for a vector of another element type with the same layout.
fn recycle<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().map(|_| unreachable!()).collect()
}

impl EventParser {
    fn reset(&mut self) {
        self.scratch.clear();
        self.phase = None;
        self.name = None;
        self.category = None;
        self.pid = None;
        self.tid = None;
        self.ts_ns = None;
        self.dur_ns = None;
        self.ts_us = None;
        self.dur_us = None;
        self.ts_form = TsForm::Missing;
        self.id = None;
        self.bad_id = false;
        self.binding_point = None;
        self.args.clear();
    }

    /// Parses the object whose `{` is at `pos`; returns the index after its `}`.
    /// Then [`EventParser::with_event`] hands out the event.
    pub fn parse(&mut self, input: &[u8], pos: usize) -> Scan<usize> {
        self.reset();
        debug_assert_eq!(input.get(pos), Some(&b'{'));
        let mut i = skip_ws(input, pos + 1);
        if byte_at(input, i)? == b'}' {
            return Ok(i + 1);
        }
        loop {
            if byte_at(input, i)? != b'"' {
                // Tolerate a trailing comma: `{"a": 1,}`.
                if input[i] == b'}' {
                    return Ok(i + 1);
                }
                return Err(Stop::Invalid {
                    at: i,
                    expected: "a quoted key",
                });
            }
            let (field, after_key) = match known_key(input, i) {
                Some(known) => known,
                None => {
                    let (key, after_key) = read_string(input, i, &mut self.scratch)?;
                    // An escaped key is decoded first: `"n\u0061me"` is `name`.
                    (field_of(key.get(input, &self.scratch)), after_key)
                }
            };
            i = skip_ws(input, after_key);
            if byte_at(input, i)? != b':' {
                return Err(Stop::Invalid {
                    at: i,
                    expected: "':' after a key",
                });
            }
            i = skip_ws(input, i + 1);
            let first = byte_at(input, i)?;
            i = match field {
                Field::Ph => {
                    let (b, next) = self.first_byte_of_string(input, i, first)?;
                    self.phase = b;
                    next
                }
                Field::Name => {
                    let (loc, next) = self.any_as_text(input, i, first)?;
                    self.name = loc;
                    next
                }
                Field::Cat => {
                    let (loc, next) = self.any_as_text(input, i, first)?;
                    self.category = loc;
                    next
                }
                Field::Pid => {
                    let (v, next) = self.id_value(input, i, first)?;
                    self.pid = v;
                    next
                }
                Field::Tid => {
                    let (v, next) = self.id_value(input, i, first)?;
                    self.tid = v;
                    next
                }
                Field::Ts => {
                    let (v, us, form, next) = time_value(input, i, first)?;
                    self.ts_ns = v;
                    self.ts_us = us;
                    self.ts_form = form;
                    next
                }
                Field::Dur => {
                    let (v, us, _, next) = time_value(input, i, first)?;
                    self.dur_ns = v;
                    self.dur_us = us;
                    next
                }
                Field::Id => {
                    let (v, next) = self.id_value(input, i, first)?;
                    match v {
                        Some(IdLoc::Int(n)) => self.id = Some(n),
                        Some(IdLoc::Text(loc)) => {
                            let t = loc.get(input, &self.scratch);
                            match parse_flow_id(t) {
                                Some(n) => self.id = Some(n),
                                None => self.bad_id = true,
                            }
                        }
                        None => {}
                    }
                    next
                }
                Field::Bp => {
                    let (b, next) = self.first_byte_of_string(input, i, first)?;
                    self.binding_point = b;
                    next
                }
                Field::Args if first == b'{' => self.args_object(input, i)?,
                _ => skip_value(input, i, false)?,
            };
            i = skip_ws(input, i);
            match byte_at(input, i)? {
                b',' => i = skip_ws(input, i + 1),
                b'}' => return Ok(i + 1),
                _ => {
                    return Err(Stop::Invalid {
                        at: i,
                        expected: "',' or '}' in an event",
                    })
                }
            }
        }
    }

    /// The first byte of a string value (`ph`, `bp`); other values are skipped.
    #[inline(always)]
    fn first_byte_of_string(
        &mut self,
        input: &[u8],
        i: usize,
        first: u8,
    ) -> Scan<(Option<u8>, usize)> {
        if first == b'"' {
            let (loc, next) = read_string(input, i, &mut self.scratch)?;
            Ok((loc.get(input, &self.scratch).first().copied(), next))
        } else {
            Ok((None, skip_value(input, i, false)?))
        }
    }

    /// A string, or any other value kept as its JSON text (a numeric name, say); `null` is absent.
    #[inline(always)]
    fn any_as_text(&mut self, input: &[u8], i: usize, first: u8) -> Scan<(Option<StrLoc>, usize)> {
        if first == b'"' {
            let (loc, next) = read_string(input, i, &mut self.scratch)?;
            Ok((Some(loc), next))
        } else {
            other_as_text(input, i)
        }
    }

    /// A number or a string (`pid`, `tid`, `id`); `null` is absent, anything else kept as its text.
    #[inline(always)]
    fn id_value(&mut self, input: &[u8], i: usize, first: u8) -> Scan<(Option<IdLoc>, usize)> {
        if first == b'"' {
            let (loc, next) = read_string(input, i, &mut self.scratch)?;
            return Ok((Some(IdLoc::Text(loc)), next));
        }
        if first == b'-' || first.is_ascii_digit() {
            if let Some((n, end)) = read_plain_int(input, i)? {
                return Ok((Some(IdLoc::Int(n)), end));
            }
            let end = number_end(input, i, false)?;
            return Ok(match parse_number(&input[i..end]) {
                Some(Number::Int(n)) => (Some(IdLoc::Int(n)), end),
                Some(Number::Float(f)) if f.fract() == 0.0 && f.abs() < 9.0e18 => {
                    (Some(IdLoc::Int(f as i64)), end)
                }
                _ => (Some(IdLoc::Text(StrLoc::input(i, end))), end),
            });
        }
        let (loc, end) = other_as_text(input, i)?;
        Ok((loc.map(IdLoc::Text), end))
    }

    fn args_object(&mut self, input: &[u8], pos: usize) -> Scan<usize> {
        let mut i = skip_ws(input, pos + 1);
        if byte_at(input, i)? == b'}' {
            return Ok(i + 1);
        }
        loop {
            if byte_at(input, i)? != b'"' {
                if input[i] == b'}' {
                    return Ok(i + 1);
                }
                return Err(Stop::Invalid {
                    at: i,
                    expected: "a quoted key in args",
                });
            }
            let (key, after_key) = read_string(input, i, &mut self.scratch)?;
            i = skip_ws(input, after_key);
            if byte_at(input, i)? != b':' {
                return Err(Stop::Invalid {
                    at: i,
                    expected: "':' after an args key",
                });
            }
            i = skip_ws(input, i + 1);
            let next = self.arg_value(input, i, key)?;
            i = skip_ws(input, next);
            match byte_at(input, i)? {
                b',' => i = skip_ws(input, i + 1),
                b'}' => return Ok(i + 1),
                _ => {
                    return Err(Stop::Invalid {
                        at: i,
                        expected: "',' or '}' in args",
                    })
                }
            }
        }
    }

    /// Reads the value at `i` and adds it to the args under `key`; returns the index after it.
    /// (It pushes rather than returns the value: a returned value went through the stack in pieces
    /// and was read back whole, which stalls store forwarding.)
    #[inline(always)]
    fn arg_value(&mut self, input: &[u8], i: usize, key: StrLoc) -> Scan<usize> {
        let first = byte_at(input, i)?;
        match first {
            b'"' => {
                let (loc, next) = read_string(input, i, &mut self.scratch)?;
                self.args.push((key, ValLoc::Text(loc)));
                Ok(next)
            }
            b'{' | b'[' => {
                let (loc, end) = read_compact_container(input, i, &mut self.scratch)?;
                self.args.push((key, ValLoc::Json(loc)));
                Ok(end)
            }
            b'-' | b'0'..=b'9' => {
                if let Some((n, end)) = read_plain_int(input, i)? {
                    self.args.push((key, ValLoc::Int(n)));
                    return Ok(end);
                }
                let end = number_end(input, i, false)?;
                let v = match parse_number(&input[i..end]) {
                    Some(Number::Int(n)) => ValLoc::Int(n),
                    Some(Number::Float(f)) => ValLoc::Float(f),
                    None if &input[i..end] == b"-" => return self.literal_arg(input, i, key),
                    None => ValLoc::Null,
                };
                self.args.push((key, v));
                Ok(end)
            }
            _ => self.literal_arg(input, i, key),
        }
    }

    #[inline(never)]
    fn literal_arg(&mut self, input: &[u8], i: usize, key: StrLoc) -> Scan<usize> {
        let (v, end) = literal(input, i)?;
        self.args.push((key, v));
        Ok(end)
    }

    /// Hands the parsed event to `f`, with strings borrowed from `input` and the scratch space.
    pub fn with_event<R>(
        &mut self,
        input: &[u8],
        index: u64,
        f: impl FnOnce(&RawEvent<'_>) -> R,
    ) -> R {
        let scratch = &self.scratch[..];
        let text = |loc: StrLoc| loc.get(input, scratch);
        let id = |v: IdLoc| match v {
            IdLoc::Int(n) => IdValue::Int(n),
            IdLoc::Text(loc) => IdValue::Text(text(loc)),
        };
        let mut args: Vec<(&[u8], ArgValue<'_>)> = recycle(std::mem::take(&mut self.arg_store));
        args.extend(self.args.iter().map(|&(k, v)| {
            let value = match v {
                ValLoc::Null => ArgValue::Null,
                ValLoc::Bool(b) => ArgValue::Bool(b),
                ValLoc::Int(n) => ArgValue::Int(n),
                ValLoc::Float(x) => ArgValue::Float(x),
                ValLoc::Text(loc) => ArgValue::Text(text(loc)),
                ValLoc::Json(loc) => ArgValue::Json(text(loc)),
            };
            (text(k), value)
        }));
        let event = RawEvent {
            index,
            phase: self.phase,
            name: self.name.map(text),
            category: self.category.map(text),
            pid: self.pid.map(id),
            tid: self.tid.map(id),
            ts_ns: self.ts_ns,
            dur_ns: self.dur_ns,
            ts_us: self.ts_us,
            dur_us: self.dur_us,
            ts_form: self.ts_form,
            id: self.id,
            bad_id: self.bad_id,
            binding_point: self.binding_point,
            args,
        };
        let r = f(&event);
        self.arg_store = recycle(event.args);
        r
    }
}

/// A value that is not a string, as its JSON text (`7`, `["kernel"]`), or `None` for `null`.
#[cold]
#[inline(never)]
fn other_as_text(input: &[u8], i: usize) -> Scan<(Option<StrLoc>, usize)> {
    let end = skip_value(input, i, false)?;
    let loc = (&input[i..end] != b"null").then(|| StrLoc::input(i, end));
    Ok((loc, end))
}

fn literal(input: &[u8], i: usize) -> Scan<(ValLoc, usize)> {
    let mut end = i;
    while end < input.len() && (input[end].is_ascii_alphanumeric() || input[end] == b'-') {
        end += 1;
    }
    if end == input.len() {
        return Err(Stop::Incomplete);
    }
    let v = match &input[i..end] {
        b"true" => ValLoc::Bool(true),
        b"false" => ValLoc::Bool(false),
        b"null" => ValLoc::Null,
        b"NaN" => ValLoc::Float(f64::NAN),
        b"Infinity" => ValLoc::Float(f64::INFINITY),
        b"-Infinity" => ValLoc::Float(f64::NEG_INFINITY),
        _ => {
            return Err(Stop::Invalid {
                at: i,
                expected: "a JSON value",
            })
        }
    };
    Ok((v, end))
}

/// `ts`/`dur`: a number of µs (a numeric string is accepted too).
#[inline(always)]
/// A `ts`/`dur` value: integer ns, and the number as a JSON parser reads it (µs, f64) when the ns
/// lose digits of the text (more than 3 decimals, an exponent), for HTA-compat rounding.
#[allow(clippy::type_complexity)]
fn time_value(
    input: &[u8],
    i: usize,
    first: u8,
) -> Scan<(Option<i64>, Option<f64>, TsForm, usize)> {
    let f64_of = |t: &[u8]| -> Option<f64> { std::str::from_utf8(t).ok()?.trim().parse().ok() };
    if first == b'"' {
        let end = skip_value(input, i, false)?;
        let inner = &input[i + 1..end - 1];
        let ns = micros_text_to_nanos(inner);
        let us = f64_of(inner).filter(|&u| ns.is_some_and(|n| n as f64 != u * 1000.0));
        return Ok((ns, us, TsForm::Other, end));
    }
    if first == b'-' || first.is_ascii_digit() {
        if let Some((ns, end, form)) = read_micros_digits(input, i)? {
            let us = if form & MICROS_PAST_NS != 0 {
                f64_of(&input[i..end])
            } else {
                None
            };
            let ts_form = if form & MICROS_FRACTION != 0 {
                TsForm::Float
            } else {
                TsForm::Int
            };
            return Ok((Some(ns), us, ts_form, end));
        }
        let end = number_end(input, i, false)?;
        let text = &input[i..end];
        let ns = micros_text_to_nanos(text);
        let form = if text.iter().all(|b| b.is_ascii_digit() || *b == b'-') {
            TsForm::Int
        } else {
            TsForm::Float
        };
        return Ok((ns, ns.and(f64_of(text)), form, end));
    }
    let end = skip_value(input, i, false)?;
    Ok((None, None, TsForm::Other, end))
}

/// A flow id written as a string: decimal, or hex with `0x`.
fn parse_flow_id(text: &[u8]) -> Option<i64> {
    let s = std::str::from_utf8(text).ok()?.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok().map(|v| v as i64);
    }
    s.parse::<i64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_one(text: &str) -> (String, Option<i64>, Option<i64>, Vec<(String, String)>) {
        let mut p = EventParser::default();
        let end = p.parse(text.as_bytes(), 0).unwrap();
        assert_eq!(end, text.len());
        p.with_event(text.as_bytes(), 0, |e| {
            (
                String::from_utf8_lossy(e.name.unwrap_or(b"")).into_owned(),
                e.ts_ns,
                e.dur_ns,
                e.args
                    .iter()
                    .map(|(k, v)| (String::from_utf8_lossy(k).into_owned(), format!("{v:?}")))
                    .collect(),
            )
        })
    }

    #[test]
    fn parses_fields_and_args() {
        let (name, ts, dur, args) = parse_one(
            r#"{"ph": "X", "cat": "kernel", "name": "k\"1", "pid": 0, "tid": "stream 7", "ts": 10.5, "dur": 2,
               "args": {"stream": 7, "grid": [1, 2, 1], "x": 1.5, "ok": true, "n": null, "s": "a"}}"#,
        );
        assert_eq!(name, "k\"1");
        assert_eq!(ts, Some(10_500));
        assert_eq!(dur, Some(2_000));
        assert_eq!(args.len(), 6);
        assert_eq!(args[1].1, format!("{:?}", ArgValue::Json(b"[1,2,1]")));
    }

    #[test]
    fn incomplete_anywhere_is_incomplete() {
        let text = r#"{"ph": "X", "name": "abc", "ts": 12, "args": {"a": [1, 2]}}"#;
        let mut p = EventParser::default();
        for cut in 1..text.len() {
            assert_eq!(
                p.parse(&text.as_bytes()[..cut], 0),
                Err(Stop::Incomplete),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn known_keys_match_the_decoded_ones() {
        for key in [
            "ph", "name", "cat", "pid", "tid", "ts", "dur", "id", "bp", "args", "s", "p", "phx",
            "nam", "names", "cname", "t\\ns", "p\\\"h", "",
        ] {
            let text = format!("\"{key}\": 1, \"x\": 2}}");
            let mut scratch = Vec::new();
            let (loc, end) = read_string(text.as_bytes(), 0, &mut scratch).unwrap();
            let want = field_of(loc.get(text.as_bytes(), &scratch));
            match known_key(text.as_bytes(), 0) {
                Some((f, e)) => assert_eq!((f, e), (want, end), "{key}"),
                None => assert_eq!(want, Field::Other, "{key}"),
            }
        }
    }

    #[test]
    fn flow_ids() {
        assert_eq!(parse_flow_id(b"0x1f"), Some(31));
        assert_eq!(parse_flow_id(b"12"), Some(12));
        assert_eq!(parse_flow_id(b"zz"), None);
    }
}
