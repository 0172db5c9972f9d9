//! `Model`: the one Python-facing model type, a thin wrapper over [`Estimator`] held in a
//! [`Guarded`] lock (see `crate::shared`: threads sharing a model wait for each other, and a
//! panic raises `RuntimeError`). It is built from a configuration dict or a saved state dict
//! (see docs/model-format.md) and gives back its state as a dict.

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1};
use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use super::callable_kernel::CallableKernel;
use super::convert::{
    held_entries, indices, slice, state_to_dict, value_to_py, MatrixArg, TargetsArg,
};
use super::lean;
use crate::call_cost::{best_class, with_complements, CallCost};
use crate::data::{Matrix, Presentation, Stop};
use crate::error::CwError;
use crate::estimator::Estimator;
use crate::interrupt::Interrupt;
use crate::sharded::ShardedFit;
use crate::shared::{guarded, Guarded, Shared, Work};
use crate::state::{State, Value};

const NAME: &str = "Model";

/// A model of any kind ("binary", "regressor", "multiclass", "kernel", "multiclass_kernel").
/// The Python estimators in `cwrs` wrap it.
#[pyclass(module = "cwrs._cwrs", frozen)]
pub(super) struct Model {
    estimator: Guarded<Estimator, PyErr>,
    cost: CallCost,
    /// The width of the rows it takes.
    n_features: usize,
}

impl Model {
    /// The estimator, for the bindings beside this one (`learn_svmlight`).
    pub(super) fn guarded(&self) -> &Guarded<Estimator, PyErr> {
        &self.estimator
    }

    fn wrap(estimator: Estimator) -> Self {
        Model {
            cost: CallCost::of(&estimator),
            n_features: estimator.config().count("n_features").unwrap_or(0),
            estimator: Guarded::new(NAME, estimator),
        }
    }

    /// Runs `f` over the rows of `x` with the GIL released; returns its values as a 1-D array,
    /// or rows × classes for a multiclass model.
    fn fill_rows<'py>(
        &self,
        py: Python<'py>,
        operation: &str,
        x: &MatrixArg,
        f: impl FnOnce(&Estimator, &Matrix, &mut [f64]) -> Result<(), CwError> + Send,
    ) -> PyResult<Bound<'py, PyAny>> {
        let view = x.view()?;
        let work = self.cost.work(&view, view.n_rows());
        let predict = |e: &Estimator| Ok(e.outputs(&view, operation, f)?);
        let (out, shape) = self.estimator.read(py, operation, work, predict)?;
        rows(py, out, shape)
    }

    /// A lean prediction (`python::lean`): `f` of the rows of `x` into a fresh array of
    /// `columns` values per row (None: 1-D), when `x` is a few rows of quick work (see
    /// `learn_lean`) and the model free; None (the general path) otherwise, or if a value is
    /// NaN (the general path raises).
    fn lean<'py>(
        &self,
        x: &Bound<'py, PyAny>,
        operation: &str,
        columns: Option<usize>,
        f: impl FnOnce(&Estimator, &Matrix, &mut [f64]) -> Result<(), CwError> + Send,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(values) = lean::rows(x, self.n_features) else {
            return Ok(None);
        };
        let view = lean::matrix(values, self.n_features);
        if self.cost.work(&view, view.n_rows()) == Work::Batch {
            return Ok(None);
        }
        let array = lean::output(x.py(), view.n_rows(), columns);
        // SAFETY: a fresh array of that length, filled by `f` before it is returned.
        let values = unsafe { lean::values(&array, view.n_rows() * columns.unwrap_or(1)) };
        let fill = |e: &Estimator| Ok(f(e, &view, &mut *values)?);
        Ok(
            match self
                .estimator
                .attached(operation, |s, work| s.read(x.py(), work, fill))
            {
                Some(Ok(())) if !values.iter().any(|v| v.is_nan()) => Some(array),
                Some(Err(err)) => return Err(err),
                _ => None,
            },
        )
    }

    /// The attribute `name` (see [`Estimator::attribute`]), a multiclass model's arrays one
    /// row per class; an `AttributeError` where the model has none.
    fn attribute<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let read = |e: &Estimator| Ok((e.attribute(name), e.n_classes()));
        match self.estimator.read(py, name, Work::Quick, read)? {
            (Some(Value::Floats(values)), Some(n)) => {
                let shape = [n, values.len() / n];
                rows(py, values.into_owned(), Some(shape))
            }
            (Some(value), _) => value_to_py(py, value),
            (None, _) => Err(PyAttributeError::new_err(format!(
                "this model has no {name}"
            ))),
        }
    }

    /// A copy of the estimator (`operation` names the call in errors).
    fn cloned(&self, py: Python<'_>, operation: &str) -> PyResult<Estimator> {
        self.estimator
            .read(py, operation, Work::Batch, |e| Ok(e.clone()))
    }
}

