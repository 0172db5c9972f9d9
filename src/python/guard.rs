//! The Python side of [`crate::shared`]: every call from Python that runs core code goes through
//! [`guarded`] or a [`Guarded`] model, so that
//!
//! - a panic (a bug) raises `RuntimeError("cwrs: internal error in <Class>.<operation>: …; please
//!   report it")` rather than PyO3's `PanicException`, which derives from `BaseException` and
//!   escapes `except Exception`;
//! - threads sharing a model wait for each other instead of racing or failing: predictions run
//!   side by side, an update runs alone. Waiting is done with the GIL released, so the thread
//!   holding a model can always finish;
//! - a model whose update panicked (so may be half updated) raises on every later call.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

use crate::shared::{catch_panic, Detach, Failure, Shared, Work};

impl Detach for Python<'_> {
    fn run_detached<R: Send>(self, f: impl FnOnce() -> R + Send) -> R {
        self.detach(f)
    }
}

pub(super) fn internal_error(class: &str, operation: &str, message: &str) -> PyErr {
    PyRuntimeError::new_err(format!(
        "cwrs: internal error in {class}.{operation}: {message}; please report it"
    ))
}

/// Runs `f`, a call into the core that holds no model (constructors, readers), turning a panic
/// into `RuntimeError`.
pub(super) fn guarded<T>(
    class: &str,
    operation: &str,
    f: impl FnOnce() -> PyResult<T>,
) -> PyResult<T> {
    catch_panic(f).unwrap_or_else(|message| Err(internal_error(class, operation, &message)))
}

/// A model of the Python class `class`, shared by the threads that use it.
pub(super) struct Guarded<T> {
    class: &'static str,
    shared: Shared<T>,
}

impl<T: Send + Sync> Guarded<T> {
    pub(super) fn new(class: &'static str, model: T) -> Self {
        Guarded {
            class,
            shared: Shared::new(model),
        }
    }

    /// Runs `f` on the model alongside other readers (see [`Shared::read`]).
    pub(super) fn read<R: Send>(
        &self,
        py: Python<'_>,
        operation: &str,
        work: Work,
        f: impl FnOnce(&T) -> PyResult<R> + Send,
    ) -> PyResult<R> {
        let result = self.shared.read(py, work, f);
        result.map_err(|failure| self.error(operation, failure))
    }

    /// Runs `f` on the model alone (see [`Shared::write`]).
    pub(super) fn write<R: Send>(
        &self,
        py: Python<'_>,
        operation: &str,
        work: Work,
        f: impl FnOnce(&mut T) -> PyResult<R> + Send,
    ) -> PyResult<R> {
        let result = self.shared.write(py, work, f);
        result.map_err(|failure| self.error(operation, failure))
    }

    /// A quick read of one value (getters).
    pub(super) fn get<R: Send>(
        &self,
        py: Python<'_>,
        operation: &str,
        f: impl FnOnce(&T) -> R + Send,
    ) -> PyResult<R> {
        self.read(py, operation, Work::Quick, |model| Ok(f(model)))
    }

    fn error(&self, operation: &str, failure: Failure<PyErr>) -> PyErr {
        match failure {
            Failure::Error(err) => err,
            Failure::Panic(message) => internal_error(self.class, operation, &message),
            Failure::Reentrant => PyRuntimeError::new_err(format!(
                "cwrs: {}.{operation} was called from inside another call on the same model (one \
                 of its own calls, by a callback such as a kernel function or a signal handler); \
                 that call would wait for itself forever. Use a copy of the estimator inside the \
                 callback",
                self.class
            )),
            Failure::Poisoned => PyRuntimeError::new_err(format!(
                "cwrs: this {} was left in an unknown state by an internal error in an earlier \
                 call and can no longer be used; refit it or load a saved copy",
                self.class
            )),
        }
    }
}
