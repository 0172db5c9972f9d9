use super::*;
use crate::data::{Matrix, Presentation};
use crate::model::Targets;

const N_FEATURES: usize = 4;

/// Rows and targets of a noisy linear function: a low-discrepancy sequence (reproducible).
fn data(n_rows: usize) -> (Vec<f64>, Vec<f64>) {
    let spread = |i: usize, step: f64| ((i as f64 + 1.0) * step).fract() - 0.5;
    let x: Vec<f64> = (0..n_rows * N_FEATURES)
        .map(|i| spread(i, 0.754_877_666_2))
        .collect();
    let noise = |i| 0.1 * spread(i, 0.569_840_290_9);
    let rows = x.chunks(N_FEATURES).enumerate();
    let y = rows.map(|(i, r)| r[0] - 2.0 * r[1] + 0.5 * r[3] + noise(i));
    let y = y.collect();
    (x, y)
}

fn config(kind: &str, rule: &str, params: &[(&str, f64)], covariance: &str) -> State<'static> {
    let params = params.iter().map(|(k, v)| (k.to_string(), *v));
    State::default()
        .with("kind", kind)
        .with("rule", rule)
        .with("params", params.collect::<Vec<_>>())
        .with("n_features", N_FEATURES)
        .with("fit_intercept", true)
        .with("a", 1.0)
        .with("covariance", covariance)
        .with("penalty", None::<String>)
        .with("strategy", "max-score")
        .with("n_classes", 3usize)
}

fn regressor(covariance: &str) -> Model {
    let config = config("regressor", "AROW", &[("r", 0.5)], covariance);
    Model::new(config, None).unwrap()
}

/// `model` after learning rows `rows` of (x, y) (y as ±1 by sign for a binary model).
fn learned(mut model: Model, x: &[f64], y: &[f64], rows: std::ops::Range<usize>) -> Model {
    let x = Matrix::Dense {
        values: &x[rows.start * N_FEATURES..rows.end * N_FEATURES],
        n_rows: rows.len(),
        n_cols: N_FEATURES,
    };
    let y = &y[rows];
    let signs: Vec<f64> = y
        .iter()
        .map(|v| if *v > 0.0 { 1.0 } else { -1.0 })
        .collect();
    let classes: Vec<usize> = y.iter().map(|v| (v.abs() * 2.0) as usize % 3).collect();
    let targets = match model.kind() {
        "binary" => Targets::Values(&signs),
        "multiclass" => Targets::Classes(&classes),
        _ => Targets::Values(y),
    };
    model
        .partial_fit(&x, targets, Presentation::default())
        .unwrap();
    model
}

fn assert_close(a: &[f64], b: &[f64], tolerance: f64) {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(1e-300_f64, |m, v| m.max(v.abs()));
    for (u, v) in a.iter().zip(b) {
        assert!((u - v).abs() <= tolerance * scale, "{u} vs {v}");
    }
}

#[test]
fn information_merge_of_the_full_regressor_is_the_sequential_fit() {
    let (x, y) = data(80);
    let sequential = learned(regressor("full"), &x, &y, 0..80);
    for base_rows in [0, 20] {
        let base = learned(regressor("full"), &x, &y, 0..base_rows);
        let bounds = [base_rows, 35, 50, 66, 80];
        let shards: Vec<Model> = bounds
            .windows(2)
            .map(|w| learned(base.clone(), &x, &y, w[0]..w[1]))
            .collect();
        let refs: Vec<&Model> = shards.iter().collect();
        let given = (base_rows > 0).then_some(&base);
        for method in [Method::Information, Method::Auto] {
            let merged = merge(&refs, method, given, None).unwrap();
            assert_close(&merged.mean().unwrap(), &sequential.mean().unwrap(), 1e-9);
            let sigma = sequential.state();
            let sigma = sigma.floats("covariance_values").unwrap();
            assert_close(&merged.covariance().unwrap(), sigma, 1e-9);
            assert_eq!(merged.n_updates(), 80);
        }
    }
}

