//! FTRL-Proximal's per-coordinate state (McMahan et al., KDD 2013, Algorithm 1; docs/design.md
//! §2.9): z_j and n_j, from which the weight w_j is computed when read (so the L1 zeros are
//! exact and nothing is stored twice). A form beside the covariance forms, driven by the same
//! loop, that takes the rule's step as the loss gradient's scale. O(nnz) per row.

use std::borrow::Cow;

use super::{
    check_finite_parts, impossible, wrong_length, Covariance, CovarianceKind, FormParams,
    PrimalForm,
};
use crate::data::{Row, Shape};
use crate::error::CwError;

#[derive(Clone, Debug, PartialEq)]
pub struct Ftrl {
    shape: Shape,
    z: Vec<f64>,
    /// n_j, the sums of squared gradients.
    n: Vec<f64>,
    alpha: f64,
    beta: f64,
    l1: f64,
    l2: f64,
}

impl Ftrl {
    /// w_j = 0 if |z_j| ≤ λ₁, else −(z_j − sign(z_j)·λ₁)/((β + √n_j)/α + λ₂).
    #[inline]
    fn weight(&self, z: f64, n: f64) -> f64 {
        if z.abs() <= self.l1 {
            0.0
        } else {
            -(z - z.signum() * self.l1) / ((self.beta + n.sqrt()) / self.alpha + self.l2)
        }
    }

    fn weights(&self) -> Vec<f64> {
        self.z
            .iter()
            .zip(&self.n)
            .map(|(&z, &n)| self.weight(z, n))
            .collect()
    }
}

impl PrimalForm for Ftrl {
    const KIND: CovarianceKind = CovarianceKind::Ftrl;

    fn size(_kind: CovarianceKind, dim: usize) -> Option<usize> {
        dim.checked_mul(2)
    }

    /// z = 0, n = 0 (α = 0.1, β = 1, λ₁ = λ₂ = 0 until [`PrimalForm::with_params`]).
    fn new(_kind: CovarianceKind, shape: Shape, _a: f64) -> Self {
        Ftrl {
            shape,
            z: vec![0.0; shape.dim()],
            n: vec![0.0; shape.dim()],
            alpha: 0.1,
            beta: 1.0,
            l1: 0.0,
            l2: 0.0,
        }
    }

    /// `z` as the stored mean, `n` (non-negative) as the covariance values.
    fn from_parts(shape: Shape, z: &[f64], n: &[f64]) -> Result<Self, CwError> {
        let dim = shape.dim();
        check_finite_parts(dim, z, n)?;
        if n.len() != dim {
            return Err(wrong_length(
                Self::KIND,
                dim,
                &format!("{dim} values"),
                n.len(),
            ));
        }
        if n.iter().any(|&g| g < 0.0) {
            return Err(impossible(
                Self::KIND,
                "must hold non-negative gradient sums",
            ));
        }
        Ok(Ftrl {
            z: z.to_vec(),
            n: n.to_vec(),
            ..Ftrl::new(Self::KIND, shape, 1.0)
        })
    }

    fn with_params(self, params: FormParams) -> Self {
        match params {
            FormParams::Ftrl {
                alpha,
                beta,
                l1,
                l2,
            } => Ftrl {
                alpha,
                beta,
                l1,
                l2,
                ..self
            },
            FormParams::AdaGrad { .. } => self,
        }
    }

    fn shape(&self) -> Shape {
        self.shape
    }

    /// z (the state; the weights are [`PrimalForm::effective_mean`]).
    fn mean(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.z)
    }

    fn effective_mean(&self) -> Vec<f64> {
        self.weights()
    }

    /// n, the sums of squared gradients.
    fn covariance(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.n)
    }
}

impl Covariance for Ftrl {
    fn averaged_len(&self) -> Result<usize, CwError> {
        Ok(self.shape.dim())
    }

    /// A round moves only the row's coordinates of its weights, computed from z and n.
    fn visit_mean(&self, row: Row, mut f: impl FnMut(usize, f64)) {
        self.shape
            .features(row)
            .for_each(|j, _| f(j, self.weight(self.z[j], self.n[j])));
    }

    fn dot_mean(&self, row: Row, values: &[f64]) -> f64 {
        self.shape.features(row).dot(values)
    }

    fn n_features(&self) -> usize {
        self.shape.n_features
    }

    /// The rules see ‖x‖² for v (FTRL's reads only m).
    #[inline]
    fn prepare(&mut self, row: Row) -> (f64, f64) {
        let n = self.shape.features(row).squared_norm();
        (n, n)
    }

    /// The loss gradient is g = −step·x: per active coordinate, with w_j before the round,
    /// σ_j = (√(n_j + g_j²) − √n_j)/α, z_j += g_j − σ_j·w_j, n_j += g_j².
    #[inline]
    fn update(&mut self, row: Row, step: f64, _c: f64, _v: f64, _eta: f64) {
        let x = self.shape.features(row);
        x.for_each(|j, xj| {
            if xj != 0.0 {
                let (z, n) = (self.z[j], self.n[j]);
                let g = -step * xj;
                let sigma = ((n + g * g).sqrt() - n.sqrt()) / self.alpha;
                let z = z + g - sigma * self.weight(z, n);
                let n = n + g * g;
                // A round that would overflow leaves the coordinate as it was.
                if z.is_finite() && n.is_finite() {
                    (self.z[j], self.n[j]) = (z, n);
                }
            }
        });
    }

    fn moments(&self, row: Row) -> (f64, f64) {
        let x = self.shape.features(row);
        (self.score(row), x.squared_norm())
    }

    #[inline]
    fn score(&self, row: Row) -> f64 {
        let mut s = 0.0;
        self.shape
            .features(row)
            .for_each(|j, xj| s += xj * self.weight(self.z[j], self.n[j]));
        s
    }

    fn n_values(&self) -> usize {
        2 * self.z.len()
    }
}
