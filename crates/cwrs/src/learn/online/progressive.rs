//! Progressive scores: what the model predicted of each row just before it learned that row
//! (progressive validation, the input of online calibration and of selective sampling), from
//! the one learning loop, at no second pass over the data.

use super::Online;
use crate::covariance::Covariance;
use crate::data::{weight_of, Matrix, Presentation};
use crate::error::CwError;
use crate::learn::objective::Objective;

/// Where a learning call writes, per row of its batch and per model (rows × models, row-major;
/// one model for binary and regression learners, one per class for multiclass ones), what the
/// model predicted of the row before learning it: the score μ_k·x as `decision_function` gives
/// it (the averaged mean's, with averaging) and, when asked, xᵀΣ_k x as `variances` gives it.
#[derive(Debug)]
pub struct Progressive<'a> {
    /// μ_k·x of each row before it was learned, rows × models.
    pub scores: &'a mut [f64],
    /// xᵀΣ_k x of each row before it was learned, rows × models; `None`: not computed.
    pub variances: Option<&'a mut [f64]>,
}

impl Progressive<'_> {
    /// Refuses outputs that do not hold `width` values for each of `n_rows` rows.
    fn check(&self, n_rows: usize, width: usize) -> Result<(), CwError> {
        let wanted = n_rows * width;
        let variances = self.variances.as_ref().map_or(wanted, |v| v.len());
        if self.scores.len() == wanted && variances == wanted {
            return Ok(());
        }
        Err(CwError::InvalidInput(format!(
            "progressive scores of {n_rows} rows of {width} need {wanted} values, got {} (and {} \
             variances)",
            self.scores.len(),
            variances
        )))
    }
}

impl<O: Objective, M: Covariance> Online<O, M> {
    /// [`Online::partial_fit`] that also writes each row's prediction before the row is
    /// learned into `out`, at the row's place in `x` (a row presented again by `order`
    /// overwrites it; a row of weight 0 is predicted and not learned). Each prediction is the
    /// one `decision_function` (and `variances`) of the model at that moment gives the row
    /// alone, bit for bit, and the model learned is that of [`Online::partial_fit`]: the
    /// batch is learned row by row, each after its prediction. An error leaves the model as
    /// it was; a `stop` ends the batch early, for the caller to undo.
    pub fn partial_fit_scored(
        &mut self,
        x: &Matrix,
        targets: &[O::Target],
        presentation: Presentation,
        out: Progressive,
    ) -> Result<(), CwError> {
        presentation.check(x, self.n_features(), targets.len())?;
        self.check_targets(targets)?;
        out.check(x.n_rows(), self.models.len())?;
        // Only a custom kernel can fail, in prediction or learning: then the model is restored.
        self.learn_undoably(|online| online.learn_scored(x, targets, presentation, out))
    }

    /// The loop of [`Online::partial_fit_scored`] over a checked batch.
    fn learn_scored(
        &mut self,
        x: &Matrix,
        targets: &[O::Target],
        presentation: Presentation,
        out: Progressive,
    ) -> Result<(), CwError> {
        let Progressive {
            scores,
            mut variances,
        } = out;
        let width = self.models.len();
        for i in presentation.sequence_with_weightless(x.n_rows()) {
            let (row_scores, row_variances) = (
                &mut scores[i * width..(i + 1) * width],
                variances
                    .as_deref_mut()
                    .map(|v| &mut v[i * width..(i + 1) * width]),
            );
            // One prediction gives both: a form's μ·x is the same with its variance or alone.
            x.row(i).as_matrix(x.n_cols(), |one| match row_variances {
                None => self.predict_each(one, false, |k, _, score, _| row_scores[k] = score),
                Some(row_variances) => self.predict_each(one, true, |k, _, score, v| {
                    (row_scores[k], row_variances[k]) = (score, v);
                }),
            })?;
            if weight_of(presentation.weights, i) != 0.0 {
                let row = std::iter::once((i, x.row(i)));
                self.learn_valid(row, (targets, presentation.weights));
            }
        }
        Ok(())
    }
}