#[test]
fn merging_one_model_gives_it_back() {
    let (x, y) = data(40);
    let l1 = |kind| {
        config(kind, "AROW", &[("r", 1.0)], "diag")
            .with("penalty", "l1")
            .with("alpha", 0.05)
            .with("penalize_intercept", false)
    };
    let configs = [
        config("binary", "AROW", &[("r", 1.0)], "diag"),
        config("binary", "AROW", &[("r", 1.0)], "full"),
        config("binary", "PA", &[], "identity"),
        config("regressor", "AROW", &[("r", 1.0)], "full"),
        l1("binary"),
    ];
    for config in configs {
        let model = learned(Model::new(config, None).unwrap(), &x, &y, 0..40);
        let methods: &[Method] = match model.covariance_kind() {
            Some(CovarianceKind::Identity) => &[Method::Average, Method::Auto],
            _ => &[Method::Information, Method::Precision, Method::Average],
        };
        for &method in methods {
            let merged = merge(&[&model], method, None, None).unwrap();
            assert_close(&merged.mean().unwrap(), &model.mean().unwrap(), 1e-9);
            let folded = model.clone().state();
            let sigma = folded.floats("covariance_values").unwrap();
            assert_close(&merged.covariance().unwrap(), sigma, 1e-9);
            assert_eq!(merged.n_updates(), model.n_updates());
            assert_eq!(merged.n_mistakes(), model.n_mistakes());
        }
    }
}

#[test]
fn average_weights_the_means_by_updates() {
    let (x, y) = data(60);
    let pa = || Model::new(config("binary", "PA", &[], "identity"), None).unwrap();
    let (a, b) = (learned(pa(), &x, &y, 0..20), learned(pa(), &x, &y, 20..60));
    let merged = merge(&[&a, &b], Method::Auto, None, None).unwrap();
    let (ua, ub) = (a.n_updates() as f64, b.n_updates() as f64);
    let expected: Vec<f64> = (a.mean().unwrap().iter().zip(b.mean().unwrap()))
        .map(|(p, q)| (ua * p + ub * q) / (ua + ub))
        .collect();
    assert_close(&merged.mean().unwrap(), &expected, 1e-12);
    assert_eq!(merged.n_updates(), a.n_updates() + b.n_updates());
}

#[test]
fn refusals_name_the_problem_and_change_nothing() {
    let (x, y) = data(30);
    let arow = learned(regressor("diag"), &x, &y, 0..30);
    let full = learned(regressor("full"), &x, &y, 0..30);
    let pa = Model::new(config("binary", "PA", &[], "identity"), None).unwrap();
    let pa = learned(pa, &x, &y, 0..30);
    let other_r = config("regressor", "AROW", &[("r", 2.0)], "diag");
    let other_r = Model::new(other_r, None).unwrap();
    let before = (arow.clone().state(), full.clone().state());
    let refused = |models: &[&Model], method, base: Option<&Model>, needle: &str| match merge(
        models, method, base, None,
    ) {
        Err(CwError::InvalidParameter(message)) => {
            assert!(message.contains(needle), "{message:?} lacks {needle:?}")
        }
        other => panic!("expected a refusal naming {needle:?}, got {other:?}"),
    };
    refused(&[], Method::Auto, None, "at least one model");
    refused(&[&arow, &full], Method::Auto, None, "covariance form");
    refused(&[&arow, &other_r], Method::Auto, None, "hyper-parameters");
    refused(&[&arow], Method::Auto, Some(&other_r), "base");
    refused(&[&pa], Method::Information, None, "first-order");
    refused(&[&pa], Method::Precision, None, "first-order");
    refused(&[&arow, &pa], Method::Auto, None, "kind of model");
    // A "base" that saw more than the model was not its start.
    refused(
        &[&regressor("diag")],
        Method::Auto,
        Some(&arow),
        "fewer updates",
    );
    assert_eq!((arow.clone().state(), full.clone().state()), before);
    let mut kernel = config("kernel", "AROW", &[("r", 1.0)], "diag")
        .with("kernel", "rbf")
        .with("gamma", 0.5)
        .with("degree", 3i64)
        .with("coef0", 1.0);
    kernel.set("budget", None::<usize>);
    let kernel = Model::new(kernel, None).unwrap();
    refused(&[&kernel], Method::Auto, None, "kernel");
    assert!(Method::from_name("sum").is_err());
}

/// Binary diagonal AROW with an L1 penalty (alpha 0.05).
fn l1_config() -> State<'static> {
    config("binary", "AROW", &[("r", 1.0)], "diag")
        .with("penalty", "l1")
        .with("alpha", 0.05)
        .with("penalize_intercept", false)
}

