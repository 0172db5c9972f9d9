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
//! x joins S only when the rule fires. First-order rules are the case a = 1, Π = 0
//! (docs/design.md §3.4).
//!
//! Kernel values come from a built-in [`Kernel`] or a custom one (a Python callable) through
//! [`crate::covariance::kernel::KernelFunction`]; either way this form is a [`Covariance`] that the one
//! learning loop drives.

mod rows;
mod symmetric;
#[cfg(test)]
mod tests;

use super::{learn_each, Covariance, Observation, Update};
use crate::covariance::kernel::{Kernel, KernelFunction};
use crate::data::{Matrix, Row};
use crate::error::CwError;
use crate::learn::learner::check_initial_variance;
use crate::linalg::simd::dot;
use crate::rules::sherman_morrison_factor;
use symmetric::{Product, Support, Symmetric};

/// The dual Gaussian of one linear model: the support rows S, the mean coefficients ν and the
/// covariance coefficients Π (with the support Gram matrix, for budget maintenance).
#[derive(Clone, Debug, PartialEq)]
pub struct DualGaussian {
    kernel: Kernel,
    n_features: usize,
    fit_intercept: bool,
    /// Whether Σ is learned (Π kept); first-order rules keep Σ = I (a = 1, Π = 0).
    second_order: bool,
    a: f64,
    budget: Option<usize>,
    support: Vec<Support>,
    nu: Vec<f64>,
    pi: Symmetric,
    gram: Symmetric,
    /// The current row: k_S(x) and Πk (both with the bias), κ = k(x, x) and ‖x‖².
    k: Vec<f64>,
    pk: Vec<f64>,
    kappa: f64,
    norm2: f64,
    /// Whether the last update already loaded the next row and computed its Πk.
    ahead: bool,
    /// Steps skipped because float64 could not hold them, not yet taken (see
    /// [`Covariance::take_skipped`]); not part of the model.
    skipped: u64,
    /// What a custom kernel raised while learning: the rows after it are not learned, and the
    /// learner undoes the call.
    failure: Option<CwError>,
    scratch: Scratch,
}

/// Work space of the update, kept so that learning does not allocate; not part of the model,
/// so equality ignores it.
#[derive(Clone, Debug, Default)]
struct Scratch {
    /// The removal's Schur complement pivot column, the same over the pivot, the removed row's
    /// Gram column and Π' times it.
    column: Vec<f64>,
    scaled: Vec<f64>,
    k_removed: Vec<f64>,
    projection: Vec<f64>,
    /// Πk of the next row.
    next_pk: Vec<f64>,
}

impl PartialEq for Scratch {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// The state that [`DualGaussian::with_state`] restores, as the accessors give it.
#[derive(Clone, Copy, Debug)]
pub struct DualState<'a> {
    /// The support rows as CSR: values, column indices, row offsets.
    pub values: &'a [f64],
    /// The column index of each value.
    pub indices: &'a [u32],
    /// The row offsets of the CSR support rows (|S| + 1 values from 0).
    pub indptr: &'a [u64],
    /// The mean coefficients ν, one per support row.
    pub nu: &'a [f64],
    /// The covariance coefficients Π, |S|×|S| row-major (empty for first-order rules).
    pub pi: &'a [f64],
    /// The support rows' Gram matrix, |S|×|S| row-major, as [`DualGaussian::gram`] gives it.
    pub gram: &'a [f64],
}

impl DualGaussian {
    /// S empty, Σ = a·I (a is ignored, Σ = I, for first-order rules). `budget` caps |S|.
    pub fn new(
        kernel: Kernel,
        second_order: bool,
        n_features: usize,
        fit_intercept: bool,
        a: f64,
        budget: Option<usize>,
    ) -> Result<DualGaussian, CwError> {
        check_initial_variance(a)?;
        if n_features == 0 || n_features > u32::MAX as usize {
            return Err(CwError::InvalidInput(format!(
                "a kernel model needs between 1 and 2^32 − 1 features, got {n_features}"
            )));
        }
        check_budget(budget)?;
        Ok(DualGaussian {
            kernel,
            n_features,
            fit_intercept,
            second_order,
            a: if second_order { a } else { 1.0 },
            budget,
            support: Vec::new(),
            nu: Vec::new(),
            pi: Symmetric::default(),
            gram: Symmetric::default(),
            k: Vec::new(),
            pk: Vec::new(),
            kappa: 0.0,
            norm2: 0.0,
            ahead: false,
            skipped: 0,
            failure: None,
            scratch: Scratch::default(),
        })
    }

