//! PyO3 bindings: thin wrappers that borrow NumPy buffers, release the GIL and call the core.
//! No math lives here; validation errors of the core become `ValueError`, I/O errors `OSError`,
//! a model too large for memory `MemoryError`.
//!
//! Every model is a frozen pyclass holding its learner in a [`Guarded`] lock, and every entry
//! point runs the core through it or through [`guarded`] (see `guard.rs`): threads sharing a model
//! wait for each other, and a panic raises `RuntimeError` instead of `PanicException`.

use numpy::{PyArray1, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::covariance::CovarianceKind;
use crate::data::hashing::hashed_column;
use crate::data::{Matrix, Presentation, Row, Shape};
use crate::error::{check_memory, zeros, CwError};
use crate::kernel::{DualGaussian, DualLearner, DualState, Kernel};
use crate::learner::Learner;
use crate::multiclass::{ClassModel, MulticlassLearner, Strategy};
use crate::regression::Regressor;
use crate::rules::{margin_probability, RegressionRule, Rule};
use crate::shared::Work;
use crate::sparse_l1::{Penalty, L1};
use guard::{guarded, Guarded};
use interrupt::learn_batch;

mod guard;
mod interrupt;
mod rules;
mod svmlight;

type Float64Array = PyArray1<f64>;

impl From<CwError> for PyErr {
    fn from(err: CwError) -> PyErr {
        match err {
            CwError::Io(kind, msg) => std::io::Error::new(kind, msg).into(),
            CwError::OutOfMemory(msg) => PyMemoryError::new_err(msg),
            err => PyValueError::new_err(err.to_string()),
        }
    }
}

/// A batch of rows as passed from Python: a C-contiguous float64 matrix, or the arrays of a CSR
/// matrix `(data, indices, indptr, n_cols)` with one integer type for indices and indptr.
#[derive(FromPyObject)]
enum MatrixArg<'py> {
    Dense(PyReadonlyArray2<'py, f64>),
    Csr32(
        PyReadonlyArray1<'py, f64>,
        PyReadonlyArray1<'py, i32>,
        PyReadonlyArray1<'py, i32>,
        usize,
    ),
    Csr64(
        PyReadonlyArray1<'py, f64>,
        PyReadonlyArray1<'py, i64>,
        PyReadonlyArray1<'py, i64>,
        usize,
    ),
}

impl MatrixArg<'_> {
    /// A zero-copy view of the buffers.
    fn view(&self) -> PyResult<Matrix<'_>> {
        let contiguous = |e: numpy::AsSliceError| PyValueError::new_err(e.to_string());
        Ok(match self {
            MatrixArg::Dense(x) => {
                let shape = x.shape();
                Matrix::Dense {
                    values: x.as_slice().map_err(contiguous)?,
                    n_rows: shape[0],
                    n_cols: shape[1],
                }
            }
            MatrixArg::Csr32(values, indices, indptr, n_cols) => Matrix::Csr32 {
                values: values.as_slice().map_err(contiguous)?,
                indices: indices.as_slice().map_err(contiguous)?,
                indptr: indptr.as_slice().map_err(contiguous)?,
                n_cols: *n_cols,
            },
            MatrixArg::Csr64(values, indices, indptr, n_cols) => Matrix::Csr64 {
                values: values.as_slice().map_err(contiguous)?,
                indices: indices.as_slice().map_err(contiguous)?,
                indptr: indptr.as_slice().map_err(contiguous)?,
                n_cols: *n_cols,
            },
        })
    }
}

fn named(params: &[(String, f64)]) -> Vec<(&str, f64)> {
    params.iter().map(|(k, v)| (k.as_str(), *v)).collect()
}

fn slice<'a, T: numpy::Element>(array: &'a PyReadonlyArray1<T>) -> PyResult<&'a [T]> {
    array
        .as_slice()
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The one row of a (1, d) C-ordered float64 array: the single-row fast path.
fn one_row<'a>(x: &'a PyReadonlyArray2<f64>) -> PyResult<Row<'a>> {
    if x.shape()[0] != 1 {
        return Err(PyValueError::new_err(format!(
            "learn_one takes one row, got {}",
            x.shape()[0]
        )));
    }
    Ok(Row::Dense(
        x.as_slice()
            .map_err(|e| PyValueError::new_err(e.to_string()))?,
    ))
}

/// Non-negative integers (row indices or class indices) as `usize`.
fn indices(array: &PyReadonlyArray1<i64>, what: &str) -> PyResult<Vec<usize>> {
    array
        .as_array()
        .iter()
        .map(|&i| usize::try_from(i))
        .collect::<Result<_, _>>()
        .map_err(|_| PyValueError::new_err(format!("{what} holds a negative index")))
}

/// The optional `repeats` and `order` arguments of every `partial_fit`.
struct PresentationArgs<'py> {
    repeats: Option<PyReadonlyArray1<'py, u32>>,
    order: Option<Vec<usize>>,
}

impl<'py> PresentationArgs<'py> {
    fn new(
        repeats: Option<PyReadonlyArray1<'py, u32>>,
        order: Option<PyReadonlyArray1<'py, i64>>,
    ) -> PyResult<Self> {
        let order = order
            .as_ref()
            .map(|o| indices(o, "row order"))
            .transpose()?;
        Ok(PresentationArgs { repeats, order })
    }

    fn view(&self) -> PyResult<Presentation<'_>> {
        Ok(Presentation {
            repeats: self.repeats.as_ref().map(slice).transpose()?,
            order: self.order.as_deref(),
            stop: None,
        })
    }
}

/// Runs `f` over the rows of `x` on `model` with the GIL released; returns `width(model)` values
/// per row, as a 1-D array when the width is `None`, else as rows × width.
fn fill_rows<'py, T: Send + Sync>(
    py: Python<'py>,
    model: &Guarded<T>,
    operation: &str,
    x: &MatrixArg,
    width: impl FnOnce(&T) -> Option<usize> + Send,
    f: impl FnOnce(&T, &Matrix, &mut [f64]) -> Result<(), CwError> + Send,
) -> PyResult<Bound<'py, PyAny>> {
    let view = x.view()?;
    let n_rows = view.n_rows();
    let (out, width) = model.read(py, operation, Work::Batch, |model| {
        let width = width(model);
        let n_values = n_rows.checked_mul(width.unwrap_or(1));
        let mut out = zeros(n_values, || format!("the output of {operation}"))?;
        f(model, &view, &mut out)?;
        Ok((out, width))
    })?;
    let array = PyArray1::from_vec(py, out);
    Ok(match width {
        None => array.into_any(),
        Some(width) => array.reshape([n_rows, width])?.into_any(),
    })
}

