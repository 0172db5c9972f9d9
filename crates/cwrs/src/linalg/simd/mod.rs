//! The one runtime SIMD dispatch: the hot loops of the full and dual covariance forms and the
//! kernel's exp are written once, portably, and also compiled for AVX2 with FMA and for
//! AVX-512F; each call takes the widest build the CPU has (asked once). Wider vectors, the same
//! results: Rust never fuses or reorders floating-point operations by itself, the dual form's
//! fused multiply-adds are written out (`mul_add`, exactly rounded by IEEE 754 at every width),
//! and the 8 lanes of partial sums are the same lanes at every width. The full form's mirror
//! (copies only) is written with AVX2 intrinsics.

use std::ops::Range;

use crate::covariance::full::{
    fold_rows_portable, mirror_entries, mirror_portable, product_rows_portable, MIRROR_SIDE,
};

/// Whether the CPU has AVX2, detected once.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn has_avx2() -> bool {
    static AVX2: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVX2.get_or_init(|| std::is_x86_feature_detected!("avx2"))
}

/// Whether the CPU has AVX2 and FMA (the AVX2 build's fused multiply-adds), detected once.
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx2_fma() -> bool {
    static AVX2_FMA: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVX2_FMA.get_or_init(|| has_avx2() && std::is_x86_feature_detected!("fma"))
}

/// Whether the CPU has AVX-512F and FMA (every AVX-512F CPU has both), detected once.
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx512f() -> bool {
    static AVX512F: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVX512F.get_or_init(|| {
        std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("fma")
    })
}

/// Returns `$f` of the widest vector build the CPU has (AVX-512F, then AVX2 with FMA); falls
/// through to the portable loop that follows on other CPUs.
macro_rules! widest {
    ($f:ident($($arg:expr),*)) => {
        #[cfg(target_arch = "x86_64")]
        {
            if has_avx512f() {
                // SAFETY: the CPU has AVX-512F and FMA, checked just above.
                return unsafe { avx512::$f($($arg),*) };
            }
            if has_avx2_fma() {
                // SAFETY: the CPU has AVX2 and FMA, checked just above.
                return unsafe { avx2::$f($($arg),*) };
            }
        }
    };
}

