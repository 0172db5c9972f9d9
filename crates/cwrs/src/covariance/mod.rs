//! The covariance forms: how to compute v = xᵀΣx and Σx, and how to apply a precision increment
//! `c·x xᵀ`. Any rule runs with any form; the learning loop only talks to the [`Covariance`]
//! trait, and each form keeps its mean in the layout it works fastest with.
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
//!    max([`FULL_VARIANCE_FLOOR`], τ·Σ₀_jj), FULL_VARIANCE_FLOOR = 2⁻¹⁰²² ≈ 2.2e-308, the
//!    smallest normal float. The diagonal stays normal, so Σ cannot underflow into noise or 0,
//!    and the subnormal rounding of other entries and products (at most 2⁻¹⁰⁷⁵) stays within
//!    float64's precision of it; and a diagonal entry never shrinks within one block of
//!    pending terms to rounding noise of Σ₀_jj. The floor is no higher so that the form stays
//!    scale-equivariant (features ×s and a/s² give the same predictions) over the documented
//!    range: at features ~1e150 the learned variances are ~r·1e-300.
//! 5. **Cost**: the diagonals of Σ₀ and Σ are kept alongside (O(d) per update, refreshed at each
//!    fold), q is one O(d) pass per update, and the per-entry check of item 4 is skipped while
//!    every Σ_jj stands 2²⁰ above its floor and the step keeps 2⁻²⁰ of the variance along x
//!    (Σ' ⪰ (1 − βv)Σ then guarantees it). On `full_arow_dense/1000` this adds 0.7% to the
//!    instructions executed; batch and row-by-row learning still give the same bits, as the
//!    caps depend only on the sequence of updates.

mod adagrad;
#[cfg(test)]
pub(crate) mod cross_checks;
mod diagonal;
pub mod dual;
mod ftrl;
pub(crate) mod full;
mod gradient_sums;
mod identity;
pub mod kernel;
mod lowrank;
mod primal;

pub use adagrad::AdaGrad;
pub use diagonal::{Coordinate, Diagonal};
pub use ftrl::Ftrl;
pub use full::{Full, MAX_BLOCK};
pub use identity::Identity;
pub(crate) use lowrank::symmetric_eigen;
pub use lowrank::{LowRank, DEFAULT_RANK, MAX_RANK};
pub use primal::{Gaussian, Parts, PrimalForm};

use crate::data::{Features, Matrix, Row, Shape};
use crate::error::CwError;
use crate::learn::prior_estimate::FeatureMoments;
use crate::learn::sparse_l1::L1;
use crate::linalg::{cholesky_in_place, dot_by_fours};

/// The smallest variance a diagonal coordinate keeps: the smallest positive normal f64. Far
/// below anything ordinary data produces, it only stops an overflowing precision gain from
/// collapsing Σ_j to exactly 0 (which would freeze the coordinate and breed 0·∞ = NaN).
pub const VARIANCE_FLOOR: f64 = f64::MIN_POSITIVE;

/// Full form: the least fraction τ = 2⁻⁴⁰ ≈ 9.1e-13 of q = Σ_j Σ₀_jj x_j² that the variance
/// along x keeps after an update, and of Σ₀_jj that Σ_jj keeps (see the module doc).
pub const RELATIVE_VARIANCE_FLOOR: f64 = 1.0 / (1u64 << 40) as f64;

/// Full form: the smallest diagonal entry of Σ an update may leave, the smallest normal f64
/// (see the module doc).
pub const FULL_VARIANCE_FLOOR: f64 = f64::MIN_POSITIVE;

/// The mean step of a round is applied only if μ + step·Σx stays finite (else the round leaves
/// the model as it was): with |μ_j| ≤ f64::MAX, a step term below 2⁹⁷⁰ (half the spacing of
/// floats at f64::MAX) cannot round to infinity, so the forms check coordinates only past it.
pub const MEAN_STEP_LIMIT: f64 = f64::MAX / (1u64 << 54) as f64;

