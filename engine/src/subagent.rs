//! Subagents: the host runs the model loop, Baton runs its calls (SPEC §15).
//!
//! The `Agent` tool lives in `baton-tools`, and the model loop lives in the
//! host (a Rust host loop, or a `serve` client in another language). Neither
//! may depend on the other, so the engine names the meeting point: a host
//! registers a [`SubagentRunner`] in the engine's services, and the tool
//! hands it a [`SubagentTask`] holding everything one subagent needs: its
//! definition, prompt and model, the tools it may call, and
//! [`SubagentBatches`], the door to batches nested under the `Agent` call
//! (so cancelling the parent reaches every call of the subagent).
//!
//! Which subagent a call runs inside is part of the [`Context`] (an
//! [`AgentChain`] in its extensions): nested batches start from the context
//! the tool prepared, so every call inside knows its chain without the actor
//! layer learning about agents. Permission requests and hooks read it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use async_trait::async_trait;

pub use crate::agent_chain::{AgentChain, AgentFrame};
pub use crate::hooks::subagent::{StartOutcome, StopVerdict, SubagentHooks};
use crate::nesting::{NestedBatch, NestedOptions, NestingError, NestingService};
use crate::permission::PermissionMode;
use baton_tool::cancel::CancelScope;
use baton_tool::context::{Context, ToolContext};
use baton_tool::pool::ToolPool;

/// Default most levels of subagents under the main agent.
pub const DEFAULT_MAX_DEPTH: usize = 3;
/// Default most subagents running at once in one engine.
pub const DEFAULT_MAX_CONCURRENT: usize = 20;
/// The variable that overrides [`DEFAULT_MAX_DEPTH`].
pub const MAX_DEPTH_ENV: &str = "BATON_MAX_SUBAGENT_DEPTH";
/// The variable that overrides [`DEFAULT_MAX_CONCURRENT`].
pub const MAX_CONCURRENT_ENV: &str = "BATON_MAX_CONCURRENT_SUBAGENTS";

/// Where a definition came from; a project definition hides a user one of
/// the same name, and both hide a built-in.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DefinitionSource {
    /// Built into Baton (`general-purpose`, `Explore`).
    BuiltIn,
    /// `~/.claude/agents/*.md`.
    User(std::path::PathBuf),
    /// `.claude/agents/*.md` of the project.
    Project(std::path::PathBuf),
    /// Given by the host through the API or the command line.
    Host,
}

/// One agent type: what a `.claude/agents/NAME.md` file says.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentDefinition {
    /// The `subagent_type` that selects it.
    pub name: String,
    /// When to use it; shown to the model in the Agent tool's description.
    pub description: String,
    /// Tools it may use; every tool of the parent when `None`.
    pub tools: Option<Vec<String>>,
    /// Tools removed even if listed or inherited.
    pub disallowed_tools: Vec<String>,
    /// Only tools that never change anything (the explorer).
    pub read_only: bool,
    /// `sonnet`, `opus`, `haiku`, `inherit`, or a full model name.
    pub model: Option<String>,
    /// The mode it asks for (see [`child_mode`]).
    pub permission_mode: Option<PermissionMode>,
    /// The most turns the subagent's loop may take; the host's limit when
    /// `None`.
    pub max_turns: Option<u32>,
    /// The Markdown body: the subagent's system prompt.
    pub system_prompt: String,
    /// Where the definition was found.
    pub source: DefinitionSource,
}

impl AgentDefinition {
    /// A host definition named `name`, used when `description` fits: every
    /// tool of the parent, the parent's model and mode, no system prompt.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        AgentDefinition {
            name: name.into(),
            description: description.into(),
            tools: None,
            disallowed_tools: Vec::new(),
            read_only: false,
            model: None,
            permission_mode: None,
            max_turns: None,
            system_prompt: String::new(),
            source: DefinitionSource::Host,
        }
    }
}

/// The mode a subagent runs in, with Claude Code's documented precedence:
/// a parent in bypassPermissions keeps it for its subagents (the definition
/// cannot override it); otherwise the definition's own mode when it gives
/// one, else the parent's. Definitions are the user's files (protected
/// from the model's writes) or the host's, so the mode they ask for is the
/// user's choice, looser or stricter than the parent's.
pub fn child_mode(parent: PermissionMode, wanted: Option<PermissionMode>) -> PermissionMode {
    match (parent, wanted) {
        (PermissionMode::BypassPermissions, _) => PermissionMode::BypassPermissions,
        (_, Some(wanted)) => wanted,
        (parent, None) => parent,
    }
}

/// What a subagent reports when its loop ends.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubagentReport {
    /// The final assistant text, given to the parent as the Agent result.
    pub text: String,
    /// Tokens used, when the host knows them.
    pub input_tokens: Option<u64>,
    /// Output tokens used, when the host knows them.
    pub output_tokens: Option<u64>,
    /// The model that actually ran, when the host knows it.
    pub model: Option<String>,
    /// The subagent's conversation in the runner's own shapes, when the
    /// runner keeps it: handed back in [`SubagentTask::resume`] when a
    /// `SendMessage` continues the finished subagent.
    pub transcript: Option<Vec<serde_json::Value>>,
}

