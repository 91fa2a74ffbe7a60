//! `PostToolBatch`: once per batch, after every call has its result and
//! before the host's next model request. Its input lists every call that
//! ran; its `additionalContext` goes back with the batch (the `done` event,
//! and a text block in the user message, as Claude Code delivers it).
//!
//! Calls record themselves as they finish ([`record`]); the coordinator
//! collects the records and asks [`Pipeline::post_batch`] before it
//! reports the batch done.

use serde_json::{json, Map, Value};

use super::Pipeline;
use crate::hooks::response::tool_response;
use crate::hooks::{HookEvent, HookInput};
use baton_tool::call::{CallResult, ToolUse};
use baton_tool::context::Context;
use baton_tool::session::Session;

/// What PostToolBatch hooks said.
#[derive(Debug, Default)]
pub struct BatchHookOutcome {
    /// Text for the model, with the batch's results.
    pub additional_context: Vec<String>,
    /// A hook asked to end the turn after this batch (its reason).
    pub stop_turn: Option<String>,
    /// Non-blocking problems of the hooks, for the host's log.
    pub diagnostics: Vec<String>,
    /// `systemMessage`s: text for the user, not the model.
    pub system_messages: Vec<String>,
}

/// The call's entry in PostToolBatch's `tool_calls`, when such hooks exist.
pub(super) fn record(pipeline: &Pipeline, call: &ToolUse, result: &CallResult) -> Option<Value> {
    if !pipeline.hooks.has_any(HookEvent::PostToolBatch, "") {
        return None;
    }
    Some(json!({
        "tool_name": call.name,
        "tool_input": call.input,
        "tool_use_id": call.id,
        "tool_response": tool_response(result),
    }))
}

impl Pipeline {
    /// Whether a batch should collect records for PostToolBatch hooks.
    pub fn has_batch_hooks(&self) -> bool {
        self.hooks.has_any(HookEvent::PostToolBatch, "")
    }

    /// Runs the PostToolBatch hooks over the batch's calls (in call order).
    pub async fn post_batch(
        &self,
        session: &Session,
        context: &Context,
        tool_calls: Vec<Value>,
    ) -> BatchHookOutcome {
        self.post_batch_until(session, context, tool_calls, None)
            .await
    }

    /// [`Pipeline::post_batch`], ended (and its hooks' processes killed)
    /// when the batch's `scope` is cancelled: an interrupt must not wait
    /// for a hanging hook.
    pub async fn post_batch_until(
        &self,
        session: &Session,
        context: &Context,
        tool_calls: Vec<Value>,
        scope: Option<&baton_tool::cancel::CancelScope>,
    ) -> BatchHookOutcome {
        let mut extra = Map::new();
        extra.insert("tool_calls".into(), Value::Array(tool_calls));
        let mut input = HookInput::event(
            HookEvent::PostToolBatch,
            session.id(),
            context.cwd.display().to_string(),
            extra,
        )
        .in_agent(&crate::agent_chain::AgentChain::of(context));
        input.permission_mode = context.permission_mode.to_string();
        input.transcript_path = session
            .transcript_path()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let outcome = self.hooks.run_until(&input, None, scope).await;
        let mut context = outcome.additional_context;
        // A blocking answer is feedback for the model, like PostToolUse's.
        context.extend(
            outcome
                .feedback
                .map(|f| format!("PostToolBatch hook feedback: {f}")),
        );
        BatchHookOutcome {
            additional_context: context,
            stop_turn: outcome.stop,
            diagnostics: outcome.errors,
            system_messages: outcome.system_messages,
        }
    }
}
