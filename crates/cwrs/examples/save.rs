//! Training in Rust and handing the model to Python: a model of any kind is built from its
//! named configuration (`cwrs::model::Estimator`, the entries of docs/model-format.md), learns,
//! and is saved with `cwrs::model::file::save`; Python's `cwrs.load(path)` then gives the
//! estimator (here `cwrs.AROW(r=0.5)`) with the same predictions.
//!
//!     cargo run --example save [-- path/to/model.cwrs]

use cwrs::model::file::{load, save, Labels};
use cwrs::model::state::State;
use cwrs::model::{Estimator, Targets};
use cwrs::{CwError, Matrix, Presentation};

fn main() -> Result<(), CwError> {
    let path = std::env::args()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("cwrs-example.cwrs"));
    // Two features: the label is "spam" where 2·x₀ − x₁ > 0.
    let (n, d) = (500, 2);
    let x: Vec<f64> = (0..n * d)
        .map(|k| ((k * 37 % 101) as f64) / 50.0 - 1.0)
        .collect();
    let labels: Vec<f64> = (0..n)
        .map(|i| {
            if 2.0 * x[2 * i] - x[2 * i + 1] > 0.0 {
                1.0
            } else {
                -1.0
            }
        })
        .collect();
    let config = State::default()
        .with("kind", "binary")
        .with("rule", "AROW")
        .with("params", vec![("r".to_string(), 0.5)])
        .with("n_features", d)
        .with("fit_intercept", true)
        .with("a", 1.0)
        .with("covariance", "diag");
    let mut model = Estimator::new(config, None)?;
    let rows = Matrix::Dense {
        values: &x,
        n_rows: n,
        n_cols: d,
    };
    model.partial_fit(&rows, Targets::Values(&labels), Presentation::default())?;
    // The label of a negative score first, then of a positive one, as Python sorts them.
    let classes = Labels::Strings(vec!["ham".into(), "spam".into()]);
    save(&path, &model, Some(&classes))?;
    println!(
        "saved {} (load it in Python: cwrs.load({:?}))",
        path.display(),
        path
    );
    let again = load(&path)?;
    assert_eq!(again.model.state(), model.state());
    println!(
        "{}: {} updates, classes {:?}",
        again.estimator,
        model.n_updates(),
        again.classes
    );
    Ok(())
}
