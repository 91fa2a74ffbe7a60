//! Events as JSON lines, for hosts in other languages (`baton run
//! --events`, `baton serve`).
//!
//! Each event becomes one object with a `type`; results carry the ready
//! `tool_result` block so a host can forward it to the model untouched.

use baton_actors::{BatchSummary, Event};
use baton_engine::wire::anthropic;
use baton_engine::CallResult;
use serde_json::{json, Map, Value};

/// The JSON line of `event`. A permission request needs an id the host can
/// answer with: `request_id`.
pub fn event_json(event: &Event, request_id: Option<u64>) -> Value {
    match event {
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
        Event::Result { index, result } => result_json(*index, result),
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
        Event::Call(call) => call_json(call),
    }
}

/// A lifecycle line: `call_queued` (with `tool`), `call_started`,
/// `call_waiting_approval`, `call_finished` (with `outcome` and
/// `duration_ms`). `index` is absent where unknown.
pub fn call_json(call: &baton_actors::CallEvent) -> Value {
    let mut line = json!({
        "type": call.state.wire_name(),
        "tool_use_id": &*call.call_id,
    });
    if let Some(index) = call.index {
        line["index"] = json!(index);
    }
    match &call.state {
        baton_actors::CallState::Queued { tool } => line["tool"] = json!(tool),
        baton_actors::CallState::Finished { outcome, duration } => {
            line["outcome"] = json!(outcome);
            line["duration_ms"] = json!(duration.as_secs_f64() * 1000.0);
        }
        _ => {}
    }
    line
}

pub fn result_json(index: usize, result: &CallResult) -> Value {
    let mut line = result_json_without_block(index, result);
    line["block"] = anthropic::tool_result_block(result);
    line
}

/// [`result_json`] without its `block`, for writers that write the block
/// straight from the result ([`baton_engine::wire::answer::write_tool_result_block`]
/// and [`write_with_raw`]) instead of building its tree.
pub fn result_json_without_block(index: usize, result: &CallResult) -> Value {
    let mut line = json!({
        "type": "result",
        "index": index,
        "tool_use_id": result.call_id,
        "outcome": result.outcome,
        "diagnostics": result.diagnostics,
    });
    // Facts for the host beside the block (duration, spill file, files
    // written); the block itself is unchanged.
    if !result.details.is_empty() {
        line["details"] = json!(result.details);
    }
    // Hook `systemMessage`s: for the user, never sent to the model.
    if !result.system_messages.is_empty() {
        line["system_messages"] = json!(result.system_messages);
    }
    line
}

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

/// PostToolBatch hooks' context as text blocks after the tool results, the
/// way Claude Code adds it to the user message.
pub fn batch_context_blocks(summary: &BatchSummary) -> Vec<Value> {
    summary
        .additional_context
        .iter()
        .map(|text| json!({"type": "text", "text": text}))
        .collect()
}

/// The user message of `results` plus the batch's hook context.
pub fn user_message_with_context<'a>(
    results: impl Iterator<Item = &'a CallResult>,
    summary: &BatchSummary,
) -> Value {
    let mut message = anthropic::user_message(results);
    if let Some(content) = message["content"].as_array_mut() {
        content.extend(batch_context_blocks(summary));
    }
    message
}

/// The results message of `results` in `format`; an Anthropic message also
/// carries the batch's PostToolBatch hook context (other formats have no
/// place for it beside the tool outputs).
pub fn results_message_with_context<'a>(
    format: baton_engine::wire::WireFormat,
    calls: &Value,
    results: impl Iterator<Item = &'a CallResult>,
    summary: &BatchSummary,
) -> Value {
    match format {
        baton_engine::wire::WireFormat::Anthropic => user_message_with_context(results, summary),
        other => other.answer(calls, results),
    }
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