#[test]
fn the_merged_l1_model_has_no_pending_threshold() {
    let (x, y) = data(50);
    let l1 = l1_config();
    let fresh = Model::new(l1, None).unwrap();
    let (a, b) = (
        learned(fresh.clone(), &x, &y, 0..25),
        learned(fresh, &x, &y, 25..50),
    );
    let merged = merge(&[&a, &b], Method::Auto, None, None).unwrap();
    let state = merged.state();
    let total = state.float("l1_total").unwrap();
    assert!(state.floats("l1_last").unwrap().iter().all(|&h| h == total));
    // Nothing pending: the stored mean is the thresholded one.
    assert_eq!(
        state.floats("mean").unwrap(),
        merged.mean().unwrap().as_slice()
    );
}

/// The prior of base=None, read without building a model for the identity and diagonal forms,
/// is what a fresh model of the configuration holds: the merge gives the same bits as with the
/// fresh model passed as base, for every kind, form and method (with an L1 penalty and with
/// process noise too).
#[test]
fn the_prior_base_is_a_fresh_model() {
    let (x, y) = data(60);
    let l1 = l1_config();
    let configs = [
        config("binary", "AROW", &[("r", 1.0)], "diag"),
        config("binary", "AROW", &[("r", 1.0)], "full"),
        config("binary", "AROW", &[("r", 1.0)], "lowrank").with("rank", 2usize),
        config("binary", "PA", &[], "identity"),
        config("regressor", "AROW", &[("r", 1.0)], "diag").with("a", 0.3),
        config("multiclass", "AROW", &[("r", 1.0)], "diag"),
        config("binary", "SCW1", &[("eta", 0.9), ("C", 1.0)], "diag").with("process_noise", 0.01),
        l1,
    ];
    for config in configs {
        let fresh = Model::new(config, None).unwrap();
        let (a, b) = (
            learned(fresh.clone(), &x, &y, 0..25),
            learned(fresh.clone(), &x, &y, 25..60),
        );
        let methods: &[Method] = match fresh.covariance_kind() {
            Some(CovarianceKind::Identity) => &[Method::Average, Method::Auto],
            _ => &[Method::Auto, Method::Precision, Method::Average],
        };
        for &method in methods {
            let prior = merge(&[&a, &b], method, None, None).unwrap();
            let given = merge(&[&a, &b], method, Some(&fresh), None).unwrap();
            assert_eq!(prior.state(), given.state(), "{method:?}");
        }
    }
}

/// The inverse by rows gives the bits of its definition (each sum in k's ascending order, as
/// the column-by-column loops computed it).
#[test]
fn the_inverse_by_rows_is_its_definition_bit_for_bit() {
    fn by_definition(l: &[f64], dim: usize) -> Vec<f64> {
        let mut m = vec![0.0; dim * dim];
        for col in 0..dim {
            m[col * dim + col] = 1.0 / l[col * dim + col];
            for i in col + 1..dim {
                let s: f64 = (col..i).map(|k| l[i * dim + k] * m[k * dim + col]).sum();
                m[i * dim + col] = -s / l[i * dim + i];
            }
        }
        let mut inv = vec![0.0; dim * dim];
        for i in 0..dim {
            for j in 0..=i {
                let s: f64 = (i..dim).map(|k| m[k * dim + i] * m[k * dim + j]).sum();
                inv[i * dim + j] = s;
                inv[j * dim + i] = s;
            }
        }
        inv
    }
    for dim in [1, 2, 7, 33] {
        // A = BBᵀ + I of a deterministic, irregular B.
        let b: Vec<f64> = (0..dim * dim)
            .map(|k| ((k as f64 + 1.0) * 0.754_877_666).fract() - 0.5)
            .collect();
        let a: Vec<f64> = (0..dim * dim)
            .map(|ij| {
                let (i, j) = (ij / dim, ij % dim);
                let dot: f64 = (0..dim).map(|k| b[i * dim + k] * b[j * dim + k]).sum();
                dot + f64::from(u8::from(i == j))
            })
            .collect();
        let l = cholesky(&a, dim).unwrap();
        let bits = |v: Vec<f64>| v.into_iter().map(f64::to_bits).collect::<Vec<_>>();
        assert_eq!(
            bits(inverse(&l, dim)),
            bits(by_definition(&l, dim)),
            "dim {dim}"
        );
    }
}

