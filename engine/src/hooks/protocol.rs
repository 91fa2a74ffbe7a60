//! Claude Code's hook response protocol, shared by every handler type.
//!
//! A handler produces a [`Reply`] (an exit status with stdout and stderr for
//! commands; a status and body for HTTP). Exit 0 may carry a JSON object
//! with decisions; exit 2 blocks with stderr as the reason; anything else is
//! a non-blocking failure, unless the hook says `onFailure: "block"`, in
//! which case a failure blocks like exit 2 (a guard that crashes fails
//! closed).

use serde_json::{Map, Value};

use super::{HookDecision, HookEvent, HookOutcome, PermissionAnswer};

/// What a failing hook does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnFailure {
    /// Report it; the action goes ahead (Claude Code's default).
    #[default]
    Continue,
    /// The failure counts as exit 2: the guarded action is blocked.
    Block,
}

/// How a handler ended.
pub(crate) struct Reply {
    /// 0, 2 or another code; `None` when the handler ended another way
    /// (`how` says which).
    pub code: Option<i32>,
    pub how: String,
    pub stdout: String,
    pub stderr: String,
}

/// One run of a hook as its outcome is reported: the event it ran for, the
/// hook's label and its `onFailure`. A handler says what happened (a
/// reply, a failure) and this turns it into the outcome.
#[derive(Clone, Debug)]
pub struct Run {
    event: HookEvent,
    label: String,
    on_failure: OnFailure,
}

impl Run {
    /// A run of one hook for `event`, named `label` in messages, whose
    /// failure means what `on_failure` says.
    pub fn new(event: HookEvent, label: String, on_failure: OnFailure) -> Run {
        Run {
            event,
            label,
            on_failure,
        }
    }

    /// The event the hook runs for.
    pub fn event(&self) -> HookEvent {
        self.event
    }

    /// What the hook's failure does.
    pub fn on_failure(&self) -> OnFailure {
        self.on_failure
    }

    /// The handler could not give an answer (see [`failed`]).
    pub fn failed(&self, problem: String) -> HookOutcome {
        failed(self.event, &self.label, self.on_failure, problem)
    }

    /// The handler answered (see [`interpret`]).
    pub(crate) fn replied(&self, reply: Reply) -> HookOutcome {
        interpret(self.event, &self.label, self.on_failure, reply)
    }

    /// [`replied`](Self::replied) or [`failed`](Self::failed).
    pub(crate) fn ended(&self, result: Result<Reply, String>) -> HookOutcome {
        match result {
            Ok(reply) => self.replied(reply),
            Err(problem) => self.failed(problem),
        }
    }

    /// Hook output from a handler without an exit status (an MCP tool's
    /// text, a model's answer), read as a command's stdout with exit 0.
    pub fn printed(&self, stdout: String) -> HookOutcome {
        self.replied(Reply {
            code: Some(0),
            how: String::new(),
            stdout,
            stderr: String::new(),
        })
    }
}

/// Reads a finished handler the way Claude Code does.
pub(crate) fn interpret(
    event: HookEvent,
    label: &str,
    on_failure: OnFailure,
    reply: Reply,
) -> HookOutcome {
    let stderr = reply.stderr.trim();
    match reply.code {
        Some(0) => read_json(event, label, on_failure, &reply.stdout),
        Some(2) => {
            let reason = if !stderr.is_empty() {
                stderr.to_string()
            } else if !reply.stdout.trim().is_empty() {
                reply.stdout.trim().to_string()
            } else {
                format!("hook `{label}` exited with status 2 and gave no reason")
            };
            block(event, reason)
        }
        _ => {
            let said = if stderr.is_empty() {
                String::new()
            } else {
                format!(": {}", first_lines(stderr))
            };
            failed(event, label, on_failure, format!("{}{said}", reply.how))
        }
    }
}

