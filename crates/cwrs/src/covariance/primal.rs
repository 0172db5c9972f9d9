//! The primal Gaussian: one linear model over the features of a [`Shape`], in the covariance
//! form chosen at run time. Each form is one file implementing [`Covariance`] and
//! [`PrimalForm`]; the `primal_forms!` line at the end of this file lists them, and the macro
//! writes the enum and its dispatch (a new form is one file plus a name in that line).

use std::borrow::Cow;

use super::{
    check_finite_parts, AdaGrad, Covariance, CovarianceKind, Diagonal, Ftrl, Full, Identity,
    LowRank, Observation, Update,
};
use crate::data::{Row, Shape};
use crate::error::{check_memory, CwError};
use crate::learn::prior_estimate::FeatureMoments;
use crate::learn::sparse_l1::{needs_diagonal, L1};

/// A saved model as [`PrimalForm::from_parts`] takes it back: the form with its parameters, the
/// coordinates, [`PrimalForm::mean`] and [`PrimalForm::covariance_state`].
#[derive(Clone, Copy, Debug)]
pub struct Parts<'a> {
    /// The form, with its parameters.
    pub kind: CovarianceKind,
    /// The coordinates: the features and the bias, if any.
    pub shape: Shape,
    /// The mean, one weight per coordinate.
    pub mean: &'a [f64],
    /// The covariance values, as [`PrimalForm::covariance_state`] gives them.
    pub covariance: &'a [f64],
}

/// What the primal forms share beyond [`Covariance`]: construction, memory size and state.
pub trait PrimalForm: Covariance + Sized {
    /// The form (with its default parameters, for a form that has some: the model's own are
    /// in [`PrimalForm::kind`]).
    const KIND: CovarianceKind;

    /// The numbers one model of `kind` over `dim` coordinates holds (`None` if that
    /// overflows).
    fn size(kind: CovarianceKind, dim: usize) -> Option<usize>;

    /// What a model too large to allocate is called in the error, and advice on a smaller one.
    fn describe(dim: usize, classes: &str, each: &str) -> (String, &'static str) {
        let what = format!(
            "{classes}a {:?} model {each}over {dim} coordinates",
            Self::KIND.name()
        );
        (what, "")
    }

    /// μ = 0, Σ = a·I (`kind` gives the form's parameters).
    fn new(kind: CovarianceKind, shape: Shape, a: f64) -> Self;

    /// Rebuilds the model of `kind` from [`PrimalForm::mean`] and
    /// [`PrimalForm::covariance_state`] (a state may hold the form's parameters: the low-rank
    /// form's rank): checks that the values are finite, then the form's own checks.
    fn from_parts(
        kind: CovarianceKind,
        shape: Shape,
        mean: &[f64],
        covariance: &[f64],
    ) -> Result<Self, CwError> {
        check_finite_parts(shape.dim(), mean, covariance)?;
        Self::from_finite_parts(Parts {
            kind,
            shape,
            mean,
            covariance,
        })
    }

    /// [`PrimalForm::from_parts`] once its values are known to be finite, the mean `dim` of
    /// them: the form checks the rest (lengths, signs, symmetry).
    fn from_finite_parts(parts: Parts) -> Result<Self, CwError>;

    /// Replaces the moments by `mean` and `covariance` (as [`PrimalForm::covariance`] gives
    /// them, nothing pending), computed outside learning (a merge, docs/design.md §9): the
    /// model becomes what [`PrimalForm::from_parts`] builds from them with this model's options
    /// (L1 penalty, process noise) set, whatever it kept lazily restarted. Checks that the
    /// values are finite, then the form's own checks, except those the caller guarantees by
    /// construction where they cost more than computing the values (see each form).
    fn set_moments(&mut self, mean: &[f64], covariance: &[f64]) -> Result<(), CwError> {
        check_finite_parts(self.shape().dim(), mean, covariance)?;
        self.set_finite_moments(mean, covariance)
    }

    /// [`PrimalForm::set_moments`] once the values are known to be finite, the mean `dim` of
    /// them. Default: refused, for a form that keeps a rule's state rather than moments.
    fn set_finite_moments(&mut self, _mean: &[f64], _covariance: &[f64]) -> Result<(), CwError> {
        Err(CwError::InvalidParameter(format!(
            "{:?} models keep no moments to set",
            Self::KIND.name()
        )))
    }

