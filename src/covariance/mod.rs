//! The covariance forms: how to compute v = xᵀΣx and Σx, and how to apply a precision increment
//! `c·x xᵀ`. Any rule runs with any form; the learner only talks to [`Moments`], which keeps the
//! mean in the layout its form works fastest with.
//!
//! # Numerical safeguards
//!
//! The rules' own safeguards (stable closed forms, one gate for every step) are listed in
//! `crate::rules`. The forms add these; none of them changes a result on ordinary data (they
//! bind only where float64 could no longer represent the exact update), which the unchanged
//! reference and invariant tests and the full form's `guards_*` tests check:
//!
//! 1. **Diagonal floor** ([`VARIANCE_FLOOR`], the smallest normal f64): Σ_j/(1 + c·x_j²·Σ_j)
//!    is kept at least that, so an overflowing precision gain (c = ∞ is its limit) never
//!    collapses a variance to exactly 0. Coordinates with x_j = 0 are not touched.
//! 2. **Exact symmetry** of the full Σ: the fold computes the upper triangle only and mirrors
//!    it, and every product reads Σ as symmetric; after any number of updates Σ_ij and Σ_ji
//!    are the same bits.
//! 3. **Full form, positive definiteness** ([`RELATIVE_VARIANCE_FLOOR`] τ = 2⁻⁴⁰ ≈ 9.1e-13):
//!    the downdate Σ ← Σ − β(Σx)(Σx)ᵀ leaves the variance v/(1 + cv) along x, while rounding
//!    perturbs Σ by ~ε relative to its diagonal scale. Once c·v ≳ 1/ε (features ~1e150, an
//!    ExactCW collapse, collinear columns at large scale) that variance is rounding noise and Σ
//!    loses definiteness (a plain update does within ten rows of features ~1e150). β is capped
//!    so that the variance along x keeps at least τ·q, q = Σ_j Σ₀_jj x_j² with Σ₀ the folded
//!    part of Σ = Σ₀ − Σ_b h_b h_bᵀ, whose diagonal is the scale of the representation's
//!    rounding (so Σ's diagonally scaled Rayleigh quotient along x stays ≥ τ, ~4000 times that
//!    rounding). The cap binds only where c·v > ~1e12 (or the scaled variance along x is
//!    already below τ), where the exact update cannot be represented anyway; the model is then
//!    less certain along x than the exact rule would make it.
//! 4. **Full form, diagonal floor**: β is also capped so that no Σ_jj falls below
//!    max([`FULL_VARIANCE_FLOOR`], τ·Σ₀_jj), FULL_VARIANCE_FLOOR = 2⁻⁹⁷⁰ ≈ 1e-292. Above it the
//!    subnormal rounding of Σ's entries and products stays below float64's precision, so Σ
//!    cannot underflow into noise or 0; and a diagonal entry never shrinks within one block of
//!    pending terms to rounding noise of Σ₀_jj.
//! 5. **Cost**: the diagonals of Σ₀ and Σ are kept alongside (O(d) per update, refreshed at each
//!    fold), q is one O(d) pass per update, and the per-entry check of item 4 is skipped while
//!    every Σ_jj stands 2²⁰ above its floor and the step keeps 2⁻²⁰ of the variance along x
//!    (Σ' ⪰ (1 − βv)Σ then guarantees it). On `full_arow_dense/1000` this adds 0.7% to the
//!    instructions executed; batch and row-by-row learning still give the same bits, as the
//!    caps depend only on the sequence of updates.

mod diagonal;
mod full;

use std::borrow::Cow;

pub use diagonal::{Coordinate, Diagonal};
pub use full::{Full, MAX_BLOCK};

use crate::data::Features;
use crate::error::CwError;

/// The smallest variance a diagonal coordinate keeps: the smallest positive normal f64. Far
/// below anything ordinary data produces, it only stops an overflowing precision gain from
/// collapsing Σ_j to exactly 0 (which would freeze the coordinate and breed 0·∞ = NaN).
pub const VARIANCE_FLOOR: f64 = f64::MIN_POSITIVE;