/// `values` as a 1-D array, or reshaped to `shape`.
fn rows(py: Python<'_>, values: Vec<f64>, shape: Option<[usize; 2]>) -> PyResult<Bound<'_, PyAny>> {
    let array = PyArray1::from_vec(py, values);
    Ok(match shape {
        None => array.into_any(),
        Some(shape) => array.reshape(shape)?.into_any(),
    })
}

/// The `#[pymethods]` of [`Model`] (one block: PyO3 takes one), with a read-only attribute for
/// each name in the first list, read through [`Model::attribute`], and a method of rows → values
/// for each name in the second, computed by the [`Estimator`] method it names (see
/// [`Model::fill_rows`]).
macro_rules! methods_and_attributes {
    ([$($name:ident),*] [$($output:ident => $method:ident),*] $($methods:tt)*) => {
        #[pymethods]
        impl Model {
            $($methods)*
            $(#[getter]
            fn $name<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                self.attribute(py, stringify!($name))
            })*
            $(fn $output<'py>(&self, py: Python<'py>, x: MatrixArg<'py>)
                -> PyResult<Bound<'py, PyAny>> {
                self.fill_rows(py, stringify!($output), &x, Estimator::$method)
            })*
        }
    };
}

methods_and_attributes! {
    [kind, n_classes, covariance_kind, mean, covariance, dense_covariance, n_updates,
     n_mistakes, n_support, dual_coef, support_vectors, config]
    // μ·x, xᵀΣx, and Φ(μ·x / √(xᵀΣx)) (P(class k has the highest score)) for every row (and
    // class: rows × classes for a multiclass model).
    [decision_function => decision_function, variance => variances,
     probabilities => probabilities]

    /// A fresh model as the configuration dict says (docs/model-format.md lists its entries).
    /// A kernel model's kernel is a built-in one named in the configuration or a custom one,
    /// `cwrs._kernel.CallableKernel` (its `evaluate` and `diagonal` give checked values).
    #[new]
    #[pyo3(signature = (config, kernel=None))]
    fn new(config: &Bound<'_, PyDict>, kernel: Option<Py<PyAny>>) -> PyResult<Self> {
        let as_parameter = |err| match err {
            CwError::InvalidState(message) => CwError::InvalidParameter(message),
            err => err,
        };
        let held = held_entries(config).map_err(as_parameter)?;
        let config = State::from_held(&held, false).map_err(as_parameter)?;
        let custom = CallableKernel::wrap(kernel);
        guarded(NAME, "__new__", || Ok(Self::wrap(Estimator::new(config, custom)?)))
    }

    /// Rebuilds a model from the dict returned by `state()` (with the custom kernel it was
    /// built with, if any: the state holds no code).
    #[staticmethod]
    #[pyo3(signature = (state, kernel=None))]
    fn from_state(state: &Bound<'_, PyDict>, kernel: Option<Py<PyAny>>) -> PyResult<Self> {
        let held = held_entries(state)?;
        let state = State::from_held(&held, true)?;
        let custom = CallableKernel::wrap(kernel);
        guarded(NAME, "from_state", || Ok(Self::wrap(Estimator::from_state(&state, custom)?)))
    }

    /// An independent copy: a restore point that, unlike `state()`, leaves the model as it is.
    fn copy(&self, py: Python<'_>) -> PyResult<Self> {
        Ok(Self::wrap(self.cloned(py, "copy")?))
    }

    /// Everything needed to rebuild the model exactly, by name (a full covariance folded).
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let state = self.estimator.write(py, "state", Work::Quick, |e| Ok(e.state()));
        state_to_dict(py, state?)
    }

    /// The lean path of the estimators' `partial_fit`: learns `x` and `y` when `x` is a few
    /// (≤ 64) C-contiguous float64 rows of the model's width and `y` (a 1-D array, list or
    /// tuple) one label per row, each a key of `targets` (label → native target; None: finite
    /// numbers, for a regressor). Anything else is left to the checked path: False, nothing
    /// learned. `check_batch` is called before more than one row is learned (the estimator's
    /// check of hyper-parameters changed since the last one: a batch re-checks them).
    #[pyo3(signature = (x, y, targets, check_batch, /))]
    fn learn_lean(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        targets: Option<&Bound<'_, PyDict>>,
        check_batch: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let Some(values) = lean::rows(x, self.n_features) else {
            return Ok(false);
        };
        let view = lean::matrix(values, self.n_features);
        let Some(targets) = lean::targets(y, view.n_rows(), targets) else {
            return Ok(false);
        };
        if view.n_rows() > 1 {
            check_batch.call0()?;
        }
        let learn = |e: &mut Estimator, rows: &Matrix| Ok(e.learn_few(rows, &targets)?);
        if self.cost.work(&view, view.n_rows()) == Work::Quick {
            let write = |s: &Shared<_>, work| s.write(py, work, |e| learn(e, &view));
            if let Some(result) = self.estimator.attached("partial_fit", write) {
                return result.map(|()| true);
            }
        }
        // Detached (long work, or waiting for the model): on a copy of the rows, since the
        // borrowed buffer may only be read attached (see `python::lean`).
        let copy = values.to_vec();
        let rows = lean::matrix(&copy, self.n_features);
        self.estimator.write(py, "partial_fit", Work::Batch, |e| learn(e, &rows))?;
        Ok(true)
    }

    /// The lean paths of the estimators' `decision_function` and `predict_proba` (rows ×
    /// classes, or both classes' probabilities of a binary model): None where they do not
    /// apply (see [`Model::lean`]).
    #[pyo3(signature = (x, /))]
    fn decision_lean<'py>(&self, x: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let f = Estimator::decision_function;
        self.lean(x, "decision_function", self.cost.columns, f)
    }

    #[pyo3(signature = (x, /))]
    fn proba_lean<'py>(&self, x: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let binary = self.cost.columns.is_none();
        let columns = self.cost.columns.unwrap_or(2);
        self.lean(x, "predict_proba", Some(columns), move |e, rows, out| {
            if !binary {
                return e.probabilities(rows, out);
            }
            e.probabilities(rows, &mut out[..rows.n_rows()])?;
            with_complements(out);
            Ok(())
        })
    }

    /// The lean path of the classifiers' `predict`: each row's best class taken from
    /// `classes` (an array; `class_rows`: a copy of `class_rows[k]`, the array `classes[k:k+1]`,
    /// for one row), or None where it does not apply (see [`Model::lean`]).
    #[pyo3(signature = (x, classes, class_rows, /))]
    fn predict_lean<'py>(
        &self,
        x: &Bound<'py, PyAny>,
        classes: &Bound<'py, PyAny>,
        class_rows: &Bound<'py, PyTuple>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(values) = lean::rows(x, self.n_features) else {
            return Ok(None);
        };
        let view = lean::matrix(values, self.n_features);
        let width = self.cost.columns.unwrap_or(1);
        let mut scores = [0.0; 64]; // no allocation: more scores take the general path
        let n_scores = view.n_rows() * width;
        if n_scores > scores.len() || self.cost.work(&view, view.n_rows()) == Work::Batch {
            return Ok(None);
        }
        let scores = &mut scores[..n_scores];
        let fill = |e: &Estimator| Ok(e.decision_function(&view, &mut *scores)?);
        match self.estimator.attached("predict", |s, work| s.read(x.py(), work, fill)) {
            Some(Ok(())) if !scores.iter().any(|v| v.is_nan()) => {}
            Some(Err(err)) => return Err(err),
            _ => return Ok(None),
        }
        lean::take(classes, class_rows, scores.chunks(width).map(best_class))
    }

    /// Learns the rows of `x` (row `i` `repeats[i]` times; rows taken in `order` when given)
    /// with float64 labels ±1 or targets, or int64 class indices. Everything is validated
    /// before the first update. A long batch stops at Ctrl-C, leaving the model as it was
    /// (see `crate::interrupt`).
    #[pyo3(signature = (x, y, repeats=None, order=None))]
    fn partial_fit<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
        y: TargetsArg<'py>,
        repeats: Option<PyReadonlyArray1<'py, u32>>,
        order: Option<PyReadonlyArray1<'py, i64>>,
    ) -> PyResult<()> {
        let (view, mut classes) = (x.view()?, Vec::new());
        let targets = y.targets(&mut classes)?;
        let order = order.map(|o| indices(&o, "row order")).transpose()?;
        let repeats = repeats.as_ref().map(slice).transpose()?;
        let presentation = Presentation {
            repeats,
            order: order.as_deref(),
            stop: None,
        };
        let work = self.cost.work(&view, presentation.len(view.n_rows()) as usize);
        let interrupt = Interrupt::new(|| Python::attach(|py| py.check_signals()));
        self.estimator.write(py, "partial_fit", work, |e| {
            Ok(e.partial_fit_interruptible(&view, targets, presentation, &interrupt)?)
        })?;
        interrupt.into_error().map_or(Ok(()), Err)
    }

    /// `fit`'s passes on `n_jobs` threads (docs/design.md §9.4, `crate::sharded`): one pass per
    /// row order of the iterable `orders` (None: the stored order), each learned in `n_jobs`
    /// shards and merged into this model. Ctrl-C ends the fit between or during passes, the
    /// model left as the last complete pass made it.
    #[pyo3(signature = (x, y, orders, n_jobs, repeats=None))]
    fn fit_sharded<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
        y: TargetsArg<'py>,
        orders: &Bound<'py, PyAny>,
        n_jobs: usize,
        repeats: Option<PyReadonlyArray1<'py, u32>>,
    ) -> PyResult<()> {
        let (view, mut classes) = (x.view()?, Vec::new());
        let targets = y.targets(&mut classes)?;
        let repeats = repeats.as_ref().map(slice).transpose()?;
        let new = |e: &Estimator| Ok(ShardedFit::new(e, n_jobs)?);
        let mut fit = self.estimator.read(py, "fit", Work::Batch, new)?;
        let interrupt = Interrupt::new(|| Python::attach(|py| py.check_signals()));
        let stop = || interrupt.stop();
        for order in orders.try_iter()? {
            let order: Option<PyReadonlyArray1<'py, i64>> = order?.extract()?;
            let order = order.map(|o| indices(&o, "row order")).transpose()?;
            let learned = self.estimator.write(py, "fit", Work::Batch, |e| {
                let stop = Some(Stop(&stop));
                Ok(fit.pass(e, &view, targets, repeats, order.as_deref(), stop)?)
            })?;
            if !learned {
                break;
            }
        }
        interrupt.into_error().map_or(Ok(()), Err)
    }
}

/// The merge of `models` (native models of one configuration) trained from `base` (None: the
/// prior) by `method` ("auto", "information", "precision", "average"; docs/design.md §9), with
/// the weights bₖ of "precision" and "average" (None: by updates beyond `base`).
#[pyfunction]
#[pyo3(signature = (models, method, base=None, weights=None))]
pub(super) fn merge(
    py: Python<'_>,
    models: Vec<PyRef<'_, Model>>,
    method: &str,
    base: Option<PyRef<'_, Model>>,
    weights: Option<Vec<f64>>,
) -> PyResult<Model> {
    let copies = models.iter().map(|m| m.cloned(py, "merge"));
    let copies = copies.collect::<PyResult<Vec<_>>>()?;
    let base = base.map(|b| b.cloned(py, "merge")).transpose()?;
    let method = crate::merge::Method::from_name(method)?;
    let merged = py.detach(|| {
        guarded(NAME, "merge", || {
            let refs = copies.iter().collect::<Vec<_>>();
            let merged = crate::merge::merge(&refs, method, base.as_ref(), weights.as_deref());
            Ok::<_, PyErr>(merged?)
        })
    })?;
    Ok(Model::wrap(merged))
}
