//! Online linear regression: AROW (recursive least squares) and ε-insensitive PA, with the
//! same Gaussian over weights and covariance forms as the classifiers.

use crate::covariance::{CovarianceKind, Gaussian};
use crate::data::{Matrix, Shape};
use crate::error::CwError;
use crate::learner::{check_initial_variance, fresh_gaussian};
use crate::objective::Regression;
use crate::online::Online;
use crate::rules::RegressionRule;

/// An online regressor; its targets are finite reals.
pub type Regressor = Online<Regression, Gaussian>;

fn check_covariance(rule: RegressionRule, kind: CovarianceKind) -> Result<(), CwError> {
    if rule.is_second_order() == (kind != CovarianceKind::Identity) {
        Ok(())
    } else {
        Err(CwError::InvalidParameter(format!(
            "{rule:?} regression cannot use a {:?} covariance",
            kind.name()
        )))
    }
}

impl Regressor {
    /// A fresh regressor with μ = 0 and Σ = a·I.
    pub fn new(
        rule: RegressionRule,
        kind: CovarianceKind,
        n_features: usize,
        fit_intercept: bool,
        a: f64,
    ) -> Result<Regressor, CwError> {
        check_initial_variance(a)?;
        check_covariance(rule, kind)?;
        let shape = Shape::new(n_features, fit_intercept)?;
        let model = fresh_gaussian(kind, shape, a, 1)?;
        Ok(Online::with_models(Regression(rule), vec![model]))
    }

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
        check_covariance(rule, kind)?;
        let shape = Shape::new(n_features, fit_intercept)?;
        let model = Gaussian::from_parts(kind, shape, mean, covariance)?;
        Ok(Online::with_models(Regression(rule), vec![model]).with_counters(n_updates, 0))
    }

    /// μ·x for every row.
    pub fn predict(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.decision_function(x, out)
    }
}

#[cfg(test)]
#[path = "regression_tests.rs"]
mod tests;
