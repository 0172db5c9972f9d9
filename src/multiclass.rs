//! Multiclass learning with one Gaussian (mean and covariance) per class (docs/design.md §4).
//!
//! - Max-score (single constraint, Crammer–Singer style): on (x, y) let s be the highest-scoring
//!   wrong class, m = μ_y·x − μ_s·x and V = xᵀΣ_y x + xᵀΣ_s x (the block-diagonal view of the
//!   label-augmented feature space, where x appears as +x in block y and −x in block s, so
//!   ‖x‖² counts twice); apply the binary rule to (m, V) and move μ_y by +α·Σ_y x, μ_s by
//!   −α·Σ_s x, each Σ with its own precision increment c.
//! - One-vs-rest: class k learns the binary problem "k or not" with its own Gaussian.
//!
//! Prediction is the class of highest score μ_k·x (the first one on ties).

use crate::covariance::CovarianceKind;
use crate::data::{Matrix, Presentation, Row, Shape};
use crate::error::CwError;
use crate::gaussian::Gaussian;
use crate::learner::{check_covariance, check_initial_variance};
use crate::rules::{is_learnable_variance, normal_cdf, Rule};
use crate::sparse_l1::L1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    MaxScore,
    OneVsRest,
}

impl Strategy {
    pub fn from_name(name: &str) -> Result<Strategy, CwError> {
        match name {
            "max-score" => Ok(Strategy::MaxScore),
            "ovr" => Ok(Strategy::OneVsRest),
            _ => Err(CwError::InvalidParameter(format!(
                "multi_class must be \"max-score\" or \"ovr\", got {name:?}"
            ))),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Strategy::MaxScore => "max-score",
            Strategy::OneVsRest => "ovr",
        }
    }
}

/// One class's linear model as a multiclass learner drives it: the primal [`Linear`] model or
/// the dual [`crate::covariance::dual::DualGaussian`].
pub trait ClassModel {
    /// Whether the model can learn here (the dual form needs a built-in kernel).
    fn check_learnable(&self) -> Result<(), CwError>;
    /// Learning path: μ·x for `row`, keeping what [`ClassModel::prepare`] and
    /// [`ClassModel::update`] need for this row.
    fn learn_score(&mut self, row: &Row) -> f64;
    /// (v, ‖x‖²) of the row last scored, as the rules see them.
    fn prepare(&mut self, row: &Row) -> (f64, f64);
    /// μ ← μ + step·Σx, Σ⁻¹ ← Σ⁻¹ + c·x xᵀ for the row last prepared, with its `v`; then
    /// the L1 threshold of step scale `eta`, if the model has a penalty.
    fn update(&mut self, row: &Row, step: f64, c: f64, v: f64, eta: f64);
    /// (μ·x, xᵀΣx) on the prediction path.
    fn moments(&self, row: &Row) -> (f64, f64);
}

/// A primal class model: a Gaussian over the features of `shape`.
#[derive(Clone, Debug, PartialEq)]
pub struct Linear {
    shape: Shape,
    gaussian: Gaussian,
}

impl ClassModel for Linear {
    fn check_learnable(&self) -> Result<(), CwError> {
        Ok(())
    }

    fn learn_score(&mut self, row: &Row) -> f64 {
        let x = self.shape.features(*row);
        self.gaussian.catch_up(&x);
        self.gaussian.score(&x)
    }

    fn prepare(&mut self, row: &Row) -> (f64, f64) {
        let x = self.shape.features(*row);
        let v = self.gaussian.prepare(&x);
        (v, self.gaussian.squared_norm(&x, v))
    }

    fn update(&mut self, row: &Row, step: f64, c: f64, v: f64, eta: f64) {
        let x = self.shape.features(*row);
        self.gaussian.update(&x, step, c, v);
        self.gaussian.threshold(&x, eta);
    }

