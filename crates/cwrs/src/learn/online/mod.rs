//! The learning loop: one objective ([`crate::learn::objective`]) driving one or more models of a
//! covariance form ([`crate::covariance::Covariance`]). It owns what every learner shares: row
//! validation (ahead of learning on a second core for large batches), presentation order and
//! repeats, the counters, and the predictions' output shapes.

use std::ops::Range;

use crate::covariance::{Covariance, Gaussian};
use crate::data::{
    check_weights, chunk_rows, learn_validated_ahead, learn_validated_in_turn, weight_of, Matrix,
    Presentation, Row, Weights,
};
use crate::error::CwError;
use crate::learn::average::Average;
use crate::learn::drift::{ChangeDetector, ProcessNoise};
use crate::learn::noise_estimate::NoiseEstimate;
use crate::learn::objective::{LoopState, Objective, Tally};
use crate::learn::prior_estimate::PriorEstimate;
use crate::rules::{margin_probability, StepRule};

/// An online learner: `objective` drives `models` (one, or one per class).
#[derive(Clone, Debug, PartialEq)]
pub struct Online<O: Objective, M: Covariance> {
    objective: O,
    models: Vec<M>,
    n_updates: u64,
    n_mistakes: u64,
    /// Rows learned (the round a rule's context reads: docs/design.md §2.9).
    n_rounds: u64,
    /// μ_k·x of the current row, per model (work space of the several-model objectives).
    scores: Vec<f64>,
    /// The running average of the means, if predictions use it (docs/design.md §3.10).
    average: Option<Average>,
    /// With `process_noise="auto"`: the change detector on the rounds' losses, whose alarm
    /// resets every model's covariance (docs/design.md §10.2).
    change_detector: Option<ChangeDetector>,
    /// The targets' noise learned so far (docs/design.md §3.14), for an objective that
    /// estimates it; `None` for the others, and for a learner restored from a state saved
    /// before models learned it (its first learning starts from the prior).
    noise: Option<NoiseEstimate>,
    /// AROW regression's learned prior variance of the feature weights (`a="auto"`,
    /// docs/design.md §3.14), re-estimated at checkpoints counted in the rows learned.
    prior: Option<LearnedPrior>,
}

/// The learned prior and whether its evidence reads the learned noise scale κ (`r="auto"`;
/// with a fixed r, κ = 1).
#[derive(Clone, Copy, Debug, PartialEq)]
struct LearnedPrior {
    estimate: PriorEstimate,
    scaled_by_noise: bool,
}

/// Whether a variance v keeps the ratio μ·x/√v to full precision: finite, and at least 2⁻⁹⁷⁰,
/// above which the subnormal rounding of its terms stays below float64's precision.
pub(crate) fn keeps_ratio(v: f64) -> bool {
    v.is_finite() && v >= f64::MIN_POSITIVE / f64::EPSILON
}

/// Rows validated per step when a second core validates ahead of learning.
pub(crate) const VALIDATION_CHUNK: usize = 4096;

/// Whether a batch is learned while a second core validates its rows ahead: when there is a
/// second core, the rows come in order, and the batch is large next to the model, whose copy
/// (kept to undo a late error) then costs little beside the validation it hides.
pub(crate) fn validate_ahead(x: &Matrix, presentation: &Presentation, model_values: usize) -> bool {
    presentation.order.is_none()
        && x.n_rows() > 2 * VALIDATION_CHUNK
        && x.n_entries() >= 4 * model_values
        && crate::available_cores() >= 2
}

impl<O: Objective> Online<O, Gaussian> {
    /// Replaces every model's moments by ones computed outside learning (a merge,
    /// docs/design.md §9): model k's mean is the k-th `dim` values of `means`, its covariance
    /// values the k-th of as many equal parts of `covariances` (see [`Gaussian::set_moments`]).
    pub(crate) fn set_moments(
        &mut self,
        means: &[f64],
        covariances: &[f64],
    ) -> Result<(), CwError> {
        let n = self.models.len();
        let dim = self.models[0].shape().dim();
        if n.checked_mul(dim) != Some(means.len()) || !covariances.len().is_multiple_of(n) {
            return Err(CwError::InvalidInput(format!(
                "moments of {n} models do not divide into models: {} mean values, {} \
                 covariance values",
                means.len(),
                covariances.len()
            )));
        }
        let per_model = covariances.len() / n;
        let parts = means.chunks_exact(dim.max(1));
        let parts = parts.zip((0..n).map(|k| &covariances[k * per_model..(k + 1) * per_model]));
        for (model, (mean, covariance)) in self.models.iter_mut().zip(parts) {
            model.set_moments(mean, covariance)?;
        }
        Ok(())
    }

