//! The LIBSVM reader for Python (`crate::data::libsvm`): a whole file at once, or chunks parsed
//! ahead on a background thread; files compressed with gzip, bzip2 or xz are read transparently.
//!
//! The core reads on a thread of its own while the caller waits here with the GIL released,
//! running Python's signal handlers every [`SIGNAL_POLL`]: the other Python threads go on, and
//! Ctrl-C interrupts the wait (the reading thread is then told to stop at its next read).

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

use numpy::PyArray1;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::data::libsvm::{
    read_file, stream_file, zero_based_file, Chunk, FileChunks, IndexBase, Pending,
};
use crate::interrupt::SIGNAL_POLL;
use crate::shared::{guarded, internal_error};

type F64s<'py> = Bound<'py, PyArray1<f64>>;
type I64s<'py> = Bound<'py, PyArray1<i64>>;
type U64s<'py> = Bound<'py, PyArray1<u64>>;
/// `(labels, data, indices, indptr, qids or None, n_features)` of a whole file.
type Table<'py> = (
    F64s<'py>,
    F64s<'py>,
    I64s<'py>,
    I64s<'py>,
    Option<I64s<'py>>,
    usize,
);
/// `(labels, data, indices, indptr, n_features, lines)` of a chunk.
type ChunkArrays<'py> = (F64s<'py>, F64s<'py>, I64s<'py>, I64s<'py>, usize, U64s<'py>);

/// The result of `pending`, waited for with the GIL released; an exception raised by a signal
/// handler (KeyboardInterrupt) stops the wait and the work, and is returned.
fn wait<T: Send>(
    py: Python<'_>,
    pending: std::io::Result<Pending<T>>,
    class: &str,
    operation: &str,
) -> PyResult<T> {
    let mut pending = pending?;
    loop {
        match py.detach(|| pending.poll(SIGNAL_POLL)) {
            Some(Ok(result)) => return Ok(result?),
            Some(Err(bug)) => return Err(internal_error(class, operation, &bug).into()),
            None => py.check_signals().inspect_err(|_| pending.cancel())?,
        }
    }
}

/// The whole file as `(labels, data, indices, indptr, qids or None, n_features)`.
/// `zero_based=None` is scikit-learn's "auto": one-based unless some index is 0.
/// `n_features` (at least one past the largest index) defaults to exactly that (1 if none).
#[pyfunction]
#[pyo3(signature = (path, zero_based, n_features=None))]
fn read_svmlight<'py>(
    py: Python<'py>,
    path: PathBuf,
    zero_based: Option<bool>,
    n_features: Option<usize>,
) -> PyResult<Table<'py>> {
    let chunk = wait(py, read_file(path, zero_based), "_cwrs", "read_svmlight")?;
    let n_features = chunk.n_cols(n_features)?;
    let Chunk {
        labels,
        indptr,
        indices,
        values,
        qids,
        ..
    } = chunk;
    Ok((
        PyArray1::from_vec(py, labels),
        PyArray1::from_vec(py, values),
        PyArray1::from_vec(py, indices),
        PyArray1::from_vec(py, indptr),
        (!qids.is_empty()).then(|| PyArray1::from_vec(py, qids)),
        n_features,
    ))
}

/// Whether the file's indices are read as zero-based under `zero_based` (`None`: "auto", which
/// scans the file for an index 0 without parsing it).
#[pyfunction]
#[pyo3(signature = (path, zero_based))]
fn svmlight_zero_based(py: Python<'_>, path: PathBuf, zero_based: Option<bool>) -> PyResult<bool> {
    let pending = zero_based_file(path, zero_based);
    wait(py, pending, "_cwrs", "svmlight_zero_based")
}

/// Iterates over a file in chunks of up to `chunk_rows` rows, each
/// `(labels, data, indices, indptr, n_features, lines)` with n_features one past the chunk's
/// largest index and lines the 1-based line number of each row; the next chunks are parsed on
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
        let chunks = wait(py, pending, "SvmlightChunks", "__new__")?;
        Ok(SvmlightChunks {
            zero_based: chunks.base() == IndexBase::Zero,
            chunks: Mutex::new(chunks),
            pid: std::process::id(),
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<ChunkArrays<'py>>> {
        if std::process::id() != self.pid {
            return Err(PyRuntimeError::new_err(
                "this iter_svmlight iterator was made before a fork, in another process: its \
                 reading thread does not exist here; make a new iterator in this process",
            ));
        }
        let next = loop {
            let polled = guarded("SvmlightChunks", "__next__", || {
                Ok::<_, PyErr>(py.detach(|| self.lock().poll(SIGNAL_POLL)))
            })?;
            match polled {
                Some(next) => break next?,
                None => py.check_signals()?,
            }
        };
        let Some(chunk) = next else {
            return Ok(None);
        };
        let arrays = (
            PyArray1::from_slice(py, chunk.labels()),
            PyArray1::from_slice(py, chunk.values()),
            PyArray1::from_slice(py, chunk.indices()),
            PyArray1::from_slice(py, chunk.indptr()),
            chunk.n_features(),
            PyArray1::from_slice(py, chunk.lines()),
        );
        self.lock().recycle(chunk);
        Ok(Some(arrays))
    }
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SvmlightChunks>()?;
    m.add_function(wrap_pyfunction!(svmlight_zero_based, m)?)?;
    m.add_function(wrap_pyfunction!(read_svmlight, m)?)
}
