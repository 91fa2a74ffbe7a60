//! `/metrics` beside `/mcp`: the engine's metrics in the Prometheus text
//! format, behind the same guards as the MCP endpoint (which
//! [`guarded`] also puts in front of the file-transfer routes).
//!
//! Counts of calls by tool say what a worker is being used for, so the
//! endpoint is no more open than `/mcp`: the bearer token when one is set,
//! the `Host` allow-list (DNS rebinding), and the `Origin` allow-list
//! (a browser page must not read it). rmcp applies the last two to `/mcp`
//! itself; this route is outside rmcp, so it checks them here, the same
//! way. Nothing is exported unless the process installed the Prometheus
//! recorder ([`crate::metrics::install_prometheus`]); then the route says
//! so with 404 rather than serving an empty page that looks healthy.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Which `Host` and `Origin` values are accepted.
#[derive(Clone, Debug)]
pub(super) struct Guard {
    /// `None`: any host (`--allowed-host '*'`).
    pub hosts: Option<Vec<String>>,
    /// Patterns as given to rmcp: exact origins, or `scheme://host:*`.
    pub origins: Vec<String>,
}

/// The `/metrics` route with its guards; `token` as for `/mcp`.
pub(super) fn router(guard: Guard, token: Option<Arc<str>>) -> axum::Router {
    guarded(
        axum::Router::new().route("/metrics", axum::routing::get(render)),
        guard,
        token,
    )
}

/// `routes` behind the guards `/mcp` has: `Host` and `Origin` first, then
/// the token. For every route outside rmcp (this one, `/v1/files`).
pub(super) fn guarded(routes: axum::Router, guard: Guard, token: Option<Arc<str>>) -> axum::Router {
    routes
        .layer(axum::middleware::from_fn_with_state(
            token,
            super::http::authenticate,
        ))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(guard),
            check_host_and_origin,
        ))
}

async fn render() -> Response {
    match crate::metrics::prometheus() {
        Some(handle) => (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            handle.render(),
        )
            .into_response(),
        None => (
            StatusCode::NOT_FOUND,
            "metrics are not enabled in this process\n",
        )
            .into_response(),
    }
}

async fn check_host_and_origin(
    State(guard): State<Arc<Guard>>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let host_ok = match (&guard.hosts, host) {
        (None, _) => true,
        (Some(allowed), Some(host)) => {
            let name = host_name(host);
            allowed
                .iter()
                .any(|a| host_name(a).eq_ignore_ascii_case(name))
        }
        // HTTP/1.1 requires `Host`; a request without one is not trusted.
        (Some(_), None) => false,
    };
    if !host_ok {
        return (StatusCode::FORBIDDEN, "this Host is not allowed\n").into_response();
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let allowed = origin
            .to_str()
            .is_ok_and(|o| guard.origins.iter().any(|p| origin_matches(p, o)));
        if !allowed {
            return (StatusCode::FORBIDDEN, "this Origin is not allowed\n").into_response();
        }
    }
    next.run(request).await
}

/// `host[:port]` or `[v6]:port` without the port.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match host.rsplit_once(':') {
        // More than one colon without brackets: a bare IPv6 address.
        Some((name, _)) if !name.contains(':') => name,
        _ => host,
    }
}

/// Whether `origin` fits `pattern`: equal (ignoring case), or, for a
/// pattern ending in `:*`, the same scheme and host with any port.
fn origin_matches(pattern: &str, origin: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) if prefix.ends_with(':') => {
            origin.len() > prefix.len()
                && origin.is_char_boundary(prefix.len())
                && origin[..prefix.len()].eq_ignore_ascii_case(prefix)
                && origin[prefix.len()..].bytes().all(|b| b.is_ascii_digit())
        }
        _ => pattern.eq_ignore_ascii_case(origin),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_compared_without_their_port() {
        assert_eq!(host_name("127.0.0.1:8765"), "127.0.0.1");
        assert_eq!(host_name("[::1]:80"), "::1");
        assert_eq!(host_name("localhost"), "localhost");
        assert_eq!(host_name("::1"), "::1");
    }

    #[test]
    fn origins_match_exactly_or_by_any_port() {
        assert!(origin_matches(
            "http://localhost:*",
            "http://localhost:3000"
        ));
        assert!(!origin_matches(
            "http://localhost:*",
            "http://localhost.evil:3000"
        ));
        assert!(!origin_matches("http://localhost:*", "http://localhost:"));
        assert!(origin_matches("https://app.example", "https://APP.example"));
        assert!(!origin_matches(
            "https://app.example",
            "https://app.example.evil"
        ));
    }
}
