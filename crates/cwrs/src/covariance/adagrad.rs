//! AdaGrad's per-coordinate state (Duchi, Hazan & Singer, JMLR 2011; docs/design.md §2.9): the
//! weights and G_j, the sum of the squared loss gradients of coordinate j. Not a Gaussian: a
//! form beside the covariance forms, driven by the same loop, that takes the rule's step as the
//! loss gradient's scale. O(nnz) per row.
//!
//! With an L1 penalty λ, one of the paper's two forms, each O(nnz) per row:
//! - FOBOS (`Penalty::CoordinateDependent`): every round soft-thresholds w_j by λ·η/H_jj,
//!   H_jj = δ + √G_j. H_jj changes only on rows touching j, so the thresholds of the rows in
//!   between add up (the lazy [`L1`] with one unit of H per round and "variance" η/H_jj).
//! - RDA (`Penalty::DualAveraging`): the mean holds u_j, the sum of the gradients, and the
//!   weight is computed when read from (u_j, G_j, t), t the rounds so far (the [`L1`]'s H).

use std::borrow::Cow;

use super::gradient_sums::{gradient_sums_methods, gradient_sums_parts, GradientSums};
use super::{
    averaged_len_without_l1, outside_template_unreachable, Covariance, CovarianceKind, Parts,
    PrimalForm, MEAN_STEP_LIMIT,
};
use crate::data::{Row, Shape};
use crate::error::CwError;
use crate::learn::sparse_l1::{check_form, Penalty, L1};

/// Per-coordinate AdaGrad steps (the AdaGrad rule's own form, docs/design.md §2.9): the
/// weights and the sums G_j of squared gradient coordinates, μ_j ← μ_j + η·y·x_j/(δ + √G_j).
#[derive(Clone, Debug, PartialEq)]
pub struct AdaGrad {
    /// The weights (or with the RDA penalty the gradient sums u_j) and G_j.
    state: GradientSums,
    eta: f64,
    delta: f64,
    l1: Option<L1>,
    /// Mean steps the overflow gate skipped, not yet taken (see [`Covariance::take_skipped`]).
    skipped: u64,
}

impl AdaGrad {
    /// η/H_jj: the scale of coordinate j's steps and thresholds.
    #[inline]
    fn scale(&self, j: usize) -> f64 {
        self.eta / (self.delta + self.state.sums[j].sqrt())
    }

    /// The weight of coordinate j as predictions see it.
    #[inline]
    fn weight(&self, j: usize) -> f64 {
        match &self.l1 {
            None => self.state.mean[j],
            Some(l1) if l1.penalty() == Penalty::DualAveraging => {
                l1.dual_average(j, self.state.mean[j], self.scale(j))
            }
            Some(l1) => l1.effective(j, self.state.mean[j], self.scale(j)),
        }
    }

    /// FOBOS: applies the pending thresholds of the row's coordinates.
    fn catch_up(&mut self, row: Row) {
        let Some(l1) = &mut self.l1 else { return };
        if l1.penalty() == Penalty::DualAveraging {
            return;
        }
        let (eta, delta) = (self.eta, self.delta);
        let GradientSums { shape, mean, sums } = &mut self.state;
        shape.features(row).for_each(|j, xj| {
            if xj != 0.0 {
                l1.catch_up(j, &mut mean[j], eta / (delta + sums[j].sqrt()));
            }
        });
    }
}

impl PrimalForm for AdaGrad {
    /// With the rule table's defaults η = δ = 1.
    const KIND: CovarianceKind = CovarianceKind::AdaGrad {
        eta: 1.0,
        delta: 1.0,
    };

    gradient_sums_parts!();

    /// μ = 0, G = 0, with η and δ from `kind`.
    fn new(kind: CovarianceKind, shape: Shape, _a: f64) -> Self {
        let CovarianceKind::AdaGrad { eta, delta } = kind else {
            unreachable!("AdaGrad built as {kind:?}")
        };
        AdaGrad {
            state: GradientSums::new(shape),
            eta,
            delta,
            l1: None,
            skipped: 0,
        }
    }

    fn kind(&self) -> CovarianceKind {
        CovarianceKind::AdaGrad {
            eta: self.eta,
            delta: self.delta,
        }
    }

