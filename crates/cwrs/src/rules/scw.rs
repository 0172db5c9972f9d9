//! Soft Confidence-Weighted learning: SCW-I and SCW-II (ExactCW's covariance step with a soft
//! margin on α).

use super::cw::{confidence, exact_cw_alpha, exact_cw_step};
use super::normal::normal_quantile;
use super::scaling::{sqrt_sq_plus, unit_scale};
use super::{Build, Entry, Param, Range, Rule, Step, Weighted};

const REFERENCE: &str = "Wang, Zhao, Hoi, ICML 2012";

#[rustfmt::skip]
pub(super) const SCW1: Entry = Entry {
    weighted: Weighted::objective(
        "the objective with its loss term times h: C → h·C",
    ),
    name: "SCW1", title: "Soft Confidence-Weighted learning, SCW-I", reference: REFERENCE,
    second_order: true,
    params: &[Param::new("C", 1.0, Range::POSITIVE, "Aggressiveness, the cap on α."),
              confidence(0.75, "Confidence η.")],
    summary: "Update when m < φ·√v, φ = Φ⁻¹(eta): α = min(C, α_ExactCW); c as in ExactCW with \
              this α.",
    build: Build::Classification(|v| Rule::SCW1 { c: v[0], phi: normal_quantile(v[1]) }),
};

#[rustfmt::skip]
pub(super) const SCW2: Entry = Entry {
    weighted: Weighted::objective(
        "the objective with its loss term times h: C → h·C",
    ),
    name: "SCW2", reference: REFERENCE, title: "Soft Confidence-Weighted learning, SCW-II",
    build: Build::Classification(|v| Rule::SCW2 { c: v[0], phi: normal_quantile(v[1]) }),
    params: &[Param::new("C", 1.0, Range::POSITIVE, "Aggressiveness."),
              confidence(0.9, "Confidence η.")],
    summary: "Update when m < φ·√v, φ = Φ⁻¹(eta): α = max(0, [−(2mn + φ²mv) + γ]/(2(n² + \
              nvφ²))) with n = v + 1/(2C) and γ = φ√(φ²m²v² + 4nv(n + vφ²)); c as in ExactCW \
              with this α.",
    second_order: true,
};

#[inline]
pub(super) fn scw1_step(m: f64, v: f64, c: f64, phi: f64) -> Option<Step> {
    exact_cw_step(exact_cw_alpha(m, v, phi).min(c), v, phi)
}

#[inline]
pub(super) fn scw2_step(m: f64, v: f64, c: f64, phi: f64) -> Option<Step> {
    exact_cw_step(scw2_alpha(m, v, phi, c), v, phi)
}

/// SCW-II: α = max(0, [−(2mn + φ²mv) + γ] / (2(n² + nvφ²))), n = v + 1/(2C),
/// γ = φ√(φ²m²v² + 4nv(n + vφ²)). For m > 0 the numerator is rationalised:
/// α = 2(φ²v − m²) / (γ + m(2n + φ²v)). With n computed, α(λm, λ²v, λ²n) = α(m, v, n)/λ, so
/// it is evaluated with n scaled into [1, 4) by a power of two.
pub(super) fn scw2_alpha(m: f64, v: f64, phi: f64, c: f64) -> f64 {
    let n = v + 0.5 / c;
    let (s, _) = unit_scale(n);
    let (m, v, n) = (m * s, v * s * s, n * s * s);
    let phi2 = phi * phi;
    let gamma = phi * sqrt_sq_plus(phi * m * v, 4.0 * n * v * (n + v * phi2));
    let k = m * (2.0 * n + phi2 * v);
    let alpha = if m > 0.0 {
        2.0 * (phi2 * v - m * m) / (gamma + k)
    } else {
        (gamma - k) / (2.0 * n * (n + v * phi2))
    };
    alpha.max(0.0) * s
}
