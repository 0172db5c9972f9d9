//! Passive-Aggressive classification: PA, PA-I and PA-II (first order, Σ = I).

use super::{Build, Entry, Param, Range, Rule, Step, Weighted};

const REFERENCE: &str = "Crammer, Dekel, Keshet, Shalev-Shwartz, Singer, JMLR 2006";

// The entries are laid out by hand, a few fields to a line.
#[rustfmt::skip]
pub(super) const PA: Entry = Entry {
    weighted: Weighted::exact(
        "the step reaches m = 1, after which a repetition adds nothing: the unweighted step for every h > 0",
    ),
    name: "PA", title: "Passive-Aggressive", reference: REFERENCE, second_order: false, params: &[],
    summary: "First order (Σ = I). Update when m < 1: α = (1 − m)/‖x‖², c = 0 (the smallest step \
              that reaches margin 1).",
    build: Build::Classification(|_| Rule::PA),
};

#[rustfmt::skip]
pub(super) const PA1: Entry = Entry {
    weighted: Weighted::exact(
        "steps of C until the loss is used up: α = min(h·C, (1 − m)/‖x‖²)",
    ),
    name: "PA1", title: "PA-I, Passive-Aggressive with the step capped", reference: REFERENCE,
    params: &[Param::new("C", 1.0, Range::POSITIVE, "Aggressiveness, the cap on the step α.")],
    second_order: false, build: Build::Classification(|v| Rule::PA1 { c: v[0] }),
    summary: "First order (Σ = I). Update when m < 1: α = min(C, (1 − m)/‖x‖²), c = 0.",
};

#[rustfmt::skip]
pub(super) const PA2: Entry = Entry {
    weighted: Weighted::exact(
        "each presentation multiplies the loss by ρ = 1/(1 + 2C‖x‖²): α = ((1 − m)/‖x‖²)·(1 − ρ^h)",
    ),
    name: "PA2", second_order: false, reference: REFERENCE,
    title: "PA-II, Passive-Aggressive with a squared slack penalty",
    params: &[Param::new("C", 1.0, Range::POSITIVE,
                         "Aggressiveness; larger C means larger steps.")],
    summary: "First order (Σ = I). Update when m < 1: α = (1 − m)/(‖x‖² + 1/(2C)), c = 0.",
    build: Build::Classification(|v| Rule::PA2 { c: v[0] }),
};

#[inline]
fn first_order(alpha: f64) -> Option<Step> {
    Some(Step { alpha, c: 0.0 })
}

#[inline]
pub(super) fn pa_step(m: f64, norm2: f64) -> Option<Step> {
    (m < 1.0).then(|| (1.0 - m) / norm2).and_then(first_order)
}

#[inline]
pub(super) fn pa1_step(m: f64, norm2: f64, c: f64) -> Option<Step> {
    (m < 1.0)
        .then(|| c.min((1.0 - m) / norm2))
        .and_then(first_order)
}

#[inline]
pub(super) fn pa2_step(m: f64, norm2: f64, c: f64, h: f64) -> Option<Step> {
    (m < 1.0)
        .then(|| pa2_alpha(1.0 - m, norm2, c, h))
        .and_then(first_order)
}

/// PA-II's step for loss `loss` at weight `h`: each presentation leaves the loss times
/// ρ = 1/(1 + 2C‖x‖²), so weight h takes (ℓ/‖x‖²)·(1 − ρ^h), which is ℓ/(‖x‖² + 1/(2C)) at h = 1
/// (evaluated so, bit for bit the unweighted step).
#[inline]
pub(super) fn pa2_alpha(loss: f64, norm2: f64, c: f64, h: f64) -> f64 {
    if h == 1.0 {
        loss / (norm2 + 0.5 / c)
    } else {
        -(loss / norm2) * (-h * (2.0 * c * norm2).ln_1p()).exp_m1()
    }
}
