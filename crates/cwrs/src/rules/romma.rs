//! The relaxed online maximum margin algorithm and its aggressive variant (first order).

use super::context::{Context, ScaledStep};
use super::{Build, Entry, Rule, Step, Weighted};

const REFERENCE: &str = "Li, Long, Machine Learning 2002";

#[rustfmt::skip]
pub(super) const ROMMA: Entry = Entry {
    weighted: Weighted::exact(
        "the step reaches m = 1 (from μ = 0 it sets μ = y·x, along which a repetition makes no \
         update), after which a repetition adds nothing: the unweighted step for every h > 0",
    ),
    name: "ROMMA", title: "The Relaxed Online Maximum Margin Algorithm", reference: REFERENCE,
    second_order: false, params: &[],
    summary: "First order (Σ = I). Update when the prediction (+1 at μ·x = 0) is not y: \
              μ ← y·x while μ = 0, else μ ← c₁·μ + c₂·y·x with D = ‖x‖²‖μ‖² − m², \
              c₁ = (‖x‖²‖μ‖² − m)/D, c₂ = ‖μ‖²(1 − m)/D (no update when D = 0), i.e. α = c₂ and μ \
              scaled by c₁, c = 0: the smallest μ in the relaxed constraints (LIBOL's ROMMA.m).",
    build: Build::Classification(|_| Rule::ROMMA),
};

#[rustfmt::skip]
pub(super) const AGGRESSIVE_ROMMA: Entry = Entry {
    weighted: Weighted::exact(
        "the step reaches m = 1 (from μ = 0 it sets μ = y·x, along which a repetition makes no \
         update), after which a repetition adds nothing: the unweighted step for every h > 0",
    ),
    name: "AggressiveROMMA", title: "The Relaxed Online Maximum Margin Algorithm, aggressive",
    reference: REFERENCE, second_order: false, params: &[],
    summary: "First order (Σ = I). Update when m < 1, not only on mistakes, with ROMMA's \
              step (α = c₂, μ scaled by c₁, c = 0; LIBOL's aROMMA.m).",
    build: Build::Classification(|_| Rule::AggressiveROMMA),
};

/// The update once the rule has fired: μ = 0 takes x, else the relaxed projection.
#[inline]
pub(super) fn step(m: f64, norm2: f64, fires: bool, context: &Context) -> Option<ScaledStep> {
    if !fires {
        return None;
    }
    let w2 = context.mean_norm2;
    if w2 == 0.0 {
        return Some(ScaledStep::plain(Step { alpha: 1.0, c: 0.0 }));
    }
    let product = norm2 * w2;
    let denominator = product - m * m;
    (denominator != 0.0).then(|| ScaledStep {
        step: Step {
            alpha: w2 * (1.0 - m) / denominator,
            c: 0.0,
        },
        mean_scale: (product - m) / denominator,
        covariance_scale: 1.0,
    })
}
