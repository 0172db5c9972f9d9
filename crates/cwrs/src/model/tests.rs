use super::*;
use crate::learn::online::Progressive;
use crate::model::state::Value;

const N_FEATURES: usize = 5;
const N_ROWS: usize = 60;

/// Rows with labels ±1 (from a fixed linear rule) and class indices 0..3.
fn data() -> (Vec<f64>, Vec<f64>, Vec<usize>) {
    let mut seed = 12345u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let x: Vec<f64> = (0..N_ROWS * N_FEATURES).map(|_| next()).collect();
    let y = x
        .chunks(N_FEATURES)
        .map(|r| {
            if r[0] + 0.5 * r[1] - r[2] > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    let classes = x
        .chunks(N_FEATURES)
        .map(|r| usize::from(r[0] > 0.0) + usize::from(r[1] > 0.1))
        .collect();
    (x, y, classes)
}

fn config(kind: &str, rule: &str, params: &[(&str, f64)]) -> State<'static> {
    let params = params
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect::<Vec<_>>();
    State::default()
        .with("kind", kind)
        .with("rule", rule)
        .with("params", params)
        .with("n_features", N_FEATURES)
        .with("fit_intercept", true)
        .with("a", 1.0)
        .with("covariance", "diag")
        .with("penalty", None::<String>)
        .with("strategy", "max-score")
        .with("n_classes", 3usize)
        .with("kernel", "rbf")
        .with("gamma", 0.5)
        .with("degree", 3i64)
        .with("coef0", 1.0)
        .with("budget", None::<usize>)
}

/// Every kind of model worth a round trip, each built from its configuration.
fn configs() -> Vec<State<'static>> {
    let arow = |kind| config(kind, "AROW", &[("r", 1.0)]);
    vec![
        arow("binary"),
        arow("binary").with("covariance", "full"),
        config("binary", "PA", &[]).with("covariance", "identity"),
        arow("binary")
            .with("penalty", "l1")
            .with("alpha", 0.01)
            .with("penalize_intercept", false),
        arow("multiclass"),
        arow("multiclass")
            .with("strategy", "ovr")
            .with("covariance", "full"),
        arow("multiclass")
            .with("penalty", "l1")
            .with("alpha", 0.01)
            .with("penalize_intercept", true),
        arow("regressor"),
        arow("regressor").with("covariance", "full"),
        arow("kernel").with("budget", 7usize),
        arow("multiclass_kernel").with("strategy", "ovr"),
    ]
}

fn train(estimator: &mut Model, rows: std::ops::Range<usize>) {
    let (x, y, classes) = data();
    let x = Matrix::Dense {
        values: &x[rows.start * N_FEATURES..rows.end * N_FEATURES],
        n_rows: rows.len(),
        n_cols: N_FEATURES,
    };
    let targets = match estimator.n_classes() {
        Some(_) => Targets::Classes(&classes[rows]),
        None => Targets::Values(&y[rows]),
    };
    let presentation = Presentation::default();
    estimator.partial_fit(&x, targets, presentation).unwrap();
}

fn predictions(estimator: &Model) -> Vec<f64> {
    let (x, _, _) = data();
    let x = Matrix::Dense {
        values: &x,
        n_rows: N_ROWS,
        n_cols: N_FEATURES,
    };
    let width = estimator.n_classes().unwrap_or(1);
    let mut scores = vec![0.0; N_ROWS * width];
    let mut variances = scores.clone();
    estimator.decision_function(&x, &mut scores).unwrap();
    estimator.variances(&x, &mut variances).unwrap();
    [scores, variances].concat()
}

#[test]
fn every_kind_restores_from_its_state_exactly() {
    for config in configs() {
        let mut estimator = Model::new(config.clone(), None).unwrap();
        train(&mut estimator, 0..N_ROWS / 2);
        let state = estimator.state();
        let mut restored = Model::from_state(&state, None).unwrap();
        let kind = estimator.kind();
        assert_eq!(restored.state(), state, "{kind}");
        let before = predictions(&estimator);
        assert_eq!(predictions(&restored), before, "{kind}");
        // Both go on learning alike.
        train(&mut estimator, N_ROWS / 2..N_ROWS);
        train(&mut restored, N_ROWS / 2..N_ROWS);
        assert_eq!(restored.state(), estimator.state(), "{kind}");
        assert_eq!(predictions(&restored), predictions(&estimator), "{kind}");
    }
}

