//! The diagonal covariance, with the optional sparse L1 penalty (docs/design.md §5): only this
//! form supports it.

use std::borrow::Cow;

use super::{
    averaged_len_without_l1, impossible, noise_with_l1, prefetch_each, with_new_features,
    wrong_length, Covariance, CovarianceKind, Observation, Parts, PrimalForm, MEAN_STEP_LIMIT,
    VARIANCE_FLOOR,
};
use crate::data::{Features, Row, Shape, SparseIndex};
use crate::error::CwError;
use crate::learn::prior_estimate::{feature_moments, reweighed_diagonal, FeatureMoments};
use crate::learn::sparse_l1::{check_form, L1};
use crate::linalg::huge_pages::vec_on_huge_pages;

/// One coordinate of a diagonal Gaussian. Mean and variance sit side by side (16 bytes,
/// aligned), so a feature of a sparse row costs one cache line: the random gather into a table
/// of 2^20 coordinates is what bounds the diagonal learners.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct Coordinate {
    /// μ_j, the weight.
    pub mean: f64,
    /// Σ_j, the weight's variance (> 0).
    pub variance: f64,
}

/// Diagonal covariance: the diagonal of the precision update (CW-Stdev eq. 15; docs/design.md
/// §2.5), Σ_j ← Σ_j / (1 + c·Σ_j·x_j²). Work per example is O(nnz).
#[derive(Debug)]
pub struct Diagonal {
    shape: Shape,
    /// The stored moments; with an L1 penalty some coordinates of the mean still owe their
    /// pending threshold (see [`PrimalForm::effective_mean`]).
    coordinates: Vec<Coordinate>,
    l1: Option<L1>,
    /// Process noise, if any (never with `l1`).
    noise: Option<NoiseClock>,
    /// Whether an update keeps the diagonal of the covariance update (with process noise,
    /// constant or "auto": the diagonal Kalman filter) rather than of the precision update
    /// (docs/design.md §10.3).
    marginal: bool,
    /// An upper bound on every variance Σ_j (with the process noise of the rounds so far): the
    /// overflow gate's Σ_max (docs/design.md §3.6). Derived from the variances, not compared.
    variance_bound: f64,
    /// v = xᵀΣx of the row last observed or prepared (work space of the overflow gate).
    observed_variance: f64,
    /// Mean steps the overflow gate skipped, not yet taken (see [`Covariance::take_skipped`]).
    skipped: u64,
}

/// A copy's coordinates on huge pages too (a sharded fit learns on copies).
impl Clone for Diagonal {
    fn clone(&self) -> Self {
        let len = self.coordinates.len();
        Diagonal {
            shape: self.shape,
            coordinates: vec_on_huge_pages(len, |c| c.extend_from_slice(&self.coordinates)),
            l1: self.l1.clone(),
            noise: self.noise.clone(),
            marginal: self.marginal,
            variance_bound: self.variance_bound,
            observed_variance: self.observed_variance,
            skipped: self.skipped,
        }
    }
}

impl PartialEq for Diagonal {
    fn eq(&self, other: &Self) -> bool {
        (
            self.shape,
            &self.coordinates,
            &self.l1,
            &self.noise,
            self.marginal,
        ) == (
            other.shape,
            &other.coordinates,
            &other.l1,
            &other.noise,
            other.marginal,
        )
    }
}

/// Process noise q·I every round, applied lazily (docs/design.md §10.1): Σ_j changes otherwise
/// only in rounds where x_j ≠ 0, gaining q per round in between, so the eager Σ_j at round t is
/// Σ_j(s) + q·(t − s), s its last update. The form stores σ̃_j = Σ_j(s) − q·s in place of the
/// variance and reads Σ_j = σ̃_j + q·t: one add per read and one subtract per write, no
/// per-coordinate clock (a separate array of rounds cost a second cache miss per feature).
/// Rounding: q·t is exact to 2⁻⁵³ relative, so the error is below 2⁻⁵³·q·t; the clock is
/// folded into the variances every [`rebase_period`] rounds to keep it small.
/// The noise "auto" estimates (docs/design.md §10.5) is added to the same offset as `grown`.
#[derive(Clone, Debug, PartialEq)]
struct NoiseClock {
    q: f64,
    /// Rounds begun since the clock started (or was last folded).
    round: u64,
    /// Noise added by [`Covariance::grow_covariance`] since then.
    grown: f64,
}

impl NoiseClock {
    fn new(q: f64) -> Self {
        NoiseClock {
            q,
            round: 0,
            grown: 0.0,
        }
    }

