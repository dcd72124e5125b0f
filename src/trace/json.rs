//! Low-level JSON scanning over byte slices: strings, numbers (with exact µs→ns), skipping and compacting.
//!
//! Every function reads from `input[pos..]` and returns `Err(Stop::Incomplete)` when the input ends
//! before the value does, so callers can retry once more bytes have arrived.

/// Why a scan stopped before finishing a value.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    /// The input ended inside the value.
    Incomplete,
    /// The input is not valid JSON at this byte offset (relative to the slice given).
    Invalid { at: usize, expected: &'static str },
}

pub type Scan<T> = Result<T, Stop>;

#[inline(always)]
pub fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// Index of the first non-white-space byte at or after `pos` (may be `input.len()`).
/// Most calls see none or one space; indentation runs are skipped 16 bytes at a time.
#[inline(always)]
pub fn skip_ws(input: &[u8], mut pos: usize) -> usize {
    for _ in 0..2 {
        match input.get(pos) {
            Some(&b) if is_ws(b) => pos += 1,
            _ => return pos,
        }
    }
    skip_ws_run(input, pos)
}

#[cfg(target_arch = "x86_64")]
#[inline(never)]
fn skip_ws_run(input: &[u8], mut pos: usize) -> usize {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of the x86-64 baseline; every load reads 16 bytes inside `input`.
    unsafe {
        let (sp, nl, cr, tab) = (
            _mm_set1_epi8(b' ' as i8),
            _mm_set1_epi8(b'\n' as i8),
            _mm_set1_epi8(b'\r' as i8),
            _mm_set1_epi8(b'\t' as i8),
        );
        while pos + 16 <= input.len() {
            let c = _mm_loadu_si128(input.as_ptr().add(pos) as *const __m128i);
            let ws = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(c, sp), _mm_cmpeq_epi8(c, nl)),
                _mm_or_si128(_mm_cmpeq_epi8(c, cr), _mm_cmpeq_epi8(c, tab)),
            );
            let not_ws = !_mm_movemask_epi8(ws) & 0xFFFF;
            if not_ws != 0 {
                return pos + not_ws.trailing_zeros() as usize;
            }
            pos += 16;
        }
    }
    while pos < input.len() && is_ws(input[pos]) {
        pos += 1;
    }
    pos
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(never)]
fn skip_ws_run(input: &[u8], mut pos: usize) -> usize {
    while pos < input.len() && is_ws(input[pos]) {
        pos += 1;
    }
    pos
}

/// Asks for the cache line at `input[at]` ahead of use (x86-64 only; elsewhere nothing). Text
/// mapped from the page cache crosses a page every 4 KiB, where the hardware prefetcher stops.
#[inline(always)]
pub fn prefetch(input: &[u8], at: usize) {
    #[cfg(target_arch = "x86_64")]
    if at < input.len() {
        // SAFETY: a prefetch of an address inside `input`; it never faults and reads nothing.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(input.as_ptr().add(at) as *const i8);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (input, at);
}

#[inline(always)]
pub fn byte_at(input: &[u8], pos: usize) -> Scan<u8> {
    input.get(pos).copied().ok_or(Stop::Incomplete)
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

#[inline(always)]
fn has_byte(word: u64, byte: u8) -> u64 {
    let x = word ^ (LO * byte as u64);
    x.wrapping_sub(LO) & !x & HI
}

/// Position of the first `"` or `\` at or after `pos`: 16 bytes at a time with SSE2 on x86-64.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn find_quote_or_backslash(input: &[u8], mut pos: usize) -> Option<usize> {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of the x86-64 baseline; every load reads 16 bytes inside `input`.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        while pos + 16 <= input.len() {
            let chunk = _mm_loadu_si128(input.as_ptr().add(pos) as *const __m128i);
            let hits = _mm_movemask_epi8(_mm_or_si128(
                _mm_cmpeq_epi8(chunk, quote),
                _mm_cmpeq_epi8(chunk, backslash),
            ));
            if hits != 0 {
                return Some(pos + hits.trailing_zeros() as usize);
            }
            pos += 16;
        }
    }
    find_quote_or_backslash_swar(input, pos)
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn find_quote_or_backslash(input: &[u8], pos: usize) -> Option<usize> {
    find_quote_or_backslash_swar(input, pos)
}

