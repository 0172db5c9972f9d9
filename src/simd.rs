//! The one runtime SIMD dispatch: the hot loops of the full and dual covariance forms are
//! written once, portably, and also compiled for AVX2; each call takes the AVX2 build where the
//! CPU has it (asked once). Twice the vector width, the same results: Rust never fuses or
//! reorders floating-point operations by itself. The full form's mirror (copies only) is
//! written with AVX2 intrinsics.

use std::ops::Range;

use crate::covariance::full::{
    fold_rows_portable, mirror_entries, mirror_portable, product_rows_portable, MIRROR_SIDE,
};

/// Whether the CPU has AVX2, detected once.
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx2() -> bool {
    static AVX2: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVX2.get_or_init(|| std::is_x86_feature_detected!("avx2"))
}

/// The portable loops compiled for AVX2.
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

    #[target_feature(enable = "avx2")]
    pub fn dot_axpy(a: &[f64], x: &[f64], s: f64, y: &mut [f64]) -> f64 {
        super::dot_axpy_portable(a, x, s, y)
    }

    #[target_feature(enable = "avx2")]
    pub fn dot(a: &[f64], b: &[f64]) -> f64 {
        super::dot_portable(a, b)
    }
}

/// Full form: y = Σx over rows `rows` for groups of W right-hand sides (see
/// [`product_rows_portable`]).
pub(crate) fn product_rows<const W: usize>(
    sigma: &[f64],
    dim: usize,
    rows: Range<usize>,
    x: &[[f64; W]],
    y: &mut [&mut [[f64; W]]],
) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { avx2::product_rows(sigma, dim, rows, x, y) };
    }
    product_rows_portable(sigma, dim, rows, x, y);
}

/// Full form: Σ −= H Hᵀ over the rows `rows` (see [`fold_rows_portable`]).
pub(crate) fn fold_rows(sigma: &mut [f64], dim: usize, rows: Range<usize>, pending: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { avx2::fold_rows(sigma, dim, rows, pending) };
    }
    fold_rows_portable(sigma, dim, rows, pending);
}

/// Full form: Σ_ij ← Σ_ji below the diagonal (see [`mirror_portable`]). Copies only, so every
/// path gives the same bits.
pub(crate) fn mirror(sigma: &mut [f64], dim: usize) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { mirror_avx2(sigma, dim) };
    }
    mirror_portable(sigma, dim);
}

/// [`mirror_portable`]'s blocks, 4×4 at a time in registers where a whole 4×4 block lies below
/// the diagonal: four loads, a transpose, four stores, for sixteen scalar loads and stores
/// with a stride of a row each (the mirror was a tenth of a d = 1000 fit).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn mirror_avx2(sigma: &mut [f64], dim: usize) {
    assert!(sigma.len() >= dim * dim);
    for ib in (0..dim).step_by(MIRROR_SIDE) {
        for jb in (0..=ib).step_by(MIRROR_SIDE) {
            let (i_end, j_end) = (dim.min(ib + MIRROR_SIDE), jb + MIRROR_SIDE);
            let mut i = ib;
            while i + 4 <= i_end {
                let mut j = jb;
                while j + 4 <= i.min(j_end) {
                    // SAFETY: rows j..j+4 and i..i+4, columns i..i+4 and j..j+4 lie inside
                    // the dim × dim matrix (j + 4 ≤ i and i + 4 ≤ dim), asserted above.
                    unsafe { transpose_block(sigma.as_mut_ptr(), dim, i, j) };
                    j += 4;
                }
                for row in i..i + 4 {
                    mirror_entries(sigma, dim, row, j..row.min(j_end));
                }
                i += 4;
            }
            for row in i..i_end {
                mirror_entries(sigma, dim, row, jb..row.min(j_end));
            }
        }
    }
}

/// Rows i..i+4, columns j..j+4 of Σ ← the transpose of rows j..j+4, columns i..i+4.
///
/// # Safety
/// Both 4×4 blocks lie inside `sigma` (row-major, rows of `dim`), and the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn transpose_block(sigma: *mut f64, dim: usize, i: usize, j: usize) {
    use std::arch::x86_64::*;
    // SAFETY: in bounds by the caller's contract.
    unsafe {
        let row = |k: usize| _mm256_loadu_pd(sigma.add((j + k) * dim + i));
        let (r0, r1, r2, r3) = (row(0), row(1), row(2), row(3));
        let (t0, t1) = (_mm256_unpacklo_pd(r0, r1), _mm256_unpackhi_pd(r0, r1));
        let (t2, t3) = (_mm256_unpacklo_pd(r2, r3), _mm256_unpackhi_pd(r2, r3));
        let columns = [
            _mm256_permute2f128_pd::<0x20>(t0, t2),
            _mm256_permute2f128_pd::<0x20>(t1, t3),
            _mm256_permute2f128_pd::<0x31>(t0, t2),
            _mm256_permute2f128_pd::<0x31>(t1, t3),
        ];
        for (c, column) in columns.into_iter().enumerate() {
            _mm256_storeu_pd(sigma.add((i + c) * dim + j), column);
        }
    }
}

/// Independent partial sums of the dual form's products: a plain sequential f64 sum neither
/// vectorizes nor pipelines (every add waits for the previous one).
const LANES: usize = 8;

/// Dual form: returns a·x and adds s·a to y, reading `a` once. Kept out of line: inlined into
/// the learning loop, it vectorized worse (scalar updates of y).
#[inline(never)]
pub(crate) fn dot_axpy(a: &[f64], x: &[f64], s: f64, y: &mut [f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { avx2::dot_axpy(a, x, s, y) };
    }
    dot_axpy_portable(a, x, s, y)
}

/// Dual form: a·b.
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { avx2::dot(a, b) };
    }
    dot_portable(a, b)
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
