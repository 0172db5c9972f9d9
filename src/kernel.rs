//! The kernelized (dual) form of every rule, from the representer theorem of the AROW and
//! CW-Stdev papers: the mean and the covariance are combinations of the support rows S,
//!
//! ```text
//! μ = Σ_p ν_p φ(x_p)          Σ = a·I + Σ_pq Π_pq φ(x_p) φ(x_q)ᵀ
//! ```
//!
//! so with k = k_S(x) and κ = k(x, x): μ·φ(x) = kᵀν, Σφ(x) = a·φ(x) + Σ_p (Πk)_p φ(x_p) and
//! v = a·κ + kᵀΠk. The template step μ ← μ + α·y·Σφ(x), Σ ← Σ − β(Σφ(x))(Σφ(x))ᵀ becomes:
//! ν ← ν + α·y·Πk, x joins S with ν_x = α·y·a, and Π ← Π − β·h hᵀ with h = (Πk, a) over S ∪ {x}.
//! x joins S only when the rule fires. First-order rules are the case a = 1, Π = 0.

use crate::data::{Matrix, Presentation, Row};
use crate::error::CwError;
use crate::learner::check_initial_variance;
use crate::rules::{normal_cdf, Rule};

/// A positive-definite kernel, as in scikit-learn's pairwise kernels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kernel {
    /// k(x, z) = x·z.
    Linear,
    /// k(x, z) = exp(−γ‖x − z‖²).
    Rbf { gamma: f64 },
    /// k(x, z) = (γ·x·z + coef0)^degree.
    Poly { gamma: f64, degree: u32, coef0: f64 },
}

impl Kernel {
    pub fn from_name(name: &str, gamma: f64, degree: u32, coef0: f64) -> Result<Kernel, CwError> {
        let check_gamma = || {
            if gamma.is_finite() && gamma > 0.0 {
                Ok(gamma)
            } else {
                Err(CwError::InvalidParameter(format!(
                    "gamma must be a positive finite number, got {gamma}"
                )))
            }
        };
        match name {
            "linear" => Ok(Kernel::Linear),
            "rbf" => Ok(Kernel::Rbf {
                gamma: check_gamma()?,
            }),
            "poly" => {
                if degree == 0 || !coef0.is_finite() || coef0 < 0.0 {
                    return Err(CwError::InvalidParameter(format!(
                        "poly kernel needs degree >= 1 and a finite coef0 >= 0, got degree \
                         {degree}, coef0 {coef0}"
                    )));
                }
                Ok(Kernel::Poly {
                    gamma: check_gamma()?,
                    degree,
                    coef0,
                })
            }
            _ => Err(CwError::InvalidParameter(format!(
                "kernel must be \"linear\", \"rbf\" or \"poly\", got {name:?}"
            ))),
        }
    }

    /// k from the inner product and the two squared norms.
    #[inline]
    fn eval(&self, dot: f64, xx: f64, zz: f64) -> f64 {
        match *self {
            Kernel::Linear => dot,
            Kernel::Rbf { gamma } => (-gamma * (xx + zz - 2.0 * dot).max(0.0)).exp(),
            Kernel::Poly {
                gamma,
                degree,
                coef0,
            } => (gamma * dot + coef0).powi(degree as i32),
        }
    }
}

/// A stored support row: its non-zeros, ‖x‖² and k(x, x) (with the bias term).
#[derive(Clone, Debug, PartialEq)]
struct Support {
    indices: Vec<u32>,
    values: Vec<f64>,
    norm2: f64,
    self_kernel: f64,
}