/// Full form: the least fraction τ = 2⁻⁴⁰ ≈ 9.1e-13 of q = Σ_j Σ₀_jj x_j² that the variance
/// along x keeps after an update, and of Σ₀_jj that Σ_jj keeps (see the module doc).
pub const RELATIVE_VARIANCE_FLOOR: f64 = 1.0 / (1u64 << 40) as f64;

/// Full form: the smallest diagonal entry of Σ an update may leave, 2⁻⁹⁷⁰ ≈ 1.0e-292 (the
/// smallest normal f64 over the machine epsilon): above it, the subnormal rounding of products
/// of Σ's entries stays below float64's relative precision.
pub const FULL_VARIANCE_FLOOR: f64 = f64::MIN_POSITIVE / f64::EPSILON;

/// What the learning path needs from one row before choosing a step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Observation {
    /// μ·x.
    pub score: f64,
    /// v = xᵀΣx.
    pub variance: f64,
    /// ‖x‖² (equal to v for the identity covariance).
    pub squared_norm: f64,
}

/// Which covariance a learner keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CovarianceKind {
    /// Σ = I fixed: the first-order rules (Perceptron, PA).
    Identity,
    /// One variance per feature: the diagonal of the precision update, O(nnz) per example.
    Diagonal,
    /// Dense symmetric d×d, updated by Sherman–Morrison.
    Full,
}

impl CovarianceKind {
    pub fn from_name(name: &str) -> Result<CovarianceKind, CwError> {
        match name {
            "identity" => Ok(CovarianceKind::Identity),
            "diag" => Ok(CovarianceKind::Diagonal),
            "full" => Ok(CovarianceKind::Full),
            _ => Err(CwError::InvalidParameter(format!(
                "covariance must be \"diag\" or \"full\", got {name:?}"
            ))),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            CovarianceKind::Identity => "identity",
            CovarianceKind::Diagonal => "diag",
            CovarianceKind::Full => "full",
        }
    }
}

/// The mean and covariance of one linear model, in the layout of its covariance form.
#[derive(Clone, Debug, PartialEq)]
pub enum Moments {
    /// Σ = I: only the mean.
    Identity(Vec<f64>),
    /// Mean and variance interleaved per coordinate.
    Diagonal(Diagonal),
    Full(Full),
}

impl Moments {
    /// μ = 0, Σ = a·I over `dim` coordinates.
    pub fn new(kind: CovarianceKind, dim: usize, a: f64) -> Moments {
        match kind {
            CovarianceKind::Identity => Moments::Identity(vec![0.0; dim]),
            CovarianceKind::Diagonal => Moments::Diagonal(Diagonal::new(dim, a)),
            CovarianceKind::Full => Moments::Full(Full::new(dim, a)),
        }
    }

    /// Rebuilds the moments from [`Moments::mean`] and [`Moments::covariance_state`].
    pub fn from_parts(
        kind: CovarianceKind,
        dim: usize,
        mean: &[f64],
        covariance: &[f64],
    ) -> Result<Self, CwError> {
        if mean.len() != dim || mean.iter().any(|x| !x.is_finite()) {
            return Err(CwError::InvalidInput(format!(
                "a mean must hold {dim} finite values, got {}",
                mean.len()
            )));
        }
        if covariance.iter().any(|x| !x.is_finite()) {
            return Err(CwError::InvalidInput(
                "covariance contains NaN or infinity".into(),
            ));
        }
        check_covariance_values(kind, dim, covariance)?;
        let moments = match kind {
            CovarianceKind::Identity => covariance
                .is_empty()
                .then(|| Moments::Identity(mean.to_vec())),
            CovarianceKind::Diagonal => (covariance.len() == dim)
                .then(|| Moments::Diagonal(Diagonal::from_parts(mean, covariance))),
            CovarianceKind::Full => {
                Full::from_state(dim, mean.to_vec(), covariance).map(Moments::Full)
            }
        };
        moments.ok_or_else(|| {
            let expected = match kind {
                CovarianceKind::Identity => "no values".to_string(),
                CovarianceKind::Diagonal => format!("{dim} values"),
                CovarianceKind::Full => format!("{dim}×{dim} values and pending terms"),
            };
            CwError::InvalidInput(format!(
                "a {} covariance over {dim} coordinates needs {expected}, got {} values",
                kind.name(),
                covariance.len()
            ))
        })
    }

