//! The hook stages' contract (SPEC §12).
//!
//! A [`Hook`] sees one event and returns a [`HookOutcome`]. The same outcome
//! type serves command hooks (scripts configured in settings files) and
//! in-process hooks registered by an embedder, so both are decided the same
//! way. [`HookRegistry`] runs the matching hooks of an event in parallel and
//! merges their outcomes: deny beats ask beats allow.
//!
//! [`command`] runs Claude Code-style command hooks (a shell command fed
//! JSON on stdin); [`config`] reads them from the `hooks` section of a
//! settings file.

pub mod command;
pub mod config;

pub use command::{CommandHook, ToolNameMatcher};

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Events a hook can subscribe to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
}

impl HookEvent {
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::PostToolUseFailure => "PostToolUseFailure",
        }
    }
}

/// The JSON a hook receives (field names as Claude Code sends them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HookInput {
    pub session_id: String,
    pub transcript_path: String,
    pub cwd: String,
    pub permission_mode: String,
    pub hook_event_name: HookEvent,
    pub tool_name: String,
    pub tool_input: Value,
    pub tool_use_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_response: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Who made the call when it was not the model directly (see
    /// [`crate::ToolUse::caller`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<Value>,
}

/// A permission verdict from a PreToolUse hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum HookDecision {
    Allow,
    Ask,
    Deny,
}

/// What one hook (or the merge of several) decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookOutcome {
    /// PreToolUse: the hook's permission verdict.
    pub decision: Option<HookDecision>,
    /// Why; shown to the model on deny, to the approver on ask.
    pub reason: Option<String>,
    /// PreToolUse: replacement input (validated against the schema again).
    pub updated_input: Option<Value>,
    /// Text added to what the model sees for this call.
    pub additional_context: Vec<String>,
    /// PostToolUse: feedback that blocks (`decision: block`, exit 2); shown
    /// to the model with the result.
    pub feedback: Option<String>,
    /// `continue: false`: the turn ends after this batch, with this reason.
    pub stop: Option<String>,
    /// Non-blocking failures (bad JSON, crash, timeout), for the host's log.
    pub errors: Vec<String>,
}

impl HookOutcome {
    pub fn allow() -> Self {
        HookOutcome {
            decision: Some(HookDecision::Allow),
            ..Default::default()
        }
    }

    pub fn deny(reason: impl Into<String>) -> Self {
        HookOutcome {
            decision: Some(HookDecision::Deny),
            reason: Some(reason.into()),
            ..Default::default()
        }
    }

    pub fn ask(reason: impl Into<String>) -> Self {
        HookOutcome {
            decision: Some(HookDecision::Ask),
            reason: Some(reason.into()),
            ..Default::default()
        }
    }

    /// Folds `other` into `self`: the stronger decision wins and keeps its
    /// reason; lists accumulate; the last rewrite of the input wins.
    pub fn merge(mut self, other: HookOutcome) -> HookOutcome {
        if other.decision > self.decision {
            self.decision = other.decision;
            self.reason = other.reason;
        } else if other.decision == self.decision && other.reason.is_some() {
            self.reason = join(self.reason.take(), other.reason);
        }
        if other.updated_input.is_some() {
            self.updated_input = other.updated_input;
        }
        self.additional_context.extend(other.additional_context);
        self.feedback = join(self.feedback.take(), other.feedback);
        self.stop = self.stop.or(other.stop);
        self.errors.extend(other.errors);
        self
    }
}

fn join(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    }
}

/// One hook: a command from a settings file, or an embedder's closure.
#[async_trait]
pub trait Hook: Send + Sync {
    /// Whether this hook wants `event` for `tool_name`.
    fn matches(&self, event: HookEvent, tool_name: &str) -> bool;
    async fn run(&self, input: &HookInput) -> HookOutcome;
}

/// The hooks of an engine. Cheap to clone.
#[derive(Clone, Default)]
pub struct HookRegistry {
    hooks: Arc<Vec<Arc<dyn Hook>>>,
}

impl std::fmt::Debug for HookRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookRegistry")
            .field("hooks", &self.hooks.len())
            .finish()
    }
}

impl HookRegistry {
    pub fn new(hooks: Vec<Arc<dyn Hook>>) -> Self {
        HookRegistry {
            hooks: Arc::new(hooks),
        }
    }

    /// A registry with `hook` added.
    pub fn with(&self, hook: Arc<dyn Hook>) -> Self {
        let mut hooks: Vec<Arc<dyn Hook>> = self.hooks.as_ref().clone();
        hooks.push(hook);
        HookRegistry::new(hooks)
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    pub fn len(&self) -> usize {
        self.hooks.len()
    }

    /// The hooks, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Hook>> {
        self.hooks.iter()
    }

    pub fn has_any(&self, event: HookEvent, tool_name: &str) -> bool {
        self.hooks.iter().any(|h| h.matches(event, tool_name))
    }

    /// Runs every matching hook in parallel and merges their outcomes in
    /// registration order. A panicking in-process hook counts as a
    /// non-blocking error.
    pub async fn run(&self, input: &HookInput) -> HookOutcome {
        use futures::FutureExt;
        let event = input.hook_event_name;
        let runs = self
            .hooks
            .iter()
            .filter(|h| h.matches(event, &input.tool_name))
            .map(|h| std::panic::AssertUnwindSafe(h.run(input)).catch_unwind());
        futures::future::join_all(runs)
            .await
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|_| HookOutcome {
                    errors: vec![format!("a {} hook panicked", event.as_str())],
                    ..Default::default()
                })
            })
            .fold(HookOutcome::default(), HookOutcome::merge)
    }
}

/// An in-process hook from a closure.
pub struct FnHook<M, F> {
    matcher: M,
    run: F,
}

impl<M, F, Fut> FnHook<M, F>
where
    M: Fn(HookEvent, &str) -> bool + Send + Sync,
    F: Fn(HookInput) -> Fut + Send + Sync,
    Fut: std::future::Future<Output = HookOutcome> + Send,
{
    /// `matcher(event, tool_name)` selects; `run(input)` decides.
    pub fn new(matcher: M, run: F) -> Self {
        FnHook { matcher, run }
    }
}

#[async_trait]
impl<M, F, Fut> Hook for FnHook<M, F>
where
    M: Fn(HookEvent, &str) -> bool + Send + Sync,
    F: Fn(HookInput) -> Fut + Send + Sync,
    Fut: std::future::Future<Output = HookOutcome> + Send,
{
    fn matches(&self, event: HookEvent, tool_name: &str) -> bool {
        (self.matcher)(event, tool_name)
    }

    async fn run(&self, input: &HookInput) -> HookOutcome {
        (self.run)(input.clone()).await
    }
}
