//! Contextual bandits from a model's Gaussian over weights (docs/design.md §3.16). Each round
//! offers actions as rows of features (so the set of actions may change every round); a
//! [`Policy`] chooses one from the model's scores μ·x of the rows, their variances xᵀΣx and
//! covariances xᵀΣy ([`Model::score_distribution`]); the model then learns the reward of the
//! action played ([`learn_reward`]). A regressor (AROW regression: exact Bayesian linear
//! regression with the full form, LinUCB's model) learns the reward; a binary model learns the
//! event "reward 1" (rewards 0 or 1). [`simulate`] runs the multiclass-to-bandit reduction of
//! the contextual bandit bake-off, every round in the core.
//!
//! ```
//! use cwrs::bandit::{learn_reward, Generator, Policy};
//! use cwrs::{CovarianceKind, Matrix, Model, ModelConfig};
//!
//! let config = ModelConfig::regressor("AROW", &[("r", 1.0)])
//!     .covariance(CovarianceKind::Full)
//!     .n_features(2);
//! let mut model = Model::from_config(config, None)?;
//! let policy = Policy::Ucb { alpha: 0.5 };
//! let mut generator = Generator::seed_from_u64(0);
//! let actions = [1.0, 0.0, 0.0, 1.0]; // two actions of two features
//! let rows = Matrix::Dense { values: &actions, n_rows: 2, n_cols: 2 };
//! for _ in 0..20 {
//!     let decision = policy.choose(&model, &rows, &mut generator)?;
//!     let reward = if decision.index == 1 { 1.0 } else { 0.0 };
//!     learn_reward(&mut model, rows.row(decision.index), reward)?;
//! }
//! assert_eq!(policy.choose(&model, &rows, &mut generator)?.index, 1);
//! # Ok::<(), cwrs::CwError>(())
//! ```

pub mod generator;
mod thompson;

#[cfg(test)]
mod tests;

pub use generator::Generator;

use crate::data::{Matrix, Row};
use crate::error::CwError;
use crate::model::Model;

/// How an action is chosen from the model's scores of the round's action rows. Ties go to the
/// first action of the highest value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Policy {
    /// Thompson sampling (Agrawal & Goyal 2013; Chapelle & Li 2011): plays the best action
    /// under one draw w ~ N(μ, α²Σ); the probability of the action played is estimated as the
    /// share of 1 + `n_probability_draws` draws (that one and as many more) whose best action
    /// it is.
    Thompson {
        /// The scale α ≥ 0 of the draw's spread.
        alpha: f64,
        /// The extra draws of the probability's Monte Carlo estimate.
        n_probability_draws: usize,
    },
    /// LinUCB (Li, Chu, Langford & Schapire 2010): plays the highest μ·x + α√(xᵀΣx), with
    /// probability 1.
    Ucb {
        /// The multiplier α ≥ 0 of the standard deviation.
        alpha: f64,
    },
    /// Plays the highest μ·x, with probability 1.
    Greedy,
    /// ε-greedy: with probability ε an action drawn uniformly, else the greedy one; the
    /// probability of the action played is exact, ε/K + (1 − ε) for the greedy action, ε/K for the others.
    EpsilonGreedy {
        /// The probability ε in [0, 1] of exploring.
        epsilon: f64,
    },
}

/// One round's choice: the index of the action row played and the probability that the
/// policy played it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    /// The row of the action played.
    pub index: usize,
    /// The policy's probability of that action (estimated for Thompson sampling).
    pub probability: f64,
}

impl Policy {
    /// Checks the parameters: α finite and ≥ 0, ε in [0, 1].
    pub fn check(&self) -> Result<(), CwError> {
        let (name, value, high) = match *self {
            Policy::Thompson { alpha, .. } | Policy::Ucb { alpha } => ("alpha", alpha, f64::MAX),
            Policy::EpsilonGreedy { epsilon } => ("epsilon", epsilon, 1.0),
            Policy::Greedy => return Ok(()),
        };
        if !(0.0..=high).contains(&value) {
            return Err(CwError::InvalidParameter(format!(
                "{name} must be in {}, got {value}",
                if high == 1.0 { "[0, 1]" } else { "[0, inf)" }
            )));
        }
        Ok(())
    }

