//! Online linear regression: AROW (recursive least squares) and ε-insensitive PA, with the
//! same Gaussian over weights and covariance forms as the classifiers.

use crate::covariance::{CovarianceKind, Gaussian};
use crate::data::Matrix;
use crate::error::CwError;
use crate::objective::Regression;
use crate::online::Online;
use crate::rules::RegressionRule;

/// An online regressor; its targets are finite reals.
pub type Regressor = Online<Regression, Gaussian>;

impl Regressor {
    /// Rebuilds a regressor from its state (the inverse of the accessors).
    pub fn from_state(
        rule: RegressionRule,
        kind: CovarianceKind,
        n_features: usize,
        fit_intercept: bool,
        mean: &[f64],
        covariance: &[f64],
        n_updates: u64,
    ) -> Result<Regressor, CwError> {
        let restored = Self::restore(rule, kind, n_features, fit_intercept, mean, covariance)?;
        Ok(restored.with_counters(n_updates, 0))
    }

    /// μ·x for every row.
    pub fn predict(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.decision_function(x, out)
    }
}

#[cfg(test)]
#[path = "regression_tests.rs"]
mod tests;
