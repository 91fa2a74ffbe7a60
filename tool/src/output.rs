//! What a call produces.
//!
//! Besides the content the model reads, a tool gives the views of its
//! result that others read, built by the tool itself because only it knows
//! what it did: the structured result hooks get as `tool_response`
//! ([`ToolOutput::response`]), and facts for the host
//! ([`ToolOutput::facts`]: what a shell command did, the files written).
//! The engine passes them on unchanged (a remote worker's too); it never
//! rebuilds them from the tool's name or text.

use std::path::PathBuf;

use serde_json::Value;

use crate::content::ContentBlock;
use crate::context::ContextModifier;
use crate::shell_details::ShellDetails;

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
    /// The structured result PostToolUse and PostToolBatch hooks get as
    /// `tool_response`. Built-in tools give the shape Claude Code gives for
    /// the tool of the same job (the agent SDK's `sdk-tools.d.ts` output
    /// types), which published hooks read (`.tool_response.stdout`).
    /// `None`: hooks get the content blocks, as Claude Code gives MCP
    /// results.
    pub response: Option<Value>,
    /// Facts about the call for the host, not the model (they become the
    /// result's [`crate::call_details::CallDetails`]). Boxed: most tools
    /// have none, and every output moves through the pipeline.
    pub facts: Option<Box<Facts>>,
}

/// What a tool tells the host about its call besides the content.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// What a shell command did; see [`crate::shell_details`].
    pub shell: Option<ShellDetails>,
    /// Files the call wrote or edited; kept only when the call succeeds.
    pub files_written: Vec<PathBuf>,
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

    /// The facts for the host, made on first use.
    pub fn facts_mut(&mut self) -> &mut Facts {
        self.facts.get_or_insert_with(Default::default)
    }

    /// The same output, reporting that the call wrote `path`.
    pub fn with_file_written(mut self, path: impl Into<PathBuf>) -> Self {
        self.facts_mut().files_written.push(path.into());
        self
    }

    /// The same output, with what its shell command did.
    pub fn with_shell(mut self, shell: ShellDetails) -> Self {
        self.facts_mut().shell = Some(shell);
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
