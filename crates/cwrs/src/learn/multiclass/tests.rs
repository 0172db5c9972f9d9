use super::*;
use crate::data::{Presentation, Row};

#[test]
fn gauss_hermite_integrates_normal_moments() {
    let (nodes, weights) = gauss_hermite();
    let moment = |p: i32| -> f64 { nodes.iter().zip(weights).map(|(z, w)| w * z.powi(p)).sum() };
    assert!((moment(0) - 1.0).abs() < 1e-13);
    assert!(moment(1).abs() < 1e-13);
    assert!((moment(2) - 1.0).abs() < 1e-12);
    assert!((moment(4) - 3.0).abs() < 1e-11);
}

#[test]
fn argmax_probabilities_of_two_classes_match_the_closed_form() {
    // P(s_1 > s_0) = Φ((m_1 − m_0)/(√2·sd)).
    let mut out = [0.0; 2];
    argmax_probabilities(&[0.3, 0.9], 0.8, &mut out);
    let exact = normal_cdf(0.6 / (2.0f64.sqrt() * 0.8));
    assert!((out[1] - exact).abs() < 1e-10, "{out:?} vs {exact}");
    assert!((out[0] + out[1] - 1.0).abs() < 1e-15);
}

#[test]
fn argmax_probabilities_rank_like_the_means() {
    let means = [0.1, -2.0, 0.35, 0.3, 5.0, 0.34];
    for sd in [0.01, 0.3, 1.0, 30.0] {
        let mut out = [0.0; 6];
        argmax_probabilities(&means, sd, &mut out);
        for a in 0..6 {
            for b in 0..6 {
                if means[a] > means[b] {
                    assert!(out[a] >= out[b], "sd {sd}: {out:?}");
                }
            }
        }
        assert!((out.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
    // Three equal classes share the mass.
    let mut out = [0.0; 3];
    argmax_probabilities(&[1.0, 1.0, 1.0], 0.5, &mut out);
    assert!(out.iter().all(|p| (p - 1.0 / 3.0).abs() < 1e-12), "{out:?}");
}

#[test]
fn linear_kernel_multiclass_equals_the_primal_full_covariance_learner() {
    use crate::covariance::dual::DualGaussian;
    use crate::covariance::kernel::Kernel;
    let mut seed = 0x9E37_79B9u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let (n, d) = (60, 3);
    let x: Vec<f64> = (0..n * d).map(|_| next()).collect();
    let labels: Vec<usize> = (0..n)
        .map(|i| ((x[i * d] + 1.0) * 1.5) as usize % 3)
        .collect();
    let m = Matrix::Dense {
        values: &x,
        n_rows: n,
        n_cols: d,
    };
    // ALMA, the ROMMAs, AdaGrad and FTRL have no kernel form (docs/design.md §2.9).
    let kernel_rules = crate::rules::RULE_NAMES
        .iter()
        .map(|name| Rule::from_name(name, &[]).unwrap())
        .filter(Rule::has_kernel_form);
    for rule in kernel_rules {
        let name = rule.entry().name;
        let kind = if rule.is_second_order() {
            CovarianceKind::Full
        } else {
            CovarianceKind::Identity
        };
        for strategy in [Strategy::MaxScore, Strategy::OneVsRest] {
            let mut primal = MulticlassLearner::new(
                Multiclass { rule, strategy },
                kind,
                3,
                Shape::new(d, true).unwrap(),
                0.9,
            )
            .unwrap();
            let class =
                DualGaussian::new(Kernel::Linear, rule.is_second_order(), d, true, 0.9, None)
                    .unwrap();
            let mut dual = MulticlassLearner::with_classes(rule, strategy, d, vec![class; 3]);
            primal
                .partial_fit(&m, &labels, Presentation::default())
                .unwrap();
            dual.partial_fit(&m, &labels, Presentation::default())
                .unwrap();
            assert_eq!(
                primal.n_mistakes(),
                dual.n_mistakes(),
                "{name} {strategy:?}"
            );
            assert_eq!(primal.n_updates(), dual.n_updates(), "{name} {strategy:?}");
            let (mut fp, mut fd) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
            primal.probabilities(&m, &mut fp).unwrap();
            dual.probabilities(&m, &mut fd).unwrap();
            for (a, b) in fp.iter().zip(&fd) {
                assert!((a - b).abs() < 1e-9, "{name} {strategy:?}: {a} vs {b}");
            }
        }
    }
}

#[test]
fn max_score_learns_and_batch_equals_rows() {
    let rows = [
        [1.0, 0.0],
        [0.0, 1.0],
        [-1.0, -1.0],
        [1.0, 0.2],
        [0.1, 1.0],
        [-1.0, -0.8],
    ];
    let labels = [0, 1, 2, 0, 1, 2];
    for strategy in [Strategy::MaxScore, Strategy::OneVsRest] {
        for (name, kind) in [
            ("AROW", CovarianceKind::Full),
            ("PA", CovarianceKind::Identity),
        ] {
            let rule = Rule::from_name(name, &[]).unwrap();
            let objective = Multiclass { rule, strategy };
            let shape = Shape::new(2, true).unwrap();
            let fresh = || MulticlassLearner::new(objective, kind, 3, shape, 1.0).unwrap();
            let mut single = fresh();
            for (row, &label) in rows.iter().zip(&labels) {
                single.learn(Row::Dense(row), label).unwrap();
            }
            let mut batch = fresh();
            let flat: Vec<f64> = rows.iter().flatten().copied().collect();
            let x = Matrix::Dense {
                values: &flat,
                n_rows: 6,
                n_cols: 2,
            };
            batch
                .partial_fit(&x, &labels, Presentation::default())
                .unwrap();
            assert_eq!(single, batch);
            let mut scores = vec![0.0; 18];
            batch.decision_function(&x, &mut scores).unwrap();
            for (i, &label) in labels.iter().enumerate() {
                let row = &scores[i * 3..i * 3 + 3];
                assert!(row.iter().all(|&s| s <= row[label]));
            }
            assert!(batch
                .partial_fit(&x, &[0, 1, 3, 0, 1, 2], Presentation::default())
                .is_err());
            assert_eq!(single, batch);
        }
    }
}

/// Fuzz crash (model_state): n_classes × dim overflowed (a panic in debug builds); in
/// release 2^62 classes of 4 coordinates wrapped to 0 values, so an empty state passed and
/// built a learner with no class at all, which panicked on its first use.
#[test]
fn from_state_rejects_a_class_count_whose_size_overflows() {
    let rule = Rule::from_name("AROW", &[]).unwrap();
    for n_classes in [1 << 62, usize::MAX] {
        let restored = MulticlassLearner::from_state(
            Multiclass {
                rule,
                strategy: Strategy::MaxScore,
            },
            CovarianceKind::Diagonal,
            n_classes,
            Shape::new(3, true).unwrap(),
            &[],
            &[],
            0,
            0,
        );
        assert!(restored.is_err(), "{n_classes} classes");
    }
}
