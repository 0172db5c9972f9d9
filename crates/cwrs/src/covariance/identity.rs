//! The identity covariance Σ = I of the first-order rules (Perceptron, PA): only the mean.

use std::borrow::Cow;

use super::{
    dense_mean_methods, prefetch_each, wrong_length, Covariance, CovarianceKind, Parts, PrimalForm,
    MEAN_STEP_LIMIT,
};
use crate::data::{Row, Shape};
use crate::error::CwError;

/// Σ = I, fixed: the form of the first-order rules, which keeps the mean alone.
#[derive(Clone, Debug, PartialEq)]
pub struct Identity {
    shape: Shape,
    mean: Vec<f64>,
    /// Mean steps the overflow gate skipped, not yet taken (see [`Covariance::take_skipped`]).
    skipped: u64,
}

impl Identity {
    /// The mean, to be changed in place (a sharded fit's merge, docs/design.md §9.4).
    pub(crate) fn mean_mut(&mut self) -> &mut [f64] {
        &mut self.mean
    }

    /// The mean, as stored (a sharded fit's copies, docs/design.md §9.4).
    pub(crate) fn mean_values(&self) -> &[f64] {
        &self.mean
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
            skipped: 0,
        }
    }

    /// Σ = I holds no values.
    fn from_finite_parts(parts: Parts) -> Result<Self, CwError> {
        let (shape, none) = (parts.shape, parts.covariance);
        if !none.is_empty() {
            return Err(wrong_length(
                Self::KIND,
                shape.dim(),
                "no values",
                none.len(),
            ));
        }
        Ok(Identity {
            shape,
            mean: parts.mean.to_vec(),
            skipped: 0,
        })
    }

    fn set_finite_moments(&mut self, mean: &[f64], none: &[f64]) -> Result<(), CwError> {
        *self = Self::from_finite_parts(Parts {
            kind: Self::KIND,
            shape: self.shape,
            mean,
            covariance: none,
        })?;
        Ok(())
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

    /// Σ = I at any width: nothing stored.
    fn widened_covariance(&self, _new: usize, _a: f64) -> Vec<f64> {
        Vec::new()
    }

    /// Σ = I.
    fn dense_covariance(&self) -> Option<Vec<f64>> {
        let dim = self.shape.dim();
        let mut sigma = vec![0.0; dim * dim];
        sigma.iter_mut().step_by(dim + 1).for_each(|s| *s = 1.0);
        Some(sigma)
    }
}

impl Covariance for Identity {
    dense_mean_methods!();

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

    fn unit_scale_variance(&self, row: Row) -> Option<(f64, f64)> {
        Some(self.shape.at_unit_scale(row, |x| x.squared_norm()))
    }

    fn n_values(&self) -> usize {
        self.mean.len()
    }

    /// Σ = I is the first-order rules' own: a rule that rescales Σ is second-order, and
    /// `objective::covariance_fits` refuses it this form.
    fn rescale_covariance(&mut self, _r: f64) {
        unreachable!("a second-order rule on the identity covariance")
    }

    fn visit_mean(&self, row: Row, mut f: impl FnMut(usize, f64)) {
        self.shape.features(row).for_each(|j, _| f(j, self.mean[j]));
    }
}