/// A handler that could not run or answer properly.
pub(crate) fn failed(
    event: HookEvent,
    label: &str,
    on_failure: OnFailure,
    problem: String,
) -> HookOutcome {
    // Claude Code ignores onFailure where a block would keep a finished
    // agent going: a broken hook must not loop it forever.
    let on_failure = match event {
        HookEvent::Stop
        | HookEvent::SubagentStop
        | HookEvent::TaskCompleted
        | HookEvent::TeammateIdle => OnFailure::Continue,
        _ => on_failure,
    };
    match on_failure {
        OnFailure::Continue => HookOutcome::error(format!(
            "{} hook `{label}` {problem}; this is not a blocking error, so the call went on",
            event.as_str()
        )),
        OnFailure::Block => {
            let mut out = block(
                event,
                format!(
                    "{} hook `{label}` {problem}, and it is configured with onFailure: block",
                    event.as_str()
                ),
            );
            out.errors.push(format!(
                "{} hook `{label}` {problem}; it blocked (onFailure: block)",
                event.as_str()
            ));
            out
        }
    }
}

/// A blocking answer (exit 2, `decision: block`), as each event reads it.
pub(crate) fn block(event: HookEvent, reason: String) -> HookOutcome {
    let mut out = HookOutcome::default();
    match event {
        HookEvent::PreToolUse => {
            out.decision = Some(HookDecision::Deny);
            out.reason = Some(reason);
        }
        HookEvent::PermissionRequest => {
            out.permission = Some(PermissionAnswer::Deny {
                message: Some(reason),
                interrupt: false,
            });
        }
        HookEvent::PostToolUse | HookEvent::PostToolUseFailure | HookEvent::PostToolBatch => {
            out.feedback = Some(reason)
        }
        // Prompt, stop and other events: a host reads `decision: Deny` as
        // "block" (reject the prompt, keep the model going…).
        _ => {
            out.decision = Some(HookDecision::Deny);
            out.reason = Some(reason);
        }
    }
    out
}

fn first_lines(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().take(5).collect();
    if text.lines().count() > 5 {
        lines.push("…");
    }
    lines.join("\n")
}

fn text_of(obj: &Map<String, Value>, key: &str) -> Option<String> {
    obj.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Exit 0: stdout may be a JSON object with decisions. Plain text is
/// context for the model after SessionStart and UserPromptSubmit (as in
/// Claude Code, where many hooks just `cat` a file or `echo` a reminder);
/// for other events it is only for the transcript and is ignored here.
fn read_json(event: HookEvent, label: &str, on_failure: OnFailure, stdout: &str) -> HookOutcome {
    let text = stdout.trim();
    if !(text.starts_with('{') || text.starts_with('[')) {
        let mut out = HookOutcome::default();
        if matches!(event, HookEvent::SessionStart | HookEvent::UserPromptSubmit)
            && !text.is_empty()
        {
            out.additional_context.push(text.to_string());
        }
        return out;
    }
    let obj: Map<String, Value> = match serde_json::from_str(text) {
        Ok(Value::Object(obj)) => obj,
        Ok(_) => {
            return failed(
                event,
                label,
                on_failure,
                "printed JSON that is not an object".into(),
            )
        }
        Err(e) => {
            return failed(
                event,
                label,
                on_failure,
                format!("printed invalid JSON on stdout ({e})"),
            )
        }
    };
    let mut out = HookOutcome::default();
    let mut problems = Vec::new();
    let system_message = text_of(&obj, "systemMessage");
    if let Some(message) = &system_message {
        out.system_messages.push(message.clone());
    }
    if obj.get("continue") == Some(&Value::Bool(false)) {
        out.stop = Some(
            text_of(&obj, "stopReason")
                .unwrap_or_else(|| format!("a {} hook ended the turn", event.as_str())),
        );
    }
    let specific = match obj.get("hookSpecificOutput") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(s)) => s.clone(),
        Some(_) => {
            problems.push("returned a hookSpecificOutput that is not an object".to_string());
            Map::new()
        }
    };
    // A block without a reason shows what the hook did say.
    let reason = text_of(&obj, "reason")
        .or_else(|| text_of(&specific, "permissionDecisionReason"))
        .or_else(|| system_message.clone())
        .or_else(|| text_of(&obj, "stopReason"));
    match obj.get("decision") {
        None | Some(Value::Null) => {}
        Some(Value::String(d)) if d == "block" => {
            let reason =
                reason.unwrap_or_else(|| format!("hook `{label}` blocked and gave no reason"));
            out = out.merge(block(event, reason));
        }
        Some(Value::String(d)) if d == "approve" => {
            if event == HookEvent::PreToolUse {
                out.decision = Some(HookDecision::Allow);
                out.reason = reason;
            }
        }
        Some(other) => problems.push(format!("returned an unknown decision {other}")),
    }
    read_specific(event, &specific, &mut out, &mut problems);
    out.elicitation = super::elicitation::read(event, &specific, &mut problems);
    for problem in problems {
        out = out.merge(failed(
            event,
            label,
            on_failure,
            format!("{problem}; that part of its output was ignored"),
        ));
    }
    out
}

