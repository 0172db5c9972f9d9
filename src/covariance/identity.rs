//! The identity covariance Σ = I of the first-order rules (Perceptron, PA): only the mean.

use std::borrow::Cow;

use super::{
    check_finite_parts, prefetch_each, wrong_length, Covariance, CovarianceKind, PrimalForm,
    MEAN_STEP_LIMIT,
};
use crate::data::{Row, Shape};
use crate::error::CwError;

#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
    shape: Shape,
    mean: Vec<f64>,
    /// Mean steps the overflow gate skipped, not yet taken (see [`Covariance::take_skipped`]).
    skipped: u64,
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
            skipped: 0,
        })
    }

    fn shape(&self) -> Shape {
        self.shape
    }

    fn mean(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.mean)
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

    /// `v` = ‖x‖² bounds every |x_j|: only a step near that bound is checked for overflow.
    #[inline]
    fn update(&mut self, row: Row, step: f64, _c: f64, v: f64, _eta: f64) {
        let (x, mean) = (self.shape.features(row), &mut self.mean);
        if step.abs() * v.sqrt() >= MEAN_STEP_LIMIT {
            let mut overflows = false;
            x.for_each(|j, xj| overflows |= !(mean[j] + step * xj).is_finite());
            if overflows {
                self.skipped += 1;
                return;
            }
        }
        x.for_each(|j, xj| mean[j] += step * xj);
    }

    #[inline]
    fn prefetch(&self, row: Row) {
        prefetch_each(&self.shape.features(row), &self.mean);
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
        self.mean.len()
    }

    fn take_skipped(&mut self) -> u64 {
        std::mem::take(&mut self.skipped)
    }

    /// O(d): the rules that read it update rarely (on mistakes or margin errors).
    fn mean_norm2(&self) -> f64 {
        self.mean.iter().map(|w| w * w).sum()
    }

    fn rescale_mean(&mut self, s: f64) {
        self.mean.iter_mut().for_each(|w| *w *= s);
    }

    fn averaged_len(&self) -> Result<usize, CwError> {
        Ok(self.mean.len())
    }

    fn visit_mean(&self, row: Row, mut f: impl FnMut(usize, f64)) {
        self.shape.features(row).for_each(|j, _| f(j, self.mean[j]));
    }

    fn dot_mean(&self, row: Row, values: &[f64]) -> f64 {
        self.shape.features(row).dot(values)
    }
}