/// An L1 penalty as Python passes it: (penalty name, alpha, penalize_intercept).
type L1Spec = Option<(String, f64, bool)>;
/// A lazy L1 state as Python stores it: (H, H per coordinate).
type L1StateArg<'py> = Option<(f64, PyReadonlyArray1<'py, f64>)>;

fn build_l1(spec: &L1Spec, shape: Shape) -> PyResult<Option<L1>> {
    spec.as_ref()
        .map(|(penalty, alpha, penalize_intercept)| {
            L1::for_shape(
                Penalty::from_name(penalty)?,
                *alpha,
                *penalize_intercept,
                shape,
            )
        })
        .transpose()
        .map_err(PyErr::from)
}

/// `l1` with its restored lazy state.
fn restore_l1(l1: L1, state: &L1StateArg) -> PyResult<L1> {
    match state {
        Some((total, last)) => Ok(l1.with_state(*total, slice(last)?)?),
        None => Err(PyValueError::new_err(
            "a penalised model's state needs its L1 state",
        )),
    }
}

/// A lazy L1 state as Rust values, copied out of a locked model: (H, H per coordinate).
type L1Values = Option<(f64, Vec<f64>)>;

fn l1_values(l1: Option<&L1>) -> L1Values {
    l1.map(|l1| (l1.total(), l1.last().to_vec()))
}

fn l1_state(py: Python<'_>, values: L1Values) -> Option<(f64, Bound<'_, Float64Array>)> {
    values.map(|(total, last)| (total, PyArray1::from_vec(py, last)))
}

/// A binary learner (labels ±1). The Python estimators in `cwrs` wrap it.
#[pyclass(module = "cwrs._cwrs", frozen)]
struct BinaryModel {
    learner: Guarded<Learner>,
    rule_name: String,
    params: Vec<(String, f64)>,
    l1: L1Spec,
}

impl BinaryModel {
    const NAME: &'static str = "BinaryModel";

    fn wrap(learner: Learner, rule: &str, params: Vec<(String, f64)>, l1: L1Spec) -> Self {
        BinaryModel {
            learner: Guarded::new(Self::NAME, learner),
            rule_name: rule.to_string(),
            params,
            l1,
        }
    }
}

#[pymethods]
impl BinaryModel {
    #[new]
    #[pyo3(signature = (rule, params, covariance, n_features, fit_intercept, a, l1=None))]
    fn new(
        rule: &str,
        params: Vec<(String, f64)>,
        covariance: &str,
        n_features: usize,
        fit_intercept: bool,
        a: f64,
        l1: L1Spec,
    ) -> PyResult<Self> {
        guarded(Self::NAME, "__new__", || {
            let mut learner = Learner::new(
                Rule::from_name(rule, &named(&params))?,
                CovarianceKind::from_name(covariance)?,
                n_features,
                fit_intercept,
                a,
            )?;
            if let Some(penalty) = build_l1(&l1, learner.shape())? {
                learner = learner.with_l1(penalty)?;
            }
            Ok(Self::wrap(learner, rule, params, l1))
        })
    }

    /// Rebuilds a model from the tuple returned by `state()`.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn from_state(
        rule: &str,
        params: Vec<(String, f64)>,
        covariance: &str,
        n_features: usize,
        fit_intercept: bool,
        mean: PyReadonlyArray1<f64>,
        covariance_values: PyReadonlyArray1<f64>,
        n_updates: u64,
        n_mistakes: u64,
        l1: L1Spec,
        l1_state: L1StateArg,
    ) -> PyResult<Self> {
        guarded(Self::NAME, "from_state", || {
            let mut learner = Learner::from_state(
                Rule::from_name(rule, &named(&params))?,
                CovarianceKind::from_name(covariance)?,
                n_features,
                fit_intercept,
                slice(&mean)?,
                slice(&covariance_values)?,
                n_updates,
                n_mistakes,
            )?;
            if let Some(penalty) = build_l1(&l1, learner.shape())? {
                learner = learner.with_l1(restore_l1(penalty, &l1_state)?)?;
            }
            Ok(Self::wrap(learner, rule, params, l1))
        })
    }

    /// Learns one row (a (1, d) C-ordered float64 array) with label `y` (±1), with the
    /// validation a single row needs and nothing more; returns whether the model changed.
    fn learn_one(&self, py: Python<'_>, x: PyReadonlyArray2<f64>, y: f64) -> PyResult<bool> {
        let row = one_row(&x)?;
        self.learner
            .write(py, "learn_one", Work::Quick, |l| Ok(l.learn(row, y)?))
    }

    /// Everything needed to rebuild the model exactly, as plain Python and NumPy values.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let (kind, shape, mean, covariance, counters, l1) =
            self.learner.read(py, "state", Work::Quick, |l| {
                Ok((
                    l.covariance_kind().name(),
                    l.shape(),
                    l.mean().into_owned(),
                    l.covariance_state().into_owned(),
                    (l.n_updates(), l.n_mistakes()),
                    l1_values(l.l1()),
                ))
            })?;
        let state = (
            self.rule_name.clone(),
            self.params.clone(),
            kind,
            shape.n_features,
            shape.fit_intercept,
            PyArray1::from_vec(py, mean),
            PyArray1::from_vec(py, covariance),
            counters.0,
            counters.1,
            self.l1.clone(),
            l1_state(py, l1),
        );
        state.into_pyobject(py)
    }

    /// Learns the rows of `x` (row `i` `repeats[i]` times; rows taken in `order` when given).
    /// Everything is validated before the first update.
    #[pyo3(signature = (x, y, repeats=None, order=None))]
    fn partial_fit<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
        y: PyReadonlyArray1<'py, f64>,
        repeats: Option<PyReadonlyArray1<'py, u32>>,
        order: Option<PyReadonlyArray1<'py, i64>>,
    ) -> PyResult<()> {
        let (view, y) = (x.view()?, slice(&y)?);
        let presentation = PresentationArgs::new(repeats, order)?;
        let presentation = presentation.view()?;
        learn_batch(py, &self.learner, &view, presentation, |l, presentation| {
            l.partial_fit(&view, y, presentation)
        })
    }

    /// μ·x for every row.
    fn decision_function<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        fill_rows(
            py,
            &self.learner,
            "decision_function",
            &x,
            |_| None,
            |l, m, out| l.decision_function(m, out),
        )
    }

    /// xᵀΣx for every row.
    fn variance<'py>(&self, py: Python<'py>, x: MatrixArg<'py>) -> PyResult<Bound<'py, PyAny>> {
        fill_rows(
            py,
            &self.learner,
            "variance",
            &x,
            |_| None,
            |l, m, out| l.variances(m, out),
        )
    }

    /// Φ(μ·x / √(xᵀΣx)) for every row.
    fn positive_probability<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        fill_rows(
            py,
            &self.learner,
            "positive_probability",
            &x,
            |_| None,
            |l, m, out| l.positive_probability(m, out),
        )
    }

    /// μ over the features, then the bias weight when the model fits an intercept (with every
    /// L1 threshold applied).
    #[getter]
    fn mean<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let mean = self.learner.get(py, "mean", |l| l.effective_mean())?;
        Ok(PyArray1::from_vec(py, mean))
    }

    /// The covariance values (empty, the variances, or Σ row-major), over the mean's coordinates.
    #[getter]
    fn covariance<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let values = self
            .learner
            .get(py, "covariance", |l| l.covariance().into_owned())?;
        Ok(PyArray1::from_vec(py, values))
    }

    /// "identity", "diag" or "full".
    #[getter]
    fn covariance_kind(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.learner
            .get(py, "covariance_kind", |l| l.covariance_kind().name())
    }

    #[getter]
    fn n_updates(&self, py: Python<'_>) -> PyResult<u64> {
        self.learner.get(py, "n_updates", Learner::n_updates)
    }

    #[getter]
    fn n_mistakes(&self, py: Python<'_>) -> PyResult<u64> {
        self.learner.get(py, "n_mistakes", Learner::n_mistakes)
    }
}

