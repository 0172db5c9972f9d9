//! Criterion benches of the core: time per example of the learners on synthetic streams.
//!
//! `cargo bench` runs them; `cargo bench -- diag` selects a group.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use cwrs::bandit::{simulate, Generator, Policy};
use cwrs::covariance::kernel::Kernel;
use cwrs::learn::learner::DualLearner;
use cwrs::{CovarianceKind, Learner, Matrix, Model, ModelConfig, Presentation, Rule};
use std::hint::black_box;

mod common;

use common::Xorshift;

/// A uniform draw in [0, 1).
fn uniform(rng: &mut Xorshift) -> f64 {
    (rng.next() >> 11) as f64 / (1u64 << 53) as f64
}

/// A text-like sparse stream: `nnz` random features per row out of `d`, labels from a sparse
/// linear teacher.
fn sparse_stream(n: usize, d: usize, nnz: usize) -> (Vec<f64>, Vec<i64>, Vec<i64>, Vec<f64>) {
    let mut rng = Xorshift(0x9E37_79B9_7F4A_7C15);
    let (mut values, mut indices, mut indptr, mut y) = (vec![], vec![], vec![0i64], vec![]);
    for _ in 0..n {
        let mut row: Vec<i64> = (0..nnz).map(|_| (rng.next() % d as u64) as i64).collect();
        row.sort_unstable();
        row.dedup();
        let score: f64 = row
            .iter()
            .map(|&j| if j % 7 == 0 { 1.0 } else { -0.1 })
            .sum();
        y.push(if score > 0.0 { 1.0 } else { -1.0 });
        values.extend(row.iter().map(|_| 1.0));
        indices.extend(row);
        indptr.push(indices.len() as i64);
    }
    (values, indices, indptr, y)
}

