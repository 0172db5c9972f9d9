//! The binary learner (±1 labels) over the primal Gaussian, and what the one-model learners
//! (binary, regression) share: the accessors of their single model.

use std::borrow::Cow;

use crate::covariance::dual::DualGaussian;
use crate::covariance::kernel::Kernel;
use crate::covariance::{Covariance, CovarianceKind, Gaussian};
use crate::data::{Matrix, Row, Shape};
use crate::error::CwError;
use crate::learn::objective::{Binary, SingleModel};
use crate::learn::online::Online;
use crate::learn::sparse_l1::L1;
use crate::rules::{margin_probability, Rule};

/// A binary learner: one rule × one covariance form, with the counters; labels are ±1.
pub type Learner = Online<Binary, Gaussian>;

/// A binary learner in the dual (kernel) form.
pub type DualLearner = Online<Binary, DualGaussian>;

/// Checks the initial variance a > 0.
pub(crate) fn check_initial_variance(a: f64) -> Result<(), CwError> {
    check_variance("a", a)
}

/// Refuses a prior variance, named `name`, that is not a positive finite number.
pub(crate) fn check_variance(name: &str, value: f64) -> Result<(), CwError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(CwError::InvalidParameter(format!(
            "{name} must be a positive finite number, got {value}"
        )))
    }
}

/// A fresh primal Gaussian with μ = 0 and Σ = a·I over the coordinates of `shape`, after
/// checking that `copies` of it fit in memory.
pub(crate) fn fresh_gaussian(
    kind: CovarianceKind,
    shape: Shape,
    a: f64,
    copies: usize,
) -> Result<Gaussian, CwError> {
    Gaussian::check_size(kind, shape.dim(), copies)?;
    Ok(Gaussian::new(kind, shape, a))
}

/// Refuses a rule without a dual form ([`Rule::has_kernel_form`], docs/design.md §2.9).
pub(crate) fn check_kernel_form(rule: Rule) -> Result<(), CwError> {
    if rule.has_kernel_form() {
        return Ok(());
    }
    let why = if rule.has_own_state() {
        "it keeps per-coordinate state of the input features"
    } else {
        "it reads and rescales ‖μ‖², which the dual form does not keep"
    };
    Err(CwError::InvalidParameter(format!(
        "{} has no kernel form in cwrs ({why}); use it without a kernel",
        rule.entry().name
    )))
}

impl DualLearner {
    /// A fresh dual learner: S empty, Σ = a·I. `budget` caps |S| (at least 1).
    pub fn new(
        rule: Rule,
        kernel: Kernel,
        n_features: usize,
        fit_intercept: bool,
        a: f64,
        budget: Option<usize>,
    ) -> Result<DualLearner, CwError> {
        check_kernel_form(rule)?;
        let second_order = rule.is_second_order();
        let model = DualGaussian::new(kernel, second_order, n_features, fit_intercept, a, budget)?;
        Ok(DualLearner::from_gaussian(rule, model))
    }

    /// A learner over a given dual Gaussian (fresh or restored), with zero counters. The rule
    /// must have a kernel form (`check_kernel_form`; `Model` checks it).
    pub fn from_gaussian(rule: Rule, model: DualGaussian) -> DualLearner {
        Online::with_models(Binary::new(rule), vec![model])
    }
}

impl<M: Covariance> Online<Binary, M> {
    /// The predictive P(y = +1 | x) = Φ(μ·x / √(xᵀΣx + s²)), s² the label noise learned from
    /// the stream (docs/design.md §3.14): the probability under the Gaussian over weights and
    /// the probit label noise together. A learner that learns no s² (a first-order rule)
    /// gives [`Online::posterior_probability`].
    pub fn positive_probability(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        match self.noise_estimate() {
            Some(noise) => self.fill_per_model_predictive(x, out, noise.label_variance()),
            None => self.posterior_probability(x, out),
        }
    }

