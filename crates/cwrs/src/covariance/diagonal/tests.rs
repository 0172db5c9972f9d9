use super::Diagonal;
use crate::covariance::{Covariance, PrimalForm};
use crate::data::Shape;
use crate::{CovarianceKind, Row};

/// The lazy process noise (σ̃_j = Σ_j − q·t) against the eager Σ_j += q every round, over more
/// rounds than the clock's fold period (2¹⁶ here), with a coordinate updated every round, one
/// now and then, and one never.
#[test]
fn lazy_noise_matches_the_eager_steps_across_a_fold_of_the_clock() {
    let (q, c, rounds) = (0.01, 2.0, 70_000u64);
    let shape = Shape::new(3, false).unwrap();
    let mut model = Diagonal::new(CovarianceKind::Diagonal, shape, 1.0);
    model.set_process_noise(q).unwrap();
    let mut eager = [1.0f64; 3];
    for t in 1..=rounds {
        eager.iter_mut().for_each(|s| *s += q);
        let (indices, values): (&[i64], &[f64]) = if t % 997 == 0 {
            (&[0, 1], &[1.0, -0.5])
        } else {
            (&[0], &[1.0])
        };
        let row = Row::Sparse64(indices, values);
        let seen = model.observe(row);
        let v: f64 = indices
            .iter()
            .zip(values)
            .map(|(&j, x)| eager[j as usize] * x * x)
            .sum();
        assert!((seen.variance - v).abs() <= 1e-9 * v, "round {t}");
        model.update(row, 0.0, c, seen.variance, 0.0);
        for (&j, &x) in indices.iter().zip(values) {
            let s = eager[j as usize];
            eager[j as usize] = s - c * (s * x) * (s * x) / (1.0 + c * v);
        }
    }
    assert!(
        model.noise.as_ref().unwrap().round < rounds,
        "the clock was folded"
    );
    for (lazy, eager) in model.covariance().iter().zip(eager) {
        assert!(
            (lazy - eager).abs() <= 1e-9 * eager,
            "{lazy} against {eager}"
        );
    }
}

/// Rows of sorted distinct indices below `d` (0 to 13 of them, to leave every remainder of the
/// vector loops), values of many magnitudes with explicit zeros, and a (step, c) each, c
/// sometimes infinite or huge.
fn sparse_rows(d: usize, n_rows: usize) -> Vec<(Vec<i64>, Vec<f64>, f64, f64)> {
    let mut next = crate::test_rng::uniform(99);
    let cs = [0.5, 3.0, f64::INFINITY, 1e300];
    (0..n_rows)
        .map(|i| {
            let chosen: Vec<bool> = (0..d).map(|_| next() < 0.3).collect();
            let indices: Vec<i64> = (0..d as i64)
                .filter(|&j| chosen[j as usize])
                .take(i % 14)
                .collect();
            let values = indices
                .iter()
                .map(|_| match (next() * 6.0) as u32 {
                    0 => 0.0,
                    1 => next() * 1e-160,
                    2 => next() * 1e150,
                    _ => next() - 0.5,
                })
                .collect();
            (indices, values, next() * 4.0 - 2.0, cs[i % cs.len()])
        })
        .collect()
}

/// The vector loops of the precision update (two lanes, and four with AVX2 where the CPU has
/// it) give the bits of the feature-by-feature loop, remainders included.
#[test]
fn the_vector_loops_of_the_update_give_the_bits_of_the_scalar_loop() {
    use super::{move_coordinates, shrink_one_by_one, Coordinate, Entries, Move};
    type Lanes = fn(&mut [Coordinate], Entries<i64>, Move) -> usize;
    let mut loops: Vec<(&str, Lanes)> = vec![("one by one", |_, _, _| 0)];
    #[cfg(target_arch = "x86_64")]
    {
        loops.push(("pairs", super::shrink_pairs));
        if crate::linalg::simd::has_avx2() {
            // SAFETY: the CPU has AVX2, checked just above.
            loops.push(("quads", |m, row, by| unsafe {
                super::shrink_quads(m, row, by)
            }));
        }
    }
    let d = 40;
    let shape = Shape::new(d, false).unwrap();
    let start: Vec<Coordinate> = (0..d)
        .map(|j| Coordinate {
            mean: j as f64 - 20.0,
            variance: 1.0 / (1.0 + j as f64),
        })
        .collect();
    for (what, lanes) in loops {
        let (mut vector, mut scalar) = (start.clone(), start.clone());
        for (indices, values, step, c) in sparse_rows(d, 400) {
            let by = Move { step, c };
            let done = lanes(&mut vector, (&indices, &values), by);
            shrink_one_by_one(&mut vector, (&indices[done..], &values[done..]), by);
            let x = shape.features(Row::Sparse64(&indices, &values));
            move_coordinates::<false>(&mut scalar, &x, step, 0.0, |s, xj| {
                s / (1.0 + c * xj * xj * s)
            });
            let bits = |m: &[Coordinate]| -> Vec<(u64, u64)> {
                let bits = |c: &Coordinate| (c.mean.to_bits(), c.variance.to_bits());
                m.iter().map(bits).collect()
            };
            assert_eq!(bits(&vector), bits(&scalar), "{what}");
        }
    }
}

