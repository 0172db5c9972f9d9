//! Learning: the one loop over rows ([`online`]), the objectives it learns (binary,
//! [`multiclass`], [`regression`]), what a round adds to a model (averaging, drift, the L1
//! penalty), the typed binary learner and learning from files.

pub mod average;
pub mod drift;
pub mod file_learning;
pub mod learner;
pub mod multiclass;
pub mod noise_estimate;
pub mod objective;
pub mod online;
pub mod prior_estimate;
pub mod regression;
pub mod sparse_l1;
