//! [`Model`]: one type for every learner kind, built from a typed configuration
//! ([`ModelConfig`]) or a state ([`State`], whose configuration entries are the configuration's
//! saved view), with one set of methods: learn, predict, probabilities, attributes, costs
//! (`costs.rs`), the first fit (`first_fit/`), operations on the whole model (`ops.rs`), files
//! (`file.rs`). What Rust users call, and what Python's `cwrs._cwrs.Model` wraps. The entries of
//! each kind are listed in docs/model-format.md.

pub mod attributes;
mod class_weight;
pub mod config;
mod costs;
pub mod file;
pub(crate) mod first_fit;
pub mod ops;
pub mod state;
#[cfg(test)]
mod state_props;

use crate::covariance::{Covariance, CovarianceKind, Gaussian};
use crate::data::{Matrix, Presentation, Row, Shape};
use crate::error::{check_memory, CwError};
use std::sync::Arc;

use crate::covariance::dual::{DualGaussian, DualState};
use crate::covariance::kernel::{Kernel, KernelFunction};
use crate::learn::learner::{DualLearner, Learner};
use crate::learn::multiclass::{MulticlassLearner, Strategy};
use crate::learn::noise_estimate::NoiseEstimate;
use crate::learn::objective::{Binary, Multiclass, Objective, Regression, SingleModel};
use crate::learn::online::{Online, Progressive};
use crate::learn::prior_estimate::PriorEstimate;
use crate::learn::regression::Regressor;
use crate::learn::sparse_l1::L1;
use crate::model::config::{KernelConfig, ModelConfig, ModelKind};
use crate::model::state::State;
use crate::rules::{RegressionRule, Rule, StepRule};

/// `$call` on the model's learner `$l` with its kind of targets `$t` (values or class
/// indices); other targets are refused, naming what the model takes.
macro_rules! by_kind {
    ($model:expr, $targets:expr, $l:ident, $t:ident => $call:expr) => {
        match (&mut $model.model, $targets) {
            (AnyLearner::Binary($l), Targets::Values($t)) => $call,
            (AnyLearner::Regressor($l), Targets::Values($t)) => $call,
            (AnyLearner::Kernel($l), Targets::Values($t)) => $call,
            (AnyLearner::Multiclass($l), Targets::Classes($t)) => $call,
            (AnyLearner::MulticlassKernel($l), Targets::Classes($t)) => $call,
            _ => Err(CwError::InvalidInput(format!(
                "a {} model takes {}",
                $model.kind(),
                match $model.n_classes() {
                    Some(_) => "class indices (int64)",
                    None => "float64 targets",
                }
            ))),
        }
    };
}

/// The learner of each kind.
#[derive(Clone, Debug)]
pub enum AnyLearner {
    /// A binary classifier in the primal form.
    Binary(Learner),
    /// A regression model.
    Regressor(Regressor),
    /// A multiclass primal model.
    Multiclass(MulticlassLearner),
    /// A two-class model in the dual form (a kernel model).
    Kernel(DualLearner),
    /// A multiclass model in the dual form.
    MulticlassKernel(MulticlassLearner<DualGaussian>),
}

/// The learner of the same kind that `$body` makes of `$m`, whatever the kind.
macro_rules! map_each {
    ($model:expr, $m:ident => $body:expr) => {
        match $model {
            AnyLearner::Binary($m) => AnyLearner::Binary($body),
            AnyLearner::Regressor($m) => AnyLearner::Regressor($body),
            AnyLearner::Multiclass($m) => AnyLearner::Multiclass($body),
            AnyLearner::Kernel($m) => AnyLearner::Kernel($body),
            AnyLearner::MulticlassKernel($m) => AnyLearner::MulticlassKernel($body),
        }
    };
}

impl AnyLearner {
    /// The model averaging its means from row `start`, if given (see [`averaged`]).
    fn averaged(self, start: Option<u64>, state: Option<&State>) -> Result<AnyLearner, CwError> {
        let Some(start) = start else {
            return Ok(self);
        };
        Ok(map_each!(self, l => averaged(l, start, state)?))
    }
}

impl AnyLearner {
    /// The learner with the noise estimate `state` keeps, if any: a state saved before models
    /// learned one starts from the prior.
    fn with_noise_estimate_of(self, state: &State) -> Result<AnyLearner, CwError> {
        let Some(values) = state.optional_floats("noise_estimate")? else {
            return Ok(map_each!(self, l => l.without_noise_estimate()));
        };
        let &[estimate, information] = values else {
            return Err(CwError::InvalidState(format!(
                "entry \"noise_estimate\" must hold 2 values, got {}",
                values.len()
            )));
        };
        let noise = NoiseEstimate {
            estimate,
            information,
        };
        Ok(map_each!(self, l => l.with_noise_estimate(noise)?))
    }
}

/// A model of any kind: its learner and the configuration it was built from (returned with its
/// state).
#[derive(Clone, Debug)]
pub struct Model {
    config: ModelConfig,
    model: AnyLearner,
    /// Whether a call is undone by building the model again (see `first_fit`).
    fresh: bool,
    /// The sample weight counted per class by `class_weight="balanced"` calls (see
    /// `class_weight`).
    class_counts: Vec<f64>,
}

