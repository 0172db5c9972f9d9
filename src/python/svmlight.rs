//! The LIBSVM reader for Python (`crate::data::libsvm`): a whole file at once, or chunks parsed
//! ahead on a background thread (files compressed with gzip, bzip2 or xz read transparently);
//! and `learn_svmlight`, a file learned as it is parsed, in the core.
//!
//! The core reads on a thread of its own while the caller waits here with the GIL released,
//! running Python's signal handlers every `SIGNAL_POLL`: the other Python threads go on, and
//! Ctrl-C interrupts the wait (the reading thread is then told to stop at its next read).

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::check_signals;
use super::convert::state_to_dict;
use super::model::Model;
use crate::data::libsvm::{
    read_file, stream_file, zero_based_file, FileChunks, IndexBase, Pending,
};

/// The result of `pending`, waited for with the GIL released (see `Pending::wait`).
fn result<T: Send>(
    py: Python,
    pending: std::io::Result<Pending<T>>,
    names: (&str, &str),
) -> PyResult<T> {
    pending?.wait(py, names, check_signals)
}

/// The whole file as a dict (see `Chunk::state`: labels, values, indices, indptr, qids or
/// None, n_features). `zero_based=None` is scikit-learn's "auto": one-based unless some index
/// is 0. `n_features` (at least one past the largest index) defaults to exactly that (1 if
/// none).
#[pyfunction]
#[pyo3(signature = (path, zero_based, n_features=None))]
pub(super) fn read_svmlight(
    py: Python,
    path: PathBuf,
    zero_based: Option<bool>,
    n_features: Option<usize>,
) -> PyResult<Bound<PyDict>> {
    let chunk = result(py, read_file(path, zero_based), ("_cwrs", "read_svmlight"))?;
    let n_features = chunk.n_cols(n_features)?;
    state_to_dict(py, chunk.state().with("n_features", n_features))
}

/// Whether the file's indices are read as zero-based under `zero_based` (`None`: "auto", which
/// scans the file for an index 0 without parsing it).
#[pyfunction]
#[pyo3(signature = (path, zero_based))]
pub(super) fn svmlight_zero_based(
    py: Python,
    path: PathBuf,
    zero_based: Option<bool>,
) -> PyResult<bool> {
    let names = ("_cwrs", "svmlight_zero_based");
    result(py, zero_based_file(path, zero_based), names)
}

/// Learns the rows of the LIBSVM file `path` into `model`, in order, as `n_features` wide rows,
/// for `cwrs.dask`'s streamed partitions (see `crate::calls::learn_file`); `classes` are a
/// classifier's sorted labels (None for a regressor). Not all or nothing: on an error (naming
/// the file and line) the model keeps the chunks learned before it, so learn into a copy.
#[pyfunction]
#[pyo3(signature = (model, path, n_features, classes=None, zero_based=false, chunk_rows=10_000))]
pub(super) fn learn_svmlight(
    py: Python,
    model: &Model,
    path: PathBuf,
    n_features: usize,
    classes: Option<Vec<f64>>,
    zero_based: bool,
    chunk_rows: usize,
) -> PyResult<()> {
    let file = (path.as_path(), zero_based, chunk_rows);
    crate::calls::learn_file(
        (&model.estimator, py),
        file,
        n_features,
        classes,
        check_signals,
    )
}

/// Iterates over a file in chunks of up to `chunk_rows` rows, each a dict (see `Chunk::state`:
/// labels, values, indices, indptr, qids, n_features one past the chunk's largest index, and
/// lines, the 1-based line number of each row); the next chunks are parsed on a background
/// thread meanwhile. `zero_based=None` is "auto" (see `read_svmlight`).
#[pyclass(module = "cwrs._cwrs")]
pub(super) struct SvmlightChunks {
    chunks: FileChunks,
    /// Whether the indices are read as zero-based (what "auto" chose).
    #[pyo3(get)]
    zero_based: bool,
}

#[pymethods]
impl SvmlightChunks {
    #[new]
    #[pyo3(signature = (path, zero_based, chunk_rows))]
    fn new(
        py: Python,
        path: PathBuf,
        zero_based: Option<bool>,
        chunk_rows: usize,
    ) -> PyResult<Self> {
        if chunk_rows == 0 {
            return Err(PyValueError::new_err("chunk_rows must be at least 1"));
        }
        let pending = stream_file(path, zero_based, chunk_rows);
        let chunks = result(py, pending, ("SvmlightChunks", "__new__"))?;
        let zero_based = chunks.base() == IndexBase::Zero;
        Ok(SvmlightChunks { chunks, zero_based })
    }

    fn __iter__(slf: PyRef<Self>) -> PyRef<Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(chunk) = self.chunks.next_chunk(py, check_signals)? else {
            return Ok(None);
        };
        let dict = state_to_dict(py, chunk.state());
        self.chunks.recycle(chunk);
        dict.map(Some)
    }
}