/// The portable loops compiled for one vector width (`$feature`), and [`dot_tile`] written
/// out in its intrinsics as `$tile`, with the module `lanes` holding 8 partial sums in that
/// width's registers; `dot_block`'s tiles are 2 rows × `$support` support rows, and `$finish`
/// ends a tile's dot products.
macro_rules! vector_build {
    ($feature:tt, $tile:ident, $support:expr, $finish:path) => {
        use std::ops::Range;

        #[target_feature(enable = $feature)]
        pub fn product_rows<const W: usize>(
            sigma: &[f64],
            dim: usize,
            rows: Range<usize>,
            x: &[[f64; W]],
            y: &mut [&mut [[f64; W]]],
        ) {
            super::product_rows_portable(sigma, dim, rows, x, y);
        }

        #[target_feature(enable = $feature)]
        pub fn fold_rows(sigma: &mut [f64], dim: usize, rows: Range<usize>, pending: &[f64]) {
            super::fold_rows_portable(sigma, dim, rows, pending);
        }

        #[target_feature(enable = $feature)]
        pub fn dot_axpy(a: &[f64], x: &[f64], s: f64, y: &mut [f64]) -> f64 {
            super::dot_axpy_portable(a, x, s, y)
        }

        #[target_feature(enable = $feature)]
        pub fn dot(a: &[f64], b: &[f64]) -> f64 {
            super::dot_portable(a, b)
        }

        #[target_feature(enable = $feature)]
        pub fn subtract_scaled(row: &mut [f64], s: f64, h: &[f64], second: Option<(f64, &[f64])>) {
            super::subtract_scaled_portable(row, s, h, second);
        }

        #[target_feature(enable = $feature)]
        pub fn dot_block(
            rows: &[f64],
            support: &[f64],
            len: usize,
            out: &mut [f64],
            stride: usize,
        ) {
            super::dot_block_tiled::<$tile, { $support }>(rows, support, len, out, stride);
        }

        #[target_feature(enable = $feature)]
        pub fn rbf_in_place(k: &mut [f64], xx: f64, zz: &[f64], gamma: f64) {
            crate::covariance::kernel::rbf_in_place_portable(k, xx, zz, gamma);
        }

        #[target_feature(enable = $feature)]
        pub fn quadratic_forms(packed: &[f64], n: usize, k: &[f64], out: &mut [f64]) {
            super::quadratic_forms_tiled::<$tile>(packed, n, k, out);
        }

        /// [`super::dot_tile`] in intrinsics: written out, the tile's partial sums stay in
        /// registers (the portable loops kept them on the stack). The same fused
        /// multiply-adds per lane, so the same values.
        pub(super) struct $tile;

        impl super::Tile for $tile {
            #[inline(always)]
            fn tile<const R: usize, const S: usize>(
                x: &[&[f64]; R],
                s: &[&[f64]; S],
            ) -> [[f64; S]; R] {
                // SAFETY: only reached from `dot_block` and `quadratic_forms` above, which
                // run where the CPU has the feature.
                unsafe { tile(x, s) }
            }
        }

        #[target_feature(enable = $feature)]
        #[inline]
        fn tile<const R: usize, const S: usize>(x: &[&[f64]; R], s: &[&[f64]; S]) -> [[f64; S]; R] {
            let n = x[0].len();
            assert!(x.iter().chain(s).all(|v| v.len() == n));
            let body = n - n % super::LANES;
            let mut acc = [[lanes::zero(); S]; R];
            let load = |v: &[f64], k: usize| {
                // SAFETY: k + 8 <= body <= n, the length of every row here (asserted above).
                unsafe { lanes::load(v.as_ptr().add(k)) }
            };
            for k in (0..body).step_by(super::LANES) {
                let mut xk = [lanes::zero(); R];
                for i in 0..R {
                    xk[i] = load(x[i], k);
                }
                for j in 0..S {
                    let sk = load(s[j], k);
                    for i in 0..R {
                        acc[i][j] = lanes::add_product(acc[i][j], sk, xk[i]);
                    }
                }
            }
            $finish(&acc, x, s, body)
        }

        /// The end of a tile's dot products one at a time: [`super::finish_dot`].
        #[target_feature(enable = $feature)]
        #[inline]
        fn finish_each<const R: usize, const S: usize>(
            acc: &[[lanes::Lanes; S]; R],
            x: &[&[f64]; R],
            s: &[&[f64]; S],
            body: usize,
        ) -> [[f64; S]; R] {
            let mut sums = [[0.0; S]; R];
            for i in 0..R {
                for j in 0..S {
                    sums[i][j] = super::finish_dot(&lanes::spill(acc[i][j]), s[j], x[i], body);
                }
            }
            sums
        }
    };
}

/// The portable loops compiled for AVX2 and FMA: 8 partial sums in two ymm registers, 2 × 3
/// of them per tile (12 of the 16 registers).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    vector_build!("avx2,fma", Avx2Tile, super::TILE_SUPPORT, finish_each);

    mod lanes {
        use std::arch::x86_64::*;

        pub type Lanes = [__m256d; 2];

        #[target_feature(enable = "avx2")]
        #[inline]
        pub fn zero() -> Lanes {
            [_mm256_setzero_pd(); 2]
        }

        /// # Safety
        /// `p` points to 8 readable values.
        #[target_feature(enable = "avx2")]
        #[inline]
        pub unsafe fn load(p: *const f64) -> Lanes {
            // SAFETY: by the caller's contract.
            unsafe { [_mm256_loadu_pd(p), _mm256_loadu_pd(p.add(4))] }
        }

        /// s·x + acc per lane, fused.
        #[target_feature(enable = "avx2,fma")]
        #[inline]
        pub fn add_product(acc: Lanes, s: Lanes, x: Lanes) -> Lanes {
            [
                _mm256_fmadd_pd(s[0], x[0], acc[0]),
                _mm256_fmadd_pd(s[1], x[1], acc[1]),
            ]
        }

        #[target_feature(enable = "avx2")]
        #[inline]
        pub fn spill(v: Lanes) -> [f64; 8] {
            let mut out = [0.0; 8];
            // SAFETY: `out` holds 8 values.
            unsafe {
                _mm256_storeu_pd(out.as_mut_ptr(), v[0]);
                _mm256_storeu_pd(out.as_mut_ptr().add(4), v[1]);
            }
            out
        }
    }
}

