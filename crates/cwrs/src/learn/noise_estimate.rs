//! What the stream says about the noise of its targets, learned in the loop from each row's
//! prediction just before the row is learned (docs/design.md §3.14):
//!
//! - a second-order classifier's label noise s², in margin units: the label is the sign of the
//!   score plus N(0, s²) noise (the probit model), so P(y = +1 | x) = Φ(m/√(v + s²));
//! - AROW regression's noise scale κ = σ²/r: the innovation e = y − μ·x has variance
//!   κ·(v + r) under the normal-inverse-gamma prior, so σ̂² = r·κ.
//!
//! Both are kept in information form (an estimate and the information behind it), which makes
//! models learned apart merge like the means do (§9).

use std::f64::consts::{FRAC_1_SQRT_2, PI};

/// ln s² is kept in [−LOG_LIMIT, LOG_LIMIT]: a separable stream drives s² to 0, a stream of
/// unpredictable labels to ∞, and neither limit is a usable number.
const LOG_LIMIT: f64 = 60.0;

/// An estimate of the targets' noise and the information it rests on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NoiseEstimate {
    /// ln s² (a classifier's label noise) or κ = σ²/r (AROW regression's noise scale).
    pub estimate: f64,
    /// The Fisher information behind ln s², or the total weight of the residuals behind κ,
    /// the prior's included.
    pub information: f64,
}

impl NoiseEstimate {
    /// A classifier's prior: s² = 1 (the margin unit the rules aim at), worth about seven rows
    /// of the most informative kind.
    pub const LABEL_PRIOR: NoiseEstimate = NoiseEstimate {
        estimate: 0.0,
        information: 1.0,
    };

    /// A regressor's prior: the configured r is the noise variance (κ = 1), as one row.
    pub const RESIDUAL_PRIOR: NoiseEstimate = NoiseEstimate {
        estimate: 1.0,
        information: 1.0,
    };

    /// s² of a classifier's estimate.
    pub fn label_variance(&self) -> f64 {
        self.estimate.exp()
    }

    /// One row of a classifier, of signed margin y·μ·x = `margin`, margin variance `v` and
    /// weight `h`, before it is learned: a Fisher-scoring step on θ = ln s² of the row's
    /// log-likelihood ln Φ(margin/√(v + s²)), scaled by the information so far (the recursive
    /// maximum-likelihood estimate). Out of line: inlined, it would push the learning loop's
    /// per-row closure out of line for every rule, the first-order ones too.
    #[inline(never)]
    pub fn observe_label(&mut self, margin: f64, v: f64, h: f64) {
        let s2 = self.estimate.exp();
        let total = v + s2;
        if !(margin.is_finite() && total.is_finite() && total > 0.0) {
            return;
        }
        let z = margin / total.sqrt();
        // ∂z/∂θ = −z·ρ/2, ρ = s²/(v + s²).
        let share = s2 / total;
        let a = z.abs();
        let tail = 0.5 * libm::erfc(a * FRAC_1_SQRT_2); // Φ(−|z|)
        let density = (-0.5 * a * a).exp() / (2.0 * PI).sqrt(); // φ(z)
                                                                // φ(z)/Φ(z): the score of ln Φ at z.
        let mills = if z >= 0.0 {
            density / (1.0 - tail)
        } else if tail > 0.0 {
            density / tail
        } else {
            a + 1.0 / a // Φ(−a) ≈ φ(a)/(a + 1/a) once it underflows
        };
        let gradient = -0.5 * z * share * mills;
        // The expected information of the probit: φ²/(Φ(z)·Φ(−z)) · (∂z/∂θ)².
        let fisher = match tail > 0.0 {
            true => density * density / (tail * (1.0 - tail)) * (0.5 * a * share).powi(2),
            false => 0.0,
        };
        self.information += h * fisher;
        let step = (h * gradient / self.information).clamp(-1.0, 1.0);
        self.estimate = (self.estimate + step).clamp(-LOG_LIMIT, LOG_LIMIT);
    }

