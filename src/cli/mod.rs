//! Command-line parsing and what the commands share: settings, tools and
//! the engine they run on.

mod agent;
mod approve;
mod early_signals;
mod hook_grace;
mod logging;
mod mcp;
mod mcp_login;
mod mcp_serve;
mod run;
mod run_view;
mod serve;
mod session;
mod signals;
mod state_dir;
mod state_prune;
mod tool_search;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;

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
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Execute the tool calls of one assistant message and print what
    /// answers it (in the message's wire format).
    Run {
        #[command(flatten)]
        common: Common,
        /// anthropic, openai-chat or openai-responses (default: detected
        /// from the message).
        #[arg(long, value_parser = parse_format)]
        format: Option<WireFormat>,
        /// Print JSON lines (progress, results in order, done) instead.
        #[arg(long)]
        events: bool,
        /// Print the JSON answer even when stdout is a terminal (where a
        /// live view of the calls is shown otherwise).
        #[arg(long)]
        json: bool,
        /// The message file, or `-` for stdin.
        file: String,
    },
    /// A JSON-lines session on stdin/stdout (see docs/serve-protocol.md).
    Serve {
        #[command(flatten)]
        common: Common,
        /// anthropic, openai-chat or openai-responses (default: detected
        /// per message; results in the format the calls came in).
        #[arg(long, value_parser = parse_format)]
        format: Option<WireFormat>,
        /// Resume session ID (the name of its state directory) after its
        /// process ended: working directory, files read, remembered rules,
        /// loaded tools, task records (see docs/serve-protocol.md).
        #[arg(long, value_name = "ID")]
        resume: Option<String>,
        /// Journal every call in the state directory: a call id sent again
        /// (also after `--resume ID --journal`) is answered with what became
        /// of it, never run twice (see docs/serve-protocol.md).
        #[arg(long)]
        journal: bool,
    },
    /// Baton and the Model Context Protocol.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Run a model with Baton executing its tools: a minimal host loop
    /// (see docs/agent.md).
    Agent {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        args: agent::AgentArgs,
    },
    /// Print the tool pool as the model would see it.
    Tools {
        #[command(flatten)]
        common: Common,
        /// anthropic, openai (= openai-chat) or openai-responses.
        #[arg(long, default_value = "anthropic", value_parser = tool_search::parse_format)]
        format: WireFormat,
        /// One line per tool: loaded or deferred, then the tool search mode.
        #[arg(long)]
        list: bool,
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
    /// Log in to a remote MCP server with OAuth (prints the URL to open).
    Login {
        #[command(flatten)]
        common: Common,
        /// The server's name in the MCP configuration.
        name: String,
    },
    /// Forget the stored OAuth tokens of a remote MCP server.
    Logout {
        #[command(flatten)]
        common: Common,
        name: String,
    },
    /// The configured MCP servers: state, transport, protocol version, tools.
    List {
        #[command(flatten)]
        common: Common,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args, Debug, Clone)]
struct Common {
    /// Working directory of the session (default: the current one).
    #[arg(long)]
    cwd: Option<PathBuf>,
    /// The tool names and schemas requests carry: claude (Claude Code's,
    /// the default) or codex (shell, apply_patch, update_plan, …).
    #[arg(long, default_value = "claude")]
    tool_set: baton::engine::wire::ToolSet,
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
    /// Where spilled results and shell output go (default: a per-session
    /// directory under $XDG_STATE_HOME/baton/sessions, removed a week after
    /// the session ended).
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// The session's transcript (Claude Code's JSONL), given to hooks as
    /// `transcript_path` (`baton agent` writes it; default there:
    /// transcript.jsonl in the state directory).
    #[arg(long, value_name = "FILE")]
    transcript: Option<PathBuf>,
    #[command(flatten)]
    mcp: mcp::McpArgs,
    /// Run the tools named by --remote-tools on this Baton worker (an MCP
    /// endpoint of `baton mcp serve --http`); repeatable, sessions spread
    /// over the workers. The token comes from $BATON_WORKER_TOKEN.
    #[arg(long = "remote-worker", value_name = "URL")]
    remote_workers: Vec<String>,
    /// Comma-separated tools to run remotely, e.g. Bash,Read,Write,Edit,Glob,Grep.
    #[arg(long, value_delimiter = ',', value_name = "TOOLS")]
    remote_tools: Vec<String>,
    #[command(flatten)]
    tool_search: tool_search::ToolSearchArgs,
}

fn parse_format(s: &str) -> Result<WireFormat, String> {
    s.parse()
}

fn parse_mode(s: &str) -> Result<PermissionMode, String> {
    s.parse()
}

fn parse_policy(s: &str) -> Result<SiblingPolicy, String> {
    s.parse()
}