/// The portable loops compiled for AVX-512F: 8 partial sums in one zmm register, the same
/// lanes as AVX2's two ymm registers, so the same values; `dot_block`'s tiles are 2 rows × 8
/// support rows (16 of the 32 registers), ended transposed ([`lanes::finish_tile`]).
#[cfg(target_arch = "x86_64")]
mod avx512 {
    vector_build!("avx512f", Avx512Tile, 8, lanes::finish_tile);

    mod lanes {
        use std::arch::x86_64::*;

        pub type Lanes = __m512d;

        #[target_feature(enable = "avx512f")]
        #[inline]
        pub fn zero() -> Lanes {
            _mm512_setzero_pd()
        }

        /// # Safety
        /// `p` points to 8 readable values.
        #[target_feature(enable = "avx512f")]
        #[inline]
        pub unsafe fn load(p: *const f64) -> Lanes {
            // SAFETY: by the caller's contract.
            unsafe { _mm512_loadu_pd(p) }
        }

        /// s·x + acc per lane, fused.
        #[target_feature(enable = "avx512f")]
        #[inline]
        pub fn add_product(acc: Lanes, s: Lanes, x: Lanes) -> Lanes {
            _mm512_fmadd_pd(s, x, acc)
        }

        /// A tile's dot products ended as [`super::super::finish_dot`] ends each: with 8
        /// support rows, a row's 8 dot products at once, in vector operations: their lanes
        /// transposed (lane l of the 8 in one register), the 8 registers added in lane order,
        /// then the tail's products fused in, in order, from the support rows' tails
        /// transposed too. Other tiles one dot product at a time.
        #[target_feature(enable = "avx512f")]
        #[inline]
        pub fn finish_tile<const R: usize, const S: usize>(
            acc: &[[Lanes; S]; R],
            x: &[&[f64]; R],
            s: &[&[f64]; S],
            body: usize,
        ) -> [[f64; S]; R] {
            if S != 8 {
                return super::finish_each(acc, x, s, body);
            }
            let rest = x[0].len() - body;
            let mut tails = [zero(); 8];
            if rest > 0 {
                for (tail, s) in tails.iter_mut().zip(s) {
                    // SAFETY: the `rest` < 8 values from `body` on are in `s`; the masked
                    // load reads no others.
                    *tail = unsafe { _mm512_maskz_loadu_pd((1 << rest) - 1, s.as_ptr().add(body)) };
                }
                tails = transpose(tails);
            }
            let mut sums = [[0.0; S]; R];
            for i in 0..R {
                let mut rows = [zero(); 8];
                for (row, &acc) in rows.iter_mut().zip(&acc[i]) {
                    *row = acc;
                }
                let lanes = transpose(rows);
                let mut sum = lanes[0];
                for &lane in &lanes[1..] {
                    sum = _mm512_add_pd(sum, lane);
                }
                for (t, &tail) in tails[..rest].iter().enumerate() {
                    sum = _mm512_fmadd_pd(tail, _mm512_set1_pd(x[i][body + t]), sum);
                }
                // SAFETY: `sums[i]` holds S = 8 values.
                unsafe { _mm512_storeu_pd(sums[i].as_mut_ptr(), sum) };
            }
            sums
        }

        /// The 8 × 8 transpose: lane j of register l ← lane l of register j.
        #[target_feature(enable = "avx512f")]
        #[inline]
        fn transpose(a: [Lanes; 8]) -> [Lanes; 8] {
            // t[2p + q] holds lanes 2b + q of a[2p] and a[2p + 1] in its 128-bit block b.
            let mut t = [zero(); 8];
            for p in 0..4 {
                t[2 * p] = _mm512_unpacklo_pd(a[2 * p], a[2 * p + 1]);
                t[2 * p + 1] = _mm512_unpackhi_pd(a[2 * p], a[2 * p + 1]);
            }
            // Lane 2b + q of all 8 registers: block b of t[q], t[2 + q], t[4 + q], t[6 + q].
            let mut out = [zero(); 8];
            for q in 0..2 {
                let low = _mm512_shuffle_f64x2::<0x44>(t[q], t[2 + q]);
                let low_too = _mm512_shuffle_f64x2::<0x44>(t[4 + q], t[6 + q]);
                let high = _mm512_shuffle_f64x2::<0xEE>(t[q], t[2 + q]);
                let high_too = _mm512_shuffle_f64x2::<0xEE>(t[4 + q], t[6 + q]);
                out[q] = _mm512_shuffle_f64x2::<0x88>(low, low_too);
                out[2 + q] = _mm512_shuffle_f64x2::<0xDD>(low, low_too);
                out[4 + q] = _mm512_shuffle_f64x2::<0x88>(high, high_too);
                out[6 + q] = _mm512_shuffle_f64x2::<0xDD>(high, high_too);
            }
            out
        }

