use std::borrow::Cow;
use std::ops::Range;

use super::{Observation, FULL_VARIANCE_FLOOR, RELATIVE_VARIANCE_FLOOR};
use crate::data::Features;
use crate::rules::sherman_morrison_factor;

/// The most rank-one terms that wait before a fold.
pub const MAX_BLOCK: usize = 32;

/// How many rank-one terms wait before a fold, for Σ of order `dim`. Each pending term costs
/// O(d) per row while a fold saves a pass over Σ (d²), so small Σ (which sits in cache anyway)
/// folds often and large Σ rarely; below 32 coordinates every update folds at once, as the
/// lanes of a blocked product would mostly idle.
fn block_size(dim: usize) -> usize {
    if dim < 32 {
        1
    } else {
        (dim / 8).clamp(1, MAX_BLOCK)
    }
}

/// Right-hand sides per pass of the blocked product: two AVX2 vectors of them, so a tile has
/// enough independent sums to hide the latency of the additions.
const LANES: usize = 8;

/// Rows of Σ per register tile.
const TILE: usize = 4;

/// Columns of Σ per register tile of the fold: two SIMD vectors.
const FOLD_COLUMNS: usize = 8;

/// From this order on, the rows of Σ are shared between two cores when there are two; each row
/// is computed whole by one core, so the results do not depend on the number of cores.
const PARALLEL_ORDER: usize = 256;

/// A Gaussian with full covariance: the mean and a symmetric d×d Σ (row-major), updated by
/// Sherman–Morrison, Σ ← Σ − h hᵀ with h = √β·Σx and β = c / (1 + c·v).
///
/// Σ is kept as Σ = Σ₀ − Σ_b h_b h_bᵀ: the last rank-one terms h_b wait in `pending` (up to a
/// block of them, see [`block_size`]) and are folded into Σ₀ together, in one pass that keeps
/// tiles of Σ₀ in registers (Σ₀ ← Σ₀ − H Hᵀ). A row's Σx is Σ₀x corrected by the pending
/// terms in O(d) each, and [`Full::learn_rows`] computes Σ₀x for a block of rows in one pass
/// over Σ₀, again by tiles. Two passes over Σ per block of updates replace two per update.
/// Folds happen when `pending` is full, whatever rows came in which call, and a row's
/// arithmetic is the same alone or among others, so learning a batch gives the same bits as
/// learning its rows one by one.
///
/// Each rank-one step is guarded so that Σ stays positive definite and its diagonal away from
/// 0 in float64 (see [`Full::guarded_factor`] and the safeguards of `crate::covariance`); for
/// that the diagonals of Σ₀ and of Σ are kept alongside, in O(d) per update.
#[derive(Clone, Debug, PartialEq)]
pub struct Full {
    dim: usize,
    mean: Vec<f64>,
    /// Σ₀, row-major.
    sigma: Vec<f64>,
    /// The pending h_b, `dim` values each.
    pending: Vec<f64>,
    /// The diagonal of Σ₀: the scale of the rounding errors of Σ = Σ₀ − Σ_b h_b h_bᵀ.
    base_diagonal: Vec<f64>,
    /// The diagonal of Σ: Σ₀'s less h_b,i² for each pending h_b in order (so it depends only on
    /// the sequence of updates, like everything else here).
    diagonal: Vec<f64>,
    /// Whether every Σ_jj stands [`FLOOR_MARGIN`] above its floor.
    roomy: bool,
    /// The dense x of the last prepared example (for [`Full::update`]).
    x: Vec<f64>,
    /// Σx of the last prepared example (for [`Full::update`]).
    sigma_x: Vec<f64>,
}

/// How far above its floor (see [`diagonal_floor`]) every diagonal entry must stand, with a
/// step that keeps at least 1/FLOOR_MARGIN of the variance along x, for the per-entry floor
/// check of [`Full::guarded_factor`] to be skipped: 2²⁰.
const FLOOR_MARGIN: f64 = (1u64 << 20) as f64;

/// The least value an update may leave at Σ_jj, for Σ₀_jj = `base`: [`FULL_VARIANCE_FLOOR`],
/// and at least τ·Σ₀_jj so that Σ_jj is never rounding noise of Σ₀_jj − Σ_b h_b,j².
#[inline]
fn diagonal_floor(base: f64) -> f64 {
    FULL_VARIANCE_FLOOR.max(RELATIVE_VARIANCE_FLOOR * base)
}

/// y += a·x.
#[inline]
fn axpy(y: &mut [f64], a: f64, x: &[f64]) {
    y.iter_mut().zip(x).for_each(|(y, &x)| *y += a * x);
}

