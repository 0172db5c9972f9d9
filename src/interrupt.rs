//! Long learning calls that the caller can interrupt (Python: Ctrl-C). A batch that costs more
//! to learn than a copy of the model ([`Estimator::costs`]) runs with a [`Stop`] that asks the
//! caller's check (Python: its signal handlers) every [`SIGNAL_POLL`]; an error the check gives
//! (KeyboardInterrupt) ends the batch early, the model is restored from the copy made before
//! it, and the error is the caller's to raise: an interrupted call leaves the model as it was,
//! like any refused call. A shorter batch runs to its end (it takes about as long as the copy
//! would), and the caller handles the signal as soon as it returns.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use crate::covariance::CovarianceKind;
use crate::data::{Matrix, Presentation, Stop};
use crate::error::CwError;
use crate::estimator::{Estimator, Model, Targets};

/// How often a long call asks the caller's check.
pub const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Batches that present fewer rows are never worth a copy.
const MIN_INTERRUPTIBLE_ROWS: u64 = 4096;

/// The caller's check for an interruption, asked at most every [`SIGNAL_POLL`] and only on the
/// thread that made it: a host's signal handlers run there (Python runs them on its main thread
/// only, so the check on a sharded fit's other threads never saw a signal, yet took the turn
/// of the one that could). It keeps the first error the check gives, which stops every thread.
pub struct Interrupt<E, F> {
    check: F,
    state: Mutex<(Instant, Option<E>)>,
    caller: ThreadId,
}

impl<E: Send, F: Fn() -> Result<(), E> + Sync> Interrupt<E, F> {
    pub fn new(check: F) -> Self {
        Interrupt {
            check,
            state: Mutex::new((Instant::now(), None)),
            caller: std::thread::current().id(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, (Instant, Option<E>)> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether to stop: asks the check when [`SIGNAL_POLL`] has passed since the last time, on
    /// the thread that made the interrupt.
    pub fn stop(&self) -> bool {
        let mut state = self.lock();
        let caller = std::thread::current().id() == self.caller;
        if caller && state.1.is_none() && state.0.elapsed() >= SIGNAL_POLL {
            state.0 = Instant::now();
            state.1 = (self.check)().err();
        }
        state.1.is_some()
    }

    /// The error the check gave, if it gave one.
    pub fn into_error(self) -> Option<E> {
        let state = self.state.into_inner();
        state.unwrap_or_else(PoisonError::into_inner).1
    }
}

impl Estimator {
    /// [`Estimator::partial_fit`], stopped by `interrupt` when the batch is long (see the
    /// module documentation); an interrupted batch leaves the model as it was.
    pub fn partial_fit_interruptible<E: Send, F: Fn() -> Result<(), E> + Sync>(
        &mut self,
        x: &Matrix,
        targets: Targets,
        presentation: Presentation,
        interrupt: &Interrupt<E, F>,
    ) -> Result<(), CwError> {
        let rows = presentation.len(x.n_rows());
        let (copy, row) = self.costs(x.n_entries() as f64 / x.n_rows().max(1) as f64);
        if rows < MIN_INTERRUPTIBLE_ROWS || (rows as f64) * row < copy {
            return self.partial_fit(x, targets, presentation);
        }
        // A fresh model is undone by building it again: no copy (docs/design.md §3.5.1).
        let before = (!self.is_fresh()).then(|| self.clone());
        let stop = || interrupt.stop();
        let stoppable = Presentation {
            stop: Some(Stop(&stop)),
            ..presentation
        };
        let learned = self.partial_fit(x, targets, stoppable);
        if interrupt.lock().1.is_some() {
            match before {
                Some(before) => *self = before,
                None => self.rebuild()?,
            }
            return Ok(());
        }
        learned
    }

    /// The work (multiply-adds) of copying the model, and of learning one row of `entries`
    /// entries, roughly: whether a long batch is worth a copy to restore on interruption.
    pub fn costs(&self, entries: f64) -> (f64, f64) {
        let (shape, kind, n) = match self.model() {
            Model::Binary(l) => (l.shape(), l.covariance_kind(), 1),
            Model::Regressor(l) => (l.shape(), l.covariance_kind(), 1),
            Model::Multiclass(l) => (l.shape(), l.covariance_kind(), l.n_classes()),
            // A kernel model's row is scored against every support row: learning a row costs
            // about as much as copying the model.
            Model::Kernel(_) | Model::MulticlassKernel(_) => return (1.0, 1.0),
        };
        let (dim, n) = (shape.dim() as f64, n as f64);
        match kind {
            // A full covariance is dim² numbers, and an update touches dim of them per entry.
            CovarianceKind::Full => (n * dim * dim, n * (entries + 1.0) * dim),
            // 2k sketch rows; an update makes a few passes over them.
            CovarianceKind::LowRank { rank } => {
                let rows = 2.0 * rank as f64;
                (n * rows * dim, n * (entries + 3.0 * dim) * rows)
            }
            _ => (n * 2.0 * dim, n * (entries + 1.0)),
        }
    }
}