/// Position of the first `"` or `\` at or after `pos`, eight bytes at a time (portable).
#[inline(always)]
fn find_quote_or_backslash_swar(input: &[u8], mut pos: usize) -> Option<usize> {
    while pos + 8 <= input.len() {
        let word = u64::from_le_bytes(input[pos..pos + 8].try_into().unwrap());
        let hits = has_byte(word, b'"') | has_byte(word, b'\\');
        if hits != 0 {
            return Some(pos + (hits.trailing_zeros() / 8) as usize);
        }
        pos += 8;
    }
    while pos < input.len() {
        let b = input[pos];
        if b == b'"' || b == b'\\' {
            return Some(pos);
        }
        pos += 1;
    }
    None
}

/// The next 8 bytes at `i` as a little-endian word, when there are 8.
#[inline(always)]
fn word_at(input: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(input.get(i..i + 8)?.try_into().unwrap()))
}

/// Whether all 8 bytes of `w` are ASCII digits.
#[inline(always)]
fn eight_digits(w: u64) -> bool {
    (w & 0xF0F0_F0F0_F0F0_F0F0)
        | (((w.wrapping_add(0x0606_0606_0606_0606)) & 0xF0F0_F0F0_F0F0_F0F0) >> 4)
        == 0x3333_3333_3333_3333
}

/// The value of 8 ASCII digits (first digit in the lowest byte), by SWAR.
#[inline(always)]
fn eight_digit_value(w: u64) -> i64 {
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    const MUL1: u64 = 0x000F_4240_0000_0064; // 100 + (1000000 << 32)
    const MUL2: u64 = 0x0000_2710_0000_0001; // 1 + (10000 << 32)
    let mut v = w.wrapping_sub(0x3030_3030_3030_3030);
    v = v.wrapping_mul(10).wrapping_add(v >> 8);
    v = (((v & MASK).wrapping_mul(MUL1)).wrapping_add(((v >> 16) & MASK).wrapping_mul(MUL2))) >> 32;
    v as i64
}

/// Reads the run of digits at `i` into `v` (wrapping), 8 at a time while 8 are there; returns the
/// index after the run. Same value and end as a digit-by-digit loop.
#[inline(always)]
fn digit_run(input: &[u8], mut i: usize, v: &mut i64) -> usize {
    while let Some(w) = word_at(input, i) {
        if !eight_digits(w) {
            break;
        }
        *v = v
            .wrapping_mul(100_000_000)
            .wrapping_add(eight_digit_value(w));
        i += 8;
    }
    while i < input.len() {
        let d = input[i].wrapping_sub(b'0');
        if d >= 10 {
            break;
        }
        *v = v.wrapping_mul(10).wrapping_add(d as i64);
        i += 1;
    }
    i
}

/// A plain integer (optional `-`, at most 18 digits) at `pos`, read in one pass. `Ok(None)` when the
/// number has a fraction or exponent or is longer, so the caller takes the general path.
#[inline(always)]
pub fn read_plain_int(input: &[u8], pos: usize) -> Scan<Option<(i64, usize)>> {
    let mut i = pos;
    let neg = input.get(i) == Some(&b'-');
    if neg {
        i += 1;
    }
    let start = i;
    let mut v: i64 = 0;
    i = digit_run(input, i, &mut v);
    if i == input.len() {
        return Err(Stop::Incomplete);
    }
    let n = i - start;
    if n == 0 || n > 18 || matches!(input[i], b'.' | b'e' | b'E') {
        return Ok(None);
    }
    Ok(Some((if neg { -v } else { v }, i)))
}

/// Times (`ts`, `dur`) are read within [`MIN_TIME_NS`, `MAX_TIME_NS`) ns (as epoch times, 1897 to
/// 2116): then any start plus any duration, and any end minus any start, fit an i64. A value beyond
/// is unreadable (absent), not wrapped round into a wrong one.
pub const MAX_TIME_NS: i64 = 1 << 62;
pub const MIN_TIME_NS: i64 = -(1 << 61);

/// A number of µs at `pos` as integer ns, in one pass (`1234.5678` → 1234568). `Ok(None)` for an
/// exponent or an integer part too long to scale, so the caller takes the general path.
#[inline(always)]
pub fn read_micros(input: &[u8], pos: usize) -> Scan<Option<(i64, usize)>> {
    Ok(read_micros_digits(input, pos)?.map(|(ns, end, _)| (ns, end)))
}

