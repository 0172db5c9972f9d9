//! Online linear regression: AROW (recursive least squares) and ε-insensitive PA, with the
//! same Gaussian over weights and covariance forms as the classifiers.

use crate::covariance::Gaussian;
use crate::data::Matrix;
use crate::error::CwError;
use crate::learn::objective::Regression;
use crate::learn::online::Online;

/// An online regressor; its targets are finite reals.
pub type Regressor = Online<Regression, Gaussian>;

impl Regressor {
    /// μ·x for every row.
    pub fn predict(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.decision_function(x, out)
    }
}

#[cfg(test)]
mod tests;
