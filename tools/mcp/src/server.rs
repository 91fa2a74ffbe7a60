//! One configured server: the live connection, and restarting it when it
//! dies (backoff 1, 2, 4, 8, 16 s; then the circuit opens). Connecting is
//! in [`crate::connect`].
//!
//! The live connection sits behind a short lock that is only held to clone
//! an `Arc`; no lock is ever held across a request, so calls on one server
//! run fully in parallel.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rmcp::service::{Peer, RoleClient, RunningService};
use serde_json::Value;
use tokio::sync::watch;

use crate::config::ServerSpec;
use crate::elicit::Elicitor;
use crate::handler::Handler;
use crate::process::{ServerProcess, STOP_GRACE};

/// Restart delays after a crash; after the last one the server is given up.
pub const BACKOFF: [u64; 5] = [1, 2, 4, 8, 16];
/// A connection that lived this long resets the failure count.
const HEALTHY_AFTER: Duration = Duration::from_secs(60);

/// Settings shared by every server of a client set.
#[derive(Clone)]
pub struct ClientOptions {
    /// The project root: stdio servers and `headersHelper` commands start
    /// there, with `CLAUDE_PROJECT_DIR` set to it.
    pub project_dir: PathBuf,
    /// Connect limit (`MCP_TIMEOUT`, default 30 s).
    pub connect_timeout: Duration,
    /// Per-call limits when a server sets none.
    pub limits: crate::call::CallLimits,
    /// Answers the servers' elicitation requests; `None`: they are declined.
    pub elicitor: Option<Arc<dyn Elicitor>>,
    /// Shows OAuth authorization URLs to the user; `None`: servers that
    /// need a login are reported with how to log in (`baton mcp login`).
    pub oauth_opener: Option<Arc<dyn crate::auth::UrlOpener>>,
    /// Where tokens are kept (`None`: in memory only).
    pub oauth_dir: Option<PathBuf>,
    /// How long the user has to finish a login (`MCP_OAUTH_TIMEOUT`, ms;
    /// default 5 minutes).
    pub oauth_limit: Duration,
}

baton_engine::debug_fields! { ClientOptions { project_dir, connect_timeout, limits, oauth_dir } }

impl ClientOptions {
    /// Defaults, with `MCP_TIMEOUT` / `MCP_TOOL_TIMEOUT` (ms) from `env`.
    pub fn from_env(project_dir: impl Into<PathBuf>, env: &dyn Fn(&str) -> Option<String>) -> Self {
        let ms = |name: &str| {
            env(name)
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|ms| *ms > 0)
                .map(Duration::from_millis)
        };
        let mut limits = crate::call::CallLimits::default();
        if let Some(total) = ms("MCP_TOOL_TIMEOUT") {
            limits = limits.with_total(total);
        }
        ClientOptions {
            project_dir: project_dir.into(),
            connect_timeout: ms("MCP_TIMEOUT").unwrap_or(Duration::from_secs(30)),
            limits,
            elicitor: None,
            oauth_opener: None,
            oauth_dir: crate::auth::default_dir(env),
            oauth_limit: ms("MCP_OAUTH_TIMEOUT").unwrap_or(Duration::from_secs(300)),
        }
    }
}

/// Where a server is in its life.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServerState {
    /// The first connection is being made.
    Connecting,
    /// Connected; calls go through.
    Ready,
    /// Died; restart `attempt` (1-based) is pending.
    Restarting {
        /// Which restart this is, from 1.
        attempt: usize,
    },
    /// Could not be (re)started; calls fail at once with this reason.
    Failed(String),
    /// Stopped by the host (`stop` or `kill_now`); not restarted.
    Stopped,
}

impl ServerState {
    /// A short description for `baton mcp list` and messages.
    pub fn label(&self) -> String {
        match self {
            ServerState::Connecting => "connecting".into(),
            ServerState::Ready => "ready".into(),
            ServerState::Restarting { attempt } => format!("restarting (attempt {attempt})"),
            ServerState::Failed(why) => format!("failed: {why}"),
            ServerState::Stopped => "stopped".into(),
        }
    }
}

/// A live connection.
pub(crate) struct Live {
    pub service: RunningService<RoleClient, Handler>,
    pub process: Option<ServerProcess>,
    pub protocol: String,
    pub since: Instant,
    /// What the server said about tasks (2025-11-25) on this connection.
    pub tasks: Arc<crate::task_facts::TaskFacts>,
}

impl Live {
    pub(crate) fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    pub(crate) fn handler(&self) -> &Handler {
        self.service.service()
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.service.is_closed()
            || self.peer().is_transport_closed()
            || self
                .process
                .as_ref()
                .is_some_and(|p| p.exit_status().is_some())
    }

