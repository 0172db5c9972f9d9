//! LIBSVM files read on a thread of their own, which the caller waits for in slices (so that it
//! can do something else between them, e.g. run Python's signal handlers) and can cancel: a FIFO
//! that no one writes to, a slow disk or a huge file then never blocks the caller for good.
//! Errors name the file.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Duration;

use super::{decompressed, has_index_zero, read_all, Chunk, ChunkStream, IndexBase, LabelField};
use crate::error::{catch_panic, CwError};

/// The chunks of a file, parsed ahead on a background thread ([`ChunkStream`]), with errors
/// that name the file. The threads of a host (Python's) may share them.
pub struct FileChunks {
    /// Only ever locked while waiting detached or for a non-blocking call, so never deadlocks.
    stream: Mutex<ChunkStream>,
    path: PathBuf,
    base: IndexBase,
    /// The process that made them: after a fork, the parsing thread exists only there.
    pid: u32,
}

impl FileChunks {
    /// The index base the file is read with (what "auto" chose).
    pub fn base(&self) -> IndexBase {
        self.base
    }

    /// [`ChunkStream::poll`], with errors naming the file.
    pub fn poll(&self, timeout: Duration) -> Option<Result<Option<Chunk>, CwError>> {
        let polled = self.stream().poll(timeout)?;
        Some(polled.map_err(|e| in_file(&self.path, e)))
    }

    /// Whether this is the process that made the chunks: after a fork, the parsing thread
    /// exists only there.
    pub fn made_in_this_process(&self) -> bool {
        std::process::id() == self.pid
    }

    /// [`ChunkStream::recycle`].
    pub fn recycle(&self, chunk: Chunk) {
        self.stream().recycle(chunk);
    }

    fn stream(&self) -> MutexGuard<'_, ChunkStream> {
        self.stream.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The file at `path` opened on a background thread, which reports its [`FileChunks`], or the
/// error: chunks of up to `chunk_rows` rows (`zero_based` resolved first, see `resolve_base`),
/// parsed ahead until they are dropped; or, without `chunk_rows`, the whole file as one chunk,
/// read in one pass as [`read_all`] reads it (so "auto" takes a pipe too).
pub fn stream_file(
    path: PathBuf,
    zero_based: Option<bool>,
    labels: LabelField,
    chunk_rows: Option<usize>,
) -> std::io::Result<Pending<FileChunks>> {
    spawn(move |report| {
        let cancel = &report.cancel;
        let started = match chunk_rows {
            Some(rows) => resolve_base(&path, zero_based, cancel).and_then(|base| {
                let (stream, job) = ChunkStream::new(open(&path, cancel)?, base, labels, rows);
                Ok((stream, Some(job), base))
            }),
            None => open(&path, cancel).and_then(|source| {
                let (chunk, base) = read_all(source, zero_based, labels)?;
                Ok((ChunkStream::of(chunk), None, base))
            }),
        };
        match started {
            Ok((stream, job, base)) => {
                let chunks = FileChunks {
                    stream: Mutex::new(stream),
                    path: path.clone(),
                    base,
                    pid: std::process::id(),
                };
                if let (true, Some(job)) = (report.send(Ok(chunks)), job) {
                    job();
                }
            }
            Err(error) => {
                report.send(Err(in_file(&path, error)));
            }
        }
    })
}

/// Whether scikit-learn's "auto" reads the file at `path` as zero-based, found on a thread of
/// its own as [`stream_file`] opens a file (`resolve_base`: a scan for an index 0 that parses
/// nothing, and nothing parsed after it).
pub fn auto_index_base(path: PathBuf) -> std::io::Result<Pending<IndexBase>> {
    spawn(move |report| {
        report.send(resolve_base(&path, None, &report.cancel).map_err(|e| in_file(&path, e)));
    })
}

/// A source that fails once `cancel` is set: how an abandoned reading thread stops.
struct Cancellable<R> {
    source: R,
    cancel: Arc<AtomicBool>,
}

impl<R: Read> Read for Cancellable<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(std::io::Error::other("reading was cancelled"));
        }
        self.source.read(buf)
    }
}

