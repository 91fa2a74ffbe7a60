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
        /// The calls and text that were whole when the stream broke.
        completed: Completed,
        /// Why the stream broke.
        reason: String,
        /// No event came within the idle limit, or the stream outlasted
        /// its total limit.
        stalled: bool,
    },
    /// The request failed in a way worth retrying (429, 529, 5xx, no
    /// connection); `after` is the server's `retry-after`, if any.
    Retry {
        /// Why the attempt failed.
        reason: String,
        /// The server's `retry-after`, if it sent one.
        after: Option<Duration>,
    },
    /// Retrying would not help (bad key, bad request, …).
    Fatal(String),
}

/// The HTTP client could not be built (reqwest's error is the source).
#[derive(Debug, thiserror::Error)]
#[error("cannot build the HTTP client: {0}")]
pub struct ClientError(#[source] reqwest::Error);

/// The HTTP side of the agent.
#[derive(Clone, Debug)]
pub struct Client {
    http: reqwest::Client,
    options: AgentOptions,
    /// The `anthropic-beta` header, while the provider accepts it.
    betas: Option<String>,
}

impl Client {
    /// A client for `options`' provider; an error if the HTTP client cannot
    /// be built.
    pub fn new(options: AgentOptions) -> Result<Self, ClientError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(20))
            .build()
            .map_err(ClientError)?;
        let betas = (options.tool_changes && options.format == WireFormat::Anthropic)
            .then(baton_engine::wire::tool_changes::beta_header);
        Ok(Client {
            http,
            options,
            betas,
        })
    }

    /// The provider refused the betas: requests go without them from now.
    pub fn drop_betas(&mut self) {
        self.betas = None;
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
            if let Some(betas) = &self.betas {
                request = request.header("anthropic-beta", betas);
            }
        }
        let limits = Limits::start(&self.options);
        let response = match tokio::time::timeout_at(limits.next_deadline(), request.send()).await {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => {
                return Attempt::Retry {
                    reason: format!("request failed: {e}"),
                    after: None,
                }
            }
            Err(_) => {
                return Attempt::Cut {
                    completed: Completed::default(),
                    reason: limits.stall_reason("the response's headers"),
                    stalled: true,
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
            let after = retry_after_ms(response.headers()).or(after);
            let should_retry = response
                .headers()
                .get("x-should-retry")
                .and_then(|v| v.to_str().ok())
                .map(|v| v == "true");
            let text = response.text().await.unwrap_or_default();
            let reason = format!(
                "HTTP {status}: {}",
                text.chars().take(500).collect::<String>()
            );
            let code = status.as_u16();
            // The providers' SDKs obey `x-should-retry` over the status.
            let retry = should_retry
                .unwrap_or(code == 408 || code == 409 || code == 429 || code == 529 || code >= 500);
            return if retry {
                Attempt::Retry { reason, after }
            } else {
                Attempt::Fatal(reason)
            };
        }
        let mut parser = StreamParser::new(self.options.format);
        let mut events = sse_stream::SseByteStream::new(response.bytes_stream());
        let mut cut = None;
        let mut stalled = false;
        let mut limits = limits;
        loop {
            let next = tokio::time::timeout_at(limits.next_deadline(), events.next()).await;
            let Ok(next) = next else {
                cut = Some(limits.stall_reason("the next event"));
                stalled = true;
                break;
            };
            let Some(event) = next else { break };
            limits.saw_event();
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
                stalled,
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

/// `retry-after-ms` (OpenAI and Anthropic send it beside `retry-after`).
fn retry_after_ms(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .map(|ms| Duration::from_secs_f64((ms / 1000.0).min(60.0)))
}

/// The idle limit between events and the total limit of one stream.
struct Limits {
    idle: Duration,
    total: Duration,
    started: tokio::time::Instant,
    last: tokio::time::Instant,
}

impl Limits {
    fn start(options: &AgentOptions) -> Self {
        let now = tokio::time::Instant::now();
        Limits {
            idle: options.stream_idle,
            total: options.stream_total,
            started: now,
            last: now,
        }
    }

    fn saw_event(&mut self) {
        self.last = tokio::time::Instant::now();
    }

    fn next_deadline(&self) -> tokio::time::Instant {
        (self.last + self.idle).min(self.started + self.total)
    }

    fn stall_reason(&self, waiting_for: &str) -> String {
        if self.last + self.idle <= self.started + self.total {
            format!(
                "the model stream stalled: no data for {} s while waiting for {waiting_for} (idle limit; --stream-idle-timeout)",
                self.idle.as_secs_f64()
            )
        } else {
            format!(
                "the model stream took longer than its total limit of {} s (--stream-timeout)",
                self.total.as_secs_f64()
            )
        }
    }
}