/// Σ_j term(x_j, y_j) with four independent sums, so the loop vectorizes and pipelines.
#[inline]
fn sum_of_terms(x: &[f64], y: &[f64], term: impl Fn(&f64, &f64) -> f64) -> f64 {
    let mut sums = [0.0; 4];
    let (xc, yc) = (x.chunks_exact(4), y.chunks_exact(4));
    let tail: f64 = xc
        .remainder()
        .iter()
        .zip(yc.remainder())
        .map(|(a, b)| term(a, b))
        .sum();
    for (a, b) in xc.zip(yc) {
        for k in 0..4 {
            sums[k] += term(&a[k], &b[k]);
        }
    }
    (sums[0] + sums[1]) + (sums[2] + sums[3]) + tail
}

/// x·y.
#[inline]
pub(super) fn dot(x: &[f64], y: &[f64]) -> f64 {
    sum_of_terms(x, y, |a, b| a * b)
}

/// Σ_j x_j²·w_j.
#[inline]
fn weighted_squares(x: &[f64], w: &[f64]) -> f64 {
    sum_of_terms(x, w, |a, b| a * a * b)
}

/// y_i = Σ_j Σ_ij x_j for R rows from `i0` and W right-hand sides (`x[j][t]` is coordinate j of
/// right-hand side t). Every (row, lane) sums over j in order, whatever R and W are, so a row
/// learned alone gives the same bits as within a block.
#[inline(always)]
fn product_tile<const R: usize, const W: usize>(
    sigma: &[f64],
    dim: usize,
    i0: usize,
    x: &[[f64; W]],
    y: &mut [[f64; W]],
) {
    let mut acc = [[0.0; W]; R];
    if W == 1 {
        // One right-hand side: the SIMD lanes run along the R rows, reading Σ_ij as its
        // mirror Σ_ji (R neighbours in row j) since Σ is exactly symmetric.
        for (row, xj) in sigma.chunks_exact(dim).zip(x) {
            let s = &row[i0..i0 + R];
            for r in 0..R {
                acc[r][0] += s[r] * xj[0];
            }
        }
    } else {
        // The lanes run along the right-hand sides; the R rows stream in order.
        let rows: [&[f64]; R] = std::array::from_fn(|r| &sigma[(i0 + r) * dim..(i0 + r + 1) * dim]);
        for (j, xj) in x.iter().enumerate() {
            for r in 0..R {
                let s = rows[r][j];
                for t in 0..W {
                    acc[r][t] += s * xj[t];
                }
            }
        }
    }
    y[..R].copy_from_slice(&acc);
}

/// y = Σx over rows `rows` of y, for each group of W right-hand sides: `x` holds the groups
/// (`dim` entries each) and `y` the matching rows of each group's result.
#[inline(always)]
fn product_rows_portable<const W: usize>(
    sigma: &[f64],
    dim: usize,
    rows: Range<usize>,
    x: &[[f64; W]],
    y: &mut [&mut [[f64; W]]],
) {
    let mut i = rows.start;
    while i < rows.end {
        let r = i - rows.start;
        for (xg, yg) in x.chunks_exact(dim).zip(y.iter_mut()) {
            if i + TILE <= rows.end {
                product_tile::<TILE, W>(sigma, dim, i, xg, &mut yg[r..]);
            } else {
                product_tile::<1, W>(sigma, dim, i, xg, &mut yg[r..]);
            }
        }
        i += if i + TILE <= rows.end { TILE } else { 1 };
    }
}

/// Σ_ij −= Σ_b h_b,i·h_b,j for R rows from `i0` and C columns from `j0` (`pending` holds the
/// h_b, `dim` values each). The sum over b runs in the same order for (i, j) and (j, i) and
/// the products commute, so Σ stays exactly symmetric.
#[inline(always)]
fn fold_tile<const R: usize, const C: usize>(
    sigma: &mut [f64],
    dim: usize,
    i0: usize,
    j0: usize,
    pending: &[f64],
) {
    let mut acc = [[0.0; C]; R];
    for h in pending.chunks_exact(dim) {
        let (hi, hj) = (&h[i0..i0 + R], &h[j0..j0 + C]);
        for r in 0..R {
            for c in 0..C {
                acc[r][c] += hi[r] * hj[c];
            }
        }
    }
    for (r, acc) in acc.iter().enumerate() {
        let row = &mut sigma[r * dim + j0..r * dim + j0 + C];
        row.iter_mut().zip(acc).for_each(|(s, a)| *s -= a);
    }
}

