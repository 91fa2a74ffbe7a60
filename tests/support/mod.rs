//! What several of this package's test modules share and only they can
//! use: the `baton` binary's path (known to this package's tests alone),
//! and helpers built on this crate's own types. What other crates' tests
//! share too lives in the `baton-test-support` crate.

pub mod baton_run;
pub mod fault_feed;
pub mod files_worker;
pub mod routed;

use std::process::Command;

/// The `baton` binary this package built.
pub const BATON: &str = env!("CARGO_BIN_EXE_baton");

/// The `baton` binary as a command, nothing set.
pub fn baton() -> Command {
    baton_test_support::cli::baton(BATON)
}
