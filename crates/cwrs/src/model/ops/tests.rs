use super::*;
use crate::data::{Matrix, Presentation};
use crate::error::CwError;
use crate::model::Targets;

const NARROW: usize = 4;
const WIDE: usize = 7;
const ROWS: usize = 40;

/// Rows `n_features` wide whose first NARROW columns come from a fixed generator (the rest 0
/// unless `fill_all`), with labels ±1 and class indices 0..3 from a fixed rule.
fn rows(n_features: usize, fill_all: bool) -> (Vec<f64>, Vec<f64>, Vec<usize>) {
    let mut seed = 987654321u64;
    let mut next = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let mut x = vec![0.0; ROWS * n_features];
    for row in x.chunks_mut(n_features) {
        let used = if fill_all { n_features } else { NARROW };
        row[..used].iter_mut().for_each(|v| *v = next());
    }
    let y = (x.chunks(n_features))
        .map(|r| {
            if r[0] - r[1] + 0.5 * r[2] > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    let classes = (x.chunks(n_features))
        .map(|r| usize::from(r[0] > 0.0) + usize::from(r[3] > 0.1))
        .collect();
    (x, y, classes)
}

fn config(kind: &str, rule: &str, params: &[(&str, f64)], covariance: &str) -> State<'static> {
    let params = (params.iter())
        .map(|(k, v)| (k.to_string(), *v))
        .collect::<Vec<_>>();
    State::default()
        .with("kind", kind)
        .with("rule", rule)
        .with("params", params)
        .with("n_features", NARROW)
        .with("fit_intercept", true)
        .with("a", 0.7)
        .with("covariance", covariance)
        .with("rank", 2usize)
        .with("strategy", "ovr")
        .with("n_classes", 3usize)
}

/// Every primal kind and form, with L1, averaging and process noise (lazy on the diagonal
/// form, a pending growth on the full form).
fn primal_configs() -> Vec<State<'static>> {
    let arow = |kind, form| config(kind, "AROW", &[("r", 1.0)], form);
    let l1 = |c: State<'static>| {
        (c.with("penalty", "l1"))
            .with("alpha", 0.01)
            .with("penalize_intercept", false)
    };
    let mut configs = vec![];
    for kind in ["binary", "multiclass", "regressor"] {
        for form in ["diag", "full", "lowrank"] {
            configs.push(arow(kind, form));
            configs.push(arow(kind, form).with("average", 3usize));
            if form != "lowrank" {
                configs.push(arow(kind, form).with("process_noise", 0.01));
            }
        }
        if kind != "regressor" {
            configs.push(config(kind, "PA", &[], "identity"));
        }
        configs.push(l1(arow(kind, "diag")));
    }
    configs.push(config("binary", "AdaGrad", &[], "adagrad"));
    configs.push(config("binary", "FTRL", &[], "ftrl"));
    configs
}

fn learn(model: &mut Model, (x, y, classes): &(Vec<f64>, Vec<f64>, Vec<usize>), n_features: usize) {
    let x = Matrix::Dense {
        values: x,
        n_rows: ROWS,
        n_cols: n_features,
    };
    let targets = match model.n_classes() {
        Some(_) => Targets::Classes(classes),
        None => Targets::Values(y),
    };
    model
        .partial_fit(&x, targets, Presentation::default())
        .unwrap();
}

/// [`learn`] weighted by the running class counts (`class_weight="balanced"`) for a classifier.
fn learn_balanced(model: &mut Model, data: &(Vec<f64>, Vec<f64>, Vec<usize>), n_features: usize) {
    if model.model_config().kind.is_regression() {
        return learn(model, data, n_features);
    }
    let x = Matrix::Dense {
        values: &data.0,
        n_rows: ROWS,
        n_cols: n_features,
    };
    let targets = match model.n_classes() {
        Some(_) => Targets::Classes(&data.2),
        None => Targets::Values(&data.1),
    };
    let balanced = Presentation {
        balanced: true,
        ..Presentation::default()
    };
    model.partial_fit(&x, targets, balanced).unwrap();
    assert!(!model.class_counts().is_empty());
}

/// Scores and variances of every row of `x`, `n_features` wide.
fn predictions(model: &Model, x: &[f64], n_features: usize) -> Vec<f64> {
    let n_rows = x.len() / n_features;
    let x = Matrix::Dense {
        values: x,
        n_rows,
        n_cols: n_features,
    };
    let mut scores = vec![0.0; n_rows * model.n_classes().unwrap_or(1)];
    let mut variances = scores.clone();
    model.decision_function(&x, &mut scores).unwrap();
    model.variances(&x, &mut variances).unwrap();
    [scores, variances].concat()
}

