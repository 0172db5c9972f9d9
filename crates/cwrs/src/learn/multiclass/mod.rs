//! Multiclass learning with one model (mean and covariance) per class (docs/design.md §4; the
//! strategies are [`crate::learn::objective::Multiclass`]'s). Prediction is the class of highest
//! score μ_k·x (the first one on ties).

use crate::covariance::{Covariance, CovarianceKind, Gaussian};
use crate::data::{Matrix, Shape};
use crate::error::CwError;
use crate::learn::learner::{check_initial_variance, fresh_gaussian};
use crate::learn::objective::check_covariance;
pub use crate::learn::objective::Multiclass;
pub use crate::learn::objective::Strategy;
use crate::learn::online::{keeps_ratio, Online};
use crate::learn::sparse_l1::L1;
use crate::rules::{normal_cdf, Rule};

/// A multiclass learner over class models of type `M` (the primal Gaussian by default).
pub type MulticlassLearner<M = Gaussian> = Online<Multiclass, M>;

pub(crate) fn check_n_classes(n_classes: usize) -> Result<(), CwError> {
    if n_classes < 2 {
        return Err(CwError::InvalidInput(format!(
            "a multiclass model needs at least 2 classes, got {n_classes}"
        )));
    }
    Ok(())
}

impl MulticlassLearner {
    /// A fresh primal learner over `n_classes` ≥ 2 classes of `shape`, each with μ = 0 and
    /// Σ = a·I, learning as `objective` (rule and strategy) says.
    pub fn new(
        objective: Multiclass,
        kind: CovarianceKind,
        n_classes: usize,
        shape: Shape,
        a: f64,
    ) -> Result<MulticlassLearner, CwError> {
        check_initial_variance(a)?;
        let kind = check_covariance(objective.rule, kind)?;
        check_n_classes(n_classes)?;
        let class = fresh_gaussian(kind, shape, a, n_classes)?;
        Ok(Online::with_models(objective, vec![class; n_classes]))
    }

    /// Rebuilds a learner from its state: the class means and covariances concatenated in class
    /// order (as [`MulticlassLearner::means`] and [`MulticlassLearner::covariances`] give them).
    #[allow(clippy::too_many_arguments)]
    pub fn from_state(
        objective: Multiclass,
        kind: CovarianceKind,
        n_classes: usize,
        shape: Shape,
        means: &[f64],
        covariances: &[f64],
        n_updates: u64,
        n_mistakes: u64,
    ) -> Result<MulticlassLearner, CwError> {
        let kind = check_covariance(objective.rule, kind)?;
        check_n_classes(n_classes)?;
        let dim = shape.dim();
        if n_classes.checked_mul(dim) != Some(means.len())
            || !covariances.len().is_multiple_of(n_classes)
        {
            return Err(CwError::InvalidInput(format!(
                "state of {n_classes} classes does not divide into classes: {} mean values, {} \
                 covariance values",
                means.len(),
                covariances.len()
            )));
        }
        let per_class = covariances.len() / n_classes;
        let classes = means
            .chunks_exact(dim)
            .zip(
                covariances
                    .chunks(per_class.max(1))
                    .chain(std::iter::repeat(&[][..])),
            )
            .map(|(mean, cov)| Gaussian::from_parts(kind, shape, mean, cov))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Online::with_models(objective, classes).with_counters(n_updates, n_mistakes))
    }

    /// Adds sparse L1 training to every class (diagonal covariance only).
    pub fn with_l1(self, l1: L1) -> Result<MulticlassLearner, CwError> {
        self.try_map_models(|_, class| class.with_l1(l1.clone()))
    }

    /// Restores each class's lazy L1 state (H, H per coordinate), in class order.
    pub fn with_l1_states(
        mut self,
        states: &[(f64, Vec<f64>)],
    ) -> Result<MulticlassLearner, CwError> {
        self.set_l1_states(states)?;
        Ok(self)
    }

    /// Each class's lazy L1 state (H, H per coordinate), if the model has a penalty.
    pub fn l1_states(&self) -> Option<Vec<(f64, Vec<f64>)>> {
        self.classes()
            .iter()
            .map(|c| c.l1().map(|l1| (l1.total(), l1.last().to_vec())))
            .collect()
    }

    /// The covariance form of every class model, with its parameters.
    pub fn covariance_kind(&self) -> CovarianceKind {
        self.classes()[0].kind()
    }

    /// The coordinates of every class model.
    pub fn shape(&self) -> Shape {
        self.classes()[0].shape()
    }

    /// The class means as predictions use them (every L1 threshold applied, or averaged), in
    /// class order.
    pub fn effective_means(&self) -> Vec<f64> {
        self.classes()
            .iter()
            .enumerate()
            .flat_map(|(k, class)| self.predicted_mean(k, class.effective_mean()))
            .collect()
    }

    /// The stored class means concatenated in class order, each over the features then the
    /// bias (with an L1 penalty, before pending thresholds).
    pub fn means(&self) -> Vec<f64> {
        self.classes()
            .iter()
            .flat_map(|c| c.mean().into_owned())
            .collect()
    }

    /// The classes' dense Σ concatenated in class order (see [`Gaussian::dense_covariance`]).
    pub fn dense_covariances(&self) -> Option<Vec<f64>> {
        let classes = self.classes().iter().map(Gaussian::dense_covariance);
        Some(classes.collect::<Option<Vec<_>>>()?.concat())
    }

    /// The class covariance values concatenated in class order (see [`Gaussian::covariance`]).
    pub fn covariances(&self) -> Vec<f64> {
        self.classes()
            .iter()
            .flat_map(|c| c.covariance().into_owned())
            .collect()
    }
}