        #[target_feature(enable = "avx512f")]
        #[inline]
        pub fn spill(v: Lanes) -> [f64; 8] {
            let mut out = [0.0; 8];
            // SAFETY: `out` holds 8 values.
            unsafe { _mm512_storeu_pd(out.as_mut_ptr(), v) };
            out
        }
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
    widest!(product_rows(sigma, dim, rows, x, y));
    product_rows_portable(sigma, dim, rows, x, y);
}

/// Full form: Σ −= H Hᵀ over the rows `rows` (see [`fold_rows_portable`]).
pub(crate) fn fold_rows(sigma: &mut [f64], dim: usize, rows: Range<usize>, pending: &[f64]) {
    widest!(fold_rows(sigma, dim, rows, pending));
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
    widest!(dot_axpy(a, x, s, y));
    dot_axpy_portable(a, x, s, y)
}

/// Dual form: `row` ← `row` − s·h, and − t·w too when `second` = (t, w), elementwise (Π's row
/// update in its sweep). Without a sum, every vector width gives the same values; AVX2 makes it
/// four wide where the baseline build is two wide.
pub(crate) fn subtract_scaled(row: &mut [f64], s: f64, h: &[f64], second: Option<(f64, &[f64])>) {
    widest!(subtract_scaled(row, s, h, second));
    subtract_scaled_portable(row, s, h, second);
}

/// Dual form: a·b.
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    widest!(dot(a, b));
    dot_portable(a, b)
}

/// Dual form: `out[r·stride + t]` = `dot(s_t, x_r)` for the rows x_r of `rows` and s_t of
/// `support` (each `len` > 0 values, row-major), every value bit for bit what [`dot`] gives: the
/// same lanes summed in the same order. Many rows against many support rows at once: each
/// value loaded feeds several products, where `dot` loads two values per product.
pub(crate) fn dot_block(rows: &[f64], support: &[f64], len: usize, out: &mut [f64], stride: usize) {
    widest!(dot_block(rows, support, len, out, stride));
    dot_block_portable(rows, support, len, out, stride);
}

/// The RBF kernel's values from inner products and squared norms, with the crate's own exp
/// ([`crate::covariance::kernel::rbf_in_place_portable`]): the same bits at every width.
pub(crate) fn rbf_in_place(k: &mut [f64], xx: f64, zz: &[f64], gamma: f64) {
    widest!(rbf_in_place(k, xx, zz, gamma));
    crate::covariance::kernel::rbf_in_place_portable(k, xx, zz, gamma);
}

/// Dual form: `out[i]` = k_iᵀMk_i for the vectors k_i in `k` (`n` values each, one per value of
/// `out`) and the symmetric n × n matrix M stored as its packed lower triangle (row p: columns
/// 0..=p), summed as Σ_p k_ip·(M_pp·k_ip + 2·Σ_{q<p} M_pq·k_iq) in increasing p: half the
/// multiply-adds of forming Mk_i, and no stores but the sums. The inner sums go in the tiles of
/// [`dot_block`], 2 vectors × 3 rows of M cut to their common columns 0..p (their few other
/// columns added after), so each value of M loaded feeds two products. Each k_iᵀMk_i has the
/// same bits whatever the number of vectors.
pub(crate) fn quadratic_forms(packed: &[f64], n: usize, k: &[f64], out: &mut [f64]) {
    widest!(quadratic_forms(packed, n, k, out));
    quadratic_forms_tiled::<PortableTile>(packed, n, k, out);
}

#[inline(always)]
fn quadratic_forms_tiled<T: Tile>(packed: &[f64], n: usize, k: &[f64], out: &mut [f64]) {
    assert!(packed.len() == n * (n + 1) / 2 && k.len() == n * out.len());
    out.fill(0.0);
    let mut p = 0;
    while p < n {
        match n - p {
            1 => quadratic_tiles::<T, 1>(packed, n, p, k, out),
            2 => quadratic_tiles::<T, 2>(packed, n, p, k, out),
            _ => quadratic_tiles::<T, TILE_SUPPORT>(packed, n, p, k, out),
        }
        p += TILE_SUPPORT;
    }
}

