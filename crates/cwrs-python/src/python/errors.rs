//! The core's errors as Python exceptions ([`Error`] below), invalid parameters and model
//! states with their own subclasses of `ValueError`, defined here once. An internal failure (a
//! panic, a call from inside a call on the same model, a poisoned model: see `crate::host::shared`) is
//! a `RuntimeError`, not PyO3's `PanicException`, which escapes `except Exception`.

use pyo3::create_exception;
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::host::shared::{Detach, Internal};
use cwrs::error::CwError;

/// Waiting for a model, and long work, run without the GIL: other Python threads run
/// meanwhile, and the thread holding a model can always finish.
impl Detach for Python<'_> {
    fn run_detached<R: Send>(self, f: impl FnOnce() -> R + Send) -> R {
        self.detach(f)
    }
}

/// The error of a call into the bindings: a Python exception, whichever layer raised it. Every
/// binding returns it ([`super::PyResult`]), so that `?` turns the core's [`CwError`] into its
/// exception at the boundary (the core knows nothing of Python, and Rust's orphan rule keeps a
/// conversion between two other crates' types out of this one).
pub struct Error(PyErr);

impl From<PyErr> for Error {
    fn from(err: PyErr) -> Error {
        Error(err)
    }
}

impl From<Error> for PyErr {
    fn from(err: Error) -> PyErr {
        err.0
    }
}

impl From<std::convert::Infallible> for Error {
    fn from(never: std::convert::Infallible) -> Error {
        match never {}
    }
}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Error {
        Error(err.into())
    }
}

impl From<pyo3::CastError<'_, '_>> for Error {
    fn from(err: pyo3::CastError<'_, '_>) -> Error {
        Error(err.into())
    }
}

impl From<Internal> for Error {
    fn from(err: Internal) -> Error {
        Error(PyRuntimeError::new_err(err.0))
    }
}

create_exception!(
    cwrs,
    InvalidParameterError,
    PyValueError,
    "A hyper-parameter or model configuration is out of range or unknown."
);
create_exception!(
    cwrs,
    InvalidModelStateError,
    PyValueError,
    "A saved model state is malformed: an entry missing, of the wrong type or size, values \
     that do not fit together, or a version this cwrs does not know."
);

impl From<CwError> for Error {
    fn from(err: CwError) -> Error {
        Error(match err {
            CwError::Io(kind, msg) => std::io::Error::new(kind, msg).into(),
            CwError::OutOfMemory(msg) => PyMemoryError::new_err(msg),
            CwError::InvalidParameter(msg) => InvalidParameterError::new_err(msg),
            CwError::InvalidState(msg) => {
                InvalidModelStateError::new_err(format!("invalid model state: {msg}"))
            }
            CwError::InvalidInput(msg) => PyValueError::new_err(msg),
            CwError::Raised(raised) => super::callable_kernel::reraise(&raised),
        })
    }
}
