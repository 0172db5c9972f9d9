//! The LIBSVM reader for Python (`crate::data::libsvm`): a file in chunks parsed ahead on a
//! background thread, or whole as one chunk (files compressed with gzip, bzip2 or xz read
//! transparently), waited for with the GIL released, Ctrl-C interrupting the wait (see
//! `Pending::wait`); and `learn_svmlight`, a file learned as it is parsed, in the core.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::check_signals;
use super::convert::state_to_dict;
use super::model::Model;
use crate::data::libsvm::{stream_file, FileChunks, IndexBase};

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

/// Iterates over a file in chunks of up to `chunk_rows` rows (None: the whole file as one
/// chunk), each a dict (see `Chunk::state`: labels, values, indices, indptr, qids or None,
/// n_features one past the chunk's largest index, and lines, the 1-based line number of each
/// row); the next chunks are parsed on a background thread meanwhile. `zero_based=None` is
/// scikit-learn's "auto": zero-based exactly when some index is 0 (see `stream_file`).
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
        chunk_rows: Option<usize>,
    ) -> PyResult<Self> {
        if chunk_rows == Some(0) {
            return Err(PyValueError::new_err("chunk_rows must be at least 1"));
        }
        let names = ("SvmlightChunks", "__new__");
        let chunks = stream_file(path, zero_based, chunk_rows)?.wait(py, names, check_signals)?;
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
