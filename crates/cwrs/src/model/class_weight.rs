//! `class_weight="balanced"` while streaming (docs/design.md §2.10): each call first adds its
//! rows' sample weights per class to the counts the model keeps (a row without a weight counts
//! 1), then learns every row of class k with weight N/(K·n_k) times its own, N the total counted,
//! K the classes. One call over all the rows (`fit`) is scikit-learn's
//! `compute_class_weight("balanced", classes, y, sample_weight)`: n_samples/(n_classes·count)
//! without weights. A weighted count keeps a subsampled class (rows kept at rate p, weighted
//! 1/p) at the share it has in the full stream.

use crate::data::{weight_of, Weights, MAX_WEIGHT};
use crate::error::CwError;
use crate::model::{Model, Targets};

/// The class of each target: ±1 labels as 0 (−1) and 1 (+1), class indices as themselves.
fn classes(targets: Targets) -> Box<dyn Iterator<Item = usize> + '_> {
    match targets {
        Targets::Values(y) => Box::new(y.iter().map(|&y| usize::from(y > 0.0))),
        Targets::Classes(k) => Box::new(k.iter().copied()),
    }
}

impl Model {
    /// The running class counts of `class_weight="balanced"`, the total sample weight seen per
    /// class (empty until a balanced call).
    pub fn class_counts(&self) -> &[f64] {
        &self.class_counts
    }

    /// Sets the running class counts (a restored or merged model): one per class, each a
    /// finite count ≥ 0, or none.
    pub fn set_class_counts(&mut self, counts: Vec<f64>) -> Result<(), CwError> {
        let n_classes = match self.model_config().kind.is_regression() {
            true => 0,
            false => self.n_classes().unwrap_or(2),
        };
        let valid = counts.iter().all(|c| c.is_finite() && *c >= 0.0);
        if !(counts.is_empty() || counts.len() == n_classes) || !valid {
            return Err(CwError::InvalidState(format!(
                "entry \"class_counts\" must hold a finite count ≥ 0 per class ({n_classes}), \
                 got {counts:?}"
            )));
        }
        self.class_counts = counts;
        Ok(())
    }

    /// The weights of a balanced call on `targets` with `weights`, and the class counts that
    /// include it (which the model takes once the call has learned).
    pub(crate) fn balanced(
        &self,
        targets: Targets,
        weights: Weights,
    ) -> Result<(Vec<f64>, Vec<f64>), CwError> {
        if self.model_config().kind.is_regression() {
            return Err(CwError::InvalidParameter(
                "class_weight applies to classifiers, not to a regressor".into(),
            ));
        }
        let n_classes = self.n_classes().unwrap_or(2);
        let mut counts = self.class_counts.clone();
        counts.resize(n_classes, 0.0);
        let n = match targets {
            Targets::Values(y) => y.len(),
            Targets::Classes(k) => k.len(),
        };
        if let Some(w) = weights {
            crate::data::check_weights(w, n)?;
        }
        for (i, class) in classes(targets).enumerate() {
            if class < n_classes {
                counts[class] += weight_of(weights, i);
            }
        }
        let total: f64 = counts.iter().sum();
        if !total.is_finite() {
            return Err(CwError::InvalidInput(format!(
                "the class counts of class_weight=\"balanced\" would overflow with these \
                 sample weights (their total is {total})"
            )));
        }
        let factors: Vec<f64> = counts
            .iter()
            .map(|&count| total / (n_classes as f64 * count))
            .collect();
        let balanced: Vec<f64> = classes(targets)
            .enumerate()
            .map(|(i, class)| {
                let h = weight_of(weights, i);
                // A class out of range is refused by the learner; its weight is never used.
                if h == 0.0 {
                    0.0
                } else {
                    h * factors.get(class).copied().unwrap_or(1.0)
                }
            })
            .collect();
        if let Some(i) = balanced.iter().position(|&h| h > MAX_WEIGHT) {
            return Err(CwError::InvalidInput(format!(
                "row {i}'s weight, its sample_weight {} times its class's balanced weight, is {}: \
                 past 2**64, the largest weight a row takes",
                weight_of(weights, i),
                balanced[i]
            )));
        }
        Ok((balanced, counts))
    }
}
