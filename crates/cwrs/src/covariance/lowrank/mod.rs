//! The low-rank covariance (docs/design.md §3.3, "Low-rank covariance"): the precision is kept
//! as Λ = D + BᵀB, with B a Frequent Directions sketch (Liberty 2013; Ghashami et al. 2016) of
//! the precision increments √c_t·x_t and D diagonal, starting at I/a. The sketch holds at most
//! 2k rows; when it is full, one eigen-decomposition of the 2k×2k matrix B·D⁻¹·Bᵀ shrinks it
//! to k rows (every k updates), and the mass the shrink drops from each coordinate's precision
//! moves to D. So Λ's diagonal is always exactly the full model's, k = 0 would be the diagonal
//! form, and until 2k updates nothing is dropped (the full form). Σ is applied by Woodbury,
//! with S = D⁻¹: Σx = Sx − S·Bᵀ(I + BSBᵀ)⁻¹BSx. An update costs O(kd) amortised, a prediction
//! O(k·nnz + k²).

use std::borrow::Cow;

use super::{
    dense_mean_methods, impossible, with_new_features, wrong_length, Covariance, CovarianceKind,
    Parts, PrimalForm, MEAN_STEP_LIMIT, RELATIVE_VARIANCE_FLOOR, VARIANCE_FLOOR,
};
use crate::data::{Features, Row, Shape};
use crate::error::CwError;
use crate::linalg::simd::{dot, dot_axpy};
use crate::linalg::{backward_solve, forward_solve};

mod eigen;
pub(crate) use eigen::symmetric_eigen;

/// The largest rank (a sketch of 2k rows past a few hundred costs more than it brings).
pub const MAX_RANK: usize = 1024;

/// Sketch rows up to which a prediction keeps the row's projection on the stack.
const STACK_ROWS: usize = 128;

/// The rank of `covariance="lowrank"` when none is given (docs/design.md §3.3).
pub const DEFAULT_RANK: usize = 10;

/// Columns of the sketch the shrink rotates at a time (the 2k×PANEL block stays in cache).
const PANEL: usize = 32;

/// Σ = (D + BᵀB)⁻¹: B the Frequent Directions sketch of the precision increments, D the
/// diagonal precision that holds what the sketch dropped.
#[derive(Clone, Debug)]
pub struct LowRank {
    shape: Shape,
    dim: usize,
    mean: Vec<f64>,
    /// S = D⁻¹, one variance per coordinate (a until a shrink drops mass there).
    variances: Vec<f64>,
    /// k: the sketch keeps 2k rows and is shrunk to k when full.
    rank: usize,
    /// The live rows of the sketch (the first `rows` of `sketch`; the others are zero).
    rows: usize,
    /// B, 2k rows of `dim` values, row-major.
    sketch: Vec<f64>,
    /// The lower Cholesky factor L of I + BSBᵀ over the live rows (2k×2k, row-major), derived
    /// from `sketch` and `variances` (a restored model rebuilds it the same way).
    cholesky: Vec<f64>,
    /// Mean steps the overflow gate skipped, not yet taken (see [`Covariance::take_skipped`]).
    skipped: u64,
    /// Work space, not part of the model: y = L⁻¹BSx of the row last prepared (2k), Σx of the
    /// row being learned (dim), S times the sketch row being added (dim), that row's Gram
    /// entries (2k), the shrink's eigen-problem (2 × 2k×2k) and its block of columns
    /// (2k×PANEL).
    solved: Vec<f64>,
    /// xᵀSx of the row last prepared.
    prior: f64,
    sigma_x: Vec<f64>,
    scaled: Vec<f64>,
    gram: Vec<f64>,
    eigen: Vec<f64>,
    vectors: Vec<f64>,
    panel: Vec<f64>,
}

impl PartialEq for LowRank {
    fn eq(&self, other: &Self) -> bool {
        let parts = |m: &Self| (m.shape, m.rank, m.rows);
        parts(self) == parts(other)
            && (&self.mean, &self.variances, &self.sketch)
                == (&other.mean, &other.variances, &other.sketch)
    }
}

impl LowRank {
    fn capacity(&self) -> usize {
        2 * self.rank
    }

