//! The crate's own exp, for the RBF kernel's values (docs/design.md §3.4.1): arithmetic only
//! (fused multiply-adds and integer bit operations, no table), so that a loop over a slice
//! vectorizes, and every build — portable, AVX2, AVX-512 ([`crate::linalg::simd::rbf_in_place`]) —
//! computes the same operations and gives the same bits. Within 1 ulp of the correctly rounded
//! value, subnormal results included (`linalg/exp/tests.rs` checks it against a double-double
//! reference); glibc's `exp`, one value per call, was a third of kernel prediction's time.

/// log2(e).
const LOG2E: f64 = std::f64::consts::LOG2_E;
/// ln 2 as the double nearest to it plus the rest: x − k·ln 2 in two fused steps.
const LN2_HI: f64 = std::f64::consts::LN_2;
const LN2_LO: f64 = 2.319_046_813_846_299_6e-17;
/// 1.5·2^52: adding it rounds a double below 2^51 in magnitude to an integer, which is then
/// the low bits of the sum's representation (no float-to-integer conversion, which AVX2 and
/// AVX-512F do not have for 64-bit integers).
const SHIFT: f64 = 6_755_399_441_055_744.0;
/// Beyond these, exp is 0 (below 2^−1075, half the smallest subnormal) or +∞; clamping keeps
/// k in the range the two-step scaling below represents.
const LOWEST: f64 = -746.0;
const HIGHEST: f64 = 710.0;
/// 1/n! for n = 13 down to 2: the Taylor series of (exp(r) − 1 − r)/r²; the terms left out add
/// less than 5·10^−18 to exp(r) for |r| ≤ ln(2)/2.
const TAYLOR: [f64; 12] = [
    1.0 / 6_227_020_800.0,
    1.0 / 479_001_600.0,
    1.0 / 39_916_800.0,
    1.0 / 3_628_800.0,
    1.0 / 362_880.0,
    1.0 / 40_320.0,
    1.0 / 5_040.0,
    1.0 / 720.0,
    1.0 / 120.0,
    1.0 / 24.0,
    1.0 / 6.0,
    0.5,
];

/// Every value v ← exp(v). Inlined into each vector build of [`crate::linalg::simd`], where the loop
/// vectorizes; on a CPU without FMA, `mul_add` calls libm's correctly rounded `fma` (slow, the
/// same bits).
#[inline(always)]
pub(crate) fn exp_in_place_portable(values: &mut [f64]) {
    for v in values {
        *v = exp(*v);
    }
}

/// exp(x) = 2^k·exp(r) with k = round(x·log2 e) and |r| ≤ ln(2)/2 (about). NaN stays NaN.
#[inline(always)]
fn exp(x: f64) -> f64 {
    // `clamp` (comparisons, unlike `max` and `min`) keeps NaN.
    let x = x.clamp(LOWEST, HIGHEST);
    let shifted = x.mul_add(LOG2E, SHIFT);
    let k = shifted - SHIFT;
    // Exact (Cody and Waite): below 1/2 in magnitude, with no bits finer than x's or k·LN2_HI's.
    let r = (-k).mul_add(LN2_HI, x);
    let r = (-k).mul_add(LN2_LO, r);
    let mut s = TAYLOR[0];
    for &c in &TAYLOR[1..] {
        s = s.mul_add(r, c);
    }
    // 1 + (r + r²·s): the last add rounds once, its small term carries the rest.
    let p = 1.0 + (r * r).mul_add(s, r);
    // 2^k as 2^⌊k/2⌋·2^⌈k/2⌉, both normal for every k of the clamped range, so that a
    // subnormal result is rounded once, by the second product. The biased exponents come from
    // `shifted`'s low bits: k + 2046 = bits(shifted) − bits(SHIFT) + 2046 ≥ 0.
    let biased = shifted
        .to_bits()
        .wrapping_sub(SHIFT.to_bits())
        .wrapping_add(2046);
    let low = biased >> 1;
    let high = biased - low;
    p * f64::from_bits(low << 52) * f64::from_bits(high << 52)
}

#[cfg(test)]
mod tests;