/// [`read_micros`], and the form of the text: [`MICROS_FRACTION`] when it has a decimal point,
/// [`MICROS_PAST_NS`] when it has digits past the ns (more than 3 decimals).
#[inline(always)]
pub fn read_micros_digits(input: &[u8], pos: usize) -> Scan<Option<(i64, usize, u8)>> {
    let mut i = pos;
    let neg = input.get(i) == Some(&b'-');
    if neg {
        i += 1;
    }
    let start = i;
    let mut int_part: i64 = 0;
    i = digit_run(input, i, &mut int_part);
    if i == input.len() {
        return Err(Stop::Incomplete);
    }
    let int_digits = i - start;
    // Within ±2^61 ns whatever the sign (epoch µs up to 2043); further out, the general path.
    if int_digits > 16 || int_part > (1 << 61) / 1000 - 1 {
        return Ok(None);
    }
    let mut frac: i64 = 0;
    let mut frac_digits = 0;
    let mut round_up = false;
    let mut form = 0;
    if input[i] == b'.' {
        form = MICROS_FRACTION;
        i += 1;
        while i < input.len() {
            let d = input[i].wrapping_sub(b'0');
            if d >= 10 {
                break;
            }
            if frac_digits < 3 {
                frac = frac * 10 + d as i64;
            } else if frac_digits == 3 {
                round_up = d >= 5;
            }
            frac_digits += 1;
            i += 1;
        }
        if i == input.len() {
            return Err(Stop::Incomplete);
        }
    }
    if int_digits + frac_digits == 0 || matches!(input[i], b'e' | b'E') {
        return Ok(None);
    }
    let mut k = frac_digits.min(3);
    while k < 3 {
        frac *= 10;
        k += 1;
    }
    let ns = int_part * 1000 + frac + round_up as i64;
    if frac_digits > 3 {
        form |= MICROS_PAST_NS;
    }
    Ok(Some((if neg { -ns } else { ns }, i, form)))
}

/// [`read_micros_digits`]: the text has a decimal point (a JSON parser makes a float of it).
pub const MICROS_FRACTION: u8 = 1;
/// [`read_micros_digits`]: the text has digits past the ns.
pub const MICROS_PAST_NS: u8 = 2;

/// Where a string's content lives: in the input, or unescaped into the scratch buffer. Packed in
/// one word (start, length below 2^31, which buffer) so that it moves in one register: as a tagged
/// pair it went through the stack in pieces and was read back whole, stalling store forwarding.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct StrLoc(u64);

impl StrLoc {
    const SCRATCH: u64 = 1 << 63;

    #[inline(always)]
    fn pack(start: usize, end: usize) -> u64 {
        debug_assert!(end - start < 1 << 31);
        start as u32 as u64 | ((end - start) as u64 & 0x7FFF_FFFF) << 32
    }

    /// `input[start..end]`.
    #[inline(always)]
    pub fn input(start: usize, end: usize) -> Self {
        StrLoc(Self::pack(start, end))
    }

    /// `scratch[start..end]`.
    #[inline(always)]
    pub fn scratch(start: usize, end: usize) -> Self {
        StrLoc(Self::pack(start, end) | Self::SCRATCH)
    }

    #[inline(always)]
    pub fn in_scratch(self) -> bool {
        self.0 & Self::SCRATCH != 0
    }

    /// The start and end in whichever buffer it is in.
    #[inline(always)]
    pub fn range(self) -> (usize, usize) {
        let start = self.0 as u32 as usize;
        (start, start + ((self.0 >> 32) & 0x7FFF_FFFF) as usize)
    }

    #[inline(always)]
    pub fn get<'a>(self, input: &'a [u8], scratch: &'a [u8]) -> &'a [u8] {
        let (a, b) = self.range();
        if self.in_scratch() {
            &scratch[a..b]
        } else {
            &input[a..b]
        }
    }
}

impl std::fmt::Debug for StrLoc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (a, b) = self.range();
        let which = if self.in_scratch() {
            "Scratch"
        } else {
            "Input"
        };
        write!(f, "{which}({a}, {b})")
    }
}

