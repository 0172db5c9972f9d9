//! Weighted rows on a stream with 2% positives: a row's importance weight rides in its
//! `Presentation` (`weights`), and `balanced` weighs each class by the running class counts the
//! model keeps (`class_weight="balanced"` in Python; docs/design.md §2.10). The example compares,
//! on rows none of them saw, the balanced accuracy of AROW learning the stream as it is, the
//! stream balanced as it arrives, and a tenth of the negatives weighted 10 and balanced.
//!
//!     cargo run --example weights

use cwrs::{CovarianceKind, CwError, Matrix, Model, ModelConfig, Presentation, Targets};

const N_FEATURES: usize = 10;

/// `n` rows whose label is +1 where the first two features sum past a threshold (about 2% of
/// them), from `seed`.
fn stream(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut s = seed;
    let mut uniform = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let x: Vec<f64> = (0..n * N_FEATURES).map(|_| uniform()).collect();
    let y = x
        .chunks(N_FEATURES)
        .map(|row| if row[0] + row[1] > 1.6 { 1.0 } else { -1.0 })
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

/// The mean of the accuracies on each class.
fn balanced_accuracy(model: &Model, x: &[f64], y: &[f64]) -> Result<f64, CwError> {
    let mut scores = vec![0.0; y.len()];
    model.decision_function(&rows(x), &mut scores)?;
    let accuracy_on = |label: f64| {
        let of_class = scores.iter().zip(y).filter(|(_, &t)| t == label);
        let (right, all) = of_class.fold((0, 0), |(right, all), (s, _)| {
            (right + usize::from((*s > 0.0) == (label > 0.0)), all + 1)
        });
        right as f64 / all as f64
    };
    Ok((accuracy_on(1.0) + accuracy_on(-1.0)) / 2.0)
}

fn main() -> Result<(), CwError> {
    let (x, y) = stream(20_000, 11);
    let (test_x, test_y) = stream(20_000, 12);
    let config = ModelConfig::binary("AROW", &[("r", 1.0)])
        .covariance(CovarianceKind::Diagonal)
        .n_features(N_FEATURES);
    let fresh = Model::from_config(config, None)?;

    let mut plain = fresh.clone();
    plain.partial_fit(&rows(&x), Targets::Values(&y), Presentation::default())?;

    // The stream in calls of 1,000 rows, each balanced by the counts so far.
    let balanced_calls = Presentation {
        balanced: true,
        ..Presentation::default()
    };
    let mut balanced = fresh.clone();
    for (x, y) in x.chunks(1_000 * N_FEATURES).zip(y.chunks(1_000)) {
        balanced.partial_fit(&rows(x), Targets::Values(y), balanced_calls)?;
    }

    // Every positive, one negative in ten weighted 10: the counts stay those of the stream.
    let kept: Vec<usize> = (0..y.len())
        .filter(|&i| y[i] > 0.0 || i % 10 == 0)
        .collect();
    let kept_x: Vec<f64> = kept
        .iter()
        .flat_map(|&i| x[i * N_FEATURES..(i + 1) * N_FEATURES].iter().copied())
        .collect();
    let kept_y: Vec<f64> = kept.iter().map(|&i| y[i]).collect();
    let weights: Vec<f64> = kept_y
        .iter()
        .map(|&t| if t > 0.0 { 1.0 } else { 10.0 })
        .collect();
    let mut subsampled = fresh.clone();
    let weighted = Presentation {
        weights: Some(&weights),
        balanced: true,
        ..Presentation::default()
    };
    subsampled.partial_fit(&rows(&kept_x), Targets::Values(&kept_y), weighted)?;

    let positives = y.iter().filter(|&&t| t > 0.0).count();
    println!("AROW (diagonal) on {} rows, {positives} positive:", y.len());
    for (name, model) in [
        ("as it is", &plain),
        ("balanced", &balanced),
        ("subsampled", &subsampled),
    ] {
        let score = balanced_accuracy(model, &test_x, &test_y)?;
        println!("  {name:10} balanced accuracy {score:.3}");
    }
    println!("  class counts, balanced: {:?}", balanced.class_counts());
    println!(
        "  class counts, subsampled: {:?}",
        subsampled.class_counts()
    );
    let (plain, balanced) = (
        balanced_accuracy(&plain, &test_x, &test_y)?,
        balanced_accuracy(&balanced, &test_x, &test_y)?,
    );
    assert!(balanced > plain + 0.1, "{balanced} against {plain}");
    Ok(())
}
