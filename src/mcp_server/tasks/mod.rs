//! MCP tasks: a `tools/call` run as a task that outlives its connection.
//!
//! A task is an entry of the server's call journal ([`baton_journal`]):
//! session [`SESSION`], call id = the task id. Its call runs detached from
//! any request (as a journaled call does, [`super::journaled::spawn`]), so a
//! client that drops its connection asks again on a new one, with the same
//! task id, and finds the call running or its result kept; a journal on disk
//! answers for the tasks of a previous life too (lost ones as failed).
//!
//! Both generations of the protocol are served, each answered in its own
//! shape (the asking request's protocol version decides):
//!
//! - **2025-11-25**: `tools/call` with `task: {ttl}` answers
//!   `{task: {taskId, status: "working", …}}`; `tasks/get`, `tasks/result`
//!   (blocks until the call ended, then its result), `tasks/list`,
//!   `tasks/cancel`. rmcp has no model for these, so [`super::task_wire`]
//!   brings them here as custom requests and declares the `tasks`
//!   capability and each tool's `execution.taskSupport`.
//! - **the SEP-2663 extension** (2026-07-28): a client that declares
//!   `io.modelcontextprotocol/tasks` gets the result of a call that ends
//!   within [`GRACE`] as usual, and a task handle (`resultType: "task"`)
//!   for one that takes longer; `tasks/get` carries the result inline.
//!
//! A SEP-2663 task whose call needs approval goes `input_required`: the
//! question is in the task's `inputRequests` (a form elicitation), and the
//! client's `tasks/update` answers it ([`Questions`]). A 2025-11-25 task's
//! question goes to the client as an elicitation request while its
//! connection lasts.
//!
//! `ttl` is answered as unlimited: tasks are kept within the journal's own
//! bounds (its oldest results are pruned, never by age). A cancelled task
//! reads `cancelled` from the moment `tasks/cancel` is answered.

use std::sync::Arc;
use std::time::Duration;

use baton_engine::{Outcome, ToolUse};
use baton_journal::{Begin, CallKey, Join, Status};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CreateTaskResult, CustomRequest, ErrorCode, Task,
    TaskStatus, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{json, Value};

use super::call::Asking;
use super::task_wire::{CALL, CANCEL, GET};
use super::{journaled, results, Shared};

/// The journal session every task belongs to: tasks are the server's, not
/// a connection's, so a client finds its task again on any connection.
pub const SESSION: &str = "mcp-tasks";

/// The polling interval suggested to clients.
const POLL_MS: u64 = 500;

/// SEP-2663: a call that ends within this is answered without a task.
pub(super) const GRACE: Duration = Duration::from_secs(1);

/// Tasks per `tasks/list` page.
const PAGE: usize = 100;

mod registry;
mod state;

const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

pub(crate) use registry::{Questions, Tasks};
use state::{describe, generation, rfc3339_now, Generation};

/// Answers a task request (`None`: `request` is none).
pub(super) async fn custom(
    shared: &Arc<Shared>,
    request: &CustomRequest,
    context: &RequestContext<RoleServer>,
) -> Option<Result<Value, ErrorData>> {
    let params = request.params.clone().unwrap_or(Value::Null);
    let gen = generation(context);
    Some(match request.method.as_str() {
        CALL => create(shared, &params, context).await,
        GET => task_id(&params).and_then(|id| get(shared, &id, gen)),
        "tasks/result" => match task_id(&params) {
            Ok(id) => result(shared, &id, context).await,
            Err(e) => Err(e),
        },
        "tasks/list" => list(shared, &params, gen),
        CANCEL => task_id(&params).and_then(|id| cancel(shared, &id, gen)),
        _ => return None,
    })
}

/// SEP-2663: whether this `tools/call` may be answered with a task (the
/// client declared the extension, and did not name the call for the
/// journal itself).
pub(super) fn offered(context: &RequestContext<RoleServer>) -> bool {
    generation(context) == Generation::Extension
        && context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks())
        && !context.meta.contains_key(journaled::CALL_META_KEY)
}

