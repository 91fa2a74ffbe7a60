//! `baton agent` as the runner of the `Agent` tool (SPEC §15): a subagent
//! is the same loop, nested. Its requests go to the same provider with the
//! definition's system prompt, its own (narrowed) tools and model; its calls
//! run in batches nested under the Agent call, so cancelling the parent
//! stops them; its last text is the Agent call's result.

use std::sync::Arc;

use baton_engine::async_trait;
use baton_engine::subagent::{SubagentReport, SubagentRunner, SubagentTask};
use baton_engine::wire::{WireFormat, WireTools};

use super::agent::{drive, drive_from, AgentEnd, AgentEvent};
use super::conversation::Conversation;
use super::turn::SubagentHost;
use super::AgentOptions;

/// Where a subagent's events go: its agent id, then the event.
pub type SubagentReporter = Arc<dyn Fn(&str, AgentEvent<'_>) + Send + Sync>;

/// Runs each subagent with the host loop against the parent's provider.
pub struct LoopRunner {
    options: AgentOptions,
    report: SubagentReporter,
}

// Not derived: the reporter is a closure.
baton_engine::debug_fields! { LoopRunner { options, .. } }

impl LoopRunner {
    /// Subagents get `options` (provider, key, limits) with their own
    /// model, system prompt and turn limit where their definition sets one.
    pub fn new(options: AgentOptions, report: SubagentReporter) -> Self {
        LoopRunner { options, report }
    }

    fn options_for(&self, task: &SubagentTask) -> AgentOptions {
        let mut options = self.options.clone();
        if let Some(model) = task.model.as_deref() {
            options.model = model_name(self.options.format, model, &self.options.model);
        }
        let prompt = task.definition.system_prompt.trim();
        if !prompt.is_empty() {
            options.system = Some(prompt.to_string());
        }
        if let Some(n) = task.definition.max_turns {
            options.max_turns = usize::try_from(n).unwrap_or(usize::MAX).max(1);
        }
        options
    }
}

/// Claude Code's model aliases (`sonnet`, `opus`, `haiku`) name Anthropic
/// models; for another provider they mean "the parent's model". A full name
/// is used as it is.
fn model_name(format: WireFormat, wanted: &str, parent: &str) -> String {
    let alias = match wanted.to_ascii_lowercase().as_str() {
        "sonnet" => Some("claude-sonnet-4-5"),
        "opus" => Some("claude-opus-4-1"),
        "haiku" => Some("claude-haiku-4-5"),
        _ => None,
    };
    match (alias, format) {
        (Some(name), WireFormat::Anthropic) => name.to_string(),
        (Some(_), _) => parent.to_string(),
        (None, _) => wanted.to_string(),
    }
}

#[async_trait]
impl SubagentRunner for LoopRunner {
    async fn run(&self, task: SubagentTask) -> Result<SubagentReport, String> {
        let options = self.options_for(&task);
        let host = SubagentHost {
            batches: task.batches.clone(),
            pool: task.tools.clone(),
            session: task.batches.parent().session.clone(),
            wire: std::sync::Arc::new(WireTools::new(&task.tools, options.format)),
            inbox: task.inbox.clone(),
        };
        let agent_id = task.agent_id.clone();
        let report = self.report.clone();
        let mut forward = |event: AgentEvent<'_>| report(&agent_id, event);
        let finished = match task.resume.clone() {
            // A message to the finished subagent: its transcript, then the
            // message as the next user turn.
            Some(items) => {
                let conversation = Conversation::resumed(options.format, items, &task.prompt);
                drive_from(
                    &host,
                    &options,
                    conversation,
                    task.cancel.cancelled(),
                    &mut forward,
                )
                .await
            }
            None => {
                drive(
                    &host,
                    &options,
                    &task.prompt,
                    task.cancel.cancelled(),
                    &mut forward,
                )
                .await
            }
        };
        let note = match finished.end {
            AgentEnd::Done { .. } => None,
            AgentEnd::MaxTurns => Some(format!(
                "[the subagent stopped after {} turns without finishing]",
                options.max_turns
            )),
            AgentEnd::MaxTokens => Some("[the subagent's answer hit the token limit]".into()),
            AgentEnd::Refused => Some("[the subagent's model refused]".into()),
            AgentEnd::Interrupted => return Err("the subagent was cancelled".into()),
            AgentEnd::Failed(e) | AgentEnd::Stalled(e) => {
                return Err(format!("the subagent's model request failed: {e}"))
            }
            // Subagents fire no UserPromptSubmit; kept for completeness.
            AgentEnd::Blocked(e) => return Err(format!("the subagent's prompt was blocked: {e}")),
        };
        let text = match note {
            Some(note) if finished.text.is_empty() => note,
            Some(note) => format!("{}\n{note}", finished.text),
            None => finished.text,
        };
        Ok(SubagentReport {
            text,
            input_tokens: finished.input_tokens,
            output_tokens: finished.output_tokens,
            model: Some(options.model),
            transcript: Some(finished.transcript),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_map_for_anthropic_only() {
        assert_eq!(
            model_name(WireFormat::Anthropic, "haiku", "claude-x"),
            "claude-haiku-4-5"
        );
        assert_eq!(model_name(WireFormat::OpenAiChat, "opus", "gpt-5"), "gpt-5");
        assert_eq!(
            model_name(WireFormat::OpenAiResponses, "gpt-5-mini", "gpt-5"),
            "gpt-5-mini"
        );
    }
}
