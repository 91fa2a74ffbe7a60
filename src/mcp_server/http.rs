//! Streamable HTTP for the MCP server, safe to expose.
//!
//! A Baton worker executes shell commands, so an open port is a remote shell.
//! The defaults are therefore closed: without a bearer token the server only
//! listens on loopback; `Host` is checked against an allow-list (DNS
//! rebinding); a request carrying a browser `Origin` is refused unless that
//! origin was allowed (on a loopback bind, origins on loopback are allowed
//! too: a page served from this machine can only come from its own user);
//! request bodies are capped. `/healthz` answers without
//! a token so that orchestrators' probes work, and says nothing but "ok".
//! File transfer (`/v1/files`, [`crate::transfer`]) sits behind the same
//! token, `Host` and `Origin` checks, with its own size limit.
//!
//! Both protocol generations are served on `/mcp`: 2026-07-28 clients are
//! handled statelessly (any replica behind a load balancer can answer), older
//! clients get the `initialize` handshake and a session.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::McpServer;

/// Default cap on one request body: large enough for a `Write` of a big
/// file, small enough that a flood cannot exhaust memory.
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// How the HTTP endpoint is exposed.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// The bearer token clients must send; required beyond loopback.
    pub token: Option<String>,
    /// Extra `Host` values accepted besides the loopback names. `*` accepts
    /// any host (only sensible behind a token).
    pub allowed_hosts: Vec<String>,
    /// Browser origins allowed to call (scheme://host:port), besides the
    /// loopback origins a loopback bind always accepts ([`LOOPBACK_ORIGINS`]).
    pub allowed_origins: Vec<String>,
    /// Largest accepted request body, in bytes.
    pub max_request_bytes: usize,
    /// Largest upload to `/v1/files` (crate::transfer), in bytes; the
    /// MCP body cap above does not apply there.
    pub max_transfer_bytes: u64,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            token: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            max_transfer_bytes: crate::transfer::DEFAULT_MAX_BYTES,
        }
    }
}

/// The origins a server bound to loopback accepts without being told:
/// pages served from this machine (the MCP Inspector, a local web UI), on
/// any port, over http or https. The MCP transport's DNS-rebinding guidance
/// asks for exactly this: a rebound page has a foreign origin (its own
/// domain), which stays refused. Beyond loopback nothing is implied, since
/// "localhost" there would be the browser's machine, not the server's.
pub const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// The `Origin` allow-list for a server bound to `addr`: the user's
/// `--allowed-origin`s, plus [`LOOPBACK_ORIGINS`] when bound to loopback.
/// An empty list means every request carrying an `Origin` is refused.
pub fn allowed_origins(addr: SocketAddr, options: &HttpOptions) -> Vec<String> {
    let mut origins = options.allowed_origins.clone();
    if addr.ip().is_loopback() {
        origins.extend(LOOPBACK_ORIGINS.iter().map(|o| o.to_string()));
    }
    origins
}

/// Why the server refuses to start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    #[error(
        "refusing to listen on {0} without a token: anyone who can reach it could run \
         commands. Give a token (--token-file or BATON_MCP_TOKEN) or listen on 127.0.0.1"
    )]
    /// The address is not loopback and no token was given.
    NoToken(SocketAddr),
    /// The token given is empty.
    #[error("the token is empty")]
    EmptyToken,
    /// The token is too weak to guard a server that runs commands (why).
    #[error("refusing to serve: {0}")]
    WeakToken(String),
    /// Binding or serving failed.
    #[error("cannot serve HTTP: {0}")]
    Io(#[from] std::io::Error),
}

/// Checks the options against the address before anything listens.
pub fn check(addr: SocketAddr, options: &HttpOptions) -> Result<(), HttpError> {
    match &options.token {
        Some(t) if t.trim().is_empty() => Err(HttpError::EmptyToken),
        Some(t) => match super::token_strength::weakness(t, !addr.ip().is_loopback()) {
            Some(why) => Err(HttpError::WeakToken(why)),
            None => Ok(()),
        },
        None if !addr.ip().is_loopback() => Err(HttpError::NoToken(addr)),
        _ => Ok(()),
    }
}

/// Serves `server` on `listener` until `shutdown` is cancelled.
pub async fn serve(
    server: McpServer,
    listener: TcpListener,
    options: HttpOptions,
    shutdown: CancellationToken,
) -> Result<(), HttpError> {
    let addr = listener.local_addr()?;
    check(addr, &options)?;
    let mut config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(options.max_request_bytes)
        .with_cancellation_token(shutdown.child_token());
    let hosts = if options.allowed_hosts.iter().any(|h| h == "*") {
        None
    } else {
        let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        if !addr.ip().is_unspecified() {
            hosts.push(addr.ip().to_string());
        }
        hosts.extend(options.allowed_hosts.iter().cloned());
        Some(hosts)
    };
    config = match hosts.clone() {
        None => config.disable_allowed_hosts(),
        Some(hosts) => config.with_allowed_hosts(hosts),
    };
    // Validation stays on even with an empty list: then any `Origin` is
    // refused (rmcp would otherwise let every origin through).
    config = config
        .enforce_origin_validation()
        .with_allowed_origins(allowed_origins(addr, &options));
    let engine = server.engine().clone();
    let service: StreamableHttpService<McpServer, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(server.clone()), Default::default(), config);
    let token = options.token.clone().map(Arc::<str>::from);
    // Inside the token check: the 2025-11-25 task adapter (super::task_wire).
    let mcp = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(
            options.max_request_bytes,
            super::task_wire::http::adapt,
        ))
        .layer(axum::middleware::from_fn_with_state(
            token.clone(),
            authenticate,
        ));
    let guard = super::metrics_route::Guard {
        hosts,
        origins: allowed_origins(addr, &options),
    };
    let files = super::metrics_route::guarded(
        crate::transfer::routes::router(engine, options.max_transfer_bytes),
        guard.clone(),
        token.clone(),
    );
    let metrics = super::metrics_route::router(guard, token);
    let app = axum::Router::new()
        .route("/healthz", axum::routing::get(|| async { "ok" }))
        .merge(mcp)
        .merge(metrics)
        .merge(files);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await?;
    Ok(())
}

