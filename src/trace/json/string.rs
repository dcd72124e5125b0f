//! JSON strings: finding the closing quote fast, and unescaping into a scratch buffer when needed.

use super::{byte_at, Scan, Stop, BAD_ESCAPE, BAD_HEX_ESCAPE};

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
pub(super) fn find_quote_or_backslash(input: &[u8], mut pos: usize) -> Option<usize> {
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
pub(super) fn find_quote_or_backslash(input: &[u8], pos: usize) -> Option<usize> {
    find_quote_or_backslash_swar(input, pos)
}

/// Position of the first `"` or `\` at or after `pos`, eight bytes at a time (portable).
#[inline(always)]
pub(super) fn find_quote_or_backslash_swar(input: &[u8], mut pos: usize) -> Option<usize> {
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