/// Σ −= H Hᵀ over the rows `rows`, which `sigma` holds from the first: from each tile's
/// diagonal block rightwards only (half the work of the square); [`mirror`] then copies the
/// upper triangle down.
#[inline(always)]
fn fold_rows_portable(sigma: &mut [f64], dim: usize, rows: Range<usize>, pending: &[f64]) {
    let mut i = rows.start;
    while i < rows.end {
        let tile = &mut sigma[(i - rows.start) * dim..];
        let mut j = i / FOLD_COLUMNS * FOLD_COLUMNS;
        if i + TILE <= rows.end {
            while j + FOLD_COLUMNS <= dim {
                fold_tile::<TILE, FOLD_COLUMNS>(tile, dim, i, j, pending);
                j += FOLD_COLUMNS;
            }
            (j..dim).for_each(|j| fold_tile::<TILE, 1>(tile, dim, i, j, pending));
            i += TILE;
        } else {
            while j + FOLD_COLUMNS <= dim {
                fold_tile::<1, FOLD_COLUMNS>(tile, dim, i, j, pending);
                j += FOLD_COLUMNS;
            }
            (j..dim).for_each(|j| fold_tile::<1, 1>(tile, dim, i, j, pending));
            i += 1;
        }
    }
}

/// The same loops compiled for AVX2 where the CPU has it: twice the vector width, and the same
/// results (Rust never fuses or reorders floating-point operations by itself).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::ops::Range;

    #[target_feature(enable = "avx2")]
    pub fn product_rows<const W: usize>(
        sigma: &[f64],
        dim: usize,
        rows: Range<usize>,
        x: &[[f64; W]],
        y: &mut [&mut [[f64; W]]],
    ) {
        super::product_rows_portable(sigma, dim, rows, x, y);
    }

    #[target_feature(enable = "avx2")]
    pub fn fold_rows(sigma: &mut [f64], dim: usize, rows: Range<usize>, pending: &[f64]) {
        super::fold_rows_portable(sigma, dim, rows, pending);
    }
}

fn product_rows<const W: usize>(
    sigma: &[f64],
    dim: usize,
    rows: Range<usize>,
    x: &[[f64; W]],
    y: &mut [&mut [[f64; W]]],
) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { avx2::product_rows(sigma, dim, rows, x, y) };
    }
    product_rows_portable(sigma, dim, rows, x, y);
}

fn fold_rows(sigma: &mut [f64], dim: usize, rows: Range<usize>, pending: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { avx2::fold_rows(sigma, dim, rows, pending) };
    }
    fold_rows_portable(sigma, dim, rows, pending);
}

/// Whether a second core is there and worth waking for this much work per row of Σ.
fn two_cores(dim: usize, work_per_row: usize) -> bool {
    dim >= PARALLEL_ORDER && work_per_row > 1 && crate::available_cores() >= 2
}

/// y = Σx for groups of W right-hand sides (`x` and `y` hold `groups × dim` entries).
fn product<const W: usize>(sigma: &[f64], dim: usize, x: &[[f64; W]], y: &mut [[f64; W]]) {
    let groups = x.len() / dim;
    if two_cores(dim, groups * W) {
        // Every row of the product costs the same: half the rows each.
        let m = dim / 2 / TILE * TILE;
        let (mut first, mut second): (Vec<_>, Vec<_>) =
            y.chunks_exact_mut(dim).map(|yg| yg.split_at_mut(m)).unzip();
        std::thread::scope(|scope| {
            scope.spawn(|| product_rows(sigma, dim, m..dim, x, &mut second));
            product_rows(sigma, dim, 0..m, x, &mut first);
        });
    } else {
        let mut whole: Vec<_> = y.chunks_exact_mut(dim).collect();
        product_rows(sigma, dim, 0..dim, x, &mut whole);
    }
}

/// Σ ← Σ − Σ_b h_b h_bᵀ (`pending` holds the h_b, `dim` values each).
fn fold(sigma: &mut [f64], dim: usize, pending: &[f64]) {
    if pending.is_empty() {
        return;
    }
    if two_cores(dim, pending.len() / dim) {
        // The upper triangle's rows shorten downwards: the first 29% hold half its work.
        let m = (dim as f64 * (1.0 - std::f64::consts::FRAC_1_SQRT_2)) as usize / TILE * TILE;
        let (first, second) = sigma.split_at_mut(m * dim);
        std::thread::scope(|scope| {
            scope.spawn(|| fold_rows(second, dim, m..dim, pending));
            fold_rows(first, dim, 0..m, pending);
        });
    } else {
        fold_rows(sigma, dim, 0..dim, pending);
    }
    mirror(sigma, dim);
}

/// Σ_ij ← Σ_ji below the diagonal, by square blocks so both sides stay in cache. The folded
/// values are bit-for-bit those a full fold would give there (the products commute and the
/// sums run in the same order).
fn mirror(sigma: &mut [f64], dim: usize) {
    const SIDE: usize = 32;
    for ib in (0..dim).step_by(SIDE) {
        for jb in (0..=ib).step_by(SIDE) {
            for i in ib..dim.min(ib + SIDE) {
                for j in jb..i.min(jb + SIDE) {
                    sigma[i * dim + j] = sigma[j * dim + i];
                }
            }
        }
    }
}

