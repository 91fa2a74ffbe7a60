//! The tool list of the host's next model request, per wire format.
//!
//! A host should never have to work out which definitions to send: this is
//! computed from the pool, the session's [`Deferral`] and the tools the model
//! has loaded so far.
//!
//! - Anthropic, with references: every tool is listed, deferred ones marked
//!   `defer_loading: true`. The API keeps those out of the prompt until a
//!   `tool_reference` block in a ToolSearch result names them, so the list
//!   never changes and the prompt cache survives a search.
//! - Anthropic without references, OpenAI Chat Completions and Responses:
//!   deferred tools are left out and announced by name in a reminder text;
//!   once ToolSearch loads one, its full definition is appended to the list
//!   (after the others, in discovery order, so the list only grows at its
//!   end).

use std::collections::HashSet;
use std::str::FromStr;

use serde::Serialize;
use serde_json::{json, Value};

use super::{is_deferred_now, DiscoveredTools};
use crate::pool::ToolPool;
use crate::session::Session;
use crate::tool::Tool;

/// Which API's tool-definition shape to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolFormat {
    /// Anthropic Messages (`name`, `description`, `input_schema`).
    #[default]
    Anthropic,
    /// OpenAI Chat Completions (`{"type":"function","function":{…}}`).
    #[serde(rename = "openai_chat")]
    OpenAiChat,
    /// OpenAI Responses (flat `{"type":"function","name",…}`).
    #[serde(rename = "openai_responses")]
    OpenAiResponses,
}

impl FromStr for ToolFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "anthropic" => Ok(ToolFormat::Anthropic),
            "openai" | "openai-chat" | "openai_chat" => Ok(ToolFormat::OpenAiChat),
            "openai-responses" | "openai_responses" | "responses" => {
                Ok(ToolFormat::OpenAiResponses)
            }
            other => Err(format!(
                "unknown format `{other}` (expected anthropic, openai-chat or openai-responses)"
            )),
        }
    }
}

/// One tool's full definition in `format`.
pub fn definition(tool: &Tool, format: ToolFormat) -> Value {
    let (name, description, schema) = (
        tool.name(),
        tool.def().prompt_text(),
        tool.input_schema().clone(),
    );
    match format {
        ToolFormat::Anthropic => json!({
            "name": name,
            "description": description,
            "input_schema": schema,
        }),
        ToolFormat::OpenAiChat => json!({
            "type": "function",
            "function": {"name": name, "description": description, "parameters": schema},
        }),
        // `strict` is required by the Responses API; Baton validates inputs
        // itself, so the model is not constrained further.
        ToolFormat::OpenAiResponses => json!({
            "type": "function",
            "name": name,
            "description": description,
            "parameters": schema,
            "strict": false,
        }),
    }
}

/// What the host sends with its next request.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RequestTools {
    pub format: ToolFormat,
    /// The `tools` array of the request.
    pub tools: Vec<Value>,
    /// Deferred tools the model has not loaded, in pool order.
    pub deferred: Vec<String>,
    /// Deferred tools the model has loaded, in discovery order.
    pub loaded: Vec<String>,
    /// Text naming the deferred tools, for the host to insert into the
    /// conversation (as a system or user message); `None` when nothing is
    /// deferred.
    pub reminder: Option<String>,
}

/// The tool list for the next request in `format`, from the session's state.
pub fn request_tools(pool: &ToolPool, session: &Session, format: ToolFormat) -> RequestTools {
    let deferral = super::deferral_of(session);
    // One snapshot, so a search finishing meanwhile cannot make a tool both
    // deferred and loaded.
    let discovered: Vec<String> = session.slots().get_or_default::<DiscoveredTools>().names();
    let discovered_set: HashSet<&str> = discovered.iter().map(String::as_str).collect();
    let is_discovered = |name: &str| discovered_set.contains(name);
    let references = format == ToolFormat::Anthropic && deferral.settings.tool_references;
    let mut tools = Vec::new();
    let mut deferred = Vec::new();
    for tool in pool.tools() {
        if tool.name() == super::TOOL_SEARCH && !deferral.active {
            // Nothing to search: do not spend tokens on it.
            continue;
        }
        if !is_deferred_now(tool, pool, &deferral) {
            tools.push(definition(tool, format));
            continue;
        }
        if !is_discovered(tool.name()) {
            deferred.push(tool.name().to_string());
        }
        if references {
            let mut def = definition(tool, format);
            def["defer_loading"] = Value::Bool(true);
            tools.push(def);
        }
    }
    let loaded: Vec<String> = discovered
        .iter()
        .filter(|name| {
            pool.get(name)
                .is_some_and(|t| is_deferred_now(t, pool, &deferral))
        })
        .cloned()
        .collect();
    if !references {
        for name in &loaded {
            if let Some(tool) = pool.get(name) {
                tools.push(definition(tool, format));
            }
        }
    }
    RequestTools {
        format,
        reminder: reminder(&deferred),
        tools,
        deferred,
        loaded,
    }
}

/// Deferred tools the model has not loaded yet, in pool order.
pub fn deferred_names(pool: &ToolPool, session: &Session) -> Vec<String> {
    let deferral = super::deferral_of(session);
    let discovered = session.slots().get_or_default::<DiscoveredTools>();
    pool.tools()
        .filter(|t| is_deferred_now(t, pool, &deferral) && !discovered.contains(t.name()))
        .map(|t| t.name().to_string())
        .collect()
}

/// The announcement of deferred tools by name.
pub fn reminder(deferred: &[String]) -> Option<String> {
    if deferred.is_empty() {
        return None;
    }
    Some(format!(
        "<system-reminder>\nThese tools are available but their definitions are not loaded yet. \
         To use one, first call ToolSearch with query \"select:<name>\" (several: \
         \"select:A,B\"), or with keywords to find tools by what they do:\n{}\n</system-reminder>",
        deferred.join("\n")
    ))
}