    /// q·t plus the noise grown: what a stored σ̃_j lacks to be Σ_j.
    #[inline]
    fn offset(&self) -> f64 {
        self.q * self.round as f64 + self.grown
    }
}

/// Rounds between two folds of the noise clock: at least the dimension, so that a fold's O(d)
/// costs O(1) per round, and at least 2¹⁶ (the relative error of a read then stays below
/// 2¹⁶·2⁻⁵³ ≈ 7·10⁻¹² of q for d ≤ 2¹⁶).
fn rebase_period(dim: usize) -> u64 {
    (dim as u64).max(1 << 16)
}

impl Diagonal {
    pub(crate) fn coordinates(&self) -> &[Coordinate] {
        &self.coordinates
    }

    /// The stored moments, to be changed in place (a sharded fit's merge, docs/design.md §9.4).
    pub(crate) fn coordinates_mut(&mut self) -> &mut [Coordinate] {
        &mut self.coordinates
    }

    /// Adds the noise clock's q·t to every stored variance and restarts it (they are then
    /// the plain Σ_j).
    fn fold_clock(&mut self) {
        if let Some(noise) = &mut self.noise {
            let offset = noise.offset();
            (noise.round, noise.grown) = (0, 0.0);
            self.coordinates
                .iter_mut()
                .for_each(|c| c.variance = noisy_variance(c.variance, offset));
            self.variance_bound = self.largest_variance();
        }
    }

    /// Learning path: starts a round of process noise (if any), folding the clock when it has
    /// run for [`rebase_period`] rounds.
    #[inline]
    fn begin_round(&mut self) {
        let period = rebase_period(self.coordinates.len());
        if self
            .noise
            .as_ref()
            .is_some_and(|noise| noise.round >= period)
        {
            self.fold_clock();
        }
        if let Some(noise) = &mut self.noise {
            noise.round += 1;
            // Every variance grows by q this round.
            self.variance_bound += noise.q;
        }
    }

    /// Σ_j, with the process noise of the rounds so far.
    #[inline]
    fn variance_of(&self, j: usize) -> f64 {
        let stored = self.coordinates[j].variance;
        match &self.noise {
            Some(noise) => noisy_variance(stored, noise.offset()),
            None => stored,
        }
    }

    /// Learning path: applies the pending L1 thresholds of the row's coordinates before they
    /// are read and moved.
    #[inline]
    fn catch_up(&mut self, x: &Features) {
        if let Some(l1) = &mut self.l1 {
            let coordinates = &mut self.coordinates;
            x.for_each(|j, xj| {
                if xj != 0.0 {
                    let c = &mut coordinates[j];
                    l1.catch_up(j, &mut c.mean, c.variance);
                }
            });
        }
    }

    /// Applies every coordinate's pending L1 threshold.
    fn catch_up_all(&mut self) {
        if let Some(l1) = &mut self.l1 {
            for (j, c) in self.coordinates.iter_mut().enumerate() {
                l1.catch_up(j, &mut c.mean, c.variance);
            }
        }
    }

    /// μ·x with the pending L1 thresholds applied (without a penalty, the stored mean).
    #[inline]
    fn effective_score(&self, x: &Features) -> f64 {
        let coordinates = &self.coordinates;
        let mut s = 0.0;
        match &self.l1 {
            Some(l1) => x.for_each(|j, xj| {
                let c = &coordinates[j];
                s += xj * l1.effective(j, c.mean, c.variance);
            }),
            None => return x.sum_over(coordinates, |c, xj| c.mean * xj),
        }
        s
    }

    #[inline]
    fn variance(&self, x: &Features) -> f64 {
        match &self.noise {
            Some(_) => {
                let mut v = 0.0;
                x.for_each(|j, xj| v += self.variance_of(j) * xj * xj);
                v
            }
            None => x.sum_over(&self.coordinates, |c, xj| c.variance * xj * xj),
        }
    }

    /// The largest stored variance (O(d)), after the variances changed other than by a
    /// round's shrinking update.
    fn largest_variance(&self) -> f64 {
        self.coordinates
            .iter()
            .fold(VARIANCE_FLOOR, |m, c| m.max(c.variance))
    }

    /// Whether μ + step·Σx overflows for the row `x` last observed or prepared: checked
    /// coordinate by coordinate only when |step|·√(4·Σ_max·max(v, 2⁻¹⁰²²)), a bound on every
    /// |step·(Σx)_j| with room for rounding (docs/design.md §3.6), could reach it.
    #[inline]
    fn mean_step_overflows(&self, x: &Features, step: f64) -> bool {
        let v = self.observed_variance.max(f64::MIN_POSITIVE);
        if step.abs() * (4.0 * self.variance_bound * v).sqrt() < MEAN_STEP_LIMIT {
            return false;
        }
        let mut overflows = false;
        x.for_each(|j, xj| {
            let c = &self.coordinates[j];
            overflows |= !(c.mean + step * (self.variance_of(j) * xj)).is_finite();
        });
        overflows
    }
}

