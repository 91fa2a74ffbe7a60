//! Command-line parsing and what the commands share: settings, tools and
//! the engine they run on.

mod approve;
mod run;
mod serve;
mod session;
mod signals;
mod tools;

use std::path::PathBuf;

use baton::engine::wire::WireFormat;
use baton::engine::{PermissionMode, ToolPool};
use baton::settings::ConfigError;
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
    /// Print the tool pool as the model would see it.
    Tools {
        #[command(flatten)]
        common: Common,
        #[arg(long, default_value = "anthropic", value_parser = parse_format)]
        format: WireFormat,
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
            runtime.block_on(run::run(setup, calls, events))
        }
        Command::Serve { common } => {
            let setup = Setup::load(&common, true)?;
            runtime.block_on(serve::serve(setup))
        }
        Command::Tools { common, format } => {
            let setup = Setup::load(&common, false)?;
            tools::print(&setup.pool, format)
        }
    };
    // A read of stdin may still be pending on a blocking thread (the session
    // ended on a signal, not on end of input); do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
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
        let (builder, settings) =
            Engine::configured(&cwd, common.settings.as_deref()).map_err(|e| match e {
                ConfigError::Settings(e) => CliError::Usage(format!("settings: {e}")),
                ConfigError::Tools(e) => CliError::Failed(e),
            })?;
        let pool = builder.pool().clone();
        let state_dir = common
            .state_dir
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join(format!("baton-{}", std::process::id())));
        let mut builder = builder
            .state_dir(state_dir)
            .permission_mode(common.permission_mode.unwrap_or(settings.mode))
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
            .map(baton::EngineBuilder::build)
            .ok_or_else(|| CliError::Failed("the engine was already built".into()))
    }
}
