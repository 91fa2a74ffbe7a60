//! The set of built-in tools and the knobs they share.
//!
//! Hosts and the CLI ask for "the built-ins" rather than naming each tool, so
//! adding a tool here is the only step needed to offer it everywhere.
//! Every limit a built-in enforces is a field of [`BuiltinConfig`], with the
//! SPEC's default, so a host can tune them without touching tool code.

use std::time::Duration;

use baton_engine::schema::InvalidSchema;
use baton_engine::Tool;

/// Limits and defaults of the built-in tools.
#[derive(Clone, Debug)]
pub struct BuiltinConfig {
    /// Longest wait `Sleep` accepts, in milliseconds.
    pub sleep_max_ms: u64,
}

impl Default for BuiltinConfig {
    fn default() -> Self {
        BuiltinConfig {
            sleep_max_ms: Duration::from_secs(600).as_millis() as u64,
        }
    }
}

/// Every built-in tool, configured by `config`.
///
/// Fails only if a tool's derived input schema does not compile, which is a
/// bug in this crate (the tests build every tool).
pub fn try_builtins(config: &BuiltinConfig) -> Result<Vec<Tool>, InvalidSchema> {
    let tools = vec![crate::sleep::tool(config)?];
    Ok(tools)
}

/// Every built-in tool, configured by `config`.
///
/// # Panics
/// If a derived schema does not compile: a programming error in this crate,
/// never caused by input (see [`try_builtins`]).
pub fn builtins(config: &BuiltinConfig) -> Vec<Tool> {
    match try_builtins(config) {
        Ok(tools) => tools,
        Err(err) => panic!("a built-in tool has an invalid input schema: {}", err.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_builds_with_a_unique_name() {
        let tools = builtins(&BuiltinConfig::default());
        let mut names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        assert!(names.contains(&"Sleep"));
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count, "duplicate tool names: {names:?}");
        for tool in &tools {
            assert_eq!(tool.input_schema()["type"], "object", "{}", tool.name());
        }
    }
}
