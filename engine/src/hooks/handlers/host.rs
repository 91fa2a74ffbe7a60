//! `prompt` and `agent` hooks: they need a model, and Baton has none of
//! its own, so they go to the host. A host that can evaluate them installs
//! a [`ModelHookRunner`] in the [`ModelHookSlot`] its settings returned;
//! without one, each run is a non-blocking diagnostic naming the hook (or a
//! block, with `onFailure: "block"`), never a silent pass.
//!
//! The runner answers Claude Code's way: `{"ok": true}` or
//! `{"ok": false, "reason": "…"}`; any hook JSON output is accepted too.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use super::Handler;
use crate::hooks::protocol::{block, Run};
use crate::hooks::{HookInput, HookOutcome};

/// Which kind of model hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModelHookKind {
    /// `type: prompt`: one model request decides.
    Prompt,
    /// `type: agent`: a subagent with tools investigates, then decides.
    Agent,
}

/// One evaluation a model hook asks the host for.
#[derive(Clone, Debug)]
pub struct ModelHookRequest {
    /// Whether a single prompt or an agent evaluates.
    pub kind: ModelHookKind,
    /// The hook's prompt, `$ARGUMENTS` replaced by the input JSON.
    pub prompt: String,
    /// The model the hook asks for; the host's choice when `None`.
    pub model: Option<String>,
    /// The event's input, as a command hook would get it.
    pub input: HookInput,
}

/// The host's model, evaluating prompt and agent hooks.
#[async_trait]
pub trait ModelHookRunner: Send + Sync {
    /// The model's answer as JSON, or why there is none.
    async fn evaluate(&self, request: ModelHookRequest) -> Result<Value, String>;
}

/// Where a host installs its model runner; shared by every model hook of
/// a settings load, so it can be set after the settings were read.
pub type ModelHookSlot = super::slot::Slot<dyn ModelHookRunner>;

/// A `prompt` or `agent` hook: asks the host's model runner, through the
/// slot, to evaluate the event.
#[derive(Clone, Debug)]
pub struct ModelHandler {
    /// Whether a single prompt or an agent evaluates.
    pub kind: ModelHookKind,
    /// The hook's prompt, with `$ARGUMENTS` still in it.
    pub prompt: String,
    /// The model the hook asks for; the host's choice when `None`.
    pub model: Option<String>,
    /// Where the host's runner is found when the hook fires.
    pub slot: ModelHookSlot,
}

#[async_trait]
impl Handler for ModelHandler {
    fn label(&self) -> String {
        let kind = match self.kind {
            ModelHookKind::Prompt => "prompt",
            ModelHookKind::Agent => "agent",
        };
        let first: String = self.prompt.chars().take(40).collect();
        format!("{kind}: {first}")
    }

    async fn call(&self, input: &HookInput, timeout: Duration, run: Run) -> HookOutcome {
        let event = run.event();
        let Some(runner) = self.slot.get() else {
            return run.failed(
                "needs a model, and the host gave Baton none to evaluate it with (ModelHookSlot::set)"
                    .into(),
            );
        };
        let arguments = serde_json::to_string(input).unwrap_or_default();
        let request = ModelHookRequest {
            kind: self.kind,
            prompt: self.prompt.replace("$ARGUMENTS", &arguments),
            model: self.model.clone(),
            input: input.clone(),
        };
        match tokio::time::timeout(timeout, runner.evaluate(request)).await {
            Err(_) => run.failed(super::no_answer(timeout)),
            Ok(Err(problem)) => run.failed(problem),
            Ok(Ok(answer)) => match answer.get("ok").and_then(Value::as_bool) {
                Some(true) => HookOutcome::default(),
                Some(false) => block(
                    event,
                    answer
                        .get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or("the prompt hook said no")
                        .to_string(),
                ),
                None => run.printed(answer.to_string()),
            },
        }
    }
}
