//! Learning from a stream in Rust: binary AROW with a diagonal and a full covariance, a
//! multiclass learner and a regressor, row by row and in batches, then predictions.
//!
//!     cargo run --example stream

use cwrs::learn::multiclass::MulticlassLearner;
use cwrs::learn::objective::{Multiclass, Strategy};
use cwrs::learn::regression::Regressor;
use cwrs::rules::RegressionRule;
use cwrs::{CovarianceKind, CwError, Learner, Matrix, Presentation, Row, Rule, Shape};

/// A deterministic stream: `n` rows of `d` features in [-1, 1) (a linear congruential
/// generator, so that the example needs no crate) and the weights that label them.
fn stream(n: usize, d: usize) -> (Vec<f64>, Vec<f64>) {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let x: Vec<f64> = (0..n * d).map(|_| next()).collect();
    let w: Vec<f64> = (0..d).map(|_| next()).collect();
    (x, w)
}

fn main() -> Result<(), CwError> {
    let (n, d) = (2_000, 10);
    let (x, w) = stream(n, d);
    let score = |i: usize| -> f64 {
        x[i * d..(i + 1) * d]
            .iter()
            .zip(&w)
            .map(|(a, b)| a * b)
            .sum()
    };
    let labels: Vec<f64> = (0..n)
        .map(|i| if score(i) > 0.0 { 1.0 } else { -1.0 })
        .collect();
    let rows = Matrix::Dense {
        values: &x,
        n_rows: n,
        n_cols: d,
    };

    // Binary AROW, learned row by row (progressive validation: each row is predicted before it
    // is learned), then a diagonal and a full covariance in one batch each.
    for kind in [CovarianceKind::Diagonal, CovarianceKind::Full] {
        let mut learner = Learner::new(Rule::AROW { r: 1.0 }, kind, d, true, 1.0)?;
        let mut mistakes = 0;
        for (i, &label) in labels.iter().enumerate() {
            let row = Row::Dense(&x[i * d..(i + 1) * d]);
            mistakes += usize::from(learner.decision(row)? * label <= 0.0);
            learner.learn(row, label)?;
        }
        println!("AROW {kind:?}: {mistakes} online mistakes in {n} rows");
        let mut batch = Learner::new(Rule::AROW { r: 1.0 }, kind, d, true, 1.0)?;
        batch.partial_fit(&rows, &labels, Presentation::default())?;
        // A batch learns exactly what the rows learned one by one do.
        assert_eq!(batch.mean(), learner.mean());
    }

    // Three classes (the sign of two scores), max-score AROW over a diagonal covariance.
    let classes: Vec<usize> = (0..n)
        .map(|i| usize::from(score(i) > 0.0) + usize::from(x[i * d] > 0.5))
        .collect();
    let objective = Multiclass {
        rule: Rule::AROW { r: 1.0 },
        strategy: Strategy::MaxScore,
    };
    let shape = Shape::new(d, true)?;
    let mut multiclass =
        MulticlassLearner::new(objective, CovarianceKind::Diagonal, 3, shape, 1.0)?;
    multiclass.partial_fit(&rows, &classes, Presentation::default())?;
    let mut scores = vec![0.0; n * 3];
    multiclass.decision_function(&rows, &mut scores)?;
    let correct = (0..n)
        .filter(|&i| {
            let row = &scores[i * 3..(i + 1) * 3];
            let best = (0..3).fold(0, |b, k| if row[k] > row[b] { k } else { b });
            best == classes[i]
        })
        .count();
    println!("multiclass AROW: {correct} of {n} rows right after one pass");

    // Recursive least squares (AROW regression, noise variance r) on the scores themselves:
    // exact Bayesian linear regression, which with noiseless targets and r small recovers them.
    let targets: Vec<f64> = (0..n).map(score).collect();
    let rule = RegressionRule::AROW { r: 0.01 };
    let mut regressor = Regressor::new(rule, CovarianceKind::Full, d, true, 1.0)?;
    regressor.partial_fit(&rows, &targets, Presentation::default())?;
    let mut predicted = vec![0.0; n];
    regressor.predict(&rows, &mut predicted)?;
    let error = predicted
        .iter()
        .zip(&targets)
        .map(|(p, t)| (p - t).abs())
        .fold(0.0, f64::max);
    println!("AROW regression: largest absolute error {error:.2e}");
    assert!(error < 1e-3);
    Ok(())
}