impl PrimalForm for Diagonal {
    const KIND: CovarianceKind = CovarianceKind::Diagonal;

    fn size(_kind: CovarianceKind, dim: usize) -> Option<usize> {
        dim.checked_mul(2)
    }

    fn new(_kind: CovarianceKind, shape: Shape, a: f64) -> Self {
        let coordinate = Coordinate {
            mean: 0.0,
            variance: a,
        };
        Diagonal {
            shape,
            coordinates: vec_on_huge_pages(shape.dim(), |c| c.resize(shape.dim(), coordinate)),
            l1: None,
            noise: None,
            marginal: false,
            variance_bound: a.max(VARIANCE_FLOOR),
            observed_variance: 0.0,
            skipped: 0,
        }
    }

    /// Variances must be positive (learning floors them at [`VARIANCE_FLOOR`]).
    fn from_finite_parts(parts: Parts) -> Result<Self, CwError> {
        let (shape, mean, variances) = (parts.shape, parts.mean, parts.covariance);
        let dim = shape.dim();
        check_variances(dim, variances)?;
        let pairs = mean.iter().zip(variances);
        let coordinates = vec_on_huge_pages(dim, |c| {
            c.extend(pairs.map(|(&mean, &variance)| Coordinate { mean, variance }))
        });
        let mut model = Diagonal {
            shape,
            coordinates,
            l1: None,
            noise: None,
            marginal: false,
            variance_bound: 0.0,
            observed_variance: 0.0,
            skipped: 0,
        };
        model.variance_bound = model.largest_variance();
        Ok(model)
    }

    /// The checks of [`PrimalForm::from_parts`], all O(d): an average of positive variances
    /// can still round to 0 (variances near the smallest float, a tiny weight).
    fn set_finite_moments(&mut self, mean: &[f64], variances: &[f64]) -> Result<(), CwError> {
        check_variances(self.coordinates.len(), variances)?;
        for (c, (&mean, &variance)) in self.coordinates.iter_mut().zip(mean.iter().zip(variances)) {
            *c = Coordinate { mean, variance };
        }
        // The variances are the plain Σ_j: a clock restarts at 0 (as a restored model's).
        if let Some(noise) = &mut self.noise {
            (noise.round, noise.grown) = (0, 0.0);
        }
        self.variance_bound = self.largest_variance();
        (self.observed_variance, self.skipped) = (0.0, 0);
        Ok(())
    }

    fn shape(&self) -> Shape {
        self.shape
    }

    fn mean(&self) -> Cow<'_, [f64]> {
        self.coordinates.iter().map(|c| c.mean).collect()
    }

    fn effective_mean(&self) -> Vec<f64> {
        match &self.l1 {
            Some(l1) => self
                .coordinates
                .iter()
                .enumerate()
                .map(|(j, c)| l1.effective(j, c.mean, c.variance))
                .collect(),
            None => self.mean().into_owned(),
        }
    }

    fn covariance(&self) -> Cow<'_, [f64]> {
        (0..self.coordinates.len())
            .map(|j| self.variance_of(j))
            .collect()
    }

    /// The variances, a new feature's a.
    fn widened_covariance(&self, new: usize, a: f64) -> Vec<f64> {
        with_new_features(&self.covariance(), self.shape, new, a)
    }

    fn dense_covariance(&self) -> Option<Vec<f64>> {
        let dim = self.coordinates.len();
        let mut sigma = vec![0.0; dim * dim];
        for j in 0..dim {
            sigma[j * dim + j] = self.variance_of(j);
        }
        Some(sigma)
    }

    fn with_l1(mut self, l1: L1) -> Result<Self, CwError> {
        if self.noise.is_some() {
            return Err(noise_with_l1());
        }
        check_form(l1.penalty(), Self::KIND)?;
        self.l1 = Some(l1);
        Ok(self)
    }

    fn l1(&self) -> Option<&L1> {
        self.l1.as_ref()
    }

    fn l1_mut(&mut self) -> Option<&mut L1> {
        self.l1.as_mut()
    }
}

/// Refuses variances that are not `dim` positive values.
fn check_variances(dim: usize, variances: &[f64]) -> Result<(), CwError> {
    let kind = Diagonal::KIND;
    if variances.iter().any(|&v| v <= 0.0) {
        return Err(impossible(kind, "must hold positive variances"));
    }
    if variances.len() != dim {
        return Err(wrong_length(
            kind,
            dim,
            &format!("{dim} values"),
            variances.len(),
        ));
    }
    Ok(())
}

