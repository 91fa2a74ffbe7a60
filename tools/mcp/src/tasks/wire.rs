//! The messages of both task generations, and reading a task's state from
//! either.
//!
//! - **2025-11-25** (the core protocol of that version): the client adds
//!   `task: {ttl}` to `tools/call`'s params; the answer is
//!   `{task: {taskId, status, statusMessage, ttl, pollInterval, …}}`;
//!   `tasks/get` answers the bare task; the tool's result comes from
//!   `tasks/result`, which blocks until the task is over.
//! - **SEP-2663** (the `io.modelcontextprotocol/tasks` extension of
//!   2026-07-28, what rmcp's types model): the server alone decides; its
//!   answer to a plain `tools/call` is `{resultType: "task", taskId, …,
//!   ttlMs, pollIntervalMs}`, and `tasks/get` carries the result (or the
//!   JSON-RPC error) inline once the task is over.
//!
//! Both name `tasks/get` and `tasks/cancel` the same way (`{taskId}`).
//! rmcp decodes a 2025-11-25 answer as whatever of its types fits (a
//! working task as its `GetTaskResult`, without the 2025 field names; the
//! rest as raw JSON), so states are read from the answer turned back into
//! JSON, under either generation's field names.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CancelTaskParams, CancelTaskRequest, ClientRequest, CustomRequest,
    GetTaskParams, GetTaskRequest, InputResponses, ServerResult, UpdateTaskParams,
    UpdateTaskRequest,
};
use serde_json::{json, Value};

/// Which protocol generation a task belongs to (how it was created).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Generation {
    /// Protocol 2025-11-25: the result comes from `tasks/result`.
    Spec2025,
    /// The SEP-2663 extension: the result comes inline in `tasks/get`.
    Extension,
}

/// A task's status (both generations use the same five).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    Working,
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    fn parse(text: &str) -> Option<Status> {
        Some(match text {
            "working" => Status::Working,
            "input_required" => Status::InputRequired,
            "completed" => Status::Completed,
            "failed" => Status::Failed,
            "cancelled" => Status::Cancelled,
            _ => return None,
        })
    }

    pub(crate) fn label(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::InputRequired => "input_required",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }
}

/// What a server said about a task at one moment.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TaskState {
    pub id: String,
    pub status: Status,
    pub message: Option<String>,
    /// The server's suggested polling interval.
    pub poll: Option<Duration>,
    /// SEP-2663, `completed`: the tool's result.
    pub result: Option<Value>,
    /// SEP-2663, `failed`: the JSON-RPC error.
    pub error: Option<Value>,
    /// SEP-2663, `input_required`: the server's questions, by key.
    pub input_requests: Option<Value>,
}

impl TaskState {
    /// A task object under either generation's field names.
    fn from_task(task: &Value) -> Option<TaskState> {
        let id = task.get("taskId")?.as_str()?.to_string();
        let status = Status::parse(task.get("status")?.as_str()?)?;
        let poll = task
            .get("pollIntervalMs")
            .or_else(|| task.get("pollInterval"))
            .and_then(Value::as_u64)
            .map(Duration::from_millis);
        Some(TaskState {
            id,
            status,
            message: task
                .get("statusMessage")
                .and_then(Value::as_str)
                .map(str::to_string),
            poll,
            result: task.get("result").filter(|r| r.is_object()).cloned(),
            error: task.get("error").filter(|e| e.is_object()).cloned(),
            input_requests: task.get("inputRequests").filter(|e| e.is_object()).cloned(),
        })
    }
}

/// The task a `tools/call` answer created, if it created one.
pub(crate) fn created(answer: &ServerResult) -> Option<(Generation, TaskState)> {
    match answer {
        ServerResult::CreateTaskResult(created) => {
            let value = serde_json::to_value(created).ok()?;
            Some((Generation::Extension, TaskState::from_task(&value)?))
        }
        ServerResult::CustomResult(raw) => {
            let task = raw.0.get("task")?;
            Some((Generation::Spec2025, TaskState::from_task(task)?))
        }
        _ => None,
    }
}

/// A task's state from a `tasks/get` answer.
pub(crate) fn state_of(answer: &ServerResult) -> Option<TaskState> {
    let value = match answer {
        ServerResult::CustomResult(raw) => raw.0.clone(),
        other => serde_json::to_value(other).ok()?,
    };
    TaskState::from_task(&value)
}

