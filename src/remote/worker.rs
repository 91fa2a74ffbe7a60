//! One connection to a Baton worker (`baton mcp serve --http`), and the
//! choice of worker for a session.
//!
//! A session sticks to one worker so that its working directory and the
//! files its calls read and wrote stay where the next call runs. When that
//! worker fails (connection refused or lost), the calls in flight on it get
//! error results naming it, and the session moves to the next worker that
//! answers; the result of the first call there says so, because a `cd` made
//! on the old worker is gone.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use baton_engine::{Progress, ProgressSink};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use tokio::sync::Mutex as AsyncMutex;

/// How long connecting to a worker may take before it counts as down.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where progress notifications of running calls go, by progress token.
#[derive(Clone, Default)]
pub(super) struct ProgressRoutes {
    routes: Arc<Routes>,
}

/// One call's progress: where it goes, and what was seen last. A journaled
/// call's progress is numbered by the worker (`progress` is the output's
/// number), so after a broken connection the retry asks for what followed.
pub(super) struct Follow {
    sink: ProgressSink,
    seen: std::sync::Mutex<(u64, String)>,
}

impl Follow {
    pub(super) fn new(sink: ProgressSink) -> Arc<Follow> {
        Arc::new(Follow {
            sink,
            seen: std::sync::Mutex::new((0, String::new())),
        })
    }

    /// The number and text of the last output seen.
    pub(super) fn seen(&self) -> (u64, String) {
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    fn deliver(&self, number: f64, message: String) {
        {
            let mut seen = self
                .seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            // Numbers only grow; a replay of what was seen is not passed on
            // twice.
            let n = if number.is_finite() && number > 0.0 {
                number as u64
            } else {
                0
            };
            if n != 0 && n <= seen.0 {
                return;
            }
            seen.0 = seen.0.max(n);
            seen.1.clone_from(&message);
        }
        self.sink.send(Progress {
            message,
            data: None,
        });
    }
}

impl ProgressRoutes {
    pub(super) fn add(&self, token: ProgressToken, follow: Arc<Follow>) {
        lock(&self.routes).insert(token, follow);
    }

    pub(super) fn remove(&self, token: &ProgressToken) {
        lock(&self.routes).remove(token);
    }
}

type Routes = std::sync::Mutex<HashMap<ProgressToken, Arc<Follow>>>;

/// The map behind the lock; a panic elsewhere never poisons progress.
fn lock(routes: &Routes) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, Arc<Follow>>> {
    routes
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The client side of a worker connection: forwards progress to the call.
#[derive(Clone)]
struct Handler {
    routes: ProgressRoutes,
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let follow = lock(&self.routes.routes)
            .get(&params.progress_token)
            .cloned();
        if let Some(follow) = follow {
            follow.deliver(params.progress, params.message.unwrap_or_default());
        }
    }
}

/// A live connection.
pub(super) struct Connection {
    pub(super) peer: Peer<RoleClient>,
    pub(super) routes: ProgressRoutes,
    /// The workspace the worker reported when this connection opened.
    pub(super) workspace: Option<super::workspace::WorkerWorkspace>,
    /// Whether the worker journals named calls (then a call whose
    /// connection broke is sent again; elsewhere that could run it twice).
    pub(super) journaled: bool,
    // Held so the connection stays open; dropping it closes the transport.
    _service: RunningService<RoleClient, Handler>,
}

/// The workers of one session, with the one it currently uses.
pub(super) struct Workers {
    /// The host session's name in the workers' journals: unique per
    /// session, so call ids of another session never meet its results.
    pub(super) journal_session: String,
    urls: Vec<String>,
    token: Option<String>,
    state: AsyncMutex<State>,
    /// The workspace of the worker last connected to, readable without
    /// waiting: permission rules are judged synchronously.
    workspace: std::sync::Mutex<Option<super::workspace::WorkerWorkspace>>,
}

struct State {
    /// Index into `urls` of the worker this session uses.
    current: usize,
    connection: Option<Arc<Connection>>,
    /// Workers that failed; skipped until every worker has failed.
    down: Vec<bool>,
    /// Set when the session moved: the next result says so once.
    moved_from: Option<String>,
    /// Whether any call ran on a worker yet (moving before that loses nothing).
    used: bool,
}

/// A connection to use, and whether the session just moved to it.
pub(super) struct Lease {
    pub(super) connection: Arc<Connection>,
    pub(super) url: String,
    pub(super) moved_from: Option<String>,
}

impl Workers {
    /// `start` picks the first worker tried (spreading sessions over them).
    pub(super) fn new(
        urls: Vec<String>,
        token: Option<String>,
        start: usize,
        journal_session: String,
    ) -> Self {
        let n = urls.len().max(1);
        Workers {
            journal_session,
            state: AsyncMutex::new(State {
                current: start % n,
                connection: None,
                down: vec![false; urls.len()],
                moved_from: None,
                used: false,
            }),
            urls,
            token,
            workspace: std::sync::Mutex::new(None),
        }
    }

