//! AdaGrad, diagonal, on the hinge loss: the per-coordinate step lives in its form
//! (`crate::covariance::adagrad`).

use super::{Build, Entry, Param, Range, Rule, Step, Weighted};

#[rustfmt::skip]
pub(super) const ADAGRAD: Entry = Entry {
    weighted: Weighted::objective(
        "the loss gradient of h·ℓ: g = −h·y·x, which G_j accumulates",
    ),
    name: "AdaGrad", title: "AdaGrad, adaptive subgradient methods (diagonal)",
    reference: "Duchi, Hazan, Singer, JMLR 2011", second_order: false,
    params: &[
        Param::new("eta", 1.0, Range::POSITIVE, "The learning rate η."),
        Param::new("delta", 1.0, Range::POSITIVE,
                   "The regulariser δ of H_j = δ + √G_j (δ > 0 bounds the first steps)."),
    ],
    summary: "Per-coordinate steps (its own form, docs/design.md §2.9). Update when m < 1 (the \
              hinge loss is positive): α = 1 (the loss gradient −y·x), c = 0; the form adds \
              x_j² to G_j, then μ_j ← μ_j + η·y·x_j/(δ + √G_j) (the composite mirror descent \
              update with ψ_t = ⟨w, H_t w⟩/2, H_t = δI + diag(G_t)^½).",
    build: Build::Classification(|v| Rule::AdaGrad { eta: v[0], delta: v[1] }),
};

#[inline]
pub(super) fn step(m: f64) -> Option<Step> {
    (m < 1.0).then_some(Step { alpha: 1.0, c: 0.0 })
}