    /// Restores the support set and coefficients into `self`, a fresh Gaussian with the same
    /// settings.
    pub fn with_state(mut self, state: DualState) -> Result<DualGaussian, CwError> {
        let n = state.indptr.len().saturating_sub(1);
        let bad = |what: &str| CwError::InvalidInput(format!("inconsistent kernel state: {what}"));
        let expected_pi = if self.second_order { n * n } else { 0 };
        if state.nu.len() != n || state.pi.len() != expected_pi || state.gram.len() != n * n {
            return Err(bad("ν, Π and the Gram matrix do not match the support set"));
        }
        if self.budget.is_some_and(|budget| n > budget) {
            return Err(bad("more support rows than the budget"));
        }
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        if !(finite(state.nu) && finite(state.pi) && finite(state.gram)) {
            return Err(bad("non-finite coefficients"));
        }
        // Only the lower triangles are kept: a saved Π or Gram matrix is exactly symmetric.
        let symmetric = |m: &[f64]| (0..n).all(|p| (0..p).all(|q| m[p * n + q] == m[q * n + p]));
        if !(symmetric(state.gram) && (state.pi.is_empty() || symmetric(state.pi))) {
            return Err(bad("Π and the Gram matrix must be symmetric"));
        }
        let offsets = state
            .indptr
            .iter()
            .map(|&p| i64::try_from(p))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| bad("indptr"))?;
        let indices: Vec<i64> = state.indices.iter().map(|&j| i64::from(j)).collect();
        let matrix = Matrix::Csr64 {
            values: state.values,
            indices: &indices,
            indptr: &offsets,
            n_cols: self.n_features,
        };
        if n > 0 {
            matrix.validate(self.n_features)?;
        }
        for p in 0..n {
            let (start, end) = (offsets[p] as usize, offsets[p + 1] as usize);
            self.support.push(Support {
                indices: state.indices[start..end].to_vec(),
                values: state.values[start..end].to_vec(),
                norm2: matrix.row(p).squared_norm(),
            });
        }
        self.nu = state.nu.to_vec();
        if self.second_order {
            self.pi = Symmetric::from_dense(n, state.pi);
        }
        self.gram = Symmetric::from_dense(n, state.gram);
        Ok(self)
    }

    /// Restores the current a of Σ = a·I + ΦΠΦᵀ into `self` (IELLIP rescales it:
    /// [`Covariance::rescale_covariance`]): positive and finite, and 1 for a first-order rule;
    /// `None` keeps the configured a.
    pub fn with_a(mut self, a: Option<f64>) -> Result<DualGaussian, CwError> {
        let Some(a) = a else {
            return Ok(self);
        };
        let fits = if self.second_order {
            a.is_finite() && a > 0.0
        } else {
            a == 1.0
        };
        if !fits {
            return Err(CwError::InvalidInput(format!(
                "inconsistent kernel state: a = {a} for a {} rule",
                if self.second_order {
                    "second-order"
                } else {
                    "first-order"
                }
            )));
        }
        self.a = a;
        Ok(self)
    }

    /// The kernel k(x, z).
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Whether the model fits an intercept: 1 is added to every kernel value (a bias feature 1
    /// in the kernel's feature space).
    pub fn fit_intercept(&self) -> bool {
        self.fit_intercept
    }

    /// The prior variance a of Σ = a·I + Σ_pq Π_pq φ(x_p) φ(x_q)ᵀ (1 for first-order rules).
    pub fn a(&self) -> f64 {
        self.a
    }

    /// The cap on |S|, if any: past it, a support row is removed (docs/design.md §3.4).
    pub fn budget(&self) -> Option<usize> {
        self.budget
    }

    /// |S|, the number of support rows.
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
    pub fn dual_covariance(&self) -> Vec<f64> {
        self.pi.to_dense()
    }

    /// The Gram matrix of the support rows (with the bias term), |S|×|S| row-major.
    pub fn gram(&self) -> Vec<f64> {
        self.gram.to_dense()
    }

    fn bias(&self) -> f64 {
        if self.fit_intercept {
            1.0
        } else {
            0.0
        }
    }

    /// Fills `k` with k_S(x) (+ bias) for a built-in kernel and returns (κ, ‖x‖²).
    fn kernel_row(&self, kernel: &Kernel, row: &Row, k: &mut Vec<f64>) -> (f64, f64) {
        let (xx, m) = (row.squared_norm(), self.support.len());
        k.clear();
        k.extend(self.support.iter().map(|s| s.dot(row)));
        // The squared norms after the inner products: the kernel values read them as one array.
        k.extend(self.support.iter().map(|s| s.norm2));
        let (dots, norms) = k.split_at_mut(m);
        self.kernel_values(kernel, xx, norms, dots);
        k.truncate(m);
        (kernel.self_similarity(xx) + self.bias(), xx)
    }

    /// k_p ← k(x, s_p) + bias from k_p = x·s_p, ‖x‖² = `xx` and ‖s_p‖² = `norms[p]` (a built-in
    /// kernel), for every support row s_p: learning and both ways of predicting.
    fn kernel_values(&self, kernel: &Kernel, xx: f64, norms: &[f64], k: &mut [f64]) {
        kernel.values(xx, norms, k);
        let bias = self.bias();
        k.iter_mut().for_each(|k| *k += bias);
    }

    /// The support rows as CSR arrays with i64 indices, as a custom kernel reads them.
    fn support_csr(&self) -> (Vec<f64>, Vec<i64>, Vec<i64>) {
        let (mut values, mut indices, mut indptr) = (Vec::new(), Vec::new(), vec![0i64]);
        for s in &self.support {
            values.extend_from_slice(&s.values);
            indices.extend(s.indices.iter().map(|&j| i64::from(j)));
            indptr.push(indices.len() as i64);
        }
        (values, indices, indptr)
    }

    /// From a custom kernel: k_S(x) (+ bias) of every row of `x` into `k` (|S| per row) and
    /// κ = k(x, x) (+ bias) into `kappas`.
    fn custom_values(
        &self,
        function: &dyn KernelFunction,
        x: &Matrix,
        k: &mut Vec<f64>,
        kappas: &mut Vec<f64>,
    ) -> Result<(), CwError> {
        let (n, m) = (x.n_rows(), self.support.len());
        k.clear();
        k.resize(n * m, 0.0);
        if m > 0 {
            let (values, indices, indptr) = self.support_csr();
            let support = Matrix::Csr64 {
                values: &values,
                indices: &indices,
                indptr: &indptr,
                n_cols: self.n_features,
            };
            function.evaluate(x, &support, k)?;
        }
        kappas.clear();
        kappas.resize(n, 0.0);
        function.diagonal(x, kappas)?;
        if !k.iter().chain(kappas.iter()).all(|v| v.is_finite()) {
            return Err(CwError::InvalidInput(
                "kernel values contain NaN or infinity".into(),
            ));
        }
        let bias = self.bias();
        k.iter_mut()
            .chain(kappas.iter_mut())
            .for_each(|v| *v += bias);
        Ok(())
    }

    /// (μ·φ(x), φ(x)ᵀΣφ(x)) from k = k_S(x) and κ = k(x, x), both with the bias; `pk` is
    /// work space for Πk.
    fn moments_of(&self, k: &[f64], kappa: f64, pk: &mut Vec<f64>) -> (f64, f64) {
        let mut v = self.a * kappa;
        if self.n_support() >= rows::QUADRATIC_MIN_SUPPORT && !self.pi.is_empty() {
            let mut quadratic = [0.0];
            self.pi.quadratic_forms(k, &mut quadratic);
            v += quadratic[0];
        } else if !self.pi.is_empty() {
            self.pi.multiply(k, pk);
            v += dot(k, pk);
        }
        (dot(k, &self.nu), v)
    }

    /// Loads `row` for learning: k_S(x), κ and ‖x‖². A custom kernel's error is kept in
    /// `failure` (with k = 0, κ = NaN): the rows after it are not learned.
    fn load_row(&mut self, row: &Row) {
        let mut k = std::mem::take(&mut self.k);
        (self.kappa, self.norm2) = match &self.kernel {
            Kernel::Custom(function) => {
                let mut kappa = Vec::with_capacity(1);
                let loaded = row.as_matrix(self.n_features, |x| {
                    self.custom_values(function.as_ref(), x, &mut k, &mut kappa)
                });
                match loaded {
                    Ok(()) => (kappa[0], row.squared_norm()),
                    Err(error) => {
                        k.clear();
                        k.resize(self.support.len(), 0.0);
                        self.failure = Some(error);
                        (f64::NAN, f64::NAN)
                    }
                }
            }
            kernel => self.kernel_row(kernel, row, &mut k),
        };
        self.k = k;
    }

    /// (v, κ) of the loaded row: κ is ‖φ(x)‖² as the rules see it, infinite (so the row is
    /// not learned, as in the primal form) where ‖x‖² overflows: the support rows keep finite
    /// norms. Keeps Πk for the update (computed here unless the last update's sweep over Π
    /// already did).
    fn prepare_loaded(&mut self) -> (f64, f64) {
        if self.failure.is_some() {
            return (f64::NAN, f64::NAN);
        }
        let kappa = if self.norm2.is_finite() {
            self.kappa
        } else {
            f64::INFINITY
        };
        if !std::mem::take(&mut self.ahead) {
            if self.pi.is_empty() {
                self.pk.clear();
                self.pk.resize(self.support.len(), 0.0);
                return (self.a * self.kappa, kappa);
            }
            self.pi.multiply(&self.k, &mut self.pk);
        }
        (self.a * self.kappa + dot(&self.k, &self.pk), kappa)
    }

    /// The template step on the loaded, prepared row: ν ← ν + step·Πk, x joins S with
    /// ν_x = step·a, and Π ← [[Π, 0], [0, 0]] − β·h hᵀ with h = (Πk, a), β = c/(1 + c·v); then
    /// the budget removal, whose Π terms join the same sweep over Π.
    ///
    /// `next` is the row learned next: the sweep then also computes Πk for it, against the
    /// updated Π and support set, and the next [`Covariance::learn_score`] and
    /// [`Covariance::prepare`] take that instead of computing it: one pass over Π per example
    /// instead of two.
    fn update_loaded(&mut self, row: &Row, step: f64, c: f64, v: f64, next: Option<&Row>) {
        if self.failure.is_some() {
            return;
        }
        if !self.representable(step, c, v) {
            self.skipped += 1;
            return;
        }
        self.nu
            .iter_mut()
            .zip(&self.pk)
            .for_each(|(nu, g)| *nu += step * g);
        self.nu.push(step * self.a);
        let (indices, values) = row.to_sparse();
        self.support.push(Support {
            indices,
            values,
            norm2: self.norm2,
        });
        self.gram.push(&self.k, self.kappa);
        if self.second_order {
            // h = √β·(Πk, a) in `pk`; Π gets x's zero row and column now, −h hᵀ in the sweep.
            let scale = sherman_morrison_factor(c, v).sqrt();
            self.pk.iter_mut().for_each(|g| *g *= scale);
            self.pk.push(self.a * scale);
            self.pi.push_zeros();
        }
        let removed_nu = self
            .budget
            .is_some_and(|b| self.support.len() > b)
            .then(|| self.remove_least_weighted());
        if !self.second_order {
            return;
        }
        if let Some(next) = next {
            self.load_row(next);
        }
        let s = &mut self.scratch;
        self.pi.update_and_multiply(
            &self.pk,
            removed_nu.map(|_| (&s.column[..], &s.scaled[..])),
            [
                removed_nu.map(|_| Product {
                    x: &s.k_removed,
                    y: &mut s.projection,
                }),
                next.map(|_| Product {
                    x: &self.k,
                    y: &mut s.next_pk,
                }),
            ],
        );
        if let Some(removed_nu) = removed_nu {
            for (nu, y) in self.nu.iter_mut().zip(&s.projection) {
                *nu -= removed_nu * (y / self.a); // y/a first: ν_p·y alone overflows for a huge a
            }
        }
        if next.is_some() {
            std::mem::swap(&mut self.pk, &mut s.next_pk);
            self.ahead = true;
        }
    }

    /// Whether float64 holds the step on the prepared row: ν's increments step·(Πk, a) and
    /// the terms β·h_i·h_j of Π's update, with room for the sweep's sums. Π = −a²(C⁻¹ + aK)⁻¹
    /// reaches a²·c along directions the support rows repeat, which overflows for a huge prior
    /// `a` (a = 1e300 with AROW's c = 1/r); such a row changes nothing, so the state stays
    /// finite. With ordinary a, c and Πk the bound (1e307) is never near.
    fn representable(&self, step: f64, c: f64, v: f64) -> bool {
        let largest = self.pk.iter().fold(self.a, |m, g| m.max(g.abs()));
        let beta = if self.second_order {
            sherman_morrison_factor(c, v)
        } else {
            0.0
        };
        beta * largest * largest <= f64::MAX / 16.0 && (step * largest).is_finite()
    }

    /// Budget maintenance: removes the support row whose mean term ν_p·φ(x_p) has the smallest
    /// RKHS norm |ν_p|·√k(x_p, x_p), removes its precision term c_p·φ(x_p)φ(x_p)ᵀ exactly, and
    /// projects its mean term onto the remaining rows (without the projection, the mean error
    /// of each removal feeds larger and larger steps and the learner diverges on small budgets).
    /// Returns the removed ν_p.
    ///
    /// Why exact: Σ⁻¹ = I/a + Σ_p c_p φ(x_p)φ(x_p)ᵀ, so by Woodbury Π = −a²(C⁻¹ + aK)⁻¹ with K
    /// the support Gram matrix. Dropping p deletes row and column p of C⁻¹ + aK, whose inverse
    /// follows from Π's by the Schur complement: Π' = Π₋ₚ₋ₚ − Π₋ₚ,ₚ Πₚ,₋ₚ / Πₚₚ. The precision
    /// stays ≥ I/a, so Σ stays positive definite (merely deleting Π's row and column would not).
    /// The projection u = argmin ‖Φ'u − ν_p φ(x_p)‖² + uᵀC'⁻¹u / a = a·ν_p·(C'⁻¹ + aK')⁻¹k_p
    /// = −ν_p·Π'k_p / a reuses Π'. First-order rules (Π = 0) drop the term without projection.
    ///
    /// Here Π's step −h hᵀ (h in `pk`) is still pending, so that [`Self::update_loaded`]'s one sweep
    /// over Π does the step, the Schur complement and the product Π'k_p. This prepares them:
    /// the pivot column is column p of Π − h hᵀ (O(|S|) from Π's row p and h), and moving the
    /// last row and column into p's place commutes with the elementwise update once h, the
    /// pivot column and k_p are permuted the same way.
    fn remove_least_weighted(&mut self) -> f64 {
        let n = self.support.len();
        let weight = |p: usize| self.nu[p].abs() * self.gram.diagonal(p).max(0.0).sqrt();
        let victim = (0..n)
            .min_by(|&p, &q| weight(p).total_cmp(&weight(q)))
            .expect("the support set is over budget, so not empty");
        let removed_nu = self.nu.swap_remove(victim);
        self.support.swap_remove(victim);
        if !self.second_order {
            self.gram.swap_remove(victim);
            return removed_nu;
        }
        let (h, s) = (&mut self.pk, &mut self.scratch);
        self.pi.column(victim, &mut s.column);
        let h_victim = h[victim];
        s.column
            .iter_mut()
            .zip(h.iter())
            .for_each(|(c, &hq)| *c -= h_victim * hq);
        // A row with no precision term (c_p = 0) has Πₚₚ = 0 and nothing to remove.
        let pivot = s.column[victim];
        s.scaled.clear();
        s.scaled.extend(
            s.column
                .iter()
                .map(|&c| if pivot != 0.0 { c / pivot } else { 0.0 }),
        );
        self.gram.column(victim, &mut s.k_removed);
        for v in [h, &mut s.column, &mut s.scaled, &mut s.k_removed] {
            v.swap_remove(victim);
        }
        self.gram.swap_remove(victim);
        self.pi.swap_remove(victim);
        removed_nu
    }

    /// Calls `each(i, μ·φ(x_i), φ(x_i)ᵀΣφ(x_i))` for every row, the variance only when
    /// `with_variance` (NaN otherwise): a custom kernel is asked for all the rows at once, and
    /// batches go block by block ([`Self::blocked_moments`]). Named apart from the trait's
    /// one-row [`Covariance::moments`].
    fn batch_moments(
        &self,
        x: &Matrix,
        with_variance: bool,
        mut each: impl FnMut(usize, f64, f64),
    ) -> Result<(), CwError> {
        x.validate(self.n_features)?;
        match &self.kernel {
            Kernel::Custom(function) => {
                let (mut k, mut kappas) = (Vec::new(), Vec::new());
                self.custom_values(function.as_ref(), x, &mut k, &mut kappas)?;
                self.blocked_moments(x, Some((&k, &kappas)), with_variance, each);
            }
            _ if x.n_rows() >= rows::MIN_BLOCKED_ROWS => {
                self.blocked_moments(x, None, with_variance, each);
            }
            kernel => {
                let (mut k, mut pk) = (Vec::new(), Vec::new());
                for i in 0..x.n_rows() {
                    let (kappa, _) = self.kernel_row(kernel, &x.row(i), &mut k);
                    if with_variance {
                        let (score, v) = self.moments_of(&k, kappa, &mut pk);
                        each(i, score, v);
                    } else {
                        each(i, dot(&k, &self.nu), f64::NAN);
                    }
                }
            }
        }
        Ok(())
    }

    /// (μ·φ(x), φ(x)ᵀΣφ(x)) of one row, the variance NaN unless `with_variance`; NaN where a
    /// custom kernel fails.
    fn row_moments(&self, row: Row, with_variance: bool) -> (f64, f64) {
        let mut moments = (f64::NAN, f64::NAN);
        let evaluated = row.as_matrix(self.n_features, |x| {
            self.batch_moments(x, with_variance, |_, score, v| moments = (score, v))
        });
        evaluated.map_or((f64::NAN, f64::NAN), |()| moments)
    }
}

