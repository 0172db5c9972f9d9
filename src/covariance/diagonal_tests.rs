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