impl<M: Covariance> MulticlassLearner<M> {
    /// A learner over the given class models (at least two, all over `n_features` features).
    pub fn with_classes(
        rule: Rule,
        strategy: Strategy,
        n_features: usize,
        classes: Vec<M>,
    ) -> Self {
        debug_assert!(classes.iter().all(|c| c.n_features() == n_features));
        Online::with_models(Multiclass { rule, strategy }, classes)
    }

    /// How the class models learn a row: max-score or one-vs-rest.
    pub fn strategy(&self) -> Strategy {
        self.objective().strategy
    }

    /// The number of classes, one model each.
    pub fn n_classes(&self) -> usize {
        self.models().len()
    }

    /// The class models, in class order.
    pub fn classes(&self) -> &[M] {
        self.models()
    }

    /// P(class k | x): the probability that class k has the highest score when the class
    /// scores are independent Gaussians with means μ_k·x and a common variance, the mean of the
    /// classes' xᵀΣ_k x (rows × classes, each row summing to 1). The common variance makes the
    /// probabilities rank the classes exactly as their scores do; with two classes it is exact.
    pub fn posterior_probabilities(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.probabilities_with_noise(x, out, None)
    }

    /// The predictive P(class k | x): as [`MulticlassLearner::posterior_probabilities`] with
    /// the label noise s² learned from the stream added to every class score's variance
    /// (docs/design.md §3.14); the posterior form for a learner that learns none.
    pub fn probabilities(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        let noise = self.noise_estimate().map(|n| n.label_variance());
        self.probabilities_with_noise(x, out, noise)
    }

    /// The probabilities of the class scores' Gaussians, with `noise` (s²) added to their
    /// pooled variance.
    fn probabilities_with_noise(
        &self,
        x: &Matrix,
        out: &mut [f64],
        noise: Option<f64>,
    ) -> Result<(), CwError> {
        let n_classes = self.n_classes();
        let (mut means, mut variances) = (vec![0.0; n_classes], vec![0.0; n_classes]);
        self.fill_rows(x, out, n_classes, |_, row, o| {
            for (k, (mean, v)) in means.iter_mut().zip(&mut variances).enumerate() {
                (*mean, *v) = self.predicted_moments(k, row);
            }
            let pooled = variances.iter().sum::<f64>() / n_classes as f64;
            if let Some(s2) = noise.filter(|_| pooled.is_finite()) {
                // An overflowed variance leaves s² nothing: the posterior form below.
                return argmax_probabilities(&means, (pooled + s2).sqrt(), o);
            }
            // Every class at the same scale, so the pooled variance and the spreads keep their
            // ratios (the classes share the row's unit scale).
            if !variances.iter().all(|&v| keeps_ratio(v)) {
                for (k, (mean, v)) in means.iter_mut().zip(&mut variances).enumerate() {
                    (*mean, *v) = self.unit_scale_moments(k, row, (*mean, *v));
                }
                let pooled = variances.iter().sum::<f64>() / n_classes as f64;
                return argmax_probabilities(&means, pooled.sqrt(), o);
            }
            argmax_probabilities(&means, pooled.sqrt(), o);
        })
    }
}