impl Full {
    pub fn new(dim: usize, a: f64) -> Self {
        let mut sigma = vec![0.0; dim * dim];
        sigma.iter_mut().step_by(dim + 1).for_each(|s| *s = a);
        let mut full = Full {
            dim,
            mean: vec![0.0; dim],
            sigma,
            pending: Vec::new(),
            base_diagonal: vec![a; dim],
            diagonal: vec![a; dim],
            roomy: false,
            x: vec![0.0; dim],
            sigma_x: vec![0.0; dim],
        };
        full.roomy = full.is_roomy();
        full
    }

    /// From the mean and [`Full::state`]: Σ₀ row-major, then fewer pending terms than a block;
    /// `None` if the length does not fit.
    pub fn from_state(dim: usize, mean: Vec<f64>, state: &[f64]) -> Option<Self> {
        let pending = state.len().checked_sub(dim.checked_mul(dim)?)?;
        if !pending.is_multiple_of(dim.max(1)) || pending / dim.max(1) >= block_size(dim) {
            return None;
        }
        let (sigma, pending) = state.split_at(dim * dim);
        let mut full = Full {
            dim,
            mean,
            sigma: sigma.to_vec(),
            pending: pending.to_vec(),
            base_diagonal: vec![0.0; dim],
            diagonal: vec![0.0; dim],
            roomy: false,
            x: vec![0.0; dim],
            sigma_x: vec![0.0; dim],
        };
        full.refresh_diagonal();
        for h in pending.chunks_exact(dim.max(1)) {
            full.diagonal
                .iter_mut()
                .zip(h)
                .for_each(|(s, &h)| *s -= h * h);
        }
        full.roomy = full.is_roomy();
        Some(full)
    }

    /// Both diagonals from Σ₀ (after a fold, when nothing is pending).
    fn refresh_diagonal(&mut self) {
        let d = self.dim;
        for (i, s) in self.base_diagonal.iter_mut().enumerate() {
            *s = self.sigma[i * d + i];
        }
        self.diagonal.copy_from_slice(&self.base_diagonal);
        self.roomy = self.is_roomy();
    }

