//! `ListAgents`: the session's agent tree, with each agent's state, so the
//! model knows whom it can `SendMessage` (Claude Code 2.1.332's tool; its
//! old name `ListPeers` is an alias). Claude Code's `channel` and `q`
//! select other sessions, which Baton does not reach; they are accepted
//! and said to be unavailable, as Claude Code's own build says.

use baton_engine::{async_trait, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::tree::{AgentRecord, AgentTree};

/// Longest value Claude Code accepts for each field.
const FIELD_CHARS: usize = 256;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListAgentsInput {
    /// Not available in this build; leave unset.
    #[serde(default)]
    pub channel: Option<String>,
    /// Not available in this build; leave unset.
    #[serde(default)]
    pub q: Option<String>,
    /// The cursor the last line of a long listing gave, for its next page.
    /// Omit to list from the start.
    #[serde(default)]
    pub cursor: Option<String>,
}

struct ListAgents;

/// The `ListAgents` tool.
pub(crate) fn tool() -> Result<Tool, baton_engine::schema::InvalidSchema> {
    let def = ToolDef::new(
        "ListAgents",
        "Lists the agents of this session you can SendMessage to: every subagent started \
         with the Agent tool, as a tree under the agent that started it, with its id, name, \
         type and state (running, finished, failed, cancelled). Names are the address: send \
         with `SendMessage({to: \"<name>\", message: \"...\"})`; an agent without a name is \
         addressed by its id.",
    )
    .alias("ListPeers")
    .search_hint("list agents you can SendMessage to")
    .should_defer(true);
    Tool::typed::<ListAgentsInput, _>(def, ListAgents)
}

#[async_trait]
impl ToolLogic<ListAgentsInput> for ListAgents {
    fn is_concurrency_safe(&self, _input: &ListAgentsInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &ListAgentsInput) -> bool {
        true
    }

    async fn validate_input(
        &self,
        input: &ListAgentsInput,
        _ctx: &ToolContext,
    ) -> Result<(), String> {
        for (field, value) in [
            ("channel", &input.channel),
            ("q", &input.q),
            ("cursor", &input.cursor),
        ] {
            if value
                .as_ref()
                .is_some_and(|v| v.chars().count() > FIELD_CHARS)
            {
                return Err(format!("`{field}` is longer than {FIELD_CHARS} characters"));
            }
        }
        Ok(())
    }

    async fn call(
        &self,
        input: ListAgentsInput,
        ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let records = AgentTree::of(&ctx.session).all();
        let mut listing = listing(&records);
        let unused = [("channel", &input.channel), ("q", &input.q)];
        for (field, value) in unused {
            if value.as_ref().is_some_and(|v| !v.trim().is_empty()) {
                listing.push_str(&format!(
                    "\n(`{field}` selects other sessions, which are not available here; ignored.)"
                ));
            }
        }
        let rows: Vec<_> = records
            .iter()
            .map(|r| {
                json!({
                    "id": r.id,
                    "name": r.name,
                    "type": r.agent_type,
                    "status": r.state.as_str(),
                    "parent": r.parent,
                    "background": r.background,
                })
            })
            .collect();
        // Claude Code's output shape, for hooks that read `tool_response`.
        let response = json!({
            "listing": listing,
            "sections": [{"kind": "subagent", "total": rows.len(), "rows": rows}],
        });
        Ok(ToolOutput::text(listing).with_response(response))
    }
}

/// The tree as text: each agent under the one that started it.
fn listing(records: &[AgentRecord]) -> String {
    if records.is_empty() {
        return "No agents: this session has started none. Start one with the Agent tool \
                (give it a `name` to address it later)."
            .into();
    }
    let mut out = format!("{} agents of this session:\n", records.len());
    let known = |id: &str| records.iter().any(|r| r.id == id);
    // Roots: started by the main agent, or by one not listed.
    let roots = records
        .iter()
        .filter(|r| r.parent.as_deref().is_none_or(|p| !known(p)));
    for root in roots {
        row(records, root, 0, &mut out);
    }
    out.trim_end().to_string()
}

fn row(records: &[AgentRecord], record: &AgentRecord, depth: usize, out: &mut String) {
    // The tree is built from start order, so a cycle cannot occur; the
    // depth cap keeps a bug from looping anyway.
    if depth > 16 {
        return;
    }
    let name = record
        .name
        .as_deref()
        .map_or_else(String::new, |n| format!(" \"{n}\""));
    let mode = if record.background {
        ", background"
    } else {
        ""
    };
    out.push_str(&format!(
        "{}- {}{name} ({}{mode}) {}: {}\n",
        "  ".repeat(depth),
        record.id,
        record.agent_type,
        record.state.as_str(),
        record.description.replace('\n', " "),
    ));
    for child in records
        .iter()
        .filter(|r| r.parent.as_deref() == Some(record.id.as_str()))
    {
        row(records, child, depth + 1, out);
    }
}