/// A model's per-coordinate `values` over `shape` with `new` features added after the old ones
/// (before the bias), each holding `fill`: how a feature never seen enters every
/// per-coordinate array (the mean, a diagonal, the bookkeeping of averaging and L1).
pub fn with_new_features(values: &[f64], shape: Shape, new: usize, fill: f64) -> Vec<f64> {
    let old = shape.n_features.min(values.len());
    let mut widened = Vec::with_capacity(values.len() + new);
    widened.extend_from_slice(&values[..old]);
    widened.resize(old + new, fill);
    widened.extend_from_slice(&values[old..]);
    widened
}

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

/// What one learning round does: μ ← μ + step·Σx, Σ⁻¹ ← Σ⁻¹ + c·x xᵀ, then the L1 threshold
/// of step scale `eta` (if the model has a penalty).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Update {
    /// The signed mean step, α·y for classification (α for regression): μ ← μ + step·Σx.
    pub step: f64,
    /// The precision increment c of Σ⁻¹ ← Σ⁻¹ + c·x xᵀ.
    pub c: f64,
    /// The step scale η_t of the L1 threshold (unused without a penalty).
    pub eta: f64,
}

/// One linear model's Gaussian over weights, in one representation, as the learning loop
/// ([`crate::learn::online::Online`]) sees it. A new covariance form is one type implementing this.
pub trait Covariance: Clone + std::fmt::Debug + PartialEq + Send + Sync {
    /// Input features a row has (rows are validated against it by the loop).
    fn n_features(&self) -> usize;

    /// Whether the model can learn (the dual form needs a kernel it can evaluate).
    fn check_learnable(&self) -> Result<(), CwError> {
        Ok(())
    }

    /// Learning path, step 1: μ·x after the row's pending L1 thresholds (the prediction
    /// path's μ·x for a form that keeps none).
    #[inline]
    fn learn_score(&mut self, row: Row) -> f64 {
        self.score(row)
    }

    /// Learning path, step 2, for the row last scored: (v = xᵀΣx, ‖x‖² as the rules see it);
    /// keeps what `update` needs (Σx).
    fn prepare(&mut self, row: Row) -> (f64, f64);

    /// μ ← μ + step·Σx, Σ⁻¹ ← Σ⁻¹ + c·x xᵀ for the row last prepared (v from prepare), then
    /// the L1 threshold of step scale `eta` if the model has a penalty.
    fn update(&mut self, row: Row, step: f64, c: f64, v: f64, eta: f64);

    /// Steps 1 and 2 at once (a form may fuse them into one pass over the row).
    #[inline]
    fn observe(&mut self, row: Row) -> Observation {
        let score = self.learn_score(row);
        let (variance, squared_norm) = self.prepare(row);
        Observation {
            score,
            variance,
            squared_norm,
        }
    }

    /// A hint that `row` is learned next (a form may start fetching what it touches).
    #[inline]
    fn prefetch(&self, _row: Row) {}

    /// A hint of the one-row protocol (multiclass rounds): `rows[0]` is prepared next and the
    /// others perhaps later, in order; an empty `rows` ends the learning call. A form may
    /// compute what `prepare` needs for several rows at once (the full form: Σ₀x for a block
    /// of rows in one pass over Σ₀), giving the same bits as row by row.
    #[inline]
    fn prepare_ahead(&mut self, _rows: &[Row]) {}

    /// Whether [`Covariance::prepare_ahead`] does anything (else callers need not look ahead).
    fn prepares_ahead(&self) -> bool {
        false
    }

    /// Single-model rounds over many rows: `decide(i, observation)` gives row i's [`Update`]
    /// or `None`. Default: the per-row protocol above, with a prefetch of the next row; the
    /// full form overrides it to block rows, the dual form to prepare the next row during the
    /// current update.
    fn learn_rows<'a>(
        &mut self,
        rows: impl Iterator<Item = (usize, Row<'a>)>,
        decide: impl FnMut(usize, Observation) -> Option<Update>,
    ) {
        learn_each(self, rows, decide);
    }

