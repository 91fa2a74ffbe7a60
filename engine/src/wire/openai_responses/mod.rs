//! OpenAI Responses: `function_call` items in, `function_call_output` items
//! out.

pub mod message;
pub mod stream;

pub use message::{output_item, output_items, parse_tool_uses, tool_definitions};
