//! The host layer: what a caller from another runtime needs around a model (the Python
//! bindings): one model shared between threads, the cost of a call, interrupts polled by work,
//! and the lean paths of small calls.

// Used by the Python bindings only; its tests run with `cargo test`.
#[cfg_attr(not(feature = "python"), allow(dead_code))]
pub(crate) mod call_cost;
// Used by the Python bindings only; its tests run with `cargo test`.
#[cfg_attr(not(feature = "python"), allow(dead_code))]
pub(crate) mod calls;
pub mod interrupt;
// Used by the Python bindings only; its tests run with `cargo test`.
#[cfg_attr(not(feature = "python"), allow(dead_code))]
pub(crate) mod shared;
