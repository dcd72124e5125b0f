//! The simple API over the resumable core: feed file bytes in any chunks, get a [`TraceTable`].

use super::{TableBuilder, TraceTable};
use crate::trace::{LoadError, StreamReader};

/// Loads one trace file (plain or gzip JSON) fed in chunks of any size.
pub struct TraceLoader {
    inner: StreamReader<TableBuilder>,
    file_bytes: Option<u64>,
}

impl TraceLoader {
    /// `file_bytes`: the file's size when known, to reserve columns and report progress.
    pub fn new(file: &str, file_bytes: Option<u64>) -> Self {
        TraceLoader {
            inner: StreamReader::new(file, TableBuilder::new(file)),
            file_bytes,
        }
    }

    pub fn feed(&mut self, bytes: &[u8]) -> Result<(), LoadError> {
        if self.inner.raw_bytes() == 0 && !bytes.is_empty() {
            self.reserve(bytes.len() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b);
        }
        self.inner.feed(bytes)
    }

    /// Takes JSON text that a [`TextSource`](crate::trace::source::TextSource) made from the file
    /// elsewhere (a reader thread, or the page's second worker). `gzip`: the file is gzip;
    /// `raw_bytes`: the file bytes behind all the text so far. Use this or [`TraceLoader::feed`] for
    /// a file, not both.
    pub fn feed_text(&mut self, text: &[u8], gzip: bool, raw_bytes: u64) -> Result<(), LoadError> {
        if self.inner.text_bytes() == 0 && !text.is_empty() {
            self.reserve(gzip);
        }
        self.inner.feed_text(text, gzip, raw_bytes)
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

    fn reserve(&mut self, gzip: bool) {
        if let Some(total) = self.file_bytes {
            // About 250 bytes of JSON per event; gzip is about 15x smaller.
            let text = if gzip {
                total.saturating_mul(15)
            } else {
                total
            };
            self.inner
                .sink
                .reserve(((text / 250) as usize).min(1 << 26));
        }
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
    /// `gzip_cut`: the text source said the gzip stream was cut off before its end marker.
    pub fn finish_text(
        self,
        gzip: bool,
        raw_bytes: u64,
        gzip_cut: bool,
    ) -> Result<TraceTable, LoadError> {
        self.finish_with(Some((gzip, raw_bytes, gzip_cut)))
    }

    fn finish_with(self, text_end: Option<(bool, u64, bool)>) -> Result<TraceTable, LoadError> {
        let text = self.inner.text_bytes();
        let (raw, gzip, (summary, builder)) = match text_end {
            None => (
                self.inner.raw_bytes(),
                self.inner.is_gzip(),
                self.inner.finish()?,
            ),
            Some((gzip, raw, cut)) => (raw, gzip, self.inner.finish_text(gzip, raw, cut)?),
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

/// Loads a file from disk in 4 MiB reads (native only).
#[cfg(not(target_arch = "wasm32"))]
pub fn load_path(path: &std::path::Path) -> Result<TraceTable, LoadError> {
    use std::io::Read;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut f = std::fs::File::open(path)
        .map_err(|e| LoadError::io(&path.display().to_string(), &e.to_string()))?;
    let size = f.metadata().ok().map(|m| m.len());
    let mut loader = TraceLoader::new(&name, size);
    let mut buf = vec![0u8; 4 << 20];
    loop {
        let n = f
            .read(&mut buf)
            .map_err(|e| LoadError::io(&name, &e.to_string()))?;
        if n == 0 {
            break;
        }
        loader.feed(&buf[..n])?;
    }
    loader.finish()
}