#[test]
fn the_full_covariance_is_stored_folded() {
    let config = config("binary", "AROW", &[("r", 1.0)]).with("covariance", "full");
    let mut estimator = Model::new(config, None).unwrap();
    train(&mut estimator, 0..7); // fewer rows than a block: terms are pending
    let dim = N_FEATURES + 1;
    let state = estimator.state();
    assert_eq!(state.floats("covariance_values").unwrap().len(), dim * dim);
    assert_eq!(
        state.floats("covariance_values").unwrap(),
        estimator.covariance().unwrap()
    );
    let restored = Model::from_state(&state, None).unwrap();
    assert_eq!(predictions(&restored), predictions(&estimator));
}

fn message(result: Result<Model, CwError>) -> String {
    match result {
        Err(CwError::InvalidState(message)) => message,
        other => panic!("expected an invalid state, got {other:?}"),
    }
}

#[test]
fn malformed_states_are_refused_naming_the_entry() {
    let mut estimator = Model::new(configs()[0].clone(), None).unwrap();
    train(&mut estimator, 0..10);
    let state = estimator.state();
    let mut missing = state.clone();
    missing.entries.remove("mean");
    assert_eq!(
        message(Model::from_state(&missing, None)),
        "entry \"mean\" is missing"
    );
    let wrong_type = state.clone().with("mean", vec![1u32]);
    assert_eq!(
        message(Model::from_state(&wrong_type, None)),
        "entry \"mean\" must be a float64 array, got a uint32 array"
    );
    let short = state.clone().with("covariance_values", vec![1.0]);
    assert!(
        message(Model::from_state(&short, None)).contains("covariance"),
        "{}",
        message(Model::from_state(&short, None))
    );
    let newer = State {
        version: 2,
        ..state.clone()
    };
    assert!(message(Model::from_state(&newer, None)).starts_with("version 2 is not known"));
    let unknown_rule = state.clone().with("rule", "nope");
    assert!(message(Model::from_state(&unknown_rule, None)).contains("nope"));
    let negative = state.with("n_updates", -1i64);
    assert!(message(Model::from_state(&negative, None)).contains("\"n_updates\""));
}

#[test]
fn a_malformed_configuration_is_an_invalid_parameter() {
    let mut config = configs()[0].clone();
    config.entries.remove("a");
    assert!(matches!(
        Model::new(config, None),
        Err(CwError::InvalidParameter(m)) if m == "model configuration: entry \"a\" is missing"
    ));
}

#[test]
fn one_row_learning_takes_class_indices_as_floats() {
    let mut estimator = Model::new(configs()[4].clone(), None).unwrap();
    let row = [0.1, 0.2, 0.3, 0.4, 0.5];
    assert!(estimator.learn(Row::Dense(&row), 2.0).unwrap());
    for bad in [-1.0, 0.5, f64::NAN] {
        assert!(estimator.learn(Row::Dense(&row), bad).is_err());
    }
    assert!(estimator.learn(Row::Dense(&row), 3.0).is_err());
}

#[test]
fn a_stopped_long_batch_leaves_the_model_as_it_was_and_a_short_one_learns() {
    let (x, y, _) = data();
    let x = Matrix::Dense {
        values: &x,
        n_rows: N_ROWS,
        n_cols: N_FEATURES,
    };
    // A fresh model (undone by building it again) and a restored one (undone from a copy).
    let fresh = Model::new(configs()[0].clone(), None).unwrap();
    let restored = Model::from_state(&fresh.state(), None).unwrap();
    for mut estimator in [fresh, restored] {
        let before = estimator.state();
        // Past the work between two questions to the stop (POLL_WORK) many times over.
        let order: Vec<usize> = (0..N_ROWS).cycle().take(N_ROWS * 100_000).collect();
        let long = Presentation {
            order: Some(&order),
            ..Presentation::default()
        };
        let targets = Targets::Values(&y);
        let stop = || true;
        assert_eq!(
            estimator.partial_fit_stoppable(&x, targets, (long, None), &stop),
            Ok(true)
        );
        assert_eq!(estimator.state(), before);
        // Too short to be worth a copy: a restored model learns it to its end, the check never
        // asked; a fresh one needs no copy (it is built again), so it stops there too.
        let fresh = estimator.is_fresh();
        let short = Presentation::default();
        let learned = estimator.partial_fit_stoppable(&x, targets, (short, None), &stop);
        assert_eq!(learned, Ok(fresh));
        if fresh {
            assert_eq!(estimator.state(), before);
        } else {
            assert!(estimator.n_updates() > 0);
        }
    }
}