/// What `partial_fit` learns from: labels ±1 or targets (binary, kernel, regression), or class
/// indices (multiclass).
#[derive(Clone, Copy, Debug)]
pub enum Targets<'a> {
    /// One label ±1 or real target per row (binary, kernel, regression).
    Values(&'a [f64]),
    /// Class indices in `0..n_classes`, one per row (multiclass, primal or kernel).
    Classes(&'a [usize]),
}

fn no_class_probabilities() -> CwError {
    CwError::InvalidInput("a regressor gives no class probabilities".into())
}

/// A configuration's error as an invalid parameter, an invalid entry named as such.
fn as_parameter(err: CwError) -> CwError {
    match err {
        CwError::InvalidState(message) => {
            CwError::InvalidParameter(format!("model configuration: {message}"))
        }
        err => err,
    }
}

/// Runs `$body` with `$m` bound to the learner, whatever its kind.
macro_rules! each {
    ($model:expr, $m:ident => $body:expr) => {
        match $model {
            AnyLearner::Binary($m) => $body,
            AnyLearner::Regressor($m) => $body,
            AnyLearner::Multiclass($m) => $body,
            AnyLearner::Kernel($m) => $body,
            AnyLearner::MulticlassKernel($m) => $body,
        }
    };
}

fn shape(config: &ModelConfig) -> Result<Shape, CwError> {
    Shape::new(config.n_features, config.fit_intercept)
}

/// `learner` with the configured process noise; the learned detector statistics of "auto"
/// restored from `state` when given.
fn with_noise<O: Objective, M: Covariance>(
    learner: Online<O, M>,
    config: &ModelConfig,
    state: Option<&State>,
) -> Result<Online<O, M>, CwError> {
    let noise = config.process_noise;
    let lazy = state.filter(|s| s.entries.contains_key("noise_clock"));
    if noise.is_off() {
        return match lazy {
            Some(_) => Err(CwError::InvalidState(
                "entry \"noise_clock\" needs process noise".into(),
            )),
            None => Ok(learner),
        };
    }
    let learner = learner.with_process_noise(noise, config.a)?;
    let learner = match (state, learner.change_detector()) {
        (Some(state), Some(_)) => {
            learner.with_change_statistics(state.floats("drift_statistics")?)?
        }
        _ => learner,
    };
    match lazy {
        Some(state) => learner.with_lazy_noise(
            state.floats("noise_clock")?,
            state.floats("noise_variances")?,
        ),
        None => Ok(learner),
    }
}

/// `learner` (of `shape`) with the configured L1 penalty, if any, added by `with_l1`.
fn penalised<L>(
    learner: L,
    config: &ModelConfig,
    shape: Shape,
    with_l1: impl FnOnce(L, L1) -> Result<L, CwError>,
) -> Result<L, CwError> {
    match &config.penalty {
        Some(p) => {
            let l1 = L1::for_shape(p.penalty, p.alpha, p.penalize_intercept, shape)?;
            with_l1(learner, l1)
        }
        None => Ok(learner),
    }
}

/// `learner` averaging its means from row `start` on; with the averaging state saved in
/// `state`, when restoring one.
fn averaged<O: Objective, M: Covariance>(
    learner: Online<O, M>,
    start: u64,
    state: Option<&State>,
) -> Result<Online<O, M>, CwError> {
    match state {
        Some(state) => {
            let sums = state.floats("average_sums")?;
            let rows = (
                state.count("average_rows")?,
                state.optional_float("average_weight")?,
            );
            learner.with_average(start, rows, Some(sums))
        }
        None => learner.with_average(start, (0, None), None),
    }
}

/// The averaging state of a learner, if it averages.
fn average_entries<O: Objective, M: Covariance>(learner: &Online<O, M>) -> State<'static> {
    match learner.average() {
        Some(average) => {
            let state = State::default()
                .with("average_rows", average.rows())
                .with("average_sums", average.sums(learner.models()));
            // Kept only when rows had weights: files of unweighted models stay as they were.
            match average.total_is_count() {
                true => state,
                false => state.with("average_weight", average.total()),
            }
        }
        None => State::default(),
    }
}

/// A custom kernel (a callable the bindings wrap): code, so never part of a configuration.
pub type CustomKernel = Option<Arc<dyn KernelFunction>>;

/// A fresh dual Gaussian as configured: the custom kernel if there is one, else the built-in
/// kernel the configuration names.
fn dual_gaussian(
    config: &ModelConfig,
    kernel: &KernelConfig,
    rule: Rule,
    custom: &CustomKernel,
) -> Result<DualGaussian, CwError> {
    crate::learn::learner::check_kernel_form(rule)?;
    let function = match (custom, kernel.kernel()?) {
        (Some(function), _) => Kernel::Custom(function.clone()),
        (None, Some(built_in)) => built_in,
        (None, None) => {
            return Err(CwError::InvalidParameter(
                "a model with a callable kernel needs the callable: pass it as `kernel`".into(),
            ))
        }
    };
    DualGaussian::new(
        function,
        rule.is_second_order(),
        config.n_features,
        config.fit_intercept,
        config.a,
        kernel.budget,
    )
}

