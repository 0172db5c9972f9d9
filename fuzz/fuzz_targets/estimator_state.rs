//! Arbitrary named states through `Model::from_state`, the path of pickles, `.cwrs` files
//! and the river adapter, for every primal form (identity, diagonal, full, low-rank, AdaGrad's
//! and FTRL's state) and the dual form, with averaging, process noise (a constant q or "auto")
//! and the rules that count rounds. A model is configured, learns a few rows and saves its
//! state; that state must come back as the same state. Then float entries of it (mean,
//! covariance, sums, detector statistics, L1 state, ...) and its counters are replaced by
//! arbitrary values: the result must be refused with `Err` or give a model that predicts,
//! learns and saves a state that is accepted back. Never a panic.
#![no_main]

use arbitrary::Arbitrary;
use cwrs::model::{Model, Targets};
use cwrs::rules::{REGRESSION_RULE_NAMES, RULE_NAMES};
use cwrs::model::state::{State, Value};
use cwrs::{Matrix, Presentation};
use libfuzzer_sys::fuzz_target;

const FORMS: [&str; 6] = ["identity", "diag", "full", "lowrank", "adagrad", "ftrl"];
const KERNELS: [&str; 3] = ["linear", "rbf", "poly"];
const MAX_LEN: usize = 1 << 12;

/// A float: mostly small exact values, sometimes special ones, sometimes any bit pattern.
#[derive(Arbitrary, Clone, Copy, Debug)]
enum Number {
    Small(i8),
    Special(u8),
    Raw(f64),
}

const SPECIALS: [f64; 10] = [
    0.0,
    -0.0,
    1.0,
    f64::NAN,
    f64::INFINITY,
    f64::MIN_POSITIVE,
    5e-324,
    f64::MAX,
    1e300,
    -1e154,
];

impl Number {
    fn get(self) -> f64 {
        match self {
            Number::Small(k) => f64::from(k) / 8.0,
            Number::Special(k) => SPECIALS[usize::from(k) % SPECIALS.len()],
            Number::Raw(x) => x,
        }
    }
}

/// What the model is.
#[derive(Arbitrary, Debug)]
struct Setup {
    kind: u8,
    rule: u8,
    form: u8,
    rank: u8,
    kernel: Option<u8>,
    n_features: u8,
    fit_intercept: bool,
    average: Option<u8>,
    /// None: no noise; Some(None): "auto"; Some(Some(q)): a constant q.
    noise: Option<Option<Number>>,
    rows: Vec<Vec<Number>>,
    labels: Vec<u8>,
}

/// One change to a saved state.
#[derive(Arbitrary, Debug)]
enum Corruption {
    /// Float entry (by position among them) replaced by these values, `Longer`/`Shorter`
    /// than it was by the second number, or the same length.
    Floats(u8, Vec<Number>, i8),
    /// Integer entry (by position among them) set to this value.
    Int(u8, i64),
    /// Entry (by position) removed.
    Remove(u8),
}

#[derive(Arbitrary, Debug)]
struct Case {
    setup: Setup,
    corruptions: Vec<Corruption>,
}

impl Setup {
    fn kind(&self) -> &'static str {
        match (self.kind % 3, self.kernel.is_some()) {
            (0, false) => "binary",
            (1, false) => "multiclass",
            (2, _) => "regressor",
            (0, true) => "kernel",
            _ => "multiclass_kernel",
        }
    }

    fn n_features(&self) -> usize {
        usize::from(self.n_features % 6)
    }

    fn config(&self) -> State<'static> {
        let kind = self.kind();
        let form = FORMS[usize::from(self.form) % FORMS.len()];
        let rule = match (kind, form) {
            ("regressor", _) => {
                REGRESSION_RULE_NAMES[usize::from(self.rule) % REGRESSION_RULE_NAMES.len()]
            }
            (_, "adagrad") if self.kernel.is_none() => "AdaGrad",
            (_, "ftrl") if self.kernel.is_none() => "FTRL",
            _ => RULE_NAMES[usize::from(self.rule) % RULE_NAMES.len()],
        };
        let mut config = State::default()
            .with("kind", kind)
            .with("rule", rule)
            .with("params", Vec::<(String, f64)>::new())
            .with("n_features", self.n_features())
            .with("fit_intercept", self.fit_intercept)
            .with("a", 1.0)
            .with("covariance", form)
            .with("rank", 1 + usize::from(self.rank % 3))
            .with("penalty", None::<String>)
            .with(
                "strategy",
                if self.rank % 2 == 0 {
                    "max-score"
                } else {
                    "ovr"
                },
            )
            .with("n_classes", 3usize);
        if let Some(kernel) = self.kernel {
            config.set("kernel", KERNELS[usize::from(kernel) % KERNELS.len()]);
            config.set("gamma", 0.5);
            config.set("degree", 2usize);
            config.set("coef0", 1.0);
            config.set("budget", (kernel % 2 == 0).then_some(4usize));
        }
        if let Some(start) = self.average {
            config.set("average", usize::from(start % 4));
        }
        match self.noise {
            None => {}
            Some(None) => config.set("process_noise", "auto"),
            Some(Some(q)) => config.set("process_noise", q.get().abs()),
        }
        config
    }

    /// The rows (dense, at most 8) and their targets for this kind of model.
    fn data(&self) -> (Vec<f64>, Vec<f64>, Vec<usize>) {
        let d = self.n_features();
        let rows: Vec<&Vec<Number>> = self.rows.iter().take(8).collect();
        let x = rows
            .iter()
            .flat_map(|row| (0..d).map(|j| row.get(j).map_or(0.0, |v| v.get())))
            .collect();
        let label = |i: usize| self.labels.get(i).copied().unwrap_or(0);
        let y = (0..rows.len())
            .map(|i| match self.kind() {
                "regressor" => f64::from(label(i)) - 100.0,
                _ if label(i) % 2 == 0 => 1.0,
                _ => -1.0,
            })
            .collect();
        let classes = (0..rows.len()).map(|i| usize::from(label(i) % 3)).collect();
        (x, y, classes)
    }
}