fn assert_close(got: &[f64], expected: &[f64], what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}");
    for (g, e) in got.iter().zip(expected) {
        let tolerance = 1e-12 + 1e-10 * e.abs();
        assert!((g - e).abs() <= tolerance, "{what}: {g} != {e}");
    }
}

/// The variance of a feature never seen after the rows of `rows` (a + q·t, q constant).
fn unseen_variance(config: &State) -> f64 {
    let q = config.float("process_noise").unwrap_or(0.0);
    config.float("a").unwrap() + q * ROWS as f64
}

#[test]
fn a_widened_model_is_the_model_wide_from_the_start() {
    let mut lazy = 0; // models with a lazy noise clock (pending terms: the next test)
    for config in primal_configs() {
        let what = format!("{config:?}");
        let mut narrow = Model::new(config.clone(), None).unwrap();
        learn(&mut narrow, &rows(NARROW, false), NARROW);
        let mut wide = Model::new(config.clone().with("n_features", WIDE), None).unwrap();
        learn(&mut wide, &rows(WIDE, false), WIDE);

        lazy += usize::from(narrow.state().entries.contains_key("noise_clock"));
        let widened = narrow.widened(WIDE, unseen_variance(&config)).unwrap();
        assert_eq!(widened.state().count::<usize>("n_features"), Ok(WIDE));
        // Rows that use the new features too, and a second pass that learns them.
        let (x, _, _) = rows(WIDE, true);
        let (mut widened, mut wide) = (widened, wide);
        assert_close(
            &predictions(&widened, &x, WIDE),
            &predictions(&wide, &x, WIDE),
            &what,
        );
        learn(&mut widened, &rows(WIDE, true), WIDE);
        learn(&mut wide, &rows(WIDE, true), WIDE);
        assert_close(
            &predictions(&widened, &x, WIDE),
            &predictions(&wide, &x, WIDE),
            &what,
        );
    }
    assert!(lazy > 0);
}

#[test]
fn a_full_model_with_pending_terms_widens_exactly() {
    // 33 rows of 40 features: not a multiple of the fold block, so terms are pending.
    const D: usize = 40;
    const N: usize = 33;
    let (x, y, classes) = rows(D, true);
    let padded = |width: usize| {
        let mut wide = vec![0.0; N * width];
        for (row, values) in wide.chunks_mut(width).zip(x.chunks(D)) {
            row[..D].copy_from_slice(values);
        }
        wide
    };
    let learn = |model: &mut Model, x: &[f64], width: usize| {
        let x = Matrix::Dense {
            values: x,
            n_rows: N,
            n_cols: width,
        };
        let targets = match model.n_classes() {
            Some(_) => Targets::Classes(&classes[..N]),
            None => Targets::Values(&y[..N]),
        };
        model
            .partial_fit(&x, targets, Presentation::default())
            .unwrap();
    };
    for kind in ["binary", "multiclass"] {
        let config = config(kind, "AROW", &[("r", 1.0)], "full").with("n_features", D);
        let what = format!("{config:?}");
        let mut narrow = Model::new(config.clone(), None).unwrap();
        learn(&mut narrow, &x[..N * D], D);
        assert!(
            narrow.state().entries.contains_key("pending_terms"),
            "{what}"
        );
        let mut wide = Model::new(config.with("n_features", D + 3), None).unwrap();
        learn(&mut wide, &padded(D + 3), D + 3);
        let widened = narrow.widened(D + 3, 0.7).unwrap();
        let (test, _, _) = rows(D + 3, true);
        let expected = predictions(&wide, &test, D + 3);
        assert_close(&predictions(&widened, &test, D + 3), &expected, &what);
    }
}