/// `error` with the file named at the front of its message.
fn in_file(path: &Path, error: CwError) -> CwError {
    let path = path.display();
    match error {
        CwError::InvalidInput(message) => CwError::InvalidInput(format!("{path}: {message}")),
        CwError::Io(kind, message) => CwError::Io(kind, format!("{path}: {message}")),
        CwError::OutOfMemory(message) => CwError::OutOfMemory(format!("{path}: {message}")),
        other => other,
    }
}

/// `path` opened for reading and decompressed if need be (see [`decompressed`]). Blocks on a
/// FIFO until a writer opens it: call it on a reading thread.
fn open(path: &Path, cancel: &Arc<AtomicBool>) -> Result<Box<dyn Read + Send>, CwError> {
    let file = File::open(path)?;
    let source = Cancellable {
        source: file,
        cancel: Arc::clone(cancel),
    };
    Ok(decompressed(source)?)
}

/// `zero_based` resolved: `None` ("auto") is zero-based exactly when an index 0 occurs in the
/// file, which takes a first pass over it; a pipe cannot be read twice.
fn resolve_base(
    path: &Path,
    zero_based: Option<bool>,
    cancel: &Arc<AtomicBool>,
) -> Result<IndexBase, CwError> {
    let zero =
        match zero_based {
            Some(zero) => zero,
            None if !std::fs::metadata(path)?.is_file() => return Err(CwError::InvalidInput(
                "zero_based=\"auto\" reads the file twice (first looking for an index 0), which \
                 a pipe or device does not allow; pass zero_based=True or False"
                    .into(),
            )),
            None => has_index_zero(open(path, cancel)?)?,
        };
    Ok(if zero {
        IndexBase::Zero
    } else {
        IndexBase::One
    })
}

/// Runs `work` on a thread of its own. It reports its result with [`Report::send`] (and may
/// go on working after that); a panic is reported for it.
fn spawn<T: Send + 'static>(
    work: impl FnOnce(&Report<T>) + Send + 'static,
) -> std::io::Result<Pending<T>> {
    let cancel = Arc::new(AtomicBool::new(false));
    let (sender, receiver) = mpsc::channel();
    let report = Report {
        sender,
        cancel: Arc::clone(&cancel),
    };
    thread::Builder::new()
        .name("cwrs-svmlight".into())
        .spawn(move || {
            if let Err(panic) = catch_panic(|| work(&report)) {
                let _ = report.sender.send(Err(panic));
            }
        })?;
    Ok(Pending { receiver, cancel })
}

/// The result of background work, or (a bug) why there is none: the message of its panic, or
/// that its thread ended without a word (a backstop: the work always reports).
pub type Outcome<T> = Result<Result<T, CwError>, String>;

/// The reporting end of [`spawn`], and the flag that asks the work to stop.
struct Report<T> {
    sender: Sender<Outcome<T>>,
    cancel: Arc<AtomicBool>,
}

impl<T> Report<T> {
    /// Reports `result`; false when the caller no longer waits for it.
    fn send(&self, result: Result<T, CwError>) -> bool {
        self.sender.send(Ok(result)).is_ok()
    }
}

/// The result of work running on another thread.
pub struct Pending<T> {
    receiver: Receiver<Outcome<T>>,
    cancel: Arc<AtomicBool>,
}

impl<T> Pending<T> {
    /// The result if it comes within `timeout`, else `None` (wait again, or [`Pending::cancel`]).
    pub fn poll(&mut self, timeout: Duration) -> Option<Outcome<T>> {
        match self.receiver.recv_timeout(timeout) {
            Ok(outcome) => Some(outcome),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => Some(Err(
                "the LIBSVM reading thread ended without a result".into(),
            )),
        }
    }

    /// Asks the work to stop at its next read; its result is no longer wanted.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}