    /// Chooses one of the action rows of `actions` (at least one, as wide as the model's
    /// features) with `model`, a binary model or a regressor; Thompson sampling and
    /// ε-greedy draw from `generator`. Nothing is drawn for a single action or a
    /// deterministic policy.
    pub fn choose(
        &self,
        model: &Model,
        actions: &Matrix,
        generator: &mut Generator,
    ) -> Result<Decision, CwError> {
        self.check()?;
        check_model(model)?;
        let n_actions = actions.n_rows();
        if n_actions == 0 {
            return Err(CwError::InvalidInput(
                "a round has no action (no row)".into(),
            ));
        }
        if let Policy::Thompson {
            alpha,
            n_probability_draws,
        } = *self
        {
            if n_actions == 1 {
                actions.validate(model.model_config().n_features)?;
                return Ok(Decision {
                    index: 0,
                    probability: 1.0,
                });
            }
            let draws = n_probability_draws.checked_add(1).ok_or_else(|| {
                CwError::InvalidParameter(format!(
                    "n_probability_draws={n_probability_draws} is too large"
                ))
            })?;
            let best = thompson::best_actions(model, actions, alpha, draws, generator)?;
            let index = best[0];
            let played = best.iter().filter(|&&b| b == index).count();
            return Ok(Decision {
                index,
                probability: played as f64 / draws as f64,
            });
        }
        let mut scores = vec![0.0; n_actions];
        if let Policy::Ucb { alpha } = *self {
            let mut variances = vec![0.0; n_actions];
            model.score_moments(actions, &mut scores, &mut variances)?;
            for (s, v) in scores.iter_mut().zip(&variances) {
                *s += alpha * v.max(0.0).sqrt();
            }
        } else {
            model.decision_function(actions, &mut scores)?;
        }
        let greedy = thompson::first_best(&scores);
        let Policy::EpsilonGreedy { epsilon } = *self else {
            return Ok(Decision {
                index: greedy,
                probability: 1.0,
            });
        };
        let index = if generator.uniform() < epsilon {
            generator.below(n_actions)
        } else {
            greedy
        };
        let greedy_share = if index == greedy { 1.0 - epsilon } else { 0.0 };
        Ok(Decision {
            index,
            probability: epsilon / n_actions as f64 + greedy_share,
        })
    }
}

/// Refuses a model a bandit cannot use: one output per row is needed (a binary model or a
/// regressor) with a Gaussian over primal weights.
fn check_model(model: &Model) -> Result<(), CwError> {
    match model.kind() {
        "binary" | "regressor" => Ok(()),
        kind => Err(CwError::InvalidParameter(format!(
            "a bandit's model must be a binary classifier or a regressor, not a {kind} model"
        ))),
    }
}

/// Learns the reward of the action played, the row `row`: the target `reward` for a
/// regressor; for a binary model, label +1 for reward 1 and −1 for reward 0 (other rewards
/// are refused). Weight 1: which rows the model sees depends only on the features and the
/// past, so the bandit's own decisions need no importance weight.
pub fn learn_reward(model: &mut Model, row: Row, reward: f64) -> Result<(), CwError> {
    model.learn(row, target_of(model, reward)?).map(drop)
}

/// The model's target for `reward`.
fn target_of(model: &Model, reward: f64) -> Result<f64, CwError> {
    check_model(model)?;
    if !reward.is_finite() {
        return Err(CwError::InvalidInput(format!(
            "a reward must be finite, got {reward}"
        )));
    }
    if model.kind() == "regressor" {
        return Ok(reward);
    }
    match reward {
        1.0 => Ok(1.0),
        0.0 => Ok(-1.0),
        r => Err(CwError::InvalidInput(format!(
            "a binary model's rewards must be 0 or 1, got {r}"
        ))),
    }
}