/// A multiclass learner over class indices 0..n_classes (max-score or one-vs-rest).
#[pyclass(module = "cwrs._cwrs", frozen)]
struct MulticlassModel {
    learner: Guarded<MulticlassLearner>,
    rule_name: String,
    params: Vec<(String, f64)>,
    l1: L1Spec,
}

impl MulticlassModel {
    const NAME: &'static str = "MulticlassModel";

    fn wrap(
        learner: MulticlassLearner,
        rule: &str,
        params: Vec<(String, f64)>,
        l1: L1Spec,
    ) -> Self {
        MulticlassModel {
            learner: Guarded::new(Self::NAME, learner),
            rule_name: rule.to_string(),
            params,
            l1,
        }
    }
}

#[pymethods]
impl MulticlassModel {
    #[new]
    #[pyo3(signature = (rule, params, strategy, covariance, n_classes, n_features, fit_intercept, a, l1=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        rule: &str,
        params: Vec<(String, f64)>,
        strategy: &str,
        covariance: &str,
        n_classes: usize,
        n_features: usize,
        fit_intercept: bool,
        a: f64,
        l1: L1Spec,
    ) -> PyResult<Self> {
        guarded(Self::NAME, "__new__", || {
            let mut learner = MulticlassLearner::new(
                Rule::from_name(rule, &named(&params))?,
                Strategy::from_name(strategy)?,
                CovarianceKind::from_name(covariance)?,
                n_classes,
                n_features,
                fit_intercept,
                a,
            )?;
            if let Some(penalty) = build_l1(&l1, learner.shape())? {
                learner = learner.with_l1(penalty)?;
            }
            Ok(Self::wrap(learner, rule, params, l1))
        })
    }

    /// Rebuilds a model from the tuple returned by `state()`.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn from_state(
        rule: &str,
        params: Vec<(String, f64)>,
        strategy: &str,
        covariance: &str,
        n_classes: usize,
        n_features: usize,
        fit_intercept: bool,
        means: PyReadonlyArray1<f64>,
        covariances: PyReadonlyArray1<f64>,
        counters: (u64, u64),
        l1: L1Spec,
        l1_states: Option<Vec<(f64, PyReadonlyArray1<f64>)>>,
    ) -> PyResult<Self> {
        guarded(Self::NAME, "from_state", || {
            let (n_updates, n_mistakes) = counters;
            let mut learner = MulticlassLearner::from_state(
                Rule::from_name(rule, &named(&params))?,
                Strategy::from_name(strategy)?,
                CovarianceKind::from_name(covariance)?,
                n_classes,
                n_features,
                fit_intercept,
                slice(&means)?,
                slice(&covariances)?,
                n_updates,
                n_mistakes,
            )?;
            if let Some(penalty) = build_l1(&l1, learner.shape())? {
                let states = l1_states
                    .ok_or_else(|| {
                        PyValueError::new_err("a penalised model's state needs its L1 state")
                    })?
                    .iter()
                    .map(|(total, last)| Ok((*total, slice(last)?.to_vec())))
                    .collect::<PyResult<Vec<_>>>()?;
                learner = learner.with_l1(penalty)?.with_l1_states(&states)?;
            }
            Ok(Self::wrap(learner, rule, params, l1))
        })
    }

    /// Learns one row (a (1, d) C-ordered float64 array) of class index `label`; returns
    /// whether the model changed.
    fn learn_one(&self, py: Python<'_>, x: PyReadonlyArray2<f64>, label: usize) -> PyResult<bool> {
        let row = one_row(&x)?;
        self.learner
            .write(py, "learn_one", Work::Quick, |l| Ok(l.learn(row, label)?))
    }

    /// Everything needed to rebuild the model exactly, as plain Python and NumPy values.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let (header, shape, means, covariances, counters, l1_states) =
            self.learner.read(py, "state", Work::Quick, |l| {
                Ok((
                    (
                        l.strategy().name(),
                        l.covariance_kind().name(),
                        l.n_classes(),
                    ),
                    l.shape(),
                    l.means(),
                    l.covariances(),
                    (l.n_updates(), l.n_mistakes()),
                    l.l1_states(),
                ))
            })?;
        let (strategy, kind, n_classes) = header;
        let state = (
            self.rule_name.clone(),
            self.params.clone(),
            strategy,
            kind,
            n_classes,
            shape.n_features,
            shape.fit_intercept,
            PyArray1::from_vec(py, means),
            PyArray1::from_vec(py, covariances),
            counters,
            self.l1.clone(),
            l1_states.map(|states| {
                states
                    .into_iter()
                    .map(|(total, last)| (total, PyArray1::from_vec(py, last)))
                    .collect::<Vec<_>>()
            }),
        );
        state.into_pyobject(py)
    }

    /// Learns the rows of `x` with class indices `labels`.
    #[pyo3(signature = (x, labels, repeats=None, order=None))]
    fn partial_fit<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
        labels: PyReadonlyArray1<'py, i64>,
        repeats: Option<PyReadonlyArray1<'py, u32>>,
        order: Option<PyReadonlyArray1<'py, i64>>,
    ) -> PyResult<()> {
        let (view, labels) = (x.view()?, indices(&labels, "labels")?);
        let presentation = PresentationArgs::new(repeats, order)?;
        let presentation = presentation.view()?;
        learn_batch(py, &self.learner, &view, presentation, |l, presentation| {
            l.partial_fit(&view, &labels, presentation)
        })
    }

    /// μ_k·x for every row and class (rows × classes).
    fn decision_function<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        fill_rows(
            py,
            &self.learner,
            "decision_function",
            &x,
            per_class,
            |l, m, out| l.decision_function(m, out),
        )
    }

    /// xᵀΣ_k x for every row and class.
    fn variance<'py>(&self, py: Python<'py>, x: MatrixArg<'py>) -> PyResult<Bound<'py, PyAny>> {
        fill_rows(py, &self.learner, "variance", &x, per_class, |l, m, out| {
            l.variances(m, out)
        })
    }

    /// P(class k has the highest score) under the per-class Gaussians over weights.
    fn probabilities<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        fill_rows(
            py,
            &self.learner,
            "probabilities",
            &x,
            per_class,
            |l, m, out| l.probabilities(m, out),
        )
    }

    /// The class means, classes × (features + bias).
    #[getter]
    fn means<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (means, rows) = self.learner.get(py, "means", |l| {
            (l.effective_means(), [l.n_classes(), l.shape().dim()])
        })?;
        Ok(PyArray1::from_vec(py, means).reshape(rows)?.into_any())
    }

    /// The class covariance values, one row per class (empty, variances, or Σ row-major).
    #[getter]
    fn covariances<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (values, n_classes) = self
            .learner
            .get(py, "covariances", |l| (l.covariances(), l.n_classes()))?;
        let rows = [n_classes, values.len() / n_classes];
        Ok(PyArray1::from_vec(py, values).reshape(rows)?.into_any())
    }

    /// "identity", "diag" or "full".
    #[getter]
    fn covariance_kind(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.learner
            .get(py, "covariance_kind", |l| l.covariance_kind().name())
    }

    #[getter]
    fn n_updates(&self, py: Python<'_>) -> PyResult<u64> {
        self.learner.get(py, "n_updates", |l| l.n_updates())
    }

    #[getter]
    fn n_mistakes(&self, py: Python<'_>) -> PyResult<u64> {
        self.learner.get(py, "n_mistakes", |l| l.n_mistakes())
    }
}

