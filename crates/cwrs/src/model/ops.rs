//! Operations on a whole model that hosts need between learning calls: the model over more
//! features ([`Model::widened`], the river adapter's growing feature space), a binary model
//! as the equal two-class one-vs-rest model ([`Model::as_one_vs_rest`]) and one more
//! one-vs-rest class at the prior ([`Model::with_prior_class`]), the river adapter's class
//! growth (docs/design.md, river class growth), and the entries a model changed since a base
//! ([`ModelDelta`], what a Dask worker sends back).
//!
//! The structural operations rebuild the model from its state view without what it keeps
//! lazily ([`Model::eager_state`]), changed in one function each: every covariance form
//! widens its own values ([`Gaussian::widened_covariance`]) and a new class starts from a fresh
//! form ([`Gaussian::new`]); the other per-coordinate arrays (the mean, the averaging sums, the
//! L1 bookkeeping) get the new coordinates at their prior; and [`Model::from_state`] checks
//! the result as it checks any state.

use std::borrow::Cow;

use crate::covariance::{with_new_features, Gaussian};
use crate::data::Shape;
use crate::error::CwError;
use crate::learn::learner::check_variance;
use crate::learn::objective::Strategy;
use crate::model::config::ModelKind;
use crate::model::state::{State, Value};
use crate::model::Model;

/// `state[key]` with `change(model, part)` in place of each of `models` parts, if the state has
/// it.
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
    if values.len() % models != 0 {
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

impl Model {
    /// The primal Gaussians (one per class), or the refusal of `operation` for a kernel model,
    /// which has no feature coordinates.
    fn gaussians(&self, operation: &str) -> Result<&[Gaussian], CwError> {
        self.primal_gaussians().ok_or_else(|| {
            CwError::InvalidInput(format!(
                "cannot {operation} a {} model: only a primal (binary, regressor or \
                 multiclass) model has feature coordinates",
                self.kind()
            ))
        })
    }

    /// The model over `n_features` features: each new feature (after the old ones, before the
    /// bias) at the prior of a weight never seen, mean 0 and variance `unseen_variance`,
    /// uncorrelated with the others (each covariance form widens itself:
    /// [`Gaussian::widened_covariance`]), never averaged or penalised (its L1 clock up to
    /// date); exactly what a model wide from the start holds for a feature no row has named.
    /// Refused for a kernel model and for fewer features.
    pub fn widened(&self, n_features: usize, unseen_variance: f64) -> Result<Model, CwError> {
        let gaussians = self.gaussians("widen")?;
        check_variance("unseen_variance", unseen_variance)?;
        let (models, shape) = (gaussians.len(), gaussians[0].shape());
        let old = shape.n_features;
        if n_features < old {
            return Err(CwError::InvalidInput(format!(
                "cannot widen a model over {old} features to {n_features}: widening only adds \
                 features"
            )));
        }
        let new = n_features - old;
        // Refused before anything is allocated, as a new model of that width would be (an
        // allocation failure aborts the process).
        let wide = Shape::new(n_features, shape.fit_intercept)?;
        Gaussian::check_size(gaussians[0].kind(), wide.dim(), models)?;
        let covariance = (gaussians.iter())
            .flat_map(|g| g.widened_covariance(new, unseen_variance))
            .collect::<Vec<_>>();
        let mut state = self.eager_state();
        let zeros = |_, values: &[f64]| with_new_features(values, shape, new, 0.0);
        each_model(&mut state, "mean", models, zeros)?;
        each_model(&mut state, "means", models, zeros)?;
        // u: no change of a new weight yet.
        each_model(&mut state, "average_sums", models, zeros)?;
        state.set("covariance_values", covariance);
        if state.entries.contains_key("l1_last") {
            let totals = match state.floats("l1_totals") {
                Ok(totals) => totals.to_vec(),
                Err(_) => vec![state.float("l1_total")?],
            };
            // A new feature's weight is 0 and stays 0: its lazy L1 state is up to date.
            each_model(&mut state, "l1_last", models, |k, last| {
                with_new_features(last, shape, new, totals.get(k).copied().unwrap_or(0.0))
            })?;
        }
        state.set("n_features", n_features);
        Model::from_state(&state, None)
    }

    /// A binary model as the equal two-class one-vs-rest model: class 1 (positive) is the
    /// binary model, class 0 its mirror image (mean and averaging sums negated, the same
    /// covariance and L1 state). One-vs-rest's class 0 learns every row with the opposite
    /// sign, and the rules are odd in the mean (μ → −μ, y → −y: the same margin, variance and
    /// step), so it is exactly the mirror image from the first row on. Refused for any other
    /// kind.
    pub fn as_one_vs_rest(&self) -> Result<Model, CwError> {
        if self.kind() != "binary" {
            return Err(CwError::InvalidInput(format!(
                "only a binary model becomes a one-vs-rest model, not a {} model",
                self.kind()
            )));
        }
        let binary = self.gaussians("turn into one-vs-rest")?;
        Gaussian::check_size(binary[0].kind(), binary[0].shape().dim(), 2)?;
        let mut state = self.eager_state();
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
        Model::from_state(&state, None)
    }

    /// The one-vs-rest model with one more class, at the prior: mean 0, covariance
    /// `prior_variance`·I (the variance of a weight never seen at this round; AdaGrad's and
    /// FTRL's sums 0, an empty low-rank sketch), nothing averaged or penalised yet. Refused
    /// for any model but a one-vs-rest one (a max-score model's classes compete in every row).
    pub fn with_prior_class(&self, prior_variance: f64) -> Result<Model, CwError> {
        let gaussians = self.gaussians("add a class to")?;
        check_variance("prior_variance", prior_variance)?;
        let one_vs_rest = ModelKind::Multiclass {
            n_classes: gaussians.len(),
            strategy: Strategy::OneVsRest,
        };
        if self.config.kind != one_vs_rest {
            return Err(CwError::InvalidInput(
                "only a one-vs-rest model grows by a class: build a binary model's \
                 one-vs-rest form first, and give a max-score model every class from the start"
                    .into(),
            ));
        }
        let (models, first) = (gaussians.len(), &gaussians[0]);
        let (shape, dim) = (first.shape(), first.shape().dim());
        Gaussian::check_size(first.kind(), dim, models + 1)?;
        let prior = Gaussian::new(first.kind(), shape, prior_variance);
        let mut state = self.eager_state();
        let append = |state: &mut State<'static>, key: &str, part: &[f64]| {
            let values = [state.floats(key)?, part].concat();
            state.set(key, values);
            Ok::<_, CwError>(())
        };
        append(&mut state, "means", &prior.mean())?;
        append(&mut state, "covariance_values", &prior.covariance())?;
        if state.entries.contains_key("average_sums") {
            append(&mut state, "average_sums", &vec![0.0; dim])?;
        }
        if state.entries.contains_key("l1_last") {
            append(&mut state, "l1_totals", &[0.0])?;
            append(&mut state, "l1_last", &vec![0.0; dim])?;
        }
        if state.entries.contains_key("class_counts") {
            append(&mut state, "class_counts", &[0.0])?;
        }
        state.set("n_classes", models + 1);
        Model::from_state(&state, None)
    }

    /// This model as the entries that differ from `base` (see [`ModelDelta`]).
    pub fn delta_since(&self, base: &Model) -> ModelDelta {
        ModelDelta::between(&base.state(), self.state())
    }
}

