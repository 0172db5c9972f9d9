//! Sparse (L1) training for the diagonal learners (docs/design.md §5): the coordinate-dependent FOBOS
//! step of `cw-family-and-sparse-fobos-note.md`. After every update round t each weight is
//! soft-thresholded, w_j ← sign(w_j)·max(0, |w_j| − η_t·λ·Σ_jj) (or η_t·λ for the uniform,
//! classic truncated-gradient variant), so confident weights shrink less.
//!
//! Applied lazily: H = Σ_t η_t over the update rounds so far, and each coordinate remembers H at
//! its last catch-up. Σ_jj only changes on rounds where feature j is active, so a coordinate's
//! pending threshold is exactly λ·Σ_jj·(H − H_j), and soft-thresholds compose by adding their
//! thresholds: a row costs O(nnz) however many features the model has.

use crate::covariance::CovarianceKind;
use crate::data::Shape;
use crate::error::CwError;

/// The L1 penalty of sparse training: which threshold the weights take after each update.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Penalty {
    /// Threshold η_t·λ·Σ_jj: the note's coordinate-dependent step.
    CoordinateDependent,
    /// Threshold η_t·λ: the classic truncated gradient.
    Uniform,
    /// AdaGrad's regularised dual averaging form (docs/design.md §2.9): the weights are a
    /// closed form of the gradient sums, not thresholded (AdaGrad's form alone).
    DualAveraging,
}

impl Penalty {
    /// The penalty of a configuration's name: `"l1"`, `"l1-uniform"` or `"l1-rda"`.
    pub fn from_name(name: &str) -> Result<Penalty, CwError> {
        match name {
            "l1" => Ok(Penalty::CoordinateDependent),
            "l1-uniform" => Ok(Penalty::Uniform),
            "l1-rda" => Ok(Penalty::DualAveraging),
            _ => Err(CwError::InvalidParameter(format!(
                "penalty must be None, \"l1\", \"l1-uniform\" or \"l1-rda\", got {name:?}"
            ))),
        }
    }

    /// The penalty's name in a configuration, the inverse of [`Penalty::from_name`].
    pub fn name(self) -> &'static str {
        match self {
            Penalty::CoordinateDependent => "l1",
            Penalty::Uniform => "l1-uniform",
            Penalty::DualAveraging => "l1-rda",
        }
    }
}

/// Refuses a penalty the covariance form `kind` does not take: the diagonal form takes "l1"
/// and "l1-uniform", AdaGrad's own form "l1" and "l1-rda", the others none.
pub(crate) fn check_form(penalty: Penalty, kind: CovarianceKind) -> Result<(), CwError> {
    match (kind, penalty) {
        (CovarianceKind::Diagonal, Penalty::DualAveraging) => Err(CwError::InvalidParameter(
            "penalty \"l1-rda\" is AdaGrad's dual averaging form".into(),
        )),
        (CovarianceKind::AdaGrad { .. }, Penalty::Uniform) => Err(CwError::InvalidParameter(
            "AdaGrad's L1 penalty is \"l1\" (FOBOS) or \"l1-rda\", not \"l1-uniform\"".into(),
        )),
        (CovarianceKind::Diagonal | CovarianceKind::AdaGrad { .. }, _) => Ok(()),
        _ => Err(needs_diagonal(kind)),
    }
}

/// The refusal of a penalty with a form other than the diagonal one (or AdaGrad's).
pub(crate) fn needs_diagonal(kind: CovarianceKind) -> CwError {
    CwError::InvalidParameter(format!(
        "an L1 penalty needs the diagonal covariance, not {:?}",
        kind.name()
    ))
}

/// Checks the strength λ of the penalty: non-negative and finite.
pub(crate) fn check_alpha(lambda: f64) -> Result<f64, CwError> {
    if lambda.is_finite() && lambda >= 0.0 {
        Ok(lambda)
    } else {
        Err(CwError::InvalidParameter(format!(
            "alpha must be a non-negative finite number, got {lambda}"
        )))
    }
}

/// The lazy soft-threshold state of one diagonal Gaussian.
#[derive(Clone, Debug, PartialEq)]
pub struct L1 {
    penalty: Penalty,
    lambda: f64,
    /// A coordinate the penalty skips: the bias, unless it is penalised.
    exempt: Option<usize>,
    /// H: the sum of η_t over the update rounds so far.
    total: f64,
    /// H at each coordinate's last catch-up.
    last: Vec<f64>,
}

/// sign(w)·max(0, |w| − threshold).
#[inline]
fn soft_threshold(w: f64, threshold: f64) -> f64 {
    if w > threshold {
        w - threshold
    } else if w < -threshold {
        w + threshold
    } else {
        0.0
    }
}

impl L1 {
    /// A penalty of strength λ = `lambda` (a finite real ≥ 0) over `dim` coordinates, none
    /// caught up yet; coordinate `exempt`, if any, is never thresholded.
    pub fn new(
        penalty: Penalty,
        lambda: f64,
        exempt: Option<usize>,
        dim: usize,
    ) -> Result<L1, CwError> {
        check_alpha(lambda)?;
        Ok(L1 {
            penalty,
            lambda,
            exempt,
            total: 0.0,
            last: vec![0.0; dim],
        })
    }