/// Reads a string whose opening quote is at `pos`. Returns its location and the index after the
/// closing quote. Escapes are decoded into `scratch`.
#[inline(always)]
pub fn read_string(input: &[u8], pos: usize, scratch: &mut Vec<u8>) -> Scan<(StrLoc, usize)> {
    debug_assert_eq!(input.get(pos), Some(&b'"'));
    let start = pos + 1;
    let hit = find_quote_or_backslash(input, start).ok_or(Stop::Incomplete)?;
    if input[hit] == b'"' {
        return Ok((StrLoc::input(start, hit), hit + 1));
    }
    read_escaped_string(input, start, hit, scratch)
}

/// The rest of [`read_string`] once a `\` is found at `hit`: decodes into `scratch`.
#[cold]
#[inline(never)]
fn read_escaped_string(
    input: &[u8],
    start: usize,
    hit: usize,
    scratch: &mut Vec<u8>,
) -> Scan<(StrLoc, usize)> {
    let s0 = scratch.len();
    scratch.extend_from_slice(&input[start..hit]);
    let mut i = hit;
    loop {
        let b = byte_at(input, i)?;
        match b {
            b'"' => return Ok((StrLoc::scratch(s0, scratch.len()), i + 1)),
            b'\\' => {
                let e = byte_at(input, i + 1)?;
                i += 2;
                match e {
                    b'"' => scratch.push(b'"'),
                    b'\\' => scratch.push(b'\\'),
                    b'/' => scratch.push(b'/'),
                    b'b' => scratch.push(8),
                    b'f' => scratch.push(12),
                    b'n' => scratch.push(b'\n'),
                    b'r' => scratch.push(b'\r'),
                    b't' => scratch.push(b'\t'),
                    b'u' => {
                        let (mut cp, next) = read_hex4(input, i)?;
                        i = next;
                        if (0xD800..0xDC00).contains(&cp) {
                            // A surrogate pair: \uD83D\uDE00.
                            if byte_at(input, i)? == b'\\' && byte_at(input, i + 1)? == b'u' {
                                let (lo, next2) = read_hex4(input, i + 2)?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                    i = next2;
                                }
                            }
                        }
                        let ch = char::from_u32(cp).unwrap_or('\u{FFFD}');
                        let mut buf = [0u8; 4];
                        scratch.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    }
                    _ => {
                        return Err(Stop::Invalid {
                            at: i - 1,
                            expected: BAD_ESCAPE,
                        })
                    }
                }
            }
            _ => {
                let run_end = find_quote_or_backslash(input, i).ok_or(Stop::Incomplete)?;
                scratch.extend_from_slice(&input[i..run_end]);
                i = run_end;
            }
        }
    }
}

fn read_hex4(input: &[u8], pos: usize) -> Scan<(u32, usize)> {
    let mut v = 0u32;
    for k in 0..4 {
        let b = byte_at(input, pos + k)?;
        let d = (b as char).to_digit(16).ok_or(Stop::Invalid {
            at: pos + k,
            expected: BAD_HEX_ESCAPE,
        })?;
        v = v * 16 + d;
    }
    Ok((v, pos + 4))
}

/// Index just past the number starting at `pos`. Incomplete when the input ends inside it, unless
/// `eof` says the end of the input is the end of the text.
#[inline(always)]
pub fn number_end(input: &[u8], pos: usize, eof: bool) -> Scan<usize> {
    let mut i = pos;
    while i < input.len() {
        match input[i] {
            b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E' => i += 1,
            _ => return Ok(i),
        }
    }
    if eof {
        Ok(i)
    } else {
        Err(Stop::Incomplete)
    }
}

/// A JSON number, as an exact integer when it is written as one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Int(i64),
    Float(f64),
}

/// Parses the text of a JSON number.
#[inline]
pub fn parse_number(text: &[u8]) -> Option<Number> {
    let (neg, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        _ => (false, text),
    };
    if !digits.is_empty() && digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit) {
        let mut v: i64 = 0;
        for &d in digits {
            v = v * 10 + (d - b'0') as i64;
        }
        return Some(Number::Int(if neg { -v } else { v }));
    }
    let s = std::str::from_utf8(text).ok()?;
    if digits.iter().all(u8::is_ascii_digit) && !digits.is_empty() {
        if let Ok(v) = s.parse::<i64>() {
            return Some(Number::Int(v));
        }
    }
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(Number::Float)
}

