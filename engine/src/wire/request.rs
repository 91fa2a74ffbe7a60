//! The tool list of the host's next model request: deferral applied, then
//! each definition rendered by the one renderer ([`super::definition`]).
//!
//! Every entry point asks here (`baton tools`, serve's `tools` line and
//! `subagent_request`, `Engine::request_tools`, `baton agent` and its
//! subagents), so they all send the same list: names mapped, strict schemas
//! for OpenAI, deferred tools marked or left out.
//!
//! - Anthropic, with references: every tool is listed, deferred ones marked
//!   `defer_loading: true`. The API keeps those out of the prompt until a
//!   `tool_reference` block in a ToolSearch result names them (by the same
//!   mapped name), so the list never changes and the prompt cache survives
//!   a search.
//! - Anthropic without references, OpenAI Chat Completions and Responses:
//!   deferred tools are left out and announced by name in a reminder text;
//!   once ToolSearch loads one, its full definition is appended to the list
//!   (after the others, in discovery order, so the list only grows at its
//!   end).

use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;

use super::{definition, WireFormat};
use crate::deferred::{deferral_of, is_deferred_now, reminder, DiscoveredTools, TOOL_SEARCH};
use crate::pool::ToolPool;
use crate::session::Session;

/// What the host sends with its next request.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RequestTools {
    /// The format the tools are rendered in.
    pub format: WireFormat,
    /// The `tools` array of the request.
    pub tools: Vec<Value>,
    /// Deferred tools the model has not loaded, in pool order (the pool's
    /// names, which ToolSearch's `select:` takes).
    pub deferred: Vec<String>,
    /// Deferred tools the model has loaded, in discovery order.
    pub loaded: Vec<String>,
    /// Text naming the deferred tools, for the host to insert into the
    /// conversation (as a system or user message); `None` when nothing is
    /// deferred.
    pub reminder: Option<String>,
}

/// The tool list for the next request in `format`, from the session's state
/// and `pool` (the session's pool, or a subagent's narrowed one).
pub fn request_tools(pool: &ToolPool, session: &Session, format: WireFormat) -> RequestTools {
    let deferral = deferral_of(session);
    // One snapshot, so a search finishing meanwhile cannot make a tool both
    // deferred and loaded.
    let discovered: Vec<String> = session.slots().get_or_default::<DiscoveredTools>().names();
    let discovered_set: HashSet<&str> = discovered.iter().map(String::as_str).collect();
    let references = format == WireFormat::Anthropic && deferral.settings.tool_references;
    let mut tools = Vec::new();
    let mut deferred = Vec::new();
    for tool in pool.tools() {
        if tool.name() == TOOL_SEARCH && !deferral.active {
            // Nothing to search: do not spend tokens on it.
            continue;
        }
        if !is_deferred_now(tool, pool, &deferral) {
            tools.push(definition(tool, format));
            continue;
        }
        if !discovered_set.contains(tool.name()) {
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
