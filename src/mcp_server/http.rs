//! Streamable HTTP for the MCP server, safe to expose.
//!
//! A Baton worker executes shell commands, so an open port is a remote shell.
//! The defaults are therefore closed: without a bearer token the server only
//! listens on loopback; `Host` is checked against an allow-list (DNS
//! rebinding); a request carrying a browser `Origin` is refused unless that
//! origin was allowed; request bodies are capped. `/healthz` answers without
//! a token so that orchestrators' probes work, and says nothing but "ok".
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
    /// Browser origins allowed to call (scheme://host:port); none by default.
    pub allowed_origins: Vec<String>,
    /// Largest accepted request body, in bytes.
    pub max_request_bytes: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            token: None,
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
        }
    }
}

/// Why the server refuses to start.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(
        "refusing to listen on {0} without a token: anyone who can reach it could run \
         commands. Give a token (--token-file or BATON_MCP_TOKEN) or listen on 127.0.0.1"
    )]
    NoToken(SocketAddr),
    #[error("the token is empty")]
    EmptyToken,
    #[error("cannot serve HTTP: {0}")]
    Io(#[from] std::io::Error),
}

/// Checks the options against the address before anything listens.
pub fn check(addr: SocketAddr, options: &HttpOptions) -> Result<(), HttpError> {
    match &options.token {
        Some(t) if t.trim().is_empty() => Err(HttpError::EmptyToken),
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
    config = if options.allowed_hosts.iter().any(|h| h == "*") {
        config.disable_allowed_hosts()
    } else {
        let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        if !addr.ip().is_unspecified() {
            hosts.push(addr.ip().to_string());
        }
        hosts.extend(options.allowed_hosts.iter().cloned());
        config.with_allowed_hosts(hosts)
    };
    config = if options.allowed_origins.is_empty() {
        config.enforce_origin_validation()
    } else {
        config.with_allowed_origins(options.allowed_origins.clone())
    };
    let service: StreamableHttpService<McpServer, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(server.clone()), Default::default(), config);
    let token = options.token.map(Arc::<str>::from);
    let mcp = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(token, authenticate));
    let app = axum::Router::new()
        .route("/healthz", axum::routing::get(|| async { "ok" }))
        .merge(mcp);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled_owned().await })
        .await?;
    Ok(())
}

/// Lets a request through only with the right bearer token (when one is set).
async fn authenticate(
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
            token: Some("s3cret".into()),
            ..Default::default()
        };
        assert!(check(public, &with).is_ok());
        let empty = HttpOptions {
            token: Some("  ".into()),
            ..Default::default()
        };
        assert!(matches!(check(local, &empty), Err(HttpError::EmptyToken)));
    }

    #[test]
    fn token_comparison() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"abcd"));
        assert!(!same(b"", b"a"));
    }
}
