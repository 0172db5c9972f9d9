//! Averaged models (docs/design.md §3.10): the running average of each model's mean over the
//! rows learned from row `start` on, as scikit-learn's averaged SGD (`average=True` is
//! `start = 1`), each row's mean weighted by the row's importance weight h_k (1 unless given).
//! With w_t the mean after row t and H_k the total weight of the first k averaged rows,
//!
//! ```text
//! w̄_t = (1/H_n) Σ_{k=1}^{n} h_k·w_k = w_t − u_t / H_n,   u_t = Σ_{k=1}^{n} H_{k−1}·Δ_k
//! ```
//!
//! where Δ_k is the change of the mean on the k-th averaged row (unweighted: H_k = k). A row moves the mean only on
//! the entries its update touches (the row's coordinates for the identity and diagonal forms),
//! so u is kept in O(nnz) per row; predictions shift μ·x by x·u/n. The dual form averages its
//! coefficients ν the same way: a support row joins with ν = 0 before it, so its sums start
//! when it joins.

use crate::covariance::Covariance;
use crate::data::Row;
use crate::error::CwError;

/// The averaging state of a learner's models.
#[derive(Clone, Debug)]
pub struct Average {
    /// The (1-based) row from which the average runs.
    start: u64,
    /// Rows learned so far (of positive weight), whether they updated the model or not.
    rows: u64,
    /// H, the total weight of the averaged rows (the rows from `start` on).
    total: f64,
    /// Per model, u over the mean's entries.
    sums: Vec<Vec<f64>>,
    /// Work space: the mean entries the current row may move, before it is learned, and where
    /// each model's entries end in it.
    before: Vec<f64>,
    ends: Vec<usize>,
}

impl PartialEq for Average {
    fn eq(&self, other: &Self) -> bool {
        (self.start, self.rows, &self.sums) == (other.start, other.rows, &other.sums)
            && self.total.to_bits() == other.total.to_bits()
    }
}

impl Average {
    /// Averaging from row `start` (≥ 1) over `models`, with `rows` rows already learned, the
    /// total weight H of those averaged (`None`: one per row, as for unweighted rows) and the
    /// sums u (one per model, concatenated; `None`: zeros).
    pub fn new<M: Covariance>(
        start: u64,
        (rows, total): (u64, Option<f64>),
        sums: Option<&[f64]>,
        models: &[M],
    ) -> Result<Average, CwError> {
        check_start(start)?;
        let counted = (rows + 1).saturating_sub(start) as f64;
        let total = total.unwrap_or(counted);
        if !(total.is_finite() && total >= 0.0) || ((counted == 0.0) != (total == 0.0)) {
            return Err(CwError::InvalidInput(format!(
                "the average's total weight must be finite, positive once rows are averaged and \
                 0 before, got {total} for {counted} averaged rows"
            )));
        }
        let lens = models
            .iter()
            .map(M::averaged_len)
            .collect::<Result<Vec<_>, _>>()?;
        let n_sums: usize = lens.iter().sum();
        let sums = match sums {
            None => lens.iter().map(|&len| vec![0.0; len]).collect(),
            Some(values) if values.len() != n_sums => {
                return Err(CwError::InvalidInput(format!(
                    "the average sums must hold {n_sums} values, got {}",
                    values.len()
                )))
            }
            Some(values) if values.iter().all(|v| v.is_finite()) => {
                let mut rest = values;
                lens.iter()
                    .map(|&len| {
                        let (head, tail) = rest.split_at(len);
                        rest = tail;
                        head.to_vec()
                    })
                    .collect()
            }
            Some(_) => {
                return Err(CwError::InvalidInput(
                    "the average sums contain NaN or infinity".into(),
                ))
            }
        };
        Ok(Average {
            start,
            rows,
            total,
            sums,
            before: Vec::new(),
            ends: Vec::new(),
        })
    }

    /// The (1-based) row from which the average runs.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Rows learned so far (of positive weight), whether they updated the model or not.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The total weight H of the averaged rows.
    pub fn total(&self) -> f64 {
        self.total
    }

    /// Whether H is what unweighted rows give (one per averaged row): a state then need not
    /// keep it.
    pub fn total_is_count(&self) -> bool {
        self.total == self.count() as f64
    }

    /// The sums u of every model, concatenated in model order, each as long as the model's
    /// mean (a dual model's sums grow with its support set when a row moves them).
    pub fn sums<M: Covariance>(&self, models: &[M]) -> Vec<f64> {
        let mut all = Vec::new();
        for (sums, model) in self.sums.iter().zip(models) {
            all.extend_from_slice(sums);
            let len = model.averaged_len().unwrap_or(sums.len());
            all.resize(all.len() + len.saturating_sub(sums.len()), 0.0);
        }
        all
    }

    /// How many means the average holds (0 before row `start`: predictions use the mean).
    fn count(&self) -> u64 {
        (self.rows + 1).saturating_sub(self.start)
    }