/// The merged model as the merge built it through the saved-state format: its learned entries
/// with the first model's configuration, rebuilt (and checked) by [`Model::from_state`].
/// The reference of the typed construction ([`estimator`]).
fn by_state(first: &Snapshot, merged: &Moments) -> Result<Model, CwError> {
    let mut state = State::default().with("n_updates", merged.updates);
    if let Some(mistakes) = merged.mistakes {
        state.set("n_mistakes", mistakes);
    }
    if let Some(rounds) = merged.rounds {
        state.set("n_rounds", rounds);
    }
    let multiclass = first.n_classes.is_some();
    state.set(
        if multiclass { "means" } else { "mean" },
        merged.means.clone(),
    );
    state.set("covariance_values", merged.covariances.clone());
    if let Some(noise) = merged.noise {
        state.set("noise_estimate", vec![noise.estimate, noise.information]);
    }
    if !merged.l1_totals.is_empty() {
        let dim = merged.means.len() / merged.l1_totals.len();
        let last: Vec<f64> = (merged.l1_totals.iter())
            .flat_map(|&total| std::iter::repeat_n(total, dim))
            .collect();
        if multiclass {
            state.set("l1_totals", merged.l1_totals.clone());
        } else {
            state.set("l1_total", merged.l1_totals[0]);
        }
        state.set("l1_last", last);
    }
    Model::from_state(&first.config.to_state().merged(state), None).map_err(|err| match err {
        CwError::InvalidState(message) => {
            CwError::InvalidInput(format!("the merged model is not valid: {message}"))
        }
        err => err,
    })
}

/// A mergeable configuration: kind (0 binary, 1 regressor, 2 and 3 multiclass max-score and
/// one-vs-rest), form (0 identity, 1 diagonal, 2 full, 3 low-rank of rank 1 or 2), an L1
/// penalty (diagonal form), constant process noise (diagonal and full forms) and another rule
/// than AROW (SCW1, for a classifier).
fn mergeable_config(
    kind: u8,
    form: u8,
    rank: usize,
    l1: bool,
    noise: bool,
    other: bool,
) -> State<'static> {
    let kind_name = ["binary", "regressor", "multiclass", "multiclass"][usize::from(kind)];
    let covariance = ["identity", "diag", "full", "lowrank"][usize::from(form)];
    let regressor = kind == 1;
    let (rule, params): (&str, &[(&str, f64)]) = match (form, other, regressor) {
        (0, _, _) => ("PA", &[]),
        (_, true, false) => ("SCW1", &[("eta", 0.9), ("C", 1.0)]),
        _ => ("AROW", &[("r", 0.7)]),
    };
    let mut config = config(kind_name, rule, params, covariance).with("a", 0.8);
    if kind == 3 {
        config.set("strategy", "ovr");
    }
    if form == 3 {
        config.set("rank", rank);
    }
    if l1 && form == 1 {
        config = config
            .with("penalty", "l1")
            .with("alpha", 0.02)
            .with("penalize_intercept", false);
    } else if noise && (form == 1 || form == 2) {
        config.set("process_noise", 0.01);
    }
    config
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// The typed construction of the merged model gives the model the saved-state path
    /// rebuilt, bit for bit (every field, the derived ones too), or the same error: every
    /// method, form and kind, with and without L1, process noise and a base.
    #[test]
    fn the_merged_model_is_the_one_its_state_rebuilds(
        (kind, form, rank) in (0u8..4, 0u8..4, 1usize..3),
        (l1, noise, other) in (proptest::bool::ANY, proptest::bool::ANY, proptest::bool::ANY),
        method in 0usize..4,
        base_rows in 0usize..6,
        shard_rows in proptest::collection::vec(1usize..9, 1..4),
        values in proptest::collection::vec(-16i8..16, 4 * 40),
        weighted in proptest::bool::ANY,
    ) {
        let config = mergeable_config(kind, form, rank, l1, noise, other);
        let methods = [Method::Auto, Method::Information, Method::Precision, Method::Average];
        let method = methods[method];
        let n = base_rows + shard_rows.iter().sum::<usize>();
        let x: Vec<f64> = values[..n * N_FEATURES].iter().map(|&v| f64::from(v) / 8.0).collect();
        let y: Vec<f64> = (0..n).map(|i| x[i * N_FEATURES] - x[i * N_FEATURES + 1] + 0.3).collect();
        let fresh = Model::new(config, None).unwrap();
        let base = learned(fresh.clone(), &x, &y, 0..base_rows);
        let mut start = base_rows;
        let shards: Vec<Model> = (shard_rows.iter())
            .map(|&rows| {
                start += rows;
                learned(base.clone(), &x, &y, start - rows..start)
            })
            .collect();
        let snapshots: Vec<Snapshot> = shards.iter().map(Snapshot::of).collect();
        let given = (base_rows > 0).then(|| Snapshot::of(&base));
        let weights: Vec<f64> = (1..=shards.len()).map(|k| k as f64).collect();
        let weights = weighted.then_some(&weights[..]);
        // A refusal before the construction (a method the rule cannot take) has nothing to
        // compare.
        if let Ok((first, merged)) = merged_moments(&snapshots, method, given.as_ref(), weights) {
            match (merged_model(&first.config, &merged), by_state(first, &merged)) {
                (Ok(typed), Ok(reference)) => {
                    proptest::prop_assert_eq!(format!("{typed:?}"), format!("{reference:?}"));
                    proptest::prop_assert_eq!(typed.state(), reference.state());
                }
                (typed, reference) => proptest::prop_assert_eq!(
                    typed.map(|_| ()).map_err(|e| e.to_string()),
                    reference.map(|_| ()).map_err(|e| e.to_string())
                ),
            }
        }
    }
}