#[test]
fn kernel_values_are_shown_by_kernel_models_only() {
    for config in configs() {
        let mut estimator = Model::new(config, None).unwrap();
        train(&mut estimator, 0..N_ROWS);
        let kind = estimator.kind();
        match estimator.model() {
            AnyLearner::Kernel(l) => {
                assert_eq!(estimator.n_support(), Some(vec![l.model().n_support()]));
                assert_eq!(estimator.dual_coef(), Some(l.model().dual_coef().to_vec()));
                let rows = estimator.support_vectors().unwrap();
                assert_eq!(rows.2.len(), l.model().n_support() + 1);
                assert_eq!(estimator.dense_covariance(), None);
            }
            AnyLearner::MulticlassKernel(l) => {
                let counts: Vec<usize> = l.classes().iter().map(|g| g.n_support()).collect();
                assert_eq!(estimator.n_support(), Some(counts));
                assert_eq!(
                    (estimator.dual_coef(), estimator.support_vectors()),
                    (None, None)
                );
            }
            _ => {
                assert_eq!(
                    (estimator.n_support(), estimator.dual_coef()),
                    (None, None),
                    "{kind}"
                );
                assert!(estimator.support_vectors().is_none());
            }
        }
    }
}

/// Process noise (constant or "auto", diagonal or full) on rows of every scale: a model whose
/// state was taken, and its copy rebuilt from that state, go on learning with the bits of a
/// twin that was never saved (taking a state changes nothing).
mod process_noise_states {
    use super::*;
    use proptest::prelude::{prop, prop_assert_eq, prop_oneof, proptest, Just};
    use proptest::strategy::Strategy as ValueStrategy;
    use proptest::test_runner::Config as ProptestConfig;

    const ROWS: usize = 8;

    fn value() -> impl ValueStrategy<Value = f64> {
        prop_oneof![
            Just(0.0),
            Just(1.7e9),
            Just(-1e9),
            Just(1e150),
            Just(-1e154),
            Just(1e300),
            Just(1e-300),
            (-8i8..8).prop_map(|k| f64::from(k) / 4.0),
        ]
    }

    fn learn(estimator: &mut Model, x: &[f64], rows: std::ops::Range<usize>) {
        let values = &x[rows.start * N_FEATURES..rows.end * N_FEATURES];
        let matrix = Matrix::Dense {
            values,
            n_rows: rows.len(),
            n_cols: N_FEATURES,
        };
        let rows = values.chunks(N_FEATURES);
        let signs: Vec<f64> = rows
            .clone()
            .map(|r| if r[0] > 0.0 { 1.0 } else { -1.0 })
            .collect();
        let classes: Vec<usize> = rows.clone().map(|r| usize::from(r[1] > 0.0) * 2).collect();
        let values: Vec<f64> = rows.map(|r| r[2] - r[3]).collect();
        let targets = match estimator.kind() {
            "multiclass" => Targets::Classes(&classes),
            "binary" => Targets::Values(&signs),
            _ => Targets::Values(&values),
        };
        // A refused batch leaves every copy as it was, alike.
        let _ = estimator.partial_fit(&matrix, targets, Presentation::default());
    }