    /// Learns one row of weight `h` by `learn` and adds its mean changes to the sums.
    pub(crate) fn learn_row<M: Covariance, R>(
        &mut self,
        models: &mut [M],
        (row, h): (Row, f64),
        learn: impl FnOnce(&mut [M]) -> R,
    ) -> R {
        self.rows = self.rows.saturating_add(1);
        if self.count() == 0 {
            return learn(models);
        }
        // The first averaged row (H_0 = 0) and the rows before it add nothing.
        let weight = self.total;
        self.total += h;
        if weight == 0.0 {
            return learn(models);
        }
        let (before, ends) = (&mut self.before, &mut self.ends);
        before.clear();
        ends.clear();
        for model in models.iter() {
            model.visit_mean(row, |_, value| before.push(value));
            ends.push(before.len());
        }
        let result = learn(models);
        let mut first = 0;
        for ((model, sums), &end) in models.iter().zip(&mut self.sums).zip(ends.iter()) {
            let mut i = first;
            model.visit_mean(row, |j, value| {
                // An entry the row added (a dual form's new support row) was 0 before it.
                let change = value - if i < end { before[i] } else { 0.0 };
                if change != 0.0 {
                    if j >= sums.len() {
                        sums.resize(j + 1, 0.0);
                    }
                    sums[j] += weight * change;
                }
                i += 1;
            });
            first = end;
        }
        result
    }

    /// What averaging subtracts from model `k`'s score μ·x of `row`: x·u/H.
    #[inline]
    pub(crate) fn shift<M: Covariance>(&self, k: usize, model: &M, row: Row) -> f64 {
        match self.count() {
            0 => 0.0,
            _ => model.dot_mean(row, &self.sums[k]) / self.total,
        }
    }

    /// Model `k`'s averaged mean, from its mean (laid out as the sums).
    pub(crate) fn averaged(&self, k: usize, mut mean: Vec<f64>) -> Vec<f64> {
        if self.count() > 0 {
            let n = self.total;
            mean.iter_mut()
                .zip(&self.sums[k])
                .for_each(|(w, u)| *w -= u / n);
        }
        mean
    }
}

/// Refuses averaging from row 0 (rows count from 1).
pub(crate) fn check_start(start: u64) -> Result<(), CwError> {
    if start == 0 {
        return Err(CwError::InvalidParameter(
            "average must be True, False or a positive row count".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::covariance::CovarianceKind;
    use crate::data::Row;
    use crate::learn::learner::Learner;
    use crate::rules::Rule;

    fn learner(kind: CovarianceKind) -> Learner {
        let rule = Rule::from_name(
            if kind == CovarianceKind::Identity {
                "PA1"
            } else {
                "AROW"
            },
            &[],
        );
        Learner::new(rule.unwrap(), kind, 3, true, 1.0).unwrap()
    }

    /// The averaged mean against the plain learner's means after each row, averaged from row 2.
    #[test]
    fn averages_the_means_from_the_start_row() {
        let rows: [([i32; 2], [f64; 2], f64); 5] = [
            ([0, 1], [1.0, -2.0], 1.0),
            ([1, 2], [0.5, 1.5], -1.0),
            ([0, 2], [-1.0, 1.0], 1.0),
            ([0, 1], [2.0, 0.5], -1.0),
            ([1, 2], [-0.5, -1.0], 1.0),
        ];
        for kind in [
            CovarianceKind::Identity,
            CovarianceKind::Diagonal,
            CovarianceKind::Full,
        ] {
            let mut plain = learner(kind);
            let mut averaged = learner(kind).with_average(2, (0, None), None).unwrap();
            let mut sum = [0.0; 4];
            for (t, (indices, values, y)) in rows.iter().enumerate() {
                let row = Row::Sparse32(indices, values);
                plain.learn(row, *y).unwrap();
                averaged.learn(row, *y).unwrap();
                if t >= 1 {
                    sum.iter_mut()
                        .zip(plain.mean().iter())
                        .for_each(|(s, w)| *s += w);
                }
            }
            let expected: Vec<f64> = sum.iter().map(|s| s / 4.0).collect();
            let got = averaged.effective_mean();
            for (g, e) in got.iter().zip(&expected) {
                assert!(
                    (g - e).abs() <= 1e-12 * (1.0 + e.abs()),
                    "{kind:?}: {got:?} != {expected:?}"
                );
            }
            assert_eq!(averaged.mean(), plain.mean());
        }
    }

    #[test]
    fn refuses_a_zero_start_and_sums_of_the_wrong_length() {
        assert!(learner(CovarianceKind::Diagonal)
            .with_average(0, (0, None), None)
            .is_err());
        let wrong = [0.0; 3];
        assert!(learner(CovarianceKind::Diagonal)
            .with_average(1, (5, None), Some(&wrong))
            .is_err());
        let right = [0.0; 4];
        assert!(learner(CovarianceKind::Diagonal)
            .with_average(1, (5, None), Some(&right))
            .is_ok());
    }
}
