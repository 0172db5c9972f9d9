//! A Python callable `kernel(X, Z) -> (len(X), len(Z)) array` as a custom kernel of the dual
//! form, so that the one learning loop in the core drives it. Called from inside a model call
//! that runs without the GIL: each evaluation takes the GIL back for the call. What the callable
//! raises comes back as the same exception (the model is then restored by the learner); what is
//! wrong with what it returns is a ValueError naming the kernel.

use std::sync::Arc;

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PySlice};

use crate::data::Matrix;
use crate::error::{CwError, Raised};
use crate::kernel::KernelFunction;

/// A Python kernel function and the form in which it gets the support rows.
#[derive(Debug)]
pub(super) struct CallableKernel {
    function: Py<PyAny>,
    /// Whether the support rows go to the callable as a CSR matrix (the model learned from
    /// sparse input) rather than a dense array.
    sparse_support: bool,
}

impl CallableKernel {
    /// The custom kernel of a Python `kernel` argument (None: a built-in kernel or none).
    pub(super) fn wrap(
        kernel: Option<Py<PyAny>>,
        sparse_support: bool,
    ) -> PyResult<Option<Arc<dyn KernelFunction>>> {
        let Some(function) = kernel else {
            return Ok(None);
        };
        if !Python::attach(|py| function.bind(py).is_callable()) {
            return Err(PyTypeError::new_err(
                "kernel must be a callable kernel(X, Z)",
            ));
        }
        Ok(Some(Arc::new(CallableKernel {
            function,
            sparse_support,
        })))
    }

    /// The kernel's `__name__`, else its repr.
    fn name(&self, py: Python<'_>) -> PyResult<String> {
        let function = self.function.bind(py);
        if let Ok(name) = function.getattr("__name__") {
            if name.is_truthy()? {
                return Ok(name.str()?.to_string());
            }
        }
        Ok(function.repr()?.to_string())
    }

    /// kernel(a, b) into `out`, checked to be a finite array of `shape`.
    fn call(
        &self,
        py: Python<'_>,
        a: &Bound<'_, PyAny>,
        b: &Bound<'_, PyAny>,
        shape: (usize, usize),
        out: &mut [f64],
    ) -> PyResult<()> {
        let result = self.function.bind(py).call1((a, b))?;
        let problem = match checked_values(py, &result, shape)? {
            Ok(values) => {
                out.copy_from_slice(values.as_slice()?);
                return Ok(());
            }
            Err(problem) => problem,
        };
        Err(PyValueError::new_err(format!(
            "kernel {}(X, Z) {problem}; a kernel callable must return the dense matrix of \
             kernel values k(X[i], Z[j])",
            self.name(py)?
        )))
    }
}

/// `result` as a C-contiguous float64 array of `shape`, or what is wrong with it.
fn checked_values<'py>(
    py: Python<'py>,
    result: &Bound<'py, PyAny>,
    shape: (usize, usize),
) -> PyResult<Result<PyReadonlyArray2<'py, f64>, String>> {
    if result.is_none() {
        return Ok(Err("returned None".into()));
    }
    if result.hasattr("toarray")? || result.hasattr("tocsr")? {
        return Ok(Err(
            "returned a sparse matrix; return a dense array (e.g. .toarray())".into(),
        ));
    }
    let numpy = py.import("numpy")?;
    let dtype = PyDict::new(py);
    dtype.set_item("dtype", numpy.getattr("float64")?)?;
    let array = match numpy.call_method("asarray", (result,), Some(&dtype)) {
        Ok(array) => array,
        Err(error)
            if error.is_instance_of::<PyTypeError>(py)
                || error.is_instance_of::<PyValueError>(py) =>
        {
            let type_name = result.get_type().name()?;
            return Ok(Err(format!(
                "returned {type_name}, not an array of numbers"
            )));
        }
        Err(error) => return Err(error),
    };
    let (n, m) = shape;
    let mut array = array;
    if array.getattr("ndim")?.extract::<usize>()? < 2
        && array.getattr("size")?.extract::<usize>()? == n * m
    {
        array = array.call_method1("reshape", ((n, m),))?;
    }
    if array.getattr("shape")?.extract::<Vec<usize>>()? != [n, m] {
        let got = array.getattr("shape")?.repr()?;
        return Ok(Err(format!(
            "returned shape {got}, expected ({n}, {m}) = (len(X), len(Z))"
        )));
    }
    let finite = numpy
        .call_method1("isfinite", (&array,))?
        .call_method0("all")?;
    if !finite.is_truthy()? {
        return Ok(Err("returned NaN or infinity".into()));
    }
    let array = numpy.call_method1("ascontiguousarray", (array,))?;
    Ok(Ok(array.extract()?))
}

