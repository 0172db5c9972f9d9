//! Test-only checks of [`Covariance::cross_variance`] against a slow reference: xᵀ(Σ + q·I)y
//! from the form's dense Σ (written out by the form itself), for dense and sparse rows of
//! equal, overlapping and disjoint supports.

use super::{Covariance, PrimalForm};
use crate::data::Row;
use crate::test_rng::uniform;

/// A row over `n_features` features: its dense values, and its support (sorted) for sparse.
pub(crate) struct TestRow {
    dense: Vec<f64>,
    indices32: Vec<i32>,
    indices64: Vec<i64>,
    values: Vec<f64>,
}

impl TestRow {
    /// The row with `values[k]` at `support[k]` (sorted, distinct).
    pub(crate) fn new(n_features: usize, support: &[usize], values: &[f64]) -> TestRow {
        let mut dense = vec![0.0; n_features];
        support.iter().zip(values).for_each(|(&j, &v)| dense[j] = v);
        TestRow {
            dense,
            indices32: support.iter().map(|&j| j as i32).collect(),
            indices64: support.iter().map(|&j| j as i64).collect(),
            values: values.to_vec(),
        }
    }

    /// A row over `support` with random values in [-2, 2).
    pub(crate) fn random(n_features: usize, support: &[usize], seed: u64) -> TestRow {
        let mut next = uniform(seed);
        let values: Vec<f64> = support.iter().map(|_| 2.0 * next()).collect();
        TestRow::new(n_features, support, &values)
    }

    /// The row as dense, 32-bit sparse and 64-bit sparse.
    pub(crate) fn layouts(&self) -> [Row<'_>; 3] {
        [
            Row::Dense(&self.dense),
            Row::Sparse32(&self.indices32, &self.values),
            Row::Sparse64(&self.indices64, &self.values),
        ]
    }
}

/// xᵀ(Σ + q·I)y from the form's dense Σ over its coordinates (the bias last, 1 in each row).
pub(crate) fn reference<F: PrimalForm>(form: &F, q: f64, x: &TestRow, y: &TestRow) -> f64 {
    let shape = form.shape();
    let dim = shape.dim();
    let sigma = form.dense_covariance().expect("a dense covariance");
    let widen = |r: &TestRow| {
        let mut v = r.dense.clone();
        v.resize(dim, 1.0);
        v
    };
    let (x, y) = (widen(x), widen(y));
    let mut s = 0.0;
    for i in 0..dim {
        for j in 0..dim {
            s += x[i] * (sigma[i * dim + j] + if i == j { q } else { 0.0 }) * y[j];
        }
    }
    s
}

/// Supports over `n` features: all, a half, an overlapping half, a disjoint quarter, none.
fn supports(n: usize) -> Vec<Vec<usize>> {
    vec![
        (0..n).collect(),
        (0..n).step_by(2).collect(),
        (0..n).filter(|j| j % 3 != 1).collect(),
        (0..n).filter(|j| j % 4 == 1).collect(),
        vec![],
    ]
}

/// Checks `cross_variance` of `form` (with constant process noise `q`, 0 if none) on random
/// rows of every pair of supports and layouts: equal to the reference to 1e-12 of
/// √(xᵀΣx·yᵀΣy), symmetric to that, and `cross_variance(x, x)` equal to `moments(x).1` to
/// 1e-12 relative. Exactly 0 where the supports are disjoint, if `disjoint_zero` (the diagonal
/// form, without a bias feature).
pub(crate) fn check_cross_variances<F: PrimalForm + Covariance>(
    form: &F,
    q: f64,
    disjoint_zero: bool,
) {
    let n = form.shape().n_features;
    let supports = supports(n);
    let rows: Vec<TestRow> = (supports.iter().enumerate())
        .map(|(s, support)| TestRow::random(n, support, 0x5EED + s as u64))
        .collect();
    for (a, x) in rows.iter().enumerate() {
        for (b, y) in rows.iter().enumerate() {
            let want = reference(form, q, x, y);
            let scale = (reference(form, q, x, x) * reference(form, q, y, y)).sqrt();
            let disjoint = supports[a].iter().all(|j| !supports[b].contains(j));
            for xr in x.layouts() {
                for yr in y.layouts() {
                    let got = form.cross_variance(xr, yr).expect("a cross variance");
                    let back = form.cross_variance(yr, xr).expect("a cross variance");
                    assert!(
                        (got - want).abs() <= 1e-12 * scale,
                        "supports {a}, {b} ({xr:?}, {yr:?}): {got} != {want}"
                    );
                    assert!((got - back).abs() <= 1e-12 * scale, "{got} != {back}");
                    if disjoint && disjoint_zero {
                        assert_eq!(got, 0.0, "disjoint supports {a}, {b}");
                    }
                }
            }
            if a == b {
                for xr in x.layouts() {
                    let own = form.cross_variance(xr, xr).unwrap();
                    let v = form.moments(xr).1;
                    assert!((own - v).abs() <= 1e-12 * v.abs(), "{own} != {v}");
                }
            }
        }
    }
}

/// Learns `n_rows` random dense rows (every second one sparse-looking, with zeros) through
/// the learning protocol with precision increments c in [0.5, 1.5) and mean steps in
/// [-0.5, 0.5) (an L1 threshold of step scale 0.1, if the form has a penalty).
pub(crate) fn learn_random_rows<F: Covariance>(form: &mut F, n_rows: usize, seed: u64) {
    let n = form.n_features();
    let mut next = uniform(seed);
    for t in 0..n_rows {
        let x: Vec<f64> = (0..n)
            .map(|j| {
                let v = next();
                if t % 2 == 1 && (j + t) % 3 == 0 {
                    0.0
                } else {
                    v
                }
            })
            .collect();
        let (step, c) = (0.5 * next(), 1.0 + 0.5 * next());
        let row = Row::Dense(&x);
        let seen = form.observe(row);
        form.update(row, step, c, seen.variance, 0.1);
    }
}
