//! A task's state as `tasks/get` and `tasks/list` show it, in the shape of
//! either generation.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use baton_engine::Outcome;
use baton_journal::{Ended, Status};
use rmcp::model::ProtocolVersion;
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde_json::{json, Map, Value};

use super::POLL_MS;
use crate::mcp_server::{journaled, results, Shared};

/// Which shape an answer takes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Generation {
    Spec2025,
    Extension,
}

pub(super) fn generation(context: &RequestContext<RoleServer>) -> Generation {
    let modern = context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    if modern {
        Generation::Extension
    } else {
        Generation::Spec2025
    }
}

/// A task as `tasks/get` and `tasks/list` show it, in `gen`'s shape.
pub(super) fn describe(shared: &Shared, status: &Status, gen: Generation) -> Value {
    let id = &status.key.id;
    let cancelled = shared.tasks.cancelled(id);
    if status.ended.is_some() {
        shared.tasks.set_questions(id, None);
    }
    let mut payload = None;
    let (state, message) = match &status.ended {
        None if cancelled => ("cancelled", Some("cancelled by request".to_string())),
        None => {
            let asked = match gen {
                Generation::Extension => shared.tasks.questions(id).and_then(|q| q.requests()),
                Generation::Spec2025 => None,
            };
            match asked {
                Some(requests) => {
                    payload = Some(("inputRequests", requests));
                    ("input_required", Some("waiting for approval".to_string()))
                }
                None => (
                    "working",
                    Some(status.last_output.1.clone()).filter(|m| !m.is_empty()),
                ),
            }
        }
        Some(Ended::Finished(result)) => {
            let meta = result.get("_meta").and_then(Value::as_object);
            let stopped = matches!(
                results::outcome_from_meta(meta),
                Some(Outcome::Cancelled { .. })
            );
            let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
            if cancelled || stopped {
                ("cancelled", first_text(result))
            } else if is_error && gen == Generation::Spec2025 {
                // 2025-11-25 counts a tool's error result as a failed task.
                ("failed", first_text(result))
            } else {
                payload = Some(("result", without_result_type(result)));
                ("completed", None)
            }
        }
        Some(ended @ (Ended::Lost(_) | Ended::Pruned)) => {
            let answer = journaled::answer(&status.key, ended.clone());
            let text = serde_json::to_value(&answer)
                .ok()
                .and_then(|v| first_text(&v));
            let message = text.unwrap_or_else(|| "the task ended without a result".into());
            payload = Some(("error", json!({"code": -32603, "message": message})));
            ("failed", Some(message))
        }
    };
    let mut task = Map::new();
    task.insert("taskId".into(), json!(id));
    task.insert("status".into(), json!(state));
    if let Some(message) = message {
        task.insert("statusMessage".into(), json!(cut(&message, 1000)));
    }
    let created = UNIX_EPOCH + Duration::from_millis(status.received_at);
    task.insert("createdAt".into(), json!(crate::timestamp::millis(created)));
    task.insert("lastUpdatedAt".into(), json!(rfc3339_now()));
    match gen {
        Generation::Spec2025 => {
            task.insert("ttl".into(), Value::Null);
            task.insert("pollInterval".into(), json!(POLL_MS));
        }
        Generation::Extension => {
            task.insert("resultType".into(), json!("complete"));
            task.insert("ttlMs".into(), Value::Null);
            task.insert("pollIntervalMs".into(), json!(POLL_MS));
            if let Some((key, value)) = payload {
                task.insert(key.into(), value);
            }
        }
    }
    Value::Object(task)
}

fn first_text(result: &Value) -> Option<String> {
    result
        .get("content")?
        .as_array()?
        .iter()
        .find_map(|c| c.get("text").and_then(Value::as_str))
        .map(str::to_string)
}

fn without_result_type(result: &Value) -> Value {
    let mut result = result.clone();
    if let Some(object) = result.as_object_mut() {
        object.remove("resultType");
    }
    result
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

pub(super) fn rfc3339_now() -> String {
    crate::timestamp::millis(SystemTime::now())
}
