//! `Model`: the one Python-facing model type, a thin wrapper over [`Model`] held in a
//! [`Guarded`] lock (see `crate::host::shared`: threads sharing a model wait for each other, and a
//! panic raises `RuntimeError`), built from a configuration or state dict (docs/model-format.md).
//! Its lean methods take a few rows as a stream sends them and give None (False) for
//! anything else: the estimators then take their general path, which checks and converts.

use numpy::npyffi::{NPY_ORDER, PY_ARRAY_API};
use numpy::{PyArray1, PyArrayMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::callable_kernel::CallableKernel;
use super::convert::{dense, held_entries, indices, lean_targets, matrix, output, state_to_dict};
use super::convert::{targets, value_to_py, values, vector};
use super::{check_signals, Dict, Object, PyResult};
use crate::host::call_cost::{CallCost, LEAN_ROWS};
use crate::host::shared::{guarded, Guarded, Work};
use crate::host::{attributes, calls};
use cwrs::data::Matrix;
use cwrs::error::CwError;
use cwrs::learn::online::Progressive;
use cwrs::model::best_class;
use cwrs::model::ops::ModelDelta;
use cwrs::model::state::{State, Value};
use cwrs::model::Model;

const NAME: &str = "Model";

/// An [`Model`] method of rows → values.
type Fill = fn(&Model, &Matrix, &mut [f64]) -> Result<(), CwError>;

/// A model of any kind ("binary", "regressor", "multiclass", "kernel", "multiclass_kernel").
/// The Python estimators in `cwrs` wrap it.
#[pyclass(name = "Model", module = "cwrs._cwrs", frozen)]
pub(super) struct PyModel {
    pub(super) estimator: Guarded<Model, super::errors::Error>,
    cost: CallCost,
}

impl PyModel {
    fn wrap(estimator: Model) -> Self {
        let cost = CallCost::of(&estimator);
        let estimator = Guarded::new(NAME, estimator);
        PyModel { estimator, cost }
    }

    /// `__new__` from a configuration dict, or `from_state` (`restoring`) from a state dict.
    fn built(dict: &Dict, kernel: Option<Py<PyAny>>, restoring: bool) -> PyResult<Self> {
        let (held, custom) = (held_entries(dict), CallableKernel::wrap(kernel));
        let operation = if restoring { "from_state" } else { "__new__" };
        let build = || {
            Ok::<_, super::errors::Error>(calls::build_model(held, custom, restoring, dict.py())?)
        };
        Ok(Self::wrap(guarded(NAME, operation, build)?))
    }

    /// `x` as the lean paths take it (see [`CallCost::lean`]), in an ndarray that is not a
    /// subclass (see [`dense`]).
    fn lean_rows<'a>(&self, x: &'a Object) -> Option<Matrix<'a>> {
        dense(x, true).filter(|rows| self.cost.lean(rows))
    }

    /// `f` of the rows `x` into `out`, attached or detached as the work says.
    fn run(&self, py: Python, name: &str, x: &Matrix, out: &mut [f64], f: Fill) -> PyResult<()> {
        let work = self.cost.work(x, x.n_rows());
        self.estimator.read(py, name, work, |e| Ok(f(e, x, out)?))
    }

    /// `f` of the rows `x` into a fresh array of `columns` values per row (None: 1-D), and
    /// whether none of them is NaN.
    fn fill<'py>(
        &self,
        py: Python<'py>,
        name: &str,
        x: &Matrix,
        columns: Option<usize>,
        f: Fill,
    ) -> PyResult<(Object<'py>, bool)> {
        let array = output(py, x.n_rows(), columns)?;
        // SAFETY: a fresh array, all of it written by `f` before Python sees it.
        let values = unsafe { values(&array) };
        self.run(py, name, x, values, f)?;
        let no_nan = !values.iter().any(|v| v.is_nan());
        Ok((array, no_nan))
    }

    /// The attribute `name` (see [`attributes::attribute`]), a multiclass model's arrays one
    /// row per class; an `AttributeError` where the model has none.
    fn attribute<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Object<'py>> {
        let read = |e: &Model| Ok((attributes::attribute(e, name), e.n_classes()));
        match self.estimator.read(py, name, Work::Quick, read)? {
            (Some(Value::Floats(values)), Some(n)) => {
                let shape = [n, values.len() / n];
                let array = PyArray1::from_vec(py, values.into_owned());
                Ok(array.reshape(shape)?.into_any())
            }
            (Some(value), _) => value_to_py(py, value),
            (None, _) => Err(PyAttributeError::new_err(format!("this model has no {name}")).into()),
        }
    }
}

