//! The identity covariance Σ = I of the first-order rules (Perceptron, PA): only the mean.
//!
//! The mean is kept as μ = s·u, a scalar scale s times the stored vector u, so that the rules
//! that rescale μ (ALMA, the ROMMAs: docs/design.md §2.9) do it in O(1) instead of O(d), as
//! scikit-learn's SGD keeps its weights; with them the form also keeps ‖μ‖², O(nnz) per
//! update. Every other rule leaves s = 1, where every product by s is exact: their bits and
//! loops are as without the scale.

use std::borrow::Cow;

use super::{
    check_finite_parts, prefetch_each, wrong_length, Covariance, CovarianceKind, FormParams,
    PrimalForm, MEAN_STEP_LIMIT,
};
use crate::data::{Row, Shape};
use crate::error::CwError;

/// 2¹²⁸: when |s| leaves [2⁻¹²⁸, 2¹²⁸] the scale is folded into u (O(d)), so that u stays
/// within that factor of μ and neither overflows nor falls to subnormals before μ would.
const SCALE_LIMIT: f64 = 3.402_823_669_209_385e38;

#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
    shape: Shape,
    /// u, with μ = s·u.
    mean: Vec<f64>,
    /// s.
    scale: f64,
    /// ‖μ‖², kept for the rules that read it ([`FormParams::MeanNorm`]); `None` otherwise.
    norm2: Option<f64>,
    /// Mean steps the overflow gate skipped, not yet taken (see [`Covariance::take_skipped`]).
    skipped: u64,
}

impl Identity {
    /// u ← s·u, s = 1 (O(d)), and ‖μ‖² recomputed exactly if it is kept.
    fn fold_scale(&mut self) {
        let s = std::mem::replace(&mut self.scale, 1.0);
        self.mean.iter_mut().for_each(|u| *u *= s);
        if self.norm2.is_some() {
            self.norm2 = Some(self.squared_norm());
        }
    }

    /// ‖μ‖² in O(d).
    fn squared_norm(&self) -> f64 {
        let sum: f64 = self.mean.iter().map(|u| u * u).sum();
        self.scale * self.scale * sum
    }
}

impl PrimalForm for Identity {
    const KIND: CovarianceKind = CovarianceKind::Identity;

    fn size(_kind: CovarianceKind, dim: usize) -> Option<usize> {
        Some(dim)
    }

    fn new(_kind: CovarianceKind, shape: Shape, _a: f64) -> Self {
        Identity {
            shape,
            mean: vec![0.0; shape.dim()],
            scale: 1.0,
            norm2: None,
            skipped: 0,
        }
    }

    fn from_parts(shape: Shape, mean: &[f64], covariance: &[f64]) -> Result<Self, CwError> {
        let dim = shape.dim();
        check_finite_parts(dim, mean, covariance)?;
        if !covariance.is_empty() {
            return Err(wrong_length(Self::KIND, dim, "no values", covariance.len()));
        }
        Ok(Identity {
            shape,
            mean: mean.to_vec(),
            scale: 1.0,
            norm2: None,
            skipped: 0,
        })
    }

    /// With [`FormParams::MeanNorm`], keeps ‖μ‖² from now on.
    fn with_params(mut self, params: FormParams) -> Self {
        if params == FormParams::MeanNorm {
            self.norm2 = Some(self.squared_norm());
        }
        self
    }

    fn shape(&self) -> Shape {
        self.shape
    }

    fn mean(&self) -> Cow<'_, [f64]> {
        match self.scale {
            1.0 => Cow::Borrowed(&self.mean),
            s => Cow::Owned(self.mean.iter().map(|u| s * u).collect()),
        }
    }

    fn covariance(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&[])
    }
}

impl Covariance for Identity {
    fn n_features(&self) -> usize {
        self.shape.n_features
    }

    /// v = ‖x‖², which is also the squared norm the rules see.
    #[inline]
    fn prepare(&mut self, row: Row) -> (f64, f64) {
        let v = self.shape.features(row).squared_norm();
        (v, v)
    }

    /// μ + step·x = s·(u + (step/s)·x). `v` = ‖x‖² bounds every |x_j|: only a step near that
    /// bound is checked for overflow (of u or of μ).
    #[inline]
    fn update(&mut self, row: Row, step: f64, _c: f64, v: f64, _eta: f64) {
        let (x, mean, s) = (self.shape.features(row), &mut self.mean, self.scale);
        let inverse = step / s;
        if step.abs().max(inverse.abs()) * v.sqrt() >= MEAN_STEP_LIMIT {
            let mut overflows = false;
            x.for_each(|j, xj| {
                let u = mean[j] + inverse * xj;
                overflows |= !(u.is_finite() && (s * u).is_finite());
            });
            if overflows {
                self.skipped += 1;
                return;
            }
        }
        match self.norm2 {
            None => x.for_each(|j, xj| mean[j] += inverse * xj),
            Some(norm2) => {
                let mut ux = 0.0;
                x.for_each(|j, xj| {
                    ux += mean[j] * xj;
                    mean[j] += inverse * xj;
                });
                // ‖μ + step·x‖² = ‖μ‖² + 2·step·μ·x + step²·‖x‖², unless that cancels (ROMMA
                // with x nearly along μ): then it is recomputed, O(d), where d is small.
                let (cross, along) = (2.0 * step * s * ux, step * step * v);
                let sum = norm2 + cross + along;
                self.norm2 = Some(if sum >= 0.5 * (norm2 + cross.abs() + along) {
                    sum
                } else {
                    self.squared_norm()
                });
            }
        }
    }

    #[inline]
    fn prefetch(&self, row: Row) {
        prefetch_each(&self.shape.features(row), &self.mean);
    }

    fn moments(&self, row: Row) -> (f64, f64) {
        let x = self.shape.features(row);
        (self.scale * x.dot(&self.mean), x.squared_norm())
    }

    #[inline]
    fn score(&self, row: Row) -> f64 {
        self.scale * self.shape.features(row).dot(&self.mean)
    }

    fn n_values(&self) -> usize {
        self.mean.len()
    }

    fn take_skipped(&mut self) -> u64 {
        std::mem::take(&mut self.skipped)
    }

    /// O(1) when kept ([`FormParams::MeanNorm`]), else O(d).
    fn mean_norm2(&self) -> f64 {
        self.norm2.unwrap_or_else(|| self.squared_norm())
    }

    /// s ← r·s in O(1); folded into u (O(d)) when |s| leaves [2⁻¹²⁸, 2¹²⁸] or is 0.
    fn rescale_mean(&mut self, r: f64) {
        self.scale *= r;
        self.norm2 = self.norm2.map(|norm2| norm2 * r * r);
        if !(1.0 / SCALE_LIMIT..=SCALE_LIMIT).contains(&self.scale.abs()) {
            self.fold_scale();
        }
    }

    /// Folds the scale into u and recomputes a kept ‖μ‖² (as a state restores them), so that
    /// a model and its restored copy continue with the same bits.
    fn fold(&mut self) {
        if self.scale != 1.0 || self.norm2.is_some() {
            self.fold_scale();
        }
    }

    fn averaged_len(&self) -> Result<usize, CwError> {
        Ok(self.mean.len())
    }

    fn visit_mean(&self, row: Row, mut f: impl FnMut(usize, f64)) {
        let s = self.scale;
        self.shape
            .features(row)
            .for_each(|j, _| f(j, s * self.mean[j]));
    }

    fn dot_mean(&self, row: Row, values: &[f64]) -> f64 {
        self.shape.features(row).dot(values)
    }
}

#[cfg(test)]
#[path = "identity_tests.rs"]
mod tests;
