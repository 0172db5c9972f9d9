//! A binary learner: one rule × one covariance form, with the counters.

use std::borrow::Cow;

use crate::covariance::CovarianceKind;
use crate::data::{learn_validated_ahead, Matrix, Presentation, Row, Shape};
use crate::error::CwError;
use crate::gaussian::{Gaussian, Update};
use crate::rules::{margin_probability, Rule};
use crate::sparse_l1::L1;

/// The state of a binary learner; labels are ±1.
#[derive(Clone, Debug, PartialEq)]
pub struct Learner {
    rule: Rule,
    shape: Shape,
    model: Gaussian,
    n_updates: u64,
    n_mistakes: u64,
}

/// Checks that a rule and a covariance form fit together: first-order rules keep Σ = I,
/// second-order rules learn a diagonal or full Σ.
pub(crate) fn check_covariance(rule: Rule, kind: CovarianceKind) -> Result<(), CwError> {
    if rule.is_second_order() != (kind == CovarianceKind::Identity) {
        return Ok(());
    }
    let expected = if rule.is_second_order() {
        "\"diag\" or \"full\""
    } else {
        "identity"
    };
    Err(CwError::InvalidParameter(format!(
        "{rule:?} needs a {expected} covariance, got {:?}",
        kind.name()
    )))
}

/// Rows validated per step when a second core validates ahead of learning.
const VALIDATION_CHUNK: usize = 4096;

/// Whether a batch is learned while a second core validates its rows ahead: when there is a
/// second core, the rows come in order, and the batch is large next to the model, whose copy
/// (kept to undo a late error) then costs little beside the validation it hides.
fn validate_ahead(x: &Matrix, presentation: &Presentation, model_values: usize) -> bool {
    presentation.order.is_none()
        && x.n_rows() > 2 * VALIDATION_CHUNK
        && x.n_entries() >= 4 * model_values
        && crate::available_cores() >= 2
}

/// Checks the initial variance a > 0.
pub(crate) fn check_initial_variance(a: f64) -> Result<(), CwError> {
    if a.is_finite() && a > 0.0 {
        Ok(())
    } else {
        Err(CwError::InvalidParameter(format!(
            "a must be a positive finite number, got {a}"
        )))
    }
}

impl Learner {
    /// A fresh learner with μ = 0 and Σ = a·I (a is ignored by the identity covariance).
    pub fn new(
        rule: Rule,
        kind: CovarianceKind,
        n_features: usize,
        fit_intercept: bool,
        a: f64,
    ) -> Result<Learner, CwError> {
        check_initial_variance(a)?;
        check_covariance(rule, kind)?;
        let shape = Shape::new(n_features, fit_intercept)?;
        Gaussian::check_size(kind, shape.dim(), 1)?;
        Ok(Learner {
            rule,
            shape,
            model: Gaussian::new(kind, shape.dim(), a),
            n_updates: 0,
            n_mistakes: 0,
        })
    }

    /// Rebuilds a learner from its state (the inverse of the accessors below).
    #[allow(clippy::too_many_arguments)]
    pub fn from_state(
        rule: Rule,
        kind: CovarianceKind,
        n_features: usize,
        fit_intercept: bool,
        mean: &[f64],
        covariance: &[f64],
        n_updates: u64,
        n_mistakes: u64,
    ) -> Result<Learner, CwError> {
        check_covariance(rule, kind)?;
        let shape = Shape::new(n_features, fit_intercept)?;
        Ok(Learner {
            rule,
            shape,
            model: Gaussian::from_parts(kind, shape.dim(), mean, covariance)?,
            n_updates,
            n_mistakes,
        })
    }

    /// Adds sparse L1 training (diagonal covariance only), with its lazy state when restoring.
    pub fn with_l1(mut self, l1: L1) -> Result<Learner, CwError> {
        self.model = self.model.with_l1(l1)?;
        Ok(self)
    }

    /// See [`Moments::fold`](crate::covariance::Moments::fold).
    pub fn fold(&mut self) {
        self.model.fold();
    }

    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// The L1 penalty's lazy state, if any.
    pub fn l1(&self) -> Option<&L1> {
        self.model.l1()
    }