/// The `#[pymethods]` of [`PyModel`] (one block: PyO3 takes one), with a read-only attribute for
/// each name in the first list (see [`PyModel::attribute`]), a method of rows → values for each
/// name in the second, and a lean one for each in the third (None unless `x` is lean rows and
/// no value is NaN: the general path raises), computed by the [`Model`] method each names.
macro_rules! methods_and_attributes {
    ([$($name:ident),*] [$($output:ident => $method:ident),*]
     [$($lean:ident => $f:ident, $columns:ident),*] $($methods:tt)*) => {
        #[pymethods]
        impl PyModel {
            $($methods)*
            $(#[getter]
            fn $name<'py>(&self, py: Python<'py>) -> PyResult<Object<'py>> {
                self.attribute(py, stringify!($name))
            })*
            $(fn $output<'py>(&self, py: Python<'py>, x: &Object<'py>) -> PyResult<Object<'py>> {
                let (name, columns) = (stringify!($output), self.cost.columns());
                Ok(self.fill(py, name, &matrix(x)?, columns, Model::$method)?.0)
            })*
            $(#[pyo3(signature = (x, /))]
            fn $lean<'py>(&self, x: &Object<'py>) -> PyResult<Option<Object<'py>>> {
                let Some(rows) = self.lean_rows(x) else {
                    return Ok(None);
                };
                let (name, columns) = (stringify!($lean), self.cost.$columns());
                let (array, no_nan) = self.fill(x.py(), name, &rows, columns, Model::$f)?;
                Ok(no_nan.then_some(array))
            })*
        }
    };
}

