use std::borrow::Cow;
use std::ops::Range;

use super::Observation;
use crate::data::Features;
use crate::rules::sherman_morrison_factor;

/// Rows learned per block: Σ_k is read once per block for all its rows, and their rank-one
/// terms are folded into it together at the end.
pub const BLOCK: usize = 32;

/// Right-hand sides per pass of the blocked product: a lane of a SIMD vector each.
const LANES: usize = 4;

/// From this order on, Σ_k's rows are split in two fixed halves of equal work, each run on its
/// own core when there is one. The split depends on the order only, so results do not depend
/// on the number of cores.
const SPLIT_ORDER: usize = 256;

/// A Gaussian with full covariance: the mean and a symmetric d×d Σ, updated by Sherman–Morrison,
/// Σ ← Σ − h hᵀ with h = √β·Σx and β = c / (1 + c·v).
///
/// Σ is packed (the upper triangle, row by row: half the memory traffic of a square matrix).
/// Rows are learned in blocks ([`Full::learn_block`]): at the block's start one pass over Σ
/// computes Σx for all its rows at once; within the block Σ = Σ_k − Σ_b h_b h_bᵀ, so a row's
/// Σx is corrected by the block's earlier rank-one terms in O(d) each; at the end the terms are
/// folded into Σ in one more pass. That is two passes over Σ per block instead of two per row.
#[derive(Clone, Debug, PartialEq)]
pub struct Full {
    dim: usize,
    mean: Vec<f64>,
    /// Σ's upper triangle: row i holds Σ_ii..Σ_i,d−1 from [`packed_offset`]`(dim, i)`.
    packed: Vec<f64>,
    /// The last prepared example, dense.
    x: Vec<[f64; 1]>,
    /// Σx of the last prepared example.
    sigma_x: Vec<[f64; 1]>,
}

/// Where row i of a packed upper triangle of order `dim` starts.
#[inline]
fn packed_offset(dim: usize, i: usize) -> usize {
    i * dim - i * i.saturating_sub(1) / 2
}

/// y += a·x.
#[inline]
fn axpy(y: &mut [f64], a: f64, x: &[f64]) {
    y.iter_mut().zip(x).for_each(|(y, &x)| *y += a * x);
}

/// x·y with four independent sums, so the loop vectorizes and pipelines.
#[inline]
fn dot(x: &[f64], y: &[f64]) -> f64 {
    let mut sums = [0.0; 4];
    let (xc, yc) = (x.chunks_exact(4), y.chunks_exact(4));
    let tail: f64 = xc
        .remainder()
        .iter()
        .zip(yc.remainder())
        .map(|(a, b)| a * b)
        .sum();
    for (a, b) in xc.zip(yc) {
        for k in 0..4 {
            sums[k] += a[k] * b[k];
        }
    }
    (sums[0] + sums[1]) + (sums[2] + sums[3]) + tail
}

/// Adds the contributions of Σ's packed rows `rows` to y = Σx for W right-hand sides at once,
/// x and y interleaved (`x[j][t]` is coordinate j of right-hand side t). Row i gives y_i its
/// dot product with the upper part and spreads x_i over the rest; every lane sums in the same
/// order whatever W is, so one row learned alone gives the same bits as within a group.
#[inline(always)]
fn symv_rows_portable<const W: usize>(
    packed: &[f64],
    dim: usize,
    rows: Range<usize>,
    x: &[[f64; W]],
    y: &mut [[f64; W]],
) {
    for i in rows {
        let row = &packed[packed_offset(dim, i)..packed_offset(dim, i + 1)];
        let (diagonal, upper) = (row[0], &row[1..]);
        let xi = x[i];
        let (yi, y_rest) = y[i..].split_first_mut().expect("i < dim");
        let mut acc = [0.0; W];
        for ((&s, xj), yj) in upper.iter().zip(&x[i + 1..]).zip(y_rest) {
            for t in 0..W {
                acc[t] += s * xj[t];
                yj[t] += xi[t] * s;
            }
        }
        for t in 0..W {
            yi[t] += diagonal * xi[t] + acc[t];
        }
    }
}

/// The row where the second half of Σ's packed rows starts: the halves hold equal numbers of
/// entries (the rows shorten as i grows).
fn split_row(dim: usize) -> usize {
    let target = dim * (dim + 1) / 4;
    (0..dim)
        .find(|&i| packed_offset(dim, i) >= target)
        .unwrap_or(dim)
}

/// Whether a second core is there to take half of the work.
fn two_cores() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}

