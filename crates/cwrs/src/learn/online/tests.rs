use super::*;
use crate::covariance::dual::DualGaussian;
use crate::covariance::kernel::Kernel;
use crate::covariance::CovarianceKind;
use crate::data::Shape;
use crate::learn::learner::Learner;
use crate::learn::multiclass::Multiclass;
use crate::learn::multiclass::{MulticlassLearner, Strategy};
use crate::learn::regression::Regressor;
use crate::rules::{RegressionRule, Rule};

use crate::test_rng::uniform;

/// `n` rows of `d` features (row-major) and a linear score per row.
fn stream(n: usize, d: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut next = uniform(seed);
    let x: Vec<f64> = (0..n * d).map(|_| next()).collect();
    let scores = (0..n)
        .map(|i| x[i * d] + 0.5 * x[i * d + 1] + 0.1 * next())
        .collect();
    (x, scores)
}

fn dense(x: &[f64], d: usize) -> Matrix<'_> {
    Matrix::Dense {
        values: x,
        n_rows: x.len() / d,
        n_cols: d,
    }
}

/// Learning `x` as one batch (repeats included) gives the same bits as learning its rows one
/// by one; with `ahead`, the batch is one that a second core validates while it is learned,
/// and a NaN in any row of it then leaves the model as it was.
fn check_batch_equals_rows<O: Objective, M: Covariance>(
    fresh: impl Fn() -> Online<O, M>,
    x: &[f64],
    d: usize,
    targets: &[O::Target],
    ahead: bool,
) {
    let n = targets.len();
    let weights: Vec<f64> = (0..n).map(|i| (i % 3) as f64 * 0.75).collect();
    let presentation = Presentation {
        weights: Some(&weights),
        ..Presentation::default()
    };
    let mut batch = fresh();
    let matrix = dense(x, d);
    assert_eq!(
        validate_ahead(&matrix, &presentation, batch.n_values()),
        ahead
    );
    batch.partial_fit(&matrix, targets, presentation).unwrap();
    let mut single = fresh();
    for (i, row) in x.chunks_exact(d).enumerate() {
        single
            .learn_weighted(Row::Dense(row), targets[i], weights[i])
            .unwrap();
    }
    assert_eq!(batch, single);
    assert!(batch.n_updates() > 0);
    if !ahead {
        return;
    }
    for bad_row in [0, VALIDATION_CHUNK + 7, n - 1] {
        let mut values = x.to_vec();
        values[bad_row * d + 3] = f64::NAN;
        let before = batch.clone();
        let poisoned = dense(&values, d);
        assert!(batch.partial_fit(&poisoned, targets, presentation).is_err());
        assert_eq!(batch, before, "NaN in row {bad_row}");
    }
}

/// Every objective validates large batches ahead on a second core (when there is one):
/// binary, regression, and both multiclass strategies, over the diagonal and full forms.
#[test]
fn every_objective_validates_ahead_and_undoes_a_late_error() {
    if crate::available_cores() < 2 {
        return; // validate_ahead needs a second core
    }
    let (n, d) = (3 * VALIDATION_CHUNK + 5, 12);
    let (x, scores) = stream(n, d, 99);
    let labels: Vec<f64> = scores
        .iter()
        .map(|&s| if s > 0.0 { 1.0 } else { -1.0 })
        .collect();
    let classes: Vec<usize> = scores
        .iter()
        .map(|&s| ((s + 2.0) * 1.2) as usize % 3)
        .collect();
    let arow = Rule::from_name("AROW", &[]).unwrap();
    let rls = RegressionRule::from_name("AROW", &[]).unwrap();
    for kind in [CovarianceKind::Diagonal, CovarianceKind::Full] {
        let binary = || Learner::new(arow, kind, d, true, 1.0).unwrap();
        check_batch_equals_rows(binary, &x, d, &labels, true);
        let regressor = || Regressor::new(rls, kind, d, true, 1.0).unwrap();
        check_batch_equals_rows(regressor, &x, d, &scores, true);
        for strategy in [Strategy::MaxScore, Strategy::OneVsRest] {
            let multiclass = || {
                MulticlassLearner::new(
                    Multiclass {
                        rule: arow,
                        strategy,
                    },
                    kind,
                    3,
                    Shape::new(d, true).unwrap(),
                    1.0,
                )
                .unwrap()
            };
            check_batch_equals_rows(multiclass, &x, d, &classes, true);
        }
    }
}

