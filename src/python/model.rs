//! `Model`: the one Python-facing model type, a thin wrapper over [`Estimator`] held in a
//! [`Guarded`] lock. It is built from a configuration dict or a saved state dict (see
//! docs/model-format.md) and gives back its state as a dict.

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use super::callable_kernel::CallableKernel;
use super::convert::{
    hold_arrays, indices, one_row, slice, state_from_dict, state_to_dict, MatrixArg,
    PresentationArgs, TargetsArg,
};
use super::guard::{guarded, Guarded};
use super::interrupt::learn_batch;
use crate::data::Matrix;
use crate::error::{zeros, CwError};
use crate::estimator::{Estimator, Model as Learner, Targets};
use crate::learner::DualLearner;
use crate::shared::Work;

const NAME: &str = "Model";

/// A model of any kind ("binary", "regressor", "multiclass", "kernel", "multiclass_kernel").
/// The Python estimators in `cwrs` wrap it.
#[pyclass(module = "cwrs._cwrs", frozen)]
pub(super) struct Model {
    estimator: Guarded<Estimator>,
}

impl Model {
    fn wrap(estimator: Estimator) -> Self {
        Model {
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
        let n_rows = view.n_rows();
        let (out, width) = self.estimator.read(py, operation, Work::Batch, |e| {
            let width = e.n_classes();
            let n_values = n_rows.checked_mul(width.unwrap_or(1));
            let mut out = zeros(n_values, || format!("the output of {operation}"))?;
            f(e, &view, &mut out)?;
            Ok((out, width))
        })?;
        rows(py, out, width.map(|width| [n_rows, width]))
    }

    /// A value only models of some kinds have (`None`: an `AttributeError`).
    fn optional<R: Send>(
        &self,
        py: Python<'_>,
        name: &str,
        f: impl FnOnce(&Estimator) -> Option<R> + Send,
    ) -> PyResult<R> {
        let value = self.estimator.get(py, name, f)?;
        value.ok_or_else(|| PyAttributeError::new_err(format!("this model has no {name}")))
    }

    /// The binary dual learner (the only one whose support set Python reads directly).
    fn dual<R: Send>(
        &self,
        py: Python<'_>,
        name: &str,
        f: impl FnOnce(&DualLearner) -> R + Send,
    ) -> PyResult<R> {
        self.optional(py, name, |e| match e.model() {
            Learner::Kernel(l) => Some(f(l)),
            _ => None,
        })
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

#[pymethods]
impl Model {
    /// A fresh model as the configuration dict says (docs/model-format.md lists its entries).
    /// A kernel model's kernel is a built-in one named in the configuration or the callable
    /// `kernel(X, Z)`, which gets the support rows as a CSR matrix when `sparse_support`.
    #[new]
    #[pyo3(signature = (config, kernel=None, sparse_support=false))]
    fn new(
        config: &Bound<'_, PyDict>,
        kernel: Option<Py<PyAny>>,
        sparse_support: bool,
    ) -> PyResult<Self> {
        let config = state_from_dict(config, false, &mut [].iter()).map_err(|err| match err {
            CwError::InvalidState(message) => CwError::InvalidParameter(message),
            err => err,
        })?;
        let custom = CallableKernel::wrap(kernel, sparse_support)?;
        guarded(NAME, "__new__", || {
            Ok(Self::wrap(Estimator::new(config, custom)?))
        })
    }

    /// Rebuilds a model from the dict returned by `state()` (with the callable kernel it was
    /// built with, if any: the state holds no code).
    #[staticmethod]
    #[pyo3(signature = (state, kernel=None, sparse_support=false))]
    fn from_state(
        state: &Bound<'_, PyDict>,
        kernel: Option<Py<PyAny>>,
        sparse_support: bool,
    ) -> PyResult<Self> {
        let mut held = Vec::new();
        hold_arrays(state, &mut held);
        let state = state_from_dict(state, true, &mut held.iter())?;
        let custom = CallableKernel::wrap(kernel, sparse_support)?;
        guarded(NAME, "from_state", || {
            Ok(Self::wrap(Estimator::from_state(&state, custom)?))
        })
    }

    /// An independent copy: a restore point that, unlike `state()`, leaves the model as it is.
    fn copy(&self, py: Python<'_>) -> PyResult<Self> {
        let estimator = self
            .estimator
            .read(py, "copy", Work::Batch, |e| Ok(e.clone()))?;
        Ok(Self::wrap(estimator))
    }

    /// Everything needed to rebuild the model exactly, by name (a full covariance folded).
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let state = self
            .estimator
            .write(py, "state", Work::Quick, |e| Ok(e.state()))?;
        state_to_dict(py, state)
    }

    /// Learns one row (a (1, d) C-ordered float64 array) with label ±1, target, or class
    /// index `y`, with the validation a single row needs and nothing more; returns whether the
    /// model changed.
    fn learn_one(&self, py: Python<'_>, x: PyReadonlyArray2<f64>, y: f64) -> PyResult<bool> {
        let row = one_row(&x)?;
        self.estimator
            .write(py, "learn_one", Work::Quick, |e| Ok(e.learn(row, y)?))
    }

    /// Learns the rows of `x` (row `i` `repeats[i]` times; rows taken in `order` when given)
    /// with float64 labels ±1 or targets, or int64 class indices. Everything is validated
    /// before the first update.
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
        let presentation = PresentationArgs::new(repeats, order)?;
        let presentation = presentation.view()?;
        learn_batch(
            py,
            &self.estimator,
            &view,
            presentation,
            |e, presentation| e.partial_fit(&view, targets, presentation),
        )
    }

    /// μ·x for every row (rows × classes for a multiclass model).
    fn decision_function<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.fill_rows(py, "decision_function", &x, Estimator::decision_function)
    }

