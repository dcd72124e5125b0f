//! The reader worker (wasm32 only): reads `File`s in slices and inflates gzip, so that the worker
//! that parses never waits for the disk or the inflater (the two run on two cores).
//!
//! It is the same program as the worker, started by the worker with `new Worker(...)`; it only
//! answers [`ToWorker::Read`], [`ToWorker::Credit`] and [`ToWorker::Skip`]. Plain JSON slices go
//! on as they were read (transferred, never copied); gzip is inflated by a [`TextSource`] into
//! pieces of [`TEXT_PIECE_BYTES`].

use std::cell::RefCell;

use web_sys::{File, FileReaderSync};

use super::scope;
use crate::protocol::FromReader;
use crate::trace::source::{GzipEnd, TextSource};

/// The reader worker's `name` (how the program knows it runs as the reader).
pub const WORKER_NAME: &str = "profile-model-reader";
/// Raw bytes read at a time from a plain JSON file (each slice is one message).
const PLAIN_SLICE_BYTES: u64 = 8 << 20;
/// Raw bytes read at a time from a gzip file (about 15x more text comes out).
const GZIP_SLICE_BYTES: u64 = 1 << 20;
/// Text bytes per message for gzip files.
const TEXT_PIECE_BYTES: usize = 8 << 20;
/// Messages in flight before the reader waits for [`ToWorker::Credit`](crate::protocol::ToWorker).
pub const SLICES_IN_FLIGHT: i64 = 4;

/// The file being read.
struct Current {
    index: usize,
    offset: u64,
    /// Set after the first slice, when the file turned out to be gzip.
    gzip: Option<TextSource>,
}

struct ReadJob {
    job: u32,
    files: Vec<File>,
    reader: FileReaderSync,
    credit: i64,
    current: Current,
}

thread_local! {
    static READING: RefCell<Option<ReadJob>> = const { RefCell::new(None) };
}

fn send(msg: &FromReader, buffer: Option<&js_sys::ArrayBuffer>) {
    let bytes = crate::protocol::codec::encode(msg).unwrap_or_default();
    let array = js_sys::Array::of1(&super::js_bytes(&bytes));
    let transfer = js_sys::Array::new();
    if let Some(b) = buffer {
        array.push(b);
        transfer.push(b);
    }
    let _ = scope().post_message_with_transfer(&array, &transfer);
}

/// Starts reading `files` for `job` (dropping any read in progress).
pub fn read(job: u32, files: Vec<File>) {
    let reader = match FileReaderSync::new() {
        Ok(r) => r,
        Err(_) => {
            for file_index in 0..files.len() {
                send(
                    &FromReader::Failed {
                        job,
                        file_index,
                        message: "this browser cannot read files in a worker (FileReaderSync)"
                            .into(),
                    },
                    None,
                );
                send(&end(job, file_index, false, 0, GzipEnd::default()), None);
            }
            return;
        }
    };
    READING.with(|r| {
        *r.borrow_mut() = Some(ReadJob {
            job,
            files,
            reader,
            credit: SLICES_IN_FLIGHT,
            current: Current {
                index: 0,
                offset: 0,
                gzip: None,
            },
        })
    });
    pump();
}

/// `slices` more messages of `job` may be sent.
pub fn credit(job: u32, slices: u32) {
    let mine = READING.with(|r| match r.borrow_mut().as_mut() {
        Some(j) if j.job == job => {
            j.credit += slices as i64;
            true
        }
        _ => false,
    });
    if mine {
        pump();
    }
}

/// Stops reading file `file_index` of `job` (its `End` is sent at once).
pub fn skip(job: u32, file_index: usize) {
    READING.with(|r| {
        if let Some(j) = r.borrow_mut().as_mut() {
            if j.job == job && j.current.index == file_index {
                let read = j.current.offset;
                j.end_file(false, read, GzipEnd::default());
            }
        }
    });
    pump();
}

