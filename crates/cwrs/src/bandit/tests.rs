use super::thompson::{first_best, semidefinite_cholesky};
use super::*;
use crate::covariance::CovarianceKind;
use crate::model::config::ModelConfig;
use crate::test_rng::uniform;

fn regressor(kind: CovarianceKind, n_features: usize) -> Model {
    let config = ModelConfig::regressor("AROW", &[("r", 1.0)])
        .covariance(kind)
        .n_features(n_features);
    Model::from_config(config, None).unwrap()
}

/// A model that has learned `n` random rows of a linear reward.
fn trained(kind: CovarianceKind, n_features: usize, n: usize, seed: u64) -> Model {
    let mut model = regressor(kind, n_features);
    let mut next = uniform(seed);
    for _ in 0..n {
        let x: Vec<f64> = (0..n_features).map(|_| next()).collect();
        let y = x.iter().enumerate().map(|(j, v)| v * j as f64).sum::<f64>() + 0.1 * next();
        learn_reward(&mut model, Row::Dense(&x), y).unwrap();
    }
    model
}

/// Σ (features then bias) and μ of a model, densely.
fn moments(model: &Model) -> (Vec<f64>, Vec<f64>) {
    let gaussian = &model.primal_gaussians().unwrap()[0];
    (
        gaussian.effective_mean(),
        gaussian.dense_covariance().unwrap(),
    )
}

/// The rows with a 1 appended (the bias coordinate).
fn augmented(actions: &[f64], n_features: usize) -> Vec<Vec<f64>> {
    actions
        .chunks(n_features)
        .map(|x| x.iter().copied().chain([1.0]).collect())
        .collect()
}

fn quadratic(a: &[f64], sigma: &[f64], b: &[f64]) -> f64 {
    let d = a.len();
    (0..d)
        .map(|i| (0..d).map(|j| a[i] * sigma[i * d + j] * b[j]).sum::<f64>())
        .sum()
}

#[test]
fn ucb_plays_the_best_upper_bound_of_a_dense_reference() {
    for kind in [CovarianceKind::Full, CovarianceKind::Diagonal] {
        let model = trained(kind, 3, 25, 1);
        let (mean, sigma) = moments(&model);
        let mut next = uniform(9);
        let mut generator = Generator::seed_from_u64(0);
        for _ in 0..50 {
            let actions: Vec<f64> = (0..12).map(|_| next()).collect();
            let rows = Matrix::Dense {
                values: &actions,
                n_rows: 4,
                n_cols: 3,
            };
            let bounds: Vec<f64> = augmented(&actions, 3)
                .iter()
                .map(|x| {
                    let m: f64 = x.iter().zip(&mean).map(|(a, b)| a * b).sum();
                    m + 0.7 * quadratic(x, &sigma, x).sqrt()
                })
                .collect();
            let ucb = Policy::Ucb { alpha: 0.7 };
            let decision = ucb.choose(&model, &rows, &mut generator).unwrap();
            assert_eq!(decision.index, first_best(&bounds));
            assert_eq!(decision.probability, 1.0);
        }
        assert_eq!(generator, Generator::seed_from_u64(0), "UCB draws nothing");
    }
}

#[test]
fn a_seeded_thompson_draw_is_the_reference_draw_of_the_scores() {
    for kind in [CovarianceKind::Full, CovarianceKind::Diagonal] {
        let model = trained(kind, 4, 30, 2);
        let (mean, sigma) = moments(&model);
        let mut next = uniform(5);
        let mut generator = Generator::seed_from_u64(11);
        for _ in 0..40 {
            let actions: Vec<f64> = (0..12).map(|_| next()).collect();
            let rows = Matrix::Dense {
                values: &actions,
                n_rows: 3,
                n_cols: 4,
            };
            // The reference: the scores' mean and covariance from dense μ and Σ, the
            // generator's normals, and a plain Cholesky factor.
            let x = augmented(&actions, 4);
            let m: Vec<f64> = x
                .iter()
                .map(|r| r.iter().zip(&mean).map(|(a, b)| a * b).sum())
                .collect();
            let covariance: Vec<f64> = (0..9)
                .map(|p| quadratic(&x[p / 3], &sigma, &x[p % 3]))
                .collect();
            let c = crate::linalg::cholesky(&covariance, 3).unwrap();
            let mut copy = generator.clone();
            let mut z = vec![0.0; 3 * 5];
            copy.fill_standard_normal(&mut z);
            let best: Vec<usize> = z
                .chunks(3)
                .map(|z| {
                    let s: Vec<f64> = (0..3)
                        .map(|i| m[i] + 0.5 * (0..3).map(|k| c[i * 3 + k] * z[k]).sum::<f64>())
                        .collect();
                    first_best(&s)
                })
                .collect();
            let thompson = Policy::Thompson {
                alpha: 0.5,
                n_probability_draws: 4,
            };
            let decision = thompson.choose(&model, &rows, &mut generator).unwrap();
            assert_eq!(decision.index, best[0]);
            let share = best.iter().filter(|&&b| b == best[0]).count() as f64 / 5.0;
            assert_eq!(decision.probability, share);
            assert_eq!(generator, copy, "the draws consume the same normals");
        }
    }
}

