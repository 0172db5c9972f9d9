//! Operations on a whole model that hosts need between learning calls: the model over more
//! features ([`Estimator::widened`], the river adapter's growing feature space), a binary model
//! as the equal two-class one-vs-rest model ([`Estimator::as_one_vs_rest`]) and one more
//! one-vs-rest class at the prior ([`Estimator::with_prior_class`]), the river adapter's class
//! growth (docs/design.md, river class growth), and the entries a model changed since a base
//! ([`ModelDelta`], what a Dask worker sends back).
//!
//! The structural operations edit the model's state view, each in one function here, and
//! rebuild the model from it: every covariance form, the L1 bookkeeping, the averaging sums
//! and the lazy process-noise and pending-term entries are laid out per coordinate there, and
//! [`Estimator::from_state`] checks the result as it checks any state.

use std::borrow::Cow;

use crate::error::CwError;
use crate::model::state::{State, Value};
use crate::model::Estimator;

/// The entries that describe process noise applied lazily and the full form's pending rank-one
/// terms of the models as they were: a changed state starts from its eager covariance
/// (`covariance_values`), nothing pending.
const LAZY_ENTRIES: [&str; 5] = [
    "noise_clock",
    "noise_variances",
    "pending_counts",
    "pending_bases",
    "pending_terms",
];

/// The model of a changed state, which starts from its eager covariance (see [`LAZY_ENTRIES`]).
fn rebuilt(mut state: State) -> Result<Estimator, CwError> {
    for key in LAZY_ENTRIES {
        state.entries.remove(key);
    }
    Estimator::from_state(&state, None)
}

/// How a linear state lays out its coordinates.
struct Layout {
    /// The models one after another in each per-coordinate array (the classes, or 1).
    models: usize,
    n_features: usize,
    /// Coordinates per model: the features, then the bias if the model fits an intercept.
    dim: usize,
    /// The covariance form's name ("identity", "diag", "full", "lowrank", "adagrad", "ftrl").
    form: String,
}

fn layout(state: &State, operation: &str) -> Result<Layout, CwError> {
    let models = match state.string("kind")? {
        "binary" | "regressor" => 1,
        "multiclass" => state.count("n_classes")?,
        kind => {
            return Err(CwError::InvalidInput(format!(
                "cannot {operation} a {kind} model: only a primal (binary, regressor or \
                 multiclass) model has feature coordinates"
            )))
        }
    };
    let n_features: usize = state.count("n_features")?;
    Ok(Layout {
        models,
        n_features,
        dim: n_features + usize::from(state.bool("fit_intercept")?),
        form: state.string("covariance")?.to_string(),
    })
}

/// `state[key]` with `change(model, part)` in place of each model's part, if the state has it.
fn each_model(
    state: &mut State<'static>,
    key: &str,
    models: usize,
    mut change: impl FnMut(usize, &[f64]) -> Vec<f64>,
) -> Result<(), CwError> {
    if !state.entries.contains_key(key) {
        return Ok(());
    }
    let values = state.floats(key)?;
    if models == 0 || values.len() % models != 0 {
        return Err(CwError::InvalidState(format!(
            "entry {key:?} does not split into {models} models"
        )));
    }
    let part = values.len() / models;
    let changed = (0..models)
        .flat_map(|k| change(k, &values[k * part..(k + 1) * part]))
        .collect::<Vec<_>>();
    state.set(key, changed);
    Ok(())
}

/// The model's coordinate values over `old` features (then the bias, if any) with `fill` for
/// `new` features added after the old ones.
fn with_features(values: &[f64], old: usize, new: usize, fill: f64) -> Vec<f64> {
    let mut widened = Vec::with_capacity(values.len() + new);
    widened.extend_from_slice(&values[..old]);
    widened.resize(old + new, fill);
    widened.extend_from_slice(&values[old..]);
    widened
}

