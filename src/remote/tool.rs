//! A local tool whose `call` runs on a worker.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use baton_engine::content::ContentBlock;
use baton_engine::permission::{PermissionTarget, ToolPermission};
use baton_engine::{Outcome, Tool, ToolContext, ToolError, ToolLogic, ToolOutput};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, CustomRequest,
    RequestMetaObject, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use serde_json::{json, Value};
use std::time::Instant;

use super::worker::{Connection, Follow, Workers};
use crate::mcp_server::{
    outcome_from_meta, views_from_meta, CALL_META_KEY, CANCEL_METHOD, STATUS_METHOD,
};

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
        let name = self.local.name();
        let call = Named {
            session: &self.workers.journal_session,
            id: &ctx.call_id,
            follow: Follow::new(ctx.progress.clone()),
        };
        let mut connection = lease.connection.clone();
        // Connections that broke under this call so far.
        let mut breaks = 0;
        let result = loop {
            match call_on(&connection, &lease.url, name, &input, &ctx, &call).await {
                Ok(result) => break result,
                Err(why) => {
                    let since = Instant::now();
                    breaks += 1;
                    // The same call again, on the same worker: its journal
                    // answers (result, join, or lost), it never runs twice.
                    // A worker without a journal is not asked again, nor
                    // one whose connections keep breaking.
                    let again = match connection.journaled && breaks <= MAX_BREAKS {
                        true => self.reach_again(&lease.url, since, &ctx).await,
                        false => None,
                    };
                    match again {
                        Some(c) => connection = c,
                        None => {
                            self.workers.failed(&connection).await;
                            return Err(ToolError::new(lost_text(
                                &lease.url,
                                name,
                                &why,
                                since.elapsed(),
                                &call.follow,
                            )));
                        }
                    }
                }
            }
        };
        let mut output = to_output(result);
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

impl Remote {
    /// A new connection to the worker at `url`, tried with growing pauses
    /// until [`RETRY_WINDOW`] after the first break; an interrupted call
    /// tries once, briefly (an interrupt never waits on a paused worker).
    /// `None` if the worker stayed away.
    async fn reach_again(
        &self,
        url: &str,
        since: Instant,
        ctx: &ToolContext,
    ) -> Option<Arc<Connection>> {
        let mut attempt = 0u32;
        loop {
            let window = if ctx.cancel.is_cancelled() {
                super::health::CANCEL_PROBE_TIMEOUT
            } else {
                RETRY_WINDOW
            };
            if attempt > 0 {
                let left = window.checked_sub(since.elapsed())?;
                let pause = Duration::from_millis(100 << attempt.min(5)).min(left);
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = ctx.cancel.cancelled(), if !ctx.cancel.is_cancelled() => {}
                }
            }
            attempt += 1;
            let left = window
                .checked_sub(since.elapsed())
                .filter(|_| attempt == 1 || !ctx.cancel.is_cancelled())
                .unwrap_or(super::health::CANCEL_PROBE_TIMEOUT);
            if let Ok(c) = self
                .workers
                .reconnect(url, left.min(RECONNECT_TIMEOUT))
                .await
            {
                return Some(c);
            }
            if window.checked_sub(since.elapsed()).is_none() || ctx.cancel.is_cancelled() {
                return None;
            }
        }
    }
}

/// How long a call whose connection broke keeps trying to reach its worker
/// again (after each break) before it is reported lost.
const RETRY_WINDOW: Duration = Duration::from_secs(20);

/// Broken connections one call survives (each followed by a new one that
/// worked) before it is given up as lost.
const MAX_BREAKS: u32 = 8;

/// How long one reconnection may take.
const RECONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A call's name in the worker's journal, and what the host saw of it.
struct Named<'a> {
    session: &'a str,
    id: &'a str,
    follow: Arc<Follow>,
}

impl Named<'_> {
    /// The request's `_meta`: the call's name and the last output number
    /// seen, so a retry gets only what followed.
    fn meta(&self) -> RequestMetaObject {
        let mut meta = RequestMetaObject::default();
        meta.0.insert(
            CALL_META_KEY.to_string(),
            json!({"session": self.session, "id": self.id, "after": self.follow.seen().0}),
        );
        meta
    }

    fn cancel_request(&self) -> ClientRequest {
        ClientRequest::CustomRequest(CustomRequest::new(
            CANCEL_METHOD,
            Some(json!({"session": self.session, "id": self.id})),
        ))
    }
}

/// The error of a call whose worker could not be reached again.
fn lost_text(url: &str, tool: &str, why: &str, tried: Duration, follow: &Follow) -> String {
    let mut text = format!(
        "The Baton worker {url} failed while running {tool}: {why}. It could not be reached \
         again (tried for {} s), so what became of the call is not known: it may have run in \
         part or to its end. Later calls go to another worker.",
        tried.as_secs()
    );
    let (_, last) = follow.seen();
    if !last.is_empty() {
        text.push_str("\nOutput seen before the worker was lost:\n");
        text.push_str(&last);
    }
    text
}

