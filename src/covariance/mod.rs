//! The covariance forms: how to compute v = xᵀΣx and Σx, and how to apply a precision increment
//! `c·x xᵀ`. Any rule runs with any form; the learner only talks to [`Covariance`].

mod diagonal;
mod full;

pub use diagonal::Diagonal;
pub use full::Full;

use crate::data::Features;
use crate::error::CwError;

/// Which covariance a learner keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CovarianceKind {
    /// Σ = I fixed: the first-order rules (Perceptron, PA).
    Identity,
    /// One variance per feature: the diagonal of the precision update, O(nnz) per example.
    Diagonal,
    /// Dense symmetric d×d, updated by Sherman–Morrison.
    Full,
}

impl CovarianceKind {
    pub fn from_name(name: &str) -> Result<CovarianceKind, CwError> {
        match name {
            "identity" => Ok(CovarianceKind::Identity),
            "diag" => Ok(CovarianceKind::Diagonal),
            "full" => Ok(CovarianceKind::Full),
            _ => Err(CwError::InvalidParameter(format!(
                "covariance must be \"diag\" or \"full\", got {name:?}"
            ))),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            CovarianceKind::Identity => "identity",
            CovarianceKind::Diagonal => "diag",
            CovarianceKind::Full => "full",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Covariance {
    Identity,
    Diagonal(Diagonal),
    Full(Full),
}

impl Covariance {
    /// Σ₀ = a·I over `dim` coordinates.
    pub fn new(kind: CovarianceKind, dim: usize, a: f64) -> Covariance {
        match kind {
            CovarianceKind::Identity => Covariance::Identity,
            CovarianceKind::Diagonal => Covariance::Diagonal(Diagonal::new(dim, a)),
            CovarianceKind::Full => Covariance::Full(Full::new(dim, a)),
        }
    }

    /// Rebuilds a covariance from [`Covariance::values`].
    pub fn from_values(
        kind: CovarianceKind,
        dim: usize,
        values: Vec<f64>,
    ) -> Result<Self, CwError> {
        let expected = match kind {
            CovarianceKind::Identity => 0,
            CovarianceKind::Diagonal => dim,
            CovarianceKind::Full => dim * dim,
        };
        if values.len() != expected {
            return Err(CwError::InvalidInput(format!(
                "a {} covariance over {dim} coordinates needs {expected} values, got {}",
                kind.name(),
                values.len()
            )));
        }
        if values.iter().any(|x| !x.is_finite()) {
            return Err(CwError::InvalidInput(
                "covariance contains NaN or infinity".into(),
            ));
        }
        Ok(match kind {
            CovarianceKind::Identity => Covariance::Identity,
            CovarianceKind::Diagonal => Covariance::Diagonal(Diagonal::from_values(values)),
            CovarianceKind::Full => Covariance::Full(Full::from_values(dim, values)),
        })
    }

    pub fn kind(&self) -> CovarianceKind {
        match self {
            Covariance::Identity => CovarianceKind::Identity,
            Covariance::Diagonal(_) => CovarianceKind::Diagonal,
            Covariance::Full(_) => CovarianceKind::Full,
        }
    }

    /// The stored values: empty (identity), the variances (diagonal) or Σ row-major (full).
    pub fn values(&self) -> &[f64] {
        match self {
            Covariance::Identity => &[],
            Covariance::Diagonal(d) => d.values(),
            Covariance::Full(f) => f.values(),
        }
    }

    /// v = xᵀΣx without changing any state (prediction path).
    pub fn variance(&self, x: &Features) -> f64 {
        match self {
            Covariance::Identity => x.squared_norm(),
            Covariance::Diagonal(d) => d.variance(x),
            Covariance::Full(f) => f.variance(x),
        }
    }

    /// v = xᵀΣx on the learning path; the full form keeps Σx for the [`Covariance::update`]
    /// that may follow on the same `x`.
    pub fn prepare(&mut self, x: &Features) -> f64 {
        match self {
            Covariance::Full(f) => f.prepare(x),
            _ => self.variance(x),
        }
    }

    /// μ ← μ + step·Σx, then Σ⁻¹ ← Σ⁻¹ + c·x xᵀ. `v` is the value [`Covariance::prepare`]
    /// returned for this `x`, which must be the last one prepared.
    pub fn update(&mut self, x: &Features, mean: &mut [f64], step: f64, c: f64, v: f64) {
        match self {
            Covariance::Identity => x.for_each(|j, xj| mean[j] += step * xj),
            Covariance::Diagonal(d) => d.update(x, mean, step, c),
            Covariance::Full(f) => f.update(mean, step, c, v),
        }
    }
}