    fn outputs(estimator: &Model, x: &[f64]) -> Vec<u64> {
        let matrix = Matrix::Dense {
            values: x,
            n_rows: ROWS,
            n_cols: N_FEATURES,
        };
        let width = estimator.n_classes().unwrap_or(1);
        let (mut scores, mut variances) = (vec![0.0; ROWS * width], vec![0.0; ROWS * width]);
        estimator.decision_function(&matrix, &mut scores).unwrap();
        estimator.variances(&matrix, &mut variances).unwrap();
        scores
            .iter()
            .chain(&variances)
            .map(|v| v.to_bits())
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        #[test]
        fn a_saved_model_continues_like_its_twin(
            kind in prop::sample::select(vec!["binary", "regressor", "multiclass"]),
            covariance in prop::sample::select(vec!["diag", "full"]),
            noise in prop::sample::select(vec![1e-6, 0.01, 1.0, 1e100, 0.0]),
            x in proptest::collection::vec(value(), ROWS * N_FEATURES),
        ) {
            let noise = if noise == 0.0 { Value::from("auto") } else { Value::Float(noise) };
            let config = config(kind, "AROW", &[("r", 1.0)])
                .with("covariance", covariance)
                .with("process_noise", noise);
            let mut model = Model::new(config.clone(), None).unwrap();
            let mut twin = Model::new(config, None).unwrap();
            learn(&mut model, &x, 0..ROWS / 2);
            learn(&mut twin, &x, 0..ROWS / 2);
            let state = model.state();
            let mut copy = Model::from_state(&state, None).unwrap();
            for estimator in [&mut model, &mut twin, &mut copy] {
                learn(estimator, &x, ROWS / 2..ROWS);
            }
            prop_assert_eq!(outputs(&model, &x), outputs(&twin, &x));
            prop_assert_eq!(outputs(&copy, &x), outputs(&twin, &x));
            prop_assert_eq!(copy.state(), model.state());
        }
    }
}

/// Rows of `n_features` features with labels ±1 and class indices 0..3, as [`data`] gives.
fn wide_data(n_rows: usize, n_features: usize) -> (Vec<f64>, Vec<f64>, Vec<usize>) {
    let mut seed = 987654321u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let x: Vec<f64> = (0..n_rows * n_features).map(|_| next()).collect();
    let y = x.chunks(n_features).map(|r| r[0] - r[1] + next()).collect();
    let classes = x
        .chunks(n_features)
        .map(|r| usize::from(r[0] > 0.0) + usize::from(r[1] + 0.3 * next() > 0.1))
        .collect();
    (x, y, classes)
}

#[test]
fn taking_a_state_leaves_a_full_model_with_pending_terms_as_it_is() {
    const D: usize = 40;
    const ROWS: usize = 61;
    // Not a multiple of the fold block (5 terms at d = 41): terms are pending at the split.
    const SPLIT: usize = 33;
    let (x, y, classes) = wide_data(ROWS, D);
    let learn = |e: &mut Model, rows: std::ops::Range<usize>| {
        let m = Matrix::Dense {
            values: &x[rows.start * D..rows.end * D],
            n_rows: rows.len(),
            n_cols: D,
        };
        let signs: Vec<f64> = y[rows.clone()].iter().map(|v| v.signum()).collect();
        let targets = match (e.n_classes(), e.kind()) {
            (Some(_), _) => Targets::Classes(&classes[rows]),
            (None, "regressor") => Targets::Values(&y[rows]),
            (None, _) => Targets::Values(&signs),
        };
        e.partial_fit(&m, targets, Presentation::default()).unwrap();
    };
    let arow = |kind| config(kind, "AROW", &[("r", 1.0)]).with("n_features", D);
    let models = [
        arow("binary"),
        arow("regressor"),
        arow("multiclass"),
        arow("multiclass").with("strategy", "ovr"),
    ];
    for model in models {
        for noise in [None, Some(0.01)] {
            for average in [None, Some(3usize)] {
                let config = model
                    .clone()
                    .with("covariance", "full")
                    .with("process_noise", noise)
                    .with("average", average);
                let what = format!("{config:?}");
                let mut original = Model::new(config, None).unwrap();
                learn(&mut original, 0..SPLIT);
                let mut twin = original.clone();
                let state = original.state();
                assert!(state.entries.contains_key("pending_terms"), "{what}");
                assert_eq!(original.state(), state, "{what}");
                let mut restored = Model::from_state(&state, None).unwrap();
                assert_eq!(restored.state(), state, "{what}");
                for e in [&mut original, &mut twin, &mut restored] {
                    learn(e, SPLIT..ROWS);
                }
                let bits = |e: &Model| {
                    let values = [e.mean().unwrap(), e.covariance().unwrap()].concat();
                    values.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
                };
                assert_eq!(bits(&original), bits(&twin), "{what}");
                assert_eq!(bits(&restored), bits(&twin), "{what}");
                assert_eq!(restored.state(), twin.state(), "{what}");
            }
        }
    }
}

