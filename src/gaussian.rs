//! A Gaussian N(μ, Σ) over weight vectors: the mean and covariance of one linear model.

use std::borrow::Cow;

use crate::covariance::{CovarianceKind, Moments, Observation, MAX_BLOCK};

/// Rows handed to the full form at once.
const FULL_ROWS_PER_CALL: usize = 64 * MAX_BLOCK;
use crate::data::Features;
use crate::error::{check_memory, CwError};
use crate::sparse_l1::L1;

/// What one learning round does: μ ← μ + step·Σx, Σ⁻¹ ← Σ⁻¹ + c·x xᵀ, then the L1 threshold
/// of step scale `eta` (if the model has a penalty).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Update {
    pub step: f64,
    pub c: f64,
    pub eta: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Gaussian {
    /// The stored moments; with an L1 penalty some coordinates of the mean still owe their
    /// pending threshold (see [`Gaussian::effective_mean`]).
    moments: Moments,
    l1: Option<L1>,
}

impl Gaussian {
    /// Checks that `copies` Gaussians of `kind` over `dim` coordinates fit in memory, before
    /// [`Gaussian::new`] allocates them (an allocation failure would abort the process).
    pub fn check_size(kind: CovarianceKind, dim: usize, copies: usize) -> Result<(), CwError> {
        let per_copy = match kind {
            CovarianceKind::Identity => Some(dim),
            CovarianceKind::Diagonal => dim.checked_mul(2),
            CovarianceKind::Full => dim.checked_mul(dim + 2),
        };
        let advice = match kind {
            CovarianceKind::Full => {
                "; covariance=\"diag\" needs memory linear in the number of features"
            }
            _ => "",
        };
        let what = || {
            let (classes, each) = match copies {
                1 => (String::new(), ""),
                n => (format!("{n} classes of "), "each "),
            };
            match kind {
                CovarianceKind::Full => format!(
                    "{classes}a full {dim}×{dim} covariance matrix {each}(covariance=\"full\")"
                ),
                _ => format!(
                    "{classes}a {:?} model {each}over {dim} coordinates",
                    kind.name()
                ),
            }
        };
        check_memory(per_copy.and_then(|n| n.checked_mul(copies)), what, advice)
    }

    /// μ = 0, Σ = a·I over `dim` coordinates.
    pub fn new(kind: CovarianceKind, dim: usize, a: f64) -> Gaussian {
        Gaussian {
            moments: Moments::new(kind, dim, a),
            l1: None,
        }
    }

    /// Rebuilds a Gaussian from [`Gaussian::mean`] and [`Gaussian::covariance_state`].
    pub fn from_parts(
        kind: CovarianceKind,
        dim: usize,
        mean: &[f64],
        covariance: &[f64],
    ) -> Result<Gaussian, CwError> {
        Ok(Gaussian {
            moments: Moments::from_parts(kind, dim, mean, covariance)?,
            l1: None,
        })
    }

    /// Adds sparse L1 training (docs/design.md §5); only the diagonal form supports it.
    pub fn with_l1(mut self, l1: L1) -> Result<Gaussian, CwError> {
        if self.kind() != CovarianceKind::Diagonal {
            return Err(CwError::InvalidParameter(format!(
                "an L1 penalty needs the diagonal covariance, not {:?}",
                self.kind().name()
            )));
        }
        self.l1 = Some(l1);
        Ok(self)
    }

    pub fn l1(&self) -> Option<&L1> {
        self.l1.as_ref()
    }

    /// The mean with every pending L1 threshold applied: what predictions use.
    pub fn effective_mean(&self) -> Vec<f64> {
        match (&self.l1, &self.moments) {
            (Some(l1), Moments::Diagonal(d)) => d
                .coordinates()
                .iter()
                .enumerate()
                .map(|(j, c)| l1.effective(j, c.mean, c.variance))
                .collect(),
            _ => self.moments.mean().into_owned(),
        }
    }

    /// Learning path: applies the pending L1 thresholds of the row's coordinates before they
    /// are read and moved.
    #[inline]
    pub fn catch_up(&mut self, x: &Features) {
        if let (Some(l1), Moments::Diagonal(d)) = (&mut self.l1, &mut self.moments) {
            let coordinates = d.coordinates_mut();
            x.for_each(|j, xj| {
                if xj != 0.0 {
                    let c = &mut coordinates[j];
                    l1.catch_up(j, &mut c.mean, c.variance);
                }
            });
        }
    }

