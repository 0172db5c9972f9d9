use super::*;
use crate::data::Presentation;
use crate::learn::multiclass::Multiclass;

#[test]
fn impossible_sizes_and_corrupt_states_are_errors_not_aborts() {
    let rule = Rule::from_name("AROW", &[]).unwrap();
    // A full covariance over 10⁷ features needs 800 TB: refused before allocating.
    let full = Learner::new(rule, CovarianceKind::Full, 10_000_000, true, 1.0);
    assert!(matches!(full, Err(CwError::OutOfMemory(m)) if m.contains("covariance=\"diag\"")));
    let many_classes = crate::learn::multiclass::MulticlassLearner::new(
        Multiclass {
            rule,
            strategy: crate::learn::multiclass::Strategy::MaxScore,
        },
        CovarianceKind::Diagonal,
        1 << 40,
        Shape::new(3, true).unwrap(),
        1.0,
    );
    assert!(matches!(many_classes, Err(CwError::OutOfMemory(_))));
    // So many features that the coordinates (features + bias) would overflow.
    for n in [usize::MAX, Shape::MAX_FEATURES + 1] {
        assert!(Learner::new(rule, CovarianceKind::Diagonal, n, true, 1.0).is_err());
        let state = Learner::from_state(rule, CovarianceKind::Diagonal, n, true, &[], &[], 0, 0);
        assert!(state.is_err());
    }
    // Classes × coordinates overflowing to the length of an empty state.
    let restored = crate::learn::multiclass::MulticlassLearner::from_state(
        Multiclass {
            rule,
            strategy: crate::learn::multiclass::Strategy::OneVsRest,
        },
        CovarianceKind::Diagonal,
        1 << 63,
        Shape::new(1, true).unwrap(),
        &[],
        &[],
        0,
        0,
    );
    assert!(restored.is_err());
    // A negative variance is not a state any learning produced.
    let negative = Learner::from_state(
        rule,
        CovarianceKind::Diagonal,
        1,
        false,
        &[0.5],
        &[-1.0],
        0,
        0,
    );
    assert!(negative.is_err());
}

/// A fresh learner; AdaGrad and FTRL take their own form whatever `kind` says.
fn learner(name: &str, kind: CovarianceKind, fit_intercept: bool, d: usize) -> Learner {
    let rule = Rule::from_name(name, &[]).unwrap();
    let kind = match rule.has_own_state() {
        true => CovarianceKind::from_name(&name.to_lowercase()).unwrap(),
        false => kind,
    };
    Learner::new(rule, kind, d, fit_intercept, 1.0).unwrap()
}

