//! What the workspace's integration tests share: `baton` started as a
//! child (the CLI, `baton serve`, remote workers, Python hosts), fake
//! models (stream scenarios, a mock model API, the scripted subagent
//! model), the MCP test servers, counting the processes a test left
//! behind, and running a test in a process of its own.
//!
//! Each crate's integration tests are one binary whose tests run side by
//! side in one process, so what a test looks for must be its own (see
//! [`procs::marker`]) and a test that changes or measures the whole
//! process runs in a fresh one ([`own_process!`]).
//!
//! Only the root package's tests know where the `baton` binary is
//! (`CARGO_BIN_EXE_baton`), so whatever starts it takes the path.

// Helpers for tests only (never published): their names and the tests
// that call them say what they are for, and a failed setup should stop
// the test where it happened.
#![allow(
    missing_docs,
    missing_debug_implementations,
    clippy::unwrap_used,
    clippy::expect_used
)]

pub mod cli;
#[cfg(feature = "engine")]
pub mod mcp_like;
pub mod mcp_servers;
#[cfg(feature = "model-server")]
pub mod model_server;
pub mod own_process;
pub mod procs;
pub mod proxy;
pub mod python_host;
pub mod scenario;
#[cfg(feature = "engine")]
pub mod scripted;
pub mod sdk_check;
pub mod serve;
pub mod worker;

use std::path::{Path, PathBuf};

/// The workspace's root directory, where the tests' fixtures live.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}
