//! The CLI's MCP client side: `--mcp-config`, starting the configured
//! servers before the engine, `baton mcp list`, and stopping the servers
//! when the command ends.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use baton::mcp::{ClientOptions, LoadOptions, McpClients};
use clap::Args;
use serde_json::json;

use super::CliError;

/// MCP flags shared by every command that builds a pool.
#[derive(Args, Debug, Clone, Default)]
pub(super) struct McpArgs {
    /// An MCP configuration file ({"mcpServers": {...}}); repeatable. Its
    /// servers are added to those of ~/.claude.json and .mcp.json.
    #[arg(long = "mcp-config", value_name = "FILE")]
    pub config: Vec<PathBuf>,
    /// Use only the servers of --mcp-config files.
    #[arg(long = "strict-mcp-config")]
    pub strict: bool,
}

/// Every `--mcp-config` file must be readable and hold a configuration
/// (`{"mcpServers": {...}}`, or the plugin form): a host that named a file and got no servers
/// from it would run without the tools it expects, so this is an error
/// (exit 2), not a warning. Servers that fail to start stay warnings.
pub(super) fn check_config_files(args: &McpArgs) -> Result<(), CliError> {
    for file in &args.config {
        let shown = file.display();
        let text = std::fs::read_to_string(file)
            .map_err(|e| CliError::Usage(format!("--mcp-config {shown}: {e}")))?;
        let value: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| CliError::Usage(format!("--mcp-config {shown}: not JSON: {e}")))?;
        // The same reading as the loader's: `{"mcpServers": {...}}`, or the
        // form plugins ship (server entries at the top level).
        match baton::mcp::servers_of(&value) {
            serde_json::Value::Object(_) => {}
            serde_json::Value::Null => {
                return Err(CliError::Usage(format!(
                    "--mcp-config {shown}: no servers; the file must look like {{\"mcpServers\": {{...}}}} (or, as plugins ship it, {{\"name\": {{\"command\": ...}}}})"
                )))
            }
            _ => {
                return Err(CliError::Usage(format!(
                    "--mcp-config {shown}: `mcpServers` must be an object (server name → configuration)"
                )))
            }
        }
    }
    Ok(())
}

/// Client sets started by this process, stopped by [`shutdown_all`].
static STARTED: Mutex<Vec<Arc<McpClients>>> = Mutex::new(Vec::new());

/// Loads the configured servers and starts them (in parallel, on the
/// runtime `main` entered). Problems are printed and never fatal.
/// `plugins` (`(name, root)` of the enabled plugins) bring their servers
/// too, unless `--strict-mcp-config`.
pub(super) fn start(
    cwd: &Path,
    settings_file: Option<&Path>,
    args: &McpArgs,
    plugins: &[(String, PathBuf)],
) -> Arc<McpClients> {
    let env = baton::mcp::process_env;
    let mut loaded = baton::mcp::load(
        &LoadOptions {
            project_dir: cwd.to_path_buf(),
            home: std::env::var_os("HOME").map(PathBuf::from),
            config_files: args.config.clone(),
            settings_file: settings_file.map(Path::to_path_buf),
            strict: args.strict,
        },
        &env,
    );
    if !args.strict {
        baton::mcp::add_plugin_servers(&mut loaded, plugins, &env);
    }
    for problem in &loaded.diagnostics {
        eprintln!("baton: mcp: {problem}");
    }
    let mut opts = ClientOptions::from_env(cwd, &env);
    opts.elicitor = Some(
        if ASK_ON_TERMINAL.load(std::sync::atomic::Ordering::Relaxed) {
            Arc::new(TerminalElicitor)
        } else {
            Arc::new(LateElicitor)
        },
    );
    opts.oauth_opener = OAUTH_OPENER.lock().ok().and_then(|o| o.clone());
    let clients = if loaded.servers.is_empty() {
        McpClients::empty()
    } else {
        // A signal while servers connect ends the wait (early_signals.rs):
        // the calls are then answered as never started, and the servers
        // started so far end with the session (`kill_all_now`).
        tokio::runtime::Handle::current().block_on(async {
            tokio::select! {
                clients = McpClients::start(loaded.servers, opts) => clients,
                _ = super::early_signals::first() => {
                    eprintln!("baton: mcp: a signal came while servers were connecting; none is used");
                    McpClients::empty()
                }
            }
        })
    };
    for problem in clients.diagnostics() {
        eprintln!("baton: mcp: {problem}");
    }
    let clients = Arc::new(clients);
    if let Ok(mut started) = STARTED.lock() {
        started.push(Arc::clone(&clients));
    }
    clients
}

/// Stops every server this process started (SIGTERM, grace, SIGKILL).
pub(super) fn shutdown_all(runtime: &tokio::runtime::Runtime) {
    let started = STARTED
        .lock()
        .map(|mut s| std::mem::take(&mut *s))
        .unwrap_or_default();
    for clients in started {
        runtime.block_on(clients.shutdown());
    }
}

/// `baton mcp list`: each server's state, transport, protocol and tools.
pub(super) fn list(clients: &McpClients, as_json: bool) -> Result<(), CliError> {
    let statuses = clients.statuses();
    let text = if as_json {
        let servers: Vec<_> = statuses
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "scope": s.scope.as_str(),
                    "transport": s.transport,
                    "state": s.state.label(),
                    "protocolVersion": s.protocol,
                    "tools": s.tools,
                    "stderr": s.stderr_tail,
                })
            })
            .collect();
        serde_json::to_string_pretty(&json!({ "servers": servers }))
            .map_err(|e| CliError::Failed(format!("cannot render the servers: {e}")))?
    } else if statuses.is_empty() {
        "No MCP servers configured (.mcp.json, ~/.claude.json, --mcp-config).".to_string()
    } else {
        let mut out = String::new();
        for s in &statuses {
            out.push_str(&format!(
                "{} ({}, {}): {}, protocol {}, {} tools\n",
                s.name,
                s.scope.as_str(),
                s.transport,
                s.state.label(),
                s.protocol.as_deref().unwrap_or("-"),
                s.tools.len()
            ));
            for tool in &s.tools {
                out.push_str(&format!("  {tool}\n"));
            }
        }
        out.trim_end().to_string()
    };
    println!("{text}");
    Ok(())
}