/// A multiclass kernel learner over `n_classes` fresh dual Gaussians (a built-in `kernel`,
/// checked with the configuration) that `restore(class, fresh)` turns into the classes.
fn multiclass_kernel(
    config: &ModelConfig,
    kernel: &KernelConfig,
    (n_classes, strategy): (usize, Strategy),
    mut restore: impl FnMut(usize, DualGaussian) -> Result<DualGaussian, CwError>,
) -> Result<MulticlassLearner<DualGaussian>, CwError> {
    let rule = config.rule.rule()?;
    let per_class = std::mem::size_of::<DualGaussian>().div_ceil(8);
    check_memory(
        n_classes.checked_mul(per_class),
        || format!("a kernel model of {n_classes} classes"),
        "",
    )?;
    let fresh = dual_gaussian(config, kernel, rule, &None)?;
    let classes = (0..n_classes)
        .map(|class| restore(class, fresh.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(MulticlassLearner::with_classes(
        rule,
        strategy,
        config.n_features,
        classes,
    ))
}

/// The support set and coefficients of a dual Gaussian, by name; with a rule that reads its
/// context, also the current a of Σ = a·I + ΦΠΦᵀ, which IELLIP rescales (docs/design.md §2.9).
fn dual_entries(g: &DualGaussian, rule: Rule) -> State<'static> {
    let (values, indices, indptr) = g.support_vectors();
    let a = rule
        .needs_context()
        .then(|| State::default().with("dual_a", g.a()));
    a.unwrap_or_default()
        .with("support_values", values)
        .with("support_indices", indices)
        .with("support_indptr", indptr)
        .with("dual_coef", g.dual_coef().to_vec())
        .with("dual_covariance", g.dual_covariance())
        .with("gram", g.gram())
}

fn restore_dual(fresh: DualGaussian, state: &State, rule: Rule) -> Result<DualGaussian, CwError> {
    let a = rule.needs_context().then(|| state.float("dual_a"));
    fresh.with_a(a.transpose()?)?.with_state(DualState {
        values: state.floats("support_values")?,
        indices: state.u32s("support_indices")?,
        indptr: state.u64s("support_indptr")?,
        nu: state.floats("dual_coef")?,
        pi: state.floats("dual_covariance")?,
        gram: state.floats("gram")?,
    })
}

/// The lazy L1 state (H, H per coordinate) of a penalised single model.
fn l1_entries(l1: Option<&L1>) -> State<'static> {
    let state = State::default();
    match l1 {
        Some(l1) => state
            .with("l1_total", l1.total())
            .with("l1_last", l1.last().to_vec()),
        None => state,
    }
}

fn restore_l1(l1: L1, state: &State, dim: usize) -> Result<L1, CwError> {
    l1.with_state(state.float("l1_total")?, state.floats_of("l1_last", dim)?)
}

/// A fresh one-model primal learner (binary or regressor) with `rule`, as `config` says.
fn build_one<O: SingleModel>(
    config: &ModelConfig,
    rule: O::Rule,
) -> Result<Online<O, Gaussian>, CwError> {
    let learner = Online::<O, Gaussian>::new(
        rule,
        config.covariance,
        config.n_features,
        config.fit_intercept,
        config.a,
    )?;
    let shape = learner.shape();
    let learner = penalised(learner, config, shape, Online::<O, Gaussian>::with_l1)?;
    with_noise(learner, config, None)
}

/// A one-model primal learner (binary or regressor) of `config` with `rule` and `mistakes`,
/// restored from `state` (mean, covariance, counters, the L1 state).
fn restore_one<O: SingleModel>(
    config: &ModelConfig,
    state: &State,
    rule: O::Rule,
    mistakes: u64,
) -> Result<Online<O, Gaussian>, CwError> {
    let (mean, sigma) = (state.floats("mean")?, state.floats("covariance_values")?);
    let learner = Online::<O, Gaussian>::from_state(
        rule,
        config.covariance,
        config.n_features,
        config.fit_intercept,
        mean,
        sigma,
        state.count("n_updates")?,
        mistakes,
    )?
    .with_rounds(rounds(state)?);
    let learner = with_pending_terms(learner, state)?;
    let shape = learner.shape();
    let learner = penalised(learner, config, shape, |l, l1| {
        l.with_l1(restore_l1(l1, state, shape.dim())?)
    })?;
    with_noise(learner, config, Some(state))
}

/// `learner` (restored from `state`'s covariance) with the pending rank-one terms `state`
/// keeps beside it, if any (see [`Online::pending_terms`]); before the lazy noise, whose check
/// reads the base.
fn with_pending_terms<O: Objective, M: Covariance>(
    learner: Online<O, M>,
    state: &State,
) -> Result<Online<O, M>, CwError> {
    if !state.entries.contains_key("pending_counts") {
        return Ok(learner);
    }
    learner.with_pending_terms(
        state.u64s("pending_counts")?,
        state.floats("pending_bases")?,
        state.floats("pending_terms")?,
    )
}