impl Covariance for Diagonal {
    fn n_features(&self) -> usize {
        self.shape.n_features
    }

    #[inline]
    fn learn_score(&mut self, row: Row) -> f64 {
        let x = self.shape.features(row);
        self.begin_round();
        self.catch_up(&x);
        self.effective_score(&x)
    }

    #[inline]
    fn prepare(&mut self, row: Row) -> (f64, f64) {
        let x = self.shape.features(row);
        let v = match &self.noise {
            None => variance_of_row::<false>(&self.coordinates, &x, 0.0),
            Some(noise) => variance_of_row::<true>(&self.coordinates, &x, noise.offset()),
        };
        self.observed_variance = v;
        (v, x.squared_norm())
    }

    /// The learning path's single pass over a row (after the L1 catch-up): (μ·x, xᵀΣx, ‖x‖²).
    #[inline]
    fn observe(&mut self, row: Row) -> Observation {
        let x = self.shape.features(row);
        self.begin_round();
        self.catch_up(&x);
        let o = match &self.noise {
            None => observe_coordinates::<false>(&self.coordinates, &x, 0.0),
            Some(noise) => observe_coordinates::<true>(&self.coordinates, &x, noise.offset()),
        };
        self.observed_variance = o.variance;
        o
    }

    #[inline]
    fn update(&mut self, row: Row, step: f64, c: f64, v: f64, eta: f64) {
        let x = self.shape.features(row);
        if self.mean_step_overflows(&x, step) {
            self.skipped += 1;
            return;
        }
        // With process noise: Σ_j − c·(Σ_j x_j)²/(1 + c·v), the diagonal of Sherman–Morrison,
        // as Σ_j/(1 + Σ_j x_j²/(1/c + ρ_j)), ρ_j = v − Σ_j x_j² ≥ 0 the rest of the row's
        // variance: the subtraction cancelled to 0 when Σ_j x_j² dominates (x_j ~ 1e9, where
        // the exact value is about (1/c + ρ_j)/x_j²). An infinite c gives 1/c = 0.
        let marginal = |s: f64, xj: f64| {
            let own = s * xj * xj;
            s / (1.0 + own / (1.0 / c + (v - own).max(0.0)))
        };
        let coordinates = &mut self.coordinates;
        match (&self.noise, self.marginal) {
            // One division per feature.
            (None, false) => shrink_precision(coordinates, self.shape, row, step, c),
            (None, true) => move_coordinates::<false>(coordinates, &x, step, 0.0, marginal),
            (Some(noise), _) => {
                move_coordinates::<true>(coordinates, &x, step, noise.offset(), marginal)
            }
        }
        // This round's L1 threshold: applied to the row's coordinates now (with their new
        // variances) and to all others lazily.
        if let Some(l1) = &mut self.l1 {
            l1.advance(eta);
            self.catch_up(&x);
        }
    }

    #[inline]
    fn prefetch(&self, row: Row) {
        prefetch_each(&self.shape.features(row), &self.coordinates);
    }

    /// The variance the next round meets: xᵀ(Σ + q·I)x with a constant process noise q (the
    /// Kalman filter's one-step-ahead prediction).
    fn moments(&self, row: Row) -> (f64, f64) {
        let x = self.shape.features(row);
        if self.l1.is_none() && self.noise.is_none() {
            // Both sums in one pass over the row, each term and order as the two passes below.
            let (mut score, mut v) = (0.0, 0.0);
            x.for_each(|j, xj| {
                let c = &self.coordinates[j];
                score += c.mean * xj;
                v += c.variance * xj * xj;
            });
            return (score, v);
        }
        let v = match &self.noise {
            Some(noise) if noise.q != 0.0 => self.variance(&x) + noise.q * x.squared_norm(),
            _ => self.variance(&x),
        };
        (self.effective_score(&x), v)
    }

    fn unit_scale_variance(&self, row: Row) -> Option<(f64, f64)> {
        Some(self.shape.at_unit_scale(row, |x| self.variance(x)))
    }