    fn row(&self, i: usize) -> &[f64] {
        &self.sketch[i * self.dim..(i + 1) * self.dim]
    }

    /// The sketch's live rows (`rank` rows at most after a shrink, 2k before one).
    pub fn live_rows(&self) -> usize {
        self.rows
    }

    /// k, the number of directions the sketch keeps.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// y ← L⁻¹y over the live rows.
    fn forward(&self, y: &mut [f64]) {
        forward_solve(&self.cholesky, self.capacity(), self.rows, y);
    }

    /// y ← L⁻ᵀy over the live rows.
    fn backward(&self, y: &mut [f64]) {
        backward_solve(&self.cholesky, self.capacity(), self.rows, y);
    }

    /// BSx into `p` (the live rows) by dots with Sx, written into `scaled`: the learning path's
    /// projection of a dense row. Returns (xᵀSx, ‖x‖²).
    fn project_dense(&self, x: &Features, scaled: &mut [f64], p: &mut [f64]) -> (f64, f64) {
        let (mut prior, mut squared_norm) = (0.0, 0.0);
        x.for_each(|j, xj| {
            let w = self.variances[j] * xj;
            scaled[j] = w;
            prior += w * xj;
            squared_norm += xj * xj;
        });
        for (i, pi) in p.iter_mut().enumerate().take(self.rows) {
            *pi = dot(self.row(i), scaled);
        }
        (prior, squared_norm)
    }

    /// BSx into `p` (the live rows), in one pass per sketch row over the row's entries; returns
    /// (xᵀSx, ‖x‖²).
    fn project(&self, x: &Features, p: &mut [f64]) -> (f64, f64) {
        for (i, pi) in p.iter_mut().enumerate().take(self.rows) {
            let b = self.row(i);
            let mut s = 0.0;
            x.for_each(|j, xj| s += b[j] * (self.variances[j] * xj));
            *pi = s;
        }
        let (mut prior, mut squared_norm) = (0.0, 0.0);
        x.for_each(|j, xj| {
            prior += self.variances[j] * xj * xj;
            squared_norm += xj * xj;
        });
        (prior, squared_norm)
    }

    /// xᵀΣx (prediction path).
    fn variance_of(&self, x: &Features) -> f64 {
        let (mut small, mut large) = ([0.0; STACK_ROWS], Vec::new());
        let y = if self.rows <= STACK_ROWS {
            &mut small[..]
        } else {
            large.resize(self.rows, 0.0);
            &mut large[..]
        };
        let (prior, _) = self.project(x, y);
        self.variance_from(y, prior)
    }

    /// v = xᵀSx − ‖L⁻¹BSx‖², with `y` holding BSx on entry and L⁻¹BSx on return. Kept at
    /// least τ·xᵀSx (τ of docs/design.md §3.6): the subtraction cancels where x lies almost in
    /// the sketch's span, and a rule must never see a negative variance.
    fn variance_from(&self, y: &mut [f64], prior: f64) -> f64 {
        self.forward(y);
        let explained: f64 = y[..self.rows].iter().map(|t| t * t).sum();
        (prior - explained).max(RELATIVE_VARIANCE_FLOOR * prior)
    }

    /// Row i of L for the live rows 0..=i (rows before i already factored), from the Gram
    /// entries b_j·S·b_i (j ≤ i), all computed as `dot(b_j, S∘b_i)` whether learning (where
    /// [`Covariance::update`] gets them from its pass over the sketch) or restoring, so that
    /// a restored model's factor is the same bits as the learning one's.
    fn factor_row(&mut self, i: usize) {
        self.scale_row(i);
        let dim = self.dim;
        for j in 0..i {
            self.gram[j] = dot(&self.sketch[j * dim..(j + 1) * dim], &self.scaled);
        }
        self.factor_gram_row(i);
    }

    /// Whether row i of L, and the Gram entries it came from, are finite: a sketch row too
    /// large for I + BSBᵀ (~1e155 against S = 1) would make every later Woodbury solve NaN.
    fn factor_row_is_finite(&self, i: usize) -> bool {
        let stride = self.capacity();
        let factor = &self.cholesky[i * stride..=i * stride + i];
        self.gram[..=i].iter().chain(factor).all(|v| v.is_finite())
    }