    /// The model's form, with its parameters.
    fn kind(&self) -> CovarianceKind {
        Self::KIND
    }

    /// The model's coordinates.
    fn shape(&self) -> Shape;

    /// The stored mean (before pending L1 thresholds).
    fn mean(&self) -> Cow<'_, [f64]>;

    /// The mean with every pending L1 threshold applied: what predictions use.
    fn effective_mean(&self) -> Vec<f64> {
        self.mean().into_owned()
    }

    /// The covariance values: empty (identity), the variances (diagonal) or Σ row-major (full).
    fn covariance(&self) -> Cow<'_, [f64]>;

    /// Σ as a dense dim×dim row-major matrix (O(d²) memory: on request only); `None` for the
    /// forms that hold a rule's own state rather than a covariance (AdaGrad, FTRL).
    fn dense_covariance(&self) -> Option<Vec<f64>>;

    /// [`PrimalForm::covariance`] with `new` features added after the old ones (before the
    /// bias), each at the prior of a weight never seen: variance `a`, uncorrelated with the
    /// others; what a model created that wide holds for a feature no row has named.
    fn widened_covariance(&self, new: usize, a: f64) -> Vec<f64>;

    /// The covariance as [`PrimalForm::from_parts`] takes it back.
    fn covariance_state(&self) -> Cow<'_, [f64]> {
        self.covariance()
    }

    /// Adds sparse L1 training (docs/design.md §5); only the diagonal form supports it.
    fn with_l1(self, _l1: L1) -> Result<Self, CwError> {
        Err(needs_diagonal(Self::KIND))
    }

    /// The L1 penalty's state, if the form trains with one.
    fn l1(&self) -> Option<&L1> {
        None
    }

    /// The L1 penalty's lazy state, to be set (see [`L1::set_state`]).
    fn l1_mut(&mut self) -> Option<&mut L1> {
        None
    }
}

