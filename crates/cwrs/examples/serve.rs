//! Serving a model trained in Python: `estimator.save("model.cwrs")` there, then here
//! `cwrs::Model::load`, and the same decision values and labels as in Python.
//!
//!     cargo run --example serve [-- path/to/model.cwrs]
//!
//! Without a path it loads a model of the test fixtures (AROW on six features, classes "no"
//! and "yes").

use cwrs::model::file::Labels;
use cwrs::{CwError, Matrix, Model};

fn main() -> Result<(), CwError> {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/data/format_v2/arow_diag.cwrs"
        )
        .into()
    });
    let saved = Model::load(&path)?;
    let d = saved.n_features_in;
    println!("{path}: a fitted {} over {d} features", saved.estimator);

    // Three rows to score, as a service would receive them.
    let x: Vec<f64> = (0..3 * d)
        .map(|k| ((k * 7) % 11) as f64 / 5.0 - 1.0)
        .collect();
    let rows = Matrix::Dense {
        values: &x,
        n_rows: 3,
        n_cols: d,
    };
    let columns = saved.model.n_classes().filter(|&n| n > 2).unwrap_or(1);
    let mut scores = vec![0.0; 3 * columns];
    saved.model.decision_function(&rows, &mut scores)?;
    let Some(classes) = &saved.classes else {
        // A regressor: its decision values are its predictions.
        for (i, prediction) in scores.iter().enumerate() {
            println!("row {i}: prediction {prediction}");
        }
        return Ok(());
    };
    let label = |k: usize| match classes {
        Labels::Strings(names) => names[k].clone(),
        Labels::Ints(values) => values[k].to_string(),
        Labels::Floats(values) => values[k].to_string(),
    };
    for (i, k) in saved.label_indices(&scores).into_iter().enumerate() {
        let row = &scores[i * columns..(i + 1) * columns];
        println!("row {i}: scores {row:?} -> {}", label(k));
    }
    Ok(())
}