    /// `scaled` ← S∘b_i, and the Gram entry b_i·S·b_i into `gram[i]`.
    fn scale_row(&mut self, i: usize) {
        let bi = &self.sketch[i * self.dim..(i + 1) * self.dim];
        for ((w, b), s) in self.scaled.iter_mut().zip(bi).zip(&self.variances) {
            *w = b * s;
        }
        self.gram[i] = dot(bi, &self.scaled);
    }

    /// Row i of L, the Cholesky factor of I + BSBᵀ, from the Gram entries in `gram[..=i]`.
    fn factor_gram_row(&mut self, i: usize) {
        let stride = self.capacity();
        let (done, row) = self.cholesky.split_at_mut(i * stride);
        let row = &mut row[..=i];
        for j in 0..=i {
            let entry = f64::from(u8::from(i == j)) + self.gram[j];
            let lj = if i == j {
                &row[..j]
            } else {
                &done[j * stride..j * stride + j]
            };
            let s: f64 = row[..j].iter().zip(lj).map(|(a, b)| a * b).sum();
            row[j] = if i == j {
                // I + BSBᵀ ⪰ I, but where a row lies (almost) in the span of the rows before
                // it, entry − s is rounding noise of size ε·entry: a pivot of 1 would then
                // divide that noise into the later rows of L, which grow by that ratio at every
                // such row until they overflow. At least τ·entry keeps L bounded by √entry.
                (entry - s)
                    .max(1.0)
                    .max(RELATIVE_VARIANCE_FLOOR * entry)
                    .sqrt()
            } else {
                (entry - s) / done[j * stride + j]
            };
        }
    }

    /// Writes √c·x as sketch row `rows` (not yet live); whether it is non-zero. √c·x can
    /// underflow to zero (a tiny c and x): such a row adds nothing and is left all +0.0, since a
    /// zero row among the live ones would make the saved state unreadable (they come first).
    fn write_row(&mut self, x: &Features, c: f64) -> bool {
        let (i, scale) = (self.rows, c.sqrt());
        let row = &mut self.sketch[i * self.dim..(i + 1) * self.dim];
        let mut nonzero = false;
        x.for_each(|j, xj| {
            row[j] = scale * xj;
            nonzero |= row[j] != 0.0;
        });
        if !nonzero {
            x.for_each(|j, _| row[j] = 0.0);
        }
        nonzero
    }

    /// Appends the row √c·x to the sketch, shrinking it first when full.
    fn insert(&mut self, x: &Features, c: f64) {
        if self.rows == self.capacity() {
            self.shrink();
        }
        if self.write_row(x, c) {
            self.factor_row(self.rows);
            if self.factor_row_is_finite(self.rows) {
                self.rows += 1;
            } else {
                let row = self.rows * self.dim..(self.rows + 1) * self.dim;
                self.sketch[row].fill(0.0);
            }
        }
    }