    /// One row of AROW regression, of residual `e` and innovation variance v + r =
    /// `total_variance` in units of κ, with weight `h`: κ is the weighted mean of e²/(v + r).
    #[inline]
    pub fn observe_residual(&mut self, e: f64, total_variance: f64, h: f64) {
        let ratio = e * e / total_variance;
        if !(ratio.is_finite() && total_variance > 0.0) {
            return;
        }
        self.information += h;
        self.estimate += h * (ratio - self.estimate) / self.information;
    }

    /// AROW regression's noise scale had the rows been learned under a prior whose precision
    /// on the feature coordinates is larger by `delta`, the mean moving from μ to μ′ with
    /// `cross` = μ′·μ over those coordinates (docs/design.md §3.14): the sum of the rows'
    /// e²/(v + r) is yᵀy/r − μᵀΣ⁻¹μ (exact for rows of weight 1), whose information vector
    /// Σ⁻¹μ the prior does not change, so the sum moves by (μ − μ′)ᵀΣ⁻¹μ = δ·μ′·μ. The
    /// prior's row keeps its κ = 1; the sum stays ≥ 0.
    pub fn with_prior_changed(&self, delta: f64, cross: f64) -> NoiseEstimate {
        let sum = self.estimate * self.information + delta * cross;
        let estimate = (sum / self.information).max(0.0);
        match estimate.is_finite() {
            true => NoiseEstimate { estimate, ..*self },
            false => *self,
        }
    }

    /// The estimate of models learned apart, each from `base`: every model's information
    /// beyond the base's adds (exact for κ, a weighted mean; for ln s², exact where the
    /// log-likelihood is quadratic in it). Non-finite results keep `base`.
    pub fn merged(base: NoiseEstimate, models: impl IntoIterator<Item = NoiseEstimate>) -> Self {
        let (mut information, mut weighted) = (base.information, base.information * base.estimate);
        for model in models {
            information += model.information - base.information;
            weighted += model.information * model.estimate - base.information * base.estimate;
        }
        let estimate = weighted / information;
        if information > 0.0 && information.is_finite() && estimate.is_finite() {
            NoiseEstimate {
                estimate,
                information,
            }
        } else {
            base
        }
    }