impl ReadJob {
    /// Sends the `End` of the current file and moves on to the next file.
    fn end_file(&mut self, gzip: bool, raw_bytes: u64, gzip_end: GzipEnd) {
        let index = self.current.index;
        send(&end(self.job, index, gzip, raw_bytes, gzip_end), None);
        self.current = Current {
            index: index + 1,
            offset: 0,
            gzip: None,
        };
    }
}

fn end(job: u32, file_index: usize, gzip: bool, raw_bytes: u64, gzip_end: GzipEnd) -> FromReader {
    FromReader::End {
        job,
        file_index,
        gzip,
        raw_bytes,
        gzip_end,
    }
}

/// Reads while there is credit and something left to read.
fn pump() {
    READING.with(|r| {
        let mut slot = r.borrow_mut();
        let Some(j) = slot.as_mut() else { return };
        while j.credit > 0 {
            if !step(j) {
                *slot = None;
                return;
            }
        }
    });
}

/// Reads one slice (or ends a file). Returns false when every file is done.
fn step(j: &mut ReadJob) -> bool {
    let Some(file) = j.files.get(j.current.index).cloned() else {
        return false;
    };
    let (job, index) = (j.job, j.current.index);
    let size = file.size() as u64;
    let offset = j.current.offset;
    if offset >= size {
        let (gzip, raw, cut) = match j.current.gzip.as_mut() {
            Some(source) => {
                let end = source.finish(&mut |text| send_text(job, index, true, size, text));
                (true, source.raw_bytes(), end)
            }
            None => (false, size, GzipEnd::default()),
        };
        j.end_file(gzip, raw, cut);
        return true;
    }
    let slice_bytes = match (offset, &j.current.gzip) {
        (0, _) | (_, Some(_)) => GZIP_SLICE_BYTES,
        _ => PLAIN_SLICE_BYTES,
    };
    let stop = (offset + slice_bytes).min(size);
    let buffer = match file
        .slice_with_f64_and_f64(offset as f64, stop as f64)
        .ok()
        .and_then(|blob| j.reader.read_as_array_buffer(&blob).ok())
    {
        Some(b) => b,
        None => {
            let message = format!(
                "{}: the browser could not read the file at byte {offset}",
                file.name()
            );
            send(
                &FromReader::Failed {
                    job,
                    file_index: index,
                    message,
                },
                None,
            );
            j.end_file(false, offset, GzipEnd::default());
            return true;
        }
    };
    j.current.offset = stop;
    if offset == 0 {
        let head = js_sys::Uint8Array::new_with_byte_offset_and_length(
            &buffer,
            0,
            buffer.byte_length().min(2),
        )
        .to_vec();
        if head == [0x1f, 0x8b] {
            j.current.gzip = Some(TextSource::new(TEXT_PIECE_BYTES));
        }
    }
    match j.current.gzip.as_mut() {
        None => {
            // Plain JSON: the slice is the text.
            j.credit -= 1;
            send(
                &FromReader::Text {
                    job,
                    file_index: index,
                    gzip: false,
                    raw_bytes: stop,
                },
                Some(&buffer),
            );
        }
        Some(source) => {
            let raw = js_sys::Uint8Array::new(&buffer).to_vec();
            let mut sent = 0i64;
            let r = source.feed(&raw, &mut |text| {
                sent += 1;
                send_text(job, index, true, stop, text)
            });
            j.credit -= sent;
            if let Err(c) = r {
                send(
                    &FromReader::Corrupt {
                        job,
                        file_index: index,
                        offset: c.offset,
                        detail: c.detail,
                    },
                    None,
                );
                // The rest of the file is not read.
                j.current.offset = size;
            }
        }
    }
    true
}

/// Sends a piece of inflated text (copied out of this worker's memory into a transferred buffer).
fn send_text(job: u32, file_index: usize, gzip: bool, raw_bytes: u64, text: &[u8]) {
    let copy = js_sys::Uint8Array::new_with_length(text.len() as u32);
    copy.copy_from(text);
    send(
        &FromReader::Text {
            job,
            file_index,
            gzip,
            raw_bytes,
        },
        Some(&copy.buffer()),
    );
}