    /// Σ_j x_j·y_j·Σ_j over the coordinates both rows hold (exactly 0 for disjoint supports),
    /// Σ_j as [`Covariance::moments`] reads it, plus q·x·y with a constant process noise q;
    /// exactly symmetric.
    fn cross_variance(&self, a: Row, b: Row) -> Option<f64> {
        let (x, y) = (self.shape.features(a), self.shape.features(b));
        let coordinates = &self.coordinates;
        let mut v = 0.0;
        match &self.noise {
            None => x.for_each_common(&y, |j, xj, yj| v += coordinates[j].variance * (xj * yj)),
            Some(noise) => {
                let (offset, mut xy) = (noise.offset(), 0.0);
                x.for_each_common(&y, |j, xj, yj| {
                    let product = xj * yj;
                    v += noisy_variance(coordinates[j].variance, offset) * product;
                    xy += product;
                });
                if noise.q != 0.0 {
                    v += noise.q * xy;
                }
            }
        }
        Some(v)
    }

    #[inline]
    fn score(&self, row: Row) -> f64 {
        self.effective_score(&self.shape.features(row))
    }

    fn n_values(&self) -> usize {
        (2 + usize::from(self.l1.is_some())) * self.coordinates.len()
    }

    /// With process noise on (a clock at 0 when none runs, as "auto" before any growth). Kept
    /// lazy when a state is taken, not folded: a fold would change the later rounding of this
    /// model and not of one that was never saved.
    fn lazy_noise(&self) -> Option<([f64; 2], Vec<f64>)> {
        if !self.marginal {
            return None;
        }
        let clock = (self.noise.as_ref()).map_or([0.0, 0.0], |n| [n.round as f64, n.grown]);
        let stored = self.coordinates.iter().map(|c| c.variance).collect();
        Some((clock, stored))
    }

    /// The model was built from the eager variances Σ_j (its clock at 0); `stored` must give
    /// them back bit for bit with the clock's offset, so the two entries cannot disagree.
    fn restore_lazy_noise(&mut self, clock: [f64; 2], stored: &[f64]) -> Result<(), CwError> {
        let period = rebase_period(self.coordinates.len());
        let [round, grown] = clock;
        let invalid = |what: &str| CwError::InvalidState(format!("entry {what}"));
        if !self.marginal {
            return Err(invalid("\"noise_clock\" needs process noise"));
        }
        let round_valid = (0.0..=period as f64).contains(&round) && round.fract() == 0.0;
        if !(round_valid && grown >= 0.0 && grown.is_finite()) {
            return Err(invalid(&format!(
                "\"noise_clock\" must hold a round in [0, {period}] and a non-negative finite \
                 noise"
            )));
        }
        if stored.len() != self.coordinates.len() || stored.iter().any(|v| !v.is_finite()) {
            return Err(invalid(&format!(
                "\"noise_variances\" must hold {} finite values",
                self.coordinates.len()
            )));
        }
        let q = self.noise.as_ref().map_or(0.0, |noise| noise.q);
        let clock = NoiseClock {
            q,
            round: round as u64,
            grown,
        };
        let offset = clock.offset();
        let eager = self.coordinates.iter().map(|c| c.variance);
        if !stored
            .iter()
            .zip(eager)
            .all(|(&s, v)| noisy_variance(s, offset) == v)
        {
            return Err(invalid(
                "\"noise_variances\" does not give \"covariance_values\" with the noise clock",
            ));
        }
        for (c, &s) in self.coordinates.iter_mut().zip(stored) {
            c.variance = s;
        }
        if self.noise.is_some() || clock.offset() != 0.0 || clock.round != 0 {
            self.noise = Some(clock);
        }
        Ok(())
    }

    /// Exact and O(nnz) per row by the lazy catch-up of `NoiseClock`; not with an L1 penalty,
    /// whose lazy thresholds assume Σ_j constant between a coordinate's rows. Called only when
    /// the option is on (q = 0 for "auto"), it also switches the update to the diagonal of the
    /// covariance update (docs/design.md §10.3).
    fn set_process_noise(&mut self, q: f64) -> Result<(), CwError> {
        if self.l1.is_some() {
            return Err(noise_with_l1());
        }
        self.fold_clock();
        self.marginal = true;
        self.noise = (q != 0.0).then(|| NoiseClock::new(q));
        Ok(())
    }

    fn reset_covariance(&mut self, a: f64) -> Result<(), CwError> {
        self.coordinates.iter_mut().for_each(|c| c.variance = a);
        self.variance_bound = a.max(VARIANCE_FLOOR);
        if let Some(noise) = &mut self.noise {
            (noise.round, noise.grown) = (0, 0.0);
        }
        Ok(())
    }

    /// O(d), per coordinate; refused with L1 or process noise.
    fn reweigh_prior(&mut self, delta: f64, commit: bool) -> Option<FeatureMoments> {
        if self.l1.is_some() || self.noise.is_some() {
            return None;
        }
        let n_features = self.shape.n_features;
        let before = self.mean();
        if delta == 0.0 {
            return Some(feature_moments(&before, &before, n_features, |j| {
                self.variance_of(j)
            }));
        }
        let (mean, variances) = reweighed_diagonal(&before, &self.covariance(), n_features, delta)?;
        let moments = feature_moments(&mean, &before, n_features, |j| variances[j]);
        if commit {
            self.set_finite_moments(&mean, &variances).ok()?;
        }
        Some(moments)
    }

