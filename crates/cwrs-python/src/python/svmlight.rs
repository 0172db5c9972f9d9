//! The LIBSVM reader for Python (`cwrs::data::libsvm`): a file in chunks parsed ahead on a
//! background thread, or whole as one chunk (files compressed with gzip, bzip2 or xz read
//! transparently), waited for with the GIL released, Ctrl-C interrupting the wait (see
//! `Pending::wait`); and `learn_svmlight`, a file learned as it is parsed, in the core.

use std::path::PathBuf;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::check_signals;
use super::convert::state_to_dict;
use super::model::PyModel;
use super::PyResult;
use crate::host::reading::{next_chunk, result_of};
use cwrs::data::libsvm::{auto_index_base, stream_file, FileChunks, IndexBase, LabelField};

/// Learns the LIBSVM file `path` into `model` for `cwrs.dask`'s streamed partitions, as
/// `crate::host::calls::learn_file` says: not all or nothing, so learn into a copy.
#[pyfunction]
#[pyo3(signature = (model, path, n_features, classes=None, zero_based=false, chunk_rows=10_000))]
pub(super) fn learn_svmlight(
    py: Python,
    model: &PyModel,
    path: PathBuf,
    n_features: usize,
    classes: Option<Vec<f64>>,
    zero_based: bool,
    chunk_rows: usize,
) -> PyResult<()> {
    let (model, file) = (
        (&model.estimator, py),
        (path.as_path(), zero_based, chunk_rows),
    );
    crate::host::calls::learn_file(model, file, n_features, classes, check_signals)
}

/// Whether `zero_based="auto"` reads the LIBSVM file `path` as zero-based (an index 0 occurs):
/// a scan on a background thread that parses nothing, waited for as `SvmlightChunks` is.
#[pyfunction]
pub(super) fn svmlight_zero_based(py: Python, path: PathBuf) -> PyResult<bool> {
    let names = ("_cwrs", "svmlight_zero_based");
    let base = result_of(auto_index_base(path)?, py, names, check_signals)?;
    Ok(base == IndexBase::Zero)
}

/// Iterates over a file in chunks of up to `chunk_rows` rows (None: the whole file as one
/// chunk), each a dict (`Chunk::state` lists its entries), the next chunks parsed ahead on a
/// background thread; `zero_based=None` is scikit-learn's "auto" (see `stream_file`). With
/// `optional_labels`, a line may lack its label (`LabelField::Optional`: NaN).
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
    #[pyo3(signature = (path, zero_based, chunk_rows, optional_labels=false))]
    fn new(
        py: Python,
        path: PathBuf,
        zero_based: Option<bool>,
        chunk_rows: Option<usize>,
        optional_labels: bool,
    ) -> PyResult<Self> {
        if chunk_rows == Some(0) {
            return Err(PyValueError::new_err("chunk_rows must be at least 1").into());
        }
        let names = ("SvmlightChunks", "__new__");
        let labels = if optional_labels {
            LabelField::Optional
        } else {
            LabelField::Required
        };
        let chunks = result_of(
            stream_file(path, zero_based, labels, chunk_rows)?,
            py,
            names,
            check_signals,
        )?;
        let zero_based = chunks.base() == IndexBase::Zero;
        Ok(SvmlightChunks { chunks, zero_based })
    }

    fn __iter__(slf: PyRef<Self>) -> PyRef<Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(chunk) = next_chunk(&self.chunks, py, check_signals)? else {
            return Ok(None);
        };
        let dict = state_to_dict(py, chunk.state());
        self.chunks.recycle(chunk);
        dict.map(Some)
    }
}