impl Covariance for DualGaussian {
    fn n_features(&self) -> usize {
        self.n_features
    }

    fn learn_score(&mut self, row: Row) -> f64 {
        if !self.ahead && self.failure.is_none() {
            self.load_row(&row);
        }
        dot(&self.k, &self.nu)
    }

    fn prepare(&mut self, _row: Row) -> (f64, f64) {
        self.prepare_loaded()
    }

    /// `eta` is ignored: L1 is refused for kernel models (there are no explicit weights to
    /// threshold).
    fn update(&mut self, row: Row, step: f64, c: f64, v: f64, _eta: f64) {
        self.update_loaded(&row, step, c, v, None);
    }

    /// With a built-in kernel each update also prepares the next row (its k_S(x) and Πk) in
    /// its sweep over Π; a custom kernel learns row by row.
    fn learn_rows<'a>(
        &mut self,
        rows: impl Iterator<Item = (usize, Row<'a>)>,
        mut decide: impl FnMut(usize, Observation) -> Option<Update>,
    ) {
        if let Kernel::Custom(_) = self.kernel {
            return learn_each(self, rows, decide);
        }
        let mut rows = rows.peekable();
        while let Some((i, row)) = rows.next() {
            let score = Covariance::learn_score(self, row);
            let (variance, squared_norm) = self.prepare_loaded();
            let seen = Observation {
                score,
                variance,
                squared_norm,
            };
            if let Some(step) = decide(i, seen) {
                let next = rows.peek().map(|&(_, next)| next);
                self.update_loaded(&row, step.step, step.c, variance, next.as_ref());
            }
        }
    }