macro_rules! primal_forms {
    ($($form:ident),* $(,)?) => {
        /// A primal Gaussian N(μ, Σ) over weight vectors, in one of the covariance forms.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Gaussian {
            $(#[doc = concat!("The [`", stringify!($form), "`] form.")]
            $form($form),)*
        }

        impl Gaussian {
            /// Checks that `copies` Gaussians of `kind` over `dim` coordinates fit in memory,
            /// before [`Gaussian::new`] allocates them (an allocation failure would abort).
            pub fn check_size(
                kind: CovarianceKind,
                dim: usize,
                copies: usize,
            ) -> Result<(), CwError> {
                let (classes, each) = match copies {
                    1 => (String::new(), ""),
                    n => (format!("{n} classes of "), "each "),
                };
                let (size, (what, advice)) = match kind {
                    $(CovarianceKind::$form { .. } => {
                        ($form::size(kind, dim), $form::describe(dim, &classes, each))
                    })*
                };
                check_memory(size.and_then(|n| n.checked_mul(copies)), || what, advice)
            }

            /// μ = 0, Σ = a·I over the coordinates of `shape`.
            pub fn new(kind: CovarianceKind, shape: Shape, a: f64) -> Gaussian {
                match kind {
                    $(CovarianceKind::$form { .. } => {
                        Gaussian::$form($form::new(kind, shape, a))
                    })*
                }
            }

            /// Rebuilds a Gaussian from [`Gaussian::mean`] and [`Gaussian::covariance_state`],
            /// which must be of `kind` (with its parameters).
            pub fn from_parts(
                kind: CovarianceKind,
                shape: Shape,
                mean: &[f64],
                covariance: &[f64],
            ) -> Result<Gaussian, CwError> {
                let model = match kind {
                    $(CovarianceKind::$form { .. } => {
                        Gaussian::$form($form::from_parts(kind, shape, mean, covariance)?)
                    })*
                };
                if model.kind() != kind {
                    return Err(CwError::InvalidInput(format!(
                        "a covariance state of {:?} where {kind:?} was configured",
                        model.kind()
                    )));
                }
                Ok(model)
            }

            /// The model's form, with its parameters.
            pub fn kind(&self) -> CovarianceKind {
                match self {
                    $(Gaussian::$form(f) => f.kind(),)*
                }
            }

            /// The model's coordinates.
            pub fn shape(&self) -> Shape {
                match self {
                    $(Gaussian::$form(f) => f.shape(),)*
                }
            }

            /// Adds sparse L1 training (only the diagonal form supports it).
            pub fn with_l1(self, l1: L1) -> Result<Gaussian, CwError> {
                Ok(match self {
                    $(Gaussian::$form(f) => Gaussian::$form(f.with_l1(l1)?),)*
                })
            }

            /// The L1 penalty's state, if the model trains with one.
            pub fn l1(&self) -> Option<&L1> {
                match self {
                    $(Gaussian::$form(f) => f.l1(),)*
                }
            }

            /// See [`PrimalForm::l1_mut`].
            pub fn l1_mut(&mut self) -> Option<&mut L1> {
                match self {
                    $(Gaussian::$form(f) => f.l1_mut(),)*
                }
            }

            /// See [`PrimalForm::set_moments`].
            pub fn set_moments(&mut self, mean: &[f64], covariance: &[f64]) -> Result<(), CwError> {
                match self {
                    $(Gaussian::$form(f) => f.set_moments(mean, covariance),)*
                }
            }

            /// The stored mean (before pending L1 thresholds).
            pub fn mean(&self) -> Cow<'_, [f64]> {
                match self {
                    $(Gaussian::$form(f) => f.mean(),)*
                }
            }

            /// The mean with every pending L1 threshold applied: what predictions use.
            pub fn effective_mean(&self) -> Vec<f64> {
                match self {
                    $(Gaussian::$form(f) => f.effective_mean(),)*
                }
            }

            /// The covariance values: empty (identity), the variances (diagonal) or Σ
            /// row-major (full).
            pub fn covariance(&self) -> Cow<'_, [f64]> {
                match self {
                    $(Gaussian::$form(f) => f.covariance(),)*
                }
            }

            /// See [`PrimalForm::widened_covariance`].
            pub fn widened_covariance(&self, new: usize, a: f64) -> Vec<f64> {
                match self {
                    $(Gaussian::$form(f) => f.widened_covariance(new, a),)*
                }
            }

            /// Σ as a dense dim×dim row-major matrix (`None` for AdaGrad's and FTRL's state).
            pub fn dense_covariance(&self) -> Option<Vec<f64>> {
                match self {
                    $(Gaussian::$form(f) => f.dense_covariance(),)*
                }
            }

            /// The covariance as [`Gaussian::from_parts`] takes it back (for the full form,
            /// Σ₀ then its pending rank-one terms).
            pub fn covariance_state(&self) -> Cow<'_, [f64]> {
                match self {
                    $(Gaussian::$form(f) => f.covariance_state(),)*
                }
            }
        }

        impl Covariance for Gaussian {
            fn n_features(&self) -> usize {
                match self {
                    $(Gaussian::$form(f) => f.n_features(),)*
                }
            }

            #[inline]
            fn learn_score(&mut self, row: Row) -> f64 {
                match self {
                    $(Gaussian::$form(f) => f.learn_score(row),)*
                }
            }

            #[inline]
            fn prepare(&mut self, row: Row) -> (f64, f64) {
                match self {
                    $(Gaussian::$form(f) => f.prepare(row),)*
                }
            }

            #[inline]
            fn update(&mut self, row: Row, step: f64, c: f64, v: f64, eta: f64) {
                match self {
                    $(Gaussian::$form(f) => f.update(row, step, c, v, eta),)*
                }
            }

            #[inline]
            fn observe(&mut self, row: Row) -> Observation {
                match self {
                    $(Gaussian::$form(f) => f.observe(row),)*
                }
            }

            #[inline]
            fn prefetch(&self, row: Row) {
                match self {
                    $(Gaussian::$form(f) => f.prefetch(row),)*
                }
            }

            #[inline]
            fn prepare_ahead(&mut self, rows: &[Row]) {
                match self {
                    $(Gaussian::$form(f) => f.prepare_ahead(rows),)*
                }
            }

            fn prepares_ahead(&self) -> bool {
                match self {
                    $(Gaussian::$form(f) => f.prepares_ahead(),)*
                }
            }

            /// Dispatches once per call, so each form runs its own monomorphised loop.
            fn learn_rows<'a>(
                &mut self,
                rows: impl Iterator<Item = (usize, Row<'a>)>,
                decide: impl FnMut(usize, Observation) -> Option<Update>,
            ) {
                match self {
                    $(Gaussian::$form(f) => f.learn_rows(rows, decide),)*
                }
            }

            #[inline]
            fn moments(&self, row: Row) -> (f64, f64) {
                match self {
                    $(Gaussian::$form(f) => f.moments(row),)*
                }
            }

            fn unit_scale_variance(&self, row: Row) -> Option<(f64, f64)> {
                match self {
                    $(Gaussian::$form(f) => f.unit_scale_variance(row),)*
                }
            }

            fn cross_variance(&self, a: Row, b: Row) -> Option<f64> {
                match self {
                    $(Gaussian::$form(f) => f.cross_variance(a, b),)*
                }
            }

            fn cross_variances(&self, rows: &[Row], out: &mut [f64]) -> Option<()> {
                match self {
                    $(Gaussian::$form(f) => f.cross_variances(rows, out),)*
                }
            }

            #[inline]
            fn score(&self, row: Row) -> f64 {
                match self {
                    $(Gaussian::$form(f) => f.score(row),)*
                }
            }

            fn n_values(&self) -> usize {
                match self {
                    $(Gaussian::$form(f) => f.n_values(),)*
                }
            }

            fn fold(&mut self) {
                match self {
                    $(Gaussian::$form(f) => f.fold(),)*
                }
            }

            fn pending_terms(&self) -> Option<(Vec<f64>, &[f64])> {
                match self {
                    $(Gaussian::$form(f) => f.pending_terms(),)*
                }
            }

            fn restore_pending_terms(&mut self, base: &[f64], terms: &[f64]) -> Result<(), CwError> {
                match self {
                    $(Gaussian::$form(f) => f.restore_pending_terms(base, terms),)*
                }
            }

            fn take_skipped(&mut self) -> u64 {
                match self {
                    $(Gaussian::$form(f) => f.take_skipped(),)*
                }
            }

            fn mean_norm2(&self) -> f64 {
                match self {
                    $(Gaussian::$form(f) => f.mean_norm2(),)*
                }
            }

            fn rescale_mean(&mut self, s: f64) {
                match self {
                    $(Gaussian::$form(f) => f.rescale_mean(s),)*
                }
            }

            fn rescale_covariance(&mut self, r: f64) {
                match self {
                    $(Gaussian::$form(f) => f.rescale_covariance(r),)*
                }
            }

            fn averaged_len(&self) -> Result<usize, CwError> {
                match self {
                    $(Gaussian::$form(f) => f.averaged_len(),)*
                }
            }

            #[inline]
            fn visit_mean(&self, row: Row, visit: impl FnMut(usize, f64)) {
                match self {
                    $(Gaussian::$form(f) => f.visit_mean(row, visit),)*
                }
            }

            #[inline]
            fn dot_mean(&self, row: Row, values: &[f64]) -> f64 {
                match self {
                    $(Gaussian::$form(f) => f.dot_mean(row, values),)*
                }
            }

            fn set_process_noise(&mut self, q: f64) -> Result<(), CwError> {
                match self {
                    $(Gaussian::$form(f) => f.set_process_noise(q),)*
                }
            }

            fn lazy_noise(&self) -> Option<([f64; 2], Vec<f64>)> {
                match self {
                    $(Gaussian::$form(f) => f.lazy_noise(),)*
                }
            }

            fn restore_lazy_noise(&mut self, clock: [f64; 2], stored: &[f64]) -> Result<(), CwError> {
                match self {
                    $(Gaussian::$form(f) => f.restore_lazy_noise(clock, stored),)*
                }
            }

            fn reset_covariance(&mut self, a: f64) -> Result<(), CwError> {
                match self {
                    $(Gaussian::$form(f) => f.reset_covariance(a),)*
                }
            }

            fn grow_covariance(&mut self, g: f64) -> Result<(), CwError> {
                match self {
                    $(Gaussian::$form(f) => f.grow_covariance(g),)*
                }
            }

            fn reweigh_prior(&mut self, delta: f64, commit: bool) -> Option<FeatureMoments> {
                match self {
                    $(Gaussian::$form(f) => f.reweigh_prior(delta, commit),)*
                }
            }

            fn watch(&self, row: Row) -> Observation {
                match self {
                    $(Gaussian::$form(f) => f.watch(row),)*
                }
            }
        }
    };
}

primal_forms!(Identity, Diagonal, Full, LowRank, AdaGrad, Ftrl);
