//! A model's configuration, typed: what a model is built from, as the user gave it. The
//! [`State`] map of a saved model holds it as named entries ([`ModelConfig::to_state`], read
//! back once by [`ModelConfig::from_state`]; docs/model-format.md lists them), and
//! [`ModelConfig::check`] holds every rule its values must follow.
//!
//! ```
//! use cwrs::covariance::CovarianceKind;
//! use cwrs::learn::sparse_l1::Penalty;
//! use cwrs::model::config::ModelConfig;
//! use cwrs::model::Model;
//!
//! let config = ModelConfig::binary("AROW", &[("r", 0.5)])
//!     .covariance(CovarianceKind::Diagonal)
//!     .penalty(Penalty::CoordinateDependent, 0.01, false)
//!     .n_features(10);
//! assert!(config.check().is_ok());
//! let model = Model::from_config(config.clone(), None).unwrap();
//! assert_eq!(model.model_config(), &config);
//! // Averaging does not follow the lazy L1 thresholds: refused, with the reason.
//! let refused = config.average(1).check().unwrap_err();
//! assert_eq!(refused.to_string(), "average cannot be combined with an L1 penalty");
//! ```

use crate::covariance::dual::{average_with_budget, check_budget};
use crate::covariance::kernel::Kernel;
use crate::covariance::{
    average_with_l1, check_rank, no_process_noise, noise_with_l1, CovarianceKind,
};
use crate::data::Shape;
use crate::error::CwError;
use crate::learn::average::check_start;
use crate::learn::drift::ProcessNoise;
use crate::learn::learner::{check_initial_variance, check_kernel_form};
use crate::learn::multiclass::check_n_classes;
use crate::learn::objective::{check_covariance, Regression, SingleModel, Strategy};
use crate::learn::online::check_average_rule;
use crate::learn::sparse_l1::{check_alpha, check_form, Penalty};
use crate::model::state::{State, Value};
use crate::rules::Loss;
use crate::rules::{RegressionRule, Rule};

impl ModelKind {
    /// Whether the model predicts real targets.
    pub fn is_regression(&self) -> bool {
        matches!(self, ModelKind::Regressor)
    }
}

/// What a model predicts, and in which form it learns.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelKind {
    /// Two classes, labels ±1, one primal model.
    Binary,
    /// Real targets, one primal model.
    Regressor,
    /// `n_classes` primal models, learning as `strategy` says.
    Multiclass {
        /// The number of classes (at least 2), one model each.
        n_classes: usize,
        /// How the class models learn a row.
        strategy: Strategy,
    },
    /// Two classes in the dual form. `strategy` is the multiclass strategy the user chose,
    /// which a two-class model keeps without using it (Python's states hold it, with
    /// `n_classes` 2).
    Kernel {
        /// The kernel and the budget of support rows.
        kernel: KernelConfig,
        /// The multiclass strategy as given (unused by a two-class model).
        strategy: Option<Strategy>,
    },
    /// `n_classes` models in the dual form.
    MulticlassKernel {
        /// The kernel and the budget of support rows.
        kernel: KernelConfig,
        /// The number of classes (at least 2), one dual model each.
        n_classes: usize,
        /// How the class models learn a row.
        strategy: Strategy,
    },
}

impl ModelKind {
    /// The kind's name, as the state's `kind` entry gives it.
    pub fn name(&self) -> &'static str {
        match self {
            ModelKind::Binary => "binary",
            ModelKind::Regressor => "regressor",
            ModelKind::Multiclass { .. } => "multiclass",
            ModelKind::Kernel { .. } => "kernel",
            ModelKind::MulticlassKernel { .. } => "multiclass_kernel",
        }
    }

    /// The kernel settings of a dual kind; `None` for a primal one.
    pub fn kernel(&self) -> Option<&KernelConfig> {
        match self {
            ModelKind::Kernel { kernel, .. } | ModelKind::MulticlassKernel { kernel, .. } => {
                Some(kernel)
            }
            _ => None,
        }
    }

    fn kernel_mut(&mut self) -> Option<&mut KernelConfig> {
        match self {
            ModelKind::Kernel { kernel, .. } | ModelKind::MulticlassKernel { kernel, .. } => {
                Some(kernel)
            }
            _ => None,
        }
    }
}

