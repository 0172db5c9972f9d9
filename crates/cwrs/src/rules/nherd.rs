//! Normal Herding, the exact (full) covariance update.

use super::{Build, Entry, Param, Range, Rule, Step, Weighted};

#[rustfmt::skip]
pub(super) const NHERD: Entry = Entry {
    weighted: Weighted::objective(
        "the objective with its loss term times h: C → h·C",
    ),
    name: "NHERD", title: "Normal Herding, the exact (full) covariance update",
    reference: "Crammer, Lee, NIPS 2010", second_order: true,
    params: &[Param::new("C", 1.0, Range::POSITIVE, "Aggressiveness.")],
    summary: "Update when m < 1: α = (1 − m)/(v + 1/C), c = 2C + C²v, i.e. \
              Σ ← Σ − ΣxxᵀΣ·(2C + C²v)/(1 + Cv)².",
    build: Build::Classification(|v| Rule::NHERD { c: v[0] }),
};

#[inline]
pub(super) fn step(m: f64, v: f64, c: f64) -> Option<Step> {
    (m < 1.0).then(|| Step {
        alpha: (1.0 - m) / (v + 1.0 / c),
        c: 2.0 * c + c * c * v,
    })
}

/// The squared hinge, as AROW's with 1/C for r: η_t = 1/(2(v + 1/C)).
#[inline]
pub(super) fn l1_rate(v: f64, c: f64) -> f64 {
    0.5 / (v + 1.0 / c)
}
