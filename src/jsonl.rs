//! Events as JSON lines, for hosts in other languages (`baton run
//! --events`, `baton serve`).
//!
//! Each event becomes one object with a `type`; results carry the ready
//! `tool_result` block so a host can forward it to the model untouched.
//! Lines are written, never returned as trees: a call's lines have one
//! renderer ([`crate::jsonl_direct`]) whichever host writes them.

use baton_actors::{BatchSummary, Event};
use serde_json::{json, Map, Value};

use crate::jsonl_direct::{write_call_line, write_result_line, Tags};

/// Writes the JSON line of `event` (no newline) with `tags` (see
/// [`Tags`]). A permission request needs an id the host can answer with:
/// `request_id`. A call's lifecycle and result lines are written straight
/// from the event ([`crate::jsonl_direct`]); the rarer lines are built as
/// trees.
pub fn write_event(
    out: &mut impl std::io::Write,
    event: &Event,
    request_id: Option<u64>,
    tags: &Tags<'_>,
) -> std::io::Result<()> {
    let line = match event {
        Event::Call(call) => return write_call_line(out, call, tags),
        Event::Result { index, result } => {
            return write_result_line(out, Some(*index), result, tags)
        }
        Event::Progress {
            index,
            call_id,
            progress,
        } => {
            let mut line = json!({
                "type": "progress",
                "index": index,
                "tool_use_id": &**call_id,
                "message": progress.message,
            });
            if let Some(data) = &progress.data {
                line["data"] = data.clone();
            }
            line
        }
        Event::PermissionRequest(prompt) => {
            let mut line = json!({
                "type": "permission_request",
                "request_id": request_id,
                "tool_use_id": prompt.request.call_id,
                "tool_name": prompt.request.tool_name,
                "input": prompt.request.input,
                "reason": prompt.request.reason,
                "suggestion": prompt.request.suggestion,
                "summary": prompt.request.summary,
            });
            // A plan to approve (ExitPlanMode) rather than a call to allow:
            // the plan is in `input.plan`; an `approve` with `mode` picks the
            // mode the session continues in.
            if prompt.request.tool_name == "ExitPlanMode" {
                line["kind"] = json!("plan_approval");
            }
            // Asked from inside a nested batch: the call that opened it.
            if let Some(parent) = &prompt.request.parent_call_id {
                line["parent_tool_use_id"] = json!(parent);
            }
            // Asked from inside a subagent: the Agent calls above it.
            if !prompt.request.agent_chain.is_empty() {
                line["agent_chain"] = json!(prompt.request.agent_chain);
            }
            line
        }
        Event::Notification(n) => json!({
            "type": "notification",
            "kind": n.kind,
            "message": n.message,
            "data": n.data,
        }),
        Event::Done(summary) => json!({"type": "done", "summary": summary_json(summary)}),
        // An event kind added to the runtime after this writer: a
        // notification (a line every host already shows) rather than a line
        // type no host knows, or nothing at all.
        other => json!({
            "type": "notification",
            "kind": "unknown_event",
            "message": format!("Baton produced an event this writer does not know: {other:?}"),
        }),
    };
    write_value(out, line, tags)
}

/// Writes the object `line` with `tags` set in it (no newline).
pub fn write_value(
    out: &mut impl std::io::Write,
    mut line: Value,
    tags: &Tags<'_>,
) -> std::io::Result<()> {
    if let Some(map) = line.as_object_mut() {
        for (key, value) in tags {
            map.insert((*key).to_owned(), (*value).clone());
        }
    }
    serde_json::to_writer(out, &line).map_err(std::io::Error::from)
}

/// A batch summary as the JSON object of the `done` line.
pub fn summary_json(summary: &BatchSummary) -> Value {
    json!({
        "calls": summary.calls,
        "interrupted": summary.interrupted.map(|k| match k {
            baton_actors::InterruptKind::Cancel => "cancel",
            baton_actors::InterruptKind::NewMessage => "new_message",
        }),
        "cancelled_by": summary.cancelled_by,
        "stop_turn": summary.stop_turn,
        "additional_context": summary.additional_context,
        "diagnostics": summary.diagnostics,
        "system_messages": summary.system_messages,
    })
}

/// Writes `object` as a `Value` object prints (compact, keys in
/// sorted order) with `raw`, JSON text written as it is, as the value of
/// `key` (in place of any value `object` has there; a value that is no
/// object is taken as an empty one). For lines that carry an
/// answer written by [`baton_engine::wire::AnswerWriter`], so the answer
/// is never parsed back into a tree.
pub fn write_with_raw(
    out: &mut impl std::io::Write,
    object: &Value,
    key: &str,
    raw: &[u8],
) -> std::io::Result<()> {
    let empty = Map::new();
    let map = object.as_object().unwrap_or(&empty);
    let mut first = true;
    let mut entry = |out: &mut dyn std::io::Write, k: &str, v: Result<&Value, &[u8]>| {
        out.write_all(if first { b"{" } else { b"," })?;
        first = false;
        serde_json::to_writer(&mut *out, k)?;
        out.write_all(b":")?;
        match v {
            Ok(value) => serde_json::to_writer(&mut *out, value)?,
            Err(raw) => out.write_all(raw)?,
        }
        std::io::Result::Ok(())
    };
    let mut placed = false;
    for (k, v) in map {
        if !placed && k.as_str() >= key {
            entry(out, key, Err(raw))?;
            placed = true;
        }
        if k != key {
            entry(out, k, Ok(v))?;
        }
    }
    if !placed {
        entry(out, key, Err(raw))?;
    }
    out.write_all(b"}")
}