    /// Whether every Σ_jj stands [`FLOOR_MARGIN`] above its floor (see [`Full::guarded_factor`]).
    fn is_roomy(&self) -> bool {
        self.diagonal
            .iter()
            .zip(&self.base_diagonal)
            .all(|(&s, &base)| s >= FLOOR_MARGIN * diagonal_floor(base))
    }

    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// Σ row-major (Σ₀ with the pending terms folded in).
    pub fn values(&self) -> Cow<'_, [f64]> {
        if self.pending.is_empty() {
            return Cow::Borrowed(&self.sigma);
        }
        let mut sigma = self.sigma.clone();
        fold(&mut sigma, self.dim, &self.pending);
        Cow::Owned(sigma)
    }

    /// Folds the pending terms into Σ₀, as a full block does, leaving nothing pending.
    pub fn fold(&mut self) {
        if !self.pending.is_empty() {
            fold(&mut self.sigma, self.dim, &self.pending);
            self.pending.clear();
            self.refresh_diagonal();
        }
    }

    /// Σ₀ row-major, then the pending terms: what [`Full::from_state`] takes back.
    pub fn state(&self) -> Vec<f64> {
        [&self.sigma[..], &self.pending[..]].concat()
    }

    /// xᵀΣx touching only the rows and columns of the non-zeros: O(nnz²) plus O(nnz) per
    /// pending term (prediction path).
    pub fn variance(&self, x: &Features) -> f64 {
        let d = self.dim;
        let mut v = 0.0;
        x.for_each(|k, xk| {
            if xk != 0.0 {
                let row = &self.sigma[k * d..(k + 1) * d];
                let mut dot = 0.0;
                x.for_each(|l, xl| dot += row[l] * xl);
                v += xk * dot;
            }
        });
        for h in self.pending.chunks_exact(d) {
            let hx = x.dot(h);
            v -= hx * hx;
        }
        v
    }

    /// Σx = Σ₀x − Σ_b h_b (h_b·x) from Σ₀x (in `sigma_x`) and the dense x; returns v = x·Σx.
    fn correct(&self, x: &[f64], sigma_x: &mut [f64]) -> f64 {
        for h in self.pending.chunks_exact(self.dim) {
            axpy(sigma_x, -dot(h, x), h);
        }
        dot(x, sigma_x)
    }

    /// The Sherman–Morrison factor β = c/(1 + cv) of the step Σ ← Σ − β(Σx)(Σx)ᵀ for the row `x`
    /// with `sigma_x` = Σx and v = x·Σx, capped by the two safeguards of the full form (see
    /// `crate::covariance`). Σ is held as Σ₀ − Σ_b h_b h_bᵀ, whose rounding errors scale with the
    /// diagonal of Σ₀ (s₀ below), so the caps are relative to that:
    ///
    /// * the variance along x after the step, v − βv², stays at least
    ///   [`RELATIVE_VARIANCE_FLOOR`]·q with q = Σ_j s₀_j x_j², the variance x would have were Σ₀
    ///   diagonal: β ≤ (1 − τq/v)/v. This keeps Σ positive definite by a margin far above the
    ///   rounding of its representation;
    /// * no diagonal entry falls below max([`FULL_VARIANCE_FLOOR`], τ·s₀_j):
    ///   β·(Σx)_j² ≤ Σ_jj − max(floor, τ·s₀_j), so Σ never underflows and no entry of the
    ///   diagonal becomes rounding noise of Σ₀'s.
    ///
    /// Neither binds unless c·v > ~1e12, a variance shrinks ~1e12-fold within one block of
    /// pending terms or nears 1e-292, so ordinary data keep the exact factor, bit for bit
    /// (`guards_do_not_bind_on_ordinary_data`).
    fn guarded_factor(&self, x: &[f64], sigma_x: &[f64], c: f64, v: f64) -> f64 {
        let beta = sherman_morrison_factor(c, v);
        let q = weighted_squares(x, &self.base_diagonal);
        let mut beta = beta.min((1.0 - RELATIVE_VARIANCE_FLOOR * (q / v)) / v);
        // The step leaves Σ' ⪰ (1 − βv)Σ, so no Σ_jj can reach its floor while all stand
        // FLOOR_MARGIN above it and 1 − βv ≥ 1/FLOOR_MARGIN: then the check is skipped.
        if !(self.roomy && 1.0 - beta * v >= 1.0 / FLOOR_MARGIN) {
            let entries = || sigma_x.iter().zip(&self.diagonal).zip(&self.base_diagonal);
            if entries().any(|((&g, &s), &base)| s - beta * (g * g) < diagonal_floor(base)) {
                // Rare: the largest β that keeps every diagonal entry at its floor.
                beta = entries()
                    .filter(|((&g, _), _)| g != 0.0)
                    .map(|((&g, &s), &base)| (s - diagonal_floor(base)) / (g * g))
                    .fold(beta, f64::min);
            }
        }
        beta.max(0.0)
    }

    /// Adds h = √β·Σx to the pending terms (β from [`Full::guarded_factor`]) and takes h_i² off
    /// the diagonal, folding them when there are `limit`.
    fn push(&mut self, x: &[f64], sigma_x: &[f64], c: f64, v: f64, limit: usize) {
        let scale = self.guarded_factor(x, sigma_x, c, v).sqrt();
        let mut roomy = true;
        let diagonals = self.diagonal.iter_mut().zip(&self.base_diagonal);
        self.pending
            .extend(sigma_x.iter().zip(diagonals).map(|(&g, (s, &base))| {
                let h = scale * g;
                *s -= h * h;
                roomy &= *s >= FLOOR_MARGIN * diagonal_floor(base);
                h
            }));
        self.roomy = roomy;
        if self.pending.len() >= limit * self.dim {
            fold(&mut self.sigma, self.dim, &self.pending);
            self.pending.clear();
            self.refresh_diagonal();
        }
    }

    /// Computes and keeps Σx for one row and returns v = x·Σx.
    pub fn prepare(&mut self, x: &Features) -> f64 {
        let mut dense = std::mem::take(&mut self.x);
        dense.fill(0.0);
        x.for_each(|j, xj| dense[j] = xj);
        let mut sigma_x = std::mem::take(&mut self.sigma_x);
        product(
            &self.sigma,
            self.dim,
            as_lanes_ref(&dense),
            as_lanes(&mut sigma_x),
        );
        let v = self.correct(&dense, &mut sigma_x);
        self.sigma_x = sigma_x;
        self.x = dense;
        v
    }

    /// μ ← μ + step·Σx, then Σ⁻¹ ← Σ⁻¹ + c·x xᵀ, with `v` from [`Full::prepare`]. This
    /// one-row protocol (the multiclass learners') folds at once, so it leaves nothing pending.
    pub fn update(&mut self, step: f64, c: f64, v: f64) {
        axpy(&mut self.mean, step, &self.sigma_x);
        if c != 0.0 {
            let (x, sigma_x) = (
                std::mem::take(&mut self.x),
                std::mem::take(&mut self.sigma_x),
            );
            self.push(&x, &sigma_x, c, v, 1);
            (self.x, self.sigma_x) = (x, sigma_x);
        }
    }

    /// Learns `rows` in order: `decide(k, observation)` gives row k's mean step and precision
    /// gain (μ ← μ + step·Σx, Σ⁻¹ ← Σ⁻¹ + c·x xᵀ), or `None` to leave the model unchanged.
    /// Σ₀x is computed for a block of rows at a time, and again for the rows after a fold.
    pub fn learn_rows(
        &mut self,
        rows: &[Features],
        mut decide: impl FnMut(usize, Observation) -> Option<(f64, f64)>,
    ) {
        let (d, block_size) = (self.dim, block_size(self.dim));
        let (mut x, mut gk) = (vec![0.0; d], vec![0.0; d]);
        let mut products = BlockProducts::new(d);
        let mut start = 0;
        while start < rows.len() {
            let block = &rows[start..rows.len().min(start + block_size)];
            products.compute(&self.sigma, block);
            let mut next = start + block.len();
            for (k, row) in block.iter().enumerate() {
                products.row(k, &mut x, &mut gk);
                let variance = self.correct(&x, &mut gk);
                let seen = Observation {
                    score: row.dot(&self.mean),
                    variance,
                    squared_norm: row.squared_norm(),
                };
                if let Some((step, c)) = decide(start + k, seen) {
                    axpy(&mut self.mean, step, &gk);
                    if c != 0.0 {
                        self.push(&x, &gk, c, variance, block_size);
                        if self.pending.is_empty() {
                            // Σ₀ changed: the rest of the block needs new products.
                            next = start + k + 1;
                            break;
                        }
                    }
                }
            }
            start = next;
        }
    }
}

