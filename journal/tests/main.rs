//! The journal's tests: one binary, a module per concern.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod answers;
mod bounds;
mod crash;
mod model;
