//! cwrs: confidence-weighted online learning.
//!
//! Every rule of the family is a scalar function `(m, v, ‖x‖²) -> (α, c)` ([`rules`]); every
//! covariance form knows how to compute `v = xᵀΣx` and apply a precision increment
//! ([`covariance`]); the one learning loop ([`learn::online::Online`]) drives models of a form
//! for an objective ([`learn::objective`]: binary, regression, multiclass); [`Model`] is a
//! model of any kind built from a typed [`ModelConfig`], which saves and loads the `.cwrs` files
//! Python reads; [`parallel`] trains on several cores and merges. The Python bindings are a
//! crate of their own (`cwrs-python`) built on this one. See docs/design.md for the math.
//!
//! # Example
//!
//! A three-class AROW model with a full covariance over two features, learning a batch and
//! predicting (examples/ has streams, files Python reads, and shards merged):
//!
//! ```
//! use cwrs::{CovarianceKind, Matrix, Model, ModelConfig, Presentation, Targets};
//!
//! let config = ModelConfig::multiclass("AROW", &[("r", 1.0)], 3)
//!     .covariance(CovarianceKind::Full)
//!     .n_features(2);
//! let mut model = Model::from_config(config, None)?;
//! let x = [1.0, 0.0, 0.0, 1.0, -1.0, -1.0, 0.9, 0.1, 0.1, 0.9, -0.9, -1.1];
//! let rows = Matrix::Dense { values: &x, n_rows: 6, n_cols: 2 };
//! model.partial_fit(&rows, Targets::Classes(&[0, 1, 2, 0, 1, 2]), Presentation::default())?;
//! let mut scores = [0.0; 3];
//! let row = Matrix::Dense { values: &[1.0, 0.1], n_rows: 1, n_cols: 2 };
//! model.decision_function(&row, &mut scores)?;
//! assert_eq!(cwrs::model::best_class(&scores), 0);
//! # Ok::<(), cwrs::CwError>(())
//! ```
//!
//! The binary learner also has a direct typed constructor, for row-by-row use:
//!
//! ```
//! use cwrs::{CovarianceKind, Learner, Row, Rule};
//!
//! let mut learner = Learner::new(Rule::AROW { r: 1.0 }, CovarianceKind::Diagonal, 2, true, 1.0)?;
//! for (x, y) in [([1.0, 0.5], 1.0), ([-1.0, 0.2], -1.0), ([0.8, -0.1], 1.0)] {
//!     learner.learn(Row::Dense(&x), y)?;
//! }
//! assert!(learner.decision(Row::Dense(&[1.0, 0.0]))? > 0.0);
//! # Ok::<(), cwrs::CwError>(())
//! ```

#![warn(missing_docs)]

pub mod bandit;
pub mod covariance;
pub mod data;
pub mod error;
pub mod learn;
pub(crate) mod linalg;
pub mod model;
pub mod parallel;
pub mod rules;
// The tests' pseudo-random source, shared with the bindings crate's tests.
#[doc(hidden)]
pub mod test_rng;

/// The cores this process may use, asked once: the query reads cgroup files, which costs more
/// than a small update.
pub(crate) fn available_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `here()` on this thread while `there()` runs on a second one (on this one after `here()`
/// when the system refuses the thread, [`parallel::threads::spawn_or_keep`]). A panic of either is
/// resumed here.
pub(crate) fn on_two_threads(here: impl FnOnce(), there: impl FnOnce() + Send) {
    std::thread::scope(|scope| {
        let second = parallel::threads::spawn_or_keep(scope, there);
        here();
        second.join();
    });
}

pub use covariance::CovarianceKind;
pub use data::{Matrix, Presentation, Row, Shape};
pub use error::CwError;
pub use learn::learner::Learner;
pub use learn::online::Progressive;
pub use model::config::ModelConfig;
pub use model::{Model, Targets};
pub use rules::Rule;
