//! What the learning loop ([`crate::learn::online::Online`]) optimises: an objective turns a row's
//! target and score(s) into the margin (or residual) m, the variance v the rule sees, and the
//! signed steps of the models it drives (docs/design.md §4 for multiclass).
//!
//! - [`Binary`]: ±1 labels, m = y·μ·x, one model.
//! - [`Regression`]: real targets, the residual y − μ·x, one model.
//! - [`Multiclass`]: class indices, one model per class; max-score (single constraint,
//!   Crammer–Singer style) or one-vs-rest.

use crate::covariance::{Covariance, CovarianceKind, Observation, Update};
use crate::data::{weight_of, Row, Weights};
use crate::error::CwError;
use crate::learn::drift::{Innovation, Watched};
use crate::learn::noise_estimate::NoiseEstimate;
use crate::rules::{
    is_learnable_variance, Context, RegressionRule, Rule, ScaledStep, Step, StepRule,
};

/// The form a rule keeps its own per-coordinate state in (AdaGrad's, FTRL's; docs/design.md
/// §2.9), with the rule's hyper-parameters.
fn own_form(rule: Rule) -> Option<CovarianceKind> {
    match rule {
        Rule::AdaGrad { eta, delta } => Some(CovarianceKind::AdaGrad { eta, delta }),
        Rule::FTRL {
            alpha,
            beta,
            l1,
            l2,
            ..
        } => Some(CovarianceKind::Ftrl {
            alpha,
            beta,
            l1,
            l2,
        }),
        _ => None,
    }
}

/// Checks that a classification rule and a covariance form fit together (first-order rules
/// keep Σ = I, second-order rules learn a diagonal or full Σ) and gives the form to build: for
/// AdaGrad and FTRL, their own with the rule's parameters.
pub(crate) fn check_covariance(
    rule: Rule,
    kind: CovarianceKind,
) -> Result<CovarianceKind, CwError> {
    let own = own_form(rule);
    let fits = match own {
        Some(form) => kind.same_form(form),
        None => covariance_fits(rule.is_second_order(), kind),
    };
    if fits {
        return Ok(own.unwrap_or(kind));
    }
    let expected = match own {
        Some(form) => form.name(),
        None if rule.is_second_order() => "\"diag\", \"full\" or \"lowrank\"",
        None => "identity",
    };
    Err(CwError::InvalidParameter(format!(
        "{rule:?} needs a {expected} covariance, got {:?}",
        kind.name()
    )))
}

/// Whether a rule of this order and a covariance form fit together: first-order rules keep
/// Σ = I, second-order rules learn a diagonal, full or low-rank Σ (not a rule's own state).
fn covariance_fits(second_order: bool, kind: CovarianceKind) -> bool {
    !kind.is_rule_state() && second_order == (kind != CovarianceKind::Identity)
}

/// The update of one model for `step` with its mean step signed by `sign`: the L1 step scale
/// comes from the rule at the variance `v` it saw.
#[inline]
fn update_of(rule: impl StepRule, step: Step, sign: f64, v: f64, h: f64) -> Update {
    Update {
        step: step.alpha * sign,
        c: step.c,
        eta: rule.l1_rate(&step, v, h),
    }
}

/// What the loop hands an objective to learn with: the models, one score per model (work
/// space), and the estimate of the targets' noise it updates (docs/design.md §3.14).
pub type LoopState<'s, M> = (&'s mut [M], &'s mut [f64], &'s mut NoiseEstimate);

/// Mistakes and updates of some rounds (and the rounds, for the rules that read them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Rounds the model got wrong before learning the row.
    pub mistakes: u64,
    /// Rounds whose update changed a model.
    pub updates: u64,
    /// Rows presented (of positive weight).
    pub rounds: u64,
}

impl Tally {
    /// The counts of these rounds and then `more` (saturating: a restored state may hold any).
    pub fn then(self, more: Tally) -> Tally {
        Tally {
            mistakes: self.mistakes.saturating_add(more.mistakes),
            updates: self.updates.saturating_add(more.updates),
            rounds: self.rounds.saturating_add(more.rounds),
        }
    }
}

/// ‖μ‖² of `models` together if `rule` reads it (their joint weight vector), else NaN.
fn mean_norm2_for<M: Covariance>(rule: impl StepRule, models: &[M]) -> f64 {
    if rule.needs_mean_norm() {
        models.iter().map(M::mean_norm2).sum()
    } else {
        f64::NAN
    }
}