/// `tools/call` with `params`, augmented with a task (2025-11-25) that the
/// server keeps for `ttl`. rmcp's request type has no `task` field, so it
/// goes out as a request of its own with the same method.
pub(crate) fn augmented_call(params: &CallToolRequestParams, ttl: Duration) -> ClientRequest {
    let mut body = json!({
        "name": params.name,
        "task": {"ttl": u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)},
    });
    if let Some(arguments) = &params.arguments {
        body["arguments"] = Value::Object(arguments.clone());
    }
    ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(body)))
}

pub(crate) fn get(id: &str) -> ClientRequest {
    ClientRequest::GetTaskRequest(GetTaskRequest::new(GetTaskParams::new(id)))
}

/// `tasks/result` (2025-11-25 only).
pub(crate) fn result(id: &str) -> ClientRequest {
    ClientRequest::CustomRequest(CustomRequest::new(
        "tasks/result",
        Some(json!({"taskId": id})),
    ))
}

/// `tasks/update` with answers to the server's questions (SEP-2663 only).
pub(crate) fn update(id: &str, answers: InputResponses) -> ClientRequest {
    ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(UpdateTaskParams::new(id, answers)))
}

pub(crate) fn cancel(id: &str) -> ClientRequest {
    ClientRequest::CancelTaskRequest(CancelTaskRequest::new(CancelTaskParams::new(id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decoded(v: Value) -> ServerResult {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_2025_create_answer_is_a_task_of_that_generation() {
        let answer = decoded(json!({"task": {
            "taskId": "t1", "status": "working", "statusMessage": "queued",
            "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:30:00Z",
            "ttl": 60000, "pollInterval": 250,
        }}));
        let (generation, state) = created(&answer).unwrap();
        assert_eq!(generation, Generation::Spec2025);
        assert_eq!(state.id, "t1");
        assert_eq!(state.status, Status::Working);
        assert_eq!(state.message.as_deref(), Some("queued"));
        assert_eq!(state.poll, Some(Duration::from_millis(250)));
    }

    #[test]
    fn an_extension_create_answer_is_a_task_of_that_generation() {
        let answer = decoded(json!({
            "resultType": "task", "taskId": "t2", "status": "working",
            "createdAt": "2026-07-28T10:30:00Z", "lastUpdatedAt": "2026-07-28T10:30:00Z",
            "ttlMs": null, "pollIntervalMs": 1500,
        }));
        let (generation, state) = created(&answer).unwrap();
        assert_eq!(generation, Generation::Extension);
        assert_eq!(state.poll, Some(Duration::from_millis(1500)));
    }

    #[test]
    fn a_plain_result_is_no_task() {
        let answer = decoded(json!({"content": [{"type": "text", "text": "hi"}]}));
        assert!(created(&answer).is_none());
    }

    #[test]
    fn get_answers_of_both_generations_are_read() {
        let base = json!({"taskId": "t", "createdAt": "x", "lastUpdatedAt": "x"});
        let with = |extra: Value| {
            let mut v = base.clone();
            v.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            state_of(&decoded(v)).unwrap()
        };
        let working = with(json!({"status": "working", "statusMessage": "step 2", "ttl": 1}));
        assert_eq!(
            (working.status, working.message.as_deref()),
            (Status::Working, Some("step 2"))
        );
        let done = with(json!({"status": "completed", "ttl": 1, "pollInterval": 10}));
        assert_eq!((done.status, done.result), (Status::Completed, None));
        let inline = with(json!({"status": "completed", "ttlMs": 1,
            "result": {"content": [{"type": "text", "text": "ok"}]}}));
        assert!(inline.result.is_some());
        let failed = with(json!({"status": "failed", "ttlMs": 1,
            "error": {"code": -32603, "message": "boom"}}));
        assert_eq!(failed.error.unwrap()["message"], "boom");
        assert_eq!(
            with(json!({"status": "cancelled"})).status,
            Status::Cancelled
        );
    }

    #[test]
    fn the_augmented_call_carries_the_task_and_arguments() {
        let mut params = CallToolRequestParams::new("slow");
        params.arguments = Some(json!({"n": 1}).as_object().unwrap().clone());
        let request = augmented_call(&params, Duration::from_secs(90));
        let wire = serde_json::to_value(&request).unwrap();
        assert_eq!(wire["method"], "tools/call");
        assert_eq!(wire["params"]["name"], "slow");
        assert_eq!(wire["params"]["arguments"]["n"], 1);
        assert_eq!(wire["params"]["task"]["ttl"], 90_000);
    }
}