    /// The current worker's workspace, once a connection reported one.
    pub(super) fn workspace(&self) -> Option<super::workspace::WorkerWorkspace> {
        self.workspace
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The connection this session's calls go to, connecting (or moving to
    /// another worker) as needed. A closed connection is first re-opened to
    /// the same worker (its state is still there); only a worker that cannot
    /// be reached makes the session move.
    pub(super) async fn lease(&self) -> Result<Lease, String> {
        let mut state = self.state.lock().await;
        if let Some(connection) = &state.connection {
            if !connection.peer.is_transport_closed() {
                return Ok(Lease {
                    connection: connection.clone(),
                    url: self.urls[state.current].clone(),
                    moved_from: state.moved_from.take(),
                });
            }
            state.connection = None;
        }
        let n = self.urls.len();
        // The current worker first, then the others in turn; those that
        // failed before come last but are still tried (a pod comes back).
        let order: Vec<usize> = (0..n).map(|k| (state.current + k) % n).collect();
        let (fresh, failed): (Vec<usize>, Vec<usize>) =
            order.into_iter().partition(|&i| !state.down[i]);
        let mut errors = Vec::new();
        for i in fresh.into_iter().chain(failed) {
            let url = self.urls[i].clone();
            match connect(&url, self.token.as_deref()).await {
                Ok(c) => {
                    let c = Arc::new(c);
                    if i != state.current && state.used {
                        state.moved_from = Some(self.urls[state.current].clone());
                    }
                    state.current = i;
                    state.used = true;
                    state.down[i] = false;
                    state.connection = Some(c.clone());
                    // A worker that reports nothing clears the last one's:
                    // its paths are then judged as the host's.
                    *self
                        .workspace
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = c.workspace.clone();
                    return Ok(Lease {
                        connection: c,
                        url,
                        moved_from: state.moved_from.take(),
                    });
                }
                Err(e) => {
                    errors.push(format!("{url}: {e}"));
                    state.down[i] = true;
                }
            }
        }
        Err(format!(
            "no Baton worker could be reached ({})",
            errors.join("; ")
        ))
    }

    /// Connects (or moves) if needed, leaving the note that the session
    /// moved for the next call's result.
    pub(super) async fn ensure_connected(&self) {
        if let Ok(lease) = self.lease().await {
            if let Some(old) = lease.moved_from {
                self.state.lock().await.moved_from.get_or_insert(old);
            }
        }
    }

    /// A fresh connection to the worker `url` alone (a call retried after
    /// its connection broke must reach the worker that ran it: only that
    /// one's journal knows it). Replaces the session's connection when that
    /// is still the one to `url`.
    pub(super) async fn reconnect(
        &self,
        url: &str,
        within: Duration,
    ) -> Result<Arc<Connection>, String> {
        let c = tokio::time::timeout(within, connect(url, self.token.as_deref()))
            .await
            .map_err(|_| format!("no answer within {} s", within.as_secs()))??;
        let c = Arc::new(c);
        let mut state = self.state.lock().await;
        if self.urls[state.current] == url {
            state.connection = Some(c.clone());
        }
        Ok(c)
    }

    /// Called when a call's connection broke under it: the next lease moves.
    pub(super) async fn failed(&self, connection: &Arc<Connection>) {
        let mut state = self.state.lock().await;
        if state
            .connection
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(c, connection))
        {
            state.connection = None;
            let i = state.current;
            state.down[i] = true;
        }
    }
}

/// Three quick retries, then the stream (and its calls) fail.
#[derive(Debug)]
struct BriefRetry;

impl rmcp::transport::common::client_side_sse::SseRetryPolicy for BriefRetry {
    fn retry(&self, attempt: usize) -> Option<Duration> {
        (attempt < 3).then(|| Duration::from_millis(200))
    }
}

async fn connect(url: &str, token: Option<&str>) -> Result<Connection, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string())
        // Every call of a session may be in flight at once.
        .max_concurrent_requests(1024);
    // A broken result stream is re-opened a few times (a network hiccup);
    // a worker that stays away is dead, and its calls must fail now rather
    // than wait for a pod that is gone.
    config.retry_config = Arc::new(BriefRetry);
    if let Some(t) = token {
        config = config.auth_header(t.to_string());
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    let routes = ProgressRoutes::default();
    let handler = Handler {
        routes: routes.clone(),
    };
    let service = tokio::time::timeout(CONNECT_TIMEOUT, handler.serve(transport))
        .await
        .map_err(|_| format!("no answer within {} s", CONNECT_TIMEOUT.as_secs()))?
        .map_err(|e| baton_mcp::sentence::describe_start(&e))?;
    let info = service.peer().peer_info();
    let workspace = info
        .as_ref()
        .and_then(|info| super::workspace::WorkerWorkspace::from_capabilities(&info.capabilities));
    let journaled = info
        .as_ref()
        .and_then(|info| info.capabilities.experimental.as_ref())
        .is_some_and(|e| e.contains_key(crate::mcp_server::JOURNAL_CAPABILITY));
    Ok(Connection {
        peer: service.peer().clone(),
        routes,
        workspace,
        journaled,
        _service: service,
    })
}