    /// Folds the full form's pending rank-one terms into Σ (a stored state holds none).
    pub fn fold(&mut self) {
        if let Moments::Full(full) = self {
            full.fold();
        }
    }

    pub fn kind(&self) -> CovarianceKind {
        match self {
            Moments::Identity(_) => CovarianceKind::Identity,
            Moments::Diagonal(_) => CovarianceKind::Diagonal,
            Moments::Full(_) => CovarianceKind::Full,
        }
    }

    pub fn mean(&self) -> Cow<'_, [f64]> {
        match self {
            Moments::Identity(mean) => Cow::Borrowed(mean),
            Moments::Diagonal(d) => d.coordinates().iter().map(|c| c.mean).collect(),
            Moments::Full(f) => Cow::Borrowed(f.mean()),
        }
    }

    /// What [`Moments::from_parts`] takes back: the covariance values, and for the full form
    /// its pending rank-one terms after Σ₀.
    pub fn covariance_state(&self) -> Cow<'_, [f64]> {
        match self {
            Moments::Full(f) => Cow::Owned(f.state()),
            _ => self.covariance(),
        }
    }

    /// The covariance values: empty (identity), the variances (diagonal) or Σ row-major (full).
    pub fn covariance(&self) -> Cow<'_, [f64]> {
        match self {
            Moments::Identity(_) => Cow::Borrowed(&[]),
            Moments::Diagonal(d) => d.coordinates().iter().map(|c| c.variance).collect(),
            Moments::Full(f) => f.values(),
        }
    }

    /// μ·x.
    #[inline]
    pub fn score(&self, x: &Features) -> f64 {
        match self {
            Moments::Identity(mean) => x.dot(mean),
            Moments::Diagonal(d) => d.score(x),
            Moments::Full(f) => x.dot(f.mean()),
        }
    }

    /// v = xᵀΣx without changing any state (prediction path).
    #[inline]
    pub fn variance(&self, x: &Features) -> f64 {
        match self {
            Moments::Identity(_) => x.squared_norm(),
            Moments::Diagonal(d) => d.variance(x),
            Moments::Full(f) => f.variance(x),
        }
    }

    /// μ·x, xᵀΣx and ‖x‖² on the learning path (one pass over the row for the diagonal form);
    /// keeps what [`Moments::update`] needs for this `x`.
    #[inline]
    pub fn observe(&mut self, x: &Features) -> Observation {
        match self {
            Moments::Diagonal(d) => d.observe(x),
            Moments::Identity(mean) => {
                let squared_norm = x.squared_norm();
                Observation {
                    score: x.dot(mean),
                    variance: squared_norm,
                    squared_norm,
                }
            }
            Moments::Full(f) => Observation {
                score: x.dot(f.mean()),
                variance: f.prepare(x),
                squared_norm: x.squared_norm(),
            },
        }
    }

    /// v = xᵀΣx on the learning path, keeping what [`Moments::update`] needs for this `x`.
    #[inline]
    pub fn prepare(&mut self, x: &Features) -> f64 {
        match self {
            Moments::Full(f) => f.prepare(x),
            _ => self.variance(x),
        }
    }

    /// μ ← μ + step·Σx, then Σ⁻¹ ← Σ⁻¹ + c·x xᵀ. `v` is the value [`Moments::observe`] or
    /// [`Moments::prepare`] returned for this `x`, which must be the last one looked at.
    #[inline]
    pub fn update(&mut self, x: &Features, step: f64, c: f64, v: f64) {
        match self {
            Moments::Identity(mean) => x.for_each(|j, xj| mean[j] += step * xj),
            Moments::Diagonal(d) => d.update(x, step, c),
            Moments::Full(f) => f.update(step, c, v),
        }
    }

    /// A hint that `x` is learned next: the identity and diagonal forms start fetching the
    /// coordinates it touches.
    #[inline]
    pub fn prefetch(&self, x: &Features) {
        match self {
            Moments::Identity(mean) => x.for_each(|j, _| {
                if let Some(w) = mean.get(j) {
                    prefetch(w);
                }
            }),
            Moments::Diagonal(d) => d.prefetch(x),
            Moments::Full(_) => {}
        }
    }
}

