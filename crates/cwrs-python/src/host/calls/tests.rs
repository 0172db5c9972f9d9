//! The calls of a host against the core methods they drive, made by hand on the same rows.

use super::*;
use cwrs::model::state::Value;
use cwrs::model::AnyLearner;
use cwrs::test_rng::uniform;

const N_FEATURES: usize = 4;

/// The host's error in these tests.
#[derive(Debug)]
enum HostError {
    Internal(String),
    Core(CwError),
    Raised(&'static str),
}

impl From<Internal> for HostError {
    fn from(err: Internal) -> Self {
        HostError::Internal(err.0)
    }
}

impl From<CwError> for HostError {
    fn from(err: CwError) -> Self {
        HostError::Core(err)
    }
}

/// A host that runs detached work where it is.
#[derive(Clone, Copy)]
struct Here;

impl Detach for Here {
    fn run_detached<R: Send>(self, f: impl FnOnce() -> R + Send) -> R {
        f()
    }
}

fn config(kind: &'static str) -> State<'static> {
    let names = [("kind", kind), ("rule", "AROW"), ("covariance", "diag")];
    let config = names
        .into_iter()
        .fold(State::default(), |c, (k, v)| c.with(k, v));
    let config = config.with("strategy", "max-score").with("a", 1.0);
    let config = config.with("params", vec![("r".to_string(), 0.5)]);
    let config = config
        .with("n_features", N_FEATURES)
        .with("n_classes", 3usize);
    config
        .with("fit_intercept", true)
        .with("penalty", None::<String>)
}

fn estimator(kind: &'static str) -> Model {
    Model::new(config(kind), None).unwrap()
}

/// `n` rows and their labels ±1.
fn rows(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut next = uniform(seed);
    let x = (0..n * N_FEATURES).map(|_| next()).collect::<Vec<_>>();
    let y = x
        .chunks(N_FEATURES)
        .map(|r| if r[0] - r[2] > 0.0 { 1.0 } else { -1.0 });
    let y = y.collect();
    (x, y)
}

fn dense(x: &[f64]) -> Matrix<'_> {
    Matrix::Dense {
        values: x,
        n_rows: x.len() / N_FEATURES,
        n_cols: N_FEATURES,
    }
}

fn moments(e: &Model) -> (Vec<f64>, Vec<f64>) {
    (e.mean().unwrap(), e.covariance().unwrap())
}

/// The moments of a shared model.
fn moments_of(model: &Guarded<Model, HostError>) -> (Vec<f64>, Vec<f64>) {
    let read = model.read(Here, "read", Work::Quick, |e| Ok(moments(e)));
    read.unwrap()
}

fn never() -> Result<(), HostError> {
    Ok(())
}

#[test]
fn models_are_built_from_held_entries_and_a_bad_configuration_is_an_invalid_parameter() {
    struct NoArray;
    impl HeldArray for NoArray {
        fn value(&self) -> Value<'_> {
            Value::None
        }
    }
    let held = |state: State<'static>| {
        let entries = state.entries.into_iter();
        let entries = entries.map(|(k, v)| (k.to_string(), Held::<NoArray>::Value(v)));
        entries.collect::<Vec<_>>()
    };
    let built = build_model(Ok(held(config("binary"))), None, false, Here).unwrap();
    assert_eq!(moments(&built), moments(&estimator("binary")));
    let bad = held(config("binary").with("rule", "nope"));
    let err = build_model(Ok(bad), None, false, Here).unwrap_err();
    assert!(matches!(err, CwError::InvalidParameter(_)), "{err:?}");
    // A malformed entry the host met is an invalid parameter in a configuration too.
    let unread = Err::<Vec<(String, Held<NoArray>)>, _>(CwError::InvalidState("entry".into()));
    let err = build_model(unread, None, false, Here).unwrap_err();
    assert_eq!(err, CwError::InvalidParameter("entry".into()));
    let mut state = held(config("binary"));
    state.push(("version".into(), Held::Value(Value::Int(1))));
    let err = build_model(Ok(state), None, true, Here).unwrap_err();
    assert!(matches!(err, CwError::InvalidState(_)), "{err:?}");
}

#[test]
fn partial_fit_learns_as_the_estimator_does_and_refuses_targets_of_the_wrong_kind() {
    let (x, y) = rows(30, 3);
    let mut by_hand = estimator("binary");
    let all = Presentation::default();
    by_hand
        .partial_fit(&dense(&x), Targets::Values(&y), all)
        .unwrap();
    let model = Guarded::<_, HostError>::new("Model", estimator("binary"));
    let cost = CallCost::of(&estimator("binary"));
    let targets = Targets::Values(&y);
    partial_fit(
        (&model, Here),
        (cost, &dense(&x), targets),
        (None, None, false),
        None,
        never,
    )
    .unwrap();
    let learned = moments_of(&model);
    assert_eq!(learned, moments(&by_hand));
    let classes = vec![0; 30];
    let wrong = Targets::Classes(&classes);
    let refused = partial_fit(
        (&model, Here),
        (cost, &dense(&x), wrong),
        (None, None, false),
        None,
        never,
    );
    assert!(matches!(
        refused,
        Err(HostError::Core(CwError::InvalidInput(_)))
    ));
}