impl Estimator {
    /// The model over `n_features` features: each new feature (after the old ones, before the
    /// bias) at the prior of a weight never seen, mean 0 and variance `unseen_variance`,
    /// uncorrelated with the others, never averaged or penalised (its L1 clock up to date);
    /// exactly what a model wide from the start holds for a feature no row has named, in
    /// every covariance form. Refused for a kernel model and for fewer features.
    pub fn widened(&self, n_features: usize, unseen_variance: f64) -> Result<Estimator, CwError> {
        let mut state = self.state();
        let Layout {
            models,
            n_features: old,
            dim,
            form,
        } = layout(&state, "widen")?;
        if n_features < old {
            return Err(CwError::InvalidInput(format!(
                "cannot widen a model over {old} features to {n_features}: widening only adds \
                 features"
            )));
        }
        let (new, a) = (n_features - old, unseen_variance);
        let mean = match state.entries.contains_key("means") {
            true => "means",
            false => "mean",
        };
        each_model(&mut state, mean, models, |_, m| {
            with_features(m, old, new, 0.0)
        })?;
        each_model(&mut state, "average_sums", models, |_, u| {
            with_features(u, old, new, 0.0)
        })?;
        each_model(&mut state, "covariance_values", models, |_, cov| {
            match form.as_str() {
                "identity" => cov.to_vec(),
                "diag" => with_features(cov, old, new, a),
                // AdaGrad's and FTRL's gradient sums: none for a feature never seen.
                "adagrad" | "ftrl" => with_features(cov, old, new, 0.0),
                // The low-rank form: its variances S, then the sketch rows B, which no
                // increment √c·x of a row without the feature has touched (docs/design.md §3.3).
                "lowrank" => {
                    let (variances, sketch) = cov.split_at(dim.min(cov.len()));
                    let mut widened = with_features(variances, old, new, a);
                    for row in sketch.chunks(dim.max(1)) {
                        widened.extend(with_features(row, old, new, 0.0));
                    }
                    widened
                }
                // The full form: Σ row-major, the new rows and columns those of a·I.
                _ => {
                    let wide = dim + new;
                    let mut sigma = vec![0.0; wide * wide];
                    for (i, row) in cov.chunks_exact(dim.max(1)).enumerate() {
                        let to = if i < old { i } else { i + new };
                        let row = with_features(row, old, new, 0.0);
                        sigma[to * wide..(to + 1) * wide].copy_from_slice(&row);
                    }
                    (old..old + new).for_each(|j| sigma[j * wide + j] = a);
                    sigma
                }
            }
        })?;
        if state.entries.contains_key("l1_last") {
            let totals = match state.floats("l1_totals") {
                Ok(totals) => totals.to_vec(),
                Err(_) => vec![state.float("l1_total")?],
            };
            // A new feature's weight is 0 and stays 0: its lazy L1 state is up to date.
            each_model(&mut state, "l1_last", models, |k, last| {
                with_features(last, old, new, totals.get(k).copied().unwrap_or(0.0))
            })?;
        }
        state.set("n_features", n_features);
        rebuilt(state)
    }

    /// A binary model as the equal two-class one-vs-rest model: class 1 (positive) is the
    /// binary model, class 0 its mirror image (mean and averaging sums negated, the same
    /// covariance and L1 state). One-vs-rest's class 0 learns every row with the opposite
    /// sign, and the rules are odd in the mean (μ → −μ, y → −y: the same margin, variance and
    /// step), so it is exactly the mirror image from the first row on. Refused for any other
    /// kind.
    pub fn as_one_vs_rest(&self) -> Result<Estimator, CwError> {
        if self.kind() != "binary" {
            return Err(CwError::InvalidInput(format!(
                "only a binary model becomes a one-vs-rest model, not a {} model",
                self.kind()
            )));
        }
        let mut state = self.state();
        let mirrored = |values: &[f64]| {
            let negated = values.iter().map(|v| -v);
            negated.chain(values.iter().copied()).collect::<Vec<_>>()
        };
        let twice = |values: &[f64]| [values, values].concat();
        let mean = mirrored(state.floats("mean")?);
        state.entries.remove("mean");
        state.set("means", mean);
        let covariance = twice(state.floats("covariance_values")?);
        state.set("covariance_values", covariance);
        if state.entries.contains_key("average_sums") {
            let sums = mirrored(state.floats("average_sums")?);
            state.set("average_sums", sums);
        }
        if state.entries.contains_key("l1_last") {
            let total = state.float("l1_total")?;
            let last = twice(state.floats("l1_last")?);
            state.entries.remove("l1_total");
            state.set("l1_totals", vec![total, total]);
            state.set("l1_last", last);
        }
        state.set("kind", "multiclass");
        state.set("strategy", "ovr");
        state.set("n_classes", 2usize);
        rebuilt(state)
    }