/// One value per class and row: the width of a multiclass model's outputs.
fn per_class<M: ClassModel>(learner: &MulticlassLearner<M>) -> Option<usize> {
    Some(learner.n_classes())
}

/// An online linear regressor (AROW = recursive least squares, or ε-insensitive PA).
#[pyclass(module = "cwrs._cwrs", frozen)]
struct RegressionModel {
    learner: Guarded<Regressor>,
    rule_name: String,
    params: Vec<(String, f64)>,
    l1: L1Spec,
}

impl RegressionModel {
    const NAME: &'static str = "RegressionModel";

    fn wrap(learner: Regressor, rule: &str, params: Vec<(String, f64)>, l1: L1Spec) -> Self {
        RegressionModel {
            learner: Guarded::new(Self::NAME, learner),
            rule_name: rule.to_string(),
            params,
            l1,
        }
    }
}

#[pymethods]
impl RegressionModel {
    #[new]
    #[pyo3(signature = (rule, params, covariance, n_features, fit_intercept, a, l1=None))]
    fn new(
        rule: &str,
        params: Vec<(String, f64)>,
        covariance: &str,
        n_features: usize,
        fit_intercept: bool,
        a: f64,
        l1: L1Spec,
    ) -> PyResult<Self> {
        guarded(Self::NAME, "__new__", || {
            let mut learner = Regressor::new(
                RegressionRule::from_name(rule, &named(&params))?,
                CovarianceKind::from_name(covariance)?,
                n_features,
                fit_intercept,
                a,
            )?;
            if let Some(penalty) = build_l1(&l1, learner.shape())? {
                learner = learner.with_l1(penalty)?;
            }
            Ok(Self::wrap(learner, rule, params, l1))
        })
    }