    pub(crate) fn stderr_tail(&self, n: usize) -> Vec<String> {
        self.process
            .as_ref()
            .map(|p| p.stderr.tail(n))
            .unwrap_or_default()
    }
}

/// One server and its connection.
pub struct Server {
    /// The server's configuration.
    pub spec: ServerSpec,
    opts: ClientOptions,
    live: Mutex<Option<Arc<Live>>>,
    state: watch::Sender<ServerState>,
    /// The last stderr lines of the previous connection, for messages after
    /// a crash.
    pub(crate) last_stderr: Mutex<Vec<String>>,
    pub(crate) tools: Mutex<Vec<Value>>,
    stopping: AtomicBool,
    supervising: AtomicBool,
    /// The tool list changed outside a `tools/list_changed` notification
    /// (`RefreshMcpTools`); the host's next refresh rebuilds the pool.
    pub(crate) pool_stale: AtomicBool,
}

baton_engine::debug_fields! { Server as this { name: this.spec.name, state: *this.state.borrow() } }

impl Server {
    pub(crate) fn new(spec: ServerSpec, opts: ClientOptions) -> Arc<Server> {
        Arc::new(Server {
            spec,
            opts,
            live: Mutex::new(None),
            state: watch::channel(ServerState::Connecting).0,
            last_stderr: Mutex::new(Vec::new()),
            tools: Mutex::new(Vec::new()),
            stopping: AtomicBool::new(false),
            supervising: AtomicBool::new(false),
            pool_stale: AtomicBool::new(false),
        })
    }

    /// The server's name (its tools' prefix `mcp__<name>__`).
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// Where the server is in its life now.
    pub fn state(&self) -> ServerState {
        self.state.borrow().clone()
    }

    /// The settings this server was started with.
    pub fn options(&self) -> &ClientOptions {
        &self.opts
    }

    /// The negotiated protocol version, while connected.
    pub fn protocol(&self) -> Option<String> {
        self.live.lock().as_ref().map(|l| l.protocol.clone())
    }

    /// The process id of a stdio server, while it runs.
    pub fn pid(&self) -> Option<i32> {
        self.live
            .lock()
            .as_ref()
            .and_then(|l| l.process.as_ref().map(ServerProcess::pid))
    }

    /// The last `n` lines the server's process wrote to stderr (of the
    /// previous process after a crash); empty for HTTP servers.
    pub fn stderr_tail(&self, n: usize) -> Vec<String> {
        match self.live.lock().as_ref() {
            Some(live) if live.process.is_some() => live.stderr_tail(n),
            _ => {
                let last = self.last_stderr.lock();
                last[last.len().saturating_sub(n)..].to_vec()
            }
        }
    }

    /// Lines skipped on stdout because they were not JSON-RPC.
    pub fn junk_lines(&self) -> u64 {
        self.live
            .lock()
            .as_ref()
            .and_then(|l| {
                l.process
                    .as_ref()
                    .map(|p| p.junk_lines.load(Ordering::Relaxed))
            })
            .unwrap_or(0)
    }

    /// Connects for the first time and lists the tools.
    pub(crate) async fn start(self: &Arc<Self>) -> Result<(), String> {
        crate::health::watch(self.name().to_string(), self.state.subscribe());
        match self.connect_and_list().await {
            Ok(()) => {
                self.spawn_supervisor();
                Ok(())
            }
            Err(e) => {
                self.state.send_replace(ServerState::Failed(e.clone()));
                Err(e)
            }
        }
    }

    async fn connect_and_list(self: &Arc<Self>) -> Result<(), String> {
        self.state.send_replace(ServerState::Connecting);
        let live = Arc::new(self.connect().await?);
        let tools = tokio::time::timeout(self.opts.connect_timeout, live.peer().list_all_tools())
            .await
            .map_err(|_| "tools/list did not answer in time".to_string())?
            .map_err(|e| format!("tools/list failed: {e}"))?;
        let tools = tools
            .into_iter()
            .filter_map(|t| serde_json::to_value(t).ok())
            .collect();
        *self.tools.lock() = tools;
        *self.live.lock() = Some(live);
        self.state.send_replace(ServerState::Ready);
        Ok(())
    }

