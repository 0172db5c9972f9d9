use super::{symmetric_eigen, LowRank};
use crate::covariance::{Covariance, CovarianceKind, Full, PrimalForm};
use crate::data::{Row, Shape};

/// A deterministic uniform stream in [-1, 1) (xorshift).
fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed | 1;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

fn pair(d: usize, rank: usize, a: f64) -> (LowRank, Full) {
    let shape = Shape::new(d, true).unwrap();
    let kind = CovarianceKind::LowRank { rank };
    (
        LowRank::new(kind, shape, a),
        Full::new(CovarianceKind::Full, shape, a),
    )
}

/// Rows with correlated features (a few latent factors), some sparse.
fn rows(d: usize, n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut next = uniform(seed);
    let loadings: Vec<f64> = (0..3 * d).map(|_| next()).collect();
    (0..n)
        .map(|_| {
            let z = [next(), next(), next()];
            (0..d)
                .map(|j| (0..3).map(|f| loadings[f * d + j] * z[f]).sum::<f64>() + 0.1 * next())
                .collect()
        })
        .collect()
}

/// Checks the eigen-decomposition of the symmetric n×n `a`: eigenvalues descending, rows of
/// `vectors` orthonormal, and Σ_r λ_r·u_r u_rᵀ = a, to `tol` relative to a's largest entry.
fn check_eigen(a: &[f64], n: usize) {
    let mut vectors = vec![0.0; n * n];
    let values = symmetric_eigen(a, &mut vectors, n);
    let tol = 1e-13 * a.iter().fold(1.0f64, |m, x| m.max(x.abs())) * n as f64;
    assert!(values.windows(2).all(|w| w[0] >= w[1]));
    for i in 0..n {
        for j in 0..n {
            let rebuilt: f64 = (0..n)
                .map(|r| vectors[r * n + i] * values[r] * vectors[r * n + j])
                .sum();
            let orthogonal: f64 = (0..n)
                .map(|t| vectors[i * n + t] * vectors[j * n + t])
                .sum();
            assert!((rebuilt - a[i * n + j]).abs() < tol, "{i} {j}: {rebuilt}");
            assert!((orthogonal - f64::from(u8::from(i == j))).abs() < 1e-13);
        }
    }
}

#[test]
fn the_eigen_solver_diagonalises_symmetric_matrices() {
    let mut next = uniform(7);
    for n in [1, 2, 3, 9, 40] {
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                let v = next();
                (a[i * n + j], a[j * n + i]) = (v, v);
            }
        }
        check_eigen(&a, n);
        // A Gram matrix of rank 3 (most eigenvalues 0), scaled over many orders of magnitude.
        let rows: Vec<f64> = (0..3 * n).map(|_| next()).collect();
        let gram: Vec<f64> = (0..n * n)
            .map(|ij| {
                let (i, j) = (ij / n, ij % n);
                (0..3)
                    .map(|f| 1e3 * rows[f * n + i] * rows[f * n + j])
                    .sum()
            })
            .collect();
        check_eigen(&gram, n);
    }
    // Repeated eigenvalues, a zero matrix, a diagonal one.
    let n = 6;
    check_eigen(&vec![0.0; n * n], n);
    let identity: Vec<f64> = (0..n * n)
        .map(|ij| f64::from(u8::from(ij % (n + 1) == 0)))
        .collect();
    check_eigen(&identity, n);
    let diagonal: Vec<f64> = (0..n * n)
        .map(|ij| {
            if ij % (n + 1) == 0 {
                (ij % 4) as f64
            } else {
                0.0
            }
        })
        .collect();
    let mut vectors = vec![0.0; n * n];
    let values = symmetric_eigen(&diagonal, &mut vectors, n);
    let mut expected: Vec<f64> = (0..n).map(|i| diagonal[i * (n + 1)]).collect();
    expected.sort_by(|a, b| b.total_cmp(a));
    assert_eq!(values, expected);
}