    /// Rebuilds a model from the tuple returned by `state()`.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn from_state(
        rule: &str,
        params: Vec<(String, f64)>,
        covariance: &str,
        n_features: usize,
        fit_intercept: bool,
        mean: PyReadonlyArray1<f64>,
        covariance_values: PyReadonlyArray1<f64>,
        n_updates: u64,
        l1: L1Spec,
        l1_state: L1StateArg,
    ) -> PyResult<Self> {
        guarded(Self::NAME, "from_state", || {
            let mut learner = Regressor::from_state(
                RegressionRule::from_name(rule, &named(&params))?,
                CovarianceKind::from_name(covariance)?,
                n_features,
                fit_intercept,
                slice(&mean)?,
                slice(&covariance_values)?,
                n_updates,
            )?;
            if let Some(penalty) = build_l1(&l1, learner.shape())? {
                learner = learner.with_l1(restore_l1(penalty, &l1_state)?)?;
            }
            Ok(Self::wrap(learner, rule, params, l1))
        })
    }

    /// Learns one row (a (1, d) C-ordered float64 array) with target `y`; returns whether the
    /// model changed.
    fn learn_one(&self, py: Python<'_>, x: PyReadonlyArray2<f64>, y: f64) -> PyResult<bool> {
        let row = one_row(&x)?;
        self.learner
            .write(py, "learn_one", Work::Quick, |l| Ok(l.learn(row, y)?))
    }

    /// Everything needed to rebuild the model exactly, as plain Python and NumPy values.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let (kind, shape, mean, covariance, n_updates, l1) =
            self.learner.read(py, "state", Work::Quick, |l| {
                Ok((
                    l.covariance_kind().name(),
                    l.shape(),
                    l.mean().into_owned(),
                    l.covariance_state().into_owned(),
                    l.n_updates(),
                    l1_values(l.l1()),
                ))
            })?;
        let state = (
            self.rule_name.clone(),
            self.params.clone(),
            kind,
            shape.n_features,
            shape.fit_intercept,
            PyArray1::from_vec(py, mean),
            PyArray1::from_vec(py, covariance),
            n_updates,
            self.l1.clone(),
            l1_state(py, l1),
        );
        state.into_pyobject(py)
    }

    /// Learns the rows of `x` with targets `y`.
    #[pyo3(signature = (x, y, repeats=None, order=None))]
    fn partial_fit<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
        y: PyReadonlyArray1<'py, f64>,
        repeats: Option<PyReadonlyArray1<'py, u32>>,
        order: Option<PyReadonlyArray1<'py, i64>>,
    ) -> PyResult<()> {
        let (view, y) = (x.view()?, slice(&y)?);
        let presentation = PresentationArgs::new(repeats, order)?;
        let presentation = presentation.view()?;
        learn_batch(py, &self.learner, &view, presentation, |l, presentation| {
            l.partial_fit(&view, y, presentation)
        })
    }

    /// μ·x for every row.
    fn predict<'py>(&self, py: Python<'py>, x: MatrixArg<'py>) -> PyResult<Bound<'py, PyAny>> {
        fill_rows(
            py,
            &self.learner,
            "predict",
            &x,
            |_| None,
            |l, m, out| l.predict(m, out),
        )
    }

    /// xᵀΣx for every row.
    fn variance<'py>(&self, py: Python<'py>, x: MatrixArg<'py>) -> PyResult<Bound<'py, PyAny>> {
        fill_rows(
            py,
            &self.learner,
            "variance",
            &x,
            |_| None,
            |l, m, out| l.variances(m, out),
        )
    }

    /// μ over the features, then the bias weight when the model fits an intercept.
    #[getter]
    fn mean<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let mean = self.learner.get(py, "mean", |l| l.effective_mean())?;
        Ok(PyArray1::from_vec(py, mean))
    }

    /// The covariance values (empty, the variances, or Σ row-major), over the mean's coordinates.
    #[getter]
    fn covariance<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let values = self
            .learner
            .get(py, "covariance", |l| l.covariance().into_owned())?;
        Ok(PyArray1::from_vec(py, values))
    }

    /// "identity", "diag" or "full".
    #[getter]
    fn covariance_kind(&self, py: Python<'_>) -> PyResult<&'static str> {
        self.learner
            .get(py, "covariance_kind", |l| l.covariance_kind().name())
    }

    #[getter]
    fn n_updates(&self, py: Python<'_>) -> PyResult<u64> {
        self.learner.get(py, "n_updates", Regressor::n_updates)
    }

    /// The rule's hyper-parameters as the model was built with them (what it learned with,
    /// whatever the estimator's attributes now say).
    #[getter]
    fn params(&self) -> Vec<(String, f64)> {
        self.params.clone()
    }
}

/// The state arrays of one dual Gaussian: the support rows as CSR, then (ν, Π, Gram).
type SupportArrays<'py> = (
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, u32>,
    PyReadonlyArray1<'py, u64>,
);
type CoefficientArrays<'py> = (
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
    PyReadonlyArray1<'py, f64>,
);

/// The kernel settings shared by the dual models, as Python passes them.
struct KernelSettings {
    name: Option<String>,
    params: (f64, u32, f64),
    n_features: usize,
    fit_intercept: bool,
    a: f64,
    budget: Option<usize>,
}

impl KernelSettings {
    fn new(
        name: Option<String>,
        params: (f64, u32, f64),
        shape: (usize, bool, f64, Option<usize>),
    ) -> Self {
        let (n_features, fit_intercept, a, budget) = shape;
        KernelSettings {
            name,
            params,
            n_features,
            fit_intercept,
            a,
            budget,
        }
    }

    /// A fresh dual Gaussian for `rule`.
    fn gaussian(&self, rule: Rule) -> PyResult<DualGaussian> {
        let (gamma, degree, coef0) = self.params;
        let kernel = self
            .name
            .as_deref()
            .map(|name| Kernel::from_name(name, gamma, degree, coef0))
            .transpose()?;
        Ok(DualGaussian::new(
            kernel,
            rule.is_second_order(),
            self.n_features,
            self.fit_intercept,
            self.a,
            self.budget,
        )?)
    }

    #[allow(clippy::type_complexity)]
    fn as_tuple(
        &self,
    ) -> (
        Option<String>,
        (f64, u32, f64),
        (usize, bool, f64, Option<usize>),
    ) {
        (
            self.name.clone(),
            self.params,
            (self.n_features, self.fit_intercept, self.a, self.budget),
        )
    }
}

/// Restores `fresh` from its state arrays.
fn restore_gaussian(
    fresh: DualGaussian,
    support: &SupportArrays,
    coefficients: &CoefficientArrays,
) -> PyResult<DualGaussian> {
    let state = DualState {
        values: slice(&support.0)?,
        indices: slice(&support.1)?,
        indptr: slice(&support.2)?,
        nu: slice(&coefficients.0)?,
        pi: slice(&coefficients.1)?,
        gram: slice(&coefficients.2)?,
    };
    Ok(fresh.with_state(state)?)
}

/// The support rows of a dual Gaussian as CSR arrays (data, indices, indptr), copied out of a
/// locked model.
type SupportValues = (Vec<f64>, Vec<u32>, Vec<u64>);
/// The state of a dual Gaussian as Rust values: support rows, then (ν, Π, Gram).
type DualValues = (SupportValues, (Vec<f64>, Vec<f64>, Vec<f64>));

