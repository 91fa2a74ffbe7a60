//! What a tool hands back to the model.
//!
//! The wire formats disagree on what a tool result may contain (Anthropic takes
//! text and image blocks, OpenAI takes a string), so tools produce this neutral
//! form and `wire` renders it. Structured JSON stays structured until the last
//! moment so hooks and hosts can read it without re-parsing text.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One block of a tool's output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// A base64-encoded image (`media_type` such as `image/png`).
    Image {
        /// The image's MIME type.
        media_type: String,
        /// The image, base64-encoded.
        data: String,
    },
    /// Structured output; rendered as JSON text for the model.
    Json {
        /// The value.
        value: Value,
    },
    /// Loads a deferred tool's definition (Anthropic's `tool_reference`;
    /// only ToolSearch produces it, and only for hosts that accept it).
    ToolReference {
        /// The deferred tool to load.
        tool_name: String,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }

    /// A structured block, shown to the model as JSON text.
    pub fn json(value: Value) -> Self {
        ContentBlock::Json { value }
    }

    /// An image block of `media_type`, from data already base64-encoded.
    pub fn image(media_type: impl Into<String>, base64_data: impl Into<String>) -> Self {
        ContentBlock::Image {
            media_type: media_type.into(),
            data: base64_data.into(),
        }
    }

    /// Whether the block is an image.
    pub fn is_image(&self) -> bool {
        matches!(self, ContentBlock::Image { .. })
    }

    /// The block as the model reads it in text form (images have no text form).
    pub fn as_text(&self) -> Option<Cow<'_, str>> {
        match self {
            ContentBlock::Text { text } => Some(Cow::Borrowed(text)),
            ContentBlock::Json { value } => Some(Cow::Owned(value.to_string())),
            ContentBlock::Image { .. } => None,
            ContentBlock::ToolReference { tool_name } => {
                Some(Cow::Owned(format!("Tool `{tool_name}` loaded.")))
            }
        }
    }

    /// Characters this block costs in the result-size budget (SPEC §9).
    /// Images are not counted: they are never spilled.
    pub fn char_len(&self) -> usize {
        match self {
            ContentBlock::Text { text } => text.chars().count(),
            ContentBlock::Json { value } => value.to_string().chars().count(),
            ContentBlock::Image { .. } => 0,
            ContentBlock::ToolReference { tool_name } => tool_name.chars().count(),
        }
    }
}

/// Concatenated text of a list of blocks, images skipped.
pub fn joined_text(blocks: &[ContentBlock]) -> String {
    let mut out = String::new();
    for block in blocks {
        if let Some(text) = block.as_text() {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&text);
        }
    }
    out
}
