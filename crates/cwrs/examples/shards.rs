//! One model learned on several cores: copies of a model learn disjoint shards of a stream on
//! their own threads, then `cwrs::parallel::merge::merge` combines them into one model
//! ("information": the evidence each copy added to the precision and to Λμ, summed; the method
//! that suits AROW, docs/design.md §9). The merged model is compared with one model that learned
//! the whole stream alone, on rows neither saw.
//!
//!     cargo run --example shards

use cwrs::parallel::merge::{merge, Method};
use cwrs::{CovarianceKind, CwError, Matrix, Model, ModelConfig, Presentation, Targets};

const N_FEATURES: usize = 20;

/// `n` rows of a linearly separable problem with 10% of the labels flipped, from `seed`.
fn stream(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut s = seed;
    let mut uniform = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let truth: Vec<f64> = (0..N_FEATURES).map(|j| (j as f64 * 0.7).sin()).collect();
    let x: Vec<f64> = (0..n * N_FEATURES).map(|_| uniform()).collect();
    let y = x
        .chunks(N_FEATURES)
        .map(|row| {
            let score: f64 = row.iter().zip(&truth).map(|(a, b)| a * b).sum();
            let flip = uniform() < -0.8;
            if (score > 0.0) != flip {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    (x, y)
}

fn rows(x: &[f64]) -> Matrix<'_> {
    Matrix::Dense {
        values: x,
        n_rows: x.len() / N_FEATURES,
        n_cols: N_FEATURES,
    }
}

/// The share of `y` that `model` predicts.
fn accuracy(model: &Model, x: &[f64], y: &[f64]) -> Result<f64, CwError> {
    let mut scores = vec![0.0; y.len()];
    model.decision_function(&rows(x), &mut scores)?;
    let right = scores
        .iter()
        .zip(y)
        .filter(|(s, y)| (**s > 0.0) == (**y > 0.0));
    Ok(right.count() as f64 / y.len() as f64)
}

fn main() -> Result<(), CwError> {
    let (x, y) = stream(40_000, 7);
    let (test_x, test_y) = stream(5_000, 99);
    let config = ModelConfig::binary("AROW", &[("r", 1.0)])
        .covariance(CovarianceKind::Full)
        .n_features(N_FEATURES);
    let start = Model::from_config(config, None)?;

    // Four copies of the start, each learning a quarter of the stream on its own thread.
    let shards = 4;
    let rows_per_shard = y.len() / shards;
    let mut copies = vec![start.clone(); shards];
    std::thread::scope(|scope| {
        let work = copies.iter_mut().enumerate().map(|(k, copy)| {
            let part = k * rows_per_shard..(k + 1) * rows_per_shard;
            let (x, y) = (&x[part.start * N_FEATURES..part.end * N_FEATURES], &y[part]);
            scope.spawn(move || {
                copy.partial_fit(&rows(x), Targets::Values(y), Presentation::default())
            })
        });
        work.collect::<Vec<_>>()
            .into_iter()
            .try_for_each(|t| t.join().expect("no panic"))
    })?;
    let copies: Vec<&Model> = copies.iter().collect();
    let merged = merge(&copies, Method::Information, Some(&start), None)?;

    let mut alone = start.clone();
    alone.partial_fit(&rows(&x), Targets::Values(&y), Presentation::default())?;

    let (merged_accuracy, alone_accuracy) = (
        accuracy(&merged, &test_x, &test_y)?,
        accuracy(&alone, &test_x, &test_y)?,
    );
    println!(
        "AROW, full covariance, {} rows: {shards} shards merged {merged_accuracy:.3}, one model \
         {alone_accuracy:.3} accuracy on {} new rows",
        y.len(),
        test_y.len()
    );
    assert!(merged_accuracy > 0.8 && (merged_accuracy - alone_accuracy).abs() < 0.02);
    Ok(())
}
