//! PyO3 bindings: thin wrappers that borrow NumPy buffers, release the GIL and call the core.
//! No math lives here; validation errors of the core become `ValueError`.

use numpy::{PyArray1, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::covariance::CovarianceKind;
use crate::data::{Matrix, Presentation};
use crate::error::CwError;
use crate::learner::Learner;
use crate::rules::Rule;

impl From<CwError> for PyErr {
    fn from(err: CwError) -> PyErr {
        PyValueError::new_err(err.to_string())
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

/// A binary learner (labels ±1). The Python estimators in `cwrs` wrap it.
#[pyclass(module = "cwrs._cwrs")]
struct BinaryModel {
    learner: Learner,
    rule_name: String,
    params: Vec<(String, f64)>,
}

fn build_rule(rule: &str, params: &[(String, f64)]) -> Result<Rule, CwError> {
    let params: Vec<(&str, f64)> = params.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    Rule::from_name(rule, &params)
}

fn slice<'a>(array: &'a PyReadonlyArray1<f64>) -> PyResult<&'a [f64]> {
    array
        .as_slice()
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

impl BinaryModel {
    /// Runs `f` over the rows of `x` with the GIL released and returns its one value per row.
    fn map_rows(
        &self,
        py: Python<'_>,
        x: MatrixArg,
        f: fn(&Learner, &Matrix, &mut [f64]) -> Result<(), CwError>,
    ) -> PyResult<Py<PyArray1<f64>>> {
        let view = x.view()?;
        let learner = &self.learner;
        let out = py.detach(|| {
            let mut out = vec![0.0; view.n_rows()];
            f(learner, &view, &mut out).map(|()| out)
        })?;
        Ok(PyArray1::from_vec(py, out).unbind())
    }
}

#[pymethods]
impl BinaryModel {
    #[new]
    #[pyo3(signature = (rule, params, covariance, n_features, fit_intercept, a))]
    fn new(
        rule: &str,
        params: Vec<(String, f64)>,
        covariance: &str,
        n_features: usize,
        fit_intercept: bool,
        a: f64,
    ) -> PyResult<Self> {
        let learner = Learner::new(
            build_rule(rule, &params)?,
            CovarianceKind::from_name(covariance)?,
            n_features,
            fit_intercept,
            a,
        )?;
        Ok(BinaryModel {
            learner,
            rule_name: rule.to_string(),
            params,
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
    ) -> PyResult<Self> {
        let learner = Learner::from_state(
            build_rule(rule, &params)?,
            CovarianceKind::from_name(covariance)?,
            n_features,
            fit_intercept,
            slice(&mean)?,
            slice(&covariance_values)?,
            n_updates,
            n_mistakes,
        )?;
        Ok(BinaryModel {
            learner,
            rule_name: rule.to_string(),
            params,
        })
    }

    /// Everything needed to rebuild the model exactly, as plain Python and NumPy values.
    #[allow(clippy::type_complexity)]
    fn state<'py>(
        &self,
        py: Python<'py>,
    ) -> (
        String,
        Vec<(String, f64)>,
        &'static str,
        usize,
        bool,
        Bound<'py, PyArray1<f64>>,
        Bound<'py, PyArray1<f64>>,
        u64,
        u64,
    ) {
        let l = &self.learner;
        (
            self.rule_name.clone(),
            self.params.clone(),
            l.covariance_kind().name(),
            l.shape().n_features,
            l.shape().fit_intercept,
            PyArray1::from_slice(py, l.mean()),
            PyArray1::from_slice(py, l.covariance()),
            l.n_updates(),
            l.n_mistakes(),
        )
    }

    /// Learns the rows of `x` (row `i` `repeats[i]` times; rows taken in `order` when given).
    /// Everything is validated before the first update.
    #[pyo3(signature = (x, y, repeats=None, order=None))]
    fn partial_fit(
        &mut self,
        py: Python<'_>,
        x: MatrixArg,
        y: PyReadonlyArray1<f64>,
        repeats: Option<PyReadonlyArray1<u32>>,
        order: Option<PyReadonlyArray1<i64>>,
    ) -> PyResult<()> {
        let view = x.view()?;
        let y = slice(&y)?;
        let repeats = match &repeats {
            Some(r) => Some(
                r.as_slice()
                    .map_err(|e| PyValueError::new_err(e.to_string()))?,
            ),
            None => None,
        };
        let order: Option<Vec<usize>> = match &order {
            Some(o) => Some(
                o.as_array()
                    .iter()
                    .map(|&i| usize::try_from(i))
                    .collect::<Result<_, _>>()
                    .map_err(|_| PyValueError::new_err("row order holds a negative index"))?,
            ),
            None => None,
        };
        let learner = &mut self.learner;
        let presentation = Presentation {
            repeats,
            order: order.as_deref(),
        };
        py.detach(|| learner.partial_fit(&view, y, presentation))?;
        Ok(())
    }

    /// μ·x for every row.
    fn decision_function(&self, py: Python<'_>, x: MatrixArg) -> PyResult<Py<PyArray1<f64>>> {
        self.map_rows(py, x, Learner::decision_function)
    }

    /// xᵀΣx for every row.
    fn variance(&self, py: Python<'_>, x: MatrixArg) -> PyResult<Py<PyArray1<f64>>> {
        self.map_rows(py, x, Learner::variances)
    }

    /// Φ(μ·x / √(xᵀΣx)) for every row.
    fn positive_probability(&self, py: Python<'_>, x: MatrixArg) -> PyResult<Py<PyArray1<f64>>> {
        self.map_rows(py, x, Learner::positive_probability)
    }

    /// μ over the features, then the bias weight when the model fits an intercept.
    #[getter]
    fn mean<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.learner.mean())
    }

    /// The covariance values (empty, the variances, or Σ row-major), over the mean's coordinates.
    #[getter]
    fn covariance<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, self.learner.covariance())
    }

    /// "identity", "diag" or "full".
    #[getter]
    fn covariance_kind(&self) -> &'static str {
        self.learner.covariance_kind().name()
    }

    #[getter]
    fn n_updates(&self) -> u64 {
        self.learner.n_updates()
    }

    #[getter]
    fn n_mistakes(&self) -> u64 {
        self.learner.n_mistakes()
    }
}

/// Standard normal quantile Φ⁻¹(p), as used for the rules' φ = Φ⁻¹(η).
#[pyfunction]
fn normal_quantile(p: f64) -> PyResult<f64> {
    if p > 0.0 && p < 1.0 {
        Ok(crate::rules::normal_quantile(p))
    } else {
        Err(PyValueError::new_err(format!(
            "p must lie in (0, 1), got {p}"
        )))
    }
}

#[pymodule]
fn _cwrs(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<BinaryModel>()?;
    m.add_function(wrap_pyfunction!(normal_quantile, m)?)?;
    m.add("RULE_NAMES", crate::rules::RULE_NAMES.to_vec())?;
    Ok(())
}