    fn moments(&self, row: &Row) -> (f64, f64) {
        let x = self.shape.features(*row);
        (self.gaussian.score(&x), self.gaussian.variance(&x))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct MulticlassLearner<M = Linear> {
    rule: Rule,
    strategy: Strategy,
    n_features: usize,
    classes: Vec<M>,
    n_updates: u64,
    n_mistakes: u64,
    /// μ_k·x of the current row.
    scores: Vec<f64>,
}

fn check_n_classes(n_classes: usize) -> Result<(), CwError> {
    if n_classes < 2 {
        return Err(CwError::InvalidInput(format!(
            "a multiclass model needs at least 2 classes, got {n_classes}"
        )));
    }
    Ok(())
}

impl MulticlassLearner<Linear> {
    /// A fresh primal learner over `n_classes` ≥ 2 classes, each with μ = 0 and Σ = a·I.
    pub fn new(
        rule: Rule,
        strategy: Strategy,
        kind: CovarianceKind,
        n_classes: usize,
        n_features: usize,
        fit_intercept: bool,
        a: f64,
    ) -> Result<MulticlassLearner, CwError> {
        check_initial_variance(a)?;
        check_covariance(rule, kind)?;
        check_n_classes(n_classes)?;
        let shape = Shape::new(n_features, fit_intercept)?;
        Gaussian::check_size(kind, shape.dim(), n_classes)?;
        let class = Linear {
            shape,
            gaussian: Gaussian::new(kind, shape.dim(), a),
        };
        Ok(Self::with_classes(
            rule,
            strategy,
            n_features,
            vec![class; n_classes],
        ))
    }

    /// Rebuilds a learner from its state: the class means and covariances concatenated in class
    /// order (as [`MulticlassLearner::means`] and [`MulticlassLearner::covariances`] give them).
    #[allow(clippy::too_many_arguments)]
    pub fn from_state(
        rule: Rule,
        strategy: Strategy,
        kind: CovarianceKind,
        n_classes: usize,
        n_features: usize,
        fit_intercept: bool,
        means: &[f64],
        covariances: &[f64],
        n_updates: u64,
        n_mistakes: u64,
    ) -> Result<MulticlassLearner, CwError> {
        check_covariance(rule, kind)?;
        check_n_classes(n_classes)?;
        let shape = Shape::new(n_features, fit_intercept)?;
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
            .map(|(mean, cov)| {
                Gaussian::from_parts(kind, dim, mean, cov)
                    .map(|gaussian| Linear { shape, gaussian })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut learner = Self::with_classes(rule, strategy, n_features, classes);
        (learner.n_updates, learner.n_mistakes) = (n_updates, n_mistakes);
        Ok(learner)
    }

    /// Adds sparse L1 training to every class (diagonal covariance only).
    pub fn with_l1(mut self, l1: L1) -> Result<MulticlassLearner, CwError> {
        for class in &mut self.classes {
            class.gaussian = class.gaussian.clone().with_l1(l1.clone())?;
        }
        Ok(self)
    }

    /// Restores each class's lazy L1 state (H, H per coordinate), in class order.
    pub fn with_l1_states(
        mut self,
        states: &[(f64, Vec<f64>)],
    ) -> Result<MulticlassLearner, CwError> {
        if states.len() != self.classes.len() {
            return Err(CwError::InvalidInput(
                "one L1 state per class is needed".into(),
            ));
        }
        for (class, (total, last)) in self.classes.iter_mut().zip(states) {
            let l1 = class.gaussian.l1().cloned().ok_or_else(|| {
                CwError::InvalidInput("L1 state given for a model without a penalty".into())
            })?;
            class.gaussian = class
                .gaussian
                .clone()
                .with_l1(l1.with_state(*total, last)?)?;
        }
        Ok(self)
    }

    /// Each class's lazy L1 state (H, H per coordinate), if the model has a penalty.
    pub fn l1_states(&self) -> Option<Vec<(f64, Vec<f64>)>> {
        self.classes
            .iter()
            .map(|c| c.gaussian.l1().map(|l1| (l1.total(), l1.last().to_vec())))
            .collect()
    }

    pub fn covariance_kind(&self) -> CovarianceKind {
        self.classes[0].gaussian.kind()
    }

    pub fn shape(&self) -> Shape {
        self.classes[0].shape
    }

    /// The class means with every L1 threshold applied, in class order.
    pub fn effective_means(&self) -> Vec<f64> {
        self.classes
            .iter()
            .flat_map(|c| c.gaussian.effective_mean())
            .collect()
    }

    /// The stored class means concatenated in class order, each over the features then the
    /// bias (with an L1 penalty, before pending thresholds).
    pub fn means(&self) -> Vec<f64> {
        self.classes
            .iter()
            .flat_map(|c| c.gaussian.mean().into_owned())
            .collect()
    }

    /// The class covariance values concatenated in class order (see [`Gaussian::covariance`]).
    pub fn covariances(&self) -> Vec<f64> {
        self.classes
            .iter()
            .flat_map(|c| c.gaussian.covariance().into_owned())
            .collect()
    }
}

impl<M: ClassModel> MulticlassLearner<M> {
    /// A learner over the given class models (at least two, all over `n_features` features).
    pub fn with_classes(
        rule: Rule,
        strategy: Strategy,
        n_features: usize,
        classes: Vec<M>,
    ) -> Self {
        let scores = vec![0.0; classes.len()];
        MulticlassLearner {
            rule,
            strategy,
            n_features,
            classes,
            n_updates: 0,
            n_mistakes: 0,
            scores,
        }
    }

    /// Sets the counters (when restoring a state).
    pub fn with_counters(mut self, n_updates: u64, n_mistakes: u64) -> Self {
        (self.n_updates, self.n_mistakes) = (n_updates, n_mistakes);
        self
    }

    pub fn rule(&self) -> Rule {
        self.rule
    }

    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    pub fn n_classes(&self) -> usize {
        self.classes.len()
    }

    /// The class models, in class order.
    pub fn classes(&self) -> &[M] {
        &self.classes
    }

    /// Rounds whose update changed the model.
    pub fn n_updates(&self) -> u64 {
        self.n_updates
    }

    /// Rounds where the true class did not score strictly above every other class.
    pub fn n_mistakes(&self) -> u64 {
        self.n_mistakes
    }

    /// Learns one row of class `label`; returns whether the model changed.
    pub fn learn(&mut self, row: Row, label: usize) -> Result<bool, CwError> {
        row.validate(self.n_features)?;
        self.check_labels(&[label])?;
        Ok(self.learn_valid(row, label))
    }

    fn check_labels(&self, labels: &[usize]) -> Result<(), CwError> {
        self.classes.iter().try_for_each(M::check_learnable)?;
        match labels.iter().find(|&&k| k >= self.classes.len()) {
            Some(bad) => Err(CwError::InvalidInput(format!(
                "class index {bad} is out of range for {} classes",
                self.classes.len()
            ))),
            None => Ok(()),
        }
    }

    fn learn_valid(&mut self, row: Row, label: usize) -> bool {
        for (score, class) in self.scores.iter_mut().zip(&mut self.classes) {
            *score = class.learn_score(&row);
        }
        let rival = highest_other(&self.scores, label);
        // The counters saturate: a restored state may hold any count.
        if self.scores[label] - self.scores[rival] <= 0.0 {
            self.n_mistakes = self.n_mistakes.saturating_add(1);
        }
        let changed = match self.strategy {
            Strategy::MaxScore => self.max_score_update(&row, label, rival),
            Strategy::OneVsRest => self.one_vs_rest_update(&row, label),
        };
        self.n_updates = self.n_updates.saturating_add(u64::from(changed));
        changed
    }

    fn max_score_update(&mut self, row: &Row, label: usize, rival: usize) -> bool {
        let m = self.scores[label] - self.scores[rival];
        let (v_label, norm2_label) = self.classes[label].prepare(row);
        let (v_rival, norm2_rival) = self.classes[rival].prepare(row);
        // The rule's gate sees only the sum, but each class's Σ update divides by its own v
        // (β = c/(1 + c·v)): a dual v, a difference of large kernel terms, can round to ≤ 0
        // while the other class's is large, and then β is negative or infinite and Σ goes NaN.
        if !(is_learnable_variance(v_label) && is_learnable_variance(v_rival)) {
            return false;
        }
        match self
            .rule
            .step(m, v_label + v_rival, norm2_label + norm2_rival)
        {
            Some(step) => {
                let eta = self.rule.l1_rate(&step, v_label + v_rival);
                self.classes[label].update(row, step.alpha, step.c, v_label, eta);
                self.classes[rival].update(row, -step.alpha, step.c, v_rival, eta);
                true
            }
            None => false,
        }
    }

    fn one_vs_rest_update(&mut self, row: &Row, label: usize) -> bool {
        let mut changed = false;
        for (k, class) in self.classes.iter_mut().enumerate() {
            let y = if k == label { 1.0 } else { -1.0 };
            let (v, norm2) = class.prepare(row);
            if let Some(step) = self.rule.step(y * self.scores[k], v, norm2) {
                class.update(row, step.alpha * y, step.c, v, self.rule.l1_rate(&step, v));
                changed = true;
            }
        }
        changed
    }

    /// Learns the rows of `x` with class indices `labels`, as `presentation` says; validated
    /// first, so an error leaves the model untouched. Equal to [`MulticlassLearner::learn`] row
    /// by row.
    pub fn partial_fit(
        &mut self,
        x: &Matrix,
        labels: &[usize],
        presentation: Presentation,
    ) -> Result<(), CwError> {
        presentation.check(x, self.n_features, labels.len())?;
        self.check_labels(labels)?;
        presentation.for_each(x.n_rows(), |i| {
            self.learn_valid(x.row(i), labels[i]);
        });
        Ok(())
    }

    /// Fills `out` (rows × classes) by calling `f` with each row's per-class (μ_k·x, xᵀΣ_k x).
    fn fill(
        &self,
        x: &Matrix,
        out: &mut [f64],
        mut f: impl FnMut(&[(f64, f64)], &mut [f64]),
    ) -> Result<(), CwError> {
        x.validate(self.n_features)?;
        let n_classes = self.classes.len();
        if out.len() != x.n_rows() * n_classes {
            return Err(CwError::InvalidInput(format!(
                "output holds {} values for {} rows of {n_classes}",
                out.len(),
                x.n_rows()
            )));
        }
        let mut moments = vec![(0.0, 0.0); n_classes];
        for (i, o) in out.chunks_exact_mut(n_classes).enumerate() {
            let row = x.row(i);
            for (m, class) in moments.iter_mut().zip(&self.classes) {
                *m = class.moments(&row);
            }
            f(&moments, o);
        }
        Ok(())
    }

    /// μ_k·x for every row and class: `out` is rows × classes, row-major.
    pub fn decision_function(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.fill(x, out, |moments, o| {
            o.iter_mut().zip(moments).for_each(|(o, m)| *o = m.0);
        })
    }

    /// xᵀΣ_k x for every row and class (rows × classes).
    pub fn variances(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.fill(x, out, |moments, o| {
            o.iter_mut().zip(moments).for_each(|(o, m)| *o = m.1);
        })
    }

    /// P(class k | x): the probability that class k has the highest score when the class
    /// scores are independent Gaussians with means μ_k·x and a common variance, the mean of the
    /// classes' xᵀΣ_k x (rows × classes, each row summing to 1). The common variance makes the
    /// probabilities rank the classes exactly as their scores do; with two classes it is exact.
    pub fn probabilities(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        let mut means = vec![0.0; self.classes.len()];
        self.fill(x, out, |moments, o| {
            means
                .iter_mut()
                .zip(moments)
                .for_each(|(mean, m)| *mean = m.0);
            let pooled = moments.iter().map(|m| m.1).sum::<f64>() / moments.len() as f64;
            argmax_probabilities(&means, pooled.sqrt(), o);
        })
    }
}

/// The highest-scoring class other than `label` (the first one on ties).
fn highest_other(scores: &[f64], label: usize) -> usize {
    let mut best = if label == 0 { 1 } else { 0 };
    for (k, &s) in scores.iter().enumerate() {
        if k != label && s > scores[best] {
            best = k;
        }
    }
    best
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
mod tests {
    use super::*;

    #[test]
    fn gauss_hermite_integrates_normal_moments() {
        let (nodes, weights) = gauss_hermite();
        let moment =
            |p: i32| -> f64 { nodes.iter().zip(weights).map(|(z, w)| w * z.powi(p)).sum() };
        assert!((moment(0) - 1.0).abs() < 1e-13);
        assert!(moment(1).abs() < 1e-13);
        assert!((moment(2) - 1.0).abs() < 1e-12);
        assert!((moment(4) - 3.0).abs() < 1e-11);
    }

    #[test]
    fn argmax_probabilities_of_two_classes_match_the_closed_form() {
        // P(s_1 > s_0) = Φ((m_1 − m_0)/(√2·sd)).
        let mut out = [0.0; 2];
        argmax_probabilities(&[0.3, 0.9], 0.8, &mut out);
        let exact = normal_cdf(0.6 / (2.0f64.sqrt() * 0.8));
        assert!((out[1] - exact).abs() < 1e-10, "{out:?} vs {exact}");
        assert!((out[0] + out[1] - 1.0).abs() < 1e-15);
    }

    #[test]
    fn argmax_probabilities_rank_like_the_means() {
        let means = [0.1, -2.0, 0.35, 0.3, 5.0, 0.34];
        for sd in [0.01, 0.3, 1.0, 30.0] {
            let mut out = [0.0; 6];
            argmax_probabilities(&means, sd, &mut out);
            for a in 0..6 {
                for b in 0..6 {
                    if means[a] > means[b] {
                        assert!(out[a] >= out[b], "sd {sd}: {out:?}");
                    }
                }
            }
            assert!((out.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        // Three equal classes share the mass.
        let mut out = [0.0; 3];
        argmax_probabilities(&[1.0, 1.0, 1.0], 0.5, &mut out);
        assert!(out.iter().all(|p| (p - 1.0 / 3.0).abs() < 1e-12), "{out:?}");
    }

    #[test]
    fn linear_kernel_multiclass_equals_the_primal_full_covariance_learner() {
        use crate::covariance::dual::DualGaussian;
        use crate::kernel::Kernel;
        let mut seed = 0x9E37_79B9u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let (n, d) = (60, 3);
        let x: Vec<f64> = (0..n * d).map(|_| next()).collect();
        let labels: Vec<usize> = (0..n)
            .map(|i| ((x[i * d] + 1.0) * 1.5) as usize % 3)
            .collect();
        let m = Matrix::Dense {
            values: &x,
            n_rows: n,
            n_cols: d,
        };
        for name in crate::rules::RULE_NAMES {
            let rule = Rule::from_name(name, &[]).unwrap();
            let kind = if rule.is_second_order() {
                CovarianceKind::Full
            } else {
                CovarianceKind::Identity
            };
            for strategy in [Strategy::MaxScore, Strategy::OneVsRest] {
                let mut primal =
                    MulticlassLearner::new(rule, strategy, kind, 3, d, true, 0.9).unwrap();
                let class =
                    DualGaussian::new(Kernel::Linear, rule.is_second_order(), d, true, 0.9, None)
                        .unwrap();
                let mut dual = MulticlassLearner::with_classes(rule, strategy, d, vec![class; 3]);
                primal
                    .partial_fit(&m, &labels, Presentation::default())
                    .unwrap();
                dual.partial_fit(&m, &labels, Presentation::default())
                    .unwrap();
                assert_eq!(
                    primal.n_mistakes(),
                    dual.n_mistakes(),
                    "{name} {strategy:?}"
                );
                assert_eq!(primal.n_updates(), dual.n_updates(), "{name} {strategy:?}");
                let (mut fp, mut fd) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
                primal.probabilities(&m, &mut fp).unwrap();
                dual.probabilities(&m, &mut fd).unwrap();
                for (a, b) in fp.iter().zip(&fd) {
                    assert!((a - b).abs() < 1e-9, "{name} {strategy:?}: {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn max_score_learns_and_batch_equals_rows() {
        let rows = [
            [1.0, 0.0],
            [0.0, 1.0],
            [-1.0, -1.0],
            [1.0, 0.2],
            [0.1, 1.0],
            [-1.0, -0.8],
        ];
        let labels = [0, 1, 2, 0, 1, 2];
        for strategy in [Strategy::MaxScore, Strategy::OneVsRest] {
            for (name, kind) in [
                ("AROW", CovarianceKind::Full),
                ("PA", CovarianceKind::Identity),
            ] {
                let rule = Rule::from_name(name, &[]).unwrap();
                let mut single =
                    MulticlassLearner::new(rule, strategy, kind, 3, 2, true, 1.0).unwrap();
                for (row, &label) in rows.iter().zip(&labels) {
                    single.learn(Row::Dense(row), label).unwrap();
                }
                let mut batch =
                    MulticlassLearner::new(rule, strategy, kind, 3, 2, true, 1.0).unwrap();
                let flat: Vec<f64> = rows.iter().flatten().copied().collect();
                let x = Matrix::Dense {
                    values: &flat,
                    n_rows: 6,
                    n_cols: 2,
                };
                batch
                    .partial_fit(&x, &labels, Presentation::default())
                    .unwrap();
                assert_eq!(single, batch);
                let mut scores = vec![0.0; 18];
                batch.decision_function(&x, &mut scores).unwrap();
                for (i, &label) in labels.iter().enumerate() {
                    let row = &scores[i * 3..i * 3 + 3];
                    assert!(row.iter().all(|&s| s <= row[label]));
                }
                assert!(batch
                    .partial_fit(&x, &[0, 1, 3, 0, 1, 2], Presentation::default())
                    .is_err());
                assert_eq!(single, batch);
            }
        }
    }

    /// Fuzz crash (model_state): n_classes × dim overflowed (a panic in debug builds); in
    /// release 2^62 classes of 4 coordinates wrapped to 0 values, so an empty state passed and
    /// built a learner with no class at all, which panicked on its first use.
    #[test]
    fn from_state_rejects_a_class_count_whose_size_overflows() {
        let rule = Rule::from_name("AROW", &[]).unwrap();
        for n_classes in [1 << 62, usize::MAX] {
            let restored = MulticlassLearner::from_state(
                rule,
                Strategy::MaxScore,
                CovarianceKind::Diagonal,
                n_classes,
                3,
                true,
                &[],
                &[],
                0,
                0,
            );
            assert!(restored.is_err(), "{n_classes} classes");
        }
    }
}
