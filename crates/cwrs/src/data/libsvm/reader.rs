//! [`Reader`]: LIBSVM text read in blocks and parsed into chunks of whole lines.

use std::io::{ErrorKind, Read};

use super::parse::parse_line;
use super::{out_of_memory, Chunk, IndexBase, LabelField, BLOCK_SIZE, MAX_LINE_BYTES};
use crate::error::CwError;

/// Parses LIBSVM text from `source`, `chunk_rows` rows at a time, on the calling thread.
pub struct Reader<R> {
    source: R,
    base: IndexBase,
    labels: LabelField,
    chunk_rows: usize,
    /// `buf[pos..complete]` holds whole lines not yet parsed, `buf[complete..filled]` the start
    /// of a line still being read.
    buf: Vec<u8>,
    pos: usize,
    complete: usize,
    filled: usize,
    eof: bool,
    /// The 1-based number of the line at `pos`.
    line: u64,
    /// (index, value) pairs of an unsorted line.
    scratch: Vec<(i64, f64)>,
}

impl<R: Read> Reader<R> {
    /// A reader handing out up to `chunk_rows` rows (at least 1) per chunk.
    pub fn new(source: R, base: IndexBase, chunk_rows: usize) -> Reader<R> {
        Reader {
            source,
            base,
            labels: LabelField::Required,
            chunk_rows: chunk_rows.max(1),
            buf: vec![0; BLOCK_SIZE],
            pos: 0,
            complete: 0,
            filled: 0,
            eof: false,
            line: 1,
            scratch: Vec::new(),
        }
    }

    /// Reads lines whose label field is `labels` (required by default).
    pub fn with_labels(mut self, labels: LabelField) -> Reader<R> {
        self.labels = labels;
        self
    }

    /// Sets the initial block size in bytes (at least 1), e.g. tiny to test lines across blocks.
    pub fn with_block_size(mut self, bytes: usize) -> Reader<R> {
        self.buf = vec![0; bytes.max(1)];
        self
    }

    /// Replaces `chunk`'s contents with the next rows; `Ok(false)` once the input is exhausted.
    /// After an error the reader should not be used further.
    pub fn next_chunk(&mut self, chunk: &mut Chunk) -> Result<bool, CwError> {
        chunk.clear();
        while chunk.n_rows() < self.chunk_rows {
            if self.pos == self.complete {
                if self.eof {
                    break;
                }
                self.refill()?;
                continue;
            }
            if chunk.n_rows() == 0 {
                chunk.first_line = self.line;
            }
            let lines = self.buf.get(self.pos..self.complete).unwrap_or_default();
            self.pos += parse_line(
                lines,
                self.line,
                self.base,
                self.labels,
                chunk,
                &mut self.scratch,
            )?;
            self.line += 1;
        }
        Ok(chunk.n_rows() > 0)
    }

    /// Doubles the buffer for a line longer than it: a clear error for a line past
    /// [`MAX_LINE_BYTES`] or holding NUL bytes (not text), `OutOfMemory` when memory runs out.
    #[cold]
    fn grow_line(&mut self) -> Result<(), CwError> {
        let len = self.buf.len();
        if len >= BLOCK_SIZE && self.buf[..self.filled].contains(&0) {
            return Err(CwError::InvalidInput(format!(
                "line {}: NUL bytes: this is not a LIBSVM text file",
                self.line
            )));
        }
        if len >= MAX_LINE_BYTES {
            return Err(CwError::InvalidInput(format!(
                "line {} is longer than {} MiB: this is not a LIBSVM text file",
                self.line,
                MAX_LINE_BYTES >> 20
            )));
        }
        let target = (2 * len).min(MAX_LINE_BYTES);
        self.buf
            .try_reserve_exact(target - len)
            .map_err(|_| out_of_memory(target))?;
        self.buf.resize(target, 0);
        Ok(())
    }

    /// Moves the unfinished line to the front of the buffer and reads until a line is complete
    /// (growing the buffer when the line fills it) or the input ends.
    fn refill(&mut self) -> Result<(), CwError> {
        self.buf.copy_within(self.pos..self.filled, 0);
        self.filled -= self.pos;
        self.pos = 0;
        self.complete = 0;
        loop {
            if self.filled == self.buf.len() {
                self.grow_line()?;
            }
            let start = self.filled;
            let n = read_some(&mut self.source, &mut self.buf[start..])?;
            self.filled += n;
            if n == 0 {
                self.eof = true;
                self.complete = self.filled;
                return Ok(());
            }
            if let Some(k) = self.buf[start..self.filled]
                .iter()
                .rposition(|&b| b == b'\n')
            {
                self.complete = start + k + 1;
                return Ok(());
            }
        }
    }
}

/// One `read` of `source`, retried when interrupted; corrupt compressed data (see
/// [`decompressed`]) is bad input, other failures are I/O errors.
pub(super) fn read_some(source: &mut impl Read, buf: &mut [u8]) -> Result<usize, CwError> {
    loop {
        match source.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::InvalidData => {
                return Err(CwError::InvalidInput(e.to_string()))
            }
            Err(e) => return Err(e.into()),
        }
    }
}
