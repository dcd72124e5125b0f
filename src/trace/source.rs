//! Byte sources: recognises gzip by its magic bytes and inflates it in a streaming fashion (miniz_oxide).

use miniz_oxide::inflate::stream::{inflate, InflateState};
use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};
use serde::{Deserialize, Serialize};

use super::crc32::Crc32;

/// Size of the inflate output buffer handed to the JSON reader at a time.
pub const INFLATE_CHUNK: usize = 1 << 20;

/// A gzip member header longer than this (its file name or comment never ends) is corrupt.
const MAX_GZIP_HEADER: usize = 64 << 10;

/// How a gzip stream ended, known once all its bytes were read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GzipEnd {
    /// The stream ends before its end marker (the file was cut off).
    pub cut: bool,
    /// The first member whose trailer (CRC-32 of its text, or its length) disagrees with the text
    /// inflated: the data was damaged, though it inflated.
    pub checksum_mismatch: Option<String>,
}

#[derive(Debug)]
enum Mode {
    /// Not enough bytes yet to tell gzip from plain text.
    Sniffing,
    Plain,
    /// Reading a gzip member header (kept until complete).
    GzipHeader,
    Inflating,
    /// Reading the 8-byte trailer after a member.
    GzipTrailer(usize),
    /// Padding after the last gzip member: ignored.
    Ignore,
}

/// Error from the decompressor, with the compressed byte offset where it happened.
#[derive(Debug, Clone, PartialEq)]
pub struct CorruptGzip {
    pub offset: u64,
    pub detail: String,
}

/// Turns raw file bytes (plain JSON or gzip, told apart by the first two bytes) into JSON text, piece
/// by piece. Memory: one output buffer and the inflate window, whatever the file size.
pub struct Decompressor {
    mode: Mode,
    pending: Vec<u8>,
    state: Option<Box<InflateState>>,
    out: Vec<u8>,
    consumed: u64,
    pub is_gzip: bool,
    members_done: u32,
    /// CRC-32 and length (mod 2^32, as the trailer keeps it) of the current member's text.
    member_crc: Crc32,
    member_len: u32,
    trailer: [u8; 8],
    checksum_mismatch: Option<String>,
}

impl Default for Decompressor {
    fn default() -> Self {
        Self::new()
    }
}

impl Decompressor {
    pub fn new() -> Self {
        Decompressor {
            mode: Mode::Sniffing,
            pending: Vec::new(),
            state: None,
            out: Vec::new(),
            consumed: 0,
            is_gzip: false,
            members_done: 0,
            member_crc: Crc32::new(),
            member_len: 0,
            trailer: [0; 8],
            checksum_mismatch: None,
        }
    }

    /// Compressed (raw) bytes taken so far.
    pub fn raw_bytes(&self) -> u64 {
        self.consumed
    }