/// The update rule as the user named it: its name, its parameters in the user's order, and
/// OGD's or FTRL's loss. [`RuleConfig::rule`] and [`RuleConfig::regression_rule`] derive the
/// rule (with its derived values, CW's φ from η), checking the values.
#[derive(Clone, Debug, PartialEq)]
pub struct RuleConfig {
    /// The rule's name in the table (`"AROW"`).
    pub name: String,
    /// The parameters the user set, in the user's order, by their table names (`"r"`, `"C"`).
    pub params: Vec<(String, f64)>,
    /// OGD's or FTRL's loss, if set (their default otherwise).
    pub loss: Option<Loss>,
}

impl RuleConfig {
    fn named(&self) -> Vec<(&str, f64)> {
        self.params.iter().map(|(k, v)| (k.as_str(), *v)).collect()
    }

    /// The classification rule, with the loss if one is set.
    pub fn rule(&self) -> Result<Rule, CwError> {
        let rule = Rule::from_name(&self.name, &self.named())?;
        match self.loss {
            Some(loss) => rule.with_loss(loss.name()),
            None => Ok(rule),
        }
    }

    /// The regression rule, its parameters checked.
    pub fn regression_rule(&self) -> Result<RegressionRule, CwError> {
        RegressionRule::from_name(&self.name, &self.named())
    }
}

/// A kernel model's kernel: a built-in one by `name` with its parameters (kept as given,
/// whichever the kernel reads), or the caller's function (`name` `None`, passed beside the
/// configuration), and the budget of support rows.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelConfig {
    /// The built-in kernel's name (`"linear"`, `"rbf"` or `"poly"`); `None`: the caller's own
    /// function.
    pub name: Option<String>,
    /// γ of the RBF kernel exp(−γ‖x − z‖²) and of the polynomial kernel (γ·x·z + coef0)^degree.
    pub gamma: f64,
    /// The polynomial kernel's degree.
    pub degree: u32,
    /// The polynomial kernel's coef0.
    pub coef0: f64,
    /// The cap on the number of support rows, if any.
    pub budget: Option<usize>,
}

impl KernelConfig {
    /// The built-in kernel `name` with scikit-learn's defaults (γ = 1, degree 3, coef0 = 1),
    /// no budget.
    pub fn built_in(name: &str) -> KernelConfig {
        KernelConfig {
            name: Some(name.to_string()),
            ..KernelConfig::custom()
        }
    }

    /// The caller's kernel function, passed when the model is built.
    pub fn custom() -> KernelConfig {
        KernelConfig {
            name: None,
            gamma: 1.0,
            degree: 3,
            coef0: 1.0,
            budget: None,
        }
    }

    /// The built-in kernel, its parameters checked; `None` for the caller's.
    pub fn kernel(&self) -> Result<Option<Kernel>, CwError> {
        let name = self.name.as_deref();
        name.map(|name| Kernel::from_name(name, self.gamma, self.degree, self.coef0))
            .transpose()
    }
}

/// An L1 penalty: its form, its strength α and whether the bias is penalised too.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PenaltyConfig {
    /// Which threshold the penalty applies.
    pub penalty: Penalty,
    /// The strength α ≥ 0 (λ of the thresholds).
    pub alpha: f64,
    /// Whether the bias's weight is thresholded too (by default it is exempt).
    pub penalize_intercept: bool,
}

/// Everything a model is built from (docs/design.md §6, docs/model-format.md).
#[derive(Clone, Debug, PartialEq)]
pub struct ModelConfig {
    /// What the model predicts, and in which form (primal or dual) it learns.
    pub kind: ModelKind,
    /// The update rule and its hyper-parameters.
    pub rule: RuleConfig,
    /// The number of the user's features, d (the bias excluded).
    pub n_features: usize,
    /// Whether the model adds a constant bias feature 1 (its weight is the intercept).
    pub fit_intercept: bool,
    /// The prior variance: Σ₀ = a·I.
    pub a: f64,
    /// The covariance form of the primal kinds (the dual kinds keep theirs in the dual form
    /// and never read it).
    pub covariance: CovarianceKind,
    /// The L1 penalty of sparse training, if any (the diagonal and AdaGrad forms only).
    pub penalty: Option<PenaltyConfig>,
    /// The row from which predictions average the means; `None`: no averaging.
    pub average: Option<u64>,
    /// What is added to Σ before every row: a constant q·I, or a reset to a·I on a detected
    /// change (`"auto"`, docs/design.md §10).
    pub process_noise: ProcessNoise,
    /// AROW regression with `r="auto"`: the noise variance σ² is learned from the stream and
    /// the rule's r is its unit (the predictive variance is κ·(xᵀΣx + r), docs/design.md
    /// §3.14); `false`: r is the noise variance.
    pub learned_noise: bool,
    /// AROW regression with `a="auto"`: the prior variance of the feature weights is learned
    /// from the stream by maximizing the evidence, from `a` (docs/design.md §3.14); the bias
    /// keeps the prior `a`.
    pub learned_prior: bool,
}

