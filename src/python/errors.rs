//! The core's errors as Python exceptions (`From<CwError>` below), invalid parameters and model
//! states with their own subclasses of `ValueError`, defined here once. An internal failure (a
//! panic, a call from inside a call on the same model, a poisoned model: see `crate::host::shared`) is
//! a `RuntimeError`, not PyO3's `PanicException`, which escapes `except Exception`.

use pyo3::create_exception;
use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use crate::error::CwError;
use crate::host::shared::{Detach, Internal};

/// Waiting for a model, and long work, run without the GIL: other Python threads run
/// meanwhile, and the thread holding a model can always finish.
impl Detach for Python<'_> {
    fn run_detached<R: Send>(self, f: impl FnOnce() -> R + Send) -> R {
        self.detach(f)
    }
}

impl From<Internal> for PyErr {
    fn from(err: Internal) -> PyErr {
        PyRuntimeError::new_err(err.0)
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

impl From<CwError> for PyErr {
    fn from(err: CwError) -> PyErr {
        match err {
            CwError::Io(kind, msg) => std::io::Error::new(kind, msg).into(),
            CwError::OutOfMemory(msg) => PyMemoryError::new_err(msg),
            CwError::InvalidParameter(msg) => InvalidParameterError::new_err(msg),
            CwError::InvalidState(msg) => {
                InvalidModelStateError::new_err(format!("invalid model state: {msg}"))
            }
            CwError::InvalidInput(msg) => PyValueError::new_err(msg),
            CwError::Raised(raised) => super::callable_kernel::reraise(&raised),
        }
    }
}
