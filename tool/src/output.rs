//! What a call produces.

use serde_json::Value;

use crate::content::ContentBlock;
use crate::context::ContextModifier;

/// A successful return from a tool's `call`. `is_error` lets a tool report a
/// failure it detected itself (a command exited 1) while still returning
/// content; such results are plain text, not `<tool_use_error>`.
#[derive(Debug, Default)]
pub struct ToolOutput {
    /// What the model reads.
    pub content: Vec<ContentBlock>,
    /// The tool reports a failure of its own (shown as a plain error).
    pub is_error: bool,
    /// Extra messages for the conversation, in the host's wire format.
    pub extra_messages: Vec<Value>,
    /// Applied to the shared context after the call (ignored for safe calls).
    pub modifier: Option<ContextModifier>,
    /// The structured result Claude Code gives hooks as `tool_response`
    /// (its per-tool output types); `None`: derived from input and text.
    pub response: Option<Value>,
    /// Facts about a shell command for the host (not the model); see
    /// [`crate::shell_details`]. Boxed: most tools have none, and every
    /// output moves through the pipeline.
    pub shell: Option<Box<crate::shell_details::ShellDetails>>,
}

impl ToolOutput {
    /// An output of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![ContentBlock::text(text)],
            ..Default::default()
        }
    }

    /// An output of one JSON block.
    pub fn json(value: Value) -> Self {
        ToolOutput {
            content: vec![ContentBlock::json(value)],
            ..Default::default()
        }
    }

    /// A failure the tool reports as part of its normal output.
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput {
            content: vec![ContentBlock::text(text)],
            is_error: true,
            ..Default::default()
        }
    }

    /// The same output with `block` appended.
    pub fn with_block(mut self, block: ContentBlock) -> Self {
        self.content.push(block);
        self
    }

    /// The same output with `response` as the hooks' `tool_response`.
    pub fn with_response(mut self, response: Value) -> Self {
        self.response = Some(response);
        self
    }

    /// The same output, changing the context for later calls.
    pub fn with_modifier(mut self, modifier: ContextModifier) -> Self {
        self.modifier = Some(modifier);
        self
    }
}

/// A tool's `call` failed. The message is shown to the model as plain text,
/// so it should say what went wrong and what to try instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ToolError {
    /// The text the model reads.
    pub message: String,
}

impl ToolError {
    /// An error with `message` for the model.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
        }
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError { message }
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::new(message)
    }
}

impl From<std::io::Error> for ToolError {
    fn from(err: std::io::Error) -> Self {
        ToolError::new(err.to_string())
    }
}
