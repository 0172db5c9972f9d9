//! The full form's plain loops for small Σ (below [`PLAIN_ORDER`]): the tiled loops' sums in
//! the same order, without the tiles and the dispatch around them.

use crate::linalg::axpy;

/// Below this order Σ (at most 8 KiB) sits in L1 and a row's work is a few hundred
/// operations: plain loops beat the tiles and the dispatch around them.
pub(super) const PLAIN_ORDER: usize = 32;

/// y = Σx, one right-hand side, as y ← y + x_j·(row j of Σ) for j in order: the same sums in
/// the same order as [`super::product_tile`] (which reads Σ_ij as its mirror Σ_ji), so the same bits.
pub(super) fn plain_product(sigma: &[f64], dim: usize, x: &[f64], y: &mut [f64]) {
    for (x, y) in x.chunks_exact(dim).zip(y.chunks_exact_mut(dim)) {
        y.fill(0.0);
        for (row, &xj) in sigma.chunks_exact(dim).zip(x) {
            axpy(xj, row, y);
        }
    }
}

/// Σ −= H Hᵀ over the whole square: Σ_ij −= Σ_b h_b,i·h_b,j with the sum over b in order,
/// from 0, as [`super::fold_tile`] computes it (so the same bits, and no mirror to copy).
pub(super) fn plain_fold(sigma: &mut [f64], dim: usize, pending: &[f64]) {
    let mut sums = [0.0; PLAIN_ORDER];
    let sums = &mut sums[..dim];
    for (i, row) in sigma.chunks_exact_mut(dim).enumerate() {
        sums.fill(0.0);
        for h in pending.chunks_exact(dim) {
            axpy(h[i], h, sums);
        }
        row.iter_mut().zip(&*sums).for_each(|(s, a)| *s -= a);
    }
}
