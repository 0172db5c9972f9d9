//! Blocked prediction against the one-row path: bit for bit, for every kind of support row
//! and query row, every built-in kernel, with and without the variance, on one core and two.

use super::*;
use crate::covariance::kernel::Kernel;
use crate::covariance::Covariance;
use crate::data::Presentation;
use crate::learn::learner::DualLearner;
use crate::rules::Rule;

/// n rows of d values in (−1, 1) and labels; every `zero_every`-th value zeroed (0: none), so
/// that some support rows store every feature and others do not.
fn data(n: usize, d: usize, zero_every: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut next = crate::test_rng::uniform(seed);
    let mut x: Vec<f64> = (0..n * d).map(|_| next()).collect();
    if zero_every > 0 {
        for (e, v) in x.iter_mut().enumerate() {
            if (e * 7 + e / d).is_multiple_of(zero_every) {
                *v = 0.0;
            }
        }
    }
    let y = (0..n)
        .map(|i| {
            if x[i * d] + 0.3 * next() > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    (x, y)
}

/// The CSR form of a dense row-major matrix.
fn csr(x: &[f64], d: usize) -> (Vec<f64>, Vec<i64>, Vec<i64>) {
    let (mut values, mut indices, mut indptr) = (Vec::new(), Vec::new(), vec![0]);
    for row in x.chunks_exact(d) {
        for (j, &v) in row.iter().enumerate() {
            if v != 0.0 {
                values.push(v);
                indices.push(j as i64);
            }
        }
        indptr.push(indices.len() as i64);
    }
    (values, indices, indptr)
}

/// Blocked predictions equal the one-row path's, with and without the variance. Returns
/// whether the batch was large enough for two cores.
fn check(model: &DualGaussian, x: &Matrix, what: &str) -> bool {
    assert!(x.n_rows() >= MIN_BLOCKED_ROWS);
    let one_row: Vec<_> = (0..x.n_rows())
        .map(|i| (model.score(x.row(i)), model.moments(x.row(i))))
        .collect();
    for with_variance in [false, true] {
        let mut blocked = vec![(0.0, 0.0); x.n_rows()];
        model
            .predict_rows(x, with_variance, |i, score, v| blocked[i] = (score, v))
            .unwrap();
        for (i, (&(score, v), &(one_score, (score_too, one_v)))) in
            blocked.iter().zip(&one_row).enumerate()
        {
            assert_eq!(score.to_bits(), one_score.to_bits(), "{what} row {i}");
            assert_eq!(score.to_bits(), score_too.to_bits(), "{what} row {i}");
            if with_variance {
                assert_eq!(v.to_bits(), one_v.to_bits(), "{what} row {i}");
            } else {
                assert!(v.is_nan(), "{what}");
            }
        }
    }
    let m = model.n_support();
    x.n_rows() * m * (x.n_entries() / x.n_rows() + m) >= PARALLEL_WORK
}

#[test]
fn blocked_prediction_is_the_one_row_path_bit_for_bit() {
    let kernels = [
        Kernel::Linear,
        Kernel::Rbf { gamma: 0.3 },
        Kernel::Poly {
            gamma: 0.5,
            degree: 3,
            coef0: 1.0,
        },
    ];
    // 13 features: a vector body and a tail; 200 query rows: a partial block, and two cores
    // for the variance of the larger models.
    let (d, n_train, n_query) = (13, 160, 200);
    let mut two_cores = false;
    for (zero_every, rule, intercept) in [(0, "AROW", true), (5, "AROW", false), (3, "PA1", true)] {
        let (x, y) = data(n_train, d, zero_every, 0x9E37_79B9_7F4A_7C15);
        let train = Matrix::Dense {
            values: &x,
            n_rows: n_train,
            n_cols: d,
        };
        let (q, _) = data(n_query, d, zero_every.max(4), 0x2545_F491_4F6C_DD1D);
        let (values, indices, indptr) = csr(&q, d);
        let dense = Matrix::Dense {
            values: &q,
            n_rows: n_query,
            n_cols: d,
        };
        let sparse = Matrix::Csr64 {
            values: &values,
            indices: &indices,
            indptr: &indptr,
            n_cols: d,
        };
        for kernel in &kernels {
            let rule = Rule::from_name(rule, &[]).unwrap();
            let mut learner =
                DualLearner::new(rule, kernel.clone(), d, intercept, 1.0, None).unwrap();
            learner
                .partial_fit(&train, &y, Presentation::default())
                .unwrap();
            let model = learner.model();
            assert!(model.n_support() > 40, "{kernel:?}");
            let what = format!("{kernel:?} zeros every {zero_every}");
            two_cores |= check(model, &dense, &format!("{what}, dense rows"));
            two_cores |= check(model, &sparse, &format!("{what}, sparse rows"));
        }
    }
    assert!(two_cores);
}

#[test]
fn a_model_without_support_rows_predicts_from_the_prior() {
    let rule = Rule::from_name("AROW", &[]).unwrap();
    let learner = DualLearner::new(rule, Kernel::Rbf { gamma: 1.0 }, 3, true, 2.0, None).unwrap();
    let x = [0.5; 15];
    let rows = Matrix::Dense {
        values: &x,
        n_rows: 5,
        n_cols: 3,
    };
    check(learner.model(), &rows, "empty");
    let mut v = vec![0.0; 5];
    learner.variances(&rows, &mut v).unwrap();
    // Σ = a·I and κ = k(x, x) + bias = 2.
    assert_eq!(v, [4.0; 5]);
}

/// From `QUADRATIC_MIN_SUPPORT` support rows on, the variance is the quadratic form over Π's
/// packed triangle: the same bits one row at a time and in blocks (both cores too), and within
/// rounding of kᵀΠk summed from the math, Σ_pq k_p·Π_pq·k_q over the full Π.
#[test]
fn large_support_sets_give_the_variance_as_a_quadratic_form() {
    let (d, n_query) = (13, 67);
    let (x, y) = data(700, d, 0, 0x9E37_79B9_7F4A_7C15);
    let train = Matrix::Dense {
        values: &x,
        n_rows: 700,
        n_cols: d,
    };
    let rule = Rule::from_name("AROW", &[]).unwrap();
    let kernel = Kernel::Rbf { gamma: 0.3 };
    let mut learner = DualLearner::new(rule, kernel.clone(), d, true, 1.0, Some(400)).unwrap();
    learner
        .partial_fit(&train, &y, Presentation::default())
        .unwrap();
    let model = learner.model();
    let m = model.n_support();
    assert!(m >= QUADRATIC_MIN_SUPPORT, "{m} support rows");
    let (q, _) = data(n_query, d, 0, 0x2545_F491_4F6C_DD1D);
    let rows = Matrix::Dense {
        values: &q,
        n_rows: n_query,
        n_cols: d,
    };
    assert!(check(model, &rows, "large support set"));
    let pi = model.dual_covariance();
    let mut k = Vec::new();
    for i in 0..n_query {
        let (kappa, _) = model.kernel_row(&kernel, &rows.row(i), &mut k);
        let (mut exact, mut scale) = (model.a() * kappa, model.a() * kappa);
        for (p, &kp) in k.iter().enumerate() {
            for (&pi_pq, &kq) in pi[p * m..(p + 1) * m].iter().zip(&k) {
                exact += kp * pi_pq * kq;
                scale += (kp * pi_pq * kq).abs();
            }
        }
        let (_, v) = model.moments(rows.row(i));
        assert!(
            (v - exact).abs() <= 4.0 * m as f64 * f64::EPSILON * scale,
            "row {i}: {v} against {exact} (scale {scale})"
        );
    }
}