#[test]
fn widening_is_refused_for_kernels_and_fewer_features_leaving_the_model_as_it_is() {
    let model = Model::new(config("binary", "AROW", &[("r", 1.0)], "diag"), None).unwrap();
    let error = model.widened(NARROW - 1, 1.0).unwrap_err();
    assert!(
        error.to_string().contains("widening only adds features"),
        "{error}"
    );
    for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let error = model.widened(WIDE, bad).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("unseen_variance must be a positive"),
            "{error}"
        );
    }
    let same = model.widened(NARROW, 1.0).unwrap();
    assert_eq!(
        format!("{:?}", same.state()),
        format!("{:?}", model.state())
    );
    // A width no memory holds is refused before anything is allocated (an allocation failure
    // aborts), as a new model that wide is; past the largest shape, by the shape's own check.
    for (covariance, width) in [("diag", 1usize << 45), ("full", 1 << 24)] {
        let model = Model::new(config("binary", "AROW", &[("r", 1.0)], covariance), None).unwrap();
        let error = model.widened(width, 1.0).unwrap_err();
        assert!(
            matches!(error, CwError::OutOfMemory(_)),
            "{covariance}: {error}"
        );
    }
    let error = model.widened(usize::MAX / 2, 1.0).unwrap_err();
    assert!(error.to_string().contains("features (at most"), "{error}");
    let kernel = config("kernel", "AROW", &[("r", 1.0)], "diag")
        .with("kernel", "rbf")
        .with("gamma", 0.5)
        .with("degree", 3i64)
        .with("coef0", 1.0);
    let kernel = Model::new(kernel, None).unwrap();
    let error = kernel.widened(WIDE, 1.0).unwrap_err();
    assert!(
        error.to_string().contains("cannot widen a kernel model"),
        "{error}"
    );
}

#[test]
fn a_binary_model_as_one_vs_rest_is_the_two_class_one_vs_rest_model() {
    for config in primal_configs() {
        if config.string("kind") != Ok("binary") {
            continue;
        }
        let what = format!("{config:?}");
        let data = rows(NARROW, true);
        let mut binary = Model::new(config.clone(), None).unwrap();
        learn(&mut binary, &data, NARROW);
        let two = config
            .clone()
            .with("kind", "multiclass")
            .with("n_classes", 2usize);
        let mut ovr = Model::new(two, None).unwrap();
        let classes = data.1.iter().map(|&y| usize::from(y > 0.0)).collect();
        let data = (data.0, data.1, classes);
        learn(&mut ovr, &data, NARROW);

        let mut grown = binary.as_one_vs_rest().unwrap();
        assert_eq!((grown.kind(), grown.n_classes()), ("multiclass", Some(2)));
        assert_close(
            &predictions(&grown, &data.0, NARROW),
            &predictions(&ovr, &data.0, NARROW),
            &what,
        );
        learn(&mut grown, &data, NARROW);
        learn(&mut ovr, &data, NARROW);
        assert_close(
            &predictions(&grown, &data.0, NARROW),
            &predictions(&ovr, &data.0, NARROW),
            &what,
        );
        assert!(grown.as_one_vs_rest().is_err());
    }
}

#[test]
fn a_prior_class_predicts_the_prior_and_leaves_the_other_classes_as_they_were() {
    for config in primal_configs() {
        if config.string("kind") != Ok("multiclass") {
            continue;
        }
        let what = format!("{config:?}");
        let data = rows(NARROW, true);
        let mut model = Model::new(config.clone(), None).unwrap();
        learn(&mut model, &data, NARROW);
        let a = unseen_variance(&config);
        let grown = model.with_prior_class(a).unwrap();
        assert_eq!(grown.n_classes(), Some(4));
        let (before, after) = (
            predictions(&model, &data.0, NARROW),
            predictions(&grown, &data.0, NARROW),
        );
        for (i, row) in data.0.chunks(NARROW).enumerate() {
            let scores = (&before[3 * i..3 * i + 3], &after[4 * i..4 * i + 3]);
            assert_close(scores.1, scores.0, &what);
            let offset = 3 * ROWS;
            let variances = (
                &before[offset + 3 * i..][..3],
                &after[4 * ROWS + 4 * i..][..3],
            );
            assert_close(variances.1, variances.0, &what);
            assert_eq!(after[4 * i + 3], 0.0, "{what}");
            // First-order rules keep Σ = I whatever a is; predictions see the next round's
            // process noise too.
            let q = config.float("process_noise").unwrap_or(0.0);
            let prior = if config.string("covariance") == Ok("identity") {
                1.0
            } else {
                a + q
            };
            let norm2 = row.iter().map(|v| v * v).sum::<f64>() + 1.0;
            assert_close(&[after[4 * ROWS + 4 * i + 3]], &[prior * norm2], &what);
        }
    }
    let max_score =
        config("multiclass", "AROW", &[("r", 1.0)], "diag").with("strategy", "max-score");
    let error = Model::new(max_score, None)
        .unwrap()
        .with_prior_class(1.0)
        .unwrap_err();
    assert!(
        error.to_string().contains("only a one-vs-rest model grows"),
        "{error}"
    );
}

