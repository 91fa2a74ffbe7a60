//! The one renderer of tool definitions, and the way back for their calls.
//!
//! [`WireTool::of`] is the only place a tool becomes a definition: names
//! mapped where the format forbids them, strict schemas for OpenAI where
//! they keep their meaning. Every entry point goes through it: the request
//! lists of [`super::request_tools`], ToolSearch's loaded definitions, the
//! token estimate of deferral. [`WireTools::resolve`] undoes both on each
//! call the model makes: the pool's name comes back, and the `null`s a
//! strict schema forced in for optional fields are removed before the
//! pipeline validates the input.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::names::{wire_name, NameMap};
use super::strict::{strip_optional_nulls, to_strict};
use super::WireFormat;
use baton_tool::call::ToolUse;
use baton_tool::pool::ToolPool;
use baton_tool::tool::Tool;

/// One tool as sent: its wire name, description, schema and strictness.
#[derive(Clone, Debug, PartialEq)]
pub struct WireTool {
    /// The name the model sees (mapped where the format needs it).
    pub name: String,
    /// The text the model reads about the tool.
    pub description: String,
    /// The input schema as sent (the strict form where it is strict).
    pub schema: Value,
    /// `Some(true)` when the schema is the strict form (OpenAI only).
    pub strict: Option<bool>,
}

impl WireTool {
    /// `tool` as `format` sends it.
    pub fn of(tool: &Tool, format: WireFormat) -> Self {
        let openai = matches!(format, WireFormat::OpenAiChat | WireFormat::OpenAiResponses);
        let (schema, strict) = match openai.then(|| to_strict(tool.input_schema())) {
            Some(Some(s)) => (s, Some(true)),
            Some(None) => (tool.input_schema().clone(), Some(false)),
            None => (tool.input_schema().clone(), None),
        };
        WireTool {
            name: wire_name(tool.name()).into_owned(),
            description: tool.def().prompt_text().to_string(),
            schema,
            strict,
        }
    }

    /// The definition in `format`'s shape. OpenAI always gets `strict`
    /// (Responses requires the key; `false` where the schema cannot be made
    /// strict without changing its meaning, Baton validates inputs itself).
    pub fn to_json(&self, format: WireFormat) -> Value {
        match format {
            WireFormat::Anthropic => json!({
                "name": self.name,
                "description": self.description,
                "input_schema": self.schema,
            }),
            WireFormat::OpenAiChat => json!({
                "type": "function",
                "function": {
                    "name": self.name,
                    "description": self.description,
                    "parameters": self.schema,
                    "strict": self.strict.unwrap_or(false),
                }
            }),
            WireFormat::OpenAiResponses => json!({
                "type": "function",
                "name": self.name,
                "description": self.description,
                "parameters": self.schema,
                "strict": self.strict.unwrap_or(false),
            }),
        }
    }
}

/// One tool's full definition in `format` (see [`WireTool::of`]).
pub fn definition(tool: &Tool, format: WireFormat) -> Value {
    WireTool::of(tool, format).to_json(format)
}

/// The tools of a pool in one format.
#[derive(Clone, Debug)]
pub struct WireTools {
    format: WireFormat,
    pool: ToolPool,
    tools: Vec<WireTool>,
    names: NameMap,
    /// Pool names of the tools sent with a strict schema.
    strict: HashSet<String>,
}

impl WireTools {
    /// The tools of `pool`, rendered for `format`.
    pub fn new(pool: &ToolPool, format: WireFormat) -> Self {
        let tools: Vec<WireTool> = pool.tools().map(|t| WireTool::of(t, format)).collect();
        let strict = pool
            .tools()
            .zip(&tools)
            .filter(|(_, w)| w.strict == Some(true))
            .map(|(t, _)| t.name().to_string())
            .collect();
        WireTools {
            format,
            pool: pool.clone(),
            tools,
            names: NameMap::for_pool(pool),
            strict,
        }
    }

    /// The format the tools are rendered for.
    pub fn format(&self) -> WireFormat {
        self.format
    }

    /// The tools as sent, in pool order.
    pub fn tools(&self) -> &[WireTool] {
        &self.tools
    }

    /// The `tools` array of a request in this format.
    pub fn definitions(&self) -> Value {
        Value::Array(self.tools.iter().map(|t| self.definition(t)).collect())
    }

    /// The definition of pool tool `name` in this format (mapped name,
    /// strict schema where possible), if the pool has it. A host that sends
    /// only some tools (deferred ones left out until ToolSearch loads them)
    /// picks them one by one here.
    pub fn definition_for(&self, name: &str) -> Option<Value> {
        let wire = wire_name(name);
        self.tools
            .iter()
            .find(|t| t.name == wire)
            .map(|t| self.definition(t))
    }

    fn definition(&self, t: &WireTool) -> Value {
        t.to_json(self.format)
    }

    /// The call as the pool knows it: the tool's own name, and for a strict
    /// schema no `null` standing for an absent optional field.
    pub fn resolve(&self, mut call: ToolUse) -> ToolUse {
        let name = self.names.tool_name(&call.name);
        if name != call.name {
            call.name = name.to_string();
        }
        if call.input_error.is_none() && self.strict.contains(&call.name) {
            if let Some(tool) = self.pool.get(&call.name) {
                strip_optional_nulls(&mut call.input, tool.input_schema());
            }
        }
        call
    }

    /// The name the model sees for pool tool `name`.
    pub fn wire_name<'a>(&self, name: &'a str) -> std::borrow::Cow<'a, str> {
        wire_name(name)
    }
}