/// A failure of the command itself (not of a tool). The texts are what
/// the user reads; the exit code tells scripts which kind it was.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    /// The input or configuration cannot be used (exit 2).
    #[error("{0}")]
    Usage(String),
    /// Something failed while running (exit 1).
    #[error("{0}")]
    Failed(String),
    /// The model stream stalled past its limits and retries (exit 3).
    #[error("{0}")]
    Stalled(String),
}

impl CliError {
    pub(crate) fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage(_) => 2,
            CliError::Failed(_) => 1,
            CliError::Stalled(_) => 3,
        }
    }
}

pub(crate) fn main(cli: Cli) -> Result<(), CliError> {
    // Before any thread starts: as PID 1, a reaper half stays PID 1.
    if let Some(problem) = baton::engine::process::split_off_init() {
        eprintln!("baton: {problem}");
    }
    logging::init();
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    // Starting a shell suspends its worker until the shell executes, which
    // takes a while on a busy machine: enough workers that the waits
    // overlap (see `process::runtime_workers`). TOKIO_WORKER_THREADS wins.
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        builder.worker_threads(baton::engine::process::runtime_workers());
    }
    let runtime = builder
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(format!("cannot start the async runtime: {e}")))?;
    // MCP servers start (in parallel) while the setup is loaded.
    let _entered = runtime.enter();
    let result = match cli.command {
        Command::Run {
            common,
            format,
            events,
            json,
            file,
        } => {
            early_signals::install();
            let text = run::read_input(&file)?;
            // Ask on the terminal only when stdin is not the message itself.
            let interactive = file != "-" && approve::terminal_attached();
            mcp::ask_on_terminal(interactive);
            let setup = Setup::load(&common, interactive)?;
            let (format, calls, asked) =
                run::parse_message(&text, format, &setup.pool, setup.max_calls_per_message())
                    .map_err(|e| CliError::Usage(format!("{file}: {e}")))?;
            drop(text);
            signals::guard_against_sudden_death();
            let live = !events && !json && std::io::IsTerminal::is_terminal(&std::io::stdout());
            let output = run::Output { events, live };
            on_worker(&runtime, async move {
                run::run(setup, format, calls, &asked, output).await
            })
        }
        Command::Serve {
            mut common,
            format,
            resume,
            journal,
        } => {
            early_signals::install();
            signals::guard_against_sudden_death();
            serve::oauth::install();
            let prepared = serve::resume::prepare(&mut common, resume.as_deref())?;
            let mut setup = Setup::load(&common, true)?;
            serve::resume::apply(&mut setup, prepared)?;
            on_worker(&runtime, serve::serve(setup, format, journal))
        }
        Command::Mcp {
            command: McpCommand::Serve { common, args },
        } => {
            // The same guard as run/serve/agent: SIGKILL of the server must
            // not leave its calls' processes running.
            early_signals::install();
            signals::guard_against_sudden_death();
            let setup = Setup::load(&common, true)?;
            runtime.block_on(mcp_serve::serve(setup, args))
        }
        Command::Agent { common, args } => {
            early_signals::install();
            let setup = Setup::load_for(&common, false, Some(args.tool_format()))?;
            signals::guard_against_sudden_death();
            runtime.block_on(agent::agent(setup, args))
        }
        Command::Mcp {
            command: McpCommand::Login { common, name },
        } => runtime.block_on(mcp_login::login(&common, &name)),
        Command::Mcp {
            command: McpCommand::Logout { common, name },
        } => runtime.block_on(mcp_login::logout(&common, &name)),
        Command::Mcp {
            command: McpCommand::List { common, json },
        } => {
            let setup = Setup::load(&common, false)?;
            mcp::list(&setup.mcp, json)
        }
        Command::Tools {
            common,
            format,
            list,
        } => {
            let mut setup = Setup::load_for(&common, false, Some(format))?;
            let engine = setup.engine()?;
            tools::print(&engine, &setup.pool, format, list)
        }
    };
    mcp::shutdown_all(&runtime);
    // Whatever still runs (background tasks, jobs left by finished
    // commands) ends with the session, now.
    baton::engine::process::kill_all_now();
    state_prune::at_exit();
    // A read of stdin may still be pending on a blocking thread (the session
    // ended on a signal, not on end of input); do not wait for it.
    runtime.shutdown_background();
    result
}

/// Runs a host loop (`run`, `serve`) as a task on a runtime worker, not on
/// the main thread. Its events come from the coordinator, which runs on a
/// worker: a task woken from a worker runs next on that worker, while
/// waking the thread in `block_on` is a futex wake and a context switch,
/// about one per call (docs/benchmarks.md §1b).
fn on_worker<F>(runtime: &tokio::runtime::Runtime, host: F) -> Result<(), CliError>
where
    F: std::future::Future<Output = Result<(), CliError>> + Send + 'static,
{
    match runtime.block_on(tokio::spawn(host)) {
        Ok(result) => result,
        // A panic (already reported by the hook, from the worker) unwinds
        // on as it did from `block_on`: same exit status.
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(CliError::Failed(format!("the session stopped: {e}"))),
    }
}