/// `learner` learning its prior, if `config` says so (`a="auto"`): from the configured a, or
/// from the estimate `state` keeps (entry `prior_estimate`: [a, rows]); a state without one
/// starts from the configured a.
fn with_learned_prior(
    learner: Regressor,
    config: &ModelConfig,
    state: Option<&State>,
) -> Result<Regressor, CwError> {
    let stored = match state {
        Some(state) => state.optional_floats("prior_estimate")?,
        None => None,
    };
    if !config.learned_prior {
        return match stored {
            Some(_) => Err(CwError::InvalidState(
                "entry \"prior_estimate\" needs a learned prior (prior: \"auto\")".into(),
            )),
            None => Ok(learner),
        };
    }
    let estimate = match stored {
        None => PriorEstimate::new(config.a),
        Some(&[variance, rows]) if rows >= 0.0 && rows.fract() == 0.0 && rows < 2f64.powi(63) => {
            PriorEstimate::restored(variance, rows as u64)?
        }
        Some(values) => {
            return Err(CwError::InvalidState(format!(
                "entry \"prior_estimate\" must hold the prior variance and a count of rows, \
                 got {values:?}"
            )))
        }
    };
    learner.with_learned_prior(estimate, config.learned_noise)
}

/// The rows learned, which a state holds only when its rule reads them (docs/design.md §2.9).
fn rounds(state: &State) -> Result<u64, CwError> {
    Ok(state.optional_count("n_rounds")?.unwrap_or(0))
}

/// A linear model's mean and covariance; the full form's Σ folded into a copy.
fn moments_entries(mean: Vec<f64>, covariance: Vec<f64>) -> State<'static> {
    State::default()
        .with("mean", mean)
        .with("covariance_values", covariance)
}

impl Model {
    /// A fresh model as the configuration entries `config` say ([`ModelConfig::from_state`]).
    /// A malformed configuration is an invalid parameter.
    pub fn new(config: State<'_>, custom: CustomKernel) -> Result<Model, CwError> {
        let config = ModelConfig::from_state(&config).map_err(as_parameter)?;
        Self::from_config(config, custom)
    }

    /// A fresh model as `config` says, after [`ModelConfig::check`].
    pub fn from_config(config: ModelConfig, custom: CustomKernel) -> Result<Model, CwError> {
        config.check().map_err(as_parameter)?;
        let model = Self::build(&config, &custom).map_err(as_parameter)?;
        Ok(Model {
            fresh: first_fit::rebuildable(&model),
            config,
            model,
            class_counts: Vec::new(),
        })
    }

    /// The model of a checked `config`.
    fn build(config: &ModelConfig, custom: &CustomKernel) -> Result<AnyLearner, CwError> {
        let model = match &config.kind {
            ModelKind::Binary => AnyLearner::Binary(build_one(config, config.rule.rule()?)?),
            ModelKind::Regressor => {
                let learner = build_one(config, config.rule.regression_rule()?)?;
                AnyLearner::Regressor(with_learned_prior(learner, config, None)?)
            }
            &ModelKind::Multiclass {
                n_classes,
                strategy,
            } => {
                let rule = config.rule.rule()?;
                let learner = MulticlassLearner::new(
                    Multiclass { rule, strategy },
                    config.covariance,
                    n_classes,
                    shape(config)?,
                    config.a,
                )?;
                let shape = learner.shape();
                let learner = penalised(learner, config, shape, MulticlassLearner::with_l1)?;
                AnyLearner::Multiclass(with_noise(learner, config, None)?)
            }
            ModelKind::Kernel { kernel, .. } => {
                let rule = config.rule.rule()?;
                let gaussian = dual_gaussian(config, kernel, rule, custom)?;
                let learner = DualLearner::from_gaussian(rule, gaussian);
                AnyLearner::Kernel(with_noise(learner, config, None)?)
            }
            ModelKind::MulticlassKernel {
                kernel,
                n_classes,
                strategy,
            } => {
                let classes = (*n_classes, *strategy);
                let learner = multiclass_kernel(config, kernel, classes, |_, fresh| Ok(fresh))?;
                AnyLearner::MulticlassKernel(with_noise(learner, config, None)?)
            }
        };
        model.averaged(config.average, None)
    }

    /// The model of [`Model::state`]. Any problem with `state` (a missing or malformed
    /// entry, values that do not fit together, another version) is an invalid state.
    pub fn from_state(state: &State, custom: CustomKernel) -> Result<Model, CwError> {
        Self::restore(state, &custom).map_err(|err| match err {
            CwError::OutOfMemory(_) | CwError::InvalidState(_) => err,
            err => CwError::InvalidState(err.to_string()),
        })
    }

