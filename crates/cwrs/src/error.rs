//! The one error type of the crate; the Python bindings map it to `ValueError` and its
//! subclasses `InvalidParameterError` and `InvalidModelStateError` (`OSError` for I/O,
//! `MemoryError` for a model too large for memory).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// What every fallible call of the crate returns on failure; its message is the one the user
/// reads (Python raises it as the matching exception).
#[derive(Clone, Debug, PartialEq)]
pub enum CwError {
    /// A hyper-parameter or constructor argument is out of range or unknown.
    InvalidParameter(String),
    /// Input data is malformed: shapes, indices, labels or non-finite values.
    InvalidInput(String),
    /// A saved model state is malformed: an entry missing, of the wrong type or size, or values
    /// that do not fit together.
    InvalidState(String),
    /// Reading the input failed (the kind lets the bindings raise the matching `OSError`).
    Io(std::io::ErrorKind, String),
    /// A model or result too large for the memory available (an allocation that would abort
    /// the process if it were attempted).
    OutOfMemory(String),
    /// What code outside the crate that it called raised (a custom kernel's Python exception),
    /// passed back as it is.
    Raised(Raised),
}

/// An error value of the caller's code, carried through the core untouched; two are equal when
/// they are the same one.
#[derive(Clone)]
pub struct Raised(pub Arc<dyn Any + Send + Sync>);

impl PartialEq for Raised {
    fn eq(&self, other: &Raised) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl fmt::Debug for Raised {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Raised(..)")
    }
}

impl fmt::Display for CwError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CwError::InvalidParameter(msg)
            | CwError::InvalidInput(msg)
            | CwError::InvalidState(msg)
            | CwError::Io(_, msg)
            | CwError::OutOfMemory(msg) => f.write_str(msg),
            CwError::Raised(_) => f.write_str("an error raised by the caller's code"),
        }
    }
}

impl std::error::Error for CwError {}

impl From<std::io::Error> for CwError {
    fn from(err: std::io::Error) -> CwError {
        CwError::Io(err.kind(), err.to_string())
    }
}

/// Checks that `n_values` f64 values (`None`: more than the address space holds) can be allocated
/// now, by reserving and releasing them: a request for more than the memory available is an
/// error here, where the allocation itself would abort the process. `what` names what needs
/// them and `advice` (empty, or "; " and what to do instead) follows its size in the message.
pub fn check_memory(
    n_values: Option<usize>,
    what: impl FnOnce() -> String,
    advice: &str,
) -> Result<(), CwError> {
    reserve(n_values, what, advice).map(drop)
}

/// `n_values` zeros, or the error of [`check_memory`] when they cannot be allocated.
pub fn zeros(n_values: Option<usize>, what: impl FnOnce() -> String) -> Result<Vec<f64>, CwError> {
    let mut values = reserve(n_values, what, "")?;
    values.resize(n_values.unwrap_or(0), 0.0);
    Ok(values)
}

/// An empty vector with room for `n_values` values.
fn reserve(
    n_values: Option<usize>,
    what: impl FnOnce() -> String,
    advice: &str,
) -> Result<Vec<f64>, CwError> {
    let mut values = Vec::new();
    match n_values {
        Some(n) if values.try_reserve_exact(n).is_ok() => Ok(values),
        _ => {
            let size = n_values.map_or_else(
                || "more than the address space".to_string(),
                |n| format!("{:.3} GB", n as f64 * 8e-9),
            );
            Err(CwError::OutOfMemory(format!(
                "not enough memory: {} needs {size}{advice}",
                what()
            )))
        }
    }
}

/// Runs `f`, turning a panic into `Err(panic message)`.
pub fn catch_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .map_err(|payload| panic_message(payload.as_ref()))
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        message.to_string()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "panic with a non-text payload".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_memory_refuses_what_cannot_be_allocated() {
        assert!(check_memory(Some(1000), String::new, "").is_ok());
        assert_eq!(zeros(Some(3), String::new), Ok(vec![0.0; 3]));
        assert!(zeros(Some(1 << 55), String::new).is_err());
        for n in [None, Some(usize::MAX / 8), Some(1 << 55)] {
            let err = check_memory(n, || "a model".into(), "; try less").unwrap_err();
            assert!(
                matches!(&err, CwError::OutOfMemory(m) if m.starts_with("not enough memory: a model needs ") && m.ends_with("; try less")),
                "{err}"
            );
        }
    }
}