/// Until the 2k-row sketch first fills, nothing is dropped: the model is the full one.
#[test]
fn equals_the_full_form_until_the_sketch_fills() {
    let (d, rank) = (12, 4);
    let (mut low, mut full) = pair(d, rank, 0.7);
    let mut next = uniform(3);
    for x in rows(d, 2 * rank, 11) {
        let row = Row::Dense(&x);
        let (vl, nl) = low.prepare(row);
        let (vf, nf) = full.prepare(row);
        assert!((vl - vf).abs() < 1e-9 * vf && nl == nf, "{vl} vs {vf}");
        let (step, c) = (next(), 1.0 + next());
        low.update(row, step, c, vl, 0.0);
        full.update(row, step, c, vf, 0.0);
    }
    full.fold();
    let dense = low.dense_covariance().unwrap();
    let exact = full.covariance();
    assert!(dense
        .iter()
        .zip(exact.iter())
        .all(|(l, f)| (l - f).abs() < 1e-9));
    assert!(low
        .mean
        .iter()
        .zip(full.mean().iter())
        .all(|(l, f)| (l - f).abs() < 1e-9));
}

/// The dropped mass moves to the diagonal: the precision D + BᵀB keeps exactly the full
/// model's diagonal 1/a + Σ_t c_t·x_tj² on the same increments, through many shrinks.
#[test]
fn the_precision_keeps_the_full_models_diagonal() {
    let (d, rank, a) = (15, 3, 0.8);
    let (mut low, _) = pair(d, rank, a);
    let mut next = uniform(5);
    let mut exact = vec![1.0 / a; d + 1];
    for x in rows(d, 60, 17) {
        let row = Row::Dense(&x);
        let (v, _) = low.prepare(row);
        let c = 0.5 + next().abs();
        low.update(row, 0.1, c, v, 0.0);
        let features = x.iter().chain(std::iter::once(&1.0));
        exact
            .iter_mut()
            .zip(features)
            .for_each(|(e, xj)| *e += c * xj * xj);
        assert!(low.live_rows() <= 2 * rank);
    }
    for (j, e) in exact.iter().enumerate() {
        let sketched: f64 = (0..2 * rank).map(|i| low.row(i)[j].powi(2)).sum();
        let diagonal = 1.0 / low.variances[j] + sketched;
        assert!(
            (diagonal - e).abs() < 1e-10 * e,
            "coordinate {j}: {diagonal} vs {e}"
        );
    }
}

/// The state (S, then the sketch) rebuilds the same model, which then learns the same bits.
#[test]
fn the_state_restores_the_model_exactly() {
    let (d, rank) = (10, 2);
    let (mut low, _) = pair(d, rank, 0.5);
    let stream = rows(d, 23, 23);
    let learn = |model: &mut LowRank, x: &[f64]| {
        let (v, _) = model.prepare(Row::Dense(x));
        model.update(Row::Dense(x), 0.3, 1.5, v, 0.0);
    };
    for x in &stream[..13] {
        learn(&mut low, x);
    }
    let mut restored =
        LowRank::from_parts(low.kind(), low.shape(), &low.mean(), &low.covariance()).unwrap();
    assert_eq!(restored, low);
    for x in &stream[13..] {
        learn(&mut low, x);
        learn(&mut restored, x);
    }
    assert_eq!(restored, low);
    let mut shuffled = low.covariance().into_owned();
    shuffled[d + 1..2 * (d + 1)]
        .iter_mut()
        .for_each(|b| *b = 0.0);
    assert!(
        LowRank::from_parts(low.kind(), low.shape(), &low.mean(), &shuffled).is_err()
            || low.live_rows() <= 1
    );
}

/// Sparse and dense forms of the same rows give the same model.
#[test]
fn sparse_rows_learn_like_dense_rows() {
    let (d, rank) = (8, 2);
    let (mut dense, _) = pair(d, rank, 1.0);
    let mut sparse = dense.clone();
    let mut next = uniform(9);
    for _ in 0..20 {
        let x: Vec<f64> = (0..d)
            .map(|_| if next() > 0.3 { next() } else { 0.0 })
            .collect();
        let indices: Vec<i32> = (0..d as i32).filter(|&j| x[j as usize] != 0.0).collect();
        let values: Vec<f64> = indices.iter().map(|&j| x[j as usize]).collect();
        let (v, _) = dense.prepare(Row::Dense(&x));
        let (vs, _) = sparse.prepare(Row::Sparse32(&indices, &values));
        assert!((v - vs).abs() <= 1e-12 * v);
        dense.update(Row::Dense(&x), 0.2, 1.0, v, 0.0);
        sparse.update(Row::Sparse32(&indices, &values), 0.2, 1.0, vs, 0.0);
    }
    let close = |p: &[f64], q: &[f64]| p.iter().zip(q).all(|(a, b)| (a - b).abs() < 1e-10);
    assert!(close(&dense.mean, &sparse.mean) && close(&dense.sketch, &sparse.sketch));
}