#[test]
fn pending_terms_that_do_not_fold_into_the_covariance_are_refused() {
    const D: usize = 40;
    let (x, _, classes) = wide_data(10, D);
    let config = config("multiclass", "AROW", &[("r", 1.0)])
        .with("n_features", D)
        .with("covariance", "full");
    let mut model = Model::new(config, None).unwrap();
    let m = Matrix::Dense {
        values: &x,
        n_rows: 10,
        n_cols: D,
    };
    model
        .partial_fit(&m, Targets::Classes(&classes), Presentation::default())
        .unwrap();
    let state = model.state();
    let refused = |state: State| {
        let err = Model::from_state(&state, None).unwrap_err();
        assert!(matches!(err, CwError::InvalidState(_)), "{err}");
        assert!(err.to_string().contains("pending"), "{err}");
    };
    let mut terms = state.floats("pending_terms").unwrap().to_vec();
    terms[3] *= 1.0 + f64::EPSILON;
    refused(state.clone().with("pending_terms", terms));
    let mut bases = state.floats("pending_bases").unwrap().to_vec();
    bases[1] += 1e-3; // no longer symmetric
    refused(state.clone().with("pending_bases", bases));
    let counts = state.u64s("pending_counts").unwrap();
    let mut shifted = counts.to_vec();
    shifted.rotate_left(1);
    if shifted != counts {
        refused(state.clone().with("pending_counts", shifted));
    }
    refused(state.clone().with("pending_counts", vec![1u64; 2]));
    let diagonal = state.clone().with("covariance", "diag");
    assert!(Model::from_state(&diagonal, None).is_err());
}

#[test]
fn the_best_class_is_the_positive_side_or_the_first_highest_score() {
    assert_eq!([-0.5, 0.0, 2.0].map(|s| best_class(&[s])), [0, 0, 1]);
    assert_eq!(best_class(&[1.0, 3.0, 3.0, -1.0]), 1);
    assert_eq!(best_class(&[f64::NEG_INFINITY, f64::NEG_INFINITY]), 0);
}

/// Every kind, and the learners whose rounds carry more state: averaged, drifting, weighted.
fn scored_configs() -> Vec<State<'static>> {
    let arow = |kind| config(kind, "AROW", &[("r", 1.0)]);
    let mut configs = configs();
    configs.extend([
        arow("binary").with("average", Some(5u64)),
        arow("multiclass").with("average", Some(1u64)),
        arow("binary").with("process_noise", "auto"),
        arow("regressor").with("process_noise", "auto"),
        config("binary", "IELLIP", &[("b", 0.3), ("c", 0.1)]),
    ]);
    configs
}

