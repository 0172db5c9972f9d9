use super::*;
use crate::covariance::CovarianceKind;
use crate::data::{Presentation, Row};
use crate::rules::RegressionRule;

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
