//! AROW: Adaptive Regularization of Weight vectors (the classification rule; its squared-loss
//! regression twin is in `rules/regression.rs` and shares [`l1_rate`]).

use super::{Build, Entry, Param, Range, Rule, Step, Weighted};

#[rustfmt::skip]
pub(super) const AROW: Entry = Entry {
    weighted: Weighted::exact(
        "recursive least squares while the hinge is active, and 1 − m′ = (1 − m)·r/(v + r) > 0 after a step: r → r/h, α = (1 − m)/(v + r/h), c = h/r",
    ),
    name: "AROW", title: "Adaptive Regularization of Weight vectors", second_order: true,
    summary: "Update when m < 1: α = (1 − m)/(v + r), c = 1/r.",
    reference: "Crammer, Kulesza, Dredze, NIPS 2009",
    build: Build::Classification(|v| Rule::AROW { r: v[0] }),
    params: &[Param::new("r", 1.0, Range::POSITIVE,
                         "Regularisation; larger r means smaller, more noise-tolerant steps.")],
};

#[inline]
pub(super) fn step(m: f64, v: f64, r: f64) -> Option<Step> {
    (m < 1.0).then(|| Step {
        alpha: (1.0 - m) / (v + r),
        c: 1.0 / r,
    })
}

/// The squared (hinge) loss: η_t = β_t/2 = 1/(2(v + r)).
#[inline]
pub(super) fn l1_rate(v: f64, r: f64) -> f64 {
    0.5 / (v + r)
}