    fn restore(state: &State, custom: &CustomKernel) -> Result<Model, CwError> {
        state.check_version()?;
        let config = ModelConfig::from_state(state)?;
        config.check()?;
        let updates = state.count("n_updates")?;
        let mistakes = || state.count("n_mistakes");
        let model = match &config.kind {
            ModelKind::Binary => {
                let rule = config.rule.rule()?;
                AnyLearner::Binary(restore_one::<Binary>(&config, state, rule, mistakes()?)?)
            }
            ModelKind::Regressor => {
                let rule = config.rule.regression_rule()?;
                let learner = restore_one::<Regression>(&config, state, rule, 0)?;
                AnyLearner::Regressor(with_learned_prior(learner, &config, Some(state))?)
            }
            &ModelKind::Multiclass {
                n_classes,
                strategy,
            } => {
                let rule = config.rule.rule()?;
                let learner = MulticlassLearner::from_state(
                    Multiclass { rule, strategy },
                    config.covariance,
                    n_classes,
                    shape(&config)?,
                    state.floats("means")?,
                    state.floats("covariance_values")?,
                    updates,
                    mistakes()?,
                )?
                .with_rounds(rounds(state)?);
                let learner = with_pending_terms(learner, state)?;
                let shape = learner.shape();
                let learner = penalised(learner, &config, shape, |l, l1| {
                    let totals = state.floats_of("l1_totals", n_classes)?;
                    let last = state.floats_of("l1_last", n_classes * shape.dim())?;
                    let states = totals
                        .iter()
                        .zip(last.chunks_exact(shape.dim()))
                        .map(|(&total, last)| (total, last.to_vec()))
                        .collect::<Vec<_>>();
                    l.with_l1(l1)?.with_l1_states(&states)
                })?;
                AnyLearner::Multiclass(with_noise(learner, &config, Some(state))?)
            }
            ModelKind::Kernel { kernel, .. } => {
                let rule = config.rule.rule()?;
                let fresh = dual_gaussian(&config, kernel, rule, custom)?;
                let gaussian = restore_dual(fresh, state, rule)?;
                let learner =
                    DualLearner::from_gaussian(rule, gaussian).with_rounds(rounds(state)?);
                let learner = with_noise(learner, &config, Some(state))?;
                AnyLearner::Kernel(learner.with_counters(updates, mistakes()?))
            }
            ModelKind::MulticlassKernel {
                kernel,
                n_classes,
                strategy,
            } => {
                let classes = state.states("classes")?;
                if classes.len() != *n_classes {
                    return Err(CwError::InvalidState(format!(
                        "entry \"classes\" must hold one state per class ({n_classes}), got {}",
                        classes.len()
                    )));
                }
                let rule = config.rule.rule()?;
                let learner =
                    multiclass_kernel(&config, kernel, (*n_classes, *strategy), |class, fresh| {
                        restore_dual(fresh, &classes[class], rule)
                    })?
                    .with_rounds(rounds(state)?);
                let learner = with_noise(learner, &config, Some(state))?;
                AnyLearner::MulticlassKernel(learner.with_counters(updates, mistakes()?))
            }
        };
        let model = model.with_noise_estimate_of(state)?;
        let mut model = Model {
            model: model.averaged(config.average, Some(state))?,
            config,
            fresh: false,
            class_counts: Vec::new(),
        };
        if let Some(counts) = state.optional_floats("class_counts")? {
            model.set_class_counts(counts.to_vec())?;
        }
        Ok(model)
    }

