//! The rule table (`crate::rules::TABLE`) for Python: `_cwrs.rule_table()`, from which the
//! estimators take their hyper-parameter checks and docstrings.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::rules::{Entry, Param, TABLE};

fn param<'py>(py: Python<'py>, param: &Param) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    let range = param.range;
    dict.set_item("name", param.name)?;
    dict.set_item("default", param.default)?;
    dict.set_item("low", range.low)?;
    dict.set_item("high", range.high)?;
    dict.set_item("low_open", range.low_open)?;
    dict.set_item("high_open", range.high_open)?;
    dict.set_item("requirement", range.requirement())?;
    dict.set_item("doc", param.doc)?;
    Ok(dict)
}

fn entry<'py>(py: Python<'py>, entry: &Entry) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("name", entry.name)?;
    dict.set_item("kind", entry.kind().name())?;
    dict.set_item("second_order", entry.second_order)?;
    let params: Vec<_> = entry
        .params
        .iter()
        .map(|p| param(py, p))
        .collect::<PyResult<_>>()?;
    dict.set_item("params", PyList::new(py, params)?)?;
    dict.set_item("title", entry.title)?;
    dict.set_item("reference", entry.reference)?;
    dict.set_item("summary", entry.summary)?;
    Ok(dict)
}

/// Every rule as a dict: name, kind ("classification" or "regression"), second_order, params
/// (name, default, low, high, low_open, high_open, requirement, doc), title, reference and
/// summary (the update in words).
#[pyfunction]
fn rule_table(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let entries = TABLE.iter().map(|e| entry(py, e));
    PyList::new(py, entries.collect::<PyResult<Vec<_>>>()?)
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rule_table, m)?)
}
