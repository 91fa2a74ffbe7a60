//! The sandbox's integration tests, one binary: each module was a test
//! binary of its own, and each linked the whole dependency graph again.
//!
//! Run one module's tests with `cargo test -p baton-sandbox --test
//! integration <module>::`.

// Tests may unwrap, and their helpers are public to their modules.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod support;

mod confine;
mod curl;
mod http_proxy;
mod kernel_edges;
mod lifecycle;
mod local_targets;
mod pinned;
mod rules_prop;
mod socks_proxy;
