//! `Model`: the one Python-facing model type, a thin wrapper over [`Estimator`] held in a
//! [`Guarded`] lock (see `crate::shared`: threads sharing a model wait for each other, and a
//! panic raises `RuntimeError`). It is built from a configuration dict or a saved state dict
//! (see docs/model-format.md) and gives back its state as a dict.

use numpy::{
    PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::PyAttributeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyTuple};

use super::callable_kernel::CallableKernel;
use super::convert::{
    hold_arrays, indices, slice, state_from_dict, state_to_dict, value_to_py, MatrixArg, TargetsArg,
};
use crate::call_cost::CallCost;
use crate::data::{Matrix, Presentation, Stop};
use crate::error::CwError;
use crate::estimator::{Estimator, Model as Learner, Targets};
use crate::interrupt::Interrupt;
use crate::sharded::ShardedFit;
use crate::shared::{guarded, Guarded, Work};
use crate::state::Value;

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

    /// The attribute `name` (see [`Estimator::attribute`]), a multiclass model's arrays one
    /// row per class; an `AttributeError` where the model has none.
    fn attribute<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let read = |e: &Estimator| (e.attribute(name), e.n_classes());
        match self
            .estimator
            .read(py, name, Work::Quick, |e| Ok(read(e)))?
        {
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
}

/// `x` borrowed when it is 1 to 64 rows of float64 of width `n_features` (see `learn_lean`).
fn lean_rows<'py>(x: &Bound<'py, PyAny>, n_features: usize) -> Option<PyReadonlyArray2<'py, f64>> {
    let x = x.cast::<PyArray2<f64>>().ok()?.try_readonly().ok()?;
    let [n_rows, n_cols] = x.shape() else {
        return None;
    };
    let fits = *n_cols == n_features && (1..=64).contains(n_rows) && x.is_c_contiguous();
    fits.then_some(x)
}