/// The builder: a configuration of `kind` and rule, with the defaults of the Python
/// estimators (diagonal covariance, a = 1, an intercept, no penalty, averaging or process
/// noise), one feature until [`ModelConfig::n_features`] says otherwise.
impl ModelConfig {
    fn of(kind: ModelKind, rule: &str, params: &[(&str, f64)]) -> ModelConfig {
        ModelConfig {
            kind,
            rule: RuleConfig {
                name: rule.to_string(),
                params: params.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
                loss: None,
            },
            n_features: 1,
            fit_intercept: true,
            a: 1.0,
            covariance: CovarianceKind::Diagonal,
            penalty: None,
            average: None,
            process_noise: ProcessNoise::Constant(0.0),
            learned_noise: false,
            learned_prior: false,
        }
    }

    /// A binary model of `rule` (one of [`crate::rules::RULE_NAMES`]) with its parameters
    /// `params` (the others at their defaults).
    pub fn binary(rule: &str, params: &[(&str, f64)]) -> ModelConfig {
        Self::of(ModelKind::Binary, rule, params)
    }

    /// A regression model of `rule` (`"AROW"`, `"PA"`, `"PA1"` or `"PA2"`) with its parameters
    /// `params` (the others at their defaults).
    pub fn regressor(rule: &str, params: &[(&str, f64)]) -> ModelConfig {
        Self::of(ModelKind::Regressor, rule, params)
    }

    /// A multiclass model of `n_classes`, strategy max-score.
    pub fn multiclass(rule: &str, params: &[(&str, f64)], n_classes: usize) -> ModelConfig {
        let strategy = Strategy::MaxScore;
        Self::of(
            ModelKind::Multiclass {
                n_classes,
                strategy,
            },
            rule,
            params,
        )
    }

    /// A two-class kernel model.
    pub fn kernel(rule: &str, params: &[(&str, f64)], kernel: KernelConfig) -> ModelConfig {
        let kind = ModelKind::Kernel {
            kernel,
            strategy: None,
        };
        Self::of(kind, rule, params)
    }

    /// A kernel model of `n_classes`, strategy max-score.
    pub fn multiclass_kernel(
        rule: &str,
        params: &[(&str, f64)],
        kernel: KernelConfig,
        n_classes: usize,
    ) -> ModelConfig {
        let strategy = Strategy::MaxScore;
        let kind = ModelKind::MulticlassKernel {
            kernel,
            n_classes,
            strategy,
        };
        Self::of(kind, rule, params)
    }

    /// Sets the number of the user's features (1 until set).
    pub fn n_features(self, n_features: usize) -> Self {
        ModelConfig { n_features, ..self }
    }

    /// Sets whether the model adds a bias feature 1 (its weight is the intercept).
    pub fn fit_intercept(self, fit_intercept: bool) -> Self {
        ModelConfig {
            fit_intercept,
            ..self
        }
    }

    /// Sets the prior variance a > 0 (Σ₀ = a·I).
    pub fn a(self, a: f64) -> Self {
        ModelConfig { a, ..self }
    }

    /// Sets the covariance form of a primal model (a kernel model ignores it).
    pub fn covariance(self, covariance: CovarianceKind) -> Self {
        ModelConfig { covariance, ..self }
    }

    /// Sets an L1 penalty of form `penalty` and strength `alpha` ≥ 0, on the bias too if
    /// `penalize_intercept`.
    pub fn penalty(self, penalty: Penalty, alpha: f64, penalize_intercept: bool) -> Self {
        let penalty = Some(PenaltyConfig {
            penalty,
            alpha,
            penalize_intercept,
        });
        ModelConfig { penalty, ..self }
    }

    /// Predictions average the means from row `start` on (`average=True` is 1).
    pub fn average(self, start: u64) -> Self {
        let average = Some(start);
        ModelConfig { average, ..self }
    }

