//! Following one task to its end (see the module docs of [`crate::tasks`]).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use baton_engine::{Progress, ToolContext, ToolError, ToolOutput};
use futures::future::BoxFuture;
use rmcp::model::{ClientRequest, ElicitRequestParams, ErrorData, InputResponses, ServerResult};
use rmcp::service::{PeerRequestOptions, RoleClient};
use rmcp::{Peer, ServiceError};
use serde_json::{json, Value};
use tokio::time::Instant;

use super::wire::{self, Generation, Status, TaskState};
use crate::call::{progress_note, CallLimits};
use crate::handler::CallWatch;
use crate::server::{Live, Server};

/// Polls are never closer than this, whatever the server suggests.
pub(crate) const POLL_FLOOR: Duration = Duration::from_millis(100);
/// Nor further apart than this, so status stays fresh and a finished task
/// is noticed soon.
pub(crate) const POLL_CEILING: Duration = Duration::from_secs(10);
/// The interval when the server suggests none.
const POLL_DEFAULT: Duration = Duration::from_secs(1);
/// How long `tasks/cancel` may take to be answered.
const CANCEL_WAIT: Duration = Duration::from_secs(5);
/// Requests in a row that fail on a broken connection before Baton stops
/// asking (each waits longer, up to [`POLL_CEILING`], and a connection that
/// closed is first re-made, within the server's restart limits).
const MAX_BROKEN: u32 = 30;

/// The call a task belongs to.
pub(crate) struct Following<'a> {
    pub server: &'a Arc<Server>,
    pub display: &'a str,
    pub ctx: &'a ToolContext,
    pub watch: &'a CallWatch,
    pub limits: CallLimits,
    /// When the call's total limit runs out.
    pub deadline: Instant,
}

/// Follows the task `first` describes, created on `live`, to its outcome.
pub(crate) async fn follow(
    call: Following<'_>,
    live: Arc<Live>,
    generation: Generation,
    first: TaskState,
) -> Result<ToolOutput, ToolError> {
    let guard = CancelOnDrop {
        peer: Some(live.peer().clone()),
        id: first.id.clone(),
    };
    let mut follower = Follower {
        call,
        live,
        generation,
        guard,
        reported: None,
        reconnected: false,
        answered: BTreeSet::new(),
    };
    let outcome = follower.run(first).await;
    follower.guard.peer = None;
    outcome
}

/// Why waiting stopped early.
#[derive(Clone, Copy)]
enum Stop {
    Interrupted,
    Limit,
}

/// How one request to the server went.
enum Asked {
    Answer(Box<ServerResult>),
    /// The server answered with a JSON-RPC error.
    Refused(ErrorData),
    /// No answer: the connection broke, or the request's limit ran out.
    Broken(String),
}

type Outcome = Result<ToolOutput, ToolError>;

struct Follower<'a> {
    call: Following<'a>,
    live: Arc<Live>,
    generation: Generation,
    guard: CancelOnDrop,
    /// The last status message sent on as progress.
    reported: Option<String>,
    /// The connection was re-made while the task ran.
    reconnected: bool,
    /// SEP-2663 input requests already answered (keys are never reused).
    answered: BTreeSet<String>,
}

