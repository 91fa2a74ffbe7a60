//! Deterministic MCP-like tools for tests and benchmarks: names, prose and
//! schemas shaped like those of real servers (GitHub, Slack, Jira, …), so
//! that sizes and search behaviour are realistic.

use std::sync::Arc;

use baton_engine::{
    async_trait, Tool, ToolContext, ToolDef, ToolError, ToolLogic, ToolOrigin, ToolOutput,
};
use serde_json::{json, Value};

const SERVERS: [&str; 10] = [
    "github", "slack", "jira", "linear", "notion", "postgres", "sentry", "figma", "stripe",
    "gdrive",
];
const VERBS: [&str; 10] = [
    "get", "list", "create", "update", "delete", "search", "add", "remove", "archive", "export",
];
const NOUNS: [&str; 10] = [
    "issue", "comment", "user", "project", "file", "message", "channel", "invoice", "page",
    "record",
];

struct Echo;

#[async_trait]
impl ToolLogic<Value> for Echo {
    async fn call(&self, input: Value, _: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(input.to_string()))
    }
}

/// The `i`-th tool: unique for any `i` (a numeric suffix past 1,000).
pub fn tool(i: usize) -> Arc<Tool> {
    let server = SERVERS[i % 10];
    let verb = VERBS[(i / 10) % 10];
    let noun = NOUNS[(i / 100) % 10];
    let round = i / 1000;
    let name = if round == 0 {
        format!("mcp__{server}__{verb}_{noun}")
    } else {
        format!("mcp__{server}{round}__{verb}_{noun}")
    };
    let description = format!(
        "{verb} a {noun} in {server}. Returns the {noun} as JSON with its id, title, \
         owner and timestamps. Requires a {server} token with access to the {noun}; \
         fails with a clear message when the {noun} does not exist."
    );
    let schema = json!({
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": format!("The {noun} id, as shown in {server}.")},
            "workspace": {"type": "string", "description": "Workspace or organisation slug."},
            "fields": {
                "type": "array",
                "items": {"type": "string", "enum": ["title", "owner", "created", "updated", "labels"]},
                "description": "Fields to return; all when omitted."
            },
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "Most items to return."},
            "options": {
                "type": "object",
                "properties": {
                    "include_archived": {"type": "boolean"},
                    "sort": {"type": "string", "enum": ["asc", "desc"]}
                },
                "additionalProperties": false
            }
        },
        "required": ["id"],
        "additionalProperties": false
    });
    let def = ToolDef::new(name, description).origin(ToolOrigin::Mcp {
        server: server.to_string(),
    });
    Arc::new(Tool::raw(def, schema, Echo).expect("a valid schema"))
}

pub fn tools(n: usize) -> Vec<Arc<Tool>> {
    (0..n).map(tool).collect()
}
