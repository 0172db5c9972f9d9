use super::*;
use crate::model::state::State;
use crate::test_rng::uniform;

const N_FEATURES: usize = 6;
const N_ROWS: usize = 40;

/// The linear kinds, each with the options that change how it learns.
fn configs() -> Vec<State<'static>> {
    let config = |kind: &str, covariance: &str| {
        let texts = [
            ("kind", kind),
            ("rule", "AROW"),
            ("covariance", covariance),
            ("strategy", "max-score"),
        ];
        let numbers = State::default()
            .with("params", vec![("r".to_string(), 1.0)])
            .with("n_features", N_FEATURES)
            .with("n_classes", 3usize)
            .with("fit_intercept", true)
            .with("a", 1.0);
        let state = texts
            .into_iter()
            .fold(numbers, |s, (key, text)| s.with(key, text));
        state.with("penalty", None::<String>)
    };
    vec![
        config("binary", "diag"),
        config("binary", "full"),
        config("binary", "diag")
            .with("penalty", "l1")
            .with("alpha", 0.01)
            .with("penalize_intercept", false),
        config("binary", "diag").with("average", 3i64),
        config("binary", "diag").with("process_noise", "auto"),
        config("multiclass", "diag"),
        config("multiclass", "full").with("strategy", "ovr"),
        config("regressor", "diag"),
    ]
}

/// Spoils a row of a batch, given the position of its first stored entry.
type Spoiler = fn(&mut Batch, usize);

/// A CSR batch: row i keeps the features j with (i + j) % 3 != 0, values in (-0.5, 0.5).
struct Batch {
    values: Vec<f64>,
    indices: Vec<i64>,
    indptr: Vec<i64>,
    signs: Vec<f64>,
    classes: Vec<usize>,
}

impl Batch {
    fn new() -> Self {
        Self::of(N_ROWS)
    }

    fn of(n_rows: usize) -> Self {
        let mut next = uniform(17);
        let mut batch = Batch {
            values: vec![],
            indices: vec![],
            indptr: vec![0],
            signs: vec![],
            classes: vec![],
        };
        for i in 0..n_rows {
            let mut score = 0.0;
            for j in (0..N_FEATURES).filter(|j| (i + j) % 3 != 0) {
                let value = next();
                score += value * (j as f64 - 2.0);
                batch.values.push(value);
                batch.indices.push(j as i64);
            }
            batch.indptr.push(batch.indices.len() as i64);
            batch.signs.push(if score > 0.0 { 1.0 } else { -1.0 });
            batch.classes.push((score.abs() * 4.0) as usize % 3);
        }
        batch
    }

    fn matrix(&self) -> Matrix<'_> {
        Matrix::Csr64 {
            values: &self.values,
            indices: &self.indices,
            indptr: &self.indptr,
            n_cols: N_FEATURES,
        }
    }

    fn targets(&self, estimator: &Model) -> Targets<'_> {
        match estimator.n_classes() {
            Some(_) => Targets::Classes(&self.classes),
            None => Targets::Values(&self.signs),
        }
    }

    /// Spoils row `i` with `spoil`, given the position of its first stored entry.
    fn spoiled(mut self, spoil: Spoiler, i: usize) -> Self {
        let first = self.indptr[i] as usize;
        spoil(&mut self, first);
        self
    }
}

/// The same model, restored from its state: not fresh, so it validates a batch before it
/// learns it (the path every later call takes).
fn not_fresh(estimator: &mut Model) -> Model {
    let restored = Model::from_state(&estimator.state(), None).unwrap();
    assert!(!restored.is_fresh());
    restored
}

/// Presentations: every row; weights with zeros; an order that repeats rows and leaves some out.
fn presentations<'a>(weights: &'a [f64], order: &'a [usize]) -> [Presentation<'a>; 4] {
    let weighted = Presentation {
        weights: Some(weights),
        ..Presentation::default()
    };
    let ordered = Presentation {
        order: Some(order),
        ..Presentation::default()
    };
    let both = Presentation {
        weights: Some(weights),
        order: Some(order),
        stop: None,
        balanced: false,
    };
    [Presentation::default(), weighted, ordered, both]
}

