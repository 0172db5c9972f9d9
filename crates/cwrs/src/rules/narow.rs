//! NAROW: Narrow Adaptive Regularization Of Weights, as the paper states it.

use super::{Build, Entry, Param, Range, Rule, Step, Weighted};

#[rustfmt::skip]
pub(super) const NAROW: Entry = Entry {
    weighted: Weighted::objective(
        "the row counted h times in NAROW's sums at the row's r_t: α = h(r_t − m)/(r_t + h·v), \
         c = h/r_t (α = h when r_t = ∞)",
    ),
    name: "NAROW", title: "Narrow Adaptive Regularization Of Weights",
    reference: "Orabona, Crammer, NIPS 2010", second_order: true,
    build: Build::Classification(|v| Rule::NAROW { b: v[0] }),
    params: &[Param::new("b", 1.0, Range::POSITIVE, "Threshold on the variance: the precision \
                                                     only grows on rows with v > 1/b.")],
    summary: "Update when m·r_t/(r_t + v) < 1, with r_t = v/(b·v − 1) when b·v > 1 (else \
              r_t = ∞): α = (r_t − m)/(r_t + v), c = 1/r_t (α = 1, c = 0 when r_t = ∞). This is \
              the paper's look-ahead prediction rewritten in μ; it is not AROW's step with a \
              variable r.",
};

#[inline]
pub(super) fn step(m: f64, v: f64, b: f64, h: f64) -> Option<Step> {
    // r_t = v/(bv − 1), written without r_t (safeguard 6 of the module doc).
    let excess = b.mul_add(v, -1.0);
    if excess > 0.0 {
        let bv = b * v;
        let c = excess / v;
        // The row counted h times in NAROW's sums: α = h(r_t − m)/(r_t + h·v), c = h/r_t, i.e.
        // h(1 − m·c)/(1 + h·v·c) with v·c = bv − 1 (bv itself at h = 1, the unweighted bits).
        let denominator = if h == 1.0 { bv } else { h.mul_add(excess, 1.0) };
        (m < bv).then(|| Step {
            alpha: h * (1.0 - m * c) / denominator,
            c: h * c,
        })
    } else {
        // r_t = ∞: the limit of the general case, a mean step with no precision gain.
        (m < 1.0).then_some(Step { alpha: h, c: 0.0 })
    }
}