#[test]
fn sharded_passes_are_the_passes_of_a_sharded_fit_and_stop_at_a_bad_order() {
    let (x, y) = rows(40, 5);
    let orders = [None, Some((0..40).rev().collect::<Vec<_>>())];
    let (mut by_hand, batch) = (
        estimator("binary"),
        (&dense(&x), Targets::Values(&y), (None, false)),
    );
    let mut fit = ShardedFit::new(&by_hand, 2).unwrap();
    for order in &orders {
        fit.pass(
            &mut by_hand,
            batch.0,
            batch.1,
            (None, false),
            order.as_deref(),
            None,
        )
        .unwrap();
    }
    let model = Guarded::<_, HostError>::new("Model", estimator("binary"));
    let passes = orders.iter().cloned().map(Ok);
    fit_sharded((&model, Here), 2, batch, passes, never).unwrap();
    let learned = moments_of(&model);
    assert_eq!(learned, moments(&by_hand));
    // An order the host cannot give ends the fit with its error, after the passes before it.
    let model = Guarded::<_, HostError>::new("Model", estimator("binary"));
    let passes = [Ok(None), Err(HostError::Raised("bad order")), Ok(None)];
    let failed = fit_sharded((&model, Here), 2, batch, passes, never);
    assert!(matches!(failed, Err(HostError::Raised("bad order"))));
    assert_eq!(moments_of(&model), one_pass_in_two_shards(batch.0, batch.1));
}

/// The moments of a fresh binary model after one pass over `x` in two shards, in stored order.
fn one_pass_in_two_shards(x: &Matrix, targets: Targets) -> (Vec<f64>, Vec<f64>) {
    let mut by_hand = estimator("binary");
    let mut fit = ShardedFit::new(&by_hand, 2).unwrap();
    fit.pass(&mut by_hand, x, targets, (None, false), None, None)
        .unwrap();
    moments(&by_hand)
}

/// Nothing changes the model between a sharded fit's copies and its passes: the fit holds it
/// throughout. A change from where the orders are drawn (before, between the copies and the
/// first pass, so that the pass merged copies of a model that was no longer the model) is
/// refused as a call from inside a call on the same model, and the fit is that of the model as
/// it was.
#[test]
fn nothing_changes_the_model_between_the_copies_of_a_sharded_fit_and_its_passes() {
    let ((x, y), (other_x, other_y)) = (rows(40, 5), rows(10, 6));
    let batch = (&dense(&x), Targets::Values(&y), (None, false));
    let model = Guarded::<_, HostError>::new("Model", estimator("binary"));
    let change = std::sync::Mutex::new(None);
    let orders = std::iter::once_with(|| {
        let changed = model.write(Here, "partial_fit", Work::Batch, |e| {
            let other = (&dense(&other_x), Targets::Values(&other_y));
            Ok(e.partial_fit(other.0, other.1, Presentation::default())?)
        });
        *change.lock().unwrap() = Some(changed);
        Ok(None)
    });
    fit_sharded((&model, Here), 2, batch, orders, never).unwrap();
    let change = change.into_inner().unwrap();
    assert!(
        matches!(&change, Some(Err(HostError::Internal(m))) if m.contains("from inside")),
        "{change:?}"
    );
    assert_eq!(moments_of(&model), one_pass_in_two_shards(batch.0, batch.1));
}

/// Rows in a pass of two shards of which each is still learning when the check is first asked.
const LONG_PASS: usize = 2_000_000;

/// Ctrl-C during a pass whose other shard meets a bad row: the interrupt is the error, as for
/// `partial_fit` (the row that is reported, if any, depends on when each shard stopped), and
/// the model is as it was. Shard 0 is still learning when the check is first asked.
#[test]
fn an_interrupt_during_a_sharded_pass_wins_over_a_bad_row() {
    let (mut x, y) = rows(LONG_PASS, 5);
    x[(LONG_PASS / 2 + 10) * N_FEATURES] = f64::NAN;
    assert_interrupted_in_two_shards(&x, &y);
}

