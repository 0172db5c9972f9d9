//! What a fitted model shows beyond its predictions, each value by its own method (the
//! bindings name them: `cwrs-python`'s `host::attributes`).

use crate::model::{AnyLearner, Model};
use crate::rules::RegressionRule;

/// A kernel model's support rows as CSR arrays: values, column indices, row pointers.
pub type SupportRows = (Vec<f64>, Vec<u32>, Vec<u64>);

impl Model {
    /// Σ as a dense row-major matrix over the mean's coordinates whatever the form (the
    /// low-rank form's (diag(1/S) + BᵀB)⁻¹ formed here), one matrix per class after the other;
    /// `None` for kernel models and AdaGrad's and FTRL's state.
    pub fn dense_covariance(&self) -> Option<Vec<f64>> {
        match self.model() {
            AnyLearner::Binary(l) => l.dense_covariance(),
            AnyLearner::Regressor(l) => l.dense_covariance(),
            AnyLearner::Multiclass(l) => l.dense_covariances(),
            AnyLearner::Kernel(_) | AnyLearner::MulticlassKernel(_) => None,
        }
    }

    /// The support rows of a kernel model, one count per class (one for a binary model);
    /// `None` for a linear model.
    pub fn n_support(&self) -> Option<Vec<usize>> {
        match self.model() {
            AnyLearner::Kernel(l) => Some(vec![l.model().n_support()]),
            AnyLearner::MulticlassKernel(l) => {
                Some(l.classes().iter().map(|g| g.n_support()).collect())
            }
            _ => None,
        }
    }

    /// ν, one coefficient per support row of a binary kernel model (averaged, if the model
    /// averages); `None` for other models.
    pub fn dual_coef(&self) -> Option<Vec<f64>> {
        match self.model() {
            AnyLearner::Kernel(l) => Some(l.predicted_mean(0, l.model().dual_coef().to_vec())),
            _ => None,
        }
    }

    /// A binary kernel model's support rows; `None` for other models.
    pub fn support_vectors(&self) -> Option<SupportRows> {
        match self.model() {
            AnyLearner::Kernel(l) => Some(l.model().support_vectors()),
            _ => None,
        }
    }

    /// The process noise `"auto"` added since its last reset (`None` without it).
    pub fn noise_since_reset(&self) -> Option<f64> {
        let detector = match self.model() {
            AnyLearner::Binary(l) => l.change_detector(),
            AnyLearner::Regressor(l) => l.change_detector(),
            AnyLearner::Multiclass(l) => l.change_detector(),
            AnyLearner::Kernel(l) => l.change_detector(),
            AnyLearner::MulticlassKernel(l) => l.change_detector(),
        };
        detector.map(|d| d.noise_since_reset)
    }

    /// The prior variance of the feature weights learned from the stream (`a="auto"`,
    /// docs/design.md §3.14); `None` for a model that does not learn it.
    pub fn prior_variance(&self) -> Option<f64> {
        self.prior_estimate().map(|prior| prior.variance)
    }

    /// The noise variance learned from the stream (docs/design.md §3.14): a second-order
    /// classifier's label noise s² in margin units, or AROW regression's σ̂² = r·κ; `None`
    /// for the other learners.
    pub fn noise_variance(&self) -> Option<f64> {
        let noise = self.noise_estimate()?;
        match self.model() {
            AnyLearner::Regressor(l) => match l.rule() {
                RegressionRule::AROW { r } => Some(r * noise.estimate),
                _ => None,
            },
            _ => Some(noise.label_variance()),
        }
    }
}
