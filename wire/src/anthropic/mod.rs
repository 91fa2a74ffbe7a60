//! Anthropic Messages: `tool_use` blocks in, `tool_result` blocks out.

pub mod message;
pub mod stream;

pub use message::{
    parse_tool_uses, parse_tool_uses_str, tool_definitions, tool_result_block, tool_use_from_block,
    user_message,
};