/// A deterministic pseudo-random stream (xorshift) so the tests need no dependency.
fn stream(n: usize, d: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut next = crate::test_rng::uniform(seed);
    let x: Vec<f64> = (0..n * d).map(|_| next()).collect();
    let y = (0..n)
        .map(|i| {
            if x[i * d] + 0.5 * x[i * d + 1] + 0.1 * next() > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    (x, y)
}

#[test]
fn full_covariance_is_the_inverse_of_the_accumulated_precision() {
    // Sherman–Morrison check on AROW, whose precision increment is c = 1/r per update.
    let (n, d) = (40, 4);
    let (x, y) = stream(n, d, 7);
    let mut model = learner("AROW", CovarianceKind::Full, false, d);
    let mut precision = vec![0.0; d * d];
    (0..d).for_each(|i| precision[i * d + i] = 1.0);
    for i in 0..n {
        let row = &x[i * d..(i + 1) * d];
        if model.learn(Row::Dense(row), y[i]).unwrap() {
            for p in 0..d {
                for q in 0..d {
                    precision[p * d + q] += row[p] * row[q];
                }
            }
        }
    }
    // Σ·P should be the identity.
    let sigma = model.covariance();
    for p in 0..d {
        for q in 0..d {
            let prod: f64 = (0..d)
                .map(|k| sigma[p * d + k] * precision[k * d + q])
                .sum();
            let expected = if p == q { 1.0 } else { 0.0 };
            assert!((prod - expected).abs() < 1e-9, "({p},{q}) = {prod}");
        }
    }
}

#[test]
fn batch_equals_row_by_row_and_dense_equals_sparse() {
    let (n, d) = (60, 5);
    let (mut x, y) = stream(n, d, 11);
    x.iter_mut().step_by(3).for_each(|v| *v = 0.0);
    for name in crate::rules::RULE_NAMES {
        let kinds: &[CovarianceKind] = if Rule::from_name(name, &[]).unwrap().is_second_order() {
            &[CovarianceKind::Diagonal, CovarianceKind::Full]
        } else {
            &[CovarianceKind::Identity]
        };
        for &kind in kinds {
            let mut batch = learner(name, kind, true, d);
            let dense = Matrix::Dense {
                values: &x,
                n_rows: n,
                n_cols: d,
            };
            batch
                .partial_fit(&dense, &y, Presentation::default())
                .unwrap();
            let mut single = learner(name, kind, true, d);
            let (mut indices, mut values, mut indptr) = (vec![], vec![], vec![0i64]);
            for i in 0..n {
                single
                    .learn(Row::Dense(&x[i * d..(i + 1) * d]), y[i])
                    .unwrap();
                for j in 0..d {
                    if x[i * d + j] != 0.0 {
                        indices.push(j as i64);
                        values.push(x[i * d + j]);
                    }
                }
                indptr.push(indices.len() as i64);
            }
            assert_eq!(batch, single, "{name} {kind:?}");
            let mut sparse = learner(name, kind, true, d);
            let csr = Matrix::Csr64 {
                values: &values,
                indices: &indices,
                indptr: &indptr,
                n_cols: d,
            };
            sparse
                .partial_fit(&csr, &y, Presentation::default())
                .unwrap();
            assert_eq!(batch, sparse, "{name} {kind:?}");
            assert!(batch.n_updates() > 0);
        }
    }
}

#[test]
fn errors_leave_the_model_untouched() {
    let mut model = learner("AROW", CovarianceKind::Full, true, 2);
    let before = model.clone();
    let x = [1.0, 2.0, 3.0, f64::NAN];
    let dense = Matrix::Dense {
        values: &x,
        n_rows: 2,
        n_cols: 2,
    };
    assert!(model
        .partial_fit(&dense, &[1.0, -1.0], Presentation::default())
        .is_err());
    let x = [1.0, 2.0, 3.0, 4.0];
    let dense = Matrix::Dense {
        values: &x,
        n_rows: 2,
        n_cols: 2,
    };
    assert!(model
        .partial_fit(&dense, &[1.0, 0.0], Presentation::default())
        .is_err());
    assert!(model
        .partial_fit(&dense, &[1.0], Presentation::default())
        .is_err());
    assert!(model
        .partial_fit(
            &dense,
            &[1.0, 1.0],
            Presentation {
                weights: Some(&[1.0]),
                ..Presentation::default()
            }
        )
        .is_err());
    assert!(model
        .partial_fit(
            &dense,
            &[1.0, 1.0],
            Presentation {
                order: Some(&[0, 2]),
                ..Presentation::default()
            }
        )
        .is_err());
    assert_eq!(model, before);
}

/// Fuzz crash (model_state): n_features = usize::MAX with an intercept overflowed the
/// number of coordinates; in release it wrapped to an empty model that then indexed out of
/// bounds on the first sparse row.
#[test]
fn from_state_rejects_a_bias_past_usize_max() {
    let rule = Rule::from_name("AROW", &[]).unwrap();
    for kind in [CovarianceKind::Diagonal, CovarianceKind::Full] {
        let restored = Learner::from_state(rule, kind, usize::MAX, true, &[], &[], 0, 0);
        assert!(restored.is_err(), "{kind:?}");
    }
    assert!(Shape::new(usize::MAX, false).is_err()); // past MAX_FEATURES too
}

/// Fuzz crash (model_state): a restored state may hold any counter, and learning from
/// u64::MAX overflowed (a panic in debug builds; in release the count wrapped to 0 and
/// `learn` reported an update as no change). The counters saturate in every learner.
#[test]
fn counters_restored_at_u64_max_saturate() {
    use crate::learn::learner::DualLearner;
    use crate::learn::multiclass::{MulticlassLearner, Strategy};
    use crate::learn::regression::Regressor;
    use crate::rules::RegressionRule;

    let max = u64::MAX;
    let rule = Rule::from_name("PA", &[]).unwrap();
    let mut binary = Learner::from_state(
        rule,
        CovarianceKind::Identity,
        2,
        false,
        &[0.0, 0.0],
        &[],
        max,
        max,
    )
    .unwrap();
    assert!(binary.learn(Row::Dense(&[1.0, 2.0]), 1.0).unwrap());
    assert_eq!((binary.n_updates(), binary.n_mistakes()), (max, max));

    let regression_rule = RegressionRule::from_name("PA", &[]).unwrap();
    let mut regressor = Regressor::from_state(
        regression_rule,
        CovarianceKind::Identity,
        1,
        true,
        &[0.0, 0.0],
        &[],
        max,
        0,
    )
    .unwrap();
    assert!(regressor.learn(Row::Dense(&[1.0]), 5.0).unwrap());
    assert_eq!(regressor.n_updates(), max);

    let mut multiclass = MulticlassLearner::from_state(
        Multiclass {
            rule,
            strategy: Strategy::MaxScore,
        },
        CovarianceKind::Identity,
        3,
        Shape::new(1, false).unwrap(),
        &[0.0; 3],
        &[],
        max,
        max,
    )
    .unwrap();
    assert!(multiclass.learn(Row::Dense(&[1.0]), 2).unwrap());
    assert_eq!(
        (multiclass.n_updates(), multiclass.n_mistakes()),
        (max, max)
    );

    let mut dual = DualLearner::new(
        rule,
        crate::covariance::kernel::Kernel::Linear,
        1,
        false,
        1.0,
        None,
    )
    .unwrap()
    .with_counters(max, max);
    assert!(dual.learn(Row::Dense(&[1.0]), 1.0).unwrap());
    assert_eq!((dual.n_updates(), dual.n_mistakes()), (max, max));
}

/// A restored covariance is what a learner can have saved: diagonal variances are positive
/// (floored at the smallest normal), a full Σ₀ is exactly symmetric (every fold mirrors
/// it). Negative, zero or asymmetric ones used to be accepted, and gave NaN predictions.
#[test]
fn from_state_refuses_impossible_covariances() {
    let rule = Rule::from_name("AROW", &[]).unwrap();
    let restore = |kind, covariance: &[f64]| {
        Learner::from_state(rule, kind, 2, false, &[0.5, -1.0], covariance, 3, 1)
    };
    assert!(restore(CovarianceKind::Diagonal, &[1.0, 5e-324]).is_ok());
    for bad in [[1.0, 0.0], [1.0, -0.0], [-1.0, 1.0]] {
        assert!(restore(CovarianceKind::Diagonal, &bad).is_err(), "{bad:?}");
    }
    assert!(restore(CovarianceKind::Full, &[2.0, 0.5, 0.5, 1.0]).is_ok());
    let error = restore(CovarianceKind::Full, &[2.0, 0.5, 0.25, 1.0]).unwrap_err();
    assert!(error.to_string().contains("symmetric"), "{error}");
    // Symmetric but not positive definite: −I, 0, indefinite.
    for bad in [[-1.0, 0.0, 0.0, -1.0], [0.0; 4], [1.0, 2.0, 2.0, 1.0]] {
        let error = restore(CovarianceKind::Full, &bad).unwrap_err();
        assert!(
            error.to_string().contains("positive definite"),
            "{bad:?}: {error}"
        );
    }
    // Past one block of rows of the factorisation: I + 11ᵀ/2 is positive definite; with its
    // last variance set to 0 the last Schur complement is negative (only the last row fails).
    let dim = 70;
    let restore_wide = |last: f64| {
        let mut sigma = vec![0.5; dim * dim];
        (0..dim).for_each(|i| sigma[i * dim + i] = 1.5);
        sigma[dim * dim - 1] = last;
        Learner::from_state(
            rule,
            CovarianceKind::Full,
            dim,
            false,
            &[0.0; 70],
            &sigma,
            0,
            0,
        )
    };
    assert!(restore_wide(1.5).is_ok());
    assert!(restore_wide(0.0).is_err());
}

#[test]
fn zero_row_without_intercept_is_a_noop() {
    for name in crate::rules::RULE_NAMES {
        let rule = Rule::from_name(name, &[]).unwrap();
        let kind = if rule.is_second_order() {
            CovarianceKind::Full
        } else {
            CovarianceKind::Identity
        };
        let mut model = learner(name, kind, false, 3);
        // ALMA's condition holds there, so the round counts and its k advances (docs/design.md
        // §2.9); nothing else moves, for any rule.
        let counts = name == "ALMA";
        assert_eq!(model.learn(Row::Dense(&[0.0; 3]), 1.0).unwrap(), counts);
        assert_eq!(model.n_updates(), u64::from(counts));
        assert!(model.mean().iter().all(|&m| m == 0.0));
        assert_eq!(model.n_mistakes(), 1);
    }
}