/// Applies a scaled step to one model: μ ← s·μ, then the template's update, then Σ ← r·Σ.
#[inline]
fn apply<M: Covariance>(model: &mut M, row: Row, scaled: &ScaledStep, u: Update, v: f64) {
    if scaled.mean_scale != 1.0 {
        model.rescale_mean(scaled.mean_scale);
    }
    model.update(row, u.step, u.c, v, u.eta);
    if scaled.covariance_scale != 1.0 {
        model.rescale_covariance(scaled.covariance_scale);
    }
}

/// The rounds of a one-model objective whose rule reads a [`Context`], row by row.
fn learn_in_context<'a, T: SingleModel, M: Covariance>(
    objective: &T,
    (model, noise): (&mut M, &mut NoiseEstimate),
    rows: impl Iterator<Item = (usize, Row<'a>)>,
    (y, weights): (&[f64], Weights),
    before: Tally,
) -> Tally {
    let rule = objective.rule();
    let estimates = objective.noise_prior().is_some();
    let mut tally = Tally::default();
    for (i, row) in rows {
        let h = weight_of(weights, i);
        tally.rounds += 1;
        let seen = model.observe(row);
        let (m, sign, mistake) = objective.margin(y[i], seen.score);
        tally.mistakes += u64::from(mistake);
        if estimates {
            objective.observe_noise(noise, m, seen.variance, h);
        }
        let context = Context {
            round: before.rounds.saturating_add(tally.rounds),
            updates: before.updates.saturating_add(tally.updates),
            mean_norm2: mean_norm2_for(rule, std::slice::from_ref(model)),
            zero_margin_mistake: sign < 0.0,
        };
        let Some(scaled) = rule.step_in(m, seen.variance, seen.squared_norm, h, &context) else {
            continue;
        };
        let u = update_of(rule, scaled.step, sign, seen.variance, h);
        apply(model, row, &scaled, u, seen.variance);
        tally.updates += u64::from(model.take_skipped() == 0);
    }
    tally
}

/// The rounds of a one-model objective whose rule reads no context: the rows handed to
/// [`Covariance::learn_rows`], row `i` with target `y[i]` and weight `weight(i)`.
#[inline]
fn learn_single<'a, T: SingleModel, M: Covariance>(
    objective: &T,
    (model, noise): (&mut M, &mut NoiseEstimate),
    rows: impl Iterator<Item = (usize, Row<'a>)>,
    y: &[f64],
    weight: impl Fn(usize) -> f64,
) -> Tally {
    let rule = objective.rule();
    let estimates = objective.noise_prior().is_some();
    let mut tally = Tally::default();
    model.learn_rows(rows, |i, seen: Observation| {
        let (m, sign, mistake) = objective.margin(y[i], seen.score);
        tally.rounds += 1;
        tally.mistakes += u64::from(mistake);
        let h = weight(i);
        if estimates {
            objective.observe_noise(noise, m, seen.variance, h);
        }
        let step = rule.step(m, seen.variance, seen.squared_norm, h)?;
        tally.updates += 1;
        Some(update_of(rule, step, sign, seen.variance, h))
    });
    tally.updates -= model.take_skipped();
    tally
}

/// What an objective does in the loop.
pub trait Objective: Clone + std::fmt::Debug + PartialEq + Send + Sync {
    /// The rule the objective steps with: a classification or a regression rule.
    type Rule: StepRule;
    /// One row's target: a ±1 label, a real value or a class index.
    type Target: Copy + Send + Sync;

    /// The rule the objective steps with.
    fn rule(&self) -> Self::Rule;

    /// Checks targets before any row is learned (`n_models` models are driven).
    fn check_targets(&self, n_models: usize, targets: &[Self::Target]) -> Result<(), CwError>;

    /// Learns `rows` (index into `targets` and `weights`, row) in order, each with its
    /// importance weight (1 without `weights`; rows of weight 0 never come); everything is
    /// valid. A one-model objective hands them to [`Covariance::learn_rows`] (so the full form
    /// blocks rows and the dual form looks ahead); a several-model one runs the per-row
    /// protocol, updating the noise estimate of `work` with each row before it is learned if
    /// it keeps one ([`Objective::noise_prior`]). `before` counts the rounds and updates
    /// before this call (what a rule's [`Context`] reads).
    fn learn<'a, M: Covariance>(
        &self,
        work: LoopState<M>,
        rows: impl Iterator<Item = (usize, Row<'a>)>,
        targets: (&[Self::Target], Weights),
        before: Tally,
    ) -> Tally;