#[test]
fn progressive_scores_are_the_predictions_before_each_row_and_the_model_is_unchanged() {
    let (x, y, classes) = data();
    let matrix = Matrix::Dense {
        values: &x,
        n_rows: N_ROWS,
        n_cols: N_FEATURES,
    };
    // Weights with zeros: a row of weight 0 is predicted, not learned.
    let weights: Vec<f64> = (0..N_ROWS).map(|i| [1.0, 0.0, 2.5][i % 3]).collect();
    for config in scored_configs() {
        for weights in [None, Some(&weights[..])] {
            let mut scored = Model::new(config.clone(), None).unwrap();
            let mut plain = scored.clone();
            let mut by_row = scored.clone();
            let targets = match scored.n_classes() {
                Some(_) => Targets::Classes(&classes),
                None => Targets::Values(&y),
            };
            let width = scored.n_classes().unwrap_or(1);
            let (mut scores, mut variances) =
                (vec![0.0; N_ROWS * width], vec![0.0; N_ROWS * width]);
            let presentation = Presentation {
                weights,
                ..Presentation::default()
            };
            let out = Progressive {
                scores: &mut scores,
                variances: Some(&mut variances),
            };
            scored
                .partial_fit_scored(&matrix, targets, presentation, out)
                .unwrap();
            plain.partial_fit(&matrix, targets, presentation).unwrap();
            let kind = format!("{} {:?}", scored.kind(), config.entries.get("average"));
            assert_eq!(scored.state(), plain.state(), "{kind}");
            for i in 0..N_ROWS {
                let one = Matrix::Dense {
                    values: &x[i * N_FEATURES..(i + 1) * N_FEATURES],
                    n_rows: 1,
                    n_cols: N_FEATURES,
                };
                let (mut score, mut variance) = (vec![0.0; width], vec![0.0; width]);
                by_row.decision_function(&one, &mut score).unwrap();
                by_row.variances(&one, &mut variance).unwrap();
                let at = i * width..(i + 1) * width;
                assert_eq!(&scores[at.clone()], &score[..], "{kind}, row {i}");
                assert_eq!(&variances[at], &variance[..], "{kind}, row {i}");
                let h = weights.map_or(1.0, |w| w[i]);
                let target = match targets {
                    Targets::Classes(k) => Targets::Classes(&k[i..=i]),
                    Targets::Values(v) => Targets::Values(&v[i..=i]),
                };
                let one_weight = [h];
                let presentation = Presentation {
                    weights: Some(&one_weight),
                    ..Presentation::default()
                };
                by_row.partial_fit(&one, target, presentation).unwrap();
            }
            assert_eq!(by_row.state(), plain.state(), "{kind}");
        }
    }
}

#[test]
fn progressive_scores_of_a_refused_batch_leave_the_model_as_it_was() {
    let (x, y, _) = data();
    let mut bad = x.clone();
    bad[N_ROWS / 2 * N_FEATURES] = f64::NAN;
    let matrix = Matrix::Dense {
        values: &bad,
        n_rows: N_ROWS,
        n_cols: N_FEATURES,
    };
    let mut model = Model::new(config("binary", "AROW", &[("r", 1.0)]), None).unwrap();
    train(&mut model, 0..10);
    let before = model.state();
    let mut scores = vec![0.0; N_ROWS];
    let out = Progressive {
        scores: &mut scores,
        variances: None,
    };
    let refused =
        model.partial_fit_scored(&matrix, Targets::Values(&y), Presentation::default(), out);
    assert!(refused.is_err());
    assert_eq!(model.state(), before);
    let mut short = vec![0.0; N_ROWS - 1];
    let good = Matrix::Dense {
        values: &x,
        n_rows: N_ROWS,
        n_cols: N_FEATURES,
    };
    let out = Progressive {
        scores: &mut short,
        variances: None,
    };
    let refused =
        model.partial_fit_scored(&good, Targets::Values(&y), Presentation::default(), out);
    assert!(refused
        .unwrap_err()
        .to_string()
        .contains("progressive scores of 60 rows"));
    assert_eq!(model.state(), before);
}

/// The rows of `data()` as a CSR matrix (their zeros dropped, one row all zero).
fn csr_rows(x: &[f64], n_rows: usize) -> (Vec<f64>, Vec<i32>, Vec<i32>) {
    let (mut values, mut indices, mut indptr) = (Vec::new(), Vec::new(), vec![0]);
    for (i, row) in x.chunks(N_FEATURES).take(n_rows).enumerate() {
        for (j, &v) in row.iter().enumerate() {
            // Every other row keeps a few features only (supports that overlap in part).
            if i != 3 && (i % 2 == 0 || (i + j) % 3 == 0) {
                values.push(v);
                indices.push(j as i32);
            }
        }
        indptr.push(values.len() as i32);
    }
    (values, indices, indptr)
}

/// xᵀ(Σ + q·I)y over the coordinates of a model that fits an intercept (the bias last).
fn dense_quadratic(sigma: &[f64], q: f64, x: &[f64], y: &[f64]) -> f64 {
    let dim = N_FEATURES + 1;
    let (x, y) = ([x, &[1.0]].concat(), [y, &[1.0]].concat());
    let mut s = 0.0;
    for i in 0..dim {
        for j in 0..dim {
            s += x[i] * (sigma[i * dim + j] + if i == j { q } else { 0.0 }) * y[j];
        }
    }
    s
}