    /// Frequent Directions in the metric of S: with BSBᵀ = UΛUᵀ (λ descending) and
    /// δ = λ_{k+1}, B ← diag(√(1 − δ/λ_i)) UᵀB over the k leading directions (at least k of the
    /// 2k rows become zero); each coordinate's dropped precision Σ_i B_ij² − Σ_i B'_ij² then
    /// joins D, as the diagonal form adds an increment: S_j ← S_j / (1 + S_j·dropped_j).
    fn shrink(&mut self) {
        let (m, k) = (self.rows, self.rank);
        let stride = self.capacity();
        // t·BSBᵀ = (hL)(hL)ᵀ − t·I, from the factor, with h = √t a power of two bringing L's
        // largest entry near 1: only the eigenvalues' ratios are used, the scaling is exact, and
        // the products and the solver's squares cannot overflow (a crafted sketch's Gram
        // entries can be finite up to ~1e308).
        let largest = (0..m)
            .flat_map(|i| &self.cholesky[i * stride..=i * stride + i])
            .fold(0.0f64, |l, v| l.max(v.abs()));
        let exponent = largest.log2().floor().clamp(-500.0, 500.0) as i32;
        let h = 2f64.powi(-exponent);
        for i in 0..m {
            let li = &self.cholesky[i * stride..i * stride + i + 1];
            for j in 0..=i {
                let lj = &self.cholesky[j * stride..j * stride + j + 1];
                let s: f64 = li[..=j]
                    .iter()
                    .zip(lj)
                    .map(|(a, b)| (h * a) * (h * b))
                    .sum();
                let g = s - f64::from(u8::from(i == j)) * (h * h);
                self.eigen[i * m + j] = g;
                self.eigen[j * m + i] = g;
            }
        }
        let values = symmetric_eigen(&self.eigen[..m * m], &mut self.vectors, m);
        let delta = values[k].max(0.0);
        let kept = values[..k].iter().take_while(|&&l| l > delta).count();
        // The rotation's coefficients: new row r = Σ_i (s_r·U_ir) b_i, s_r = √(1 − δ/λ_r).
        for (r, &l) in values[..kept].iter().enumerate() {
            let s = ((l - delta) / l).sqrt();
            for i in 0..m {
                self.eigen[r * m + i] = s * self.vectors[r * m + i];
            }
        }
        for first in (0..self.dim).step_by(PANEL) {
            self.rotate_panel(first, kept);
        }
        // A new row that underflowed to zero is dropped, so that the live rows come first.
        let dim = self.dim;
        let mut live = 0;
        for r in 0..kept {
            let row = r * dim..(r + 1) * dim;
            if self.sketch[row.clone()].iter().any(|&b| b != 0.0) {
                self.sketch.copy_within(row, live * dim);
                live += 1;
            }
        }
        self.sketch[live * dim..kept * dim].fill(0.0);
        self.cholesky.iter_mut().for_each(|l| *l = 0.0);
        self.rows = live;
        for i in 0..live {
            self.factor_row(i);
        }
    }

    /// The shrink's rotation of the columns first..first + PANEL (the coefficients in
    /// `eigen`, `kept` rows of `rows`): the old rows' block is copied out, the new rows are
    /// written over the first `kept` rows (the others zeroed), and each column's dropped
    /// precision moves to S.
    fn rotate_panel(&mut self, first: usize, kept: usize) {
        let (dim, m) = (self.dim, self.rows);
        let width = PANEL.min(dim - first);
        let columns = first..first + width;
        let mut before = [0.0; PANEL];
        for i in 0..m {
            let old = &self.sketch[i * dim..][columns.clone()];
            let block = &mut self.panel[i * PANEL..i * PANEL + width];
            block.copy_from_slice(old);
            before.iter_mut().zip(old).for_each(|(s, b)| *s += b * b);
        }
        let mut after = [0.0; PANEL];
        for r in 0..kept {
            let out = &mut self.sketch[r * dim..][columns.clone()];
            out.iter_mut().for_each(|b| *b = 0.0);
            let coefficients = &self.eigen[r * m..(r + 1) * m];
            for (block, &u) in self.panel.chunks_exact(PANEL).zip(coefficients) {
                out.iter_mut().zip(block).for_each(|(b, p)| *b += u * p);
            }
            after
                .iter_mut()
                .zip(out.iter())
                .for_each(|(s, b)| *s += b * b);
        }
        for i in kept..m {
            self.sketch[i * dim..][columns.clone()]
                .iter_mut()
                .for_each(|b| *b = 0.0);
        }
        let variances = &mut self.variances[columns];
        for ((s, b), a) in variances.iter_mut().zip(before).zip(after) {
            let dropped = b - a;
            if dropped > 0.0 {
                *s = (*s / (1.0 + *s * dropped)).max(VARIANCE_FLOOR);
            }
        }
    }

