//! PyO3 bindings (in progress).