    /// The prior of the targets' noise this objective learns (docs/design.md §3.14), or
    /// `None`: it learns none (first-order classification rules, regression other than AROW).
    fn noise_prior(&self) -> Option<NoiseEstimate>;

    /// The loss of a row before it is learned, which the change detector of
    /// `process_noise="auto"` watches (docs/design.md §10.2): 1 for a mistake and 0 otherwise,
    /// |y − μ·x|/√(xᵀΣx + r) for regression, with the regressor's innovation (§10.5).
    fn round_loss<M: Covariance>(&self, models: &[M], row: Row, target: Self::Target) -> Watched;
}

/// An objective that drives one model with real targets: the loop hands its rows to
/// [`Covariance::learn_rows`].
pub trait SingleModel: Clone + std::fmt::Debug + PartialEq + Send + Sync {
    /// The rule the objective steps with: a classification or a regression rule.
    type Rule: StepRule;

    /// The objective of `rule`.
    fn new(rule: Self::Rule) -> Self;

    /// The rule the objective steps with.
    fn rule(&self) -> Self::Rule;

    /// Checks that the rule and a covariance form fit together (first-order rules keep Σ = I,
    /// second-order rules learn a diagonal or full Σ) and gives the form to build, with the
    /// rule's parameters for a rule with its own form.
    fn check_covariance(&self, kind: CovarianceKind) -> Result<CovarianceKind, CwError>;

    /// Checks targets before any row is learned.
    fn check_targets(&self, y: &[f64]) -> Result<(), CwError>;

    /// For target `y` and score μ·x: the margin (or residual) m, the sign of the mean step and
    /// whether the round is a mistake.
    fn margin(&self, y: f64, score: f64) -> (f64, f64, bool);

    /// [`Objective::noise_prior`].
    fn noise_prior(&self) -> Option<NoiseEstimate>;

    /// Updates `noise` with a row of margin (or residual) `m`, variance `v` and weight `h`,
    /// before the row is learned; called only when [`SingleModel::noise_prior`] is some.
    fn observe_noise(&self, noise: &mut NoiseEstimate, m: f64, v: f64, h: f64);

    /// [`Objective::round_loss`] of `model` on a row: 1 for a mistake, else 0.
    fn watched_loss<M: Covariance>(&self, model: &M, row: Row, y: f64) -> Watched {
        let (_, _, mistake) = self.margin(y, model.score(row));
        Watched {
            loss: f64::from(u8::from(mistake)),
            innovation: None,
        }
    }
}

impl<T: SingleModel> Objective for T {
    type Rule = T::Rule;
    type Target = f64;

    fn rule(&self) -> T::Rule {
        SingleModel::rule(self)
    }

    fn check_targets(&self, _n_models: usize, y: &[f64]) -> Result<(), CwError> {
        SingleModel::check_targets(self, y)
    }

    #[inline]
    fn learn<'a, M: Covariance>(
        &self,
        (models, _, noise): LoopState<M>,
        rows: impl Iterator<Item = (usize, Row<'a>)>,
        (y, weights): (&[f64], Weights),
        before: Tally,
    ) -> Tally {
        let rule = SingleModel::rule(self);
        let work = (&mut models[0], noise);
        if rule.needs_context() {
            return learn_in_context(self, work, rows, (y, weights), before);
        }
        // Unweighted rows take a loop of their own, where h = 1 is a constant the rule's
        // weighted step folds away: it is the loop of every unweighted call.
        match weights {
            None => learn_single(self, work, rows, y, |_| 1.0),
            Some(w) => learn_single(self, work, rows, y, |i| w[i]),
        }
    }

    fn noise_prior(&self) -> Option<NoiseEstimate> {
        SingleModel::noise_prior(self)
    }

    fn round_loss<M: Covariance>(&self, models: &[M], row: Row, y: f64) -> Watched {
        self.watched_loss(&models[0], row, y)
    }
}

/// Binary classification with ±1 labels: m = y·μ·x; a mistake is m ≤ 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Binary(pub Rule);

