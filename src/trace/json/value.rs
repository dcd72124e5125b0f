//! Whole JSON values: skipping one, finding its end when fed in pieces, and compacting its text.

use super::string::find_quote_or_backslash;
use super::{byte_at, is_ws, Scan, Stop, StrLoc, BAD_ESCAPE, BAD_HEX_ESCAPE};

/// Index just past the JSON value starting at `pos` (which must not be white space).
pub fn skip_value(input: &[u8], pos: usize, eof: bool) -> Scan<usize> {
    let mut scanner = ValueScanner::default();
    match scanner.scan(&input[pos..]) {
        ScanResult::Complete(n) => Ok(pos + n),
        ScanResult::NeedMore if eof && scanner.is_scalar_pending() => Ok(input.len()),
        ScanResult::NeedMore => Err(Stop::Incomplete),
        ScanResult::Invalid(at) => Err(Stop::Invalid {
            at: pos + at,
            expected: "a JSON value",
        }),
        ScanResult::BadEscape(at, expected) => Err(Stop::Invalid {
            at: pos + at,
            expected,
        }),
    }
}

/// Result of feeding bytes to a [`ValueScanner`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanResult {
    /// The value ends after this many bytes of the slice given.
    Complete(usize),
    /// Every byte was consumed and the value has not ended yet.
    NeedMore,
    /// A closing bracket with nothing open, at this offset.
    Invalid(usize),
    /// In a string, a backslash followed by a byte that starts no JSON escape, or `\u` without four
    /// hex digits: the offset of that byte, and what was expected. The parser refuses it too, so the
    /// scanner must not read past it.
    BadEscape(usize, &'static str),
}

/// The characters a JSON escape may start with, after the backslash.
fn is_escape_char(b: u8) -> bool {
    matches!(
        b,
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' | b'u'
    )
}

/// Finds where one JSON value ends, fed in pieces of any size (state is kept between calls).
/// It tracks only nesting, strings and escapes, so it is fast and never needs to look back.
#[derive(Clone, Debug, Default)]
pub struct ValueScanner {
    depth: u32,
    in_string: bool,
    escape: bool,
    /// Hex digits still due after `\u`.
    hex_left: u8,
    in_scalar: bool,
}

impl ValueScanner {
    pub fn is_scalar_pending(&self) -> bool {
        self.in_scalar && self.depth == 0
    }

    pub fn scan(&mut self, bytes: &[u8]) -> ScanResult {
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if self.in_string {
                if self.hex_left > 0 {
                    if !b.is_ascii_hexdigit() {
                        return ScanResult::BadEscape(i, BAD_HEX_ESCAPE);
                    }
                    self.hex_left -= 1;
                } else if self.escape {
                    if !is_escape_char(b) {
                        return ScanResult::BadEscape(i, BAD_ESCAPE);
                    }
                    if b == b'u' {
                        self.hex_left = 4;
                    }
                    self.escape = false;
                } else if b == b'\\' {
                    self.escape = true;
                } else if b == b'"' {
                    self.in_string = false;
                    if self.depth == 0 {
                        return ScanResult::Complete(i + 1);
                    }
                } else {
                    // Jump to the next quote or backslash.
                    match find_quote_or_backslash(bytes, i + 1) {
                        Some(j) => {
                            i = j;
                            continue;
                        }
                        None => return ScanResult::NeedMore,
                    }
                }
                i += 1;
                continue;
            }
            match b {
                b'"' => {
                    if self.in_scalar && self.depth == 0 {
                        return ScanResult::Complete(i);
                    }
                    self.in_string = true;
                }
                b'{' | b'[' => {
                    if self.in_scalar && self.depth == 0 {
                        return ScanResult::Complete(i);
                    }
                    self.depth += 1;
                }
                b'}' | b']' => {
                    if self.depth == 0 {
                        return if self.in_scalar {
                            ScanResult::Complete(i)
                        } else {
                            ScanResult::Invalid(i)
                        };
                    }
                    self.depth -= 1;
                    if self.depth == 0 {
                        return ScanResult::Complete(i + 1);
                    }
                }
                b' ' | b'\n' | b'\r' | b'\t' | b',' | b':' => {
                    if self.in_scalar && self.depth == 0 {
                        return ScanResult::Complete(i);
                    }
                }
                _ => {
                    if self.depth == 0 {
                        self.in_scalar = true;
                    }
                }
            }
            i += 1;
        }
        ScanResult::NeedMore
    }
}

/// Reads the array or object whose `[`/`{` is at `pos` in one pass, as compact JSON: its location
/// (in the input when it has no white space outside strings, else compacted into `scratch`) and the
/// index after it. Same result as [`skip_value`] followed by [`compact_json_into`].
#[inline]
pub fn read_compact_container(
    input: &[u8],
    pos: usize,
    scratch: &mut Vec<u8>,
) -> Scan<(StrLoc, usize)> {
    debug_assert!(matches!(input.get(pos), Some(b'[' | b'{')));
    let s0 = scratch.len();
    let mut depth = 0u32;
    let mut i = pos;
    // Start of the bytes not yet copied, once white space has been seen (`None` before).
    let mut run_start: Option<usize> = None;
    loop {
        let b = byte_at(input, i)?;
        match b {
            b'"' => {
                let mut j = i + 1;
                loop {
                    let hit = find_quote_or_backslash(input, j).ok_or(Stop::Incomplete)?;
                    if input[hit] == b'"' {
                        i = hit + 1;
                        break;
                    }
                    j = hit + 2;
                }
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    let end = i + 1;
                    return Ok(match run_start {
                        None => (StrLoc::input(pos, end), end),
                        Some(r) => {
                            scratch.extend_from_slice(&input[r..end]);
                            (StrLoc::scratch(s0, scratch.len()), end)
                        }
                    });
                }
            }
            b' ' | b'\n' | b'\r' | b'\t' => {
                let r = run_start.unwrap_or(pos);
                scratch.extend_from_slice(&input[r..i]);
                run_start = Some(i + 1);
            }
            _ => {}
        }
        i += 1;
    }
}

/// Appends `raw` (one JSON value) to `out` without white space outside strings.
pub fn compact_json_into(raw: &[u8], out: &mut Vec<u8>) {
    let mut in_string = false;
    let mut escape = false;
    for &b in raw {
        if in_string {
            out.push(b);
            if escape {
                escape = false;
            } else if b == b'\\' {
                escape = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if !is_ws(b) {
            if b == b'"' {
                in_string = true;
            }
            out.push(b);
        }
    }
}
