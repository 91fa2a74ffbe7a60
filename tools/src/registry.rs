//! The set of built-in tools and the knobs they share.
//!
//! Hosts and the CLI ask for "the built-ins" rather than naming each tool, so
//! adding a tool here is the only step needed to offer it everywhere.
//! [`BuiltinConfig`] is the one way to get them: every limit a built-in
//! enforces is a field, with the SPEC's default, so a host can tune them
//! without touching tool code; the agents and skills they offer are fields
//! too ([`BuiltinConfig::for_project`] loads a project's); and it builds
//! the tools ([`BuiltinConfig::tools`]) or a pool of them
//! ([`BuiltinConfig::pool`]).
//!
//! ```no_run
//! # fn host(policy: &dyn baton_engine::PermissionPolicy) -> Result<(), baton_engine::schema::InvalidSchema> {
//! use baton_tools::BuiltinConfig;
//! // Every built-in with default limits, the built-in agent types, no skills.
//! let pool = BuiltinConfig::default().pool(policy)?;
//! // A project's agents and skills (`~/.claude`, then `.claude`), longer reads.
//! let mut config = BuiltinConfig::for_project(std::path::Path::new("/src/app"), &[]);
//! config.read.default_lines = 4_000;
//! let tools = config.tools()?;
//! # let _ = (pool, tools);
//! # Ok(())
//! # }
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use baton_engine::pool::{PoolSpec, ToolPool};
use baton_engine::schema::InvalidSchema;
use baton_engine::{PermissionPolicy, Tool};

use crate::agent::AgentCatalog;
use crate::bash::BashConfig;
use crate::files::ReadLimits;
use crate::skill::SkillCatalog;

/// Limits and defaults of the built-in tools.
#[derive(Clone, Debug)]
pub struct BuiltinConfig {
    /// Time limits, output bounds and progress of `Bash` and its tasks.
    pub bash: BashConfig,
    /// How much `Read` shows.
    pub read: ReadLimits,
    /// Longest wait `Sleep` accepts, in milliseconds.
    pub sleep_max_ms: u64,
    /// Most paths `Glob` lists before saying the list was cut.
    pub glob_max_results: usize,
    /// Lines or entries `Grep` returns when the call gives no `head_limit`.
    pub grep_default_head_limit: usize,
    /// Largest body `WebFetch` downloads, in bytes.
    pub web_fetch_max_bytes: u64,
    /// Longest a whole `WebFetch` request may take.
    pub web_fetch_timeout: Duration,
    /// Most redirects `WebFetch` follows.
    pub web_fetch_max_redirects: usize,
    /// The agent types `Agent` offers (default: the built-ins).
    pub agents: AgentCatalog,
    /// The skills `Skill` offers; without any, `Skill` is not offered.
    pub skills: SkillCatalog,
}

impl Default for BuiltinConfig {
    fn default() -> Self {
        BuiltinConfig {
            bash: BashConfig::default(),
            read: ReadLimits::default(),
            sleep_max_ms: Duration::from_secs(600).as_millis() as u64,
            glob_max_results: 100,
            grep_default_head_limit: 250,
            web_fetch_max_bytes: 10 * 1024 * 1024,
            web_fetch_timeout: Duration::from_secs(30),
            web_fetch_max_redirects: 10,
            agents: AgentCatalog::builtin(),
            skills: SkillCatalog::default(),
        }
    }
}

impl BuiltinConfig {
    /// Default limits, with the agent types and skills of a project: the
    /// built-in agents, then `~/.claude` (from `$HOME`), then the project's
    /// `.claude`, then those of `plugins` (`(name, root)`, e.g.
    /// `Settings::plugin_roots`, named `plugin:agent` / `plugin:skill`).
    /// What could not be loaded is in the catalogs' `diagnostics`.
    pub fn for_project(project_dir: &Path, plugins: &[(String, PathBuf)]) -> Self {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        BuiltinConfig {
            agents: AgentCatalog::load_with_plugins(project_dir, home.as_deref(), plugins),
            skills: SkillCatalog::load(project_dir, home.as_deref(), plugins),
            ..BuiltinConfig::default()
        }
    }

    /// Every built-in tool, configured by `self`, shared as a pool holds
    /// them ([`PoolSpec::builtins`]).
    ///
    /// Fails only if a tool's derived input schema does not compile, which
    /// is a bug in this crate (the tests build every tool).
    pub fn tools(&self) -> Result<Vec<Arc<Tool>>, InvalidSchema> {
        Ok(build(self)?.into_iter().map(Arc::new).collect())
    }

    /// The pool of the built-ins under `policy`: a tool the policy denies
    /// as a whole (a blanket deny rule) is left out.
    pub fn pool(&self, policy: &dyn PermissionPolicy) -> Result<ToolPool, InvalidSchema> {
        Ok(ToolPool::assemble(
            PoolSpec {
                builtins: self.tools()?,
                ..PoolSpec::default()
            },
            policy,
        ))
    }
}