impl SubagentReport {
    /// A report holding only the final `text`.
    pub fn text(text: impl Into<String>) -> Self {
        SubagentReport {
            text: text.into(),
            ..Default::default()
        }
    }
}

/// Everything a host needs to run one subagent.
#[derive(Debug)]
pub struct SubagentTask {
    /// The subagent's id (unique in the engine).
    pub agent_id: String,
    /// The definition it runs as.
    pub definition: Arc<AgentDefinition>,
    /// The Agent call's 3–5 word description.
    pub description: String,
    /// The task for the subagent: its first user message.
    pub prompt: String,
    /// `model` of the call, else of the definition; `None`: the parent's.
    pub model: Option<String>,
    /// The tools the subagent may call (send these to the model).
    pub tools: ToolPool,
    /// Its starting context: working directory, permission mode, chain.
    pub context: Context,
    /// Ends the loop: cancelled when the Agent call is.
    pub cancel: CancelScope,
    /// Opens the subagent's batches, one per assistant message.
    pub batches: SubagentBatches,
    /// `additionalContext` of the SubagentStart hooks: give it to the
    /// subagent's model before the prompt.
    pub start_context: Vec<String>,
    /// The SubagentStop hooks; see [`SubagentTask::stopping`].
    pub hooks: Arc<SubagentHooks>,
    /// Messages sent to the subagent while it runs (`SendMessage`): give
    /// them to its model before its next turn.
    pub inbox: Arc<crate::subagent_inbox::Inbox>,
    /// Set when a finished subagent is continued: `Some` with the
    /// transcript its last run reported (empty when the runner kept none,
    /// e.g. a `serve` host that holds the transcript itself). `prompt` is
    /// then the new message.
    pub resume: Option<Vec<serde_json::Value>>,
}

impl SubagentTask {
    /// Asks the SubagentStop hooks whether the subagent may stop now that
    /// its model ended a turn with `last_message` (and no tool calls). On
    /// [`StopVerdict::Continue`] the loop gives the feedback to the model as
    /// a user message and takes another turn, as Claude Code does. Runners
    /// that never ask still get the hooks fired when they return, but a
    /// block can then only be reported, not acted on.
    pub async fn stopping(&self, last_message: &str) -> StopVerdict {
        self.hooks.stopping(last_message, None).await
    }

    /// The subagent chain the task's calls run inside (this subagent last).
    pub fn chain(&self) -> AgentChain {
        AgentChain::of(&self.context)
    }
}

/// The door to batches nested under one Agent call.
#[derive(Clone, Debug)]
pub struct SubagentBatches {
    parent: ToolContext,
    pool: ToolPool,
    context: Context,
    tool_uses: Arc<AtomicUsize>,
}

impl SubagentBatches {
    /// Batches for a subagent running under the call `parent`, with `pool`
    /// as its tools and `context` as its starting context.
    pub fn new(parent: ToolContext, pool: ToolPool, context: Context) -> Self {
        SubagentBatches {
            parent,
            pool,
            context,
            tool_uses: Arc::default(),
        }
    }

    /// Opens one batch (one assistant message of the subagent) under the
    /// Agent call, with the subagent's tools and context.
    pub async fn open(&self) -> Result<Box<dyn NestedBatch>, NestingError> {
        let service = NestingService::of(&self.parent)
            .ok_or_else(|| NestingError::Closed("this engine runs no nested batches".into()))?;
        let options = NestedOptions {
            pool: Some(self.pool.clone()),
            context: Some(self.context.clone()),
        };
        let inner = service.open(&self.parent, options).await?;
        Ok(Box::new(Counting {
            inner,
            count: self.tool_uses.clone(),
        }))
    }

    /// The same door, with batches opened under `scope` instead of the
    /// Agent call's own scope (pass a child of it): cancelling `scope` then
    /// stops every batch of the subagent, and everything below them,
    /// without cancelling the Agent call itself. Calls are counted
    /// together.
    pub fn under(&self, scope: CancelScope) -> SubagentBatches {
        let mut parent = self.parent.clone();
        parent.cancel = scope;
        SubagentBatches {
            parent,
            pool: self.pool.clone(),
            context: self.context.clone(),
            tool_uses: self.tool_uses.clone(),
        }
    }

    /// Calls added to this subagent's batches so far.
    pub fn tool_uses(&self) -> usize {
        self.tool_uses.load(Ordering::Relaxed)
    }

    /// The Agent call the batches hang under.
    pub fn parent(&self) -> &ToolContext {
        &self.parent
    }
}

/// Counts the calls of a subagent for the Agent result.
struct Counting {
    inner: Box<dyn NestedBatch>,
    count: Arc<AtomicUsize>,
}