    /// The mean with every L1 threshold applied (equal to [`Learner::mean`] without a penalty).
    pub fn effective_mean(&self) -> Vec<f64> {
        self.model.effective_mean()
    }

    pub fn covariance_kind(&self) -> CovarianceKind {
        self.model.kind()
    }

    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The stored μ over the features, then the bias weight when the model fits an intercept
    /// (with an L1 penalty, before the pending thresholds: see [`Learner::effective_mean`]).
    pub fn mean(&self) -> Cow<'_, [f64]> {
        self.model.mean()
    }

    /// The covariance values over the same coordinates as [`Learner::mean`]: empty for the
    /// identity, the variances for the diagonal form, Σ row-major for the full form.
    pub fn covariance(&self) -> Cow<'_, [f64]> {
        self.model.covariance()
    }

    /// The covariance as [`Self::from_state`] takes it back (for the full form, with its
    /// pending rank-one terms).
    pub fn covariance_state(&self) -> Cow<'_, [f64]> {
        self.model.covariance_state()
    }

    /// Rounds whose update changed the model.
    pub fn n_updates(&self) -> u64 {
        self.n_updates
    }

    /// Rounds with y·μ·x ≤ 0 before learning.
    pub fn n_mistakes(&self) -> u64 {
        self.n_mistakes
    }

    /// μ·x for one row (validated here).
    pub fn decision(&self, row: Row) -> Result<f64, CwError> {
        row.validate(self.shape.n_features)?;
        Ok(self.model.score(&self.shape.features(row)))
    }

    /// Learns one row with label `y` (±1); returns whether the model changed.
    pub fn learn(&mut self, row: Row, y: f64) -> Result<bool, CwError> {
        row.validate(self.shape.n_features)?;
        check_labels(&[y])?;
        Ok(self.learn_valid(std::iter::once((0, row)), &[y]) > 0)
    }

    /// Learns `rows` (index into `y`, row) in order; everything is valid. Returns the number of
    /// updates. The counters saturate: a restored state may hold any count.
    fn learn_valid<'a>(&mut self, rows: impl Iterator<Item = (usize, Row<'a>)>, y: &[f64]) -> u64 {
        let (shape, rule) = (self.shape, self.rule);
        let (mut mistakes, mut updates) = (0u64, 0u64);
        let rows = rows.map(|(i, row)| (i, shape.features(row)));
        self.model.learn_rows(rows, |i, seen| {
            let m = y[i] * seen.score;
            if m <= 0.0 {
                mistakes += 1;
            }
            let step = rule.step(m, seen.variance, seen.squared_norm)?;
            updates += 1;
            Some(Update {
                step: step.alpha * y[i],
                c: step.c,
                eta: rule.l1_rate(&step, seen.variance),
            })
        });
        self.n_mistakes = self.n_mistakes.saturating_add(mistakes);
        self.n_updates = self.n_updates.saturating_add(updates);
        updates
    }

    /// How many numbers the model holds (what a copy of it costs).
    fn n_values(&self) -> usize {
        let dim = self.shape.dim();
        let l1 = if self.l1().is_some() { dim } else { 0 };
        dim + l1
            + match self.covariance_kind() {
                CovarianceKind::Identity => 0,
                CovarianceKind::Diagonal => dim,
                CovarianceKind::Full => dim * dim,
            }
    }

    /// Learns the rows of `x` with labels `y` (±1) as `presentation` says. An error leaves the
    /// model untouched: rows are validated before any is learned, or, in a large batch, on a
    /// second core ahead of the learner, with the model restored if a late row is bad. The
    /// result is exactly that of calling [`Learner::learn`] row by row.
    pub fn partial_fit(
        &mut self,
        x: &Matrix,
        y: &[f64],
        presentation: Presentation,
    ) -> Result<(), CwError> {
        if validate_ahead(x, &presentation, self.n_values()) {
            presentation.check_shapes(x, self.shape.n_features, y.len())?;
            check_labels(y)?;
            // A late error must leave the model as it was: keep a copy to restore.
            let before = self.clone();
            let learned =
                learn_validated_ahead(x, self.shape.n_features, VALIDATION_CHUNK, |rows| {
                    self.learn_valid(presentation.sequence_of(rows).map(|i| (i, x.row(i))), y);
                });
            if learned.is_err() {
                *self = before;
            }
            return learned;
        }
        presentation.check(x, self.shape.n_features, y.len())?;
        check_labels(y)?;
        self.learn_valid(presentation.sequence(x.n_rows()).map(|i| (i, x.row(i))), y);
        Ok(())
    }

    /// μ·x for every row.
    pub fn decision_function(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.shape
            .fill_rows(x, out, 1, |f, o| o[0] = self.model.score(f))
    }

    /// xᵀΣx for every row.
    pub fn variances(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.shape
            .fill_rows(x, out, 1, |f, o| o[0] = self.model.variance(f))
    }

    /// P(y = +1 | x) = Φ(μ·x / √(xᵀΣx)) under the Gaussian over weights; 1/2 when xᵀΣx = 0
    /// (an all-zero row without intercept). For the identity covariance this is Φ(μ·x/‖x‖).
    pub fn positive_probability(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.shape.fill_rows(x, out, 1, |f, o| {
            o[0] = margin_probability(self.model.score(f), self.model.variance(f));
        })
    }
}