/// Every kind, kernels included, for the delta round trip.
fn every_config() -> Vec<State<'static>> {
    let kernel = |kind| {
        config(kind, "AROW", &[("r", 1.0)], "diag")
            .with("kernel", "rbf")
            .with("gamma", 0.5)
            .with("degree", 3i64)
            .with("coef0", 1.0)
            .with("budget", 9usize)
    };
    let mut configs = primal_configs();
    configs.push(kernel("kernel"));
    configs.push(kernel("multiclass_kernel"));
    configs
}

fn assert_same_bits(got: &Model, expected: &Model, what: &str) {
    assert_eq!(
        format!("{:?}", got.state()),
        format!("{:?}", expected.state()),
        "{what}"
    );
}

#[test]
fn a_delta_rebuilds_the_model_bit_for_bit_touched_or_whole() {
    let wide = 60usize;
    for config in every_config() {
        let config = config.with("n_features", wide);
        let what = format!("{config:?}");
        // Rows that use the first NARROW of 60 features: a per-coordinate state is touched.
        let (narrow, y, classes) = rows(NARROW, true);
        let mut x = vec![0.0; ROWS * wide];
        for (row, values) in x.chunks_mut(wide).zip(narrow.chunks(NARROW)) {
            row[..NARROW].copy_from_slice(values);
        }
        let data = (x, y, classes);
        let fresh = Model::new(config.clone(), None).unwrap();
        let mut base = fresh.clone();
        learn(&mut base, &data, wide);
        let mut end = base.clone();
        // The class counts of "balanced" are a whole array beside the coordinates.
        learn_balanced(&mut end, &data, wide);

        for (start, from) in [(&base, Some(&base)), (&fresh, None)] {
            let delta = end.delta_since(start);
            // One value per coordinate in every array: the diagonal form and the rules' own
            // per-coordinate sums (the identity form's covariance is empty, the lazy noise
            // clock holds two values per model).
            let per_coordinate = matches!(config.string("covariance"), Ok("diag" | "adagrad" | "ftrl"))
                && !config.entries.contains_key("process_noise")
                // A multiclass L1 model keeps one clock total per class.
                && !(config.entries.contains_key("penalty") && config.string("kind") == Ok("multiclass"))
                && config.string("kind").is_ok_and(|k| !k.contains("kernel"));
            let touched = matches!(delta, ModelDelta::Touched { .. });
            assert_eq!(touched, per_coordinate, "{what}");
            let again = ModelDelta::from_state(delta.to_state()).unwrap();
            assert_eq!(format!("{again:?}"), format!("{delta:?}"), "{what}");
            assert_same_bits(&again.apply(from).unwrap(), &end, &what);
        }
    }
}

#[test]
fn a_delta_that_does_not_fit_its_base_is_refused() {
    let config = config("binary", "AROW", &[("r", 1.0)], "diag").with("n_features", 60usize);
    let base = Model::new(config, None).unwrap();
    let mut end = base.clone();
    let x = [1.0; 60];
    let x = Matrix::Dense {
        values: &x[..],
        n_rows: 1,
        n_cols: 60,
    };
    end.partial_fit(&x, Targets::Values(&[1.0]), Presentation::default())
        .unwrap();
    let mut row = [0.0; 60];
    row[3] = 2.0;
    let x = Matrix::Dense {
        values: &row[..],
        n_rows: 1,
        n_cols: 60,
    };
    let mut sparse = base.clone();
    sparse
        .partial_fit(&x, Targets::Values(&[1.0]), Presentation::default())
        .unwrap();
    let delta = sparse.delta_since(&base);
    let ModelDelta::Touched { touched, .. } = &delta else {
        panic!("{delta:?}")
    };
    assert_eq!(touched, &[3, 60]);
    let mut state = delta.to_state();
    state.set(TOUCHED, vec![3u64, 600]);
    let bad = ModelDelta::from_state(state).unwrap();
    let error = bad.apply(Some(&base)).unwrap_err();
    assert!(matches!(error, CwError::InvalidState(_)), "{error}");
    // Applied to another base, a delta gives that base with the changed coordinates.
    assert!(delta.apply(Some(&end)).is_ok());
}