    /// The live connection; waits (up to the connect limit) while the
    /// server is being restarted.
    pub(crate) async fn live(&self) -> Result<Arc<Live>, String> {
        let mut rx = self.state.subscribe();
        let deadline =
            tokio::time::Instant::now() + self.opts.connect_timeout + Duration::from_secs(16);
        loop {
            if let Some(live) = self.live.lock().clone() {
                if !live.is_closed() {
                    return Ok(live);
                }
            }
            let state = rx.borrow_and_update().clone();
            match state {
                ServerState::Failed(why) => return Err(format!("it failed: {why}")),
                ServerState::Stopped => return Err("it has been stopped".into()),
                _ => {}
            }
            if tokio::time::timeout_at(deadline, rx.changed())
                .await
                .is_err()
            {
                return Err(format!("it is not available ({})", state.label()));
            }
        }
    }

    /// Re-reads the tool list after `tools/list_changed`; `true` when it was
    /// refreshed.
    pub(crate) async fn refresh_tools(&self) -> bool {
        let stale = self.pool_stale.swap(false, Ordering::AcqRel);
        let Some(live) = self.live.lock().clone() else {
            return stale;
        };
        if !live.handler().take_tools_changed() {
            return stale;
        }
        match tokio::time::timeout(self.opts.connect_timeout, live.peer().list_all_tools()).await {
            Ok(Ok(tools)) => {
                *self.tools.lock() = tools
                    .into_iter()
                    .filter_map(|t| serde_json::to_value(t).ok())
                    .collect();
                true
            }
            _ => stale,
        }
    }

    /// The live connection if there is one now (never waits, never dials).
    pub(crate) fn live_now(&self) -> Option<Arc<Live>> {
        self.live.lock().clone().filter(|l| !l.is_closed())
    }

    /// Follows the server's state (for waiting on servers that connect).
    pub(crate) fn watch_state(&self) -> watch::Receiver<ServerState> {
        self.state.subscribe()
    }

    /// Watches the connection and restarts it when it dies.
    fn spawn_supervisor(self: &Arc<Self>) {
        if self.supervising.swap(true, Ordering::AcqRel) {
            return;
        }
        let me = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut failures = 0usize;
            loop {
                // Wait until the current connection dies.
                loop {
                    let Some(server) = me.upgrade() else { return };
                    if server.stopping.load(Ordering::Acquire) {
                        return;
                    }
                    let live = server.live.lock().clone();
                    match live {
                        Some(live) if !live.is_closed() => {
                            drop(server);
                            if let Some(p) = &live.process {
                                tokio::select! {
                                    _ = p.wait_exit() => {}
                                    _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                                }
                            } else {
                                tokio::time::sleep(Duration::from_millis(500)).await;
                            }
                        }
                        Some(live) => {
                            if live.since.elapsed() >= HEALTHY_AFTER {
                                failures = 0;
                            }
                            *server.last_stderr.lock() = live.stderr_tail(20);
                            if let Some(p) = &live.process {
                                p.stop(Duration::from_millis(100)).await;
                            }
                            *server.live.lock() = None;
                            break;
                        }
                        None => break,
                    }
                }
                // Restart with backoff, or give up.
                loop {
                    let Some(server) = me.upgrade() else { return };
                    if server.stopping.load(Ordering::Acquire) {
                        return;
                    }
                    let Some(delay) = BACKOFF.get(failures).copied() else {
                        server.state.send_replace(ServerState::Failed(format!(
                            "gave up after {} restarts (circuit open)",
                            BACKOFF.len()
                        )));
                        return;
                    };
                    failures += 1;
                    server
                        .state
                        .send_replace(ServerState::Restarting { attempt: failures });
                    drop(server);
                    tokio::time::sleep(Duration::from_secs(delay)).await;
                    let Some(server) = me.upgrade() else { return };
                    if server.stopping.load(Ordering::Acquire) {
                        return;
                    }
                    if server.connect_and_list().await.is_ok() {
                        break;
                    }
                }
            }
        });
    }

    /// Marks the server stopped and kills a stdio server's group at once.
    pub fn kill_now(&self) {
        self.stopping.store(true, Ordering::Release);
        self.state.send_replace(ServerState::Stopped);
        if let Some(live) = self.live.lock().take() {
            if let Some(p) = &live.process {
                p.kill_now();
            }
            live.service.cancellation_token().cancel();
        }
    }

    /// Stops the server: closes the connection, then SIGTERM, grace, SIGKILL
    /// to a stdio server's process group.
    pub async fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        self.state.send_replace(ServerState::Stopped);
        let live = self.live.lock().take();
        if let Some(live) = live {
            if let Some(p) = &live.process {
                p.stop(STOP_GRACE).await;
            }
            let token = live.service.cancellation_token();
            token.cancel();
        }
    }
}

pub(crate) fn with_tail(message: String, tail: &[String]) -> String {
    if tail.is_empty() {
        return message;
    }
    format!("{message}\nLast lines of its stderr:\n{}", tail.join("\n"))
}
