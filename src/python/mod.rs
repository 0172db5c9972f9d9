//! PyO3 bindings: thin wrappers that borrow NumPy buffers, release the GIL and call the core.
//! No math lives here. One model type, [`model::Model`], wraps the core facade
//! [`crate::estimator::Estimator`]; `convert` turns Python values into core values and back,
//! `errors` core errors into Python exceptions.
//!
//! Every model holds its learner in a [`crate::shared::Guarded`] lock, and every entry point
//! runs the core through it or through [`guarded`]: threads sharing a model wait for each
//! other, and a panic raises `RuntimeError` instead of `PanicException` (see `errors.rs`).

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::data::hashing::hashed_columns;
use crate::rules::{checked_normal_quantile, margin_probabilities as probabilities};
use crate::shared::guarded;
use convert::slice;
use errors::{InvalidModelStateError, InvalidParameterError};

mod callable_kernel;
mod convert;
mod errors;
mod learn_file;
mod model;
mod svmlight;

/// Every rule as a dict (see `crate::rules::table_states`): name, kind ("classification" or
/// "regression"), second_order, params (name, default, low, high, low_open, high_open,
/// requirement, doc), title, reference and summary (the update in words), and the `version` of
/// this layout.
#[pyfunction]
fn rule_table(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let entries = crate::rules::table_states().into_iter();
    entries.map(|e| convert::state_to_dict(py, e)).collect()
}

/// Standard normal quantile Φ⁻¹(p), as used for the rules' φ = Φ⁻¹(η).
#[pyfunction]
fn normal_quantile(p: f64) -> PyResult<f64> {
    guarded("_cwrs", "normal_quantile", || {
        Ok(checked_normal_quantile(p)?)
    })
}

/// Φ(score / √v) per row (1/2 where v = 0): the Gaussian-margin probability.
#[pyfunction]
fn margin_probabilities<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray1<'py, f64>,
    variances: PyReadonlyArray1<'py, f64>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let (scores, variances) = (slice(&scores)?, slice(&variances)?);
    let p = guarded("_cwrs", "margin_probabilities", || {
        Ok::<_, PyErr>(probabilities(scores, variances)?)
    });
    Ok(PyArray1::from_vec(py, p?))
}

/// Columns (as int64) and signs (±1.0) of `tokens` (bytes: str names UTF-8 encoded) hashed
/// into `n_features` columns (MurmurHash3 as scikit-learn's `FeatureHasher` uses it).
#[pyfunction]
fn hash_tokens<'py>(
    py: Python<'py>,
    tokens: Vec<Bound<'py, PyBytes>>,
    n_features: u32,
) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
    let tokens = tokens.iter().map(|t| t.as_bytes());
    let hashed = guarded("_cwrs", "hash_tokens", || {
        Ok::<_, PyErr>(hashed_columns(tokens, n_features)?)
    });
    let (columns, signs) = hashed?;
    (
        PyArray1::from_vec(py, columns),
        PyArray1::from_vec(py, signs),
    )
        .into_pyobject(py)
}

#[pymodule]
fn _cwrs(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<model::Model>()?;
    let py = m.py();
    m.add(
        "InvalidParameterError",
        py.get_type::<InvalidParameterError>(),
    )?;
    m.add(
        "InvalidModelStateError",
        py.get_type::<InvalidModelStateError>(),
    )?;
    m.add_function(wrap_pyfunction!(normal_quantile, m)?)?;
    m.add_function(wrap_pyfunction!(margin_probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(hash_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(model::merge, m)?)?;
    m.add_function(wrap_pyfunction!(learn_file::learn_svmlight, m)?)?;
    svmlight::register(m)?;
    m.add_function(wrap_pyfunction!(rule_table, m)?)?;
    m.add("RULE_NAMES", crate::rules::RULE_NAMES.to_vec())?;
    Ok(())
}