    /// Sets each model's lazy L1 state (H, the H each coordinate was last caught up to), in
    /// model order; refused for models without a penalty.
    pub(crate) fn set_l1_states(&mut self, states: &[(f64, Vec<f64>)]) -> Result<(), CwError> {
        if states.len() != self.models.len() {
            return Err(CwError::InvalidInput(
                "one L1 state per class is needed".into(),
            ));
        }
        for (model, (total, last)) in self.models.iter_mut().zip(states) {
            let l1 = model.l1_mut().ok_or_else(|| {
                CwError::InvalidInput("L1 state given for a model without a penalty".into())
            })?;
            l1.set_state(*total, last)?;
        }
        Ok(())
    }
}

impl<O: Objective, M: Covariance> Online<O, M> {
    /// A learner over the given models (at least one, all over the same features), with zero
    /// counters.
    pub fn with_models(objective: O, models: Vec<M>) -> Self {
        let scores = vec![0.0; models.len()];
        let noise = objective.noise_prior();
        Online {
            objective,
            models,
            n_updates: 0,
            n_mistakes: 0,
            n_rounds: 0,
            scores,
            average: None,
            change_detector: None,
            noise,
            prior: None,
        }
    }

    /// The learner learning the prior variance of its feature weights from the stream, from
    /// `estimate` (docs/design.md §3.14); with `scaled_by_noise`, the evidence reads the
    /// learned noise scale κ (`r="auto"`). Refused unless the learner keeps a residual noise
    /// estimate (AROW regression), without averaging or a change detector. A model whose form
    /// cannot change its prior exactly ([`Covariance::reweigh_prior`]) keeps it; the
    /// configuration refuses those forms ([`crate::model::config::ModelConfig::check`]).
    pub fn with_learned_prior(
        mut self,
        estimate: PriorEstimate,
        scaled_by_noise: bool,
    ) -> Result<Self, CwError> {
        let can_change = self.objective.noise_prior() == Some(NoiseEstimate::RESIDUAL_PRIOR)
            && self.average.is_none()
            && self.change_detector.is_none();
        if !can_change {
            return Err(CwError::InvalidParameter(
                "a learned prior (a=\"auto\") is AROW regression's, with a full or diagonal \
                 covariance and no L1 penalty, process noise or averaging"
                    .into(),
            ));
        }
        self.prior = Some(LearnedPrior {
            estimate,
            scaled_by_noise,
        });
        Ok(self)
    }

    /// The learned prior variance of the feature weights and the rows it was learned over,
    /// if the learner learns it.
    pub fn prior_estimate(&self) -> Option<PriorEstimate> {
        self.prior.map(|prior| prior.estimate)
    }

    /// The targets' noise learned so far, if the objective estimates it (second-order
    /// classification rules, AROW regression): the prior if nothing was learned.
    pub fn noise_estimate(&self) -> Option<NoiseEstimate> {
        (self.objective.noise_prior()).map(|prior| self.noise.unwrap_or(prior))
    }

    /// The noise estimate the learner's state holds: [`Online::noise_estimate`], unless the
    /// learner was restored from a state without one and has not learned since.
    pub fn stored_noise_estimate(&self) -> Option<NoiseEstimate> {
        self.noise
            .filter(|_| self.objective.noise_prior().is_some())
    }

    /// The learner as restored from a state saved before models learned the noise estimate.
    pub(crate) fn without_noise_estimate(mut self) -> Self {
        self.noise = None;
        self
    }

    /// The learner with a restored or merged noise estimate, refused if it is not one this
    /// objective could have learned.
    pub fn with_noise_estimate(mut self, noise: NoiseEstimate) -> Result<Self, CwError> {
        self.set_noise_estimate(noise)?;
        Ok(self)
    }

    /// [`Online::with_noise_estimate`] in place.
    pub(crate) fn set_noise_estimate(&mut self, noise: NoiseEstimate) -> Result<(), CwError> {
        let Some(prior) = self.objective.noise_prior() else {
            return Err(CwError::InvalidState(
                "this learner keeps no noise estimate".into(),
            ));
        };
        if !noise.is_valid(prior == NoiseEstimate::LABEL_PRIOR) {
            return Err(CwError::InvalidState(format!(
                "the noise estimate {noise:?} is not valid"
            )));
        }
        self.noise = Some(noise);
        Ok(())
    }

    /// Predicts with the running average of the means from row `start` on (≥ 1), `rows` rows
    /// already learned with the total weight of those averaged (`None`: one per row), and the
    /// sums `sums` of a saved average (`None`: a fresh one).
    pub fn with_average(
        mut self,
        start: u64,
        rows: (u64, Option<f64>),
        sums: Option<&[f64]>,
    ) -> Result<Self, CwError> {
        check_average_rule(self.objective.rule())?;
        self.average = Some(Average::new(start, rows, sums, &self.models)?);
        Ok(self)
    }

    /// The averaging state, if predictions use the average.
    pub fn average(&self) -> Option<&Average> {
        self.average.as_ref()
    }