    /// After an update with step scale `eta`: this round's L1 threshold, applied to the row's
    /// coordinates now (with their new variances) and to all others lazily.
    #[inline]
    pub fn threshold(&mut self, x: &Features, eta: f64) {
        if let Some(l1) = &mut self.l1 {
            l1.advance(eta);
            self.catch_up(x);
        }
    }

    /// The stored mean (before pending L1 thresholds).
    pub fn mean(&self) -> Cow<'_, [f64]> {
        self.moments.mean()
    }

    /// The covariance values: empty (identity), the variances (diagonal) or Σ row-major (full).
    pub fn covariance(&self) -> Cow<'_, [f64]> {
        self.moments.covariance()
    }

    /// The covariance as [`Gaussian::from_parts`] takes it back (see
    /// [`Moments::covariance_state`]).
    pub fn covariance_state(&self) -> Cow<'_, [f64]> {
        self.moments.covariance_state()
    }

    /// See [`Moments::fold`].
    pub fn fold(&mut self) {
        self.moments.fold();
    }

    pub fn kind(&self) -> CovarianceKind {
        self.moments.kind()
    }

    /// μ·x (with pending L1 thresholds applied).
    #[inline]
    pub fn score(&self, x: &Features) -> f64 {
        match (&self.l1, &self.moments) {
            (Some(l1), Moments::Diagonal(d)) => {
                let coordinates = d.coordinates();
                let mut s = 0.0;
                x.for_each(|j, xj| {
                    let c = &coordinates[j];
                    s += xj * l1.effective(j, c.mean, c.variance);
                });
                s
            }
            _ => self.moments.score(x),
        }
    }

    /// xᵀΣx (prediction path).
    #[inline]
    pub fn variance(&self, x: &Features) -> f64 {
        self.moments.variance(x)
    }

    /// xᵀΣx on the learning path (keeps what [`Gaussian::update`] needs for this `x`).
    #[inline]
    pub fn prepare(&mut self, x: &Features) -> f64 {
        self.moments.prepare(x)
    }

    /// The learning path's look at a row: applies the row's pending L1 thresholds, then gives
    /// μ·x, xᵀΣx and ‖x‖² (keeping what [`Gaussian::update`] needs for this `x`).
    #[inline]
    pub fn observe(&mut self, x: &Features) -> Observation {
        self.catch_up(x);
        self.moments.observe(x)
    }

    /// ‖x‖² as the rules see it: equal to v for the identity covariance.
    #[inline]
    pub fn squared_norm(&self, x: &Features, v: f64) -> f64 {
        if self.kind() == CovarianceKind::Identity {
            v
        } else {
            x.squared_norm()
        }
    }

    /// μ ← μ + step·Σx, Σ⁻¹ ← Σ⁻¹ + c·x xᵀ, with `v` from [`Gaussian::observe`] or
    /// [`Gaussian::prepare`] on this `x`.
    #[inline]
    pub fn update(&mut self, x: &Features, step: f64, c: f64, v: f64) {
        self.moments.update(x, step, c, v);
    }

    /// Learns rows in order: `decide(i, observation)` gives row i's [`Update`] or `None` to
    /// leave the model unchanged. The diagonal form fetches the next row's coordinates while it
    /// works on the current one; the full form learns blocks of rows (see [`crate::covariance::Full`]).
    pub fn learn_rows<'a>(
        &mut self,
        rows: impl Iterator<Item = (usize, Features<'a>)>,
        mut decide: impl FnMut(usize, Observation) -> Option<Update>,
    ) {
        let mut rows = rows.peekable();
        if let Moments::Full(full) = &mut self.moments {
            // Blocks of rows share one pass over Σ (the buffer bounds the memory of a call).
            while rows.peek().is_some() {
                let (indices, block): (Vec<usize>, Vec<Features>) =
                    rows.by_ref().take(FULL_ROWS_PER_CALL).unzip();
                full.learn_rows(&block, |k, seen| {
                    decide(indices[k], seen).map(|u| (u.step, u.c))
                });
            }
            return;
        }
        while let Some((i, x)) = rows.next() {
            if let Some((_, next)) = rows.peek() {
                self.moments.prefetch(next);
            }
            let seen = self.observe(&x);
            if let Some(u) = decide(i, seen) {
                self.update(&x, u.step, u.c, seen.variance);
                self.threshold(&x, u.eta);
            }
        }
    }
}
