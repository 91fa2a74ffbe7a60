//! OpenAI Chat Completions: `tool_calls` in, `role: tool` messages out.

pub mod message;
pub mod stream;

pub use message::{
    choices_note, parse_tool_uses, tool_definitions, tool_messages, tool_use_from_call,
};
