//! One `tools/call`: gate, a batch of one call, events to MCP (or to the
//! journal), the result.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use baton_actors::{Event, InterruptKind, PermissionPrompt};
use baton_engine::{Approval, ApprovalRequest, CallResult, Outcome, ToolUse};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequestParams, ProgressNotificationParam,
    ProgressToken, ProtocolVersion,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::{results, rounds, Shared};

/// Runs the requested call through the engine and answers with its result,
/// or, for a 2026-07-28 client whose call needs approval, with the question
/// (see [`super::rounds`]). A call that names itself in
/// `_meta["dev.baton/call"]` is journaled ([`super::journaled`]). Never
/// fails: every problem becomes an error result the client can read.
pub(super) async fn run(
    shared: &Arc<Shared>,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> CallToolResponse {
    let mut asking = Asking::of(&context, &request);
    let input = request
        .arguments
        .map(Value::Object)
        .unwrap_or_else(|| json!({}));
    let name = request.name.to_string();
    match super::journaled::named(&context) {
        Ok(Some(named)) => {
            // Runs beyond this request, which cannot carry its questions.
            asking.in_rounds = false;
            asking.can_be_asked &= !asking.protocol_in_rounds;
            return super::journaled::run(shared, named, name, input, asking, context).await;
        }
        Ok(None) => {}
        Err(why) => return results::server_error(why, Outcome::InvalidInput).into(),
    }
    let call = ToolUse::new(call_id(&context), name, input);
    let report = Report::Client {
        peer: &context.peer,
        token: context.meta.get_progress_token(),
        steps: AtomicU64::new(0),
    };
    execute(shared, call, &asking, &report, &context.ct).await
}

/// How questions of one call may be asked.
pub(super) struct Asking {
    peer: Peer<RoleServer>,
    /// The client speaks 2026-07-28 (no server-to-client requests).
    protocol_in_rounds: bool,
    /// Questions end this round with `input_required`.
    in_rounds: bool,
    can_be_asked: bool,
    retry_state: Option<String>,
    retry_answers: Option<rmcp::model::InputResponses>,
    /// A SEP-2663 task's questions wait in the task for `tasks/update`.
    in_task: Option<super::tasks::Questions>,
}

impl Asking {
    /// For a call that runs detached from its request (an MCP task): it
    /// cannot ask in rounds, so a 2026-07-28 client cannot be asked at all.
    pub(super) fn detached(context: &RequestContext<RoleServer>) -> Asking {
        let mut asking = Asking::of(context, &CallToolRequestParams::new(""));
        asking.in_rounds = false;
        asking.can_be_asked &= !asking.protocol_in_rounds;
        asking
    }

    /// For a SEP-2663 task: its questions are put to the client in the
    /// task (`input_required`), answered with `tasks/update`.
    pub(super) fn in_task(
        context: &RequestContext<RoleServer>,
        questions: super::tasks::Questions,
    ) -> Asking {
        let mut asking = Asking::of(context, &CallToolRequestParams::new(""));
        asking.in_rounds = false;
        asking.in_task = Some(questions);
        asking
    }

    fn of(context: &RequestContext<RoleServer>, request: &CallToolRequestParams) -> Asking {
        // Clients of 2026-07-28 cannot be sent requests; they are asked in
        // the answer instead.
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
        Asking {
            peer: context.peer.clone(),
            protocol_in_rounds: in_rounds,
            in_rounds,
            can_be_asked,
            retry_state: request.request_state.clone(),
            retry_answers: request.input_responses.clone(),
            in_task: None,
        }
    }
}

/// Where a call's progress goes: to the MCP client that asked (numbered
/// 1, 2, 3 …), or into the journal, whose readers number it the same way.
pub(super) enum Report<'a> {
    Client {
        peer: &'a Peer<RoleServer>,
        token: Option<ProgressToken>,
        steps: AtomicU64,
    },
    Journal(&'a baton_journal::Runner),
}

impl Report<'_> {
    async fn progress(&self, message: String) {
        match self {
            Report::Client { peer, token, steps } => {
                if let Some(token) = token {
                    let n = steps.fetch_add(1, Ordering::Relaxed) + 1;
                    notify_progress(peer, token, n, message).await;
                }
            }
            Report::Journal(runner) => {
                runner.output(message);
            }
        }
    }

    /// Called right before the call is handed to the engine: from here on
    /// hooks and the tool may act. A journaled call's start is on disk
    /// first, so a crash after it reports the call as lost *while running*.
    async fn starting(&self) -> Result<(), String> {
        match self {
            Report::Client { .. } => Ok(()),
            Report::Journal(runner) => runner.started().await.map_err(|e| e.to_string()),
        }
    }
}

/// Runs `call` through the engine, behind the gate, stopping it when
/// `cancel` fires. Never fails: every problem is an error result.
pub(super) async fn execute(
    shared: &Shared,
    call: ToolUse,
    asking: &Asking,
    report: &Report<'_>,
    cancel: &CancellationToken,
) -> CallToolResponse {
    let safe = concurrency_safe(shared, &call);

    // A cancel that arrives while the call waits for its turn ends it there:
    // it never started, so nothing needs stopping.
    let _pass = tokio::select! {
        pass = shared.gate.enter(safe) => pass,
        _ = cancel.cancelled() => {
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
    if let Err(why) = report.starting().await {
        return results::server_error(
            format!("Baton did not run {name}: its start could not be journaled ({why})."),
            Outcome::Internal,
        )
        .into();
    }
    if let Err(e) = batch.add(call) {
        return results::server_error(
            format!("Baton could not run {name}: {e}"),
            Outcome::Internal,
        )
        .into();
    }
    batch.end();

    let mut result: Option<CallResult> = None;
    let mut cancelled = false;
    let mut question = None;
    loop {
        let event = tokio::select! {
            event = batch.next_event() => event,
            _ = cancel.cancelled(), if !cancelled => {
                // Stop this call and its processes; keep reading so the
                // result (with what the call printed so far) is still built.
                cancelled = true;
                batch.interrupt(InterruptKind::Cancel);
                continue;
            }
        };
        match event {
            Some(Event::Progress { progress: p, .. }) => {
                report
                    .progress(crate::journal_text::progress_text(&p))
                    .await
            }
            Some(Event::PermissionRequest(prompt)) if !asking.can_be_asked => {
                let why = if asking.protocol_in_rounds && !asking.in_rounds {
                    "a journaled call outlives its request and cannot be asked in rounds"
                } else {
                    "it does not support elicitation"
                };
                prompt.answer(cannot_ask(&prompt.request, why));
            }
            Some(Event::PermissionRequest(prompt)) if asking.in_task.is_some() => {
                if let Some(questions) = &asking.in_task {
                    questions.ask(*prompt);
                }
            }
            Some(Event::PermissionRequest(prompt)) if asking.in_rounds => {
                let answer = shared.rounds.answer(
                    asking.retry_state.as_deref(),
                    asking.retry_answers.as_ref(),
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
                tokio::spawn(ask_client(asking.peer.clone(), *prompt));
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
pub(super) fn call_id(context: &RequestContext<RoleServer>) -> String {
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