    /// The configuration and everything learned, by name: [`Model::from_state`] rebuilds
    /// the model exactly, and taking it leaves the model as it is. A full covariance is stored
    /// as Σ, its pending rank-one terms folded into a copy, with the terms and what they fold
    /// into beside it (see [`Covariance::pending_terms`]); process noise not folded in is
    /// stored as it is (see [`Covariance::lazy_noise`]).
    pub fn state(&self) -> State<'static> {
        self.eager_state().merged(self.lazy_entries())
    }

    /// [`Model::state`] without what the model keeps lazily (the full form's pending
    /// rank-one terms, process noise not folded in): a model rebuilt from it starts from the
    /// eager covariance, nothing pending, and predicts the same; what a state changed by
    /// [`crate::model::ops`] starts from.
    pub fn eager_state(&self) -> State<'static> {
        self.config.to_state().merged(self.learned())
    }

    /// The entries of [`Model::state`] that [`Model::eager_state`] leaves out.
    fn lazy_entries(&self) -> State<'static> {
        let pending = match &self.model {
            AnyLearner::Binary(l) => l.pending_terms(),
            AnyLearner::Regressor(l) => l.pending_terms(),
            AnyLearner::Multiclass(l) => l.pending_terms(),
            AnyLearner::Kernel(_) | AnyLearner::MulticlassKernel(_) => None,
        };
        let lazy = match pending {
            Some((counts, bases, terms)) => State::default()
                .with("pending_counts", counts)
                .with("pending_bases", bases)
                .with("pending_terms", terms),
            None => State::default(),
        };
        match each!(&self.model, l => l.lazy_noise()) {
            Some((clocks, stored)) => lazy
                .with("noise_clock", clocks)
                .with("noise_variances", stored),
            None => lazy,
        }
    }

    fn learned(&self) -> State<'static> {
        let counters = State::default().with("n_updates", self.n_updates());
        let counters = match self.n_mistakes() {
            Some(mistakes) => counters.with("n_mistakes", mistakes),
            None => counters,
        };
        let counters = match self.n_rounds() {
            Some(rounds) => counters.with("n_rounds", rounds),
            None => counters,
        };
        let counters = match each!(&self.model, l => l.stored_noise_estimate()) {
            Some(noise) => counters.with("noise_estimate", vec![noise.estimate, noise.information]),
            None => counters,
        };
        let counters = match self.prior_estimate() {
            Some(prior) => counters.with("prior_estimate", vec![prior.variance, prior.rows as f64]),
            None => counters,
        };
        let averaging = each!(&self.model, l => average_entries(l));
        let counters = match self.class_counts.is_empty() {
            true => counters,
            false => counters.with("class_counts", self.class_counts.clone()),
        };
        let learned = match &self.model {
            AnyLearner::Binary(l) => {
                moments_entries(l.mean().into_owned(), l.covariance().into_owned())
                    .merged(l1_entries(l.l1()))
            }
            AnyLearner::Regressor(l) => {
                moments_entries(l.mean().into_owned(), l.covariance().into_owned())
                    .merged(l1_entries(l.l1()))
            }
            AnyLearner::Multiclass(l) => {
                let learned = State::default()
                    .with("means", l.means())
                    .with("covariance_values", l.covariances());
                match l.l1_states() {
                    Some(states) => {
                        let (totals, last): (Vec<f64>, Vec<Vec<f64>>) = states.into_iter().unzip();
                        learned
                            .with("l1_totals", totals)
                            .with("l1_last", last.concat())
                    }
                    None => learned,
                }
            }
            AnyLearner::Kernel(l) => dual_entries(l.model(), l.rule()),
            AnyLearner::MulticlassKernel(l) => {
                let entries = |g| dual_entries(g, l.rule());
                let classes = l.classes().iter().map(entries).collect::<Vec<_>>();
                State::default().with("classes", classes)
            }
        };
        let statistics = each!(&self.model, l => l.change_detector().map(|d| d.statistics()));
        let learned = match statistics {
            Some(values) => learned.with("drift_statistics", values),
            None => learned,
        };
        counters.merged(learned).merged(averaging)
    }

    /// The model kind's name, as the configuration gives it.
    pub fn kind(&self) -> &'static str {
        match self.model {
            AnyLearner::Binary(_) => "binary",
            AnyLearner::Regressor(_) => "regressor",
            AnyLearner::Multiclass(_) => "multiclass",
            AnyLearner::Kernel(_) => "kernel",
            AnyLearner::MulticlassKernel(_) => "multiclass_kernel",
        }
    }

    /// The per-class Gaussians of a primal model (one for a binary model or a regressor);
    /// `None` for a kernel model, which has none.
    pub fn primal_gaussians(&self) -> Option<&[Gaussian]> {
        match &self.model {
            AnyLearner::Binary(l) => Some(l.models()),
            AnyLearner::Regressor(l) => Some(l.models()),
            AnyLearner::Multiclass(l) => Some(l.models()),
            AnyLearner::Kernel(_) | AnyLearner::MulticlassKernel(_) => None,
        }
    }

    /// The learner of the model's kind, for what [`Model`] does not expose itself.
    pub fn model(&self) -> &AnyLearner {
        &self.model
    }

    /// The learner, to be changed in place; the call can no longer be undone by building the
    /// model again.
    pub(crate) fn model_mut(&mut self) -> &mut AnyLearner {
        self.fresh = false;
        &mut self.model
    }

    /// The entries it was built from (its configuration's [`ModelConfig::to_state`]).
    pub fn config(&self) -> State<'static> {
        self.config.to_state()
    }

    /// The configuration it was built from.
    pub fn model_config(&self) -> &ModelConfig {
        &self.config
    }

    /// The number of classes of a multiclass model (its outputs per row), `None` for one
    /// output per row.
    pub fn n_classes(&self) -> Option<usize> {
        match &self.model {
            AnyLearner::Multiclass(l) => Some(l.n_classes()),
            AnyLearner::MulticlassKernel(l) => Some(l.n_classes()),
            _ => None,
        }
    }

    /// The covariance form of a primal model, with its parameters; `None` for a kernel model.
    pub fn covariance_kind(&self) -> Option<CovarianceKind> {
        match &self.model {
            AnyLearner::Binary(l) => Some(l.covariance_kind()),
            AnyLearner::Regressor(l) => Some(l.covariance_kind()),
            AnyLearner::Multiclass(l) => Some(l.covariance_kind()),
            AnyLearner::Kernel(_) | AnyLearner::MulticlassKernel(_) => None,
        }
    }

    /// Rounds whose update changed the model.
    pub fn n_updates(&self) -> u64 {
        each!(&self.model, l => l.n_updates())
    }

    /// Rows learned, for a rule that reads them (`None` otherwise: the state omits them).
    pub fn n_rounds(&self) -> Option<u64> {
        each!(&self.model, l => l.rule().needs_context().then_some(l.n_rounds()))
    }

    /// Rounds that were mistakes (`None` for a regressor, which makes none).
    pub fn n_mistakes(&self) -> Option<u64> {
        match &self.model {
            AnyLearner::Regressor(_) => None,
            AnyLearner::Binary(l) => Some(l.n_mistakes()),
            AnyLearner::Multiclass(l) => Some(l.n_mistakes()),
            AnyLearner::Kernel(l) => Some(l.n_mistakes()),
            AnyLearner::MulticlassKernel(l) => Some(l.n_mistakes()),
        }
    }

    /// μ (classes × coordinates for a multiclass model) as predictions use it: with every L1
    /// threshold applied, or averaged if the model averages; `None` for the dual form.
    pub fn mean(&self) -> Option<Vec<f64>> {
        match &self.model {
            AnyLearner::Binary(l) => Some(l.effective_mean()),
            AnyLearner::Regressor(l) => Some(l.effective_mean()),
            AnyLearner::Multiclass(l) => Some(l.effective_means()),
            AnyLearner::Kernel(_) | AnyLearner::MulticlassKernel(_) => None,
        }
    }

    /// The covariance values (empty, the variances, or Σ row-major; per class for a
    /// multiclass model); `None` for the dual form.
    pub fn covariance(&self) -> Option<Vec<f64>> {
        match &self.model {
            AnyLearner::Binary(l) => Some(l.covariance().into_owned()),
            AnyLearner::Regressor(l) => Some(l.covariance().into_owned()),
            AnyLearner::Multiclass(l) => Some(l.covariances()),
            AnyLearner::Kernel(_) | AnyLearner::MulticlassKernel(_) => None,
        }
    }

    /// Learns one row with label ±1, target, or class index (as a float); returns whether the
    /// model changed.
    pub fn learn(&mut self, row: Row, target: f64) -> Result<bool, CwError> {
        self.fresh = false;
        match &mut self.model {
            AnyLearner::Binary(l) => l.learn(row, target),
            AnyLearner::Regressor(l) => l.learn(row, target),
            AnyLearner::Multiclass(l) => l.learn(row, class_index(target)?),
            AnyLearner::Kernel(_) | AnyLearner::MulticlassKernel(_) => Err(CwError::InvalidInput(
                "a kernel model learns through partial_fit".into(),
            )),
        }
    }

    /// Learns the rows of `x` as `presentation` says; everything is validated first (by a
    /// fresh model, as it learns: `first_fit`). An error leaves the model as it was.
    pub fn partial_fit(
        &mut self,
        x: &Matrix,
        targets: Targets,
        presentation: Presentation,
    ) -> Result<(), CwError> {
        self.learn_presented(x, targets, presentation, None)
    }

    /// [`Model::partial_fit`] that also writes, for each row of `x`, what the model predicted
    /// of it just before learning it (progressive scores, [`Progressive`]): the values
    /// [`Model::decision_function`] and [`Model::variances`] give that row at that moment, bit
    /// for bit. The model learned is that of [`Model::partial_fit`].
    pub fn partial_fit_scored(
        &mut self,
        x: &Matrix,
        targets: Targets,
        presentation: Presentation,
        out: Progressive,
    ) -> Result<(), CwError> {
        self.learn_presented(x, targets, presentation, Some(out))
    }

    /// [`Model::partial_fit`], writing the progressive scores into `out` when given.
    pub(crate) fn learn_presented(
        &mut self,
        x: &Matrix,
        targets: Targets,
        presentation: Presentation,
        out: Option<Progressive>,
    ) -> Result<(), CwError> {
        if presentation.balanced {
            let (weights, counts) = self.balanced(targets, presentation.weights)?;
            let weighted = Presentation {
                weights: Some(&weights),
                balanced: false,
                ..presentation
            };
            self.learn_presented(x, targets, weighted, out)?;
            self.class_counts = counts;
            return Ok(());
        }
        let Some(out) = out else {
            if let Some(learned) = self.first_fit(x, targets, presentation) {
                return learned;
            }
            return by_kind!(self, targets, l, t => l.partial_fit(x, t, presentation));
        };
        self.fresh = false;
        by_kind!(self, targets, l, t => l.partial_fit_scored(x, t, presentation, out))
    }

    /// μ·x per row (per row and class for a multiclass model).
    pub fn decision_function(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        match &self.model {
            AnyLearner::Binary(l) => l.decision_function(x, out),
            AnyLearner::Regressor(l) => l.predict(x, out),
            AnyLearner::Multiclass(l) => l.decision_function(x, out),
            AnyLearner::Kernel(l) => l.decision_function(x, out),
            AnyLearner::MulticlassKernel(l) => l.decision_function(x, out),
        }
    }

    /// xᵀΣx per row (per row and class for a multiclass model).
    pub fn variances(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        each!(&self.model, l => l.variances(x, out))
    }

    /// The covariance of the rows' scores under the Gaussian over weights: the n × n matrix
    /// x_iᵀΣx_j of the rows of `x`, row-major in `out` (length n²), its diagonal the
    /// [`Model::variances`] of the rows bit for bit (with process noise, the one-step-ahead
    /// xᵀ(Σ + q·I)y as they). For a binary model or a regressor with a diagonal, full or
    /// low-rank covariance; an error otherwise. Never forms Σ densely: O(n²) pairs of
    /// O(nnz) each for the diagonal form, O(nnz²) for the full one, O(k·nnz) for the low-rank.
    pub fn score_covariances(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.score_distribution(x, &mut vec![0.0; x.n_rows()], out)
    }

    /// The Gaussian of the rows' scores: their means μ·x ([`Model::decision_function`] bit for
    /// bit) into `means` and their covariances ([`Model::score_covariances`]) into
    /// `covariances`, in one pass over the rows.
    pub fn score_distribution(
        &self,
        x: &Matrix,
        means: &mut [f64],
        covariances: &mut [f64],
    ) -> Result<(), CwError> {
        match &self.model {
            AnyLearner::Binary(l) => l.score_distribution(x, means, covariances),
            AnyLearner::Regressor(l) => l.score_distribution(x, means, covariances),
            other => Err(no_score_distribution(other)),
        }
    }

    /// μ·x and xᵀΣx of every row of a binary model or a regressor in one pass over the rows:
    /// [`Model::decision_function`] and [`Model::variances`] bit for bit.
    pub fn score_moments(
        &self,
        x: &Matrix,
        means: &mut [f64],
        variances: &mut [f64],
    ) -> Result<(), CwError> {
        match &self.model {
            AnyLearner::Binary(l) => l.score_moments(x, means, variances),
            AnyLearner::Regressor(l) => l.score_moments(x, means, variances),
            other => Err(no_score_distribution(other)),
        }
    }

    /// P(y = +1) per row, or P(class k scores highest) per row and class: the predictive
    /// probabilities, with the label noise learned from the stream (docs/design.md §3.14).
    pub fn probabilities(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        match &self.model {
            AnyLearner::Binary(l) => l.positive_probability(x, out),
            AnyLearner::Kernel(l) => l.positive_probability(x, out),
            AnyLearner::Multiclass(l) => l.probabilities(x, out),
            AnyLearner::MulticlassKernel(l) => l.probabilities(x, out),
            AnyLearner::Regressor(_) => Err(no_class_probabilities()),
        }
    }

    /// AROW regression's predictive variance of the target per row: xᵀΣx + r with a fixed r
    /// (the Kalman filter's one-step-ahead variance), κ·(xᵀΣx + r) with r learned
    /// (`learned_noise`: κ = σ̂²/r, docs/design.md §3.14). Other models have none.
    pub fn predictive_variances(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        let (AnyLearner::Regressor(l), Ok(RegressionRule::AROW { r })) =
            (&self.model, self.config.rule.regression_rule())
        else {
            return Err(CwError::InvalidInput(
                "only AROW regression has a predictive variance".into(),
            ));
        };
        let scale = match (self.config.learned_noise, l.noise_estimate()) {
            (true, Some(noise)) => noise.estimate,
            _ => 1.0,
        };
        l.variances(x, out)?;
        out.iter_mut().for_each(|v| *v = scale * (*v + r));
        Ok(())
    }

    /// [`Model::probabilities`] under the Gaussian over weights alone, without label noise.
    pub fn posterior_probabilities(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        match &self.model {
            AnyLearner::Binary(l) => l.posterior_probability(x, out),
            AnyLearner::Kernel(l) => l.posterior_probability(x, out),
            AnyLearner::Multiclass(l) => l.posterior_probabilities(x, out),
            AnyLearner::MulticlassKernel(l) => l.posterior_probabilities(x, out),
            AnyLearner::Regressor(_) => Err(no_class_probabilities()),
        }
    }

    /// AROW regression's learned prior variance of the feature weights and the rows it was
    /// learned over (`a="auto"`, docs/design.md §3.14); `None` for the other models.
    pub fn prior_estimate(&self) -> Option<PriorEstimate> {
        match &self.model {
            AnyLearner::Regressor(l) => l.prior_estimate(),
            _ => None,
        }
    }

    /// The targets' noise learned from the stream, if the learner learns it: a second-order
    /// classifier's label noise s² (ln s² and its information), AROW regression's noise scale
    /// κ = σ²/r (docs/design.md §3.14).
    pub fn noise_estimate(&self) -> Option<NoiseEstimate> {
        each!(&self.model, l => l.noise_estimate())
    }

    /// What `predict_proba` gives: per row, both classes' probabilities `[1 − p, p]` of a
    /// binary model (1 − p computed as NumPy does), else one per class.
    pub fn class_probabilities(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        if self.n_classes().is_some() {
            return self.probabilities(x, out);
        }
        let n_rows = x.n_rows();
        self.probabilities(x, &mut out[..n_rows])?;
        for i in (0..n_rows).rev() {
            let p = out[i];
            (out[2 * i], out[2 * i + 1]) = (1.0 - p, p);
        }
        Ok(())
    }

    /// Learns a few rows, `targets[i]` for row `i` (a label ±1, a target, or a class index as
    /// a float): one row through [`Model::learn`], more as a batch (validated before the
    /// first update).
    pub fn learn_few(&mut self, x: &Matrix, targets: &[f64]) -> Result<(), CwError> {
        let all = Presentation::default();
        match (x.n_rows(), self.n_classes()) {
            (1, _) => self.learn(x.row(0), targets[0]).map(drop),
            (_, None) => self.partial_fit(x, Targets::Values(targets), all),
            (_, Some(_)) => {
                let classes = targets.iter().map(|&t| class_index(t));
                let classes = classes.collect::<Result<Vec<_>, _>>()?;
                self.partial_fit(x, Targets::Classes(&classes), all)
            }
        }
    }
}

