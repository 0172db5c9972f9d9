//! The one error type of the crate; the Python bindings map it to `ValueError` (`OSError` for
//! I/O).

use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum CwError {
    /// A hyper-parameter or constructor argument is out of range or unknown.
    InvalidParameter(String),
    /// Input data is malformed: shapes, indices, labels or non-finite values.
    InvalidInput(String),
    /// Reading the input failed (the kind lets the bindings raise the matching `OSError`).
    Io(std::io::ErrorKind, String),
}

impl fmt::Display for CwError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CwError::InvalidParameter(msg) | CwError::InvalidInput(msg) | CwError::Io(_, msg) => {
                f.write_str(msg)
            }
        }
    }
}

impl std::error::Error for CwError {}

impl From<std::io::Error> for CwError {
    fn from(err: std::io::Error) -> CwError {
        CwError::Io(err.kind(), err.to_string())
    }
}