impl SingleModel for Binary {
    type Rule = Rule;

    fn new(rule: Rule) -> Self {
        Binary(rule)
    }

    fn rule(&self) -> Rule {
        self.0
    }

    fn check_covariance(&self, kind: CovarianceKind) -> Result<CovarianceKind, CwError> {
        check_covariance(self.0, kind)
    }

    fn check_targets(&self, y: &[f64]) -> Result<(), CwError> {
        match y.iter().find(|&&t| t != 1.0 && t != -1.0) {
            Some(bad) => Err(CwError::InvalidInput(format!(
                "labels must be -1 or +1, got {bad}"
            ))),
            None => Ok(()),
        }
    }

    #[inline]
    fn margin(&self, y: f64, score: f64) -> (f64, f64, bool) {
        let m = y * score;
        (m, y, m <= 0.0)
    }

    /// The label noise s² of a second-order rule's predictive probability.
    fn noise_prior(&self) -> Option<NoiseEstimate> {
        self.0
            .is_second_order()
            .then_some(NoiseEstimate::LABEL_PRIOR)
    }

    #[inline]
    fn observe_noise(&self, noise: &mut NoiseEstimate, m: f64, v: f64, h: f64) {
        noise.observe_label(m, v, h);
    }
}

/// Regression: the residual e = y − μ·x plays the margin's part; no round is a mistake.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Regression(pub RegressionRule);

impl SingleModel for Regression {
    type Rule = RegressionRule;

    fn new(rule: RegressionRule) -> Self {
        Regression(rule)
    }

    fn rule(&self) -> RegressionRule {
        self.0
    }

    fn check_covariance(&self, kind: CovarianceKind) -> Result<CovarianceKind, CwError> {
        let rule = self.0;
        if covariance_fits(rule.is_second_order(), kind) {
            return Ok(kind);
        }
        Err(CwError::InvalidParameter(format!(
            "{rule:?} regression cannot use a {:?} covariance",
            kind.name()
        )))
    }

    fn check_targets(&self, y: &[f64]) -> Result<(), CwError> {
        if y.iter().all(|t| t.is_finite()) {
            Ok(())
        } else {
            Err(CwError::InvalidInput(
                "Input y contains NaN or infinity".into(),
            ))
        }
    }

    #[inline]
    fn margin(&self, y: f64, score: f64) -> (f64, f64, bool) {
        (y - score, 1.0, false)
    }

    /// AROW regression's noise scale κ = σ²/r (the one rule with a noise variance r).
    fn noise_prior(&self) -> Option<NoiseEstimate> {
        matches!(self.0, RegressionRule::AROW { .. }).then_some(NoiseEstimate::RESIDUAL_PRIOR)
    }

    #[inline]
    fn observe_noise(&self, noise: &mut NoiseEstimate, e: f64, v: f64, h: f64) {
        if let RegressionRule::AROW { r } = self.0 {
            noise.observe_residual(e, v + r, h);
        }
    }

    /// The residual in units of its predictive standard deviation, |e|/√(xᵀΣx + r): the
    /// Kalman filter's standardized innovation. A learner's early residuals are large because
    /// its variance is, so they do not inflate the detector's level (docs/design.md §10.2).
    /// Only AROW regression learns a covariance, so only it can reset one. The innovation
    /// feeds the process noise estimate (docs/design.md §10.5).
    fn watched_loss<M: Covariance>(&self, model: &M, row: Row, y: f64) -> Watched {
        let seen = model.watch(row);
        let noise = match self.0 {
            RegressionRule::AROW { r } => r,
            _ => 0.0,
        };
        let innovation = Innovation {
            residual: y - seen.score,
            variance: seen.variance,
            noise,
            squared_norm: seen.squared_norm,
        };
        Watched {
            loss: innovation.standardized(),
            innovation: Some(innovation),
        }
    }
}

/// How a multiclass learner spreads a row over its class models (docs/design.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// The rule's step (α, c) on m = μ_y·x − μ_s·x and V = xᵀΣ_y x + xᵀΣ_s x, with y the true
    /// class and s the highest-scoring wrong one, moves μ_y by +α·Σ_y x and μ_s by −α·Σ_s x.
    MaxScore,
    /// Class k learns the binary problem "k or not" with its own model, on every row.
    OneVsRest,
}

