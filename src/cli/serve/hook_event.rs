//! The `hook_event` line: the host fires an event of its own model loop
//! (a prompt was submitted, the model stopped, a notification…) through
//! the session's configured hooks, and gets one `hook_event_result` line
//! with what they decided.
//!
//! The hooks run through [`baton::Engine::fire_hook`], the same runner as
//! SessionStart/SessionEnd and the engine's own events, so matchers,
//! timeouts, plain-stdout context and `decision: block` read the same way
//! everywhere. The event's own fields are checked against Claude Code's
//! input types (`sdk.d.ts`); the common ones (`session_id`, `cwd`,
//! `transcript_path`, `permission_mode`, `hook_event_name`) are Baton's to
//! fill, so a line that sets them is refused. Hooks run on a task of their
//! own: a prompt hook asks the host (`hook_request`) and its answer must
//! be able to arrive while the event waits.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::sync::Notify;

use baton::engine::hooks::{HookDecision, HookEvent, HookOutcome};
use baton::Engine;
use serde_json::{json, Map, Value};

/// The events a host may fire, and what may come in their input.
const EVENTS: &[(HookEvent, &[Field])] = &[
    (
        HookEvent::UserPromptSubmit,
        &[
            ("prompt", Kind::Text, true),
            (
                "source",
                Kind::OneOf(&[
                    "user",
                    "sdk",
                    "system",
                    "loop_wakeup",
                    "schedule_wakeup",
                    "poll_event",
                ]),
                false,
            ),
            ("session_title", Kind::Text, false),
        ],
    ),
    (
        HookEvent::UserPromptExpansion,
        &[
            (
                "expansion_type",
                Kind::OneOf(&["slash_command", "mcp_prompt"]),
                true,
            ),
            ("command_name", Kind::Text, true),
            ("command_args", Kind::Text, true),
            ("command_source", Kind::Text, false),
            ("prompt", Kind::Text, true),
        ],
    ),
    (
        HookEvent::Stop,
        &[
            ("stop_hook_active", Kind::Bool, true),
            ("last_assistant_message", Kind::Text, false),
            ("background_tasks", Kind::List, false),
            ("session_crons", Kind::List, false),
        ],
    ),
    (
        HookEvent::SubagentStop,
        &[
            ("stop_hook_active", Kind::Bool, true),
            ("agent_id", Kind::Text, true),
            ("agent_transcript_path", Kind::Text, true),
            ("agent_type", Kind::Text, true),
            ("last_assistant_message", Kind::Text, false),
            ("background_tasks", Kind::List, false),
            ("session_crons", Kind::List, false),
        ],
    ),
    (
        HookEvent::Notification,
        &[
            ("message", Kind::Text, true),
            ("title", Kind::Text, false),
            ("notification_type", Kind::Text, true),
        ],
    ),
    (
        HookEvent::PreCompact,
        &[
            ("trigger", Kind::OneOf(&["manual", "auto"]), true),
            ("custom_instructions", Kind::TextOrNull, true),
        ],
    ),
    (
        HookEvent::ConfigChange,
        &[
            (
                "source",
                Kind::OneOf(&[
                    "user_settings",
                    "project_settings",
                    "local_settings",
                    "policy_settings",
                    "skills",
                ]),
                true,
            ),
            ("file_path", Kind::Text, false),
        ],
    ),
    (
        HookEvent::Setup,
        &[("trigger", Kind::OneOf(&["init", "maintenance"]), true)],
    ),
];

/// A field: its name, what it holds, whether it is required.
type Field = (&'static str, Kind, bool);

#[derive(Clone, Copy)]
enum Kind {
    Text,
    TextOrNull,
    Bool,
    List,
    OneOf(&'static [&'static str]),
}

/// The names of the events the line accepts (for errors and docs).
pub(super) fn event_names() -> Vec<&'static str> {
    EVENTS.iter().map(|(e, _)| e.as_str()).collect()
}