#[test]
fn score_covariances_have_the_variances_on_the_diagonal_bit_for_bit() {
    let arow = |kind| config(kind, "AROW", &[("r", 1.0)]);
    let models = [
        (arow("binary"), 0.0),
        (arow("binary").with("covariance", "full"), 0.0),
        (
            arow("binary")
                .with("covariance", "lowrank")
                .with("rank", 2usize),
            0.0,
        ),
        (arow("regressor").with("process_noise", 0.02), 0.02),
        (
            arow("regressor")
                .with("covariance", "full")
                .with("process_noise", 0.02),
            0.02,
        ),
    ];
    let (x, _, _) = data();
    let n = 7;
    let (values, indices, indptr) = csr_rows(&x, n);
    let dense_x = Matrix::Dense {
        values: &x[..n * N_FEATURES],
        n_rows: n,
        n_cols: N_FEATURES,
    };
    let csr_x = Matrix::Csr32 {
        values: &values,
        indices: &indices,
        indptr: &indptr,
        n_cols: N_FEATURES,
    };
    let mut csr_dense = vec![0.0; n * N_FEATURES];
    for i in 0..n {
        csr_x
            .row(i)
            .for_each(|j, v| csr_dense[i * N_FEATURES + j] = v);
    }
    for (config, q) in models {
        let mut model = Model::new(config, None).unwrap();
        train(&mut model, 0..N_ROWS);
        for (matrix, rows) in [(&dense_x, &x[..n * N_FEATURES]), (&csr_x, &csr_dense[..])] {
            let mut out = vec![f64::NAN; n * n];
            model.score_covariances(matrix, &mut out).unwrap();
            let mut variances = vec![0.0; n];
            model.variances(matrix, &mut variances).unwrap();
            let kind = model.kind();
            for i in 0..n {
                assert_eq!(out[i * n + i].to_bits(), variances[i].to_bits(), "{kind}");
                for j in 0..n {
                    assert_eq!(out[i * n + j].to_bits(), out[j * n + i].to_bits(), "{kind}");
                }
            }
            // A diagonal or full Σ is shown whole: the pairs against xᵀ(Σ + q·I)y.
            let covariance = model.covariance().unwrap();
            let sigma = match covariance.len() {
                6 => (0..36)
                    .map(|k| if k % 7 == 0 { covariance[k / 7] } else { 0.0 })
                    .collect(),
                36 => covariance,
                _ => continue,
            };
            let row = |i: usize| &rows[i * N_FEATURES..(i + 1) * N_FEATURES];
            for i in 0..n {
                for j in 0..n {
                    let want = dense_quadratic(&sigma, q, row(i), row(j));
                    let scale = (out[i * n + i] * out[j * n + j]).sqrt();
                    assert!((out[i * n + j] - want).abs() <= 1e-12 * scale, "{kind}");
                }
            }
        }
    }
}

#[test]
fn score_covariances_are_refused_without_a_covariance_over_the_features() {
    let arow = |kind| config(kind, "AROW", &[("r", 1.0)]);
    let (x, _, _) = data();
    let x = Matrix::Dense {
        values: &x[..2 * N_FEATURES],
        n_rows: 2,
        n_cols: N_FEATURES,
    };
    let refused = [
        (arow("multiclass"), "multiclass"),
        (arow("kernel"), "kernel"),
        (
            config("binary", "PA", &[]).with("covariance", "identity"),
            "second-order",
        ),
    ];
    for (config, why) in refused {
        let mut model = Model::new(config, None).unwrap();
        train(&mut model, 0..10);
        let mut out = vec![0.0; 4];
        let error = model.score_covariances(&x, &mut out).unwrap_err();
        assert!(
            matches!(&error, CwError::InvalidInput(m) if m.contains(why)),
            "{error}"
        );
    }
    let model = Model::new(arow("binary"), None).unwrap();
    let error = model.score_covariances(&x, &mut [0.0; 3]).unwrap_err();
    assert!(
        matches!(&error, CwError::InvalidInput(m) if m.contains("2 × 2")),
        "{error}"
    );
}