/// Checks that binary labels are ±1.
pub(crate) fn check_labels(y: &[f64]) -> Result<(), CwError> {
    match y.iter().find(|&&t| t != 1.0 && t != -1.0) {
        Some(bad) => Err(CwError::InvalidInput(format!(
            "labels must be -1 or +1, got {bad}"
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_sizes_and_corrupt_states_are_errors_not_aborts() {
        let rule = Rule::from_name("AROW", &[]).unwrap();
        // A full covariance over 10⁷ features needs 800 TB: refused before allocating.
        let full = Learner::new(rule, CovarianceKind::Full, 10_000_000, true, 1.0);
        assert!(matches!(full, Err(CwError::OutOfMemory(m)) if m.contains("covariance=\"diag\"")));
        let many_classes = crate::multiclass::MulticlassLearner::new(
            rule,
            crate::multiclass::Strategy::MaxScore,
            CovarianceKind::Diagonal,
            1 << 40,
            3,
            true,
            1.0,
        );
        assert!(matches!(many_classes, Err(CwError::OutOfMemory(_))));
        // So many features that the coordinates (features + bias) would overflow.
        for n in [usize::MAX, Shape::MAX_FEATURES + 1] {
            assert!(Learner::new(rule, CovarianceKind::Diagonal, n, true, 1.0).is_err());
            let state =
                Learner::from_state(rule, CovarianceKind::Diagonal, n, true, &[], &[], 0, 0);
            assert!(state.is_err());
        }
        // Classes × coordinates overflowing to the length of an empty state.
        let restored = crate::multiclass::MulticlassLearner::from_state(
            rule,
            crate::multiclass::Strategy::OneVsRest,
            CovarianceKind::Diagonal,
            1 << 63,
            1,
            true,
            &[],
            &[],
            0,
            0,
        );
        assert!(restored.is_err());
        // A negative variance is not a state any learning produced.
        let negative = Learner::from_state(
            rule,
            CovarianceKind::Diagonal,
            1,
            false,
            &[0.5],
            &[-1.0],
            0,
            0,
        );
        assert!(negative.is_err());
    }

    fn learner(name: &str, kind: CovarianceKind, fit_intercept: bool, d: usize) -> Learner {
        Learner::new(
            Rule::from_name(name, &[]).unwrap(),
            kind,
            d,
            fit_intercept,
            1.0,
        )
        .unwrap()
    }

    /// A deterministic pseudo-random stream (xorshift) so the tests need no dependency.
    fn stream(n: usize, d: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
        let mut s = seed;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let x: Vec<f64> = (0..n * d).map(|_| next()).collect();
        let y = (0..n)
            .map(|i| {
                if x[i * d] + 0.5 * x[i * d + 1] + 0.1 * next() > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        (x, y)
    }

    /// A batch large enough to be validated on a second core while it is learned gives the
    /// same bits as row by row, and an invalid row anywhere in it leaves the model untouched.
    #[test]
    fn validating_ahead_learns_the_same_and_undoes_a_late_error() {
        let (n, d) = (3 * VALIDATION_CHUNK + 5, 12);
        let (x, y) = stream(n, d, 99);
        let matrix = Matrix::Dense {
            values: &x,
            n_rows: n,
            n_cols: d,
        };
        let repeats: Vec<u32> = (0..n as u32).map(|i| i % 3).collect();
        let presentation = Presentation {
            repeats: Some(&repeats),
            ..Presentation::default()
        };
        for kind in [CovarianceKind::Diagonal, CovarianceKind::Full] {
            let mut batch = learner("AROW", kind, true, d);
            assert!(validate_ahead(&matrix, &presentation, batch.n_values()));
            batch.partial_fit(&matrix, &y, presentation).unwrap();
            let mut single = learner("AROW", kind, true, d);
            for i in 0..n {
                for _ in 0..repeats[i] {
                    single
                        .learn(Row::Dense(&x[i * d..(i + 1) * d]), y[i])
                        .unwrap();
                }
            }
            assert_eq!(batch, single, "{kind:?}");
            for bad_row in [0, VALIDATION_CHUNK + 7, n - 1] {
                let mut values = x.clone();
                values[bad_row * d + 3] = f64::NAN;
                let poisoned = Matrix::Dense {
                    values: &values,
                    n_rows: n,
                    n_cols: d,
                };
                let before = batch.clone();
                assert!(batch.partial_fit(&poisoned, &y, presentation).is_err());
                assert_eq!(batch, before, "{kind:?}, NaN in row {bad_row}");
            }
        }
    }

    #[test]
    fn full_covariance_is_the_inverse_of_the_accumulated_precision() {
        // Sherman–Morrison check on AROW, whose precision increment is c = 1/r per update.
        let (n, d) = (40, 4);
        let (x, y) = stream(n, d, 7);
        let mut model = learner("AROW", CovarianceKind::Full, false, d);
        let mut precision = vec![0.0; d * d];
        (0..d).for_each(|i| precision[i * d + i] = 1.0);
        for i in 0..n {
            let row = &x[i * d..(i + 1) * d];
            if model.learn(Row::Dense(row), y[i]).unwrap() {
                for p in 0..d {
                    for q in 0..d {
                        precision[p * d + q] += row[p] * row[q];
                    }
                }
            }
        }
        // Σ·P should be the identity.
        let sigma = model.covariance();
        for p in 0..d {
            for q in 0..d {
                let prod: f64 = (0..d)
                    .map(|k| sigma[p * d + k] * precision[k * d + q])
                    .sum();
                let expected = if p == q { 1.0 } else { 0.0 };
                assert!((prod - expected).abs() < 1e-9, "({p},{q}) = {prod}");
            }
        }
    }

    #[test]
    fn batch_equals_row_by_row_and_dense_equals_sparse() {
        let (n, d) = (60, 5);
        let (mut x, y) = stream(n, d, 11);
        x.iter_mut().step_by(3).for_each(|v| *v = 0.0);
        for name in crate::rules::RULE_NAMES {
            let kinds: &[CovarianceKind] = if Rule::from_name(name, &[]).unwrap().is_second_order()
            {
                &[CovarianceKind::Diagonal, CovarianceKind::Full]
            } else {
                &[CovarianceKind::Identity]
            };
            for &kind in kinds {
                let mut batch = learner(name, kind, true, d);
                let dense = Matrix::Dense {
                    values: &x,
                    n_rows: n,
                    n_cols: d,
                };
                batch
                    .partial_fit(&dense, &y, Presentation::default())
                    .unwrap();
                let mut single = learner(name, kind, true, d);
                let (mut indices, mut values, mut indptr) = (vec![], vec![], vec![0i64]);
                for i in 0..n {
                    single
                        .learn(Row::Dense(&x[i * d..(i + 1) * d]), y[i])
                        .unwrap();
                    for j in 0..d {
                        if x[i * d + j] != 0.0 {
                            indices.push(j as i64);
                            values.push(x[i * d + j]);
                        }
                    }
                    indptr.push(indices.len() as i64);
                }
                assert_eq!(batch, single, "{name} {kind:?}");
                let mut sparse = learner(name, kind, true, d);
                let csr = Matrix::Csr64 {
                    values: &values,
                    indices: &indices,
                    indptr: &indptr,
                    n_cols: d,
                };
                sparse
                    .partial_fit(&csr, &y, Presentation::default())
                    .unwrap();
                assert_eq!(batch, sparse, "{name} {kind:?}");
                assert!(batch.n_updates() > 0);
            }
        }
    }

    #[test]
    fn errors_leave_the_model_untouched() {
        let mut model = learner("AROW", CovarianceKind::Full, true, 2);
        let before = model.clone();
        let x = [1.0, 2.0, 3.0, f64::NAN];
        let dense = Matrix::Dense {
            values: &x,
            n_rows: 2,
            n_cols: 2,
        };
        assert!(model
            .partial_fit(&dense, &[1.0, -1.0], Presentation::default())
            .is_err());
        let x = [1.0, 2.0, 3.0, 4.0];
        let dense = Matrix::Dense {
            values: &x,
            n_rows: 2,
            n_cols: 2,
        };
        assert!(model
            .partial_fit(&dense, &[1.0, 0.0], Presentation::default())
            .is_err());
        assert!(model
            .partial_fit(&dense, &[1.0], Presentation::default())
            .is_err());
        assert!(model
            .partial_fit(
                &dense,
                &[1.0, 1.0],
                Presentation {
                    repeats: Some(&[1]),
                    ..Presentation::default()
                }
            )
            .is_err());
        assert!(model
            .partial_fit(
                &dense,
                &[1.0, 1.0],
                Presentation {
                    order: Some(&[0, 2]),
                    ..Presentation::default()
                }
            )
            .is_err());
        assert_eq!(model, before);
    }

    /// Fuzz crash (model_state): n_features = usize::MAX with an intercept overflowed the
    /// number of coordinates; in release it wrapped to an empty model that then indexed out of
    /// bounds on the first sparse row.
    #[test]
    fn from_state_rejects_a_bias_past_usize_max() {
        let rule = Rule::from_name("AROW", &[]).unwrap();
        for kind in [CovarianceKind::Diagonal, CovarianceKind::Full] {
            let restored = Learner::from_state(rule, kind, usize::MAX, true, &[], &[], 0, 0);
            assert!(restored.is_err(), "{kind:?}");
        }
        assert!(Shape::new(usize::MAX, false).is_err()); // past MAX_FEATURES too
    }

    /// Fuzz crash (model_state): a restored state may hold any counter, and learning from
    /// u64::MAX overflowed (a panic in debug builds; in release the count wrapped to 0 and
    /// `learn` reported an update as no change). The counters saturate in every learner.
    #[test]
    fn counters_restored_at_u64_max_saturate() {
        use crate::kernel::DualLearner;
        use crate::multiclass::{MulticlassLearner, Strategy};
        use crate::regression::Regressor;
        use crate::rules::RegressionRule;

        let max = u64::MAX;
        let rule = Rule::from_name("PA", &[]).unwrap();
        let mut binary = Learner::from_state(
            rule,
            CovarianceKind::Identity,
            2,
            false,
            &[0.0, 0.0],
            &[],
            max,
            max,
        )
        .unwrap();
        assert!(binary.learn(Row::Dense(&[1.0, 2.0]), 1.0).unwrap());
        assert_eq!((binary.n_updates(), binary.n_mistakes()), (max, max));

        let regression_rule = RegressionRule::from_name("PA", &[]).unwrap();
        let mut regressor = Regressor::from_state(
            regression_rule,
            CovarianceKind::Identity,
            1,
            true,
            &[0.0, 0.0],
            &[],
            max,
        )
        .unwrap();
        assert!(regressor.learn(Row::Dense(&[1.0]), 5.0).unwrap());
        assert_eq!(regressor.n_updates(), max);

        let mut multiclass = MulticlassLearner::from_state(
            rule,
            Strategy::MaxScore,
            CovarianceKind::Identity,
            3,
            1,
            false,
            &[0.0; 3],
            &[],
            max,
            max,
        )
        .unwrap();
        assert!(multiclass.learn(Row::Dense(&[1.0]), 2).unwrap());
        assert_eq!(
            (multiclass.n_updates(), multiclass.n_mistakes()),
            (max, max)
        );

        let mut dual = DualLearner::new(rule, None, 1, false, 1.0, None)
            .unwrap()
            .with_counters(max, max);
        assert!(dual
            .learn_precomputed(Row::Dense(&[1.0]), &[], 1.0, 1.0)
            .unwrap());
        assert_eq!((dual.n_updates(), dual.n_mistakes()), (max, max));
    }

    /// A restored covariance is what a learner can have saved: diagonal variances are positive
    /// (floored at the smallest normal), a full Σ₀ is exactly symmetric (every fold mirrors
    /// it). Negative, zero or asymmetric ones used to be accepted, and gave NaN predictions.
    #[test]
    fn from_state_refuses_impossible_covariances() {
        let rule = Rule::from_name("AROW", &[]).unwrap();
        let restore = |kind, covariance: &[f64]| {
            Learner::from_state(rule, kind, 2, false, &[0.5, -1.0], covariance, 3, 1)
        };
        assert!(restore(CovarianceKind::Diagonal, &[1.0, 5e-324]).is_ok());
        for bad in [[1.0, 0.0], [1.0, -0.0], [-1.0, 1.0]] {
            assert!(restore(CovarianceKind::Diagonal, &bad).is_err(), "{bad:?}");
        }
        assert!(restore(CovarianceKind::Full, &[2.0, 0.5, 0.5, 1.0]).is_ok());
        let error = restore(CovarianceKind::Full, &[2.0, 0.5, 0.25, 1.0]).unwrap_err();
        assert!(error.to_string().contains("symmetric"), "{error}");
        // Symmetric but not positive definite: −I, 0, indefinite.
        for bad in [[-1.0, 0.0, 0.0, -1.0], [0.0; 4], [1.0, 2.0, 2.0, 1.0]] {
            let error = restore(CovarianceKind::Full, &bad).unwrap_err();
            assert!(
                error.to_string().contains("positive definite"),
                "{bad:?}: {error}"
            );
        }
        // Past one block of rows of the factorisation: I + 11ᵀ/2 is positive definite; with its
        // last variance set to 0 the last Schur complement is negative (only the last row fails).
        let dim = 70;
        let restore_wide = |last: f64| {
            let mut sigma = vec![0.5; dim * dim];
            (0..dim).for_each(|i| sigma[i * dim + i] = 1.5);
            sigma[dim * dim - 1] = last;
            Learner::from_state(
                rule,
                CovarianceKind::Full,
                dim,
                false,
                &[0.0; 70],
                &sigma,
                0,
                0,
            )
        };
        assert!(restore_wide(1.5).is_ok());
        assert!(restore_wide(0.0).is_err());
    }

    #[test]
    fn zero_row_without_intercept_is_a_noop() {
        for name in crate::rules::RULE_NAMES {
            let rule = Rule::from_name(name, &[]).unwrap();
            let kind = if rule.is_second_order() {
                CovarianceKind::Full
            } else {
                CovarianceKind::Identity
            };
            let mut model = learner(name, kind, false, 3);
            assert!(!model.learn(Row::Dense(&[0.0; 3]), 1.0).unwrap());
            assert!(model.mean().iter().all(|&m| m == 0.0));
            assert_eq!(model.n_mistakes(), 1);
        }
    }
}
