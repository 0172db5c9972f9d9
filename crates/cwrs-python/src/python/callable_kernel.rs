//! A custom kernel of the dual form: a Python `cwrs._kernel.CallableKernel`, which wraps the
//! user's `kernel(X, Z)` and checks what it returns (python/cwrs/_kernel.py), so that the one
//! learning loop in the core drives it. Called from inside a model call that runs without the
//! GIL: each evaluation takes the GIL back for the call. What the callable raises comes back as
//! the same exception (the model is then restored by the learner).

use std::sync::Arc;

use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;

use super::convert::vector;
use super::PyResult;
use cwrs::covariance::kernel::KernelFunction;
use cwrs::data::Matrix;
use cwrs::error::{CwError, Raised};

/// A `cwrs._kernel.CallableKernel`.
#[derive(Debug)]
pub(super) struct CallableKernel(Py<PyAny>);

impl CallableKernel {
    /// The custom kernel of a Python `kernel` argument (None: a built-in kernel or none).
    pub(super) fn wrap(kernel: Option<Py<PyAny>>) -> Option<Arc<dyn KernelFunction>> {
        kernel.map(|kernel| Arc::new(CallableKernel(kernel)) as Arc<dyn KernelFunction>)
    }

    /// `out` = the values (flat, row-major) of the kernel's method `method` for `matrices`.
    fn call(&self, method: &str, matrices: &[&Matrix], out: &mut [f64]) -> Result<(), CwError> {
        let copied = Python::attach(|py| {
            let args = matrices.iter().map(|x| rows_for_python(py, x));
            let args = pyo3::types::PyTuple::new(py, args.collect::<PyResult<Vec<_>>>()?)?;
            let values = self.0.bind(py).call_method1(method, args)?;
            out.copy_from_slice(vector(&values)?);
            Ok(())
        });
        copied.map_err(|error: PyErr| CwError::Raised(Raised(Arc::new(error))))
    }
}

/// `x` as the kernel takes it: a dense (n, d) array, or the CSR arrays and width
/// `(data, indices, indptr, n_cols)`.
fn rows_for_python<'py>(py: Python<'py>, x: &Matrix) -> PyResult<Bound<'py, PyAny>> {
    if let Matrix::Dense { values, .. } = x {
        let array = PyArray1::from_slice(py, values).reshape([x.n_rows(), x.n_cols()]);
        return Ok(array?.into_any());
    }
    let (values, indices, indptr) = x.to_csr();
    let (values, indices) = (
        PyArray1::from_vec(py, values),
        PyArray1::from_vec(py, indices),
    );
    let csr = (values, indices, PyArray1::from_vec(py, indptr), x.n_cols());
    Ok(csr.into_pyobject(py)?.into_any())
}

impl KernelFunction for CallableKernel {
    fn evaluate(&self, rows: &Matrix, support: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.call("evaluate", &[rows, support], out)
    }

    fn diagonal(&self, rows: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.call("diagonal", &[rows], out)
    }
}

/// An exception raised by a callable kernel, as itself; any other error the core passed back.
pub(super) fn reraise(error: &Raised) -> PyErr {
    match error.0.downcast_ref::<PyErr>() {
        Some(error) => Python::attach(|py| error.clone_ref(py)),
        None => pyo3::exceptions::PyRuntimeError::new_err("an error raised by the caller's code"),
    }
}
