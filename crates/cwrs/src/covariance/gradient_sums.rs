//! What AdaGrad's and FTRL's forms share (docs/design.md §2.9): not a covariance but a rule's
//! own state of two numbers per coordinate, a stored mean (the weights, or what they are
//! computed from) and the sum of the squared loss gradients, with the rows' ‖x‖² standing in
//! for v. Each form adds its hyper-parameters and the rule's own reading and update of them.

use super::{impossible, wrong_length, Parts};
use crate::data::Shape;
use crate::error::CwError;

#[derive(Clone, Debug, PartialEq)]
pub(super) struct GradientSums {
    pub(super) shape: Shape,
    /// AdaGrad: the weights, or with the RDA penalty the gradient sums u_j; FTRL: z_j.
    pub(super) mean: Vec<f64>,
    /// AdaGrad's G_j, FTRL's n_j: the sums of squared gradients.
    pub(super) sums: Vec<f64>,
}

impl GradientSums {
    /// A zero mean and no gradients yet.
    pub(super) fn new(shape: Shape) -> Self {
        GradientSums {
            shape,
            mean: vec![0.0; shape.dim()],
            sums: vec![0.0; shape.dim()],
        }
    }

    /// A saved state (finite, checked by [`super::PrimalForm::from_parts`]): one non-negative
    /// gradient sum per coordinate.
    pub(super) fn restore(parts: Parts) -> Result<Self, CwError> {
        let (dim, sums) = (parts.shape.dim(), parts.covariance);
        if sums.len() != dim {
            let expected = format!("{dim} values");
            return Err(wrong_length(parts.kind, dim, &expected, sums.len()));
        }
        if sums.iter().any(|&g| g < 0.0) {
            return Err(impossible(
                parts.kind,
                "must hold non-negative gradient sums",
            ));
        }
        Ok(GradientSums {
            shape: parts.shape,
            mean: parts.mean.to_vec(),
            sums: sums.to_vec(),
        })
    }
}

/// The [`super::PrimalForm`] methods of a form whose state is a [`GradientSums`] in
/// `self.state`, built by its `new` with the parameters of `kind`.
macro_rules! gradient_sums_parts {
    () => {
        fn size(_kind: CovarianceKind, dim: usize) -> Option<usize> {
            dim.checked_mul(2)
        }

        fn from_finite_parts(parts: Parts) -> Result<Self, CwError> {
            Ok(Self {
                state: GradientSums::restore(parts)?,
                ..Self::new(parts.kind, parts.shape, 1.0)
            })
        }

        fn shape(&self) -> Shape {
            self.state.shape
        }

        /// The stored mean (for FTRL, z: the weights are [`PrimalForm::effective_mean`]).
        fn mean(&self) -> Cow<'_, [f64]> {
            Cow::Borrowed(&self.state.mean)
        }

        /// The sums of squared gradients.
        fn covariance(&self) -> Cow<'_, [f64]> {
            Cow::Borrowed(&self.state.sums)
        }

        /// Not a covariance: the rule's own state.
        fn dense_covariance(&self) -> Option<Vec<f64>> {
            None
        }

        /// No gradient yet for a feature never seen.
        fn widened_covariance(&self, new: usize, _a: f64) -> Vec<f64> {
            super::with_new_features(&self.state.sums, self.state.shape, new, 0.0)
        }
    };
}
pub(super) use gradient_sums_parts;

/// The [`super::Covariance`] methods of a form whose state is a [`GradientSums`] in
/// `self.state`. `objective::check_covariance` keeps the form to its own rule, which rescales
/// nothing: the methods of the rules outside the template say `$why` if ever called.
macro_rules! gradient_sums_methods {
    ($why:literal) => {
        fn n_features(&self) -> usize {
            self.state.shape.n_features
        }

        /// The rules see ‖x‖² for v (the rule reads only m).
        #[inline]
        fn prepare(&mut self, row: Row) -> (f64, f64) {
            let n = self.state.shape.features(row).squared_norm();
            (n, n)
        }

        fn moments(&self, row: Row) -> (f64, f64) {
            let x = self.state.shape.features(row);
            (self.score(row), x.squared_norm())
        }

        fn unit_scale_variance(&self, row: Row) -> Option<(f64, f64)> {
            Some(self.state.shape.at_unit_scale(row, |x| x.squared_norm()))
        }

        fn dot_mean(&self, row: Row, values: &[f64]) -> f64 {
            self.state.shape.features(row).dot(values)
        }

        outside_template_unreachable!($why);
    };
}
pub(super) use gradient_sums_methods;
