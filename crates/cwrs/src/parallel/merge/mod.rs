//! Merging linear models trained from a common start (docs/design.md §9): the sum of the
//! evidence each adds to the precision Λ = Σ⁻¹ and to η = Λμ ("information"), a weighted
//! average of the Gaussians ("precision"), or a weighted average of the means ("average").
//!
//! The merge reads each model's counters, mean and covariance values ([`Snapshot`]: a full
//! covariance's pending terms folded in a copy), computes the merged mean and covariance per
//! class, and builds the result directly: a fresh model of the first model's configuration
//! given the merged moments, counters and L1 state by typed setters, which check what a loaded
//! model must satisfy (no saved-state round trip: no state is built, copied or parsed). The
//! inputs are never changed.

use crate::covariance::{CovarianceKind, Gaussian};
use crate::error::{zeros, CwError};
use crate::learn::drift::ProcessNoise;
use crate::learn::noise_estimate::NoiseEstimate;
use crate::learn::objective::Objective;
use crate::learn::online::Online;
use crate::linalg::{axpy, cholesky, dot_in_order};
use crate::model::config::{ModelConfig, ModelKind};
use crate::model::state::State;
use crate::model::{AnyLearner, Model};

mod lowrank;

/// How models are combined (docs/design.md §9.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Λ = Λ₀ + Σₖ(Λₖ − Λ₀), η = η₀ + Σₖ(ηₖ − η₀), μ = Λ⁻¹η.
    Information,
    /// Λ = Σₖ bₖΛₖ, μ = Λ⁻¹ Σₖ bₖΛₖμₖ, with Σₖ bₖ = 1.
    Precision,
    /// μ = Σₖ bₖμₖ (and Σ = Σₖ bₖΣₖ), bₖ by updates: iterative parameter mixing.
    Average,
    /// Information for AROW (classifier or regressor), whose updates add a fixed amount of
    /// evidence; average for every other rule (docs/design.md §9.2).
    Auto,
}

impl Method {
    /// The method of a name: `"auto"`, `"information"`, `"precision"` or `"average"`.
    pub fn from_name(name: &str) -> Result<Method, CwError> {
        match name {
            "information" => Ok(Method::Information),
            "precision" => Ok(Method::Precision),
            "average" => Ok(Method::Average),
            "auto" => Ok(Method::Auto),
            _ => Err(CwError::InvalidParameter(format!(
                "method must be \"auto\", \"information\", \"precision\" or \"average\", got \
                 {name:?}"
            ))),
        }
    }

    /// The method's name as the `method` argument spells it, the inverse of [`Method::from_name`].
    pub fn name(&self) -> &'static str {
        match self {
            Method::Information => "information",
            Method::Precision => "precision",
            Method::Average => "average",
            Method::Auto => "auto",
        }
    }
}

/// What a merge reads of one model, and gives the merged one: its counters and, per class, the
/// (thresholded) mean and the covariance values as the state stores them.
struct Moments {
    updates: u64,
    mistakes: Option<u64>,
    /// Rows learned, for the rules that read the round (docs/design.md §2.9).
    rounds: Option<u64>,
    means: Vec<f64>,
    covariances: Vec<f64>,
    /// H of the lazy L1 state, per class (empty without a penalty).
    l1_totals: Vec<f64>,
    /// The targets' noise learned (docs/design.md §3.14), for the learners that learn it.
    noise: Option<NoiseEstimate>,
}

impl Moments {
    /// The means and covariance values, every class.
    fn values(&self) -> (&[f64], &[f64]) {
        (&self.means, &self.covariances)
    }

    fn of(estimator: &Model) -> Result<Moments, CwError> {
        let kernel = || CwError::InvalidParameter("kernel models cannot be merged".into());
        let means = estimator.mean().ok_or_else(kernel)?;
        // The full form's Σ with its pending terms folded into a copy of Σ₀ alone (the same bits
        // as the folded state), so that the caller's model stays as it is.
        let covariances = estimator.covariance().ok_or_else(kernel)?;
        Ok(Moments {
            updates: estimator.n_updates(),
            mistakes: estimator.n_mistakes(),
            rounds: estimator.n_rounds(),
            means,
            covariances,
            l1_totals: l1_totals(estimator).ok_or_else(kernel)?,
            noise: estimator.noise_estimate(),
        })
    }