/// The dual state of a binary learner with a built-in kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct DualLearner {
    rule: Rule,
    kernel: Kernel,
    n_features: usize,
    fit_intercept: bool,
    /// Initial variance (1 for the first-order rules, whose Σ = I).
    a: f64,
    budget: Option<usize>,
    support: Vec<Support>,
    nu: Vec<f64>,
    /// Π, |S|×|S| row-major (empty for first-order rules).
    pi: Vec<f64>,
    n_updates: u64,
    n_mistakes: u64,
    /// k_S(x) and Πk of the current row.
    k: Vec<f64>,
    pk: Vec<f64>,
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
        check_initial_variance(a)?;
        if n_features == 0 || n_features > u32::MAX as usize {
            return Err(CwError::InvalidInput(format!(
                "a kernel model needs between 1 and 2^32 − 1 features, got {n_features}"
            )));
        }
        if budget == Some(0) {
            return Err(CwError::InvalidParameter(
                "budget must be at least 1".into(),
            ));
        }
        Ok(DualLearner {
            rule,
            kernel,
            n_features,
            fit_intercept,
            a: if rule.is_second_order() { a } else { 1.0 },
            budget,
            support: Vec::new(),
            nu: Vec::new(),
            pi: Vec::new(),
            n_updates: 0,
            n_mistakes: 0,
            k: Vec::new(),
            pk: Vec::new(),
        })
    }

    /// Rebuilds a learner from its state: the support rows as CSR (`values`, `indices`,
    /// `indptr`), ν and Π (as the accessors below give them) and the counters.
    #[allow(clippy::too_many_arguments)]
    pub fn from_state(
        mut fresh: DualLearner,
        values: &[f64],
        indices: &[u32],
        indptr: &[u64],
        nu: &[f64],
        pi: &[f64],
        n_updates: u64,
        n_mistakes: u64,
    ) -> Result<DualLearner, CwError> {
        let n = indptr.len().saturating_sub(1);
        let expected_pi = if fresh.rule.is_second_order() {
            n * n
        } else {
            0
        };
        let bad = |what: &str| CwError::InvalidInput(format!("inconsistent kernel state: {what}"));
        if nu.len() != n || pi.len() != expected_pi {
            return Err(bad("ν and Π do not match the support set"));
        }
        if nu.iter().chain(pi).chain(values).any(|v| !v.is_finite()) {
            return Err(bad("non-finite coefficients"));
        }
        let offsets = indptr
            .iter()
            .map(|&p| usize::try_from(p))
            .collect::<Result<Vec<_>, _>>();
        let offsets = offsets.map_err(|_| bad("indptr"))?;
        let csr_indices: Vec<i64> = indices.iter().map(|&j| i64::from(j)).collect();
        let csr_indptr: Vec<i64> = offsets.iter().map(|&p| p as i64).collect();
        if n > 0 {
            Matrix::Csr64 {
                values,
                indices: &csr_indices,
                indptr: &csr_indptr,
                n_cols: fresh.n_features,
            }
            .validate(fresh.n_features)?;
        }
        for (p, window) in offsets.windows(2).enumerate() {
            let (indices, values) = (
                &indices[window[0]..window[1]],
                &values[window[0]..window[1]],
            );
            let row = Row::Sparse64(&csr_indices[window[0]..window[1]], values);
            let norm2 = row.squared_norm();
            let self_kernel = fresh.kernel_value(norm2, norm2, norm2);
            fresh.support.push(Support {
                indices: indices.to_vec(),
                values: values.to_vec(),
                norm2,
                self_kernel,
            });
            fresh.nu.push(nu[p]);
        }
        fresh.pi = pi.to_vec();
        fresh.n_updates = n_updates;
        fresh.n_mistakes = n_mistakes;
        Ok(fresh)
    }

    pub fn rule(&self) -> Rule {
        self.rule
    }

    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    pub fn n_features(&self) -> usize {
        self.n_features
    }

    pub fn fit_intercept(&self) -> bool {
        self.fit_intercept
    }

    pub fn a(&self) -> f64 {
        self.a
    }

    pub fn budget(&self) -> Option<usize> {
        self.budget
    }

    pub fn n_support(&self) -> usize {
        self.support.len()
    }

    /// The support rows as a CSR matrix: (values, indices, indptr).
    pub fn support_vectors(&self) -> (Vec<f64>, Vec<u32>, Vec<u64>) {
        let mut indptr = vec![0u64];
        let (mut values, mut indices) = (Vec::new(), Vec::new());
        for s in &self.support {
            values.extend_from_slice(&s.values);
            indices.extend_from_slice(&s.indices);
            indptr.push(indices.len() as u64);
        }
        (values, indices, indptr)
    }

    /// Mean coefficients ν, one per support row.
    pub fn dual_coef(&self) -> &[f64] {
        &self.nu
    }

    /// Covariance coefficients Π, |S|×|S| row-major (empty for first-order rules).
    pub fn dual_covariance(&self) -> &[f64] {
        &self.pi
    }

    pub fn n_updates(&self) -> u64 {
        self.n_updates
    }

    pub fn n_mistakes(&self) -> u64 {
        self.n_mistakes
    }

    /// k(x, z) + 1 when the model has a bias (the bias is a constant feature 1).
    #[inline]
    fn kernel_value(&self, dot: f64, xx: f64, zz: f64) -> f64 {
        self.kernel.eval(dot, xx, zz) + if self.fit_intercept { 1.0 } else { 0.0 }
    }

    /// Fills `self.k` with k_S(x) and returns (κ = k(x, x), ‖x‖²).
    fn kernel_row(&mut self, row: &Row) -> (f64, f64) {
        let xx = row.squared_norm();
        self.k.clear();
        for s in &self.support {
            let dot = row.dot_sparse(&s.indices, &s.values);
            let value =
                self.kernel.eval(dot, xx, s.norm2) + if self.fit_intercept { 1.0 } else { 0.0 };
            self.k.push(value);
        }
        (self.kernel_value(xx, xx, xx), xx)
    }

    /// Πk into `self.pk`, and v = a·κ + kᵀΠk.
    fn variance_of_kernel_row(&mut self, kappa: f64) -> f64 {
        let n = self.support.len();
        self.pk.clear();
        if self.pi.is_empty() {
            self.pk.resize(n, 0.0);
            return self.a * kappa;
        }
        for p in 0..n {
            let row = &self.pi[p * n..(p + 1) * n];
            self.pk
                .push(row.iter().zip(&self.k).map(|(a, b)| a * b).sum());
        }
        self.a * kappa + self.k.iter().zip(&self.pk).map(|(a, b)| a * b).sum::<f64>()
    }

    fn learn_valid(&mut self, row: Row, y: f64) -> bool {
        let (kappa, norm2) = self.kernel_row(&row);
        let f: f64 = self.k.iter().zip(&self.nu).map(|(a, b)| a * b).sum();
        let m = y * f;
        if m <= 0.0 {
            self.n_mistakes += 1;
        }
        let v = self.variance_of_kernel_row(kappa);
        let Some(step) = self.rule.step(m, v, kappa) else {
            return false;
        };
        // ν ← ν + αy·Πk, then x joins S with ν_x = αy·a.
        let n = self.support.len();
        let ay = step.alpha * y;
        self.nu
            .iter_mut()
            .zip(&self.pk)
            .for_each(|(nu, g)| *nu += ay * g);
        self.nu.push(ay * self.a);
        let (indices, values) = row.to_sparse();
        self.support.push(Support {
            indices,
            values,
            norm2,
            self_kernel: kappa,
        });
        if self.rule.is_second_order() {
            // Π ← [[Π, 0], [0, 0]] − β·h hᵀ with h = (Πk, a); h_i·h_j keeps Π exactly symmetric.
            let scale = (step.c / (1.0 + step.c * v)).sqrt();
            let h: Vec<f64> = self
                .pk
                .iter()
                .chain(std::iter::once(&self.a))
                .map(|g| g * scale)
                .collect();
            let mut grown = vec![0.0; (n + 1) * (n + 1)];
            for p in 0..=n {
                for q in 0..=n {
                    let old = if p < n && q < n {
                        self.pi[p * n + q]
                    } else {
                        0.0
                    };
                    grown[p * (n + 1) + q] = old - h[p] * h[q];
                }
            }
            self.pi = grown;
        }
        if self.budget.is_some_and(|b| self.support.len() > b) {
            self.remove_least_weighted();
        }
        self.n_updates += 1;
        true
    }

    /// Budget maintenance: removes the support row whose mean term ν_p·φ(x_p) has the smallest
    /// RKHS norm |ν_p|·√k(x_p, x_p), removes its precision term c_p·φ(x_p)φ(x_p)ᵀ exactly, and
    /// projects its mean term onto the remaining rows (without the projection, the mean error
    /// of each removal feeds larger and larger steps and the learner diverges on small budgets).
    ///
    /// Why exactly: Σ⁻¹ = I/a + Σ_p c_p φ(x_p)φ(x_p)ᵀ, so by Woodbury Π = −a²(C⁻¹ + aK)⁻¹ with K
    /// the support Gram matrix. Dropping p deletes row and column p of C⁻¹ + aK, whose inverse
    /// follows from Π's by the Schur complement: Π' = Π₋ₚ₋ₚ − Π₋ₚ,ₚ Πₚ,₋ₚ / Πₚₚ. The precision
    /// stays ≥ I/a, so Σ stays positive definite (merely deleting Π's row and column would not).
    fn remove_least_weighted(&mut self) {
        let weight = |p: usize| self.nu[p].abs() * self.support[p].self_kernel.max(0.0).sqrt();
        let victim = (0..self.support.len())
            .min_by(|&p, &q| weight(p).total_cmp(&weight(q)))
            .expect("the support set is over budget, so not empty");
        let n = self.support.len();
        let removed = self.support.remove(victim);
        let removed_nu = self.nu.remove(victim);
        if self.pi.is_empty() {
            return;
        }
        let pi = &self.pi;
        let pivot = pi[victim * n + victim];
        let mut shrunk = Vec::with_capacity((n - 1) * (n - 1));
        for p in (0..n).filter(|&p| p != victim) {
            // A row with no precision term (c_p = 0) has Πₚₚ = 0 and nothing to remove.
            let factor = if pivot != 0.0 {
                pi[p * n + victim] / pivot
            } else {
                0.0
            };
            for q in (0..n).filter(|&q| q != victim) {
                shrunk.push(pi[p * n + q] - factor * pi[victim * n + q]);
            }
        }
        // Keep Π exactly symmetric despite rounding in the elimination.
        let m = n - 1;
        for p in 0..m {
            for q in p + 1..m {
                let mean = 0.5 * (shrunk[p * m + q] + shrunk[q * m + p]);
                shrunk[p * m + q] = mean;
                shrunk[q * m + p] = mean;
            }
        }
        self.pi = shrunk;
        // Project the removed mean term onto the remaining supports, regularised by their
        // precision terms: u = argmin ‖Φu − ν_p φ(x_p)‖² + uᵀC⁻¹u / a = a·ν_p·M'⁻¹k_p with
        // M' = C'⁻¹ + aK', i.e. u = −ν_p·Π'k_p / a (Π' = −a²M'⁻¹ from the step above).
        let k_removed: Vec<f64> = self
            .support
            .iter()
            .map(|s| {
                let dot = dot_sorted(&removed.indices, &removed.values, &s.indices, &s.values);
                self.kernel_value(dot, removed.norm2, s.norm2)
            })
            .collect();
        for (p, nu) in self.nu.iter_mut().enumerate() {
            let pk: f64 = self.pi[p * m..(p + 1) * m]
                .iter()
                .zip(&k_removed)
                .map(|(a, b)| a * b)
                .sum();
            *nu -= removed_nu * pk / self.a;
        }
    }

    /// Learns the rows of `x` with labels `y` (±1) as `presentation` says; validated first.
    pub fn partial_fit(
        &mut self,
        x: &Matrix,
        y: &[f64],
        presentation: Presentation,
    ) -> Result<(), CwError> {
        presentation.check(x, self.n_features, y.len())?;
        if let Some(bad) = y.iter().find(|&&t| t != 1.0 && t != -1.0) {
            return Err(CwError::InvalidInput(format!(
                "labels must be -1 or +1, got {bad}"
            )));
        }
        presentation.for_each(x.n_rows(), |i| {
            self.learn_valid(x.row(i), y[i]);
        });
        Ok(())
    }

    /// (μ·φ(x), φ(x)ᵀΣφ(x)) for every row, into `scores` and `variances`.
    fn moments(&self, x: &Matrix, mut each: impl FnMut(usize, f64, f64)) -> Result<(), CwError> {
        x.validate(self.n_features)?;
        let n = self.support.len();
        let mut k = vec![0.0; n];
        for i in 0..x.n_rows() {
            let row = x.row(i);
            let xx = row.squared_norm();
            for (kp, s) in k.iter_mut().zip(&self.support) {
                *kp = self.kernel_value(row.dot_sparse(&s.indices, &s.values), xx, s.norm2);
            }
            let score: f64 = k.iter().zip(&self.nu).map(|(a, b)| a * b).sum();
            let mut v = self.a * self.kernel_value(xx, xx, xx);
            if !self.pi.is_empty() {
                for (p, &kp) in k.iter().enumerate() {
                    let dot: f64 = self.pi[p * n..(p + 1) * n]
                        .iter()
                        .zip(&k)
                        .map(|(a, b)| a * b)
                        .sum();
                    v += kp * dot;
                }
            }
            each(i, score, v);
        }
        Ok(())
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
        self.moments(x, |i, score, _| out[i] = score)
    }

    /// φ(x)ᵀΣφ(x) for every row.
    pub fn variances(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        Self::check_out(x, out)?;
        self.moments(x, |i, _, v| out[i] = v)
    }

    /// Φ(μ·φ(x) / √(φ(x)ᵀΣφ(x))) for every row (1/2 where the variance is 0).
    pub fn positive_probability(&self, x: &Matrix, out: &mut [f64]) -> Result<(), CwError> {
        Self::check_out(x, out)?;
        self.moments(x, |i, score, v| {
            out[i] = if v > 0.0 {
                normal_cdf(score / v.sqrt())
            } else {
                0.5
            };
        })
    }
}