methods_and_attributes! {
    [kind, n_classes, covariance_kind, mean, covariance, dense_covariance, n_updates,
     n_mistakes, n_support, dual_coef, support_vectors, config, noise_since_reset, class_counts,
     noise_variance, prior_variance]
    // μ·x, xᵀΣx, the predictive Φ(μ·x / √(xᵀΣx + s²)) (P(class k has the highest score)) and
    // the posterior Φ(μ·x / √(xᵀΣx)) for every row (and class: rows × classes for a multiclass
    // model).
    [decision_function => decision_function, variance => variances,
     probabilities => probabilities, posterior_probabilities => posterior_probabilities,
     predictive_variance => predictive_variances]
    // The estimators' `decision_function` and `predict_proba` (both classes of a binary model).
    [decision_lean => decision_function, columns,
     proba_lean => class_probabilities, proba_columns]

    /// A fresh model as the configuration dict says (docs/model-format.md lists its entries).
    /// A kernel model's kernel is a built-in one named in the configuration or a custom one,
    /// `cwrs._kernel.CallableKernel` (its `evaluate` and `diagonal` give checked values).
    #[new]
    #[pyo3(signature = (config, kernel=None))]
    fn new(config: &Dict, kernel: Option<Py<PyAny>>) -> PyResult<Self> {
        Self::built(config, kernel, false)
    }

    /// Rebuilds a model from the dict returned by `state()` (with the custom kernel it was
    /// built with, if any: the state holds no code).
    #[staticmethod]
    #[pyo3(signature = (state, kernel=None))]
    fn from_state(state: &Dict, kernel: Option<Py<PyAny>>) -> PyResult<Self> {
        Self::built(state, kernel, true)
    }

    /// The covariance of the rows' scores under the Gaussian over weights: the (n, n) array of
    /// x_iᵀΣx_j for the rows of `x`, its diagonal `variance(x)` bit for bit (a binary model or
    /// a regressor with a diagonal, full or low-rank covariance; ValueError otherwise).
    fn score_covariance<'py>(&self, py: Python<'py>, x: &Object<'py>) -> PyResult<Object<'py>> {
        let x = matrix(x)?;
        let n = x.n_rows();
        let array = output(py, n, Some(n))?;
        // SAFETY: a fresh array, all of it written by `score_covariances` before Python sees it.
        let out = unsafe { values(&array) };
        // Each of the n(n + 1)/2 pairs costs about what a row's variance does.
        let work = self.cost.work(&x, n.saturating_mul(n + 1) / 2);
        let name = "score_covariance";
        (self.estimator).read(py, name, work, |e| Ok(e.score_covariances(&x, out)?))?;
        Ok(array)
    }

    /// An independent copy: a restore point.
    fn copy(&self, py: Python) -> PyResult<Self> {
        let copy = |e: &Model| Ok(e.clone());
        let copy = self.estimator.read(py, "copy", Work::Batch, copy)?;
        Ok(Self::wrap(copy))
    }

    /// The model over `n_features` features, each new one at the prior of a weight never seen
    /// (mean 0, variance `unseen_variance`); this model stays as it is.
    fn widened(&self, py: Python, n_features: usize, unseen_variance: f64) -> PyResult<Self> {
        let widen = |e: &Model| Ok(e.widened(n_features, unseen_variance)?);
        Ok(Self::wrap(self.estimator.read(py, "widened", Work::Batch, widen)?))
    }

    /// A binary model as the equal two-class one-vs-rest model; this model stays as it is.
    fn as_one_vs_rest(&self, py: Python) -> PyResult<Self> {
        let grow = |e: &Model| Ok(e.as_one_vs_rest()?);
        Ok(Self::wrap(self.estimator.read(py, "as_one_vs_rest", Work::Batch, grow)?))
    }

    /// The one-vs-rest model with one more class at the prior (mean 0, covariance
    /// `prior_variance`·I); this model stays as it is.
    fn with_prior_class(&self, py: Python, prior_variance: f64) -> PyResult<Self> {
        let grow = |e: &Model| Ok(e.with_prior_class(prior_variance)?);
        Ok(Self::wrap(self.estimator.read(py, "with_prior_class", Work::Batch, grow)?))
    }

    /// This model as the entries that changed since `base` (a dict of NumPy arrays and
    /// scalars, picklable), for `from_delta`.
    fn delta_since<'py>(&self, py: Python<'py>, base: PyRef<PyModel>) -> PyResult<Dict<'py>> {
        let base = base.estimator.read(py, "delta_since", Work::Batch, |e| Ok(e.clone()))?;
        let delta = |e: &Model| Ok(e.delta_since(&base).to_state());
        state_to_dict(py, self.estimator.read(py, "delta_since", Work::Batch, delta)?)
    }

    /// The model a dict of `delta_since` describes, from the `base` it was taken against
    /// (None: a fresh model of its configuration).
    #[staticmethod]
    #[pyo3(signature = (delta, base=None))]
    fn from_delta(py: Python, delta: &Dict, base: Option<PyRef<PyModel>>) -> PyResult<Self> {
        let held = held_entries(delta)?;
        let delta = ModelDelta::from_state(State::from_held(&held, true)?)?;
        let estimator = match base {
            Some(base) => {
                let apply = |e: &Model| Ok(delta.apply(Some(e))?);
                base.estimator.read(py, "from_delta", Work::Batch, apply)?
            }
            // Built and checked detached, as `from_state` does (a full Σ's check is O(d³)).
            None => guarded(NAME, "from_delta", || {
                Ok::<_, super::errors::Error>(py.detach(|| delta.apply(None))?)
            })?,
        };
        Ok(Self::wrap(estimator))
    }

    /// Everything needed to rebuild the model exactly, by name; the model stays as it is.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Dict<'py>> {
        let state = |e: &Model| Ok(e.state());
        state_to_dict(py, self.estimator.read(py, "state", Work::Quick, state)?)
    }

    /// The lean path of the estimators' `partial_fit`: learns `x` and `y` when `x` is lean rows
    /// and `y` (a 1-D array, list or tuple) one label per row, each a key of `targets` (label →
    /// native target; None: finite numbers, for a regressor); else False, nothing learned.
    /// `check_batch` is called before more than one row is learned (the estimator's check of
    /// hyper-parameters changed since the last one: a batch re-checks them).
    #[pyo3(signature = (x, y, targets, check_batch, /))]
    fn learn_lean(
        &self,
        x: &Object,
        y: &Object,
        targets: Option<&Dict>,
        check_batch: &Object,
    ) -> PyResult<bool> {
        // A long call takes the general path, which Ctrl-C interrupts (the lean one does not).
        let Some(rows) = self.lean_rows(x).filter(|rows| !self.cost.long(rows)) else {
            return Ok(false);
        };
        let Some(targets) = lean_targets(y, rows.n_rows(), targets) else {
            return Ok(false);
        };
        if rows.n_rows() > 1 {
            check_batch.call0()?;
        }
        let work = self.cost.work(&rows, rows.n_rows());
        let learn = |e: &mut Model| Ok(e.learn_few(&rows, &targets)?);
        self.estimator.write(x.py(), "partial_fit", work, learn)?;
        Ok(true)
    }

    /// The lean path of the classifiers' `predict`: each row's best class taken from
    /// `classes` (an array; `class_rows`: a copy of `class_rows[k]`, the array `classes[k:k+1]`,
    /// for one row), or None where it does not apply (as the lean methods above).
    #[pyo3(signature = (x, classes, class_rows, /))]
    fn predict_lean<'py>(
        &self,
        x: &Object<'py>,
        classes: &Object<'py>,
        class_rows: &Bound<'py, PyTuple>,
    ) -> PyResult<Option<Object<'py>>> {
        let (py, width) = (x.py(), self.cost.columns().unwrap_or(1));
        let mut scores = [0.0; LEAN_ROWS]; // no allocation: more scores take the general path
        let fits = |rows: &Matrix| rows.n_rows() * width <= LEAN_ROWS;
        let Some(rows) = self.lean_rows(x).filter(fits) else {
            return Ok(None);
        };
        let scores = &mut scores[..rows.n_rows() * width];
        self.run(py, "predict", &rows, scores, Model::decision_function)?;
        if scores.iter().any(|s| s.is_nan()) {
            return Ok(None);
        }
        let mut best = scores.chunks(width).map(best_class);
        if rows.n_rows() > 1 {
            let best = PyArray1::from_iter(py, best.map(|k| k as isize));
            let take = pyo3::intern!(py, "take");
            return Ok(Some(classes.call_method1(take, (best,))?));
        }
        let row = class_rows.get_item(best.next().unwrap_or(0))?;
        let Ok(row) = row.cast::<PyUntypedArray>() else {
            return Ok(None);
        };
        // SAFETY: an ndarray; NewCopy returns a new reference, or NULL with an exception set.
        let copy = unsafe {
            PY_ARRAY_API.PyArray_NewCopy(py, row.as_array_ptr(), NPY_ORDER::NPY_ANYORDER)
        };
        Ok(Some(unsafe { Bound::from_owned_ptr_or_err(py, copy) }?))
    }

    /// Learns the rows of `x` (row `i` with importance weight `weights[i]`; rows taken in `order`
    /// when given)
    /// with float64 labels ±1 or targets, or int64 class indices, as `crate::host::calls::partial_fit`
    /// says: validated before the first update; a long batch stops at Ctrl-C.
    #[pyo3(signature = (x, y, weights=None, order=None, balanced=false))]
    fn partial_fit(
        &self,
        py: Python,
        x: &Object,
        y: &Object,
        weights: Option<&Object>,
        order: Option<&Object>,
        balanced: bool,
    ) -> PyResult<()> {
        let (x, mut classes) = (matrix(x)?, Vec::new());
        let targets = targets(y, &mut classes)?;
        let order = order.map(|o| indices(o, "row order")).transpose()?;
        let presentation = (weights.map(vector).transpose()?, order.as_deref(), balanced);
        let (model, batch) = ((&self.estimator, py), (self.cost, &x, targets));
        calls::partial_fit(model, batch, presentation, None, check_signals)
    }

    /// `partial_fit` that also returns what the model predicted of each row just before
    /// learning it: the scores `decision_function` gives, and with `variances` the values
    /// `variance` gives (None without), shaped as theirs.
    #[pyo3(signature = (x, y, weights=None, order=None, balanced=false, variances=false))]
    // One Rust argument per Python argument, as PyO3 maps them.
    #[allow(clippy::too_many_arguments)]
    fn partial_fit_scored<'py>(
        &self,
        py: Python<'py>,
        x: &Object<'py>,
        y: &Object<'py>,
        weights: Option<&Object<'py>>,
        order: Option<&Object<'py>>,
        balanced: bool,
        variances: bool,
    ) -> PyResult<(Object<'py>, Option<Object<'py>>)> {
        let (x, mut classes) = (matrix(x)?, Vec::new());
        let targets = targets(y, &mut classes)?;
        let order = order.map(|o| indices(o, "row order")).transpose()?;
        let presentation = (weights.map(vector).transpose()?, order.as_deref(), balanced);
        let columns = self.cost.columns();
        let scores = output(py, x.n_rows(), columns)?;
        let spread = variances.then(|| output(py, x.n_rows(), columns)).transpose()?;
        // SAFETY: fresh arrays, which Python sees only once the call has written them.
        let out = unsafe {
            Progressive {
                scores: values(&scores),
                variances: spread.as_ref().map(|array| values(array)),
            }
        };
        let (model, batch) = ((&self.estimator, py), (self.cost, &x, targets));
        calls::partial_fit(model, batch, presentation, Some(out), check_signals)?;
        Ok((scores, spread))
    }

    /// `fit`'s passes on `n_jobs` threads (see `crate::host::calls::fit_sharded`): one pass per row
    /// order of the iterable `orders` (None: the stored order), each drawn with the GIL taken
    /// back, from inside the fit's hold on the model.
    #[pyo3(signature = (x, y, orders, n_jobs, weights=None, balanced=false))]
    // One Rust argument per Python argument, as PyO3 maps them.
    #[allow(clippy::too_many_arguments)]
    fn fit_sharded(
        &self,
        py: Python,
        x: &Object,
        y: &Object,
        orders: &Object,
        n_jobs: usize,
        weights: Option<&Object>,
        balanced: bool,
    ) -> PyResult<()> {
        let (x, mut classes) = (matrix(x)?, Vec::new());
        let targets = targets(y, &mut classes)?;
        let batch = (&x, targets, (weights.map(vector).transpose()?, balanced));
        let order = |o: Object| (!o.is_none()).then(|| indices(&o, "row order")).transpose();
        let orders = orders.try_iter()?.unbind();
        let orders = std::iter::from_fn(|| {
            Python::attach(|py| orders.bind(py).clone().next().map(|o| order(o?)))
        });
        calls::fit_sharded((&self.estimator, py), n_jobs, batch, orders, check_signals)
    }
}

/// The merge of `models` (native models of one configuration) trained from `base` (None: the
/// prior) by `method` ("auto", "information", "precision", "average"; docs/design.md §9), with
/// the weights bₖ of "precision" and "average" (None: by updates beyond `base`).
#[pyfunction]
#[pyo3(signature = (models, method, base=None, weights=None))]
pub(super) fn merge(
    py: Python,
    models: Vec<PyRef<PyModel>>,
    method: &str,
    base: Option<PyRef<PyModel>>,
    weights: Option<Vec<f64>>,
) -> PyResult<PyModel> {
    let models = models.iter().map(|m| &m.estimator).collect::<Vec<_>>();
    let base = base.as_ref().map(|b| &b.estimator);
    let merged = calls::merge(&models, base, py, method, weights.as_deref())?;
    Ok(PyModel::wrap(merged))
}