/// The multiclass-to-bandit reduction of the contextual bandit bake-off (Bietti, Agarwal &
/// Langford 2021): each of `n_actions` classes is an action and round t's context is row
/// `order[t]` of `contexts`; the actions are the context with a constant 1 crossed with a
/// one-hot of the action (row k: [x, 1] in block k of K blocks of d + 1 coordinates; the
/// stored entries of x, so a dense context's zeros are left out), and the reward is 1 when
/// the action played is the row's label `labels[order[t]]`, else 0. Each round `policy`
/// chooses with `model` and the model learns the reward ([`learn_reward`]). Returns each
/// round's decision. Everything is checked before the first round: a refusal changes nothing.
pub fn simulate(
    model: &mut Model,
    policy: &Policy,
    generator: &mut Generator,
    contexts: &Matrix,
    labels: &[usize],
    order: &[usize],
) -> Result<Vec<Decision>, CwError> {
    policy.check()?;
    check_model(model)?;
    let (n_rows, width) = (contexts.n_rows(), contexts.n_cols() + 1);
    if labels.len() != n_rows {
        return Err(CwError::InvalidInput(format!(
            "{} labels for {n_rows} contexts",
            labels.len()
        )));
    }
    if let Some(&i) = order.iter().find(|&&i| i >= n_rows) {
        return Err(CwError::InvalidInput(format!(
            "round order holds row {i}, but there are {n_rows} contexts"
        )));
    }
    contexts.validate(contexts.n_cols())?;
    let n_features = model.model_config().n_features;
    let n_actions = n_features / width;
    if n_actions * width != n_features || n_actions == 0 {
        return Err(CwError::InvalidInput(format!(
            "the model has {n_features} features, not a multiple of the contexts' {} + 1",
            width - 1
        )));
    }
    if let Some(&label) = labels.iter().find(|&&label| label >= n_actions) {
        return Err(CwError::InvalidInput(format!(
            "label {label} is not one of the {n_actions} actions"
        )));
    }
    target_of(model, 0.0)?;
    let mut round = CrossedRows::new(n_actions, width);
    let mut decisions = Vec::with_capacity(order.len());
    for &i in order {
        round.set(contexts.row(i));
        let rows = round.matrix(n_features);
        let decision = policy.choose(model, &rows, generator)?;
        let reward = if decision.index == labels[i] {
            1.0
        } else {
            0.0
        };
        learn_reward(model, rows.row(decision.index), reward)?;
        decisions.push(decision);
    }
    Ok(decisions)
}

/// One round's action rows of the reduction, as CSR reused from round to round.
struct CrossedRows {
    n_actions: usize,
    width: usize,
    values: Vec<f64>,
    indices: Vec<i64>,
    indptr: Vec<i64>,
}

impl CrossedRows {
    fn new(n_actions: usize, width: usize) -> CrossedRows {
        CrossedRows {
            n_actions,
            width,
            values: Vec::with_capacity(n_actions * width),
            indices: Vec::with_capacity(n_actions * width),
            indptr: Vec::with_capacity(n_actions + 1),
        }
    }

    /// The rows of the context `x`: its stored non-zero entries and the 1, in each block.
    fn set(&mut self, x: Row) {
        let (values, indices) = (&mut self.values, &mut self.indices);
        values.clear();
        indices.clear();
        x.for_each(|j, v| {
            if v != 0.0 {
                values.push(v);
                indices.push(j as i64);
            }
        });
        values.push(1.0);
        indices.push(self.width as i64 - 1);
        let block = values.len();
        self.indptr.clear();
        self.indptr.push(0);
        self.indptr.push(block as i64);
        for k in 1..self.n_actions {
            let offset = (k * self.width) as i64;
            values.extend_from_within(..block);
            indices.extend_from_within(..block);
            indices[k * block..].iter_mut().for_each(|j| *j += offset);
            self.indptr.push(((k + 1) * block) as i64);
        }
    }

    fn matrix(&self, n_cols: usize) -> Matrix<'_> {
        Matrix::Csr64 {
            values: &self.values,
            indices: &self.indices,
            indptr: &self.indptr,
            n_cols,
        }
    }
}