    /// xᵀΣx for every row (and class).
    fn variance<'py>(&self, py: Python<'py>, x: MatrixArg<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.fill_rows(py, "variance", &x, Estimator::variances)
    }

    /// Φ(μ·x / √(xᵀΣx)) for every row; P(class k has the highest score) for every row and
    /// class of a multiclass model.
    fn probabilities<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.fill_rows(py, "probabilities", &x, Estimator::probabilities)
    }

    #[getter]
    fn kind(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.estimator.get(py, "kind", Estimator::kind)
    }

    /// The configuration entries the model was built from (its rule's hyper-parameters as it
    /// learns with them, whatever the estimator's attributes now say).
    #[getter]
    fn config<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let config = self.estimator.get(py, "config", |e| e.config().clone())?;
        state_to_dict(py, config)
    }

    /// The number of classes of a multiclass model, None for one output per row.
    #[getter]
    fn n_classes(&self, py: Python<'_>) -> PyResult<Option<usize>> {
        self.estimator.get(py, "n_classes", Estimator::n_classes)
    }

    /// "identity", "diag" or "full"; None for a kernel model.
    #[getter]
    fn covariance_kind(&self, py: Python<'_>) -> PyResult<Option<&'static str>> {
        self.estimator.get(py, "covariance_kind", |e| {
            e.covariance_kind().map(|kind| kind.name())
        })
    }

    /// μ over the features, then the bias weight (with every L1 threshold applied); classes ×
    /// coordinates for a multiclass model.
    #[getter]
    fn mean<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (mean, n_classes) = self.optional(py, "mean", |e| Some((e.mean()?, e.n_classes())))?;
        let shape = n_classes.map(|n| [n, mean.len() / n]);
        rows(py, mean, shape)
    }

    /// The covariance values (empty, the variances, or Σ row-major), over the mean's
    /// coordinates; one row per class for a multiclass model.
    #[getter]
    fn covariance<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (values, n_classes) =
            self.optional(py, "covariance", |e| Some((e.covariance()?, e.n_classes())))?;
        let shape = n_classes.map(|n| [n, values.len() / n]);
        rows(py, values, shape)
    }

    #[getter]
    fn n_updates(&self, py: Python<'_>) -> PyResult<u64> {
        self.estimator.get(py, "n_updates", Estimator::n_updates)
    }

    /// Rounds that were mistakes; None for a regressor.
    #[getter]
    fn n_mistakes(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        self.estimator.get(py, "n_mistakes", Estimator::n_mistakes)
    }

    /// Support rows: a count for a binary kernel model, one count per class for a multiclass
    /// one.
    #[getter]
    fn n_support<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let counts = self.optional(py, "n_support", |e| match e.model() {
            Learner::Kernel(l) => Some(vec![l.model().n_support() as u64]),
            Learner::MulticlassKernel(l) => {
                Some(l.classes().iter().map(|g| g.n_support() as u64).collect())
            }
            _ => None,
        })?;
        if self.n_classes(py)?.is_some() {
            return Ok(PyArray1::from_vec(py, counts).into_any());
        }
        Ok(counts[0].into_pyobject(py)?.into_any())
    }

    /// The support rows of a binary kernel model as CSR arrays (data, indices, indptr).
    fn support_vectors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let (values, indices, indptr) =
            self.dual(py, "support_vectors", |l| l.model().support_vectors())?;
        (
            PyArray1::from_vec(py, values),
            PyArray1::from_vec(py, indices),
            PyArray1::from_vec(py, indptr),
        )
            .into_pyobject(py)
    }

    /// ν, one coefficient per support row of a binary kernel model (averaged, if it averages).
    #[getter]
    fn dual_coef<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let nu = self.dual(py, "dual_coef", |l| {
            l.predicted_mean(0, l.model().dual_coef().to_vec())
        })?;
        Ok(PyArray1::from_vec(py, nu))
    }
}
