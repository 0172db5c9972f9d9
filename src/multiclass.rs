//! Multiclass learning with one Gaussian (mean and covariance) per class (DESIGN §4).
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
use crate::data::{Features, Matrix, Presentation, Row, Shape};
use crate::error::CwError;
use crate::gaussian::Gaussian;
use crate::learner::{check_covariance, check_initial_variance};
use crate::rules::{normal_cdf, Rule};

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

#[derive(Clone, Debug, PartialEq)]
pub struct MulticlassLearner {
    rule: Rule,
    strategy: Strategy,
    shape: Shape,
    classes: Vec<Gaussian>,
    n_updates: u64,
    n_mistakes: u64,
    /// μ_k·x of the current row.
    scores: Vec<f64>,
}

impl MulticlassLearner {
    /// A fresh learner over `n_classes` ≥ 2 classes, each with μ = 0 and Σ = a·I.
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
        let shape = Self::check(rule, kind, n_classes, n_features, fit_intercept)?;
        let classes = vec![Gaussian::new(kind, shape.dim(), a); n_classes];
        Ok(Self::assemble(rule, strategy, shape, classes, 0, 0))
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
        let shape = Self::check(rule, kind, n_classes, n_features, fit_intercept)?;
        let dim = shape.dim();
        if means.len() != n_classes * dim || covariances.len() % n_classes != 0 {
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
            .map(|(mean, cov)| Gaussian::from_parts(kind, dim, mean, cov))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self::assemble(
            rule, strategy, shape, classes, n_updates, n_mistakes,
        ))
    }

    fn check(
        rule: Rule,
        kind: CovarianceKind,
        n_classes: usize,
        n_features: usize,
        fit_intercept: bool,
    ) -> Result<Shape, CwError> {
        check_covariance(rule, kind)?;
        if n_classes < 2 {
            return Err(CwError::InvalidInput(format!(
                "a multiclass model needs at least 2 classes, got {n_classes}"
            )));
        }
        Shape::new(n_features, fit_intercept)
    }

    fn assemble(
        rule: Rule,
        strategy: Strategy,
        shape: Shape,
        classes: Vec<Gaussian>,
        n_updates: u64,
        n_mistakes: u64,
    ) -> MulticlassLearner {
        let scores = vec![0.0; classes.len()];
        MulticlassLearner {
            rule,
            strategy,
            shape,
            classes,
            n_updates,
            n_mistakes,
            scores,
        }
    }

    pub fn rule(&self) -> Rule {
        self.rule
    }

    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    pub fn covariance_kind(&self) -> CovarianceKind {
        self.classes[0].kind()
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }

    pub fn n_classes(&self) -> usize {
        self.classes.len()
    }

    /// The class means concatenated in class order, each over the features then the bias.
    pub fn means(&self) -> Vec<f64> {
        self.classes
            .iter()
            .flat_map(|g| g.mean().iter().copied())
            .collect()
    }

    /// The class covariance values concatenated in class order (see [`Gaussian::covariance`]).
    pub fn covariances(&self) -> Vec<f64> {
        self.classes
            .iter()
            .flat_map(|g| g.covariance().iter().copied())
            .collect()
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
        row.validate(self.shape.n_features)?;
        self.check_labels(&[label])?;
        Ok(self.learn_valid(row, label))
    }

    fn check_labels(&self, labels: &[usize]) -> Result<(), CwError> {
        match labels.iter().find(|&&k| k >= self.classes.len()) {
            Some(bad) => Err(CwError::InvalidInput(format!(
                "class index {bad} is out of range for {} classes",
                self.classes.len()
            ))),
            None => Ok(()),
        }
    }

    fn learn_valid(&mut self, row: Row, label: usize) -> bool {
        let x = self.shape.features(row);
        for (score, class) in self.scores.iter_mut().zip(&self.classes) {
            *score = class.score(&x);
        }
        let rival = highest_other(&self.scores, label);
        if self.scores[label] - self.scores[rival] <= 0.0 {
            self.n_mistakes += 1;
        }
        let changed = match self.strategy {
            Strategy::MaxScore => self.max_score_update(&x, label, rival),
            Strategy::OneVsRest => self.one_vs_rest_update(&x, label),
        };
        self.n_updates += u64::from(changed);
        changed
    }

    fn max_score_update(&mut self, x: &Features, label: usize, rival: usize) -> bool {
        let m = self.scores[label] - self.scores[rival];
        let v_label = self.classes[label].prepare(x);
        let v_rival = self.classes[rival].prepare(x);
        let norm2 = self.classes[label].squared_norm(x, v_label)
            + self.classes[rival].squared_norm(x, v_rival);
        match self.rule.step(m, v_label + v_rival, norm2) {
            Some(step) => {
                self.classes[label].update(x, step.alpha, step.c, v_label);
                self.classes[rival].update(x, -step.alpha, step.c, v_rival);
                true
            }
            None => false,
        }
    }

    fn one_vs_rest_update(&mut self, x: &Features, label: usize) -> bool {
        let mut changed = false;
        for (k, class) in self.classes.iter_mut().enumerate() {
            let y = if k == label { 1.0 } else { -1.0 };
            let v = class.prepare(x);
            if let Some(step) = self
                .rule
                .step(y * self.scores[k], v, class.squared_norm(x, v))
            {
                class.update(x, step.alpha * y, step.c, v);
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
        presentation.check(x, self.shape.n_features, labels.len())?;
        self.check_labels(labels)?;
        presentation.for_each(x.n_rows(), |i| {
            self.learn_valid(x.row(i), labels[i]);
        });
        Ok(())
    }

    /// μ_k·x for every row and class: `out` is rows × classes, row-major.
    pub fn decision_function(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.shape.fill_rows(x, out, self.classes.len(), |f, o| {
            for (score, class) in o.iter_mut().zip(&self.classes) {
                *score = class.score(f);
            }
        })
    }

    /// xᵀΣ_k x for every row and class (rows × classes).
    pub fn variances(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.shape.fill_rows(x, out, self.classes.len(), |f, o| {
            for (v, class) in o.iter_mut().zip(&self.classes) {
                *v = class.variance(f);
            }
        })
    }

    /// P(class k | x): the probability that class k has the highest score when the class
    /// scores are independent Gaussians with means μ_k·x and a common variance, the mean of the
    /// classes' xᵀΣ_k x (rows × classes, each row summing to 1). The common variance makes the
    /// probabilities rank the classes exactly as their scores do; with two classes it is exact.
    pub fn probabilities(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        let n_classes = self.classes.len();
        let mut means = vec![0.0; n_classes];
        self.shape.fill_rows(x, out, n_classes, |f, o| {
            let mut pooled = 0.0;
            for (m, class) in means.iter_mut().zip(&self.classes) {
                *m = class.score(f);
                pooled += class.variance(f);
            }
            argmax_probabilities(&means, (pooled / n_classes as f64).sqrt(), o);
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
    if sd > 0.0 {
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
}