impl Strategy {
    /// The strategy of a configuration's name: `"max-score"` or `"ovr"`.
    pub fn from_name(name: &str) -> Result<Strategy, CwError> {
        match name {
            "max-score" => Ok(Strategy::MaxScore),
            "ovr" => Ok(Strategy::OneVsRest),
            _ => Err(CwError::InvalidParameter(format!(
                "multi_class must be \"max-score\" or \"ovr\", got {name:?}"
            ))),
        }
    }

    /// The strategy's name in a configuration (`multi_class`), the inverse of
    /// [`Strategy::from_name`].
    pub fn name(&self) -> &'static str {
        match self {
            Strategy::MaxScore => "max-score",
            Strategy::OneVsRest => "ovr",
        }
    }
}

/// Multiclass classification with one model per class (docs/design.md §4). A mistake is a
/// round where the true class does not score strictly above every other class.
///
/// - Max-score: with s the highest-scoring wrong class, m = μ_y·x − μ_s·x and V = xᵀΣ_y x +
///   xᵀΣ_s x (the block-diagonal view of the label-augmented feature space, where x appears as
///   +x in block y and −x in block s, so ‖x‖² counts twice); the rule's step on (m, V) moves
///   μ_y by +α·Σ_y x and μ_s by −α·Σ_s x, each Σ with the same precision increment c.
/// - One-vs-rest: class k learns the binary problem "k or not" with its own model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Multiclass {
    /// The rule whose step moves the class models.
    pub rule: Rule,
    /// How the class models learn a row.
    pub strategy: Strategy,
}

impl Multiclass {
    /// The step of a multiclass round: in `context` if the rule reads one, with ‖μ‖² of
    /// `models` (the joint weight vector of the pair, or one class).
    #[inline]
    fn step_of<M: Covariance>(
        &self,
        (m, v, norm2): (f64, f64, f64),
        h: f64,
        models: &[M],
        context: Context,
    ) -> Option<ScaledStep> {
        let rule = self.rule;
        if !rule.needs_context() {
            return rule.step(m, v, norm2, h).map(ScaledStep::plain);
        }
        let context = Context {
            mean_norm2: mean_norm2_for(rule, models),
            ..context
        };
        rule.step_in(m, v, norm2, h, &context)
    }

    /// One round on `row` of class `label`, with `scores` holding μ_k·x of every class:
    /// whether any model changed. `context` gives the round and updates so far.
    fn round<M: Covariance>(
        &self,
        (models, scores, noise): (&mut [M], &[f64], Option<&mut NoiseEstimate>),
        (row, h): (Row, f64),
        (label, rival): (usize, usize),
        context: Context,
    ) -> bool {
        let rule = self.rule;
        match self.strategy {
            Strategy::MaxScore => {
                let m = scores[label] - scores[rival];
                let (v_label, norm2_label) = models[label].prepare(row);
                let (v_rival, norm2_rival) = models[rival].prepare(row);
                // The rule's gate sees only the sum, but each class's Σ update divides by its
                // own v (β = c/(1 + c·v)): a dual v, a difference of large kernel terms, can
                // round to ≤ 0 while the other class's is large, and then β is negative or
                // infinite and Σ goes NaN.
                if !(is_learnable_variance(v_label) && is_learnable_variance(v_rival)) {
                    return false;
                }
                let v = v_label + v_rival;
                if let Some(noise) = noise {
                    observe_pair(noise, m, v, h);
                }
                // LIBOL's prediction (as `predict`'s): the first class of highest score, so a
                // tie is a mistake when the rival comes first (docs/design.md §2.9).
                let context = Context {
                    zero_margin_mistake: rival < label,
                    ..context
                };
                let moments = (m, v, norm2_label + norm2_rival);
                let Some(scaled) = self.step_of(moments, h, models, context) else {
                    return false;
                };
                let mut changed = false;
                // The scales act on the joint weight vector and covariance: every class.
                if scaled.mean_scale != 1.0 {
                    models
                        .iter_mut()
                        .for_each(|m| m.rescale_mean(scaled.mean_scale));
                }
                for (k, sign, v_k) in [(label, 1.0, v_label), (rival, -1.0, v_rival)] {
                    let u = update_of(rule, scaled.step, sign, v, h);
                    models[k].update(row, u.step, u.c, v_k, u.eta);
                    changed |= models[k].take_skipped() == 0;
                }
                if scaled.covariance_scale != 1.0 {
                    let r = scaled.covariance_scale;
                    models.iter_mut().for_each(|m| m.rescale_covariance(r));
                }
                changed
            }
            Strategy::OneVsRest => {
                let mut changed = false;
                let mut pair = [0.0; 2];
                for k in 0..models.len() {
                    let y = if k == label { 1.0 } else { -1.0 };
                    let (v, norm2) = models[k].prepare(row);
                    if k == label || k == rival {
                        pair[usize::from(k == rival)] = v;
                    }
                    let context = Context {
                        zero_margin_mistake: y < 0.0,
                        ..context
                    };
                    let moments = (y * scores[k], v, norm2);
                    let one = std::slice::from_ref(&models[k]);
                    if let Some(scaled) = self.step_of(moments, h, one, context) {
                        let u = update_of(rule, scaled.step, y, v, h);
                        apply(&mut models[k], row, &scaled, u, v);
                        changed |= models[k].take_skipped() == 0;
                    }
                }
                if let Some(noise) = noise {
                    observe_pair(noise, scores[label] - scores[rival], pair[0] + pair[1], h);
                }
                changed
            }
        }
    }
}