/// Σ₀x for a block of rows, computed together: one row alone uses one lane, more use groups of
/// [`LANES`]; a lane's arithmetic is the same either way. The buffers live across blocks.
struct BlockProducts {
    dim: usize,
    /// Whether the block is one row, kept in `one_x`, `one_sigma_x`.
    alone: bool,
    one_x: Vec<f64>,
    one_sigma_x: Vec<f64>,
    x: Vec<[f64; LANES]>,
    sigma_x: Vec<[f64; LANES]>,
}

impl BlockProducts {
    fn new(dim: usize) -> Self {
        BlockProducts {
            dim,
            alone: false,
            one_x: vec![0.0; dim],
            one_sigma_x: vec![0.0; dim],
            x: Vec::new(),
            sigma_x: Vec::new(),
        }
    }

    fn compute(&mut self, sigma: &[f64], rows: &[Features]) {
        let dim = self.dim;
        self.alone = rows.len() == 1;
        if let [row] = rows {
            self.one_x.fill(0.0);
            row.for_each(|j, xj| self.one_x[j] = xj);
            product(
                sigma,
                dim,
                as_lanes_ref(&self.one_x),
                as_lanes(&mut self.one_sigma_x),
            );
            return;
        }
        self.x.clear();
        self.x
            .resize(rows.len().div_ceil(LANES) * dim, [0.0; LANES]);
        for (k, row) in rows.iter().enumerate() {
            let group = &mut self.x[k / LANES * dim..];
            row.for_each(|j, xj| group[j][k % LANES] = xj);
        }
        self.sigma_x.resize(self.x.len(), [0.0; LANES]);
        product(sigma, dim, &self.x, &mut self.sigma_x);
    }

    /// Row k of the block and its Σ₀x, dense.
    fn row(&self, k: usize, x: &mut [f64], sigma_x: &mut [f64]) {
        if self.alone {
            x.copy_from_slice(&self.one_x);
            sigma_x.copy_from_slice(&self.one_sigma_x);
            return;
        }
        let (lane, group) = (k % LANES, k / LANES * self.dim..(k / LANES + 1) * self.dim);
        x.iter_mut()
            .zip(&self.x[group.clone()])
            .for_each(|(v, g)| *v = g[lane]);
        sigma_x
            .iter_mut()
            .zip(&self.sigma_x[group])
            .for_each(|(v, g)| *v = g[lane]);
    }
}

/// A vector as one-lane groups.
fn as_lanes(v: &mut [f64]) -> &mut [[f64; 1]] {
    let (lanes, rest) = v.as_chunks_mut::<1>();
    debug_assert!(rest.is_empty());
    lanes
}

fn as_lanes_ref(v: &[f64]) -> &[[f64; 1]] {
    v.as_chunks::<1>().0
}
#[cfg(test)]
mod tests {
    use super::{Full, FULL_VARIANCE_FLOOR, MAX_BLOCK, RELATIVE_VARIANCE_FLOOR};
    use crate::data::Shape;
    use crate::rules::sherman_morrison_factor;
    use crate::{CovarianceKind, Learner, Matrix, Presentation, Row, Rule};

