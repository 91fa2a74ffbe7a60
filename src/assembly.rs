//! The one way a session is assembled from its settings files, used by the
//! library ([`Engine::configured`], [`Engine::assemble`]) and by every CLI
//! command, so the two cannot drift apart (they once did: `baton run`
//! skipped a start-up warning the library gave).
//!
//! Two steps, because MCP servers are started between them by whoever owns
//! the process (the CLI asks on the terminal and stops them on a signal; a
//! host has its own ways):
//! 1. [`Engine::assemble`]: the settings files merged, the confinement
//!    warnings added, the agent types and skills of the project and its
//!    plugins loaded, the built-in tools built (codex's too for that tool
//!    set) and the ones named for remote workers routed there;
//! 2. [`Assembly::builder`]: the pool (built-ins, then the MCP servers'
//!    tools, under the rules), and a builder with the rules, hooks, mode,
//!    directories, `env`, sandbox and tool set applied.
//!
//! The CLI adds only what it alone has: the state directory, the
//! transcript, approvals on the terminal or the serve protocol, flags that
//! override a setting.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use baton_engine::settings::Settings;
use baton_engine::tool::Tool;
use baton_engine::wire::ToolSet;
use baton_engine::{PoolSpec, ToolPool};
use baton_mcp::McpClients;

use crate::remote::RemoteConfig;
use crate::settings::{confinement_warnings, ConfigError};
use crate::{BuiltinConfig, Engine, EngineBuilder};

/// What a session is assembled from.
#[derive(Clone, Debug, Default)]
pub struct AssemblyOptions {
    /// The session's working directory (the project whose `.claude/` is
    /// read).
    pub cwd: PathBuf,
    /// An extra settings file read last (`--settings`).
    pub settings_file: Option<PathBuf>,
    /// The tool set the model is given (codex's adds `apply_patch`).
    pub tool_set: ToolSet,
    /// Tools to run on remote workers (none by default).
    pub remote: RemoteConfig,
    /// A key that spreads sessions over the remote workers (the same key
    /// always starts on the same worker); default: the directory and the
    /// process id.
    pub session_key: Option<String>,
}

impl AssemblyOptions {
    /// The options for a session in `cwd` with the settings files alone.
    pub fn new(cwd: &Path) -> Self {
        AssemblyOptions {
            cwd: cwd.to_path_buf(),
            ..AssemblyOptions::default()
        }
    }
}

/// A session's settings and tools, before its MCP servers join.
#[derive(Debug)]
pub struct Assembly {
    /// The merged settings, their warnings including the confinement ones.
    pub settings: Settings,
    /// Built-in tools (and the tool set's), remote ones already routed.
    pub tools: Vec<Arc<Tool>>,
    /// What could not be loaded, by source (`agents: …`, `skills: …`).
    pub diagnostics: Vec<String>,
    cwd: PathBuf,
    tool_set: ToolSet,
}

impl Engine {
    /// Loads the settings files for a session in `cwd` (user, project,
    /// local, then `explicit`), and returns a builder for the built-in
    /// tools configured by them (the project's agent types and skills
    /// included), with the settings (for their warnings and the model-hook
    /// slot). Set anything else on the builder, then build. The same path
    /// as the CLI's, without MCP servers; see [`Engine::assemble`] for
    /// those and the other options.
    pub fn configured(
        cwd: &Path,
        explicit: Option<&Path>,
    ) -> Result<(EngineBuilder, Settings), ConfigError> {
        let options = AssemblyOptions {
            settings_file: explicit.map(Path::to_path_buf),
            ..AssemblyOptions::new(cwd)
        };
        let assembled = Engine::assemble(&options)?.builder(None);
        Ok((assembled.builder, assembled.settings))
    }

    /// The first step of assembling a session (see the module docs).
    pub fn assemble(options: &AssemblyOptions) -> Result<Assembly, ConfigError> {
        let cwd = options.cwd.clone();
        let mut settings = Settings::load(&cwd, options.settings_file.as_deref())?;
        let warnings = confinement_warnings(&settings, &cwd);
        settings.warnings.extend(warnings);
        let mut builtins = BuiltinConfig::for_project(&cwd, &settings.plugin_roots);
        builtins.skills.shell_disabled = settings.disable_skill_shell;
        let mut diagnostics: Vec<String> = Vec::new();
        diagnostics.extend(
            builtins
                .agents
                .diagnostics
                .iter()
                .map(|d| format!("agents: {d}")),
        );
        diagnostics.extend(
            builtins
                .skills
                .diagnostics
                .iter()
                .map(|d| format!("skills: {d}")),
        );
        let mut tools = builtins.tools().map_err(ConfigError::Tools)?;
        if options.tool_set == ToolSet::Codex {
            tools.extend(crate::tool_set::codex_tools().map_err(ConfigError::Tools)?);
        }
        let session_key = options
            .session_key
            .clone()
            .unwrap_or_else(|| format!("{}:{}", cwd.display(), std::process::id()));
        let tools = crate::remote::route(tools, &options.remote, &session_key)
            .map_err(ConfigError::Remote)?;
        Ok(Assembly {
            settings,
            tools,
            diagnostics,
            cwd,
            tool_set: options.tool_set,
        })
    }
}

/// A session ready to build: what [`Assembly::builder`] gives.
#[derive(Debug)]
pub struct Assembled {
    /// The engine's builder, settings applied; set the rest, then build.
    pub builder: EngineBuilder,
    /// The merged settings (warnings, the model-hook slot).
    pub settings: Settings,
    /// The session's pool.
    pub pool: ToolPool,
    /// MCP tools that could not be offered, each a sentence.
    pub mcp_problems: Vec<String>,
}

impl Assembly {
    /// The second step: the pool (the built-ins, then `mcp`'s tools, under
    /// the rules; a tool a deny rule names whole is left out) and a builder
    /// with the settings applied. `mcp_tool` hooks call the same servers.
    pub fn builder(self, mcp: Option<Arc<McpClients>>) -> Assembled {
        let mut others = Vec::new();
        let mut mcp_problems = Vec::new();
        if let Some(clients) = &mcp {
            self.settings.mcp_hooks.set(clients.clone());
            (others, mcp_problems) = clients.tools();
        }
        let pool = ToolPool::assemble(
            PoolSpec {
                builtins: self.tools,
                others,
                ..PoolSpec::default()
            },
            &*self.settings.policy,
        );
        let mut builder = Engine::builder(pool.clone())
            .cwd(&self.cwd)
            .settings(&self.settings)
            .tool_set(self.tool_set);
        if let Some(clients) = mcp {
            builder = builder.mcp(clients);
        }
        Assembled {
            builder,
            settings: self.settings,
            pool,
            mcp_problems,
        }
    }
}