/// Multiclass full covariances keep rank-one terms pending across rows (d = 40: blocks of 5)
/// as the binary learner does, and a batch still equals its rows one by one.
#[test]
fn multiclass_full_blocks_and_equals_row_by_row() {
    let (n, d) = (300, 40);
    let (x, scores) = stream(n, d, 7);
    let classes: Vec<usize> = scores
        .iter()
        .map(|&s| ((s + 2.0) * 1.5) as usize % 4)
        .collect();
    let arow = Rule::from_name("AROW", &[]).unwrap();
    for strategy in [Strategy::MaxScore, Strategy::OneVsRest] {
        let fresh = || {
            MulticlassLearner::new(
                Multiclass {
                    rule: arow,
                    strategy,
                },
                CovarianceKind::Full,
                4,
                Shape::new(d, false).unwrap(),
                1.0,
            )
            .unwrap()
        };
        check_batch_equals_rows(fresh, &x, d, &classes, false);
        let mut model = fresh();
        model
            .partial_fit(&dense(&x, d), &classes, Presentation::default())
            .unwrap();
        let pending = |m: &MulticlassLearner| {
            m.classes()
                .iter()
                .any(|c| c.covariance_state().len() > d * d)
        };
        assert!(pending(&model), "{strategy:?}: no term is pending");
        // Folding changes no prediction (only where later rounding happens).
        let (mut before, mut after) = (vec![0.0; 4 * n], vec![0.0; 4 * n]);
        model.variances(&dense(&x, d), &mut before).unwrap();
        model.fold();
        assert!(!pending(&model));
        model.variances(&dense(&x, d), &mut after).unwrap();
        for (a, b) in before.iter().zip(&after) {
            assert!((a - b).abs() <= 1e-12 * b.abs(), "{a} vs {b}");
        }
    }
}

/// The blocked multiclass full covariance agrees with the exact dual form (linear kernel,
/// which keeps no pending terms) to rounding.
#[test]
fn multiclass_full_blocks_agree_with_the_linear_kernel() {
    let (n, d) = (120, 40);
    let (x, scores) = stream(n, d, 11);
    let classes: Vec<usize> = scores
        .iter()
        .map(|&s| ((s + 2.0) * 1.5) as usize % 3)
        .collect();
    let rule = Rule::from_name("AROW", &[("r", 2.0)]).unwrap();
    for strategy in [Strategy::MaxScore, Strategy::OneVsRest] {
        let mut primal = MulticlassLearner::new(
            Multiclass { rule, strategy },
            CovarianceKind::Full,
            3,
            Shape::new(d, true).unwrap(),
            0.9,
        )
        .unwrap();
        let class = DualGaussian::new(Kernel::Linear, true, d, true, 0.9, None).unwrap();
        let mut dual = MulticlassLearner::with_classes(rule, strategy, d, vec![class; 3]);
        primal
            .partial_fit(&dense(&x, d), &classes, Presentation::default())
            .unwrap();
        dual.partial_fit(&dense(&x, d), &classes, Presentation::default())
            .unwrap();
        assert_eq!(primal.n_updates(), dual.n_updates(), "{strategy:?}");
        let (mut fp, mut fd) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
        primal.decision_function(&dense(&x, d), &mut fp).unwrap();
        dual.decision_function(&dense(&x, d), &mut fd).unwrap();
        for (a, b) in fp.iter().zip(&fd) {
            assert!(
                (a - b).abs() < 1e-9 * b.abs().max(1.0),
                "{strategy:?}: {a} vs {b}"
            );
        }
    }
}

