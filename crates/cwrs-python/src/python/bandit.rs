//! The contextual bandit's rounds (`cwrs::bandit`) on a native model: a policy by name and
//! parameters, the generator's state as a uint64 array of four words updated in place, and the
//! rows.

use numpy::{PyArray1, PyReadwriteArray1};
use pyo3::prelude::*;

use super::convert::{indices, matrix};
use super::model::PyModel;
use super::{Array1, Object, PyResult};
use crate::host::shared::Work;
use cwrs::bandit::{learn_reward, Decision, Generator, Policy};
use cwrs::error::CwError;

/// The policy `name` with its parameters.
fn policy(name: &str, alpha: f64, epsilon: f64, draws: usize) -> Result<Policy, CwError> {
    let policy = match name {
        "thompson" => Policy::Thompson {
            alpha,
            n_probability_draws: draws,
        },
        "ucb" => Policy::Ucb { alpha },
        "greedy" => Policy::Greedy,
        "epsilon" => Policy::EpsilonGreedy { epsilon },
        other => {
            return Err(CwError::InvalidParameter(format!(
                "policy must be one of thompson, ucb, greedy, epsilon; got {other:?}"
            )))
        }
    };
    policy.check()?;
    Ok(policy)
}

/// The generator held in `state` (four uint64 words).
fn generator(state: &PyReadwriteArray1<u64>) -> PyResult<Generator> {
    let words = state
        .as_slice()
        .ok()
        .and_then(|w| <[u64; 4]>::try_from(w).ok());
    Ok(Generator::from_state(words.ok_or_else(bad_state)?)?)
}

/// Writes the generator's state back into `state` (checked by [`generator`]).
fn store(state: &mut PyReadwriteArray1<u64>, generator: &Generator) -> PyResult<()> {
    let words = state.as_slice_mut().map_err(|_| bad_state())?;
    words.copy_from_slice(&generator.state());
    Ok(())
}

fn bad_state() -> CwError {
    CwError::InvalidState("a generator's state must be a contiguous array of 4 uint64 words".into())
}

/// The bandit's parameters as Python passes them: (policy, alpha, epsilon, n_probability_draws).
type PolicyArgs = (String, f64, f64, usize);

/// One round: (index, probability) of the action chosen among the rows `actions` (float64
/// rows or CSR arrays, as the estimators pass them); the generator's state moves on in place.
#[pyfunction]
pub(super) fn bandit_choose(
    py: Python,
    model: PyRef<PyModel>,
    args: PolicyArgs,
    mut state: PyReadwriteArray1<u64>,
    actions: &Object,
) -> PyResult<(usize, f64)> {
    let policy = policy(&args.0, args.1, args.2, args.3)?;
    let mut generator = generator(&state)?;
    let rows = matrix(actions)?;
    let choose = |m: &cwrs::Model| Ok(policy.choose(m, &rows, &mut generator)?);
    let decision = model.estimator.read(py, "choose", Work::Quick, choose)?;
    store(&mut state, &generator)?;
    Ok((decision.index, decision.probability))
}

/// Learns the reward of the action played, the row `index` of `actions`
/// (`cwrs::bandit::learn_reward`: the target for a regressor, label ±1 for reward 1 or 0).
#[pyfunction]
pub(super) fn bandit_learn(
    py: Python,
    model: PyRef<PyModel>,
    actions: &Object,
    index: usize,
    reward: f64,
) -> PyResult<()> {
    let rows = matrix(actions)?;
    if index >= rows.n_rows() {
        let n = rows.n_rows();
        return Err(
            CwError::InvalidInput(format!("index {index} is not one of the {n} actions")).into(),
        );
    }
    let learn = |m: &mut cwrs::Model| Ok(learn_reward(m, rows.row(index), reward)?);
    model.estimator.write(py, "update", Work::Quick, learn)
}

/// The bake-off's reduction (`cwrs::bandit::simulate`) over the rounds `order` (int64 row
/// indices) of the contexts with their labels (int64 action indices): (chosen, probabilities)
/// per round. The model learns every round; the generator's state moves on in place.
#[pyfunction]
pub(super) fn bandit_simulate<'py>(
    py: Python<'py>,
    model: PyRef<PyModel>,
    args: PolicyArgs,
    mut state: PyReadwriteArray1<u64>,
    contexts: &Object<'py>,
    labels: &Object<'py>,
    order: &Object<'py>,
) -> PyResult<(Array1<'py, i64>, Array1<'py, f64>)> {
    let policy = policy(&args.0, args.1, args.2, args.3)?;
    let mut generator = generator(&state)?;
    let (contexts, labels) = (matrix(contexts)?, indices(labels, "label")?);
    let order = indices(order, "round order")?;
    let run = |m: &mut cwrs::Model| {
        Ok(cwrs::bandit::simulate(
            m,
            &policy,
            &mut generator,
            &contexts,
            &labels,
            &order,
        )?)
    };
    let decisions: Vec<Decision> = model.estimator.write(py, "simulate", Work::Batch, run)?;
    store(&mut state, &generator)?;
    let chosen = decisions.iter().map(|d| d.index as i64);
    let probabilities = decisions.iter().map(|d| d.probability);
    Ok((
        PyArray1::from_iter(py, chosen),
        PyArray1::from_iter(py, probabilities),
    ))
}

/// `n` standard normals from a copy of the generator in `state` (which stays as it is): the
/// draws the bandit's next Thompson round would use, for tests against references.
#[pyfunction]
pub(super) fn standard_normals<'py>(
    py: Python<'py>,
    state: PyReadwriteArray1<u64>,
    n: usize,
) -> PyResult<Array1<'py, f64>> {
    let mut generator = generator(&state)?;
    let mut z = vec![0.0; n];
    generator.fill_standard_normal(&mut z);
    Ok(PyArray1::from_vec(py, z))
}

/// The state of the generator seeded by `seed` (SplitMix64, as `cwrs::bandit::Generator`).
#[pyfunction]
pub(super) fn generator_state(py: Python, seed: u64) -> Bound<PyArray1<u64>> {
    PyArray1::from_slice(py, &Generator::seed_from_u64(seed).state())
}
