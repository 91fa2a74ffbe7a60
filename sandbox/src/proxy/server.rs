//! The running proxy: listeners, accept loops, limits and shutdown.
//!
//! Every task the proxy starts (accept loops and connections) is spawned on
//! one `TaskTracker` and watches one `CancellationToken`. Dropping the
//! [`Proxy`] cancels the token, so listeners close and tunnels end at once;
//! [`Proxy::shutdown`] also waits until every task has finished.

use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, UnixListener};
use tokio::runtime::Handle;
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::address::AddressFilter;
use super::event::{EventSink, ProxyEvent};
use super::gate::Gate;
use super::resolve::{Resolve, SystemResolver};
use super::rules::DomainRules;
use super::{http, socks};

/// Per-connection limits shared by both front ends.
#[derive(Debug, Clone)]
pub(crate) struct Limits {
    /// Largest HTTP request head accepted.
    pub(crate) max_head: usize,
    /// Time allowed for the HTTP head or the SOCKS5 handshake.
    pub(crate) head_timeout: Duration,
    /// Size of each of a tunnel's two copy buffers.
    pub(crate) buffer: usize,
}

/// Which protocol a listener speaks.
#[derive(Debug, Clone, Copy)]
enum Front {
    Http,
    Socks,
}

struct Shared {
    gate: Gate,
    limits: Limits,
    cancel: CancellationToken,
    tracker: TaskTracker,
    /// One permit per open client connection, across all listeners.
    permits: Arc<Semaphore>,
    runtime: Handle,
}

/// Configures a [`Proxy`]; made by [`Proxy::builder`].
pub struct ProxyBuilder {
    rules: DomainRules,
    resolver: Arc<dyn Resolve>,
    http_port: u16,
    socks_port: u16,
    events: Option<mpsc::Sender<ProxyEvent>>,
    allow_loopback: bool,
    limits: Limits,
    resolve_timeout: Duration,
    connect_timeout: Duration,
    max_connections: usize,
}

// By hand: the resolver is a trait object; the rest says how it will listen.
impl std::fmt::Debug for ProxyBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyBuilder")
            .field("rules", &self.rules)
            .field("http_port", &self.http_port)
            .field("socks_port", &self.socks_port)
            .field("allow_loopback", &self.allow_loopback)
            .field("max_connections", &self.max_connections)
            .finish_non_exhaustive()
    }
}

impl ProxyBuilder {
    /// The resolver for names (default: [`SystemResolver`]).
    pub fn resolver(mut self, resolver: impl Resolve) -> Self {
        self.resolver = Arc::new(resolver);
        self
    }

    /// The HTTP listener's port on 127.0.0.1 (default 0: any free port).
    pub fn http_port(mut self, port: u16) -> Self {
        self.http_port = port;
        self
    }

    /// The SOCKS5 listener's port on 127.0.0.1 (default 0: any free port).
    pub fn socks_port(mut self, port: u16) -> Self {
        self.socks_port = port;
        self
    }

    /// Where to report decisions. The proxy never waits on this channel:
    /// when it is full, events are dropped and counted
    /// ([`Proxy::dropped_events`]).
    pub fn events(mut self, sender: mpsc::Sender<ProxyEvent>) -> Self {
        self.events = Some(sender);
        self
    }

    /// TEST KNOB, default off: lets names resolve to loopback addresses
    /// (127.0.0.0/8, ::1), so tests can reach a server on 127.0.0.1. Every
    /// other local address stays refused. Never set this for a sandbox.
    pub fn allow_loopback_targets_for_tests(mut self, allow: bool) -> Self {
        self.allow_loopback = allow;
        self
    }

    /// Time allowed for an HTTP request head or a SOCKS5 handshake
    /// (default 30 s).
    pub fn head_timeout(mut self, timeout: Duration) -> Self {
        self.limits.head_timeout = timeout;
        self
    }

    /// Largest HTTP request head accepted (default 64 KiB).
    pub fn max_head_bytes(mut self, bytes: usize) -> Self {
        self.limits.max_head = bytes;
        self
    }

    /// Time allowed for a name to resolve (default 10 s).
    pub fn resolve_timeout(mut self, timeout: Duration) -> Self {
        self.resolve_timeout = timeout;
        self
    }

