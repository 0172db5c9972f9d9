//! Exact power-of-two scaling and an overflow-free √(a² + w) (safeguards 2 and 3 of the module
//! doc of `crate::rules`).

/// 2^k for k in the normal exponent range, exactly.
pub(super) const fn pow2(k: i32) -> f64 {
    f64::from_bits(((1023 + k) as u64) << 52)
}

/// The power of two λ = 2^-j with λ²·x in [1, 4), and 1/λ = 2^j, for a positive normal x: the
/// exact scale that brings a variance near 1 (safeguard 3 of the module doc).
#[inline]
pub(super) fn unit_scale(x: f64) -> (f64, f64) {
    let exponent = ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let j = exponent.div_euclid(2);
    (pow2(-j), pow2(j))
}

/// √(a² + w) for w ≥ 0 (safeguard 2 of the module doc): the plain expression where a² can
/// neither overflow nor underflow against w, else the same after an exact power-of-two
/// rescaling of a and w, so that it stays finite and accurate for |a|, w up to f64::MAX.
#[inline]
pub(super) fn sqrt_sq_plus(a: f64, w: f64) -> f64 {
    let x = a.abs();
    if x < pow2(500) && w < pow2(1000) && (x > pow2(-480) || w > pow2(-960)) {
        return (a * a + w).sqrt();
    }
    let t = x.max(w.sqrt());
    if t == 0.0 || !t.is_finite() {
        return (a * a + w).sqrt();
    }
    let e = ((t.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let e = e.clamp(-1000, 1000);
    let s = pow2(-e);
    let (xs, ws) = (x * s, w * s * s);
    (xs * xs + ws).sqrt() * pow2(e)
}
