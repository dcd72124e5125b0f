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

/// What a backslash in a string must be followed by (the parser and the scanner say the same).
pub const BAD_ESCAPE: &str = "a valid escape after '\\'";

/// What `\u` must be followed by.
pub const BAD_HEX_ESCAPE: &str = "four hex digits after \\u";

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

mod number;
mod string;
mod value;

pub use number::*;
pub use string::*;
pub use value::*;

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
