//! Baton's MCP client: the user's MCP servers become tools in the pool.
//!
//! Servers come from the places Claude Code users already configure them
//! ([`load`]); [`McpClients::start`] connects to all of them in parallel
//! (stdio, streamable HTTP, legacy HTTP+SSE), and [`McpClients::tools`] gives one
//! [`baton_engine::Tool`] per server tool, named `mcp__<server>__<tool>`,
//! plus the MCP tools Claude Code has (`ListMcpResourcesTool`,
//! `ReadMcpResourceTool`, `ReadMcpResourceDirTool`, `RefreshMcpTools`,
//! `WaitForMcpServers`). A server that fails to start
//! is a diagnostic; the others work. See docs/mcp.md.

pub mod auth;
mod blob;
mod call;
mod client_tools;
mod config;
mod connect;
mod elicit;
mod frame_guard;
mod frame_scan;
mod handler;
mod headers_helper;
mod health;
mod hook_call;
mod load;
pub mod naming;
mod plugins;
mod probe;
mod process;
mod refresh_tool;
mod resource_dir;
mod resources;
mod result;
pub mod sentence;
mod server;
mod sse;
mod task_facts;
mod tasks;
mod tool;
mod wait_tool;

use std::sync::Arc;

use baton_engine::Tool;
use futures::future::join_all;

pub use call::CallLimits;
pub use config::{parse_servers, ReadOnlyOverride, Scope, ServerSpec, TransportSpec};
pub use elicit::{with_defaults, ElicitMode, ElicitRequest, ElicitResponse, Elicitor, FnElicitor};
pub use load::{load, process_env, servers_of, LoadOptions, Loaded};
pub use plugins::{add_plugin_servers, plugin_servers};
pub use probe::DISCOVER_PROBE;
pub use process::{MAX_FRAME, STOP_GRACE};
pub use result::map_result;
pub use server::{ClientOptions, Server, ServerState, BACKOFF};
pub use tool::{cut, MAX_DESCRIPTION_CHARS, MAX_RESULT_SIZE_CEILING};

/// Default `MAX_MCP_OUTPUT_TOKENS`.
pub const DEFAULT_MAX_OUTPUT_TOKENS: usize = 25_000;

/// The set of configured servers of one session.
#[derive(Debug)]
pub struct McpClients {
    servers: Vec<Arc<Server>>,
    diagnostics: Vec<String>,
    max_output_tokens: usize,
    elicitor: Arc<elicit::ElicitorSlot>,
}

/// What `baton mcp list` shows for one server.
#[derive(Clone, Debug)]
pub struct ServerStatus {
    /// The server's name.
    pub name: String,
    /// Which kind of configuration the entry came from.
    pub scope: Scope,
    /// The transport: `stdio`, `http` or `sse`.
    pub transport: &'static str,
    /// Where the server is in its life.
    pub state: ServerState,
    /// The negotiated MCP protocol version, while connected.
    pub protocol: Option<String>,
    /// The pool names of its tools.
    pub tools: Vec<String>,
    /// The last lines the server wrote to stderr.
    pub stderr_tail: Vec<String>,
}