/// The native targets of the labels `y` of `n_rows` rows (see `learn_lean`), or None.
fn lean_targets(
    y: &Bound<'_, PyAny>,
    n_rows: usize,
    targets: Option<&Bound<'_, PyDict>>,
) -> Option<Vec<f64>> {
    let labels = match y.cast::<PyUntypedArray>() {
        Ok(array) if array.ndim() == 1 => y.call_method0(intern!(y.py(), "tolist")).ok()?,
        Ok(_) => return None,
        Err(_) => y.clone(),
    };
    let labels = match labels.cast_exact::<PyList>() {
        Ok(list) => list.clone(),
        Err(_) => labels.cast_exact::<PyTuple>().ok()?.to_list(),
    };
    if labels.len() != n_rows {
        return None;
    }
    let target = |label: Bound<'_, PyAny>| match targets {
        Some(targets) => targets.get_item(label).ok()??.extract::<f64>().ok(),
        None if label.is_instance_of::<PyBool>() => None,
        None => label.extract::<f64>().ok().filter(|t| t.is_finite()),
    };
    labels.iter().map(target).collect()
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
     n_mistakes, n_support, dual_coef]
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
        let config = state_from_dict(config, false, &mut [].iter()).map_err(|err| match err {
            CwError::InvalidState(message) => CwError::InvalidParameter(message),
            err => err,
        })?;
        let custom = CallableKernel::wrap(kernel);
        guarded(NAME, "__new__", || Ok(Self::wrap(Estimator::new(config, custom)?)))
    }

    /// Rebuilds a model from the dict returned by `state()` (with the custom kernel it was
    /// built with, if any: the state holds no code).
    #[staticmethod]
    #[pyo3(signature = (state, kernel=None))]
    fn from_state(state: &Bound<'_, PyDict>, kernel: Option<Py<PyAny>>) -> PyResult<Self> {
        let mut held = Vec::new();
        hold_arrays(state, &mut held);
        let state = state_from_dict(state, true, &mut held.iter())?;
        let custom = CallableKernel::wrap(kernel);
        guarded(NAME, "from_state", || Ok(Self::wrap(Estimator::from_state(&state, custom)?)))
    }

    /// An independent copy: a restore point that, unlike `state()`, leaves the model as it is.
    fn copy(&self, py: Python<'_>) -> PyResult<Self> {
        let copy = self.estimator.read(py, "copy", Work::Batch, |e| Ok(e.clone()));
        Ok(Self::wrap(copy?))
    }

    /// Everything needed to rebuild the model exactly, by name (a full covariance folded).
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let state = self.estimator.write(py, "state", Work::Quick, |e| Ok(e.state()));
        state_to_dict(py, state?)
    }

    /// The configuration entries the model was built from (its rule's hyper-parameters as it
    /// learns with them, whatever the estimator's attributes now say).
    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let config = |e: &Estimator| Ok(e.config().clone());
        state_to_dict(py, self.estimator.read(py, "config", Work::Quick, config)?)
    }

    /// The lean path of the estimators' `partial_fit`: learns `x` and `y` when `x` is a few
    /// (≤ 64) C-contiguous float64 rows of the model's width and `y` (a 1-D array, list or
    /// tuple) one label per row, each a key of `targets` (label → native target; None: finite
    /// numbers, for a regressor). Anything else is left to the checked path: False, nothing
    /// learned. `check_batch` is called before more than one row is learned (the estimator's
    /// check of hyper-parameters changed since the last one: a batch re-checks them).
    fn learn_lean(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        targets: Option<&Bound<'_, PyDict>>,
        check_batch: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let Some(x) = lean_rows(x, self.n_features) else {
            return Ok(false);
        };
        let Some(view) = x.as_slice().ok().map(|values| Matrix::Dense {
            values,
            n_rows: x.shape()[0],
            n_cols: self.n_features,
        }) else {
            return Ok(false);
        };
        let Some(targets) = lean_targets(y, view.n_rows(), targets) else {
            return Ok(false);
        };
        if view.n_rows() > 1 {
            check_batch.call0()?;
        }
        let work = self.cost.work(&view, view.n_rows());
        let learn = |e: &mut Estimator| Ok(e.learn_few(&view, &targets)?);
        self.estimator.write(py, "partial_fit", work, learn)?;
        Ok(true)
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
        let view = x.view()?;
        let classes = match &y {
            TargetsArg::Classes(labels) => indices(labels, "labels")?,
            TargetsArg::Values(_) => Vec::new(),
        };
        let targets = match &y {
            TargetsArg::Values(y) => Targets::Values(slice(y)?),
            TargetsArg::Classes(_) => Targets::Classes(&classes),
        };
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
        let view = x.view()?;
        let labels;
        let targets = match &y {
            TargetsArg::Values(values) => Targets::Values(slice(values)?),
            TargetsArg::Classes(classes) => {
                labels = indices(classes, "labels")?;
                Targets::Classes(&labels)
            }
        };
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

    /// The support rows of a binary kernel model as CSR arrays (data, indices, indptr).
    fn support_vectors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let support = |e: &Estimator| match e.model() {
            Learner::Kernel(l) => Ok(l.model().support_vectors()),
            _ => Err(PyAttributeError::new_err("this model has no support_vectors")),
        };
        let (values, indices, indptr) =
            self.estimator.read(py, "support_vectors", Work::Quick, support)?;
        let arrays = (PyArray1::from_vec(py, values), PyArray1::from_vec(py, indices));
        (arrays.0, arrays.1, PyArray1::from_vec(py, indptr)).into_pyobject(py)
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
    let copy = |m: &Model| {
        m.estimator
            .read(py, "merge", Work::Batch, |e| Ok(e.clone()))
    };
    let copies = models
        .iter()
        .map(|m| copy(m))
        .collect::<PyResult<Vec<_>>>()?;
    let base = base.map(|b| copy(&b)).transpose()?;
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