    /// What predictions subtract from model `k`'s μ·x on `row` (0 without averaging).
    #[inline]
    pub(crate) fn shift(&self, k: usize, row: Row) -> f64 {
        match &self.average {
            Some(average) => average.shift(k, &self.models[k], row),
            None => 0.0,
        }
    }

    /// Model `k`'s (μ·x, xᵀΣx) as predictions use them: with averaging, the averaged mean's
    /// score and the current covariance.
    pub(crate) fn predicted_moments(&self, k: usize, row: Row) -> (f64, f64) {
        let (score, variance) = self.models[k].moments(row);
        (score - self.shift(k, row), variance)
    }

    /// Model `k`'s mean `mean` (laid out as the model's) as predictions use it: averaged if
    /// the learner averages.
    pub(crate) fn predicted_mean(&self, k: usize, mean: Vec<f64>) -> Vec<f64> {
        match &self.average {
            Some(average) => average.averaged(k, mean),
            None => mean,
        }
    }

    /// Sets the process noise of every model (docs/design.md §10): a constant q, or "auto"
    /// (a change detector whose alarm resets the covariances to a·I). Constant 0 changes
    /// nothing. A form without process noise refuses.
    pub fn with_process_noise(mut self, noise: ProcessNoise, a: f64) -> Result<Self, CwError> {
        noise.check_growth(a)?;
        let q = match noise {
            ProcessNoise::Constant(q) => q,
            ProcessNoise::Auto => 0.0,
        };
        if !noise.is_off() {
            self.models
                .iter_mut()
                .try_for_each(|model| model.set_process_noise(q))?;
        }
        self.change_detector = (noise == ProcessNoise::Auto).then(|| ChangeDetector::new(a));
        Ok(self)
    }

    /// Every model's lazy process noise (see [`Covariance::lazy_noise`]), concatenated: the
    /// clocks (two values each) and the stored variances; `None` when no model keeps one.
    pub fn lazy_noise(&self) -> Option<(Vec<f64>, Vec<f64>)> {
        let each = self.models.iter().map(M::lazy_noise);
        let each = each.collect::<Option<Vec<_>>>()?;
        let (mut clocks, mut stored) = (Vec::new(), Vec::new());
        for (clock, values) in each {
            clocks.extend(clock);
            stored.extend(values);
        }
        Some((clocks, stored))
    }

    /// Restores [`Online::lazy_noise`] (after the process noise is set).
    pub fn with_lazy_noise(mut self, clocks: &[f64], stored: &[f64]) -> Result<Self, CwError> {
        let n = self.models.len();
        if clocks.len() != 2 * n || !stored.len().is_multiple_of(n.max(1)) {
            return Err(CwError::InvalidState(format!(
                "entries \"noise_clock\" and \"noise_variances\" must hold 2 values and the \
                 variances per model ({n})"
            )));
        }
        let per_model = stored.len() / n.max(1);
        for (k, (model, clock)) in self
            .models
            .iter_mut()
            .zip(clocks.chunks_exact(2))
            .enumerate()
        {
            let stored = &stored[k * per_model..(k + 1) * per_model];
            model.restore_lazy_noise([clock[0], clock[1]], stored)?;
        }
        Ok(self)
    }

    /// The change detector of `process_noise="auto"`, if any.
    pub fn change_detector(&self) -> Option<&ChangeDetector> {
        self.change_detector.as_ref()
    }

    /// Restores the change detector's statistics (`process_noise="auto"` only).
    pub fn with_change_statistics(mut self, values: &[f64]) -> Result<Self, CwError> {
        let detector = self.change_detector.take().ok_or_else(|| {
            CwError::InvalidState("change statistics for a model without a detector".into())
        })?;
        self.change_detector = Some(detector.with_statistics(values)?);
        Ok(self)
    }

    /// Sets the counters (when restoring a state).
    pub fn with_counters(mut self, n_updates: u64, n_mistakes: u64) -> Self {
        (self.n_updates, self.n_mistakes) = (n_updates, n_mistakes);
        self
    }

    /// Sets the rows learned (when restoring a state).
    pub fn with_rounds(mut self, n_rounds: u64) -> Self {
        self.n_rounds = n_rounds;
        self
    }

    /// Rows learned.
    pub fn n_rounds(&self) -> u64 {
        self.n_rounds
    }

    /// The objective: binary, regression or multiclass, with its rule.
    pub fn objective(&self) -> &O {
        &self.objective
    }

    /// The rule the learner steps with.
    pub fn rule(&self) -> O::Rule {
        self.objective.rule()
    }

    /// The models, in class order.
    pub fn models(&self) -> &[M] {
        &self.models
    }