impl McpClients {
    /// Connects to every server at once. Servers that fail are reported in
    /// [`McpClients::diagnostics`] and stay in the set as failed.
    pub async fn start(specs: Vec<ServerSpec>, mut opts: ClientOptions) -> McpClients {
        let elicitor = Arc::new(elicit::ElicitorSlot::new(opts.elicitor.take()));
        opts.elicitor = Some(elicitor.clone());
        let servers: Vec<Arc<Server>> = specs
            .into_iter()
            .map(|spec| Server::new(spec, opts.clone()))
            .collect();
        let results = join_all(servers.iter().map(|s| async move { (s, s.start().await) })).await;
        let diagnostics = results
            .into_iter()
            .filter_map(|(s, r)| r.err().map(|e| format!("MCP server \"{}\": {e}", s.name())))
            .collect();
        let max_output_tokens =
            process_env_usize("MAX_MCP_OUTPUT_TOKENS").unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS);
        McpClients {
            servers,
            diagnostics,
            max_output_tokens,
            elicitor,
        }
    }

    /// A set without servers.
    pub fn empty() -> McpClients {
        McpClients {
            servers: Vec::new(),
            diagnostics: Vec::new(),
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            elicitor: Arc::new(elicit::ElicitorSlot::default()),
        }
    }

    /// Replaces the elicitor every server asks with `wrap(current)` (e.g.
    /// hooks around the host's answer); affects live connections too.
    pub fn wrap_elicitor(&self, wrap: impl FnOnce(Option<Arc<dyn Elicitor>>) -> Arc<dyn Elicitor>) {
        let next = wrap(self.elicitor.current());
        self.elicitor.replace(Some(next));
    }

    /// Overrides `MAX_MCP_OUTPUT_TOKENS` for the tools built from now on.
    pub fn with_max_output_tokens(mut self, tokens: usize) -> Self {
        self.max_output_tokens = tokens;
        self
    }

    /// Every configured server, failed ones included.
    pub fn servers(&self) -> &[Arc<Server>] {
        &self.servers
    }

    /// The server called `name`, if configured.
    pub fn server(&self, name: &str) -> Option<&Arc<Server>> {
        self.servers.iter().find(|s| s.name() == name)
    }

    /// Start failures, and tools that were left out.
    pub fn diagnostics(&self) -> &[String] {
        &self.diagnostics
    }

    /// Every server tool (sorted by name; later duplicates after
    /// sanitising are left out with a diagnostic), then the resource tools.
    pub fn tools(&self) -> (Vec<Arc<Tool>>, Vec<String>) {
        let mut tools: Vec<Tool> = Vec::new();
        let mut problems = Vec::new();
        for server in &self.servers {
            let mut listed = server.tools.lock().clone();
            listed.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
            for entry in &listed {
                match tool::build(server, entry, self.max_output_tokens) {
                    Ok(t) if tools.iter().any(|o| o.name() == t.name()) => problems.push(format!(
                        "MCP tool {} of server \"{}\" is left out: another tool has the same name after sanitising",
                        t.name(),
                        server.name()
                    )),
                    Ok(t) => tools.push(t),
                    Err(e) => problems.push(e),
                }
            }
        }
        tools.sort_by(|a, b| a.name().cmp(b.name()));
        if !self.servers.is_empty() {
            tools.extend(resources::tools(&self.servers));
            tools.extend(resource_dir::tool(&self.servers));
            tools.extend(refresh_tool::tool(&self.servers));
            tools.extend(wait_tool::tool(&self.servers));
        }
        (tools.into_iter().map(Arc::new).collect(), problems)
    }

    /// Re-reads the tool lists of servers that sent `tools/list_changed`;
    /// `true` when any changed. Call between messages, never during a batch.
    pub async fn refresh(&self) -> bool {
        let changed = join_all(self.servers.iter().map(|s| s.refresh_tools())).await;
        changed.into_iter().any(|c| c)
    }

    /// One status line per server, for `baton mcp list`.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let (tools, _) = self.tools();
        self.servers
            .iter()
            .map(|s| ServerStatus {
                name: s.name().to_string(),
                scope: s.spec.scope,
                transport: s.spec.transport.kind(),
                state: s.state(),
                protocol: s.protocol(),
                tools: tools
                    .iter()
                    .filter(|t| matches!(t.def().tool_origin(), baton_engine::ToolOrigin::Mcp { server } if server == s.name()))
                    .map(|t| t.name().to_string())
                    .collect(),
                stderr_tail: s.stderr_tail(5),
            })
            .collect()
    }

    /// SIGKILL to every stdio server's group at once, without waiting (for
    /// paths that cannot await; [`McpClients::shutdown`] is the orderly one).
    pub fn kill_now(&self) {
        for server in &self.servers {
            server.kill_now();
        }
    }

    /// Stops every server (in parallel): SIGTERM, grace, SIGKILL for stdio.
    pub async fn shutdown(&self) {
        join_all(self.servers.iter().map(|s| s.stop())).await;
    }
}

fn process_env_usize(name: &str) -> Option<usize> {
    std::env::var(name)
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|n| *n > 0)
}
