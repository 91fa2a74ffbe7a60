//! One `tools/call`: progress, the idle and total limits, and cancellation
//! that sends `notifications/cancelled` for this request only, leaving the
//! connection (and the other calls on it) running.

use std::sync::Arc;
use std::time::Duration;

use baton_engine::{ToolContext, ToolError, ToolOutput};
use parking_lot::Mutex;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientRequest, JsonObject, RequestId, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RoleClient};
use rmcp::Peer;
use serde_json::Value;
use tokio::sync::Notify;

use crate::handler::CallWatch;
use crate::server::{with_tail, Server};

/// Per-call time limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallLimits {
    /// No answer and no progress for this long ends the call.
    pub idle: Duration,
    /// The call never runs longer than this, progress or not.
    pub total: Duration,
}

impl Default for CallLimits {
    fn default() -> Self {
        CallLimits {
            idle: Duration::from_secs(300),
            total: Duration::from_secs(3600),
        }
    }
}

impl CallLimits {
    /// A hard total limit (the server's `timeout` or `MCP_TOOL_TIMEOUT`);
    /// the idle limit never exceeds it.
    pub fn with_total(mut self, total: Duration) -> Self {
        self.total = total;
        self.idle = self.idle.min(total);
        self
    }
}

/// Sends `notifications/cancelled` for a request if the call is dropped
/// before its answer arrived (the engine drops a call that ignores its
/// cancellation for too long).
struct CancelOnDrop {
    peer: Option<Peer<RoleClient>>,
    id: RequestId,
    reason: &'static str,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(peer) = self.peer.take() {
            let id = self.id.clone();
            let reason = self.reason;
            if let Ok(rt) = tokio::runtime::Handle::try_current() {
                rt.spawn(async move {
                    let _ = send_cancel(&peer, id, reason.to_string()).await;
                });
            }
        }
    }
}

async fn send_cancel(
    peer: &Peer<RoleClient>,
    id: RequestId,
    reason: String,
) -> Result<(), rmcp::ServiceError> {
    let notification =
        CancelledNotification::new(CancelledNotificationParam::new(Some(id), Some(reason)));
    peer.send_notification(notification.into()).await
}

/// Runs `tool` (the server's own name) with `arguments`.
pub(crate) async fn call_tool(
    server: &Arc<Server>,
    tool: &str,
    display: &str,
    arguments: Value,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let name = &server.spec.name;
    let live = server.live().await.map_err(|why| {
        ToolError::new(format!("MCP server \"{name}\" cannot run {display}: {why}"))
    })?;
    let limits = match server.spec.timeout {
        Some(total) => server.options().limits.with_total(total),
        None => server.options().limits,
    };
    let arguments: Option<JsonObject> = match arguments {
        Value::Object(map) => Some(map),
        Value::Null => None,
        _ => return Err(ToolError::new("MCP tool input must be a JSON object")),
    };
    let mut params = CallToolRequestParams::new(tool.to_string());
    params.arguments = arguments;
    let deadline = tokio::time::Instant::now() + limits.total;
    // A server of protocol 2025-11-25 that runs this tool as a task gets the
    // call as one, kept a while longer than the call may last, so that it
    // is still there to be cancelled or read at the end (crate::tasks).
    let request = if live.tasks.call_as_task(tool) {
        crate::tasks::augmented_call(&params, limits.total + crate::tasks::TTL_MARGIN)
    } else {
        ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()))
    };
    let peer = live.peer().clone();
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .map_err(|e| {
            ToolError::new(stopped_text(
                server,
                display,
                &crate::sentence::describe(&e),
            ))
        })?;
    let watch = CallWatch {
        progress: ctx.progress.clone(),
        activity: Arc::new(Notify::new()),
        last: Arc::new(Mutex::new(None)),
    };
    live.handler().watch(&handle.progress_token, watch.clone());
    let token = handle.progress_token.clone();
    let mut guard = CancelOnDrop {
        peer: Some(peer.clone()),
        id: handle.id.clone(),
        reason: "the call was abandoned",
    };
    let mut rx = handle.rx;
    let total = tokio::time::sleep(limits.total);
    tokio::pin!(total);
    let idle = tokio::time::sleep(limits.idle);
    tokio::pin!(idle);
    let outcome = loop {
        tokio::select! {
            answer = &mut rx => break Outcome::Answer(answer.ok().map(Box::new)),
            _ = ctx.cancel.cancelled() => break Outcome::Cancelled,
            _ = &mut total => break Outcome::Limit("total", limits.total),
            _ = &mut idle => break Outcome::Limit("idle", limits.idle),
            _ = watch.activity.notified() => {
                idle.as_mut().reset(tokio::time::Instant::now() + limits.idle);
            }
        }
    };
    let last_progress = watch.last.lock().clone();
    let result = match outcome {
        Outcome::Answer(Some(answer)) => {
            guard.peer = None;
            // A task goes on after this answer; progress notifications for
            // the call's token stay valid while it runs.
            if let Ok(answer) = answer.as_ref() {
                if let Some((generation, task)) = crate::tasks::created(answer) {
                    let following = crate::tasks::Following {
                        server,
                        display,
                        ctx,
                        watch: &watch,
                        limits,
                        deadline,
                    };
                    let outcome =
                        crate::tasks::follow(following, Arc::clone(&live), generation, task).await;
                    live.handler().unwatch(&token);
                    return outcome;
                }
            }
            answered(
                *answer,
                server,
                display,
                live.as_ref(),
                params,
                ctx,
                limits,
                &mut guard,
                &mut total,
            )
            .await
        }
        Outcome::Answer(None) => {
            guard.peer = None;
            Err(ToolError::new(stopped_text(
                server,
                display,
                "the connection closed",
            )))
        }
        Outcome::Cancelled => {
            guard.peer = None;
            let why = match ctx.cancel.reason() {
                Some(reason) => format!("{reason:?}"),
                None => "cancelled".into(),
            };
            let sent = send_cancel(
                &peer,
                guard.id.clone(),
                format!("cancelled by Baton: {why}"),
            )
            .await;
            let note = if sent.is_ok() {
                "the server was told to cancel this request; the connection stays open"
            } else {
                "the cancellation could not be delivered (the connection had closed)"
            };
            Ok(ToolOutput::error(format!(
                "{display} was cancelled before it finished ({note}).{}",
                progress_note(&last_progress)
            )))
        }
        Outcome::Limit(which, limit) => {
            guard.peer = None;
            let _ = send_cancel(&peer, guard.id.clone(), format!("{which} time limit")).await;
            let what = match which {
                "idle" => format!(
                    "the server neither answered nor reported progress for {} s (the idle limit; each progress notification restarts it)",
                    limit.as_secs_f64()
                ),
                _ => format!(
                    "it ran for {} s, the total limit for a call to MCP server \"{name}\" (its \"timeout\" setting or MCP_TOOL_TIMEOUT)",
                    limit.as_secs_f64()
                ),
            };
            Ok(ToolOutput::error(format!(
                "{display} was stopped: {what}. The server was told to cancel the request.{}",
                progress_note(&last_progress)
            )))
        }
    };
    live.handler().unwatch(&token);
    result
}

