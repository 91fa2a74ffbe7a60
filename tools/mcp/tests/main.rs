//! The MCP client's integration tests, one binary: each module was a test
//! binary of its own, and each linked the whole dependency graph again.
//!
//! Run one module's tests with `cargo test -p baton-mcp --test integration
//! <module>::`.

// Tests may unwrap, and their helpers are public to their modules.
#![allow(clippy::unwrap_used, clippy::expect_used, unreachable_pub)]

mod common;

mod config_load;
mod connect_fallback;
mod elicitation_defaults;
mod everything_server;
mod plugin_config;
mod python_server;
mod remote_servers;
mod resource_tools;
mod size_limits;
mod tasks_client;