    /// Sets the mean and the state's values (S, then the sketch of the model's rank), checking
    /// them, and factors I + BSBᵀ.
    fn set_values(&mut self, mean: &[f64], state: &[f64]) -> Result<(), CwError> {
        let (kind, capacity) = (self.kind(), self.capacity());
        let (variances, sketch) = state.split_at(self.dim);
        if variances.iter().any(|&s| s <= 0.0) {
            return Err(impossible(kind, "must hold positive variances"));
        }
        self.mean.copy_from_slice(mean);
        self.variances.copy_from_slice(variances);
        self.sketch.copy_from_slice(sketch);
        let zero = |i: &usize| self.row(*i).iter().all(|&b| b == 0.0);
        let rows = (0..capacity).find(zero).unwrap_or(capacity);
        if !(rows..capacity).all(|i| zero(&i)) {
            return Err(impossible(kind, "keeps its live sketch rows first"));
        }
        self.rows = rows;
        // A sketch too large for its Gram matrix I + BSBᵀ (a crafted value no learning writes)
        // factors into infinities or NaN, and the next update turned the mean into NaN.
        for i in 0..rows {
            self.factor_row(i);
            if !self.factor_row_is_finite(i) {
                return Err(impossible(kind, "has a sketch whose Gram matrix overflows"));
            }
        }
        Ok(())
    }
}

impl PrimalForm for LowRank {
    const KIND: CovarianceKind = CovarianceKind::LowRank { rank: DEFAULT_RANK };

    /// The mean, S, Σx, S·b, the 2k sketch rows, the 2k×2k factor and eigen-problem, and
    /// the shrink's block of columns.
    fn size(kind: CovarianceKind, dim: usize) -> Option<usize> {
        let m = 2 * kind.rank()?;
        let square = m
            .checked_mul(m + PANEL)?
            .checked_add(m.checked_mul(m)?.checked_mul(2)?)?;
        dim.checked_mul(m + 4)?.checked_add(square)
    }

    fn new(kind: CovarianceKind, shape: Shape, a: f64) -> Self {
        let (dim, rank) = (shape.dim(), kind.rank().unwrap_or(DEFAULT_RANK));
        let m = 2 * rank;
        LowRank {
            shape,
            dim,
            mean: vec![0.0; dim],
            variances: vec![a; dim],
            rank,
            rows: 0,
            sketch: vec![0.0; m * dim],
            cholesky: vec![0.0; m * m],
            skipped: 0,
            solved: vec![0.0; m],
            prior: 0.0,
            sigma_x: vec![0.0; dim],
            scaled: vec![0.0; dim],
            gram: vec![0.0; m],
            eigen: vec![0.0; m * m],
            vectors: vec![0.0; m * m],
            panel: vec![0.0; m * PANEL],
        }
    }

    /// The state is S (dim values), then the 2k×dim sketch (k read from its length): its live
    /// rows, then rows of zeros.
    fn from_finite_parts(parts: Parts) -> Result<Self, CwError> {
        let (shape, mean, state) = (parts.shape, parts.mean, parts.covariance);
        let dim = shape.dim();
        let rank = (state.len() / dim).saturating_sub(1) / 2;
        let kind = CovarianceKind::LowRank { rank };
        if rank == 0 || rank > MAX_RANK || state.len() != (1 + 2 * rank) * dim {
            let what = format!("{dim} variances, then 2·rank sketch rows of {dim} values");
            return Err(wrong_length(kind, dim, &what, state.len()));
        }
        let mut model = LowRank::new(kind, shape, 1.0);
        model.set_values(mean, state)?;
        Ok(model)
    }

    /// The checks of [`PrimalForm::from_parts`]: O(kd) beside the factor of I + BSBᵀ, which
    /// the model keeps anyway.
    fn set_finite_moments(&mut self, mean: &[f64], covariance: &[f64]) -> Result<(), CwError> {
        let dim = self.dim;
        if covariance.len() != (1 + self.capacity()) * dim {
            let what = format!("{dim} variances, then 2·rank sketch rows of {dim} values");
            return Err(wrong_length(self.kind(), dim, &what, covariance.len()));
        }
        self.skipped = 0;
        self.set_values(mean, covariance)
    }

    fn kind(&self) -> CovarianceKind {
        CovarianceKind::LowRank { rank: self.rank }
    }

