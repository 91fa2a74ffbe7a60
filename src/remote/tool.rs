//! A local tool whose `call` runs on a worker.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use baton_engine::content::ContentBlock;
use baton_engine::permission::{PermissionTarget, ToolPermission};
use baton_engine::{Outcome, Tool, ToolContext, ToolError, ToolLogic, ToolOutput};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use serde_json::Value;

use super::worker::{Connection, Workers};
use crate::mcp_server::{outcome_from_meta, views_from_meta};

/// How long a cancelled call waits for the worker's final answer (with the
/// output printed so far) before giving up on it.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// Why remote tools could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RemoteError {
    /// Remote tools are named but no worker URL is configured.
    #[error("remote tools are configured but no worker URL is")]
    NoWorkers,
    /// A tool to run remotely is not in the pool.
    #[error("remote tool {0:?} is not in the pool")]
    UnknownTool(String),
    /// The remote twin of a tool could not be built: the tool and the
    /// schema problem.
    #[error("cannot build the remote twin of {0}: {1}")]
    Schema(String, #[source] baton_engine::schema::InvalidSchema),
}

/// The remote twin of `local`.
pub(super) fn remote(local: Arc<Tool>, workers: Arc<Workers>) -> Result<Tool, RemoteError> {
    let def = local.def().clone();
    let schema = local.input_schema().clone();
    let name = local.name().to_string();
    Tool::raw(def, schema, Remote { local, workers }).map_err(|e| RemoteError::Schema(name, e))
}

struct Remote {
    local: Arc<Tool>,
    workers: Arc<Workers>,
}

impl Remote {
    /// `ctx` as the call would be on the worker: its workspace, when the
    /// worker reported one.
    fn on_worker(&self, ctx: &ToolContext) -> ToolContext {
        match self.workers.workspace() {
            Some(ws) => ToolContext {
                context: ws.context(&ctx.context),
                ..ctx.clone()
            },
            None => ctx.clone(),
        }
    }

    /// Runs `f` on the local tool's parsed input; an input the local tool
    /// cannot parse gets the cautious answer.
    fn classify(
        &self,
        input: &Value,
        f: impl Fn(&Tool, &baton_engine::tool::ParsedInput) -> bool,
        fallback: bool,
    ) -> bool {
        match self.local.parse(input) {
            Ok(parsed) => f(&self.local, &parsed),
            Err(_) => fallback,
        }
    }
}

#[async_trait]
impl ToolLogic<Value> for Remote {
    fn is_enabled(&self) -> bool {
        self.local.is_enabled()
    }

    fn is_concurrency_safe(&self, input: &Value) -> bool {
        self.classify(input, Tool::is_concurrency_safe, false)
    }

    fn is_read_only(&self, input: &Value) -> bool {
        self.classify(input, Tool::is_read_only, false)
    }

    fn is_destructive(&self, input: &Value) -> bool {
        self.classify(input, Tool::is_destructive, true)
    }

    fn is_open_world(&self, input: &Value) -> bool {
        self.classify(input, Tool::is_open_world, true)
    }

    fn permission_context(&self, context: &baton_engine::Context) -> Option<baton_engine::Context> {
        self.workers.workspace().map(|ws| ws.context(context))
    }

    fn permission_target(&self, input: &Value, ctx: &ToolContext) -> PermissionTarget {
        match self.local.parse(input) {
            Ok(parsed) => self.local.permission_target(&parsed, &self.on_worker(ctx)),
            Err(_) => PermissionTarget::None,
        }
    }

    /// Connects before the call is judged, so that the worker's workspace
    /// is known when its paths are. The input itself is checked by the
    /// worker (see the module docs); a worker that cannot be reached fails
    /// the call when it runs, with the reason.
    async fn validate_input(&self, _input: &Value, _ctx: &ToolContext) -> Result<(), String> {
        self.workers.ensure_connected().await;
        Ok(())
    }

    fn label(&self, input: &Value) -> Option<String> {
        self.local.parse(input).ok().map(|p| self.local.label(&p))
    }

    async fn check_permissions(&self, input: &Value, ctx: &ToolContext) -> ToolPermission {
        match self.local.parse(input) {
            Ok(parsed) => {
                self.local
                    .check_permissions(&parsed, &self.on_worker(ctx))
                    .await
            }
            Err(_) => ToolPermission::Defer,
        }
    }

    async fn call(&self, input: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let lease = self.workers.lease().await.map_err(|e| {
            ToolError::new(format!("{} could not run remotely: {e}", self.local.name()))
        })?;
        let outcome = call_on(
            &lease.connection,
            &lease.url,
            self.local.name(),
            input,
            &ctx,
        )
        .await;
        let mut output = match outcome {
            Ok(result) => to_output(result),
            Err(e) => {
                self.workers.failed(&lease.connection).await;
                return Err(ToolError::new(format!(
                    "The Baton worker {} failed while running {}: {e}. The call's result is \
                     lost; later calls go to another worker.",
                    lease.url,
                    self.local.name()
                )));
            }
        };
        if let Some(old) = lease.moved_from {
            output.content.insert(
                0,
                ContentBlock::text(format!(
                    "(The worker {old} is gone; this session now runs on {}. Its working \
                     directory and any state kept on the old worker were lost.)",
                    lease.url
                )),
            );
        }
        Ok(output)
    }
}

