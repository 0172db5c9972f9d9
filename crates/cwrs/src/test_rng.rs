//! The tests' one pseudo-random source, so they need no dependency.

/// Uniform numbers in [-1, 1) from a xorshift64 generator started at `seed`.
pub fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}