    /// O(1): the growth joins the lazy clock's offset (a clock of q = 0 is started if none runs).
    fn grow_covariance(&mut self, g: f64) -> Result<(), CwError> {
        if self.l1.is_some() {
            return Err(noise_with_l1());
        }
        self.noise.get_or_insert_with(|| NoiseClock::new(0.0)).grown += g;
        self.variance_bound += g;
        Ok(())
    }

    /// One pass over the row, as the learning path's.
    fn watch(&self, row: Row) -> Observation {
        let x = self.shape.features(row);
        match (&self.l1, &self.noise) {
            (None, None) => observe_coordinates::<false>(&self.coordinates, &x, 0.0),
            (None, Some(noise)) => {
                observe_coordinates::<true>(&self.coordinates, &x, noise.offset())
            }
            // Never with process noise: the thresholded score, as predictions see it.
            (Some(_), _) => Observation {
                score: self.effective_score(&x),
                variance: self.variance(&x),
                squared_norm: x.squared_norm(),
            },
        }
    }

    fn take_skipped(&mut self) -> u64 {
        std::mem::take(&mut self.skipped)
    }

    fn mean_norm2(&self) -> f64 {
        self.effective_mean().iter().map(|w| w * w).sum()
    }

    /// O(d), after every pending L1 threshold is applied (they depend on the variances).
    fn rescale_mean(&mut self, s: f64) {
        self.catch_up_all();
        self.coordinates.iter_mut().for_each(|c| c.mean *= s);
    }

    /// O(d), after every pending L1 threshold is applied (they depend on the variances).
    fn rescale_covariance(&mut self, r: f64) {
        self.catch_up_all();
        self.fold_clock();
        for c in &mut self.coordinates {
            c.variance = (c.variance * r).max(VARIANCE_FLOOR);
        }
        self.variance_bound = self.largest_variance();
    }

    fn averaged_len(&self) -> Result<usize, CwError> {
        averaged_len_without_l1(self.coordinates.len(), self.l1.as_ref())
    }

    fn visit_mean(&self, row: Row, mut f: impl FnMut(usize, f64)) {
        let coordinates = &self.coordinates;
        self.shape
            .features(row)
            .for_each(|j, _| f(j, coordinates[j].mean));
    }

    fn dot_mean(&self, row: Row, values: &[f64]) -> f64 {
        self.shape.features(row).dot(values)
    }
}

/// The row's xᵀΣx; `NOISY`: the stored variances lack `offset` (see `NoiseClock`).
#[inline(always)]
fn variance_of_row<const NOISY: bool>(
    coordinates: &[Coordinate],
    x: &Features,
    offset: f64,
) -> f64 {
    let mut v = 0.0;
    x.for_each(|j, xj| {
        let stored = coordinates[j].variance;
        let variance = if NOISY {
            noisy_variance(stored, offset)
        } else {
            stored
        };
        v += variance * xj * xj;
    });
    v
}

/// The row's (μ·x, xᵀΣx, ‖x‖²); `NOISY`: the stored variances lack `offset` (see
/// `NoiseClock`).
#[inline(always)]
fn observe_coordinates<const NOISY: bool>(
    coordinates: &[Coordinate],
    x: &Features,
    offset: f64,
) -> Observation {
    let mut o = Observation::default();
    x.for_each(|j, xj| {
        let Coordinate { mean, variance } = coordinates[j];
        let variance = if NOISY {
            noisy_variance(variance, offset)
        } else {
            variance
        };
        o.score += mean * xj;
        o.variance += variance * xj * xj;
        o.squared_norm += xj * xj;
    });
    o
}

/// The mean step μ_j += step·Σ_j x_j and Σ_j ← shrink(Σ_j, x_j) over the row's non-zeros
/// (`NOISY`: stored as Σ_j − `offset`, see `NoiseClock`). A zero of a dense row changes
/// nothing, so it is skipped; the floor keeps Σ_j > 0, so an infinite c (see
/// `sherman_morrison_factor`) never meets Σ_j = 0 to make 0·∞ = NaN.
#[inline(always)]
fn move_coordinates<const NOISY: bool>(
    coordinates: &mut [Coordinate],
    x: &Features,
    step: f64,
    offset: f64,
    shrink: impl Fn(f64, f64) -> f64,
) {
    x.for_each(|j, xj| move_coordinate::<NOISY>(&mut coordinates[j], xj, step, offset, &shrink));
}