/// The terms of rows p..p + S of M (packed, n × n) in [`quadratic_forms_tiled`], for every
/// vector.
#[inline(always)]
fn quadratic_tiles<T: Tile, const S: usize>(
    packed: &[f64],
    n: usize,
    p: usize,
    k: &[f64],
    out: &mut [f64],
) {
    let mut rows: [&[f64]; S] = [&[]; S];
    for (j, row) in rows.iter_mut().enumerate() {
        let start = (p + j) * (p + j + 1) / 2;
        *row = &packed[start..=start + p + j];
    }
    let mut common: [&[f64]; S] = [&[]; S];
    for (common, row) in common.iter_mut().zip(&rows) {
        *common = &row[..p];
    }
    let mut i = 0;
    while i < out.len() {
        if i + TILE_ROWS <= out.len() {
            quadratic_tile::<T, TILE_ROWS, S>(&rows, &common, n, p, k, i, out);
            i += TILE_ROWS;
        } else {
            quadratic_tile::<T, 1, S>(&rows, &common, n, p, k, i, out);
            i += 1;
        }
    }
}

#[inline(always)]
fn quadratic_tile<T: Tile, const R: usize, const S: usize>(
    rows: &[&[f64]; S],
    common: &[&[f64]; S],
    n: usize,
    p: usize,
    k: &[f64],
    i: usize,
    out: &mut [f64],
) {
    let mut x: [&[f64]; R] = [&[]; R];
    for (r, x) in x.iter_mut().enumerate() {
        *x = &k[(i + r) * n..(i + r) * n + p];
    }
    let sums = T::tile::<R, S>(&x, common);
    for r in 0..R {
        let k = &k[(i + r) * n..(i + r + 1) * n];
        for (j, row) in rows.iter().enumerate() {
            let q = p + j;
            let mut below = sums[r][j];
            for (&m, &kq) in row[p..q].iter().zip(&k[p..q]) {
                below += m * kq;
            }
            out[i + r] += k[q] * (row[q] * k[q] + 2.0 * below);
        }
    }
}

/// Support rows per pass of [`dot_block_portable`]: about 100 kB at 100 features, so that
/// they stay in the L2 cache while every row meets them.
const SUPPORT_BLOCK: usize = 128;
/// Rows × support rows per tile of the portable and AVX2 builds: 2 × 3 pairs of 8 partial sums
/// fill 12 of the 16 AVX2 registers. (AVX-512's `dot_block` takes 2 × 8.)
const TILE_ROWS: usize = 2;
const TILE_SUPPORT: usize = 3;

/// One tile of [`dot_block`]: the R × S dot products s_j·x_i (all of one length), each summed
/// as [`dot_portable`] does.
trait Tile {
    fn tile<const R: usize, const S: usize>(x: &[&[f64]; R], s: &[&[f64]; S]) -> [[f64; S]; R];
}

struct PortableTile;

impl Tile for PortableTile {
    #[inline(always)]
    fn tile<const R: usize, const S: usize>(x: &[&[f64]; R], s: &[&[f64]; S]) -> [[f64; S]; R] {
        dot_tile(x, s)
    }
}

#[inline(always)]
fn dot_block_portable(rows: &[f64], support: &[f64], len: usize, out: &mut [f64], stride: usize) {
    dot_block_tiled::<PortableTile, TILE_SUPPORT>(rows, support, len, out, stride);
}

/// [`dot_block`] in tiles of [`TILE_ROWS`] rows × S support rows.
#[inline(always)]
fn dot_block_tiled<T: Tile, const S: usize>(
    rows: &[f64],
    support: &[f64],
    len: usize,
    out: &mut [f64],
    stride: usize,
) {
    let (n_rows, n_support) = (rows.len() / len, support.len() / len);
    for block in (0..n_support).step_by(SUPPORT_BLOCK) {
        let block_end = n_support.min(block + SUPPORT_BLOCK);
        let mut r = 0;
        while r < n_rows {
            if r + TILE_ROWS <= n_rows {
                tiles::<T, TILE_ROWS, S>(rows, support, len, r, block..block_end, out, stride);
                r += TILE_ROWS;
            } else {
                tiles::<T, 1, S>(rows, support, len, r, block..block_end, out, stride);
                r += 1;
            }
        }
    }
}

