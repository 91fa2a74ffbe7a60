//! The `server/discover` probe, kept short and never fatal.
//!
//! Baton first asks a server `server/discover` (the 2026-07-28 handshake)
//! and falls back to the classic `initialize`. rmcp's automatic mode falls
//! back only on a JSON-RPC error, and only after 10 s of silence; any other
//! answer ends the connection. Real servers answer in every way: an empty
//! `{}` for methods they do not know (hand-written servers, the conformance
//! suite's), a "missing capability" error, a result without versions, or
//! nothing at all. [`ProbeGuard`] sits between rmcp and the transport and
//! turns each of those into the one answer rmcp falls back on (a plain
//! JSON-RPC error for the probe), so the fallback runs at once on the same
//! connection, and after [`DISCOVER_PROBE`] of silence at the latest.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorCode, ErrorData, JsonRpcMessage, ProtocolVersion,
    RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use tokio::time::Instant;

/// How long the `server/discover` probe waits for an answer before Baton
/// falls back to `initialize`. Short, because a server that speaks the new
/// handshake answers it as fast as any request; a server still starting up
/// then gets `initialize` queued behind the probe (stdio), which it answers
/// once it is up.
pub const DISCOVER_PROBE: Duration = Duration::from_secs(2);

/// What to do when the probe gets no answer in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OnSilence {
    /// Answer the probe with an error ourselves, so `initialize` follows on
    /// the same connection (stdio: the server reads its input in order).
    FallBack,
    /// End this connection attempt (streamable HTTP: rmcp's client sends
    /// nothing else until the first request's HTTP exchange ends, so a new
    /// connection has to carry `initialize`).
    GiveUp,
}

/// How the probe went, for the connect logic and its messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ProbeNote {
    /// A discovery result with a version Baton speaks.
    Discovered,
    /// Answered, but not with a usable discovery result.
    Refused(String),
    /// No answer within [`DISCOVER_PROBE`].
    Silent,
}

/// Shared record of the probe's outcome (the guard is moved into rmcp).
pub(crate) type ProbeRecord = Arc<Mutex<Option<ProbeNote>>>;

/// A transport wrapper that judges the answers to `server/discover`.
pub(crate) struct ProbeGuard<T> {
    inner: T,
    preferred: Vec<ProtocolVersion>,
    limit: Duration,
    on_silence: OnSilence,
    /// The probe awaiting its answer, and until when.
    pending: Option<(RequestId, Instant)>,
    /// Probes answered in our stead: their late answers are dropped.
    abandoned: Vec<RequestId>,
    record: ProbeRecord,
}

impl<T> ProbeGuard<T> {
    pub(crate) fn new(
        inner: T,
        preferred: Vec<ProtocolVersion>,
        limit: Duration,
        on_silence: OnSilence,
        record: ProbeRecord,
    ) -> Self {
        ProbeGuard {
            inner,
            preferred,
            limit,
            on_silence,
            pending: None,
            abandoned: Vec::new(),
            record,
        }
    }

    fn note(&self, note: ProbeNote) {
        *self.record.lock() = Some(note);
    }

