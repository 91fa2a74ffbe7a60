//! A pool as one wire format offers it, and the way back for its calls.
//!
//! [`WireTools`] renders the definitions (names mapped where the format
//! forbids them, strict schemas for OpenAI where they keep their meaning)
//! and [`WireTools::resolve`] undoes both on each call the model makes: the
//! pool's name comes back, and the `null`s a strict schema forced in for
//! optional fields are removed before the pipeline validates the input.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::names::{wire_name, NameMap};
use super::strict::{strip_optional_nulls, to_strict};
use super::WireFormat;
use crate::call::ToolUse;
use crate::pool::ToolPool;

/// One tool as sent: its wire name, description, schema and strictness.
#[derive(Clone, Debug, PartialEq)]
pub struct WireTool {
    pub name: String,
    pub description: String,
    pub schema: Value,
    /// `Some(true)` when the schema is the strict form (OpenAI only).
    pub strict: Option<bool>,
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
    pub fn new(pool: &ToolPool, format: WireFormat) -> Self {
        let openai = matches!(format, WireFormat::OpenAiChat | WireFormat::OpenAiResponses);
        let mut strict = HashSet::new();
        let tools = pool
            .tools()
            .map(|t| {
                let (schema, is_strict) = match openai.then(|| to_strict(t.input_schema())) {
                    Some(Some(s)) => {
                        strict.insert(t.name().to_string());
                        (s, Some(true))
                    }
                    Some(None) => (t.input_schema().clone(), Some(false)),
                    None => (t.input_schema().clone(), None),
                };
                WireTool {
                    name: wire_name(t.name()).into_owned(),
                    description: t.def().prompt_text().to_string(),
                    schema,
                    strict: is_strict,
                }
            })
            .collect();
        WireTools {
            format,
            pool: pool.clone(),
            tools,
            names: NameMap::for_pool(pool),
            strict,
        }
    }

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
        match self.format {
            WireFormat::Anthropic => json!({
                "name": t.name,
                "description": t.description,
                "input_schema": t.schema,
            }),
            WireFormat::OpenAiChat => json!({
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.schema,
                    "strict": t.strict.unwrap_or(false),
                }
            }),
            WireFormat::OpenAiResponses => json!({
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.schema,
                "strict": t.strict.unwrap_or(false),
            }),
        }
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
