//! The Python extension module of cwrs, `cwrs._cwrs`, over the `cwrs` library crate.
//!
//! [`host`] is what a caller from another runtime needs around a model (one model shared between
//! threads, the cost of a call, interrupts, the lean paths of small calls): free of Python, so
//! `cargo test` covers it. `python` (feature "python", the maturin build) holds the PyO3
//! bindings: conversion of Python values and thin calls into the host layer and the core.

pub mod host;

#[cfg(feature = "python")]
mod python;