    /// Whether a restored estimate can be used: finite, positive information, and for a
    /// classifier ln s² in range.
    pub fn is_valid(&self, label: bool) -> bool {
        let in_range = match label {
            true => self.estimate.abs() <= LOG_LIMIT,
            false => self.estimate >= 0.0 && self.estimate.is_finite(),
        };
        in_range && self.information > 0.0 && self.information.is_finite()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{normal_cdf, normal_quantile};
    use crate::test_rng::uniform;

    /// ln L(s²) of probit rows (margin, v) by direct sums.
    fn log_likelihood(rows: &[(f64, f64)], s2: f64) -> f64 {
        rows.iter()
            .map(|&(m, v)| normal_cdf(m / (v + s2).sqrt()).ln())
            .sum()
    }

    fn probit_rows(n: usize, s2: f64, seed: u64) -> Vec<(f64, f64)> {
        let mut u = uniform(seed);
        let mut normal = move || normal_quantile((0.5 + 0.5 * u()).clamp(1e-12, 1.0 - 1e-12));
        (0..n)
            .map(|_| {
                let score = 2.0 * normal();
                let v = 0.1 * normal().abs();
                let y = if score + (v + s2).sqrt() * normal() > 0.0 {
                    1.0
                } else {
                    -1.0
                };
                (y * score, v)
            })
            .collect()
    }

    #[test]
    fn the_recursive_estimate_reaches_the_likelihood_maximizer() {
        for true_s2 in [0.25, 1.0, 4.0] {
            let rows = probit_rows(10_000, true_s2, 7);
            let mut noise = NoiseEstimate::LABEL_PRIOR;
            rows.iter()
                .for_each(|&(m, v)| noise.observe_label(m, v, 1.0));
            let best = (-120..=120)
                .map(|k| (k as f64 / 40.0).exp())
                .max_by(|&a, &b| log_likelihood(&rows, a).total_cmp(&log_likelihood(&rows, b)))
                .unwrap();
            let found = noise.label_variance();
            assert!((found / best).ln().abs() < 0.05, "{found} against {best}");
            assert!(
                (found / true_s2).ln().abs() < 0.15,
                "{found} against {true_s2}"
            );
        }
    }

    #[test]
    fn extreme_rows_keep_the_estimate_finite_and_in_range() {
        let mut noise = NoiseEstimate::LABEL_PRIOR;
        for (m, v) in [
            (-1e300, 1e-300),
            (1e300, 0.0),
            (-50.0, 0.0),
            (f64::NAN, 1.0),
        ] {
            noise.observe_label(m, v, 1.0);
            assert!(noise.is_valid(true), "{noise:?} after ({m}, {v})");
        }
        let mut separable = NoiseEstimate::LABEL_PRIOR;
        (0..10_000).for_each(|_| separable.observe_label(3.0, 1e-3, 1.0));
        assert!(
            separable.label_variance() < 0.7 && separable.is_valid(true),
            "{separable:?}"
        );
    }

    #[test]
    fn weight_two_is_about_the_row_twice() {
        let rows = probit_rows(2_000, 1.0, 3);
        let (mut once, mut twice) = (NoiseEstimate::LABEL_PRIOR, NoiseEstimate::LABEL_PRIOR);
        for &(m, v) in &rows {
            once.observe_label(m, v, 2.0);
            twice.observe_label(m, v, 1.0);
            twice.observe_label(m, v, 1.0);
        }
        assert!(
            (once.estimate - twice.estimate).abs() < 0.02,
            "{once:?} {twice:?}"
        );
        let (mut weighted, mut repeated) =
            (NoiseEstimate::RESIDUAL_PRIOR, NoiseEstimate::RESIDUAL_PRIOR);
        for (i, &(e, v)) in rows.iter().enumerate() {
            let h = 1.0 + (i % 3) as f64;
            weighted.observe_residual(e, v + 1.0, h);
            (0..i % 3 + 1).for_each(|_| repeated.observe_residual(e, v + 1.0, 1.0));
        }
        assert!((weighted.estimate - repeated.estimate).abs() < 1e-12);
        assert_eq!(weighted.information, repeated.information);
    }

    #[test]
    fn merged_residual_scales_are_the_pooled_mean() {
        let rows = probit_rows(3_000, 2.0, 5);
        let (first, second) = rows.split_at(1_000);
        let learn = |rows: &[(f64, f64)], mut noise: NoiseEstimate| {
            rows.iter()
                .for_each(|&(e, v)| noise.observe_residual(e, v + 1.0, 1.0));
            noise
        };
        let prior = NoiseEstimate::RESIDUAL_PRIOR;
        let sequential = learn(second, learn(first, prior));
        let merged = NoiseEstimate::merged(prior, [learn(first, prior), learn(second, prior)]);
        assert!((merged.estimate - sequential.estimate).abs() < 1e-12);
        assert_eq!(merged.information, sequential.information);
        // From a shared base, as the sharded fit merges.
        let base = learn(first, prior);
        let (a, b) = second.split_at(700);
        let merged = NoiseEstimate::merged(base, [learn(a, base), learn(b, base)]);
        assert!((merged.estimate - sequential.estimate).abs() < 1e-12);
    }

    #[test]
    fn merged_label_noise_is_close_to_the_sequential_one() {
        let rows = probit_rows(20_000, 1.5, 11);
        let prior = NoiseEstimate::LABEL_PRIOR;
        let learn = |rows: &[(f64, f64)]| {
            let mut noise = prior;
            rows.iter()
                .for_each(|&(m, v)| noise.observe_label(m, v, 1.0));
            noise
        };
        let (a, b) = rows.split_at(10_000);
        let merged = NoiseEstimate::merged(prior, [learn(a), learn(b)]);
        assert!((merged.estimate - learn(&rows).estimate).abs() < 0.05);
    }
}
