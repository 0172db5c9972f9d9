//! The full covariance: a dense symmetric Σ updated by Sherman–Morrison, in blocks of rows.

use std::borrow::Cow;
use std::ops::Range;

use super::{
    dense_mean_methods, impossible, is_positive_definite, with_new_features, wrong_length,
    Covariance, CovarianceKind, Observation, Parts, PrimalForm, Update, FULL_VARIANCE_FLOOR,
    RELATIVE_VARIANCE_FLOOR,
};
use crate::data::POLL_WORK;
use crate::data::{Features, Row, Shape};
use crate::error::CwError;
use crate::learn::prior_estimate::{feature_moments, reweighed_dense, FeatureMoments};
use crate::linalg::simd::{fold_rows, mirror, product_rows};
use crate::linalg::{axpy, dot_by_fours as dot, sum_by_fours};
use crate::rules::sherman_morrison_factor;
use blocks::{row_product, BlockProducts, Plan};
use noise::add_to_diagonal;
use plain::{plain_fold, plain_product, PLAIN_ORDER};

mod blocks;
mod noise;
mod plain;

/// The most rows handed to `Full::learn_block` at once: the buffer bounds the memory of a call.
const MAX_ROWS_PER_CALL: usize = 64 * MAX_BLOCK;

/// Rows handed to `Full::learn_block` at once for Σ of order `dim`: about [`POLL_WORK`] of
/// updates (d² each), so that a caller who may stop a batch between the rows it hands over
/// ([`crate::data::Stop`]) is asked that often, but at least a block (its rows share a pass
/// over Σ₀). A row's arithmetic is the same in any block, so the bits are too.
fn rows_per_call(dim: usize) -> usize {
    let update = (dim as f64) * (dim as f64);
    let rows = (POLL_WORK / update) as usize;
    rows.clamp(block_size(dim).max(LANES), MAX_ROWS_PER_CALL)
}

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

/// Rows of the next block of products when `pending` terms wait and a fold comes at
/// `block_size`: at most as many as can update before that fold (a fold makes the products of
/// the rows after it stale), rounded up to a whole group of [`LANES`], whose lanes cost the
/// same filled or not. A round without an update adds no term, so a fixed block length would
/// have the fold land early in the next block and waste most of its products.
fn block_length(block_size: usize, pending: usize) -> usize {
    let room = block_size.saturating_sub(pending).max(1);
    if room == 1 {
        1
    } else {
        room.next_multiple_of(LANES).min(block_size)
    }
}

/// Right-hand sides per pass of the blocked product: two AVX2 vectors of them, so a tile has
/// enough independent sums to hide the latency of the additions.
const LANES: usize = 8;

/// A Gaussian with full covariance: the mean and a symmetric d×d Σ (row-major), updated by
/// Sherman–Morrison, Σ ← Σ − h hᵀ with h = √β·Σx and β = c / (1 + c·v).
///
/// Σ is kept as Σ = Σ₀ − Σ_b h_b h_bᵀ: the last rank-one terms h_b wait in `pending` (up to a
/// block of them, see `block_size`) and are folded into Σ₀ together, in one pass that keeps
/// tiles of Σ₀ in registers (Σ₀ ← Σ₀ − H Hᵀ). A row's Σx is Σ₀x corrected by the pending
/// terms in O(d) each, and `Full::learn_block` computes Σ₀x for a block of rows in one pass
/// over Σ₀, again by tiles. Two passes over Σ per block of updates replace two per update.
/// Folds happen when `pending` is full, whatever rows came in which call, and a row's
/// arithmetic is the same alone or among others, so learning a batch gives the same bits as
/// learning its rows one by one.
///
/// Each rank-one step is guarded so that Σ stays positive definite and its diagonal away from
/// 0 in float64 (see `Full::guarded_factor` and the safeguards of `crate::covariance`); for
/// that the diagonals of Σ₀ and of Σ are kept alongside, in O(d) per update.
#[derive(Clone, Debug, PartialEq)]
pub struct Full {
    shape: Shape,
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
    /// Process noise q per round (0: none).
    noise: f64,
    /// g, the process noise not folded yet: Σ = Σ₀ + g·I − Σ_b h_b h_bᵀ (see `full/noise.rs`).
    growth: f64,
    /// The dense x of the last prepared example (for the update).
    x: Vec<f64>,
    /// Σx of the last prepared example (for the update).
    sigma_x: Vec<f64>,
    /// Mean steps the overflow gate skipped, not yet taken (see [`Covariance::take_skipped`]).
    skipped: u64,
    /// Σ₀x of rows prepared next (multiclass rounds: [`Covariance::prepare_ahead`]).
    plan: Plan,
}

