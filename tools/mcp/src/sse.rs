//! The legacy HTTP+SSE transport (protocol 2024-11-05), which rmcp does not
//! implement as a client but many users' configurations still name
//! (`"type": "sse"`).
//!
//! The client opens one long GET whose `text/event-stream` first carries an
//! `endpoint` event (the URL to POST to), then one `message` event per
//! JSON-RPC message from the server. Every client message is a separate
//! POST to that endpoint; the server answers `202 Accepted` and sends the
//! reply on the stream. [`SseTransport`] implements rmcp's `Transport`, so
//! the rest of the client (calls, cancellation, progress, elicitation,
//! restarts) is the same as for the other transports.
//!
//! Events are parsed with `sse-stream`, the crate rmcp itself uses for its
//! streamable HTTP client.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use rmcp::service::{RoleClient, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use sse_stream::SseStream;
use tokio::sync::mpsc;

use crate::process::MAX_FRAME;

/// An error of the SSE transport, with a message that says what failed.
#[derive(Debug)]
pub(crate) struct SseError(pub String);

impl std::fmt::Display for SseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SseError {}

/// Builds the header map of a remote server from its (expanded) `headers`.
pub(crate) fn header_map(headers: &BTreeMap<String, String>) -> Result<http::HeaderMap, String> {
    let mut map = http::HeaderMap::new();
    for (k, v) in headers {
        let name =
            http::HeaderName::try_from(k.as_str()).map_err(|e| format!("header {k:?}: {e}"))?;
        let value =
            http::HeaderValue::try_from(v.as_str()).map_err(|e| format!("header {k:?}: {e}"))?;
        map.insert(name, value);
    }
    Ok(map)
}

/// An error with its causes ("error sending request" alone says little).
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A connected legacy SSE session.
pub(crate) struct SseTransport {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    headers: http::HeaderMap,
    post_timeout: Duration,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        // Ending the reader drops the GET, which closes the session on the
        // server.
        self.reader.abort();
    }
}

impl SseTransport {
    /// Opens the event stream and waits for the `endpoint` event. The
    /// caller bounds the whole connect with `MCP_TIMEOUT`; `post_timeout`
    /// bounds each later POST (the reply itself comes on the stream, so a
    /// POST only has to be accepted).
    pub(crate) async fn connect(
        url: &str,
        headers: http::HeaderMap,
        post_timeout: Duration,
    ) -> Result<SseTransport, String> {
        let base = reqwest::Url::parse(url).map_err(|e| format!("{url}: not a URL: {e}"))?;
        let client = reqwest::Client::new();
        let response = client
            .get(base.clone())
            .headers(headers.clone())
            .header(http::header::ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| format!("{url}: could not connect: {}", chain(&e)))?;
        let status = response.status();
        if !status.is_success() {
            let hint = if matches!(status.as_u16(), 400 | 404 | 405 | 406) {
                "; if the server speaks streamable HTTP, use \"type\": \"http\""
            } else {
                ""
            };
            return Err(format!(
                "{url}: the event stream answered HTTP {status}{hint}"
            ));
        }
        let kind = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if !kind.starts_with("text/event-stream") {
            return Err(format!(
                "{url}: expected an event stream (text/event-stream), got {kind:?}; if the server speaks streamable HTTP, use \"type\": \"http\""
            ));
        }
        let mut events = SseStream::from_bytes_stream(Bounded::new(response.bytes_stream()));
        let endpoint = loop {
            match events.next().await {
                Some(Ok(event)) if event.event.as_deref() == Some("endpoint") => {
                    let data = event.data.unwrap_or_default();
                    break resolve_endpoint(&base, data.trim())
                        .map_err(|e| format!("{url}: {e}"))?;
                }
                // Comments and keep-alives before the endpoint.
                Some(Ok(_)) => continue,
                Some(Err(e)) => return Err(format!("{url}: the event stream broke: {e}")),
                None => {
                    return Err(format!(
                        "{url}: the event stream ended before it named the message endpoint"
                    ))
                }
            }
        };
        let (tx, incoming) = mpsc::channel(64);
        let reader = tokio::spawn(read_messages(events, tx));
        Ok(SseTransport {
            client,
            endpoint,
            headers,
            post_timeout,
            incoming,
            reader,
        })
    }
}

/// The `endpoint` event names where to POST, usually a path with a session
/// id. It must stay on the server's own origin: a stream that redirected
/// Baton's messages (and the user's `headers`, often credentials) to
/// another host is refused.
fn resolve_endpoint(base: &reqwest::Url, data: &str) -> Result<reqwest::Url, String> {
    if data.is_empty() {
        return Err("the endpoint event is empty".into());
    }
    let endpoint = base
        .join(data)
        .map_err(|e| format!("the endpoint {data:?} is not a URL: {e}"))?;
    if endpoint.origin() != base.origin() {
        return Err(format!(
            "the endpoint {endpoint} is on another origin than the event stream; refused"
        ));
    }
    Ok(endpoint)
}

