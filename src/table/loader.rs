//! The simple API over the resumable core: feed file bytes in any chunks, get a [`TraceTable`].

use super::{TableBuilder, TraceTable};
use crate::trace::source::GzipEnd;
use crate::trace::{LoadError, StreamReader};

/// Bytes fed at a time, with room made in the columns before each (`TableBuilder::make_room`).
const ROOM_EVERY_BYTES: usize = 1 << 20;

/// Loads one trace file (plain or gzip JSON) fed in chunks of any size.
pub struct TraceLoader {
    inner: StreamReader<TableBuilder>,
    file_bytes: Option<u64>,
    /// Gzip: the most text per file byte seen so far (0 before any). The file bytes counted with
    /// some text can include input the inflater has not turned into text yet (up to a read ahead),
    /// so each ratio seen is at most the true one and the largest is the best guess.
    text_per_raw: f64,
}

impl TraceLoader {
    /// `file_bytes`: the file's size when known, to size the columns (see `TableBuilder::make_room`).
    pub fn new(file: &str, file_bytes: Option<u64>) -> Self {
        TraceLoader {
            inner: StreamReader::new(file, TableBuilder::new(file)),
            file_bytes,
            text_per_raw: 0.0,
        }
    }

    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), LoadError> {
        for piece in bytes.chunks(ROOM_EVERY_BYTES) {
            self.feed_piece(piece)?;
        }
        Ok(())
    }

    fn feed_piece(&mut self, bytes: &[u8]) -> Result<(), LoadError> {
        let raw = self.inner.raw_bytes();
        let gzip = if raw == 0 {
            bytes.starts_with(&[0x1f, 0x8b])
        } else {
            self.inner.is_gzip()
        };
        let text = self.inner.text_bytes();
        let ratio = self.text_per_file_byte(gzip, text, raw);
        let next = (bytes.len() as f64 * ratio) as u64;
        let total = self.file_bytes.map(|f| (f as f64 * ratio) as u64);
        self.inner.sink.make_room(text, next, total);
        self.inner.feed(bytes)
    }

    /// Text bytes per file byte, with `text` made from `raw` file bytes so far: 1 for plain JSON;
    /// for gzip the largest ratio seen (15 before any text).
    fn text_per_file_byte(&mut self, gzip: bool, text: u64, raw: u64) -> f64 {
        if !gzip {
            return 1.0;
        }
        if raw > 0 && text > 0 {
            self.text_per_raw = self.text_per_raw.max(text as f64 / raw as f64);
        }
        if self.text_per_raw > 0.0 {
            self.text_per_raw
        } else {
            15.0
        }
    }

    /// Takes JSON text that a [`TextSource`](crate::trace::source::TextSource) made from the file
    /// elsewhere (a reader thread, or the page's second worker). `gzip`: the file is gzip;
    /// `raw_bytes`: the file bytes behind all the text so far. Use this or [`TraceLoader::feed`] for
    /// a file, not both.
    pub fn feed_text(&mut self, text: &[u8], gzip: bool, raw_bytes: u64) -> Result<(), LoadError> {
        let seen = self.inner.text_bytes();
        let ratio = self.text_per_file_byte(gzip, seen + text.len() as u64, raw_bytes);
        let total = self.file_bytes.map(|f| (f as f64 * ratio) as u64);
        let mut fed = seen;
        for piece in text.chunks(ROOM_EVERY_BYTES) {
            self.inner.sink.make_room(fed, piece.len() as u64, total);
            self.inner.feed_text(piece, gzip, raw_bytes)?;
            fed += piece.len() as u64;
        }
        Ok(())
    }

    /// The text source found the gzip data corrupt after the text fed so far (what was read is
    /// kept, as with [`TraceLoader::feed`]).
    pub fn text_source_corrupt(&mut self, offset: u64, detail: &str) -> Result<(), LoadError> {
        self.inner
            .text_source_corrupt(crate::trace::source::CorruptGzip {
                offset,
                detail: detail.to_string(),
            })
    }

    /// Raw bytes taken so far (of the file as given).
    pub fn raw_bytes(&self) -> u64 {
        self.inner.raw_bytes()
    }

    /// JSON text bytes read so far (after inflating).
    pub fn text_bytes(&self) -> u64 {
        self.inner.text_bytes()
    }

    /// Entries of `traceEvents` read so far.
    pub fn entries(&self) -> u64 {
        self.inner.entries()
    }

    pub fn finish(self) -> Result<TraceTable, LoadError> {
        self.finish_with(None)
    }

    /// Ends text fed by [`TraceLoader::feed_text`], with the file's `gzip` and total `raw_bytes`;
    /// `gzip_end`: how the text source said the gzip stream ended (cut off, checksums).
    pub fn finish_text(
        self,
        gzip: bool,
        raw_bytes: u64,
        gzip_end: GzipEnd,
    ) -> Result<TraceTable, LoadError> {
        self.finish_with(Some((gzip, raw_bytes, gzip_end)))
    }

    fn finish_with(self, text_end: Option<(bool, u64, GzipEnd)>) -> Result<TraceTable, LoadError> {
        let text = self.inner.text_bytes();
        let (raw, gzip, (summary, builder)) = match text_end {
            None => (
                self.inner.raw_bytes(),
                self.inner.is_gzip(),
                self.inner.finish()?,
            ),
            Some((gzip, raw, end)) => (raw, gzip, self.inner.finish_text(gzip, raw, end)?),
        };
        let entries = summary.entries;
        let object_form = summary.top_level_keys.iter().any(|k| k == "traceEvents")
            || !summary.metadata.is_empty();
        let mut table = builder.finish(summary);
        table.metadata.trace_events = entries;
        table.metadata.gzip = gzip;
        table.metadata.file_bytes = raw;
        table.metadata.text_bytes = text;
        table.metadata.object_form = object_form;
        Ok(table)
    }
}

