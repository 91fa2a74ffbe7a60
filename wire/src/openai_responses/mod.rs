//! OpenAI Responses: `function_call` items in, `function_call_output` items
//! out.

pub mod message;
pub mod native;
pub mod stream;

pub use message::{
    answer_items, answer_items_in, output_item, output_items, parse_tool_uses, tool_definitions,
};
