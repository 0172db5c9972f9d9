//! The Second-Order Perceptron.

use super::{Build, Entry, Rule, Step, Weighted};

#[rustfmt::skip]
pub(super) const SOP: Entry = Entry {
    weighted: Weighted::objective(
        "the row counted h times in the sums (Σ⁻¹ += h·xxᵀ, Σ⁻¹μ += h·y·x): α = (1 − m)/(1/h + v), c = h",
    ),
    name: "SOP", title: "Second-Order Perceptron", second_order: true, params: &[],
    reference: "Cesa-Bianchi, Conconi, Gentile, SIAM J. Comput. 2005",
    summary: "Update when m ≤ 0 (a mistake; x xᵀ joins the correlation matrix): \
              α = (1 − m)/(1 + v), c = 1.",
    build: Build::Classification(|_| Rule::SOP),
};

#[inline]
pub(super) fn step(m: f64, v: f64, h: f64) -> Option<Step> {
    (m <= 0.0).then(|| Step {
        alpha: (1.0 - m) / (1.0 / h + v),
        c: h,
    })
}
