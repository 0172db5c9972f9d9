//! AdaGrad's per-coordinate state (Duchi, Hazan & Singer, JMLR 2011; docs/design.md §2.9): the
//! weights and G_j, the sum of the squared loss gradients of coordinate j. Not a Gaussian: a
//! form beside the covariance forms, driven by the same loop, that takes the rule's step as the
//! loss gradient's scale. O(nnz) per row.

use std::borrow::Cow;

use super::{
    check_finite_parts, impossible, wrong_length, Covariance, CovarianceKind, FormParams,
    PrimalForm, MEAN_STEP_LIMIT,
};
use crate::data::{Row, Shape};
use crate::error::CwError;

#[derive(Clone, Debug, PartialEq)]
pub struct AdaGrad {
    shape: Shape,
    mean: Vec<f64>,
    /// G_j.
    sums: Vec<f64>,
    eta: f64,
    delta: f64,
}

impl PrimalForm for AdaGrad {
    const KIND: CovarianceKind = CovarianceKind::AdaGrad;

    fn size(_kind: CovarianceKind, dim: usize) -> Option<usize> {
        dim.checked_mul(2)
    }

    /// μ = 0, G = 0 (η = δ = 1 until [`PrimalForm::with_params`]).
    fn new(_kind: CovarianceKind, shape: Shape, _a: f64) -> Self {
        AdaGrad {
            shape,
            mean: vec![0.0; shape.dim()],
            sums: vec![0.0; shape.dim()],
            eta: 1.0,
            delta: 1.0,
        }
    }

    /// The sums must be non-negative, one per coordinate.
    fn from_parts(shape: Shape, mean: &[f64], sums: &[f64]) -> Result<Self, CwError> {
        let dim = shape.dim();
        check_finite_parts(dim, mean, sums)?;
        if sums.len() != dim {
            return Err(wrong_length(
                Self::KIND,
                dim,
                &format!("{dim} values"),
                sums.len(),
            ));
        }
        if sums.iter().any(|&g| g < 0.0) {
            return Err(impossible(
                Self::KIND,
                "must hold non-negative gradient sums",
            ));
        }
        Ok(AdaGrad {
            mean: mean.to_vec(),
            sums: sums.to_vec(),
            ..AdaGrad::new(Self::KIND, shape, 1.0)
        })
    }

    fn with_params(self, params: FormParams) -> Self {
        match params {
            FormParams::AdaGrad { eta, delta } => AdaGrad { eta, delta, ..self },
            FormParams::Ftrl { .. } => self,
        }
    }

    fn shape(&self) -> Shape {
        self.shape
    }

    fn mean(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.mean)
    }

    /// G, the sums of squared gradients.
    fn covariance(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.sums)
    }
}

impl Covariance for AdaGrad {
    fn averaged_len(&self) -> Result<usize, CwError> {
        Ok(self.shape.dim())
    }

    /// A round moves only the row's coordinates of its mean.
    fn visit_mean(&self, row: Row, mut f: impl FnMut(usize, f64)) {
        self.shape.features(row).for_each(|j, _| f(j, self.mean[j]));
    }

    fn dot_mean(&self, row: Row, values: &[f64]) -> f64 {
        self.shape.features(row).dot(values)
    }

    fn n_features(&self) -> usize {
        self.shape.n_features
    }

    /// The rules see ‖x‖² for v (AdaGrad's reads only m).
    #[inline]
    fn prepare(&mut self, row: Row) -> (f64, f64) {
        let n = self.shape.features(row).squared_norm();
        (n, n)
    }

    /// The loss gradient is −step·x: G_j += (step·x_j)², then μ_j += η·step·x_j/(δ + √G_j).
    /// |η·step·x_j/H_j| ≤ η·|step|·‖x‖/δ: only a step near the overflow bound is checked.
    #[inline]
    fn update(&mut self, row: Row, step: f64, _c: f64, v: f64, _eta: f64) {
        let x = self.shape.features(row);
        let (eta, delta) = (self.eta, self.delta);
        let (mean, sums) = (&mut self.mean, &mut self.sums);
        let rate = |g: f64, xj: f64| eta * step * xj / (delta + (g + (step * xj).powi(2)).sqrt());
        if (eta * step / delta).abs() * v.sqrt() >= MEAN_STEP_LIMIT {
            let mut overflows = false;
            x.for_each(|j, xj| overflows |= !(mean[j] + rate(sums[j], xj)).is_finite());
            if overflows {
                return;
            }
        }
        x.for_each(|j, xj| {
            if xj != 0.0 {
                mean[j] += rate(sums[j], xj);
                sums[j] += (step * xj).powi(2);
            }
        });
    }

    fn moments(&self, row: Row) -> (f64, f64) {
        let x = self.shape.features(row);
        (x.dot(&self.mean), x.squared_norm())
    }

    #[inline]
    fn score(&self, row: Row) -> f64 {
        self.shape.features(row).dot(&self.mean)
    }

    fn n_values(&self) -> usize {
        2 * self.mean.len()
    }
}