/// SEP-2663: runs the call detached; its result if it ends within
/// [`GRACE`], else a task handle.
pub(super) async fn call_or_task(
    shared: &Arc<Shared>,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> CallToolResponse {
    let input = request
        .arguments
        .map(Value::Object)
        .unwrap_or_else(|| json!({}));
    let questions = Questions::default();
    let asking = Asking::in_task(&context, questions.clone());
    let started = start(shared, request.name.to_string(), input, asking).await;
    let (id, join) = match started {
        Ok(started) => started,
        Err(e) => return results::server_error(e.message.to_string(), Outcome::Internal).into(),
    };
    shared.tasks.set_questions(&id, Some(questions));
    if let Ok(ended) = tokio::time::timeout(GRACE, join.ended()).await {
        shared.tasks.set_questions(&id, None);
        return journaled::answer(&CallKey::new(SESSION, &id), ended).into();
    }
    // Its questions are forgotten when it ends, whether anyone asks or not.
    if let Some(join) = shared.journal.join(&CallKey::new(SESSION, &id), 0) {
        let (shared, id) = (Arc::clone(shared), id.clone());
        tokio::spawn(async move {
            join.ended().await;
            shared.tasks.set_questions(&id, None);
        });
    }
    let now = rfc3339_now();
    let task = Task::new(&id, TaskStatus::Working, now.clone(), now).with_poll_interval_ms(POLL_MS);
    CallToolResponse::Task(CreateTaskResult::new(task))
}

/// Registers a new task and starts its call, detached.
async fn start(
    shared: &Arc<Shared>,
    name: String,
    input: Value,
    asking: Asking,
) -> Result<(String, Join), ErrorData> {
    let id = super::rounds::nonce()
        .ok_or_else(|| ErrorData::internal_error("no randomness for a task id", None))?;
    let key = CallKey::new(SESSION, &id);
    match shared.journal.begin(&key, &name, &input, 0).await {
        Ok(Begin::Run(runner)) => {
            let join = runner.join(0);
            let call = ToolUse::new(id.clone(), name, input);
            journaled::spawn(shared, runner, call, asking);
            Ok((id, join))
        }
        Ok(_) => Err(ErrorData::internal_error("a new task id was taken", None)),
        Err(e) => Err(ErrorData::internal_error(
            format!("Baton did not run {name}: {e}"),
            None,
        )),
    }
}

/// 2025-11-25 `tools/call` with `task`: starts it, answers its handle.
async fn create(
    shared: &Arc<Shared>,
    params: &Value,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| ErrorData::invalid_params("tools/call needs a string `name`", None))?;
    let input = match params.get("arguments") {
        None | Some(Value::Null) => json!({}),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => {
            return Err(ErrorData::invalid_params(
                "`arguments` must be an object",
                None,
            ))
        }
    };
    let asking = Asking::detached(context);
    let (id, _) = start(shared, name.to_string(), input, asking).await?;
    let status = shared
        .journal
        .status(&CallKey::new(SESSION, &id))
        .ok_or_else(|| ErrorData::internal_error("the new task was not journaled", None))?;
    Ok(json!({"task": describe(shared, &status, Generation::Spec2025)}))
}

fn get(shared: &Shared, id: &str, gen: Generation) -> Result<Value, ErrorData> {
    Ok(describe(shared, &known(shared, id)?, gen))
}

/// 2025-11-25 `tasks/result`: waits for the call's end (or for the
/// request to be cancelled), then answers its result.
async fn result(
    shared: &Shared,
    id: &str,
    context: &RequestContext<RoleServer>,
) -> Result<Value, ErrorData> {
    let key = CallKey::new(SESSION, id);
    let join = shared.journal.join(&key, 0).ok_or_else(|| not_found(id))?;
    let ended = tokio::select! {
        ended = join.ended() => ended,
        _ = context.ct.cancelled() => {
            return Err(ErrorData::new(ErrorCode::INTERNAL_ERROR, "tasks/result was cancelled; the task goes on", None));
        }
    };
    let mut answer = serde_json::to_value(journaled::answer(&key, ended))
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    if let Some(object) = answer.as_object_mut() {
        // A 2025-11-25 peer knows no `resultType`.
        object.remove("resultType");
        let meta = object.entry("_meta").or_insert_with(|| json!({}));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(RELATED_TASK.into(), json!({"taskId": id}));
        }
    }
    Ok(answer)
}

fn list(shared: &Shared, params: &Value, gen: Generation) -> Result<Value, ErrorData> {
    let from = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => c
            .parse::<usize>()
            .map_err(|_| ErrorData::invalid_params(format!("unknown cursor {c:?}"), None))?,
        Some(_) => {
            return Err(ErrorData::invalid_params(
                "the cursor must be a string",
                None,
            ))
        }
    };
    let all = shared.journal.list(SESSION);
    let page: Vec<Value> = all
        .iter()
        .skip(from)
        .take(PAGE)
        .map(|status| describe(shared, status, gen))
        .collect();
    let mut answer = json!({"tasks": page});
    if from + PAGE < all.len() {
        answer["nextCursor"] = json!((from + PAGE).to_string());
    }
    Ok(answer)
}

fn cancel(shared: &Shared, id: &str, gen: Generation) -> Result<Value, ErrorData> {
    let status = known(shared, id)?;
    if gen == Generation::Extension {
        // Cooperative: acknowledged whatever the task's state.
        if status.ended.is_none() {
            shared.tasks.cancel(id);
            shared.journal.cancel(&status.key);
        }
        return Ok(json!({"resultType": "complete"}));
    }
    if status.ended.is_some() || shared.tasks.cancelled(id) {
        let state = describe(shared, &status, gen);
        return Err(ErrorData::invalid_params(
            format!(
                "task {id} has already ended ({}); it cannot be cancelled",
                state["status"].as_str().unwrap_or("?")
            ),
            None,
        ));
    }
    shared.tasks.cancel(id);
    shared.journal.cancel(&status.key);
    Ok(describe(shared, &status, gen))
}

/// SEP-2663 `tasks/update`: the client's answers to the task's questions.
pub(super) fn update(shared: &Shared, params: UpdateTaskParams) -> Result<(), ErrorData> {
    let status = known(shared, &params.task_id)?;
    let Some(questions) = shared.tasks.questions(&params.task_id) else {
        return Err(ErrorData::invalid_params(
            format!("task {} asks no questions", status.key.id),
            None,
        ));
    };
    // Keys not open (answered already) are ignored, as the extension asks.
    for (key, response) in &params.input_responses {
        questions.answer(key, response);
    }
    Ok(())
}

fn task_id(params: &Value) -> Result<String, ErrorData> {
    params
        .get("taskId")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| ErrorData::invalid_params("a string `taskId` is needed", None))
}

fn known(shared: &Shared, id: &str) -> Result<Status, ErrorData> {
    shared
        .journal
        .status(&CallKey::new(SESSION, id))
        .ok_or_else(|| not_found(id))
}

fn not_found(id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("Task not found: {id}"), None)
}
