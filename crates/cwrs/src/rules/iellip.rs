//! The improved ellipsoid method (second order).

use super::context::{Context, ScaledStep};
use super::{Build, Entry, Param, Range, Rule, Step, Weighted};

#[rustfmt::skip]
pub(super) const IELLIP: Entry = Entry {
    weighted: Weighted::exact(
        "the step puts m at 1, no mistake, so a repetition makes no update: the unweighted step \
         for every h > 0",
    ),
    name: "IELLIP", title: "Online learning by the improved ellipsoid method", second_order: true,
    reference: "Yang, Jin, Ye, \"Online learning by ellipsoid method\", ICML 2009",
    params: &[
        Param::new("b", 0.3, Range { low: 0.0, high: 1.0, low_open: true, high_open: true },
                   "The decay of the covariance step: c_t = c·b^(t−1)."),
        Param::new("c", 0.1, Range { low: 0.0, high: 1.0, low_open: true, high_open: true },
                   "The covariance step of the first round."),
    ],
    summary: "Update when the prediction (+1 at μ·x = 0) is not y: α = (1 − m)/v \
              and Σ ← (Σ − (c_t/v)·ΣxxᵀΣ)/(1 − c_t), c_t = c·b^(t−1) at round t (every row \
              counts), i.e. the template's c = c_t/(v(1 − c_t)) and Σ scaled by 1/(1 − c_t) \
              (LIBOL's IELLIP.m).",
    build: Build::Classification(|v| Rule::IELLIP { b: v[0], c: v[1] }),
};

#[inline]
pub(super) fn step(m: f64, v: f64, b: f64, c: f64, context: &Context) -> Option<ScaledStep> {
    if !context.is_mistake(m) {
        return None;
    }
    let c_t = c * b.powf((context.round - 1) as f64);
    Some(ScaledStep {
        step: Step {
            alpha: (1.0 - m) / v,
            c: c_t / (v * (1.0 - c_t)),
        },
        mean_scale: 1.0,
        covariance_scale: 1.0 / (1.0 - c_t),
    })
}