/// Why a model has no one distribution of scores per row (see [`Model::score_distribution`]).
fn no_score_distribution(model: &AnyLearner) -> CwError {
    CwError::InvalidInput(match model {
        AnyLearner::Multiclass(_) => "score covariances are for a binary model or a regressor, \
                                      not a multiclass one (it keeps one Gaussian per class)"
            .into(),
        _ => "score covariances need a primal model: a kernel model keeps no Σ over the features"
            .into(),
    })
}

/// The class `predict` gives a row of scores: with one score (two classes), 1 where it is
/// positive; else the first of the highest, as NumPy's `argmax` (no score NaN).
pub fn best_class(scores: &[f64]) -> usize {
    let first_best = |best: usize, (k, &s): (usize, &f64)| if s > scores[best] { k } else { best };
    match scores {
        [score] => usize::from(*score > 0.0),
        _ => scores.iter().enumerate().fold(0, first_best),
    }
}

/// A class index given as a float (the one-row path passes every target as one).
fn class_index(target: f64) -> Result<usize, CwError> {
    if target >= 0.0 && target.fract() == 0.0 && target < usize::MAX as f64 {
        Ok(target as usize)
    } else {
        Err(CwError::InvalidInput(format!(
            "a class index must be a non-negative integer, got {target}"
        )))
    }
}

#[cfg(test)]
mod tests;
