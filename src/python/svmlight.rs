//! The LIBSVM reader for Python: a whole file at once, or chunks parsed ahead on a background
//! thread. Parsing and waiting run with the GIL released.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread;

use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::guard::guarded;
use crate::data::libsvm::{read_all, Chunk, ChunkStream, IndexBase};

type F64s<'py> = Bound<'py, PyArray1<f64>>;
type I64s<'py> = Bound<'py, PyArray1<i64>>;

/// Opens `path`; the `OSError` names it.
fn open(path: &Path) -> PyResult<File> {
    File::open(path)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())).into())
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
) -> PyResult<(
    F64s<'py>,
    F64s<'py>,
    I64s<'py>,
    I64s<'py>,
    Option<I64s<'py>>,
    usize,
)> {
    let file = open(&path)?;
    let chunk = guarded("_cwrs", "read_svmlight", || {
        py.detach(|| read_all(file, zero_based))
            .map_err(PyErr::from)
    })?;
    let found = chunk.n_features;
    let n_features = match n_features {
        // At least one column, as scikit-learn gives a file with no entries.
        None => found.max(1),
        Some(n) if n >= found => n,
        Some(n) => {
            return Err(PyValueError::new_err(format!(
                "n_features was set to {n}, but input file contains {found} features"
            )))
        }
    };
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

/// Iterates over a file in chunks of up to `chunk_rows` rows, each
/// `(labels, data, indices, indptr, n_features)` with n_features one past the chunk's largest
/// index; the next chunks are parsed on a background thread meanwhile.
#[pyclass(module = "cwrs._cwrs")]
struct SvmlightChunks {
    stream: Mutex<ChunkStream>,
}

impl SvmlightChunks {
    /// Only ever held with the GIL released or for a non-blocking call, so never deadlocks.
    fn lock(&self) -> MutexGuard<'_, ChunkStream> {
        self.stream.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[pymethods]
impl SvmlightChunks {
    #[new]
    fn new(path: PathBuf, zero_based: bool, chunk_rows: usize) -> PyResult<Self> {
        if chunk_rows == 0 {
            return Err(PyValueError::new_err("chunk_rows must be at least 1"));
        }
        let base = if zero_based {
            IndexBase::Zero
        } else {
            IndexBase::One
        };
        let file = open(&path)?;
        let (stream, job) = guarded("SvmlightChunks", "__new__", || {
            Ok(ChunkStream::new(file, base, chunk_rows))
        })?;
        // The job ends by itself once this object (the stream) is dropped.
        thread::Builder::new()
            .name("cwrs-svmlight".into())
            .spawn(job)?;
        Ok(SvmlightChunks {
            stream: Mutex::new(stream),
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[allow(clippy::type_complexity)]
    fn __next__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Option<(F64s<'py>, F64s<'py>, I64s<'py>, I64s<'py>, usize)>> {
        let next = guarded("SvmlightChunks", "__next__", || {
            Ok(py.detach(|| self.lock().next_chunk())?)
        })?;
        let Some(chunk) = next else {
            return Ok(None);
        };
        let arrays = (
            PyArray1::from_slice(py, chunk.labels()),
            PyArray1::from_slice(py, chunk.values()),
            PyArray1::from_slice(py, chunk.indices()),
            PyArray1::from_slice(py, chunk.indptr()),
            chunk.n_features(),
        );
        self.lock().recycle(chunk);
        Ok(Some(arrays))
    }
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SvmlightChunks>()?;
    m.add_function(wrap_pyfunction!(read_svmlight, m)?)
}