fn dual_values(g: &DualGaussian) -> DualValues {
    let coefficients = (g.dual_coef().to_vec(), g.dual_covariance(), g.gram());
    (g.support_vectors(), coefficients)
}

fn support_arrays(py: Python<'_>, support: SupportValues) -> PyResult<Bound<'_, PyTuple>> {
    let (values, indices, indptr) = support;
    (
        PyArray1::from_vec(py, values),
        PyArray1::from_vec(py, indices),
        PyArray1::from_vec(py, indptr),
    )
        .into_pyobject(py)
}

/// The state of a dual Gaussian as (support arrays, (ν, Π, Gram)).
fn dual_state(py: Python<'_>, values: DualValues) -> PyResult<Bound<'_, PyTuple>> {
    let (support, (nu, pi, gram)) = values;
    let coefficients = (
        PyArray1::from_vec(py, nu),
        PyArray1::from_vec(py, pi),
        PyArray1::from_vec(py, gram),
    );
    (support_arrays(py, support)?, coefficients).into_pyobject(py)
}

/// A binary learner in the dual (kernel) form, with an optional budget on the support set.
/// `kernel=None` means the caller supplies kernel values (a Python callable kernel).
#[pyclass(module = "cwrs._cwrs", frozen)]
struct KernelModel {
    learner: Guarded<DualLearner>,
    rule_name: String,
    params: Vec<(String, f64)>,
    settings: KernelSettings,
}

impl KernelModel {
    const NAME: &'static str = "KernelModel";

    /// The model whose dual Gaussian `restore` makes from a fresh one.
    fn build(
        rule: &str,
        params: Vec<(String, f64)>,
        settings: KernelSettings,
        counters: (u64, u64),
        restore: impl FnOnce(DualGaussian) -> PyResult<DualGaussian>,
    ) -> PyResult<Self> {
        let parsed = Rule::from_name(rule, &named(&params))?;
        let gaussian = restore(settings.gaussian(parsed)?)?;
        let learner =
            DualLearner::from_gaussian(parsed, gaussian).with_counters(counters.0, counters.1);
        Ok(KernelModel {
            learner: Guarded::new(Self::NAME, learner),
            rule_name: rule.to_string(),
            params,
            settings,
        })
    }
}

#[pymethods]
impl KernelModel {
    #[new]
    #[pyo3(signature = (rule, params, kernel, kernel_params, n_features, fit_intercept, a, budget))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        rule: &str,
        params: Vec<(String, f64)>,
        kernel: Option<String>,
        kernel_params: (f64, u32, f64),
        n_features: usize,
        fit_intercept: bool,
        a: f64,
        budget: Option<usize>,
    ) -> PyResult<Self> {
        let settings = KernelSettings::new(
            kernel,
            kernel_params,
            (n_features, fit_intercept, a, budget),
        );
        guarded(Self::NAME, "__new__", || {
            Self::build(rule, params, settings, (0, 0), Ok)
        })
    }

    /// Rebuilds a model from the tuple returned by `state()`.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn from_state(
        rule: &str,
        params: Vec<(String, f64)>,
        kernel: Option<String>,
        kernel_params: (f64, u32, f64),
        shape: (usize, bool, f64, Option<usize>),
        gaussian: (SupportArrays, CoefficientArrays),
        counters: (u64, u64),
    ) -> PyResult<Self> {
        let settings = KernelSettings::new(kernel, kernel_params, shape);
        guarded(Self::NAME, "from_state", || {
            Self::build(rule, params, settings, counters, |fresh| {
                restore_gaussian(fresh, &gaussian.0, &gaussian.1)
            })
        })
    }

    /// Everything needed to rebuild the model exactly, as plain Python and NumPy values.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let (kernel, kernel_params, shape) = self.settings.as_tuple();
        let (gaussian, counters) = self.learner.read(py, "state", Work::Quick, |l| {
            Ok((dual_values(l.model()), (l.n_updates(), l.n_mistakes())))
        })?;
        (
            self.rule_name.clone(),
            self.params.clone(),
            kernel,
            kernel_params,
            shape,
            dual_state(py, gaussian)?,
            counters,
        )
            .into_pyobject(py)
    }

    /// Learns the rows of `x` with labels `y` (±1), with the built-in kernel.
    #[pyo3(signature = (x, y, repeats=None, order=None))]
    fn partial_fit<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
        y: PyReadonlyArray1<'py, f64>,
        repeats: Option<PyReadonlyArray1<'py, u32>>,
        order: Option<PyReadonlyArray1<'py, i64>>,
    ) -> PyResult<()> {
        let (view, y) = (x.view()?, slice(&y)?);
        let presentation = PresentationArgs::new(repeats, order)?;
        let presentation = presentation.view()?;
        learn_batch(py, &self.learner, &view, presentation, |l, presentation| {
            l.partial_fit(&view, y, presentation)
        })
    }

    /// Learns the single row `x` (a 1-row matrix) from caller-supplied kernel values `k`
    /// (against every support row) and `kappa` = k(x, x).
    fn learn_precomputed(
        &self,
        py: Python<'_>,
        x: MatrixArg,
        k: PyReadonlyArray1<f64>,
        kappa: f64,
        y: f64,
    ) -> PyResult<bool> {
        let (view, k) = (x.view()?, slice(&k)?);
        if view.n_rows() != 1 {
            return Err(PyValueError::new_err(
                "learn_precomputed takes exactly one row",
            ));
        }
        let n_features = self.settings.n_features;
        self.learner
            .write(py, "learn_precomputed", Work::Quick, |l| {
                view.validate(n_features)?;
                Ok(l.learn_precomputed(view.row(0), k, kappa, y)?)
            })
    }

    /// Checks `x` against the model (shape, indices, finiteness) without learning.
    fn check_input(&self, py: Python<'_>, x: MatrixArg) -> PyResult<()> {
        let view = x.view()?;
        let n_features = self.settings.n_features;
        guarded(Self::NAME, "check_input", || {
            py.detach(|| Ok(view.validate(n_features)?))
        })
    }

    /// μ·φ(x) for every row.
    fn decision_function<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        fill_rows(
            py,
            &self.learner,
            "decision_function",
            &x,
            |_| None,
            |l, m, out| l.decision_function(m, out),
        )
    }

    /// φ(x)ᵀΣφ(x) for every row.
    fn variance<'py>(&self, py: Python<'py>, x: MatrixArg<'py>) -> PyResult<Bound<'py, PyAny>> {
        fill_rows(
            py,
            &self.learner,
            "variance",
            &x,
            |_| None,
            |l, m, out| l.variances(m, out),
        )
    }

    /// Φ(μ·φ(x) / √(φ(x)ᵀΣφ(x))) for every row.
    fn positive_probability<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        fill_rows(
            py,
            &self.learner,
            "positive_probability",
            &x,
            |_| None,
            |l, m, out| l.positive_probability(m, out),
        )
    }

    /// (μ·φ(x), φ(x)ᵀΣφ(x)) per row from caller-supplied `k` (rows × support rows, row-major)
    /// and `kappas` = k(x, x), both without the bias.
    fn moments_precomputed<'py>(
        &self,
        py: Python<'py>,
        k: PyReadonlyArray1<'py, f64>,
        kappas: PyReadonlyArray1<'py, f64>,
    ) -> PyResult<(Bound<'py, Float64Array>, Bound<'py, Float64Array>)> {
        let (k, kappas) = (slice(&k)?, slice(&kappas)?);
        let n = kappas.len();
        let (scores, variances) =
            self.learner
                .read(py, "moments_precomputed", Work::Batch, |l| {
                    let (mut scores, mut variances) = (vec![0.0; n], vec![0.0; n]);
                    l.model().moments_precomputed(k, kappas, |i, s, v| {
                        (scores[i], variances[i]) = (s, v)
                    })?;
                    Ok((scores, variances))
                })?;
        Ok((
            PyArray1::from_vec(py, scores),
            PyArray1::from_vec(py, variances),
        ))
    }

    /// The support rows as CSR arrays (data, indices, indptr).
    fn support_vectors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let support = self
            .learner
            .get(py, "support_vectors", |l| l.model().support_vectors())?;
        support_arrays(py, support)
    }

    /// ν, one coefficient per support row.
    #[getter]
    fn dual_coef<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let nu = self
            .learner
            .get(py, "dual_coef", |l| l.model().dual_coef().to_vec())?;
        Ok(PyArray1::from_vec(py, nu))
    }

    #[getter]
    fn n_support(&self, py: Python<'_>) -> PyResult<usize> {
        self.learner.get(py, "n_support", |l| l.model().n_support())
    }

    /// The built-in kernel's name (None for caller-supplied values) and whether the model has a
    /// bias term, as it was built.
    #[getter]
    fn kernel_form(&self) -> (Option<String>, bool) {
        (self.settings.name.clone(), self.settings.fit_intercept)
    }

    #[getter]
    fn n_updates(&self, py: Python<'_>) -> PyResult<u64> {
        self.learner.get(py, "n_updates", DualLearner::n_updates)
    }

    #[getter]
    fn n_mistakes(&self, py: Python<'_>) -> PyResult<u64> {
        self.learner.get(py, "n_mistakes", DualLearner::n_mistakes)
    }
}