/// x·z for two sparse vectors with sorted indices.
fn dot_sorted(xi: &[u32], xv: &[f64], zi: &[u32], zv: &[f64]) -> f64 {
    let (mut p, mut q, mut sum) = (0, 0, 0.0);
    while p < xi.len() && q < zi.len() {
        match xi[p].cmp(&zi[q]) {
            std::cmp::Ordering::Equal => {
                sum += xv[p] * zv[q];
                p += 1;
                q += 1;
            }
            std::cmp::Ordering::Less => p += 1,
            std::cmp::Ordering::Greater => q += 1,
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::covariance::CovarianceKind;
    use crate::learner::Learner;

    fn stream(n: usize, d: usize) -> (Vec<f64>, Vec<f64>) {
        let mut s = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let x: Vec<f64> = (0..n * d).map(|_| next()).collect();
        let y = (0..n)
            .map(|i| {
                if x[i * d] - 0.4 * x[i * d + 1] + 0.2 * next() > 0.0 {
                    1.0
                } else {
                    -1.0
                }
            })
            .collect();
        (x, y)
    }

    #[test]
    fn linear_kernel_equals_the_primal_full_covariance_learner() {
        let (n, d) = (50, 4);
        let (x, y) = stream(n, d);
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
            let mut primal = Learner::new(rule, kind, d, true, 0.7).unwrap();
            let mut dual = DualLearner::new(rule, Kernel::Linear, d, true, 0.7, None).unwrap();
            let (mut fp, mut fd) = (vec![0.0; 1], vec![0.0; 1]);
            for i in 0..n {
                let one = Matrix::Dense {
                    values: &x[i * d..(i + 1) * d],
                    n_rows: 1,
                    n_cols: d,
                };
                primal.decision_function(&one, &mut fp).unwrap();
                dual.decision_function(&one, &mut fd).unwrap();
                assert!(
                    (fp[0] - fd[0]).abs() <= 1e-9 * fp[0].abs().max(1.0),
                    "{name} round {i}"
                );
                primal
                    .partial_fit(&one, &y[i..i + 1], Presentation::default())
                    .unwrap();
                dual.partial_fit(&one, &y[i..i + 1], Presentation::default())
                    .unwrap();
            }
            assert_eq!(primal.n_mistakes(), dual.n_mistakes(), "{name}");
            assert_eq!(primal.n_updates(), dual.n_updates(), "{name}");
            assert_eq!(primal.n_updates(), dual.n_support() as u64, "{name}");
            let (mut vp, mut vd) = (vec![0.0; n], vec![0.0; n]);
            primal.variances(&m, &mut vp).unwrap();
            dual.variances(&m, &mut vd).unwrap();
            for (a, b) in vp.iter().zip(&vd) {
                assert!(
                    (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                    "{name}: {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn budget_removal_keeps_the_covariance_positive() {
        let (n, d) = (400, 2);
        let (x, y) = stream(n, d);
        let m = Matrix::Dense {
            values: &x,
            n_rows: n,
            n_cols: d,
        };
        let rule = Rule::from_name("AROW", &[]).unwrap();
        let kernel = Kernel::Rbf { gamma: 1.0 };
        let mut model = DualLearner::new(rule, kernel, d, true, 1.0, Some(15)).unwrap();
        model.partial_fit(&m, &y, Presentation::default()).unwrap();
        let mut v = vec![0.0; n];
        model.variances(&m, &mut v).unwrap();
        assert!(
            v.iter().all(|&v| v > 0.0),
            "min variance {}",
            v.iter().copied().fold(f64::INFINITY, f64::min)
        );
        // It keeps learning after the budget is full.
        assert!(model.n_updates() > 100, "{}", model.n_updates());
    }

    #[test]
    fn budget_removal_drops_exactly_the_removed_precision_term() {
        // AROW's precision increment is the constant 1/r, so after any removals the dual
        // covariance must equal (I/a + Σ_{p ∈ S} x_p x_pᵀ / r)⁻¹ over the remaining supports.
        let (n, d, r, a) = (120, 2, 2.0, 1.5);
        let (x, y) = stream(n, d);
        let m = Matrix::Dense {
            values: &x,
            n_rows: n,
            n_cols: d,
        };
        let rule = Rule::from_name("AROW", &[("r", r)]).unwrap();
        let mut model = DualLearner::new(rule, Kernel::Linear, d, false, a, Some(6)).unwrap();
        model.partial_fit(&m, &y, Presentation::default()).unwrap();
        assert!(model.n_updates() > 6);
        let (values, indices, indptr) = model.support_vectors();
        let mut precision = [1.0 / a, 0.0, 0.0, 1.0 / a];
        for w in indptr.windows(2) {
            let mut row = [0.0; 2];
            for t in w[0] as usize..w[1] as usize {
                row[indices[t] as usize] = values[t];
            }
            for p in 0..2 {
                for q in 0..2 {
                    precision[2 * p + q] += row[p] * row[q] / r;
                }
            }
        }
        let det = precision[0] * precision[3] - precision[1] * precision[2];
        let sigma = [
            precision[3] / det,
            -precision[1] / det,
            -precision[2] / det,
            precision[0] / det,
        ];
        let mut v = vec![0.0; n];
        model.variances(&m, &mut v).unwrap();
        for (i, &got) in v.iter().enumerate() {
            let (x0, x1) = (x[2 * i], x[2 * i + 1]);
            let want = sigma[0] * x0 * x0 + 2.0 * sigma[1] * x0 * x1 + sigma[3] * x1 * x1;
            assert!((got - want).abs() <= 1e-9 * want, "{got} vs {want}");
        }
    }

    #[test]
    fn budget_caps_the_support_set() {
        let (n, d) = (300, 3);
        let (x, y) = stream(n, d);
        let m = Matrix::Dense {
            values: &x,
            n_rows: n,
            n_cols: d,
        };
        let rule = Rule::from_name("AROW", &[]).unwrap();
        let kernel = Kernel::Rbf { gamma: 0.5 };
        let mut model = DualLearner::new(rule, kernel, d, true, 1.0, Some(20)).unwrap();
        model.partial_fit(&m, &y, Presentation::default()).unwrap();
        assert_eq!(model.n_support(), 20);
        assert_eq!(model.dual_covariance().len(), 400);
        assert!(model.n_updates() > 20);
        let pi = model.dual_covariance();
        for p in 0..20 {
            for q in 0..20 {
                assert_eq!(pi[p * 20 + q], pi[q * 20 + p]);
            }
        }
    }
}