    fn moments(&self, row: Row) -> (f64, f64) {
        self.row_moments(row, true)
    }

    /// A kernel's k(x, x) is no quadratic form in x.
    fn unit_scale_variance(&self, _row: Row) -> Option<(f64, f64)> {
        None
    }

    fn score(&self, row: Row) -> f64 {
        self.row_moments(row, false).0
    }

    fn can_fail(&self) -> bool {
        matches!(self.kernel, Kernel::Custom(_))
    }

    /// The error a custom kernel raised while learning (cleared).
    fn take_failure(&mut self) -> Option<CwError> {
        self.failure.take()
    }

    fn predict_rows(
        &self,
        x: &Matrix,
        with_variance: bool,
        each: impl FnMut(usize, f64, f64),
    ) -> Result<(), CwError> {
        self.batch_moments(x, with_variance, each)
    }

    fn n_values(&self) -> usize {
        let support: usize = self.support.iter().map(|s| s.values.len()).sum();
        support + self.nu.len() + self.pi.n_values() + self.gram.n_values()
    }

    /// ν averages exactly while the support set only grows; a budget's removal reorders and
    /// projects the coefficients, which the sums cannot follow.
    fn averaged_len(&self) -> Result<usize, CwError> {
        match self.budget {
            None => Ok(self.nu.len()),
            Some(_) => Err(average_with_budget()),
        }
    }

