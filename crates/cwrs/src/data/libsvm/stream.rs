//! [`ChunkStream`]: chunks parsed on another thread while the caller consumes the previous ones.

use std::io::{ErrorKind, Read};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::Duration;

use super::{Chunk, IndexBase, LabelField, Reader};
use crate::error::CwError;

/// Chunks in flight in the pipeline: one being parsed, one being consumed, one queued.
const PIPELINE_CHUNKS: usize = 3;

/// The consuming end of a parsing pipeline: chunks parsed by a job on another thread, handed
/// back through [`ChunkStream::recycle`] so that the steady state allocates nothing.
pub struct ChunkStream {
    /// Chunks, then `Ok(None)` at the end of the input or an error.
    parsed: Receiver<Result<Option<Chunk>, CwError>>,
    spare: Sender<Chunk>,
    finished: bool,
}

impl ChunkStream {
    /// The stream and the parsing job to run on another thread. The job ends at the end of the
    /// input, after the first error, or once the stream is dropped.
    pub fn new<R: Read + Send>(
        source: R,
        base: IndexBase,
        labels: LabelField,
        chunk_rows: usize,
    ) -> (ChunkStream, impl FnOnce() + Send) {
        let (parsed_tx, parsed) = mpsc::channel();
        let (spare, spare_rx) = mpsc::channel();
        for _ in 0..PIPELINE_CHUNKS {
            // Cannot fail: the receiver is alive.
            let _ = spare.send(Chunk::default());
        }
        let mut reader = Reader::new(source, base, chunk_rows).with_labels(labels);
        let job = move || {
            while let Ok(mut chunk) = spare_rx.recv() {
                let message = reader
                    .next_chunk(&mut chunk)
                    .map(|more| more.then_some(chunk));
                let last = !matches!(message, Ok(Some(_)));
                if parsed_tx.send(message).is_err() || last {
                    return;
                }
            }
        };
        let stream = ChunkStream {
            parsed,
            spare,
            finished: false,
        };
        (stream, job)
    }

    /// A stream of one chunk, already parsed.
    pub fn of(chunk: Chunk) -> ChunkStream {
        let (parsed_tx, parsed) = mpsc::channel();
        // Cannot fail: the receiver is alive.
        let _ = parsed_tx.send(Ok(Some(chunk)));
        let _ = parsed_tx.send(Ok(None));
        ChunkStream {
            parsed,
            spare: mpsc::channel().0,
            finished: false,
        }
    }

    /// The next chunk, waiting for it; `None` once the input is exhausted or an error was
    /// returned.
    pub fn next_chunk(&mut self) -> Result<Option<Chunk>, CwError> {
        loop {
            if let Some(message) = self.poll(Duration::from_secs(3600)) {
                return message;
            }
        }
    }

    /// [`ChunkStream::next_chunk`], or `None` when no chunk came within `timeout` (so that the
    /// caller can do something else meanwhile, and wait again).
    pub fn poll(&mut self, timeout: Duration) -> Option<Result<Option<Chunk>, CwError>> {
        if self.finished {
            return Some(Ok(None));
        }
        let message = match self.parsed.recv_timeout(timeout) {
            Ok(message) => message,
            Err(RecvTimeoutError::Timeout) => return None,
            // Without the end marker, the job died (it cannot panic on any input; this is the
            // backstop against silently dropping the rest of the file).
            Err(RecvTimeoutError::Disconnected) => Err(CwError::Io(
                ErrorKind::Other,
                "the LIBSVM parsing thread stopped unexpectedly".into(),
            )),
        };
        self.finished = !matches!(message, Ok(Some(_)));
        Some(message)
    }

    /// Gives a consumed chunk back to the parser.
    pub fn recycle(&self, chunk: Chunk) {
        // Fails only when the job has ended, and then the chunk is not needed.
        let _ = self.spare.send(chunk);
    }
}

/// Parses `source` on a background thread and calls `f` on each chunk of up to `chunk_rows`
/// rows on the calling thread, so that parsing overlaps whatever `f` does. The first error of
/// either side stops both and is returned.
pub fn for_each_chunk<R: Read + Send>(
    source: R,
    base: IndexBase,
    chunk_rows: usize,
    mut f: impl FnMut(&Chunk) -> Result<(), CwError>,
) -> Result<(), CwError> {
    let (stream, job) = ChunkStream::new(source, base, LabelField::Required, chunk_rows);
    thread::scope(|scope| {
        scope.spawn(job);
        // The stream moves in here, so an early return drops it and the job stops.
        let mut stream = stream;
        while let Some(chunk) = stream.next_chunk()? {
            f(&chunk)?;
            stream.recycle(chunk);
        }
        Ok(())
    })
}
