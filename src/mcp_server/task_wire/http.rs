//! The adapter on streamable HTTP: a middleware on `/mcp` (inside the
//! token check) that rewrites request bodies, and the answers to
//! `initialize` and `tools/list` whether they come as JSON or as an event
//! stream (see the parent).

use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;

use super::{annotate, lift, Pending};

/// The middleware; `limit` is the server's cap on one request body.
pub(crate) async fn adapt(State(limit): State<usize>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is larger than {limit} bytes\n"),
        )
            .into_response();
    };
    let pending = Pending::default();
    let body = match lift(&bytes, &pending) {
        Some(new) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            Body::from(new)
        }
        None => Body::from(bytes),
    };
    let response = next.run(Request::from_parts(parts, body)).await;
    if pending.is_empty() {
        return response;
    }
    let stream = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let (mut parts, body) = response.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    if stream {
        return Response::from_parts(parts, events(body, pending));
    }
    match axum::body::to_bytes(body, limit).await {
        Ok(bytes) => {
            let body = annotate(&bytes, &pending).map_or(Body::from(bytes), Body::from);
            Response::from_parts(parts, body)
        }
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the answer could not be read: {e}\n"),
        )
            .into_response(),
    }
}

/// An event stream with each `data:` line through [`annotate`].
fn events(body: Body, pending: Pending) -> Body {
    let rest = Arc::new(Mutex::new(Vec::new()));
    let tail = Arc::clone(&rest);
    let lines = body.into_data_stream().map(move |chunk| {
        let chunk = chunk?;
        let mut rest = rest.lock().unwrap_or_else(|e| e.into_inner());
        rest.extend_from_slice(&chunk);
        let mut out = Vec::with_capacity(rest.len());
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = rest.drain(..=end).collect();
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            let data = text
                .strip_prefix(b"data:")
                .map(|d| d.strip_prefix(b" ").unwrap_or(d));
            match data.and_then(|d| annotate(d, &pending)) {
                Some(new) => {
                    out.extend_from_slice(b"data: ");
                    out.extend_from_slice(&new);
                    out.push(b'\n');
                }
                None => out.extend_from_slice(&line),
            }
        }
        Ok::<_, axum::Error>(Bytes::from(out))
    });
    // What followed the last newline (a stream that ended mid-line).
    let last = futures::stream::once(async move {
        let rest = std::mem::take(&mut *tail.lock().unwrap_or_else(|e| e.into_inner()));
        Ok::<_, axum::Error>(Bytes::from(rest))
    });
    Body::from_stream(lines.chain(last))
}