/// A model as what changed since a base model: when every array of its state holds one value
/// per coordinate (the diagonal form's and AdaGrad's and FTRL's, without process noise or a
/// multiclass L1 penalty) and the coordinates that changed (bit for bit) take fewer bytes than
/// the whole, those coordinates' values; else the whole state. [`ModelDelta::apply`] rebuilds
/// the model bit for bit.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelDelta {
    /// The whole state: not every array of the model is per coordinate, or the changed
    /// coordinates take no fewer bytes than the whole.
    Whole(State<'static>),
    /// The coordinates that changed, with their values and every other entry.
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

/// Array entries of a model as a whole, not per coordinate: a delta keeps them as they are.
const WHOLE_ARRAYS: [&str; 3] = ["class_counts", "noise_estimate", "prior_estimate"];

/// The length of a per-coordinate array entry, `None` for any other entry.
fn coordinate_len(key: &str, value: &Value) -> Option<usize> {
    match WHOLE_ARRAYS.contains(&key) {
        true => None,
        false => array_len(value),
    }
}

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
            .filter_map(|(key, value)| Some((key, value, coordinate_len(key, value)?)))
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
            match coordinate_len(&key, &value) {
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
    pub fn apply(&self, base: Option<&Model>) -> Result<Model, CwError> {
        let (scalars, touched, changed) = match self {
            ModelDelta::Whole(state) => return Model::from_state(state, None),
            ModelDelta::Touched {
                scalars,
                touched,
                changed,
            } => (scalars, touched, changed),
        };
        let start = match base {
            Some(base) => base.state(),
            None => Model::new(scalars.clone(), None)?.state(),
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
        Model::from_state(&state, None)
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
            match coordinate_len(&key, &value) {
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