/// With more actions than coordinates the weights are drawn (through the basis rows): the
/// probabilities of each action being best match those of the scores drawn jointly.
#[test]
fn thompson_with_more_actions_than_coordinates_draws_the_same_distribution() {
    for kind in [CovarianceKind::Full, CovarianceKind::Diagonal] {
        let model = trained(kind, 2, 6, 3);
        let actions = [0.3, -0.2, 0.1, 0.5, -0.4, 0.2, 0.0, 0.1, 0.25, -0.3];
        let wide = Matrix::Dense {
            values: &actions,
            n_rows: 5,
            n_cols: 2,
        };
        let mut generator = Generator::seed_from_u64(4);
        let policy = Policy::Thompson {
            alpha: 1.0,
            n_probability_draws: 0,
        };
        let mut counts = [0.0_f64; 5];
        for _ in 0..20_000 {
            counts[policy.choose(&model, &wide, &mut generator).unwrap().index] += 1.0 / 20_000.0;
        }
        // The reference: the 5 scores drawn jointly from their 5 × 5 covariance (rank 3).
        let (mean, sigma) = moments(&model);
        let x = augmented(&actions, 2);
        let m: Vec<f64> = x
            .iter()
            .map(|r| r.iter().zip(&mean).map(|(a, b)| a * b).sum())
            .collect();
        let mut c: Vec<f64> = (0..25)
            .map(|p| quadratic(&x[p / 5], &sigma, &x[p % 5]))
            .collect();
        semidefinite_cholesky(&mut c, 5);
        let mut reference = [0.0; 5];
        let mut z = vec![0.0; 5];
        for _ in 0..20_000 {
            generator.fill_standard_normal(&mut z);
            let s: Vec<f64> = (0..5)
                .map(|i| m[i] + (0..5).map(|k| c[i * 5 + k] * z[k]).sum::<f64>())
                .collect();
            reference[first_best(&s)] += 1.0 / 20_000.0;
        }
        for (p, q) in counts.iter().zip(&reference) {
            assert!(
                (p - q).abs() < 0.02,
                "{kind:?}: {counts:?} against {reference:?}"
            );
        }
    }
}

#[test]
fn epsilon_greedy_probabilities_are_exact_and_its_frequencies_match() {
    let model = trained(CovarianceKind::Diagonal, 2, 10, 6);
    let actions = [1.0, 0.0, 0.0, 1.0, 0.5, 0.5, -1.0, 0.0];
    let rows = Matrix::Dense {
        values: &actions,
        n_rows: 4,
        n_cols: 2,
    };
    let mut scores = [0.0; 4];
    model.decision_function(&rows, &mut scores).unwrap();
    let greedy = first_best(&scores);
    let policy = Policy::EpsilonGreedy { epsilon: 0.2 };
    let mut generator = Generator::seed_from_u64(8);
    let mut counts = [0.0_f64; 4];
    for _ in 0..40_000 {
        let d = policy.choose(&model, &rows, &mut generator).unwrap();
        let expected = 0.05 + if d.index == greedy { 0.8 } else { 0.0 };
        assert_eq!(d.probability, expected);
        counts[d.index] += 1.0 / 40_000.0;
    }
    for (k, p) in counts.iter().enumerate() {
        let expected = 0.05 + if k == greedy { 0.8 } else { 0.0 };
        assert!((p - expected).abs() < 0.01, "{counts:?}");
    }
}

#[test]
fn the_semidefinite_factor_reproduces_singular_matrices() {
    // C = GGᵀ of rank 2 in dimension 4, and the zero matrix.
    let g = [1.0, 2.0, -1.0, 0.5, 3.0, 1.0, 1.0, -2.0];
    let mut c: Vec<f64> = (0..16)
        .map(|p| {
            (0..2)
                .map(|k| g[(p / 4) * 2 + k] * g[(p % 4) * 2 + k])
                .sum()
        })
        .collect();
    let original = c.clone();
    semidefinite_cholesky(&mut c, 4);
    for (p, expected) in original.iter().enumerate() {
        let (i, j) = (p / 4, p % 4);
        let llt: f64 = (0..4).map(|k| c[i * 4 + k] * c[j * 4 + k]).sum();
        assert!(
            (llt - expected).abs() < 1e-12,
            "{p}: {llt} against {expected}"
        );
    }
    let mut zero = vec![0.0; 9];
    semidefinite_cholesky(&mut zero, 3);
    assert!(zero.iter().all(|&v| v == 0.0));
}

/// The reduction's rows of one context, built apart from `CrossedRows`.
fn crossed(x: &[f64], n_actions: usize) -> (Vec<f64>, Vec<i64>, Vec<i64>) {
    let (mut values, mut indices, mut indptr) = (vec![], vec![], vec![0]);
    let width = x.len() + 1;
    for k in 0..n_actions {
        for (j, &v) in x.iter().chain([1.0].iter()).enumerate() {
            if v != 0.0 {
                values.push(v);
                indices.push((k * width + j) as i64);
            }
        }
        indptr.push(values.len() as i64);
    }
    (values, indices, indptr)
}

