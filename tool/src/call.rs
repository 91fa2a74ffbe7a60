//! A call going in ([`ToolUse`]) and its result coming out ([`CallResult`]).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::ContentBlock;
use crate::context::ContextModifier;

/// One `tool_use` block as the model sent it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolUse {
    /// The `tool_use` id; the result carries it back.
    pub id: String,
    /// The tool's name as the model wrote it.
    pub name: String,
    /// The input (`{}` when it was not valid JSON, see `input_error`).
    pub input: Value,
    /// Set when the input arrived as text that was not valid JSON; the input
    /// is then `{}` (SPEC §4.3) and the error result says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_error: Option<String>,
    /// Who made the call, as the wire format says: absent or `{"type":
    /// "direct"}` for the model itself, `{"type": "code_execution_…",
    /// "tool_id": …}` (Anthropic) or `{"type": "program", "caller_id": …}`
    /// (OpenAI Responses) for code the model runs on the provider's side.
    /// Kept verbatim; hooks and permission policies see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<Value>,
}

impl ToolUse {
    /// A call of `name` with `input`, made by the model itself.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        ToolUse {
            id: id.into(),
            name: name.into(),
            input,
            input_error: None,
            caller: None,
        }
    }

    /// The same call, made by `caller` (see [`ToolUse::caller`]).
    pub fn with_caller(mut self, caller: Option<Value>) -> Self {
        self.caller = caller;
        self
    }

    /// True when code the model runs (not the model directly) made the call.
    pub fn is_programmatic(&self) -> bool {
        self.caller
            .as_ref()
            .and_then(|c| c.get("type"))
            .and_then(Value::as_str)
            .is_some_and(|t| t != "direct")
    }

    /// A call whose input is JSON text (as it accumulates while streaming).
    /// Text that does not parse becomes `{}` with the parse error kept.
    pub fn from_json_text(id: impl Into<String>, name: impl Into<String>, text: &str) -> Self {
        let (input, input_error) = if text.trim().is_empty() {
            (Value::Object(Default::default()), None)
        } else {
            match serde_json::from_str::<Value>(text) {
                Ok(v) => (v, None),
                Err(e) => (Value::Object(Default::default()), Some(e.to_string())),
            }
        };
        ToolUse {
            id: id.into(),
            name: name.into(),
            input,
            input_error,
            caller: None,
        }
    }
}

/// How a call ended, for hosts, policies and tests; the model only sees the
/// content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// The tool ran and reported success.
    Success,
    /// The tool ran and reported an error itself (`is_error` or `Err`).
    ToolError,
    /// The tool panicked.
    Panicked,
    /// No tool of the pool has the call's name.
    UnknownTool,
    /// The input did not match the tool's schema (or was not JSON).
    InvalidInput,
    /// The tool's own `validate_input` rejected the input.
    ValidationFailed,
    /// Permission or a hook said no.
    Denied,
    /// Cancelled; `started` tells whether it was stopped while running.
    Cancelled {
        /// Whether it was running when stopped (or never started).
        started: bool,
    },
    /// The engine failed in a way that is not the tool's fault.
    Internal,
}

/// The single result of one call.
#[derive(Debug)]
pub struct CallResult {
    /// The `tool_use` id of the call.
    pub call_id: String,
    /// The tool called (its name in the pool).
    pub tool_name: String,
    /// What the model reads as the result.
    pub content: Vec<ContentBlock>,
    /// Whether the result is marked `is_error` for the model.
    pub is_error: bool,
    /// How the call ended.
    pub outcome: Outcome,
    /// Messages the tool adds to the conversation after the result, in the
    /// host's wire format.
    pub extra_messages: Vec<Value>,
    /// Context change to apply before later calls (only from unsafe calls).
    pub modifier: Option<ContextModifier>,
    /// A hook asked to end the turn after this batch.
    pub stop_turn: Option<String>,
    /// Non-blocking problems (hook errors) for the host's log.
    pub diagnostics: Vec<String>,
    /// The tool's structured result for hooks (`tool_response`).
    pub response: Option<Value>,
    /// Hook `systemMessage`s: for the user, not the model.
    pub system_messages: Vec<String>,
    /// This call's entry for PostToolBatch hooks (only when there are any).
    pub batch_record: Option<Value>,
    /// Facts for the host beside the model's block (duration, spill file,
    /// files written); see [`crate::call_details`]. Boxed: results move
    /// through channels and most calls have few details.
    pub details: Box<crate::call_details::CallDetails>,
}

impl CallResult {
    /// A result with just content.
    pub fn new(
        call_id: impl Into<String>,
        tool_name: impl Into<String>,
        content: Vec<ContentBlock>,
        is_error: bool,
        outcome: Outcome,
    ) -> Self {
        CallResult {
            call_id: call_id.into(),
            tool_name: tool_name.into(),
            content,
            is_error,
            outcome,
            extra_messages: Vec::new(),
            modifier: None,
            stop_turn: None,
            diagnostics: Vec::new(),
            response: None,
            system_messages: Vec::new(),
            batch_record: None,
            details: Default::default(),
        }
    }

    /// An error result whose only content is `text`.
    pub fn error(call: &ToolUse, text: String, outcome: Outcome) -> Self {
        CallResult::new(
            call.id.clone(),
            call.name.clone(),
            vec![ContentBlock::text(text)],
            true,
            outcome,
        )
    }

    /// All text content joined (images skipped).
    pub fn text(&self) -> String {
        crate::content::joined_text(&self.content)
    }
}