/// Predicts, then learns the rows as a batch and each alone.
fn exercise(model: &mut Model, setup: &Setup) {
    let (x, y, classes) = setup.data();
    let n_rows = y.len();
    let matrix = Matrix::Dense {
        values: &x,
        n_rows,
        n_cols: setup.n_features(),
    };
    let width = model.n_classes().unwrap_or(1);
    let mut out = vec![0.0; n_rows * width];
    let _ = model.decision_function(&matrix, &mut out);
    let _ = model.variances(&matrix, &mut out);
    let _ = model.probabilities(&matrix, &mut out);
    let _ = (model.mean(), model.covariance(), model.dense_covariance());
    let _ = (model.dual_coef(), model.support_vectors(), model.n_support());
    let targets = match model.n_classes() {
        Some(_) => Targets::Classes(&classes),
        None => Targets::Values(&y),
    };
    let _ = model.partial_fit(&matrix, targets, Presentation::default());
    for i in 0..n_rows {
        let target = match model.n_classes() {
            Some(_) => classes[i] as f64,
            None => y[i],
        };
        let row = cwrs::Row::Dense(&x[i * setup.n_features()..(i + 1) * setup.n_features()]);
        let _ = model.learn(row, target);
    }
}

/// Whether every float of the state is finite (a learned state with inf or NaN, after rows of
/// huge values, may be refused).
fn finite(state: &State) -> bool {
    state.entries.values().all(|value| match value {
        Value::Floats(x) => x.iter().all(|v| v.is_finite()),
        Value::Float(v) => v.is_finite(),
        Value::States(states) => states.iter().all(finite),
        _ => true,
    })
}

/// `state` with one change.
fn corrupted(mut state: State<'static>, change: &Corruption) -> State<'static> {
    let keys: Vec<String> = state.entries.keys().cloned().collect();
    let pick = |filter: &dyn Fn(&Value) -> bool, k: u8| {
        let keys: Vec<&String> = keys
            .iter()
            .filter(|key| filter(&state.entries[*key]))
            .collect();
        (!keys.is_empty()).then(|| keys[usize::from(k) % keys.len()].clone())
    };
    match change {
        Corruption::Floats(k, values, delta) => {
            if let Some(key) = pick(&|v| matches!(v, Value::Floats(_)), *k) {
                let Value::Floats(old) = &state.entries[&key] else {
                    unreachable!()
                };
                let n = (old.len() as i64 + i64::from(*delta % 4)).clamp(0, MAX_LEN as i64);
                let new: Vec<f64> = match values.is_empty() {
                    true => vec![1.0; n as usize],
                    false => (0..n as usize)
                        .map(|i| values[i % values.len()].get())
                        .collect(),
                };
                state.set(&key, new);
            }
        }
        Corruption::Int(k, value) => {
            if let Some(key) = pick(&|v| matches!(v, Value::Int(_)), *k) {
                state.set(&key, Value::Int(*value));
            }
        }
        Corruption::Remove(k) => {
            if let Some(key) = pick(&|_| true, *k) {
                state.entries.remove(&key);
            }
        }
    }
    state
}

fuzz_target!(|case: Case| {
    let Ok(mut model) = Model::new(case.setup.config(), None) else {
        return;
    };
    exercise(&mut model, &case.setup);
    let state = model.state();
    // What the model saves, it takes back, as the same state.
    match Model::from_state(&state, None) {
        Ok(restored) if finite(&state) => assert_eq!(restored.state(), state),
        Ok(_) => {}
        Err(e) => assert!(!finite(&state), "the learned state is refused: {e}"),
    }
    let mut state = state;
    for change in case.corruptions.iter().take(4) {
        state = corrupted(state, change);
    }
    let Ok(mut model) = Model::from_state(&state, None) else {
        return;
    };
    exercise(&mut model, &case.setup);
    let state = model.state();
    if finite(&state) {
        if let Err(e) = Model::from_state(&state, None) {
            panic!("a learned state is refused: {e}");
        }
    }
});
