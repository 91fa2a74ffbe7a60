//! The tools' integration tests, one binary: each module was a test binary
//! of its own, and each linked the whole dependency graph again. Tests run
//! side by side in this one process, so the processes a test counts carry
//! a marker of its own (`bash_common::marker`), and the memory test runs in
//! a fresh process (`baton_test_support::own_process!`).
//!
//! Run one module's tests with `cargo test -p baton-tools --test
//! integration <module>::`.

// Tests may unwrap, and their helpers are public to their modules.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod bash_common;

mod bash_behaviour;
mod bash_detach;
mod bash_leaks;
mod bash_memory;