fn read_specific(
    event: HookEvent,
    specific: &Map<String, Value>,
    out: &mut HookOutcome,
    problems: &mut Vec<String>,
) {
    let pre = event == HookEvent::PreToolUse;
    let reason = text_of(specific, "permissionDecisionReason");
    match specific.get("permissionDecision") {
        None | Some(Value::Null) => {}
        Some(_) if !pre => {
            problems.push("returned permissionDecision, which only PreToolUse hooks may".into())
        }
        Some(Value::String(d)) => {
            let decision = match d.as_str() {
                "allow" => Some(HookDecision::Allow),
                // `defer`: the host's approver decides, told the hook's reason.
                "ask" | "defer" => Some(HookDecision::Ask),
                "deny" => Some(HookDecision::Deny),
                _ => None,
            };
            match decision {
                Some(d) if Some(d) > out.decision || out.decision.is_none() => {
                    out.decision = Some(d);
                    out.reason = reason;
                }
                Some(_) => {}
                None => problems.push(format!(
                    "returned permissionDecision `{d}` (expected allow, ask, deny or defer)"
                )),
            }
        }
        Some(other) => problems.push(format!("returned permissionDecision {other}")),
    }
    match specific.get("updatedInput") {
        None | Some(Value::Null) => {}
        Some(Value::Object(_)) if !pre => {}
        Some(input @ Value::Object(_)) => out.updated_input = Some(input.clone()),
        Some(_) => problems.push("returned an updatedInput that is not an object".into()),
    }
    match specific.get("additionalContext") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) if !text.trim().is_empty() => {
            out.additional_context.push(text.clone())
        }
        Some(Value::String(_)) => {}
        Some(_) => problems.push("returned an additionalContext that is not text".into()),
    }
    if event == HookEvent::PostToolUse {
        let replacement = specific
            .get("updatedToolOutput")
            .or_else(|| specific.get("updatedMCPToolOutput"));
        if let Some(value) = replacement.filter(|v| !v.is_null()) {
            out.updated_output = Some(value.clone());
        }
    }
    if event == HookEvent::PermissionDenied && specific.get("retry") == Some(&Value::Bool(true)) {
        out.retry = true;
    }
    if event == HookEvent::PermissionRequest {
        match specific.get("decision") {
            None | Some(Value::Null) => {}
            Some(Value::Object(d)) => match d.get("behavior").and_then(Value::as_str) {
                Some("allow") => {
                    let updated_input = match d.get("updatedInput") {
                        None | Some(Value::Null) => None,
                        Some(v @ Value::Object(_)) => Some(v.clone()),
                        Some(_) => {
                            problems.push("returned an updatedInput that is not an object".into());
                            return;
                        }
                    };
                    let updated_permissions = match d.get("updatedPermissions") {
                        None | Some(Value::Null) => Vec::new(),
                        Some(Value::Array(items)) => items.clone(),
                        Some(_) => {
                            problems.push("returned updatedPermissions that is not a list".into());
                            return;
                        }
                    };
                    out.permission = Some(PermissionAnswer::Allow {
                        updated_input,
                        updated_permissions,
                    });
                }
                Some("deny") => {
                    out.permission = Some(PermissionAnswer::Deny {
                        message: text_of(d, "message"),
                        interrupt: d.get("interrupt") == Some(&Value::Bool(true)),
                    })
                }
                _ => {
                    problems.push("returned a decision whose behavior is not allow or deny".into())
                }
            },
            Some(_) => problems.push("returned a decision that is not an object".into()),
        }
    }
}
