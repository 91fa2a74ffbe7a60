//! Baton as an MCP server: the session's tool pool offered over MCP.
//!
//! An agent host that already speaks MCP (every major one does) can use a
//! Baton running inside a sandbox without learning another protocol. Every
//! `tools/call` goes through the whole per-call pipeline of the server's
//! engine — schema, `validate_input`, PreToolUse hooks, permissions, the tool,
//! PostToolUse hooks, size rules — exactly as a call from `baton run` would.
//!
//! Three things differ from a batch of one assistant message, and they are why
//! this is more than a loop around [`Engine::open_batch`]:
//!
//! - **Scheduling across requests.** MCP requests arrive independently, so the
//!   SPEC §5 rule (safe calls together, an unsafe call alone) is kept by a
//!   fair read/write gate ([`gate`]): a concurrency-safe call holds it shared,
//!   any other call exclusively. A writer waits for the running readers and
//!   later readers wait behind the writer, as inside one batch.
//! - **Permission questions** go to the MCP client as an elicitation when it
//!   declared that capability (protocol 2025-11-25), or in an `input_required`
//!   answer the client retries with (2026-07-28, [`rounds`]); otherwise the
//!   call is denied with a text that says approval was needed, so a headless
//!   worker never hangs.
//! - **Cancellation** arrives as `notifications/cancelled` for one request;
//!   only that call (and its processes) stops.
//!
//! One server process is one Baton session: context (a `cd`) carries from one
//! call to the next, whichever transport or connection they come in on.

mod call;
mod catalog;
mod gate;
pub mod http;
mod journaled;
mod metrics_route;
mod results;
mod rounds;
mod task_wire;
pub mod tasks;
pub mod token_strength;

use std::sync::Arc;

use baton_engine::ToolPool;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use crate::Engine;

pub use baton_journal::Journal;
pub use catalog::{annotations_for, mcp_tool};
pub use journaled::{
    CALL_META_KEY, CANCEL_METHOD, JOURNAL_CAPABILITY, JOURNAL_META_KEY, STATUS_METHOD,
};
pub use results::{
    outcome_from_meta, views_from_meta, ToolViews, OUTCOME_META_KEY, VIEWS_META_KEY,
};

/// The MCP face of one engine. Cheap to clone: every clone (one per HTTP
/// session or request) shares the engine, the pool and the gate.
#[derive(Clone, Debug)]
pub struct McpServer {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    engine: Engine,
    pool: ToolPool,
    gate: gate::Gate,
    /// The `tools/list` answer, computed once: the pool does not change
    /// under a running server.
    tools: Vec<rmcp::model::Tool>,
    /// Approval rounds for 2026-07-28 clients.
    rounds: rounds::Rounds,
    /// Calls that named themselves, run at most once ([`journaled`]).
    journal: Journal,
    /// MCP tasks asked to stop ([`tasks`]; the tasks are journal entries).
    tasks: tasks::Tasks,
}

/// How a server is set up besides its engine and pool.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ServerOptions {
    /// The secret (the HTTP bearer token) that workers behind one load
    /// balancer share: approval rounds of 2026-07-28 clients are sealed with
    /// a key derived from it, so a retry may reach any of them. Without one
    /// the key is random per process.
    pub secret: Option<String>,
    /// The journal of named calls; without one, a journal in memory (retries
    /// within this process are answered, nothing survives it).
    pub journal: Option<Journal>,
}

impl ServerOptions {
    /// The options with `secret`.
    pub fn secret(mut self, secret: Option<&str>) -> Self {
        self.secret = secret.map(str::to_string);
        self
    }

    /// The options with `journal`.
    pub fn journal(mut self, journal: Journal) -> Self {
        self.journal = Some(journal);
        self
    }
}

impl McpServer {
    /// Serves `pool` through `engine`. The pool must be the one the engine
    /// was built over (it is used to list tools and to classify calls before
    /// they are scheduled).
    pub fn new(engine: Engine, pool: ToolPool) -> Self {
        Self::with_secret(engine, pool, None)
    }