    /// Changes each model (with its index) by `f`, which may fail.
    pub(crate) fn try_map_models(
        mut self,
        mut f: impl FnMut(usize, M) -> Result<M, CwError>,
    ) -> Result<Self, CwError> {
        self.models = std::mem::take(&mut self.models)
            .into_iter()
            .enumerate()
            .map(|(k, model)| f(k, model))
            .collect::<Result<_, _>>()?;
        Ok(self)
    }

    /// The number of the user's features (the bias excluded).
    pub fn n_features(&self) -> usize {
        self.models[0].n_features()
    }

    /// Rounds whose update changed the model.
    pub fn n_updates(&self) -> u64 {
        self.n_updates
    }

    /// Rounds counted as mistakes by the objective (never for regression).
    pub fn n_mistakes(&self) -> u64 {
        self.n_mistakes
    }

    /// Every model's pending rank-one terms (see [`Covariance::pending_terms`]): how many each
    /// model keeps, then the bases and the terms of those that keep some, concatenated; `None`
    /// when no model keeps any.
    pub fn pending_terms(&self) -> Option<(Vec<u64>, Vec<f64>, Vec<f64>)> {
        let each: Vec<_> = self.models.iter().map(M::pending_terms).collect();
        if each.iter().all(Option::is_none) {
            return None;
        }
        let (mut counts, mut bases, mut terms) = (Vec::new(), Vec::new(), Vec::new());
        for pending in each {
            match pending {
                Some((base, pending)) => {
                    counts.push((pending.len() / base.len().isqrt().max(1)) as u64);
                    bases.extend(base);
                    terms.extend_from_slice(pending);
                }
                None => counts.push(0),
            }
        }
        Some((counts, bases, terms))
    }

    /// Restores [`Online::pending_terms`] (before the lazy noise).
    pub fn with_pending_terms(
        mut self,
        counts: &[u64],
        bases: &[f64],
        terms: &[f64],
    ) -> Result<Self, CwError> {
        let n = self.models.len();
        let keeping = counts.iter().filter(|&&c| c > 0).count();
        let base_len = bases.len() / keeping.max(1);
        let dim = base_len.isqrt();
        let total = counts.iter().try_fold(0usize, |sum, &c| {
            usize::try_from(c).ok()?.checked_mul(dim)?.checked_add(sum)
        });
        if counts.len() != n || bases.len() != keeping * dim * dim || total != Some(terms.len()) {
            return Err(CwError::InvalidState(format!(
                "entries \"pending_counts\", \"pending_bases\" and \"pending_terms\" must hold \
                 a count per model ({n}), then a base and that many terms per model that keeps \
                 some"
            )));
        }
        let (mut bases, mut terms) = (bases.chunks_exact(base_len.max(1)), terms);
        for (model, &count) in self.models.iter_mut().zip(counts) {
            if count > 0 {
                let (own, rest) = terms.split_at(count as usize * dim);
                model.restore_pending_terms(bases.next().unwrap_or_default(), own)?;
                terms = rest;
            }
        }
        Ok(self)
    }

    /// Applies every pending covariance term (see [`Covariance::fold`]).
    pub fn fold(&mut self) {
        self.models.iter_mut().for_each(M::fold);
    }

    /// How many numbers the models hold (what a copy costs).
    pub fn n_values(&self) -> usize {
        self.models.iter().map(M::n_values).sum()
    }

    /// Checks targets and that the models can learn.
    fn check_targets(&self, targets: &[O::Target]) -> Result<(), CwError> {
        self.models.iter().try_for_each(M::check_learnable)?;
        self.objective.check_targets(self.models.len(), targets)
    }

    /// Learns one row with its target; returns whether the model changed.
    pub fn learn(&mut self, row: Row, target: O::Target) -> Result<bool, CwError> {
        self.learn_weighted(row, target, 1.0)
    }

    /// Learns one row of importance weight `h` (finite, ≥ 0; 0 changes nothing) with its
    /// target; returns whether the model changed.
    pub fn learn_weighted(&mut self, row: Row, target: O::Target, h: f64) -> Result<bool, CwError> {
        row.validate(self.n_features())?;
        self.check_targets(&[target])?;
        check_weights(&[h], 1)?;
        if h == 0.0 {
            return Ok(false);
        }
        let one = std::iter::once((0, row));
        let weight = [h];
        let weights = (h != 1.0).then_some(&weight[..]);
        let updates =
            self.learn_undoably(|online| Ok(online.learn_valid(one, (&[target], weights))))?;
        Ok(updates > 0)
    }

    /// Learns `rows` (index into `targets`, row) in order; everything is valid. Returns the
    /// number of updates. The counters saturate: a restored state may hold any count.
    fn learn_valid<'a>(
        &mut self,
        rows: impl Iterator<Item = (usize, Row<'a>)>,
        targets: (&[O::Target], Weights),
    ) -> u64 {
        if self.prior.is_some() {
            return self.learn_to_checkpoints(rows, targets);
        }
        match self.change_detector.take() {
            Some(detector) => self.learn_watched(rows, targets, detector),
            None => self.learn_counted(rows, targets),
        }
    }