/// The event and its checked fields, or why the line is refused.
pub(super) fn parse(msg: &Value) -> Result<(HookEvent, Map<String, Value>), String> {
    let name = msg.get("event").and_then(Value::as_str).unwrap_or("");
    let (event, fields) = EVENTS
        .iter()
        .find(|(e, _)| e.as_str() == name)
        .ok_or_else(|| {
            format!(
                "hook_event: `{name}` cannot be fired by the host (expected one of: {})",
                event_names().join(", ")
            )
        })?;
    let input = match msg.get("input") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(_) => return Err("hook_event: `input` must be an object".into()),
    };
    for key in input.keys() {
        if !fields.iter().any(|(f, _, _)| f == key) {
            return Err(format!(
                "hook_event: {name} has no input field `{key}` (Baton fills session_id, cwd, \
                 transcript_path and permission_mode itself; {name} takes: {})",
                fields
                    .iter()
                    .map(|(f, _, _)| *f)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    for (field, kind, required) in fields.iter() {
        match input.get(*field) {
            None if *required => {
                return Err(format!("hook_event: {name} needs `{field}` in `input`"))
            }
            None => {}
            Some(value) if fits(*kind, value) => {}
            Some(value) => {
                return Err(format!(
                    "hook_event: {name} `{field}` must be {}, not {value}",
                    describe(*kind)
                ))
            }
        }
    }
    Ok((*event, input))
}

fn fits(kind: Kind, value: &Value) -> bool {
    match kind {
        Kind::Text => value.is_string(),
        Kind::TextOrNull => value.is_string() || value.is_null(),
        Kind::Bool => value.is_boolean(),
        Kind::List => value.is_array(),
        Kind::OneOf(options) => value.as_str().is_some_and(|v| options.contains(&v)),
    }
}

fn describe(kind: Kind) -> String {
    match kind {
        Kind::Text => "a string".into(),
        Kind::TextOrNull => "a string or null".into(),
        Kind::Bool => "true or false".into(),
        Kind::List => "an array".into(),
        Kind::OneOf(options) => format!("one of {}", options.join(", ")),
    }
}

/// The answer line for an outcome of `event`.
pub(super) fn result_line(id: Option<&Value>, event: HookEvent, outcome: &HookOutcome) -> Value {
    let block = outcome.decision == Some(HookDecision::Deny);
    let mut line = json!({
        "type": "hook_event_result",
        "event": event.as_str(),
        "decision": if block { "block" } else { "continue" },
        "reason": if block { outcome.reason.clone() } else { None },
        "additional_context": outcome.additional_context,
        "system_messages": outcome.system_messages,
        "stop": outcome.stop,
        "diagnostics": outcome.errors,
    });
    if let Some(id) = id {
        line["id"] = id.clone();
    }
    line
}

/// Events still running, so the session does not end under them.
#[derive(Clone, Default)]
pub(super) struct HookEvents {
    running: Arc<AtomicUsize>,
    /// Signalled each time one ends, so that a session waiting to end
    /// looks again (its loop otherwise wakes only for lines and events).
    ended: Arc<Notify>,
}

impl HookEvents {
    pub(super) fn is_idle(&self) -> bool {
        self.running.load(Ordering::SeqCst) == 0
    }

    /// Resolves after an event ended (at once if one ended since the last
    /// call).
    pub(super) async fn ended(&self) {
        self.ended.notified().await
    }

    /// Handles a `hook_event` line: checks it now, runs its hooks on a
    /// task, and writes the result line when they are done.
    pub(super) fn fire(&self, engine: &Engine, msg: &Value) -> Result<(), String> {
        let (event, fields) = parse(msg)?;
        let id = msg.get("id").cloned();
        let engine = engine.clone();
        let running = Running::start(self);
        tokio::spawn(async move {
            let outcome = engine.fire_hook(event, fields).await;
            let line = result_line(id.as_ref(), event, &outcome);
            if let Err(e) = super::output::write_line(&line) {
                eprintln!("baton: hook_event_result: {e}");
            }
            drop(running);
        });
        Ok(())
    }
}

/// Counts one running event until dropped (also when its task panics),
/// after its answer line was written.
struct Running(HookEvents);

impl Running {
    fn start(events: &HookEvents) -> Self {
        events.running.fetch_add(1, Ordering::SeqCst);
        Running(events.clone())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
        // A stored permit if nobody waits yet: the wake-up is never lost.
        self.0.ended.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_held_to_claude_codes_types() {
        let ok =
            json!({"type": "hook_event", "event": "Stop", "input": {"stop_hook_active": false}});
        assert_eq!(parse(&ok).unwrap().0, HookEvent::Stop);
        for bad in [
            json!({"event": "PreToolUse", "input": {}}),
            json!({"event": "SessionStart", "input": {"source": "startup"}}),
            json!({"event": "UserPromptSubmit", "input": {}}),
            json!({"event": "UserPromptSubmit", "input": {"prompt": 3}}),
            json!({"event": "UserPromptSubmit", "input": {"prompt": "x", "cwd": "/etc"}}),
            json!({"event": "PreCompact", "input": {"trigger": "now", "custom_instructions": null}}),
            json!({"event": "Setup", "input": {"trigger": "init", "extra": 1}}),
            json!({"event": "Stop", "input": "x"}),
        ] {
            assert!(parse(&bad).is_err(), "{bad}");
        }
        let pre = json!({"event": "PreCompact", "input": {"trigger": "auto", "custom_instructions": null}});
        assert!(parse(&pre).is_ok());
    }
}
