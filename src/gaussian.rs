//! A Gaussian N(μ, Σ) over weight vectors: the mean and covariance of one linear model.

use crate::covariance::{Covariance, CovarianceKind};
use crate::data::Features;
use crate::error::CwError;

#[derive(Clone, Debug, PartialEq)]
pub struct Gaussian {
    mean: Vec<f64>,
    covariance: Covariance,
}

impl Gaussian {
    /// μ = 0, Σ = a·I over `dim` coordinates.
    pub fn new(kind: CovarianceKind, dim: usize, a: f64) -> Gaussian {
        Gaussian {
            mean: vec![0.0; dim],
            covariance: Covariance::new(kind, dim, a),
        }
    }

    /// Rebuilds a Gaussian from [`Gaussian::mean`] and [`Gaussian::covariance`].
    pub fn from_parts(
        kind: CovarianceKind,
        dim: usize,
        mean: &[f64],
        covariance: &[f64],
    ) -> Result<Gaussian, CwError> {
        if mean.len() != dim || mean.iter().any(|x| !x.is_finite()) {
            return Err(CwError::InvalidInput(format!(
                "a mean must hold {dim} finite values, got {}",
                mean.len()
            )));
        }
        Ok(Gaussian {
            mean: mean.to_vec(),
            covariance: Covariance::from_values(kind, dim, covariance.to_vec())?,
        })
    }

    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// The covariance values: empty (identity), the variances (diagonal) or Σ row-major (full).
    pub fn covariance(&self) -> &[f64] {
        self.covariance.values()
    }

    pub fn kind(&self) -> CovarianceKind {
        self.covariance.kind()
    }

    /// μ·x.
    #[inline]
    pub fn score(&self, x: &Features) -> f64 {
        x.dot(&self.mean)
    }

    /// xᵀΣx (prediction path).
    #[inline]
    pub fn variance(&self, x: &Features) -> f64 {
        self.covariance.variance(x)
    }

    /// xᵀΣx on the learning path (keeps what [`Gaussian::update`] needs for this `x`).
    #[inline]
    pub fn prepare(&mut self, x: &Features) -> f64 {
        self.covariance.prepare(x)
    }

    /// ‖x‖² as the rules see it: equal to v for the identity covariance.
    #[inline]
    pub fn squared_norm(&self, x: &Features, v: f64) -> f64 {
        if self.covariance.kind() == CovarianceKind::Identity {
            v
        } else {
            x.squared_norm()
        }
    }

    /// μ ← μ + step·Σx, Σ⁻¹ ← Σ⁻¹ + c·x xᵀ, with `v` from [`Gaussian::prepare`] on this `x`.
    #[inline]
    pub fn update(&mut self, x: &Features, step: f64, c: f64, v: f64) {
        self.covariance.update(x, &mut self.mean, step, c, v);
    }
}