/// `x` as the callable takes it: a dense (n, d) array, or a SciPy CSR matrix when `sparse`.
fn rows_for_python<'py>(py: Python<'py>, x: &Matrix, sparse: bool) -> PyResult<Bound<'py, PyAny>> {
    let (n, d) = (x.n_rows(), x.n_cols());
    if let (Matrix::Dense { values, .. }, false) = (x, sparse) {
        return Ok(PyArray1::from_slice(py, values).reshape([n, d])?.into_any());
    }
    if !sparse {
        let mut dense = vec![0.0; n * d];
        for i in 0..n {
            x.row(i).for_each(|j, v| dense[i * d + j] = v);
        }
        return Ok(PyArray1::from_vec(py, dense).reshape([n, d])?.into_any());
    }
    let (mut values, mut indices, mut indptr) = (Vec::new(), Vec::new(), vec![0i64]);
    for i in 0..n {
        x.row(i).for_each(|j, v| {
            values.push(v);
            indices.push(j as i64);
        });
        indptr.push(indices.len() as i64);
    }
    let arrays = (
        PyArray1::from_vec(py, values),
        PyArray1::from_vec(py, indices),
        PyArray1::from_vec(py, indptr),
    );
    let scipy = py.import("scipy.sparse")?;
    scipy.call_method1("csr_matrix", (arrays, (n, d)))
}

/// Passes an exception of the callable through the core.
fn raised(error: PyErr) -> CwError {
    CwError::Raised(Raised(Arc::new(error)))
}

impl KernelFunction for CallableKernel {
    fn evaluate(&self, rows: &Matrix, support: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        Python::attach(|py| {
            let x = rows_for_python(py, rows, !matches!(rows, Matrix::Dense { .. }))?;
            let z = rows_for_python(py, support, self.sparse_support)?;
            self.call(py, &x, &z, (rows.n_rows(), support.n_rows()), out)
        })
        .map_err(raised)
    }

    /// One call per row, k(x_i, x_i), as the rows' 1-row slices.
    fn diagonal(&self, rows: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        Python::attach(|py| {
            let x = rows_for_python(py, rows, !matches!(rows, Matrix::Dense { .. }))?;
            for (i, value) in out.iter_mut().enumerate() {
                let row = x.get_item(PySlice::new(py, i as isize, i as isize + 1, 1))?;
                self.call(py, &row, &row, (1, 1), std::slice::from_mut(value))?;
            }
            match out.iter().position(|&v| v < 0.0) {
                None => Ok(()),
                Some(i) => Err(PyValueError::new_err(format!(
                    "kernel {} gives k(x, x) = {} < 0 for row {i}: a kernel must be positive \
                     definite (k(x, x) >= 0)",
                    self.name(py)?,
                    PyFloat::new(py, out[i]).repr()?
                ))),
            }
        })
        .map_err(raised)
    }
}

/// An exception raised by a callable kernel, as itself; any other error the core passed back.
pub(super) fn reraise(error: &Raised) -> PyErr {
    match error.0.downcast_ref::<PyErr>() {
        Some(error) => Python::attach(|py| error.clone_ref(py)),
        None => pyo3::exceptions::PyRuntimeError::new_err("an error raised by the caller's code"),
    }
}