/// P(k = argmax_j s_j) for independent s_j ~ N(means_j, sd²), written into `out`.
///
/// P_k = E_{z~N(0,1)} Π_{j≠k} Φ((means_k − means_j)/sd + z), by Gauss–Hermite quadrature: every
/// node's integrand grows with means_k, so the result ranks classes as their means do. sd = 0
/// gives all mass to the best mean (shared on ties). The result is normalised to sum to 1.
pub fn argmax_probabilities(means: &[f64], sd: f64, out: &mut [f64]) {
    if means.iter().any(|m| m.is_nan()) {
        out.fill(f64::NAN);
        return;
    }
    // Overflowed scores (±∞) or spread: the best class wins outright.
    let certain = means.iter().any(|m| m.is_infinite()) || !sd.is_finite();
    if sd > 0.0 && !certain {
        let (nodes, weights) = gauss_hermite();
        for (k, o) in out.iter_mut().enumerate() {
            *o = nodes
                .iter()
                .zip(weights)
                .map(|(&z, &w)| {
                    let beats = |(j, &mean_j): (usize, &f64)| {
                        if j == k {
                            1.0
                        } else {
                            normal_cdf((means[k] - mean_j) / sd + z)
                        }
                    };
                    w * means.iter().enumerate().map(beats).product::<f64>()
                })
                .sum();
        }
    } else {
        let best = means.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        for (o, &m) in out.iter_mut().zip(means) {
            *o = f64::from(m == best);
        }
    }
    let total: f64 = out.iter().sum();
    if total > 0.0 && total.is_finite() {
        out.iter_mut().for_each(|p| *p /= total);
    } else {
        let uniform = 1.0 / out.len() as f64;
        out.iter_mut().for_each(|p| *p = uniform);
    }
    keep_the_predicted_class_first(means, out);
}

/// Makes the class that prediction picks (the first of highest mean) also the first of highest
/// probability: where the means differ by less than rounding can show, the quadrature gives
/// equal probabilities and an earlier class would win the tie.
fn keep_the_predicted_class_first(means: &[f64], out: &mut [f64]) {
    let first_best = |values: &[f64]| {
        (0..values.len()).fold(0, |best, k| if values[k] > values[best] { k } else { best })
    };
    let predicted = first_best(means);
    let winner = first_best(out);
    if winner != predicted && means[winner] < means[predicted] {
        out[predicted] = out[winner].next_up();
    }
}

/// Nodes and weights of the 64-point Gauss–Hermite rule for E_{z~N(0,1)}[f(z)] (probabilists'
/// form: nodes scaled by √2, weights by 1/√π), computed once by Newton's method on the
/// orthonormal Hermite recurrence (Golub–Welsch-free, as in Numerical Recipes' `gauher`).
fn gauss_hermite() -> (&'static [f64], &'static [f64]) {
    use std::sync::OnceLock;
    static RULE: OnceLock<(Vec<f64>, Vec<f64>)> = OnceLock::new();
    let (nodes, weights) = RULE.get_or_init(|| {
        const N: usize = 64;
        let pim4 = std::f64::consts::PI.powf(-0.25);
        let mut nodes = vec![0.0; N];
        let mut weights = vec![0.0; N];
        let mut z: f64 = 0.0;
        for i in 0..N / 2 {
            // Initial guesses for the roots of H_N, largest first.
            z = match i {
                0 => {
                    (2.0 * N as f64 + 1.0).sqrt()
                        - 1.85575 * (2.0 * N as f64 + 1.0).powf(-1.0 / 6.0)
                }
                1 => z - 1.14 * (N as f64).powf(0.426) / z,
                2 => 1.86 * z - 0.86 * nodes[0],
                3 => 1.91 * z - 0.91 * nodes[1],
                _ => 2.0 * z - nodes[i - 2],
            };
            let mut derivative = 0.0;
            for _ in 0..100 {
                let (mut p1, mut p2) = (pim4, 0.0);
                for j in 0..N {
                    let p3 = p2;
                    p2 = p1;
                    p1 = z * (2.0 / (j as f64 + 1.0)).sqrt() * p2
                        - (j as f64 / (j as f64 + 1.0)).sqrt() * p3;
                }
                derivative = (2.0 * N as f64).sqrt() * p2;
                let step = p1 / derivative;
                z -= step;
                if step.abs() <= 1e-15 * z.abs().max(1.0) {
                    break;
                }
            }
            let w = 2.0 / (derivative * derivative);
            nodes[i] = z;
            nodes[N - 1 - i] = -z;
            weights[i] = w;
            weights[N - 1 - i] = w;
        }
        // Physicists' rule ∫ e^{-t²} f(t) dt → expectation under N(0, 1).
        let scale = std::f64::consts::SQRT_2;
        let norm = 1.0 / std::f64::consts::PI.sqrt();
        (
            nodes.iter().map(|t| t * scale).collect(),
            weights.iter().map(|w| w * norm).collect(),
        )
    });
    (nodes, weights)
}

#[cfg(test)]
mod tests;