    /// As [`McpServer::new`], with the secret (the HTTP bearer token) that
    /// workers behind one load balancer share: approval rounds of
    /// 2026-07-28 clients are sealed with a key derived from it, so a retry
    /// may reach any of them. Without one the key is random per process.
    pub fn with_secret(engine: Engine, pool: ToolPool, secret: Option<&str>) -> Self {
        Self::with_options(engine, pool, ServerOptions::default().secret(secret))
    }

    /// As [`McpServer::new`], with `options`.
    pub fn with_options(engine: Engine, pool: ToolPool, options: ServerOptions) -> Self {
        let tools = pool.tools().map(catalog::mcp_tool).collect();
        let journal = options
            .journal
            .unwrap_or_else(|| Journal::in_memory(baton_journal::Limits::default()));
        McpServer {
            shared: Arc::new(Shared {
                engine,
                pool,
                gate: gate::Gate::default(),
                tools,
                rounds: rounds::Rounds::new(options.secret.as_deref()),
                journal,
                tasks: tasks::Tasks::default(),
            }),
        }
    }

    /// The engine calls run on.
    pub fn engine(&self) -> &Engine {
        &self.shared.engine
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        // Tasks (see [`tasks`]): the SEP-2663 extension here; the
        // 2025-11-25 capability is added to `initialize` by [`task_wire`].
        let mut caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_tasks()
            .build();
        // Hosts judge the paths of the calls they send here against this
        // workspace, not their own (see `crate::remote::workspace`).
        let context = self.shared.engine.runtime().context();
        caps.experimental = Some(std::collections::BTreeMap::from([
            (
                crate::remote::workspace::CAPABILITY.to_string(),
                crate::remote::workspace::WorkerWorkspace::report(&context),
            ),
            // Named calls are journaled here: a host may send a call again
            // after a broken connection without running it twice.
            (
                JOURNAL_CAPABILITY.to_string(),
                serde_json::Map::from_iter([("version".to_string(), serde_json::json!(1))]),
            ),
        ]));
        let mut info = ServerConfig::new(caps);
        info.server_info = Implementation::new("baton", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(
            "Baton executes tool calls: every call goes through the server's \
             permission rules and hooks. Calls that are safe to run together do; \
             others run alone."
                .into(),
        );
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.shared.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if tasks::offered(&context) {
            return Ok(tasks::call_or_task(&self.shared, request, context).await);
        }
        Ok(call::run(&self.shared, request, context).await)
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tasks::update(&self.shared, request)
    }

    async fn on_custom_request(
        &self,
        request: rmcp::model::CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CustomResult, ErrorData> {
        if let Some(answer) = tasks::custom(&self.shared, &request, &context).await {
            return answer.map(rmcp::model::CustomResult);
        }
        let answer = match request.method.as_str() {
            CANCEL_METHOD => journaled::cancel,
            STATUS_METHOD => journaled::status,
            _ => {
                return Err(ErrorData::new(
                    rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                    request.method,
                    None,
                ))
            }
        };
        let params = request.params.unwrap_or(serde_json::Value::Null);
        answer(&self.shared, &params)
            .map(rmcp::model::CustomResult)
            .map_err(|why| ErrorData::invalid_params(why, None))
    }
}

/// Serves `server` over stdin/stdout (newline-delimited JSON-RPC) until the
/// client closes the stream or `shutdown` is cancelled.
pub async fn serve_stdio(
    server: McpServer,
    shutdown: tokio_util::sync::CancellationToken,
) -> std::io::Result<()> {
    use rmcp::ServiceExt;
    // Through the 2025-11-25 task adapter (see [`task_wire`]).
    let adapted = task_wire::stdio::adapt(tokio::io::stdin(), tokio::io::stdout());
    let running = server
        .serve_with_ct((adapted.input, adapted.output), shutdown)
        .await
        .map_err(|e| std::io::Error::other(format!("MCP handshake failed: {e}")))?;
    let ended = running
        .waiting()
        .await
        .map_err(|e| std::io::Error::other(format!("MCP session ended with an error: {e}")));
    adapted.pump.flushed().await;
    ended.map(|_| ())
}
