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
            if let Some(total) = self.file_bytes {
                // About 250 bytes of JSON per event; gzip is about 15x smaller.
                let gz = bytes.len() >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
                let text = if gz { total.saturating_mul(15) } else { total };
                self.inner
                    .sink
                    .reserve(((text / 250) as usize).min(1 << 26));
            }
        }
        self.inner.feed(bytes)
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
        let raw = self.inner.raw_bytes();
        let gzip = self.inner.is_gzip();
        let text = self.inner.text_bytes();
        let (summary, builder) = self.inner.finish()?;
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

/// Loads a file from disk (native only): mapped a window at a time where the system allows it (no
/// copy through a read buffer), else in 4 MiB reads; bytes past the size first seen are read too.
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
    #[cfg(unix)]
    if let Some(size) = size.filter(|_| f.metadata().is_ok_and(|m| m.is_file())) {
        let mut offset = 0u64;
        while offset < size {
            let len = (size - offset).min(mapped::WINDOW as u64) as usize;
            match mapped::with_window(&f, offset, len, |bytes| loader.feed(bytes)) {
                Some(r) => r?,
                None => break,
            }
            offset += len as u64;
        }
        if offset > 0 {
            use std::io::{Seek, SeekFrom};
            f.seek(SeekFrom::Start(offset))
                .map_err(|e| LoadError::io(&name, &e.to_string()))?;
        }
    }
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

/// Read-only mappings of a file, one window at a time (so memory stays bounded whatever the size).
#[cfg(all(unix, not(target_arch = "wasm32")))]
mod mapped {
    /// Bytes mapped at a time (a multiple of any page size).
    pub const WINDOW: usize = 16 << 20;

    /// Calls `f` with `len` bytes of `file` from `offset` (a multiple of [`WINDOW`]), mapped;
    /// `None` when the system will not map it (then nothing was read).
    pub fn with_window<R>(
        file: &std::fs::File,
        offset: u64,
        len: usize,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Option<R> {
        use std::os::unix::io::AsRawFd;
        if len == 0 {
            return None;
        }
        // SAFETY: a fresh private read-only mapping of `len` bytes, unmapped below; the slice does
        // not outlive it. (The file must not shrink meanwhile, as with any mapped reader.)
        unsafe {
            let ptr = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | populate(),
                file.as_raw_fd(),
                offset as libc::off_t,
            );
            if ptr == libc::MAP_FAILED {
                return None;
            }
            let r = f(std::slice::from_raw_parts(ptr as *const u8, len));
            libc::munmap(ptr, len);
            Some(r)
        }
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn populate() -> libc::c_int {
        libc::MAP_POPULATE
    }

    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    fn populate() -> libc::c_int {
        0
    }
}