/// [`move_coordinates`] for one coordinate.
#[inline(always)]
fn move_coordinate<const NOISY: bool>(
    coordinate: &mut Coordinate,
    xj: f64,
    step: f64,
    offset: f64,
    shrink: impl Fn(f64, f64) -> f64,
) {
    if xj != 0.0 {
        let stored = coordinate.variance;
        let s = if NOISY {
            noisy_variance(stored, offset)
        } else {
            stored
        };
        // step·(Σx)_j: step·Σ_j first overflowed on tiny x_j with a large variance
        // (AROWRegressor(a=1e9) on x = 1e-10 rows gave coef_ = inf).
        coordinate.mean += step * (s * xj);
        let shrunk = shrink(s, xj).max(VARIANCE_FLOOR);
        coordinate.variance = if NOISY { shrunk - offset } else { shrunk };
    }
}

/// [`move_coordinates`] for the precision update Σ_j ← Σ_j/(1 + c·x_j²·Σ_j) without process
/// noise. A sparse row's features are taken four (AVX2) or two at a time on x86-64
/// ([`shrink_pair`]): their divisions, independent, then issue as one vector instruction (one
/// division per feature bounded the update).
#[inline(always)]
fn shrink_precision(coordinates: &mut [Coordinate], shape: Shape, row: Row, step: f64, c: f64) {
    let shrink = |s: f64, xj: f64| s / (1.0 + c * xj * xj * s);
    let by = Move { step, c };
    match row {
        Row::Sparse32(indices, values) => shrink_sparse(coordinates, (indices, values), by),
        Row::Sparse64(indices, values) => shrink_sparse(coordinates, (indices, values), by),
        Row::Dense(_) => {
            let x = shape.features(row);
            return move_coordinates::<false>(coordinates, &x, step, 0.0, shrink);
        }
    }
    if shape.fit_intercept {
        move_coordinate::<false>(&mut coordinates[shape.n_features], 1.0, step, 0.0, shrink);
    }
}

/// A valid sparse row's indices (distinct) and values.
type Entries<'a, I> = (&'a [I], &'a [f64]);

/// The mean step and the precision increment c of an update.
#[derive(Clone, Copy)]
struct Move {
    step: f64,
    c: f64,
}

/// The sparse part of [`shrink_precision`].
#[inline(always)]
fn shrink_sparse<I: SparseIndex>(m: &mut [Coordinate], row: Entries<I>, by: Move) {
    #[cfg(target_arch = "x86_64")]
    let done = if crate::linalg::simd::has_avx2() {
        // SAFETY: the CPU has AVX2, checked just above.
        unsafe { shrink_quads(m, row, by) }
    } else {
        shrink_pairs(m, row, by)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = 0;
    shrink_one_by_one(m, (&row.0[done..], &row.1[done..]), by);
}

/// [`shrink_sparse`] feature by feature (the features its vector loops leave).
#[inline(always)]
fn shrink_one_by_one<I: SparseIndex>(m: &mut [Coordinate], row: Entries<I>, by: Move) {
    let Move { step, c } = by;
    let shrink = |s: f64, xj: f64| s / (1.0 + c * xj * xj * s);
    for (j, &xj) in row.0.iter().zip(row.1) {
        move_coordinate::<false>(&mut m[j.get()], xj, step, 0.0, shrink);
    }
}

/// [`shrink_pair`] over the first `2·⌊n/2⌋` features of `row`; returns how many.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn shrink_pairs<I: SparseIndex>(m: &mut [Coordinate], row: Entries<I>, by: Move) -> usize {
    for (j, x) in row.0.chunks_exact(2).zip(row.1.chunks_exact(2)) {
        shrink_pair(m, [j[0].get(), j[1].get()], [x[0], x[1]], by);
    }
    row.0.len() / 2 * 2
}