    /// Whether learning can fail midway (a custom kernel runs the user's code): the loop then
    /// keeps a copy of the learner to undo the call.
    fn can_fail(&self) -> bool {
        false
    }

    /// Mean steps skipped since the last call (cleared): rounds whose step μ + step·Σx would
    /// overflow and that left the model as it was (see [`MEAN_STEP_LIMIT`]), so the loop does
    /// not count them as updates. Required, as the three methods of the rules outside the
    /// template below: a form that forgot one would be silently wrong.
    fn take_skipped(&mut self) -> u64;

    /// The error that stopped learning, if any (cleared); rows after it were not learned.
    fn take_failure(&mut self) -> Option<CwError> {
        None
    }

    /// Prediction over the rows of a validated `x`: `each(i, μ·x_i, x_iᵀΣx_i)`, the variance
    /// only when `with_variance` (NaN otherwise). Default: row by row; the dual form asks a
    /// custom kernel once for the whole batch.
    fn predict_rows(
        &self,
        x: &Matrix,
        with_variance: bool,
        mut each: impl FnMut(usize, f64, f64),
    ) -> Result<(), CwError> {
        for i in 0..x.n_rows() {
            let row = x.row(i);
            let (score, variance) = if with_variance {
                self.moments(row)
            } else {
                (self.score(row), f64::NAN)
            };
            each(i, score, variance);
        }
        Ok(())
    }

    /// Prediction path: (μ·x, xᵀΣx).
    fn moments(&self, row: Row) -> (f64, f64);

    /// Prediction path: xᵀΣy for two validated rows, the covariance of their scores μ·x and
    /// μ·y, with the one-step-ahead process noise as in [`Covariance::moments`]: xᵀ(Σ + q·I)y
    /// (the bias feature counted as there). Symmetric in its rows; `cross_variance(x, x)` is
    /// `moments(x).1` up to rounding. Computed without forming Σ densely, and without
    /// allocating (but for a low-rank sketch of more than 128 rows, as its variance).
    /// `None` (default) for a form that keeps no Σ over the primal coordinates.
    fn cross_variance(&self, _a: Row, _b: Row) -> Option<f64> {
        None
    }

    /// [`Covariance::cross_variance`] of every pair i < j of `rows`, written at (i, j) and
    /// (j, i) of the n × n row-major `out` (the diagonal left as it is); `None`, and nothing
    /// written, for a form without one. Default: pair by pair; a form may share work between
    /// the pairs (the full form projects each row on its pending terms once), with the bits
    /// of [`Covariance::cross_variance`].
    fn cross_variances(&self, rows: &[Row], out: &mut [f64]) -> Option<()> {
        let n = rows.len();
        self.cross_variance(Row::Sparse32(&[], &[]), Row::Sparse32(&[], &[]))?;
        for i in 0..n {
            for j in i + 1..n {
                let c = self.cross_variance(rows[i], rows[j])?;
                (out[i * n + j], out[j * n + i]) = (c, c);
            }
        }
        Some(())
    }

    /// Prediction path: (s, s²·xᵀΣx) for the power of two s that brings the row's largest entry
    /// to [1, 2) ([`crate::data::Shape::at_unit_scale`]), where xᵀΣx itself over- or
    /// underflows. `None` where xᵀΣx is not a quadratic form in x (the kernel forms).
    fn unit_scale_variance(&self, row: Row) -> Option<(f64, f64)>;

    /// Prediction path: μ·x alone.
    fn score(&self, row: Row) -> f64;

    /// Numbers the model holds (what a copy costs: validate-ahead, interrupt restore).
    fn n_values(&self) -> usize;

    /// Applies any pending covariance terms, so that the stored covariance is Σ itself (the
    /// full form; a no-op for the others). Predictions do not change; later rounding may.
    fn fold(&mut self) {}

