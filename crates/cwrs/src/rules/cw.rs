//! Confidence-Weighted learning: CW (the variance form) and ExactCW ("CW-Stdev", the exact
//! convex form, whose covariance step SCW shares).

use super::normal::normal_quantile;
use super::scaling::{sqrt_sq_plus, unit_scale};
use super::{Build, Entry, Param, Range, Rule, Step, Weighted};

/// η, stored by the rules as φ = Φ⁻¹(η).
pub(super) const fn confidence(default: f64, doc: &'static str) -> Param {
    Param::new("eta", default, Range::CONFIDENCE, doc)
}

const CONFIDENCE_DOC: &str = "Confidence η: the rule asks P(y·w·x ≥ 0) ≥ η under w ~ N(μ, Σ).";

#[rustfmt::skip]
pub(super) const CW: Entry = Entry {
    weighted: Weighted::exact(
        "the step puts (μ, Σ) on the constraint m′ = φ·v′, after which a repetition adds nothing: the unweighted step for every h > 0",
    ),
    name: "CW", title: "Confidence-Weighted learning, variance form", second_order: true,
    reference: "Dredze, Crammer, Pereira, ICML 2008", params: &[confidence(0.7, CONFIDENCE_DOC)],
    summary: "Update when m < φ·v, φ = Φ⁻¹(eta): α = γ = [−(1+2φm) + √((1+2φm)² − \
              8φ(m − φv))]/(4φv), c = 2γφ.",
    build: Build::Classification(|v| Rule::CW { phi: normal_quantile(v[0]) }),
};

#[rustfmt::skip]
pub(super) const EXACT_CW: Entry = Entry {
    weighted: Weighted::exact(
        "the step puts (μ, Σ) on the constraint m′ = φ·√v′, after which a repetition adds nothing: the unweighted step for every h > 0",
    ),
    name: "ExactCW", second_order: true, params: &[confidence(0.7, CONFIDENCE_DOC)],
    title: "Exact convex Confidence-Weighted learning, \"CW-Stdev\"",
    reference: "Crammer, Dredze, Pereira, NIPS 2008",
    build: Build::Classification(|v| Rule::ExactCW { phi: normal_quantile(v[0]) }),
    summary: "Update when m < φ·√v, φ = Φ⁻¹(eta): α = max(0, [−mψ + √(m²φ⁴/4 + vφ²ζ)]/(vζ)) \
              with ψ = 1 + φ²/2, ζ = 1 + φ²; c = αφ/√u with u = ¼(−αvφ + √(α²v²φ² + 4v))².",
};

#[inline]
pub(super) fn variance_step(m: f64, v: f64, phi: f64) -> Option<Step> {
    (m < phi * v).then(|| {
        let alpha = cw_variance_alpha(m, v, phi);
        Step {
            alpha,
            c: 2.0 * alpha * phi,
        }
    })
}

#[inline]
pub(super) fn exact_step(m: f64, v: f64, phi: f64) -> Option<Step> {
    exact_cw_step(exact_cw_alpha(m, v, phi), v, phi)
}

/// CW (variance form): γ = [−(1+2φm) + √((1+2φm)² − 8φ(m − φv))] / (4φv), for m < φv.
/// When 1+2φm ≥ 0 the numerator is rationalised to avoid cancellation.
pub(super) fn cw_variance_alpha(m: f64, v: f64, phi: f64) -> f64 {
    let b = 1.0 + 2.0 * phi * m;
    let gap = phi * v - m; // > 0 when the rule fires
    let root = sqrt_sq_plus(b, 8.0 * phi * gap);
    if b >= 0.0 {
        let denominator = v * (b + root);
        if denominator.is_finite() {
            2.0 * gap / denominator
        } else {
            // v ~ 1e300: divide by v first (safeguard 5 of the module doc).
            2.0 * (gap / v) / (b + root)
        }
    } else {
        let denominator = 4.0 * phi * v;
        if denominator.is_finite() {
            (root - b) / denominator
        } else {
            (root - b) / (4.0 * phi) / v
        }
    }
}

/// ExactCW (CW-Stdev): α = max(0, [−mψ + √(m²φ⁴/4 + vφ²ζ)] / (vζ)), ψ = 1+φ²/2, ζ = 1+φ².
/// For m > 0 the numerator is rationalised: α = (vφ² − m²) / (v(mψ + √(…))). α(λm, λ²v) =
/// α(m, v)/λ, so it is evaluated with v scaled into [1, 4) by a power of two.
pub(super) fn exact_cw_alpha(m: f64, v: f64, phi: f64) -> f64 {
    let (s, _) = unit_scale(v);
    let (m, v) = (m * s, v * s * s);
    let phi2 = phi * phi;
    let psi = 1.0 + 0.5 * phi2;
    let zeta = 1.0 + phi2;
    let root = sqrt_sq_plus(0.5 * m * phi2, v * phi2 * zeta);
    let alpha = if m > 0.0 {
        (v * phi2 - m * m) / (v * (m * psi + root))
    } else {
        (root - m * psi) / (v * zeta)
    };
    // A NaN from an overflowing m² (m ≫ φ√v, where α = 0) becomes 0 here.
    alpha.max(0.0) * s
}

/// The ExactCW covariance step for a given α: c = αφ/√u with
/// √u = ½(−αvφ + √(α²v²φ² + 4v)) = 2v / (αvφ + √(α²v²φ² + 4v)) (cancellation-free form).
/// c(α/λ, λ²v) = c(α, v)/λ², so it is evaluated with v scaled into [1, 4) by a power of two
/// (λ = s, α/λ = α·inverse).
pub(super) fn exact_cw_step(alpha: f64, v: f64, phi: f64) -> Option<Step> {
    if alpha.is_nan() || alpha <= 0.0 {
        return None;
    }
    let (s, inverse) = unit_scale(v);
    let (scaled_alpha, v) = (alpha * inverse, v * s * s);
    let a = scaled_alpha * v * phi;
    let sqrt_u = 2.0 * v / (a + sqrt_sq_plus(a, 4.0 * v));
    Some(Step {
        alpha,
        c: scaled_alpha * phi / sqrt_u * (s * s),
    })
}