/// A round whose mean step μ + α·Σx would overflow to ±∞ is skipped: the model stays finite
/// and unchanged, and later rounds learn as before. (Σ = 1e300 over x = 1e-150: Σx = 1e150
/// while v = 1, so α·Σx overflows for a residual of 1e200 although α and the score are finite.)
#[test]
fn a_mean_step_that_would_overflow_is_skipped() {
    let x = [1e-150];
    for kind in [CovarianceKind::Diagonal, CovarianceKind::Full] {
        let rule = RegressionRule::from_name("AROW", &[]).unwrap();
        let mut model = Regressor::new(rule, kind, 1, false, 1e300).unwrap();
        let fresh = model.model().clone();
        // A skipped step is no update: the model did not change.
        assert!(!model.learn(Row::Dense(&x), 1e200).unwrap(), "{kind:?}");
        assert_eq!(model.model(), &fresh, "{kind:?}");
        assert_eq!(model.n_updates(), 0, "{kind:?}");
        assert!(model.learn(Row::Dense(&x), 1.0).unwrap());
        assert_ne!(model.model(), &fresh, "{kind:?}");
        assert_eq!(model.n_updates(), 1, "{kind:?}");
        // In a batch (the full form's blocked path) too.
        let mut batch = Regressor::new(rule, kind, 1, false, 1e300).unwrap();
        let presentation = Presentation::default();
        let rows = dense(&[1e-150, 1e-150], 1);
        batch
            .partial_fit(&rows, &[1e200, 1.0], presentation)
            .unwrap();
        assert_eq!(
            (batch.n_updates(), batch.model()),
            (1, model.model()),
            "{kind:?}"
        );
        let mut out = [0.0];
        model.predict(&dense(&x, 1), &mut out).unwrap();
        assert!(
            out[0].is_finite() && model.mean()[0].is_finite(),
            "{kind:?}"
        );
    }
}

/// With process noise (constant or "auto") a batch still equals its rows one by one, for every
/// objective and both forms (d = 40: the full form blocks rows while the noise grows), and the
/// diagonal form refuses it next to an L1 penalty.
#[test]
fn process_noise_keeps_batches_equal_to_rows() {
    use crate::learn::drift::ProcessNoise;
    let (n, d) = (300, 40);
    let (x, scores) = stream(n, d, 7);
    // The target flips halfway, so that "auto" resets.
    let labels: Vec<f64> = (scores.iter().enumerate())
        .map(|(i, &s)| if (s > 0.0) == (i < n / 2) { 1.0 } else { -1.0 })
        .collect();
    let classes: Vec<usize> = scores.iter().map(|&s| usize::from(s > 0.0) * 2).collect();
    let arow = Rule::from_name("AROW", &[]).unwrap();
    let rls = RegressionRule::from_name("AROW", &[]).unwrap();
    for noise in [ProcessNoise::Constant(0.01), ProcessNoise::Auto] {
        for kind in [CovarianceKind::Diagonal, CovarianceKind::Full] {
            let noisy = |l: Learner| l.with_process_noise(noise, 1.0).unwrap();
            let binary = || noisy(Learner::new(arow, kind, d, true, 1.0).unwrap());
            check_batch_equals_rows(binary, &x, d, &labels, false);
            let regressor = || {
                let l = Regressor::new(rls, kind, d, true, 1.0).unwrap();
                l.with_process_noise(noise, 1.0).unwrap()
            };
            check_batch_equals_rows(regressor, &x, d, &scores, false);
            let multiclass = || {
                let objective = Multiclass {
                    rule: arow,
                    strategy: Strategy::MaxScore,
                };
                let shape = Shape::new(d, true).unwrap();
                let l = MulticlassLearner::new(objective, kind, 3, shape, 1.0);
                l.unwrap().with_process_noise(noise, 1.0).unwrap()
            };
            check_batch_equals_rows(multiclass, &x, d, &classes, false);
        }
    }
    // The flip is detected: "auto" ends with another covariance than the learner without it.
    let learned = |noise| {
        let mut l = Learner::new(arow, CovarianceKind::Diagonal, d, true, 1.0).unwrap();
        l = l.with_process_noise(noise, 1.0).unwrap();
        l.partial_fit(&dense(&x, d), &labels, Presentation::default())
            .unwrap();
        l.covariance().into_owned()
    };
    assert_ne!(
        learned(ProcessNoise::Auto),
        learned(ProcessNoise::Constant(0.0))
    );
    let l1 = crate::learn::sparse_l1::L1::new(
        crate::learn::sparse_l1::Penalty::Uniform,
        0.1,
        None,
        d + 1,
    );
    let penalised = Learner::new(arow, CovarianceKind::Diagonal, d, true, 1.0)
        .unwrap()
        .with_l1(l1.unwrap())
        .unwrap();
    assert!(penalised
        .with_process_noise(ProcessNoise::Constant(0.1), 1.0)
        .is_err());
}