/// [`Tile::tile`] over rows `r..r + R` and the support rows `block`. (Plain loops: closures
/// such as `array::from_fn`'s were left out of line in the AVX2 build.)
#[inline(always)]
fn tiles<T: Tile, const R: usize, const S: usize>(
    rows: &[f64],
    support: &[f64],
    len: usize,
    r: usize,
    block: Range<usize>,
    out: &mut [f64],
    stride: usize,
) {
    let mut x: [&[f64]; R] = [&[]; R];
    for (i, x) in x.iter_mut().enumerate() {
        *x = &rows[(r + i) * len..(r + i + 1) * len];
    }
    let mut t = block.start;
    while t < block.end {
        if t + S <= block.end {
            let mut s: [&[f64]; S] = [&[]; S];
            for (j, s) in s.iter_mut().enumerate() {
                *s = &support[(t + j) * len..(t + j + 1) * len];
            }
            store(T::tile::<R, S>(&x, &s), r, t, out, stride);
            t += S;
        } else {
            let s = [&support[t * len..(t + 1) * len]];
            store(T::tile::<R, 1>(&x, &s), r, t, out, stride);
            t += 1;
        }
    }
}

#[inline(always)]
fn store<const R: usize, const S: usize>(
    values: [[f64; S]; R],
    r: usize,
    t: usize,
    out: &mut [f64],
    stride: usize,
) {
    for (i, row) in values.iter().enumerate() {
        out[(r + i) * stride + t..][..S].copy_from_slice(row);
    }
}

/// [`Tile::tile`], portably.
#[inline(always)]
fn dot_tile<const R: usize, const S: usize>(x: &[&[f64]; R], s: &[&[f64]; S]) -> [[f64; S]; R] {
    let n = x[0].len();
    let body = n - n % LANES;
    let mut acc = [[[0.0; LANES]; S]; R];
    for k in (0..body).step_by(LANES) {
        for (acc, x) in acc.iter_mut().zip(x) {
            let x: &[f64; LANES] = x[k..k + LANES].try_into().unwrap();
            for (acc, s) in acc.iter_mut().zip(s) {
                let s: &[f64; LANES] = s[k..k + LANES].try_into().unwrap();
                for l in 0..LANES {
                    acc[l] = s[l].mul_add(x[l], acc[l]);
                }
            }
        }
    }
    let mut sums = [[0.0; S]; R];
    for i in 0..R {
        for j in 0..S {
            sums[i][j] = finish_dot(&acc[i][j], s[j], x[i], body);
        }
    }
    sums
}

/// The end of [`dot_portable`]: the lanes' partial sums added in lane order, then the products
/// a_k·b_k over `from..` fused in, in order.
#[inline(always)]
fn finish_dot(acc: &[f64; LANES], a: &[f64], b: &[f64], from: usize) -> f64 {
    let sum = lane_sum(acc);
    a[from..]
        .iter()
        .zip(&b[from..])
        .fold(sum, |sum, (a, b)| a.mul_add(*b, sum))
}

/// lane 0 + lane 1 + … + lane 7, in that order.
#[inline(always)]
fn lane_sum(acc: &[f64; LANES]) -> f64 {
    acc[1..].iter().fold(acc[0], |sum, lane| sum + lane)
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
            acc[i] = a[i].mul_add(x[i], acc[i]);
            y[i] = s.mul_add(a[i], y[i]);
        }
    }
    // As `finish_dot`, with the tail's updates of y.
    let mut sum = lane_sum(&acc);
    for ((a, x), y) in a_tail.iter().zip(x_tail).zip(y_tail) {
        sum = a.mul_add(*x, sum);
        *y = s.mul_add(*a, *y);
    }
    sum
}

#[inline(always)]
fn subtract_scaled_portable(row: &mut [f64], s: f64, h: &[f64], second: Option<(f64, &[f64])>) {
    match second {
        None => row.iter_mut().zip(h).for_each(|(m, &hq)| *m -= s * hq),
        Some((t, w)) => row
            .iter_mut()
            .zip(h)
            .zip(w)
            .for_each(|((m, &hq), &wq)| *m = *m - s * hq - t * wq),
    }
}

#[inline(always)]
fn dot_portable(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len();
    let body = n - n % LANES;
    let mut acc = [0.0; LANES];
    for (a, b) in a[..body]
        .chunks_exact(LANES)
        .zip(b[..body].chunks_exact(LANES))
    {
        for i in 0..LANES {
            acc[i] = a[i].mul_add(b[i], acc[i]);
        }
    }
    finish_dot(&acc, a, &b[..n], body)
}

#[cfg(test)]
mod tests;