    /// Sets the process noise: a constant q (Σ ← Σ + q·I before every row) or
    /// [`ProcessNoise::Auto`].
    pub fn process_noise(self, process_noise: ProcessNoise) -> Self {
        ModelConfig {
            process_noise,
            ..self
        }
    }

    /// AROW regression's noise variance learned from the stream (`r="auto"`), r its unit.
    pub fn learned_noise(self, learned_noise: bool) -> Self {
        ModelConfig {
            learned_noise,
            ..self
        }
    }

    /// AROW regression's prior variance of the feature weights learned from the stream
    /// (`a="auto"`), from the configured a.
    pub fn learned_prior(self, learned_prior: bool) -> Self {
        ModelConfig {
            learned_prior,
            ..self
        }
    }

    /// OGD's or FTRL's loss.
    pub fn loss(mut self, loss: Loss) -> Self {
        self.rule.loss = Some(loss);
        self
    }

    /// The strategy of a multiclass kind (another kind keeps it only as a kernel model does).
    pub fn strategy(mut self, new: Strategy) -> Self {
        match &mut self.kind {
            ModelKind::Multiclass { strategy, .. }
            | ModelKind::MulticlassKernel { strategy, .. } => *strategy = new,
            ModelKind::Kernel { strategy, .. } => *strategy = Some(new),
            ModelKind::Binary | ModelKind::Regressor => {}
        }
        self
    }

    /// The budget of a kernel kind (a primal kind has none: unchanged).
    pub fn budget(mut self, budget: Option<usize>) -> Self {
        if let Some(kernel) = self.kind.kernel_mut() {
            kernel.budget = budget;
        }
        self
    }
}

impl ModelConfig {
    /// The number of classes of a multiclass kind, `None` for one output per row.
    pub fn n_classes(&self) -> Option<usize> {
        match self.kind {
            ModelKind::Multiclass { n_classes, .. }
            | ModelKind::MulticlassKernel { n_classes, .. } => Some(n_classes),
            _ => None,
        }
    }

    /// Every rule the configuration's values must follow, each with its message: the rule's
    /// parameters, the prior, the width, the covariance form with the rule, the classes, the
    /// kernel, the penalty, process noise and averaging, alone and together.
    pub fn check(&self) -> Result<(), CwError> {
        // The classification rule; `None` for a regressor, whose rule is checked here.
        let rule = match self.kind {
            ModelKind::Regressor => {
                let rule = self.rule.regression_rule()?;
                Regression::new(rule).check_covariance(self.covariance)?;
                None
            }
            _ => Some(self.rule.rule()?),
        };
        check_initial_variance(self.a)?;
        if self.learned_noise
            && !matches!(rule_of_regressor(self), Some(RegressionRule::AROW { .. }))
        {
            return Err(CwError::InvalidParameter(
                "a learned noise variance (r=\"auto\") is AROW regression's".into(),
            ));
        }
        self.check_learned_prior()?;
        if let Some(n_classes) = self.n_classes() {
            check_n_classes(n_classes)?;
        }
        let kernel = self.kind.kernel();
        match (kernel, rule) {
            (Some(kernel), Some(rule)) => {
                check_kernel_form(rule)?;
                let built_in = kernel.kernel()?;
                if built_in.is_none() && self.n_classes().is_some() {
                    return Err(CwError::InvalidParameter(
                        "a multiclass kernel model needs a built-in kernel".into(),
                    ));
                }
                check_budget(kernel.budget)?;
            }
            (None, rule) => {
                Shape::new(self.n_features, self.fit_intercept)?;
                if let Some(rank) = self.covariance.rank() {
                    check_rank(rank)?;
                }
                if let Some(rule) = rule {
                    check_covariance(rule, self.covariance)?;
                }
            }
            (Some(_), None) => unreachable!("a regressor has no kernel"),
        }
        if let Some(penalty) = &self.penalty {
            if kernel.is_some() {
                return Err(CwError::InvalidParameter(
                    "an L1 penalty applies to the primal learners, not with a kernel".into(),
                ));
            }
            check_alpha(penalty.alpha)?;
            check_form(penalty.penalty, self.covariance)?;
        }
        self.check_process_noise()?;
        let Some(start) = self.average else {
            return Ok(());
        };
        check_start(start)?;
        if self.penalty.is_some() {
            return Err(average_with_l1());
        }
        if kernel.is_some_and(|kernel| kernel.budget.is_some()) {
            return Err(average_with_budget());
        }
        match rule {
            Some(rule) => check_average_rule(rule),
            None => check_average_rule(self.rule.regression_rule()?),
        }
    }

