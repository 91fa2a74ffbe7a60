//! One `tools/call`: gate, a batch of one call, events to MCP, the result.

use std::sync::atomic::{AtomicU64, Ordering};

use baton_actors::{Event, InterruptKind, PermissionPrompt};
use baton_engine::{Approval, ApprovalRequest, CallResult, Outcome, ToolUse};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequestParams, ProgressNotificationParam,
    ProgressToken, ProtocolVersion,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::{json, Value};

use super::{results, rounds, Shared};

/// Runs the requested call through the engine and answers with its result,
/// or, for a 2026-07-28 client whose call needs approval, with the question
/// (see [`super::rounds`]). Never fails: every problem becomes an error
/// result the client can read.
pub(super) async fn run(
    shared: &Shared,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> CallToolResponse {
    // Clients of 2026-07-28 cannot be sent requests; they are asked in the
    // answer instead.
    let in_rounds = context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    // Declared per request (or at `initialize`); a form question needs a
    // form-capable client (no mode named means form). Decides for both
    // protocol generations.
    let can_be_asked = context
        .client_capabilities()
        .and_then(|caps| caps.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    let retry_state = request.request_state.clone();
    let retry_answers = request.input_responses.clone();
    let input = request
        .arguments
        .map(Value::Object)
        .unwrap_or_else(|| json!({}));
    let call = ToolUse::new(call_id(&context), request.name.to_string(), input);
    let safe = concurrency_safe(shared, &call);

    // A cancel that arrives while the call waits for its turn ends it there:
    // it never started, so nothing needs stopping.
    let _pass = tokio::select! {
        pass = shared.gate.enter(safe) => pass,
        _ = context.ct.cancelled() => {
            return results::server_error(
                format!("The call {} was cancelled by the client before it started.", call.name),
                Outcome::Cancelled { started: false },
            )
            .into();
        }
    };

    let mut batch = match shared.engine.open_batch().await {
        Ok(b) => b,
        Err(e) => {
            return results::server_error(
                format!("Baton could not run {}: {e}", call.name),
                Outcome::Internal,
            )
            .into()
        }
    };
    let name = call.name.clone();
    if let Err(e) = batch.add(call) {
        return results::server_error(
            format!("Baton could not run {name}: {e}"),
            Outcome::Internal,
        )
        .into();
    }
    batch.end();

    let progress = context.meta.get_progress_token();
    let steps = AtomicU64::new(0);
    let mut result: Option<CallResult> = None;
    let mut cancelled = false;
    let mut question = None;
    loop {
        let event = tokio::select! {
            event = batch.next_event() => event,
            _ = context.ct.cancelled(), if !cancelled => {
                // Stop this call and its processes; keep reading so the
                // result (with what the call printed so far) is still built.
                cancelled = true;
                batch.interrupt(InterruptKind::Cancel);
                continue;
            }
        };
        match event {
            Some(Event::Progress { progress: p, .. }) => {
                if let Some(token) = &progress {
                    let n = steps.fetch_add(1, Ordering::Relaxed) + 1;
                    notify_progress(&context.peer, token, n, p.message).await;
                }
            }
            Some(Event::PermissionRequest(prompt)) if !can_be_asked => {
                prompt.answer(cannot_ask(
                    &prompt.request,
                    "it does not support elicitation",
                ));
            }
            Some(Event::PermissionRequest(prompt)) if in_rounds => {
                let answer = shared.rounds.answer(
                    retry_state.as_deref(),
                    retry_answers.as_ref(),
                    &prompt.request,
                );
                match answer {
                    rounds::Answer::Given(approval) => {
                        prompt.answer(approval);
                    }
                    rounds::Answer::None => {
                        // End this round: the call is not run now; the
                        // client's retry carries the answer.
                        question = shared.rounds.ask(&prompt.request);
                        prompt.answer(cannot_ask(&prompt.request, "a question could not be built"));
                    }
                }
            }
            Some(Event::PermissionRequest(prompt)) => {
                // Asking the client can take as long as a human does; the
                // event loop keeps running (progress, cancellation) meanwhile.
                tokio::spawn(ask_client(context.peer.clone(), *prompt));
            }
            Some(Event::Result { result: r, .. }) => result = Some(*r),
            Some(Event::Done(_)) | None => break,
            Some(_) => {}
        }
    }
    if let Some(question) = question {
        return CallToolResponse::InputRequired(question);
    }
    match result {
        Some(r) => results::to_mcp(&r).into(),
        None => results::server_error(
            format!("Baton lost the result of {name}; this is a bug."),
            Outcome::Internal,
        )
        .into(),
    }
}

/// The denial text when the client cannot be asked, and why.
fn cannot_ask(request: &ApprovalRequest, why: &str) -> Approval {
    Approval::Unanswered {
        cause: baton_engine::Unasked::ClientCannotAsk,
        detail: Some(format!(
            "{}; the MCP client cannot be asked: {why}; a permission rule in the server's \
             settings can allow it",
            request.reason
        )),
    }
}

/// Whether `call` may run beside others (decided as the coordinator would:
/// an input that does not parse is never safe; an unknown tool is, as it
/// will only produce an error result).
fn concurrency_safe(shared: &Shared, call: &ToolUse) -> bool {
    match shared.pool.get(&call.name) {
        Some(tool) => match tool.parse(&call.input) {
            Ok(parsed) => tool.is_concurrency_safe(&parsed),
            Err(_) => false,
        },
        None => true,
    }
}

/// A call id unique in the session: the request id, tagged with a process-wide
/// sequence number because clients reuse ids across connections.
fn call_id(context: &RequestContext<RoleServer>) -> String {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let n = SEQ.fetch_add(1, Ordering::Relaxed);
    format!("mcp_{n}_{}", context.id)
}

async fn notify_progress(peer: &Peer<RoleServer>, token: &ProgressToken, n: u64, message: String) {
    // Progress is advisory: a client that went away must not fail the call.
    let _ = peer
        .notify_progress(
            ProgressNotificationParam::new(token.clone(), n as f64).with_message(message),
        )
        .await;
}

/// Answers `prompt` by asking the MCP client (a server-to-client form
/// elicitation; the caller checked that the client declared it), or denies
/// it with a text saying why asking failed.
async fn ask_client(peer: Peer<RoleServer>, prompt: PermissionPrompt) {
    let approval = match elicit(&peer, &prompt).await {
        Ok(approval) => approval,
        Err(why) => Approval::Unanswered {
            cause: baton_engine::Unasked::ClientCannotAsk,
            detail: Some(format!(
                "{}; asking the MCP client failed: {why}",
                prompt.request.reason
            )),
        },
    };
    prompt.answer(approval);
}

async fn elicit(peer: &Peer<RoleServer>, prompt: &PermissionPrompt) -> Result<Approval, String> {
    let answer = peer
        .create_elicitation(question(&prompt.request)?)
        .await
        .map_err(|e| e.to_string())?;
    let action = serde_json::to_value(answer.action)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let content = answer
        .content
        .and_then(|c| serde_json::to_value(c).ok())
        .unwrap_or(Value::Null);
    Ok(approval_from(&action, &content, &prompt.request))
}

/// The approval question for `request`, as a form elicitation.
pub(super) fn question(request: &ApprovalRequest) -> Result<ElicitRequestParams, String> {
    let params = rounds::question_params(request);
    serde_json::from_value(params).map_err(|e| format!("cannot build the question: {e}"))
}

/// What the client's answer (`action`, form `content`) means: only an
/// accepted form with `allow: true` allows.
pub(super) fn approval_from(action: &str, content: &Value, request: &ApprovalRequest) -> Approval {
    let allowed = action == "accept" && content.get("allow").and_then(Value::as_bool) == Some(true);
    if allowed {
        Approval::Allow
    } else {
        Approval::Deny {
            reason: Some(format!(
                "The MCP client's user did not allow {} ({action}).",
                request.tool_name
            )),
        }
    }
}
