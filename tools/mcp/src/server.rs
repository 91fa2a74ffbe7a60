//! One configured server: connecting, the live connection, and restarting
//! it when it dies (backoff 1, 2, 4, 8, 16 s; then the circuit opens).
//!
//! The live connection sits behind a short lock that is only held to clone
//! an `Arc`; no lock is ever held across a request, so calls on one server
//! run fully in parallel.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, Peer, RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport};
use rmcp::ClientServiceExt;
use serde_json::Value;
use tokio::sync::watch;

use crate::config::{ServerSpec, TransportSpec};
use crate::elicit::Elicitor;
use crate::handler::Handler;
use crate::probe::{OnSilence, ProbeGuard, ProbeNote, ProbeRecord, DISCOVER_PROBE};
use crate::process::{ServerProcess, STOP_GRACE};

/// Restart delays after a crash; after the last one the server is given up.
pub const BACKOFF: [u64; 5] = [1, 2, 4, 8, 16];
/// A connection that lived this long resets the failure count.
const HEALTHY_AFTER: Duration = Duration::from_secs(60);

/// Settings shared by every server of a client set.
#[derive(Clone)]
pub struct ClientOptions {
    pub project_dir: PathBuf,
    /// Connect limit (`MCP_TIMEOUT`, default 30 s).
    pub connect_timeout: Duration,
    /// Per-call limits when a server sets none.
    pub limits: crate::call::CallLimits,
    pub elicitor: Option<Arc<dyn Elicitor>>,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("project_dir", &self.project_dir)
            .field("connect_timeout", &self.connect_timeout)
            .field("limits", &self.limits)
            .finish()
    }
}

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
        }
    }
}

/// Where a server is in its life.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerState {
    Connecting,
    Ready,
    /// Died; restart `attempt` (1-based) is pending.
    Restarting {
        attempt: usize,
    },
    /// Could not be (re)started; calls fail at once with this reason.
    Failed(String),
    Stopped,
}

impl ServerState {
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
}

impl Live {
    pub fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    pub fn handler(&self) -> &Handler {
        self.service.service()
    }

    pub fn is_closed(&self) -> bool {
        self.service.is_closed()
            || self.peer().is_transport_closed()
            || self
                .process
                .as_ref()
                .is_some_and(|p| p.exit_status().is_some())
    }

    pub fn stderr_tail(&self, n: usize) -> Vec<String> {
        self.process
            .as_ref()
            .map(|p| p.stderr.tail(n))
            .unwrap_or_default()
    }
}