/// How far above its floor (see [`diagonal_floor`]) every diagonal entry must stand, with a
/// step that keeps at least 1/FLOOR_MARGIN of the variance along x, for the per-entry floor
/// check of `Full::guarded_factor` to be skipped: 2²⁰.
const FLOOR_MARGIN: f64 = (1u64 << 20) as f64;

/// The least value an update may leave at Σ_jj, for Σ₀_jj = `base`: [`FULL_VARIANCE_FLOOR`],
/// and at least τ·Σ₀_jj so that Σ_jj is never rounding noise of Σ₀_jj − Σ_b h_b,j².
#[inline]
fn diagonal_floor(base: f64) -> f64 {
    FULL_VARIANCE_FLOOR.max(RELATIVE_VARIANCE_FLOOR * base)
}

/// Whether the `dim`×`dim` row-major `sigma` is exactly symmetric.
fn is_symmetric(dim: usize, sigma: &[f64]) -> bool {
    let row = |i: usize| &sigma[i * dim..(i + 1) * dim];
    (0..dim).all(|i| (0..i).all(|j| row(i)[j] == row(j)[i]))
}

/// Whether μ + step·Σx overflows (the round is then skipped; see
/// [`super::MEAN_STEP_LIMIT`]). O(d), beside the O(d²) of a row.
#[inline]
fn mean_step_overflows(mean: &[f64], step: f64, sigma_x: &[f64]) -> bool {
    !mean
        .iter()
        .zip(sigma_x)
        .all(|(&m, &g)| (m + step * g).is_finite())
}

/// Σ_j x_j²·w_j.
#[inline]
fn weighted_squares(x: &[f64], w: &[f64]) -> f64 {
    sum_by_fours(x, w, |a, b| a * a * b)
}

/// Rows of Σ per register tile.
const TILE: usize = 4;