/// The label noise seen in a multiclass round: the true class beats its rival with
/// probability Φ(m/√(V + 2s²)) when every class score carries its own N(0, s²) noise, with m
/// the difference of their scores and V the sum of their variances: the binary observation of
/// margin m/√2 and variance V/2.
#[inline]
fn observe_pair(noise: &mut NoiseEstimate, m: f64, v: f64, h: f64) {
    if is_learnable_variance(v) {
        noise.observe_label(m * std::f64::consts::FRAC_1_SQRT_2, 0.5 * v, h);
    }
}

impl Multiclass {
    /// One round on `row` of class `label`, counted in `tally`; `ahead` hints the classes the
    /// round prepares with the rows they are expected to prepare next.
    fn learn_one<M: Covariance>(
        &self,
        (models, scores, noise): LoopState<M>,
        (row, label, h): (Row, usize, f64),
        before: Tally,
        tally: &mut Tally,
        ahead: Option<&Lookahead>,
    ) {
        tally.rounds += 1;
        for (score, model) in scores.iter_mut().zip(models.iter_mut()) {
            *score = model.learn_score(row);
        }
        let rival = highest_other(scores, label);
        tally.mistakes += u64::from(scores[label] - scores[rival] <= 0.0);
        if let Some(ahead) = ahead {
            ahead.hint(self.strategy, models, (label, rival));
        }
        let context = Context {
            round: before.rounds.saturating_add(tally.rounds),
            updates: before.updates.saturating_add(tally.updates),
            mean_norm2: f64::NAN,
            zero_margin_mistake: true,
        };
        let noise = self.rule.is_second_order().then_some(noise);
        let changed = self.round((models, scores, noise), (row, h), (label, rival), context);
        tally.updates += u64::from(changed);
    }
}

impl Objective for Multiclass {
    type Rule = Rule;
    type Target = usize;

    fn rule(&self) -> Rule {
        self.rule
    }

    fn check_targets(&self, n_classes: usize, labels: &[usize]) -> Result<(), CwError> {
        match labels.iter().find(|&&k| k >= n_classes) {
            Some(bad) => Err(CwError::InvalidInput(format!(
                "class index {bad} is out of range for {n_classes} classes"
            ))),
            None => Ok(()),
        }
    }

    fn learn<'a, M: Covariance>(
        &self,
        (models, scores, noise): LoopState<M>,
        rows: impl Iterator<Item = (usize, Row<'a>)>,
        (labels, weights): (&[usize], Weights),
        before: Tally,
    ) -> Tally {
        let mut tally = Tally::default();
        let learned = |i: usize, row| (row, labels[i], weight_of(weights, i));
        if !models.first().is_some_and(M::prepares_ahead) {
            for (i, row) in rows {
                let work = (&mut *models, &mut *scores, &mut *noise);
                self.learn_one(work, learned(i, row), before, &mut tally, None);
            }
            return tally;
        }
        let mut rows = rows;
        let mut ahead = Lookahead::new(models.len());
        while ahead.fill(self.strategy, models, &mut rows, labels) {
            for at in 0..ahead.window.len() {
                let (i, row) = ahead.window[at];
                ahead.at = at;
                let plan = Some(&ahead);
                let work = (&mut *models, &mut *scores, &mut *noise);
                self.learn_one(work, learned(i, row), before, &mut tally, plan);
            }
        }
        models.iter_mut().for_each(|m| m.prepare_ahead(&[]));
        tally
    }