/// One server and its connection.
pub struct Server {
    pub spec: ServerSpec,
    opts: ClientOptions,
    live: Mutex<Option<Arc<Live>>>,
    state: watch::Sender<ServerState>,
    /// The last stderr lines of the previous connection, for messages after
    /// a crash.
    last_stderr: Mutex<Vec<String>>,
    pub(crate) tools: Mutex<Vec<Value>>,
    stopping: AtomicBool,
    supervising: AtomicBool,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.spec.name)
            .field("state", &*self.state.borrow())
            .finish()
    }
}

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
        })
    }

    pub fn name(&self) -> &str {
        &self.spec.name
    }

    pub fn state(&self) -> ServerState {
        self.state.borrow().clone()
    }

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

    /// Connects, choosing the protocol generation: `server/discover` first
    /// (answered within [`DISCOVER_PROBE`] or not at all, see
    /// [`crate::probe`]), then the classic `initialize` on the same
    /// connection. The probe is never fatal: when that first attempt fails
    /// for any reason other than a successful discovery, Baton starts over
    /// with `initialize` alone, and — if the probe went unanswered, as a
    /// modern server still starting up may leave it — with `server/discover`
    /// alone, all within `MCP_TIMEOUT`.
    async fn connect(&self) -> Result<Live, String> {
        if matches!(self.spec.transport, TransportSpec::Sse { .. }) {
            // HTTP+SSE belongs to the `initialize` generation; a
            // `server/discover` probe would only cost a round trip.
            return self
                .connect_with(Start::Initialize, self.opts.connect_timeout)
                .await
                .map_err(Failure::into_message);
        }
        let started = Instant::now();
        let record = ProbeRecord::default();
        let first = self
            .connect_with(Start::Probe(record.clone()), self.opts.connect_timeout)
            .await;
        let why = match first {
            Ok(live) => return Ok(live),
            Err(Failure::NotStarted(why)) => return Err(why),
            Err(Failure::Failed(why)) => why,
        };
        let note = record.lock().clone();
        let mut retries = match note {
            Some(ProbeNote::Discovered) => return Err(why),
            Some(ProbeNote::Refused(_)) => vec![Start::Initialize],
            Some(ProbeNote::Silent) | None => vec![Start::Initialize, Start::Discover],
        };
        let mut last = why;
        for start in retries.drain(..) {
            let left = self.opts.connect_timeout.saturating_sub(started.elapsed());
            if left.is_zero() {
                break;
            }
            match self.connect_with(start, left).await {
                Ok(live) => return Ok(live),
                Err(failure) => last = failure.into_message(),
            }
        }
        Err(last)
    }

    async fn connect_with(&self, start: Start, limit: Duration) -> Result<Live, Failure> {
        let handler = Handler::new(&self.spec.name, self.opts.elicitor.clone());
        let (lifecycle, record, probe_limit) = match start {
            Start::Probe(record) => (
                ClientLifecycleMode::Auto {
                    preferred_versions: preferred_versions(),
                    legacy_version: Some(ProtocolVersion::V_2025_11_25),
                },
                record,
                DISCOVER_PROBE,
            ),
            // Without a fallback, silence is judged by the connect limit.
            Start::Discover => (
                ClientLifecycleMode::Discover {
                    preferred_versions: preferred_versions(),
                },
                ProbeRecord::default(),
                limit,
            ),
            Start::Initialize => (
                ClientLifecycleMode::Initialize,
                ProbeRecord::default(),
                limit,
            ),
        };
        let (service, process) = match &self.spec.transport {
            TransportSpec::Stdio { command, args, env } => {
                let (process, pipes) =
                    ServerProcess::spawn(command, args, env, &self.opts.project_dir)
                        .map_err(|e| Failure::NotStarted(format!("cannot start {command}: {e}")))?;
                let transport = ProbeGuard::new(
                    IntoTransport::<RoleClient, std::io::Error, _>::into_transport(pipes),
                    preferred_versions(),
                    probe_limit,
                    OnSilence::FallBack,
                    record,
                );
                let served =
                    tokio::time::timeout(limit, handler.serve_with_lifecycle(transport, lifecycle))
                        .await;
                match served {
                    Ok(Ok(service)) => (service, Some(process)),
                    failed => {
                        let why = match failed {
                            Ok(Err(e)) => e.to_string(),
                            _ => {
                                format!("no answer within {} s (MCP_TIMEOUT)", limit.as_secs_f64())
                            }
                        };
                        process.stop(Duration::from_millis(200)).await;
                        let tail = process.stderr.tail(5);
                        *self.last_stderr.lock() = process.stderr.tail(20);
                        return Err(Failure::Failed(with_tail(
                            format!("could not connect: {why}"),
                            &tail,
                        )));
                    }
                }
            }
            TransportSpec::Http { url, headers } => {
                let map: std::collections::HashMap<_, _> = crate::sse::header_map(headers)
                    .map_err(Failure::NotStarted)?
                    .into_iter()
                    .filter_map(|(k, v)| Some((k?, v)))
                    .collect();
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                    .custom_headers(map)
                    .max_concurrent_requests(256);
                let transport = ProbeGuard::new(
                    StreamableHttpClientTransport::with_client(reqwest::Client::new(), config),
                    preferred_versions(),
                    probe_limit,
                    OnSilence::GiveUp,
                    record,
                );
                let service =
                    tokio::time::timeout(limit, handler.serve_with_lifecycle(transport, lifecycle))
                        .await
                        .map_err(|_| {
                            Failure::Failed(format!(
                                "{url}: no answer within {} s (MCP_TIMEOUT)",
                                limit.as_secs_f64()
                            ))
                        })?
                        .map_err(|e| Failure::Failed(format!("{url}: could not connect: {e}")))?;
                (service, None)
            }
            TransportSpec::Sse { url, headers } => {
                let headers = crate::sse::header_map(headers).map_err(Failure::NotStarted)?;
                let service = tokio::time::timeout(limit, async {
                    let transport = crate::sse::SseTransport::connect(url, headers, limit).await?;
                    handler
                        .serve_with_lifecycle(transport, lifecycle)
                        .await
                        .map_err(|e| format!("{url}: could not connect: {e}"))
                })
                .await
                .map_err(|_| {
                    format!(
                        "{url}: no answer within {} s (MCP_TIMEOUT)",
                        limit.as_secs_f64()
                    )
                })
                .and_then(|served| served)
                .map_err(Failure::Failed)?;
                (service, None)
            }
        };
        let version = service
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.clone());
        if version.as_ref().is_some_and(|v| !v.has_initialize()) {
            listen_for_list_changes(&service);
        }
        let protocol = version.map_or_else(|| "unknown".into(), |v| v.to_string());
        Ok(Live {
            service,
            process,
            protocol,
            since: Instant::now(),
        })
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
        let Some(live) = self.live.lock().clone() else {
            return false;
        };
        if !live.handler().take_tools_changed() {
            return false;
        }
        match tokio::time::timeout(self.opts.connect_timeout, live.peer().list_all_tools()).await {
            Ok(Ok(tools)) => {
                *self.tools.lock() = tools
                    .into_iter()
                    .filter_map(|t| serde_json::to_value(t).ok())
                    .collect();
                true
            }
            _ => false,
        }
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

/// How one connection attempt begins.
enum Start {
    /// `server/discover`, falling back to `initialize` on the same
    /// connection; the record says how the probe went.
    Probe(ProbeRecord),
    Initialize,
    Discover,
}

/// Why a connection attempt failed.
enum Failure {
    /// Nothing was started (no such command, a bad header): trying again
    /// another way cannot help.
    NotStarted(String),
    Failed(String),
}

impl Failure {
    fn into_message(self) -> String {
        match self {
            Failure::NotStarted(why) | Failure::Failed(why) => why,
        }
    }
}

/// The protocol versions of the `server/discover` generation Baton speaks.
fn preferred_versions() -> Vec<ProtocolVersion> {
    vec![ProtocolVersion::V_2026_07_28]
}

pub(crate) fn with_tail(message: String, tail: &[String]) -> String {
    if tail.is_empty() {
        return message;
    }
    format!("{message}\nLast lines of its stderr:\n{}", tail.join("\n"))
}

/// On 2026-07-28 connections, list-change notifications arrive only on a
/// `subscriptions/listen` stream; open one and remember changes.
fn listen_for_list_changes(service: &RunningService<RoleClient, Handler>) {
    let peer = service.peer().clone();
    let handler = service.service().clone();
    tokio::spawn(async move {
        let filter = rmcp::model::SubscriptionFilter::builder()
            .tools_list_changed()
            .build();
        let Ok(mut subscription) = peer.listen(filter).await else {
            return;
        };
        while let Ok(Some(notification)) = subscription.next().await {
            if matches!(
                notification,
                rmcp::model::ServerNotification::ToolListChangedNotification(_)
            ) {
                handler.0.tools_changed.store(true, Ordering::Release);
            }
        }
    });
}