    /// Takes the next raw bytes; calls `emit` with each piece of text produced.
    pub fn feed<E>(
        &mut self,
        mut input: &[u8],
        emit: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), Feed<E>> {
        while !input.is_empty() {
            match self.mode {
                Mode::Sniffing => {
                    let need = 2 - self.pending.len();
                    let take = need.min(input.len());
                    self.pending.extend_from_slice(&input[..take]);
                    input = &input[take..];
                    self.consumed += take as u64;
                    if self.pending.len() == 2 {
                        if self.pending[..] == [0x1f, 0x8b] {
                            self.is_gzip = true;
                            self.mode = Mode::GzipHeader;
                        } else if self.members_done > 0 {
                            self.mode = Mode::Ignore;
                        } else {
                            self.mode = Mode::Plain;
                            let head = std::mem::take(&mut self.pending);
                            emit(&head).map_err(Feed::Sink)?;
                        }
                    }
                }
                Mode::Ignore => {
                    self.consumed += input.len() as u64;
                    return Ok(());
                }
                Mode::Plain => {
                    self.consumed += input.len() as u64;
                    emit(input).map_err(Feed::Sink)?;
                    return Ok(());
                }
                Mode::GzipHeader => {
                    // Keep header bytes until the whole header is here (it is short).
                    let before = self.pending.len();
                    let take = input.len().min(4096);
                    self.pending.extend_from_slice(&input[..take]);
                    match gzip_header_len(&self.pending) {
                        HeaderLen::Complete(n) => {
                            let used = n - before;
                            self.consumed += used as u64;
                            input = &input[used..];
                            self.pending.clear();
                            self.state = Some(InflateState::new_boxed(DataFormat::Raw));
                            if self.out.is_empty() {
                                self.out = vec![0u8; INFLATE_CHUNK];
                            }
                            self.mode = Mode::Inflating;
                        }
                        HeaderLen::NeedMore if self.pending.len() > MAX_GZIP_HEADER => {
                            return Err(Feed::Corrupt(CorruptGzip {
                                offset: self.consumed,
                                detail: "the gzip member header (file name or comment) never ends"
                                    .into(),
                            }))
                        }
                        HeaderLen::NeedMore => {
                            self.consumed += take as u64;
                            input = &input[take..];
                        }
                        HeaderLen::Bad(why) => {
                            return Err(Feed::Corrupt(CorruptGzip {
                                offset: self.consumed,
                                detail: why.into(),
                            }))
                        }
                    }
                }
                Mode::Inflating => {
                    let state = self.state.as_mut().expect("inflate state");
                    let r = inflate(state, input, &mut self.out, MZFlush::None);
                    self.consumed += r.bytes_consumed as u64;
                    input = &input[r.bytes_consumed..];
                    if r.bytes_written > 0 {
                        self.count_member_text(r.bytes_written);
                        emit(&self.out[..r.bytes_written]).map_err(Feed::Sink)?;
                    }
                    match r.status {
                        Ok(MZStatus::StreamEnd) => {
                            self.members_done += 1;
                            self.mode = Mode::GzipTrailer(0);
                        }
                        Ok(_) => {
                            if r.bytes_consumed == 0 && r.bytes_written == 0 {
                                return Err(Feed::Corrupt(CorruptGzip {
                                    offset: self.consumed,
                                    detail: "the deflate stream made no progress".into(),
                                }));
                            }
                        }
                        Err(MZError::Buf) => {
                            if r.bytes_consumed == 0 && r.bytes_written == 0 {
                                return Err(Feed::Corrupt(CorruptGzip {
                                    offset: self.consumed,
                                    detail: "the deflate stream made no progress".into(),
                                }));
                            }
                        }
                        Err(e) => {
                            return Err(Feed::Corrupt(CorruptGzip {
                                offset: self.consumed,
                                detail: format!("the deflate data is invalid ({e:?})"),
                            }))
                        }
                    }
                }
                Mode::GzipTrailer(seen) => {
                    let take = (8 - seen).min(input.len());
                    self.trailer[seen..seen + take].copy_from_slice(&input[..take]);
                    self.consumed += take as u64;
                    input = &input[take..];
                    if seen + take == 8 {
                        self.check_trailer();
                        // Another member may follow (concatenated gzip), or padding.
                        self.mode = Mode::Sniffing;
                        self.pending.clear();
                    } else {
                        self.mode = Mode::GzipTrailer(seen + take);
                    }
                }
            }
        }
        // Drain output the inflater still holds for the input already given.
        if let Mode::Inflating = self.mode {
            loop {
                let state = self.state.as_mut().expect("inflate state");
                let r = inflate(state, &[], &mut self.out, MZFlush::None);
                if r.bytes_written > 0 {
                    self.count_member_text(r.bytes_written);
                    emit(&self.out[..r.bytes_written]).map_err(Feed::Sink)?;
                }
                match r.status {
                    Ok(MZStatus::StreamEnd) => {
                        self.members_done += 1;
                        self.mode = Mode::GzipTrailer(0);
                        break;
                    }
                    _ if r.bytes_written < self.out.len() => break,
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// The first `n` bytes of the output buffer are the member's next text.
    fn count_member_text(&mut self, n: usize) {
        self.member_crc.update(&self.out[..n]);
        self.member_len = self.member_len.wrapping_add(n as u32);
    }

    /// A member's trailer is read: compares it with the text inflated, then starts the next member.
    fn check_trailer(&mut self) {
        let t = self.trailer;
        let crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
        let len = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
        if self.checksum_mismatch.is_none() {
            let member = self.members_done;
            let (got_crc, got_len) = (self.member_crc.value(), self.member_len);
            if crc != got_crc {
                self.checksum_mismatch = Some(format!(
                    "gzip member {member}: its text has CRC-32 {got_crc:08X}, its trailer says {crc:08X} \
                     (before compressed byte {})",
                    self.consumed
                ));
            } else if len != got_len {
                self.checksum_mismatch = Some(format!(
                    "gzip member {member}: its text is {got_len} bytes (mod 2^32), its trailer says {len} \
                     (before compressed byte {})",
                    self.consumed
                ));
            }
        }
        self.member_crc = Crc32::new();
        self.member_len = 0;
    }

    /// Ends the input: says whether a gzip stream was cut off before its end, and whether a member's
    /// checksum disagreed with its text.
    pub fn finish<E>(
        &mut self,
        emit: &mut impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<GzipEnd, E> {
        let cut = match self.mode {
            Mode::Sniffing if !self.pending.is_empty() && self.members_done == 0 => {
                let head = std::mem::take(&mut self.pending);
                emit(&head)?;
                false
            }
            Mode::Inflating | Mode::GzipHeader => true,
            Mode::GzipTrailer(seen) => {
                if self.checksum_mismatch.is_none() {
                    self.checksum_mismatch = Some(format!(
                        "gzip member {}: the file ends {seen} bytes into its 8-byte trailer, so its \
                         checksum cannot be checked",
                        self.members_done
                    ));
                }
                false
            }
            _ => false,
        };
        Ok(GzipEnd {
            cut,
            checksum_mismatch: self.checksum_mismatch.take(),
        })
    }
}

/// The first half of a load split in two (in the page, a second worker reads and inflates while the
/// first parses): raw file bytes → JSON text in pieces of about `piece_bytes`, for
/// [`StreamReader::feed_text`](super::StreamReader::feed_text). Gives the same text as the
/// [`Decompressor`] inside [`StreamReader::feed`](super::StreamReader::feed).
pub struct TextSource {
    decompressor: Decompressor,
    piece: Vec<u8>,
    piece_bytes: usize,
    corrupt: bool,
}

impl TextSource {
    pub fn new(piece_bytes: usize) -> Self {
        TextSource {
            decompressor: Decompressor::new(),
            piece: Vec::new(),
            piece_bytes: piece_bytes.max(1),
            corrupt: false,
        }
    }

    /// Whether the bytes so far are gzip.
    pub fn is_gzip(&self) -> bool {
        self.decompressor.is_gzip
    }

    /// Raw (file) bytes taken so far.
    pub fn raw_bytes(&self) -> u64 {
        self.decompressor.raw_bytes()
    }

    /// Takes the next raw bytes; calls `emit` with each full piece of text. Corrupt gzip data is
    /// returned once (the text before it has been emitted); later input is ignored.
    pub fn feed(&mut self, raw: &[u8], emit: &mut impl FnMut(&[u8])) -> Result<(), CorruptGzip> {
        if self.corrupt {
            return Ok(());
        }
        let (piece, piece_bytes) = (&mut self.piece, self.piece_bytes);
        let mut collect = |text: &[u8]| -> Result<(), ()> {
            let mut text = text;
            while !text.is_empty() {
                let take = (piece_bytes - piece.len()).min(text.len());
                piece.extend_from_slice(&text[..take]);
                text = &text[take..];
                if piece.len() == piece_bytes {
                    emit(piece);
                    piece.clear();
                }
            }
            Ok(())
        };
        match self.decompressor.feed(raw, &mut collect) {
            Ok(()) | Err(Feed::Sink(())) => Ok(()),
            Err(Feed::Corrupt(c)) => {
                self.corrupt = true;
                if !self.piece.is_empty() {
                    emit(&self.piece);
                    self.piece.clear();
                }
                Err(c)
            }
        }
    }

    /// Ends the input: emits the last piece. Says how the gzip stream ended (cut off, checksums).
    pub fn finish(&mut self, emit: &mut impl FnMut(&[u8])) -> GzipEnd {
        let piece = &mut self.piece;
        let end = if self.corrupt {
            GzipEnd::default()
        } else {
            self.decompressor
                .finish(&mut |text: &[u8]| -> Result<(), ()> {
                    piece.extend_from_slice(text);
                    Ok(())
                })
                .unwrap_or_default()
        };
        if !self.piece.is_empty() {
            emit(&self.piece);
            self.piece.clear();
        }
        end
    }
}

/// Error of [`Decompressor::feed`]: the data is corrupt, or the receiver failed.
#[derive(Debug)]
pub enum Feed<E> {
    Corrupt(CorruptGzip),
    Sink(E),
}

enum HeaderLen {
    Complete(usize),
    NeedMore,
    Bad(&'static str),
}

/// Length of a gzip member header (RFC 1952), magic bytes included.
fn gzip_header_len(h: &[u8]) -> HeaderLen {
    if h.len() < 10 {
        return HeaderLen::NeedMore;
    }
    if h[0] != 0x1f || h[1] != 0x8b {
        return HeaderLen::Bad("bad gzip magic");
    }
    if h[2] != 8 {
        return HeaderLen::Bad("the gzip compression method is not deflate");
    }
    let flags = h[3];
    let mut i = 10;
    if flags & 0x04 != 0 {
        if h.len() < i + 2 {
            return HeaderLen::NeedMore;
        }
        let xlen = u16::from_le_bytes([h[i], h[i + 1]]) as usize;
        i += 2 + xlen;
    }
    for flag in [0x08u8, 0x10] {
        if flags & flag != 0 {
            match h
                .get(i..)
                .and_then(|rest| rest.iter().position(|&b| b == 0))
            {
                Some(p) => i += p + 1,
                None => return HeaderLen::NeedMore,
            }
        }
    }
    if flags & 0x02 != 0 {
        i += 2;
    }
    if h.len() < i {
        HeaderLen::NeedMore
    } else {
        HeaderLen::Complete(i)
    }
}
