//! FTRL-Proximal's per-coordinate state (McMahan et al., KDD 2013, Algorithm 1; docs/design.md
//! §2.9): z_j and n_j, from which the weight w_j is computed when read (so the L1 zeros are
//! exact and nothing is stored twice). A form beside the covariance forms, driven by the same
//! loop, that takes the rule's step as the loss gradient's scale. O(nnz) per row.

use std::borrow::Cow;

use super::gradient_sums::{gradient_sums_methods, gradient_sums_parts, GradientSums};
use super::{outside_template_unreachable, Covariance, CovarianceKind, Parts, PrimalForm};
use crate::data::{Row, Shape};
use crate::error::CwError;

/// FTRL-Proximal's per-coordinate state (the FTRL rule's own form, docs/design.md §2.9): z_j
/// and n_j, from which each weight is computed lazily when read (0 where |z_j| ≤ λ₁).
#[derive(Clone, Debug, PartialEq)]
pub struct Ftrl {
    /// z_j and n_j.
    state: GradientSums,
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
        let GradientSums {
            mean: z, sums: n, ..
        } = &self.state;
        z.iter().zip(n).map(|(&z, &n)| self.weight(z, n)).collect()
    }
}

impl PrimalForm for Ftrl {
    /// With the rule table's defaults α = 0.1, β = 1, λ₁ = λ₂ = 0.
    const KIND: CovarianceKind = CovarianceKind::Ftrl {
        alpha: 0.1,
        beta: 1.0,
        l1: 0.0,
        l2: 0.0,
    };

    gradient_sums_parts!();

    /// z = 0, n = 0, with α, β, λ₁ and λ₂ from `kind`.
    fn new(kind: CovarianceKind, shape: Shape, _a: f64) -> Self {
        let CovarianceKind::Ftrl {
            alpha,
            beta,
            l1,
            l2,
        } = kind
        else {
            unreachable!("FTRL built as {kind:?}")
        };
        Ftrl {
            state: GradientSums::new(shape),
            alpha,
            beta,
            l1,
            l2,
        }
    }

    fn kind(&self) -> CovarianceKind {
        CovarianceKind::Ftrl {
            alpha: self.alpha,
            beta: self.beta,
            l1: self.l1,
            l2: self.l2,
        }
    }

    fn effective_mean(&self) -> Vec<f64> {
        self.weights()
    }
}

impl Covariance for Ftrl {
    gradient_sums_methods!("FTRL's state under another rule");

    fn averaged_len(&self) -> Result<usize, CwError> {
        Ok(self.state.mean.len())
    }

    /// A round moves only the row's coordinates of its weights, computed from z and n.
    fn visit_mean(&self, row: Row, mut f: impl FnMut(usize, f64)) {
        let x = self.state.shape.features(row);
        x.for_each(|j, _| f(j, self.weight(self.state.mean[j], self.state.sums[j])));
    }

    /// The loss gradient is g = −step·x: per active coordinate, with w_j before the round,
    /// σ_j = (√(n_j + g_j²) − √n_j)/α, z_j += g_j − σ_j·w_j, n_j += g_j².
    #[inline]
    fn update(&mut self, row: Row, step: f64, _c: f64, _v: f64, _eta: f64) {
        let x = self.state.shape.features(row);
        x.for_each(|j, xj| {
            if xj != 0.0 {
                let (z, n) = (self.state.mean[j], self.state.sums[j]);
                let g = -step * xj;
                let sigma = ((n + g * g).sqrt() - n.sqrt()) / self.alpha;
                let z = z + g - sigma * self.weight(z, n);
                let n = n + g * g;
                // A round that would overflow leaves the coordinate as it was.
                if z.is_finite() && n.is_finite() {
                    (self.state.mean[j], self.state.sums[j]) = (z, n);
                }
            }
        });
    }

    #[inline]
    fn score(&self, row: Row) -> f64 {
        let mut s = 0.0;
        self.state.shape.features(row).for_each(|j, xj| {
            s += xj * self.weight(self.state.mean[j], self.state.sums[j]);
        });
        s
    }

    fn n_values(&self) -> usize {
        2 * self.state.mean.len()
    }

    /// A round that would overflow is skipped per coordinate, never as a whole.
    fn take_skipped(&mut self) -> u64 {
        0
    }
}