    /// A learned prior (`a="auto"`) needs AROW regression whose model can change its prior
    /// exactly: a full or diagonal covariance without L1, process noise or averaging.
    fn check_learned_prior(&self) -> Result<(), CwError> {
        if !self.learned_prior {
            return Ok(());
        }
        if !matches!(rule_of_regressor(self), Some(RegressionRule::AROW { .. })) {
            return Err(CwError::InvalidParameter(
                "a learned prior (a=\"auto\") is AROW regression's".into(),
            ));
        }
        if !matches!(
            self.covariance,
            CovarianceKind::Diagonal | CovarianceKind::Full
        ) {
            return Err(CwError::InvalidParameter(format!(
                "a learned prior (a=\"auto\") needs covariance=\"full\" or \"diag\", got \
                 {:?}",
                self.covariance.name()
            )));
        }
        let other = if self.penalty.is_some() {
            Some("an L1 penalty")
        } else if !self.process_noise.is_off() {
            Some("process noise")
        } else if self.average.is_some() {
            Some("averaging")
        } else {
            None
        };
        match other {
            Some(other) => Err(CwError::InvalidParameter(format!(
                "a learned prior (a=\"auto\") cannot be combined with {other}"
            ))),
            None => Ok(()),
        }
    }

    fn check_process_noise(&self) -> Result<(), CwError> {
        if let ProcessNoise::Constant(q) = self.process_noise {
            ProcessNoise::constant(q)?;
        }
        if self.process_noise.is_off() {
            return Ok(());
        }
        self.process_noise.check_growth(self.a)?;
        let primal = self.kind.kernel().is_none();
        if !(primal
            && matches!(
                self.covariance,
                CovarianceKind::Diagonal | CovarianceKind::Full
            ))
        {
            return Err(no_process_noise());
        }
        if self.penalty.is_some() {
            return Err(noise_with_l1());
        }
        Ok(())
    }

    /// The configuration entries of `state` (what was learned is left), each read with its
    /// type and names mapped to their values; the values are checked by
    /// [`ModelConfig::check`]. Absent optional entries take the values they had before they
    /// existed (docs/model-format.md).
    pub fn from_state(state: &State) -> Result<ModelConfig, CwError> {
        let kind = match state.string("kind")? {
            "binary" => ModelKind::Binary,
            "regressor" => ModelKind::Regressor,
            "multiclass" => ModelKind::Multiclass {
                n_classes: state.count("n_classes")?,
                strategy: Strategy::from_name(state.string("strategy")?)?,
            },
            "kernel" => ModelKind::Kernel {
                kernel: kernel_of(state)?,
                strategy: (state.optional_string("strategy")?)
                    .map(Strategy::from_name)
                    .transpose()?,
            },
            "multiclass_kernel" => ModelKind::MulticlassKernel {
                kernel: kernel_of(state)?,
                n_classes: state.count("n_classes")?,
                strategy: Strategy::from_name(state.string("strategy")?)?,
            },
            other => {
                return Err(CwError::InvalidParameter(format!(
                    "unknown model kind {other:?}"
                )))
            }
        };
        let rule = RuleConfig {
            name: state.string("rule")?.to_string(),
            params: state.params("params")?.to_vec(),
            loss: (state.optional_string("loss")?)
                .map(Loss::from_name)
                .transpose()?,
        };
        let covariance = match kind.kernel() {
            Some(_) => CovarianceKind::Diagonal,
            None => match state.string("covariance")? {
                "lowrank" => CovarianceKind::LowRank {
                    rank: state.count("rank")?,
                },
                name => CovarianceKind::from_name(name)?,
            },
        };
        let penalty = match state.optional_string("penalty")? {
            Some(name) => Some(PenaltyConfig {
                penalty: Penalty::from_name(name)?,
                alpha: state.float("alpha")?,
                penalize_intercept: state.bool("penalize_intercept")?,
            }),
            None => None,
        };
        let process_noise = match state.entries.get("process_noise") {
            None | Some(Value::None) => ProcessNoise::Constant(0.0),
            Some(Value::Str(name)) => ProcessNoise::from_name(name)?,
            Some(_) => ProcessNoise::Constant(state.float("process_noise")?),
        };
        Ok(ModelConfig {
            kind,
            rule,
            n_features: state.count("n_features")?,
            fit_intercept: state.bool("fit_intercept")?,
            a: state.float("a")?,
            covariance,
            penalty,
            average: state.optional_count("average")?,
            process_noise,
            learned_noise: auto_flag(state, "noise_variance")?,
            learned_prior: auto_flag(state, "prior")?,
        })
    }

