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
    /// Values per row of a prediction: one per class of a multiclass model (`None`: one).
    pub columns: Option<usize>,
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
            columns: estimator.n_classes(),
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

/// Rows of two class probabilities `[1 − p, p]` from the probabilities p of the positive class
/// in the first half of `values` (as the estimators' `predict_proba` gives them, 1 − p computed
/// as NumPy does).
pub fn with_complements(values: &mut [f64]) {
    let n_rows = values.len() / 2;
    for i in (0..n_rows).rev() {
        let p = values[i];
        values[2 * i + 1] = p;
        values[2 * i] = 1.0 - p;
    }
}

/// The class `predict` gives a row of scores: with one score (two classes), 1 where it is
/// positive; else the first of the highest, as NumPy's `argmax` (no score NaN).
pub fn best_class(scores: &[f64]) -> usize {
    let first_best = |best: usize, (k, &s): (usize, &f64)| if s > scores[best] { k } else { best };
    match scores {
        [score] => usize::from(*score > 0.0),
        _ => scores.iter().enumerate().fold(0, first_best),
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

#[cfg(test)]
mod tests {
    use super::{best_class, with_complements};

    #[test]
    fn the_best_class_is_the_positive_side_or_the_first_highest_score() {
        assert_eq!([-0.5, 0.0, 2.0].map(|s| best_class(&[s])), [0, 0, 1]);
        assert_eq!(best_class(&[1.0, 3.0, 3.0, -1.0]), 1);
        assert_eq!(best_class(&[f64::NEG_INFINITY, f64::NEG_INFINITY]), 0);
    }

    #[test]
    fn complements_pair_each_probability_with_one_minus_it_in_row_order() {
        let mut values = [0.25, 0.9, 0.0, -1.0, -1.0, -1.0];
        with_complements(&mut values);
        assert_eq!(values, [0.75, 0.25, 1.0 - 0.9, 0.9, 1.0, 0.0]);
    }
}