/// Columns of Σ per register tile of the fold: two SIMD vectors.
const FOLD_COLUMNS: usize = 8;

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
pub(crate) fn product_rows_portable<const W: usize>(
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
pub(crate) fn fold_rows_portable(
    sigma: &mut [f64],
    dim: usize,
    rows: Range<usize>,
    pending: &[f64],
) {
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

/// From this order on, the rows of Σ are shared between two cores when there are two; each row
/// is computed whole by one core, so the results do not depend on the number of cores.
const PARALLEL_ORDER: usize = 256;

/// Whether a second core is there and worth waking for this much work per row of Σ.
fn two_cores(dim: usize, work_per_row: usize) -> bool {
    dim >= PARALLEL_ORDER && work_per_row > 1 && crate::available_cores() >= 2
}

/// y = Σx for groups of W right-hand sides (`x` and `y` hold `groups × dim` entries).
fn product<const W: usize>(sigma: &[f64], dim: usize, x: &[[f64; W]], y: &mut [[f64; W]]) {
    let groups = x.len() / dim.max(1);
    if dim < PLAIN_ORDER && W == 1 {
        plain_product(sigma, dim, x.as_flattened(), y.as_flattened_mut());
    } else if groups == 1 {
        product_rows(sigma, dim, 0..dim, x, &mut [y]);
    } else if two_cores(dim, groups * W) {
        // Every row of the product costs the same: half the rows each.
        let m = dim / 2 / TILE * TILE;
        let (mut first, mut second): (Vec<_>, Vec<_>) =
            y.chunks_exact_mut(dim).map(|yg| yg.split_at_mut(m)).unzip();
        crate::on_two_threads(
            || product_rows(sigma, dim, 0..m, x, &mut first),
            || product_rows(sigma, dim, m..dim, x, &mut second),
        );
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
    if dim < PLAIN_ORDER {
        return plain_fold(sigma, dim, pending);
    }
    if two_cores(dim, pending.len() / dim) {
        // The upper triangle's rows shorten downwards: the first 29% hold half its work.
        let m = (dim as f64 * (1.0 - std::f64::consts::FRAC_1_SQRT_2)) as usize / TILE * TILE;
        let (first, second) = sigma.split_at_mut(m * dim);
        crate::on_two_threads(
            || fold_rows(first, dim, 0..m, pending),
            || fold_rows(second, dim, m..dim, pending),
        );
    } else {
        fold_rows(sigma, dim, 0..dim, pending);
    }
    mirror(sigma, dim);
}

/// Σ_ij ← Σ_ji below the diagonal, by square blocks of [`MIRROR_SIDE`] so both sides stay in
/// cache (`crate::linalg::simd::mirror` moves 4×4 blocks in registers where it can). The folded values
/// are bit-for-bit those a full fold would give there (the products commute and the sums run
/// in the same order).
pub(crate) fn mirror_portable(sigma: &mut [f64], dim: usize) {
    for ib in (0..dim).step_by(MIRROR_SIDE) {
        for jb in (0..=ib).step_by(MIRROR_SIDE) {
            for i in ib..dim.min(ib + MIRROR_SIDE) {
                mirror_entries(sigma, dim, i, jb..i.min(jb + MIRROR_SIDE));
            }
        }
    }
}

/// The side of the square blocks [`mirror_portable`] copies.
pub(crate) const MIRROR_SIDE: usize = 32;

/// Σ_ij ← Σ_ji in row i for the columns `columns` (below the diagonal).
#[inline(always)]
pub(crate) fn mirror_entries(sigma: &mut [f64], dim: usize, i: usize, columns: Range<usize>) {
    for j in columns {
        sigma[i * dim + j] = sigma[j * dim + i];
    }
}

impl Full {
    /// From the mean and [`Full::state`]: Σ₀ row-major, then any number of pending terms (a
    /// block fills up at most to `block_size`, but a saved state is accepted whatever the
    /// block size was); `None` if the length does not fit.
    fn from_state(shape: Shape, mean: Vec<f64>, state: &[f64]) -> Option<Self> {
        let dim = shape.dim();
        let pending = state.len().checked_sub(dim.checked_mul(dim)?)?;
        if !pending.is_multiple_of(dim.max(1)) {
            return None;
        }
        let (sigma, pending) = state.split_at(dim * dim);
        Some(Full::with_parts(
            shape,
            mean,
            sigma.to_vec(),
            pending.to_vec(),
        ))
    }

    /// The model of mean μ and Σ = Σ₀ − Σ_b h_b h_bᵀ (`sigma`, `pending`), no process noise:
    /// the one place the fields are listed.
    fn with_parts(shape: Shape, mean: Vec<f64>, sigma: Vec<f64>, pending: Vec<f64>) -> Self {
        let dim = shape.dim();
        let mut full = Full {
            shape,
            dim,
            mean,
            sigma,
            pending,
            base_diagonal: vec![0.0; dim],
            diagonal: vec![0.0; dim],
            roomy: false,
            noise: 0.0,
            growth: 0.0,
            x: vec![0.0; dim],
            sigma_x: vec![0.0; dim],
            skipped: 0,
            plan: Plan::new(dim),
        };
        full.refresh_diagonal();
        for h in full.pending.chunks_exact(dim.max(1)) {
            full.diagonal
                .iter_mut()
                .zip(h)
                .for_each(|(s, &h)| *s -= h * h);
        }
        full.roomy = full.is_roomy();
        full
    }

    /// Both diagonals from Σ₀ (after a fold, when nothing is pending); Σ₀ changed, so the plan
    /// is stale.
    fn refresh_diagonal(&mut self) {
        self.plan.clear();
        let d = self.dim;
        for (i, s) in self.base_diagonal.iter_mut().enumerate() {
            *s = self.sigma[i * d + i];
        }
        self.diagonal.copy_from_slice(&self.base_diagonal);
        self.roomy = self.is_roomy();
    }

    /// Whether every Σ_jj stands [`FLOOR_MARGIN`] above its floor (see `Full::guarded_factor`).
    fn is_roomy(&self) -> bool {
        self.diagonal
            .iter()
            .zip(&self.base_diagonal)
            .all(|(&s, &base)| s >= FLOOR_MARGIN * diagonal_floor(base))
    }

    /// Σ row-major (Σ₀ with the process noise and the pending terms folded in).
    pub fn values(&self) -> Cow<'_, [f64]> {
        if self.pending.is_empty() && self.growth == 0.0 {
            return Cow::Borrowed(&self.sigma);
        }
        let mut sigma = self.sigma.clone();
        add_to_diagonal(&mut sigma, self.dim, self.growth);
        fold(&mut sigma, self.dim, &self.pending);
        Cow::Owned(sigma)
    }

    /// Folds the process noise and the pending terms into Σ₀, as a full block does.
    pub fn fold(&mut self) {
        if !self.pending.is_empty() || self.growth != 0.0 {
            Covariance::fold(self);
        }
    }

    /// Σ₀ + g·I row-major, then the pending terms: what `Full::from_state` takes back.
    pub fn state(&self) -> Vec<f64> {
        let mut state = [&self.sigma[..], &self.pending[..]].concat();
        add_to_diagonal(&mut state[..self.dim * self.dim], self.dim, self.growth);
        state
    }

    /// xᵀΣx touching only the rows and columns of the non-zeros: O(nnz²) plus O(nnz) per
    /// pending term (prediction path).
    fn variance(&self, x: &Features) -> f64 {
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
        v += self.growth * x.squared_norm();
        for h in self.pending.chunks_exact(d) {
            let hx = x.dot(h);
            v -= hx * hx;
        }
        v
    }

    /// xᵀ(Σ + q·I)y = xᵀΣ₀y + g·x·y − Σ_b (h_b·x)(h_b·y) + q·x·y, given the pairs
    /// (h_b·x, h_b·y) of the pending terms in order.
    fn cross_with(
        &self,
        x: &Features,
        y: &Features,
        projections: impl Iterator<Item = (f64, f64)>,
    ) -> f64 {
        let d = self.dim;
        let mut v = 0.0;
        x.for_each(|k, xk| {
            if xk != 0.0 {
                v += xk * y.dot(&self.sigma[k * d..(k + 1) * d]);
            }
        });
        let xy = x.dot_features(y);
        v += self.growth * xy;
        for (hx, hy) in projections {
            v -= hx * hy;
        }
        if self.noise != 0.0 {
            v += self.noise * xy;
        }
        v
    }

    /// Σx = Σ₀x + g·x − Σ_b h_b (h_b·x) from Σ₀x (in `sigma_x`) and the dense x; v = x·Σx.
    fn correct(&self, x: &[f64], sigma_x: &mut [f64]) -> f64 {
        if self.growth != 0.0 {
            axpy(self.growth, x, sigma_x);
        }
        for h in self.pending.chunks_exact(self.dim) {
            axpy(-dot(h, x), h, sigma_x);
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
    /// pending terms or nears 2.2e-308, so ordinary data keep the exact factor, bit for bit
    /// (`guards_do_not_bind_on_ordinary_data`).
    fn guarded_factor(&self, x: &[f64], sigma_x: &[f64], c: f64, v: f64) -> f64 {
        let beta = sherman_morrison_factor(c, v);
        let q = weighted_squares(x, &self.base_diagonal);
        let mut beta = beta.min((1.0 - RELATIVE_VARIANCE_FLOOR * (q / v)) / v);
        // The step leaves Σ' ⪰ (1 − βv)Σ, so no Σ_jj can reach its floor while all stand
        // FLOOR_MARGIN above it and 1 − βv ≥ 1/FLOOR_MARGIN: then the check is skipped.
        if !(self.roomy && 1.0 - beta * v >= 1.0 / FLOOR_MARGIN) {
            // β·(Σx)_j² and its bound as (β·g)·g and (room/g)/g: g² alone overflows where Σ is
            // large (|Σx| > ~1e154: a prior a ~1e300 with features ~1), their products do not.
            let entries = || sigma_x.iter().zip(&self.diagonal).zip(&self.base_diagonal);
            if entries().any(|((&g, &s), &base)| s - (beta * g) * g < diagonal_floor(base)) {
                // Rare: the largest β that keeps every diagonal entry at its floor.
                beta = entries()
                    .filter(|((&g, _), _)| g != 0.0)
                    .map(|((&g, &s), &base)| (s - diagonal_floor(base)) / g / g)
                    .fold(beta, f64::min);
            }
        }
        beta.max(0.0)
    }

    /// Adds h = √β·Σx to the pending terms (β from `Full::guarded_factor`) and takes h_i² off
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
            Covariance::fold(self);
        }
    }

    /// Computes (or takes from the plan) and keeps Σx for one row and returns v = x·Σx.
    fn prepare_features(&mut self, row: Row, x: &Features) -> f64 {
        let mut dense = std::mem::take(&mut self.x);
        let mut sigma_x = std::mem::take(&mut self.sigma_x);
        if !self.planned_product(row, &mut dense, &mut sigma_x) {
            row_product(&self.sigma, self.dim, x, &mut dense, &mut sigma_x);
        }
        let v = self.correct(&dense, &mut sigma_x);
        self.sigma_x = sigma_x;
        self.x = dense;
        v
    }

    /// Learns `rows` in order: `decide(k, observation)` gives row k's mean step and precision
    /// gain (μ ← μ + step·Σx, Σ⁻¹ ← Σ⁻¹ + c·x xᵀ), or `None` to leave the model unchanged.
    /// Σ₀x is computed for a block of rows at a time, and again for the rows after a fold.
    fn learn_block(
        &mut self,
        rows: &[Features],
        mut decide: impl FnMut(usize, Observation) -> Option<(f64, f64)>,
    ) {
        let (d, block_size) = (self.dim, block_size(self.dim));
        let (mut x, mut gk) = (vec![0.0; d], vec![0.0; d]);
        let mut products = BlockProducts::new(d);
        let mut start = 0;
        while start < rows.len() {
            let length = block_length(block_size, self.pending.len() / d.max(1));
            let block = &rows[start..rows.len().min(start + length)];
            products.compute(&self.sigma, block);
            let mut next = start + block.len();
            for (k, row) in block.iter().enumerate() {
                self.begin_round();
                products.row(k, &mut x, &mut gk);
                let variance = self.correct(&x, &mut gk);
                let seen = Observation {
                    score: row.dot(&self.mean),
                    variance,
                    squared_norm: row.squared_norm(),
                };
                if let Some((step, c)) = decide(start + k, seen) {
                    if mean_step_overflows(&self.mean, step, &gk) {
                        self.skipped += 1;
                        continue;
                    }
                    axpy(step, &gk, &mut self.mean);
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

impl PrimalForm for Full {
    const KIND: CovarianceKind = CovarianceKind::Full;

    /// The mean, Σ₀ and the dense x and Σx of the row being learned.
    fn size(_kind: CovarianceKind, dim: usize) -> Option<usize> {
        dim.checked_mul(dim + 2)
    }

    fn describe(dim: usize, classes: &str, each: &str) -> (String, &'static str) {
        let what =
            format!("{classes}a full {dim}×{dim} covariance matrix {each}(covariance=\"full\")");
        let advice = "; covariance=\"diag\" needs memory linear in the number of features";
        (what, advice)
    }

    fn new(_kind: CovarianceKind, shape: Shape, a: f64) -> Self {
        let dim = shape.dim();
        let mut sigma = vec![0.0; dim * dim];
        sigma.iter_mut().step_by(dim + 1).for_each(|s| *s = a);
        Full::with_parts(shape, vec![0.0; dim], sigma, Vec::new())
    }

    /// Σ₀ must be exactly symmetric (every fold mirrors it) and Σ positive definite. The signs
    /// of the variances are not checked on their own: rounding in Sherman–Morrison can leave a
    /// learned variance at 0 or just below.
    fn from_finite_parts(parts: Parts) -> Result<Self, CwError> {
        let (shape, mean, covariance) = (parts.shape, parts.mean, parts.covariance);
        let dim = shape.dim();
        if let Some(sigma) = dim.checked_mul(dim).and_then(|n| covariance.get(..n)) {
            if !is_symmetric(dim, sigma) {
                return Err(impossible(Self::KIND, "must be symmetric"));
            }
            if !is_positive_definite(dim, sigma, &covariance[dim * dim..])? {
                return Err(impossible(Self::KIND, "must be positive definite"));
            }
        }
        Full::from_state(shape, mean.to_vec(), covariance).ok_or_else(|| {
            let expected = format!("{dim}×{dim} values and pending terms");
            wrong_length(Self::KIND, dim, &expected, covariance.len())
        })
    }

    /// Checks the length (the values are finite), and that Σ is exactly symmetric and positive
    /// definite as a loaded model's must be. The merges build it so (Σ = L⁻ᵀL⁻¹ from the Cholesky
    /// factor of a merged precision, mirrored; or an average Σₖ bₖΣₖ of the models' own Σₖ),
    /// but a merged Λ within rounding of singular can leave its inverse just indefinite, and a
    /// model that a merge returns must save and load: the Cholesky check (O(d³), the cost of
    /// the merge's own factorisation) is kept.
    fn set_finite_moments(&mut self, mean: &[f64], sigma: &[f64]) -> Result<(), CwError> {
        let dim = self.dim;
        if sigma.len() != dim * dim {
            let expected = format!("{dim}×{dim} values");
            return Err(wrong_length(Self::KIND, dim, &expected, sigma.len()));
        }
        // No pending terms: the checks of a loaded model's Σ (`from_finite_parts`).
        let parts = Self::from_finite_parts(Parts {
            kind: Self::KIND,
            shape: self.shape,
            mean,
            covariance: sigma,
        })?;
        *self = Full {
            noise: self.noise,
            ..parts
        };
        Ok(())
    }

    fn shape(&self) -> Shape {
        self.shape
    }

    fn mean(&self) -> Cow<'_, [f64]> {
        Cow::Borrowed(&self.mean)
    }

    fn covariance(&self) -> Cow<'_, [f64]> {
        self.values()
    }

    fn dense_covariance(&self) -> Option<Vec<f64>> {
        Some(self.values().into_owned())
    }

    /// Σ (pending terms folded in), a new feature's row and column those of a·I.
    fn widened_covariance(&self, new: usize, a: f64) -> Vec<f64> {
        let (dim, old) = (self.shape.dim(), self.shape.n_features);
        let wide = dim + new;
        let mut sigma = vec![0.0; wide * wide];
        for (i, row) in self.values().chunks_exact(dim).enumerate() {
            let to = if i < old { i } else { i + new };
            let row = with_new_features(row, self.shape, new, 0.0);
            sigma[to * wide..(to + 1) * wide].copy_from_slice(&row);
        }
        (old..old + new).for_each(|j| sigma[j * wide + j] = a);
        sigma
    }

    /// Σ₀ row-major, then the pending terms.
    fn covariance_state(&self) -> Cow<'_, [f64]> {
        Cow::Owned(self.state())
    }
}

impl Covariance for Full {
    dense_mean_methods!();

    #[inline]
    fn prepare(&mut self, row: Row) -> (f64, f64) {
        let x = self.shape.features(row);
        (self.prepare_features(row, &x), x.squared_norm())
    }

    fn prepare_ahead(&mut self, rows: &[Row]) {
        self.plan(rows);
    }

    fn prepares_ahead(&self) -> bool {
        block_size(self.dim) > 1
    }

    /// One row's update: its rank-one term waits with the others, as in `Full::learn_block`,
    /// so rows learned one at a time (the multiclass learners) also fold once per block.
    fn update(&mut self, _row: Row, step: f64, c: f64, v: f64, _eta: f64) {
        if mean_step_overflows(&self.mean, step, &self.sigma_x) {
            self.skipped += 1;
            return;
        }
        axpy(step, &self.sigma_x, &mut self.mean);
        if c != 0.0 {
            let (x, sigma_x) = (
                std::mem::take(&mut self.x),
                std::mem::take(&mut self.sigma_x),
            );
            self.push(&x, &sigma_x, c, v, block_size(self.dim));
            (self.x, self.sigma_x) = (x, sigma_x);
        }
    }

    /// Blocks of rows share one pass over Σ (see `Full::learn_block`).
    fn learn_rows<'a>(
        &mut self,
        rows: impl Iterator<Item = (usize, Row<'a>)>,
        mut decide: impl FnMut(usize, Observation) -> Option<Update>,
    ) {
        let (shape, per_call) = (self.shape, rows_per_call(self.dim));
        let mut rows = rows.peekable();
        while rows.peek().is_some() {
            let (indices, block): (Vec<usize>, Vec<Features>) = rows
                .by_ref()
                .take(per_call)
                .map(|(i, row)| (i, shape.features(row)))
                .unzip();
            self.learn_block(&block, |k, seen| {
                decide(indices[k], seen).map(|u| (u.step, u.c))
            });
        }
    }

    /// The variance the next round meets: xᵀ(Σ + q·I)x, its process noise added (the Kalman
    /// filter's one-step-ahead prediction).
    fn moments(&self, row: Row) -> (f64, f64) {
        let x = self.shape.features(row);
        let v = match self.noise {
            0.0 => self.variance(&x),
            q => self.variance(&x) + q * x.squared_norm(),
        };
        (x.dot(&self.mean), v)
    }

    fn unit_scale_variance(&self, row: Row) -> Option<(f64, f64)> {
        Some(self.shape.at_unit_scale(row, |x| self.variance(x)))
    }

    /// xᵀ(Σ₀ + (g + q)·I)y − Σ_b (h_b·x)(h_b·y), touching only the rows of Σ₀ at x's
    /// non-zeros and their entries at y's: O(nnz_x·nnz_y) plus O(nnz_x + nnz_y) per pending
    /// term.
    fn cross_variance(&self, a: Row, b: Row) -> Option<f64> {
        let (x, y) = (self.shape.features(a), self.shape.features(b));
        let d = self.dim;
        let projections = self.pending.chunks_exact(d).map(|h| (x.dot(h), y.dot(h)));
        Some(self.cross_with(&x, &y, projections))
    }

    /// Each row's projections h_b·x on the pending terms once, not once per pair.
    fn cross_variances(&self, rows: &[Row], out: &mut [f64]) -> Option<()> {
        let (n, d) = (rows.len(), self.dim);
        let features: Vec<Features> = rows.iter().map(|&r| self.shape.features(r)).collect();
        let n_pending = self.pending.len() / d.max(1);
        let projections: Vec<f64> = (features.iter())
            .flat_map(|x| self.pending.chunks_exact(d).map(|h| x.dot(h)))
            .collect();
        for i in 0..n {
            for j in i + 1..n {
                let (pi, pj) = (i * n_pending, j * n_pending);
                let pairs = (0..n_pending).map(|b| (projections[pi + b], projections[pj + b]));
                let c = self.cross_with(&features[i], &features[j], pairs);
                (out[i * n + j], out[j * n + i]) = (c, c);
            }
        }
        Some(())
    }

    /// Begins the round (its process noise), then μ·x.
    #[inline]
    fn learn_score(&mut self, row: Row) -> f64 {
        self.begin_round();
        self.score(row)
    }

    fn n_values(&self) -> usize {
        self.dim * (self.dim + 2)
    }

    /// Folds the process noise, then the pending rank-one terms, into Σ₀.
    fn fold(&mut self) {
        self.fold_growth();
        fold(&mut self.sigma, self.dim, &self.pending);
        self.pending.clear();
        self.refresh_diagonal();
    }

    /// Σ₀ + g·I (as [`Full::state`] stores it) and the pending terms, when some wait.
    fn pending_terms(&self) -> Option<(Vec<f64>, &[f64])> {
        if self.pending.is_empty() {
            return None;
        }
        let mut base = self.sigma.clone();
        add_to_diagonal(&mut base, self.dim, self.growth);
        Some((base, &self.pending))
    }

    /// `base`: Σ₀ + g·I, symmetric; the model (built from Σ, nothing pending, no growth yet)
    /// takes Σ₀ + g·I and the terms when folding them as [`Full::values`] does gives its Σ
    /// back bit for bit. The lazy noise, if any, then takes g out of the diagonal.
    fn restore_pending_terms(&mut self, base: &[f64], terms: &[f64]) -> Result<(), CwError> {
        let d = self.dim;
        let invalid = |what: &str| Err(CwError::InvalidState(format!("entry {what}")));
        if base.len() != d * d || !is_symmetric(d, base) || base.iter().any(|v| !v.is_finite()) {
            return invalid(&format!(
                "\"pending_bases\" must hold a symmetric {d}×{d} matrix of finite values per \
                 model with pending terms"
            ));
        }
        if terms.is_empty()
            || !terms.len().is_multiple_of(d)
            || terms.iter().any(|v| !v.is_finite())
        {
            return invalid(&format!(
                "\"pending_terms\" must hold finite terms of {d} values each"
            ));
        }
        let mut restored =
            Full::with_parts(self.shape, self.mean.clone(), base.to_vec(), terms.to_vec());
        let bits = |values: &[f64]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        if self.growth != 0.0
            || !self.pending.is_empty()
            || bits(&restored.values()) != bits(&self.values())
        {
            return invalid(
                "\"pending_terms\" folded into \"pending_bases\" does not give \"covariance_values\"",
            );
        }
        restored.noise = self.noise;
        *self = restored;
        Ok(())
    }

    /// O(d²), after folding the pending terms.
    fn rescale_covariance(&mut self, r: f64) {
        Covariance::fold(self);
        self.sigma.iter_mut().for_each(|s| *s *= r);
        self.refresh_diagonal();
    }

    /// Σx is dense: a step moves every entry of the mean.
    fn visit_mean(&self, _row: Row, mut f: impl FnMut(usize, f64)) {
        self.mean.iter().enumerate().for_each(|(j, &m)| f(j, m));
    }

    /// Exact, O(d) per row (see `full/noise.rs`).
    fn set_process_noise(&mut self, q: f64) -> Result<(), CwError> {
        self.noise = q;
        Ok(())
    }

    fn reset_covariance(&mut self, a: f64) -> Result<(), CwError> {
        self.reset(a);
        Ok(())
    }

    /// The growth g not folded yet, with Σ₀'s diagonal (the state holds Σ₀ + g·I) and the
    /// diagonals kept for the safeguards, which gained every round's q one by one.
    fn lazy_noise(&self) -> Option<([f64; 2], Vec<f64>)> {
        if self.noise == 0.0 && self.growth == 0.0 {
            return None;
        }
        let d = self.dim;
        let base = (0..d).map(|i| self.sigma[i * d + i]);
        let stored = base.chain(self.base_diagonal.iter().copied());
        Some((
            [0.0, self.growth],
            stored.chain(self.diagonal.iter().copied()).collect(),
        ))
    }

    /// `stored`: Σ₀'s diagonal, which with g must give the restored one back bit for bit, then
    /// the two diagonals of the safeguards.
    fn restore_lazy_noise(&mut self, clock: [f64; 2], stored: &[f64]) -> Result<(), CwError> {
        let d = self.dim;
        let [round, growth] = clock;
        let invalid = |what: &str| Err(CwError::InvalidState(format!("entry {what}")));
        if round != 0.0 || !(growth >= 0.0 && growth.is_finite()) {
            return invalid("\"noise_clock\" must hold 0 and a non-negative finite growth");
        }
        if stored.len() != 3 * d || stored.iter().any(|v| !(v.is_finite() && *v > 0.0)) {
            return invalid(&format!(
                "\"noise_variances\" must hold {} positive values",
                3 * d
            ));
        }
        let (base, safeguards) = stored.split_at(d);
        if (0..d).any(|i| base[i] + growth != self.sigma[i * d + i]) {
            return invalid(
                "\"noise_variances\" does not give \"covariance_values\" with the growth",
            );
        }
        (0..d).for_each(|i| self.sigma[i * d + i] = base[i]);
        self.growth = growth;
        self.base_diagonal.copy_from_slice(&safeguards[..d]);
        self.diagonal.copy_from_slice(&safeguards[d..]);
        self.roomy = self.is_roomy();
        self.plan.clear();
        Ok(())
    }

    /// O(d): joins the growth g (see `full/noise.rs`).
    fn grow_covariance(&mut self, g: f64) -> Result<(), CwError> {
        self.grow(g);
        Ok(())
    }

    /// O(d³): the pending terms folded, Σ′ = (I + δΣE)⁻¹Σ and μ′ = (I + δΣE)⁻¹μ.
    fn reweigh_prior(&mut self, delta: f64, commit: bool) -> Option<FeatureMoments> {
        self.fold();
        let n_features = self.shape.n_features;
        if delta == 0.0 {
            let (mean, dim) = (&self.mean, self.dim);
            return Some(feature_moments(mean, mean, n_features, |j| {
                self.sigma[j * dim + j]
            }));
        }
        let (mean, sigma) = reweighed_dense(&self.mean, &self.sigma, n_features, delta)?;
        let dim = self.dim;
        let moments = feature_moments(&mean, &self.mean, n_features, |j| sigma[j * dim + j]);
        if commit {
            self.set_finite_moments(&mean, &sigma).ok()?;
        }
        Some(moments)
    }

    fn watch(&self, row: Row) -> Observation {
        let (score, variance) = self.moments(row);
        Observation {
            score,
            variance,
            squared_norm: self.shape.features(row).squared_norm(),
        }
    }
}

#[cfg(test)]
mod tests;
