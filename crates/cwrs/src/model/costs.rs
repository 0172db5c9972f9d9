//! What a call on a model costs, roughly, and learning that the caller can stop. A batch that
//! costs more to learn than a copy of the model ([`Model::costs`]), however few its rows, is
//! learned with a [`Stop`] asked about every [`crate::data::POLL_WORK`] of estimated work; once
//! the stop says so the batch ends early and the model is restored (from a copy made before it,
//! or built again when it was fresh): a stopped call leaves the model as it was, like any
//! refused call. A cheaper batch runs to its end (it takes about as long as the copy would).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::covariance::dual::DualGaussian;
use crate::covariance::CovarianceKind;
use crate::data::{stop_every, Matrix, Presentation, Stop};
use crate::error::CwError;
use crate::learn::online::Progressive;
use crate::model::{AnyLearner, Model, Targets};

impl Model {
    /// [`Model::partial_fit`] (with the progressive scores written into `out` when given:
    /// [`Model::partial_fit_scored`]), ended early once `stop` says so when the batch is long
    /// (see the module documentation). Returns whether it was stopped, in which case the model
    /// is as it was before the call.
    pub fn partial_fit_stoppable(
        &mut self,
        x: &Matrix,
        targets: Targets,
        (presentation, out): (Presentation, Option<Progressive>),
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<bool, CwError> {
        let rows = presentation.len(x.n_rows()) as f64;
        let (copy, row) = self.costs(x, rows);
        // A fresh model is undone by building it again: no copy (docs/design.md §3.5.1).
        let fresh = self.is_fresh();
        if !fresh && rows * row < copy {
            return self
                .learn_presented(x, targets, presentation, out)
                .map(|()| false);
        }
        let before = (!fresh).then(|| self.clone());
        let stopped = AtomicBool::new(false);
        let asked = || {
            let now = stop();
            if now {
                stopped.store(true, Ordering::Relaxed);
            }
            now
        };
        let stoppable = Presentation {
            stop: Some(Stop {
                asked: &asked,
                every: stop_every(row),
            }),
            ..presentation
        };
        let learned = self.learn_presented(x, targets, stoppable, out);
        if stopped.load(Ordering::Relaxed) {
            match before {
                Some(before) => *self = before,
                None => self.rebuild()?,
            }
            return Ok(true);
        }
        learned.map(|()| false)
    }

    /// The work (multiply-adds) of copying the model, and of learning one of `rows` rows like
    /// those of `x`, roughly: whether a long batch is worth a copy to restore when it is
    /// stopped, and how often to ask whether to stop.
    pub fn costs(&self, x: &Matrix, rows: f64) -> (f64, f64) {
        self.costs_of_rows(x.n_entries() as f64 / x.n_rows().max(1) as f64, rows)
    }

    /// [`Model::costs`] of rows of `entries` entries.
    pub fn costs_of_rows(&self, entries: f64, rows: f64) -> (f64, f64) {
        let (shape, kind, n) = match self.model() {
            AnyLearner::Binary(l) => (l.shape(), l.covariance_kind(), 1),
            AnyLearner::Regressor(l) => (l.shape(), l.covariance_kind(), 1),
            AnyLearner::Multiclass(l) => (l.shape(), l.covariance_kind(), l.n_classes()),
            AnyLearner::Kernel(l) => return kernel_costs(l.models(), entries, rows),
            AnyLearner::MulticlassKernel(l) => return kernel_costs(l.models(), entries, rows),
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

/// [`Model::costs_of_rows`] of kernel models: s support rows and s × s coefficients each,
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