    /// Time allowed for each connection attempt (default 15 s).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Most client connections served at once, over all listeners
    /// (default 256). Further clients wait in the listen backlog (each
    /// listener holds at most one of them accepted), which bounds the
    /// proxy's memory.
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// Binds the two listeners on 127.0.0.1 and starts serving. Must be
    /// called inside a tokio runtime (an error otherwise).
    pub fn start(self) -> io::Result<Proxy> {
        let runtime = Handle::try_current().map_err(|_| {
            io::Error::other("the sandbox proxy must be started inside a tokio runtime")
        })?;
        let http = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, self.http_port))?;
        let socks = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, self.socks_port))?;
        let gate = Gate {
            rules: RwLock::new(Arc::new(self.rules)),
            resolver: self.resolver,
            filter: AddressFilter {
                allow_loopback: self.allow_loopback,
            },
            events: EventSink::new(self.events),
            resolve_timeout: self.resolve_timeout,
            connect_timeout: self.connect_timeout,
        };
        let proxy = Proxy {
            http_addr: http.local_addr()?,
            socks_addr: socks.local_addr()?,
            shared: Arc::new(Shared {
                gate,
                limits: self.limits,
                cancel: CancellationToken::new(),
                tracker: TaskTracker::new(),
                permits: Arc::new(Semaphore::new(self.max_connections)),
                runtime,
            }),
        };
        proxy.serve_http_listener(http)?;
        proxy.serve_socks_listener(socks)?;
        Ok(proxy)
    }
}

/// A running proxy. Dropping it stops every listener and tunnel.
pub struct Proxy {
    http_addr: SocketAddr,
    socks_addr: SocketAddr,
    shared: Arc<Shared>,
}

// By hand: the shared state holds the tasks; the addresses identify it.
impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("http_addr", &self.http_addr)
            .field("socks_addr", &self.socks_addr)
            .finish_non_exhaustive()
    }
}

impl Proxy {
    /// A builder with the system resolver and default limits.
    pub fn builder(rules: DomainRules) -> ProxyBuilder {
        ProxyBuilder {
            rules,
            resolver: Arc::new(SystemResolver),
            http_port: 0,
            socks_port: 0,
            events: None,
            allow_loopback: false,
            limits: Limits {
                max_head: 64 * 1024,
                head_timeout: Duration::from_secs(30),
                buffer: 16 * 1024,
            },
            resolve_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(15),
            max_connections: 256,
        }
    }

    /// Starts a proxy with default settings on two free ports of 127.0.0.1.
    pub fn start(rules: DomainRules, resolver: impl Resolve) -> io::Result<Proxy> {
        Proxy::builder(rules).resolver(resolver).start()
    }

    /// The HTTP listener's address (127.0.0.1).
    pub fn http_addr(&self) -> SocketAddr {
        self.http_addr
    }

    /// The SOCKS5 listener's address (127.0.0.1).
    pub fn socks_addr(&self) -> SocketAddr {
        self.socks_addr
    }

    /// The rules in force.
    pub fn rules(&self) -> Arc<DomainRules> {
        self.shared.gate.rules()
    }

    /// Replaces the rules; connections decided from now on use them (open
    /// tunnels stay open).
    pub fn set_rules(&self, rules: DomainRules) {
        self.shared.gate.set_rules(rules)
    }

    /// Events dropped because the channel was full or closed.
    pub fn dropped_events(&self) -> u64 {
        self.shared.gate.events.dropped()
    }

    /// Also serves HTTP on a listener bound elsewhere (for example inside a
    /// sandboxed command's network namespace).
    pub fn serve_http_listener(&self, listener: std::net::TcpListener) -> io::Result<()> {
        self.serve_tcp(listener, Front::Http)
    }

    /// Also serves SOCKS5 on a listener bound elsewhere.
    pub fn serve_socks_listener(&self, listener: std::net::TcpListener) -> io::Result<()> {
        self.serve_tcp(listener, Front::Socks)
    }

    /// Also serves HTTP on a Unix socket listener.
    pub fn serve_http_unix_listener(
        &self,
        listener: std::os::unix::net::UnixListener,
    ) -> io::Result<()> {
        self.serve_unix(listener, Front::Http)
    }

    /// Also serves SOCKS5 on a Unix socket listener.
    pub fn serve_socks_unix_listener(
        &self,
        listener: std::os::unix::net::UnixListener,
    ) -> io::Result<()> {
        self.serve_unix(listener, Front::Socks)
    }

    /// Stops accepting, ends every tunnel, and waits for all tasks to end.
    pub async fn shutdown(self) {
        self.shared.cancel.cancel();
        self.shared.tracker.close();
        self.shared.tracker.wait().await;
    }

    fn serve_tcp(&self, listener: std::net::TcpListener, front: Front) -> io::Result<()> {
        self.check_running()?;
        listener.set_nonblocking(true)?;
        let _entered = self.shared.runtime.enter();
        let listener = TcpListener::from_std(listener)?;
        self.spawn_loop(listener, front);
        Ok(())
    }

