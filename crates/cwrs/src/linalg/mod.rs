//! Dense linear algebra on row-major slices: one home for each operation.
//!
//! Two dot products on purpose, since the order of a sum decides its last bits: [`dot_in_order`]
//! sums in the order of its definition (the merges, whose results are defined by a sequential
//! reference), [`dot_by_fours`] keeps four independent sums so that the loop vectorises and
//! pipelines (the full covariance's hot paths). The SIMD kernels of the learning paths are in
//! [`simd`], the exponential of the RBF kernel in [`exp`], large tables on huge pages in
//! [`huge_pages`].

pub(crate) mod exp;
pub(crate) mod huge_pages;
pub(crate) mod simd;

/// y += a·x.
#[inline]
pub(crate) fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    y.iter_mut().zip(x).for_each(|(y, &x)| *y += a * x);
}

/// x·y, summed from the first term to the last.
#[inline]
pub(crate) fn dot_in_order(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| a * b).sum()
}

/// Σ_j term(x_j, y_j) with four independent sums, so the loop vectorises and pipelines.
#[inline]
pub(crate) fn sum_by_fours(x: &[f64], y: &[f64], term: impl Fn(&f64, &f64) -> f64) -> f64 {
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

/// x·y by [`sum_by_fours`].
#[inline]
pub(crate) fn dot_by_fours(x: &[f64], y: &[f64]) -> f64 {
    sum_by_fours(x, y, |a, b| a * b)
}

/// The lower Cholesky factor L (row-major, LLᵀ = A) of a symmetric positive definite A, read
/// from A's lower triangle, with sums in order ([`dot_in_order`]); `None` if A is not positive
/// definite.
pub(crate) fn cholesky(a: &[f64], dim: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; dim * dim];
    for i in 0..dim {
        l[i * dim..=i * dim + i].copy_from_slice(&a[i * dim..=i * dim + i]);
    }
    cholesky_in_place(&mut l, dim, dot_in_order).then_some(l)
}

/// Overwrites the lower triangle of the symmetric `l` (dim×dim, row-major) with its Cholesky
/// factor, each entry A_ij − dot(L_i,<j, L_j,<j) with the given `dot`; false (and `l` partly
/// overwritten) if the matrix is not positive definite. The upper triangle is not read.
pub(crate) fn cholesky_in_place(
    l: &mut [f64],
    dim: usize,
    dot: impl Fn(&[f64], &[f64]) -> f64,
) -> bool {
    // Row-oriented (Cholesky–Banachiewicz) in blocks of rows, so that each finished row j is
    // read once per block rather than once per row; every entry is the same sum in any order of
    // the blocks.
    const ROWS: usize = 32;
    for first in (0..dim).step_by(ROWS) {
        let end = (first + ROWS).min(dim);
        for j in 0..end {
            for i in first.max(j)..end {
                let (row_i, row_j) = (&l[i * dim..i * dim + j], &l[j * dim..j * dim + j]);
                let s = l[i * dim + j] - dot(row_i, row_j);
                if i == j {
                    if !(s > 0.0 && s.is_finite()) {
                        return false;
                    }
                    l[i * dim + i] = s.sqrt();
                } else {
                    l[i * dim + j] = s / l[j * dim + j];
                }
            }
        }
    }
    true
}

/// y ← L⁻¹y over the first `n` rows of the lower triangular L (rows `stride` apart).
pub(crate) fn forward_solve(l: &[f64], stride: usize, n: usize, y: &mut [f64]) {
    for i in 0..n {
        let row = &l[i * stride..=i * stride + i];
        let s: f64 = (0..i).map(|t| row[t] * y[t]).sum();
        y[i] = (y[i] - s) / row[i];
    }
}

/// y ← L⁻ᵀy over the first `n` rows of the lower triangular L (rows `stride` apart), by
/// columns of Lᵀ, which are rows of L: contiguous.
pub(crate) fn backward_solve(l: &[f64], stride: usize, n: usize, y: &mut [f64]) {
    for i in (0..n).rev() {
        let row = &l[i * stride..=i * stride + i];
        let yi = y[i] / row[i];
        y[i] = yi;
        y[..i].iter_mut().zip(row).for_each(|(t, lt)| *t -= lt * yi);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cholesky_factors_and_solves_agree_with_the_matrix() {
        // A = MMᵀ + I for a fixed M.
        let dim = 37;
        let m: Vec<f64> = (0..dim * dim)
            .map(|k| ((k * 7919) % 101) as f64 / 101.0 - 0.5)
            .collect();
        let mut a = vec![0.0; dim * dim];
        for i in 0..dim {
            for j in 0..dim {
                a[i * dim + j] = dot_in_order(&m[i * dim..][..dim], &m[j * dim..][..dim])
                    + f64::from(u8::from(i == j));
            }
        }
        let l = cholesky(&a, dim).unwrap();
        let mut blocked = a.clone();
        assert!(cholesky_in_place(&mut blocked, dim, dot_in_order));
        for i in 0..dim {
            assert_eq!(&l[i * dim..=i * dim + i], &blocked[i * dim..=i * dim + i]);
            for j in 0..=i {
                let llt = dot_in_order(&l[i * dim..][..=j], &l[j * dim..][..=j]);
                assert!((llt - a[i * dim + j]).abs() <= 1e-12 * a[i * dim + i]);
            }
        }
        // A·(L⁻ᵀL⁻¹b) = b.
        let b: Vec<f64> = (0..dim).map(|i| (i as f64).sin()).collect();
        let mut x = b.clone();
        forward_solve(&l, dim, dim, &mut x);
        backward_solve(&l, dim, dim, &mut x);
        for i in 0..dim {
            let ax = dot_in_order(&a[i * dim..][..dim], &x);
            assert!((ax - b[i]).abs() <= 1e-10, "{ax} against {}", b[i]);
        }
    }

    #[test]
    fn not_positive_definite_is_refused() {
        assert!(cholesky(&[1.0, 2.0, 2.0, 1.0], 2).is_none());
        assert!(cholesky(&[f64::NAN], 1).is_none());
        assert!(cholesky(&[0.0], 1).is_none());
    }

    #[test]
    fn dots_agree() {
        let x: Vec<f64> = (0..11).map(f64::from).collect();
        assert_eq!(dot_in_order(&x, &x), 385.0);
        assert_eq!(dot_by_fours(&x, &x), 385.0);
    }
}
