//! cwrs: confidence-weighted online learning.
//!
//! Every rule of the family is a scalar function `(m, v, ‖x‖²) -> (α, c)` ([`rules`]); every
//! covariance form knows how to compute `v = xᵀΣx` and apply a precision increment
//! ([`covariance`]); the one learning loop ([`online::Online`]) drives models of a form for an
//! objective ([`objective`]: binary, regression, multiclass). See docs/design.md for the math.

pub mod attributes;
pub mod average;
// Used by the Python bindings only; its tests run with `cargo test`.
#[cfg_attr(not(feature = "python"), allow(dead_code))]
pub(crate) mod call_cost;
// Used by the Python bindings only; its tests run with `cargo test`.
#[cfg_attr(not(feature = "python"), allow(dead_code))]
pub(crate) mod calls;
pub mod covariance;
pub mod data;
pub mod drift;
pub mod error;
pub mod estimator;
pub(crate) mod exp;
pub mod file_learning;
pub(crate) mod huge_pages;
pub mod interrupt;
pub mod kernel;
pub mod learner;
pub(crate) mod linalg;
pub mod merge;
pub mod multiclass;
pub mod objective;
pub mod online;
pub mod regression;
pub mod rules;
pub mod sharded;
pub(crate) mod simd;
// Used by the Python bindings only; its tests run with `cargo test`.
#[cfg_attr(not(feature = "python"), allow(dead_code))]
pub(crate) mod shared;
pub mod sparse_l1;
pub mod state;
#[cfg(test)]
mod state_props;
#[cfg(test)]
mod test_rng;
pub(crate) mod threads;

#[cfg(feature = "python")]
mod python;

/// The cores this process may use, asked once: the query reads cgroup files, which costs more
/// than a small update.
pub(crate) fn available_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// `here()` on this thread while `there()` runs on a second one (on this one after `here()`
/// when the system refuses the thread, [`threads::spawn_or_keep`]). A panic of either is
/// resumed here.
pub(crate) fn on_two_threads(here: impl FnOnce(), there: impl FnOnce() + Send) {
    std::thread::scope(|scope| {
        let second = threads::spawn_or_keep(scope, there);
        here();
        second.join();
    });
}

pub use covariance::CovarianceKind;
pub use data::{Matrix, Presentation, Row, Shape};
pub use error::CwError;
pub use learner::Learner;
pub use rules::Rule;
