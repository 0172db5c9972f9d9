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

use crate::covariance::Covariance;
use crate::data::{Matrix, Presentation, Row};
use crate::error::CwError;
use crate::learner::check_initial_variance;
use crate::objective::{Binary, Objective};
use crate::rules::{margin_probability, sherman_morrison_factor, Rule};

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

/// The largest poly kernel degree: `powi` takes an i32.
pub const MAX_DEGREE: u32 = i32::MAX as u32;

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
                if degree == 0 || degree > MAX_DEGREE || !coef0.is_finite() || coef0 < 0.0 {
                    return Err(CwError::InvalidParameter(format!(
                        "poly kernel needs a degree in [1, {MAX_DEGREE}] and a finite coef0 >= \
                         0, got degree {degree}, coef0 {coef0}"
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

    /// k(x, x) from ‖x‖²: exactly 1 for the RBF kernel, even where ‖x‖² overflows.
    #[inline]
    fn self_similarity(&self, xx: f64) -> f64 {
        match *self {
            Kernel::Rbf { .. } => 1.0,
            _ => self.eval(xx, xx, xx),
        }
    }

    /// k from the inner product and the two squared norms.
    #[inline]
    fn eval(&self, dot: f64, xx: f64, zz: f64) -> f64 {
        match *self {
            Kernel::Linear => dot,
            Kernel::Rbf { gamma } => {
                let distance = xx + zz - 2.0 * dot;
                // ∞ − ∞: one norm overflowed (the other, a support row's, cannot), so x and z
                // are infinitely far apart.
                if distance.is_nan() {
                    0.0
                } else {
                    (-gamma * distance.max(0.0)).exp()
                }
            }
            Kernel::Poly {
                gamma,
                degree,
                coef0,
            } => (gamma * dot + coef0).powi(degree as i32),
        }
    }
}

/// A stored support row: its non-zeros and ‖x‖².
#[derive(Clone, Debug, PartialEq)]
struct Support {
    indices: Vec<u32>,
    values: Vec<f64>,
    norm2: f64,
}

impl Support {
    /// s·x. A support row with every feature stored against a dense row is a contiguous dot
    /// product (its indices are then 0..d); this runs |S| times per example.
    #[inline]
    fn dot(&self, row: &Row) -> f64 {
        match *row {
            Row::Dense(x) if self.indices.len() == x.len() => dot(&self.values, x),
            _ => row.dot_sparse(&self.indices, &self.values),
        }
    }
}

/// A symmetric |S|×|S| matrix over the support rows, stored as its packed lower triangle: row p
/// holds columns 0..=p from offset p(p+1)/2. The per-example passes over Π are memory-bound, so
/// storing each entry once halves their traffic, and every pass runs along contiguous rows.
/// Appending a support row is a plain append; removing one is O(|S|) (the last row and column
/// move into its place, as `Vec::swap_remove` does).
#[derive(Clone, Debug, Default, PartialEq)]
struct Symmetric {
    data: Vec<f64>,
    n: usize,
}

impl Symmetric {
    /// From a full row-major matrix, assumed symmetric: only its lower triangle is read.
    fn from_dense(n: usize, values: &[f64]) -> Symmetric {
        let mut data = Vec::with_capacity(n * (n + 1) / 2);
        for p in 0..n {
            data.extend_from_slice(&values[p * n..=p * n + p]);
        }
        Symmetric { data, n }
    }

    fn to_dense(&self) -> Vec<f64> {
        let (mut dense, mut column) = (Vec::with_capacity(self.n * self.n), Vec::new());
        for p in 0..self.n {
            self.column(p, &mut column);
            dense.extend_from_slice(&column);
        }
        dense
    }

    fn is_empty(&self) -> bool {
        self.n == 0
    }

    #[inline]
    fn offset(p: usize) -> usize {
        p * (p + 1) / 2
    }

    #[inline]
    fn diagonal(&self, p: usize) -> f64 {
        self.data[Self::offset(p) + p]
    }

    /// Row p (= column p) in full, into `out`.
    fn column(&self, p: usize, out: &mut Vec<f64>) {
        out.clear();
        out.extend_from_slice(&self.data[Self::offset(p)..Self::offset(p + 1)]);
        out.extend((p + 1..self.n).map(|q| self.data[Self::offset(q) + p]));
    }

    /// Appends a row and column: `column` (length n), then `corner`.
    fn push(&mut self, column: &[f64], corner: f64) {
        self.data.extend_from_slice(column);
        self.data.push(corner);
        self.n += 1;
    }

    /// Appends a zero row and column.
    fn push_zeros(&mut self) {
        self.n += 1;
        self.data.resize(Self::offset(self.n), 0.0);
    }

    /// Removes row and column `victim`, moving the last ones into their place.
    fn swap_remove(&mut self, victim: usize) {
        let last = self.n - 1;
        if victim != last {
            let (head, last_row) = self.data.split_at_mut(Self::offset(last));
            let start = Self::offset(victim);
            head[start..start + victim].copy_from_slice(&last_row[..victim]);
            head[start + victim] = last_row[last];
            for q in victim + 1..last {
                head[Self::offset(q) + victim] = last_row[q];
            }
        }
        self.data.truncate(Self::offset(last));
        self.n = last;
    }

    /// Calls `each(p, row p up to the diagonal)` for every row, in order.
    #[inline(always)]
    fn for_each_row(&mut self, mut each: impl FnMut(usize, &mut [f64])) {
        let mut rest = self.data.as_mut_slice();
        for p in 0..self.n {
            let (row, tail) = std::mem::take(&mut rest).split_at_mut(p + 1);
            each(p, row);
            rest = tail;
        }
    }

    /// y = M·x.
    fn multiply(&self, x: &[f64], y: &mut Vec<f64>) {
        y.clear();
        y.resize(self.n, 0.0);
        let mut rest = self.data.as_slice();
        for p in 0..self.n {
            let (row, tail) = rest.split_at(p + 1);
            rest = tail;
            accumulate_row(p, row, x, y);
        }
    }

    /// M ← M − h hᵀ, minus c wᵀ too when `schur` = (c, w) (with w ∝ c, so symmetric), then
    /// y = M·x for each of `products`, all in one sweep over M: each row is multiplied right
    /// after its update, while it is still in cache.
    fn update_and_multiply(
        &mut self,
        h: &[f64],
        schur: Option<(&[f64], &[f64])>,
        mut products: [Option<Product>; 2],
    ) {
        for product in products.iter_mut().flatten() {
            product.y.clear();
            product.y.resize(self.n, 0.0);
        }
        self.for_each_row(|p, row| {
            let hp = h[p];
            match schur {
                None => row.iter_mut().zip(h).for_each(|(m, &hq)| *m -= hp * hq),
                Some((c, w)) => {
                    let cp = c[p];
                    row.iter_mut()
                        .zip(h)
                        .zip(w)
                        .for_each(|((m, &hq), &wq)| *m = *m - hp * hq - cp * wq);
                }
            }
            for product in products.iter_mut().flatten() {
                accumulate_row(p, row, product.x, product.y);
            }
        });
    }
}

/// y = M·x, computed during a sweep over M.
struct Product<'a> {
    x: &'a [f64],
    y: &'a mut Vec<f64>,
}

/// Adds row p's share of y = M·x for a symmetric M: `row` (columns 0..=p) is both the lower
/// part of row p (a dot product into y_p) and the upper part of column p (an axpy into y_0..p),
/// so M is read once.
#[inline(always)]
fn accumulate_row(p: usize, row: &[f64], x: &[f64], y: &mut [f64]) {
    let (y_lower, y_p) = y.split_at_mut(p);
    y_p[0] += dot_axpy(&row[..p], &x[..p], x[p], y_lower) + row[p] * x[p];
}

/// Independent partial sums: a plain sequential f64 sum neither vectorizes nor pipelines (every
/// add waits for the previous one).
const LANES: usize = 8;

/// Returns a·x and adds s·a to y, reading `a` once. Kept out of line: inlined into the learning
/// loop, it vectorized worse (scalar updates of y).
#[inline(never)]
fn dot_axpy(a: &[f64], x: &[f64], s: f64, y: &mut [f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { avx2::dot_axpy(a, x, s, y) };
    }
    dot_axpy_portable(a, x, s, y)
}

/// a·b.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { avx2::dot(a, b) };
    }
    dot_portable(a, b)
}

