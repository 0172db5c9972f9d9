use super::{
    block_length, fold_rows_portable, mirror_portable, plain_fold, plain_product,
    product_rows_portable, Full, FULL_VARIANCE_FLOOR, LANES, MAX_BLOCK, PLAIN_ORDER,
    RELATIVE_VARIANCE_FLOOR,
};
use crate::covariance::{Covariance, PrimalForm};
use crate::data::Shape;
use crate::rules::sherman_morrison_factor;
use crate::{CovarianceKind, Learner, Matrix, Presentation, Row, Rule};

/// Uniform numbers in [-1, 1) from a xorshift generator.
fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// Whether a symmetric Σ is positive definite: the Cholesky factorisation of its diagonally
/// scaled form D^-½ Σ D^-½ (a congruence, so the same inertia, and free of the scale of Σ)
/// has positive pivots.
fn positive_definite(sigma: &[f64], d: usize) -> bool {
    let root: Vec<f64> = (0..d).map(|i| sigma[i * d + i].sqrt()).collect();
    if root.iter().any(|r| !(*r > 0.0 && r.is_finite())) {
        return false;
    }
    let mut l: Vec<f64> = (0..d * d)
        .map(|k| sigma[k] / root[k / d] / root[k % d])
        .collect();
    for j in 0..d {
        let pivot = l[j * d + j] - (0..j).map(|k| l[j * d + k] * l[j * d + k]).sum::<f64>();
        if pivot.is_nan() || pivot <= 0.0 {
            return false;
        }
        l[j * d + j] = pivot.sqrt();
        for i in j + 1..d {
            let t = l[i * d + j] - (0..j).map(|k| l[i * d + k] * l[j * d + k]).sum::<f64>();
            l[i * d + j] = t / l[j * d + j];
        }
    }
    true
}

fn symmetric(sigma: &[f64], d: usize) -> bool {
    (0..d).all(|i| (0..i).all(|j| sigma[i * d + j] == sigma[j * d + i]))
}

/// On ordinary data the safeguards of the full form never bind: the guarded factor is the
/// Sherman–Morrison factor, bit for bit, on every update of a long stream.
#[test]
fn guards_do_not_bind_on_ordinary_data() {
    for (d, c) in [(6, 1.0), (6, 100.0), (40, 0.5)] {
        let shape = Shape::new(d, false).unwrap();
        let mut full = Full::new(CovarianceKind::Full, shape, 1.0);
        let mut next = uniform(0x9E37_79B9_7F4A_7C15 + d as u64);
        for _ in 0..3000 {
            let x: Vec<f64> = (0..d).map(|_| next() * 3.0).collect();
            let (v, _) = full.prepare(Row::Dense(&x));
            let guarded = full.guarded_factor(&full.x, &full.sigma_x, c, v);
            assert_eq!(guarded, sherman_morrison_factor(c, v), "d = {d}, c = {c}");
            full.update(Row::Dense(&x), 0.1 * next(), c, v, 0.0);
        }
        let sigma = full.values();
        assert!(symmetric(&sigma, d) && positive_definite(&sigma, d));
    }
}

/// An infinite precision gain (an ExactCW collapse) leaves the variance along x at the
/// relative floor τ·q instead of at rounding noise, and Σ positive definite.
#[test]
fn guards_cap_a_collapsing_step() {
    let shape = Shape::new(3, false).unwrap();
    let x = [1.0, 2.0, -3.0];
    let mut full = Full::new(CovarianceKind::Full, shape, 1.0);
    let (v, _) = full.prepare(Row::Dense(&x));
    full.update(Row::Dense(&x), 0.0, f64::INFINITY, v, 0.0);
    let (after, _) = full.prepare(Row::Dense(&x));
    let q = 14.0; // Σ_j Σ_jj x_j² before the step
    let expected = RELATIVE_VARIANCE_FLOOR * q;
    assert!(
        (after - expected).abs() < 1e-3 * expected,
        "{after:e} vs {expected:e}"
    );
    assert!(positive_definite(&full.values(), 3));
}