    fn effective_mean(&self) -> Vec<f64> {
        (0..self.state.mean.len()).map(|j| self.weight(j)).collect()
    }

    /// FOBOS ("l1") or RDA ("l1-rda"); the uniform threshold is not AdaGrad's.
    fn with_l1(self, l1: L1) -> Result<Self, CwError> {
        check_form(l1.penalty(), Self::KIND)?;
        Ok(AdaGrad {
            l1: Some(l1),
            ..self
        })
    }

    fn l1(&self) -> Option<&L1> {
        self.l1.as_ref()
    }

    fn l1_mut(&mut self) -> Option<&mut L1> {
        self.l1.as_mut()
    }
}

impl Covariance for AdaGrad {
    gradient_sums_methods!("AdaGrad's state under another rule");

    fn averaged_len(&self) -> Result<usize, CwError> {
        averaged_len_without_l1(self.state.mean.len(), self.l1.as_ref())
    }

    /// A round moves only the row's coordinates of its mean.
    fn visit_mean(&self, row: Row, mut f: impl FnMut(usize, f64)) {
        let GradientSums { shape, mean, .. } = &self.state;
        shape.features(row).for_each(|j, _| f(j, mean[j]));
    }

    /// The row's pending thresholds applied, μ·x, then a round more for the L1 penalty (this
    /// round's FOBOS threshold, pending until the update or a later read; RDA's t).
    #[inline]
    fn learn_score(&mut self, row: Row) -> f64 {
        self.catch_up(row);
        let score = self.score(row);
        if let Some(l1) = &mut self.l1 {
            l1.advance(1.0);
        }
        score
    }

    /// The loss gradient is −step·x: G_j += (step·x_j)², then μ_j += η·step·x_j/(δ + √G_j)
    /// and this round's FOBOS threshold; with RDA u_j −= step·x_j instead of the step.
    /// |η·step·x_j/H_j| ≤ η·|step|·‖x‖/δ: only a step near the overflow bound is checked.
    #[inline]
    fn update(&mut self, row: Row, step: f64, _c: f64, v: f64, _eta: f64) {
        let x = self.state.shape.features(row);
        if let Some(l1) = &self.l1 {
            if l1.penalty() == Penalty::DualAveraging {
                let GradientSums { mean, sums, .. } = &mut self.state;
                x.for_each(|j, xj| {
                    let (u, g) = (mean[j] - step * xj, sums[j] + (step * xj).powi(2));
                    // A round that would overflow leaves the coordinate as it was.
                    if xj != 0.0 && u.is_finite() && g.is_finite() {
                        (mean[j], sums[j]) = (u, g);
                    }
                });
                return;
            }
        }
        let (eta, delta) = (self.eta, self.delta);
        let GradientSums { mean, sums, .. } = &mut self.state;
        // G_j saturates at the largest float rather than overflow (a squared gradient beyond
        // 1.8e308, features around 1e154): the state stays finite and the step is smaller
        // than the exact one.
        let grown = |g: f64, xj: f64| (g + (step * xj).powi(2)).min(f64::MAX);
        let rate = |g: f64, xj: f64| eta * step * xj / (delta + grown(g, xj).sqrt());
        if (eta * step / delta).abs() * v.sqrt() >= MEAN_STEP_LIMIT {
            let mut overflows = false;
            x.for_each(|j, xj| overflows |= !(mean[j] + rate(sums[j], xj)).is_finite());
            if overflows {
                self.skipped += 1;
                return;
            }
        }
        x.for_each(|j, xj| {
            if xj != 0.0 {
                mean[j] += rate(sums[j], xj);
                sums[j] = grown(sums[j], xj);
            }
        });
        self.catch_up(row);
    }

    #[inline]
    fn score(&self, row: Row) -> f64 {
        let x = self.state.shape.features(row);
        if self.l1.is_none() {
            return x.dot(&self.state.mean);
        }
        let mut s = 0.0;
        x.for_each(|j, xj| s += xj * self.weight(j));
        s
    }

    fn n_values(&self) -> usize {
        (2 + usize::from(self.l1.is_some())) * self.state.mean.len()
    }

    /// Whole rounds the gate skipped; RDA's rounds skip per coordinate, never as a whole.
    fn take_skipped(&mut self) -> u64 {
        std::mem::take(&mut self.skipped)
    }
}