/// The same sums compiled for AVX2 where the CPU has it: twice the vector width, the same
/// results (Rust never fuses or reorders floating-point operations by itself).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    #[target_feature(enable = "avx2")]
    pub fn dot_axpy(a: &[f64], x: &[f64], s: f64, y: &mut [f64]) -> f64 {
        super::dot_axpy_portable(a, x, s, y)
    }

    #[target_feature(enable = "avx2")]
    pub fn dot(a: &[f64], b: &[f64]) -> f64 {
        super::dot_portable(a, b)
    }
}

#[inline(always)]
fn dot_axpy_portable(a: &[f64], x: &[f64], s: f64, y: &mut [f64]) -> f64 {
    let n = a.len();
    let (a, a_tail) = a.split_at(n - n % LANES);
    let (x, x_tail) = x[..n].split_at(n - n % LANES);
    let (y, y_tail) = y[..n].split_at_mut(n - n % LANES);
    let mut acc = [0.0; LANES];
    for ((a, x), y) in a
        .chunks_exact(LANES)
        .zip(x.chunks_exact(LANES))
        .zip(y.chunks_exact_mut(LANES))
    {
        for i in 0..LANES {
            acc[i] += a[i] * x[i];
            y[i] += s * a[i];
        }
    }
    let mut tail = 0.0;
    for ((a, x), y) in a_tail.iter().zip(x_tail).zip(y_tail) {
        tail += a * x;
        *y += s * a;
    }
    acc.iter().sum::<f64>() + tail
}