    /// The one-vs-rest model with one more class, at the prior: mean 0, covariance
    /// `prior_variance`·I (the variance of a weight never seen at this round; AdaGrad's and
    /// FTRL's sums 0, an empty low-rank sketch), nothing averaged or penalised yet. Refused
    /// for any model but a one-vs-rest one (a max-score model's classes compete in every row).
    pub fn with_prior_class(&self, prior_variance: f64) -> Result<Estimator, CwError> {
        let mut state = self.state();
        let Layout {
            models, dim, form, ..
        } = layout(&state, "add a class to")?;
        if state.string("kind")? != "multiclass" || state.string("strategy")? != "ovr" {
            return Err(CwError::InvalidInput(
                "only a one-vs-rest model grows by a class: build a binary model's \
                 one-vs-rest form first, and give a max-score model every class from the start"
                    .into(),
            ));
        }
        let append = |state: &mut State<'static>, key: &str, part: Vec<f64>| {
            let values = [state.floats(key)?, &part].concat();
            state.set(key, values);
            Ok::<_, CwError>(())
        };
        append(&mut state, "means", vec![0.0; dim])?;
        let part = state.floats("covariance_values")?.len() / models;
        let prior = match form.as_str() {
            "identity" => Vec::new(),
            "adagrad" | "ftrl" => vec![0.0; dim],
            "full" => {
                let mut sigma = vec![0.0; dim * dim];
                sigma
                    .iter_mut()
                    .step_by(dim + 1)
                    .for_each(|v| *v = prior_variance);
                sigma
            }
            // diag: the variances; lowrank: S, then an empty sketch.
            _ => {
                let mut prior = vec![0.0; part];
                prior[..dim.min(part)].fill(prior_variance);
                prior
            }
        };
        append(&mut state, "covariance_values", prior)?;
        if state.entries.contains_key("average_sums") {
            append(&mut state, "average_sums", vec![0.0; dim])?;
        }
        if state.entries.contains_key("l1_last") {
            append(&mut state, "l1_totals", vec![0.0])?;
            append(&mut state, "l1_last", vec![0.0; dim])?;
        }
        state.set("n_classes", models + 1);
        rebuilt(state)
    }

    /// This model as the entries that differ from `base` (see [`ModelDelta`]).
    pub fn delta_since(&self, base: &Estimator) -> ModelDelta {
        ModelDelta::between(&base.state(), self.state())
    }
}

/// A model as what changed since a base model: when every array of its state holds one value
/// per coordinate (the identity and diagonal forms) and the coordinates that changed take fewer
/// bytes than the whole, those coordinates' values; else the whole state.
/// [`ModelDelta::apply`] rebuilds the model bit for bit.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelDelta {
    Whole(State<'static>),
    Touched {
        /// Every entry that is not an array (configuration, counters).
        scalars: State<'static>,
        /// The coordinates that changed, in order.
        touched: Vec<u64>,
        /// Each array's values at `touched`.
        changed: State<'static>,
    },
}

/// The entry of a [`ModelDelta`]'s state that holds the touched coordinates (no model state
/// has it).
const TOUCHED: &str = "delta_touched";

/// The length of an array entry, `None` for any other entry.
fn array_len(value: &Value) -> Option<usize> {
    match value {
        Value::Floats(x) => Some(x.len()),
        Value::U32s(x) => Some(x.len()),
        Value::U64s(x) => Some(x.len()),
        Value::I64s(x) => Some(x.len()),
        _ => None,
    }
}

/// Whether two arrays of the same type and length differ at `i`, bit for bit (−0 differs from
/// 0, a NaN from another NaN's bits); arrays of different types always do.
fn differs(a: &Value, b: &Value, i: usize) -> bool {
    match (a, b) {
        (Value::Floats(a), Value::Floats(b)) => a[i].to_bits() != b[i].to_bits(),
        (Value::U32s(a), Value::U32s(b)) => a[i] != b[i],
        (Value::U64s(a), Value::U64s(b)) => a[i] != b[i],
        (Value::I64s(a), Value::I64s(b)) => a[i] != b[i],
        _ => true,
    }
}

/// The array's values at `at`.
fn picked(value: &Value, at: &[usize]) -> Value<'static> {
    fn pick<T: Copy>(x: &[T], at: &[usize]) -> Cow<'static, [T]> {
        Cow::Owned(at.iter().map(|&i| x[i]).collect())
    }
    match value {
        Value::Floats(x) => Value::Floats(pick(x, at)),
        Value::U32s(x) => Value::U32s(pick(x, at)),
        Value::U64s(x) => Value::U64s(pick(x, at)),
        Value::I64s(x) => Value::I64s(pick(x, at)),
        other => other.clone().into_owned(),
    }
}

