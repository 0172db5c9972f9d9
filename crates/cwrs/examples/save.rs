//! Training in Rust and handing the model to Python: a model of any kind is built from its
//! configuration (`cwrs::model::config::ModelConfig`, saved as the entries of
//! docs/model-format.md) by `cwrs::model::Model`, learns,
//! and is saved with `Model::save`; Python's `cwrs.load(path)` then gives the
//! estimator (here `cwrs.AROW(r=0.5)`) with the same predictions.
//!
//!     cargo run --example save [-- path/to/model.cwrs]

use cwrs::model::config::ModelConfig;
use cwrs::model::file::Labels;
use cwrs::model::{Model, Targets};
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
    // A diagonal covariance, a = 1 and an intercept are the defaults.
    let config = ModelConfig::binary("AROW", &[("r", 0.5)]).n_features(d);
    let mut model = Model::from_config(config, None)?;
    let rows = Matrix::Dense {
        values: &x,
        n_rows: n,
        n_cols: d,
    };
    model.partial_fit(&rows, Targets::Values(&labels), Presentation::default())?;
    // The label of a negative score first, then of a positive one, as Python sorts them.
    let classes = Labels::Strings(vec!["ham".into(), "spam".into()]);
    model.save(&path, Some(&classes))?;
    println!(
        "saved {} (load it in Python: cwrs.load({:?}))",
        path.display(),
        path
    );
    let again = Model::load(&path)?;
    assert_eq!(again.model.state(), model.state());
    println!(
        "{}: {} updates, classes {:?}",
        again.estimator,
        model.n_updates(),
        again.classes
    );
    Ok(())
}
