//! A Gaussian N(μ, Σ) over weight vectors: the mean and covariance of one linear model.

use crate::covariance::{Covariance, CovarianceKind};
use crate::data::Features;
use crate::error::CwError;
use crate::sparse_l1::L1;

#[derive(Clone, Debug, PartialEq)]
pub struct Gaussian {
    /// The stored mean; with an L1 penalty some coordinates still owe their pending threshold
    /// (see [`Gaussian::effective_mean`]).
    mean: Vec<f64>,
    covariance: Covariance,
    l1: Option<L1>,
}

impl Gaussian {
    /// μ = 0, Σ = a·I over `dim` coordinates.
    pub fn new(kind: CovarianceKind, dim: usize, a: f64) -> Gaussian {
        Gaussian {
            mean: vec![0.0; dim],
            covariance: Covariance::new(kind, dim, a),
            l1: None,
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
            l1: None,
        })
    }

    /// Adds sparse L1 training (DESIGN §5); only the diagonal form supports it.
    pub fn with_l1(mut self, l1: L1) -> Result<Gaussian, CwError> {
        if self.kind() != CovarianceKind::Diagonal {
            return Err(CwError::InvalidParameter(format!(
                "an L1 penalty needs the diagonal covariance, not {:?}",
                self.kind().name()
            )));
        }
        self.l1 = Some(l1);
        Ok(self)
    }

    pub fn l1(&self) -> Option<&L1> {
        self.l1.as_ref()
    }

    /// The mean with every pending L1 threshold applied: what predictions use.
    pub fn effective_mean(&self) -> Vec<f64> {
        match &self.l1 {
            Some(l1) => {
                let variances = self.covariance.values();
                self.mean
                    .iter()
                    .enumerate()
                    .map(|(j, &w)| l1.effective(j, w, variances[j]))
                    .collect()
            }
            None => self.mean.clone(),
        }
    }

    /// Learning path: applies the pending L1 thresholds of the row's coordinates before they
    /// are read and moved.
    #[inline]
    pub fn catch_up(&mut self, x: &Features) {
        if let Some(l1) = &mut self.l1 {
            let (mean, variances) = (&mut self.mean, self.covariance.values());
            x.for_each(|j, xj| {
                if xj != 0.0 {
                    l1.catch_up(j, &mut mean[j], variances[j]);
                }
            });
        }
    }

    /// After an update with step scale `eta`: this round's L1 threshold, applied to the row's
    /// coordinates now (with their new variances) and to all others lazily.
    #[inline]
    pub fn threshold(&mut self, x: &Features, eta: f64) {
        if let Some(l1) = &mut self.l1 {
            l1.advance(eta);
            self.catch_up(x);
        }
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

    /// μ·x (with pending L1 thresholds applied).
    #[inline]
    pub fn score(&self, x: &Features) -> f64 {
        match &self.l1 {
            Some(l1) => {
                let variances = self.covariance.values();
                let mut s = 0.0;
                x.for_each(|j, xj| s += xj * l1.effective(j, self.mean[j], variances[j]));
                s
            }
            None => x.dot(&self.mean),
        }
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
