//! Several cores: the sharded fit ([`sharded`]), merging models ([`merge`]) and the rule for a
//! thread of its own (`threads`).

pub mod merge;
pub mod sharded;
pub(crate) mod threads;
