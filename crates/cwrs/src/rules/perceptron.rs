//! The Perceptron: a unit step on every mistake.

use super::{Build, Entry, Rule, Step, Weighted};

#[rustfmt::skip]
pub(super) const PERCEPTRON: Entry = Entry {
    weighted: Weighted::objective(
        "the step of the loss h·ℓ: α = h (μ ← μ + h·y·x on a mistake)",
    ),
    name: "Perceptron", title: "The Perceptron", second_order: false, params: &[],
    reference: "Rosenblatt, Psychological Review, 1958",
    build: Build::Classification(|_| Rule::Perceptron),
    summary: "First order (Σ = I). Update when m ≤ 0 (a mistake): α = 1, c = 0, i.e. μ ← μ + y·x.",
};

#[inline]
pub(super) fn step(m: f64, h: f64) -> Option<Step> {
    (m <= 0.0).then_some(Step { alpha: h, c: 0.0 })
}