/// Every built-in tool, configured by `config`.
fn build(config: &BuiltinConfig) -> Result<Vec<Tool>, InvalidSchema> {
    let mut tools = crate::bash::tools(&config.bash)?;
    tools.extend(crate::exec::tools(&crate::exec::ExecConfig::default())?);
    tools.extend(crate::files::try_tools(config.read)?);
    tools.extend(crate::plan::tools()?);
    tools.extend(crate::worktree::tools()?);
    if !config.skills.skills().is_empty() {
        tools.push(crate::skill::tool(
            config.skills.clone(),
            config.agents.clone(),
        )?);
    }
    tools.extend([
        crate::agent::tool(config.agents.clone())?,
        crate::agent::list::tool()?,
        crate::agent::messaging::tool()?,
        crate::ask::tool()?,
        crate::glob::tool(config)?,
        crate::grep::tool(config)?,
        crate::monitor::tool()?,
        crate::sleep::tool(config)?,
        crate::todo::tool()?,
        crate::tool_search::tool()?,
        crate::web_fetch::tool(config)?,
    ]);
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use baton_engine::{AllowAllUnsafe, InterruptBehavior, Pipeline, ToolUse};
    use serde_json::json;

    use super::*;

    #[test]
    fn every_builtin_builds_with_a_unique_name() {
        let tools = BuiltinConfig::default().tools().unwrap();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
        for expected in [
            "Agent",
            "Bash",
            "Edit",
            "Glob",
            "Grep",
            "NotebookEdit",
            "Read",
            "Sleep",
            "TaskOutput",
            "TaskStop",
            "TodoWrite",
            "ToolSearch",
            "WebFetch",
            "Write",
        ] {
            assert!(names.contains(&expected), "{expected} missing");
        }
        let count = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), count, "duplicate tool names: {names:?}");
        for tool in &tools {
            assert_eq!(tool.input_schema()["type"], "object", "{}", tool.name());
        }
    }

    /// SPEC §13's table: safe / read-only per tool, for a typical input.
    #[test]
    fn classification_matches_the_spec_table() {
        let pool = BuiltinConfig::default().pool(&AllowAllUnsafe).unwrap();
        let pipeline = Pipeline::allow_all_unsafe(pool);
        let rows = [
            ("Read", json!({"file_path": "/tmp/x"}), true, true),
            (
                "Write",
                json!({"file_path": "/tmp/x", "content": ""}),
                false,
                false,
            ),
            (
                "Edit",
                json!({"file_path": "/tmp/x", "old_string": "a", "new_string": "b"}),
                false,
                false,
            ),
            ("Glob", json!({"pattern": "*"}), true, true),
            ("Grep", json!({"pattern": "x"}), true, true),
            (
                "WebFetch",
                json!({"url": "https://example.com", "prompt": "p"}),
                true,
                true,
            ),
            ("TodoWrite", json!({"todos": []}), false, false),
            ("Sleep", json!({"duration_ms": 1}), true, true),
            (
                "Agent",
                json!({"description": "d", "prompt": "p"}),
                true,
                true,
            ),
            ("ToolSearch", json!({"query": "select:Read"}), true, true),
            ("Bash", json!({"command": "ls -la"}), true, true),
            ("Bash", json!({"command": "rm -rf build"}), false, false),
            ("TaskOutput", json!({"task_id": "t1"}), true, true),
            ("TaskStop", json!({"task_id": "t1"}), true, false),
        ];
        for (name, input, safe, read_only) in rows {
            let prepared = pipeline.prepare(ToolUse::new("c", name, input));
            assert!(prepared.tool().is_some(), "{name} not in the pool");
            assert_eq!(prepared.safe, safe, "{name} safe");
            assert_eq!(prepared.read_only, read_only, "{name} read-only");
            // Waiting (Sleep, TaskOutput's wait) stops when the user types;
            // so does ToolSearch, which has nothing to lose.
            let expected = if matches!(name, "Sleep" | "TaskOutput" | "ToolSearch") {
                InterruptBehavior::Cancel
            } else {
                InterruptBehavior::Block
            };
            assert_eq!(prepared.interrupt, expected, "{name} interrupt");
        }
    }

    /// Deferred by default exactly as in current Claude Code (SPEC §10).
    #[test]
    fn deferred_builtins_match_claude_code() {
        let tools = BuiltinConfig::default().tools().unwrap();
        let mut deferred: Vec<&str> = tools
            .iter()
            .filter(|t| t.def().is_deferred())
            .map(|t| t.name())
            .collect();
        deferred.sort();
        assert_eq!(
            deferred,
            [
                "EnterWorktree",
                "ExitWorktree",
                "ListAgents",
                "Monitor",
                "NotebookEdit",
                "SendMessage",
                "Sleep",
                "TaskOutput",
                "TaskStop",
                "TodoWrite",
                "WebFetch",
                "exec_command",
                "write_stdin"
            ]
        );
        for tool in &tools {
            if tool.def().is_deferred() {
                assert!(
                    tool.def().search_hint_text().is_some(),
                    "{} is deferred, so it needs a search hint",
                    tool.name()
                );
            }
        }
    }
}
