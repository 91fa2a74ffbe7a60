//! The hook events of the model loop that `baton agent` fires itself:
//! `UserPromptSubmit` before the prompt goes to the model, and `Stop` when
//! the model ends its turn. Both go through [`Engine::fire_hook`], the one
//! runner every event uses.

use baton_engine::hooks::{HookDecision, HookEvent, HookOutcome};
use serde_json::{json, Map, Value};

use crate::Engine;

/// What UserPromptSubmit hooks made of the prompt.
#[derive(Debug)]
pub enum Prompt {
    /// Send this (the prompt, with the hooks' context after it).
    Send(String),
    /// A hook blocked the prompt (or ended the session): do not send it.
    Blocked(String),
}

/// Fires UserPromptSubmit for `prompt`; `notes` receives messages for the
/// user and hook failures.
pub async fn user_prompt_submit(engine: &Engine, prompt: &str, notes: &mut Vec<String>) -> Prompt {
    let mut fields = Map::new();
    fields.insert("prompt".into(), json!(prompt));
    // Claude Code's value for a prompt that came from a non-interactive
    // entry point (`-p`, the Agent SDK).
    fields.insert("source".into(), json!("sdk"));
    let outcome = engine.fire_hook(HookEvent::UserPromptSubmit, fields).await;
    take_notes(&outcome, notes);
    if outcome.decision == Some(HookDecision::Deny) {
        return Prompt::Blocked(
            outcome
                .reason
                .unwrap_or_else(|| "a UserPromptSubmit hook blocked the prompt".into()),
        );
    }
    if let Some(stop) = outcome.stop {
        return Prompt::Blocked(stop);
    }
    let mut text = prompt.to_string();
    for context in &outcome.additional_context {
        text.push_str("\n\n");
        text.push_str(context);
    }
    Prompt::Send(text)
}

/// Fires Stop. `Some(reason)`: a hook blocked the stop, so the loop goes
/// on with `reason` as the next user message. `active` is Claude Code's
/// `stop_hook_active`: the model is already continuing because of a Stop
/// hook, which hooks check so as not to keep it going forever.
pub async fn stop(
    engine: &Engine,
    last_assistant_message: &str,
    active: bool,
    notes: &mut Vec<String>,
) -> Option<String> {
    let mut fields = Map::new();
    fields.insert("stop_hook_active".into(), Value::Bool(active));
    fields.insert(
        "last_assistant_message".into(),
        json!(last_assistant_message),
    );
    let outcome = engine.fire_hook(HookEvent::Stop, fields).await;
    take_notes(&outcome, notes);
    // `continue: false` ends the session whatever a block says.
    if outcome.stop.is_some() || outcome.decision != Some(HookDecision::Deny) {
        return None;
    }
    Some(
        outcome
            .reason
            .unwrap_or_else(|| "A Stop hook asked you to continue.".into()),
    )
}

fn take_notes(outcome: &HookOutcome, notes: &mut Vec<String>) {
    notes.extend(outcome.system_messages.iter().map(|m| format!("hook: {m}")));
    notes.extend(outcome.errors.iter().cloned());
}
