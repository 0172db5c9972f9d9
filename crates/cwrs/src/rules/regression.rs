//! The regression rules: AROW with the squared loss (recursive least squares) and
//! ε-insensitive Passive-Aggressive regression (PA, PA-I, PA-II). Their steps are signed:
//! μ ← μ + α·Σx on the residual e = y − μ·x.

use super::pa::pa2_alpha;
use super::{Build, Entry, Param, Range, RegressionRule, Step, Weighted};

const PA_REFERENCE: &str = "Crammer, Dekel, Keshet, Shalev-Shwartz, Singer, JMLR 2006";
const EPSILON: Param = Param::new(
    "epsilon",
    0.1,
    Range::NON_NEGATIVE,
    "Half-width of the insensitive tube.",
);

#[rustfmt::skip]
pub(super) const AROW: Entry = Entry {
    weighted: Weighted::exact(
        "recursive least squares: k presentations add k·xxᵀ/r and k·y·x/r, one step with r/k: r → r/h, α = e/(v + r/h), c = h/r",
    ),
    name: "AROW", title: "AROW regression = recursive least squares", second_order: true,
    reference: "Crammer, Kulesza, Dredze, NIPS 2009",
    params: &[Param::new("r", 1.0, Range::POSITIVE, "Noise variance.")],
    summary: "Every row: α = e/(v + r), c = 1/r, i.e. μ ← μ + (y − μ·x)/(r + xᵀΣx)·Σx and \
              Σ⁻¹ ← Σ⁻¹ + x xᵀ/r.",
    build: Build::Regression(|v| RegressionRule::AROW { r: v[0] }),
};

#[rustfmt::skip]
pub(super) const PA: Entry = Entry {
    weighted: Weighted::exact(
        "the step reaches |e′| = ε, after which a repetition adds nothing: the unweighted step for every h > 0",
    ),
    name: "PA", title: "ε-insensitive Passive-Aggressive regression", reference: PA_REFERENCE,
    second_order: false, params: &[EPSILON],
    build: Build::Regression(|v| RegressionRule::PA { epsilon: v[0] }),
    summary: "First order (Σ = I). Update when |e| > ε: α = sign(e)·ℓ/‖x‖² with ℓ = |e| − ε.",
};

#[rustfmt::skip]
pub(super) const PA1: Entry = Entry {
    weighted: Weighted::exact(
        "steps of C until the loss is used up: α = sign(e)·min(h·C, ℓ/‖x‖²)",
    ),
    name: "PA1", title: "PA-I regression, the PA step capped at C", reference: PA_REFERENCE,
    params: &[EPSILON, Param::new("C", 1.0, Range::POSITIVE, "Aggressiveness, the cap on |α|.")],
    build: Build::Regression(|v| RegressionRule::PA1 { epsilon: v[0], c: v[1] }),
    second_order: false,
    summary: "First order (Σ = I). Update when |e| > ε: α = sign(e)·min(C, ℓ/‖x‖²), ℓ = |e| − ε.",
};

#[rustfmt::skip]
pub(super) const PA2: Entry = Entry {
    weighted: Weighted::exact(
        "each presentation multiplies the loss by ρ = 1/(1 + 2C‖x‖²): α = sign(e)·(ℓ/‖x‖²)·(1 − ρ^h)",
    ),
    name: "PA2", second_order: false, title: "PA-II regression", reference: PA_REFERENCE,
    summary: "First order (Σ = I). Update when |e| > ε: α = sign(e)·ℓ/(‖x‖² + 1/(2C)), \
              ℓ = |e| − ε.",
    params: &[EPSILON, Param::new("C", 1.0, Range::POSITIVE, "Aggressiveness.")],
    build: Build::Regression(|v| RegressionRule::PA2 { epsilon: v[0], c: v[1] }),
};

#[inline]
pub(super) fn arow_step(e: f64, v: f64, r: f64) -> Option<Step> {
    Some(Step {
        alpha: e / (v + r),
        c: 1.0 / r,
    })
}

/// The ε-insensitive loss ℓ = |e| − ε, when positive.
#[inline]
fn loss(e: f64, epsilon: f64) -> Option<f64> {
    Some(e.abs() - epsilon).filter(|&l| l > 0.0)
}

/// A first-order step of size `alpha` towards the residual's sign.
#[inline]
fn signed(alpha: f64, e: f64) -> Step {
    Step {
        alpha: alpha.copysign(e),
        c: 0.0,
    }
}

#[inline]
pub(super) fn pa_step(e: f64, norm2: f64, epsilon: f64) -> Option<Step> {
    loss(e, epsilon).map(|l| signed(l / norm2, e))
}

#[inline]
pub(super) fn pa1_step(e: f64, norm2: f64, epsilon: f64, c: f64) -> Option<Step> {
    loss(e, epsilon).map(|l| signed(c.min(l / norm2), e))
}

#[inline]
pub(super) fn pa2_step(e: f64, norm2: f64, epsilon: f64, c: f64, h: f64) -> Option<Step> {
    loss(e, epsilon).map(|l| signed(pa2_alpha(l, norm2, c, h), e))
}
