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

/// A regression stream of `n` rows of `d` features, weights of scale `scale`, noise `sigma`.
fn stream(n: usize, d: usize, scale: f64, sigma: f64, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut u = crate::test_rng::uniform(seed);
    let mut normal =
        move || crate::rules::normal_quantile((0.5 + 0.5 * u()).clamp(1e-12, 1.0 - 1e-12));
    let w: Vec<f64> = (0..d).map(|_| scale * normal()).collect();
    let x: Vec<f64> = (0..n * d).map(|_| normal()).collect();
    let y = (x.chunks(d))
        .map(|row| row.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() + 0.3 + sigma * normal())
        .collect();
    (x, y)
}

fn learned_prior_model(d: usize, covariance: CovarianceKind) -> crate::model::Model {
    let config = crate::model::config::ModelConfig::regressor("AROW", &[("r", 1.0)])
        .n_features(d)
        .covariance(covariance)
        .learned_noise(true)
        .learned_prior(true);
    crate::model::Model::from_config(config, None).unwrap()
}

#[test]
fn a_learned_prior_leaves_the_batch_posterior_of_the_final_prior() {
    use crate::model::Targets;
    let (d, n) = (4, 203);
    let (x, y) = stream(n, d, 0.1, 0.05, 3);
    let matrix = Matrix::Dense {
        values: &x,
        n_rows: n,
        n_cols: d,
    };
    let mut model = learned_prior_model(d, CovarianceKind::Full);
    (model.partial_fit(&matrix, Targets::Values(&y), Presentation::default())).unwrap();
    let prior = model.prior_estimate().unwrap();
    assert_eq!(prior.rows, n as u64);
    // In units of σ²: κ·a is the weights' prior variance, 0.1² here.
    let kappa = model.noise_variance().unwrap();
    assert!(
        kappa * prior.variance > 0.002 && kappa * prior.variance < 0.2,
        "{prior:?} {kappa}"
    );
    // Σ⁻¹ = E/a + B/1 + XᵀX (r = 1), μ = Σ·Xᵀy, over the features and the bias.
    let dim = d + 1;
    let mut precision = vec![0.0; dim * dim];
    let mut information = vec![0.0; dim];
    for j in 0..dim {
        precision[j * dim + j] = if j < d { 1.0 / prior.variance } else { 1.0 };
    }
    for (row, &target) in x.chunks(d).zip(&y) {
        let full: Vec<f64> = row.iter().copied().chain([1.0]).collect();
        for p in 0..dim {
            information[p] += full[p] * target;
            for q in 0..dim {
                precision[p * dim + q] += full[p] * full[q];
            }
        }
    }
    let l = crate::linalg::cholesky(&precision, dim).unwrap();
    let mut mean = information.clone();
    crate::linalg::forward_solve(&l, dim, dim, &mut mean);
    crate::linalg::backward_solve(&l, dim, dim, &mut mean);
    // κ is the normal-inverse-gamma estimate under the final prior: the rows' e²/(v + 1) sum
    // to yᵀy − μᵀΣ⁻¹μ, plus the prior's one row at κ = 1.
    let sum = y.iter().map(|t| t * t).sum::<f64>()
        - mean
            .iter()
            .zip(&information)
            .map(|(m, b)| m * b)
            .sum::<f64>();
    let kappa = (1.0 + sum) / (1.0 + n as f64);
    let learned = model.noise_variance().unwrap();
    assert!((learned / kappa - 1.0).abs() < 1e-9, "{learned} vs {kappa}");
    let sigma = model.covariance().unwrap();
    for (got, want) in model.mean().unwrap().iter().zip(&mean) {
        assert!(
            (got - want).abs() < 1e-9 * want.abs().max(1.0),
            "{got} vs {want}"
        );
    }
    for j in 0..dim {
        let mut column: Vec<f64> = (0..dim).map(|i| f64::from(u8::from(i == j))).collect();
        crate::linalg::forward_solve(&l, dim, dim, &mut column);
        crate::linalg::backward_solve(&l, dim, dim, &mut column);
        for i in 0..dim {
            let (got, want) = (sigma[i * dim + j], column[i]);
            assert!(
                (got - want).abs() < 1e-9 * want.abs().max(1e-3),
                "{got} vs {want}"
            );
        }
    }
}

#[test]
fn a_learned_prior_is_the_same_row_by_row_in_batches_and_after_a_reload() {
    use crate::model::{Model, Targets};
    let (d, n) = (3, 150);
    let (x, y) = stream(n, d, 2.0, 0.5, 5);
    for covariance in [CovarianceKind::Full, CovarianceKind::Diagonal] {
        let mut batch = learned_prior_model(d, covariance);
        let all = Matrix::Dense {
            values: &x,
            n_rows: n,
            n_cols: d,
        };
        (batch.partial_fit(&all, Targets::Values(&y), Presentation::default())).unwrap();
        let mut by_rows = learned_prior_model(d, covariance);
        for (i, row) in x.chunks(d).enumerate() {
            by_rows.learn(Row::Dense(row), y[i]).unwrap();
            if i == 37 {
                by_rows = Model::from_state(&by_rows.state(), None).unwrap();
            }
        }
        assert_eq!(batch.mean(), by_rows.mean(), "{covariance:?}");
        assert_eq!(batch.covariance(), by_rows.covariance());
        assert_eq!(batch.prior_estimate(), by_rows.prior_estimate());
        let restored = Model::from_state(&batch.state(), None).unwrap();
        assert_eq!(restored.prior_estimate(), batch.prior_estimate());
        let a = batch.prior_estimate().unwrap().variance;
        assert!(a > 1.0 && a < 1000.0, "{covariance:?}: {a}");
    }
}

#[test]
fn a_learned_prior_is_refused_where_the_prior_cannot_change_exactly() {
    use crate::model::config::ModelConfig;
    use crate::model::Model;
    let refused = [
        (ModelConfig::regressor("PA", &[]).learned_prior(true))
            .covariance(CovarianceKind::Identity),
        ModelConfig::binary("AROW", &[]).learned_prior(true),
        ModelConfig::regressor("AROW", &[])
            .learned_prior(true)
            .average(1),
        (ModelConfig::regressor("AROW", &[]).learned_prior(true))
            .covariance(CovarianceKind::LowRank { rank: 2 }),
        (ModelConfig::regressor("AROW", &[]).learned_prior(true))
            .process_noise(crate::learn::drift::ProcessNoise::Auto),
    ];
    for config in refused {
        let error = Model::from_config(config, None).unwrap_err().to_string();
        assert!(error.contains("a=\"auto\""), "{error}");
    }
}