#[inline(always)]
fn dot_portable(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len();
    let (a, a_tail) = a.split_at(n - n % LANES);
    let (b, b_tail) = b[..n].split_at(n - n % LANES);
    let mut acc = [0.0; LANES];
    for (a, b) in a.chunks_exact(LANES).zip(b.chunks_exact(LANES)) {
        for i in 0..LANES {
            acc[i] += a[i] * b[i];
        }
    }
    let tail: f64 = a_tail.iter().zip(b_tail).map(|(a, b)| a * b).sum();
    acc.iter().sum::<f64>() + tail
}

/// The dual Gaussian of one linear model: the support rows S, the mean coefficients ν and the
/// covariance coefficients Π (with the support Gram matrix, for budget maintenance). Kernel
/// values come from a built-in [`Kernel`] or, when it is `None`, from the caller.
#[derive(Clone, Debug, PartialEq)]
pub struct DualGaussian {
    kernel: Option<Kernel>,
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
    pub indices: &'a [u32],
    pub indptr: &'a [u64],
    pub nu: &'a [f64],
    pub pi: &'a [f64],
    pub gram: &'a [f64],
}

impl DualGaussian {
    /// S empty, Σ = a·I (a is ignored, Σ = I, for first-order rules). `budget` caps |S|.
    pub fn new(
        kernel: Option<Kernel>,
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
        if budget == Some(0) {
            return Err(CwError::InvalidParameter(
                "budget must be at least 1".into(),
            ));
        }
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
        if self.budget.is_some_and(|b| n > b) {
            return Err(bad("more support rows than the budget"));
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

    pub fn kernel(&self) -> Option<Kernel> {
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

    fn built_in(&self) -> Result<Kernel, CwError> {
        self.kernel.ok_or_else(|| {
            CwError::InvalidInput(
                "this model's kernel values must be supplied by the caller".into(),
            )
        })
    }

    /// Fills `k` with k_S(x) (+ bias) for a built-in kernel and returns (κ, ‖x‖²).
    fn kernel_row(&self, kernel: Kernel, row: &Row, k: &mut Vec<f64>) -> (f64, f64) {
        let xx = row.squared_norm();
        k.clear();
        k.extend(
            self.support
                .iter()
                .map(|s| kernel.eval(s.dot(row), xx, s.norm2) + self.bias()),
        );
        (kernel.self_similarity(xx) + self.bias(), xx)
    }

    /// (μ·φ(x), φ(x)ᵀΣφ(x)) from k = k_S(x) and κ = k(x, x), both with the bias; `pk` is
    /// work space for Πk.
    fn moments_of(&self, k: &[f64], kappa: f64, pk: &mut Vec<f64>) -> (f64, f64) {
        let mut v = self.a * kappa;
        if !self.pi.is_empty() {
            self.pi.multiply(k, pk);
            v += dot(k, pk);
        }
        (dot(k, &self.nu), v)
    }

    /// (μ·φ(x), φ(x)ᵀΣφ(x)) of one row with the built-in kernel (prediction path); `k` and
    /// `pk` are work space.
    fn row_moments(
        &self,
        kernel: Kernel,
        row: &Row,
        k: &mut Vec<f64>,
        pk: &mut Vec<f64>,
    ) -> (f64, f64) {
        let (kappa, _) = self.kernel_row(kernel, row, k);
        self.moments_of(k, kappa, pk)
    }

    /// Learning path, built-in kernel: loads `row` (k_S(x), κ, ‖x‖²) unless the last update
    /// already did, and returns μ·φ(x).
    fn load(&mut self, kernel: Kernel, row: &Row) -> f64 {
        if !self.ahead {
            self.load_row(kernel, row);
        }
        dot(&self.k, &self.nu)
    }

    fn load_row(&mut self, kernel: Kernel, row: &Row) {
        let mut k = std::mem::take(&mut self.k);
        (self.kappa, self.norm2) = self.kernel_row(kernel, row, &mut k);
        self.k = k;
    }

    /// Learning path, caller-supplied values (without the bias): loads them, returns μ·φ(x).
    fn load_precomputed(&mut self, row: &Row, k: &[f64], kappa: f64) -> f64 {
        let bias = self.bias();
        self.k.clear();
        self.k.extend(k.iter().map(|v| v + bias));
        (self.kappa, self.norm2) = (kappa + bias, row.squared_norm());
        dot(&self.k, &self.nu)
    }

    /// (v, κ) of the loaded row: κ is ‖φ(x)‖² as the rules see it, infinite (so the row is
    /// not learned, as in the primal form) where ‖x‖² overflows: the support rows keep finite
    /// norms. Keeps Πk for the update (computed here unless the last update's sweep over Π
    /// already did).
    fn prepare(&mut self) -> (f64, f64) {
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
    /// `next` is the row learned next (with the built-in kernel): the sweep then also computes
    /// Πk for it, against the updated Π and support set, and [`Self::load`] and
    /// [`Self::prepare`] take that instead of computing it: one pass over Π per example
    /// instead of two.
    fn update(&mut self, row: &Row, step: f64, c: f64, v: f64, next: Option<(Kernel, &Row)>) {
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
        if let Some((kernel, next)) = next {
            self.load_row(kernel, next);
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
                *nu -= removed_nu * y / self.a;
            }
        }
        if next.is_some() {
            std::mem::swap(&mut self.pk, &mut s.next_pk);
            self.ahead = true;
        }
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
    /// Here Π's step −h hᵀ (h in `pk`) is still pending, so that [`Self::update`]'s one sweep
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

    fn check_kernel_values(&self, k: &[f64], kappas: &[f64], n_rows: usize) -> Result<(), CwError> {
        if k.len() != n_rows * self.support.len() || kappas.len() != n_rows {
            return Err(CwError::InvalidInput(format!(
                "expected kernel values of {n_rows} row(s) against {} support rows",
                self.support.len()
            )));
        }
        if k.iter().chain(kappas).all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(CwError::InvalidInput(
                "kernel values contain NaN or infinity".into(),
            ))
        }
    }

    /// Calls `each(i, μ·φ(x_i), φ(x_i)ᵀΣφ(x_i))` for every row, with the built-in kernel.
    pub fn moments(
        &self,
        x: &Matrix,
        mut each: impl FnMut(usize, f64, f64),
    ) -> Result<(), CwError> {
        let kernel = self.built_in()?;
        x.validate(self.n_features)?;
        let (mut k, mut pk) = (Vec::new(), Vec::new());
        for i in 0..x.n_rows() {
            let (score, v) = self.row_moments(kernel, &x.row(i), &mut k, &mut pk);
            each(i, score, v);
        }
        Ok(())
    }

    /// As [`DualGaussian::moments`] from caller-supplied kernel values: `k` is rows × support
    /// rows, `kappas` one k(x, x) per row, both without the bias.
    pub fn moments_precomputed(
        &self,
        k: &[f64],
        kappas: &[f64],
        mut each: impl FnMut(usize, f64, f64),
    ) -> Result<(), CwError> {
        self.check_kernel_values(k, kappas, kappas.len())?;
        let (n, bias) = (self.support.len(), self.bias());
        let (mut row, mut pk) = (Vec::with_capacity(n), Vec::new());
        for (i, &kappa) in kappas.iter().enumerate() {
            row.clear();
            row.extend(k[i * n..(i + 1) * n].iter().map(|v| v + bias));
            let (score, v) = self.moments_of(&row, kappa + bias, &mut pk);
            each(i, score, v);
        }
        Ok(())
    }
}

impl Covariance for DualGaussian {
    fn n_features(&self) -> usize {
        self.n_features
    }

    fn check_learnable(&self) -> Result<(), CwError> {
        self.built_in().map(|_| ())
    }

    fn learn_score(&mut self, row: Row) -> f64 {
        let kernel = self.kernel.expect("checked by check_learnable");
        self.load(kernel, &row)
    }

    fn prepare(&mut self, _row: Row) -> (f64, f64) {
        DualGaussian::prepare(self)
    }

    fn update(&mut self, row: Row, step: f64, c: f64, v: f64, _eta: f64) {
        DualGaussian::update(self, &row, step, c, v, None)
    }

    fn moments(&self, row: Row) -> (f64, f64) {
        match self.kernel {
            Some(kernel) => self.row_moments(kernel, &row, &mut Vec::new(), &mut Vec::new()),
            None => (f64::NAN, f64::NAN),
        }
    }

    fn score(&self, row: Row) -> f64 {
        Covariance::moments(self, row).0
    }

    fn n_values(&self) -> usize {
        let n = self.support.len();
        self.support
            .iter()
            .map(|s| s.values.len() * 3 / 2)
            .sum::<usize>()
            + n * (2 * n + 1)
    }
}

/// A binary learner in the dual form; labels are ±1.
#[derive(Clone, Debug, PartialEq)]
pub struct DualLearner {
    rule: Rule,
    model: DualGaussian,
    n_updates: u64,
    n_mistakes: u64,
}

impl DualLearner {
    /// A fresh dual learner: S empty, Σ = a·I. `budget` caps |S| (at least 1). With `kernel`
    /// `None` the caller supplies the kernel values.
    pub fn new(
        rule: Rule,
        kernel: Option<Kernel>,
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
        Ok(DualLearner {
            rule,
            model,
            n_updates: 0,
            n_mistakes: 0,
        })
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

    /// One round on the loaded row with score `f`; `next` as in [`DualGaussian::update`].
    fn learn_loaded(&mut self, row: &Row, f: f64, y: f64, next: Option<(Kernel, &Row)>) -> bool {
        let m = y * f;
        // The counters saturate: a restored state may hold any count.
        if m <= 0.0 {
            self.n_mistakes = self.n_mistakes.saturating_add(1);
        }
        let (v, kappa) = self.model.prepare();
        let Some(step) = self.rule.step(m, v, kappa) else {
            return false;
        };
        self.model.update(row, step.alpha * y, step.c, v, next);
        self.n_updates = self.n_updates.saturating_add(1);
        true
    }

    /// Learns the rows of `x` with labels `y` (±1) as `presentation` says, with the built-in
    /// kernel; validated first, so an error leaves the model untouched.
    pub fn partial_fit(
        &mut self,
        x: &Matrix,
        y: &[f64],
        presentation: Presentation,
    ) -> Result<(), CwError> {
        let kernel = self.model.built_in()?;
        presentation.check(x, self.model.n_features, y.len())?;
        Binary(self.rule).check_targets(1, y)?;
        // A row is learned once the next one is known, so that its update can prepare that
        // one in the same sweep over Π.
        let mut pending = None;
        let mut learn = |i: usize, next: Option<usize>| {
            let row = x.row(i);
            let f = self.model.load(kernel, &row);
            let next = next.map(|j| x.row(j));
            self.learn_loaded(&row, f, y[i], next.as_ref().map(|next| (kernel, next)));
        };
        presentation.for_each(x.n_rows(), |i| {
            if let Some(previous) = pending.replace(i) {
                learn(previous, Some(i));
            }
        });
        if let Some(last) = pending {
            learn(last, None);
        }
        Ok(())
    }

    /// Learns one row with label `y` from caller-supplied kernel values: `k[p]` = k(x, x_p) for
    /// every support row (in the order of [`DualGaussian::support_vectors`]) and `kappa` =
    /// k(x, x), without the bias (added here). Returns whether the model changed.
    pub fn learn_precomputed(
        &mut self,
        row: Row,
        k: &[f64],
        kappa: f64,
        y: f64,
    ) -> Result<bool, CwError> {
        row.validate(self.model.n_features)?;
        Binary(self.rule).check_targets(1, &[y])?;
        self.model.check_kernel_values(k, &[kappa], 1)?;
        let f = self.model.load_precomputed(&row, k, kappa);
        Ok(self.learn_loaded(&row, f, y, None))
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
    fn a_restored_support_set_must_fit_the_budget() {
        let rule = Rule::from_name("AROW", &[]).unwrap();
        let (x, y) = ([1.0, 0.0, 0.0, 1.0, 1.0, 1.0], [1.0, -1.0, 1.0]);
        let m = Matrix::Dense {
            values: &x,
            n_rows: 3,
            n_cols: 2,
        };
        let mut model = DualLearner::new(rule, Some(Kernel::Linear), 2, true, 1.0, None).unwrap();
        model.partial_fit(&m, &y, Presentation::default()).unwrap();
        let g = model.model();
        let (values, indices, indptr) = g.support_vectors();
        let (pi, gram) = (g.dual_covariance(), g.gram());
        let state = DualState {
            values: &values,
            indices: &indices,
            indptr: &indptr,
            nu: g.dual_coef(),
            pi: &pi,
            gram: &gram,
        };
        assert!(g.n_support() > 1);
        let fresh = |budget| DualGaussian::new(Some(Kernel::Linear), true, 2, true, 1.0, budget);
        assert!(fresh(None).unwrap().with_state(state).is_ok());
        assert!(fresh(Some(g.n_support()))
            .unwrap()
            .with_state(state)
            .is_ok());
        assert!(fresh(Some(1)).unwrap().with_state(state).is_err());
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
            let mut dual =
                DualLearner::new(rule, Some(Kernel::Linear), d, true, 0.7, None).unwrap();
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
            assert_eq!(
                primal.n_updates(),
                dual.model().n_support() as u64,
                "{name}"
            );
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
        let mut model = DualLearner::new(rule, Some(kernel), d, true, 1.0, Some(15)).unwrap();
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
        let mut model = DualLearner::new(rule, Some(Kernel::Linear), d, false, a, Some(6)).unwrap();
        model.partial_fit(&m, &y, Presentation::default()).unwrap();
        assert!(model.n_updates() > 6);
        let (values, indices, indptr) = model.model().support_vectors();
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

    /// A restored state is what a learner can have saved: Π and the Gram matrix are exactly
    /// symmetric (only their lower triangles were kept, so an asymmetric one was silently
    /// changed), and the support set fits the budget (an overfull one stayed overfull, as each
    /// update removes one row).
    #[test]
    fn with_state_refuses_asymmetric_matrices_and_an_overfull_budget() {
        let kernel = Some(Kernel::Rbf { gamma: 0.5 });
        let fresh = |budget| DualGaussian::new(kernel, true, 2, true, 1.0, budget).unwrap();
        let (values, indices, indptr) = ([1.0, 2.0, 3.0], [0, 1, 0], [0, 2, 3]);
        let symmetric = [1.0, 0.5, 0.5, 2.0];
        let asymmetric = [1.0, 0.5, 0.25, 2.0];
        let state = |pi, gram| DualState {
            values: &values,
            indices: &indices,
            indptr: &indptr,
            nu: &[0.5, -0.5],
            pi,
            gram,
        };
        assert!(fresh(None)
            .with_state(state(&symmetric, &symmetric))
            .is_ok());
        assert!(fresh(Some(2))
            .with_state(state(&symmetric, &symmetric))
            .is_ok());
        for (pi, gram) in [(&asymmetric, &symmetric), (&symmetric, &asymmetric)] {
            assert!(fresh(None).with_state(state(pi, gram)).is_err());
        }
        let error = fresh(Some(1))
            .with_state(state(&symmetric, &symmetric))
            .unwrap_err();
        assert!(error.to_string().contains("budget"), "{error}");
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
        let mut model = DualLearner::new(rule, Some(kernel), d, true, 1.0, Some(20)).unwrap();
        model.partial_fit(&m, &y, Presentation::default()).unwrap();
        assert_eq!(model.model().n_support(), 20);
        assert_eq!(model.model().dual_covariance().len(), 400);
        assert!(model.n_updates() > 20);
        let pi = model.model().dual_covariance();
        for p in 0..20 {
            for q in 0..20 {
                assert_eq!(pi[p * 20 + q], pi[q * 20 + p]);
            }
        }
    }

    #[test]
    fn a_batch_learns_exactly_as_its_rows_one_at_a_time() {
        // In a batch, each update also prepares the next row during its sweep over Π.
        let (n, d) = (150, 3);
        let (x, y) = stream(n, d);
        let m = Matrix::Dense {
            values: &x,
            n_rows: n,
            n_cols: d,
        };
        let repeats: Vec<u32> = (0..n as u32).map(|i| 1 + i % 3).collect();
        let presentation = Presentation {
            repeats: Some(&repeats),
            ..Presentation::default()
        };
        for (name, budget) in [
            ("AROW", Some(12)),
            ("SCW1", Some(12)),
            ("CW", None),
            ("PA1", Some(12)),
        ] {
            let rule = Rule::from_name(name, &[]).unwrap();
            let kernel = Some(Kernel::Rbf { gamma: 0.5 });
            let mut batch = DualLearner::new(rule, kernel, d, true, 1.0, budget).unwrap();
            let mut single = batch.clone();
            batch.partial_fit(&m, &y, presentation).unwrap();
            for i in 0..n {
                let one = Matrix::Dense {
                    values: &x[i * d..(i + 1) * d],
                    n_rows: 1,
                    n_cols: d,
                };
                for _ in 0..repeats[i] {
                    single
                        .partial_fit(&one, &y[i..i + 1], Presentation::default())
                        .unwrap();
                }
            }
            assert!(batch.n_updates() > 20, "{name}");
            assert_eq!(batch, single, "{name}");
        }
    }

    /// Budgeted learning with many removals, every kind of rule, against values recorded from
    /// the first implementation (full square Π, sequential sums, one pass per step): the fused
    /// passes over the packed Π only reorder floating-point sums.
    #[test]
    fn budgeted_learning_matches_recorded_values() {
        type Case = (
            &'static str,
            Kernel,
            usize,
            bool,
            (u64, u64),
            [f64; 8],
            [f64; 8],
        );
        let cases: [Case; 6] = [
            (
                "AROW",
                Kernel::Rbf { gamma: 0.5 },
                20,
                true,
                (600, 93),
                [
                    0.0014220974296528244,
                    -0.05758487276870916,
                    -0.22972949606139093,
                    -0.12438453307167374,
                    0.11888170428855394,
                    0.12055881431447246,
                    -0.11554270227709362,
                    0.16302535218620595,
                ],
                [
                    0.3961455541142611,
                    0.657311926871855,
                    0.6040049697019148,
                    0.46025533983082534,
                    0.2806272593799233,
                    0.4797526394394587,
                    0.4037763063678066,
                    0.49026471515818537,
                ],
            ),
            (
                "SCW1",
                Kernel::Rbf { gamma: 0.5 },
                20,
                true,
                (457, 51),
                [
                    -0.17113712506892353,
                    -0.3186543516704148,
                    -0.3313646782215933,
                    -0.31117124570198396,
                    0.258781908937209,
                    0.018557243168187076,
                    -0.19164503935794164,
                    0.058367120863416,
                ],
                [
                    0.2179486765705605,
                    0.43485484899966376,
                    0.4402793477085114,
                    0.23230200585024097,
                    0.1773634525545602,
                    0.1899932660973742,
                    0.215732748171916,
                    0.16696888898414652,
                ],
            ),
            (
                "NHERD",
                Kernel::Poly {
                    gamma: 0.5,
                    degree: 2,
                    coef0: 1.0,
                },
                12,
                false,
                (582, 64),
                [
                    -0.41494765344749873,
                    -0.7018370790837964,
                    -0.42216571231599787,
                    -0.34204375344301813,
                    0.03214544978278433,
                    0.22710872382562552,
                    -0.12037320260905932,
                    0.13302688845247168,
                ],
                [
                    0.9798172698933867,
                    1.807774672443191,
                    0.3444632497717661,
                    0.2083258321532866,
                    0.7003663552339285,
                    0.22618767085619096,
                    0.12600765349181398,
                    0.13506545034236384,
                ],
            ),
            (
                "CW",
                Kernel::Rbf { gamma: 1.0 },
                20,
                true,
                (521, 78),
                [
                    -0.06742121902937837,
                    -0.0702118902107347,
                    -0.11732429583994475,
                    -0.037792581387804836,
                    0.28067147120317415,
                    0.02353199730044353,
                    0.02348742104494672,
                    0.1415631746347379,
                ],
                [
                    0.4400249270041443,
                    0.7765717315364715,
                    0.7801435307097433,
                    0.45325534854089455,
                    0.3114554696299281,
                    0.6262940504700429,
                    0.44550904312049444,
                    0.6600875527031427,
                ],
            ),
            (
                "PA1",
                Kernel::Rbf { gamma: 0.5 },
                20,
                true,
                (372, 85),
                [
                    -0.2176005580165956,
                    -0.6216499016929153,
                    -0.4555307895343452,
                    -0.18271986850369704,
                    0.8976591807829102,
                    0.4510525131891079,
                    0.116877778702837,
                    0.6658882275984777,
                ],
                [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0],
            ),
            (
                "AROW",
                Kernel::Linear,
                3,
                false,
                (600, 162),
                [
                    -0.00384268164059981,
                    0.015313346188670196,
                    -0.02716459026831941,
                    0.11952045313543458,
                    0.20344209858323903,
                    -0.13135266022419856,
                    0.11529930856599724,
                    -0.13551176795034836,
                ],
                [
                    0.9148249565219917,
                    1.4459598356319014,
                    1.0106928928177858,
                    0.307228561005064,
                    0.36761487763438316,
                    0.3628720568267991,
                    0.41783961482059573,
                    0.30589095212841366,
                ],
            ),
        ];
        let (n, d) = (600, 3);
        let (x, y) = stream(n, d);
        let m = Matrix::Dense {
            values: &x,
            n_rows: n,
            n_cols: d,
        };
        let probe = Matrix::Dense {
            values: &x[..8 * d],
            n_rows: 8,
            n_cols: d,
        };
        for (name, kernel, budget, bias, counts, scores, variances) in cases {
            let rule = Rule::from_name(name, &[]).unwrap();
            let mut model =
                DualLearner::new(rule, Some(kernel), d, bias, 1.0, Some(budget)).unwrap();
            model.partial_fit(&m, &y, Presentation::default()).unwrap();
            assert_eq!((model.n_updates(), model.n_mistakes()), counts, "{name}");
            assert_eq!(model.model().n_support(), budget, "{name}");
            let (mut f, mut v) = (vec![0.0; 8], vec![0.0; 8]);
            model.decision_function(&probe, &mut f).unwrap();
            model.variances(&probe, &mut v).unwrap();
            for (got, want) in f.iter().zip(&scores).chain(v.iter().zip(&variances)) {
                assert!(
                    (got - want).abs() <= 1e-9 * want.abs(),
                    "{name}: {got} vs {want}"
                );
            }
        }
    }
}