    /// The rank-one terms waiting apart from the covariance (the full form's pending terms,
    /// see `full/mod.rs`): the base Σ₀ + g·I they are folded into, row-major, and the terms, which
    /// a state keeps beside Σ so that its copy continues with the same bits; `None` when none
    /// wait.
    fn pending_terms(&self) -> Option<(Vec<f64>, &[f64])> {
        None
    }

    /// Restores [`Covariance::pending_terms`] in a model built from the same state's
    /// covariance (before its lazy noise), after checking that folding `terms` into `base`
    /// gives that covariance bit for bit. Default: refused, for a form that keeps none.
    fn restore_pending_terms(&mut self, _base: &[f64], _terms: &[f64]) -> Result<(), CwError> {
        Err(CwError::InvalidState(
            "entry \"pending_terms\" is only for a full covariance".into(),
        ))
    }

    /// ‖μ‖², for the rules outside the (α, c) template (docs/design.md §2.9). A form those
    /// rules never reach (refused when the learner is built) says so with `unreachable!`.
    fn mean_norm2(&self) -> f64;

    /// μ ← s·μ, for the rules outside the template (as for [`Covariance::mean_norm2`]).
    fn rescale_mean(&mut self, s: f64);

    /// Σ ← r·Σ, for the rules outside the template (IELLIP's; as for
    /// [`Covariance::mean_norm2`]).
    fn rescale_covariance(&mut self, r: f64);

    /// Averaged models ([`crate::learn::average`]): the length of the mean that
    /// [`Covariance::visit_mean`] indexes, or why this model's mean cannot be averaged exactly.
    fn averaged_len(&self) -> Result<usize, CwError>;

    /// Averaged models: `f(j, μ_j)` for every mean entry that learning `row` may move, in an
    /// order that depends on the row alone (the dual form: every ν_p, in order; learning may
    /// add one at the end).
    fn visit_mean(&self, row: Row, f: impl FnMut(usize, f64));

    /// Averaged models: x·values over the row's coordinates, `values` laid out as the mean (the
    /// dual form: Σ_p values_p·k(x_p, x) over the first values.len() support rows).
    fn dot_mean(&self, row: Row, values: &[f64]) -> f64;

    /// Process noise (docs/design.md §10): from now on Σ ← Σ + q·I at the start of every
    /// learning round (in [`Covariance::learn_score`], [`Covariance::observe`] or the form's
    /// own `learn_rows`), predictions seeing the noise of the rounds so far and of the next one
    /// (the one-step-ahead variance xᵀ(Σ + q·I)x, what the next row meets); q = 0 turns it
    /// off. Default: refused, for a form that has no exact way to do it.
    fn set_process_noise(&mut self, _q: f64) -> Result<(), CwError> {
        Err(no_process_noise())
    }

    /// The process noise applied lazily and not folded in (the diagonal form's clock, see
    /// `diagonal/mod.rs`): its [round, noise grown] and the stored variances σ̃ it offsets, which
    /// a state keeps so that its copy continues with the same bits; `None` when none runs.
    fn lazy_noise(&self) -> Option<([f64; 2], Vec<f64>)> {
        None
    }

    /// Restores [`Covariance::lazy_noise`] in a model built from the same state's variances
    /// (with its process noise set), after checking that they are those variances. Default:
    /// refused, for a form without a lazy clock.
    fn restore_lazy_noise(&mut self, _clock: [f64; 2], _stored: &[f64]) -> Result<(), CwError> {
        Err(CwError::InvalidState(
            "entry \"noise_clock\" is only for a diagonal covariance with process noise".into(),
        ))
    }

    /// Σ ← a·I, the mean kept (the reset of `process_noise="auto"`). Default: refused.
    fn reset_covariance(&mut self, _a: f64) -> Result<(), CwError> {
        Err(no_process_noise())
    }

    /// Σ ← Σ + g·I now, once (the estimated process noise of `process_noise="auto"`,
    /// docs/design.md §10.5), on top of any constant q. Default: refused.
    fn grow_covariance(&mut self, _g: f64) -> Result<(), CwError> {
        Err(no_process_noise())
    }

