//! The tool pool the CLI (and hosts that want the defaults) offer.
//!
//! The built-in tools come from `baton-tools`; this is the one seam where
//! the facade turns them into a pool under a permission policy.

use std::path::Path;
use std::sync::Arc;

use baton_engine::pool::{PoolSpec, ToolPool};
use baton_engine::{PermissionPolicy, Tool};
use baton_tools::agent::AgentCatalog;
use baton_tools::skill::SkillCatalog;
use baton_tools::BuiltinConfig;

/// Every built-in tool with default limits.
pub fn builtin_tools() -> Result<Vec<Arc<Tool>>, String> {
    baton_tools::try_builtins(&BuiltinConfig::default())
        .map(|tools| tools.into_iter().map(Arc::new).collect())
        .map_err(|e| format!("a built-in tool could not be built: {}", e.0))
}

/// The pool of built-ins under `policy` (blanket deny rules remove tools).
pub fn builtin_pool(policy: &dyn PermissionPolicy) -> Result<ToolPool, String> {
    Ok(ToolPool::assemble(
        PoolSpec {
            builtins: builtin_tools()?,
            ..Default::default()
        },
        policy,
    ))
}

/// The agent types of a project: built-ins, `~/.claude/agents` (from
/// `$HOME`), then the project's `.claude/agents`; with the loading problems.
pub fn agent_catalog(project_dir: &Path) -> AgentCatalog {
    agent_catalog_with_plugins(project_dir, &[])
}

/// [`agent_catalog`], plus the agents of `plugins` (`(name, root)`, e.g.
/// `Settings::plugin_roots`), named `plugin:agent`.
pub fn agent_catalog_with_plugins(
    project_dir: &Path,
    plugins: &[(String, std::path::PathBuf)],
) -> AgentCatalog {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    AgentCatalog::load_with_plugins(project_dir, home.as_deref(), plugins)
}

/// The skills of a project: `~/.claude/skills` (from `$HOME`), then the
/// project's `.claude/skills`; with the loading problems.
pub fn skill_catalog(project_dir: &Path) -> SkillCatalog {
    skill_catalog_with_plugins(project_dir, &[])
}

/// [`skill_catalog`], plus the skills of `plugins` (`(name, root)`, e.g.
/// `Settings::plugin_roots`), named `plugin:skill`.
pub fn skill_catalog_with_plugins(
    project_dir: &Path,
    plugins: &[(String, std::path::PathBuf)],
) -> SkillCatalog {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    SkillCatalog::load(project_dir, home.as_deref(), plugins)
}

/// Every built-in tool, with `agents` offered by `Agent`.
pub fn builtin_tools_with_agents(agents: AgentCatalog) -> Result<Vec<Arc<Tool>>, String> {
    builtin_tools_with(agents, SkillCatalog::default())
}

/// Every built-in tool, with `agents` offered by `Agent` and `skills` by
/// `Skill` (offered only when there is a skill).
pub fn builtin_tools_with(
    agents: AgentCatalog,
    skills: SkillCatalog,
) -> Result<Vec<Arc<Tool>>, String> {
    let config = BuiltinConfig {
        agents,
        skills,
        ..Default::default()
    };
    baton_tools::try_builtins(&config)
        .map(|tools| tools.into_iter().map(Arc::new).collect())
        .map_err(|e| format!("a built-in tool could not be built: {}", e.0))
}

/// The pool of built-ins under `policy`, with `agents` offered by `Agent`.
pub fn builtin_pool_with_agents(
    policy: &dyn PermissionPolicy,
    agents: AgentCatalog,
) -> Result<ToolPool, String> {
    Ok(ToolPool::assemble(
        PoolSpec {
            builtins: builtin_tools_with_agents(agents)?,
            ..Default::default()
        },
        policy,
    ))
}
