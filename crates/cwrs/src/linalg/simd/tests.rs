//! The dispatched (AVX-512 or AVX2 where the CPU has it) and portable builds of the dual form's
//! loops and of exp give the same bits, on lengths with and without a vector tail.

use super::*;

/// Values in (−1, 1) from xorshift64.
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut next = crate::test_rng::uniform(seed);
    (0..n).map(|_| next()).collect()
}

#[test]
fn quadratic_forms_match_the_portable_build_and_the_math() {
    for n in [0, 1, 2, 3, 4, 7, 8, 9, 17, 40] {
        for count in 1..=5 {
            let packed = values(n * (n + 1) / 2, 0x9E37_79B9_7F4A_7C15 + n as u64);
            let k = values(n * count, 0x2545_F491_4F6C_DD1D + count as u64);
            let (mut dispatched, mut portable) = (vec![0.0; count], vec![0.0; count]);
            quadratic_forms(&packed, n, &k, &mut dispatched);
            quadratic_forms_tiled::<PortableTile>(&packed, n, &k, &mut portable);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&dispatched),
                bits(&portable),
                "n = {n}, {count} vectors"
            );
            for (i, &q) in dispatched.iter().enumerate() {
                let k = &k[i * n..(i + 1) * n];
                let entry = |p: usize, q: usize| packed[p.max(q) * (p.max(q) + 1) / 2 + p.min(q)];
                let (mut exact, mut scale) = (0.0, 0.0);
                for p in 0..n {
                    for r in 0..n {
                        exact += k[p] * entry(p, r) * k[r];
                        scale += (k[p] * entry(p, r) * k[r]).abs();
                    }
                }
                assert!((q - exact).abs() <= 4.0 * n as f64 * f64::EPSILON * scale);
            }
            // Alone, each vector gives the same bits as in the batch.
            for (i, &q) in dispatched.iter().enumerate() {
                let mut alone = [0.0];
                quadratic_forms(&packed, n, &k[i * n..(i + 1) * n], &mut alone);
                assert_eq!(alone[0].to_bits(), q.to_bits());
            }
        }
    }
}

#[test]
fn the_row_update_matches_the_portable_build() {
    for n in [0, 1, 3, 4, 5, 8, 13, 33] {
        let (h, w, row) = (values(n, 1), values(n, 2), values(n, 3));
        let s = -1.25;
        for second in [None, Some((0.37, &w[..]))] {
            let (mut dispatched, mut portable) = (row.clone(), row.clone());
            subtract_scaled(&mut dispatched, s, &h, second);
            subtract_scaled_portable(&mut portable, s, &h, second);
            assert_eq!(dispatched, portable);
            let expected: Vec<f64> = (0..n)
                .map(|q| {
                    let m = row[q] - s * h[q];
                    second.map_or(m, |(t, w)| m - t * w[q])
                })
                .collect();
            assert_eq!(dispatched, expected);
        }
    }
}

/// Every vector build this CPU has gives the portable loops' bits (tolerance 0), on lengths
/// with and without a vector tail and on tiles cut at every edge.
macro_rules! width_matches_the_portable_build {
    ($test:ident, $build:ident, $detect:ident) => {
        #[cfg(target_arch = "x86_64")]
        #[test]
        fn $test() {
            if !$detect() {
                return;
            }
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            for len in [1, 3, 7, 8, 9, 16, 17, 100] {
                for (n_rows, n_support) in [(1, 1), (2, 3), (3, 4), (5, 7), (3, 17), (4, 130)] {
                    let rows = values(n_rows * len, 0x5EED + len as u64);
                    let support = values(n_support * len, 0xFACE + n_support as u64);
                    let stride = n_support + 2;
                    let (mut vector, mut portable) =
                        (vec![0.0; n_rows * stride], vec![0.0; n_rows * stride]);
                    // SAFETY: the CPU has the feature, checked above.
                    unsafe { $build::dot_block(&rows, &support, len, &mut vector, stride) };
                    dot_block_portable(&rows, &support, len, &mut portable, stride);
                    assert_eq!(
                        bits(&vector),
                        bits(&portable),
                        "{len} × {n_rows} × {n_support}"
                    );
                    // Each value is `dot`'s, bit for bit.
                    for (r, x) in rows.chunks_exact(len).enumerate() {
                        for (t, s) in support.chunks_exact(len).enumerate() {
                            let one = dot_portable(s, x).to_bits();
                            assert_eq!(vector[r * stride + t].to_bits(), one, "{len}: {r}, {t}");
                        }
                    }
                }
                let (a, x, y) = (values(len, 1), values(len, 2), values(len, 3));
                // SAFETY: as above.
                let vector = unsafe { $build::dot(&a, &x) };
                assert_eq!(vector.to_bits(), dot_portable(&a, &x).to_bits());
                let (mut y_vector, mut y_portable) = (y.clone(), y.clone());
                // SAFETY: as above.
                let vector = unsafe { $build::dot_axpy(&a, &x, -0.7, &mut y_vector) };
                let portable = dot_axpy_portable(&a, &x, -0.7, &mut y_portable);
                assert_eq!(vector.to_bits(), portable.to_bits());
                assert_eq!(bits(&y_vector), bits(&y_portable));
            }
            // With ‖x‖² = ‖z‖² = 0 and γ = 1 the exponent is 2·k_p, so k_p = x/2 asks for
            // exp(x): the exp's range, its edges, a negative distance (clamped to 0), NaN.
            let mut next = crate::test_rng::uniform(0xE4B);
            let mut k: Vec<f64> = (0..1003).map(|_| (750.0 * next() - 720.0) / 2.0).collect();
            k.extend([
                0.0,
                -0.0,
                -372.6,
                f64::NEG_INFINITY,
                f64::NAN,
                400.0,
                f64::INFINITY,
            ]);
            let zz = vec![0.0; k.len()];
            for len in [0, 1, 7, 8, 9, k.len()] {
                let (mut vector, mut portable) = (k[..len].to_vec(), k[..len].to_vec());
                // SAFETY: as above.
                unsafe { $build::rbf_in_place(&mut vector, 0.0, &zz[..len], 1.0) };
                crate::covariance::kernel::rbf_in_place_portable(
                    &mut portable,
                    0.0,
                    &zz[..len],
                    1.0,
                );
                assert_eq!(bits(&vector), bits(&portable));
            }
            // An overflowed ‖x‖²: ∞ − ∞ is infinitely far, k = 0.
            let mut overflowed = [f64::INFINITY; 9];
            // SAFETY: as above.
            unsafe { $build::rbf_in_place(&mut overflowed, f64::INFINITY, &[1.0; 9], 0.5) };
            assert_eq!(overflowed, [0.0; 9]);
            for n in [1, 2, 3, 8, 9, 17, 40] {
                let packed = values(n * (n + 1) / 2, 7 + n as u64);
                let k = values(n * 5, 11 + n as u64);
                let (mut vector, mut portable) = ([0.0; 5], [0.0; 5]);
                // SAFETY: as above.
                unsafe { $build::quadratic_forms(&packed, n, &k, &mut vector) };
                quadratic_forms_tiled::<PortableTile>(&packed, n, &k, &mut portable);
                assert_eq!(bits(&vector), bits(&portable), "n = {n}");
            }
        }
    };
}

width_matches_the_portable_build!(the_avx2_build_matches_the_portable_one, avx2, has_avx2_fma);
width_matches_the_portable_build!(
    the_avx512_build_matches_the_portable_one,
    avx512,
    has_avx512f
);