#[test]
fn simulate_is_the_rounds_of_choose_and_learn() {
    let (n, d, k) = (60, 3, 4);
    let mut next = uniform(12);
    let contexts: Vec<f64> = (0..n * d)
        .map(|i| if i % 5 == 0 { 0.0 } else { next() })
        .collect();
    let labels: Vec<usize> = (0..n).map(|i| (i * 7 + i / 3) % k).collect();
    let order: Vec<usize> = (0..n).rev().chain(0..n / 2).collect();
    let x = Matrix::Dense {
        values: &contexts,
        n_rows: n,
        n_cols: d,
    };
    for policy in [
        Policy::Thompson {
            alpha: 0.3,
            n_probability_draws: 7,
        },
        Policy::Ucb { alpha: 0.5 },
        Policy::EpsilonGreedy { epsilon: 0.1 },
        Policy::Greedy,
    ] {
        for kind in [CovarianceKind::Diagonal, CovarianceKind::Full] {
            let mut model = regressor(kind, k * (d + 1));
            let mut generator = Generator::seed_from_u64(21);
            let decisions =
                simulate(&mut model, &policy, &mut generator, &x, &labels, &order).unwrap();
            let mut looped = regressor(kind, k * (d + 1));
            let mut again = Generator::seed_from_u64(21);
            for (t, &i) in order.iter().enumerate() {
                let (values, indices, indptr) = crossed(&contexts[i * d..(i + 1) * d], k);
                let rows = Matrix::Csr64 {
                    values: &values,
                    indices: &indices,
                    indptr: &indptr,
                    n_cols: k * (d + 1),
                };
                let decision = policy.choose(&looped, &rows, &mut again).unwrap();
                assert_eq!(decision, decisions[t], "{policy:?} {kind:?} round {t}");
                let reward = f64::from(u8::from(decision.index == labels[i]));
                learn_reward(&mut looped, rows.row(decision.index), reward).unwrap();
            }
            assert_eq!(model.state(), looped.state());
            assert_eq!(generator, again);
        }
    }
}

#[test]
fn refused_inputs_change_nothing() {
    let mut model = trained(CovarianceKind::Full, 2, 5, 13);
    let before = model.state();
    let mut generator = Generator::seed_from_u64(1);
    let none = Matrix::Dense {
        values: &[],
        n_rows: 0,
        n_cols: 2,
    };
    let nan = Matrix::Dense {
        values: &[f64::NAN, 0.0, 1.0, 1.0],
        n_rows: 2,
        n_cols: 2,
    };
    let thompson = Policy::Thompson {
        alpha: 1.0,
        n_probability_draws: 3,
    };
    for policy in [thompson, Policy::Ucb { alpha: 1.0 }, Policy::Greedy] {
        assert!(policy.choose(&model, &none, &mut generator).is_err());
        assert!(policy.choose(&model, &nan, &mut generator).is_err());
    }
    for bad in [Policy::Ucb { alpha: -1.0 }, Policy::Ucb { alpha: f64::NAN }] {
        let rows = Matrix::Dense {
            values: &[1.0, 0.0],
            n_rows: 1,
            n_cols: 2,
        };
        assert!(bad.choose(&model, &rows, &mut generator).is_err());
    }
    let epsilon = Policy::EpsilonGreedy { epsilon: 1.5 };
    assert!(epsilon.check().is_err());
    assert!(learn_reward(&mut model, Row::Dense(&[1.0, 0.0]), f64::NAN).is_err());
    let contexts = Matrix::Dense {
        values: &[0.5, 1.0],
        n_rows: 2,
        n_cols: 1,
    };
    let mut wide = regressor(CovarianceKind::Diagonal, 4);
    let fresh = wide.state();
    let labels_out_of_range = simulate(
        &mut wide,
        &thompson,
        &mut generator,
        &contexts,
        &[0, 2],
        &[0, 1],
    );
    assert!(labels_out_of_range.is_err());
    assert!(simulate(
        &mut wide,
        &thompson,
        &mut generator,
        &contexts,
        &[0, 1],
        &[2]
    )
    .is_err());
    assert_eq!(wide.state(), fresh);
    assert_eq!(model.state(), before);
    assert_eq!(generator, Generator::seed_from_u64(1));
}

#[test]
fn a_binary_model_learns_reward_one_as_the_positive_label() {
    let config = ModelConfig::binary("AROW", &[("r", 1.0)]).n_features(2);
    let mut model = Model::from_config(config, None).unwrap();
    learn_reward(&mut model, Row::Dense(&[1.0, 0.0]), 1.0).unwrap();
    let mut score = [0.0];
    let row = Matrix::Dense {
        values: &[1.0, 0.0],
        n_rows: 1,
        n_cols: 2,
    };
    model.decision_function(&row, &mut score).unwrap();
    assert!(score[0] > 0.0);
    assert!(learn_reward(&mut model, Row::Dense(&[1.0, 0.0]), 0.5).is_err());
}
