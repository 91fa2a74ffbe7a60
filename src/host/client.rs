//! One streamed request: HTTP on reqwest, SSE framing by sse-stream, the
//! events into the format's parser, each complete call into the sink.
//!
//! The outcome says what the caller may do next: a stream that broke off
//! after some calls were handed over must not be retried (those calls run;
//! the conversation goes on from what was complete), one that broke off
//! before may be.

use std::time::Duration;

use baton_engine::wire::{Completed, StreamError, StreamParser, StreamSink, WireFormat};
use futures::StreamExt;
use serde_json::Value;

use super::AgentOptions;

/// How one attempt ended.
#[derive(Debug)]
pub enum Attempt {
    /// The format's final event arrived.
    Completed(Completed),
    /// The stream broke off (connection, provider error event, no final
    /// event); `completed` holds what was whole.
    Cut {
        completed: Completed,
        reason: String,
    },
    /// The request failed in a way worth retrying (429, 529, 5xx, no
    /// connection); `after` is the server's `retry-after`, if any.
    Retry {
        reason: String,
        after: Option<Duration>,
    },
    /// Retrying would not help (bad key, bad request, …).
    Fatal(String),
}

/// The HTTP side of the agent.
#[derive(Clone, Debug)]
pub struct Client {
    http: reqwest::Client,
    options: AgentOptions,
}

impl Client {
    pub fn new(options: AgentOptions) -> Result<Self, String> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Client { http, options })
    }

    fn endpoint(&self) -> String {
        let base = self.options.base_url.trim_end_matches('/');
        match self.options.format {
            WireFormat::Anthropic => format!("{base}/v1/messages"),
            WireFormat::OpenAiChat => format!("{base}/chat/completions"),
            _ => format!("{base}/responses"),
        }
    }

    /// Sends `body` and streams the answer into `sink`.
    pub async fn stream<S: StreamSink>(&self, body: &Value, sink: &mut S) -> Attempt
    where
        S::Error: std::fmt::Display,
    {
        let mut request = self
            .http
            .post(self.endpoint())
            .header("content-type", "application/json")
            .header("accept", "text/event-stream")
            .body(body.to_string());
        if let Some(key) = &self.options.api_key {
            request = match self.options.format {
                WireFormat::Anthropic => request.header("x-api-key", key),
                _ => request.bearer_auth(key),
            };
        }
        if self.options.format == WireFormat::Anthropic {
            request = request.header("anthropic-version", "2023-06-01");
        }
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) => {
                return Attempt::Retry {
                    reason: format!("request failed: {e}"),
                    after: None,
                }
            }
        };
        let status = response.status();
        if !status.is_success() {
            let after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s >= 0.0)
                .map(|s| Duration::from_secs_f64(s.min(60.0)));
            let text = response.text().await.unwrap_or_default();
            let reason = format!(
                "HTTP {status}: {}",
                text.chars().take(500).collect::<String>()
            );
            let code = status.as_u16();
            return if code == 408 || code == 409 || code == 429 || code == 529 || code >= 500 {
                Attempt::Retry { reason, after }
            } else {
                Attempt::Fatal(reason)
            };
        }
        let mut parser = StreamParser::new(self.options.format);
        let mut events = sse_stream::SseByteStream::new(response.bytes_stream());
        let mut cut = None;
        while let Some(event) = events.next().await {
            let event = match event {
                Ok(e) => e,
                Err(e) => {
                    cut = Some(format!("the stream broke: {e}"));
                    break;
                }
            };
            let Some(data) = event.data else { continue };
            match parser.feed(&data, &mut *sink) {
                Ok(()) => {}
                Err(StreamError::Sink(e)) => return Attempt::Fatal(format!("{e}")),
                Err(e) => {
                    cut = Some(e.to_string());
                    break;
                }
            }
            if parser.is_complete() {
                break;
            }
        }
        let complete = parser.is_complete();
        let completed = match parser.finish(&mut *sink) {
            Ok(c) => c,
            Err(e) => return Attempt::Fatal(e.to_string()),
        };
        match (complete || completed.complete, cut) {
            (true, None) => Attempt::Completed(completed),
            (_, reason) => Attempt::Cut {
                completed,
                reason: reason.unwrap_or_else(|| "the stream ended before its final event".into()),
            },
        }
    }
}

/// The wait before retry `attempt` (1-based): the server's word if it gave
/// one, else `base` doubled each time, with up to a quarter added so that
/// many clients do not come back at once.
pub fn backoff(base: Duration, attempt: u32, after: Option<Duration>) -> Duration {
    if let Some(after) = after {
        return after;
    }
    let exp = base.saturating_mul(1 << attempt.saturating_sub(1).min(10));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let jitter = exp / 4 * (nanos % 1000) / 1000;
    (exp + jitter).min(Duration::from_secs(60))
}