    /// What [`Moments::of`] reads of a fresh model of `first`'s configuration (μ = 0, Σ = a·I,
    /// nothing learned), without building one for the forms whose prior is one value per
    /// coordinate (a model as wide as the inputs, built only to be read once).
    fn prior(config: &ModelConfig, first: &Moments, layout: Layout) -> Result<Moments, CwError> {
        let a = match layout.kind {
            CovarianceKind::Identity | CovarianceKind::Diagonal => config.a,
            _ => return Moments::of(&Model::from_config(config.clone(), None)?),
        };
        let len = layout.n_classes * layout.dim;
        Ok(Moments {
            updates: 0,
            mistakes: first.mistakes.map(|_| 0),
            rounds: first.rounds.map(|_| 0),
            means: zeros(Some(len), || "the prior's means".into())?,
            covariances: match layout.kind {
                CovarianceKind::Diagonal => vec![a; len],
                _ => Vec::new(),
            },
            l1_totals: vec![0.0; first.l1_totals.len()],
            noise: first.noise.map(|_| match config.kind {
                ModelKind::Regressor => NoiseEstimate::RESIDUAL_PRIOR,
                _ => NoiseEstimate::LABEL_PRIOR,
            }),
        })
    }
}

/// What a merge reads of one model: its configuration, covariance form (`None`: the dual
/// form), classes and `Moments` (`None` for a kernel model). Taken from each model in turn
/// (under its lock, by `calls::merge`), it copies the mean and covariance once, not the model.
pub struct Snapshot {
    config: ModelConfig,
    kind: Option<CovarianceKind>,
    n_classes: Option<usize>,
    moments: Option<Moments>,
    class_counts: Vec<f64>,
}

impl Snapshot {
    /// What a merge reads of `model`, copied out of it.
    pub fn of(model: &Model) -> Snapshot {
        Snapshot {
            config: model.model_config().clone(),
            kind: model.covariance_kind(),
            n_classes: model.n_classes(),
            moments: Moments::of(model).ok(),
            class_counts: model.class_counts().to_vec(),
        }
    }
}

/// The running class counts of `class_weight="balanced"` of the merged model: the base's plus
/// what each model counted beyond it (rows are evidence, as the moments), none if no model
/// counts.
fn merged_class_counts(models: &[Snapshot], base: Option<&Snapshot>) -> Vec<f64> {
    let base = base.map_or(&[][..], |b| &b.class_counts[..]);
    let len = models
        .iter()
        .map(|m| m.class_counts.len())
        .max()
        .unwrap_or(0);
    let len = len.max(base.len());
    let at = |counts: &[f64], k: usize| counts.get(k).copied().unwrap_or(0.0);
    (0..len)
        .map(|k| {
            let beyond = models
                .iter()
                .map(|m| (at(&m.class_counts, k) - at(base, k)).max(0.0));
            at(base, k) + beyond.sum::<f64>()
        })
        .collect()
}

/// H of the lazy L1 state, per class (empty without a penalty); `None` for a kernel model.
fn l1_totals(estimator: &Model) -> Option<Vec<f64>> {
    let totals = match estimator.model() {
        AnyLearner::Binary(l) => l.l1().map(|l1| vec![l1.total()]),
        AnyLearner::Regressor(l) => l.l1().map(|l1| vec![l1.total()]),
        AnyLearner::Multiclass(l) => l
            .l1_states()
            .map(|states| states.iter().map(|(total, _)| *total).collect()),
        AnyLearner::Kernel(_) | AnyLearner::MulticlassKernel(_) => return None,
    };
    Some(totals.unwrap_or_default())
}

/// The layout shared by the models being merged.
#[derive(Clone, Copy)]
struct Layout {
    kind: CovarianceKind,
    n_classes: usize,
    /// Coordinates per class: the features, then the bias.
    dim: usize,
}

impl Layout {
    fn covariance_len(&self) -> usize {
        match self.kind {
            CovarianceKind::Identity => 0,
            CovarianceKind::Diagonal => self.dim,
            CovarianceKind::Full => self.dim * self.dim,
            CovarianceKind::LowRank { rank } => (1 + 2 * rank) * self.dim,
            CovarianceKind::AdaGrad { .. } | CovarianceKind::Ftrl { .. } => {
                unreachable!("models of these forms are refused before the layout is read")
            }
        }
    }
}

