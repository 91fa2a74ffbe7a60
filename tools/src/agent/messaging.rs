//! `SendMessage`: continues a subagent of this session by its id or by the
//! `name` given at launch (Claude Code 2.1.332's in-session schema:
//! `to`, `message`, `summary`).
//!
//! A running subagent gets the message in its inbox, which its runner
//! reads before the subagent's next turn. A subagent that has ended is
//! resumed in the background with its transcript plus the message, as a
//! background Agent call is: listed as a task, stoppable, and announced
//! with a `<task-notification>` when it ends.

use baton_engine::subagent::AgentChain;
use baton_engine::subagent_inbox::Letter;
use baton_engine::{
    async_trait, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput, WorkKind,
};
use schemars::JsonSchema;
use serde::Deserialize;

use super::run::{launch_run, Launch};
use super::tree::{AgentRecord, AgentTree, Delivery};

/// Claude Code truncates a longer `summary` rather than refusing it.
const SUMMARY_CHARS: usize = 200;
/// Longest recipient Claude Code accepts (a name or an id).
const TO_CHARS: usize = 300;

/// The tool's input, as Claude Code's SendMessage takes it inside one
/// session.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SendMessageInput {
    /// Recipient: the name or agentId of an agent of this session
    pub to: String,
    /// Plain text message content
    pub message: String,
    /// A 5-10 word summary shown as a one-line preview in the UI. Defaults to
    /// the first line of the message; longer summaries are truncated to 200
    /// characters rather than rejected.
    #[serde(default)]
    pub summary: Option<String>,
}

struct SendMessage;

/// The `SendMessage` tool.
pub(crate) fn tool() -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new(
        "SendMessage",
        "Send a message to another agent of this session.\n\n\
         ```json\n{\"to\": \"researcher\", \"summary\": \"assign task 1\", \"message\": \"start on task #1\"}\n```\n\n\
         `to` is an agent's name (the `name` given when it was launched with the Agent tool) \
         or its agentId; ListAgents lists them. Your plain text output is not visible to \
         other agents: to tell one something, call this tool. A running agent reads the \
         message before its next turn. Names keep working after an agent completes: a \
         message to a finished agent resumes it in the background from its transcript, and \
         you are notified when it ends again.",
    )
    .search_hint("message continue resume a running or finished subagent by name")
    .should_defer(true)
    // Resuming waits on nothing; the subagent's own calls are judged in
    // its batches.
    .work_kind(WorkKind::Wait);
    Tool::typed::<SendMessageInput, _>(def, SendMessage)
}

#[async_trait]
impl ToolLogic<SendMessageInput> for SendMessage {
    fn is_concurrency_safe(&self, _input: &SendMessageInput) -> bool {
        true
    }

    /// Like `Agent`: it delegates; every call the subagent makes is
    /// classified and asked about on its own.
    fn is_read_only(&self, _input: &SendMessageInput) -> bool {
        true
    }

    fn label(&self, input: &SendMessageInput) -> Option<String> {
        Some(format!("SendMessage({})", input.to.trim()))
    }

    async fn validate_input(
        &self,
        input: &SendMessageInput,
        _ctx: &ToolContext,
    ) -> Result<(), String> {
        let to = input.to.trim();
        if to.is_empty() {
            return Err("`to` is empty: name the agent (ListAgents lists them)".into());
        }
        if to.contains(['\n', '\r']) {
            return Err("`to` must be a single-line recipient name or id".into());
        }
        if to.chars().count() > TO_CHARS {
            return Err(format!(
                "`to` is longer than any name or id (max {TO_CHARS} characters)"
            ));
        }
        if input.message.trim().is_empty() {
            return Err("`message` is empty: say what the agent should do".into());
        }
        Ok(())
    }

    async fn call(
        &self,
        input: SendMessageInput,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let to = input.to.trim();
        if to == "main" {
            return Err(ToolError::new(
                "`main` cannot be reached with SendMessage in Baton: the main conversation \
                 reads a subagent's final answer. Put what it should know there.",
            ));
        }
        let sender = AgentChain::of(&ctx.context).current().cloned();
        let letter = Letter {
            from: sender
                .as_ref()
                .map_or_else(|| "main".to_string(), |f| f.agent_id.clone()),
            summary: input.summary.as_deref().map(short_summary),
            message: input.message.clone(),
        };
        let tree = AgentTree::of(&ctx.session);
        let from = sender.as_ref().map(|f| f.agent_id.as_str());
        match tree
            .deliver(to, from, letter.clone())
            .map_err(ToolError::new)?
        {
            Delivery::Queued(record) => Ok(ToolOutput::text(format!(
                "Message queued for {}: it is running and reads the message before its next \
                 turn.",
                who(&record)
            ))),
            Delivery::Resume(record) => {
                let id = record.id.clone();
                let label = who(&record);
                let launch = resumed(record, letter.text());
                match launch_run(launch, ctx.clone()).await {
                    Ok(_) => Ok(ToolOutput::text(format!(
                        "{label} had finished; it was resumed in the background from its \
                         transcript with your message. You will be notified when it ends; \
                         its report then is in its output file."
                    ))),
                    Err(e) => {
                        // It never started: put it back as it was.
                        tree.ended(&id, super::tree::AgentState::Failed, None);
                        Err(ToolError::new(format!("{label} could not be resumed: {e}")))
                    }
                }
            }
        }
    }
}

/// A continuation of `record` with `prompt` as the new user message, run
/// in the background.
pub(crate) fn resumed(record: AgentRecord, prompt: String) -> Launch {
    Launch {
        definition: record.definition.clone(),
        description: record.description.clone(),
        prompt,
        model: record.model.clone(),
        name: record.name.clone(),
        background: true,
        worktree: false,
        resume: Some(record),
    }
}

fn who(record: &AgentRecord) -> String {
    match &record.name {
        Some(name) => format!("Agent `{name}` ({})", record.id),
        None => format!("Agent {}", record.id),
    }
}

fn short_summary(s: &str) -> String {
    s.chars().take(SUMMARY_CHARS).collect()
}
