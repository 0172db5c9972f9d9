//! Calls on a model from a host: how much work one does, from the size of its input (whether
//! the caller's thread state, Python's GIL, is released for it), and the lean path that learns
//! a few rows ([`Estimator::learn_few`]). Releasing and retaking it costs about a
//! microsecond, more than a few rows of a primal model take, so such calls run attached
//! ([`Work::Quick`]: still detached when they have to wait for the model); anything longer runs
//! detached so that other threads go on ([`Work::Batch`]).

use crate::data::{Matrix, Presentation};
use crate::error::{zeros, CwError};
use crate::estimator::{class_index, Estimator, Model, Targets};
use crate::shared::Work;

/// Multiply-adds below which a call is [`Work::Quick`]: a few microseconds.
const QUICK_WORK: f64 = 8192.0;

/// The work of a row of a model, fixed over its life (its kind and size never change).
#[derive(Clone, Copy, Debug)]
pub struct CallCost {
    /// Multiply-adds per row and per entry; `None`: a kernel model, whose rows are scored
    /// against every support row, so its calls are always batches.
    per_row_and_entry: Option<(f64, f64)>,
}

impl CallCost {
    pub fn of(estimator: &Estimator) -> Self {
        let kernel = matches!(
            estimator.model(),
            Model::Kernel(_) | Model::MulticlassKernel(_)
        );
        let (per_row, per_one_entry) = (estimator.costs(0.0).1, estimator.costs(1.0).1);
        CallCost {
            per_row_and_entry: (!kernel).then_some((per_row, per_one_entry - per_row)),
        }
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

/// Values per row, and the shape they form for a multiclass model (rows × classes).
pub type Outputs = (Vec<f64>, Option<[usize; 2]>);

impl Estimator {
    /// The values `predict` writes for the rows of `x`: one per row, or one per row and class
    /// for a multiclass model (`operation` names them in an out-of-memory error).
    pub fn outputs(
        &self,
        x: &Matrix,
        operation: &str,
        predict: impl FnOnce(&Estimator, &Matrix, &mut [f64]) -> Result<(), CwError>,
    ) -> Result<Outputs, CwError> {
        let (n_rows, width) = (x.n_rows(), self.n_classes());
        let n_values = n_rows.checked_mul(width.unwrap_or(1));
        let mut out = zeros(n_values, || format!("the output of {operation}"))?;
        predict(self, x, &mut out)?;
        Ok((out, width.map(|width| [n_rows, width])))
    }

    /// Learns a few rows, `targets[i]` for row `i` (a label ±1, a target, or a class index as
    /// a float): one row through [`Estimator::learn`], more as a batch (validated before the
    /// first update).
    pub fn learn_few(&mut self, x: &Matrix, targets: &[f64]) -> Result<(), CwError> {
        let all = Presentation::default();
        match (x.n_rows(), self.n_classes()) {
            (1, _) => self.learn(x.row(0), targets[0]).map(drop),
            (_, None) => self.partial_fit(x, Targets::Values(targets), all),
            (_, Some(_)) => {
                let classes = targets.iter().map(|&t| class_index(t));
                let classes = classes.collect::<Result<Vec<_>, _>>()?;
                self.partial_fit(x, Targets::Classes(&classes), all)
            }
        }
    }
}