    /// The penalty for a model of `shape`: the bias is exempt unless `penalize_intercept`.
    pub fn for_shape(
        penalty: Penalty,
        lambda: f64,
        penalize_intercept: bool,
        shape: Shape,
    ) -> Result<L1, CwError> {
        let exempt = (shape.fit_intercept && !penalize_intercept).then_some(shape.n_features);
        L1::new(penalty, lambda, exempt, shape.dim())
    }

    /// Restores the lazy state (see [`L1::total`] and [`L1::last`]).
    pub fn with_state(mut self, total: f64, last: &[f64]) -> Result<L1, CwError> {
        self.set_state(total, last)?;
        Ok(self)
    }

    /// Sets the lazy state: H = `total`, and the H each coordinate was last caught up to.
    pub fn set_state(&mut self, total: f64, last: &[f64]) -> Result<(), CwError> {
        if last.len() != self.last.len()
            || !total.is_finite()
            || last.iter().any(|h| !h.is_finite())
        {
            return Err(CwError::InvalidInput("inconsistent L1 state".into()));
        }
        self.total = total;
        self.last.copy_from_slice(last);
        Ok(())
    }

    /// Which threshold the penalty applies.
    pub fn penalty(&self) -> Penalty {
        self.penalty
    }

    /// H = Σ_t η_t, the sum of the step scales over the update rounds so far.
    pub fn total(&self) -> f64 {
        self.total
    }

    /// The H each coordinate was last caught up to, one per coordinate.
    pub fn last(&self) -> &[f64] {
        &self.last
    }

    /// The threshold per unit of H for coordinate j with variance `variance`.
    #[inline]
    fn rate(&self, j: usize, variance: f64) -> f64 {
        if self.exempt == Some(j) {
            0.0
        } else {
            match self.penalty {
                Penalty::CoordinateDependent => self.lambda * variance,
                Penalty::Uniform | Penalty::DualAveraging => self.lambda,
            }
        }
    }

    /// w_j with its pending threshold applied (prediction path; changes nothing).
    #[inline]
    pub fn effective(&self, j: usize, w: f64, variance: f64) -> f64 {
        let pending = self.total - self.last[j];
        if pending > 0.0 {
            soft_threshold(w, self.rate(j, variance) * pending)
        } else {
            w
        }
    }

    /// Applies coordinate j's pending threshold to `w` and marks it up to date.
    #[inline]
    pub fn catch_up(&mut self, j: usize, w: &mut f64, variance: f64) {
        *w = self.effective(j, *w, variance);
        self.last[j] = self.total;
    }

    /// The dual averaging weight of coordinate j from its gradient sum u after H = t rounds:
    /// −scale·sign(u)·max(0, |u| − λ·t), i.e. sign(−u)·(η·t/H_jj)·max(0, |u|/t − λ) for
    /// scale = η/H_jj, without the division by t (which is 0 before the first round).
    #[inline]
    pub fn dual_average(&self, j: usize, u: f64, scale: f64) -> f64 {
        -scale * soft_threshold(u, self.rate(j, 1.0) * self.total)
    }

    /// Starts the threshold of an update round with step scale `eta`; the caller then catches
    /// up the row's coordinates (with their new variances), the others stay pending.
    pub fn advance(&mut self, eta: f64) {
        self.total += eta;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lazy_thresholds_compose() {
        let mut l1 = L1::new(Penalty::CoordinateDependent, 0.5, Some(2), 3).unwrap();
        let mut w = [1.0, -0.3, 5.0];
        for eta in [0.2, 0.3, 0.1] {
            l1.advance(eta);
        }
        // Pending H = 0.6: coordinate 0 with variance 2 shrinks by 0.5·2·0.6 = 0.6.
        l1.catch_up(0, &mut w[0], 2.0);
        assert!((w[0] - 0.4).abs() < 1e-15);
        l1.catch_up(1, &mut w[1], 2.0);
        assert_eq!(w[1], 0.0);
        l1.catch_up(2, &mut w[2], 2.0); // exempt
        assert_eq!(w[2], 5.0);
        assert!(L1::new(Penalty::Uniform, -1.0, None, 1).is_err());
    }

    #[test]
    fn dual_average_thresholds_the_sum_by_lambda_t() {
        let mut l1 = L1::new(Penalty::DualAveraging, 0.5, Some(1), 2).unwrap();
        assert_eq!(l1.dual_average(0, 0.0, 2.0), 0.0);
        l1.advance(1.0);
        l1.advance(1.0);
        // |u| = 1.5 over t = 2 rounds: −scale·(1.5 − 0.5·2); the exempt coordinate −scale·u.
        assert!((l1.dual_average(0, 1.5, 2.0) + 1.0).abs() < 1e-15);
        assert_eq!(l1.dual_average(0, -0.9, 2.0), 0.0);
        assert_eq!(l1.dual_average(1, -0.9, 2.0), 1.8);
    }
}
