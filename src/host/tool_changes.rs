//! `baton agent`'s side of Anthropic mid-conversation tool changes: the
//! first request declares the tools; later changes (ToolSearch loads, MCP
//! list changes) go into the conversation as `tool_addition` /
//! `tool_removal` blocks, so `tools` and the prompt cache stay as they
//! were. When the provider refuses the beta, the loop falls back to
//! rewriting `tools` for the rest of the run.

use baton_engine::wire::tool_changes::{refuses_beta, ToolChanges};
use baton_engine::wire::{RequestTools, WireFormat};
use serde_json::Value;

use super::conversation::Conversation;
use super::AgentOptions;

/// The diagnostic reported on the fallback.
pub(super) const FELL_BACK: &str = "the provider refused the mid-conversation tool changes beta; \
     tool changes are sent as a rewritten `tools` list from now on";

/// One loop's record of what its model was offered; off unless the
/// options ask for it on the Anthropic format.
pub(super) struct Changes(Option<ToolChanges>);

impl Changes {
    pub(super) fn new(options: &AgentOptions) -> Self {
        let on = options.tool_changes && options.format == WireFormat::Anthropic;
        Changes(on.then(ToolChanges::new))
    }

    /// The request's `tools`: as the session says now when off; else the
    /// first request's, with what changed since appended to `conversation`.
    pub(super) fn tools(
        &mut self,
        now: RequestTools,
        conversation: &mut Conversation,
    ) -> Vec<Value> {
        match &mut self.0 {
            None => now.tools,
            Some(record) => {
                let update = record.update(&now);
                conversation.push_tool_changes(update.changes);
                update.tools
            }
        }
    }

    /// Whether `reason` (a failed request) refuses the beta; if so, turns
    /// the record off for the rest of the run.
    pub(super) fn refused(&mut self, reason: &str) -> bool {
        let refused = self.0.is_some()
            && reason
                .strip_prefix("HTTP 400")
                .is_some_and(|body| refuses_beta(400, body));
        if refused {
            self.0 = None;
        }
        refused
    }
}