/// A fit of `x` in two shards whose check always fails: the fit ends with the interrupt, the
/// model as it was.
fn assert_interrupted_in_two_shards(x: &[f64], y: &[f64]) {
    let model = Guarded::<_, HostError>::new("Model", estimator("binary"));
    let batch = (&dense(x), Targets::Values(y), (None, false));
    let interrupted = || Err(HostError::Raised("interrupted"));
    let fitted = fit_sharded((&model, Here), 2, batch, [Ok(None)], interrupted);
    assert!(
        matches!(fitted, Err(HostError::Raised("interrupted"))),
        "{fitted:?}"
    );
    let learned = moments_of(&model);
    assert_eq!(learned, moments(&estimator("binary")));
}

/// Ctrl-C during a long pass of two shards: the fit ends with the interrupt and the model as it
/// was.
#[test]
fn an_interrupt_ends_a_long_sharded_pass() {
    let (x, y) = rows(LONG_PASS, 6);
    assert_interrupted_in_two_shards(&x, &y);
}

#[test]
fn a_file_is_learned_as_its_rows_are_and_errors_name_the_file_and_line() {
    let dir = std::env::temp_dir().join(format!("cwrs-calls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rows.svm");
    std::fs::write(&path, "2 1:0.5 3:-1\n1 2:2\n3 1:1 2:1 3:1\n2 3:0.25\n").unwrap();
    let model = Guarded::<_, HostError>::new("Model", estimator("multiclass"));
    let classes = Some(vec![1.0, 2.0, 3.0]);
    let file = (path.as_path(), false, 3); // chunks of 3 rows: 2 chunks
    learn_file((&model, Here), file, N_FEATURES, classes.clone(), never).unwrap();
    let x = [
        [0.5, 0.0, -1.0, 0.0],
        [0.0, 2.0, 0.0, 0.0],
        [1.0, 1.0, 1.0, 0.0],
        [0.0, 0.0, 0.25, 0.0],
    ]
    .concat();
    let mut by_hand = estimator("multiclass");
    let classes_of_rows = [1, 0, 2, 1];
    let all = Presentation::default();
    by_hand
        .partial_fit(&dense(&x), Targets::Classes(&classes_of_rows), all)
        .unwrap();
    let learned = moments_of(&model);
    assert_eq!(learned, moments(&by_hand));
    std::fs::write(&path, "2 1:0.5\n7 2:1\n").unwrap();
    let failed = learn_file((&model, Here), file, N_FEATURES, classes, never);
    let Err(HostError::Core(CwError::InvalidInput(message))) = failed else {
        panic!("{failed:?}");
    };
    assert!(
        message.contains("rows.svm") && message.contains("line 2"),
        "{message}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn merge_copies_the_models_and_merges_them_as_the_core_does() {
    let (x, y) = rows(20, 9);
    let mut parts = [estimator("binary"), estimator("binary")];
    for (part, half) in parts.iter_mut().zip([0..10, 10..20]) {
        let rows = dense(&x[half.start * N_FEATURES..half.end * N_FEATURES]);
        let y = Targets::Values(&y[half]);
        part.partial_fit(&rows, y, Presentation::default()).unwrap();
    }
    let refs = parts.iter().collect::<Vec<_>>();
    let by_hand = merge::merge(&refs, merge::Method::Auto, None, None).unwrap();
    let models = parts.map(|p| Guarded::<_, HostError>::new("Model", p));
    let models = models.iter().collect::<Vec<_>>();
    let merged = super::merge(&models, None, Here, "auto", None).unwrap();
    assert_eq!(moments(&merged), moments(&by_hand));
    assert!(matches!(
        super::merge(&models, None, Here, "nope", None),
        Err(HostError::Core(CwError::InvalidParameter(_)))
    ));
    assert!(matches!(merged.model(), AnyLearner::Binary(_)));
}

#[test]
fn class_probabilities_pair_each_binary_probability_with_its_complement() {
    let (x, y) = rows(6, 11);
    let mut binary = estimator("binary");
    binary
        .partial_fit(&dense(&x), Targets::Values(&y), Presentation::default())
        .unwrap();
    let (mut p, mut both) = (vec![0.0; 6], vec![-1.0; 12]);
    binary.probabilities(&dense(&x), &mut p).unwrap();
    binary.class_probabilities(&dense(&x), &mut both).unwrap();
    let pairs = p.iter().flat_map(|&p| [1.0 - p, p]).collect::<Vec<_>>();
    assert!(p.iter().any(|&p| p != 0.5));
    assert_eq!(both, pairs);
    let multiclass = estimator("multiclass");
    let (mut per_class, mut same) = (vec![0.0; 18], vec![-1.0; 18]);
    multiclass
        .probabilities(&dense(&x), &mut per_class)
        .unwrap();
    multiclass
        .class_probabilities(&dense(&x), &mut same)
        .unwrap();
    assert_eq!(same, per_class);
}