    /// Passes `message` on, rewrites it into the fallback signal, or drops
    /// it (`None`).
    fn judge(&mut self, message: ServerJsonRpcMessage) -> Option<ServerJsonRpcMessage> {
        let (id, verdict) = match &message {
            JsonRpcMessage::Response(response) => {
                if self.abandoned.contains(&response.id) {
                    return None;
                }
                if !self.is_pending(Some(&response.id)) {
                    return Some(message);
                }
                let verdict = match &response.result {
                    ServerResult::DiscoverResult(found)
                        if found
                            .supported_versions
                            .iter()
                            .any(|v| self.preferred.contains(v)) =>
                    {
                        Ok(())
                    }
                    ServerResult::DiscoverResult(found) => Err(format!(
                        "server/discover offers no version Baton speaks ({:?})",
                        found
                            .supported_versions
                            .iter()
                            .map(|v| v.to_string())
                            .collect::<Vec<_>>()
                    )),
                    other => Err(format!(
                        "server/discover answered with something else than a discovery \
                         result ({})",
                        kind(other)
                    )),
                };
                (response.id.clone(), verdict)
            }
            JsonRpcMessage::Error(error) => {
                if error
                    .id
                    .as_ref()
                    .is_some_and(|id| self.abandoned.contains(id))
                {
                    return None;
                }
                if !self.is_pending(error.id.as_ref()) {
                    return Some(message);
                }
                let id = match &self.pending {
                    Some((id, _)) => id.clone(),
                    None => return Some(message),
                };
                // Version negotiation rmcp handles itself (it asks again
                // with a version both sides speak); anything else means
                // "not the new handshake".
                let renegotiates = error.error.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
                    && error
                        .error
                        .data
                        .as_ref()
                        .and_then(|d| d.get("supported"))
                        .and_then(|s| {
                            serde_json::from_value::<Vec<ProtocolVersion>>(s.clone()).ok()
                        })
                        .is_some_and(|s| s.iter().any(|v| self.preferred.contains(v)));
                if renegotiates {
                    self.pending = None;
                    return Some(message);
                }
                (
                    id,
                    Err(format!(
                        "server/discover failed ({}: {})",
                        error.error.code.0, error.error.message
                    )),
                )
            }
            _ => return Some(message),
        };
        self.pending = None;
        match verdict {
            Ok(()) => {
                self.note(ProbeNote::Discovered);
                Some(message)
            }
            Err(why) => {
                self.note(ProbeNote::Refused(why.clone()));
                Some(fallback_signal(id, why))
            }
        }
    }

    /// Whether `id` answers the pending probe (`None`: an error without an
    /// id, which can only answer the one request in flight).
    fn is_pending(&self, id: Option<&RequestId>) -> bool {
        match (&self.pending, id) {
            (Some((pending, _)), Some(id)) => pending == id,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

/// The answer rmcp falls back to `initialize` on: a correlated JSON-RPC
/// error that is not one of the new handshake's own rejections.
fn fallback_signal(id: RequestId, why: String) -> ServerJsonRpcMessage {
    ServerJsonRpcMessage::error(
        ErrorData::new(ErrorCode::METHOD_NOT_FOUND, why, None),
        Some(id),
    )
}

/// A short name for what came back instead of a discovery result.
fn kind(result: &ServerResult) -> String {
    match serde_json::to_value(result) {
        Ok(serde_json::Value::Object(map)) if map.is_empty() => "an empty result".into(),
        Ok(value) => {
            let text = value.to_string();
            let cut: String = text.chars().take(80).collect();
            if cut.len() < text.len() {
                format!("{cut}…")
            } else {
                cut
            }
        }
        Err(_) => "an unreadable result".into(),
    }
}

impl<T> Transport<RoleClient> for ProbeGuard<T>
where
    T: Transport<RoleClient>,
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let mut deadline = None;
        if let JsonRpcMessage::Request(request) = &item {
            if matches!(request.request, ClientRequest::DiscoverRequest(_)) {
                let until = Instant::now() + self.limit;
                self.pending = Some((request.id.clone(), until));
                deadline = Some(until);
            }
        }
        let sending = self.inner.send(item);
        async move {
            match deadline {
                // rmcp's HTTP client finishes a first request's `send` only
                // when the HTTP answer arrives; a server holding it open
                // must not hold the probe longer than its limit. `receive`
                // then finds the probe unanswered.
                Some(until) => tokio::time::timeout_at(until, sending)
                    .await
                    .unwrap_or(Ok(())),
                None => sending.await,
            }
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            let deadline = self.pending.as_ref().map(|(_, until)| *until);
            let message = match deadline {
                None => self.inner.receive().await?,
                Some(until) => match tokio::time::timeout_at(until, self.inner.receive()).await {
                    Ok(message) => message?,
                    Err(_) => {
                        let (id, _) = self.pending.take()?;
                        self.note(ProbeNote::Silent);
                        match self.on_silence {
                            OnSilence::GiveUp => return None,
                            OnSilence::FallBack => {
                                self.abandoned.push(id.clone());
                                let why = format!(
                                    "server/discover: no answer within {} s",
                                    self.limit.as_secs_f64()
                                );
                                return Some(fallback_signal(id, why));
                            }
                        }
                    }
                },
            };
            if let Some(message) = self.judge(message) {
                return Some(message);
            }
        }
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
