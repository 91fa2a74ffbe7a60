//! Wire formats: how calls arrive and results leave.
//!
//! One folder per format, each with a `message` module (a whole assistant
//! message or response in, the results message out, tool definitions) and,
//! once it exists, a `stream` module (the model's streaming events in, each
//! call handed over the moment it is complete):
//!
//! - [`anthropic`]: Anthropic Messages (`tool_use` / `tool_result`);
//! - [`openai_chat`]: OpenAI Chat Completions (`tool_calls` / `role: tool`);
//! - [`openai_responses`]: OpenAI Responses (`function_call` /
//!   `function_call_output` items).
//!
//! Parsing is lenient where the APIs evolve (unknown block types are passed
//! over, never executed) and strict where a mistake would lose a call (a call
//! without an id is an error, not silently dropped).

pub mod answer;
pub mod anthropic;
pub mod bounded;
pub mod codex;
pub mod detect;
pub mod names;
pub mod openai_chat;
pub mod openai_responses;
mod request;
pub mod stream;
pub mod strict;
pub mod tool_changes;
mod tools;

pub use answer::{AnswerWriter, Asked};
pub use bounded::BoundedMessage;
pub use codex::ToolSet;
pub use detect::{detect, parse};
pub use request::RequestTools;
pub use stream::{Completed, FnSink, StreamError, StreamParser, StreamSink};
pub use tools::{definition, WireTool, WireTools};

use serde_json::Value;

use baton_tool::call::{CallResult, ToolUse};
use baton_tool::pool::ToolPool;

/// The host's message could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The text is not JSON (serde's message).
    #[error("not JSON: {0}")]
    NotJson(String),
    /// The JSON is not an assistant message of the format (what is wrong).
    #[error("not an assistant message: {0}")]
    NotAMessage(String),
    /// One tool call of the message cannot be read.
    #[error("malformed tool call at index {index}: {reason}")]
    BadToolCall {
        /// Its position among the message's content items.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// Which wire format to speak: the one format type of every entry point
/// (runs, serve, tool lists, ToolSearch results, `baton agent`). More
/// formats may be added, so matches on it outside this crate need a
/// wildcard arm; the methods below dispatch for callers that do not care
/// which one it is.
///
/// Serialized (in `tools` lines and [`RequestTools`]) as `anthropic`,
/// `openai_chat` or `openai_responses`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WireFormat {
    /// Anthropic Messages.
    #[default]
    Anthropic,
    /// OpenAI Chat Completions.
    #[serde(rename = "openai_chat")]
    OpenAiChat,
    /// OpenAI Responses.
    #[serde(rename = "openai_responses")]
    OpenAiResponses,
}

impl WireFormat {
    /// Every format, in a stable order (for tests and help texts).
    pub const ALL: [WireFormat; 3] = [
        WireFormat::Anthropic,
        WireFormat::OpenAiChat,
        WireFormat::OpenAiResponses,
    ];

    /// The name used on the command line and in docs.
    pub fn name(self) -> &'static str {
        match self {
            WireFormat::Anthropic => "anthropic",
            WireFormat::OpenAiChat => "openai-chat",
            WireFormat::OpenAiResponses => "openai-responses",
        }
    }

    /// The calls of an assistant message (or response object) in this format.
    pub fn parse_tool_uses(self, message: &Value) -> Result<Vec<ToolUse>, WireError> {
        match self {
            WireFormat::Anthropic => anthropic::parse_tool_uses(message),
            WireFormat::OpenAiChat => openai_chat::parse_tool_uses(message),
            WireFormat::OpenAiResponses => openai_responses::parse_tool_uses(message),
        }
    }

    /// What answers a batch in this format: the user message (Anthropic),
    /// the array of `tool` messages (Chat Completions) or the array of
    /// `function_call_output` items (Responses).
    pub fn results_message<'a>(self, results: impl IntoIterator<Item = &'a CallResult>) -> Value {
        match self {
            WireFormat::Anthropic => anthropic::user_message(results),
            WireFormat::OpenAiChat => openai_chat::tool_messages(results),
            WireFormat::OpenAiResponses => openai_responses::output_items(results),
        }
    }

    /// What answers a batch whose calls came in `calls` (the assistant
    /// message, the response's output items or the whole conversation):
    /// as [`Self::results_message`], except that on Responses each result
    /// of a native local tool (`shell_call`, `apply_patch_call`,
    /// `local_shell_call`, `custom_tool_call`) is in its own output type.
    pub fn answer<'a>(
        self,
        calls: &Value,
        results: impl IntoIterator<Item = &'a CallResult>,
    ) -> Value {
        match self {
            WireFormat::OpenAiResponses => openai_responses::answer_items(calls, results),
            other => other.results_message(results),
        }
    }

    /// Every tool definition of the pool in this format, nothing deferred
    /// (see [`request_tools`] for the list a request should carry).
    pub fn tool_definitions(self, pool: &ToolPool) -> Value {
        match self {
            WireFormat::Anthropic => anthropic::tool_definitions(pool),
            WireFormat::OpenAiChat => openai_chat::tool_definitions(pool),
            WireFormat::OpenAiResponses => openai_responses::tool_definitions(pool),
        }
    }
}

impl std::fmt::Display for WireFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for WireFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "anthropic" => Ok(WireFormat::Anthropic),
            // `openai` was the only OpenAI format before Responses existed;
            // the snake_case names are how the format is serialized.
            "openai-chat" | "openai" | "openai_chat" => Ok(WireFormat::OpenAiChat),
            "openai-responses" | "openai_responses" | "responses" => {
                Ok(WireFormat::OpenAiResponses)
            }
            other => Err(format!(
                "unknown format `{other}` (expected anthropic, openai-chat or openai-responses)"
            )),
        }
    }
}