/// AROW on rows of size ~1e150 (c·v ~ 1e300), exactly collinear ones, and rows mixing
/// 1e150 with 1e-150: the plain Sherman–Morrison update loses positive definiteness within
/// ten rows; the guarded one keeps Σ symmetric, positive definite, with its diagonal above
/// the floor, and batch = row by row still holds bit for bit (also with pending terms).
#[test]
fn guards_keep_sigma_positive_definite_at_extreme_scales() {
    let mut next = uniform(0x2545_F491_4F6C_DD1D);
    for d in [5, 40] {
        let n = if d < 32 { 3000 } else { 600 };
        let pattern: Vec<f64> = (0..d).map(|j| [1.0, 2.0, -1.0, 0.5][j % 4]).collect();
        let scales: Vec<f64> = (0..d).map(|j| [1e150, 1e-150, 1.0][j % 3]).collect();
        for name in ["huge", "collinear huge", "mixed"] {
            let mut row = || -> Vec<f64> {
                match name {
                    "huge" => (0..d).map(|_| next() * 1e150).collect(),
                    "collinear huge" => {
                        let z = next() * 1e150;
                        pattern.iter().map(|p| p * z).collect()
                    }
                    _ => scales.iter().map(|s| s * next()).collect(),
                }
            };
            let x: Vec<f64> = (0..n).flat_map(|_| row()).collect();
            let y: Vec<f64> = (0..n)
                .map(|_| if next() < 0.0 { 1.0 } else { -1.0 })
                .collect();
            if name != "collinear huge" {
                // (On collinear rows the plain update leaves rounding noise of either sign
                // along the collapsed direction, so its failure is not certain there.)
                let (_, plain) = plain_arow(&x[..10 * d], &y[..10], d, 1.0);
                assert!(
                    !positive_definite(&plain, d),
                    "{name}: the plain update is PD"
                );
            }
            let model = learn_batch_and_rows(Rule::from_name("AROW", &[]).unwrap(), &x, &y);
            let sigma = model.covariance();
            assert!(sigma
                .iter()
                .chain(model.mean().iter())
                .all(|s| s.is_finite()));
            assert!(symmetric(&sigma, d), "{name}, d = {d}");
            assert!(positive_definite(&sigma, d), "{name}, d = {d}: {sigma:?}");
            for i in 0..d {
                assert!(
                    sigma[i * d + i] >= 0.999 * FULL_VARIANCE_FLOOR,
                    "{name}, d = {d}"
                );
            }
        }
    }
}

/// A full-covariance learner after the rows of `x` (`y.len()` of them) as one batch, checked
/// to be bit for bit the learner after them row by row (folds come every block of updates
/// either way).
fn learn_batch_and_rows(rule: Rule, x: &[f64], y: &[f64]) -> Learner {
    let (n, d) = (y.len(), x.len() / y.len());
    let mut model = Learner::new(rule, CovarianceKind::Full, d, false, 1.0).unwrap();
    let matrix = Matrix::Dense {
        values: x,
        n_rows: n,
        n_cols: d,
    };
    model
        .partial_fit(&matrix, y, Presentation::default())
        .unwrap();
    let mut single = Learner::new(rule, CovarianceKind::Full, d, false, 1.0).unwrap();
    for (row, &label) in x.chunks_exact(d).zip(y) {
        single.learn(Row::Dense(row), label).unwrap();
    }
    assert_eq!(model, single, "d = {d}");
    model
}

