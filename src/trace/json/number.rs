//! JSON numbers: plain integers and µs read as exact integer ns in one pass, and the general path.

use super::{Scan, Stop};

/// The next 8 bytes at `i` as a little-endian word, when there are 8.
#[inline(always)]
fn word_at(input: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(input.get(i..i + 8)?.try_into().unwrap()))
}

/// Whether all 8 bytes of `w` are ASCII digits.
#[inline(always)]
pub(super) fn eight_digits(w: u64) -> bool {
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
pub(super) fn digit_run(input: &[u8], mut i: usize, v: &mut i64) -> usize {
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