    fn serve_unix(
        &self,
        listener: std::os::unix::net::UnixListener,
        front: Front,
    ) -> io::Result<()> {
        self.check_running()?;
        listener.set_nonblocking(true)?;
        let _entered = self.shared.runtime.enter();
        let listener = UnixListener::from_std(listener)?;
        self.spawn_loop(listener, front);
        Ok(())
    }

    fn check_running(&self) -> io::Result<()> {
        if self.shared.cancel.is_cancelled() {
            return Err(io::Error::other("the sandbox proxy is shut down"));
        }
        Ok(())
    }

    fn spawn_loop<L: Accept>(&self, listener: L, front: Front) {
        let shared = self.shared.clone();
        self.shared
            .tracker
            .spawn_on(accept_loop(listener, front, shared), &self.shared.runtime);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.shared.cancel.cancel();
    }
}

/// A listener of either family.
trait Accept: Send + 'static {
    type Conn: AsyncRead + AsyncWrite + Unpin + Send + 'static;
    fn accept_conn(&self) -> impl Future<Output = io::Result<Self::Conn>> + Send;
}

impl Accept for TcpListener {
    type Conn = tokio::net::TcpStream;
    async fn accept_conn(&self) -> io::Result<Self::Conn> {
        self.accept().await.map(|(stream, _)| stream)
    }
}

impl Accept for UnixListener {
    type Conn = tokio::net::UnixStream;
    async fn accept_conn(&self) -> io::Result<Self::Conn> {
        self.accept().await.map(|(stream, _)| stream)
    }
}

async fn accept_loop<L: Accept>(listener: L, front: Front, shared: Arc<Shared>) {
    loop {
        let accepted = tokio::select! {
            _ = shared.cancel.cancelled() => return,
            accepted = listener.accept_conn() => accepted,
        };
        let conn = match accepted {
            Ok(conn) => conn,
            Err(e) => {
                // Out of descriptors and similar: back off instead of
                // spinning, then try again.
                tracing::warn!(error = %e, "sandbox proxy: accept failed");
                tokio::select! {
                    _ = shared.cancel.cancelled() => return,
                    _ = tokio::time::sleep(Duration::from_millis(100)) => continue,
                }
            }
        };
        // Wait for a free slot before accepting again: over-limit clients
        // then queue in the kernel's backlog, and each listener holds at
        // most one accepted connection that is not yet served. (Taking the
        // permit before accepting would let an idle listener sit on a
        // permit that a busy one needs.)
        let permit = tokio::select! {
            _ = shared.cancel.cancelled() => return,
            permit = shared.permits.clone().acquire_owned() => permit,
        };
        let Ok(permit) = permit else { return };
        let task_shared = shared.clone();
        shared.tracker.spawn_on(
            async move {
                let _permit = permit;
                let shared = task_shared;
                let serve = async {
                    match front {
                        Front::Http => http::serve(conn, &shared.gate, &shared.limits).await,
                        Front::Socks => socks::serve(conn, &shared.gate, &shared.limits).await,
                    }
                };
                tokio::select! {
                    _ = shared.cancel.cancelled() => {}
                    _ = serve => {}
                }
            },
            &shared.runtime,
        );
    }
}

/// Opens a granted tunnel: `answer` (the protocol's "connected") to the
/// client, `early` (bytes the client sent before that answer, an eager TLS
/// hello) to `upstream`, then bytes both ways until either side closes.
pub(crate) async fn relay<S>(
    client: &mut S,
    upstream: &mut tokio::net::TcpStream,
    answer: &[u8],
    early: &[u8],
    limits: &Limits,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send,
{
    if client.write_all(answer).await.is_err() {
        return;
    }
    if !early.is_empty() && upstream.write_all(early).await.is_err() {
        return;
    }
    let _ =
        tokio::io::copy_bidirectional_with_sizes(client, upstream, limits.buffer, limits.buffer)
            .await;
}

/// Closes a refused client politely: half-close, then read and discard
/// what the client still sends (bounded in size and time). Closing with
/// unread bytes would send a reset, and a reset can destroy the answer
/// before the client reads it.
pub(crate) async fn linger_close<S: AsyncRead + AsyncWrite + Unpin>(client: &mut S) {
    const MAX_DRAIN: usize = 64 * 1024;
    let _ = client.shutdown().await;
    let drain = async {
        let mut sink = [0u8; 4096];
        let mut total = 0;
        while total < MAX_DRAIN {
            match client.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => total += n,
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
}
