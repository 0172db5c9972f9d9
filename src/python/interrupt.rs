//! Long learning calls that Ctrl-C interrupts. A batch that costs more to learn than a copy of
//! the model ([`Estimator::costs`]) runs with a [`Stop`] that runs Python's signal handlers every [`SIGNAL_POLL`]
//! (taking the GIL back for a moment); an exception they raise (KeyboardInterrupt) ends the
//! batch early, the model is restored from the copy made before it, and the exception is
//! raised: an interrupted call leaves the model as it was, like any refused call. A shorter
//! batch runs to its end (it takes about as long as the copy would), and the signal is handled
//! as soon as it returns.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use pyo3::prelude::*;

use super::guard::Guarded;
use crate::data::{Matrix, Presentation, Stop};
use crate::error::CwError;
use crate::estimator::Estimator;
use crate::shared::Work;

/// How often a long call runs Python's signal handlers.
pub(super) const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Batches that present fewer rows are never worth a copy.
const MIN_INTERRUPTIBLE_ROWS: u64 = 4096;

/// Runs `learn` (a `partial_fit` of `x` as `presentation` says) on `model`, interruptibly when
/// the batch is long (see the module documentation).
pub(super) fn learn_batch(
    py: Python<'_>,
    model: &Guarded<Estimator>,
    x: &Matrix,
    presentation: Presentation,
    learn: impl FnOnce(&mut Estimator, Presentation) -> Result<(), CwError> + Send,
) -> PyResult<()> {
    let rows = presentation.len(x.n_rows());
    let entries = x.n_entries() as f64 / x.n_rows().max(1) as f64;
    let interrupt = Interrupt::new();
    let check = || interrupt.check();
    model.write(py, "partial_fit", Work::Batch, |m| {
        let (copy, row) = m.costs(entries);
        if rows < MIN_INTERRUPTIBLE_ROWS || (rows as f64) * row < copy {
            return Ok(learn(m, presentation)?);
        }
        let before = m.clone();
        let stoppable = Presentation {
            stop: Some(Stop(&check)),
            ..presentation
        };
        let learned = learn(m, stoppable);
        if interrupt.raised() {
            *m = before;
            return Ok(());
        }
        Ok(learned?)
    })?;
    interrupt.into_error().map_or(Ok(()), Err)
}

/// The [`Stop`] of an interruptible batch: the exception of the first signal handler that
/// raised one.
struct Interrupt {
    state: Mutex<(Instant, Option<PyErr>)>,
}

impl Interrupt {
    fn new() -> Self {
        Interrupt {
            state: Mutex::new((Instant::now(), None)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (Instant, Option<PyErr>)> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether to stop: runs the signal handlers when [`SIGNAL_POLL`] has passed since the
    /// last time.
    fn check(&self) -> bool {
        let mut state = self.lock();
        if state.1.is_some() {
            return true;
        }
        if state.0.elapsed() < SIGNAL_POLL {
            return false;
        }
        state.0 = Instant::now();
        if let Err(error) = Python::attach(|py| py.check_signals()) {
            state.1 = Some(error);
        }
        state.1.is_some()
    }

    fn raised(&self) -> bool {
        self.lock().1.is_some()
    }

    fn into_error(self) -> Option<PyErr> {
        self.state
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .1
    }
}
