//! `learn_svmlight(model, path, …)`: a LIBSVM file learned as it is parsed, in the core
//! (`crate::file_learning`), for `cwrs.dask`'s streamed partitions. The chunks are parsed ahead
//! on the reader's thread; each is learned with the GIL released, and Python's signal handlers
//! run between chunks and while waiting for one.

use std::path::PathBuf;

use pyo3::prelude::*;

use super::model::Model;
use super::svmlight::result;
use crate::data::libsvm::stream_file;
use crate::error::CwError;
use crate::file_learning::{learn_chunk, FileLabels, Scratch};
use crate::shared::Work;

/// Learns the rows of the LIBSVM file `path` into `model`, in order, as `n_features` wide
/// rows; `classes` are a classifier's sorted labels (None for a regressor). Not all or
/// nothing: on an error (naming the file and line) the model keeps the chunks learned before
/// it, so learn into a copy.
#[pyfunction]
#[pyo3(signature = (model, path, n_features, classes=None, zero_based=false, chunk_rows=10_000))]
pub(super) fn learn_svmlight(
    py: Python<'_>,
    model: &Model,
    path: PathBuf,
    n_features: usize,
    classes: Option<Vec<f64>>,
    zero_based: bool,
    chunk_rows: usize,
) -> PyResult<()> {
    const OPERATION: (&str, &str) = ("_cwrs", "learn_svmlight");
    let estimator = model.guarded();
    let labels = estimator.read(py, OPERATION.1, Work::Quick, |e| {
        Ok(FileLabels::new(e, classes)?)
    })?;
    let pending = stream_file(path.clone(), Some(zero_based), chunk_rows.max(1));
    let chunks = result(py, pending, OPERATION)?;
    let mut scratch = Scratch::default();
    let in_file = |err| match err {
        CwError::InvalidInput(message) => {
            CwError::InvalidInput(format!("{}: {message}", path.display()))
        }
        err => err,
    };
    loop {
        let Some(chunk) = chunks.next_chunk(py, || py.check_signals())? else {
            return Ok(());
        };
        estimator.write(py, OPERATION.1, Work::Batch, |e| {
            Ok(learn_chunk(e, &chunk, n_features, &labels, &mut scratch).map_err(in_file)?)
        })?;
        chunks.recycle(chunk);
    }
}
