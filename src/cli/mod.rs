//! Command-line parsing and what the commands share: settings, tools and
//! the engine they run on.

mod approve;
mod mcp_serve;
mod run;
mod serve;
mod signals;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;

use baton::engine::permission::Settings;
use baton::engine::wire::WireFormat;
use baton::engine::{PermissionMode, ToolPool};
use baton::{Engine, SiblingPolicy};
use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "baton",
    version,
    about = "Executes the tool calls of LLM agents."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Execute the tool_use blocks of one assistant message (Anthropic
    /// format) and print the user message of tool results.
    Run {
        #[command(flatten)]
        common: Common,
        /// Print JSON lines (progress, results in order, done) instead.
        #[arg(long)]
        events: bool,
        /// The message file, or `-` for stdin.
        file: String,
    },
    /// A JSON-lines session on stdin/stdout (see docs/serve-protocol.md).
    Serve {
        #[command(flatten)]
        common: Common,
    },
    /// Baton and the Model Context Protocol.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Print the tool pool as the model would see it.
    Tools {
        #[command(flatten)]
        common: Common,
        #[arg(long, default_value = "anthropic", value_parser = parse_format)]
        format: WireFormat,
    },
}

#[derive(Subcommand, Debug)]
enum McpCommand {
    /// Serve the session's tools to MCP clients (stdio, or HTTP with --http);
    /// every call goes through the settings' permissions and hooks.
    Serve {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        args: mcp_serve::ServeArgs,
    },
}

#[derive(Args, Debug, Clone)]
struct Common {
    /// Working directory of the session (default: the current one).
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// An extra settings file, merged last (Claude Code format).
    #[arg(long)]
    settings: Option<PathBuf>,
    /// default, acceptEdits, plan, dontAsk or bypassPermissions.
    #[arg(long, value_parser = parse_mode)]
    permission_mode: Option<PermissionMode>,
    /// Most safe calls running at once (default 10, or
    /// $BATON_MAX_TOOL_CONCURRENCY).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    max_concurrency: Option<u64>,
    /// shell-error, mutating-shell-error or off.
    #[arg(long, value_parser = parse_policy)]
    sibling_policy: Option<SiblingPolicy>,
    /// Where spilled results and shell output go (default: a per-run
    /// directory under the system temp dir).
    #[arg(long)]
    state_dir: Option<PathBuf>,
}

fn parse_mode(s: &str) -> Result<PermissionMode, String> {
    s.parse()
}

fn parse_policy(s: &str) -> Result<SiblingPolicy, String> {
    s.parse()
}

fn parse_format(s: &str) -> Result<WireFormat, String> {
    s.parse()
}

/// A failure of the command itself (not of a tool).
#[derive(Debug)]
pub enum CliError {
    /// The input or configuration cannot be used (exit 2).
    Usage(String),
    /// Something failed while running (exit 1).
    Failed(String),
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Usage(m) | CliError::Failed(m) => f.write_str(m),
        }
    }
}

impl CliError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Failed(_) => 1,
        }
    }
}

pub fn main(cli: Cli) -> Result<(), CliError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(format!("cannot start the async runtime: {e}")))?;
    let result = match cli.command {
        Command::Run {
            common,
            events,
            file,
        } => {
            let text = run::read_input(&file)?;
            let calls = baton::engine::wire::anthropic::parse_tool_uses_str(&text)
                .map_err(|e| CliError::Usage(format!("{file}: {e}")))?;
            // Ask on the terminal only when stdin is not the message itself.
            let interactive = file != "-" && approve::terminal_attached();
            let setup = Setup::load(&common, interactive)?;
            signals::guard_against_sudden_death();
            runtime.block_on(run::run(setup, calls, events))
        }
        Command::Serve { common } => {
            signals::guard_against_sudden_death();
            let setup = Setup::load(&common, true)?;
            runtime.block_on(serve::serve(setup))
        }
        Command::Mcp {
            command: McpCommand::Serve { common, args },
        } => {
            let setup = Setup::load(&common, true)?;
            runtime.block_on(mcp_serve::serve(setup, args))
        }
        Command::Tools { common, format } => {
            let setup = Setup::load(&common, false)?;
            tools::print(&setup.pool, format)
        }
    };
    // Whatever still runs (background tasks, jobs left by finished
    // commands) ends with the session, now.
    baton::engine::process::kill_all_now();
    // A read of stdin may still be pending on a blocking thread (the session
    // ended on a signal, not on end of input); do not wait for it.
    runtime.shutdown_background();
    result
}

/// Everything a command needs, loaded from the flags and settings files.
pub struct Setup {
    pub pool: ToolPool,
    builder: Option<baton::EngineBuilder>,
    /// `ask` decisions become permission-request events (answered by the
    /// terminal user or the serve host); otherwise ask means deny.
    pub approvals: bool,
}

impl Setup {
    fn load(common: &Common, approvals: bool) -> Result<Setup, CliError> {
        let cwd = match &common.cwd {
            Some(dir) => dir
                .canonicalize()
                .map_err(|e| CliError::Usage(format!("--cwd {}: {e}", dir.display())))?,
            None => std::env::current_dir()
                .map_err(|e| CliError::Usage(format!("no usable working directory: {e}")))?,
        };
        let settings = Settings::load(&cwd, common.settings.as_deref())
            .map_err(|e| CliError::Usage(format!("settings: {e}")))?;
        let pool = baton::builtins::builtin_pool(&*settings.policy).map_err(CliError::Failed)?;
        let state_dir = common
            .state_dir
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join(format!("baton-{}", std::process::id())));
        let mut builder = Engine::builder(pool.clone())
            .cwd(&cwd)
            .additional_roots(settings.roots(&cwd).into_iter().skip(1).collect())
            .state_dir(state_dir)
            .permission_mode(common.permission_mode.unwrap_or(settings.mode))
            .policy(settings.policy.clone() as Arc<dyn baton::engine::PermissionPolicy>)
            .hooks(settings.hooks.clone())
            .host_approvals(approvals);
        if let Some(n) = common.max_concurrency {
            builder = builder.max_concurrency(usize::try_from(n).unwrap_or(usize::MAX));
        }
        if let Some(p) = common.sibling_policy {
            builder = builder.sibling_policy(p);
        }
        for warning in &settings.warnings {
            eprintln!("baton: settings: {warning}");
        }
        Ok(Setup {
            pool,
            builder: Some(builder),
            approvals,
        })
    }

    pub fn engine(&mut self) -> Result<Engine, CliError> {
        self.builder
            .take()
            .ok_or_else(|| CliError::Failed("the engine was already built".into()))?
            .build()
            .map_err(|e| CliError::Usage(e.to_string()))
    }
}