#[async_trait]
impl NestedBatch for Counting {
    fn add(&mut self, call: baton_tool::call::ToolUse) -> Result<(), NestingError> {
        self.inner.add(call)?;
        self.count.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
    fn end(&mut self) {
        self.inner.end()
    }
    async fn next_event(&mut self) -> Option<crate::nesting::NestedEvent> {
        self.inner.next_event().await
    }
}

/// Runs a subagent's model loop. The host implements it; the loop opens
/// one batch per assistant message through `task.batches`, feeds each
/// batch's results back to the model, and returns the final text. It should
/// stop (returning an error or what it has) once `task.cancel` fires.
#[async_trait]
pub trait SubagentRunner: Send + Sync {
    /// Runs `task` to its end; an error is reported to the parent as the
    /// Agent call's failure.
    async fn run(&self, task: SubagentTask) -> Result<SubagentReport, String>;
}

/// The caps on subagents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubagentLimits {
    /// Most subagent levels below the main agent.
    pub max_depth: usize,
    /// Most subagents running at once.
    pub max_concurrent: usize,
}

impl Default for SubagentLimits {
    fn default() -> Self {
        SubagentLimits {
            max_depth: DEFAULT_MAX_DEPTH,
            max_concurrent: DEFAULT_MAX_CONCURRENT,
        }
    }
}

impl SubagentLimits {
    /// Defaults, overridden by the environment where it holds a positive
    /// number (anything else is ignored).
    pub fn from_env() -> Self {
        let read = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .filter(|n| *n > 0)
        };
        let d = SubagentLimits::default();
        SubagentLimits {
            max_depth: read(MAX_DEPTH_ENV).unwrap_or(d.max_depth),
            max_concurrent: read(MAX_CONCURRENT_ENV).unwrap_or(d.max_concurrent),
        }
    }
}

/// The host's runner with the engine-wide subagent bookkeeping; the key
/// under which the `Agent` tool finds it in [`ToolContext::services`].
#[derive(Clone)]
pub struct SubagentService {
    /// Runs the subagents' loops (the host's implementation).
    pub runner: Arc<dyn SubagentRunner>,
    /// The caps on depth and concurrency.
    pub limits: SubagentLimits,
    running: Arc<AtomicUsize>,
    next_id: Arc<AtomicUsize>,
}

// Not derived: the runner is a trait object.
baton_tool::debug_fields! { SubagentService { limits, running, .. } }

impl SubagentService {
    /// A service with limits from the environment.
    pub fn new(runner: Arc<dyn SubagentRunner>) -> Self {
        Self::with_limits(runner, SubagentLimits::from_env())
    }

    /// A service with the given `limits`.
    pub fn with_limits(runner: Arc<dyn SubagentRunner>, limits: SubagentLimits) -> Self {
        SubagentService {
            runner,
            limits,
            running: Arc::default(),
            next_id: Arc::default(),
        }
    }

    /// The service offered to the call of `ctx`, if the host set one up.
    pub fn of(ctx: &ToolContext) -> Option<Arc<SubagentService>> {
        ctx.services.get::<SubagentService>()
    }

    /// Takes a running slot, or says the limit is reached.
    pub fn try_start(&self) -> Option<RunningSlot> {
        let max = self.limits.max_concurrent;
        self.running
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max).then_some(n + 1)
            })
            .ok()
            .map(|_| RunningSlot(self.running.clone()))
    }

    /// Subagents running now.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::Acquire)
    }

    /// A fresh agent id, unique in this engine.
    pub fn next_agent_id(&self) -> String {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        format!("agent-{n}")
    }
}

/// One running subagent; frees its slot when dropped.
#[derive(Debug)]
pub struct RunningSlot(Arc<AtomicUsize>);

impl Drop for RunningSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bypass_parent_wins_otherwise_the_definitions_mode() {
        use PermissionMode::*;
        for wanted in PermissionMode::ALL {
            assert_eq!(
                child_mode(BypassPermissions, Some(wanted)),
                BypassPermissions
            );
            for parent in [Default, AcceptEdits, Plan, DontAsk] {
                assert_eq!(
                    child_mode(parent, Some(wanted)),
                    wanted,
                    "{parent} {wanted}"
                );
            }
        }
        for parent in PermissionMode::ALL {
            assert_eq!(child_mode(parent, None), parent);
        }
        // The case issue 22 names: an acceptEdits agent under a default
        // parent edits without asking.
        assert_eq!(child_mode(Default, Some(AcceptEdits)), AcceptEdits);
    }

    struct Nothing;
    #[async_trait]
    impl SubagentRunner for Nothing {
        async fn run(&self, _: SubagentTask) -> Result<SubagentReport, String> {
            Ok(SubagentReport::default())
        }
    }

    #[test]
    fn running_slots_are_capped_and_freed() {
        let s = SubagentService::with_limits(
            Arc::new(Nothing),
            SubagentLimits {
                max_depth: 3,
                max_concurrent: 2,
            },
        );
        let a = s.try_start().unwrap();
        let _b = s.try_start().unwrap();
        assert!(s.try_start().is_none());
        drop(a);
        assert!(s.try_start().is_some());
        assert_ne!(s.next_agent_id(), s.next_agent_id());
    }
}