    /// Steps float64 could not hold (`DualGaussian::representable`).
    fn take_skipped(&mut self) -> u64 {
        std::mem::take(&mut self.skipped)
    }

    /// `learner::check_kernel_form` refuses the rules that read ‖μ‖² in the dual form.
    fn mean_norm2(&self) -> f64 {
        unreachable!("a rule that reads ‖μ‖² in the dual form")
    }

    /// μ = Σ_p ν_p φ(x_p), so μ ← s·μ is ν ← s·ν.
    fn rescale_mean(&mut self, s: f64) {
        self.nu.iter_mut().for_each(|nu| *nu *= s);
    }

    /// Σ = a·I + ΦΠΦᵀ, so Σ ← r·Σ is a ← r·a, Π ← r·Π (IELLIP; docs/design.md §2.9).
    fn rescale_covariance(&mut self, r: f64) {
        self.a *= r;
        self.pi.scale(r);
    }

    fn visit_mean(&self, _row: Row, mut f: impl FnMut(usize, f64)) {
        self.nu.iter().enumerate().for_each(|(p, &nu)| f(p, nu));
    }

    /// NaN where a custom kernel fails (as [`Covariance::moments`]).
    fn dot_mean(&self, row: Row, values: &[f64]) -> f64 {
        let mut k = Vec::new();
        match &self.kernel {
            Kernel::Custom(function) => {
                let mut kappa = Vec::new();
                let evaluated = row.as_matrix(self.n_features, |x| {
                    self.custom_values(function.as_ref(), x, &mut k, &mut kappa)
                });
                if evaluated.is_err() {
                    return f64::NAN;
                }
            }
            kernel => {
                self.kernel_row(kernel, &row, &mut k);
            }
        }
        dot(&k[..values.len()], values)
    }
}

/// Refuses a budget of no support row.
pub(crate) fn check_budget(budget: Option<usize>) -> Result<(), CwError> {
    match budget {
        Some(0) => Err(CwError::InvalidParameter(
            "budget must be at least 1".into(),
        )),
        _ => Ok(()),
    }
}

/// The refusal of averaging with a budget: a removal reorders and projects the coefficients,
/// which the sums cannot follow.
pub(crate) fn average_with_budget() -> CwError {
    CwError::InvalidParameter("average cannot be combined with a kernel budget".into())
}
