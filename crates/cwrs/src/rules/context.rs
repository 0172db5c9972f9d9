//! Rules outside the (α, c) template (docs/design.md §2.9): they read the round, the updates
//! so far or ‖μ‖² ([`Context`]), and may rescale the mean or the covariance ([`ScaledStep`]):
//!
//! ```text
//! μ ← s·μ + α·y·Σx          Σ ← r·(Σ⁻¹ + c·x xᵀ)⁻¹
//! ```

use super::Step;

/// What a rule outside the template reads besides (m, v, ‖x‖²).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Context {
    /// The round, from 1: rows learned before this one, plus one.
    pub round: u64,
    /// Rounds that updated the model before this one.
    pub updates: u64,
    /// ‖μ‖² before the round (NaN unless the rule asks for it: [`crate::rules::StepRule::needs_mean_norm`]).
    pub mean_norm2: f64,
    /// Whether a zero margin is a mistake: LIBOL predicts +1 at μ·x = 0, so for a negative
    /// label (and for the rival class of a multiclass round) it is, for a positive one not.
    pub zero_margin_mistake: bool,
}

impl Context {
    /// LIBOL's mistake: the prediction sign(μ·x), with sign(0) = +1, is not the label.
    #[inline]
    pub fn is_mistake(&self, m: f64) -> bool {
        m < 0.0 || (m == 0.0 && self.zero_margin_mistake)
    }
}

/// A step with the scales of the mean (`mean_scale`, s) and of the covariance
/// (`covariance_scale`, r) of the extended template.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScaledStep {
    /// The (α, c) of the template.
    pub step: Step,
    /// s, the factor of μ before the step is added (1 for the plain template).
    pub mean_scale: f64,
    /// r, the factor of the updated covariance (1 for the plain template).
    pub covariance_scale: f64,
}

impl ScaledStep {
    /// A step of the plain template (s = r = 1).
    #[inline]
    pub fn plain(step: Step) -> ScaledStep {
        ScaledStep {
            step,
            mean_scale: 1.0,
            covariance_scale: 1.0,
        }
    }

    /// The one check of the scales (safeguard 1 of the module doc of `crate::rules`): s finite
    /// (ROMMA's may be negative: the relaxed projection can turn μ around), r finite and
    /// positive, else no update.
    pub(super) fn checked(self) -> Option<ScaledStep> {
        let r = self.covariance_scale;
        (self.mean_scale.is_finite() && r.is_finite() && r > 0.0).then_some(self)
    }
}