/// AROW with the plain Sherman–Morrison update, one row at a time, on a dense Σ.
fn plain_arow(x: &[f64], y: &[f64], d: usize, r: f64) -> (Vec<f64>, Vec<f64>) {
    let (mut mean, mut sigma) = (vec![0.0; d], vec![0.0; d * d]);
    (0..d).for_each(|i| sigma[i * d + i] = 1.0);
    for (row, &label) in x.chunks_exact(d).zip(y) {
        let sx: Vec<f64> = (0..d)
            .map(|i| (0..d).map(|j| sigma[i * d + j] * row[j]).sum())
            .collect();
        let v: f64 = row.iter().zip(&sx).map(|(a, b)| a * b).sum();
        let m = label * row.iter().zip(&mean).map(|(a, b)| a * b).sum::<f64>();
        if m < 1.0 {
            let beta = 1.0 / (v + r);
            let alpha = (1.0 - m) * beta;
            mean.iter_mut()
                .zip(&sx)
                .for_each(|(w, s)| *w += alpha * label * s);
            for i in 0..d {
                for j in 0..d {
                    sigma[i * d + j] -= beta * sx[i] * sx[j];
                }
            }
        }
    }
    (mean, sigma)
}

fn max_relative_error(got: &[f64], want: &[f64]) -> f64 {
    let scale = want.iter().fold(0.0f64, |m, w| m.max(w.abs()));
    got.iter()
        .zip(want)
        .fold(0.0, |m, (g, w)| m.max((g - w).abs() / scale))
}

/// Blocks of rows (both cores from d = 256 on, tiles with remainders, sparse rows, folds in
/// the middle of a block) equal the plain update to 1e-9 relative, and Σ stays exactly
/// symmetric.
#[test]
fn blocks_equal_the_plain_update() {
    for (d, n, density) in [(7, 200, 1.0), (45, 150, 0.2), (258, 100, 1.0)] {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let x: Vec<f64> = (0..n * d)
            .map(|_| {
                let value = next() * 2.0 - 1.0;
                if next() < density {
                    value
                } else {
                    0.0
                }
            })
            .collect();
        let y: Vec<f64> = (0..n)
            .map(|_| if next() < 0.5 { 1.0 } else { -1.0 })
            .collect();
        let model = learn_batch_and_rows(Rule::from_name("AROW", &[("r", 0.5)]).unwrap(), &x, &y);
        assert!(model.n_updates() > 2 * MAX_BLOCK as u64, "d = {d}");
        let (mean, sigma) = plain_arow(&x, &y, d, 0.5);
        assert!(max_relative_error(&model.mean(), &mean) < 1e-9, "d = {d}");
        let covariance = model.covariance();
        assert!(max_relative_error(&covariance, &sigma) < 1e-9, "d = {d}");
        for i in 0..d {
            for j in 0..i {
                assert_eq!(covariance[i * d + j], covariance[j * d + i]);
            }
        }
    }
}

/// A random symmetric matrix of order d and `terms` random vectors of d values.
fn symmetric_and_terms(d: usize, terms: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut next = uniform(seed);
    let mut sigma = vec![0.0; d * d];
    for i in 0..d {
        for j in i..d {
            let value = next() + if i == j { 4.0 } else { 0.0 };
            (sigma[i * d + j], sigma[j * d + i]) = (value, value);
        }
    }
    (sigma, (0..terms * d).map(|_| next()).collect())
}

/// The plain loops of small orders give the tiled loops' bits: Σx, and Σ − HHᵀ folded then
/// mirrored.
#[test]
fn plain_loops_equal_the_tiles_bit_for_bit() {
    for d in [1, 2, 3, 4, 5, 8, 16, 31] {
        assert!(d < PLAIN_ORDER);
        for terms in [1, 3] {
            let (sigma, pending) = symmetric_and_terms(d, terms, 17 + d as u64);
            let x = &pending[..d];
            let mut tiled = vec![[0.0; 1]; d];
            product_rows_portable::<1>(&sigma, d, 0..d, x.as_chunks().0, &mut [&mut tiled[..]]);
            let mut plain = vec![0.0; d];
            plain_product(&sigma, d, x, &mut plain);
            assert_eq!(plain, tiled.as_flattened(), "Σx, d = {d}");
            let mut folded = sigma.clone();
            fold_rows_portable(&mut folded, d, 0..d, &pending);
            mirror_portable(&mut folded, d);
            let mut plain = sigma.clone();
            plain_fold(&mut plain, d, &pending);
            assert_eq!(plain, folded, "fold, d = {d}, {terms} terms");
        }
    }
}

