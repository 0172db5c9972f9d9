//! Online linear regression: AROW (recursive least squares) and ε-insensitive PA, with the
//! same Gaussian over weights and covariance forms as the classifiers.

use std::borrow::Cow;

use crate::covariance::CovarianceKind;
use crate::data::{Matrix, Presentation, Row, Shape};
use crate::error::CwError;
use crate::gaussian::{Gaussian, Update};
use crate::learner::check_initial_variance;
use crate::rules::RegressionRule;
use crate::sparse_l1::L1;

#[derive(Clone, Debug, PartialEq)]
pub struct Regressor {
    rule: RegressionRule,
    shape: Shape,
    model: Gaussian,
    n_updates: u64,
}

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
        Gaussian::check_size(kind, shape.dim(), 1)?;
        Ok(Regressor {
            rule,
            shape,
            model: Gaussian::new(kind, shape.dim(), a),
            n_updates: 0,
        })
    }

    /// Rebuilds a regressor from its state (the inverse of the accessors below).
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
        let model = Gaussian::from_parts(kind, shape.dim(), mean, covariance)?;
        Ok(Regressor {
            rule,
            shape,
            model,
            n_updates,
        })
    }

    /// Adds sparse L1 training (diagonal covariance only), with its lazy state when restoring.
    pub fn with_l1(mut self, l1: L1) -> Result<Regressor, CwError> {
        self.model = self.model.with_l1(l1)?;
        Ok(self)
    }

    /// See [`Moments::fold`](crate::covariance::Moments::fold).
    pub fn fold(&mut self) {
        self.model.fold();
    }

    pub fn rule(&self) -> RegressionRule {
        self.rule
    }

    /// The L1 penalty's lazy state, if any.
    pub fn l1(&self) -> Option<&L1> {
        self.model.l1()
    }

    /// The mean with every L1 threshold applied (equal to [`Regressor::mean`] without one).
    pub fn effective_mean(&self) -> Vec<f64> {
        self.model.effective_mean()
    }

    pub fn covariance_kind(&self) -> CovarianceKind {
        self.model.kind()
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// μ over the features, then the bias weight when the model fits an intercept.
    pub fn mean(&self) -> Cow<'_, [f64]> {
        self.model.mean()
    }

    /// The covariance values (empty, the variances, or Σ row-major) over the mean's coordinates.
    pub fn covariance(&self) -> Cow<'_, [f64]> {
        self.model.covariance()
    }

    /// The covariance as [`Self::from_state`] takes it back (for the full form, with its
    /// pending rank-one terms).
    pub fn covariance_state(&self) -> Cow<'_, [f64]> {
        self.model.covariance_state()
    }

    /// Rounds whose update changed the model.
    pub fn n_updates(&self) -> u64 {
        self.n_updates
    }

    /// Learns one row with target `y`; returns whether the model changed.
    pub fn learn(&mut self, row: Row, y: f64) -> Result<bool, CwError> {
        row.validate(self.shape.n_features)?;
        check_targets(&[y])?;
        Ok(self.learn_valid(std::iter::once((0, row)), &[y]) > 0)
    }

    /// Learns `rows` (index into `y`, row) in order; everything is valid. Returns the number of
    /// updates. The counter saturates: a restored state may hold any count.
    fn learn_valid<'a>(&mut self, rows: impl Iterator<Item = (usize, Row<'a>)>, y: &[f64]) -> u64 {
        let (shape, rule) = (self.shape, self.rule);
        let mut updates = 0u64;
        let rows = rows.map(|(i, row)| (i, shape.features(row)));
        self.model.learn_rows(rows, |i, seen| {
            let step = rule.step(y[i] - seen.score, seen.variance, seen.squared_norm)?;
            updates += 1;
            Some(Update {
                step: step.alpha,
                c: step.c,
                eta: rule.l1_rate(&step, seen.variance),
            })
        });
        self.n_updates = self.n_updates.saturating_add(updates);
        updates
    }

    /// Learns the rows of `x` with targets `y` as `presentation` says; validated first, so an
    /// error leaves the model untouched. Equal to [`Regressor::learn`] row by row.
    pub fn partial_fit(
        &mut self,
        x: &Matrix,
        y: &[f64],
        presentation: Presentation,
    ) -> Result<(), CwError> {
        presentation.check(x, self.shape.n_features, y.len())?;
        check_targets(y)?;
        self.learn_valid(presentation.sequence(x.n_rows()).map(|i| (i, x.row(i))), y);
        Ok(())
    }

    /// μ·x for every row.
    pub fn predict(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.shape
            .fill_rows(x, out, 1, |f, o| o[0] = self.model.score(f))
    }

    /// xᵀΣx for every row: the variance of the mean prediction under the Gaussian over weights.
    pub fn variances(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.shape
            .fill_rows(x, out, 1, |f, o| o[0] = self.model.variance(f))
    }
}

fn check_targets(y: &[f64]) -> Result<(), CwError> {
    if y.iter().all(|t| t.is_finite()) {
        Ok(())
    } else {
        Err(CwError::InvalidInput(
            "Input y contains NaN or infinity".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arow_regression_is_ridge_regression() {
        // RLS with Σ₀ = a·I and noise r gives μ = (XᵀX + (r/a)·I)⁻¹Xᵀy after any number of rows.
        let x = [1.0, 2.0, -0.5, 0.3, 2.0, 1.0, 0.0, -1.0];
        let y = [1.0, 0.5, -0.25, 0.7];
        let (r, a) = (0.5, 2.0);
        let rule = RegressionRule::from_name("AROW", &[("r", r)]).unwrap();
        let mut model = Regressor::new(rule, CovarianceKind::Full, 2, false, a).unwrap();
        let m = Matrix::Dense {
            values: &x,
            n_rows: 4,
            n_cols: 2,
        };
        model.partial_fit(&m, &y, Presentation::default()).unwrap();
        let (mut g, mut b) = ([r / a, 0.0, 0.0, r / a], [0.0; 2]);
        for i in 0..4 {
            let row = &x[2 * i..2 * i + 2];
            for p in 0..2 {
                b[p] += row[p] * y[i];
                for q in 0..2 {
                    g[2 * p + q] += row[p] * row[q];
                }
            }
        }
        let det = g[0] * g[3] - g[1] * g[2];
        let ridge = [
            (g[3] * b[0] - g[1] * b[1]) / det,
            (g[0] * b[1] - g[2] * b[0]) / det,
        ];
        for (got, want) in model.mean().iter().zip(ridge) {
            assert!(
                (got - want).abs() < 1e-12 * want.abs().max(1.0),
                "{got} vs {want}"
            );
        }
    }

    #[test]
    fn pa_regression_is_passive_inside_the_tube() {
        let rule = RegressionRule::from_name("PA", &[("epsilon", 0.5)]).unwrap();
        let mut model = Regressor::new(rule, CovarianceKind::Identity, 1, false, 1.0).unwrap();
        assert!(!model.learn(Row::Dense(&[1.0]), 0.4).unwrap());
        assert!(model.learn(Row::Dense(&[2.0]), 3.0).unwrap());
        // Aggressive: the new prediction sits on the tube's edge, 3.0 − 0.5.
        assert!((model.mean()[0] * 2.0 - 2.5).abs() < 1e-15);
        assert!(model.learn(Row::Dense(&[1.0]), f64::NAN).is_err());
    }
}