/// A sketch row √c·x that underflows to zero is not kept (found by the fuzz target
/// `estimator_state`): the live rows stay first, so the learned state is readable again.
#[test]
fn a_sketch_row_that_underflows_is_not_kept() {
    let shape = Shape::new(2, false).unwrap();
    let kind = CovarianceKind::LowRank { rank: 1 };
    let mut low = LowRank::new(kind, shape, 1e300);
    // v = 1e300·(1e-200)² = 1e-100 > 0, but √(5e-324)·1e-200 rounds to 0.
    for (x, c) in [([1e-200, 0.0], 5e-324), ([1.0, 1.0], 1.0)] {
        let (v, _) = low.prepare(Row::Dense(&x));
        low.update(Row::Dense(&x), 0.0, c, v, 0.0);
    }
    assert_eq!(low.live_rows(), 1);
    let restored = LowRank::from_parts(kind, shape, &low.mean(), &low.covariance()).unwrap();
    assert_eq!(restored, low);
}

/// Rows far above the prior (a·‖x‖² ~ 1e100) with more sketch rows than columns: the Gram
/// matrix BSBᵀ is huge and rank-deficient, so the factor's pivots past the rank are rounding
/// noise. The factor must stay bounded (|L_ij|² ≤ its row's diagonal entry of I + BSBᵀ, up
/// to rounding) and every variance and mean step finite, through several shrinks.
#[test]
fn a_rank_deficient_sketch_far_above_the_prior_keeps_its_factor_bounded() {
    let shape = Shape::new(3, false).unwrap();
    let kind = CovarianceKind::LowRank { rank: 5 };
    let mut low = LowRank::new(kind, shape, 1.0);
    let mut next = uniform(13);
    for t in 0..60 {
        let x = [1e50 * next(), 1e50 * next(), 1e50 * next()];
        let (v, _) = low.prepare(Row::Dense(&x));
        assert!(v.is_finite() && v > 0.0, "row {t}: v = {v}");
        // AROW with r = 1 adds the precision xxᵀ/r: c = 1 (before the form's own cap).
        low.update(Row::Dense(&x), 1e-50 / (v + 1.0), 1.0, v, 0.0);
        assert!(low.mean.iter().all(|m| m.is_finite()), "row {t}");
        let stride = 2 * low.rank();
        for i in 0..low.live_rows() {
            let diagonal = 1.0
                + low
                    .row(i)
                    .iter()
                    .zip(&low.variances)
                    .map(|(b, s)| b * b * s)
                    .sum::<f64>();
            let row = &low.cholesky[i * stride..=i * stride + i];
            assert!(
                row.iter().all(|l| l * l <= 2.0 * diagonal),
                "row {t}: {row:?}"
            );
        }
    }
}

/// xᵀΣy against the dense Woodbury Σ, with a full sketch after shrinks, and before any.
#[test]
fn cross_variances_equal_the_dense_reference() {
    use crate::covariance::cross_checks::{check_cross_variances, learn_random_rows};
    for fit_intercept in [false, true] {
        let shape = Shape::new(15, fit_intercept).unwrap();
        let kind = CovarianceKind::LowRank { rank: 3 };
        let mut young = LowRank::new(kind, shape, 0.8);
        learn_random_rows(&mut young, 4, 13);
        let mut full = LowRank::new(kind, shape, 0.8);
        learn_random_rows(&mut full, 30, 14);
        assert_eq!(full.live_rows(), 6);
        check_cross_variances(&young, 0.0, false);
        check_cross_variances(&full, 0.0, false);
    }
}
