//! The host layer: what a caller from another runtime needs around a model (the Python
//! bindings): one model shared between threads, the cost of a call, interrupts, waits for a
//! file's reading thread, the lean paths of small calls, and a model's values by name.

pub mod attributes;
pub mod call_cost;
pub mod calls;
pub mod interrupt;
pub mod reading;
pub mod shared;