fn weights_and_order() -> (Vec<f64>, Vec<usize>) {
    let repeats = (0..N_ROWS).map(|i| (i % 3) as f64 * 0.75).collect();
    // Rows 1, 4, 7, ... are left out; row 0 comes three times, twice in a row.
    let order = [0, 0, 9, 0]
        .into_iter()
        .chain((2..N_ROWS).filter(|i| i % 3 != 1))
        .collect();
    (repeats, order)
}

#[test]
fn a_fresh_model_learns_the_same_bits_as_one_that_validates_first() {
    let batch = Batch::new();
    let (repeats, order) = weights_and_order();
    for config in configs() {
        for presentation in presentations(&repeats, &order) {
            let mut fresh = Model::new(config.clone(), None).unwrap();
            assert!(fresh.is_fresh());
            let mut validating = not_fresh(&mut fresh);
            let targets = batch.targets(&fresh);
            fresh
                .partial_fit(&batch.matrix(), targets, presentation)
                .unwrap();
            assert!(!fresh.is_fresh());
            validating
                .partial_fit(&batch.matrix(), targets, presentation)
                .unwrap();
            assert!(fresh.n_updates() > 0);
            assert_eq!(fresh.state(), validating.state(), "{config:?}");
        }
    }
}

/// A batch with bad rows refused by a fresh model: the error of the model that validates
/// first, and the model as built (still fresh, then learning as a fresh one).
fn check_refused(config: &State<'static>, batch: &Batch, presentation: Presentation, what: &str) {
    let n_rows = batch.signs.len();
    let mut fresh = Model::new(config.clone(), None).unwrap();
    let built = fresh.state();
    let mut validating = not_fresh(&mut fresh);
    let targets = batch.targets(&fresh);
    let expected = validating.partial_fit(&batch.matrix(), targets, presentation);
    let refused = fresh.partial_fit(&batch.matrix(), targets, presentation);
    assert!(expected.is_err(), "{what}");
    assert_eq!(refused, expected, "{what}");
    assert!(fresh.is_fresh(), "{what}");
    assert_eq!(fresh.state(), built, "{what}");
    let good = Batch::of(n_rows);
    let (mut again, mut new) = (fresh, Model::new(config.clone(), None).unwrap());
    let targets = good.targets(&new);
    again
        .partial_fit(&good.matrix(), targets, presentation)
        .unwrap();
    new.partial_fit(&good.matrix(), targets, presentation)
        .unwrap();
    assert_eq!(again.state(), new.state(), "{what}");
}

#[test]
fn a_bad_row_anywhere_leaves_a_fresh_model_as_built_with_the_same_error() {
    let (repeats, order) = weights_and_order();
    // Row 0 first, row 20 inside, the last row; row 4 weighs 0 (4 % 3 = 1) and is not in order.
    // (what, the spoiling of row i whose first stored entry is at p)
    let spoilers: [(&str, Spoiler); 4] = [
        ("NaN", |b, p| b.values[p + 1] = f64::NAN),
        ("unsorted", |b, p| b.indices.swap(p, p + 1)),
        ("repeated", |b, p| b.indices[p + 1] = b.indices[p]),
        ("out of range", |b, p| b.indices[p + 2] = 99),
    ];
    for config in configs() {
        for (p, presentation) in presentations(&repeats, &order).into_iter().enumerate() {
            for row in [0, 20, N_ROWS - 1, 4] {
                for (what, spoil) in spoilers {
                    let batch = Batch::new().spoiled(spoil, row);
                    let what = format!("{what} in row {row}, presentation {p}: {config:?}");
                    check_refused(&config, &batch, presentation, &what);
                }
            }
            // Two bad rows: a NaN, then a bad index, which validating first reports (indices
            // are checked before values).
            let batch = Batch::new()
                .spoiled(spoilers[0].1, 2)
                .spoiled(spoilers[3].1, N_ROWS - 2);
            check_refused(
                &config,
                &batch,
                presentation,
                &format!("two rows, {p}: {config:?}"),
            );
        }
    }
}