/// Sends the call and waits for its result, forwarding progress and
/// cancellation. `Err` means the connection failed, not the tool.
async fn call_on(
    connection: &Arc<Connection>,
    url: &str,
    name: &str,
    input: Value,
    ctx: &ToolContext,
) -> Result<CallToolResult, String> {
    let arguments = match input {
        Value::Object(map) => map,
        _ => Default::default(),
    };
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new(name.to_string()).with_arguments(arguments),
    ));
    let mut handle = connection
        .peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .map_err(|e| baton_mcp::sentence::describe(&e))?;
    let token = handle.progress_token.clone();
    connection.routes.add(token.clone(), ctx.progress.clone());
    // The transport may close without answering the calls in flight (the
    // worker died); check it while waiting so such a call fails promptly.
    let closed = async {
        loop {
            tokio::time::sleep(Duration::from_millis(250)).await;
            if connection.peer.is_transport_closed() {
                return;
            }
        }
    };
    let answer = tokio::select! {
        answer = &mut handle.rx => answer,
        _ = closed => {
            connection.routes.remove(&token);
            return Err("the connection to the worker closed".into());
        }
        // A paused or cut-off worker closes nothing (see `health`).
        why = super::health::stops_answering(url) => {
            connection.routes.remove(&token);
            return Err(why);
        }
        _ = tokio::time::sleep(super::health::TOTAL_LIMIT) => {
            connection.routes.remove(&token);
            let _ = connection
                .peer
                .notify_cancelled(CancelledNotificationParam::new(
                    Some(handle.id.clone()),
                    Some("the remote call limit was reached".into()),
                ))
                .await;
            return Ok(CallToolResult::error(vec![rmcp::model::ContentBlock::text(format!(
                "The call was stopped: remote calls may take at most {} minutes.",
                super::health::TOTAL_LIMIT.as_secs() / 60
            ))]));
        }
        _ = ctx.cancel.cancelled() => {
            // Cancel this request only; keep waiting a while for the
            // worker's result, which carries what the call printed so far,
            // but only while the worker shows it is alive: an interrupt
            // never waits on a paused one. (The notice itself is bounded
            // too: a paused worker may not read it.)
            let peer = connection.peer.clone();
            let notice = CancelledNotificationParam::new(
                Some(handle.id.clone()),
                ctx.cancel.reason().map(|r| format!("{r:?}")),
            );
            tokio::spawn(async move {
                let _ = tokio::time::timeout(CANCEL_GRACE, peer.notify_cancelled(notice)).await;
            });
            let final_answer = async {
                let alive = super::health::answers(url, super::health::CANCEL_PROBE_TIMEOUT);
                tokio::pin!(alive);
                tokio::select! {
                    biased;
                    answer = &mut handle.rx => return Ok(Some(answer)),
                    alive = &mut alive => alive?,
                }
                Ok(tokio::time::timeout(CANCEL_GRACE, &mut handle.rx).await.ok())
            };
            match final_answer.await {
                Ok(Some(answer)) => answer,
                Err(why) => {
                    connection.routes.remove(&token);
                    return Err(why);
                }
                Ok(None) => {
                    connection.routes.remove(&token);
                    return Ok(CallToolResult::error(vec![rmcp::model::ContentBlock::text(
                        "The call was stopped; the worker did not report its output in time.",
                    )]));
                }
            }
        }
    };
    connection.routes.remove(&token);
    match answer {
        Ok(Ok(ServerResult::CallToolResult(result))) => Ok(result),
        Ok(Ok(other)) => Err(format!("unexpected answer {other:?}")),
        Ok(Err(e)) => Err(baton_mcp::sentence::describe(&e)),
        Err(_) => Err("the connection closed".into()),
    }
}

/// The worker's result as the local tool's output. An outcome other than
/// success or a tool error (a denial or validation failure on the worker)
/// keeps its text and counts as the tool's error. The tool's own views
/// (its `tool_response`, shell facts, files written) come back as the
/// worker's tool gave them, so the host's hooks and details see them.
fn to_output(result: CallToolResult) -> ToolOutput {
    let meta = result.meta.as_ref().map(|m| &m.0);
    let outcome = outcome_from_meta(meta);
    let views = views_from_meta(meta);
    let mut content = Vec::new();
    for block in &result.content {
        let Ok(v) = serde_json::to_value(block) else {
            continue;
        };
        match v.get("type").and_then(Value::as_str) {
            Some("text") => content.push(ContentBlock::text(
                v.get("text").and_then(Value::as_str).unwrap_or_default(),
            )),
            Some("image") => content.push(ContentBlock::image(
                v.get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("image/png"),
                v.get("data").and_then(Value::as_str).unwrap_or_default(),
            )),
            _ => content.push(ContentBlock::text(v.to_string())),
        }
    }
    let is_error = result.is_error == Some(true)
        || !matches!(
            outcome,
            None | Some(Outcome::Success) | Some(Outcome::ToolError)
        );
    ToolOutput {
        content,
        is_error,
        facts: views.facts().map(Box::new),
        response: views.response,
        ..Default::default()
    }
}