/// The server answered: a result, an `input_required` round, or an error.
#[allow(clippy::too_many_arguments)]
async fn answered(
    answer: Result<ServerResult, rmcp::ServiceError>,
    server: &Server,
    display: &str,
    live: &crate::server::Live,
    params: CallToolRequestParams,
    ctx: &ToolContext,
    limits: CallLimits,
    guard: &mut CancelOnDrop,
    total: &mut std::pin::Pin<&mut tokio::time::Sleep>,
) -> Result<ToolOutput, ToolError> {
    guard.peer = None;
    match answer {
        Ok(ServerResult::CallToolResult(result)) => {
            let value = serde_json::to_value(result).unwrap_or(Value::Null);
            Ok(crate::result::map_result(&value))
        }
        Ok(ServerResult::InputRequiredResult(_)) => {
            // 2026-07-28: the server needs input (elicitation) before it can
            // finish. rmcp drives those rounds through the handler (which asks
            // the host); the call is stateless, so it starts over with them.
            let rounds = live.service.call_tool(params);
            tokio::pin!(rounds);
            tokio::select! {
                answer = &mut rounds => match answer {
                    Ok(result) => {
                        let value = serde_json::to_value(result).unwrap_or(Value::Null);
                        Ok(crate::result::map_result(&value))
                    }
                    Err(e) => Err(ToolError::new(error_text(server, display, &e))),
                },
                _ = ctx.cancel.cancelled() => Ok(ToolOutput::error(format!(
                    "{display} was cancelled while the server waited for input; the connection stays open."
                ))),
                _ = total.as_mut() => Ok(ToolOutput::error(format!(
                    "{display} was stopped: it ran for {} s, the total limit, while the server waited for input.",
                    limits.total.as_secs_f64()
                ))),
            }
        }
        Ok(other) => {
            let value = serde_json::to_value(other).unwrap_or(Value::Null);
            Ok(crate::result::map_result(&value))
        }
        Err(e) => Err(ToolError::new(error_text(server, display, &e))),
    }
}

enum Outcome {
    Answer(Option<Box<Result<ServerResult, rmcp::ServiceError>>>),
    Cancelled,
    Limit(&'static str, Duration),
}

pub(crate) fn progress_note(last: &Option<String>) -> String {
    match last {
        Some(m) => format!(" Its last progress report: \"{m}\"."),
        None => " It had reported no progress.".into(),
    }
}

fn error_text(server: &Server, display: &str, e: &rmcp::ServiceError) -> String {
    match e {
        rmcp::ServiceError::McpError(data)
            if data.message.starts_with(crate::frame_guard::REFUSED) =>
        {
            format!(
                "MCP server \"{}\" could not answer {display}: {}",
                server.spec.name, data.message
            )
        }
        rmcp::ServiceError::TransportSend(_) if crate::sentence::is_size_limit(e) => format!(
            "MCP server \"{}\" could not answer {display}: {}. The next call goes on as usual.",
            server.spec.name,
            crate::sentence::describe(e)
        ),
        rmcp::ServiceError::McpError(_) => format!(
            "MCP server \"{}\" returned an error for {display}: {}",
            server.spec.name,
            crate::sentence::describe(e)
        ),
        rmcp::ServiceError::TransportClosed | rmcp::ServiceError::TransportSend(_) => {
            stopped_text(server, display, &crate::sentence::describe(e))
        }
        other => format!(
            "MCP server \"{}\" failed on {display}: {}",
            server.spec.name,
            crate::sentence::describe(other)
        ),
    }
}

fn stopped_text(server: &Server, display: &str, why: &str) -> String {
    with_tail(
        format!(
            "MCP server \"{}\" stopped while running {display} ({why}); it is restarted automatically, so the call may be retried.",
            server.spec.name
        ),
        &server.stderr_tail(5),
    )
}
