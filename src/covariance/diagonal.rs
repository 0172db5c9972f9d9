//! The diagonal covariance, with the optional sparse L1 penalty (docs/design.md §5): only this
//! form supports it.

use std::borrow::Cow;

use super::{
    check_finite_parts, impossible, prefetch_each, wrong_length, Covariance, CovarianceKind,
    Observation, PrimalForm, MEAN_STEP_LIMIT, VARIANCE_FLOOR,
};
use crate::data::{Features, Row, Shape};
use crate::error::CwError;
use crate::sparse_l1::{Penalty, L1};

/// One coordinate of a diagonal Gaussian. Mean and variance sit side by side (16 bytes,
/// aligned), so a feature of a sparse row costs one cache line: the random gather into a table
/// of 2^20 coordinates is what bounds the diagonal learners.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C, align(16))]
pub struct Coordinate {
    pub mean: f64,
    pub variance: f64,
}

/// Diagonal covariance: the diagonal of the precision update (CW-Stdev eq. 15; docs/design.md
/// §2.5), Σ_j ← Σ_j / (1 + c·Σ_j·x_j²). Work per example is O(nnz).
#[derive(Clone, Debug)]
pub struct Diagonal {
    shape: Shape,
    /// The stored moments; with an L1 penalty some coordinates of the mean still owe their
    /// pending threshold (see [`PrimalForm::effective_mean`]).
    coordinates: Vec<Coordinate>,
    l1: Option<L1>,
    /// Process noise, if any (never with `l1`).
    noise: Option<NoiseClock>,
    /// max_j |(Σx)_j| of the row last observed or prepared (work space of the overflow gate,
    /// not part of the model).
    largest_sigma_x: f64,
    /// Mean steps the overflow gate skipped, not yet taken (see [`Covariance::take_skipped`]).
    skipped: u64,
}

impl PartialEq for Diagonal {
    fn eq(&self, other: &Self) -> bool {
        (self.shape, &self.coordinates, &self.l1, &self.noise)
            == (other.shape, &other.coordinates, &other.l1, &other.noise)
    }
}

/// Process noise q·I every round, applied lazily (docs/design.md §10.1): Σ_j changes otherwise
/// only in rounds where x_j ≠ 0, so the stored variance of coordinate j lacks exactly
/// q·(round − last_j), added when j is next read for learning (O(nnz) per row) and by every
/// prediction. Exact: the eager Σ_j + q, round after round, sums to the same q·(t − s).
#[derive(Clone, Debug, PartialEq)]
struct NoiseClock {
    q: f64,
    /// Rounds begun since the clock started.
    round: u64,
    /// The round at each coordinate's last catch-up.
    last: Vec<u64>,
}

impl NoiseClock {
    /// The noise coordinate `j` has not received yet.
    #[inline]
    fn owed(&self, j: usize) -> f64 {
        self.q * (self.round - self.last[j]) as f64
    }
}

impl Diagonal {
    pub fn coordinates(&self) -> &[Coordinate] {
        &self.coordinates
    }

    /// Learning path: starts a round of process noise (if any) and catches up the row's
    /// coordinates with it.
    #[inline]
    fn begin_round(&mut self, x: &Features) {
        if let Some(noise) = &mut self.noise {
            noise.round += 1;
            let coordinates = &mut self.coordinates;
            x.for_each(|j, xj| {
                if xj != 0.0 {
                    coordinates[j].variance += noise.owed(j);
                    noise.last[j] = noise.round;
                }
            });
        }
    }

    /// Σ_j as predictions see it: with the process noise not yet caught up.
    #[inline]
    fn variance_of(&self, j: usize) -> f64 {
        let stored = self.coordinates[j].variance;
        match &self.noise {
            Some(noise) => stored + noise.owed(j),
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
            None => x.for_each(|j, xj| s += coordinates[j].mean * xj),
        }
        s
    }

    #[inline]
    fn variance(&self, x: &Features) -> f64 {
        let mut v = 0.0;
        match &self.noise {
            Some(_) => x.for_each(|j, xj| v += self.variance_of(j) * xj * xj),
            None => x.for_each(|j, xj| v += self.coordinates[j].variance * xj * xj),
        }
        v
    }