    /// Σ = S − SBᵀ(I + BSBᵀ)⁻¹BS (Woodbury), column by column through the factor L: O(d²k).
    fn dense_covariance(&self) -> Option<Vec<f64>> {
        let dim = self.dim;
        let mut sigma = vec![0.0; dim * dim];
        let mut y = vec![0.0; self.rows];
        for j in 0..dim {
            // Column j of Σ is Σe_j, and BSe_j is S_j times column j of B.
            let sj = self.variances[j];
            for (i, yi) in y.iter_mut().enumerate() {
                *yi = self.sketch[i * dim + j] * sj;
            }
            self.forward(&mut y);
            self.backward(&mut y);
            for (i, out) in sigma[j * dim..(j + 1) * dim].iter_mut().enumerate() {
                let bz: f64 = (0..self.rows)
                    .map(|r| self.sketch[r * dim + i] * y[r])
                    .sum();
                *out = -self.variances[i] * bz;
            }
            sigma[j * dim + j] += sj;
        }
        Some(sigma)
    }

    fn shape(&self) -> Shape {
        self.shape
    }

    fn mean(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.mean)
    }

    /// S, then the sketch (2k rows of dim values).
    fn covariance(&self) -> Cow<'_, [f64]> {
        let mut values = Vec::with_capacity(self.dim + self.sketch.len());
        values.extend_from_slice(&self.variances);
        values.extend_from_slice(&self.sketch);
        Cow::Owned(values)
    }

    /// A new feature has S = a and no sketch entry: no increment √c·x of a row without it has
    /// touched it (docs/design.md §3.3).
    fn widened_covariance(&self, new: usize, a: f64) -> Vec<f64> {
        let mut values = with_new_features(&self.variances, self.shape, new, a);
        for row in self.sketch.chunks_exact(self.dim) {
            values.extend(with_new_features(row, self.shape, new, 0.0));
        }
        values
    }
}

impl Covariance for LowRank {
    dense_mean_methods!();

    #[inline]
    fn prepare(&mut self, row: Row) -> (f64, f64) {
        let x = self.shape.features(row);
        let mut y = std::mem::take(&mut self.solved);
        let (prior, squared_norm) = if let Row::Dense(_) = row {
            let mut scaled = std::mem::take(&mut self.sigma_x);
            let moments = self.project_dense(&x, &mut scaled, &mut y);
            self.sigma_x = scaled;
            moments
        } else {
            self.project(&x, &mut y)
        };
        let v = self.variance_from(&mut y, prior);
        self.backward(&mut y);
        self.solved = y;
        self.prior = prior;
        (v, squared_norm)
    }

    /// Σx = S(x − Bᵀz) with z = (I + BSBᵀ)⁻¹BSx from `prepare`; then the sketch takes √c·x,
    /// with c capped so that its Gram entry c·xᵀSx stays ≤ 1/τ (§3.6; so c·v ≤ 1/τ too): rows
    /// far above the prior (a·‖x‖² past 1/ε) would otherwise add Gram entries whose rounding
    /// swamps the I of I + BSBᵀ. Unless the sketch must shrink first, the pass over the sketch
    /// rows b_i that forms Bᵀz also takes the new row's Gram entries b_i·S·(√c·x).
    fn update(&mut self, row: Row, step: f64, c: f64, v: f64, _eta: f64) {
        let x = self.shape.features(row);
        let c = if c > 0.0 && v > 0.0 {
            c.min(1.0 / (RELATIVE_VARIANCE_FLOOR * self.prior))
        } else {
            0.0
        };
        let fused = c > 0.0 && self.rows < self.capacity() && self.write_row(&x, c);
        if fused {
            self.scale_row(self.rows);
        }
        let dim = self.dim;
        if fused && step == 0.0 {
            for i in 0..self.rows {
                self.gram[i] = dot(&self.sketch[i * dim..(i + 1) * dim], &self.scaled);
            }
        }
        let mut overflows = false;
        if step != 0.0 {
            self.sigma_x.iter_mut().for_each(|s| *s = 0.0);
            for i in 0..self.rows {
                let zi = -self.solved[i];
                let b = &self.sketch[i * dim..(i + 1) * dim];
                if fused {
                    self.gram[i] = dot_axpy(b, &self.scaled, zi, &mut self.sigma_x);
                } else {
                    self.sigma_x
                        .iter_mut()
                        .zip(b)
                        .for_each(|(s, bj)| *s += zi * bj);
                }
            }
            let sigma_x = &mut self.sigma_x;
            x.for_each(|j, xj| sigma_x[j] += xj);
            let variances = &self.variances;
            sigma_x.iter_mut().zip(variances).for_each(|(s, v)| *s *= v);
            // A NaN in Σx counts as infinite (`f64::max` would pass over it).
            let largest = sigma_x.iter().fold(0.0f64, |m, &s| {
                if s.is_nan() {
                    f64::INFINITY
                } else {
                    m.max(s.abs())
                }
            });
            overflows = step.abs() * largest >= MEAN_STEP_LIMIT
                && self
                    .mean
                    .iter()
                    .zip(sigma_x.iter())
                    .any(|(m, s)| !(m + step * s).is_finite());
        }
        // The new sketch row's factor row, before anything changes: a row that would make
        // I + BSBᵀ overflow is not learned, as a mean step that would overflow is not.
        let unfactorable = fused && {
            self.factor_gram_row(self.rows);
            !self.factor_row_is_finite(self.rows)
        };
        if overflows || unfactorable {
            self.skipped += 1;
            if fused {
                self.sketch[self.rows * dim..(self.rows + 1) * dim].fill(0.0);
            }
            return;
        }
        if step != 0.0 {
            let mean = &mut self.mean;
            mean.iter_mut()
                .zip(self.sigma_x.iter())
                .for_each(|(m, s)| *m += step * s);
        }
        if fused {
            self.rows += 1;
        } else if c > 0.0 && self.rows == self.capacity() {
            self.insert(&x, c);
        }
    }

