//! FTRL-Proximal, per coordinate: the per-coordinate state lives in its form
//! (`crate::covariance::ftrl`).

use super::{Build, Entry, Loss, Param, Range, Rule, Step, Weighted};

#[rustfmt::skip]
pub(super) const FTRL: Entry = Entry {
    weighted: Weighted::objective(
        "the loss gradient of h·ℓ: g = −h·α·y·x, which z_j and n_j accumulate",
    ),
    name: "FTRL", title: "FTRL-Proximal, per-coordinate follow the regularised leader",
    reference: "McMahan et al., \"Ad click prediction: a view from the trenches\", KDD 2013",
    second_order: false,
    params: &[
        Param::new("alpha", 0.1, Range::POSITIVE, "The learning rate α of the per-coordinate \
                   rate α/(β + √n_j)."),
        Param::new("beta", 1.0, Range::NON_NEGATIVE, "The smoothing β of the per-coordinate rate."),
        Param::new("l1", 0.0, Range::NON_NEGATIVE, "The L1 strength λ₁ (exact zeros)."),
        Param::new("l2", 0.0, Range::NON_NEGATIVE, "The L2 strength λ₂."),
    ],
    summary: "Per-coordinate state (its own form, docs/design.md §2.9). Update when the loss \
              named by `loss` has a non-zero gradient: logistic ln(1 + e^−m), α = 1/(1 + e^m); \
              hinge max(0, 1 − m), α = 1 when m < 1; c = 0. With g_j = −α·y·x_j the form sets \
              σ_j = (√(n_j + g_j²) − √n_j)/alpha, z_j ← z_j + g_j − σ_j·w_j, n_j ← n_j + g_j², and \
              w_j = 0 if |z_j| ≤ l1, else −(z_j − sign(z_j)·l1)/((beta + √n_j)/alpha + l2) (the \
              paper's Algorithm 1, lazily: w_j is computed when read).",
    build: Build::Classification(|v| Rule::FTRL {
        alpha: v[0], beta: v[1], l1: v[2], l2: v[3], loss: Loss::Logistic,
    }),
};

#[inline]
pub(super) fn step(m: f64, loss: Loss) -> Option<Step> {
    let alpha = match loss {
        Loss::Hinge => (m < 1.0).then_some(1.0)?,
        Loss::Logistic => 1.0 / (1.0 + m.exp()),
        Loss::SquaredHinge => (m < 1.0).then_some(2.0 * (1.0 - m))?,
    };
    (alpha > 0.0).then_some(Step { alpha, c: 0.0 })
}