/// Who shows OAuth login URLs (`baton serve`: its host); none: servers
/// that need a login say how to log in from a terminal.
static OAUTH_OPENER: Mutex<Option<Arc<dyn baton::mcp::auth::UrlOpener>>> = Mutex::new(None);

pub(super) fn set_oauth_opener(opener: Option<Arc<dyn baton::mcp::auth::UrlOpener>>) {
    if let Ok(mut slot) = OAUTH_OPENER.lock() {
        *slot = opener;
    }
}

/// Whether elicitations are asked on the terminal (`baton run` with a
/// terminal attached); set before the servers start.
static ASK_ON_TERMINAL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Asks elicitations on the terminal from now on (`baton run` only: in
/// `serve`, stdin carries the protocol).
pub(super) fn ask_on_terminal(yes: bool) {
    ASK_ON_TERMINAL.store(yes, std::sync::atomic::Ordering::Relaxed);
}

/// The host that answers elicitations, once there is one (`baton serve`
/// installs itself after the servers started).
static HOST_ELICITOR: Mutex<Option<Arc<dyn baton::mcp::Elicitor>>> = Mutex::new(None);

pub(super) fn set_host_elicitor(host: Option<Arc<dyn baton::mcp::Elicitor>>) {
    if let Ok(mut slot) = HOST_ELICITOR.lock() {
        *slot = host;
    }
}

/// Hands elicitations to the host installed at the time; none: decline.
struct LateElicitor;

#[baton::engine::async_trait]
impl baton::mcp::Elicitor for LateElicitor {
    async fn elicit(&self, request: baton::mcp::ElicitRequest) -> baton::mcp::ElicitResponse {
        let host = HOST_ELICITOR.lock().ok().and_then(|h| h.clone());
        match host {
            Some(host) => host.elicit(request).await,
            None => baton::mcp::ElicitResponse::Decline,
        }
    }
}

/// Elicitation on the terminal: the server's message on stderr, then one
/// line per form field read from stdin. An empty first answer declines; an
/// empty field answer keeps the field's default, which the prompt shows.
struct TerminalElicitor;

#[baton::engine::async_trait]
impl baton::mcp::Elicitor for TerminalElicitor {
    async fn elicit(&self, request: baton::mcp::ElicitRequest) -> baton::mcp::ElicitResponse {
        use baton::mcp::{ElicitMode, ElicitResponse};
        use std::io::{BufRead, Write};
        tokio::task::spawn_blocking(move || {
            let mut err = std::io::stderr();
            let mut read = |prompt: &str| -> Option<String> {
                let _ = err.write_all(prompt.as_bytes());
                let _ = err.flush();
                let mut line = String::new();
                match std::io::stdin().lock().read_line(&mut line) {
                    Ok(n) if n > 0 => Some(line.trim().to_string()),
                    _ => None,
                }
            };
            let head = format!(
                "baton: MCP server \"{}\" asks: {}\n",
                request.server, request.message
            );
            match request.mode {
                ElicitMode::Url { url } => {
                    let answer = read(&format!("{head}  Open {url}, then answer: done? [y/N] "));
                    match answer.as_deref() {
                        Some("y" | "Y" | "yes") => ElicitResponse::Accept(serde_json::Value::Null),
                        _ => ElicitResponse::Decline,
                    }
                }
                ElicitMode::Form { schema } => {
                    match read(&format!("{head}  Answer? [y/N] ")).as_deref() {
                        Some("y" | "Y" | "yes") => {}
                        None => return ElicitResponse::Cancel,
                        _ => return ElicitResponse::Decline,
                    }
                    let mut content = serde_json::Map::new();
                    let properties = schema["properties"]
                        .as_object()
                        .cloned()
                        .unwrap_or_default();
                    for (name, field) in properties {
                        let kind = field["type"].as_str().unwrap_or("string").to_string();
                        // An empty line keeps the default: the field is left
                        // out and the MCP client fills it in (SEP-1034).
                        let default = field.get("default").filter(|d| !d.is_null());
                        let shown = match default {
                            Some(d) => format!("  {name} ({kind}, default {d}): "),
                            None => format!("  {name} ({kind}): "),
                        };
                        let Some(text) = read(&shown) else {
                            return ElicitResponse::Cancel;
                        };
                        if text.is_empty() && default.is_some() {
                            continue;
                        }
                        let value = match kind.as_str() {
                            "integer" => text.parse::<i64>().map(serde_json::Value::from).ok(),
                            "number" => text.parse::<f64>().map(serde_json::Value::from).ok(),
                            "boolean" => Some(serde_json::Value::Bool(matches!(
                                text.as_str(),
                                "y" | "yes" | "true"
                            ))),
                            _ => Some(serde_json::Value::String(text)),
                        };
                        if let Some(value) = value {
                            content.insert(name, value);
                        }
                    }
                    ElicitResponse::Accept(serde_json::Value::Object(content))
                }
                // A mode added to the MCP client later: the terminal cannot
                // show it, so the request is declined.
                _ => ElicitResponse::Decline,
            }
        })
        .await
        .unwrap_or(baton::mcp::ElicitResponse::Cancel)
    }
}