/// `start` with `changed[k]` at `at[k]`, or `None` if they do not fit together.
fn patched(start: &Value, at: &[usize], changed: &Value) -> Option<Value<'static>> {
    fn patch<T: Copy>(x: &[T], at: &[usize], changed: &[T]) -> Option<Cow<'static, [T]>> {
        let mut x = x.to_vec();
        (changed.len() == at.len()).then_some(())?;
        for (&i, &v) in at.iter().zip(changed) {
            *x.get_mut(i)? = v;
        }
        Some(Cow::Owned(x))
    }
    Some(match (start, changed) {
        (Value::Floats(x), Value::Floats(c)) => Value::Floats(patch(x, at, c)?),
        (Value::U32s(x), Value::U32s(c)) => Value::U32s(patch(x, at, c)?),
        (Value::U64s(x), Value::U64s(c)) => Value::U64s(patch(x, at, c)?),
        (Value::I64s(x), Value::I64s(c)) => Value::I64s(patch(x, at, c)?),
        _ => return None,
    })
}

impl ModelDelta {
    /// `end` as the entries that differ from `start` (see [`ModelDelta`]).
    fn between(start: &State, end: State<'static>) -> ModelDelta {
        let arrays = (end.entries.iter())
            .filter_map(|(key, value)| Some((key, value, array_len(value)?)))
            .collect::<Vec<_>>();
        let Some(&(_, _, len)) = arrays.first() else {
            return ModelDelta::Whole(end);
        };
        let starts = (arrays.iter())
            .map(|&(key, value, n)| {
                let start = start.entries.get(key).filter(|s| array_len(s) == Some(n))?;
                (n == len).then_some((value, start))
            })
            .collect::<Option<Vec<_>>>();
        let Some(starts) = starts else {
            return ModelDelta::Whole(end);
        };
        let touched = (0..len)
            .filter(|&i| starts.iter().any(|(end, start)| differs(end, start, i)))
            .collect::<Vec<_>>();
        // Each touched coordinate costs its index and a value per array.
        if touched.len() * (1 + arrays.len()) >= len * arrays.len() {
            return ModelDelta::Whole(end);
        }
        let mut scalars = State {
            version: end.version,
            ..State::default()
        };
        let mut changed = scalars.clone();
        for (key, value) in end.entries {
            match array_len(&value) {
                Some(_) => changed.set(&key, picked(&value, &touched)),
                None => scalars.set(&key, value),
            }
        }
        let touched = touched.into_iter().map(|i| i as u64).collect();
        ModelDelta::Touched {
            scalars,
            touched,
            changed,
        }
    }

    /// The model this delta describes, from the `base` it was taken against (`None`: a fresh
    /// model of the delta's configuration). A delta that does not fit its base is an invalid
    /// state.
    pub fn apply(&self, base: Option<&Estimator>) -> Result<Estimator, CwError> {
        let (scalars, touched, changed) = match self {
            ModelDelta::Whole(state) => return Estimator::from_state(state, None),
            ModelDelta::Touched {
                scalars,
                touched,
                changed,
            } => (scalars, touched, changed),
        };
        let start = match base {
            Some(base) => base.state(),
            None => Estimator::new(scalars.clone(), None)?.state(),
        };
        let at = (touched.iter())
            .map(|&i| usize::try_from(i).unwrap_or(usize::MAX))
            .collect::<Vec<_>>();
        let mut state = start.clone().merged(scalars.clone());
        for (key, values) in &changed.entries {
            let patched = (start.entries.get(key)).and_then(|s| patched(s, &at, values));
            let Some(patched) = patched else {
                return Err(CwError::InvalidState(format!(
                    "entry {key:?} of the delta does not fit its base"
                )));
            };
            state.set(key, patched);
        }
        Estimator::from_state(&state, None)
    }

    /// The delta as one state (a host's dict): the whole state, or the scalars and the changed
    /// arrays with the touched coordinates under `delta_touched`.
    pub fn to_state(&self) -> State<'static> {
        match self {
            ModelDelta::Whole(state) => state.clone(),
            ModelDelta::Touched {
                scalars,
                touched,
                changed,
            } => (scalars.clone())
                .merged(changed.clone())
                .with(TOUCHED, touched.clone()),
        }
    }

    /// The delta of [`ModelDelta::to_state`].
    pub fn from_state(state: State<'_>) -> Result<ModelDelta, CwError> {
        if !state.entries.contains_key(TOUCHED) {
            return Ok(ModelDelta::Whole(state.into_owned()));
        }
        let touched = state.u64s(TOUCHED)?.to_vec();
        let (mut scalars, mut changed) = (State::default(), State::default());
        scalars.version = state.version;
        changed.version = state.version;
        for (key, value) in state.into_owned().entries {
            match array_len(&value) {
                _ if key == TOUCHED => {}
                Some(_) => changed.set(&key, value),
                None => scalars.set(&key, value),
            }
        }
        Ok(ModelDelta::Touched {
            scalars,
            touched,
            changed,
        })
    }
}

#[cfg(test)]
mod tests;
