//! Baton's built-in tools (SPEC §13).
//!
//! Each tool lives in its own module and is built from the engine's tool
//! contract only; [`BuiltinConfig`] hands the whole set to a host or the CLI, so
//! nothing outside this crate needs to know which tools exist.

pub mod agent;
pub mod apply_patch;
pub mod ask;
pub mod bash;
pub mod exec;
pub mod files;
pub mod git;
pub mod glob;
pub mod grep;
pub mod monitor;
pub mod plan;
pub mod registry;
pub mod skill;
pub mod sleep;
pub mod tasks;
pub mod todo;
pub mod tool_search;
pub mod web_fetch;
pub mod worktree;

#[cfg(test)]
mod test_support;

pub use registry::BuiltinConfig;
