//! Online gradient descent with the step η/√t (first order, Σ = I).

use super::context::Context;
use super::{Build, Entry, Param, Range, Rule, Step, Weighted};

use crate::error::CwError;

/// The loss OGD descends: a configuration entry of its own (`loss`, a name), not a number of
/// the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// The hinge loss max(0, 1 − m).
    Hinge,
    /// The logistic loss ln(1 + e^−m).
    Logistic,
    /// The squared hinge loss max(0, 1 − m)².
    SquaredHinge,
}

impl Loss {
    /// The loss of a configuration's name: `"hinge"`, `"logistic"` or `"squared_hinge"`.
    pub fn from_name(name: &str) -> Result<Loss, CwError> {
        match name {
            "hinge" => Ok(Loss::Hinge),
            "logistic" => Ok(Loss::Logistic),
            "squared_hinge" => Ok(Loss::SquaredHinge),
            _ => Err(CwError::InvalidParameter(format!(
                "loss must be \"hinge\", \"logistic\" or \"squared_hinge\", got {name:?}"
            ))),
        }
    }

    /// The loss's name in a configuration, the inverse of [`Loss::from_name`].
    pub fn name(self) -> &'static str {
        match self {
            Loss::Hinge => "hinge",
            Loss::Logistic => "logistic",
            Loss::SquaredHinge => "squared_hinge",
        }
    }
}

#[rustfmt::skip]
pub(super) const OGD: Entry = Entry {
    weighted: Weighted::objective(
        "the gradient step of the loss h·ℓ: α = h·η_t·ℓ′",
    ),
    name: "OGD", title: "Online Gradient Descent", second_order: false,
    reference: "Zinkevich, ICML 2003",
    params: &[Param::new("eta", 1.0, Range::POSITIVE, "The learning rate: round t steps eta/√t.")],
    summary: "First order (Σ = I). Update when the loss named by `loss` is positive, with \
              η_t = eta/√t at round t (every row counts): hinge max(0, 1 − m), α = η_t; \
              logistic ln(1 + e^−m) (positive in float64), α = η_t/(1 + e^m); squared hinge \
              max(0, 1 − m)², α = 2η_t(1 − m); c = 0 (LIBOL's OGD.m for hinge and logistic).",
    build: Build::Classification(|v| Rule::OGD { eta: v[0], loss: Loss::Hinge }),
};

#[inline]
pub(super) fn step(m: f64, eta: f64, loss: Loss, context: &Context) -> Option<Step> {
    let rate = eta / (context.round as f64).sqrt();
    let gradient = match loss {
        Loss::Hinge => (m < 1.0).then_some(1.0)?,
        // As LIBOL: the update is skipped where the loss rounds to 0.
        Loss::Logistic => ((1.0 + (-m).exp()).ln() > 0.0).then(|| 1.0 / (1.0 + m.exp()))?,
        Loss::SquaredHinge => (m < 1.0).then_some(2.0 * (1.0 - m))?,
    };
    Some(Step {
        alpha: rate * gradient,
        c: 0.0,
    })
}