/// y = Σx for groups of W right-hand sides (`x` and `y` hold `groups × dim` entries). From
/// [`SPLIT_ORDER`] on, the second half of the rows adds into its own buffer, in parallel when
/// `parallel`, and its sum joins y at the end.
fn symv<const W: usize>(
    packed: &[f64],
    dim: usize,
    x: &[[f64; W]],
    y: &mut [[f64; W]],
    parallel: bool,
) {
    y.fill([0.0; W]);
    if dim < SPLIT_ORDER {
        for (xg, yg) in x.chunks_exact(dim).zip(y.chunks_exact_mut(dim)) {
            symv_rows(packed, dim, 0..dim, xg, yg);
        }
        return;
    }
    let m = split_row(dim);
    let mut second = vec![[0.0; W]; y.len()];
    let first_half = |y: &mut [[f64; W]]| {
        for (xg, yg) in x.chunks_exact(dim).zip(y.chunks_exact_mut(dim)) {
            symv_rows(packed, dim, 0..m, xg, yg);
        }
    };
    let second_half = |y: &mut [[f64; W]]| {
        for (xg, yg) in x.chunks_exact(dim).zip(y.chunks_exact_mut(dim)) {
            symv_rows(packed, dim, m..dim, xg, yg);
        }
    };
    if parallel && two_cores() {
        std::thread::scope(|scope| {
            scope.spawn(|| second_half(&mut second));
            first_half(y);
        });
    } else {
        first_half(y);
        second_half(&mut second);
    }
    for (yj, sj) in y.iter_mut().zip(&second) {
        for t in 0..W {
            yj[t] += sj[t];
        }
    }
}

/// Σ ← Σ − Σ_b h_b h_bᵀ over packed rows `rows`, which `packed` holds from the first
/// (`pending` holds the h_b, `dim` values each), vectorized along each row; h_i·h_j commutes,
/// so Σ stays exactly symmetric.
#[inline(always)]
fn fold_rows_portable(packed: &mut [f64], dim: usize, rows: Range<usize>, pending: &[f64]) {
    let mut offset = 0;
    for i in rows {
        let len = dim - i;
        let row = &mut packed[offset..offset + len];
        offset += len;
        for h in pending.chunks_exact(dim) {
            axpy(row, -h[i], &h[i..]);
        }
    }
}

/// The same loops compiled for AVX2 where the CPU has it: twice the vector width, and no
/// change in the results (Rust never fuses or reorders floating-point operations by itself).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::ops::Range;

    #[target_feature(enable = "avx2")]
    pub fn symv_rows<const W: usize>(
        packed: &[f64],
        dim: usize,
        rows: Range<usize>,
        x: &[[f64; W]],
        y: &mut [[f64; W]],
    ) {
        super::symv_rows_portable(packed, dim, rows, x, y);
    }

    #[target_feature(enable = "avx2")]
    pub fn fold_rows(packed: &mut [f64], dim: usize, rows: Range<usize>, pending: &[f64]) {
        super::fold_rows_portable(packed, dim, rows, pending);
    }
}

fn symv_rows<const W: usize>(
    packed: &[f64],
    dim: usize,
    rows: Range<usize>,
    x: &[[f64; W]],
    y: &mut [[f64; W]],
) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { avx2::symv_rows(packed, dim, rows, x, y) };
    }
    symv_rows_portable(packed, dim, rows, x, y);
}

fn fold_rows(packed: &mut [f64], dim: usize, rows: Range<usize>, pending: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { avx2::fold_rows(packed, dim, rows, pending) };
    }
    fold_rows_portable(packed, dim, rows, pending);
}

/// Folds the pending terms into every row of Σ, the two halves in parallel when it pays.
fn fold(packed: &mut [f64], dim: usize, pending: &[f64]) {
    if pending.is_empty() {
        return;
    }
    if dim >= SPLIT_ORDER && pending.len() > dim && two_cores() {
        let m = split_row(dim);
        let (first, second) = packed.split_at_mut(packed_offset(dim, m));
        std::thread::scope(|scope| {
            scope.spawn(|| fold_rows(second, dim, m..dim, pending));
            fold_rows(first, dim, 0..m, pending);
        });
    } else {
        fold_rows(packed, dim, 0..dim, pending);
    }
}

impl Full {
    pub fn new(dim: usize, a: f64) -> Self {
        let mut packed = vec![0.0; dim * (dim + 1) / 2];
        (0..dim).for_each(|i| packed[packed_offset(dim, i)] = a);
        Full::with_packed(dim, vec![0.0; dim], packed)
    }

    /// From the mean and Σ row-major (its upper triangle is kept).
    pub fn from_parts(dim: usize, mean: Vec<f64>, sigma: &[f64]) -> Self {
        let packed = (0..dim)
            .flat_map(|i| sigma[i * dim + i..(i + 1) * dim].iter().copied())
            .collect();
        Full::with_packed(dim, mean, packed)
    }

