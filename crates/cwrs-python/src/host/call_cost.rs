//! Calls on a model from a host: how much work one does, from the size of its input (whether
//! the caller's thread state, Python's GIL, is released for it), and the lean path that learns
//! a few rows ([`Model::learn_few`]). Releasing and retaking it costs about a
//! microsecond, more than a few rows of a primal model take, so such calls run attached
//! ([`Work::Quick`]: still detached when they have to wait for the model); anything longer runs
//! detached so that other threads go on ([`Work::Batch`]).

use cwrs::data::{Matrix, POLL_WORK};
use cwrs::model::{AnyLearner, Model};

use crate::host::shared::Work;

/// Multiply-adds below which a call is [`Work::Quick`]: a few microseconds.
pub const QUICK_WORK: f64 = 8192.0;

/// Rows per call on the lean paths: "a few", as a stream sends them.
pub const LEAN_ROWS: usize = 64;

/// Multiply-adds above which the lean path leaves a call to the general one, which Ctrl-C
/// interrupts ([`crate::host::interrupt`]): a few milliseconds, where the general path's fixed cost
/// (microseconds) no longer shows.
pub const LONG_WORK: f64 = 4.0 * POLL_WORK;

/// The work of a row of a model, fixed over its life (its kind and size never change).
#[derive(Clone, Copy, Debug)]
pub struct CallCost {
    /// Multiply-adds per row and per entry; `None`: a kernel model, whose rows are scored
    /// against every support row, so its calls are always batches.
    per_row_and_entry: Option<(f64, f64)>,
    /// Values per row of a prediction: one per class of a multiclass model (`None`: one).
    columns: Option<usize>,
    /// The width of the rows the model takes.
    n_features: usize,
}

impl CallCost {
    pub fn of(estimator: &Model) -> Self {
        let kernel = matches!(
            estimator.model(),
            AnyLearner::Kernel(_) | AnyLearner::MulticlassKernel(_)
        );
        let cost = |entries| estimator.costs_of_rows(entries, 1.0).1;
        let (per_row, per_one_entry) = (cost(0.0), cost(1.0));
        CallCost {
            per_row_and_entry: (!kernel).then_some((per_row, per_one_entry - per_row)),
            columns: estimator.n_classes(),
            n_features: estimator.model_config().n_features,
        }
    }

    /// Whether the lean paths take `x`: 1 to [`LEAN_ROWS`] rows of the model's width.
    pub fn lean(self, x: &Matrix) -> bool {
        x.n_cols() == self.n_features && (1..=LEAN_ROWS).contains(&x.n_rows())
    }

    /// Whether learning the rows of `x` is long enough to be left to the interruptible path:
    /// more than [`LONG_WORK`] (always for a kernel model).
    pub fn long(self, x: &Matrix) -> bool {
        self.per_row_and_entry.is_none_or(|(per_row, per_entry)| {
            per_row * x.n_rows() as f64 + per_entry * x.n_entries() as f64 > LONG_WORK
        })
    }

    /// Values per row of a prediction: one per class of a multiclass model (`None`: one).
    pub fn columns(self) -> Option<usize> {
        self.columns
    }

    /// Values per row of [`Model::class_probabilities`]: one per class, both classes of a
    /// binary model.
    pub fn proba_columns(self) -> Option<usize> {
        Some(self.columns.unwrap_or(2))
    }

    /// The work of learning (or predicting) the rows of `x`, as `rows` presentations of them.
    pub fn work(self, x: &Matrix, rows: usize) -> Work {
        let quick = self.per_row_and_entry.is_some_and(|(per_row, per_entry)| {
            let entries = x.n_entries() as f64 * rows as f64 / x.n_rows().max(1) as f64;
            per_row * rows as f64 + per_entry * entries <= QUICK_WORK
        });
        if quick {
            Work::Quick
        } else {
            Work::Batch
        }
    }
}
