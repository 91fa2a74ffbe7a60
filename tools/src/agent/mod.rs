//! `Agent`: hands a task to a subagent run by the host (SPEC §15).
//!
//! The input is Claude Code's (`description`, `prompt`, `subagent_type`,
//! `model`, `run_in_background`, `name`, `isolation`, plus the fields it
//! accepts and ignores). The tool itself runs no model: it picks the
//! definition, checks the limits, cuts the subagent's pool and context from
//! the parent's, and asks the host's [`SubagentRunner`] (found in the call's
//! services) to run the loop, whose batches nest under this call.
//!
//! [`SubagentRunner`]: baton_engine::subagent::SubagentRunner

pub mod background;
pub(crate) mod catalog;
pub(crate) mod definitions;
mod run;
/// Runs an `Agent` call's work for another tool (a forked skill).
pub(crate) use run::run as run_agent;
pub(crate) mod list;
pub(crate) mod messaging;
pub(crate) mod tool_names;
pub mod tree;
mod worktree;

use std::sync::Arc;

use baton_engine::schema::InvalidSchema;
use baton_engine::{
    async_trait, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput, ToolPermission,
    WorkKind,
};
use schemars::JsonSchema;
use serde::Deserialize;

pub use catalog::{AgentCatalog, EXPLORE, GENERAL_PURPOSE, READ_ONLY_TOOLS};

/// The tool's input, as Claude Code's Agent tool takes it.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentInput {
    /// A short (3-5 word) description of the task
    pub description: String,
    /// The task for the agent to perform
    pub prompt: String,
    /// The type of specialized agent to use for this task
    #[serde(default)]
    pub subagent_type: Option<String>,
    /// Optional model override for this agent ("sonnet", "opus", "haiku", or a
    /// model name). Takes precedence over the agent definition's model. If
    /// omitted, uses the agent definition's model, else the parent's.
    #[serde(default)]
    pub model: Option<String>,
    /// Set to true to run this agent in the background. You will be notified
    /// when it completes.
    #[serde(default)]
    pub run_in_background: Option<bool>,
    /// Name for the spawned agent.
    #[serde(default)]
    pub name: Option<String>,
    /// Isolation mode. "worktree" creates a temporary git worktree so the agent
    /// works on an isolated copy of the repo.
    #[serde(default)]
    pub isolation: Option<String>,
    /// Reasoning effort for this agent; accepted for compatibility, passed to
    /// nobody.
    #[serde(default)]
    pub effort: Option<String>,
    /// Deprecated; ignored.
    #[serde(default)]
    pub team_name: Option<String>,
    /// Deprecated; ignored. Subagents inherit the parent's permission mode;
    /// the agent definition may only make it stricter.
    #[serde(default)]
    pub mode: Option<String>,
}

struct AgentTool {
    catalog: Arc<AgentCatalog>,
}

/// The `Agent` tool offering the types of `catalog`.
pub fn tool(catalog: AgentCatalog) -> Result<Tool, InvalidSchema> {
    let description = format!(
        "Launch a new agent to handle complex, multi-step tasks autonomously.\n\n\
         The Agent tool launches specialized agents (subprocesses) that autonomously \
         handle complex tasks. Each agent type has specific capabilities and tools \
         available to it.\n\n\
         Available agent types and the tools they have access to:\n{}\n\
         When using the Agent tool, specify a subagent_type parameter to select which \
         agent type to use. If omitted, the general-purpose agent is used.\n\n\
         Usage notes:\n\
         - Launch multiple agents concurrently whenever possible, to maximize \
         performance; to do that, use a single message with multiple tool uses.\n\
         - When the agent is done, it returns a single message back to you. The result \
         returned by the agent is not visible to the user; send the user a short \
         summary of it.\n\
         - Each agent invocation starts fresh: provide a highly detailed task \
         description in the prompt, and say exactly what information the agent should \
         return in its final message.\n\
         - Agents with run_in_background: true keep running after this call returns; \
         you are notified when they finish.\n\
         - isolation: \"worktree\" runs the agent in its own git worktree; it is removed \
         if the agent changed nothing, otherwise its path and branch are returned.",
        catalog.describe()
    );
    let def = ToolDef::new("Agent", description)
        .alias("Task")
        .search_hint("delegate a task to a subagent")
        // The call waits on a model; the subagent's own tool calls count
        // against the pools of its nested batch.
        .work_kind(WorkKind::Wait);
    Tool::typed::<AgentInput, _>(
        def,
        AgentTool {
            catalog: Arc::new(catalog),
        },
    )
}

#[async_trait]
impl ToolLogic<AgentInput> for AgentTool {
    /// Several subagents may run side by side; each one's own calls are
    /// scheduled (and asked about) in its nested batches.
    fn is_concurrency_safe(&self, _input: &AgentInput) -> bool {
        true
    }

    /// A subagent's own calls are judged in its nested batches; but
    /// `isolation: "worktree"` makes Baton itself create a branch and a
    /// worktree before any of them, so that call is a writer (plan mode
    /// refuses it).
    fn is_read_only(&self, input: &AgentInput) -> bool {
        input.isolation.is_none()
    }

    /// Baton's own part of an isolated agent (a sealed git adding a
    /// worktree under the session's state directory) needs no approval of
    /// its own, as in Claude Code; the mode still refuses it where only
    /// reads may run.
    async fn check_permissions(&self, input: &AgentInput, _ctx: &ToolContext) -> ToolPermission {
        if input.isolation.is_some() {
            ToolPermission::Allow
        } else {
            ToolPermission::Defer
        }
    }

    fn label(&self, input: &AgentInput) -> Option<String> {
        Some(format!("Agent({})", input.description))
    }

    async fn validate_input(&self, input: &AgentInput, _ctx: &ToolContext) -> Result<(), String> {
        if input.prompt.trim().is_empty() {
            return Err("prompt is empty: say what the agent should do".into());
        }
        match input.isolation.as_deref() {
            None | Some("worktree") => {}
            Some("remote") => {
                return Err(
                    "isolation \"remote\" is not available in Baton; use \"worktree\" or omit it"
                        .into(),
                )
            }
            Some(other) => {
                return Err(format!(
                    "unknown isolation `{other}` (expected \"worktree\")"
                ))
            }
        }
        self.catalog
            .find(input.subagent_type.as_deref())
            .map(|_| ())
    }

    async fn call(&self, input: AgentInput, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        run::run(&self.catalog, input, ctx).await
    }
}

#[cfg(test)]
mod tests;
