//! The rule table for Python: `_cwrs.rule_table()` (see `crate::rules::table_states`).

use pyo3::prelude::*;
use pyo3::types::PyList;

use super::convert::state_to_dict;

/// Every rule as a dict: name, kind ("classification" or "regression"), second_order, params
/// (name, default, low, high, low_open, high_open, requirement, doc), title, reference and
/// summary (the update in words); each dict also holds the `version` of its layout.
#[pyfunction]
fn rule_table(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let entries = crate::rules::table_states().into_iter();
    PyList::new(
        py,
        entries
            .map(|e| state_to_dict(py, e))
            .collect::<PyResult<Vec<_>>>()?,
    )
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(rule_table, m)?)
}