/// Merged values a model cannot hold (not finite; a diagonal variance rounded to 0) are
/// refused as the state path refused them, with the same message.
#[test]
fn invalid_merged_values_are_refused_as_before() {
    for form in 0..4 {
        let config = mergeable_config(0, form, 1, false, false, false);
        let model = Model::new(config, None).unwrap();
        let snapshot = Snapshot::of(&model);
        let good = snapshot.moments.as_ref().unwrap();
        let with = |means: Vec<f64>, covariances: Vec<f64>| Moments {
            updates: 3,
            mistakes: Some(1),
            rounds: None,
            means,
            covariances,
            l1_totals: Vec::new(),
            noise: good.noise,
        };
        let mut nan_mean = good.means.clone();
        nan_mean[1] = f64::NAN;
        let mut cases = vec![with(nan_mean, good.covariances.clone())];
        if form == 1 {
            let mut zero = good.covariances.clone();
            zero[0] = 0.0;
            cases.push(with(good.means.clone(), zero));
        }
        if form >= 1 {
            let mut infinite = good.covariances.clone();
            infinite[0] = f64::INFINITY;
            cases.push(with(good.means.clone(), infinite));
        }
        for merged in cases {
            let typed = merged_model(&snapshot.config, &merged).map(|_| ());
            let reference = by_state(&snapshot, &merged).map(|_| ());
            match (typed, reference) {
                (Err(CwError::InvalidInput(typed)), Err(CwError::InvalidInput(reference))) => {
                    assert!(
                        typed.starts_with("the merged model is not valid: "),
                        "{typed}"
                    );
                    assert_eq!(typed, reference);
                }
                other => panic!("form {form}: expected two refusals, got {other:?}"),
            }
        }
    }
}

/// The class counts of `class_weight="balanced"` are evidence, as the moments: the merge holds
/// the base's and what each model counted beyond it, and a merge of models that count nothing
/// counts nothing.
#[test]
fn a_merge_adds_the_class_counts_of_balanced_models() {
    let (x, y) = data(90);
    let fresh = Model::new(config("multiclass", "AROW", &[], "diag"), None).unwrap();
    let balanced = |mut model: Model, rows: std::ops::Range<usize>| {
        let classes: Vec<usize> = y[rows.clone()]
            .iter()
            .map(|v| (v.abs() * 2.0) as usize % 3)
            .collect();
        let matrix = Matrix::Dense {
            values: &x[rows.start * N_FEATURES..rows.end * N_FEATURES],
            n_rows: rows.len(),
            n_cols: N_FEATURES,
        };
        let presentation = Presentation {
            balanced: true,
            ..Presentation::default()
        };
        model
            .partial_fit(&matrix, Targets::Classes(&classes), presentation)
            .unwrap();
        model
    };
    let base = balanced(fresh.clone(), 0..30);
    let (a, b) = (
        balanced(base.clone(), 30..60),
        balanced(base.clone(), 60..90),
    );
    let merged = merge(&[&a, &b], Method::Information, Some(&base), None).unwrap();
    let expected: Vec<f64> = (0..3)
        .map(|k| a.class_counts()[k] + b.class_counts()[k] - base.class_counts()[k])
        .collect();
    assert_eq!(merged.class_counts(), &expected[..]);
    assert_eq!(expected.iter().sum::<f64>(), 90.0);
    let unweighted = learned(fresh.clone(), &x, &y, 0..30);
    let merged = merge(&[&unweighted, &unweighted], Method::Information, None, None).unwrap();
    assert!(merged.class_counts().is_empty());
}