    fn with_packed(dim: usize, mean: Vec<f64>, packed: Vec<f64>) -> Self {
        Full {
            dim,
            mean,
            packed,
            x: vec![[0.0]; dim],
            sigma_x: vec![[0.0]; dim],
        }
    }

    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// Σ_kl.
    #[inline]
    fn entry(&self, k: usize, l: usize) -> f64 {
        let (i, j) = if k <= l { (k, l) } else { (l, k) };
        self.packed[packed_offset(self.dim, i) + j - i]
    }

    /// Σ row-major.
    pub fn values(&self) -> Cow<'_, [f64]> {
        let d = self.dim;
        Cow::Owned((0..d * d).map(|k| self.entry(k / d, k % d)).collect())
    }

    /// xᵀΣx touching only the entries of pairs of non-zeros: O(nnz²) (prediction path).
    pub fn variance(&self, x: &Features) -> f64 {
        let mut v = 0.0;
        x.for_each(|k, xk| {
            if xk != 0.0 {
                x.for_each(|l, xl| {
                    if l > k {
                        v += 2.0 * xk * xl * self.entry(k, l);
                    }
                });
                v += xk * xk * self.entry(k, k);
            }
        });
        v
    }

    /// Computes and keeps Σx for one row and returns v = x·Σx.
    pub fn prepare(&mut self, x: &Features) -> f64 {
        self.x.fill([0.0]);
        x.for_each(|j, xj| self.x[j] = [xj]);
        symv(&self.packed, self.dim, &self.x, &mut self.sigma_x, false);
        dot(self.x.as_flattened(), self.sigma_x.as_flattened())
    }

    /// μ ← μ + step·Σx, then Σ ← Σ − β·(Σx)(Σx)ᵀ, with `v` from [`Full::prepare`].
    pub fn update(&mut self, step: f64, c: f64, v: f64) {
        let sigma_x = self.sigma_x.as_flattened_mut();
        axpy(&mut self.mean, step, sigma_x);
        if c != 0.0 {
            let scale = sherman_morrison_factor(c, v).sqrt();
            sigma_x.iter_mut().for_each(|g| *g *= scale);
            fold(&mut self.packed, self.dim, sigma_x);
        }
    }

    /// Learns up to [`BLOCK`] rows in order: `decide(k, observation)` gives row k's mean step
    /// and precision gain (μ ← μ + step·Σx, Σ⁻¹ ← Σ⁻¹ + c·x xᵀ), or `None` to leave the model
    /// unchanged.
    pub fn learn_block(
        &mut self,
        rows: &[Features],
        mut decide: impl FnMut(usize, Observation) -> Option<(f64, f64)>,
    ) {
        if let [row] = rows {
            let variance = self.prepare(row);
            let seen = Observation {
                score: row.dot(&self.mean),
                variance,
                squared_norm: row.squared_norm(),
            };
            if let Some((step, c)) = decide(0, seen) {
                self.update(step, c, variance);
            }
            return;
        }
        let d = self.dim;
        let mut x = vec![[0.0; LANES]; rows.len().div_ceil(LANES) * d];
        for (k, row) in rows.iter().enumerate() {
            let group = &mut x[k / LANES * d..];
            row.for_each(|j, xj| group[j][k % LANES] = xj);
        }
        let mut sigma_x = vec![[0.0; LANES]; x.len()];
        symv(&self.packed, d, &x, &mut sigma_x, true);
        let mut pending: Vec<f64> = Vec::with_capacity(rows.len() * d);
        let (mut xk, mut gk) = (vec![0.0; d], vec![0.0; d]);
        for (k, row) in rows.iter().enumerate() {
            let (lane, group) = (k % LANES, k / LANES * d..(k / LANES + 1) * d);
            xk.iter_mut()
                .zip(&x[group.clone()])
                .for_each(|(v, g)| *v = g[lane]);
            gk.iter_mut()
                .zip(&sigma_x[group])
                .for_each(|(v, g)| *v = g[lane]);
            // Σ = Σ_k − Σ_b h_b h_bᵀ within the block.
            for h in pending.chunks_exact(d) {
                axpy(&mut gk, -dot(h, &xk), h);
            }
            let variance = dot(&xk, &gk);
            let seen = Observation {
                score: row.dot(&self.mean),
                variance,
                squared_norm: row.squared_norm(),
            };
            if let Some((step, c)) = decide(k, seen) {
                axpy(&mut self.mean, step, &gk);
                if c != 0.0 {
                    let scale = sherman_morrison_factor(c, variance).sqrt();
                    pending.extend(gk.iter().map(|&g| scale * g));
                }
            }
        }
        fold(&mut self.packed, d, &pending);
    }
}
