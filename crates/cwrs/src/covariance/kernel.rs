//! Kernel functions of the dual form ([`crate::covariance::dual`]): the built-in ones, evaluated
//! from inner products and norms, and custom ones evaluated by the caller's code (a Python
//! callable) through [`KernelFunction`], so that one learning loop drives both.

use std::sync::Arc;

use crate::data::Matrix;
use crate::error::CwError;
use crate::linalg::simd::rbf_in_place;

/// A kernel k(x, z) that the crate cannot evaluate itself (a Python callable): it is asked for
/// the values of whole row sets at once. The row sets are [`Matrix`] views, dense or CSR, each
/// row `n_features` wide.
pub trait KernelFunction: Send + Sync + std::fmt::Debug {
    /// `out[i·m + p]` = k(rows_i, support_p) for the n rows and m support rows (`out` holds
    /// n·m values).
    fn evaluate(&self, rows: &Matrix, support: &Matrix, out: &mut [f64]) -> Result<(), CwError>;

    /// `out[i]` = k(rows_i, rows_i), which must be ≥ 0 (a positive-definite kernel).
    fn diagonal(&self, rows: &Matrix, out: &mut [f64]) -> Result<(), CwError>;
}

/// A positive-definite kernel: one of scikit-learn's pairwise kernels, or a custom one.
#[derive(Clone, Debug)]
pub enum Kernel {
    /// k(x, z) = x·z.
    Linear,
    /// k(x, z) = exp(−γ‖x − z‖²).
    Rbf {
        /// γ > 0, the inverse width.
        gamma: f64,
    },
    /// k(x, z) = (γ·x·z + coef0)^degree.
    Poly {
        /// The scale γ > 0 of x·z.
        gamma: f64,
        /// The degree, from 1 to [`MAX_DEGREE`].
        degree: u32,
        /// The constant coef0 ≥ 0 added to γ·x·z.
        coef0: f64,
    },
    /// Values from the caller's code; two custom kernels are equal when they are the same one.
    Custom(Arc<dyn KernelFunction>),
}

impl PartialEq for Kernel {
    fn eq(&self, other: &Kernel) -> bool {
        match (self, other) {
            (Kernel::Linear, Kernel::Linear) => true,
            (Kernel::Rbf { gamma: a }, Kernel::Rbf { gamma: b }) => a == b,
            (
                Kernel::Poly {
                    gamma,
                    degree,
                    coef0,
                },
                Kernel::Poly {
                    gamma: g,
                    degree: d,
                    coef0: c,
                },
            ) => (gamma, degree, coef0) == (g, d, c),
            (Kernel::Custom(a), Kernel::Custom(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// The largest poly kernel degree: `powi` takes an i32.
pub const MAX_DEGREE: u32 = i32::MAX as u32;

impl Kernel {
    /// The built-in kernel `"linear"`, `"rbf"` or `"poly"`, with the parameters it reads
    /// checked (the others are ignored).
    pub fn from_name(name: &str, gamma: f64, degree: u32, coef0: f64) -> Result<Kernel, CwError> {
        let check_gamma = || {
            if gamma.is_finite() && gamma > 0.0 {
                Ok(gamma)
            } else {
                Err(CwError::InvalidParameter(format!(
                    "gamma must be a positive finite number, got {gamma}"
                )))
            }
        };
        match name {
            "linear" => Ok(Kernel::Linear),
            "rbf" => Ok(Kernel::Rbf {
                gamma: check_gamma()?,
            }),
            "poly" => {
                if degree == 0 || degree > MAX_DEGREE || !coef0.is_finite() || coef0 < 0.0 {
                    return Err(CwError::InvalidParameter(format!(
                        "poly kernel needs a degree in [1, {MAX_DEGREE}] and a finite coef0 >= \
                         0, got degree {degree}, coef0 {coef0}"
                    )));
                }
                Ok(Kernel::Poly {
                    gamma: check_gamma()?,
                    degree,
                    coef0,
                })
            }
            _ => Err(CwError::InvalidParameter(format!(
                "kernel must be \"linear\", \"rbf\" or \"poly\", got {name:?}"
            ))),
        }
    }

    /// The built-in kernel's name; `None` for a custom one.
    pub fn name(&self) -> Option<&'static str> {
        match self {
            Kernel::Linear => Some("linear"),
            Kernel::Rbf { .. } => Some("rbf"),
            Kernel::Poly { .. } => Some("poly"),
            Kernel::Custom(_) => None,
        }
    }

    /// k(x, x) from ‖x‖²: exactly 1 for the RBF kernel, even where ‖x‖² overflows.
    #[inline]
    pub(crate) fn self_similarity(&self, xx: f64) -> f64 {
        match *self {
            Kernel::Rbf { .. } => 1.0,
            _ => {
                let mut k = [xx];
                self.values(xx, &[xx], &mut k);
                k[0]
            }
        }
    }

    /// k_p ← k(x, z_p) for a row of values at once, from k_p = x·z_p, ‖x‖² = `xx` and the
    /// squared norms ‖z_p‖² in `zz` (a built-in kernel: the dual form evaluates a custom one by
    /// rows). The RBF kernel's values are computed in the widest vector build
    /// ([`rbf_in_place`], with the crate's own exp): learning, one-row and blocked prediction
    /// give the same bits.
    pub(crate) fn values(&self, xx: f64, zz: &[f64], k: &mut [f64]) {
        match *self {
            Kernel::Linear => {}
            Kernel::Rbf { gamma } => rbf_in_place(k, xx, zz, gamma),
            Kernel::Poly {
                gamma,
                degree,
                coef0,
            } => {
                for k in k.iter_mut() {
                    *k = (gamma * *k + coef0).powi(degree as i32);
                }
            }
            Kernel::Custom(_) => unreachable!("a custom kernel is evaluated by rows"),
        }
    }
}

/// k_p ← exp(−γ‖x − z_p‖²) from k_p = x·z_p, ‖x‖² = `xx` and ‖z_p‖² = `zz[p]`: the distance
/// from the inner product and the norms, then the crate's exp over the row. Inlined into each
/// vector build of [`crate::linalg::simd::rbf_in_place`], where both loops vectorize.
#[inline(always)]
pub(crate) fn rbf_in_place_portable(k: &mut [f64], xx: f64, zz: &[f64], gamma: f64) {
    for (k, &zz) in k.iter_mut().zip(zz) {
        let distance = xx + zz - 2.0 * *k;
        // ∞ − ∞: one norm overflowed (the other, a support row's, cannot), so x and z are
        // infinitely far apart.
        *k = if distance.is_nan() {
            f64::NEG_INFINITY
        } else {
            -gamma * distance.max(0.0)
        };
    }
    crate::linalg::exp::exp_in_place_portable(k);
}
