//! The LIBSVM reader for Python (`crate::data::libsvm`): a whole file at once, or chunks parsed
//! ahead on a background thread; files compressed with gzip, bzip2 or xz are read transparently.
//!
//! The core reads on a thread of its own while the caller waits here with the GIL released,
//! running Python's signal handlers every [`SIGNAL_POLL`]: the other Python threads go on, and
//! Ctrl-C interrupts the wait (the reading thread is then told to stop at its next read).

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::convert::state_to_dict;

use crate::data::libsvm::{
    read_file, stream_file, zero_based_file, FileChunks, IndexBase, Pending,
};
use crate::interrupt::SIGNAL_POLL;
use crate::shared::{guarded, internal_error};

/// What `poll` gives, waited for with the GIL released; Python's signal handlers run between
/// polls, and an exception they raise (KeyboardInterrupt) ends the wait.
pub(super) fn wait<T: Send>(
    py: Python<'_>,
    class: &str,
    operation: &str,
    mut poll: impl FnMut(Duration) -> Option<T> + Send,
) -> PyResult<T> {
    loop {
        let polled = guarded(class, operation, || {
            Ok::<_, PyErr>(py.detach(|| poll(SIGNAL_POLL)))
        });
        match polled? {
            Some(value) => return Ok(value),
            None => py.check_signals()?,
        }
    }
}

/// The result of `pending`; an interrupted wait stops the work too.
pub(super) fn result<T: Send>(
    py: Python<'_>,
    pending: std::io::Result<Pending<T>>,
    (class, operation): (&str, &str),
) -> PyResult<T> {
    let mut pending = pending?;
    let outcome = wait(py, class, operation, |timeout| pending.poll(timeout));
    match outcome.inspect_err(|_| pending.cancel())? {
        Ok(result) => Ok(result?),
        Err(bug) => Err(internal_error(class, operation, &bug).into()),
    }
}

/// The whole file as a dict (see `Chunk::state`: labels, values, indices, indptr, qids or
/// None, n_features). `zero_based=None` is scikit-learn's "auto": one-based unless some index
/// is 0. `n_features` (at least one past the largest index) defaults to exactly that (1 if
/// none).
#[pyfunction]
#[pyo3(signature = (path, zero_based, n_features=None))]
fn read_svmlight<'py>(
    py: Python<'py>,
    path: PathBuf,
    zero_based: Option<bool>,
    n_features: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let chunk = result(py, read_file(path, zero_based), ("_cwrs", "read_svmlight"))?;
    let n_features = chunk.n_cols(n_features)?;
    state_to_dict(py, chunk.state().with("n_features", n_features))
}

/// Whether the file's indices are read as zero-based under `zero_based` (`None`: "auto", which
/// scans the file for an index 0 without parsing it).
#[pyfunction]
#[pyo3(signature = (path, zero_based))]
fn svmlight_zero_based(py: Python<'_>, path: PathBuf, zero_based: Option<bool>) -> PyResult<bool> {
    result(
        py,
        zero_based_file(path, zero_based),
        ("_cwrs", "svmlight_zero_based"),
    )
}

/// Iterates over a file in chunks of up to `chunk_rows` rows, each a dict (see `Chunk::state`:
/// labels, values, indices, indptr, qids, n_features one past the chunk's largest index, and
/// lines, the 1-based line number of each row); the next chunks are parsed on
/// a background thread meanwhile. `zero_based=None` is "auto" (see `read_svmlight`).
#[pyclass(module = "cwrs._cwrs")]
struct SvmlightChunks {
    chunks: Mutex<FileChunks>,
    /// Whether the indices are read as zero-based (what "auto" chose).
    #[pyo3(get)]
    zero_based: bool,
    /// The process that made the iterator: after a fork, the parsing thread exists only there.
    pid: u32,
}

impl SvmlightChunks {
    /// Only ever held with the GIL released or for a non-blocking call, so never deadlocks.
    fn lock(&self) -> MutexGuard<'_, FileChunks> {
        self.chunks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[pymethods]
impl SvmlightChunks {
    #[new]
    #[pyo3(signature = (path, zero_based, chunk_rows))]
    fn new(
        py: Python<'_>,
        path: PathBuf,
        zero_based: Option<bool>,
        chunk_rows: usize,
    ) -> PyResult<Self> {
        if chunk_rows == 0 {
            return Err(PyValueError::new_err("chunk_rows must be at least 1"));
        }
        let pending = stream_file(path, zero_based, chunk_rows);
        let chunks = result(py, pending, ("SvmlightChunks", "__new__"))?;
        Ok(SvmlightChunks {
            zero_based: chunks.base() == IndexBase::Zero,
            chunks: Mutex::new(chunks),
            pid: std::process::id(),
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        if std::process::id() != self.pid {
            return Err(PyRuntimeError::new_err(
                "this iter_svmlight iterator was made before a fork, in another process: its \
                 reading thread does not exist here; make a new iterator in this process",
            ));
        }
        let next = wait(py, "SvmlightChunks", "__next__", |t| self.lock().poll(t))?;
        let Some(chunk) = next? else {
            return Ok(None);
        };
        let dict = state_to_dict(py, chunk.state());
        self.lock().recycle(chunk);
        dict.map(Some)
    }
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SvmlightChunks>()?;
    m.add_function(wrap_pyfunction!(svmlight_zero_based, m)?)?;
    m.add_function(wrap_pyfunction!(read_svmlight, m)?)
}