impl Follower<'_> {
    async fn run(&mut self, mut state: TaskState) -> Outcome {
        let mut broken = 0u32;
        // 2025-11-25: `tasks/result` answers the moment the task is over
        // (and carries the server's questions while it waits for input), so
        // it is asked at once and kept open; polls only bring status.
        let mut waiting: Option<BoxFuture<'static, Asked>> = None;
        loop {
            self.report(&state);
            match (self.generation, state.status) {
                (_, Status::Cancelled) => return Ok(self.cancelled_on_server(&state)),
                (Generation::Extension, Status::Completed | Status::Failed) => {
                    return Ok(self.inline_outcome(&state));
                }
                (Generation::Extension, Status::InputRequired) => {
                    if let Err(why) = self.answer_inputs(&state).await {
                        let _ = self.stop_task(&state.id).await;
                        return Ok(ToolOutput::error(format!(
                            "{} could not go on: MCP server \"{}\" asked for input inside task {} that Baton cannot give ({why}). The server was told to cancel the task.",
                            self.call.display, self.call.server.spec.name, state.id
                        )));
                    }
                }
                (Generation::Spec2025, _) if waiting.is_none() => {
                    let peer = self.live.peer().clone();
                    waiting = Some(Box::pin(ask(peer, wire::result(&state.id), self.left())));
                }
                _ => {}
            }
            let pause = state
                .poll
                .unwrap_or(POLL_DEFAULT)
                .clamp(POLL_FLOOR, POLL_CEILING);
            let result = async {
                match waiting.as_mut() {
                    Some(result) => result.await,
                    None => std::future::pending().await,
                }
            };
            let asked = tokio::select! {
                asked = result => Some(asked),
                _ = tokio::time::sleep(pause) => None,
                stop = self.stopped() => return Ok(self.stop(stop, &state).await),
            };
            if let Some(asked) = asked {
                waiting = None;
                match asked {
                    Asked::Answer(answer) => return Ok(self.result_of(*answer, &state).await),
                    Asked::Refused(e) => return Ok(self.refused_result(&state, &e.message).await),
                    Asked::Broken(why) => {
                        broken += 1;
                        if let Err(out) = self.recover(&state, &why, broken).await {
                            return out;
                        }
                        continue;
                    }
                }
            }
            let asked = tokio::select! {
                asked = ask(self.live.peer().clone(), wire::get(&state.id), self.call.limits.idle) => asked,
                stop = self.stopped() => return Ok(self.stop(stop, &state).await),
            };
            match asked {
                Asked::Answer(answer) => match wire::state_of(&answer) {
                    Some(mut next) => {
                        broken = 0;
                        // rmcp reads a 2025-11-25 working task without its
                        // `pollInterval`: the last one given still holds.
                        next.poll = next.poll.or(state.poll);
                        state = next;
                    }
                    None => {
                        return Err(ToolError::new(format!(
                            "MCP server \"{}\" answered tasks/get for task {} of {} with something that is not a task: {}",
                            self.call.server.spec.name,
                            state.id,
                            self.call.display,
                            cut(&serde_json::to_string(&answer).unwrap_or_default())
                        )));
                    }
                },
                Asked::Refused(e) => return Ok(self.lost(&state, &e.message)),
                Asked::Broken(why) => {
                    broken += 1;
                    if let Err(out) = self.recover(&state, &why, broken).await {
                        return out;
                    }
                }
            }
        }
    }

    /// `tasks/result` answered with an error: the task's own (a tool that
    /// failed with a JSON-RPC error), unless the server no longer knows the
    /// task at all.
    async fn refused_result(&mut self, state: &TaskState, said: &str) -> ToolOutput {
        let asked = ask(
            self.live.peer().clone(),
            wire::get(&state.id),
            self.call.limits.idle,
        )
        .await;
        match asked {
            Asked::Refused(e) => self.lost(state, &e.message),
            _ => self.failed(state, said),
        }
    }

    /// After a request failed on the connection: waits a little longer each
    /// time, then goes on with the live connection (re-made by the server's
    /// supervisor when the old one closed). `Err` ends the call.
    async fn recover(&mut self, state: &TaskState, why: &str, broken: u32) -> Result<(), Outcome> {
        if broken > MAX_BROKEN {
            return Err(Ok(self.gave_up(state, why)));
        }
        let pause =
            (Duration::from_millis(250) * 2u32.saturating_pow(broken.min(8) - 1)).min(POLL_CEILING);
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            stop = self.stopped() => return Err(Ok(self.stop(stop, state).await)),
        }
        let live = tokio::select! {
            live = self.call.server.live() => live,
            stop = self.stopped() => return Err(Ok(self.stop(stop, state).await)),
        };
        match live {
            Ok(live) => {
                if !Arc::ptr_eq(&live, &self.live) {
                    self.reconnected = true;
                    self.guard.peer = Some(live.peer().clone());
                    self.live = live;
                }
                Ok(())
            }
            Err(e) => Err(Ok(self.gave_up(state, &format!("{why}; then {e}")))),
        }
    }

    /// Resolves when the call is interrupted or its total limit runs out.
    async fn stopped(&self) -> Stop {
        tokio::select! {
            _ = self.call.ctx.cancel.cancelled() => Stop::Interrupted,
            _ = tokio::time::sleep_until(self.call.deadline) => Stop::Limit,
        }
    }

    fn left(&self) -> Duration {
        self.call.deadline.saturating_duration_since(Instant::now())
    }

    /// Sends a new status (or status message) on as the call's progress.
    fn report(&mut self, state: &TaskState) {
        let text = match (&state.message, state.status) {
            (Some(m), _) if !m.trim().is_empty() => m.clone(),
            (_, Status::InputRequired) => "waiting for input".to_string(),
            _ => return,
        };
        if self.reported.as_ref() == Some(&text) {
            return;
        }
        self.reported = Some(text.clone());
        *self.call.watch.last.lock() = Some(text.clone());
        self.call.ctx.progress.send(Progress {
            message: text,
            data: Some(json!({"taskId": state.id, "status": state.status.label()})),
        });
    }

    /// Sends `tasks/cancel` for `id`; `Err` says why it did not get through.
    async fn stop_task(&self, id: &str) -> Result<(), String> {
        if self.generation == Generation::Spec2025 && !self.live.tasks.can_cancel() {
            return Err("the server does not offer tasks/cancel".into());
        }
        match ask(self.live.peer().clone(), wire::cancel(id), CANCEL_WAIT).await {
            Asked::Answer(_) => Ok(()),
            Asked::Refused(e) => Err(e.message.to_string()),
            Asked::Broken(why) => Err(why),
        }
    }

    /// Interrupted, or out of time: cancels the task and says so.
    async fn stop(&mut self, stop: Stop, state: &TaskState) -> ToolOutput {
        let sent = self.stop_task(&state.id).await;
        self.guard.peer = None;
        let told = match &sent {
            Ok(()) => format!(
                "the server was told to cancel task {} (tasks/cancel)",
                state.id
            ),
            Err(why) => format!(
                "telling the server to cancel task {} failed: {why}",
                state.id
            ),
        };
        let last = progress_note(&self.call.watch.last.lock().clone());
        let display = self.call.display;
        match stop {
            Stop::Interrupted => {
                ToolOutput::error(format!("{display} was cancelled before it finished ({told}).{last}"))
            }
            Stop::Limit => ToolOutput::error(format!(
                "{display} was stopped: it ran for {} s, the total limit for a call to MCP server \"{}\" (its \"timeout\" setting or MCP_TOOL_TIMEOUT); {told}.{last}",
                self.call.limits.total.as_secs_f64(),
                self.call.server.spec.name
            )),
        }
    }

    /// A `tasks/result` answer (2025-11-25): the tool's result, or, when it
    /// carries none (a task that failed without one), the task's own word.
    async fn result_of(&mut self, answer: ServerResult, state: &TaskState) -> ToolOutput {
        let value = match answer {
            ServerResult::CustomResult(raw) => raw.0,
            other => serde_json::to_value(other).unwrap_or(Value::Null),
        };
        if value.get("content").is_some() || value.get("structuredContent").is_some() {
            return crate::result::map_result(&value);
        }
        let last = match ask(
            self.live.peer().clone(),
            wire::get(&state.id),
            self.call.limits.idle,
        )
        .await
        {
            Asked::Answer(answer) => wire::state_of(&answer).unwrap_or_else(|| state.clone()),
            _ => state.clone(),
        };
        let why = last
            .message
            .clone()
            .unwrap_or_else(|| format!("it ended {}", last.status.label()));
        if last.status == Status::Cancelled {
            return self.cancelled_on_server(&last);
        }
        self.failed(&last, &why)
    }

    /// SEP-2663: the result or error that came inline with `tasks/get`.
    fn inline_outcome(&self, state: &TaskState) -> ToolOutput {
        match (&state.result, &state.error) {
            (Some(result), _) => crate::result::map_result(result),
            (None, Some(error)) => {
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| error.to_string());
                self.failed(state, &message)
            }
            (None, None) => self.failed(
                state,
                state
                    .message
                    .as_deref()
                    .unwrap_or("it ended without a result"),
            ),
        }
    }

    fn failed(&self, state: &TaskState, why: &str) -> ToolOutput {
        ToolOutput::error(format!(
            "{} failed on MCP server \"{}\" (task {}): {why}",
            self.call.display, self.call.server.spec.name, state.id
        ))
    }

    fn cancelled_on_server(&self, state: &TaskState) -> ToolOutput {
        let because = state
            .message
            .as_deref()
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        ToolOutput::error(format!(
            "{} was cancelled on MCP server \"{}\" (task {}){because}.",
            self.call.display, self.call.server.spec.name, state.id
        ))
    }

    fn lost(&self, state: &TaskState, said: &str) -> ToolOutput {
        let after = if self.reconnected {
            " after the connection to it was re-made"
        } else {
            ""
        };
        ToolOutput::error(format!(
            "MCP server \"{}\" no longer knows task {} of {}{after} (it answered: {said}). The call was not sent again, so it did not run twice; its result is lost.{}",
            self.call.server.spec.name,
            state.id,
            self.call.display,
            progress_note(&self.call.watch.last.lock().clone())
        ))
    }

    fn gave_up(&self, state: &TaskState, why: &str) -> ToolOutput {
        ToolOutput::error(format!(
            "Baton lost contact with MCP server \"{}\" while task {} of {} ran ({why}). The call was not sent again; the task may still be running on the server.{}",
            self.call.server.spec.name,
            state.id,
            self.call.display,
            progress_note(&self.call.watch.last.lock().clone())
        ))
    }

    /// SEP-2663 `input_required`: asks the host each new question and
    /// answers with `tasks/update`. Only elicitation is asked of Baton (it
    /// declares neither sampling nor roots).
    async fn answer_inputs(&mut self, state: &TaskState) -> Result<(), String> {
        let Some(Value::Object(requests)) = &state.input_requests else {
            return Ok(());
        };
        let mut answers = InputResponses::new();
        for (key, request) in requests {
            if self.answered.contains(key) {
                continue;
            }
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            if method != "elicitation/create" {
                return Err(format!("a {method:?} request"));
            }
            let params: ElicitRequestParams =
                serde_json::from_value(request.get("params").cloned().unwrap_or(Value::Null))
                    .map_err(|e| format!("an elicitation Baton cannot read: {e}"))?;
            let result = self.live.handler().elicit(params).await;
            answers.insert(
                key.clone(),
                serde_json::to_value(result).map_err(|e| e.to_string())?,
            );
        }
        if answers.is_empty() {
            return Ok(());
        }
        let keys: Vec<String> = answers.keys().cloned().collect();
        match ask(
            self.live.peer().clone(),
            wire::update(&state.id, answers),
            self.call.limits.idle,
        )
        .await
        {
            Asked::Answer(_) => {
                self.answered.extend(keys);
                Ok(())
            }
            Asked::Refused(e) => Err(format!("tasks/update was refused: {}", e.message)),
            // Asked again at the next poll, which shows whether it arrived.
            Asked::Broken(_) => Ok(()),
        }
    }
}

/// Sends `request` on `peer`'s connection; waits up to `bound`.
async fn ask(peer: Peer<RoleClient>, request: ClientRequest, bound: Duration) -> Asked {
    let options = PeerRequestOptions::with_timeout(bound.max(Duration::from_millis(1)));
    let handle = match peer.send_request_with_option(request, options).await {
        Ok(handle) => handle,
        Err(e) => return Asked::Broken(crate::sentence::describe(&e)),
    };
    match handle.await_response().await {
        Ok(answer) => Asked::Answer(Box::new(answer)),
        Err(ServiceError::McpError(e)) => Asked::Refused(e),
        Err(e) => Asked::Broken(crate::sentence::describe(&e)),
    }
}

/// Sends `tasks/cancel` if the call is dropped while its task runs (the
/// engine drops a call that ignores its cancellation for too long).
struct CancelOnDrop {
    peer: Option<Peer<RoleClient>>,
    id: String,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else { return };
        let request = wire::cancel(&self.id);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let options = PeerRequestOptions::with_timeout(CANCEL_WAIT);
                if let Ok(handle) = peer.send_request_with_option(request, options).await {
                    let _ = handle.await_response().await;
                }
            });
        }
    }
}

fn cut(text: &str) -> String {
    match text.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}
