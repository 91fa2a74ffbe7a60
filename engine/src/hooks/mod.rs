//! The hook stages' contract (SPEC §12).
//!
//! A [`Hook`] sees one event and returns a [`HookOutcome`]. The same outcome
//! type serves hooks from settings files (commands, HTTP endpoints, model
//! hooks routed to the host) and in-process hooks registered by an
//! embedder, so all are decided the same way. [`HookRegistry`] runs the
//! matching hooks of an event in parallel and merges their outcomes: deny
//! beats ask beats allow.
//!
//! The parts, by concept: [`events`] (what Claude Code fires and the input
//! JSON), [`matching`] (matchers, old tool names, `if:` filters),
//! [`outcome`] (decisions and how they merge), [`protocol`] (reading a
//! hook's answer), [`handlers`] (command, http, prompt/agent), [`config`]
//! (the `hooks` section of a settings file), [`plugins`] (hooks shipped by
//! enabled plugins), [`response`] (`tool_response` in Claude Code's shape).

pub mod config;
pub mod elicitation;
pub mod events;
pub mod handlers;
mod interrupt;
pub mod matching;
pub mod outcome;
pub mod permission_updates;
pub mod presented;
pub mod protocol;
pub mod response;
pub mod subagent;

pub use elicitation::ElicitationAnswer;
pub use events::{EventSupport, HookEvent, HookInput};
pub use handlers::command::{CommandForm, CommandHandler, CommandHook, HookEnv};
pub use handlers::host::{ModelHookKind, ModelHookRequest, ModelHookRunner, ModelHookSlot};
pub use handlers::mcp_tool::{McpToolCaller, McpToolReply, McpToolSlot};
pub use handlers::{Configured, Handler, HookOptions};
pub use matching::{canonical_tool_name, IfFilter, MatcherError, ToolNameMatcher};
pub use outcome::{HookDecision, HookOutcome, PermissionAnswer};
pub use protocol::OnFailure;

use std::sync::Arc;

use async_trait::async_trait;

use crate::permission::PermissionRequest;

/// One hook: a handler from a settings file, or an embedder's closure.
#[async_trait]
pub trait Hook: Send + Sync {
    /// Whether this hook wants `event` for `query` (the tool name for tool
    /// events; `source`, `trigger`… for others, empty when the event has
    /// nothing to match).
    fn matches(&self, event: HookEvent, query: &str) -> bool;
    /// Whether this hook wants this particular call (`if:` filters). Only
    /// asked for tool events, after [`Hook::matches`].
    fn wants(&self, _request: &PermissionRequest<'_>) -> bool {
        true
    }
    /// Runs the hook for `input` and says what it decided.
    async fn run(&self, input: &HookInput) -> HookOutcome;
}

/// The hooks of an engine. Cheap to clone.
#[derive(Clone, Default)]
pub struct HookRegistry {
    hooks: Arc<Vec<Arc<dyn Hook>>>,
    /// Fired by [`HookRegistry::stop_running`]; shared by every registry
    /// derived from this one.
    stop: baton_tool::cancel::CancelScope,
}

baton_tool::debug_fields! { HookRegistry as this { hooks: this.hooks.len() } }

impl HookRegistry {
    /// A registry of `hooks`, run in this order.
    pub fn new(hooks: Vec<Arc<dyn Hook>>) -> Self {
        HookRegistry {
            hooks: Arc::new(hooks),
            stop: Default::default(),
        }
    }

    /// A registry with `hook` added (stopped together with this one).
    pub fn with(&self, hook: Arc<dyn Hook>) -> Self {
        let mut hooks: Vec<Arc<dyn Hook>> = self.hooks.as_ref().clone();
        hooks.push(hook);
        HookRegistry {
            hooks: Arc::new(hooks),
            stop: self.stop.clone(),
        }
    }

    /// A registry with every hook of `other` added after these (stopped
    /// together with this one).
    pub fn extended(&self, other: &HookRegistry) -> Self {
        let mut hooks: Vec<Arc<dyn Hook>> = self.hooks.as_ref().clone();
        hooks.extend(other.hooks.iter().cloned());
        HookRegistry {
            hooks: Arc::new(hooks),
            stop: self.stop.clone(),
        }
    }

    /// Ends every running hook of this registry (and of those derived from
    /// it) and every later one at once, each with an "interrupted" outcome:
    /// for a session that is shutting down or was signalled.
    pub fn stop_running(&self, reason: baton_tool::cancel::CancelReason) {
        self.stop.cancel(reason);
    }

    /// Whether the registry has no hook at all.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// How many hooks the registry has.
    pub fn len(&self) -> usize {
        self.hooks.len()
    }

    /// The hooks, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Hook>> {
        self.hooks.iter()
    }

    /// Whether any hook wants `event` for `query` (so the caller can skip
    /// building its input).
    pub fn has_any(&self, event: HookEvent, query: &str) -> bool {
        self.hooks.iter().any(|h| h.matches(event, query))
    }

    /// Runs every matching hook in parallel and merges their outcomes. A
    /// panicking in-process hook counts as a non-blocking error. This is
    /// also how a host fires the events of its own loop
    /// (`UserPromptSubmit`, `Stop`, `Notification`…): build the input with
    /// [`HookInput::event`] and read the merged outcome (`decision: Deny`
    /// means "block").
    pub async fn run(&self, input: &HookInput) -> HookOutcome {
        self.run_for(input, None).await
    }

    /// [`HookRegistry::run`] for one call, whose `if:` filters are judged
    /// against `request`.
    pub async fn run_for(
        &self,
        input: &HookInput,
        request: Option<&PermissionRequest<'_>>,
    ) -> HookOutcome {
        self.run_until(input, request, None).await
    }

    /// [`HookRegistry::run_for`], ended early (outcome
    /// [`HookOutcome::interrupted`], processes killed) when `scope` is
    /// cancelled or [`HookRegistry::stop_running`] is called.
    pub async fn run_until(
        &self,
        input: &HookInput,
        request: Option<&PermissionRequest<'_>>,
        scope: Option<&baton_tool::cancel::CancelScope>,
    ) -> HookOutcome {
        use futures::FutureExt;
        let event = input.hook_event_name;
        let query = input.match_query().unwrap_or("");
        let runs = self
            .hooks
            .iter()
            .filter(|h| h.matches(event, query))
            .filter(|h| request.is_none_or(|r| h.wants(r)))
            .map(|h| std::panic::AssertUnwindSafe(h.run(input)).catch_unwind())
            .collect::<Vec<_>>();
        if runs.is_empty() {
            return HookOutcome::default();
        }
        // Nothing is started for work that was stopped already.
        if let Some(reason) = scope
            .and_then(|s| s.reason())
            .or_else(|| self.stop.reason())
        {
            return HookOutcome::interrupted(event, reason);
        }
        let all = async {
            futures::future::join_all(runs)
                .await
                .into_iter()
                .map(|r| {
                    r.unwrap_or_else(|_| {
                        HookOutcome::error(format!("a {} hook panicked", event.as_str()))
                    })
                })
                .fold(HookOutcome::default(), HookOutcome::merge)
        };
        interrupt::race(event, scope, &self.stop, all).await
    }
}

/// An in-process hook from a closure.
pub struct FnHook<M, F> {
    matcher: M,
    run: F,
}

// Not derived: the matcher and the closure have no `Debug`.
baton_tool::debug_fields! { FnHook<M, F> { .. } }

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
