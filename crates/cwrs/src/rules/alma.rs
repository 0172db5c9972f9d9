//! The approximate large margin algorithm, ALMA (first order).

use super::context::{Context, ScaledStep};
use super::{Build, Entry, Param, Range, Rule, Step, Weighted};

#[rustfmt::skip]
pub(super) const ALMA: Entry = Entry {
    weighted: Weighted::objective(
        "the step of the loss h·ℓ: η_k → h·η_k, then the projection onto the unit ball",
    ),
    name: "ALMA", title: "ALMA, a new approximate maximal margin classification algorithm",
    reference: "Gentile, JMLR 2001", second_order: false,
    params: &[
        Param::new("alpha", 0.9, Range { low: 0.0, high: 1.0, low_open: true, high_open: false },
                   "The margin's approximation: the target margin is (1 − alpha)·γ_k."),
        Param::new("p", 2.0, Range { low: 2.0, high: f64::INFINITY, low_open: false,
                                     high_open: true },
                   "The norm's order as LIBOL's ALMA.m takes it: only through √(p − 1) in \
                    γ_k and η_k, the norms staying Euclidean. The paper's ALMA_p for p ≠ 2 also \
                    maps the weights through the p-norm link function, which cwrs does not: \
                    p = 2 alone is the paper's algorithm (ALMA₂)."),
        Param::new("C", std::f64::consts::SQRT_2, Range::POSITIVE,
                   "The step scale: η_k = C/(√(p − 1)·√k)."),
    ],
    summary: "First order (Σ = I). Update when m < (1 − alpha)·γ_k, with k = 1 + the updates \
              so far, γ_k = √(p − 1)/(alpha·√k), η_k = C/(√(p − 1)·√k): μ ← μ + η_k·y·x, \
              then μ ← μ/max(1, ‖μ‖), i.e. α = η_k/N and μ scaled by 1/N, N = max(1, ‖μ + \
              η_k·y·x‖); c = 0 (LIBOL's ALMA.m: the Euclidean norm, as the paper's ALMA₂).",
    build: Build::Classification(|v| Rule::ALMA { alpha: v[0], p: v[1], c: v[2] }),
};

/// γ_k = √(p − 1)/(alpha·√k), in LIBOL's order of operations (B = 1/alpha first): margins on
/// binary features meet the threshold to the last bit, where the order decides.
#[inline]
fn target_margin(alpha: f64, p: f64, k: f64) -> f64 {
    (1.0 / alpha) * (p - 1.0).sqrt() / k.sqrt()
}

/// The round on an all-zero row (m = ‖x‖² = 0), which the one gate keeps from [`step`]: the
/// condition 0 < (1 − alpha)·γ_k holds for every alpha < 1, so by the definition (LIBOL's
/// ALMA.m) the round updates and k advances, but nothing moves: α = 0 and no rescaling.
#[inline]
pub(super) fn null_step((alpha, p): (f64, f64), context: &Context) -> Option<ScaledStep> {
    let k = context.updates.saturating_add(1) as f64;
    ((1.0 - alpha) * target_margin(alpha, p, k) > 0.0)
        .then_some(ScaledStep::plain(Step { alpha: 0.0, c: 0.0 }))
}

#[inline]
pub(super) fn step(
    m: f64,
    norm2: f64,
    (alpha, p, c): (f64, f64, f64),
    context: &Context,
) -> Option<ScaledStep> {
    let k = context.updates.saturating_add(1) as f64;
    let root = (p - 1.0).sqrt();
    if (1.0 - alpha) * target_margin(alpha, p, k) - m <= 0.0 {
        return None;
    }
    let eta = c / (root * k.sqrt());
    // ‖μ + η·y·x‖² = ‖μ‖² + 2η·m + η²‖x‖².
    let moved = context.mean_norm2 + 2.0 * eta * m + eta * eta * norm2;
    let scale = 1.0 / moved.sqrt().max(1.0);
    Some(ScaledStep {
        step: Step {
            alpha: eta * scale,
            c: 0.0,
        },
        mean_scale: scale,
        covariance_scale: 1.0,
    })
}
