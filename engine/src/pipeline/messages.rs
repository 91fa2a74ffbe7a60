//! Every text Baton itself writes into a result.
//!
//! Each says what happened and what the model can do next. Errors Baton
//! detects are wrapped in `<tool_use_error>`, the convention models are
//! trained on; permission denials and a tool's own failures are plain text.

use crate::permission::Unasked;
use baton_tool::cancel::CancelReason;
use baton_tool::schema::SchemaProblem;

/// `text` inside `<tool_use_error>`, the tag models read as a failed call.
pub fn wrap(text: &str) -> String {
    format!("<tool_use_error>{text}</tool_use_error>")
}

/// A call reusing an id of an earlier call of the same message.
pub fn duplicate_id(id: &str) -> String {
    wrap(&format!(
        "The id `{id}` is already used by an earlier tool call of this message, so this \
         call was not run. Give every tool call of a message its own id."
    ))
}

/// A call of a tool the pool does not have.
pub fn unknown_tool(name: &str) -> String {
    wrap(&format!(
        "There is no tool named `{name}`. Call one of the tools listed in your tool definitions, spelled exactly as listed."
    ))
}

/// An input that does not match the tool's schema (or was not JSON):
/// every problem listed, and for a deferred tool, how to load it.
pub fn invalid_input(
    tool: &str,
    problems: &[SchemaProblem],
    json_error: Option<&str>,
    deferred_hint: bool,
) -> String {
    let mut text = String::new();
    if let Some(err) = json_error {
        text.push_str(&format!(
            "The input for `{tool}` was not valid JSON ({err}), so it was read as {{}}.\n"
        ));
    }
    text.push_str(&format!(
        "The input for `{tool}` does not match its schema:\n"
    ));
    for p in problems {
        text.push_str(&format!("- {p}\n"));
    }
    text.push_str("Fix every problem listed and call the tool again.");
    if deferred_hint {
        text.push_str(&format!(
            "\n`{tool}` is a deferred tool whose definition you have not loaded yet: call ToolSearch with query \"select:{tool}\" first, then call it with the parameters its definition gives."
        ));
    }
    wrap(&text)
}

/// The tool's own `validate_input` rejected the input.
pub fn validation_failed(tool: &str, message: &str) -> String {
    wrap(&format!("`{tool}` rejected its input: {message}"))
}

/// A PreToolUse hook rewrote the input into one the schema rejects.
pub fn hook_rewrite_invalid(tool: &str, problems: &[SchemaProblem]) -> String {
    let list: Vec<String> = problems.iter().map(|p| format!("- {p}")).collect();
    wrap(&format!(
        "A PreToolUse hook rewrote the input of `{tool}` into one that does not match its schema, so the call did not run:\n{}",
        list.join("\n")
    ))
}

/// A PreToolUse hook blocked the call.
pub fn hook_denied(tool: &str, reason: Option<&str>) -> String {
    match reason {
        Some(r) if !r.trim().is_empty() => {
            format!("A PreToolUse hook blocked this `{tool}` call: {}", r.trim())
        }
        _ => format!("A PreToolUse hook blocked this `{tool}` call and gave no reason."),
    }
}

/// A PermissionRequest hook's denial (named as such: the model and the
/// user look for the hook that said no).
pub fn permission_hook_denied(tool: &str, reason: Option<&str>) -> String {
    match reason {
        Some(r) if !r.trim().is_empty() => {
            format!(
                "A PermissionRequest hook denied this `{tool}` call: {}",
                r.trim()
            )
        }
        _ => format!("A PermissionRequest hook denied this `{tool}` call and gave no reason."),
    }
}

/// Calls past the most one message may have.
pub fn over_call_limit(max: usize) -> String {
    wrap(&format!(
        "This message has more than {max} tool calls, the most Baton runs from one message, so this call and the ones after it did not run. Make fewer calls per message."
    ))
}

/// A permission rule or policy denied the call.
pub fn denied(tool: &str, reason: &str) -> String {
    format!("Permission to use `{tool}` was denied: {reason}. Do not retry the same call; choose another approach or ask the user.")
}