    /// AROW regression's learned prior (docs/design.md §3.14): the feature moments of the
    /// posterior whose prior precision on the feature coordinates (the bias excluded) is larger
    /// by `delta`, the information of the rows learned kept; the model is set to that
    /// posterior when `commit`. Default: `None`, for a form without an exact change of prior.
    fn reweigh_prior(&mut self, _delta: f64, _commit: bool) -> Option<FeatureMoments> {
        None
    }

    /// Prediction path: (μ·x, xᵀΣx, ‖x‖²), what the regressor's "auto" watches (docs/design.md
    /// §10.5), ‖x‖² counting the bias feature of a model that fits an intercept. Default: the
    /// moments and the row's own ‖x‖² (the forms with process noise, the only callers,
    /// override it: the diagonal form in one pass).
    fn watch(&self, row: Row) -> Observation {
        let (score, variance) = self.moments(row);
        Observation {
            score,
            variance,
            squared_norm: row.squared_norm(),
        }
    }
}

/// The sketch's rank of the low-rank form, if it is in [1, `MAX_RANK`].
pub(crate) fn check_rank(rank: usize) -> Result<usize, CwError> {
    match rank {
        1..=MAX_RANK => Ok(rank),
        _ => Err(CwError::InvalidParameter(format!(
            "rank must be an integer in [1, {MAX_RANK}], got {rank}"
        ))),
    }
}

/// The refusal of process noise with an L1 penalty (the lazy thresholds assume variances that
/// change only on the rows that touch them).
pub(crate) fn noise_with_l1() -> CwError {
    CwError::InvalidParameter("process_noise cannot be combined with an L1 penalty".into())
}

/// The refusal of a form without process noise.
pub(crate) fn no_process_noise() -> CwError {
    CwError::InvalidParameter(
        "process_noise needs a primal second-order model with covariance \"diag\" or \"full\""
            .into(),
    )
}

/// The [`Covariance`] methods of a form that keeps its mean as one dense `mean: Vec<f64>` over
/// the coordinates of `shape`, and counts the steps its overflow gate skipped in `skipped`:
/// identity, full and low-rank.
macro_rules! dense_mean_methods {
    () => {
        fn n_features(&self) -> usize {
            self.shape.n_features
        }

        #[inline]
        fn score(&self, row: Row) -> f64 {
            self.shape.features(row).dot(&self.mean)
        }

        fn take_skipped(&mut self) -> u64 {
            std::mem::take(&mut self.skipped)
        }

        /// O(d): the rules that read it update rarely (on mistakes or margin errors).
        fn mean_norm2(&self) -> f64 {
            self.mean.iter().map(|w| w * w).sum()
        }

        fn rescale_mean(&mut self, s: f64) {
            self.mean.iter_mut().for_each(|w| *w *= s);
        }

        fn averaged_len(&self) -> Result<usize, CwError> {
            Ok(self.mean.len())
        }

        fn dot_mean(&self, row: Row, values: &[f64]) -> f64 {
            self.shape.features(row).dot(values)
        }
    };
}
use dense_mean_methods;

/// The methods of the rules outside the template for a form those rules never reach (refused
/// when the learner is built): each says so, with `$why`, if it is ever called.
macro_rules! outside_template_unreachable {
    ($why:literal) => {
        fn mean_norm2(&self) -> f64 {
            unreachable!($why)
        }

        fn rescale_mean(&mut self, _s: f64) {
            unreachable!($why)
        }

        fn rescale_covariance(&mut self, _r: f64) {
            unreachable!($why)
        }
    };
}
use outside_template_unreachable;