/// [`shrink_pair`] four coordinates at a time (one 4-lane division), over the first `4·⌊n/4⌋`
/// features of `row`; returns how many.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn shrink_quads<I: SparseIndex>(
    coordinates: &mut [Coordinate],
    row: Entries<I>,
    by: Move,
) -> usize {
    let (indices, values, Move { step, c }) = (row.0, row.1, by);
    use std::arch::x86_64::*;
    for (j, x) in indices.chunks_exact(4).zip(values.chunks_exact(4)) {
        let j = [j[0].get(), j[1].get(), j[2].get(), j[3].get()];
        let load = |k: usize| {
            let coordinate = &coordinates[j[k]];
            // SAFETY: as in `shrink_pair`.
            unsafe { _mm_load_pd(std::ptr::from_ref(coordinate).cast()) }
        };
        // Lanes in the order a, c, b, d: [a, b] and [c, d] side by side, unpacked per half.
        let (ab, cd) = (
            _mm256_set_m128d(load(1), load(0)),
            _mm256_set_m128d(load(3), load(2)),
        );
        let (mean, s) = (_mm256_unpacklo_pd(ab, cd), _mm256_unpackhi_pd(ab, cd));
        // SAFETY: `x` holds 4 values.
        let xs = unsafe { _mm256_loadu_pd(x.as_ptr()) };
        let xs = _mm256_permute4x64_pd::<0b11_01_10_00>(xs);
        let mean = _mm256_add_pd(
            mean,
            _mm256_mul_pd(_mm256_set1_pd(step), _mm256_mul_pd(s, xs)),
        );
        let cxx = _mm256_mul_pd(_mm256_mul_pd(_mm256_set1_pd(c), xs), xs);
        let shrunk = _mm256_div_pd(s, _mm256_add_pd(_mm256_set1_pd(1.0), _mm256_mul_pd(cxx, s)));
        let shrunk = _mm256_max_pd(shrunk, _mm256_set1_pd(VARIANCE_FLOOR));
        let (moved_ab, moved_cd) = (
            _mm256_unpacklo_pd(mean, shrunk),
            _mm256_unpackhi_pd(mean, shrunk),
        );
        let moved = [
            _mm256_castpd256_pd128(moved_ab),
            _mm256_extractf128_pd::<1>(moved_ab),
            _mm256_castpd256_pd128(moved_cd),
            _mm256_extractf128_pd::<1>(moved_cd),
        ];
        for k in 0..4 {
            if x[k] != 0.0 {
                let coordinate = &mut coordinates[j[k]];
                // SAFETY: as in `shrink_pair`.
                unsafe { _mm_store_pd(std::ptr::from_mut(coordinate).cast(), moved[k]) };
            }
        }
    }
    indices.len() / 4 * 4
}

/// [`move_coordinate`] with the precision update for two coordinates `j` of a valid row (they
/// differ), each lane of the SSE2 instructions computing the same expressions as the scalar
/// code, in the same order: the same bits.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn shrink_pair(coordinates: &mut [Coordinate], j: [usize; 2], x: [f64; 2], by: Move) {
    use std::arch::x86_64::*;
    let Move { step, c } = by;
    let (a, b) = (&coordinates[j[0]], &coordinates[j[1]]);
    // SAFETY: SSE2 is part of x86-64; a coordinate is two f64 (mean, variance), 16-byte
    // aligned (`repr(C, align(16))`), read and written whole by aligned loads and stores.
    unsafe {
        let a = _mm_load_pd(std::ptr::from_ref(a).cast());
        let b = _mm_load_pd(std::ptr::from_ref(b).cast());
        let (mean, s) = (_mm_unpacklo_pd(a, b), _mm_unpackhi_pd(a, b));
        let xs = _mm_loadu_pd(x.as_ptr());
        // μ_j + step·(Σ_j·x_j) and max(Σ_j/(1 + ((c·x_j)·x_j)·Σ_j), floor).
        let mean = _mm_add_pd(mean, _mm_mul_pd(_mm_set1_pd(step), _mm_mul_pd(s, xs)));
        let cxx = _mm_mul_pd(_mm_mul_pd(_mm_set1_pd(c), xs), xs);
        let shrunk = _mm_div_pd(s, _mm_add_pd(_mm_set1_pd(1.0), _mm_mul_pd(cxx, s)));
        // maxpd gives its second operand when the first is NaN, as f64::max.
        let shrunk = _mm_max_pd(shrunk, _mm_set1_pd(VARIANCE_FLOOR));
        let moved = [_mm_unpacklo_pd(mean, shrunk), _mm_unpackhi_pd(mean, shrunk)];
        // A zero x_j changes nothing (as in `move_coordinate`: μ_j + 0 may not be μ_j = -0).
        for k in 0..2 {
            if x[k] != 0.0 {
                _mm_store_pd(std::ptr::from_mut(&mut coordinates[j[k]]).cast(), moved[k]);
            }
        }
    }
}

/// Σ_j from its stored σ̃_j and the noise clock's offset (see `NoiseClock`), at least the
/// floor: σ̃_j = Σ_j − offset loses the bits of a Σ_j far below the offset, and the sum
/// then rounds to 0.
#[inline(always)]
fn noisy_variance(stored: f64, offset: f64) -> f64 {
    (stored + offset).max(VARIANCE_FLOOR)
}

#[cfg(test)]
mod tests;