/// A multiclass learner in the dual form: one dual Gaussian (support set, ν, Π) per class.
#[pyclass(module = "cwrs._cwrs", frozen)]
struct MulticlassKernelModel {
    learner: Guarded<MulticlassLearner<DualGaussian>>,
    rule_name: String,
    params: Vec<(String, f64)>,
    settings: KernelSettings,
}

impl MulticlassKernelModel {
    const NAME: &'static str = "MulticlassKernelModel";

    /// The model over `n_classes` classes whose dual Gaussians `restore(class, fresh)` makes
    /// from fresh ones.
    #[allow(clippy::too_many_arguments)]
    fn build(
        rule: &str,
        params: Vec<(String, f64)>,
        strategy: &str,
        n_classes: usize,
        settings: KernelSettings,
        counters: (u64, u64),
        mut restore: impl FnMut(usize, DualGaussian) -> PyResult<DualGaussian>,
    ) -> PyResult<Self> {
        let parsed = Rule::from_name(rule, &named(&params))?;
        if n_classes < 2 {
            return Err(PyValueError::new_err(
                "a multiclass model needs at least 2 classes",
            ));
        }
        let per_class = std::mem::size_of::<DualGaussian>().div_ceil(8);
        check_memory(
            n_classes.checked_mul(per_class),
            || format!("a kernel model of {n_classes} classes"),
            "",
        )?;
        let fresh = settings.gaussian(parsed)?;
        let classes = (0..n_classes)
            .map(|class| restore(class, fresh.clone()))
            .collect::<PyResult<Vec<_>>>()?;
        let learner = MulticlassLearner::with_classes(
            parsed,
            Strategy::from_name(strategy)?,
            settings.n_features,
            classes,
        )
        .with_counters(counters.0, counters.1);
        Ok(MulticlassKernelModel {
            learner: Guarded::new(Self::NAME, learner),
            rule_name: rule.to_string(),
            params,
            settings,
        })
    }
}