/// Through the model: sparse rows (the vector loops) and the same rows dense (the scalar loop),
/// with the intercept, learn the same bits.
#[test]
fn sparse_and_dense_rows_update_the_same_bits() {
    let d = 40;
    let shape = Shape::new(d, true).unwrap();
    let mut sparse = Diagonal::new(CovarianceKind::Diagonal, shape, 1.0);
    let mut dense = sparse.clone();
    for (indices, values, step, c) in sparse_rows(d, 400) {
        let mut row = vec![0.0; d];
        for (&j, &x) in indices.iter().zip(&values) {
            row[j as usize] = x;
        }
        for (model, row) in [
            (&mut sparse, Row::Sparse64(&indices, &values)),
            (&mut dense, Row::Dense(&row)),
        ] {
            let seen = model.observe(row);
            model.update(row, step, c, seen.variance, 0.0);
        }
        let bits = |m: &Diagonal| -> Vec<(u64, u64)> {
            let coordinates = m.coordinates().iter();
            coordinates
                .map(|c| (c.mean.to_bits(), c.variance.to_bits()))
                .collect()
        };
        assert_eq!(bits(&sparse), bits(&dense));
    }
}

/// A model rebuilt from its eager variances and its lazy noise (what a state stores) is the
/// same model, bit for bit, and stays so while both learn; taking the lazy noise changes
/// nothing; stored variances that do not give the eager ones back are refused.
#[test]
fn lazy_noise_restores_the_same_model_and_refuses_a_mismatch() {
    let shape = Shape::new(3, false).unwrap();
    let mut model = Diagonal::new(CovarianceKind::Diagonal, shape, 1.0);
    model.set_process_noise(0.01).unwrap();
    let rows: [(&[i64], &[f64]); 3] = [(&[0], &[1.7e9]), (&[1, 2], &[0.5, -2.0]), (&[2], &[3.0])];
    let learn = |m: &mut Diagonal, k: usize| {
        let row = Row::Sparse64(rows[k % 3].0, rows[k % 3].1);
        let seen = m.observe(row);
        m.update(row, 0.1, 1.0, seen.variance, 0.0);
    };
    (0..10).for_each(|k| learn(&mut model, k));
    let before = model.clone();
    let (clock, stored) = model.lazy_noise().unwrap();
    assert_eq!(model, before);
    let restore = |stored: &[f64]| {
        let kind = CovarianceKind::Diagonal;
        let (mean, eager) = (model.mean(), model.covariance());
        let mut copy = Diagonal::from_parts(kind, shape, &mean, &eager).unwrap();
        copy.set_process_noise(0.01).unwrap();
        copy.restore_lazy_noise(clock, stored).map(|()| copy)
    };
    let mut tampered = stored.clone();
    tampered[1] *= 2.0;
    assert!(restore(&tampered).is_err());
    assert!(restore(&stored[..2]).is_err());
    let mut copy = restore(&stored).unwrap();
    assert!(model.covariance().iter().all(|&v| v > 0.0));
    for k in 10..20 {
        learn(&mut model, k);
        learn(&mut copy, k);
        assert_eq!(model.coordinates(), copy.coordinates());
    }
}

/// xᵀΣy against the dense Σ (with the lazy noise clock running, and with an L1 penalty's
/// pending thresholds), with and without a bias feature; disjoint supports give exactly 0.
#[test]
fn cross_variances_equal_the_dense_reference() {
    use crate::covariance::cross_checks::{check_cross_variances, learn_random_rows};
    for fit_intercept in [false, true] {
        let shape = Shape::new(12, fit_intercept).unwrap();
        let plain = Diagonal::new(CovarianceKind::Diagonal, shape, 0.8);
        let mut learned = plain.clone();
        learn_random_rows(&mut learned, 40, 7);
        let mut noisy = plain.clone();
        noisy.set_process_noise(0.03).unwrap();
        learn_random_rows(&mut noisy, 40, 8);
        noisy.grow_covariance(0.2).unwrap();
        assert!(noisy.lazy_noise().is_some_and(|(clock, _)| clock[0] > 0.0));
        let penalty = crate::learn::sparse_l1::Penalty::CoordinateDependent;
        let l1 = crate::learn::sparse_l1::L1::new(penalty, 0.01, None, shape.dim());
        let mut penalized = plain.clone().with_l1(l1.unwrap()).unwrap();
        learn_random_rows(&mut penalized, 40, 9);
        for (form, q) in [
            (&plain, 0.0),
            (&learned, 0.0),
            (&noisy, 0.03),
            (&penalized, 0.0),
        ] {
            check_cross_variances(form, q, !fit_intercept);
        }
    }
}