    /// The configuration as a state's entries, as Python's estimators write them: every kind
    /// its `kind`, `rule`, `params`, `n_features`, `fit_intercept`, `a`, `average` (and `loss`
    /// when set); the primal kinds their `covariance` (with `rank`), `penalty` (with `alpha`
    /// and `penalize_intercept`) and `process_noise`; the kernel kinds their kernel's entries;
    /// the multiclass kinds `strategy` and `n_classes`.
    pub fn to_state(&self) -> State<'static> {
        let rule = &self.rule;
        let state = State::default()
            .with("kind", self.kind.name())
            .with("rule", rule.name.as_str())
            .with("params", rule.params.clone())
            .with("n_features", self.n_features)
            .with("fit_intercept", self.fit_intercept)
            .with("a", self.a)
            .with("average", self.average);
        let mut state = match rule.loss {
            Some(loss) => state.with("loss", loss.name()),
            None => state,
        };
        let primal = self.kind.kernel().is_none();
        match &self.kind {
            ModelKind::Binary | ModelKind::Regressor => {}
            ModelKind::Multiclass {
                n_classes,
                strategy,
            }
            | ModelKind::MulticlassKernel {
                n_classes,
                strategy,
                ..
            } => {
                state.set("n_classes", *n_classes);
                state.set("strategy", strategy.name());
            }
            ModelKind::Kernel { strategy, .. } => {
                if let Some(strategy) = strategy {
                    state.set("n_classes", 2usize);
                    state.set("strategy", strategy.name());
                }
            }
        }
        if let Some(kernel) = self.kind.kernel() {
            state.set("kernel", kernel.name.as_deref());
            state.set("gamma", kernel.gamma);
            state.set("degree", i64::from(kernel.degree));
            state.set("coef0", kernel.coef0);
            state.set("budget", kernel.budget);
        } else {
            state.set("covariance", self.covariance.name());
            if let Some(rank) = self.covariance.rank() {
                state.set("rank", rank);
            }
        }
        match &self.penalty {
            Some(penalty) => {
                state.set("penalty", penalty.penalty.name());
                state.set("alpha", penalty.alpha);
                state.set("penalize_intercept", penalty.penalize_intercept);
            }
            None if primal => state.set("penalty", Value::None),
            None => {}
        }
        match self.process_noise {
            ProcessNoise::Auto => state.set("process_noise", "auto"),
            ProcessNoise::Constant(q) if primal || q != 0.0 => state.set("process_noise", q),
            ProcessNoise::Constant(_) => {}
        }
        if self.learned_noise {
            state.set("noise_variance", "auto");
        }
        if self.learned_prior {
            state.set("prior", "auto");
        }
        state
    }
}

/// Whether the optional entry `key` of `state` says "auto" (the only value it may hold).
fn auto_flag(state: &State, key: &str) -> Result<bool, CwError> {
    match state.optional_string(key)? {
        None => Ok(false),
        Some("auto") => Ok(true),
        Some(other) => Err(CwError::InvalidState(format!(
            "entry {key:?} must be \"auto\" when present, got {other:?}"
        ))),
    }
}

/// The regression rule of a regressor's configuration, if it is one and valid.
fn rule_of_regressor(config: &ModelConfig) -> Option<RegressionRule> {
    match config.kind {
        ModelKind::Regressor => config.rule.regression_rule().ok(),
        _ => None,
    }
}

/// The kernel entries of a kernel kind's state: the parameters of a built-in kernel are
/// needed; the caller's kernel reads none.
fn kernel_of(state: &State) -> Result<KernelConfig, CwError> {
    let name = state.optional_string("kernel")?;
    let defaults = KernelConfig::custom();
    let present = |key: &str| name.is_some() || state.entries.contains_key(key);
    Ok(KernelConfig {
        name: name.map(str::to_string),
        gamma: match present("gamma") {
            true => state.float("gamma")?,
            false => defaults.gamma,
        },
        degree: match present("degree") {
            true => state.count("degree")?,
            false => defaults.degree,
        },
        coef0: match present("coef0") {
            true => state.float("coef0")?,
            false => defaults.coef0,
        },
        budget: state.optional_count("budget")?,
    })
}

#[cfg(test)]
mod tests;
