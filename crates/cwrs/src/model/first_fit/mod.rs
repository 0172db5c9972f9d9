//! The first call that learns into a fresh linear model (docs/design.md §3.5.1): Python's `fit`
//! learns into a new model, and so does a first `partial_fit`. Such a model is undone by
//! building it again from its configuration, so its first batch keeps no copy of the model
//! (16 MiB for a diagonal one of 2^20 features) to restore on an interruption, or on a row that
//! a second core, validating ahead of the learner, refuses late.

use super::{AnyLearner, Model, Targets};
use crate::data::{Matrix, Presentation};
use crate::error::CwError;

/// Whether `model` is built from its configuration alone (a kernel model may hold the caller's
/// kernel, which the configuration does not name): whether a fresh one can be built again.
pub(super) fn rebuildable(model: &AnyLearner) -> bool {
    matches!(
        model,
        AnyLearner::Binary(_) | AnyLearner::Regressor(_) | AnyLearner::Multiclass(_)
    )
}

impl Model {
    /// Whether the model is linear and as [`Model::new`] built it: nothing learned,
    /// restored or changed in place since.
    pub(crate) fn is_fresh(&self) -> bool {
        self.fresh
    }

    /// Undoes everything learned since the model was built by building it again (its
    /// configuration built it once already).
    pub(crate) fn rebuild(&mut self) -> Result<(), CwError> {
        self.model = Self::build(&self.config, &None)?;
        self.fresh = true;
        Ok(())
    }

    /// [`Model::partial_fit`] of a fresh model, without a copy to undo a late error: the
    /// model is built again instead; `None` (nothing done) when the model is not fresh or
    /// `targets` are not its kind's.
    pub(super) fn first_fit(
        &mut self,
        x: &Matrix,
        targets: Targets,
        presentation: Presentation,
    ) -> Option<Result<(), CwError>> {
        if !self.fresh {
            return None;
        }
        let learned = match (&mut self.model, targets) {
            (AnyLearner::Binary(l), Targets::Values(y)) => l.learn_batch(x, y, presentation, false),
            (AnyLearner::Regressor(l), Targets::Values(y)) => {
                l.learn_batch(x, y, presentation, false)
            }
            (AnyLearner::Multiclass(l), Targets::Classes(k)) => {
                l.learn_batch(x, k, presentation, false)
            }
            _ => return None,
        };
        self.fresh = false;
        Some(learned.or_else(|error| {
            self.rebuild()?;
            Err(error)
        }))
    }
}

#[cfg(test)]
mod tests;