/// Lets a request through only with the right bearer token (when one is set).
pub(super) async fn authenticate(
    State(token): State<Option<Arc<str>>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(token) = token else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if same(given.as_bytes(), token.as_bytes()) {
        next.run(request).await
    } else {
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "a valid bearer token is required\n",
        )
            .into_response()
    }
}

/// Compares in time that depends only on the lengths, so the token cannot
/// be guessed byte by byte from response times.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn beyond_loopback_needs_a_token() {
        let public: SocketAddr = ([0, 0, 0, 0], 8080).into();
        let local: SocketAddr = ([127, 0, 0, 1], 8080).into();
        let none = HttpOptions::default();
        assert!(matches!(check(public, &none), Err(HttpError::NoToken(_))));
        assert!(check(local, &none).is_ok());
        let with = HttpOptions {
            token: Some("9b1f3e7a0c2d4f6a8b0c2e4f6a8b0d2f".into()),
            ..Default::default()
        };
        assert!(check(public, &with).is_ok());
        let short = HttpOptions {
            token: Some("s3cret".into()),
            ..Default::default()
        };
        assert!(matches!(
            check(public, &short),
            Err(HttpError::WeakToken(_))
        ));
        assert!(check(local, &short).is_ok());
        let empty = HttpOptions {
            token: Some("  ".into()),
            ..Default::default()
        };
        assert!(matches!(check(local, &empty), Err(HttpError::EmptyToken)));
    }

    /// A real server on `bind` (an empty tool pool is enough: the checks
    /// run before any MCP method), and its port.
    async fn served(bind: &str, options: HttpOptions) -> (u16, CancellationToken) {
        let dir = std::env::temp_dir();
        let pool = baton_engine::ToolPool::assemble(
            Default::default(),
            &baton_engine::permission::AllowAllUnsafe,
        );
        let engine = crate::Engine::builder(pool.clone())
            .cwd(&dir)
            .build()
            .unwrap();
        let listener = TcpListener::bind(bind).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = CancellationToken::new();
        let server = McpServer::new(engine, pool);
        tokio::spawn(serve(server, listener, options, stop.clone()));
        (port, stop)
    }

    /// The HTTP status of an `initialize` POST to 127.0.0.1:`port`.
    async fn status(port: u16, origin: Option<&str>, token: Option<&str>) -> u16 {
        let mut request = reqwest::Client::new()
            .post(format!("http://127.0.0.1:{port}/mcp"))
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            );
        if let Some(origin) = origin {
            request = request.header("origin", origin);
        }
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send().await.unwrap().status().as_u16()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn loopback_bind_accepts_loopback_origins_only() {
        let (port, stop) = served("127.0.0.1:0", HttpOptions::default()).await;
        assert_eq!(
            status(port, None, None).await,
            200,
            "no Origin: not a browser"
        );
        for origin in [
            format!("http://localhost:{port}"),
            "http://localhost:6274".to_string(),
            "http://127.0.0.1:3000".to_string(),
            "http://[::1]:8080".to_string(),
            "https://localhost:8443".to_string(),
            "http://localhost".to_string(),
        ] {
            assert_eq!(status(port, Some(&origin), None).await, 200, "{origin}");
        }
        for origin in [
            "https://attacker.example",
            "http://localhost.attacker.example:80",
            "http://127.0.0.2:3000",
            "http://evil.example.com",
            "null",
            "file://",
        ] {
            assert_eq!(status(port, Some(origin), None).await, 403, "{origin}");
        }
        stop.cancel();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn beyond_loopback_no_origin_is_implied() {
        let options = HttpOptions {
            token: Some("0b8e6c4a2f1d3e5c7a9b0d2f4e6a8c1e".into()),
            ..Default::default()
        };
        let (port, stop) = served("0.0.0.0:0", options.clone()).await;
        assert_eq!(
            status(port, None, Some("0b8e6c4a2f1d3e5c7a9b0d2f4e6a8c1e")).await,
            200
        );
        for origin in [
            "http://localhost:3000",
            "http://127.0.0.1:3000",
            "https://app.example",
        ] {
            assert_eq!(
                status(port, Some(origin), Some("0b8e6c4a2f1d3e5c7a9b0d2f4e6a8c1e")).await,
                403,
                "{origin}"
            );
        }
        stop.cancel();

        let allowed = HttpOptions {
            allowed_origins: vec!["https://app.example:443".into()],
            ..options
        };
        let (port, stop) = served("0.0.0.0:0", allowed).await;
        assert_eq!(
            status(
                port,
                Some("https://app.example"),
                Some("0b8e6c4a2f1d3e5c7a9b0d2f4e6a8c1e")
            )
            .await,
            200
        );
        assert_eq!(
            status(
                port,
                Some("http://localhost:3000"),
                Some("0b8e6c4a2f1d3e5c7a9b0d2f4e6a8c1e")
            )
            .await,
            403
        );
        stop.cancel();
    }

    #[test]
    fn token_comparison() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
        assert!(!same(b"", b"a"));
    }
}