/// No approver at all: the headless case (a batch run, a host without one).
pub fn needs_approval(tool: &str, reason: &str, suggestion: Option<&str>) -> String {
    let mut text = unasked(tool, Unasked::Headless, Some(reason));
    if let Some(rule) = suggestion {
        text.push_str(&format!(
            " Adding the rule `{rule}` to permissions.allow would let calls like it run."
        ));
    }
    text
}

/// A question that needed a person got no answer; `cause` says why, and
/// each cause tells the model what to do next. No person declined, so none
/// of these texts says "the user declined".
pub fn unasked(tool: &str, cause: Unasked, detail: Option<&str>) -> String {
    let detail = detail
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| format!(" ({d})"))
        .unwrap_or_default();
    match cause {
        Unasked::Headless => format!(
            "This `{tool}` call needs approval{detail}, but this session runs without anyone to approve it, so it did not run. Do not retry it: continue with calls that need no approval, or finish and say which permission the task needs."
        ),
        Unasked::ClientCannotAsk => format!(
            "This `{tool}` call needs approval{detail}, but the client running this session cannot ask its user, so it did not run. Do not retry it: use calls that need no approval, or tell the user which permission to grant in the settings."
        ),
        Unasked::SessionClosing => format!(
            "The session is closing, so this `{tool}` call was not approved and did not run{detail}. Start no new work; the session ends after this message."
        ),
    }
}

/// The user (through the host) declined the call.
pub fn user_rejected(tool: &str, reason: Option<&str>) -> String {
    match reason {
        Some(r) if !r.trim().is_empty() => format!(
            "The user declined this `{tool}` call: {}. It did not run; wait for the user's direction.",
            r.trim()
        ),
        _ => format!("The user declined this `{tool}` call. It did not run; wait for the user's direction."),
    }
}

/// The tool's own error message, as it wrote it.
pub fn tool_failed(message: &str) -> String {
    message.to_string()
}

/// The tool panicked while running.
pub fn panicked(tool: &str, message: &str) -> String {
    wrap(&format!(
        "`{tool}` crashed while running (internal error: {message}). Its action may have partly happened: check its effects before trying again."
    ))
}

/// The engine failed for a reason that is not the tool's.
pub fn internal(message: &str) -> String {
    wrap(&format!(
        "Baton failed internally ({message}); the call did not run. Try again."
    ))
}

/// Why a call did not run, or was stopped (SPEC §7, §8).
pub fn cancelled(reason: &CancelReason, started: bool) -> String {
    let what = if started {
        "was stopped while running; its action was cut short and may be partly done"
    } else {
        "never ran; its action did not happen"
    };
    match reason {
        CancelReason::User => format!(
            "The user interrupted the turn, so this call {what}. Wait for the user's next instruction."
        ),
        CancelReason::NewMessage => format!(
            "The user sent a new message, so this call {what}. Read the user's message before continuing."
        ),
        CancelReason::Sibling { failed_call, .. } => wrap(&format!(
            "Cancelled automatically by the engine, not by the user: this call {what}, because another call in the same message, {failed_call}, failed. Fix that failure first, then run this call again if it is still needed."
        )),
        CancelReason::Shutdown => wrap(&format!(
            "The engine was shutting down, so this call {what}."
        )),
        CancelReason::Other(why) => wrap(&format!("This call {what} ({why}).")),
    }
}

/// What the model reads when a tool returned no content at all.
pub fn empty_output(tool: &str) -> String {
    format!("({tool} completed with no output)")
}

#[cfg(test)]
mod unasked_tests {
    use super::*;

    /// Every cause has its own text, and none of them blames a person.
    #[test]
    fn each_cause_has_its_own_words() {
        let texts: Vec<String> = [
            Unasked::Headless,
            Unasked::ClientCannotAsk,
            Unasked::SessionClosing,
        ]
        .into_iter()
        .map(|c| unasked("Bash", c, Some("ask rule")))
        .collect();
        assert!(texts[0].contains("without anyone to approve it"));
        assert!(texts[1].contains("cannot ask its user"));
        assert!(texts[2].contains("session is closing"));
        for t in &texts {
            assert!(!t.contains("declined"), "{t}");
            assert!(t.contains("(ask rule)"), "{t}");
        }
        assert!(user_rejected("Bash", None).contains("The user declined"));
    }
}
