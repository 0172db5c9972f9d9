//! Long learning calls that the caller can interrupt (Python: Ctrl-C). A batch that costs more
//! to learn than a copy of the model ([`Estimator::costs`]), however few its rows, runs with a
//! [`Stop`] asked about every [`POLL_WORK`] of estimated work, which asks the caller's check
//! (Python: its signal handlers) every [`SIGNAL_POLL`]; an error the check gives
//! (KeyboardInterrupt) ends the batch early, the model is restored from the copy made before
//! it, and the error is the caller's to raise: an interrupted call leaves the model as it was,
//! like any refused call. A cheaper batch runs to its end (it takes about as long as the copy
//! would), and the caller handles the signal as soon as it returns.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use crate::covariance::dual::DualGaussian;
use crate::covariance::CovarianceKind;
use crate::data::{Matrix, Presentation, Stop};
use crate::error::CwError;
use crate::model::{Estimator, Model, Targets};

/// How often a long call asks the caller's check.
pub const SIGNAL_POLL: Duration = Duration::from_millis(50);

/// Estimated work (multiply-adds) between two questions to a [`Stop`]: about a millisecond, so
/// that the latency is [`SIGNAL_POLL`] for rows of any cost (a question costs tens of
/// nanoseconds: a lock and a clock read).
pub const POLL_WORK: f64 = (1u64 << 20) as f64;

/// Presentations between two questions to a [`Stop`] for rows of `row_work` each.
pub fn stop_every(row_work: f64) -> u32 {
    // Saturating: NaN (no estimate) gives 1, a row of no work the most.
    ((POLL_WORK / row_work) as u32).max(1)
}

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
        let rows = presentation.len(x.n_rows()) as f64;
        let (copy, row) = self.costs(x, rows);
        // A fresh model is undone by building it again: no copy (docs/design.md §3.5.1).
        let fresh = self.is_fresh();
        if !fresh && rows * row < copy {
            return self.partial_fit(x, targets, presentation);
        }
        let before = (!fresh).then(|| self.clone());
        let stop = || interrupt.stop();
        let stoppable = Presentation {
            stop: Some(Stop {
                asked: &stop,
                every: stop_every(row),
            }),
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

    /// The work (multiply-adds) of copying the model, and of learning one of `rows` rows like
    /// those of `x`, roughly: whether a long batch is worth a copy to restore on interruption,
    /// and how often to ask whether to stop.
    pub fn costs(&self, x: &Matrix, rows: f64) -> (f64, f64) {
        self.costs_of_rows(x.n_entries() as f64 / x.n_rows().max(1) as f64, rows)
    }

    /// [`Estimator::costs`] of rows of `entries` entries.
    pub fn costs_of_rows(&self, entries: f64, rows: f64) -> (f64, f64) {
        let (shape, kind, n) = match self.model() {
            Model::Binary(l) => (l.shape(), l.covariance_kind(), 1),
            Model::Regressor(l) => (l.shape(), l.covariance_kind(), 1),
            Model::Multiclass(l) => (l.shape(), l.covariance_kind(), l.n_classes()),
            Model::Kernel(l) => return kernel_costs(l.models(), entries, rows),
            Model::MulticlassKernel(l) => return kernel_costs(l.models(), entries, rows),
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

/// [`Estimator::costs_of_rows`] of kernel models: s support rows and s × s coefficients each,
/// and a row scored against every support row and multiplied by the coefficients, with s as
/// large as the batch can make it (the support grows as the model learns).
fn kernel_costs(models: &[DualGaussian], entries: f64, rows: f64) -> (f64, f64) {
    let (mut copy, mut row) = (0.0, 0.0);
    for model in models {
        let now = model.n_support() as f64;
        let most = model
            .budget()
            .map_or(now + rows, |budget| budget as f64)
            .max(now);
        copy += now * (2.0 * now + entries);
        row += most * (most + entries + 1.0);
    }
    (copy, row)
}