#[pymethods]
impl MulticlassKernelModel {
    #[new]
    #[pyo3(signature = (rule, params, strategy, n_classes, kernel, kernel_params, n_features, fit_intercept, a, budget))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        rule: &str,
        params: Vec<(String, f64)>,
        strategy: &str,
        n_classes: usize,
        kernel: String,
        kernel_params: (f64, u32, f64),
        n_features: usize,
        fit_intercept: bool,
        a: f64,
        budget: Option<usize>,
    ) -> PyResult<Self> {
        let shape = (n_features, fit_intercept, a, budget);
        let settings = KernelSettings::new(Some(kernel), kernel_params, shape);
        guarded(Self::NAME, "__new__", || {
            Self::build(
                rule,
                params,
                strategy,
                n_classes,
                settings,
                (0, 0),
                |_, g| Ok(g),
            )
        })
    }

    /// Rebuilds a model from the tuple returned by `state()`.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn from_state(
        rule: &str,
        params: Vec<(String, f64)>,
        strategy: &str,
        kernel: String,
        kernel_params: (f64, u32, f64),
        shape: (usize, bool, f64, Option<usize>),
        classes: Vec<(SupportArrays, CoefficientArrays)>,
        counters: (u64, u64),
    ) -> PyResult<Self> {
        let settings = KernelSettings::new(Some(kernel), kernel_params, shape);
        guarded(Self::NAME, "from_state", || {
            Self::build(
                rule,
                params,
                strategy,
                classes.len(),
                settings,
                counters,
                |k, fresh| {
                    let (support, coefficients) = &classes[k];
                    restore_gaussian(fresh, support, coefficients)
                },
            )
        })
    }

    /// Everything needed to rebuild the model exactly, as plain Python and NumPy values.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let (kernel, kernel_params, shape) = self.settings.as_tuple();
        let (strategy, classes, counters) = self.learner.read(py, "state", Work::Quick, |l| {
            let classes = l.classes().iter().map(dual_values).collect::<Vec<_>>();
            Ok((
                l.strategy().name(),
                classes,
                (l.n_updates(), l.n_mistakes()),
            ))
        })?;
        let classes = classes
            .into_iter()
            .map(|g| dual_state(py, g))
            .collect::<PyResult<Vec<_>>>()?;
        (
            self.rule_name.clone(),
            self.params.clone(),
            strategy,
            kernel,
            kernel_params,
            shape,
            classes,
            counters,
        )
            .into_pyobject(py)
    }

    /// Learns the rows of `x` with class indices `labels`.
    #[pyo3(signature = (x, labels, repeats=None, order=None))]
    fn partial_fit<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
        labels: PyReadonlyArray1<'py, i64>,
        repeats: Option<PyReadonlyArray1<'py, u32>>,
        order: Option<PyReadonlyArray1<'py, i64>>,
    ) -> PyResult<()> {
        let (view, labels) = (x.view()?, indices(&labels, "labels")?);
        let presentation = PresentationArgs::new(repeats, order)?;
        let presentation = presentation.view()?;
        learn_batch(py, &self.learner, &view, presentation, |l, presentation| {
            l.partial_fit(&view, &labels, presentation)
        })
    }

    /// μ_k·φ(x) for every row and class (rows × classes).
    fn decision_function<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        fill_rows(
            py,
            &self.learner,
            "decision_function",
            &x,
            per_class,
            |l, m, out| l.decision_function(m, out),
        )
    }

    /// φ(x)ᵀΣ_kφ(x) for every row and class.
    fn variance<'py>(&self, py: Python<'py>, x: MatrixArg<'py>) -> PyResult<Bound<'py, PyAny>> {
        fill_rows(py, &self.learner, "variance", &x, per_class, |l, m, out| {
            l.variances(m, out)
        })
    }

    /// P(class k has the highest score), as for the primal multiclass model.
    fn probabilities<'py>(
        &self,
        py: Python<'py>,
        x: MatrixArg<'py>,
    ) -> PyResult<Bound<'py, PyAny>> {
        fill_rows(
            py,
            &self.learner,
            "probabilities",
            &x,
            per_class,
            |l, m, out| l.probabilities(m, out),
        )
    }

    /// Support rows per class.
    #[getter]
    fn n_support<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<u64>>> {
        let counts = self.learner.get(py, "n_support", |l| {
            let counts = l.classes().iter().map(|g| g.n_support() as u64);
            counts.collect::<Vec<_>>()
        })?;
        Ok(PyArray1::from_vec(py, counts))
    }

    #[getter]
    fn n_updates(&self, py: Python<'_>) -> PyResult<u64> {
        self.learner.get(py, "n_updates", |l| l.n_updates())
    }

    #[getter]
    fn n_mistakes(&self, py: Python<'_>) -> PyResult<u64> {
        self.learner.get(py, "n_mistakes", |l| l.n_mistakes())
    }
}

/// Standard normal quantile Φ⁻¹(p), as used for the rules' φ = Φ⁻¹(η).
#[pyfunction]
fn normal_quantile(p: f64) -> PyResult<f64> {
    if p > 0.0 && p < 1.0 {
        guarded("_cwrs", "normal_quantile", || {
            Ok(crate::rules::normal_quantile(p))
        })
    } else {
        Err(PyValueError::new_err(format!(
            "p must lie in (0, 1), got {p}"
        )))
    }
}

/// Φ(score / √v) per row (1/2 where v = 0): the Gaussian-margin probability.
#[pyfunction]
fn margin_probabilities<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    variances: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, Float64Array>> {
    let (scores, variances) = (slice(&scores)?, slice(&variances)?);
    if scores.len() != variances.len() {
        return Err(PyValueError::new_err(
            "scores and variances differ in length",
        ));
    }
    let p = guarded("_cwrs", "margin_probabilities", || {
        let p = scores.iter().zip(variances);
        Ok(p.map(|(&s, &v)| margin_probability(s, v)).collect())
    })?;
    Ok(PyArray1::from_vec(py, p))
}

/// Columns (as int64) and signs (±1.0) of `tokens` (bytes: str names UTF-8 encoded) hashed
/// into `n_features` columns (MurmurHash3 as scikit-learn's `FeatureHasher` uses it).
#[pyfunction]
fn hash_tokens<'py>(
    py: Python<'py>,
    tokens: Vec<Bound<'py, PyBytes>>,
    n_features: u32,
) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, Float64Array>)> {
    if n_features == 0 {
        return Err(PyValueError::new_err("n_features must be at least 1"));
    }
    let (columns, signs): (Vec<i64>, Vec<f64>) = guarded("_cwrs", "hash_tokens", || {
        let hashed = tokens.iter().map(|t| {
            let (column, sign) = hashed_column(t.as_bytes(), n_features);
            (i64::from(column), sign)
        });
        Ok(hashed.unzip())
    })?;
    Ok((
        PyArray1::from_vec(py, columns),
        PyArray1::from_vec(py, signs),
    ))
}

#[pymodule]
fn _cwrs(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<BinaryModel>()?;
    m.add_class::<MulticlassModel>()?;
    m.add_class::<RegressionModel>()?;
    m.add_class::<KernelModel>()?;
    m.add_class::<MulticlassKernelModel>()?;
    m.add_function(wrap_pyfunction!(normal_quantile, m)?)?;
    m.add_function(wrap_pyfunction!(margin_probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(hash_tokens, m)?)?;
    svmlight::register(m)?;
    rules::register(m)?;
    m.add("RULE_NAMES", crate::rules::RULE_NAMES.to_vec())?;
    Ok(())
}
