//! `SubagentStart` and `SubagentStop`: the hooks around one subagent.
//!
//! The `Agent` tool fires them (it finds the engine's hooks in its call's
//! services); the host's runner only meets [`SubagentHooks::stopping`].
//! Claude Code lets a SubagentStop hook keep a subagent going: a block
//! (`decision: "block"` with a reason, or exit code 2) or an
//! `additionalContext` is fed back to the subagent, which takes another
//! turn. In Baton the host owns the loop, so the runner asks before it
//! stops ([`SubagentHooks::stopping`]) and continues with the feedback as
//! its next user message. A runner that returns without asking gets the
//! hooks fired for it afterwards; a block then can no longer resume the
//! loop and is reported to the parent with the result instead.

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value};

use super::{HookEvent, HookInput, HookOutcome, HookRegistry};
use baton_tool::context::Context;
use baton_tool::session::Session;

/// What the SubagentStart hooks said.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StartOutcome {
    /// `additionalContext`: for the subagent's model, before its prompt.
    pub additional_context: Vec<String>,
    /// Non-blocking failures of the hooks.
    pub diagnostics: Vec<String>,
    /// `systemMessage`s, for the user.
    pub system_messages: Vec<String>,
}

/// Whether a subagent may stop.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopVerdict {
    /// No hook objects: the subagent ends.
    Stop,
    /// A SubagentStop hook wants another turn; this is its feedback, to be
    /// given to the subagent's model as the next user message.
    Continue(String),
}

/// The SubagentStart/SubagentStop hooks of one subagent.
#[derive(Debug)]
pub struct SubagentHooks {
    hooks: HookRegistry,
    base: HookInput,
    agent_id: String,
    agent_type: String,
    /// A stop hook blocked before: later SubagentStop inputs say
    /// `stop_hook_active: true`, so a hook can let the agent go.
    blocked_once: AtomicBool,
    /// The runner asked [`SubagentHooks::stopping`] itself.
    asked: AtomicBool,
}

impl SubagentHooks {
    /// The hooks of subagent `agent_id`, whose calls run in `context`.
    pub fn new(
        hooks: HookRegistry,
        session: &Session,
        context: &Context,
        agent_id: impl Into<String>,
        agent_type: impl Into<String>,
    ) -> Self {
        let mut base = HookInput::event(
            HookEvent::SubagentStart,
            session.id(),
            context.cwd.display().to_string(),
            Map::new(),
        );
        base.permission_mode = context.permission_mode.to_string();
        base.transcript_path = session
            .transcript_path()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        SubagentHooks {
            hooks,
            base,
            agent_id: agent_id.into(),
            agent_type: agent_type.into(),
            blocked_once: AtomicBool::new(false),
            asked: AtomicBool::new(false),
        }
    }

    /// Hooks that never fire (an engine without hooks).
    pub fn none(session: &Session, context: &Context) -> Self {
        Self::new(HookRegistry::default(), session, context, "", "")
    }

    fn input(&self, event: HookEvent, extra: Map<String, Value>) -> HookInput {
        let mut input = self.base.clone();
        input.hook_event_name = event;
        input
            .extra
            .insert("agent_id".into(), Value::String(self.agent_id.clone()));
        input
            .extra
            .insert("agent_type".into(), Value::String(self.agent_type.clone()));
        input.extra.extend(extra);
        input
    }

    /// Fires SubagentStart (before the runner gets the task).
    pub async fn start(&self) -> StartOutcome {
        if !self
            .hooks
            .has_any(HookEvent::SubagentStart, &self.agent_type)
        {
            return StartOutcome::default();
        }
        let outcome = self
            .hooks
            .run(&self.input(HookEvent::SubagentStart, Map::new()))
            .await;
        StartOutcome {
            additional_context: outcome.additional_context,
            diagnostics: outcome.errors,
            system_messages: outcome.system_messages,
        }
    }

    /// Asks the SubagentStop hooks whether the subagent may stop, its model
    /// having ended with `last_message`. A runner calls this when its model
    /// ends a turn without tool calls; on [`StopVerdict::Continue`] it gives
    /// the feedback to the model as a user message and goes on.
    pub async fn stopping(&self, last_message: &str, transcript: Option<&str>) -> StopVerdict {
        self.asked.store(true, Ordering::SeqCst);
        let outcome = self.fire_stop(Some(last_message), transcript).await;
        match feedback(&outcome) {
            Some(text) => {
                self.blocked_once.store(true, Ordering::SeqCst);
                StopVerdict::Continue(text)
            }
            None => StopVerdict::Stop,
        }
    }

    /// Whether the runner asked [`SubagentHooks::stopping`] itself.
    pub fn asked(&self) -> bool {
        self.asked.load(Ordering::SeqCst)
    }

    /// Fires SubagentStop once the subagent has ended, for a runner that did
    /// not ask; `Some(feedback)` when a hook would have kept it going.
    pub async fn ended(&self, last_message: Option<&str>) -> Option<String> {
        let outcome = self.fire_stop(last_message, None).await;
        feedback(&outcome)
    }

    async fn fire_stop(&self, last_message: Option<&str>, transcript: Option<&str>) -> HookOutcome {
        if !self
            .hooks
            .has_any(HookEvent::SubagentStop, &self.agent_type)
        {
            return HookOutcome::default();
        }
        let mut extra = Map::new();
        extra.insert(
            "stop_hook_active".into(),
            Value::Bool(self.blocked_once.load(Ordering::SeqCst)),
        );
        extra.insert(
            "agent_transcript_path".into(),
            Value::String(transcript.unwrap_or("").to_string()),
        );
        if let Some(text) = last_message {
            extra.insert(
                "last_assistant_message".into(),
                Value::String(text.to_string()),
            );
        }
        self.hooks
            .run(&self.input(HookEvent::SubagentStop, extra))
            .await
    }
}

/// What keeps a subagent going: a block's reason and any
/// `additionalContext` (Claude Code feeds both to the subagent).
fn feedback(outcome: &HookOutcome) -> Option<String> {
    let mut parts = Vec::new();
    if outcome.decision == Some(super::HookDecision::Deny) {
        parts.push(
            outcome
                .reason
                .clone()
                .unwrap_or_else(|| "a SubagentStop hook asked the subagent to go on".into()),
        );
    }
    parts.extend(outcome.additional_context.iter().cloned());
    (!parts.is_empty()).then(|| parts.join("\n"))
}
