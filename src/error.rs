//! The one error type of the crate; the Python bindings map it to `ValueError`.

use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum CwError {
    /// A hyper-parameter or constructor argument is out of range or unknown.
    InvalidParameter(String),
    /// Input data is malformed: shapes, indices, labels or non-finite values.
    InvalidInput(String),
}

impl fmt::Display for CwError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CwError::InvalidParameter(msg) | CwError::InvalidInput(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for CwError {}
