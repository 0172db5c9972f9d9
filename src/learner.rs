//! A binary learner: one rule × one covariance form, with the mean vector and the counters.

use crate::covariance::{Covariance, CovarianceKind};
use crate::data::{Matrix, Row};
use crate::error::CwError;
use crate::rules::{normal_cdf, Rule};

/// A row as the model sees it: the user's features, plus the constant bias feature 1 at index
/// `n_features` when the model fits an intercept.
#[derive(Clone, Copy, Debug)]
pub struct Features<'a> {
    row: Row<'a>,
    bias: Option<usize>,
}

impl Features<'_> {
    #[inline(always)]
    pub fn for_each(&self, mut f: impl FnMut(usize, f64)) {
        self.row.for_each(&mut f);
        if let Some(j) = self.bias {
            f(j, 1.0);
        }
    }

    #[inline]
    pub fn dot(&self, w: &[f64]) -> f64 {
        let mut s = 0.0;
        self.for_each(|j, x| s += w[j] * x);
        s
    }

    #[inline]
    pub fn squared_norm(&self) -> f64 {
        let mut s = 0.0;
        self.for_each(|_, x| s += x * x);
        s
    }
}

/// The state of a binary learner; labels are ±1.
#[derive(Clone, Debug, PartialEq)]
pub struct Learner {
    rule: Rule,
    covariance: Covariance,
    mean: Vec<f64>,
    n_features: usize,
    fit_intercept: bool,
    n_updates: u64,
    n_mistakes: u64,
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
        if !(a.is_finite() && a > 0.0) {
            return Err(CwError::InvalidParameter(format!(
                "a must be a positive finite number, got {a}"
            )));
        }
        let dim = Self::check_shape(rule, kind, n_features, fit_intercept)?;
        Ok(Learner {
            rule,
            covariance: Covariance::new(kind, dim, a),
            mean: vec![0.0; dim],
            n_features,
            fit_intercept,
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
        mean: Vec<f64>,
        covariance: Vec<f64>,
        n_updates: u64,
        n_mistakes: u64,
    ) -> Result<Learner, CwError> {
        let dim = Self::check_shape(rule, kind, n_features, fit_intercept)?;
        if mean.len() != dim || mean.iter().any(|x| !x.is_finite()) {
            return Err(CwError::InvalidInput(format!(
                "the mean must hold {dim} finite values, got {}",
                mean.len()
            )));
        }
        Ok(Learner {
            rule,
            covariance: Covariance::from_values(kind, dim, covariance)?,
            mean,
            n_features,
            fit_intercept,
            n_updates,
            n_mistakes,
        })
    }

    /// Checks that the rule and the covariance form fit together; returns the model dimension.
    fn check_shape(
        rule: Rule,
        kind: CovarianceKind,
        n_features: usize,
        fit_intercept: bool,
    ) -> Result<usize, CwError> {
        if rule.is_second_order() == (kind == CovarianceKind::Identity) {
            let expected = if rule.is_second_order() {
                "\"diag\" or \"full\""
            } else {
                "identity"
            };
            return Err(CwError::InvalidParameter(format!(
                "{rule:?} needs a {expected} covariance, got {:?}",
                kind.name()
            )));
        }
        if n_features == 0 {
            return Err(CwError::InvalidInput(
                "a model needs at least one feature".into(),
            ));
        }
        Ok(n_features + usize::from(fit_intercept))
    }

    pub fn rule(&self) -> Rule {
        self.rule
    }

    pub fn covariance_kind(&self) -> CovarianceKind {
        self.covariance.kind()
    }

    pub fn n_features(&self) -> usize {
        self.n_features
    }

    pub fn fit_intercept(&self) -> bool {
        self.fit_intercept
    }

    /// μ over the features, then the bias weight when the model fits an intercept.
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// The covariance values over the same coordinates as [`Learner::mean`]: empty for the
    /// identity, the variances for the diagonal form, Σ row-major for the full form.
    pub fn covariance(&self) -> &[f64] {
        self.covariance.values()
    }

    /// Rounds whose update changed the model.
    pub fn n_updates(&self) -> u64 {
        self.n_updates
    }

    /// Rounds with y·μ·x ≤ 0 before learning.
    pub fn n_mistakes(&self) -> u64 {
        self.n_mistakes
    }

    #[inline]
    fn features<'a>(&self, row: Row<'a>) -> Features<'a> {
        Features {
            row,
            bias: self.fit_intercept.then_some(self.n_features),
        }
    }

    /// μ·x for one row (validated here).
    pub fn decision(&self, row: Row) -> Result<f64, CwError> {
        row.validate(self.n_features)?;
        Ok(self.features(row).dot(&self.mean))
    }

    /// Learns one row with label `y` (±1); returns whether the model changed.
    pub fn learn(&mut self, row: Row, y: f64) -> Result<bool, CwError> {
        row.validate(self.n_features)?;
        check_labels(&[y])?;
        Ok(self.learn_valid(row, y))
    }

    #[inline]
    fn learn_valid(&mut self, row: Row, y: f64) -> bool {
        let x = self.features(row);
        let m = y * x.dot(&self.mean);
        if m <= 0.0 {
            self.n_mistakes += 1;
        }
        let v = self.covariance.prepare(&x);
        let norm2 = if self.covariance.kind() == CovarianceKind::Identity {
            v
        } else {
            x.squared_norm()
        };
        match self.rule.step(m, v, norm2) {
            Some(step) => {
                self.covariance
                    .update(&x, &mut self.mean, step.alpha * y, step.c, v);
                self.n_updates += 1;
                true
            }
            None => false,
        }
    }

    /// Learns the rows of `x` in order (or in `order`, a sequence of row indices, possibly with
    /// repeats), row `i` presented `repeats[i]` times in a row when given. Everything is
    /// validated before the first update, so an error leaves the model untouched. The result is
    /// exactly that of calling [`Learner::learn`] row by row.
    pub fn partial_fit(
        &mut self,
        x: &Matrix,
        y: &[f64],
        repeats: Option<&[u32]>,
        order: Option<&[usize]>,
    ) -> Result<(), CwError> {
        x.validate(self.n_features)?;
        let n = x.n_rows();
        if y.len() != n {
            return Err(CwError::InvalidInput(format!(
                "X has {n} rows but y has {} labels",
                y.len()
            )));
        }
        check_labels(y)?;
        if let Some(repeats) = repeats {
            if repeats.len() != n {
                return Err(CwError::InvalidInput(format!(
                    "X has {n} rows but sample_weight has {} values",
                    repeats.len()
                )));
            }
        }
        if let Some(&bad) = order.and_then(|o| o.iter().find(|&&i| i >= n)) {
            return Err(CwError::InvalidInput(format!(
                "row index {bad} is out of range for {n} rows"
            )));
        }
        let mut learn_row = |i: usize| {
            let times = repeats.map_or(1, |r| r[i]);
            for _ in 0..times {
                self.learn_valid(x.row(i), y[i]);
            }
        };
        match order {
            Some(order) => order.iter().for_each(|&i| learn_row(i)),
            None => (0..n).for_each(learn_row),
        }
        Ok(())
    }

    /// Fills `out` with one value per row of `x`, computed by `f` from the row's features.
    fn map_rows(
        &self,
        x: &Matrix,
        out: &mut [f64],
        f: impl Fn(&Features) -> f64,
    ) -> Result<(), CwError> {
        x.validate(self.n_features)?;
        if out.len() != x.n_rows() {
            return Err(CwError::InvalidInput(format!(
                "output holds {} values for {} rows",
                out.len(),
                x.n_rows()
            )));
        }
        for (i, o) in out.iter_mut().enumerate() {
            *o = f(&self.features(x.row(i)));
        }
        Ok(())
    }

    /// μ·x for every row.
    pub fn decision_function(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.map_rows(x, out, |f| f.dot(&self.mean))
    }

    /// xᵀΣx for every row.
    pub fn variances(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.map_rows(x, out, |f| self.covariance.variance(f))
    }

    /// P(y = +1 | x) = Φ(μ·x / √(xᵀΣx)) under the Gaussian over weights; 1/2 when xᵀΣx = 0
    /// (an all-zero row without intercept). For the identity covariance this is Φ(μ·x/‖x‖).
    pub fn positive_probability(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        self.map_rows(x, out, |f| {
            let v = self.covariance.variance(f);
            if v > 0.0 {
                normal_cdf(f.dot(&self.mean) / v.sqrt())
            } else {
                0.5
            }
        })
    }
}

fn check_labels(y: &[f64]) -> Result<(), CwError> {
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
                batch.partial_fit(&dense, &y, None, None).unwrap();
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
                sparse.partial_fit(&csr, &y, None, None).unwrap();
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
        assert!(model.partial_fit(&dense, &[1.0, -1.0], None, None).is_err());
        let x = [1.0, 2.0, 3.0, 4.0];
        let dense = Matrix::Dense {
            values: &x,
            n_rows: 2,
            n_cols: 2,
        };
        assert!(model.partial_fit(&dense, &[1.0, 0.0], None, None).is_err());
        assert!(model.partial_fit(&dense, &[1.0], None, None).is_err());
        assert!(model
            .partial_fit(&dense, &[1.0, 1.0], Some(&[1]), None)
            .is_err());
        assert!(model
            .partial_fit(&dense, &[1.0, 1.0], None, Some(&[0, 2]))
            .is_err());
        assert_eq!(model, before);
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