/// A block holds at most the rows that can update before the next fold, rounded up to a
/// whole group of lanes, and at least one row.
#[test]
fn block_lengths_end_at_the_next_fold() {
    assert_eq!(block_length(32, 0), 32);
    assert_eq!(block_length(32, 29), LANES);
    assert_eq!(block_length(32, 31), 1);
    assert_eq!(block_length(32, 32), 1);
    assert_eq!(block_length(32, 40), 1);
    assert_eq!(block_length(32, 20), 16);
    assert_eq!(block_length(5, 0), 5);
    assert_eq!(block_length(1, 0), 1);
}

/// With rounds that do not update (large margins), the blocks shorten towards the next fold:
/// still bit for bit the rows learned one by one, and the plain update to 1e-9.
#[test]
fn blocks_with_rounds_without_updates_equal_rows() {
    for d in [40, 100] {
        let n = 400;
        let mut next = uniform(0xC0FF_EE00 + d as u64);
        let w: Vec<f64> = (0..d).map(|_| next()).collect();
        let x: Vec<f64> = (0..n * d).map(|_| next() * 2.0).collect();
        let y: Vec<f64> = x
            .chunks_exact(d)
            .map(|row| row.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>().signum())
            .collect();
        let model = learn_batch_and_rows(Rule::from_name("AROW", &[("r", 0.1)]).unwrap(), &x, &y);
        let updates = model.n_updates();
        assert!(
            updates > 2 * MAX_BLOCK as u64 && updates < n as u64 * 3 / 4,
            "d = {d}"
        );
        let (mean, sigma) = plain_arow(&x, &y, d, 0.1);
        assert!(max_relative_error(&model.mean(), &mean) < 1e-9, "d = {d}");
        assert!(
            max_relative_error(&model.covariance(), &sigma) < 1e-9,
            "d = {d}"
        );
    }
}

/// The mirror copies the upper triangle down exactly, on every path (4×4 blocks in registers,
/// remainders, block edges), and leaves the upper triangle and the diagonal alone.
#[test]
fn mirror_copies_the_upper_triangle_down() {
    for d in [1, 3, 4, 5, 8, 31, 32, 33, 37, 64, 70, 100] {
        let mut next = uniform(99 + d as u64);
        let upper: Vec<f64> = (0..d * d).map(|_| next()).collect();
        let want: Vec<f64> = (0..d * d)
            .map(|k| {
                let (i, j) = (k / d, k % d);
                upper[i.min(j) * d + i.max(j)]
            })
            .collect();
        let mut portable = upper.clone();
        mirror_portable(&mut portable, d);
        assert_eq!(portable, want, "portable, d = {d}");
        let mut dispatched = upper.clone();
        crate::linalg::simd::mirror(&mut dispatched, d);
        assert_eq!(dispatched, want, "dispatched, d = {d}");
    }
}

/// xᵀΣy against the dense Σ with pending terms (d = 40 folds every 5 updates), and with
/// process noise and a growth (g) pending too, with and without a bias feature.
#[test]
fn cross_variances_equal_the_dense_reference() {
    use crate::covariance::cross_checks::{check_cross_variances, learn_random_rows};
    for fit_intercept in [false, true] {
        let shape = Shape::new(39, fit_intercept).unwrap();
        let mut learned = Full::new(CovarianceKind::Full, shape, 0.8);
        learn_random_rows(&mut learned, 43, 11);
        assert!(learned.pending_terms().is_some());
        let mut noisy = Full::new(CovarianceKind::Full, shape, 0.8);
        noisy.set_process_noise(0.03).unwrap();
        learn_random_rows(&mut noisy, 42, 12);
        noisy.grow_covariance(0.2).unwrap();
        assert!(noisy.pending_terms().is_some() && noisy.growth != 0.0);
        check_cross_variances(&learned, 0.0, false);
        check_cross_variances(&noisy, 0.03, false);
    }
}
