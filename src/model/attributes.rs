//! The values a model shows by name (Python: the read-only attributes of `_cwrs.Model`), so
//! that the bindings read every one of them the same way.

use crate::model::state::{State, Value};
use crate::model::{Estimator, Model};

impl Estimator {
    /// The value named `name` `None` where the model has no such value
    /// (the dual form has no mean). A multiclass model's mean and covariance hold one row per
    /// class, one after the other.
    ///
    /// - `kind`, `n_classes` (`None` for one output per row), `n_updates`, `n_mistakes` (`None`
    ///   for a regressor): see the methods of the same names;
    /// - `covariance_kind`: "identity", "diag" or "full" (`None` for a kernel model);
    /// - `mean`: μ over the features, then the bias weight, with every L1 threshold applied;
    /// - `covariance`: empty, the variances, or Σ row-major, over the mean's coordinates;
    /// - `dense_covariance`: Σ itself as a dense row-major matrix over the mean's coordinates
    ///   whatever the form (the low-rank form's (diag(1/S) + BᵀB)⁻¹ formed here); not for
    ///   AdaGrad's and FTRL's state;
    /// - `n_support`: a binary kernel model's support rows, or one count per class;
    /// - `dual_coef`: ν, one coefficient per support row of a binary kernel model (averaged, if
    ///   the model averages);
    /// - `support_vectors`: a binary kernel model's support rows as CSR arrays `values`,
    ///   `indices` and `indptr`;
    /// - `config`: the configuration entries the model was built from (its rule's
    ///   hyper-parameters as it learns with them).
    pub fn attribute(&self, name: &str) -> Option<Value<'static>> {
        Some(match name {
            "kind" => self.kind().into(),
            "n_classes" => self.n_classes().into(),
            "covariance_kind" => self.covariance_kind().map(|kind| kind.name()).into(),
            "mean" => self.mean()?.into(),
            "covariance" => self.covariance()?.into(),
            "dense_covariance" => match self.model() {
                Model::Binary(l) => l.dense_covariance()?.into(),
                Model::Regressor(l) => l.dense_covariance()?.into(),
                Model::Multiclass(l) => l.dense_covariances()?.into(),
                Model::Kernel(_) | Model::MulticlassKernel(_) => return None,
            },
            "n_updates" => self.n_updates().into(),
            "n_mistakes" => self.n_mistakes().into(),
            "n_support" => match self.model() {
                Model::Kernel(l) => l.model().n_support().into(),
                Model::MulticlassKernel(l) => {
                    let counts = l.classes().iter().map(|g| g.n_support() as u64);
                    counts.collect::<Vec<_>>().into()
                }
                _ => return None,
            },
            "dual_coef" => match self.model() {
                Model::Kernel(l) => l.predicted_mean(0, l.model().dual_coef().to_vec()).into(),
                _ => return None,
            },
            "support_vectors" => match self.model() {
                Model::Kernel(l) => {
                    let (values, indices, indptr) = l.model().support_vectors();
                    let rows = State::default().with("values", values);
                    rows.with("indices", indices).with("indptr", indptr).into()
                }
                _ => return None,
            },
            "config" => self.config().into(),
            // The process noise `"auto"` added since its last reset (None without it).
            "noise_since_reset" => {
                let detector = match self.model() {
                    Model::Binary(l) => l.change_detector(),
                    Model::Regressor(l) => l.change_detector(),
                    Model::Multiclass(l) => l.change_detector(),
                    Model::Kernel(l) => l.change_detector(),
                    Model::MulticlassKernel(l) => l.change_detector(),
                };
                detector.map(|d| d.noise_since_reset).into()
            }
            _ => return None,
        })
    }
}