    /// [`Online::learn_valid`] with a learned prior: the rows in runs that end at the
    /// checkpoints (counted in rows of positive weight, so that any split of the rows into
    /// calls gives the same model), the prior re-estimated at each.
    fn learn_to_checkpoints<'a>(
        &mut self,
        rows: impl Iterator<Item = (usize, Row<'a>)>,
        targets: (&[O::Target], Weights),
    ) -> u64 {
        let mut rows = rows.peekable();
        let mut updates = 0;
        while let (Some(prior), Some(_)) = (self.prior, rows.peek()) {
            let due = prior.estimate.rows_to_checkpoint(self.n_features());
            let mut counted = 0;
            let run = std::iter::from_fn(|| {
                if counted == due {
                    return None;
                }
                let (i, row) = rows.next()?;
                counted += u64::from(weight_of(targets.1, i) > 0.0);
                Some((i, row))
            });
            updates += self.learn_counted(run, targets);
            let mut estimate = prior.estimate;
            estimate.rows += counted;
            if let (true, Some(noise)) = (counted == due, &mut self.noise) {
                // One model: AROW regression.
                let model = &mut self.models[0];
                let scaled = prior.scaled_by_noise;
                estimate.maximize_evidence(model.n_features(), noise, scaled, |delta, commit| {
                    model.reweigh_prior(delta, commit)
                });
            }
            self.prior = Some(LearnedPrior { estimate, ..prior });
        }
        updates
    }

    /// [`Online::learn_valid`] without a change detector.
    fn learn_counted<'a>(
        &mut self,
        rows: impl Iterator<Item = (usize, Row<'a>)>,
        targets: (&[O::Target], Weights),
    ) -> u64 {
        let before = Tally {
            mistakes: self.n_mistakes,
            updates: self.n_updates,
            rounds: self.n_rounds,
        };
        let Tally {
            mistakes,
            updates,
            rounds,
        } = {
            // An objective without an estimate never reads or writes it.
            let mut unused = NoiseEstimate::LABEL_PRIOR;
            let noise = match self.objective.noise_prior() {
                Some(prior) => self.noise.get_or_insert(prior),
                None => &mut unused,
            };
            let work = (&mut self.models[..], &mut self.scores[..], noise);
            match &mut self.average {
                None => self.objective.learn(work, rows, targets, before),
                Some(average) => {
                    learn_averaged(average, &self.objective, work, rows, targets, before)
                }
            }
        };
        self.n_mistakes = self.n_mistakes.saturating_add(mistakes);
        self.n_updates = self.n_updates.saturating_add(updates);
        // Counted only for the rules that read them, which alone keep them in their state.
        if self.objective.rule().needs_context() {
            self.n_rounds = self.n_rounds.saturating_add(rounds);
        }
        updates
    }

    /// [`Online::learn_valid`] row by row, each row's loss (before it is learned) fed to the
    /// change detector, whose alarm resets the covariances before the row that raised it is
    /// learned (that row is the first evidence of the new stream); for the regressor, its
    /// innovation then sets the round's process noise.
    fn learn_watched<'a>(
        &mut self,
        rows: impl Iterator<Item = (usize, Row<'a>)>,
        targets: (&[O::Target], Weights),
        mut detector: ChangeDetector,
    ) -> u64 {
        let mut updates = 0;
        for (i, row) in rows {
            let watched = self.objective.round_loss(&self.models, row, targets.0[i]);
            let alarm = detector.observe(watched.loss);
            if alarm {
                for model in &mut self.models {
                    // Cannot fail: `with_process_noise` checked that the form resets.
                    let _ = model.reset_covariance(detector.a);
                }
            }
            if let Some(mut innovation) = watched.innovation {
                if alarm {
                    innovation.variance = detector.a * innovation.squared_norm;
                }
                // The regressor's one model: Σ grows by the estimated process noise before
                // the row is learned (docs/design.md §10.5).
                let q = detector.matching.process_noise(innovation, detector.a);
                if q > 0.0 {
                    detector.noise_since_reset += q;
                    for model in &mut self.models {
                        // Cannot fail, as the reset.
                        let _ = model.grow_covariance(q);
                    }
                }
            }
            updates += self.learn_counted(std::iter::once((i, row)), targets);
        }
        self.change_detector = Some(detector);
        updates
    }

    /// Learns the rows of `x` with `targets` as `presentation` says. An error leaves the model
    /// untouched: rows are validated before any is learned, or, in a large batch, on a second
    /// core ahead of the learner, with the model restored if a late row is bad. The result is
    /// exactly that of calling [`Online::learn`] row by row.
    pub fn partial_fit(
        &mut self,
        x: &Matrix,
        targets: &[O::Target],
        presentation: Presentation,
    ) -> Result<(), CwError> {
        self.learn_batch(x, targets, presentation, true)
    }