/// [`Covariance::learn_rows`] row by row, with a prefetch of the next row.
pub(crate) fn learn_each<'a, C: Covariance>(
    model: &mut C,
    rows: impl Iterator<Item = (usize, Row<'a>)>,
    mut decide: impl FnMut(usize, Observation) -> Option<Update>,
) {
    let mut rows = rows.peekable();
    while let Some((i, row)) = rows.next() {
        if let Some(&(_, next)) = rows.peek() {
            model.prefetch(next);
        }
        let seen = model.observe(row);
        if let Some(u) = decide(i, seen) {
            model.update(row, u.step, u.c, seen.variance, u.eta);
        }
    }
}

/// Which covariance a learner keeps, with the form's parameters: the one place they are carried
/// (the rank from the configuration; AdaGrad's and FTRL's from the rule, set by
/// `objective::check_covariance`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CovarianceKind {
    /// Precision I/a + BᵀB, B a Frequent Directions sketch of 2·`rank` rows: O(rank·d) per
    /// update (docs/design.md §3.3).
    LowRank {
        /// k ≥ 1, the number of directions the sketch keeps.
        rank: usize,
    },
    /// Σ = I fixed: the first-order rules (Perceptron, PA).
    Identity,
    /// One variance per feature: the diagonal of the precision update, O(nnz) per example.
    Diagonal,
    /// Dense symmetric d×d, updated by Sherman–Morrison.
    Full,
    /// AdaGrad's per-coordinate gradient sums (docs/design.md §2.9): not a covariance, the
    /// state of the AdaGrad rule alone, with its η and δ.
    AdaGrad {
        /// The learning rate η > 0.
        eta: f64,
        /// The regulariser δ > 0 of H_j = δ + √G_j.
        delta: f64,
    },
    /// FTRL-Proximal's per-coordinate (z, n) (docs/design.md §2.9), for the FTRL rule alone,
    /// with its α, β, λ₁ and λ₂.
    Ftrl {
        /// The learning rate α > 0.
        alpha: f64,
        /// The smoothing β ≥ 0 of the per-coordinate rate α/(β + √n_j).
        beta: f64,
        /// The L1 strength λ₁ ≥ 0.
        l1: f64,
        /// The L2 strength λ₂ ≥ 0.
        l2: f64,
    },
}

impl CovarianceKind {
    /// The form of a configuration's name: `"identity"`, `"diag"`, `"full"`, `"adagrad"` or
    /// `"ftrl"` (the last two with their rule's default parameters; the low-rank form is built
    /// with its rank, [`CovarianceKind::LowRank`]).
    pub fn from_name(name: &str) -> Result<CovarianceKind, CwError> {
        match name {
            "identity" => Ok(CovarianceKind::Identity),
            "diag" => Ok(CovarianceKind::Diagonal),
            "full" => Ok(CovarianceKind::Full),
            "adagrad" => Ok(AdaGrad::KIND),
            "ftrl" => Ok(Ftrl::KIND),
            _ => Err(CwError::InvalidParameter(format!(
                "covariance must be \"diag\" or \"full\" (or \"lowrank\", with rank), got {name:?}"
            ))),
        }
    }

    /// The sketch's rank k of the low-rank form.
    pub fn rank(&self) -> Option<usize> {
        match self {
            CovarianceKind::LowRank { rank } => Some(*rank),
            _ => None,
        }
    }

    /// The form's name in a configuration, the inverse of [`CovarianceKind::from_name`]
    /// (`"lowrank"` for the low-rank form, whose rank is a separate entry).
    pub fn name(&self) -> &'static str {
        match self {
            CovarianceKind::Identity => "identity",
            CovarianceKind::Diagonal => "diag",
            CovarianceKind::Full => "full",
            CovarianceKind::LowRank { .. } => "lowrank",
            CovarianceKind::AdaGrad { .. } => "adagrad",
            CovarianceKind::Ftrl { .. } => "ftrl",
        }
    }

    /// Whether the form holds one rule's own state (AdaGrad's, FTRL's) rather than a
    /// covariance any rule of its order can use.
    pub fn is_rule_state(&self) -> bool {
        matches!(
            self,
            CovarianceKind::AdaGrad { .. } | CovarianceKind::Ftrl { .. }
        )
    }

    /// Whether `other` is the same form, whatever its parameters.
    pub fn same_form(&self, other: CovarianceKind) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(&other)
    }
}

