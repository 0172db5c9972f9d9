//! PyO3 bindings: thin wrappers that borrow NumPy buffers, release the GIL and call the core; no
//! math lives here. `model`: the one model type; `convert`: Python values to core values and
//! back; `errors`: the core's errors as exceptions.

use pyo3::prelude::*;

mod bandit;
mod callable_kernel;
mod convert;
mod errors;
mod model;
mod svmlight;
mod text;

/// What every binding returns: its value or the exception to raise ([`errors::Error`]).
type PyResult<T> = Result<T, errors::Error>;

/// A Python object, a dict, and a 1-D NumPy array.
type Object<'py> = Bound<'py, PyAny>;
type Dict<'py> = Bound<'py, pyo3::types::PyDict>;
type Array1<'py, T> = Bound<'py, numpy::PyArray1<T>>;

/// Python's signal handlers, run between and during long calls (Ctrl-C: KeyboardInterrupt).
fn check_signals() -> PyResult<()> {
    Ok(Python::attach(|py| py.check_signals())?)
}

#[pymodule]
mod _cwrs {
    use numpy::PyArray1;
    use pyo3::prelude::*;

    use super::convert::{state_to_dict, vector};
    use super::{Array1, Dict, Object, PyResult};
    use crate::host::shared::guarded;

    #[pymodule_export]
    use super::bandit::standard_normals;
    #[pymodule_export]
    use super::bandit::{bandit_choose, bandit_learn, bandit_simulate, generator_state};
    #[pymodule_export]
    use super::errors::{InvalidModelStateError, InvalidParameterError};
    #[pymodule_export]
    use super::model::{merge, PyModel};
    #[pymodule_export]
    use super::svmlight::{learn_svmlight, svmlight_zero_based, SvmlightChunks};
    #[pymodule_export]
    use super::text::{analyze_documents, hash_documents, hash_samples, hash_token_lists};

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("RULE_NAMES", cwrs::rules::RULE_NAMES.to_vec())?;
        m.add("MAX_WEIGHT", cwrs::data::MAX_WEIGHT)?;
        m.add("TEXT_UNICODE_VERSION", cwrs::data::text::unicode_version())?;
        Ok(())
    }

    /// Every rule as a dict, its entries as `cwrs::rules::table_states` lists them, and the
    /// `version` of this layout.
    #[pyfunction]
    fn rule_table(py: Python) -> PyResult<Vec<Dict>> {
        let entries = cwrs::rules::table_states().into_iter();
        entries.map(|e| state_to_dict(py, e)).collect()
    }

    /// Refuses a model configuration whose models do not merge (InvalidParameterError with
    /// the core's reason): what `n_jobs` > 1 needs.
    #[pyfunction]
    fn check_mergeable(config: &Dict) -> PyResult<()> {
        let held = super::convert::held_entries(config)?;
        let config = cwrs::model::state::State::from_held(&held, false)?;
        Ok(cwrs::parallel::merge::check_config_mergeable(&config)?)
    }

    /// Φ(score / √v) per row (1/2 where v = 0): the Gaussian-margin probability.
    #[pyfunction]
    fn margin_probabilities<'py>(
        scores: &Object<'py>,
        variances: &Object,
    ) -> PyResult<Array1<'py, f64>> {
        let (py, scores, variances) = (scores.py(), vector(scores)?, vector(variances)?);
        let p =
            || Ok::<_, super::errors::Error>(cwrs::rules::margin_probabilities(scores, variances)?);
        let p = guarded("_cwrs", "margin_probabilities", p)?;
        Ok(PyArray1::from_vec(py, p))
    }
}
