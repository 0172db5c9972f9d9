use super::Identity;
use crate::covariance::{Covariance, CovarianceKind, FormParams, PrimalForm};
use crate::data::{Row, Shape};
use proptest::prelude::*;

/// One operation of ALMA and the ROMMAs on the mean: a rescale by `r`, or a step `step` along
/// a sparse row (distinct sorted indices, values).
#[derive(Clone, Debug)]
enum Op {
    Rescale(f64),
    Step(f64, Vec<i32>, Vec<f64>),
}

fn op(d: i32) -> impl Strategy<Value = Op> {
    let r = prop_oneof![-3.0..3.0f64, Just(0.0), 1e-60..1e-30f64, 1e30..1e60f64];
    let row = prop::collection::btree_map(0..d, -2.0..2.0f64, 1..4);
    prop_oneof![
        r.prop_map(Op::Rescale),
        (-2.0..2.0f64, row).prop_map(|(step, row)| {
            let (indices, values) = row.into_iter().unzip();
            Op::Step(step, indices, values)
        })
    ]
}

proptest! {
    /// μ = s·u with ‖μ‖² kept is the eager mean and norm, to rounding relative to the largest
    /// magnitude along the path (rescaled with it), through rescales that fold the scale (0,
    /// far from 1) and steps; a restored state is the folded model, bit for bit.
    #[test]
    fn the_scaled_mean_is_the_eager_mean(ops in prop::collection::vec(op(6), 1..40)) {
        let shape = Shape::new(6, false).unwrap();
        let mut lazy =
            Identity::new(CovarianceKind::Identity, shape, 1.0).with_params(FormParams::MeanNorm);
        let (mut eager, mut reach) = (vec![0.0f64; 6], 0.0f64);
        for op in &ops {
            match op {
                Op::Rescale(r) => {
                    lazy.rescale_mean(*r);
                    eager.iter_mut().for_each(|w| *w *= r);
                    reach *= r.abs();
                }
                Op::Step(step, indices, values) => {
                    let v = values.iter().map(|x| x * x).sum();
                    lazy.update(Row::Sparse32(indices, values), *step, 0.0, v, 0.0);
                    for (&j, x) in indices.iter().zip(values) {
                        eager[j as usize] += step * x;
                        reach = reach.max((step * x).abs());
                    }
                }
            }
            reach = eager.iter().fold(reach, |m, w| m.max(w.abs()));
            if !(reach * reach).is_finite() {
                break; // ‖μ‖² overflows (as it would eagerly)
            }
            for (a, b) in lazy.mean().iter().zip(&eager) {
                prop_assert!((a - b).abs() <= 1e-12 * reach, "{} vs {}", a, b);
            }
            let norm2: f64 = eager.iter().map(|w| w * w).sum();
            prop_assert!((lazy.mean_norm2() - norm2).abs() <= 1e-11 * reach * reach);
        }
        lazy.fold();
        let restored = Identity::from_parts(shape, &lazy.mean(), &[])
            .unwrap()
            .with_params(FormParams::MeanNorm);
        prop_assert_eq!(restored, lazy);
    }
}
