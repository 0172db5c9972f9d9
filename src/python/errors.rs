//! The core's errors as Python exceptions: invalid parameters and invalid model states get their
//! own subclasses of `ValueError` (defined here once, exported from `cwrs`), other invalid input
//! is a `ValueError`, I/O errors an `OSError`, a model too large for memory a `MemoryError`.

use pyo3::create_exception;
use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;

use crate::error::CwError;

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

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add(
        "InvalidParameterError",
        py.get_type::<InvalidParameterError>(),
    )?;
    m.add(
        "InvalidModelStateError",
        py.get_type::<InvalidModelStateError>(),
    )?;
    Ok(())
}
