//! A binary learner in the dual form: the binary round (labels ±1, mistakes, the rule's step)
//! over a [`DualGaussian`].

use super::DualGaussian;
use crate::covariance::Covariance;
use crate::data::{Matrix, Presentation};
use crate::error::CwError;
use crate::gaussian::Update;
use crate::kernel::Kernel;
use crate::learner::check_labels;
use crate::rules::{margin_probability, Rule};

/// A binary learner in the dual form; labels are ±1.
#[derive(Clone, Debug, PartialEq)]
pub struct DualLearner {
    rule: Rule,
    model: DualGaussian,
    n_updates: u64,
    n_mistakes: u64,
}

impl DualLearner {
    /// A fresh dual learner: S empty, Σ = a·I. `budget` caps |S| (at least 1).
    pub fn new(
        rule: Rule,
        kernel: Kernel,
        n_features: usize,
        fit_intercept: bool,
        a: f64,
        budget: Option<usize>,
    ) -> Result<DualLearner, CwError> {
        let model = DualGaussian::new(
            kernel,
            rule.is_second_order(),
            n_features,
            fit_intercept,
            a,
            budget,
        )?;
        Ok(DualLearner::from_gaussian(rule, model))
    }

    /// A learner over a given dual Gaussian (fresh or restored), with zero counters.
    pub fn from_gaussian(rule: Rule, model: DualGaussian) -> DualLearner {
        DualLearner {
            rule,
            model,
            n_updates: 0,
            n_mistakes: 0,
        }
    }

    /// Sets the counters (when restoring a state).
    pub fn with_counters(mut self, n_updates: u64, n_mistakes: u64) -> DualLearner {
        (self.n_updates, self.n_mistakes) = (n_updates, n_mistakes);
        self
    }

    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// The dual Gaussian: support rows and coefficients.
    pub fn model(&self) -> &DualGaussian {
        &self.model
    }

    pub fn n_updates(&self) -> u64 {
        self.n_updates
    }

    pub fn n_mistakes(&self) -> u64 {
        self.n_mistakes
    }

    /// Learns the rows of `x` with labels `y` (±1) as `presentation` says; validated first,
    /// and an error of a custom kernel undoes the call, so an error leaves the model untouched.
    pub fn partial_fit(
        &mut self,
        x: &Matrix,
        y: &[f64],
        presentation: Presentation,
    ) -> Result<(), CwError> {
        presentation.check(x, self.model.n_features(), y.len())?;
        check_labels(y)?;
        let before = matches!(self.model.kernel(), Kernel::Custom(_)).then(|| self.clone());
        let DualLearner {
            rule,
            model,
            n_updates,
            n_mistakes,
        } = self;
        let rows = presentation.sequence(x.n_rows()).map(|i| (i, x.row(i)));
        // The counters saturate: a restored state may hold any count.
        model.learn_rows(rows, |i, seen| {
            let m = y[i] * seen.score;
            if m <= 0.0 {
                *n_mistakes = n_mistakes.saturating_add(1);
            }
            let step = rule.step(m, seen.variance, seen.squared_norm)?;
            *n_updates = n_updates.saturating_add(1);
            Some(Update {
                step: step.alpha * y[i],
                c: step.c,
                eta: 0.0,
            })
        });
        match (self.model.take_failure(), before) {
            (Some(error), Some(before)) => {
                *self = before;
                Err(error)
            }
            _ => Ok(()),
        }
    }

    fn check_out(x: &Matrix, out: &[f64]) -> Result<(), CwError> {
        if out.len() == x.n_rows() {
            Ok(())
        } else {
            Err(CwError::InvalidInput(format!(
                "output holds {} values for {} rows",
                out.len(),
                x.n_rows()
            )))
        }
    }

    /// μ·φ(x) for every row.
    pub fn decision_function(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        Self::check_out(x, out)?;
        self.model.moments(x, |i, score, _| out[i] = score)
    }

    /// φ(x)ᵀΣφ(x) for every row.
    pub fn variances(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        Self::check_out(x, out)?;
        self.model.moments(x, |i, _, v| out[i] = v)
    }

    /// Φ(μ·φ(x) / √(φ(x)ᵀΣφ(x))) for every row.
    pub fn positive_probability(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        Self::check_out(x, out)?;
        self.model
            .moments(x, |i, score, v| out[i] = margin_probability(score, v))
    }
}