fn dense_stream(n: usize, d: usize) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Xorshift(42);
    let x: Vec<f64> = (0..n * d).map(|_| uniform(&mut rng) * 2.0 - 1.0).collect();
    let y = (0..n)
        .map(|i| {
            if x[i * d] + 0.3 * x[i * d + 1] > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    (x, y)
}

fn diagonal_sparse(c: &mut Criterion) {
    let (n, d, nnz) = (10_000, 1 << 20, 100);
    let (values, indices, indptr, y) = sparse_stream(n, d, nnz);
    let x = Matrix::Csr64 {
        values: &values,
        indices: &indices,
        indptr: &indptr,
        n_cols: d,
    };
    let mut group = c.benchmark_group("diag_sparse_2^20_nnz100");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(20);
    for name in ["AROW", "SCW1", "PA1"] {
        let rule = Rule::from_name(name, &[]).unwrap();
        let kind = if rule.is_second_order() {
            CovarianceKind::Diagonal
        } else {
            CovarianceKind::Identity
        };
        let mut model = Learner::new(rule, kind, d, true, 1.0).unwrap();
        group.bench_function(name, |b| {
            b.iter(|| {
                model
                    .partial_fit(black_box(&x), &y, Presentation::default())
                    .unwrap()
            })
        });
    }
    group.finish();
}

fn full_dense(c: &mut Criterion) {
    let mut group = c.benchmark_group("full_arow_dense");
    group.sample_size(10);
    for d in [100, 300, 1000, 3000] {
        // At least two blocks of rows (see `cwrs::covariance::Full`).
        let n = (20_000_000 / (d * d)).max(64);
        let (values, y) = dense_stream(n, d);
        let x = Matrix::Dense {
            values: &values,
            n_rows: n,
            n_cols: d,
        };
        group.throughput(Throughput::Elements(n as u64));
        let rule = Rule::from_name("AROW", &[]).unwrap();
        let mut model = Learner::new(rule, CovarianceKind::Full, d, false, 1.0).unwrap();
        group.bench_with_input(BenchmarkId::from_parameter(d), &d, |b, _| {
            b.iter(|| {
                model
                    .partial_fit(black_box(&x), &y, Presentation::default())
                    .unwrap()
            })
        });
    }
    group.finish();
}

/// Kernel AROW (RBF) on 100-d rows with the support set full at `budget`: every update adds a
/// row and removes one, O(budget·d + budget²).
fn kernel_budget(c: &mut Criterion) {
    let mut group = c.benchmark_group("kernel_arow_rbf_d100");
    group.sample_size(10);
    let d = 100;
    for budget in [100, 1000, 5000] {
        let batch = (200_000 / budget).max(4);
        let (values, y) = dense_stream(3 * budget + batch, d);
        let rule = Rule::from_name("AROW", &[]).unwrap();
        let kernel = Kernel::Rbf { gamma: 0.01 };
        let mut model = DualLearner::new(rule, kernel, d, true, 1.0, Some(budget)).unwrap();
        // Warm up until the support set is full, so that every measured update also removes a
        // support row (the steady state).
        let mut warm = 0;
        while model.model().n_support() < budget {
            assert!(warm + 100 <= 3 * budget, "the support set does not fill up");
            let rows = Matrix::Dense {
                values: &values[warm * d..(warm + 100) * d],
                n_rows: 100,
                n_cols: d,
            };
            model
                .partial_fit(&rows, &y[warm..warm + 100], Presentation::default())
                .unwrap();
            warm += 100;
        }
        let rows = Matrix::Dense {
            values: &values[warm * d..(warm + batch) * d],
            n_rows: batch,
            n_cols: d,
        };
        let labels = &y[warm..warm + batch];
        group.throughput(Throughput::Elements(batch as u64));
        group.bench_with_input(BenchmarkId::from_parameter(budget), &budget, |b, _| {
            b.iter(|| {
                model
                    .partial_fit(black_box(&rows), labels, Presentation::default())
                    .unwrap()
            })
        });
    }
    group.finish();
}

/// Kernel AROW (RBF) prediction: 2,000 rows against 1,000 support rows, the decision alone and
/// with the variance (dense 100-d rows), and the decision on sparse rows (20 of 1,000
/// features).
fn kernel_predict(c: &mut Criterion) {
    let mut group = c.benchmark_group("kernel_predict_rbf");
    group.sample_size(10);
    let (n, budget, d) = (2_000, 1_000, 100);
    let rule = Rule::from_name("AROW", &[]).unwrap();
    let (values, y) = dense_stream(budget + n, d);
    let mut model = DualLearner::new(
        rule,
        Kernel::Rbf { gamma: 0.01 },
        d,
        true,
        1.0,
        Some(budget),
    )
    .unwrap();
    let train = Matrix::Dense {
        values: &values[..budget * d],
        n_rows: budget,
        n_cols: d,
    };
    model
        .partial_fit(&train, &y[..budget], Presentation::default())
        .unwrap();
    let rows = Matrix::Dense {
        values: &values[budget * d..],
        n_rows: n,
        n_cols: d,
    };
    let mut out = vec![0.0; n];
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function("dense_d100_decision", |b| {
        b.iter(|| model.decision_function(black_box(&rows), &mut out).unwrap())
    });
    group.bench_function("dense_d100_variance", |b| {
        b.iter(|| model.variances(black_box(&rows), &mut out).unwrap())
    });
    let (values, indices, indptr, y) = sparse_stream(budget + n, 1_000, 20);
    let split = indptr[budget] as usize;
    let mut model =
        DualLearner::new(rule, Kernel::Rbf { gamma: 0.05 }, 1_000, true, 1.0, None).unwrap();
    let train = Matrix::Csr64 {
        values: &values[..split],
        indices: &indices[..split],
        indptr: &indptr[..=budget],
        n_cols: 1_000,
    };
    model
        .partial_fit(&train, &y[..budget], Presentation::default())
        .unwrap();
    let offsets: Vec<i64> = indptr[budget..].iter().map(|&p| p - split as i64).collect();
    let rows = Matrix::Csr64 {
        values: &values[split..],
        indices: &indices[split..],
        indptr: &offsets,
        n_cols: 1_000,
    };
    group.bench_function("sparse_d1000_nnz20_decision", |b| {
        b.iter(|| model.decision_function(black_box(&rows), &mut out).unwrap())
    });
    group.finish();
}

/// Rounds of the bake-off's multiclass-to-bandit reduction (`cwrs::bandit::simulate`): 2,000
/// contexts of 20 features, 10 actions (210 coordinates), Thompson sampling (16 extra draws for
/// the probability) and UCB over AROW regression with the diagonal and the full covariance.
fn bandit_rounds(c: &mut Criterion) {
    let (n, d, k) = (2_000, 20, 10);
    let (x, y) = dense_stream(n, d);
    let labels: Vec<usize> = (0..n)
        .map(|i| (usize::from(y[i] > 0.0) + 3 * (i % 3)) % k)
        .collect();
    let contexts = Matrix::Dense {
        values: &x,
        n_rows: n,
        n_cols: d,
    };
    let order: Vec<usize> = (0..n).collect();
    let mut group = c.benchmark_group("bandit");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    let policies = [
        (
            "thompson",
            Policy::Thompson {
                alpha: 0.1,
                n_probability_draws: 16,
            },
        ),
        ("ucb", Policy::Ucb { alpha: 0.3 }),
    ];
    for (form, kind) in [
        ("diag", CovarianceKind::Diagonal),
        ("full", CovarianceKind::Full),
    ] {
        for (name, policy) in policies {
            group.bench_function(BenchmarkId::new(name, form), |b| {
                b.iter(|| {
                    let config = ModelConfig::regressor("AROW", &[("r", 1.0)])
                        .covariance(kind)
                        .n_features(k * (d + 1));
                    let mut model = Model::from_config(config, None).unwrap();
                    let mut generator = Generator::seed_from_u64(0);
                    simulate(
                        &mut model,
                        &policy,
                        &mut generator,
                        &contexts,
                        &labels,
                        &order,
                    )
                    .unwrap()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(
    benches,
    diagonal_sparse,
    full_dense,
    kernel_budget,
    kernel_predict,
    bandit_rounds
);
criterion_main!(benches);