/// Checks what a learned covariance always is, once its length fits: positive variances
/// (the diagonal form floors them at [`VARIANCE_FLOOR`]), and for the full form an exactly
/// symmetric Σ₀ (every fold mirrors it). The signs of the full form's variances are not
/// checked: rounding in Sherman–Morrison can leave a learned variance at 0 or just below.
fn check_covariance_values(
    kind: CovarianceKind,
    dim: usize,
    covariance: &[f64],
) -> Result<(), CwError> {
    let bad = |what: &str| {
        Err(CwError::InvalidInput(format!(
            "a {} covariance {what}",
            kind.name()
        )))
    };
    match kind {
        CovarianceKind::Diagonal if covariance.iter().any(|&v| v <= 0.0) => {
            bad("must hold positive variances")
        }
        CovarianceKind::Full => {
            let Some(sigma) = dim.checked_mul(dim).and_then(|n| covariance.get(..n)) else {
                return Ok(()); // the length check reports it
            };
            let row = |i: usize| &sigma[i * dim..(i + 1) * dim];
            if (0..dim).any(|i| (0..i).any(|j| row(i)[j] != row(j)[i])) {
                return bad("must be symmetric");
            }
            if !is_positive_definite(dim, sigma, &covariance[dim * dim..])? {
                return bad("must be positive definite");
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Whether Σ = Σ₀ − Σ_k h_k h_kᵀ is positive definite, for a symmetric Σ₀ (`sigma`, row-major)
/// and the pending terms h_k (`pending`, `dim` values each): a Cholesky factorisation of its
/// lower triangle in a scratch copy, made before the model itself is allocated.
fn is_positive_definite(dim: usize, sigma: &[f64], pending: &[f64]) -> Result<bool, CwError> {
    let mut l = crate::error::zeros(Some(sigma.len()), || {
        format!("a check of a {dim}×{dim} covariance")
    })?;
    l.copy_from_slice(sigma);
    for h in pending.chunks_exact(dim.max(1)) {
        for i in 0..dim {
            for j in 0..=i {
                l[i * dim + j] -= h[i] * h[j];
            }
        }
    }
    // Row-oriented (Cholesky–Banachiewicz) in blocks of rows, so that each finished row j is
    // read once per block rather than once per row.
    const ROWS: usize = 32;
    for first in (0..dim).step_by(ROWS) {
        let end = (first + ROWS).min(dim);
        for j in 0..end {
            for i in first.max(j)..end {
                let (row_i, row_j) = (&l[i * dim..i * dim + j], &l[j * dim..j * dim + j]);
                let s = l[i * dim + j] - full::dot(row_i, row_j);
                if i == j {
                    if !(s > 0.0 && s.is_finite()) {
                        return Ok(false);
                    }
                    l[i * dim + i] = s.sqrt();
                } else {
                    l[i * dim + j] = s / l[j * dim + j];
                }
            }
        }
    }
    Ok(true)
}

/// Asks the cache for the line holding `value`, so that its fetch overlaps other work.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch<T>(value: &T) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: a prefetch is only a hint; it never faults and reads nothing.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(value).cast()) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn prefetch<T>(_value: &T) {}