#[test]
fn bad_targets_and_a_bad_row_give_the_rows_error_as_when_validating_first() {
    let mut batch = Batch::new();
    batch.values[3] = f64::INFINITY;
    batch.signs[5] = 0.5;
    batch.classes[5] = 7;
    for config in configs() {
        check_refused(
            &config,
            &batch,
            Presentation::default(),
            &format!("{config:?}"),
        );
    }
}

/// The same with a batch that a second core validates ahead (when there is one), and in a
/// sharded pass: the rows' error too, not the targets'.
#[test]
fn bad_targets_and_a_bad_row_give_the_rows_error_validated_ahead_and_sharded() {
    use crate::learn::online::VALIDATION_CHUNK;
    use crate::parallel::sharded::ShardedFit;
    let n_rows = 2 * VALIDATION_CHUNK + 100;
    let mut batch = Batch::of(n_rows).spoiled(|b, p| b.values[p] = f64::NAN, n_rows - 2);
    batch.signs[5] = 0.5;
    batch.classes[5] = 7;
    let rows_error = batch
        .matrix()
        .validate_rows(0..n_rows, N_FEATURES)
        .unwrap_err();
    for config in configs() {
        let mut fresh = Model::new(config.clone(), None).unwrap();
        let mut validating = not_fresh(&mut fresh);
        let targets = batch.targets(&fresh);
        for model in [&mut fresh, &mut validating] {
            let refused = model.partial_fit(&batch.matrix(), targets, Presentation::default());
            assert_eq!(refused, Err(rows_error.clone()), "{config:?}");
        }
        // (Process noise "auto" cannot be merged, so not sharded.)
        let Ok(mut fit) = ShardedFit::new(&validating, 2) else {
            continue;
        };
        let refused = fit.pass(
            &mut validating,
            &batch.matrix(),
            targets,
            (None, false),
            None,
            None,
        );
        assert_eq!(refused, Err(rows_error.clone()), "sharded: {config:?}");
    }
}

#[test]
fn learning_one_row_or_being_restored_or_changed_in_place_ends_freshness() {
    let batch = Batch::new();
    for config in configs() {
        let mut estimator = Model::new(config.clone(), None).unwrap();
        let target = match batch.targets(&estimator) {
            Targets::Classes(k) => k[0] as f64,
            Targets::Values(y) => y[0],
        };
        estimator.learn(batch.matrix().row(0), target).unwrap();
        assert!(!estimator.is_fresh());
        let mut estimator = Model::new(config.clone(), None).unwrap();
        estimator.model_mut();
        assert!(!estimator.is_fresh());
        let mut estimator = Model::new(config, None).unwrap();
        assert!(!not_fresh(&mut estimator).is_fresh());
    }
}

/// A batch large enough for a second core to validate it ahead of the learner (when there is
/// one): a fresh model learns it without a copy, the same bits; a late bad row leaves it as
/// built, with the same error.
#[test]
fn a_fresh_model_validated_ahead_needs_no_copy() {
    use crate::learn::online::{validate_ahead, VALIDATION_CHUNK};
    let n_rows = 2 * VALIDATION_CHUNK + 100;
    let config = &configs()[0];
    let batch = Batch::of(n_rows);
    let mut fresh = Model::new(config.clone(), None).unwrap();
    let AnyLearner::Binary(learner) = fresh.model() else {
        unreachable!("a binary configuration")
    };
    let ahead = validate_ahead(
        &batch.matrix(),
        &Presentation::default(),
        learner.n_values(),
    );
    assert_eq!(ahead, crate::available_cores() >= 2);
    let mut validating = not_fresh(&mut fresh);
    let targets = batch.targets(&fresh);
    fresh
        .partial_fit(&batch.matrix(), targets, Presentation::default())
        .unwrap();
    validating
        .partial_fit(&batch.matrix(), targets, Presentation::default())
        .unwrap();
    assert_eq!(fresh.state(), validating.state());
    for row in [VALIDATION_CHUNK + 3, n_rows - 1] {
        let batch = Batch::of(n_rows).spoiled(|b, p| b.values[p] = f64::NAN, row);
        check_refused(
            config,
            &batch,
            Presentation::default(),
            &format!("row {row}"),
        );
    }
}