/// Checks a restored mean: `dim` finite values, and a covariance of finite values.
fn check_finite_parts(dim: usize, mean: &[f64], covariance: &[f64]) -> Result<(), CwError> {
    if mean.len() != dim {
        return Err(CwError::InvalidInput(format!(
            "a mean must hold {dim} values, got {}",
            mean.len()
        )));
    }
    if mean.iter().any(|x| !x.is_finite()) {
        return Err(CwError::InvalidInput(
            "mean contains NaN or infinity".into(),
        ));
    }
    if covariance.iter().any(|x| !x.is_finite()) {
        return Err(CwError::InvalidInput(
            "covariance contains NaN or infinity".into(),
        ));
    }
    Ok(())
}

/// [`Covariance::averaged_len`] of a form whose mean has `len` entries and may have an L1
/// penalty: the lazy thresholds move a weight on the rows that do not touch it, which the
/// O(nnz) sums of an averaged model cannot follow.
fn averaged_len_without_l1(len: usize, l1: Option<&L1>) -> Result<usize, CwError> {
    match l1 {
        None => Ok(len),
        Some(_) => Err(average_with_l1()),
    }
}

/// The refusal of averaging with an L1 penalty.
pub(crate) fn average_with_l1() -> CwError {
    CwError::InvalidParameter("average cannot be combined with an L1 penalty".into())
}

/// The error for a restored covariance of the wrong length.
fn wrong_length(kind: CovarianceKind, dim: usize, expected: &str, got: usize) -> CwError {
    CwError::InvalidInput(format!(
        "a {} covariance over {dim} coordinates needs {expected}, got {got} values",
        kind.name()
    ))
}

/// The error for a restored covariance that no learning produces.
fn impossible(kind: CovarianceKind, what: &str) -> CwError {
    CwError::InvalidInput(format!("a {} covariance {what}", kind.name()))
}

/// Whether Σ = Σ₀ − Σ_k h_k h_kᵀ is positive definite, for a symmetric Σ₀ (`sigma`, row-major)
/// and the pending terms h_k (`pending`, `dim` values each): a Cholesky factorisation of its
/// lower triangle in a scratch copy, made before the model itself is allocated. The copy is
/// Σ scaled by a power of four t² (and h by t) that brings Σ₀'s largest diagonal entry to
/// [1, 4): exact, and the factor's products neither over- nor underflow where Σ is ~1e±300
/// (features ~1e∓150), as they would unscaled.
fn is_positive_definite(dim: usize, sigma: &[f64], pending: &[f64]) -> Result<bool, CwError> {
    let mut l = crate::error::zeros(Some(sigma.len()), || {
        format!("a check of a {dim}×{dim} covariance")
    })?;
    let largest = (0..dim).map(|i| sigma[i * dim + i]).fold(0.0, f64::max);
    let t = if largest >= f64::MIN_POSITIVE && largest.is_finite() {
        crate::data::unit_scale(largest.sqrt())
    } else {
        1.0
    };
    l.iter_mut().zip(sigma).for_each(|(l, &s)| *l = s * (t * t));
    for h in pending.chunks_exact(dim.max(1)) {
        for i in 0..dim {
            for j in 0..=i {
                l[i * dim + j] -= (t * h[i]) * (t * h[j]);
            }
        }
    }
    Ok(cholesky_in_place(&mut l, dim, dot_by_fours))
}

/// Asks the cache for `values[j]` of every feature j of `x`, a row that will be learned next
/// (see [`Covariance::prefetch`]), so that their fetch overlaps the current row's work.
#[inline(always)]
fn prefetch_each<T>(x: &Features, values: &[T]) {
    x.for_each(|j, _| {
        if let Some(value) = values.get(j) {
            prefetch(value);
        }
    });
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