    /// P(y = +1 | x) = Φ(μ·x / √(xᵀΣx)) under the Gaussian over weights alone; 1/2 when
    /// xᵀΣx = 0 (an all-zero row without intercept). For the identity covariance this is
    /// Φ(μ·x/‖x‖). The ratio does not depend on a positive scale of the row, nor does the
    /// result: where xᵀΣx over- or underflows it is taken at the row's unit scale.
    pub fn posterior_probability(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.fill_per_model_ratio(x, out, margin_probability)
    }
}

impl<O: SingleModel, M: Covariance> Online<O, M> {
    /// The model.
    pub fn model(&self) -> &M {
        &self.models()[0]
    }

    /// μ·x for one row (validated here); with averaging, the averaged mean's.
    pub fn decision(&self, row: Row) -> Result<f64, CwError> {
        row.validate(self.n_features())?;
        Ok(self.model().score(row) - self.shift(0, row))
    }
}

impl<O: SingleModel> Online<O, Gaussian> {
    /// A fresh learner with μ = 0 and Σ = a·I (a is ignored by the identity covariance).
    pub fn new(
        rule: O::Rule,
        kind: CovarianceKind,
        n_features: usize,
        fit_intercept: bool,
        a: f64,
    ) -> Result<Self, CwError> {
        let objective = O::new(rule);
        check_initial_variance(a)?;
        let kind = objective.check_covariance(kind)?;
        let shape = Shape::new(n_features, fit_intercept)?;
        let model = fresh_gaussian(kind, shape, a, 1)?;
        Ok(Online::with_models(objective, vec![model]))
    }

    /// Rebuilds a learner from its state (the inverse of the accessors); a regressor counts no
    /// mistakes.
    #[allow(clippy::too_many_arguments)]
    pub fn from_state(
        rule: O::Rule,
        kind: CovarianceKind,
        n_features: usize,
        fit_intercept: bool,
        mean: &[f64],
        covariance: &[f64],
        n_updates: u64,
        n_mistakes: u64,
    ) -> Result<Self, CwError> {
        let objective = O::new(rule);
        let kind = objective.check_covariance(kind)?;
        let shape = Shape::new(n_features, fit_intercept)?;
        let model = Gaussian::from_parts(kind, shape, mean, covariance)?;
        Ok(Online::with_models(objective, vec![model]).with_counters(n_updates, n_mistakes))
    }

    /// Adds sparse L1 training (diagonal covariance only), with its lazy state when restoring.
    pub fn with_l1(self, l1: L1) -> Result<Self, CwError> {
        self.try_map_models(|_, model| model.with_l1(l1.clone()))
    }

    /// The L1 penalty's lazy state, if any.
    pub fn l1(&self) -> Option<&L1> {
        self.model().l1()
    }

    /// The mean as predictions use it: every L1 threshold applied (equal to [`Self::mean`]
    /// without a penalty), or the running average of the means if the learner averages.
    pub fn effective_mean(&self) -> Vec<f64> {
        self.predicted_mean(0, self.model().effective_mean())
    }

    /// The model's covariance form, with its parameters.
    pub fn covariance_kind(&self) -> CovarianceKind {
        self.model().kind()
    }

    /// The model's coordinates.
    pub fn shape(&self) -> Shape {
        self.model().shape()
    }

    /// The stored μ over the features, then the bias weight when the model fits an intercept
    /// (with an L1 penalty, before the pending thresholds: see [`Self::effective_mean`]).
    pub fn mean(&self) -> Cow<'_, [f64]> {
        self.model().mean()
    }

    /// The covariance values over the same coordinates as [`Self::mean`]: empty for the
    /// identity, the variances for the diagonal form, Σ row-major for the full form.
    pub fn covariance(&self) -> Cow<'_, [f64]> {
        self.model().covariance()
    }

    /// Σ over the same coordinates as a dense row-major matrix (`None` for AdaGrad's and
    /// FTRL's state).
    pub fn dense_covariance(&self) -> Option<Vec<f64>> {
        self.model().dense_covariance()
    }

    /// The covariance as `from_state` takes it back (for the full form, with its pending
    /// rank-one terms).
    pub fn covariance_state(&self) -> Cow<'_, [f64]> {
        self.model().covariance_state()
    }
}

#[cfg(test)]
mod tests;