/// Forwards each `message` event as a JSON-RPC message until the stream
/// ends or breaks; dropping `tx` then tells rmcp the transport closed, and
/// the server's supervisor reconnects. Data that is not JSON-RPC is skipped,
/// as junk on a stdio server's stdout is.
async fn read_messages<S>(mut events: S, tx: mpsc::Sender<RxJsonRpcMessage<RoleClient>>)
where
    S: Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Unpin,
{
    while let Some(Ok(event)) = events.next().await {
        if !matches!(event.event.as_deref(), None | Some("message")) {
            continue;
        }
        let Some(data) = event.data else { continue };
        let Ok(message) = serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&data) else {
            continue;
        };
        if tx.send(message).await.is_err() {
            return;
        }
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn name() -> Cow<'static, str> {
        "sse".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), SseError>> + Send + 'static {
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .timeout(self.post_timeout)
            .json(&item);
        async move {
            let response = request
                .send()
                .await
                .map_err(|e| SseError(format!("POST failed: {}", chain(&e))))?;
            let status = response.status();
            if status.is_success() {
                return Ok(());
            }
            let body = response.text().await.unwrap_or_default();
            let body: String = body.chars().take(300).collect();
            Err(SseError(format!("POST answered HTTP {status}: {body}")))
        }
    }

    fn receive(
        &mut self,
    ) -> impl std::future::Future<Output = Option<RxJsonRpcMessage<RoleClient>>> {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), SseError> {
        self.reader.abort();
        self.incoming.close();
        Ok(())
    }
}

/// Caps one event at [`MAX_FRAME`] bytes, so a server that never ends an
/// event cannot make Baton buffer without limit. Counts bytes since the
/// last blank line (the end of an event), whatever the line endings.
struct Bounded<S> {
    inner: S,
    since_event: usize,
    at_line_start: bool,
    after_cr: bool,
    failed: bool,
}

impl<S> Bounded<S> {
    fn new(inner: S) -> Self {
        Bounded {
            inner,
            since_event: 0,
            at_line_start: true,
            after_cr: false,
            failed: false,
        }
    }

    /// `false` when the current event grew past the cap.
    fn admit(&mut self, chunk: &[u8]) -> bool {
        for &b in chunk {
            match b {
                b'\n' if self.after_cr => self.after_cr = false,
                b'\n' | b'\r' => {
                    if self.at_line_start {
                        self.since_event = 0;
                    }
                    self.at_line_start = true;
                    self.after_cr = b == b'\r';
                }
                _ => {
                    self.at_line_start = false;
                    self.after_cr = false;
                    self.since_event += 1;
                    if self.since_event > MAX_FRAME {
                        return false;
                    }
                }
            }
        }
        true
    }
}

impl<S> Stream for Bounded<S>
where
    S: Stream<Item = reqwest::Result<Bytes>> + Unpin,
{
    type Item = Result<Bytes, SseError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.failed {
            return Poll::Ready(None);
        }
        match self.inner.poll_next_unpin(cx) {
            Poll::Ready(Some(Ok(chunk))) => {
                if self.as_mut().get_mut().admit(&chunk) {
                    Poll::Ready(Some(Ok(chunk)))
                } else {
                    self.failed = true;
                    Poll::Ready(Some(Err(SseError(format!(
                        "an event exceeded {MAX_FRAME} bytes"
                    )))))
                }
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(SseError(e.to_string())))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_must_stay_on_the_stream_origin() {
        let base = reqwest::Url::parse("http://127.0.0.1:8000/sse").unwrap();
        let ok = resolve_endpoint(&base, "/messages/?session_id=ab").unwrap();
        assert_eq!(ok.as_str(), "http://127.0.0.1:8000/messages/?session_id=ab");
        assert!(resolve_endpoint(&base, "http://evil.example/steal").is_err());
        assert!(resolve_endpoint(&base, "//evil.example/x").is_err());
        assert!(resolve_endpoint(&base, "http://127.0.0.1:8001/m").is_err());
        assert!(resolve_endpoint(&base, "").is_err());
    }

    #[test]
    fn event_size_is_capped_whatever_the_line_endings() {
        for sep in ["\n\n", "\r\r", "\r\n\r\n"] {
            let mut b = Bounded::new(());
            let chunk = vec![b'a'; MAX_FRAME / 2];
            assert!(b.admit(&chunk));
            assert!(b.admit(sep.as_bytes()));
            assert!(b.admit(&chunk));
            assert!(b.admit(sep.as_bytes()));
            assert!(b.admit(&chunk), "separator {sep:?} ends an event");
        }
        let mut b = Bounded::new(());
        let chunk = vec![b'a'; MAX_FRAME / 2];
        assert!(b.admit(&chunk));
        assert!(b.admit(b"\n")); // one line ending: same event goes on
        assert!(b.admit(&chunk));
        assert!(!b.admit(b"aa"));
    }
}