/// Loads a whole in-memory file (tests, small inputs).
pub fn load_bytes(file: &str, bytes: &[u8]) -> Result<TraceTable, LoadError> {
    let mut loader = TraceLoader::new(file, Some(bytes.len() as u64));
    loader.feed(bytes)?;
    loader.finish()
}

/// Text bytes per piece handed from the reader thread to the parser (and per plain-JSON read).
#[cfg(not(target_arch = "wasm32"))]
const PIECE_BYTES: usize = 4 << 20;
/// Raw bytes read at a time from a gzip file.
#[cfg(not(target_arch = "wasm32"))]
const GZIP_READ_BYTES: usize = 1 << 20;
/// Pieces the reader thread may be ahead of the parser.
#[cfg(not(target_arch = "wasm32"))]
const PIECES_IN_FLIGHT: usize = 3;

/// What the reader thread of [`load_path`] hands to the parser.
#[cfg(not(target_arch = "wasm32"))]
enum ReadPiece {
    /// JSON text; whether the file is gzip; the file bytes behind all the text so far.
    Text(Vec<u8>, bool, u64),
    /// The gzip data is corrupt after the text already sent.
    Corrupt(crate::trace::source::CorruptGzip),
    /// The file could not be read.
    Failed(String),
    End {
        gzip: bool,
        raw_bytes: u64,
        gzip_end: GzipEnd,
    },
}

/// Loads a file from disk (native only). A second thread reads the file and inflates gzip while
/// this one parses (as the page's second worker does); without a second thread, this one does both.
#[cfg(not(target_arch = "wasm32"))]
pub fn load_path(path: &std::path::Path) -> Result<TraceTable, LoadError> {
    use std::sync::mpsc;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let f = std::fs::File::open(path)
        .map_err(|e| LoadError::io(&path.display().to_string(), &e.to_string()))?;
    let size = f.metadata().ok().map(|m| m.len());
    let loader = TraceLoader::new(&name, size);
    let (text_tx, text_rx) = mpsc::sync_channel::<ReadPiece>(PIECES_IN_FLIGHT);
    // Buffers the parser is done with go back to the reader, so the pieces reuse a few buffers.
    let (free_tx, free_rx) = mpsc::channel::<Vec<u8>>();
    std::thread::scope(|s| {
        let reader = std::thread::Builder::new()
            .name("trace-reader".into())
            .spawn_scoped(s, move || read_pieces(f, text_tx, free_rx));
        if reader.is_err() {
            // No second thread: read here (the file went with the closure; it is opened again).
            return load_path_in_this_thread(path, &name, loader);
        }
        // The receiving ends go into `parse_pieces` and are dropped when it returns, on every exit:
        // a reader blocked on a full queue then wakes to a hung-up channel and stops, so the scope's
        // join cannot wait for it forever.
        parse_pieces(&name, loader, text_rx, free_tx)
    })
}

/// The parsing side of [`load_path`]: takes the reader thread's pieces until the end or an error.
#[cfg(not(target_arch = "wasm32"))]
fn parse_pieces(
    name: &str,
    mut loader: TraceLoader,
    text_rx: std::sync::mpsc::Receiver<ReadPiece>,
    free_tx: std::sync::mpsc::Sender<Vec<u8>>,
) -> Result<TraceTable, LoadError> {
    loop {
        match text_rx.recv() {
            Ok(ReadPiece::Text(text, gzip, raw_bytes)) => {
                let fed = loader.feed_text(&text, gzip, raw_bytes);
                let _ = free_tx.send(text);
                fed?;
            }
            Ok(ReadPiece::Corrupt(c)) => loader.text_source_corrupt(c.offset, &c.detail)?,
            Ok(ReadPiece::Failed(detail)) => return Err(LoadError::io(name, &detail)),
            Ok(ReadPiece::End {
                gzip,
                raw_bytes,
                gzip_end,
            }) => return loader.finish_text(gzip, raw_bytes, gzip_end),
            Err(_) => return Err(LoadError::io(name, "the reading thread stopped")),
        }
    }
}