/// Converts the text of a JSON number of microseconds into integer nanoseconds, exactly for decimal
/// text (`1234.567` µs → `1234567` ns; digits past the ns are rounded half away from zero).
#[inline]
pub fn micros_text_to_nanos(text: &[u8]) -> Option<i64> {
    let (neg, body) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        _ => (false, text),
    };
    if body.iter().any(|&b| b == b'e' || b == b'E') {
        // An exponent (rare: `1.6e15`, Python's `1e-05`), whatever the length of the mantissa.
        let ns = exponent_micros_to_nanos(body)?;
        return in_time_range(if neg { -ns } else { ns });
    }
    let mut int_part: i64 = 0;
    let mut i = 0;
    let mut any = false;
    while i < body.len() && body[i].is_ascii_digit() {
        int_part = int_part
            .checked_mul(10)?
            .checked_add((body[i] - b'0') as i64)?;
        i += 1;
        any = true;
    }
    let mut frac: i64 = 0;
    let mut frac_digits = 0;
    let mut round_up = false;
    if i < body.len() && body[i] == b'.' {
        i += 1;
        while i < body.len() && body[i].is_ascii_digit() {
            if frac_digits < 3 {
                frac = frac * 10 + (body[i] - b'0') as i64;
                frac_digits += 1;
            } else if frac_digits == 3 {
                round_up = body[i] >= b'5';
                frac_digits += 1;
            }
            i += 1;
            any = true;
        }
    }
    if !any {
        return None;
    }
    if i < body.len() {
        return None;
    }
    while frac_digits < 3 {
        frac *= 10;
        frac_digits += 1;
    }
    let mut ns = int_part.checked_mul(1000)?.checked_add(frac)?;
    if round_up {
        ns += 1;
    }
    in_time_range(if neg { -ns } else { ns })
}

/// `ns` when it is within [`MIN_TIME_NS`, `MAX_TIME_NS`).
#[inline]
fn in_time_range(ns: i64) -> Option<i64> {
    (MIN_TIME_NS..MAX_TIME_NS).contains(&ns).then_some(ns)
}

/// `body` (no sign), a number of µs with an exponent (`1.6042036700001235e15`, `2.5E-1`), as integer
/// ns, exactly: the mantissa's digits are scaled by a power of ten, not through f64 (which holds
/// about 16 digits, too few for an epoch timestamp in µs with its ns). Rounded half away from zero.
#[cold]
#[inline(never)]
fn exponent_micros_to_nanos(body: &[u8]) -> Option<i64> {
    let e = body.iter().position(|&b| b == b'e' || b == b'E')?;
    let exp: i32 = std::str::from_utf8(&body[e + 1..]).ok()?.parse().ok()?;
    let (mut mantissa, mut digits, mut frac_digits, mut point) = (0u128, 0u32, 0i32, false);
    for &b in &body[..e] {
        match b {
            b'0'..=b'9' => {
                if mantissa == 0 && b == b'0' {
                    // Leading zeros add no digit (after the point they still scale).
                } else if digits == 36 {
                    // Past 36 significant digits the rest cannot change an i64 of ns: stop here.
                    if !point {
                        frac_digits -= 1;
                    }
                    continue;
                } else {
                    mantissa = mantissa * 10 + (b - b'0') as u128;
                    digits += 1;
                }
                if point {
                    frac_digits += 1;
                }
            }
            b'.' if !point => point = true,
            _ => return None,
        }
    }
    if body[..e].iter().all(|&b| b == b'.') {
        return None;
    }
    // ns = mantissa × 10^(exp − frac_digits + 3)
    let scale = exp.checked_sub(frac_digits)?.checked_add(3)?;
    let ns = if scale >= 0 {
        mantissa.checked_mul(10u128.checked_pow(scale as u32)?)?
    } else if scale < -38 {
        0
    } else {
        let div = 10u128.pow((-scale) as u32);
        mantissa / div + u128::from(mantissa % div * 2 >= div)
    };
    i64::try_from(ns).ok()
}

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

/// What a backslash in a string must be followed by (the parser and the scanner say the same).
pub const BAD_ESCAPE: &str = "a valid escape after '\\'";

/// What `\u` must be followed by.
pub const BAD_HEX_ESCAPE: &str = "four hex digits after \\u";

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

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