/// The merge of `models` (see [`Method`]) trained from `base`, or from the prior (μ = 0,
/// Σ = a·I) when `base` is `None`. `weights` are the bₖ of "precision" and "average" (by
/// default the rounds each model updated on beyond `base`); they are normalised to sum to 1.
/// Models that cannot be merged (another configuration, kernel models, an empty list) are
/// refused with [`CwError::InvalidParameter`]; the inputs are never changed.
pub fn merge(
    models: &[&Model],
    method: Method,
    base: Option<&Model>,
    weights: Option<&[f64]>,
) -> Result<Model, CwError> {
    let models: Vec<_> = models.iter().map(|m| Snapshot::of(m)).collect();
    merge_snapshots(&models, method, base.map(Snapshot::of).as_ref(), weights)
}

/// [`merge`] of the models' snapshots.
pub fn merge_snapshots(
    models: &[Snapshot],
    method: Method,
    base: Option<&Snapshot>,
    weights: Option<&[f64]>,
) -> Result<Model, CwError> {
    let (first, merged) = merged_moments(models, method, base, weights)?;
    let mut model = merged_model(&first.config, &merged)?;
    model.set_class_counts(merged_class_counts(models, base))?;
    Ok(model)
}

/// What [`merge_snapshots`] merges into: the counters, the means and covariance values of
/// every class and the L1 totals of the merged model, and the first snapshot (whose
/// configuration it has).
fn merged_moments<'a>(
    models: &'a [Snapshot],
    method: Method,
    base: Option<&Snapshot>,
    weights: Option<&[f64]>,
) -> Result<(&'a Snapshot, Moments), CwError> {
    let first = models
        .first()
        .ok_or_else(|| CwError::InvalidParameter("merge needs at least one model".into()))?;
    let kind = mergeable(first.kind, &first.config)?;
    for (k, model) in models.iter().enumerate().skip(1) {
        check_same(&first.config, &model.config, &format!("model {k}"))?;
    }
    if let Some(base) = base {
        check_same(&first.config, &base.config, "base")?;
    }
    let method = resolve(method, kind, &first.config)?;
    fn moments(s: &Snapshot) -> Result<&Moments, CwError> {
        let kernel = || CwError::InvalidParameter("kernel models cannot be merged".into());
        s.moments.as_ref().ok_or_else(kernel)
    }
    let inputs = models.iter().map(moments).collect::<Result<Vec<_>, _>>()?;
    let n_classes = first.n_classes.unwrap_or(1);
    let layout = Layout {
        kind,
        n_classes,
        dim: inputs[0].means.len() / n_classes,
    };
    let prior;
    let base = match base {
        Some(base) => moments(base)?,
        None => {
            prior = Moments::prior(&first.config, inputs[0], layout)?;
            &prior
        }
    };
    let gains = inputs
        .iter()
        .enumerate()
        .map(|(k, m)| {
            m.updates.checked_sub(base.updates).ok_or_else(|| {
                CwError::InvalidParameter(format!(
                    "model {k} has fewer updates ({}) than base ({}): it was not trained from \
                     base",
                    m.updates, base.updates
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let weights = normalised(weights, &gains)?;
    let mut means = zeros(Some(base.means.len()), || "the merged means".into())?;
    let mut covariances = zeros(Some(base.covariances.len()), || {
        "the merged covariances".into()
    })?;
    let len = layout.covariance_len();
    for class in 0..n_classes {
        merge_class(
            layout,
            method,
            (base, &inputs, &weights),
            class,
            &mut means[class * layout.dim..(class + 1) * layout.dim],
            &mut covariances[class * len..(class + 1) * len],
        )?;
    }
    Ok((first, merged(base, &inputs, layout, means, covariances)))
}

/// The merged model: a fresh model of `config` given the merged moments, counters and L1
/// state by typed setters, which check what a merge can get wrong (finite values, the forms'
/// invariants that are cheap to check; see [`crate::covariance::PrimalForm::set_moments`]).
fn merged_model(config: &ModelConfig, merged: &Moments) -> Result<Model, CwError> {
    let mut model = Model::from_config(config.clone(), None)?;
    let installed = match model.model_mut() {
        AnyLearner::Binary(l) => install(l, merged),
        AnyLearner::Regressor(l) => install(l, merged),
        AnyLearner::Multiclass(l) => install(l, merged),
        AnyLearner::Kernel(_) | AnyLearner::MulticlassKernel(_) => Err(CwError::InvalidParameter(
            "kernel models cannot be merged".into(),
        )),
    };
    installed.map_err(|err| match err {
        CwError::InvalidInput(message) | CwError::InvalidState(message) => {
            CwError::InvalidInput(format!("the merged model is not valid: {message}"))
        }
        err => err,
    })?;
    Ok(model)
}

/// Gives `learner` (fresh) the merged moments, L1 state and counters.
fn install<O: Objective>(
    learner: &mut Online<O, Gaussian>,
    merged: &Moments,
) -> Result<(), CwError> {
    learner.set_moments(&merged.means, &merged.covariances)?;
    if !merged.l1_totals.is_empty() {
        // Every coordinate caught up to H: the means merged are the thresholded ones.
        let dim = merged.means.len() / merged.l1_totals.len();
        let states = merged.l1_totals.iter().map(|&h| (h, vec![h; dim]));
        learner.set_l1_states(&states.collect::<Vec<_>>())?;
    }
    let (mistakes, rounds) = (merged.mistakes.unwrap_or(0), merged.rounds.unwrap_or(0));
    learner.set_counters(merged.updates, mistakes, rounds);
    if let Some(noise) = merged.noise {
        learner.set_noise_estimate(noise)?;
    }
    Ok(())
}

/// The covariance form of `model`, or the refusal of a model that cannot be merged (kernel
/// models, the forms and options without a merge yet).
pub(crate) fn check_mergeable(model: &Model) -> Result<CovarianceKind, CwError> {
    mergeable(model.covariance_kind(), model.model_config())
}

/// `check_mergeable` of the models a configuration builds, before any is built (what
/// `n_jobs` > 1 needs, checked with the other hyper-parameters).
pub fn check_config_mergeable(config: &State) -> Result<(), CwError> {
    let config = ModelConfig::from_state(config)?;
    let kind = config.kind.kernel().is_none().then_some(config.covariance);
    mergeable(kind, &config).map(|_| ())
}

/// [`check_mergeable`] of a model of covariance form `kind` built from `config`.
fn mergeable(
    kind: Option<CovarianceKind>,
    config: &ModelConfig,
) -> Result<CovarianceKind, CwError> {
    let kind = kind.ok_or_else(|| {
        CwError::InvalidParameter("kernel models cannot be merged (they keep no weights)".into())
    })?;
    if kind.is_rule_state() {
        return Err(CwError::InvalidParameter(format!(
            "{:?} models cannot be merged yet (merge identity, diag, full or lowrank models)",
            kind.name()
        )));
    }
    // An averaged model's running sums and a change detector's statistics have no merge yet.
    if config.average.is_some() {
        return Err(CwError::InvalidParameter(
            "averaged models (average=True or an int) cannot be merged yet".into(),
        ));
    }
    if config.process_noise == ProcessNoise::Auto {
        return Err(CwError::InvalidParameter(
            "models with process_noise=\"auto\" cannot be merged yet (a constant q can)".into(),
        ));
    }
    // Models learned apart move their priors apart: the information beyond the base's would
    // mix the data's with each model's change of prior.
    if config.learned_prior {
        return Err(CwError::InvalidParameter(
            "models with a learned prior (a=\"auto\") cannot be merged yet, nor fitted with \
             n_jobs > 1"
                .into(),
        ));
    }
    Ok(kind)
}

/// Whether the model's covariance grows by a constant process noise q > 0 every round.
pub(crate) fn has_process_noise(config: &ModelConfig) -> bool {
    matches!(config.process_noise, ProcessNoise::Constant(q) if q > 0.0)
}

/// The method "auto" stands for, or a refusal of one the models cannot take.
pub(crate) fn resolve(
    method: Method,
    kind: CovarianceKind,
    config: &ModelConfig,
) -> Result<Method, CwError> {
    match (method, kind) {
        (Method::Auto, CovarianceKind::Identity) => Ok(Method::Average),
        (Method::Auto, _) if config.rule.name == "AROW" && !has_process_noise(config) => {
            Ok(Method::Information)
        }
        // The other second-order rules' evidence depends on the state that learned it
        // (docs/design.md §9.2): summed over shards it overcounts. Process noise adds to Σ,
        // not to Λ, so the shards' precision increments are no longer sums of evidence either:
        // summed, they can make the precision indefinite.
        (Method::Auto, _) => Ok(Method::Average),
        (Method::Information | Method::Precision, CovarianceKind::Identity) => {
            Err(CwError::InvalidParameter(format!(
                "method={:?} combines covariances, but the first-order rule {} keeps none \
                 (Σ = I); use method=\"average\" (or \"auto\")",
                method.name(),
                config.rule.name,
            )))
        }
        (Method::Information, _) if has_process_noise(config) => Err(CwError::InvalidParameter(
            "method=\"information\" sums the shards' evidence, which a model with process \
                 noise does not keep (its covariance also grows each round); use method=\"auto\", \
                 \"average\" or \"precision\""
                .into(),
        )),
        (method, _) => Ok(method),
    }
}

/// Refuses `other` unless its configuration is `first`'s, naming the first entry that differs.
fn check_same(first: &ModelConfig, other: &ModelConfig, what: &str) -> Result<(), CwError> {
    if first == other {
        return Ok(());
    }
    let (first, other) = (&first.to_state(), &other.to_state());
    // The most telling differences first.
    let telling = ["kind", "rule", "params", "covariance"].map(String::from);
    let keys = telling
        .iter()
        .chain(first.entries.keys())
        .chain(other.entries.keys());
    for key in keys {
        let (a, b) = (first.entries.get(key), other.entries.get(key));
        if a != b {
            let name = match key.as_str() {
                "params" => "the rule's hyper-parameters (params)",
                "kind" => "the kind of model",
                "n_features" => "the width (n_features)",
                "n_classes" => "the number of classes",
                "covariance" => "the covariance form",
                key => key,
            };
            return Err(CwError::InvalidParameter(format!(
                "{what} cannot be merged with model 0: they differ in {name} ({} vs {})",
                describe(a),
                describe(b)
            )));
        }
    }
    Ok(())
}

fn describe(value: Option<&crate::model::state::Value>) -> String {
    use crate::model::state::Value;
    match value {
        None | Some(Value::None) => "None".into(),
        Some(Value::Str(s)) => format!("{s:?}"),
        Some(Value::Int(i)) => i.to_string(),
        Some(Value::Float(x)) => x.to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Params(p)) => {
            let p = p.iter().map(|(k, v)| format!("{k}={v}"));
            format!("{{{}}}", p.collect::<Vec<_>>().join(", "))
        }
        Some(_) => "an array".into(),
    }
}

/// bₖ summing to 1: `weights` if given, else by `gains` (equal when every gain is 0).
pub(crate) fn normalised(weights: Option<&[f64]>, gains: &[u64]) -> Result<Vec<f64>, CwError> {
    let raw: Vec<f64> = match weights {
        Some(w) => {
            if w.len() != gains.len() || w.iter().any(|b| !(b.is_finite() && *b >= 0.0)) {
                return Err(CwError::InvalidParameter(format!(
                    "weights must be {} non-negative finite numbers, one per model",
                    gains.len()
                )));
            }
            w.to_vec()
        }
        None => gains.iter().map(|&g| g as f64).collect(),
    };
    let total: f64 = raw.iter().sum();
    if total > 0.0 {
        Ok(raw.iter().map(|b| b / total).collect())
    } else if weights.is_some() {
        Err(CwError::InvalidParameter(
            "weights must not all be 0".into(),
        ))
    } else {
        Ok(vec![1.0 / raw.len() as f64; raw.len()])
    }
}

/// Merges class `class` of `base`, the inputs and their weights: writes its mean into `mean`
/// and its covariance values into `covariance`.
fn merge_class(
    layout: Layout,
    method: Method,
    (base, inputs, weights): (&Moments, &[&Moments], &[f64]),
    class: usize,
    mean: &mut [f64],
    covariance: &mut [f64],
) -> Result<(), CwError> {
    let dim = layout.dim;
    let len = layout.covariance_len();
    if let CovarianceKind::LowRank { rank } = layout.kind {
        let inputs: Vec<_> = inputs.iter().map(|m| m.values()).collect();
        let base = base.values();
        let sigma = lowrank::merge_class(method, rank, dim, class, base, &inputs, weights, mean)?;
        covariance.copy_from_slice(&sigma);
        return Ok(());
    }
    if layout.kind == CovarianceKind::Diagonal && method != Method::Average {
        let range = class * dim..(class + 1) * dim;
        return merge_diagonal(method, base, inputs, weights, range, mean, covariance);
    }
    if method == Method::Average {
        for (m, &b) in inputs.iter().zip(weights) {
            axpy(b, part(&m.means, class, dim), mean);
            axpy(b, part(&m.covariances, class, len), covariance);
        }
        return Ok(());
    }
    // (Λ, η) of each model, dense.
    let natural = |m: &Moments| {
        natural(
            dim,
            part(&m.means, class, dim),
            part(&m.covariances, class, len),
        )
    };
    let (mut lambda, mut eta) = match method {
        Method::Information => natural(base)?,
        _ => (vec![0.0; len], vec![0.0; dim]),
    };
    let start = (method == Method::Information).then(|| (lambda.clone(), eta.clone()));
    for (m, &b) in inputs.iter().zip(weights) {
        let (l, e) = natural(m)?;
        match &start {
            // The evidence model k added to the common start.
            Some((l0, e0)) => {
                axpy(1.0, &l, &mut lambda);
                axpy(-1.0, l0, &mut lambda);
                axpy(1.0, &e, &mut eta);
                axpy(-1.0, e0, &mut eta);
            }
            None => {
                axpy(b, &l, &mut lambda);
                axpy(b, &e, &mut eta);
            }
        }
    }
    covariance.copy_from_slice(&moments(dim, &lambda, &eta, mean)?);
    Ok(())
}

/// The information or precision merge of one class of diagonal models (coordinates `range`
/// of each) into `mean` and `sigma`: λ_j = 1/σ²_j, η_j = λ_jμ_j. λ gathers in `sigma` and η in
/// `mean`, one input after the other: for each coordinate the operations and their order are
/// those of a merge coordinate by coordinate (and of the sharded fit's in-place merge), in loops
/// over the coordinates that the compiler vectorises.
fn merge_diagonal(
    method: Method,
    base: &Moments,
    inputs: &[&Moments],
    weights: &[f64],
    range: std::ops::Range<usize>,
    mean: &mut [f64],
    sigma: &mut [f64],
) -> Result<(), CwError> {
    let (base_mean, base_sigma) = (&base.means[range.clone()], &base.covariances[range.clone()]);
    match method {
        Method::Information => {
            for (((l, e), &s0), &m0) in sigma
                .iter_mut()
                .zip(&mut *mean)
                .zip(base_sigma)
                .zip(base_mean)
            {
                *l = 1.0 / s0;
                *e = *l * m0;
            }
        }
        _ => {
            sigma.fill(0.0);
            mean.fill(0.0);
        }
    }
    for (m, &b) in inputs.iter().zip(weights) {
        let (mu, var) = (&m.means[range.clone()], &m.covariances[range.clone()]);
        let coordinates = sigma.iter_mut().zip(&mut *mean).zip(var.iter().zip(mu));
        if method == Method::Information {
            for (((lambda, eta), (&v, &x)), (&s0, &m0)) in
                coordinates.zip(base_sigma.iter().zip(base_mean))
            {
                let l0 = 1.0 / s0;
                let l = 1.0 / v;
                *lambda += l - l0;
                *eta += l * x - l0 * m0;
            }
        } else {
            for ((lambda, eta), (&v, &x)) in coordinates {
                let l = 1.0 / v;
                *lambda += b * l;
                *eta += b * (l * x);
            }
        }
    }
    if !sigma
        .iter()
        .all(|&lambda| lambda.is_finite() && lambda > 0.0)
    {
        return Err(not_definite());
    }
    for (eta, lambda) in mean.iter_mut().zip(sigma) {
        *eta /= *lambda;
        *lambda = 1.0 / *lambda;
    }
    Ok(())
}

pub(crate) fn not_definite() -> CwError {
    CwError::InvalidInput(
        "the merged precision is not positive definite: the models were not trained from the \
         base given"
            .into(),
    )
}

/// Class `class`'s `len` values of per-class values.
fn part(values: &[f64], class: usize, len: usize) -> &[f64] {
    &values[class * len..(class + 1) * len]
}

/// The natural parameters (Λ = Σ⁻¹, η = Λμ) of one class of a full-covariance model.
fn natural(dim: usize, mu: &[f64], sigma: &[f64]) -> Result<(Vec<f64>, Vec<f64>), CwError> {
    let factor = cholesky(sigma, dim)
        .ok_or_else(|| CwError::InvalidInput("a covariance is not positive definite".into()))?;
    let lambda = inverse(&factor, dim);
    let eta = symmetric_times(&lambda, mu);
    Ok((lambda, eta))
}

/// Σ = Λ⁻¹ and μ = Λ⁻¹η (written into `mean`) of a full-covariance class, refusing a Λ that is
/// not positive definite.
fn moments(dim: usize, lambda: &[f64], eta: &[f64], mean: &mut [f64]) -> Result<Vec<f64>, CwError> {
    let factor = cholesky(lambda, dim).ok_or_else(not_definite)?;
    let sigma = inverse(&factor, dim);
    mean.copy_from_slice(&symmetric_times(&sigma, eta));
    Ok(sigma)
}

/// A⁻¹ = L⁻ᵀL⁻¹ from the Cholesky factor L of A, exactly symmetric. Both steps run along rows
/// (contiguous, vectorised), each sum in the order of its definition: k ascending from 0.
fn inverse(l: &[f64], dim: usize) -> Vec<f64> {
    // What `Iterator::sum` starts from, so that each sum is the one its definition gives.
    let zero: f64 = std::iter::empty::<f64>().sum();
    // M = L⁻¹, lower triangular, row by row: M_i,col = −(Σ_{col ≤ k < i} L_ik M_k,col) / L_ii.
    let mut m = vec![0.0; dim * dim];
    let mut sums = vec![zero; dim];
    for i in 0..dim {
        let (done, rest) = m.split_at_mut(i * dim);
        sums[..i].fill(zero);
        for k in 0..i {
            let (lik, row_k) = (l[i * dim + k], &done[k * dim..k * dim + k + 1]);
            sums[..=k]
                .iter_mut()
                .zip(row_k)
                .for_each(|(s, mk)| *s += lik * mk);
        }
        let lii = l[i * dim + i];
        let row_i = &mut rest[..dim];
        row_i[..i]
            .iter_mut()
            .zip(&sums)
            .for_each(|(mi, s)| *mi = -s / lii);
        row_i[i] = 1.0 / lii;
    }
    // (MᵀM)_ij = Σ_{k ≥ max(i, j)} M_ki M_kj: row k of M adds to the rows i ≤ k, in k's order.
    let mut inv = vec![zero; dim * dim];
    for k in 0..dim {
        let row_k = &m[k * dim..k * dim + k + 1];
        for (i, &mki) in row_k.iter().enumerate() {
            let row_i = &mut inv[i * dim..i * dim + i + 1];
            row_i
                .iter_mut()
                .zip(row_k)
                .for_each(|(s, mkj)| *s += mki * mkj);
        }
    }
    for i in 0..dim {
        for j in 0..i {
            inv[j * dim + i] = inv[i * dim + j];
        }
    }
    inv
}

/// A·x for a symmetric A (row-major).
fn symmetric_times(a: &[f64], x: &[f64]) -> Vec<f64> {
    a.chunks_exact(x.len().max(1))
        .map(|row| dot_in_order(row, x))
        .collect()
}

/// The merged model's counters (summed over what each model added to `base`), the merged
/// means and covariances, and each class's L1 total H, summed as the counters are.
fn merged(
    base: &Moments,
    inputs: &[&Moments],
    layout: Layout,
    means: Vec<f64>,
    covariances: Vec<f64>,
) -> Moments {
    let added = |counter: fn(&Moments) -> u64| -> u64 {
        let start = counter(base);
        inputs.iter().fold(start, |total, m| {
            total.saturating_add(counter(m).saturating_sub(start))
        })
    };
    // Without a penalty, no totals.
    let l1_totals = (0..layout.n_classes)
        .filter(|_| !base.l1_totals.is_empty())
        .map(|class| {
            let start = base.l1_totals[class];
            let gains = inputs.iter().map(|m| (m.l1_totals[class] - start).max(0.0));
            start + gains.sum::<f64>()
        })
        .collect();
    Moments {
        updates: added(|m| m.updates),
        mistakes: inputs[0]
            .mistakes
            .map(|_| added(|m| m.mistakes.unwrap_or(0))),
        rounds: inputs[0].rounds.map(|_| added(|m| m.rounds.unwrap_or(0))),
        means,
        covariances,
        l1_totals,
        noise: base
            .noise
            .map(|base| NoiseEstimate::merged(base, inputs.iter().filter_map(|m| m.noise))),
    }
}

#[cfg(test)]
mod tests;