/// Sends the call and waits for its result, forwarding progress and
/// cancellation. `Err` means the connection failed, not the tool: the call
/// may be sent again, with the same name.
async fn call_on(
    connection: &Arc<Connection>,
    url: &str,
    name: &str,
    input: &Value,
    ctx: &ToolContext,
    call: &Named<'_>,
) -> Result<CallToolResult, String> {
    let arguments = match input {
        Value::Object(map) => map.clone(),
        _ => Default::default(),
    };
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new(name.to_string()).with_arguments(arguments),
    ));
    let mut options = PeerRequestOptions::no_options();
    options.meta = Some(call.meta());
    let mut handle = connection
        .peer
        .send_request_with_option(request, options)
        .await
        .map_err(|e| baton_mcp::sentence::describe(&e))?;
    let token = handle.progress_token.clone();
    connection.routes.add(token.clone(), call.follow.clone());
    let _route = RouteGuard {
        connection,
        token: &token,
    };
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
        _ = closed => return Err("the connection to the worker closed".into()),
        // A paused or cut-off worker closes nothing (see `health`).
        why = super::health::stops_answering(url) => return Err(why),
        // A response stream that broke and was "resumed" onto a worker
        // that has no answer for it (a restarted worker behind the same
        // address) stays open and silent: ask the journal.
        why = answer_lost(connection, call) => return Err(why),
        _ = tokio::time::sleep(super::health::TOTAL_LIMIT) => {
            send_cancel(connection, call);
            return Ok(CallToolResult::error(vec![rmcp::model::ContentBlock::text(format!(
                "The call was stopped: remote calls may take at most {} minutes.",
                super::health::TOTAL_LIMIT.as_secs() / 60
            ))]));
        }
        _ = ctx.cancel.cancelled() => {
            // Stop the call on the worker; keep waiting a while for its
            // result, which carries what the call printed so far, but only
            // while the worker shows it is alive: an interrupt never waits
            // on a paused one.
            send_cancel(connection, call);
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
                Err(why) => return Err(why),
                Ok(None) => {
                    return Ok(CallToolResult::error(vec![rmcp::model::ContentBlock::text(
                        "The call was stopped; the worker did not report its output in time.",
                    )]));
                }
            }
        }
    };
    match answer {
        Ok(Ok(ServerResult::CallToolResult(result))) => Ok(result),
        Ok(Ok(other)) => Err(format!("unexpected answer {other:?}")),
        // The worker answered with an error: that is its answer, not a
        // broken connection.
        Ok(Err(rmcp::ServiceError::McpError(e))) => Ok(CallToolResult::error(vec![
            rmcp::model::ContentBlock::text(format!("The worker refused the call: {}", e.message)),
        ])),
        Ok(Err(e)) => Err(baton_mcp::sentence::describe(&e)),
        Err(_) => Err("the connection closed".into()),
    }
}

/// Resolves once the worker's journal says the call ended, or never heard
/// of it, while its answer has not come: the answer was lost on the way,
/// and the call is to be sent again (the journal then answers it). Never
/// resolves for a worker without a journal, or while the call runs.
async fn answer_lost(connection: &Arc<Connection>, call: &Named<'_>) -> String {
    if !connection.journaled {
        return std::future::pending().await;
    }
    loop {
        tokio::time::sleep(super::health::PROBE_EVERY).await;
        let request = ClientRequest::CustomRequest(CustomRequest::new(
            STATUS_METHOD,
            Some(json!({"session": call.session, "id": call.id})),
        ));
        let asked = async {
            let handle = connection
                .peer
                .send_request_with_option(request, PeerRequestOptions::no_options())
                .await
                .ok()?;
            // Read as JSON: rmcp may file a small custom answer under
            // another of its result types.
            let answer = serde_json::to_value(handle.rx.await.ok()?.ok()?).ok()?;
            answer
                .get("state")
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let state = tokio::time::timeout(super::health::PROBE_TIMEOUT, asked).await;
        if let Ok(Some(state)) = state {
            if state == "ended" || state == "unknown" {
                // An answer in flight right now gets a moment to land.
                tokio::time::sleep(ANSWER_GRACE).await;
                return format!(
                    "the worker's journal says the call is {state}, but its answer did not come"
                );
            }
        }
    }
}

/// How long an answer the worker's journal says exists may take to arrive.
const ANSWER_GRACE: Duration = Duration::from_secs(2);

/// Removes a call's progress route however its wait ends.
struct RouteGuard<'a> {
    connection: &'a Arc<Connection>,
    token: &'a rmcp::model::ProgressToken,
}

impl Drop for RouteGuard<'_> {
    fn drop(&mut self) {
        self.connection.routes.remove(self.token);
    }
}

/// Asks the worker to stop the call, without waiting on it (a paused worker
/// may never read it; the notice is bounded).
fn send_cancel(connection: &Arc<Connection>, call: &Named<'_>) {
    let peer = connection.peer.clone();
    let request = call.cancel_request();
    tokio::spawn(async move {
        let _ = tokio::time::timeout(CANCEL_GRACE, async {
            if let Ok(handle) = peer
                .send_request_with_option(request, PeerRequestOptions::no_options())
                .await
            {
                let _ = handle.rx.await;
            }
        })
        .await;
    });
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
