//! Feature hashing: MurmurHash3 (x86, 32-bit), the hash scikit-learn's `FeatureHasher` uses, so
//! the same tokens land in the same columns with the same signs in both libraries.

/// MurmurHash3_x86_32 of `key` with `seed`.
pub fn murmur3_32(key: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mix = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mut h = seed;
    let blocks = key.chunks_exact(4);
    let tail = blocks.remainder();
    for block in blocks {
        h ^= mix(u32::from_le_bytes([block[0], block[1], block[2], block[3]]));
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    if !tail.is_empty() {
        let k = tail
            .iter()
            .rev()
            .fold(0u32, |k, &b| (k << 8) | u32::from(b));
        h ^= mix(k);
    }
    h ^= key.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The column (in `0..n_features`) and sign (±1) of a token, as scikit-learn computes them:
/// the hash read as a signed 32-bit integer h, column |h| mod n_features, sign of h.
pub fn hashed_column(token: &[u8], n_features: u32) -> (u32, f64) {
    let h = murmur3_32(token, 0) as i32;
    let column = (i64::from(h).unsigned_abs() % u64::from(n_features)) as u32;
    (column, if h < 0 { -1.0 } else { 1.0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_murmur3_values() {
        // Reference values of MurmurHash3_x86_32.
        assert_eq!(murmur3_32(b"", 0), 0);
        assert_eq!(murmur3_32(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3_32(b"hello", 0), 0x248b_fa47);
        assert_eq!(murmur3_32(b"Hello, world!", 1234), 0xfaf6_cdb3);
        assert_eq!(
            murmur3_32(b"The quick brown fox jumps over the lazy dog", 0x9747_b28c),
            0x2fa8_26cd
        );
    }
}