    /// The label noise s² of a second-order rule's predictive probabilities.
    fn noise_prior(&self) -> Option<NoiseEstimate> {
        self.rule
            .is_second_order()
            .then_some(NoiseEstimate::LABEL_PRIOR)
    }

    fn round_loss<M: Covariance>(&self, models: &[M], row: Row, label: usize) -> Watched {
        let own = models[label].score(row);
        let rival = (models.iter().enumerate())
            .filter(|&(k, _)| k != label)
            .map(|(_, model)| model.score(row))
            .fold(f64::NEG_INFINITY, f64::max);
        Watched {
            loss: f64::from(u8::from(own - rival <= 0.0)),
            innovation: None,
        }
    }
}

/// The look-ahead of multiclass rounds for forms that prepare rows ahead (the full form,
/// [`Covariance::prepare_ahead`]): a window of the next rows and, per class, the rows of the
/// window it is expected to prepare: every row for one-vs-rest; for max-score the rows of its
/// label and those where it is the rival under the means at the window's start (a guess: a
/// class asked for a row it did not expect computes that row's product alone).
struct Lookahead<'a> {
    /// The window's rows, from the current one.
    window: Vec<(usize, Row<'a>)>,
    /// Per class: the positions in the window, and their rows, it is expected to prepare.
    positions: Vec<Vec<usize>>,
    rows: Vec<Vec<Row<'a>>>,
    /// The current row's position in the window.
    at: usize,
}

/// Rows the look-ahead plans at once: a few blocks of pending terms for every class.
const LOOKAHEAD: usize = 64;

impl<'a> Lookahead<'a> {
    fn new(n_classes: usize) -> Self {
        Lookahead {
            window: Vec::with_capacity(LOOKAHEAD),
            positions: vec![Vec::new(); n_classes],
            rows: vec![Vec::new(); n_classes],
            at: 0,
        }
    }

    /// Takes the next window of rows from `rows` and plans it; false when there are none.
    fn fill<M: Covariance>(
        &mut self,
        strategy: Strategy,
        models: &[M],
        rows: &mut impl Iterator<Item = (usize, Row<'a>)>,
        labels: &[usize],
    ) -> bool {
        self.window.clear();
        self.window.extend(rows.take(LOOKAHEAD));
        self.positions.iter_mut().for_each(Vec::clear);
        self.rows.iter_mut().for_each(Vec::clear);
        let mut scores = vec![0.0; models.len()];
        for (p, &(i, row)) in self.window.iter().enumerate() {
            let mut expect = |k: usize| {
                self.positions[k].push(p);
                self.rows[k].push(row);
            };
            match strategy {
                Strategy::OneVsRest => (0..models.len()).for_each(&mut expect),
                Strategy::MaxScore => {
                    for (score, model) in scores.iter_mut().zip(models) {
                        *score = model.score(row);
                    }
                    let label = labels[i];
                    expect(label);
                    expect(highest_other(&scores, label));
                }
            }
        }
        !self.window.is_empty()
    }

    /// Hints each class the round prepares (`label` and `rival` for max-score, every class for
    /// one-vs-rest) with its expected rows from the current one, if it expected the current one.
    fn hint<M: Covariance>(&self, strategy: Strategy, models: &mut [M], pair: (usize, usize)) {
        let hint = |k: usize, models: &mut [M]| {
            let positions = &self.positions[k];
            let from = positions.partition_point(|&p| p < self.at);
            if positions.get(from) == Some(&self.at) {
                models[k].prepare_ahead(&self.rows[k][from..]);
            }
        };
        match strategy {
            Strategy::MaxScore => {
                hint(pair.0, models);
                hint(pair.1, models);
            }
            Strategy::OneVsRest => (0..models.len()).for_each(|k| hint(k, models)),
        }
    }
}

/// The highest-scoring class other than `label` (the first one on ties).
fn highest_other(scores: &[f64], label: usize) -> usize {
    let mut best = if label == 0 { 1 } else { 0 };
    for (k, &s) in scores.iter().enumerate() {
        if k != label && s > scores[best] {
            best = k;
        }
    }
    best
}