    fn moments(&self, row: Row) -> (f64, f64) {
        let x = self.shape.features(row);
        (x.dot(&self.mean), self.variance_of(&x))
    }

    fn unit_scale_variance(&self, row: Row) -> Option<(f64, f64)> {
        Some(self.shape.at_unit_scale(row, |x| self.variance_of(x)))
    }

    /// By Woodbury, as the variance: xᵀSy − (L⁻¹BSx)·(L⁻¹BSy), O(k·(nnz_x + nnz_y) + k²).
    /// Without the variance's floor, which only a cancelling xᵀΣx meets.
    fn cross_variance(&self, a: Row, b: Row) -> Option<f64> {
        let (x, y) = (self.shape.features(a), self.shape.features(b));
        let mut small = [[0.0; STACK_ROWS]; 2];
        let mut large = Vec::new();
        let [px, py] = if self.rows <= STACK_ROWS {
            let [px, py] = &mut small;
            [&mut px[..], &mut py[..]]
        } else {
            large.resize(2 * self.rows, 0.0);
            let (px, py) = large.split_at_mut(self.rows);
            [px, py]
        };
        self.project(&x, px);
        self.project(&y, py);
        self.forward(px);
        self.forward(py);
        let explained: f64 = (px[..self.rows].iter().zip(&py[..self.rows]))
            .map(|(s, t)| s * t)
            .sum();
        let variances = &self.variances;
        let mut prior = 0.0;
        x.for_each_common(&y, |j, xj, yj| prior += variances[j] * (xj * yj));
        Some(prior - explained)
    }

    fn n_values(&self) -> usize {
        2 * self.dim + self.sketch.len() + self.cholesky.len()
    }

    /// r·Σ = (D/r + BᵀB/r)⁻¹: S ← r·S and B ← B/√r, which leave BSBᵀ, hence the Cholesky
    /// factor of I + BSBᵀ, as they are. O(kd).
    fn rescale_covariance(&mut self, r: f64) {
        self.variances.iter_mut().for_each(|s| *s *= r);
        let shrink = 1.0 / r.sqrt();
        self.sketch.iter_mut().for_each(|b| *b *= shrink);
    }

    /// Σx is dense: a step moves every entry of the mean.
    fn visit_mean(&self, _row: Row, mut f: impl FnMut(usize, f64)) {
        self.mean.iter().enumerate().for_each(|(j, &m)| f(j, m));
    }
}

#[cfg(test)]
mod tests;
