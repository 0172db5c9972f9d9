//! PyO3 bindings: thin wrappers that borrow NumPy buffers, release the GIL and call the core.
//! No math lives here. One model type, [`model::Model`], wraps the core facade
//! [`crate::estimator::Estimator`]; `convert` turns Python values into core values and back,
//! `errors` core errors into Python exceptions.
//!
//! Every model holds its learner in a [`guard::Guarded`] lock, and every entry point runs the
//! core through it or through [`guarded`] (see `guard.rs`): threads sharing a model wait for
//! each other, and a panic raises `RuntimeError` instead of `PanicException`.

use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::data::hashing::hashed_column;
use crate::rules::margin_probability;
use convert::slice;
use guard::guarded;

mod callable_kernel;
mod convert;
mod errors;
mod guard;
mod interrupt;
mod model;
mod rules;
mod svmlight;

type Float64Array = PyArray1<f64>;

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
    m.add_class::<model::Model>()?;
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(normal_quantile, m)?)?;
    m.add_function(wrap_pyfunction!(margin_probabilities, m)?)?;
    m.add_function(wrap_pyfunction!(hash_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(model::merge, m)?)?;
    svmlight::register(m)?;
    rules::register(m)?;
    m.add("RULE_NAMES", crate::rules::RULE_NAMES.to_vec())?;
    Ok(())
}