    /// Uniform numbers in [-1, 1) from a xorshift generator.
    fn uniform(seed: u64) -> impl FnMut() -> f64 {
        let mut state = seed;
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        }
    }

    /// Whether a symmetric Σ is positive definite: the Cholesky factorisation of its diagonally
    /// scaled form D^-½ Σ D^-½ (a congruence, so the same inertia, and free of the scale of Σ)
    /// has positive pivots.
    fn positive_definite(sigma: &[f64], d: usize) -> bool {
        let root: Vec<f64> = (0..d).map(|i| sigma[i * d + i].sqrt()).collect();
        if root.iter().any(|r| !(*r > 0.0 && r.is_finite())) {
            return false;
        }
        let mut l: Vec<f64> = (0..d * d)
            .map(|k| sigma[k] / root[k / d] / root[k % d])
            .collect();
        for j in 0..d {
            let pivot = l[j * d + j] - (0..j).map(|k| l[j * d + k] * l[j * d + k]).sum::<f64>();
            if pivot.is_nan() || pivot <= 0.0 {
                return false;
            }
            l[j * d + j] = pivot.sqrt();
            for i in j + 1..d {
                let t = l[i * d + j] - (0..j).map(|k| l[i * d + k] * l[j * d + k]).sum::<f64>();
                l[i * d + j] = t / l[j * d + j];
            }
        }
        true
    }

    fn symmetric(sigma: &[f64], d: usize) -> bool {
        (0..d).all(|i| (0..i).all(|j| sigma[i * d + j] == sigma[j * d + i]))
    }

    /// On ordinary data the safeguards of the full form never bind: the guarded factor is the
    /// Sherman–Morrison factor, bit for bit, on every update of a long stream.
    #[test]
    fn guards_do_not_bind_on_ordinary_data() {
        for (d, c) in [(6, 1.0), (6, 100.0), (40, 0.5)] {
            let shape = Shape::new(d, false).unwrap();
            let mut full = Full::new(d, 1.0);
            let mut next = uniform(0x9E37_79B9_7F4A_7C15 + d as u64);
            for _ in 0..3000 {
                let x: Vec<f64> = (0..d).map(|_| next() * 3.0).collect();
                let v = full.prepare(&shape.features(Row::Dense(&x)));
                let guarded = full.guarded_factor(&full.x, &full.sigma_x, c, v);
                assert_eq!(guarded, sherman_morrison_factor(c, v), "d = {d}, c = {c}");
                full.update(0.1 * next(), c, v);
            }
            let sigma = full.values();
            assert!(symmetric(&sigma, d) && positive_definite(&sigma, d));
        }
    }

    /// An infinite precision gain (an ExactCW collapse) leaves the variance along x at the
    /// relative floor τ·q instead of at rounding noise, and Σ positive definite.
    #[test]
    fn guards_cap_a_collapsing_step() {
        let shape = Shape::new(3, false).unwrap();
        let x = [1.0, 2.0, -3.0];
        let features = shape.features(Row::Dense(&x));
        let mut full = Full::new(3, 1.0);
        let v = full.prepare(&features);
        full.update(0.0, f64::INFINITY, v);
        let after = full.prepare(&features);
        let q = 14.0; // Σ_j Σ_jj x_j² before the step
        let expected = RELATIVE_VARIANCE_FLOOR * q;
        assert!(
            (after - expected).abs() < 1e-3 * expected,
            "{after:e} vs {expected:e}"
        );
        assert!(positive_definite(&full.values(), 3));
    }

    /// AROW on rows of size ~1e150 (c·v ~ 1e300), exactly collinear ones, and rows mixing
    /// 1e150 with 1e-150: the plain Sherman–Morrison update loses positive definiteness within
    /// ten rows; the guarded one keeps Σ symmetric, positive definite, with its diagonal above
    /// the floor, and batch = row by row still holds bit for bit (also with pending terms).
    #[test]
    fn guards_keep_sigma_positive_definite_at_extreme_scales() {
        let mut next = uniform(0x2545_F491_4F6C_DD1D);
        for d in [5, 40] {
            let n = if d < 32 { 3000 } else { 600 };
            let pattern: Vec<f64> = (0..d).map(|j| [1.0, 2.0, -1.0, 0.5][j % 4]).collect();
            let scales: Vec<f64> = (0..d).map(|j| [1e150, 1e-150, 1.0][j % 3]).collect();
            for name in ["huge", "collinear huge", "mixed"] {
                let mut row = || -> Vec<f64> {
                    match name {
                        "huge" => (0..d).map(|_| next() * 1e150).collect(),
                        "collinear huge" => {
                            let z = next() * 1e150;
                            pattern.iter().map(|p| p * z).collect()
                        }
                        _ => scales.iter().map(|s| s * next()).collect(),
                    }
                };
                let x: Vec<f64> = (0..n).flat_map(|_| row()).collect();
                let y: Vec<f64> = (0..n)
                    .map(|_| if next() < 0.0 { 1.0 } else { -1.0 })
                    .collect();
                if name != "collinear huge" {
                    // (On collinear rows the plain update leaves rounding noise of either sign
                    // along the collapsed direction, so its failure is not certain there.)
                    let (_, plain) = plain_arow(&x[..10 * d], &y[..10], d, 1.0);
                    assert!(
                        !positive_definite(&plain, d),
                        "{name}: the plain update is PD"
                    );
                }
                let model = learn_batch_and_rows(Rule::from_name("AROW", &[]).unwrap(), &x, &y);
                let sigma = model.covariance();
                assert!(sigma
                    .iter()
                    .chain(model.mean().iter())
                    .all(|s| s.is_finite()));
                assert!(symmetric(&sigma, d), "{name}, d = {d}");
                assert!(positive_definite(&sigma, d), "{name}, d = {d}: {sigma:?}");
                for i in 0..d {
                    assert!(
                        sigma[i * d + i] >= 0.999 * FULL_VARIANCE_FLOOR,
                        "{name}, d = {d}"
                    );
                }
            }
        }
    }

    /// A full-covariance learner after the rows of `x` (`y.len()` of them) as one batch, checked
    /// to be bit for bit the learner after them row by row (folds come every block of updates
    /// either way).
    fn learn_batch_and_rows(rule: Rule, x: &[f64], y: &[f64]) -> Learner {
        let (n, d) = (y.len(), x.len() / y.len());
        let mut model = Learner::new(rule, CovarianceKind::Full, d, false, 1.0).unwrap();
        let matrix = Matrix::Dense {
            values: x,
            n_rows: n,
            n_cols: d,
        };
        model
            .partial_fit(&matrix, y, Presentation::default())
            .unwrap();
        let mut single = Learner::new(rule, CovarianceKind::Full, d, false, 1.0).unwrap();
        for (row, &label) in x.chunks_exact(d).zip(y) {
            single.learn(Row::Dense(row), label).unwrap();
        }
        assert_eq!(model, single, "d = {d}");
        model
    }

    /// AROW with the plain Sherman–Morrison update, one row at a time, on a dense Σ.
    fn plain_arow(x: &[f64], y: &[f64], d: usize, r: f64) -> (Vec<f64>, Vec<f64>) {
        let (mut mean, mut sigma) = (vec![0.0; d], vec![0.0; d * d]);
        (0..d).for_each(|i| sigma[i * d + i] = 1.0);
        for (row, &label) in x.chunks_exact(d).zip(y) {
            let sx: Vec<f64> = (0..d)
                .map(|i| (0..d).map(|j| sigma[i * d + j] * row[j]).sum())
                .collect();
            let v: f64 = row.iter().zip(&sx).map(|(a, b)| a * b).sum();
            let m = label * row.iter().zip(&mean).map(|(a, b)| a * b).sum::<f64>();
            if m < 1.0 {
                let beta = 1.0 / (v + r);
                let alpha = (1.0 - m) * beta;
                mean.iter_mut()
                    .zip(&sx)
                    .for_each(|(w, s)| *w += alpha * label * s);
                for i in 0..d {
                    for j in 0..d {
                        sigma[i * d + j] -= beta * sx[i] * sx[j];
                    }
                }
            }
        }
        (mean, sigma)
    }

    fn max_relative_error(got: &[f64], want: &[f64]) -> f64 {
        let scale = want.iter().fold(0.0f64, |m, w| m.max(w.abs()));
        got.iter()
            .zip(want)
            .fold(0.0, |m, (g, w)| m.max((g - w).abs() / scale))
    }

    /// Blocks of rows (both cores from d = 256 on, tiles with remainders, sparse rows, folds in
    /// the middle of a block) equal the plain update to 1e-9 relative, and Σ stays exactly
    /// symmetric.
    #[test]
    fn blocks_equal_the_plain_update() {
        for (d, n, density) in [(7, 200, 1.0), (45, 150, 0.2), (258, 100, 1.0)] {
            let mut state = 0x2545_F491_4F6C_DD1Du64;
            let mut next = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 11) as f64 / (1u64 << 53) as f64
            };
            let x: Vec<f64> = (0..n * d)
                .map(|_| {
                    let value = next() * 2.0 - 1.0;
                    if next() < density {
                        value
                    } else {
                        0.0
                    }
                })
                .collect();
            let y: Vec<f64> = (0..n)
                .map(|_| if next() < 0.5 { 1.0 } else { -1.0 })
                .collect();
            let model =
                learn_batch_and_rows(Rule::from_name("AROW", &[("r", 0.5)]).unwrap(), &x, &y);
            assert!(model.n_updates() > 2 * MAX_BLOCK as u64, "d = {d}");
            let (mean, sigma) = plain_arow(&x, &y, d, 0.5);
            assert!(max_relative_error(&model.mean(), &mean) < 1e-9, "d = {d}");
            let covariance = model.covariance();
            assert!(max_relative_error(&covariance, &sigma) < 1e-9, "d = {d}");
            for i in 0..d {
                for j in 0..i {
                    assert_eq!(covariance[i * d + j], covariance[j * d + i]);
                }
            }
        }
    }
}