    /// [`Online::partial_fit`]; without `undoable`, for a caller that discards the learner on
    /// an error (docs/design.md §3.5.1), no copy is kept to undo a late one, which then leaves
    /// the learner partly trained; and rows in stored order that no second core validates ahead
    /// are validated chunk by chunk, each just before it is learned.
    pub(crate) fn learn_batch(
        &mut self,
        x: &Matrix,
        targets: &[O::Target],
        presentation: Presentation,
        undoable: bool,
    ) -> Result<(), CwError> {
        let n_features = self.n_features();
        if validate_ahead(x, &presentation, self.n_values()) {
            self.check_batch(x, targets, &presentation)?;
            // A late error must leave the model as it was: keep a copy to restore.
            let before = undoable.then(|| self.clone());
            let stop = presentation.stop;
            let learned = learn_validated_ahead(x, n_features, VALIDATION_CHUNK, stop, |rows| {
                let rows = presentation.sequence_of(rows).map(|i| (i, x.row(i)));
                self.learn_valid(rows, (targets, presentation.weights));
            })
            .and_then(|()| self.take_failure());
            if let (Err(_), Some(before)) = (&learned, before) {
                *self = before;
            }
            return learned;
        }
        if !undoable && presentation.order.is_none() {
            self.check_batch(x, targets, &presentation)?;
            let (all, stop) = (0..x.n_rows(), presentation.stop);
            learn_validated_in_turn(x, all, n_features, chunk_rows(x), stop, |rows| {
                let rows = presentation.sequence_of(rows).map(|i| (i, x.row(i)));
                self.learn_valid(rows, (targets, presentation.weights));
                Ok(())
            })?;
            return self.take_failure();
        }
        presentation.check(x, n_features, targets.len())?;
        self.check_targets(targets)?;
        self.learn_undoably(|online| {
            let rows = presentation.sequence(x.n_rows()).map(|i| (i, x.row(i)));
            Ok(online.learn_valid(rows, (targets, presentation.weights)))
        })?;
        Ok(())
    }