    /// Whether μ + step·Σx overflows for the row `x` last observed or prepared: checked
    /// coordinate by coordinate only when the largest |step·(Σx)_j| could reach it.
    #[inline]
    fn mean_step_overflows(&self, x: &Features, step: f64) -> bool {
        if step.abs() * self.largest_sigma_x < MEAN_STEP_LIMIT {
            return false;
        }
        let mut overflows = false;
        x.for_each(|j, xj| {
            let c = &self.coordinates[j];
            overflows |= !(c.mean + step * (c.variance * xj)).is_finite();
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
            coordinates: vec![coordinate; shape.dim()],
            l1: None,
            noise: None,
            largest_sigma_x: 0.0,
            skipped: 0,
        }
    }

    /// Variances must be positive (learning floors them at [`VARIANCE_FLOOR`]).
    fn from_parts(shape: Shape, mean: &[f64], variances: &[f64]) -> Result<Self, CwError> {
        let dim = shape.dim();
        check_finite_parts(dim, mean, variances)?;
        if variances.iter().any(|&v| v <= 0.0) {
            return Err(impossible(Self::KIND, "must hold positive variances"));
        }
        if variances.len() != dim {
            let expected = format!("{dim} values");
            return Err(wrong_length(Self::KIND, dim, &expected, variances.len()));
        }
        let coordinates = mean
            .iter()
            .zip(variances)
            .map(|(&mean, &variance)| Coordinate { mean, variance })
            .collect();
        Ok(Diagonal {
            shape,
            coordinates,
            l1: None,
            noise: None,
            largest_sigma_x: 0.0,
            skipped: 0,
        })
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

    fn with_l1(mut self, l1: L1) -> Result<Self, CwError> {
        if self.noise.is_some() {
            return Err(noise_with_l1());
        }
        if l1.penalty() == Penalty::DualAveraging {
            return Err(CwError::InvalidParameter(
                "penalty \"l1-rda\" is AdaGrad's dual averaging form".into(),
            ));
        }
        self.l1 = Some(l1);
        Ok(self)
    }

    fn l1(&self) -> Option<&L1> {
        self.l1.as_ref()
    }
}

impl Covariance for Diagonal {
    fn n_features(&self) -> usize {
        self.shape.n_features
    }

    #[inline]
    fn learn_score(&mut self, row: Row) -> f64 {
        let x = self.shape.features(row);
        self.begin_round(&x);
        self.catch_up(&x);
        self.effective_score(&x)
    }

    #[inline]
    fn prepare(&mut self, row: Row) -> (f64, f64) {
        let x = self.shape.features(row);
        let (mut v, mut largest) = (0.0, 0.0f64);
        x.for_each(|j, xj| {
            let variance = self.coordinates[j].variance;
            v += variance * xj * xj;
            largest = largest.max((variance * xj).abs());
        });
        self.largest_sigma_x = largest;
        (v, x.squared_norm())
    }

    /// The learning path's single pass over a row (after the L1 catch-up): (μ·x, xᵀΣx, ‖x‖²).
    #[inline]
    fn observe(&mut self, row: Row) -> Observation {
        let x = self.shape.features(row);
        self.begin_round(&x);
        self.catch_up(&x);
        let (mut o, mut largest) = (Observation::default(), 0.0f64);
        x.for_each(|j, xj| {
            let Coordinate { mean, variance } = self.coordinates[j];
            o.score += mean * xj;
            o.variance += variance * xj * xj;
            o.squared_norm += xj * xj;
            largest = largest.max((variance * xj).abs());
        });
        self.largest_sigma_x = largest;
        o
    }

    #[inline]
    fn update(&mut self, row: Row, step: f64, c: f64, _v: f64, eta: f64) {
        let x = self.shape.features(row);
        if self.mean_step_overflows(&x, step) {
            self.skipped += 1;
            return;
        }
        let coordinates = &mut self.coordinates;
        x.for_each(|j, xj| {
            // A zero of a dense row changes nothing, so it is skipped. One division per
            // feature; the floor keeps Σ_j > 0, so an infinite c (see
            // `sherman_morrison_factor`) never meets Σ_j = 0 to make 0·∞ = NaN.
            if xj != 0.0 {
                let coordinate = &mut coordinates[j];
                let s = coordinate.variance;
                // step·(Σx)_j: step·Σ_j first overflowed on tiny x_j with a large variance
                // (AROWRegressor(a=1e9) on x = 1e-10 rows gave coef_ = inf).
                coordinate.mean += step * (s * xj);
                coordinate.variance = (s / (1.0 + c * xj * xj * s)).max(VARIANCE_FLOOR);
            }
        });
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

    fn moments(&self, row: Row) -> (f64, f64) {
        let x = self.shape.features(row);
        (self.effective_score(&x), self.variance(&x))
    }

    #[inline]
    fn score(&self, row: Row) -> f64 {
        self.effective_score(&self.shape.features(row))
    }

    fn n_values(&self) -> usize {
        let extra = usize::from(self.l1.is_some()) + usize::from(self.noise.is_some());
        (2 + extra) * self.coordinates.len()
    }

    /// Catches every coordinate up with the process noise (nothing is owed afterwards).
    fn fold(&mut self) {
        if let Some(noise) = &mut self.noise {
            for (j, c) in self.coordinates.iter_mut().enumerate() {
                c.variance += noise.owed(j);
                noise.last[j] = noise.round;
            }
        }
    }

    /// Exact and O(nnz) per row by the lazy catch-up of [`NoiseClock`]; not with an L1 penalty,
    /// whose lazy thresholds assume Σ_j constant between a coordinate's rows.
    fn set_process_noise(&mut self, q: f64) -> Result<(), CwError> {
        if self.l1.is_some() {
            return Err(noise_with_l1());
        }
        self.fold();
        self.noise = (q != 0.0).then(|| NoiseClock {
            q,
            round: 0,
            last: vec![0; self.coordinates.len()],
        });
        Ok(())
    }

    fn reset_covariance(&mut self, a: f64) -> Result<(), CwError> {
        self.coordinates.iter_mut().for_each(|c| c.variance = a);
        if let Some(noise) = &mut self.noise {
            noise.last.fill(noise.round);
        }
        Ok(())
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
        for c in &mut self.coordinates {
            c.variance = (c.variance * r).max(VARIANCE_FLOOR);
        }
    }

    /// The lazy L1 thresholds move a weight on the rows that do not touch it, which the
    /// O(nnz) sums cannot follow.
    fn averaged_len(&self) -> Result<usize, CwError> {
        match self.l1 {
            None => Ok(self.coordinates.len()),
            Some(_) => Err(CwError::InvalidParameter(
                "average cannot be combined with an L1 penalty".into(),
            )),
        }
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

fn noise_with_l1() -> CwError {
    CwError::InvalidParameter("process_noise cannot be combined with an L1 penalty".into())
}