/// Everything a command needs, loaded from the flags and settings files.
pub(crate) struct Setup {
    pub pool: ToolPool,
    /// `--tool-set`.
    pub tool_set: baton::engine::wire::ToolSet,
    /// The session's working directory.
    pub cwd: PathBuf,
    builder: Option<baton::EngineBuilder>,
    /// `ask` decisions become permission-request events (answered by the
    /// terminal user or the serve host); otherwise ask means deny.
    pub approvals: bool,
    /// The configured MCP servers (started; their tools are in `pool`).
    pub mcp: Arc<baton::mcp::McpClients>,
    /// Where a host with a model installs it for prompt and agent hooks.
    pub model_hooks: baton::engine::hooks::ModelHookSlot,
    /// The session's state directory.
    pub state_dir: PathBuf,
    /// `--transcript` was given.
    pub transcript_given: bool,
}

impl Setup {
    fn load(common: &Common, approvals: bool) -> Result<Setup, CliError> {
        Setup::load_for(common, approvals, None)
    }

    /// `format`: the wire format the command speaks, if it fixes one.
    fn load_for(
        common: &Common,
        approvals: bool,
        format: Option<WireFormat>,
    ) -> Result<Setup, CliError> {
        let cwd = match &common.cwd {
            Some(dir) => dir
                .canonicalize()
                .map_err(|e| CliError::Usage(format!("--cwd {}: {e}", dir.display())))?,
            None => std::env::current_dir()
                .map_err(|e| CliError::Usage(format!("no usable working directory: {e}")))?,
        };
        // The library's assembly path (settings, confinement warnings,
        // agents, skills, built-ins, the tool set, remote routing); the CLI
        // starts the MCP servers between its two steps and adds only what
        // it alone has.
        let options = baton::assembly::AssemblyOptions {
            cwd: cwd.clone(),
            settings_file: common.settings.clone(),
            tool_set: common.tool_set,
            remote: baton::remote::RemoteConfig {
                workers: common.remote_workers.clone(),
                token: std::env::var("BATON_WORKER_TOKEN").ok(),
                tools: common.remote_tools.clone(),
            },
            session_key: None,
        };
        let assembly = Engine::assemble(&options).map_err(|e| match e {
            baton::settings::ConfigError::Settings(e) => CliError::Usage(format!("settings: {e}")),
            baton::settings::ConfigError::Remote(e) => CliError::Usage(e.to_string()),
            other => CliError::Failed(other.to_string()),
        })?;
        for warning in &assembly.diagnostics {
            eprintln!("baton: {warning}");
        }
        mcp::check_config_files(&common.mcp)?;
        let mcp = mcp::start(
            &cwd,
            common.settings.as_deref(),
            &common.mcp,
            &assembly.settings.plugin_roots,
        );
        let assembled = assembly.builder(Some(Arc::clone(&mcp)));
        for problem in &assembled.mcp_problems {
            eprintln!("baton: mcp: {problem}");
        }
        let (pool, settings) = (assembled.pool, assembled.settings);
        let state_dir = state_dir::choose(common.state_dir.as_deref())?;
        let mut builder = assembled
            .builder
            .state_dir(state_dir.clone())
            .permission_mode(common.permission_mode.unwrap_or(settings.mode))
            .host_approvals(approvals)
            .tool_search(common.tool_search.settings(format)?);
        if let Some(path) = &common.transcript {
            // Taken from where `baton` was started, like --state-dir.
            let path = std::path::absolute(path)
                .map_err(|e| CliError::Usage(format!("--transcript {}: {e}", path.display())))?;
            builder = builder.transcript_path(path);
        }
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
            tool_set: common.tool_set,
            cwd: cwd.clone(),
            builder: Some(builder),
            approvals,
            mcp,
            model_hooks: settings.model_hooks.clone(),
            state_dir,
            transcript_given: common.transcript.is_some(),
        })
    }

    /// How many calls of one message the engine runs (the rest are
    /// refused unread, so a message parser need not build them).
    pub(crate) fn max_calls_per_message(&self) -> usize {
        self.builder
            .as_ref()
            .map_or(baton::RuntimeConfig::default().max_calls_per_message, |b| {
                b.runtime_config().max_calls_per_message
            })
    }

    pub(crate) fn engine(&mut self) -> Result<Engine, CliError> {
        self.builder
            .take()
            .ok_or_else(|| CliError::Failed("the engine was already built".into()))?
            .build()
            .map_err(|e| CliError::Usage(e.to_string()))
    }
}