    /// The error that stopped a model's learning, if any (cleared).
    fn take_failure(&mut self) -> Result<(), CwError> {
        match self.models.iter_mut().find_map(M::take_failure) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Checks a batch as [`Online::partial_fit`] does, except the contents of the rows, which
    /// the caller validates ([`Matrix::validate_rows`]) before [`Online::learn_checked`] (or
    /// while it learns them). Bad rows are reported before bad targets, as when the rows are
    /// validated first.
    pub(crate) fn check_batch(
        &self,
        x: &Matrix,
        targets: &[O::Target],
        presentation: &Presentation,
    ) -> Result<(), CwError> {
        presentation.check_shapes(x, self.n_features(), targets.len())?;
        self.check_targets(targets)
            .map_err(|error| x.refusal(self.n_features(), error))
    }

    /// Learns a batch that [`Online::check_batch`] accepted and whose rows are valid: the
    /// presentation's `order`, or without one rows `rows` of `x` (a shard of a sharded fit,
    /// docs/design.md §9.4). The result is that of [`Online::partial_fit`] on the same rows.
    pub(crate) fn learn_checked(
        &mut self,
        x: &Matrix,
        targets: &[O::Target],
        presentation: Presentation,
        rows: Range<usize>,
    ) -> Result<(), CwError> {
        let row = |i| (i, x.row(i));
        let targets = (targets, presentation.weights);
        self.learn_undoably(|online| match presentation.order {
            Some(_) => Ok(online.learn_valid(presentation.sequence(x.n_rows()).map(row), targets)),
            None => Ok(online.learn_valid(presentation.sequence_of(rows).map(row), targets)),
        })
        .map(drop)
    }

    /// The models, to be changed in place (a sharded fit's merge, docs/design.md §9.4).
    pub(crate) fn models_mut(&mut self) -> &mut [M] {
        &mut self.models
    }

    /// Sets the counters (a merge).
    pub(crate) fn set_counters(&mut self, n_updates: u64, n_mistakes: u64, n_rounds: u64) {
        (self.n_updates, self.n_mistakes, self.n_rounds) = (n_updates, n_mistakes, n_rounds);
    }

    /// Runs `learn`; if it fails, or a model's learning failed midway (a custom kernel's
    /// error), restores the learner as it was and returns that error (`learn`'s first).
    fn learn_undoably<R>(
        &mut self,
        learn: impl FnOnce(&mut Self) -> Result<R, CwError>,
    ) -> Result<R, CwError> {
        let before = self.models.iter().any(M::can_fail).then(|| self.clone());
        let learned = learn(self);
        let failure = self.take_failure();
        let learned = learned.and_then(|learned| failure.map(|()| learned));
        if let (Err(_), Some(before)) = (&learned, before) {
            *self = before;
        }
        learned
    }

    /// Validates `x` and checks that `out` holds `width` values per row.
    fn check_output(&self, x: &Matrix, out: &[f64], width: usize) -> Result<(), CwError> {
        x.validate(self.n_features())?;
        if out.len() == x.n_rows() * width {
            Ok(())
        } else {
            Err(CwError::InvalidInput(format!(
                "output holds {} values for {} rows of {width}",
                out.len(),
                x.n_rows()
            )))
        }
    }

    /// Fills `out` (`width` values per row of `x`) by calling `f` with the models and each row.
    pub(crate) fn fill_rows(
        &self,
        x: &Matrix,
        out: &mut [f64],
        width: usize,
        mut f: impl FnMut(&[M], Row, &mut [f64]),
    ) -> Result<(), CwError> {
        self.check_output(x, out, width)?;
        for (i, o) in out.chunks_exact_mut(width.max(1)).enumerate() {
            f(&self.models, x.row(i), o);
        }
        Ok(())
    }

    /// Fills `out` (rows × models, row-major) with `value(μ_k·x, x_iᵀΣ_k x)` for every row and
    /// model, the variance computed only when `with_variance`.
    pub(crate) fn fill_per_model(
        &self,
        x: &Matrix,
        out: &mut [f64],
        with_variance: bool,
        value: impl Fn(f64, f64) -> f64,
    ) -> Result<(), CwError> {
        self.fill_each(x, out, with_variance, |_, _, score, v| value(score, v))
    }

    /// [`Online::fill_per_model`] with the variances, for a `value` of the ratio μ_k·x/√(xᵀΣ_k x)
    /// (the probabilities): where xᵀΣ_k x over- or underflows, from the moments of the row at its
    /// unit scale ([`Online::unit_scale_moments`]), so the value does not depend on a positive
    /// scale of the row.
    pub(crate) fn fill_per_model_ratio(
        &self,
        x: &Matrix,
        out: &mut [f64],
        value: impl Fn(f64, f64) -> f64,
    ) -> Result<(), CwError> {
        self.fill_each(x, out, true, |k, i, score, v| {
            if keeps_ratio(v) {
                value(score, v)
            } else {
                let (score, v) = self.unit_scale_moments(k, x.row(i), (score, v));
                value(score, v)
            }
        })
    }

    /// Fills `out` (rows × models) with the predictive Φ(μ_k·x/√(xᵀΣ_k x + s²)) of the label
    /// noise `s2`; where xᵀΣ_k x overflows, s² is nothing beside it and the value is the
    /// posterior one, taken at the row's unit scale as [`Online::fill_per_model_ratio`] does.
    pub(crate) fn fill_per_model_predictive(
        &self,
        x: &Matrix,
        out: &mut [f64],
        s2: f64,
    ) -> Result<(), CwError> {
        self.fill_each(x, out, true, |k, i, score, v| {
            if v.is_finite() {
                margin_probability(score, v + s2)
            } else {
                let (score, v) = self.unit_scale_moments(k, x.row(i), (score, v));
                margin_probability(score, v)
            }
        })
    }

    /// Fills `out` (rows × models) with `value(k, i, μ_k·x, x_iᵀΣ_k x)`, the scores as
    /// predictions use them (averaged if the learner averages).
    fn fill_each(
        &self,
        x: &Matrix,
        out: &mut [f64],
        with_variance: bool,
        value: impl Fn(usize, usize, f64, f64) -> f64,
    ) -> Result<(), CwError> {
        let width = self.models.len();
        self.check_output(x, out, width)?;
        self.predict_each(x, with_variance, |k, i, score, v| {
            out[i * width + k] = value(k, i, score, v);
        })
    }

    /// Calls `each(k, i, μ_k·x_i, x_iᵀΣ_k x_i)` for every model k and row i of a validated `x`,
    /// the scores as predictions use them (averaged if the learner averages), the variance
    /// NaN unless `with_variance`.
    fn predict_each(
        &self,
        x: &Matrix,
        with_variance: bool,
        mut each: impl FnMut(usize, usize, f64, f64),
    ) -> Result<(), CwError> {
        for (k, model) in self.models.iter().enumerate() {
            match &self.average {
                None => model.predict_rows(x, with_variance, |i, score, v| each(k, i, score, v))?,
                Some(average) => model.predict_rows(x, with_variance, |i, score, v| {
                    each(k, i, score - average.shift(k, model, x.row(i)), v);
                })?,
            }
        }
        Ok(())
    }

    /// Model `k`'s `moments` (μ·x as predictions use it, xᵀΣx) of `row` at the row's unit scale
    /// s (the row and its bias feature times the power of two of [`Shape::at_unit_scale`]):
    /// (s·μ·x, s²·xᵀΣx), exact wherever the unscaled ones are representable, so their ratio is
    /// the row's; unchanged for a form whose variance is not quadratic in x (the kernels).
    ///
    /// [`Shape::at_unit_scale`]: crate::data::Shape::at_unit_scale
    pub(crate) fn unit_scale_moments(&self, k: usize, row: Row, moments: (f64, f64)) -> (f64, f64) {
        match self.models[k].unit_scale_variance(row) {
            Some((s, v)) => (s * moments.0, v),
            None => moments,
        }
    }

    /// μ_k·x for every row and model (rows × models); with averaging, the averaged means'.
    pub fn decision_function(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.fill_per_model(x, out, false, |score, _| score)
    }

    /// xᵀΣ_k x for every row and model (rows × models).
    pub fn variances(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.fill_per_model(x, out, true, |_, v| v)
    }

    /// μ·x into `means` ([`Online::decision_function`] bit for bit) and x_iᵀΣx_j for every
    /// pair of rows of `x` into `covariances` (n × n, row-major) under the learner's one model,
    /// the diagonal [`Online::variances`] bit for bit (the same path computes both); each other
    /// pair once by [`Covariance::cross_variances`], mirrored. Refused for several models and
    /// for a form without a cross variance.
    pub fn score_distribution(
        &self,
        x: &Matrix,
        means: &mut [f64],
        covariances: &mut [f64],
    ) -> Result<(), CwError> {
        let model = self.one_model()?;
        let no_cross_variance = || {
            CwError::InvalidInput(
                "score covariances need a second-order model with covariance \"diag\", \"full\" \
                 or \"lowrank\""
                    .into(),
            )
        };
        // An empty sparse row is valid at any width: it asks the form whether it has one.
        let empty = Row::Sparse32(&[], &[]);
        model
            .cross_variance(empty, empty)
            .ok_or_else(no_cross_variance)?;
        let n = x.n_rows();
        if n.checked_mul(n) != Some(covariances.len()) {
            return Err(CwError::InvalidInput(format!(
                "output holds {} values for the {n} × {n} covariances of {n} rows",
                covariances.len()
            )));
        }
        self.check_output(x, means, 1)?;
        self.predict_each(x, true, |_, i, score, v| {
            means[i] = score;
            covariances[i * n + i] = v;
        })?;
        let rows: Vec<Row> = (0..n).map(|i| x.row(i)).collect();
        model
            .cross_variances(&rows, covariances)
            .ok_or_else(no_cross_variance)
    }

    /// μ·x and xᵀΣx of every row under the learner's one model, in one pass over `x`:
    /// [`Online::decision_function`] and [`Online::variances`] bit for bit.
    pub fn score_moments(
        &self,
        x: &Matrix,
        means: &mut [f64],
        variances: &mut [f64],
    ) -> Result<(), CwError> {
        self.one_model()?;
        self.check_output(x, means, 1)?;
        if variances.len() != means.len() {
            return Err(CwError::InvalidInput(format!(
                "{} variances for {} rows",
                variances.len(),
                means.len()
            )));
        }
        self.predict_each(x, true, |_, i, score, v| {
            means[i] = score;
            variances[i] = v;
        })
    }

    /// The learner's model, if it has one (not one per class).
    fn one_model(&self) -> Result<&M, CwError> {
        match &self.models[..] {
            [model] => Ok(model),
            _ => Err(CwError::InvalidInput(
                "score covariances are for a learner of one model".into(),
            )),
        }
    }
}

/// [`Online::learn_valid`] with averaging: row by row, to see each row's changes of the means.
/// Apart, so that the path without averaging is compiled as before.
#[inline(never)]
fn learn_averaged<'a, O: Objective, M: Covariance>(
    average: &mut Average,
    objective: &O,
    (models, scores, noise): LoopState<M>,
    rows: impl Iterator<Item = (usize, Row<'a>)>,
    targets: (&[O::Target], Weights),
    before: Tally,
) -> Tally {
    rows.fold(Tally::default(), |tally, (i, row)| {
        let h = weight_of(targets.1, i);
        let one = average.learn_row(models, (row, h), |models| {
            let row = std::iter::once((i, row));
            let work = (models, &mut *scores, &mut *noise);
            objective.learn(work, row, targets, before.then(tally))
        });
        tally.then(one)
    })
}

/// Refuses averaging with a rule that rescales every weight on an update (ALMA and the ROMMAs,
/// the rules that read ‖μ‖²), which the O(nnz) sums cannot follow.
pub(crate) fn check_average_rule(rule: impl StepRule) -> Result<(), CwError> {
    if rule.needs_mean_norm() {
        return Err(CwError::InvalidParameter(format!(
            "average cannot be combined with {rule:?}, which rescales every weight on an update"
        )));
    }
    Ok(())
}

mod progressive;
#[cfg(test)]
mod tests;

pub use progressive::Progressive;