/// The reader thread of [`load_path`]: file → text pieces (inflated if gzip). Stops when the
/// parser hangs up.
#[cfg(not(target_arch = "wasm32"))]
fn read_pieces(
    mut f: std::fs::File,
    out: std::sync::mpsc::SyncSender<ReadPiece>,
    free: std::sync::mpsc::Receiver<Vec<u8>>,
) {
    let buffer = |free: &std::sync::mpsc::Receiver<Vec<u8>>| {
        free.try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(PIECE_BYTES))
    };
    let failed = |e: std::io::Error| ReadPiece::Failed(e.to_string());
    // The first read tells plain JSON from gzip.
    let mut first = buffer(&free);
    let n = match read_full(&mut f, &mut first, PIECE_BYTES) {
        Ok(n) => n,
        Err(e) => {
            let _ = out.send(failed(e));
            return;
        }
    };
    if first.len() < 2 || first[..2] != [0x1f, 0x8b] {
        let mut raw_bytes = n as u64;
        let mut piece = first;
        loop {
            if piece.is_empty() {
                let _ = out.send(ReadPiece::End {
                    gzip: false,
                    raw_bytes,
                    gzip_end: GzipEnd::default(),
                });
                return;
            }
            if out.send(ReadPiece::Text(piece, false, raw_bytes)).is_err() {
                return;
            }
            piece = buffer(&free);
            match read_full(&mut f, &mut piece, PIECE_BYTES) {
                Ok(n) => raw_bytes += n as u64,
                Err(e) => {
                    let _ = out.send(failed(e));
                    return;
                }
            }
        }
    }
    let mut source = crate::trace::source::TextSource::new(PIECE_BYTES);
    let mut hung_up = false;
    let mut raw = first;
    let mut raw_total = n as u64;
    loop {
        let mut emit = |text: &[u8]| {
            let mut piece = buffer(&free);
            piece.clear();
            piece.extend_from_slice(text);
            hung_up |= out.send(ReadPiece::Text(piece, true, raw_total)).is_err();
        };
        let corrupt = source.feed(&raw, &mut emit);
        if hung_up {
            return;
        }
        if let Err(c) = corrupt {
            let _ = out.send(ReadPiece::Corrupt(c));
            break;
        }
        match read_full(&mut f, &mut raw, GZIP_READ_BYTES) {
            Ok(0) => break,
            Ok(k) => raw_total += k as u64,
            Err(e) => {
                let _ = out.send(failed(e));
                return;
            }
        }
    }
    let mut emit = |text: &[u8]| {
        let _ = out.send(ReadPiece::Text(text.to_vec(), true, raw_total));
    };
    let gzip_end = source.finish(&mut emit);
    let _ = out.send(ReadPiece::End {
        gzip: true,
        raw_bytes: source.raw_bytes(),
        gzip_end,
    });
}

/// Reads into `buf` (cleared) until it holds `len` bytes or the file ends; returns the bytes read.
#[cfg(not(target_arch = "wasm32"))]
fn read_full(f: &mut std::fs::File, buf: &mut Vec<u8>, len: usize) -> std::io::Result<usize> {
    use std::io::Read;
    // Only new room is zeroed: a recycled buffer's old bytes are overwritten by the reads.
    buf.resize(len, 0);
    let mut n = 0;
    while n < len {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(n);
    Ok(n)
}

/// [`load_path`] without a second thread.
#[cfg(not(target_arch = "wasm32"))]
fn load_path_in_this_thread(
    path: &std::path::Path,
    name: &str,
    mut loader: TraceLoader,
) -> Result<TraceTable, LoadError> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| LoadError::io(name, &e.to_string()))?;
    let mut buf = vec![0u8; PIECE_BYTES];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| LoadError::io(name, &e.to_string()))?;
        if n == 0 {
            break;
        }
        loader.feed(&buf[..n])?;
    }
    loader.finish()
}

/// Whether a file's name says it may hold a trace: `*.json`, `*.json.gz` or `*.gz`, not hidden.
/// The page's file picker and the CLI's folder scan both read files by this one rule.
pub fn is_trace_file_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    !lower.starts_with('.') && (lower.ends_with(".json") || lower.ends_with(".gz"))
}

/// How deep the CLI looks into a folder without trace files of its own: profilers that write one
/// folder per rank nest the trace a few levels down (`rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/…`).
pub const NESTED_TRACE_DEPTH: usize = 4;

/// The trace files of a folder, sorted by path: its own when it has some, else those of its
/// subfolders (down to [`NESTED_TRACE_DEPTH`] levels), so a folder of per-rank folders loads as
/// the ranks of one job.
pub fn trace_files_in(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let own = trace_files_at(dir, 0)?;
    if !own.is_empty() {
        return Ok(own);
    }
    let mut nested = trace_files_at(dir, NESTED_TRACE_DEPTH)?;
    nested.sort();
    Ok(nested)
}

/// Trace files in `dir` and, while `depth` > 0, in its subfolders (unreadable subfolders skipped).
fn trace_files_at(dir: &std::path::Path, depth: usize) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)?.filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_file() && is_trace_file_name(&name) {
            files.push(path);
        } else if depth > 0 && path.is_dir() && !name.starts_with('.') {
            files.extend(trace_files_at(&path, depth - 1).unwrap_or_default());
        }
    }
    files.sort();
    Ok(files)
}
