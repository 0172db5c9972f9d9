//! The one runtime SIMD dispatch: the hot loops of the full and dual covariance forms are
//! written once, portably, and also compiled for AVX2; each call takes the AVX2 build where the
//! CPU has it (asked once). Twice the vector width, the same results: Rust never fuses or
//! reorders floating-point operations by itself.

use std::ops::Range;

use crate::covariance::full::{fold_rows_portable, product_rows_portable};

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
